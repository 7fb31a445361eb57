"""Reference tests of :mod:`optzoo.optim.o2nc` (ODOG and its O2NC baselines) and
:mod:`optzoo.optim.normalized_sgd`.

The expected numbers are worked out by hand from the update rules in the module docstrings
(binary fractions, so exact in float64), not produced by the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.optim.normalized_sgd import NormalizedSGD
from optzoo.optim.o2nc import O2NC


def _quadratic_closure(opt, params, curv=(1.0,), noise=None):
    """F = ½ Σ c_i p_i²; ``noise(shape)`` (optional) is added to every gradient."""

    def closure():
        opt.zero_grad()
        loss = sum(0.5 * (c * p**2).sum() for p, c in zip(params, curv, strict=True))
        loss.backward()
        if noise is not None:
            for p in params:
                p.grad.add_(noise(p.shape))
        return loss

    return closure


def _param(*values):
    return torch.nn.Parameter(torch.tensor(values, dtype=torch.float64))


# -- ODOG by hand ------------------------------------------------------------------------------

def test_odog_two_iterations_by_hand():
    """F = x²/2, x₀ = 1, η = 1/4, D = 1 (projection inactive), T = 2.

    h₁ = ∇F(x₀) = 1, Δ₁ = −1/4.
    n=1: w₁ = 7/8 → g₁ = 7/8; x₁ = 3/4; z₁ = 5/8 → h₂ = 5/8;
         Δ₂ = −1/4 − (1/4)(5/8) − (1/4)(7/8 − 1) = −3/8.
    n=2: w₂ = 9/16 → g₂; x₂ = 3/8; z₂ = 3/16 → h₃ = 3/16;
         Δ₃ = −3/8 − (1/4)(3/16) − (1/4)(9/16 − 5/8) = −13/32.
    Episode average (w₁ + w₂)/2 = 23/32.
    """
    x = _param(1.0)
    opt = O2NC([x], lr=0.25, D=1.0, T=2)
    closure = _quadratic_closure(opt, [x])
    seen = []
    base = closure

    def recording():
        seen.append(float(x.detach()))
        return base()

    opt.step(recording)
    assert seen == [1.0, 0.875, 0.625]           # x₀ (h₁), w₁, z₁
    assert float(x.detach()) == 0.75 and float(opt.state[x]["delta"]) == -0.375
    assert float(opt.state[x]["hint"]) == 0.625
    assert opt.output()[x] is not None and float(opt.output()[x]) == 0.75  # no episode yet
    loss = opt.step(recording)
    assert seen[3:] == [0.5625, 0.1875]           # w₂, z₂
    assert float(loss.detach()) == 0.5 * 0.5625**2         # the loss at w₂
    assert float(x.detach()) == 0.375
    assert float(opt.state[x]["delta"]) == -13 / 32
    assert float(opt.state[x]["hint"]) == 3 / 16
    assert float(opt.output()[x]) == 23 / 32
    assert opt.grad_calls == 5


def test_projection_is_joint_over_the_group():
    """F = ½(u² + v²) at (3, 4), η = 1, D = 1: Δ₁ = Π(−(3, 4)) = −(0.6, 0.8) (a per-tensor
    projection would give −(1, 1)).  n=1: w₁ = (2.7, 3.6) = g₁, x₁ = (2.4, 3.2),
    z₁ = (2.1, 2.8) = h₂, Δ₂ = Π(−(0.6, 0.8) − (2.1, 2.8) − (−0.3, −0.4)) = −(0.6, 0.8)."""
    u, v = _param(3.0), _param(4.0)
    opt = O2NC([u, v], lr=1.0, D=1.0, T=5)
    opt.step(_quadratic_closure(opt, [u, v], curv=(1.0, 1.0)))
    torch.testing.assert_close(torch.cat([u, v]).detach(),
                               torch.tensor([2.4, 3.2], dtype=torch.float64))
    d = torch.cat([opt.state[u]["delta"], opt.state[v]["delta"]])
    torch.testing.assert_close(d, torch.tensor([-0.6, -0.8], dtype=torch.float64))


@settings(max_examples=25, deadline=None)
@given(lr=st.floats(1e-3, 10.0), D=st.floats(1e-3, 2.0), hint=st.sampled_from(
    ["extrapolated", "previous", "none", "fixed_point"]), seed=st.integers(0, 10_000))
def test_projection_keeps_every_move_in_the_ball(lr, D, hint, seed):
    g = torch.Generator().manual_seed(seed)
    a, b = (torch.randn(3, generator=g, dtype=torch.float64) * 5 for _ in range(2))
    p1, p2 = torch.nn.Parameter(a.clone()), torch.nn.Parameter(b.clone())
    opt = O2NC([p1, p2], lr=lr, D=D, T=3, hint=hint, inner_steps=2)
    closure = _quadratic_closure(opt, [p1, p2], curv=(3.0, 0.5))
    for _ in range(6):
        before = torch.cat([p1, p2]).detach().clone()
        opt.step(closure)
        move = torch.linalg.vector_norm(torch.cat([p1, p2]).detach() - before)
        assert move <= D * (1 + 1e-12) + 1e-13  # x_n − x_{n-1} carries rounding of |x|
        dnorm = torch.linalg.vector_norm(torch.cat([opt.state[p1]["delta"],
                                                    opt.state[p2]["delta"]]))
        assert dnorm <= D * (1 + 1e-12)


# -- the baselines by hand ---------------------------------------------------------------------

def test_naive_hint_by_hand():
    """h₁ = 0 ⇒ Δ₁ = 0.  n=1: g₁ = 1, x₁ = 1, h₂ = g₁, Δ₂ = −1/4 − (1/4)(1 − 0) = −1/2.
    n=2: w₂ = 3/4 = g₂, x₂ = 1/2, Δ₃ = −1/2 − (1/4)(3/4) − (1/4)(3/4 − 1) = −5/8."""
    x = _param(1.0)
    opt = O2NC([x], lr=0.25, D=1.0, T=10, hint="previous")
    closure = _quadratic_closure(opt, [x])
    opt.step(closure)
    assert float(x.detach()) == 1.0 and float(opt.state[x]["delta"]) == -0.5
    opt.step(closure)
    assert float(x.detach()) == 0.5 and float(opt.state[x]["delta"]) == -0.625
    assert opt.grad_calls == 2


def test_plain_ogd_by_hand():
    """Δ₁ = 0; Δ₂ = −g₁/4 = −1/4; w₂ = 7/8, x₂ = 3/4, Δ₃ = −1/4 − 7/32 = −15/32."""
    x = _param(1.0)
    opt = O2NC([x], lr=0.25, D=1.0, T=10, hint="none")
    closure = _quadratic_closure(opt, [x])
    opt.step(closure)
    assert float(x.detach()) == 1.0 and float(opt.state[x]["delta"]) == -0.25
    opt.step(closure)
    assert float(x.detach()) == 0.75 and float(opt.state[x]["delta"]) == -15 / 32


def test_cmo23_fixed_point_by_hand():
    """CMO23 double loop, inner_steps = 1, η = 1/4.
    n=1: Δ̂₁ = 0, h⁽⁰⁾ = 0 → play 0 → h⁽¹⁾ = ∇F(1) = 1; Δ₁ = −1/4; w₁ = 7/8 = g₁; x₁ = 3/4;
         Δ̂₂ = −7/32.
    n=2: h⁽⁰⁾ = g₁ = 7/8 → play −7/32 − 7/32 = −7/16 → h⁽¹⁾ = ∇F(3/4 − 7/32) = 17/32;
         Δ₂ = −7/32 − 17/128 = −45/128; x₂ = 3/4 − 45/128 = 51/128."""
    x = _param(1.0)
    opt = O2NC([x], lr=0.25, D=1.0, T=10, hint="fixed_point", inner_steps=1)
    closure = _quadratic_closure(opt, [x])
    opt.step(closure)
    assert float(x.detach()) == 0.75 and float(opt.state[x]["delta_hat"]) == -7 / 32
    opt.step(closure)
    assert float(opt.state[x]["delta"]) == -45 / 128
    assert float(x.detach()) == 51 / 128
    assert opt.grad_calls == 4


def test_fixed_point_hint_solves_the_fixed_point():
    """With many inner iterations the played Δ_n satisfies Δ_n = Π_D(Δ̂_n − η ∇F(x + Δ_n/2))."""
    x = torch.nn.Parameter(torch.tensor([1.5, -0.7], dtype=torch.float64))
    opt = O2NC([x], lr=0.2, D=0.3, T=4, hint="fixed_point", inner_steps=40)

    def closure():  # a quartic, so the fixed point is nonlinear
        opt.zero_grad()
        loss = (x**4).sum() / 4 + x.prod()
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    hat_before = opt.state[x]["delta_hat"].clone()
    x_before = x.detach().clone()
    opt.step(closure)
    delta = opt.state[x]["delta"]
    w = x_before + delta / 2
    g = w**3 + w.flip(0)
    target = hat_before - 0.2 * g
    target = target * min(1.0, 0.3 / float(torch.linalg.vector_norm(target)))
    torch.testing.assert_close(delta, target, rtol=0, atol=1e-12)


def _logcosh_problem(seed=0, n=40, d=6, mu=0.1):
    """F(x) = mean log cosh(Ax − b) + (μ/2)‖x‖²: smooth, non-quadratic, ∇F is L-Lipschitz with
    L = λ_max(AᵀA)/n + μ (log cosh'' ≤ 1)."""
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(n, d, generator=g, dtype=torch.float64)
    b = 3.0 * torch.randn(n, generator=g, dtype=torch.float64)
    L = float(torch.linalg.eigvalsh(A.T @ A).max()) / n + mu

    def grad(x):
        return A.T @ torch.tanh(A @ x - b) / n + mu * x

    return A, b, mu, L, grad


@pytest.mark.parametrize("D", [0.05, 0.5])
def test_odog_hint_error_is_bounded_by_the_change_of_direction(D):
    """The defining property of the extrapolated hint (paper §3.1): w_{n+1} − z_n =
    (Δ_{n+1} − Δ_n)/2, hence ‖g_{n+1} − h_{n+1}‖ ≤ (L/2)‖Δ_{n+1} − Δ_n‖ for an L-smooth F.
    Checked on every iteration from the points the optimizer queries (projection active for
    D = 0.05, mostly inactive for D = 0.5).  The naive hint point x_n (or h = g_n) violates it."""
    A, b, mu, L, grad = _logcosh_problem()
    x = torch.nn.Parameter(torch.full((A.shape[1],), 2.0, dtype=torch.float64))
    opt = O2NC([x], lr=0.5 / L, D=D, T=5)
    queries = []

    def closure():
        opt.zero_grad()
        p = x.detach().clone()
        loss = (torch.log(torch.cosh(A @ x - b))).mean() + 0.5 * mu * (x * x).sum()
        loss.backward()
        queries.append((p, x.grad.detach().clone()))
        return loss

    xs, deltas_state = [x.detach().clone()], []
    for _ in range(60):
        opt.step(closure)
        xs.append(x.detach().clone())
        deltas_state.append(opt.state[x]["delta"].clone())
    # queries: [x₀ (h₁), w₁, z₁, w₂, z₂, ...]; Δ_n = 2(w_n − x_{n−1})
    w = [queries[2 * n - 1] for n in range(1, 61)]
    z = [queries[2 * n] for n in range(1, 61)]
    deltas = [2 * (w[n][0] - xs[n]) for n in range(60)]           # Δ_1 … Δ_60
    torch.testing.assert_close(torch.stack(deltas[1:]), torch.stack(deltas_state[:-1]),
                               rtol=0, atol=1e-12)
    assert max(float(torch.linalg.vector_norm(d)) for d in deltas) <= D * (1 + 1e-12)
    ratios, naive = [], []
    for n in range(59):                                          # pairs (Δ_{n+1}, Δ_{n+2})
        d_move = float(torch.linalg.vector_norm(deltas[n + 1] - deltas[n]))
        g_next, h_next = w[n + 1][1], z[n][1]                    # g_{n+2}, h_{n+2} = ∇F(z_{n+1})
        torch.testing.assert_close(w[n + 1][0] - z[n][0], (deltas[n + 1] - deltas[n]) / 2,
                                   rtol=0, atol=1e-12)
        torch.testing.assert_close(h_next, grad(z[n][0]), rtol=1e-12, atol=1e-14)
        err = float(torch.linalg.vector_norm(g_next - h_next))
        assert err <= 0.5 * L * d_move * (1 + 1e-9) + 1e-14
        ratios.append(err / max(0.5 * L * d_move, 1e-300))
        naive.append(float(torch.linalg.vector_norm(g_next - grad(xs[n + 1])))
                     / max(0.5 * L * d_move, 1e-300))
    assert max(ratios) > 0.05          # the bound is exercised, not vacuous
    assert max(naive) > 1.0            # the hint at x_n (no extrapolation) breaks it


@pytest.mark.parametrize(("hint", "per_step", "extra"), [
    ("extrapolated", 2, 1), ("previous", 1, 0), ("none", 1, 0), ("fixed_point", 4, 0)])
def test_gradient_calls_are_counted_and_saved(hint, per_step, extra):
    x = _param(1.0, 2.0)
    opt = O2NC([x], lr=0.1, D=0.5, T=3, hint=hint, inner_steps=3)
    calls = []
    inner = _quadratic_closure(opt, [x])

    def closure():
        calls.append(1)
        return inner()

    for _ in range(7):
        opt.step(closure)
    assert opt.grad_calls == len(calls) == 7 * per_step + extra
    opt2 = O2NC([_param(0.0, 0.0)], lr=0.1, D=0.5, T=3, hint=hint, inner_steps=3)
    opt2.load_state_dict(opt.state_dict())
    assert opt2.grad_calls == opt.grad_calls


# -- adaptive step (§4) ------------------------------------------------------------------------

def test_adaptive_step_and_its_reset_every_episode():
    """γ = 1, α = 4, D = 1/2: η₀ = 1/4 ⇒ Δ₁ = −1/4 (as in the by-hand ODOG run), g₁ = 7/8,
    h₁ = 1, so after n=1 the accumulator is (1/8)² and η₁ = (1/2)/sqrt(4 + 1/64)."""
    x = _param(1.0)
    opt = O2NC([x], adaptive=True, gamma=1.0, alpha=4.0, D=0.5, T=3)
    closure = _quadratic_closure(opt, [x])
    opt.step(closure)
    gs = opt.state[x]
    assert gs["acc"] == 1 / 64
    eta1 = 0.5 / math.sqrt(4 + 1 / 64)
    assert float(gs["delta"]) == pytest.approx(-0.25 - eta1 * 0.625 - eta1 * (0.875 - 1.0),
                                               rel=1e-14)
    accs = [gs["acc"]]
    errors = []
    for _ in range(5):
        h = gs["hint"].clone()
        w = x.detach() + gs["delta"] / 2
        errors.append(float((w - h) ** 2))   # ‖g_n − h_n‖² with g_n = ∇F(w_n) = w_n
        opt.step(closure)
        accs.append(gs["acc"])
    # steps 2, 3 | 4, 5, 6: the sum restarts after every T = 3 iterations
    assert accs[1] == pytest.approx(1 / 64 + errors[0], rel=1e-13)
    assert accs[2] == 0.0
    assert accs[3] == pytest.approx(errors[2], rel=1e-13)
    assert accs[4] == pytest.approx(errors[2] + errors[3], rel=1e-13)
    assert accs[5] == 0.0


# -- one code path for deterministic and stochastic gradients ----------------------------------

def test_stochastic_and_deterministic_gradients_share_the_code_path():
    """A zero-noise stochastic closure gives bit-identical iterates; with noise, the same
    optimizer (no option changed) still drives the episode-average gradient down."""
    def run(noise):
        torch.manual_seed(0)
        x = torch.nn.Parameter(torch.tensor([4.0, -3.0, 2.0], dtype=torch.float64))
        opt = O2NC([x], lr=0.3, D=0.05, T=20)
        closure = _quadratic_closure(opt, [x], curv=(torch.tensor([1.0, 2.0, 0.5]),),
                                     noise=noise)
        for _ in range(600):
            opt.step(closure)
        w = opt.output()[x]
        return x.detach().clone(), float(torch.linalg.vector_norm(
            torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64) * w))

    g = torch.Generator().manual_seed(1)
    x_det, grad_det = run(None)
    x_zero, _ = run(lambda s: torch.zeros(s, dtype=torch.float64))
    assert torch.equal(x_det, x_zero)
    _, grad_noisy = run(lambda s: 0.1 * torch.randn(s, generator=g, dtype=torch.float64))
    initial = float(torch.linalg.vector_norm(torch.tensor([4.0, -6.0, 1.0])))
    assert grad_det < 1e-6
    assert grad_noisy < 0.05 * initial


# -- errors ------------------------------------------------------------------------------------

def test_step_without_closure_names_the_closure():
    x = _param(1.0)
    opt = O2NC([x])
    with pytest.raises(RuntimeError, match="closure"):
        opt.step()


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(T=2.5), "T"), (dict(adaptive=True, hint="fixed_point"), "adaptive"),
    (dict(alpha=0.0), "alpha"), (dict(adaptive=1), "adaptive")])
def test_bad_options_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        O2NC([_param(1.0)], **kwargs)


def test_groups_must_share_the_query_schedule():
    with pytest.raises(ValueError, match="hint"):
        O2NC([{"params": [_param(1.0)]}, {"params": [_param(2.0)], "hint": "none"}])


# -- normalized SGD with momentum --------------------------------------------------------------

def _nsgd_reference(x0, grad, lr, beta, steps, transport):
    """Cutkosky & Mehta (2020) Alg. 1 / Alg. 2, written out in NumPy."""
    x, prev, m = np.array(x0, float), None, np.zeros(len(x0))
    for _ in range(steps):
        y = x if (not transport or prev is None) else x + beta / (1 - beta) * (x - prev)
        m = beta * m + (1 - beta) * grad(y)
        prev = x.copy()
        x = x - lr * m / np.linalg.norm(m)
    return x


@pytest.mark.parametrize("transport", [False, True])
def test_normalized_sgd_matches_the_paper_recursion(transport):
    c = np.array([1.0, 4.0, 0.25])
    x = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64))
    opt = NormalizedSGD([x], lr=0.1, momentum=0.7, transport=transport)
    closure = _quadratic_closure(opt, [x], curv=(torch.tensor(c),))
    for _ in range(6):
        opt.step(closure)
    ref = _nsgd_reference([1.0, -2.0, 3.0], lambda y: c * y, 0.1, 0.7, 6, transport)
    np.testing.assert_allclose(x.detach().numpy(), ref, rtol=1e-13, atol=1e-14)


def test_normalized_sgd_first_step_has_length_lr():
    """m₁ = (1−β)g₁ points along g₁ = (3, 4): x₁ = (3, 4) − 0.1·(0.6, 0.8)."""
    x = _param(3.0, 4.0)
    opt = NormalizedSGD([x], lr=0.1, momentum=0.5)
    opt.step(_quadratic_closure(opt, [x]))
    torch.testing.assert_close(x.detach(), torch.tensor([2.94, 3.92], dtype=torch.float64))


def test_normalized_sgd_transport_needs_a_closure():
    x = _param(1.0)
    opt = NormalizedSGD([x], transport=True)
    with pytest.raises(RuntimeError, match="closure"):
        opt.step()


# -- the reproduction's hand-written gradients -------------------------------------------------

@pytest.mark.parametrize("name", ["robust", "mlp"])
def test_reproduction_problem_gradients_match_autograd(name):
    from optzoo.optim.reproduce.o2nc import _make_problem

    problem = _make_problem(name, seed=1, mlp_samples=60)
    g = torch.Generator().manual_seed(3)
    x = problem.x0 + 0.3 * torch.randn(problem.x0.shape, generator=g, dtype=torch.float64)
    value, grad = problem.value_and_grad(x)
    xa = x.clone().requires_grad_(True)
    if name == "robust":
        r = problem.A @ xa - problem.b
        ref = (r**2 / (1 + r**2)).mean()
    else:
        W1, b1, W2, b2 = problem._unpack(xa)
        logits = torch.tanh(problem.X @ W1 + b1) @ W2 + b2
        ref = torch.nn.functional.cross_entropy(logits, problem.Y.argmax(1)) \
            + problem.reg * (xa**2).sum()
    ref.backward()
    assert value == pytest.approx(float(ref.detach()), rel=1e-12)
    torch.testing.assert_close(grad, xa.grad, rtol=1e-10, atol=1e-12)


def test_reproduction_radius_follows_eps_and_every_method_has_the_same_budget():
    """Issue 20: D was one fixed number per problem.  Now D(ε) = s·D_ref·(ε/ε_ref)^a on a grid
    of s for every O2NC method, and GD/SGD gets as many grid points (equal tuning budget)."""
    from optzoo.optim.reproduce.o2nc import PRESETS, _grid, _optimizer, trials

    for name in ("quick", "full"):
        cfg = PRESETS[name]
        for problem, sigma in [(p, 0.0) for p in cfg.problems] + [("robust", cfg.sigmas[0])]:
            sizes = {m: len(_grid(cfg, m, problem, sigma))
                     for m in ("odog", "naive_hint", "ogd", "cmo23", "odog_adaptive", "gd")}
            assert len(set(sizes.values())) == 1 and sizes["odog"] > 1, (name, problem, sizes)
            assert len({p["radius_scale"] for p in _grid(cfg, "odog", problem, sigma)}) >= 3
    theory = PRESETS["quick"].with_overrides({"radius_exponent": "0.75"})
    ds = {}
    for t in trials(theory):
        if t.method == "odog" and t.problem == "robust" and t.params["sigma"] == 0.0:
            ds.setdefault(t.params["eps"][0], set()).add(t.params["D"])
    assert all(len(v) == 1 for v in ds.values())  # the multiplier is a separate grid axis
    (e1, d1), (e2, d2) = sorted((e, v.pop()) for e, v in ds.items())[:2]
    assert d1 / d2 == pytest.approx((e1 / e2) ** 0.75, rel=1e-12)
    t = next(t for t in trials(theory) if t.method == "cmo23" and t.params["sigma"] == 0.0
             and t.params["radius_scale"] != 1.0)
    opt = _optimizer(t.method, torch.nn.Parameter(torch.zeros(3, dtype=torch.float64)),
                     {**t.params, "dim": 3}, 1.0)
    assert opt.param_groups[0]["D"] == pytest.approx(t.params["radius_scale"] * t.params["D"])


def test_reproduction_noise_scales_episode_radius_and_step_with_sigma():
    """With noise: T = max(T₀, ⌈σ²d/ε²⌉), T·D equal to the noise-free episode diameter, and
    η = η_scale/(L̂₁ + σ√d·√T/D): η_scale/L̂₁ at σ = 0, → η_scale·D/(σ√(dT)) for large σ."""
    from optzoo.optim.reproduce.o2nc import PRESETS, _shared, _step

    cfg = PRESETS["full"]
    e = 0.01
    det = _shared(cfg, "robust", 0.0, e)
    assert det["T"] == cfg.episode
    for sigma, T in ((0.01, 50), (0.1, 5000)):  # σ²d/ε² with d = 50
        noisy = _shared(cfg, "robust", sigma, e)
        assert noisy["T"] == T
        assert noisy["T"] * noisy["D"] == pytest.approx(det["T"] * det["D"], rel=1e-12)
    assert _shared(cfg, "robust", 1e-4, e)["T"] == cfg.episode  # tiny noise: T₀ kept
    p = {"eta_scale": 0.5, "sigma": 0.0, "dim": 50, "T": 10}
    assert _step(p, 4.0, 0.1) == 0.125
    big = {**p, "sigma": 1e3, "T": 400}
    assert _step(big, 4.0, 0.1) == pytest.approx(0.5 * 0.1 / (1e3 * math.sqrt(50 * 400)),
                                                 rel=1e-3)
    steps = [_step({**p, "sigma": s}, 4.0, 0.1) for s in (0.0, 0.01, 0.1, 1.0)]
    assert steps == sorted(steps, reverse=True) and steps[-1] < steps[0] / 10


# -- the reproduction's verdicts (synthetic results: the rules, not the runs) -------------------

def _o2nc_results(calls, budget=1000, eps=(0.01,), problem="robust"):
    """``calls[method][grid value] = [calls per seed (None = not reached)]`` at every ε."""
    from optzoo.experiment import Result, Trial

    out = []
    for method, grid in calls.items():
        key = "gamma" if method == "odog_adaptive" else "eta_scale"
        for value, per_seed in grid.items():
            for seed, c in enumerate(per_seed):
                params = {"sigma": 0.0, key: value, "budget": budget, "eps": list(eps)}
                out.append(Result(Trial(method, problem, seed, params),
                                  {f"calls@{e:g}": c for e in eps}))
    return out


def _o2nc_claim(results, number, tmp_path):
    from optzoo.optim.reproduce.o2nc import PRESETS, summarize

    claims = summarize(results, PRESETS["quick"], tmp_path).claims
    return next(c for c in claims if c.text.startswith(f"({number})"))


def _interior(best):
    """A 3-point grid whose middle value is best (no grid edge)."""
    return {0.25: [3 * b for b in best], 0.5: best, 1.0: [2 * b for b in best]}


def test_o2nc_claim1_needs_a_real_gap_and_an_interior_step(tmp_path):
    odog = [100, 110, 105]
    held = _o2nc_claim(_o2nc_results({"odog": _interior(odog),
                                      "cmo23": _interior([160, 170, 150])}), 1, tmp_path)
    assert held.verdict.test == "all_of" and held.status == "held"
    # a tie (old rule: not < → failed, but a 1-call gap passed) is not held either way
    tie = _o2nc_claim(_o2nc_results({"odog": _interior(odog),
                                     "cmo23": _interior([101, 111, 106])}), 1, tmp_path)
    assert tie.status == "not held"
    # the same gap with ODOG's best step on the grid's edge: inconclusive (grid edge)
    edge = {0.25: [300, 330, 315], 0.5: [200, 220, 210], 1.0: odog}
    c = _o2nc_claim(_o2nc_results({"odog": edge, "cmo23": _interior([160, 170, 150])}), 1,
                    tmp_path)
    assert c.status == "inconclusive"
    (_, cell), = c.verdict.cells
    assert "grid edge" in cell.reason and "would be held without the guard" in cell.guards


def test_o2nc_unreached_on_both_sides_is_inconclusive_not_a_loss(tmp_path):
    """Both methods at the budget (a lower bound) tie at 0: the budget decides, not the method."""
    never = {0.25: [None] * 3, 0.5: [None] * 3, 1.0: [None] * 3}
    c = _o2nc_claim(_o2nc_results({"odog": never, "cmo23": never}), 1, tmp_path)
    assert c.status == "inconclusive"
    (_, cell), = c.verdict.cells
    assert "censored" in cell.reason


def test_o2nc_claim4_is_a_fixed_factor_noninferiority(tmp_path):
    odog = [100, 110, 105]
    ok = _o2nc_claim(_o2nc_results({"odog": _interior(odog),
                                    "odog_adaptive": {0.5: [3 * c for c in odog],
                                                      1.0: [int(1.3 * c) for c in odog],
                                                      2.0: [3 * c for c in odog]}}), 4,
                     tmp_path)
    assert ok.verdict.cells[0][1].test == "noninferior" and ok.status == "held"
    bad = _o2nc_claim(_o2nc_results({"odog": _interior(odog),
                                     "odog_adaptive": {0.5: [4 * c for c in odog],
                                                       1.0: [int(2.6 * c) for c in odog],
                                                       2.0: [4 * c for c in odog]}}), 4,
                      tmp_path)
    assert bad.status == "not held"
    # adaptive not reached where the budget is < 2× ODOG: the bound cannot support "held"
    cut = _o2nc_claim(_o2nc_results({"odog": _interior(odog),
                                     "odog_adaptive": {0.5: [None] * 3, 1.0: [None, 120, 120],
                                                       2.0: [None] * 3}}, budget=150), 4,
                      tmp_path)
    assert cut.status == "inconclusive"


def test_o2nc_selection_goes_through_tune_with_equal_budgets(tmp_path):
    from optzoo.optim.reproduce.o2nc import _selected

    picks = _selected(_o2nc_results({"odog": _interior([100, 110, 105]),
                                     "cmo23": {0.25: [500] * 3, 0.5: [300] * 3,
                                               1.0: [200, None, 200]}}))
    odog = picks[("odog", "robust", 0.0, 0.01)]
    assert odog.tuned.best == 0.5 and not odog.tuned.on_edge and odog.tuned.budget == 3
    cmo = picks[("cmo23", "robust", 0.0, 0.01)]
    # 1.0 has mean (200 + 1000 + 200)/3 > 300: the unreached seed counts the budget
    assert cmo.tuned.best == 0.5 and cmo.calls == {0: 300, 1: 300, 2: 300}


def _o2nc_results_2d(calls, budget=1000, e=0.01):
    """``calls[method][(η, D×)] = [calls per seed]`` on a 2-D (η, D) grid, one ε per trial."""
    from optzoo.experiment import Result, Trial

    out = []
    for method, grid in calls.items():
        for (eta, r), per_seed in grid.items():
            for seed, c in enumerate(per_seed):
                params = {"sigma": 0.0, "eta_scale": eta, "radius_scale": r, "budget": budget,
                          "eps": [e]}
                out.append(Result(Trial(method, "robust", seed, params), {f"calls@{e:g}": c}))
    return out


def _grid2d(best, best_at=(1.0, 1.0)):
    """3 × 3 (η, D×) grid with ``best`` per seed at ``best_at`` and 2–3× worse elsewhere."""
    pts = [(eta, r) for eta in (0.5, 1.0, 2.0) for r in (1 / 3, 1.0, 3.0)]
    return {pt: (best if pt == best_at else [3 * b if pt[0] != best_at[0] else 2 * b
                                             for b in best]) for pt in pts}


def test_o2nc_best_radius_on_its_grid_edge_is_inconclusive(tmp_path):
    """Issue 20: with D gridded, a best D at an end of its axis (η interior) must not decide."""
    odog, cmo = [100, 110, 105], [160, 170, 150]
    held = _o2nc_claim(_o2nc_results_2d({"odog": _grid2d(odog), "cmo23": _grid2d(cmo)}), 1,
                       tmp_path)
    assert held.status == "held"
    edge = _o2nc_claim(_o2nc_results_2d({"odog": _grid2d(odog, (1.0, 3.0)),
                                         "cmo23": _grid2d(cmo)}), 1, tmp_path)
    assert edge.status == "inconclusive"
    (_, cell), = edge.verdict.cells
    assert "grid edge" in cell.reason


def test_robust_regression_plateau_does_not_count_as_stationary():
    """φ(r) = r²/(1+r²) is flat at infinity: SGD with a huge step blows the residuals up and
    finds ‖∇F‖ ≤ ε there (it "reached" ε = 0.03 in 10 calls in a quick run).  With the guard
    a candidate counts only at F ≤ F(x₀); the same run without it would count the plateau."""
    from optzoo.experiment import Trial
    from optzoo.optim.reproduce.o2nc import PRESETS, _shared, run_trial

    shared = _shared(PRESETS["quick"], "robust", 0.01, 0.03)
    assert shared["f_guard"] is True
    params = {"sigma": 0.01, "eta_scale": 512.0, **shared, "budget": 200}
    guarded = run_trial(Trial("gd", "robust", 0, params))
    assert guarded["calls@0.03"] is None and guarded["plateau_checks"] > 0
    unguarded = run_trial(Trial("gd", "robust", 0, {**params, "f_guard": False}))
    assert unguarded["calls@0.03"] is not None and unguarded["calls@0.03"] <= 50
    # a sane step still reaches ε at the basin (F well below F(x₀))
    sane = run_trial(Trial("gd", "robust", 0, {**params, "eta_scale": 0.5, "budget": 2000}))
    assert sane["calls@0.03"] is not None and sane["plateau_checks"] == 0
