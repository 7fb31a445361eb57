"""TTSA and MA-SOBA: the estimators against explicit matrices, unbiasedness of TTSA's randomly
truncated Neumann series, and convergence to the closed-form minimiser on the quadratic
problem."""

from __future__ import annotations

import pytest
import torch

from optzoo.bilevel import Oracle
from optzoo.bilevel.ma_soba import MASOBA
from optzoo.bilevel.problems.quadratic import QuadraticBilevel
from optzoo.bilevel.ttsa import TTSA


def _lr(p):
    M = torch.linalg.solve(p.A, p.B)
    return 1.0 / float(torch.linalg.eigvalsh(M.T @ M).max() + p.rho)


def test_ttsa_estimate_is_unbiased_for_the_truncated_neumann_series():
    p = QuadraticBilevel(dim_x=3, dim_y=4, seed=1)
    x, y = p.x0(), torch.randn(4, dtype=torch.float64)
    s = TTSA(Oracle(p), neumann_eta=0.3, terms=5, generator=torch.Generator().manual_seed(0),
             x0=x, y0=y)
    draws = torch.stack([s.hypergradient() for _ in range(4000)])
    eye = torch.eye(4, dtype=torch.float64)
    fy = y - p.c
    v = 0.3 * sum(torch.linalg.matrix_power(eye - 0.3 * p.A, q) @ fy for q in range(5))
    expected = p.rho * x + p.B.T @ v  # ∇_x f − ∇²_xy g v with ∇²_xy g = −Bᵀ
    se = draws.std(0) / 4000**0.5
    assert bool(((draws.mean(0) - expected).abs() < 5 * se + 1e-12).all())
    # every truncation level is drawn
    o = s.oracle
    assert 0 < o.calls["hvp"] < 4000 * 4


def test_masoba_converges_to_the_minimiser_on_the_quadratic():
    p = QuadraticBilevel(seed=5, rho=1.0)
    s = MASOBA(Oracle(p), lr=0.1 * _lr(p), inner_lr=0.4, z_lr=0.4, beta=0.5)
    hist = s.run(steps=3000, every=500,
                 callback=lambda s: {"grad": float(p.hypergradient(s.x).norm())})
    assert hist[-1]["grad"] < 1e-8 < hist[0]["grad"]
    torch.testing.assert_close(s.x, p.x_star(), rtol=1e-6, atol=1e-6)


def test_ttsa_converges_to_the_minimiser_on_the_quadratic():
    """Noisy oracle and a random truncation: x ends within a small ball of x*."""
    p = QuadraticBilevel(seed=5, rho=1.0)
    o = Oracle(p, noise=0.01, generator=torch.Generator().manual_seed(0))
    # truncation bias ≤ (1 − η_N μ)^Q = 0.7^8 ≈ 6 % of ‖[∇²g]⁻¹∇_y f‖
    s = TTSA(o, lr=0.02, inner_lr=0.4, inner_steps=1, neumann_eta=0.6, terms=8)
    dist0 = float((s.x - p.x_star()).norm())
    s.run(steps=3000)
    assert float((s.x - p.x_star()).norm()) < 0.06 < 0.1 * dist0


def test_masoba_tracks_the_linear_system_solution():
    p = QuadraticBilevel(seed=3)
    o = Oracle(p)
    s = MASOBA(o, lr=1e-12, inner_lr=0.4, z_lr=0.4)  # x frozen in effect
    for _ in range(400):
        s.step()
    y_star = p.lower_solution(s.x)
    torch.testing.assert_close(s.y, y_star, rtol=1e-8, atol=1e-8)
    torch.testing.assert_close(s.z, torch.linalg.solve(p.A, y_star - p.c), rtol=1e-7,
                               atol=1e-7)
    assert dict(o.calls) == {"grad_f": 400, "grad_g": 400, "hvp": 400, "cross": 400}


def test_masoba_projection_bounds_z():
    p = QuadraticBilevel(seed=3)
    s = MASOBA(Oracle(p), inner_lr=0.4, z_lr=0.4, z_radius=0.01)
    for _ in range(20):
        s.step()
    assert float(s.z.norm()) <= 0.01 + 1e-12


def test_bad_arguments_name_themselves():
    o = Oracle(QuadraticBilevel())
    with pytest.raises(ValueError, match="terms"):
        TTSA(o, terms=0)
    with pytest.raises(ValueError, match="neumann_eta"):
        TTSA(o, neumann_eta=-1.0)
    with pytest.raises(ValueError, match="beta"):
        MASOBA(o, beta=1.0)
    with pytest.raises(ValueError, match="z_lr"):
        MASOBA(o, z_lr=0.0)
