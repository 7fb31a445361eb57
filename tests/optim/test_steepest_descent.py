"""Reference tests of :class:`SteepestDescent` / :class:`SignSGD` (steepest-mirror-flows).

References are closed forms on hand-picked gradients, ``torch.optim.SGD`` / ``Adam`` /
``AdamW`` on identical inputs, and a SciPy minimisation of the steepest-descent subproblem.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from optzoo.optim.steepest_descent import SignSGD, SteepestDescent

G = [3.0, -0.25, 0.0, 4.0]
W = [1.0, 2.0, -1.0, 0.5]


def _one_step(opt_cls, grad=G, w=W, **kw) -> list[float]:
    p = torch.nn.Parameter(torch.tensor(w, dtype=torch.float64))
    opt = opt_cls([p], **kw)
    p.grad = torch.tensor(grad, dtype=torch.float64)
    opt.step()
    return p.detach().tolist()


@pytest.mark.parametrize("kw, direction", [
    (dict(norm="linf"), [1.0, -1.0, 0.0, 1.0]),
    (dict(norm="lp", q=1.0), [1.0, -1.0, 0.0, 1.0]),
    (dict(norm="l2"), G),
    (dict(norm="lp", q=2.0), G),
    (dict(norm="lp", q=1.5), [math.sqrt(3.0), -0.5, 0.0, 2.0]),
])
def test_step_equals_closed_form(kw, direction):
    lr = 0.1
    got = _one_step(SteepestDescent, lr=lr, **kw)
    assert got == pytest.approx([w - lr * d for w, d in zip(W, direction, strict=True)],
                                abs=1e-15)


def test_normalized_step_scales_by_dual_norm():
    lr = 0.1
    # q = 1: ‖g‖_1 sign(g) = 7.25 sign(g)
    got = _one_step(SteepestDescent, lr=lr, norm="linf", normalized=True)
    assert got == pytest.approx([w - lr * 7.25 * s for w, s in zip(W, [1, -1, 0, 1],
                                                                   strict=True)])
    # q = 2: unchanged gradient step
    assert _one_step(SteepestDescent, lr=lr, norm="l2", normalized=True) == pytest.approx(
        [w - lr * g for w, g in zip(W, G, strict=True)])


def test_normalized_step_solves_the_steepest_descent_subproblem():
    """``d = argmin <g, d> + ½‖d‖_p²`` with p = 3 (q = 1.5), solved by SciPy."""
    g = np.array([0.7, -1.3, 0.2, 2.1, -0.05])
    res = optimize.minimize(lambda d: g @ d + 0.5 * np.sum(np.abs(d) ** 3) ** (2 / 3),
                            x0=-g, method="BFGS", options={"gtol": 1e-10})
    p = torch.nn.Parameter(torch.zeros(5, dtype=torch.float64))
    opt = SteepestDescent([p], lr=1.0, norm="lp", q=1.5, normalized=True)
    p.grad = torch.tensor(g)
    opt.step()
    np.testing.assert_allclose(p.detach().numpy(), res.x, atol=1e-5)


def _torch_pair(ours, ref, steps=6, seed=0):
    """Run both optimizers on the same quadratic; return final parameters."""
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(6, 4, generator=g, dtype=torch.float64)
    b = torch.randn(6, generator=g, dtype=torch.float64)
    w0 = torch.randn(4, generator=g, dtype=torch.float64)
    out = []
    for make in (ours, ref):
        p = torch.nn.Parameter(w0.clone())
        opt = make([p])
        for _ in range(steps):
            opt.zero_grad()
            (0.5 * ((A @ p - b) ** 2).sum()).backward()
            opt.step()
        out.append(p.detach())
    return out


def test_q2_equals_torch_sgd():
    a, b = _torch_pair(lambda ps: SteepestDescent(ps, lr=0.05, norm="l2"),
                       lambda ps: torch.optim.SGD(ps, lr=0.05))
    torch.testing.assert_close(a, b, rtol=0, atol=1e-15)


def test_q2_momentum_and_coupled_decay_equal_torch_sgd():
    a, b = _torch_pair(
        lambda ps: SteepestDescent(ps, lr=0.05, norm="l2", momentum=0.9,
                                   coupled_weight_decay=0.1),
        lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, dampening=0.9, weight_decay=0.1),
        steps=10)
    torch.testing.assert_close(a, b, rtol=1e-13, atol=1e-13)


def test_q2_coupled_equals_decoupled_decay():
    a, b = _torch_pair(lambda ps: SteepestDescent(ps, lr=0.05, norm="l2", weight_decay=0.3),
                       lambda ps: SteepestDescent(ps, lr=0.05, norm="l2",
                                                  coupled_weight_decay=0.3))
    torch.testing.assert_close(a, b, rtol=1e-14, atol=1e-14)


def test_sign_descent_equals_adam_with_zero_betas():
    """torch Adam with betas = (0, 0): bias corrections 1 - 0^t = 1, m = g, sqrt(v) = |g|, so the
    step is ``lr·g/(|g| + eps)`` -- sign descent up to eps/|g| (here < 1e-10)."""
    a, b = _torch_pair(lambda ps: SignSGD(ps, lr=0.01),
                       lambda ps: torch.optim.Adam(ps, lr=0.01, betas=(0.0, 0.0), eps=1e-12))
    torch.testing.assert_close(a, b, rtol=0, atol=1e-11)


def test_coupled_decay_equals_adam_l2_and_decoupled_equals_adamw():
    a, b = _torch_pair(lambda ps: SignSGD(ps, lr=0.01, coupled_weight_decay=0.2),
                       lambda ps: torch.optim.Adam(ps, lr=0.01, betas=(0.0, 0.0), eps=1e-12,
                                                   weight_decay=0.2))
    torch.testing.assert_close(a, b, rtol=0, atol=1e-11)
    a, b = _torch_pair(lambda ps: SignSGD(ps, lr=0.01, weight_decay=0.2),
                       lambda ps: torch.optim.AdamW(ps, lr=0.01, betas=(0.0, 0.0), eps=1e-12,
                                                    weight_decay=0.2))
    torch.testing.assert_close(a, b, rtol=0, atol=1e-11)
    # and the two decays differ for sign descent
    c, d = _torch_pair(lambda ps: SignSGD(ps, lr=0.01, weight_decay=0.2),
                       lambda ps: SignSGD(ps, lr=0.01, coupled_weight_decay=0.2))
    assert not torch.allclose(c, d)


def test_decoupled_decay_form():
    """One step: ``w ← (1 - lr·α) w - lr·sign(g)`` (AdamW's decay form)."""
    lr, alpha = 0.1, 0.5
    got = _one_step(SignSGD, lr=lr, weight_decay=alpha)
    want = [(1 - lr * alpha) * w - lr * s for w, s in zip(W, [1, -1, 0, 1], strict=True)]
    assert got == pytest.approx(want, abs=1e-15)


def test_signum_momentum_by_hand():
    p = torch.nn.Parameter(torch.tensor([0.0, 0.0], dtype=torch.float64))
    opt = SignSGD([p], lr=1.0, momentum=0.5)
    p.grad = torch.tensor([1.0, -1.0], dtype=torch.float64)
    opt.step()  # buffer = g -> step -sign(g)
    assert p.detach().tolist() == [-1.0, 1.0]
    p.grad = torch.tensor([-3.0, -3.0], dtype=torch.float64)
    opt.step()  # buffer = 0.5*(1,-1) + 0.5*(-3,-3) = (-1, -2) -> +1 on both
    assert p.detach().tolist() == [0.0, 2.0]


def test_norm_and_q_validation():
    p = [torch.nn.Parameter(torch.zeros(2))]
    with pytest.raises(ValueError, match="q"):
        SteepestDescent(p, norm="linf", q=2.0)
    with pytest.raises(ValueError, match="q"):
        SteepestDescent(p, norm="lp")
    with pytest.raises(ValueError, match="norm"):
        SteepestDescent(p, norm="l1")
    opt = SteepestDescent(p, norm="linf", q=1.0)
    assert opt.defaults["q"] == 1.0


def test_group_norm_resolves_q():
    a = torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))
    b = torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))
    opt = SignSGD([{"params": [a]}, {"params": [b], "norm": "l2"}], lr=0.1)
    assert [g["q"] for g in opt.param_groups] == [1.0, 2.0]
    a.grad = torch.tensor([2.0, -3.0], dtype=torch.float64)
    b.grad = torch.tensor([2.0, -3.0], dtype=torch.float64)
    opt.step()
    assert a.detach().tolist() == pytest.approx([-0.1, 0.1])
    assert b.detach().tolist() == pytest.approx([-0.2, 0.3])


@settings(max_examples=40, deadline=None)
@given(q=st.floats(1.0, 2.0), normalized=st.booleans(), momentum=st.sampled_from([0.0, 0.8]),
       seed=st.integers(0, 1000))
def test_foreach_equals_loop_property(q, normalized, momentum, seed):
    g = torch.Generator().manual_seed(seed)
    shapes = [(3, 2), (4,), (1,)]
    init = [torch.randn(s, generator=g, dtype=torch.float64) for s in shapes]
    grads = [[torch.randn(s, generator=g, dtype=torch.float64) for s in shapes]
             for _ in range(3)]
    out = []
    for foreach in (False, True):
        ps = [torch.nn.Parameter(x.clone()) for x in init]
        opt = SteepestDescent(ps, lr=0.05, norm="lp", q=q, momentum=momentum,
                              weight_decay=0.1, coupled_weight_decay=0.05,
                              normalized=normalized, foreach=foreach)
        for gs in grads:
            for p, gi in zip(ps, gs, strict=True):
                p.grad = gi.clone()
            opt.step()
        out.append([p.detach() for p in ps])
    for a, b in zip(*out, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(q=st.floats(1.0, 2.0), scale=st.sampled_from([1e-30, 1e-8, 1.0, 1e8, 1e30]))
def test_extreme_gradients_stay_finite(q, scale):
    p = torch.nn.Parameter(torch.zeros(4, dtype=torch.float64))
    opt = SteepestDescent([p], lr=1e-3, norm="lp", q=q)
    p.grad = torch.tensor([scale, -scale, 0.0, scale / 3], dtype=torch.float64)
    opt.step()
    assert torch.isfinite(p).all()
    assert p[2] == 0.0  # a zero gradient coordinate never moves (0^0 is not taken as 1)
