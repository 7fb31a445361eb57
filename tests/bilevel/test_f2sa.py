"""F²SA-p (Chen et al., ICLR 2026) and F²SA (Kwon et al., 2023): the finite-difference weights
against the paper's / official code's table, the O(ν^p) bias with exact lower solves, the
p = 1 estimator against Kwon et al.'s formula, the stochastic solver against the exact
estimator, convergence on the closed-form quadratic, oracle accounting and options."""

from __future__ import annotations

import math
from fractions import Fraction as Fr

import numpy as np
import pytest
import torch

from optzoo.bilevel import BilevelProblem, Oracle
from optzoo.bilevel.f2sa import (
    F2SA,
    exact_f2sa_estimate,
    f2sa_estimate,
    f2sa_nodes,
    finite_difference_stencil,
)
from optzoo.bilevel.problems.quadratic import QuadraticBilevel
from optzoo.bilevel.problems.smooth_strongly_convex import SmoothStronglyConvex


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny tensors: intra-op threads only add synchronisation (50× slower on a busy machine)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)

# The brief's table (paper §3, official code ``compute_high_order_diff``; p = 4 is the standard
# 4-node central stencil), written out by hand: node -> weight.
TABLE = {
    1: {0: Fr(-1), 1: Fr(1)},
    2: {-1: Fr(-1, 2), 1: Fr(1, 2)},
    3: {-1: Fr(-1, 3), 0: Fr(-1, 2), 1: Fr(1), 2: Fr(-1, 6)},
    4: {1: Fr(2, 3), 2: Fr(-1, 12), -1: Fr(-2, 3), -2: Fr(1, 12)},
    5: {-2: Fr(1, 20), -1: Fr(-1, 2), 0: Fr(-1, 3), 1: Fr(1), 2: Fr(-1, 4), 3: Fr(1, 30)},
    8: {j * s: s * Fr(a, 840) for j, a in zip((1, 2, 3, 4), (672, -168, 32, -3), strict=True)
        for s in (1, -1)},
    10: {j * s: s * Fr(a, 2520) for j, a in zip((1, 2, 3, 4, 5), (2100, -600, 150, -25, 2),
                                                 strict=True) for s in (1, -1)},
}


@pytest.mark.parametrize("p", sorted(TABLE))
def test_stencil_equals_the_tabulated_coefficients(p):
    nodes, coefs = finite_difference_stencil(p)
    assert dict(zip(nodes, coefs, strict=True)) == TABLE[p]
    assert len(nodes) == (p if p % 2 == 0 else p + 1)


@pytest.mark.parametrize("p", range(1, 13))
def test_stencil_moments_and_node_sets(p):
    nodes, coefs = finite_difference_stencil(p)
    assert list(nodes) == sorted(set(nodes)) and (0 in nodes) == (p % 2 == 1)
    assert nodes == f2sa_nodes(p)
    # Σ a_j j^k = δ_{k1} for k = 0..p: the error's leading term is the k = p + 1 moment
    for k in range(p + 1):
        assert sum(a * Fr(j) ** k for j, a in zip(nodes, coefs, strict=True)) == int(k == 1)
    assert sum(a * Fr(j) ** (p + 1) for j, a in zip(nodes, coefs, strict=True)) != 0


def _nu_range(p):
    """ν grid of the slope fit: [max(1e-3, 10^(−10/p)), 0.1] keeps the bias above round-off."""
    return np.logspace(math.log10(max(1e-3, 10.0 ** (-10.0 / p))), -1.0, 9)


def _slope(prob, x, p, estimate=None):
    exact = prob.hypergradient(x)
    nus = _nu_range(p)
    est = estimate or (lambda nu: exact_f2sa_estimate(prob, x, p, nu))
    errs = [float((est(float(nu)) - exact).norm()) for nu in nus]
    return float(np.polyfit(np.log(nus), np.log(errs), 1)[0])


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("p", [1, 2, 3, 4, 5])
def test_bias_shrinks_like_nu_to_the_p(p, seed):
    prob = SmoothStronglyConvex(10, seed=seed)
    assert abs(_slope(prob, prob.x0(), p) - p) < 0.2


def test_the_slope_test_fails_for_slightly_wrong_weights():
    prob = SmoothStronglyConvex(10, seed=0)
    x = prob.x0()
    nodes, coefs = finite_difference_stencil(4)
    wrong = [float(a) * (1 + 1e-3 * (j == 2)) for j, a in zip(nodes, coefs, strict=True)]

    def estimate(nu):
        ys = [prob.penalized_solution(x, j * nu) for j in nodes]
        return f2sa_estimate(nu, nodes, wrong, [prob.grad_f(x, y)[0] for y in ys],
                             [prob.grad_g(x, y)[0] for y in ys])

    assert abs(_slope(prob, x, 4, estimate) - 4) > 1.0


def test_generic_node_solves_give_the_same_estimate():
    prob = SmoothStronglyConvex(4, seed=5)

    class Generic(BilevelProblem):  # no penalized_solution: dense Newton path
        def f(self, x, y, batch=None):
            return prob.f(x, y)

        def g(self, x, y, batch=None):
            return prob.g(x, y)

        def x0(self):
            return prob.x0()

        def y0(self):
            return prob.y0()

    x = prob.x0()
    for p in (2, 3):
        torch.testing.assert_close(exact_f2sa_estimate(Generic(), x, p, 0.05),
                                   exact_f2sa_estimate(prob, x, p, 0.05), rtol=1e-9, atol=1e-11)


def test_p1_is_kwon_et_al_f2sa_estimator():
    """∇_x f(x, y_λ) + λ(∇_x g(x, y_λ) − ∇_x g(x, y*)) with y_λ = argmin f + λg in closed form
    on the quadratic: (I + λA) y_λ = c + λBx."""
    prob = QuadraticBilevel(4, 6, seed=7, rho=0.3)
    x = prob.x0()
    lam = 25.0
    y_lam = torch.linalg.solve(torch.eye(6, dtype=torch.float64) + lam * prob.A,
                               prob.c + lam * prob.B @ x)
    y_star = torch.linalg.solve(prob.A, prob.B @ x)
    kwon = prob.rho * x + lam * (-(prob.B.T @ y_lam) + prob.B.T @ y_star)
    nodes, coefs = finite_difference_stencil(1)
    pure = f2sa_estimate(1 / lam, nodes, [float(a) for a in coefs],
                         [None, prob.rho * x], [-(prob.B.T @ y_star), -(prob.B.T @ y_lam)])
    torch.testing.assert_close(pure, kwon, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(exact_f2sa_estimate(prob, x, 1, 1 / lam), kwon, rtol=1e-9,
                               atol=1e-10)


@pytest.mark.parametrize("p", [1, 2, 3, 4])
def test_solver_with_converged_inner_loops_returns_the_exact_estimate(p):
    prob = SmoothStronglyConvex(5, seed=4)
    solver = F2SA(Oracle(prob), p=p, nu=0.1, lr=0.1, inner_lr=0.5, inner_steps=400)
    for j in solver.nodes:
        solver._inner(j)
    torch.testing.assert_close(solver.hypergradient(), exact_f2sa_estimate(prob, solver.x, p, 0.1),
                               rtol=1e-10, atol=1e-12)


class _FastQuadratic(QuadraticBilevel):
    """QuadraticBilevel with its derivatives in closed form (test_core checks the autograd
    ones against the same matrices), so that thousands of oracle calls stay cheap."""

    def grad_f(self, x, y, batch=None):
        return self.rho * x, y - self.c

    def grad_g(self, x, y, batch=None):
        return -(self.B.T @ y), self.A @ y - self.B @ x

    def grad_g_y(self, x, y, batch=None):
        return self.A @ y - self.B @ x


def test_fast_quadratic_derivatives_are_the_autograd_ones():
    prob = _FastQuadratic(seed=5)
    x, y = prob.x0(), torch.randn(prob.dim_y, dtype=torch.float64)
    for name in ("grad_f", "grad_g"):
        for a, b in zip(getattr(prob, name)(x, y), getattr(BilevelProblem, name)(prob, x, y),
                        strict=True):
            torch.testing.assert_close(a, b)
    torch.testing.assert_close(prob.grad_g_y(x, y), BilevelProblem.grad_g_y(prob, x, y))


def test_f2sa_converges_on_the_quadratic_with_bias_of_order_nu_to_the_p():
    prob = _FastQuadratic(seed=5, rho=1.0)
    M = torch.linalg.solve(prob.A, prob.B)
    lr = 1.0 / float(torch.linalg.eigvalsh(M.T @ M).max() + prob.rho)
    x_star = prob.x_star()
    dist = {}
    for p in (1, 2):
        solver = F2SA(Oracle(prob), p=p, nu=0.02, lr=lr, inner_lr=0.4, inner_steps=10,
                      normalized=False)
        hist = solver.run(steps=300, every=100,
                          callback=lambda s: {"grad": float(prob.hypergradient(s.x).norm())})
        assert hist[-1]["grad"] < hist[0]["grad"] / 100
        dist[p] = float((solver.x - x_star).norm())
    assert dist[2] < 1e-3 and dist[2] < dist[1] / 10
    # the normalised step (Alg. 1 line 14) settles within ~η of the stationary point
    solver = F2SA(Oracle(prob), p=2, nu=0.02, lr=5e-3, inner_lr=0.4, inner_steps=10)
    start = float((solver.x - x_star).norm())
    solver.run(steps=int(1.5 * start / 5e-3) + 200)
    assert float((solver.x - x_star).norm()) < 2e-2


@pytest.mark.parametrize("p, upper_x_grad, per_step", [
    (1, True, 10 * 3 + 3), (2, True, 10 * 4 + 4), (2, False, 10 * 4 + 2),
    (3, True, 10 * 7 + 4 + 3), (4, False, 10 * 8 + 4)])
def test_every_oracle_call_is_counted(p, upper_x_grad, per_step):
    o = Oracle(SmoothStronglyConvex(3, seed=0))
    F2SA(o, p=p, inner_steps=10, upper_x_grad=upper_x_grad).run(steps=3)
    assert o.total == 3 * per_step


def test_average_warm_start_restarts_each_side_from_its_mean():
    prob = SmoothStronglyConvex(3, seed=0)
    solver = F2SA(Oracle(prob), p=5, inner_steps=0, average_warm_start=True)
    g = torch.Generator().manual_seed(0)
    before = {j: torch.randn(3, generator=g, dtype=torch.float64) for j in solver.nodes}
    solver.ys = dict(before)
    solver.step()
    pos = torch.stack([before[j] for j in (1, 2, 3)]).mean(0)
    neg = torch.stack([before[j] for j in (-2, -1, 0)]).mean(0)
    for j in solver.nodes:
        torch.testing.assert_close(solver.ys[j], pos if j > 0 else neg)


class _Recording(QuadraticBilevel):
    """Quadratic with fake minibatches (integers) that records what grad_g was given."""

    def __init__(self):
        super().__init__(seed=0)
        self.seen, self.counter = [], 0

    def sample(self, level, batch_size, generator):
        self.counter += 1
        return self.counter

    def grad_g(self, x, y, batch=None):
        self.seen.append(batch)
        return super().grad_g(x, y, batch)


@pytest.mark.parametrize("shared", [True, False])
def test_shared_batches_use_one_minibatch_at_every_node(shared):
    prob = _Recording()
    solver = F2SA(Oracle(prob, batch_size=4), p=4, inner_steps=1, shared_batches=shared)
    solver.step()
    assert len(prob.seen) == 4
    assert (len(set(prob.seen)) == 1) == shared


def test_normalized_step_has_length_lr_and_output_is_the_largest_node():
    prob = SmoothStronglyConvex(4, seed=1)
    solver = F2SA(Oracle(prob), p=3, lr=0.05)
    x = solver.x.clone()
    solver.step()
    assert abs(float((solver.x - x).norm()) - 0.05) < 1e-12
    assert solver.y is solver.ys[2]


def test_bad_arguments_name_themselves():
    o = Oracle(QuadraticBilevel())
    for kwargs, name in (({"p": 0}, "p"), ({"p": 2.0}, "p"), ({"nu": -0.1}, "nu"),
                         ({"lr": 0}, "lr"), ({"inner_steps": -1}, "inner_steps"),
                         ({"normalized": 1}, "normalized"),
                         ({"shared_batches": "yes"}, "shared_batches")):
        with pytest.raises(ValueError, match=name):
            F2SA(o, **kwargs)
    with pytest.raises(ValueError, match="nodes, coefs"):
        f2sa_estimate(0.1, (0, 1), (-1.0,), [None], [torch.zeros(2)])
    with pytest.raises(ValueError, match="nu"):
        exact_f2sa_estimate(QuadraticBilevel(), torch.zeros(5, dtype=torch.float64), 2, 0.0)


def test_reproduction_smoke_preset_runs_and_reports(tmp_path):
    from optzoo.bilevel.reproduce.f2sa_p import REPRODUCTION
    from optzoo.experiment import Result

    assert REPRODUCTION.slug == "f2sa-p"
    assert REPRODUCTION.presets["quick"].seeds >= 3 and REPRODUCTION.presets["full"].seeds >= 5
    quick = REPRODUCTION.trials(REPRODUCTION.presets["quick"])
    assert len({t.key("f2sa-p") for t in quick}) == len(quick)
    cfg = REPRODUCTION.presets["smoke"]
    trials = REPRODUCTION.trials(cfg)
    results = [Result(trial=t, metrics=REPRODUCTION.run_trial(t, "cpu")) for t in trials]
    again = REPRODUCTION.run_trial(trials[len(trials) // 2], "cpu")  # a part-B trial
    assert again == results[len(trials) // 2].metrics
    summary = REPRODUCTION.summarize(results, cfg, tmp_path)
    assert len(summary.claims) == 7 and summary.claims[0].held  # (A) holds even at smoke size
    assert all(f.path.exists() for f in summary.figures) and len(summary.figures) == 3
    oracle_calls = [r.metrics["calls"] for r in results if r.trial.params["part"] == "B"]
    assert all(c >= cfg.b_budget for c in oracle_calls)


def test_reproduction_presets_reject_bad_values():
    from optzoo.bilevel.reproduce.f2sa_p import F2SAConfig
    from optzoo.errors import ConfigError

    with pytest.raises(ConfigError, match="b_nus"):
        F2SAConfig(b_nus=(-0.6, 0.1, 0.2))
    with pytest.raises(ConfigError, match="b_nu_fracs"):
        F2SAConfig(b_nu_fracs=(0.5, 1.0, 0.2))  # ν at the limit: node −m not convex
    with pytest.raises(ConfigError, match="b_nu_fracs, b_nus"):
        F2SAConfig(b_nu_fracs=(0.5, 0.7))  # unequal ν budgets
    with pytest.raises(ConfigError, match="b_orders"):
        F2SAConfig(b_orders=(2, 3))  # no F²SA baseline
    with pytest.raises(ConfigError, match="c_steps"):
        F2SAConfig(c_steps=5)


def test_nu_limits_follow_the_most_negative_node():
    from optzoo.bilevel.reproduce.f2sa_p import F2SAConfig, nu_limit

    # node −m of jν f + g needs m ν L_f < μ (= 1 on problem A)
    assert [nu_limit(p) for p in (1, 2, 3, 4, 5, 8, 10)] == [None, 1.0, 1.0, 0.5, 0.5, 0.25,
                                                              0.2]
    cfg = F2SAConfig()
    assert set(cfg.b_orders) == {1, 2, 3, 5, 8, 10}  # F²SA and the paper's orders
    for p in cfg.b_orders:
        grid = cfg.nu_grid(p)
        assert len(grid) == len(cfg.b_nus)  # the same ν budget for every order
        lim = nu_limit(p)
        if lim is not None:
            assert max(grid) < lim
            prob = SmoothStronglyConvex(3, seed=0)
            prob.penalized_solution(prob.x0(), min(f2sa_nodes(p)) * max(grid))  # convex: ok


@pytest.mark.parametrize("p", [1, 3])
def test_shared_batches_cut_the_variance_on_data_and_are_a_no_op_with_additive_noise(p):
    # the defect of issue 21: with the Oracle's additive Gaussian noise every call has fresh
    # noise, so Alg. 1's shared batches cannot act; on the finite-sum problem they must
    from optzoo.bilevel.reproduce.f2sa_p import _run_variance
    from optzoo.experiment import Trial

    def ratio(kind):
        q = {"part": "V", "dim": 4, "kind": kind, "orders": [p], "nus": [0.3], "reps": 150,
             "sigma": 0.1, "n": 64, "spread": 0.2, "batch": 4}
        return _run_variance(Trial("variance", kind, 0, q))[f"ratio_p{p}"]

    assert ratio("finite-sum") > 3.0
    assert 0.7 < ratio("gauss") < 1.4


def test_full_grids_extend_quicks_downwards_at_equal_budget():
    from optzoo.bilevel.reproduce.f2sa_p import REPRODUCTION, nu_limit

    quick, full = REPRODUCTION.presets["quick"], REPRODUCTION.presets["full"]
    # full's first audited picks sat on the low edges: its grids keep quick's points and
    # add smaller ones, for every method alike (the same number of points per order)
    for name in ("b_nus", "b_nu_fracs", "b_lrs", "b_stocbio_lrs"):
        q, f = getattr(quick, name), getattr(full, name)
        assert set(q) <= set(f) and min(f) < min(q) and max(f) == max(q), name
    assert len(full.b_lrs) == len(full.b_stocbio_lrs)
    for p in full.b_orders:
        grid = full.nu_grid(p)
        assert len(grid) == len(full.b_nus) and list(grid) == sorted(grid)
        lim = nu_limit(p)
        assert lim is None or max(grid) < lim
