"""The uniformly convex synthetic problems: closed-form derivatives against the autograd
defaults of BilevelProblem, y* and ∇Φ against the generic Newton / implicit-function references
and finite differences of Φ."""

from __future__ import annotations

import pytest
import torch

from optzoo.bilevel import BilevelProblem, Oracle
from optzoo.bilevel.problems.uniformly_convex import (
    ScalarUniformlyConvex,
    UniformlyConvexSynthetic,
    signed_power,
)


def _away_from_zero(n, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.randn(n, generator=g, dtype=torch.float64)
    return y + 0.3 * torch.sign(y)


@pytest.mark.parametrize("p", [2.0, 3.0, 4.0, 6.0])
def test_vector_overrides_match_autograd(p):
    pr = UniformlyConvexSynthetic(p, dim=6, zeros=2, seed=1)
    x, y = pr.x0(), _away_from_zero(6, 2)
    v = torch.randn(6, dtype=torch.float64)
    for mine, ref in ((pr.grad_f(x, y), BilevelProblem.grad_f(pr, x, y)),
                      (pr.grad_g(x, y), BilevelProblem.grad_g(pr, x, y))):
        for a, b in zip(mine, ref, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(pr.grad_g_y(x, y), BilevelProblem.grad_g_y(pr, x, y))
    torch.testing.assert_close(pr.hvp_yy(x, y, v), BilevelProblem.hvp_yy(pr, x, y, v))
    torch.testing.assert_close(pr.cross_xy(x, y, v), BilevelProblem.cross_xy(pr, x, y, v))


@pytest.mark.parametrize("p", [2.0, 3.0, 4.0])
def test_vector_closed_forms_match_generic_references(p):
    pr = UniformlyConvexSynthetic(p, dim=5, zeros=0, seed=3)
    x = pr.x0()
    y = pr.lower_solution(x)
    assert float(pr.grad_g_y(x, y).abs().max()) < 1e-12  # stationarity of y*
    # the dense implicit formula at y* (invertible Hessian: y* away from 0 a.s.)
    generic = BilevelProblem.hypergradient(pr, x, y)
    torch.testing.assert_close(generic, pr.hypergradient(x), rtol=1e-8, atol=1e-8)
    h = 1e-6
    fd = torch.tensor([(pr.phi(x + h * e) - pr.phi(x - h * e)) / (2 * h)
                       for e in torch.eye(5, dtype=torch.float64)], dtype=torch.float64)
    torch.testing.assert_close(pr.hypergradient(x), fd, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(pr.phi(pr.x_star()), 0.0, rtol=0, atol=1e-20)
    # Φ(x) = f(x, y*(x)) as defined
    assert abs(pr.phi(x) - float(pr.f(x, y))) < 1e-12


def test_vector_degenerate_coordinates_sit_at_zero_at_the_optimum():
    pr = UniformlyConvexSynthetic(4.0, dim=8, zeros=3, seed=0)
    y_star = pr.lower_solution(pr.x_star())
    assert float(y_star[:3].abs().max()) < 1e-5
    assert float(pr.hvp_yy(pr.x_star(), y_star, torch.ones(8, dtype=torch.float64))[:3]
                 .abs().max()) < 1e-9  # singular Hessian there


def test_signed_power_is_odd_and_inverts():
    t = torch.linspace(-2, 2, 9, dtype=torch.float64)
    torch.testing.assert_close(signed_power(-t, 3.0), -signed_power(t, 3.0))
    torch.testing.assert_close(signed_power(signed_power(t, 3.0), 1 / 3.0), t)


@pytest.mark.parametrize("p", [2.0, 3.0, 5.0, 8.0])
def test_scalar_overrides_match_autograd_and_closed_forms(p):
    pr = ScalarUniformlyConvex(p)
    x, y = torch.tensor([0.7], dtype=torch.float64), torch.tensor([-0.8], dtype=torch.float64)
    v = torch.tensor([1.3], dtype=torch.float64)
    for a, b in zip(pr.grad_f(x, y), BilevelProblem.grad_f(pr, x, y), strict=True):
        torch.testing.assert_close(a, b)
    for a, b in zip(pr.grad_g(x, y), BilevelProblem.grad_g(pr, x, y), strict=True):
        torch.testing.assert_close(a, b)
    torch.testing.assert_close(pr.hvp_yy(x, y, v), BilevelProblem.hvp_yy(pr, x, y, v))
    torch.testing.assert_close(pr.cross_xy(x, y, v), BilevelProblem.cross_xy(pr, x, y, v))
    ys = pr.lower_solution(x)
    assert float(pr.grad_g_y(x, ys).abs()) < 1e-12
    h = 1e-6
    fd = (pr.phi(x + h) - pr.phi(x - h)) / (2 * h)
    assert abs(float(pr.hypergradient(x)) - fd) < 1e-7
    assert abs(pr.phi(x) - float(pr.f(x, ys))) < 1e-12
    if p == 2.0:  # invertible Hessian: the generic implicit formula applies
        torch.testing.assert_close(BilevelProblem.hypergradient(pr, x, ys), pr.hypergradient(x))


def test_scalar_noise_has_the_requested_scales():
    pr = ScalarUniformlyConvex(4.0, lower_noise=2.0, upper_noise=0.1)
    o = Oracle(pr, generator=torch.Generator().manual_seed(0))
    x, y = pr.x0(), pr.y0()
    gy = torch.stack([o.grad_g_y(x, y, o.sample("lower")) for _ in range(3000)])
    hv = torch.stack([o.hvp(x, y, torch.ones(1, dtype=torch.float64), o.sample("lower"))
                      for _ in range(3000)])
    assert abs(float(gy.std()) - 2.0) < 0.1 and abs(float(gy.mean() - pr.grad_g_y(x, y))) < 0.1
    assert abs(float(hv.std()) - 0.1) < 0.005
    assert pr.sample("lower", None, None) is not None
    assert ScalarUniformlyConvex(2.0, upper_noise=0.0).sample("lower", None, None) is None


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="p"):
        UniformlyConvexSynthetic(1.5)
    with pytest.raises(ValueError, match="zeros"):
        UniformlyConvexSynthetic(4.0, dim=3, zeros=5)
    with pytest.raises(ValueError, match="lower_noise"):
        ScalarUniformlyConvex(2.0, lower_noise=-1.0)
