"""Reference tests of :mod:`optzoo.optim.mirror_flow` (steepest-mirror-flows).

The discrete steepest descent on the factors (small lr) is the reference for the mirror-flow
ODE; the balance laws and mirror maps are checked against their closed forms.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from optzoo.optim.mirror_flow import (
    DeepDiagonal,
    HadamardProduct,
    PowerDifference,
    balance,
    decoupled_wd_regularizer,
    deep_balanced_velocity,
    grad_R,
    integrate_mirror_flow,
    is_legendre,
    metric,
    metric_exponent,
)
from optzoo.optim.steepest_descent import SteepestDescent


def _problem(seed=0, k=12, n=6):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, k)) / math.sqrt(n)
    x_star = np.zeros(k)
    x_star[:3] = (1.0, -0.5, 0.8)
    u0 = 0.3 + 0.1 * rng.random(k)
    v0 = 0.1 + 0.1 * rng.random(k)
    return A, A @ x_star, u0, v0


def _discrete(A, y, u0, v0, q, lr, time, wd=0.0, cwd=0.0, every=None):
    model = HadamardProduct(torch.tensor(u0), torch.tensor(v0))
    opt = SteepestDescent(model.parameters(), lr=lr, norm="lp", q=q, weight_decay=wd,
                          coupled_weight_decay=cwd)
    At, yt = torch.tensor(A), torch.tensor(y)
    steps = int(round(time / lr))
    every = every or steps // 10
    ts, us, vs = [], [], []
    for s in range(1, steps + 1):
        opt.zero_grad()
        (0.5 * ((At @ model() - yt) ** 2).sum()).backward()
        opt.step()
        if s % every == 0:
            ts.append(s * lr)
            us.append(model.m.detach().numpy().copy())
            vs.append(model.w.detach().numpy().copy())
    return np.array(ts), np.array(us), np.array(vs)


@pytest.mark.parametrize("q", [1.0, 1.5, 2.0])
@pytest.mark.parametrize("wd", [0.0, 0.5])
def test_mirror_flow_matches_small_lr_discrete_run(q, wd):
    """Brief item (2): the x-trajectory of steepest descent on u ⊙ v at small lr equals the
    integrated steepest mirror flow to < 5 % relative error."""
    A, y, u0, v0 = _problem()
    ts, us, vs = _discrete(A, y, u0, v0, q, lr=2.5e-4, time=0.5, wd=wd)
    lam = np.abs(u0) ** q - np.abs(v0) ** q
    t, x = integrate_mirror_flow(lambda x: A.T @ (A @ x - y), u0 * v0, lam, q, ts,
                                 weight_decay=wd, stop_at_sign_change=False,
                                 sign_eps=1e-4 if q < 2 else 0.0, method="LSODA",
                                 rtol=1e-7, atol=1e-10)
    assert len(t) == len(ts)
    err = np.linalg.norm(us * vs - x, axis=1) / np.linalg.norm(x, axis=1)
    assert err.max() < 0.05
    # and the flow really moved: x changed by far more than the error
    assert np.linalg.norm(x[-1] - u0 * v0) > 10 * err.max() * np.linalg.norm(x[-1])


def test_integration_stops_at_first_gradient_sign_change():
    A, y, u0, v0 = _problem()
    t, x = integrate_mirror_flow(lambda x: A.T @ (A @ x - y), u0 * v0, 0.1, 1.0,
                                 np.linspace(0.01, 2.0, 200))
    assert 0 < len(t) < 200 and x.shape == (len(t), u0.size)
    g0, g1 = A.T @ (A @ (u0 * v0) - y), A.T @ (A @ x[-1] - y)
    assert np.all(np.sign(g1) == np.sign(g0))  # before the stop, no coordinate flipped


def test_balance_decays_like_exp_minus_alpha_t_for_sign_descent():
    """Brief item (3), q = 1: with u, v > 0, (|u| - |v|) shrinks exactly by (1 - lr α) per step
    (both factors receive the same sign step), i.e. like exp(-αt) as lr -> 0."""
    A, y, u0, v0 = _problem()
    u0, v0 = u0 + 2.0, v0 + 2.0  # keep the factors positive over the horizon
    alpha, lr = 0.5, 1e-3
    ts, us, vs = _discrete(A, y, u0, v0, 1.0, lr=lr, time=1.0, wd=alpha)
    ratio = balance(torch.tensor(us), torch.tensor(vs), 1.0).numpy() / (u0 - v0)
    steps = np.round(ts / lr)
    np.testing.assert_allclose(ratio, np.repeat((1 - lr * alpha) ** steps[:, None], u0.size, 1),
                               rtol=1e-9)
    np.testing.assert_allclose(ratio, np.exp(-alpha * ts)[:, None] * np.ones_like(ratio),
                               rtol=2e-3)


def test_balance_decays_like_exp_minus_2_alpha_t_for_gd():
    A, y, u0, v0 = _problem()
    alpha = 0.5
    ts, us, vs = _discrete(A, y, u0, v0, 2.0, lr=1e-3, time=1.0, wd=alpha)
    ratio = balance(torch.tensor(us), torch.tensor(vs), 2.0).numpy() / (u0**2 - v0**2)
    np.testing.assert_allclose(ratio, np.exp(-2 * alpha * ts)[:, None] * np.ones_like(ratio),
                               rtol=5e-3)


@pytest.mark.parametrize("q", [1.0, 2.0])
def test_balance_conserved_without_weight_decay(q):
    A, y, u0, v0 = _problem()
    u0, v0 = u0 + 1.0, v0 + 1.0
    ts, us, vs = _discrete(A, y, u0, v0, q, lr=1e-3, time=1.0)
    ratio = balance(torch.tensor(us), torch.tensor(vs), q).numpy() / (u0**q - v0**q)
    np.testing.assert_allclose(ratio, 1.0, rtol=5e-3)


def test_coupled_weight_decay_breaks_the_law():
    A, y, u0, v0 = _problem()
    u0, v0 = u0 + 1.0, v0 + 1.0
    alpha = 0.5
    ts, us, vs = _discrete(A, y, u0, v0, 1.0, lr=1e-3, time=1.0, cwd=alpha)
    ratio = (us - vs) / (u0 - v0)
    assert np.max(np.abs(ratio - np.exp(-alpha * ts)[:, None])) > 0.2


def test_metric_and_mirror_map_closed_forms():
    x = np.array([-2.0, -0.3, 0.0, 0.1, 1.5])
    lam = 0.7
    # q = 2: ∇R = ½ asinh(2x/λ) (Woodworth et al.'s hyperbolic entropy), ∇²R = 1/sqrt(4x²+λ²)
    np.testing.assert_allclose(grad_R(x, lam, 2.0), 0.5 * np.arcsinh(2 * x / lam))
    np.testing.assert_allclose(metric(x, lam, 2.0), 1 / np.sqrt(4 * x**2 + lam**2))
    # every q: d∇R/dx = ∇²R (central differences; quadrature for q = 1.5)
    for q in (1.0, 1.5, 2.0):
        h = 1e-6
        fd = (grad_R(x + h, lam, q) - grad_R(x - h, lam, q)) / (2 * h)
        np.testing.assert_allclose(fd, metric(x, lam, q), rtol=1e-5)


def test_deep_balanced_velocity_matches_factor_flow():
    """Chain rule through L balanced factors under the steepest flow equals
    ``-L |x|^{q(L-1)/L} sign(g)|g|^{q-1}``."""
    for q in (1.0, 1.5, 2.0):
        for L in (2, 3, 4):
            model = DeepDiagonal(3, L, 0.7, "balanced")
            g = torch.tensor([0.4, -1.3, 2.0], dtype=torch.float64)
            (model() * g).sum().backward()
            vel = torch.zeros(3, dtype=torch.float64)
            for i, w in enumerate(model.factors):
                dw = -torch.sign(w.grad) * w.grad.abs() ** (q - 1)
                others = torch.ones(3, dtype=torch.float64)
                for j, v in enumerate(model.factors):
                    if j != i:
                        others = others * v.detach()
                vel += others * dw
            want = deep_balanced_velocity(model().detach().numpy(), g.numpy(), q, L)
            np.testing.assert_allclose(vel.numpy(), want, rtol=1e-12)


def test_metric_exponent_and_legendre_validity():
    assert metric_exponent(2.0, 2) == 1.0 and is_legendre(2.0, 2)
    assert not is_legendre(2.0, 3)  # GF: only L = 2 qualifies
    assert all(is_legendre(1.0, L) for L in (2, 3, 8, 100))  # SignGF: every depth
    assert metric_exponent(1.0, 4) == pytest.approx(0.75)


def test_decoupled_wd_regularizer_table1():
    x = np.array([0.5, -2.0, 0.0])
    assert decoupled_wd_regularizer(x, 2.0, 2) == pytest.approx(2.5)  # L1
    assert decoupled_wd_regularizer(x, 1.0, 2) == pytest.approx(
        2 / 3 * (0.5**1.5 + 2.0**1.5))  # 2/3 · L_{3/2}^{3/2}


def test_models():
    sad = DeepDiagonal(4, 3, 0.1, "saddle")
    assert torch.equal(sad(), torch.zeros(4, dtype=torch.float64))
    assert sad.factors[1][0].item() == 0.1
    pd = PowerDifference(torch.tensor([2.0, 1.0]), torch.tensor([1.0, 3.0]), 3)
    assert pd().tolist() == [7.0, -26.0]
    with pytest.raises(ValueError, match="scale"):
        DeepDiagonal(4, 2, 0.0)
    with pytest.raises(ValueError, match="init"):
        DeepDiagonal(4, 2, 0.1, "random")
    with pytest.raises(ValueError, match="depth"):
        DeepDiagonal(4, 0, 0.1)
    with pytest.raises(ValueError, match="t_eval"):
        integrate_mirror_flow(lambda x: x, np.ones(2), 0.1, 1.0, np.array([1.0, 0.5]))
    with pytest.raises(ValueError, match="q"):
        metric(np.ones(2), 0.1, 3.0)
