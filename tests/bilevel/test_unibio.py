"""UniBiO: the generalized-Hessian Neumann estimator against closed-form / dense implicit
hyper-gradients, the Epoch-SGD schedule and projection, the normalized momentum step, and
convergence on the uniformly convex synthetic problem; plus the reproduction's smoke run."""

from __future__ import annotations

import math

import pytest
import torch

from optzoo.bilevel import BilevelProblem, Oracle
from optzoo.bilevel.problems.quadratic import QuadraticBilevel
from optzoo.bilevel.problems.uniformly_convex import UniformlyConvexSynthetic
from optzoo.bilevel.unibio import (
    UniBiO,
    epoch_sgd,
    epoch_sgd_schedule,
    generalized_hypergradient,
    generalized_preconditioner,
    project_ball,
)


class CoupledUC(BilevelProblem):
    """Non-diagonal Hessian: g = (1/p)Σ|y|^p + ½yᵀAy − ⟨Bx, y⟩ with A ⪰ 0 dense, so D⁻¹∇²g
    and ∇²g D⁻¹ differ; no closed forms (autograd and the dense Newton reference)."""

    def __init__(self, p=4.0, seed=0):
        g = torch.Generator().manual_seed(seed)
        m = torch.randn(4, 4, generator=g, dtype=torch.float64)
        self.A = 0.3 * m @ m.T / 4
        self.B = torch.randn(4, 3, generator=g, dtype=torch.float64)
        self.c = torch.randn(4, generator=g, dtype=torch.float64)
        self.p = p

    def g(self, x, y, batch=None):
        return (y.abs() ** self.p).sum() / self.p + 0.5 * y @ (self.A @ y) - y @ (self.B @ x)

    def f(self, x, y, batch=None):
        return 0.5 * ((y - self.c) ** 2).sum() + 0.1 * (x**2).sum()

    def x0(self):
        return torch.tensor([1.0, -0.5, 0.8], dtype=torch.float64)

    def y0(self):
        return torch.ones(4, dtype=torch.float64)


@pytest.mark.parametrize("p", [2.0, 4.0])
def test_estimator_equals_closed_form_hypergradient_on_problem_a(p):
    pr = UniformlyConvexSynthetic(p, dim=8, zeros=0, seed=2)
    x = pr.x0()
    y = pr.lower_solution(x)
    assert float(y.abs().min()) > 1e-3  # away from the degenerate point
    est = generalized_hypergradient(Oracle(pr), x, y, p=p, neumann_eta=0.3, terms=80)
    torch.testing.assert_close(est, pr.hypergradient(x), rtol=1e-9, atol=1e-9)


def test_estimator_uses_the_generalized_hessian_not_its_transpose():
    pr = CoupledUC(p=4.0)
    x = pr.x0()
    y = pr.lower_solution(x)
    exact = pr.hypergradient(x, y)  # dense implicit formula (BilevelProblem default)
    d = generalized_preconditioner(y, 4.0, 1e-6)
    H = torch.func.hessian(lambda yy: pr.g(x, yy))(y)
    eta = 0.9 / float(torch.linalg.eigvals(H / d[:, None]).real.max())
    est = generalized_hypergradient(Oracle(pr), x, y, p=4.0, neumann_eta=eta, terms=400)
    torch.testing.assert_close(est, exact, rtol=1e-8, atol=1e-8)
    # the official code's operator (I − η ∇²g D⁻¹) converges to a different vector here
    fy = torch.func.grad(lambda yy: pr.f(x, yy))(y)
    v_code = torch.linalg.solve(H / d[None, :], fy / d)
    cross = BilevelProblem.cross_xy(pr, x, y, v_code)
    assert float((0.2 * x - cross - exact).norm()) > 1e-3


def test_estimator_reduces_to_stocbio_neumann_at_p2():
    pr = QuadraticBilevel(seed=7)
    x, y = pr.x0(), torch.randn(pr.dim_y, dtype=torch.float64)
    est = generalized_hypergradient(Oracle(pr), x, y, p=2.0, neumann_eta=0.2, terms=4)
    fx = pr.rho * x
    fy = y - pr.c
    v = 0.2 * sum(torch.linalg.matrix_power(torch.eye(pr.dim_y, dtype=torch.float64)
                                            - 0.2 * pr.A, q) @ fy for q in range(5))
    torch.testing.assert_close(est, fx + pr.B.T @ v)
    o = Oracle(pr)
    generalized_hypergradient(o, x, y, p=2.0, terms=4)
    assert dict(o.calls) == {"grad_f": 1, "grad_g": 0, "hvp": 4, "cross": 1}


def test_preconditioner_floor_keeps_the_estimate_finite_at_zero():
    pr = UniformlyConvexSynthetic(4.0, dim=6, zeros=6, seed=0)
    y = torch.zeros(6, dtype=torch.float64)
    d = generalized_preconditioner(y, 4.0, 1e-6)
    assert bool((d == 1e-6).all())
    est = generalized_hypergradient(Oracle(pr), pr.x0(), y, p=4.0)
    assert bool(torch.isfinite(est).all())


@pytest.mark.parametrize("p", [2.0, 3.0, 4.0, 8.0])
def test_epoch_sgd_schedule_follows_the_paper(p):
    sched = epoch_sgd_schedule(1000, first_epoch=5, radius=1.0, lr=1.0, p=p)
    tau = 2 * (p - 1) / p
    assert len(sched) >= 2
    for k, (t_k, d_k, g_k) in enumerate(sched):
        assert t_k == int(5 * 2 ** (tau * k))
        assert math.isclose(d_k, 2 ** (-k / p)) and math.isclose(g_k, 2.0 ** -k)
    nominal = [5 * 2 ** (tau * k) for k in range(len(sched) + 1)]
    assert sum(nominal[:-1]) <= 1000 < sum(nominal)
    for (_, d0, _), (_, d1, _) in zip(sched, sched[1:], strict=False):
        assert math.isclose(d1 / d0, 2 ** (-1 / p))
    # the script's K = 100, T1 = 5, p = 2 gives epochs of 5, 10, 20, 40 steps
    assert [t for t, _, _ in epoch_sgd_schedule(100, p=2.0)] == [5, 10, 20, 40]
    assert epoch_sgd_schedule(4, first_epoch=5) == []


def test_projection_onto_a_ball():
    c = torch.tensor([1.0, 1.0], dtype=torch.float64)
    w = torch.tensor([4.0, 5.0], dtype=torch.float64)
    out = project_ball(w, c, 2.0)
    torch.testing.assert_close(out, c + torch.tensor([0.6, 0.8], dtype=torch.float64) * 2.0)
    inside = torch.tensor([1.5, 1.0], dtype=torch.float64)
    assert project_ball(inside, c, 2.0) is inside


def test_epoch_sgd_stays_in_its_balls_and_counts_its_steps():
    pr = UniformlyConvexSynthetic(6.0, dim=5, zeros=0, seed=4)
    o = Oracle(pr, noise=5.0, generator=torch.Generator().manual_seed(0))
    y0 = torch.zeros(5, dtype=torch.float64)
    y = epoch_sgd(o, pr.x0(), y0, budget=100, p=6.0)
    steps = sum(t for t, _, _ in epoch_sgd_schedule(100, p=6.0))
    assert o.calls["grad_g"] == steps
    # every epoch average lies in that epoch's ball, chained from y0: ‖y − y0‖ ≤ Σ D_k
    assert float((y - y0).norm()) <= sum(d for _, d, _ in epoch_sgd_schedule(100, p=6.0))


def test_epoch_sgd_solves_a_degenerate_lower_problem():
    pr = UniformlyConvexSynthetic(4.0, dim=5, zeros=0, seed=5)
    o = Oracle(pr, noise=0.05, generator=torch.Generator().manual_seed(1))
    x = 0.5 * pr.x0()
    y = epoch_sgd(o, x, torch.zeros(5, dtype=torch.float64), budget=2000, p=4.0)
    assert float(pr.grad_g_y(x, y).norm()) < 0.02


@pytest.mark.parametrize("schedule", ["constant", "inv_sqrt"])
def test_normalized_momentum_step_has_length_eta(schedule):
    # noisy oracle: the estimates' norms vary a lot from step to step, yet every step of x has
    # the same length η_t (a plain, unnormalized momentum step would fail the length check)
    pr = UniformlyConvexSynthetic(4.0, dim=6, zeros=1, seed=6)
    eta, beta, eps = 0.037, 0.9, 1e-8
    s = UniBiO(Oracle(pr, noise=0.3, generator=torch.Generator().manual_seed(0)), p=4.0,
               lr=eta, beta=beta, neumann_eta=0.5, terms=3, schedule=schedule, eps=eps)
    m_norms, est_norms = [], []
    for t in range(12):
        before, m_before = s.x.clone(), s.m.clone()
        s.step()
        # m_t = β m_{t−1} + (1 − β) ĝ_t with the estimate the step used
        torch.testing.assert_close(s.m, beta * m_before + (1 - beta) * s.estimate,
                                   rtol=0, atol=1e-14)
        eta_t = eta if schedule == "constant" else eta / math.sqrt(1 + t)
        m = float(s.m.norm())
        torch.testing.assert_close(s.x, before - eta_t * s.m / (m + eps), rtol=0, atol=1e-14)
        length = float((s.x - before).norm())
        assert length == pytest.approx(eta_t, rel=1e-6)  # ‖Δx‖ = η_t‖m‖/(‖m‖ + ε)
        m_norms.append(m)
        est_norms.append(float(s.estimate.norm()))
        s.steps += 1
    # the check has power: ‖m‖ and ‖ĝ‖ spread over a wide range while ‖Δx‖ stays η_t
    assert max(m_norms) / min(m_norms) > 2 and max(est_norms) / min(est_norms) > 2


def test_relative_floor_is_a_fraction_of_the_largest_entry():
    y = torch.tensor([0.0, 1e-4, 0.5, 2.0], dtype=torch.float64)
    raw = 3.0 * y.abs() ** 2  # (p − 1)|y|^{p−2} at p = 4: [0, 3e-8, 0.75, 12]
    torch.testing.assert_close(generalized_preconditioner(y, 4.0, 1e-3, relative=True),
                               torch.clamp(raw, min=12e-3))
    torch.testing.assert_close(generalized_preconditioner(y, 4.0, 1e-3),
                               torch.clamp(raw, min=1e-3))
    zero = torch.zeros(3, dtype=torch.float64)
    torch.testing.assert_close(generalized_preconditioner(zero, 4.0, 0.1, relative=True),
                               torch.full((3,), 0.1, dtype=torch.float64))


def test_floor_bounds_the_noise_amplification_of_d_inverse():
    # with y at the degenerate point, ∇_y f's oracle noise reaches the estimate through
    # D⁻¹ = 1/δ: the estimate's spread over oracle draws scales like 1/δ
    pr = UniformlyConvexSynthetic(4.0, dim=4, zeros=4, seed=1)
    y = torch.zeros(4, dtype=torch.float64)

    def spread(floor):
        o = Oracle(pr, noise=0.1, generator=torch.Generator().manual_seed(3))
        ests = torch.stack([generalized_hypergradient(o, pr.x0(), y, p=4.0, floor=floor,
                                                      neumann_eta=0.5, terms=0)
                            for _ in range(200)])
        return float(ests.std(0).mean())

    ratio = spread(1e-3) / spread(1e-1)
    assert 50 < ratio < 200  # 100 = (1e-1 / 1e-3), up to sampling error


def test_refresh_happens_every_i_steps():
    pr = UniformlyConvexSynthetic(2.0, dim=4, zeros=0, seed=0)
    o = Oracle(pr)
    s = UniBiO(o, p=2.0, refresh_every=3, lower_budget=100)
    per_refresh = sum(t for t, _, _ in epoch_sgd_schedule(100, p=2.0))
    s.run(steps=7)
    assert o.calls["grad_g"] == 3 * per_refresh  # steps 0, 3, 6
    assert o.calls["hvp"] == 7 * 3 and o.calls["grad_f"] == 7 and o.calls["cross"] == 7


@pytest.mark.parametrize("p", [2.0, 4.0])
def test_unibio_reaches_a_small_hypergradient_deterministically(p):
    pr = UniformlyConvexSynthetic(p, dim=10, zeros=3, seed=1)
    s = UniBiO(Oracle(pr), p=p, lr=0.004, neumann_eta=0.5, terms=5, lower_budget=100)
    hist = s.run(steps=1200, every=20,
                 callback=lambda s: {"grad": float(pr.hypergradient(s.x).norm())})
    grads = [r["grad"] for r in hist]
    assert grads[0] > 0.5 and min(grads) < 1e-2


def test_sgd_lower_mode_takes_plain_steps():
    pr = QuadraticBilevel(seed=2)
    o = Oracle(pr)
    s = UniBiO(o, lower="sgd", inner_lr=0.1, lower_steps=3, refresh_every=2)
    y0 = s.y.clone()
    s.refresh()
    expected = y0
    for _ in range(3):
        expected = expected - 0.1 * (pr.A @ expected - pr.B @ s.x)
    torch.testing.assert_close(s.y, expected)


def test_bad_arguments_name_themselves():
    o = Oracle(QuadraticBilevel())
    for kwargs, name in (({"p": 1.5}, "p"), ({"lr": 0.0}, "lr"), ({"beta": 1.0}, "beta"),
                         ({"refresh_every": 0}, "refresh_every"), ({"lower": "newton"}, "lower"),
                         ({"terms": -1}, "terms"), ({"floor": 0.0}, "floor"),
                         ({"floor": 2.0, "relative_floor": True}, "floor"),
                         ({"relative_floor": 1}, "relative_floor"),
                         ({"schedule": "cosine"}, "schedule"),
                         ({"lower_budget": 2.5}, "lower_budget")):
        with pytest.raises(ValueError, match=name):
            UniBiO(o, **kwargs)
    with pytest.raises(ValueError, match="budget"):
        epoch_sgd_schedule(-1)


def test_reproduction_smoke_runs_and_states_claims(tmp_path):
    from optzoo.bilevel.reproduce.unibio import REPRODUCTION
    from optzoo.experiment import Result

    cfg = REPRODUCTION.presets["smoke"]
    trials = REPRODUCTION.trials(cfg)
    assert {t.method for t in trials} == {
        "unibio", "unibio-dec", "stocbio", "ttsa", "masoba"}
    results = [Result(t, REPRODUCTION.run_trial(t, "cpu")) for t in trials]
    summary = REPRODUCTION.summarize(results, cfg, tmp_path)
    assert len(summary.claims) == 7 and summary.tables
    assert all(f.path.exists() for f in summary.figures)
    # equal budgets in part A: every run stops within one outer step of the budget
    for r in results:
        if r.trial.params["part"] == "A":
            assert cfg.a_budget <= r.metrics["calls"] < cfg.a_budget + 200
