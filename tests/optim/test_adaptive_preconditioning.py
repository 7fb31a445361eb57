"""Reference tests of Kovalev (ICLR 2026) "SGD with Adaptive Preconditioning": AdaGrad-Norm,
diagonal AdaGrad, ASGO, DASGO (Algorithm 1 and the accelerated Algorithm 2) and Scion.

References are closed forms and hand-computed steps, plus ``torch.optim.Adagrad`` on identical
inputs; none uses the code under test to produce the expected values.
"""

from __future__ import annotations

import contextlib
import math

import pytest
import scipy.linalg
import torch

from optzoo.optim.adagrad import DiagAdaGrad
from optzoo.optim.adagrad_norm import AdaGradNorm
from optzoo.optim.asgo import ASGO
from optzoo.optim.dasgo import DASGO
from optzoo.optim.scion import Scion

DT = torch.float64


def _quad_problem(shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    curv = 0.1 + 3 * torch.rand(shape, generator=g, dtype=DT)
    opt = torch.randn(shape, generator=g, dtype=DT)
    x0 = opt + torch.randn(shape, generator=g, dtype=DT)
    return x0, lambda x: 0.5 * (curv * (x - opt) ** 2).sum()


def _run(opt, p, f, steps, record=None):
    for _ in range(steps):
        opt.zero_grad()
        f(p).backward()
        opt.step()
        if record is not None:
            record.append(p.detach().clone())


# -- DiagAdaGrad vs torch.optim.Adagrad ----------------------------------------------------

def test_diag_adagrad_equals_torch_adagrad_with_delta_as_initial_accumulator():
    """δ inside the root = torch's ``initial_accumulator_value = δ, eps = 0``."""
    x0, f = _quad_problem((4, 3))
    delta, eta = 1e-3, 0.7
    a = torch.nn.Parameter(x0.clone())
    b = torch.nn.Parameter(x0.clone())
    ours = DiagAdaGrad([a], lr=eta, eps=delta, average=False)
    ref = torch.optim.Adagrad([b], lr=eta, eps=0.0, initial_accumulator_value=delta)
    _run(ours, a, f, 30)
    _run(ref, b, f, 30)
    torch.testing.assert_close(a.detach(), b.detach(), rtol=1e-12, atol=1e-12)


def test_diag_adagrad_differs_from_torch_default_eps_convention():
    """torch adds eps OUTSIDE the root: with the same eps the first step differs measurably."""
    x = torch.nn.Parameter(torch.tensor([1.0, -2.0], dtype=DT))
    y = torch.nn.Parameter(torch.tensor([1.0, -2.0], dtype=DT))
    ours = DiagAdaGrad([x], lr=1.0, eps=0.25, average=False)
    ref = torch.optim.Adagrad([y], lr=1.0, eps=0.25)
    g = torch.tensor([1.0, 3.0], dtype=DT)
    for p, o in ((x, ours), (y, ref)):
        p.grad = g.clone()
        o.step()
    expected_ours = torch.tensor([1 - 1 / math.sqrt(1.25), -2 - 3 / math.sqrt(9.25)], dtype=DT)
    expected_torch = torch.tensor([1 - 1 / 1.25, -2 - 3 / 3.25], dtype=DT)
    torch.testing.assert_close(x.detach(), expected_ours, rtol=0, atol=1e-15)
    torch.testing.assert_close(y.detach(), expected_torch, rtol=0, atol=1e-15)


# -- AdaGrad-Norm: hand-computed steps ------------------------------------------------------

def test_adagrad_norm_two_hand_computed_steps():
    """f(x) = ½(x₁² + 4x₂²), x₀ = (1, 2): s₀ = ‖(1, 8)‖²/2 = 32.5, then s₁ = s₀ + ‖g₁‖²/2."""
    eta, delta = 0.5, 0.01
    p = torch.nn.Parameter(torch.tensor([1.0, 2.0], dtype=DT))
    opt = AdaGradNorm([p], lr=eta, eps=delta, average=False)
    f = lambda x: 0.5 * (x[0] ** 2 + 4 * x[1] ** 2)  # noqa: E731
    s0 = (1 + 64) / 2
    x1 = [1 - eta * 1 / math.sqrt(delta + s0), 2 - eta * 8 / math.sqrt(delta + s0)]
    g1 = [x1[0], 4 * x1[1]]
    s1 = s0 + (g1[0] ** 2 + g1[1] ** 2) / 2
    x2 = [x1[0] - eta * g1[0] / math.sqrt(delta + s1), x1[1] - eta * g1[1] / math.sqrt(delta + s1)]
    _run(opt, p, f, 1)
    torch.testing.assert_close(p.detach(), torch.tensor(x1, dtype=DT), rtol=0, atol=1e-14)
    _run(opt, p, f, 1)
    torch.testing.assert_close(p.detach(), torch.tensor(x2, dtype=DT), rtol=0, atol=1e-14)
    assert float(opt.preconditioner(p)) == pytest.approx(eta / math.sqrt(delta + s1), rel=1e-14)


def test_algorithm1_output_is_the_uniform_iterate_average():
    x0, f = _quad_problem((5,))
    p = torch.nn.Parameter(x0.clone())
    opt = DiagAdaGrad([p], lr=1.0)
    iterates = [x0.clone()]
    _run(opt, p, f, 12, record=iterates)
    expected = torch.stack(iterates).mean(0)  # (x_0 + ... + x_12) / 13
    torch.testing.assert_close(opt.output()[p], expected, rtol=1e-13, atol=1e-13)
    opt2 = DiagAdaGrad([torch.nn.Parameter(x0.clone())], lr=1.0, average=False)
    q = opt2.param_groups[0]["params"][0]
    _run(opt2, q, f, 12)
    assert torch.equal(opt2.output()[q], q.detach())


# -- one-step accumulators: Scion's row step and Muon's polar factor -----------------------

def test_dasgo_first_step_equals_scion_row_normalized_step():
    """DASGO's first step is η√n G[i]/‖G[i]‖ (δ → 0): Scion's row LMO with lr·ρ = η n."""
    g = torch.Generator().manual_seed(1)
    m, n, eta = 4, 6, 0.3
    x0 = torch.randn(m, n, generator=g, dtype=DT)
    grad = torch.randn(m, n, generator=g, dtype=DT)
    a = torch.nn.Parameter(x0.clone())
    b = torch.nn.Parameter(x0.clone())
    dasgo = DASGO([a], lr=eta, eps=1e-30)
    scion = Scion([b], lr=eta * n, momentum=1.0, norm="row", scale=1.0, unconstrained=True)
    for p, o in ((a, dasgo), (b, scion)):
        p.grad = grad.clone()
        o.step()
    hand = x0 - eta * math.sqrt(n) * grad / grad.norm(dim=1, keepdim=True)
    torch.testing.assert_close(a.detach(), hand, rtol=0, atol=1e-12)
    torch.testing.assert_close(b.detach(), hand, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("shape", "side"), [((3, 7), "left"), ((3, 7), "smaller"),
                                             ((7, 3), "right"), ((7, 3), "smaller")])
def test_asgo_first_step_equals_polar_factor_step(shape, side):
    """One-sided Shampoo with a one-step accumulator: η √(other side) U Vᵀ (G = U Σ Vᵀ)."""
    g = torch.Generator().manual_seed(2)
    eta = 0.4
    x0 = torch.randn(*shape, generator=g, dtype=DT)
    grad = torch.randn(*shape, generator=g, dtype=DT)
    p = torch.nn.Parameter(x0.clone())
    opt = ASGO([p], lr=eta, eps=1e-24, side=side)
    p.grad = grad.clone()
    opt.step()
    u, _, vh = torch.linalg.svd(grad, full_matrices=False)
    other = max(shape)  # the un-preconditioned (larger) side in these cases
    torch.testing.assert_close(p.detach(), x0 - eta * math.sqrt(other) * (u @ vh),
                               rtol=0, atol=1e-9)


def test_asgo_matches_full_matrix_formula_over_several_steps():
    """Left ASGO = η (δI + (1/n)Σ G_i G_iᵀ)^{-1/2} G_k, the root from scipy's ``sqrtm``."""
    x0, f = _quad_problem((3, 5), seed=3)
    p = torch.nn.Parameter(x0.clone())
    eta, delta = 0.8, 1e-4
    opt = ASGO([p], lr=eta, eps=delta, average=False)
    acc = torch.zeros(3, 3, dtype=DT)
    x = x0.clone().requires_grad_(True)
    for _ in range(4):
        gx = torch.autograd.grad(f(x), x)[0]
        acc = acc + gx @ gx.T
        root = scipy.linalg.inv(scipy.linalg.sqrtm((delta * torch.eye(3, dtype=DT)
                                                    + acc / 5).numpy()))
        x = (x - eta * torch.from_numpy(root.real) @ gx).detach().requires_grad_(True)
    _run(opt, p, f, 4)
    torch.testing.assert_close(p.detach(), x.detach(), rtol=0, atol=1e-10)


@pytest.mark.parametrize("cls", [ASGO, DASGO])
def test_matrix_methods_reduce_to_adagrad_norm_on_vectors(cls):
    x0, f = _quad_problem((6,), seed=4)
    a = torch.nn.Parameter(x0.clone())
    b = torch.nn.Parameter(x0.clone())
    kw = {"side": "right"} if cls is ASGO else {}  # a vector is 1×d: always the 1-dim side
    _run(cls([a], lr=0.9, eps=1e-6, **kw), a, f, 10)
    _run(AdaGradNorm([b], lr=0.9, eps=1e-6), b, f, 10)
    torch.testing.assert_close(a.detach(), b.detach(), rtol=1e-12, atol=1e-12)


# -- Algorithm 2 -----------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [AdaGradNorm, DiagAdaGrad, DASGO])
def test_algorithm2_first_two_steps_by_hand(cls):
    """f(x) = ½ L x², x₀ = 1, L = 2, η = 2, δ = 1e-3, α_k = 2/(k+2), g_k = ∇f(y_k)/α_k."""
    big_l, eta, delta = 2.0, 2.0, 1e-3
    p = torch.nn.Parameter(torch.tensor([1.0], dtype=DT))
    opt = cls([p], lr=eta, eps=delta, nesterov=True)
    f = lambda x: 0.5 * big_l * (x**2).sum()  # noqa: E731
    # k = 0: α₀ = 1, y₀ = x₀ = 1, g₀ = 2, S₀ = 4
    x1 = 1 - eta * 2 / math.sqrt(delta + 4)
    xbar1 = x1
    y1 = (2 / 3) * x1 + (1 / 3) * xbar1
    _run(opt, p, f, 1)
    assert float(p.detach()) == pytest.approx(y1, abs=1e-14)
    assert float(opt.output()[p]) == pytest.approx(xbar1, abs=1e-14)
    # k = 1: α₁ = 2/3, g₁ = L y₁ / α₁, S₁ = 4 + g₁²
    g1 = big_l * y1 / (2 / 3)
    x2 = x1 - eta * g1 / math.sqrt(delta + 4 + g1**2)
    xbar2 = (2 / 3) * x2 + (1 / 3) * xbar1
    y2 = 0.5 * x2 + 0.5 * xbar2
    _run(opt, p, f, 1)
    assert float(p.detach()) == pytest.approx(y2, abs=1e-14)
    assert float(opt.output()[p]) == pytest.approx(xbar2, abs=1e-14)
    assert float(opt.state[p]["x"]) == pytest.approx(x2, abs=1e-14)


def test_asgo_nesterov_warns_that_it_is_beyond_the_paper():
    with pytest.warns(UserWarning, match="extrapolation"):
        ASGO([torch.nn.Parameter(torch.zeros(2, 2))], nesterov=True)


def test_accelerated_beats_plain_on_an_ill_conditioned_quadratic():
    """Deterministic smooth convex case: Algorithm 2 (η = 2R) ends below Algorithm 1 (η = R)."""
    g = torch.Generator().manual_seed(5)
    d = 50
    curv = 10 ** (4 * torch.rand(d, generator=g, dtype=DT) - 2)
    xs = torch.randn(d, generator=g, dtype=DT)
    f = lambda x: 0.5 * (curv * (x - xs) ** 2).sum()  # noqa: E731
    r = float(xs.abs().max())
    vals = []
    for kw in (dict(lr=r), dict(lr=2 * r, nesterov=True)):
        p = torch.nn.Parameter(torch.zeros(d, dtype=DT))
        opt = DiagAdaGrad([p], eps=1e-12, **kw)
        _run(opt, p, f, 400)
        with torch.no_grad(), opt.swap_output():
            vals.append(float(f(p)))
    assert vals[1] < 0.1 * vals[0]


# -- monotone preconditioners ----------------------------------------------------------------

@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("cls", [AdaGradNorm, DiagAdaGrad, DASGO, ASGO])
def test_preconditioner_is_monotone_non_increasing(cls, nesterov):
    """H_{k+1} ⪯ H_k (the accumulator only grows): elementwise, or PSD difference for ASGO."""
    x0, f = _quad_problem((3, 4), seed=6)
    p = torch.nn.Parameter(x0.clone())
    with pytest.warns(UserWarning) if cls is ASGO and nesterov else contextlib.nullcontext():
        opt = cls([p], lr=1.0, eps=1e-6, nesterov=nesterov)
    prev = None
    for _ in range(15):
        _run(opt, p, f, 1)
        h = opt.preconditioner(p).clone()
        if prev is not None:
            diff = prev - h
            if cls is ASGO:
                assert float(torch.linalg.eigvalsh(diff).min()) >= -1e-12
            else:
                assert bool((diff >= -1e-15).all())
        prev = h


# -- Scion -----------------------------------------------------------------------------------

def test_scion_sign_and_spectral_steps_closed_form():
    g = torch.Generator().manual_seed(7)
    x0 = torch.randn(3, 5, generator=g, dtype=DT)
    grad = torch.randn(3, 5, generator=g, dtype=DT)
    lr, rho = 0.1, 2.0
    # constrained sign step: (1 − γ)x − γρ sign(g)/n
    a = torch.nn.Parameter(x0.clone())
    a.grad = grad.clone()
    Scion([a], lr=lr, momentum=1.0, norm="sign", scale=rho).step()
    torch.testing.assert_close(a.detach(), (1 - lr) * x0 - lr * rho * torch.sign(grad) / 5,
                               rtol=0, atol=1e-15)
    # unconstrained spectral step: x − γρ √(m/n) U Vᵀ
    b = torch.nn.Parameter(x0.clone())
    b.grad = grad.clone()
    Scion([b], lr=lr, momentum=1.0, norm="spectral", scale=rho, unconstrained=True).step()
    u, _, vh = torch.linalg.svd(grad, full_matrices=False)
    torch.testing.assert_close(b.detach(), x0 - lr * rho * math.sqrt(3 / 5) * u @ vh,
                               rtol=0, atol=1e-12)


def test_scion_momentum_averages_gradients():
    """d₁ = (1 − α)·α g₀ + α g₁ enters the row LMO of the second step."""
    x0 = torch.zeros(2, 2, dtype=DT)
    g0 = torch.tensor([[1.0, 0.0], [0.0, 2.0]], dtype=DT)
    g1 = torch.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=DT)
    p = torch.nn.Parameter(x0.clone())
    opt = Scion([p], lr=0.5, momentum=0.25, norm="row", unconstrained=True)
    for gr in (g0, g1):
        p.grad = gr.clone()
        opt.step()
    d1 = 0.75 * 0.25 * g0 + 0.25 * g1
    step0 = g0 / g0.norm(dim=1, keepdim=True) / math.sqrt(2)
    step1 = d1 / d1.norm(dim=1, keepdim=True) / math.sqrt(2)
    torch.testing.assert_close(p.detach(), x0 - 0.5 * (step0 + step1), rtol=0, atol=1e-15)


def test_scion_rejects_constrained_step_above_one():
    with pytest.raises(ValueError, match="lr"):
        Scion([torch.nn.Parameter(torch.zeros(2))], lr=1.5)
