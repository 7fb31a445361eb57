"""Problem A of the F²SA-p reproduction: closed-form derivatives and references against the
autograd / Newton / implicit-formula defaults of BilevelProblem and against finite
differences of Φ."""

from __future__ import annotations

import pytest
import torch

from optzoo.bilevel import BilevelProblem
from optzoo.bilevel.f2sa import penalized_solution
from optzoo.bilevel.problems.smooth_strongly_convex import SmoothStronglyConvex


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny tensors: intra-op threads only add synchronisation (50× slower on a busy machine)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def prob():
    return SmoothStronglyConvex(6, 8, seed=3)


def test_closed_form_derivatives_equal_autograd(prob):
    x = prob.x0()
    y = torch.randn(8, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 3
    v = torch.randn(8, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    for name in ("grad_f", "grad_g"):
        for a, b in zip(getattr(prob, name)(x, y), getattr(BilevelProblem, name)(prob, x, y),
                        strict=True):
            torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(prob.grad_g_y(x, y), BilevelProblem.grad_g_y(prob, x, y),
                               rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(prob.hvp_yy(x, y, v), BilevelProblem.hvp_yy(prob, x, y, v),
                               rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(prob.cross_xy(x, y, v), BilevelProblem.cross_xy(prob, x, y, v),
                               rtol=1e-12, atol=1e-12)


def test_g_is_stable_for_large_lower_variables(prob):
    y = torch.full((8,), 800.0, dtype=torch.float64)  # cosh overflows in float64 here
    value = prob.g(prob.x0(), y)
    assert torch.isfinite(value)
    exact = 0.5 * 8 * 800.0**2 + 8 * (800.0 - torch.log(torch.tensor(2.0)).item()) - float(
        y @ (prob.B @ prob.x0()))
    assert abs(float(value) - exact) < 1e-9 * abs(exact)


def test_lower_solution_and_hypergradient_equal_the_generic_references(prob):
    x = prob.x0() * 2.0
    y = prob.lower_solution(x)
    assert float(prob.grad_g_y(x, y).abs().max()) < 1e-14
    torch.testing.assert_close(y, BilevelProblem.lower_solution(prob, x), rtol=1e-12,
                               atol=1e-12)
    torch.testing.assert_close(prob.hypergradient(x), BilevelProblem.hypergradient(prob, x),
                               rtol=1e-10, atol=1e-12)


def test_hypergradient_matches_finite_differences_of_phi(prob):
    x = prob.x0()
    h = 1e-6
    fd = torch.stack([torch.tensor((prob.phi(x + h * e) - prob.phi(x - h * e)) / (2 * h))
                      for e in torch.eye(6, dtype=torch.float64)]).to(torch.float64)
    torch.testing.assert_close(prob.hypergradient(x), fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("weight", [-0.8, -0.3, 0.25, 2.0])
def test_penalized_solution_matches_dense_newton(prob, weight):
    x = prob.x0()
    closed = prob.penalized_solution(x, weight)
    generic = penalized_solution(_NoClosedForm(prob), x, weight)
    torch.testing.assert_close(closed, generic, rtol=1e-12, atol=1e-13)
    grad = weight * (closed - prob.c) + prob.grad_g_y(x, closed)
    assert float(grad.abs().max()) < 1e-13


class _NoClosedForm(BilevelProblem):
    """The same objectives without any closed form (the generic code path)."""

    def __init__(self, inner):
        self.inner = inner

    def f(self, x, y, batch=None):
        return self.inner.f(x, y)

    def g(self, x, y, batch=None):
        return self.inner.g(x, y)

    def x0(self):
        return self.inner.x0()

    def y0(self):
        return self.inner.y0()


def test_bad_arguments_name_themselves(prob):
    with pytest.raises(ValueError, match="dim_x"):
        SmoothStronglyConvex(0)
    with pytest.raises(ValueError, match="weight"):
        prob.penalized_solution(prob.x0(), -1.0)


# -- the finite-sum version (F²SA-p part F: shared minibatches act) ----------------------------

def _fs():
    from optzoo.bilevel.problems.smooth_strongly_convex import FiniteSumSmoothStronglyConvex

    return FiniteSumSmoothStronglyConvex(4, 5, n=16, spread=0.3, seed=2)


def test_finite_sum_closed_forms_equal_autograd_on_a_batch():
    prob = _fs()
    x = prob.x0()
    y = torch.randn(5, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    v = torch.randn(5, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    for batch in (None, torch.tensor([3, 3, 7, 0])):
        for name in ("grad_f", "grad_g"):
            for a, b in zip(getattr(prob, name)(x, y, batch),
                            getattr(BilevelProblem, name)(prob, x, y, batch), strict=True):
                torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(prob.cross_xy(x, y, v, batch),
                                   BilevelProblem.cross_xy(prob, x, y, v, batch),
                                   rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(prob.hvp_yy(x, y, v, batch),
                                   BilevelProblem.hvp_yy(prob, x, y, v, batch),
                                   rtol=1e-12, atol=1e-12)


def test_finite_sum_full_batch_is_problem_a_and_samples_average_to_it():
    prob = _fs()
    base = SmoothStronglyConvex(4, 5, seed=2)
    x = prob.x0()
    torch.testing.assert_close(x, base.x0())
    y = torch.linspace(-1, 1, 5, dtype=torch.float64)
    # the mean of the n one-sample gradients is the full-batch (= problem A's) gradient
    singles = [prob.grad_g(x, y, torch.tensor([i])) for i in range(prob.n)]
    for k in range(2):
        torch.testing.assert_close(torch.stack([s[k] for s in singles]).mean(0),
                                   base.grad_g(x, y)[k], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(torch.stack([prob.grad_f(x, y, torch.tensor([i]))[1]
                                            for i in range(prob.n)]).mean(0),
                               base.grad_f(x, y)[1], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(prob.hypergradient(x), base.hypergradient(x))
    # and the samples differ: a minibatch is noisy
    assert float((singles[0][0] - singles[1][0]).norm()) > 1e-2
    b = prob.sample("lower", 4, torch.Generator().manual_seed(0))
    assert b.shape == (4,) and prob.sample("lower", None, None) is None


def test_finite_sum_rejects_bad_sizes():
    from optzoo.bilevel.problems.smooth_strongly_convex import FiniteSumSmoothStronglyConvex

    with pytest.raises(ValueError, match="n"):
        FiniteSumSmoothStronglyConvex(3, n=1)
    with pytest.raises(ValueError, match="spread"):
        FiniteSumSmoothStronglyConvex(3, spread=0.0)
