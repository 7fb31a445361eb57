"""The bilevel interface: oracles against explicit matrices, the default implicit-function
hyper-gradient against closed forms and finite differences, inverse-HVP solvers, stocBiO/AID."""

from __future__ import annotations

import pytest
import torch

from optzoo.bilevel import BilevelProblem, Oracle, StocBiO
from optzoo.bilevel.problems.quadratic import QuadraticBilevel
from optzoo.bilevel.stocbio import cg_inverse_hvp, neumann_inverse_hvp


class LogCosh(BilevelProblem):
    """Non-quadratic strongly convex lower level, no closed form used: the defaults compute
    y*(x) by Newton and ∇Φ by the dense implicit formula."""

    def __init__(self, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.B = torch.randn(6, 4, generator=g, dtype=torch.float64)
        self.c = torch.randn(6, generator=g, dtype=torch.float64)

    def g(self, x, y, batch=None):
        return 0.5 * (y**2).sum() + torch.log(torch.cosh(y)).sum() - y @ (self.B @ x)

    def f(self, x, y, batch=None):
        return 0.5 * ((y - self.c) ** 2).sum() + 0.1 * torch.cos(x).sum()

    def x0(self):
        return torch.linspace(-1, 1, 4, dtype=torch.float64)

    def y0(self):
        return torch.zeros(6, dtype=torch.float64)


def test_oracle_products_equal_the_explicit_matrices_and_are_counted():
    p = QuadraticBilevel(seed=1)
    o = Oracle(p)
    x, y = p.x0(), torch.randn(p.dim_y, dtype=torch.float64)
    v = torch.randn(p.dim_y, dtype=torch.float64)
    torch.testing.assert_close(o.hvp(x, y, v), p.A @ v)
    torch.testing.assert_close(o.cross(x, y, v), -p.B.T @ v)  # ∇_x⟨Ay − Bx, v⟩
    gx, gy = o.grad_g(x, y)
    torch.testing.assert_close(gy, p.A @ y - p.B @ x)
    torch.testing.assert_close(gx, -p.B.T @ y)
    fx, fy = o.grad_f(x, y)
    torch.testing.assert_close(fy, y - p.c)
    torch.testing.assert_close(fx, p.rho * x)
    assert dict(o.calls) == {"grad_f": 1, "grad_g": 1, "hvp": 1, "cross": 1} and o.total == 4
    o.grad_g_y(x, y)
    assert o.calls["grad_g"] == 2


def test_oracle_noise_has_the_requested_scale():
    p = QuadraticBilevel(seed=2)
    o = Oracle(p, noise=0.5, generator=torch.Generator().manual_seed(0))
    x, y = p.x0(), p.y0()
    exact = p.A @ torch.ones(p.dim_y, dtype=torch.float64)
    draws = torch.stack([o.hvp(x, y, torch.ones(p.dim_y, dtype=torch.float64))
                         for _ in range(2000)])
    assert float((draws.mean(0) - exact).abs().max()) < 0.05
    assert abs(float(draws.std(0).mean()) - 0.5) < 0.02


def test_default_hypergradient_matches_the_closed_form_on_the_quadratic():
    p = QuadraticBilevel(seed=3)
    x = p.x0()
    exact = p.hypergradient(x)
    generic = BilevelProblem.hypergradient(p, x)  # Newton + dense implicit formula
    torch.testing.assert_close(generic, exact, rtol=1e-10, atol=1e-10)


def test_default_hypergradient_matches_finite_differences_of_phi():
    p = LogCosh()
    x = p.x0()
    grad = p.hypergradient(x)
    h = 1e-5
    fd = torch.tensor([(p.phi(x + h * e) - p.phi(x - h * e)) / (2 * h)
                       for e in torch.eye(4, dtype=torch.float64)], dtype=torch.float64)
    torch.testing.assert_close(grad, fd, rtol=1e-6, atol=1e-8)
    y = p.lower_solution(x)
    assert float(torch.func.grad(lambda yy: p.g(x, yy))(y).norm()) < 1e-10


def test_inverse_hvp_solvers_reach_the_exact_solve():
    p = QuadraticBilevel(dim_y=8, seed=4)
    o = Oracle(p)
    x, y = p.x0(), p.y0()
    b = torch.randn(8, dtype=torch.float64)
    exact = torch.linalg.solve(p.A, b)
    torch.testing.assert_close(cg_inverse_hvp(o, x, y, b, iters=8), exact, rtol=1e-8, atol=1e-8)
    # Neumann: error contracts like (1 − η μ)^Q
    few = neumann_inverse_hvp(o, x, y, b, eta=0.4, terms=5)
    many = neumann_inverse_hvp(o, x, y, b, eta=0.4, terms=200)
    torch.testing.assert_close(many, exact, rtol=1e-8, atol=1e-8)
    assert float((few - exact).norm()) > 1e-2


@pytest.mark.parametrize("inverse", ["neumann", "cg"])
def test_stocbio_converges_to_the_minimiser_of_phi(inverse):
    p = QuadraticBilevel(seed=5, rho=1.0)
    M = torch.linalg.solve(p.A, p.B)  # ∇²Φ = MᵀM + ρI: step 1/λ_max
    lr = 1.0 / float(torch.linalg.eigvalsh(M.T @ M).max() + p.rho)
    solver = StocBiO(Oracle(p), lr=lr, inner_lr=0.4, inner_steps=20, inverse=inverse,
                     neumann_eta=0.4, terms=60)
    hist = solver.run(steps=400, every=100,
                      callback=lambda s: {"grad": float(p.hypergradient(s.x).norm())})
    assert hist[-1]["grad"] < 1e-6 < hist[0]["grad"]
    torch.testing.assert_close(solver.x, p.x_star(), rtol=1e-5, atol=1e-5)


def test_run_stops_at_the_budget_and_flags_divergence():
    p = QuadraticBilevel(seed=6)
    o = Oracle(p)
    solver = StocBiO(o, inner_steps=5, terms=3)
    per_step = 5 + 1 + 2 + 1  # lower grads, grad_f, Neumann HVPs (terms − 1), cross
    hist = solver.run(budget=10 * per_step)
    assert hist[-1]["calls"] == 10 * per_step and hist[-1]["step"] == 10
    wild = StocBiO(Oracle(p), lr=1e6, inner_lr=10.0, inner_steps=5)
    out = wild.run(steps=200)
    assert out[-1].get("diverged") is True and out[-1]["step"] < 200


def test_bad_arguments_name_themselves():
    p = QuadraticBilevel()
    with pytest.raises(ValueError, match="inverse"):
        StocBiO(Oracle(p), inverse="lu")
    with pytest.raises(ValueError, match="inner_steps"):
        StocBiO(Oracle(p), inner_steps=2.5)
    with pytest.raises(ValueError, match="noise"):
        Oracle(p, noise=-1.0)
    with pytest.raises(ValueError, match="budget, steps"):
        StocBiO(Oracle(p)).run()
    with pytest.raises(ValueError, match="oracle"):
        StocBiO(p)
    with pytest.raises(ValueError, match="level"):
        Oracle(p).sample("middle")
