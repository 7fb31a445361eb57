"""Soft rank: the PAV projection against a generic constrained solver, the hard-rank limit
(paper Lemma 1), finite gradients at ties, and autograd against finite differences."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from scipy.optimize import minimize

from optzoo.recsys.soft_rank import (
    hard_rank,
    permutahedron_projection,
    soft_rank,
    soft_topk_indicator,
)


def _reference_projection(z: np.ndarray, w: np.ndarray, regularization: str) -> np.ndarray:
    """Exact projection by SLSQP on the permutahedron's H-description: sum(μ) = sum(w) and,
    for every proper subset S, sum_S μ ≤ (sum of the |S| largest w)."""
    n = z.size
    base = np.exp(w) if regularization == "kl" else w
    top = np.cumsum(np.sort(base)[::-1])
    cons = [{"type": "eq", "fun": lambda m: m.sum() - base.sum()}]
    for size in range(1, n):
        for sub in itertools.combinations(range(n), size):
            idx = list(sub)
            cons.append({"type": "ineq", "fun": lambda m, i=idx, c=top[size - 1]: c - m[i].sum()})
    if regularization == "l2":
        def f(m):
            return 0.5 * np.sum((m - z) ** 2)
        x0 = np.full(n, base.mean())
        bounds = None
    else:
        ez = np.exp(z)

        def f(m):
            return np.sum(m * np.log(m / ez) - m + ez)
        x0 = np.full(n, base.mean())
        bounds = [(1e-12, None)] * n
    res = minimize(f, x0, method="SLSQP", constraints=cons, bounds=bounds,
                   options={"ftol": 1e-14, "maxiter": 500})
    assert res.success, res.message
    return np.log(res.x) if regularization == "kl" else res.x


@pytest.mark.parametrize("regularization", ["l2", "kl"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_projection_matches_a_generic_solver(regularization, seed):
    rng = np.random.default_rng(seed)
    n = 5
    z = rng.normal(scale=1.5, size=n)
    w = np.sort(rng.normal(size=n))[::-1].copy() if regularization == "l2" else \
        np.arange(n, 0, -1) * 0.5
    got = permutahedron_projection(torch.tensor(z), torch.tensor(w), regularization).numpy()
    ref = _reference_projection(z, w, regularization)
    np.testing.assert_allclose(got, ref, atol=2e-4)


@pytest.mark.parametrize("regularization", ["l2", "kl"])
def test_soft_rank_tends_to_hard_rank_as_eps_to_zero(regularization):
    g = torch.Generator().manual_seed(0)
    theta = torch.randn(4, 30, generator=g, dtype=torch.float64)
    hard = hard_rank(theta)
    errs = [float((soft_rank(theta, eps, regularization) - hard).abs().max())
            for eps in (1.0, 0.1, 0.01, 1e-3)]
    assert errs[-1] < 1e-9
    assert all(a >= b for a, b in zip(errs, errs[1:], strict=False))
    assert errs[0] > 0.1  # ε = 1 really smooths (the operator is not the identity)
    # descending: the highest score has rank 1
    assert torch.equal(hard.argmin(1), theta.argmax(1))


def test_large_eps_collapses_to_the_mean_rank_for_l2():
    theta = torch.tensor([[0.3, -1.0, 2.0, 0.1]], dtype=torch.float64)
    r = soft_rank(theta, 1e6, "l2")
    np.testing.assert_allclose(r.numpy(), np.full((1, 4), 2.5), atol=1e-5)


@pytest.mark.parametrize("regularization", ["l2", "kl"])
def test_soft_ranks_sum_like_hard_ranks_for_l2_and_are_ordered(regularization):
    g = torch.Generator().manual_seed(1)
    theta = torch.randn(3, 12, generator=g, dtype=torch.float64)
    r = soft_rank(theta, 0.3, regularization)
    if regularization == "l2":  # P_Q keeps the sum of ρ
        np.testing.assert_allclose(r.sum(1).numpy(), np.full(3, 78.0), atol=1e-9)
    # order-preserving: a higher score never gets a worse (larger) soft rank
    o = torch.argsort(theta, 1, descending=True)
    rs = r.gather(1, o)
    assert bool((rs[:, 1:] - rs[:, :-1] >= -1e-12).all())


@pytest.mark.parametrize("regularization", ["l2", "kl"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_gradients_finite_at_ties_and_extremes(regularization, dtype):
    theta = torch.tensor([[1.0, 1.0, 1.0, 0.5, 0.5, -2.0],
                          [1e4, -1e4, 0.0, 0.0, 1e-8, 1e-8]], dtype=dtype, requires_grad=True)
    for eps in (1e-3, 0.1, 10.0):
        r = soft_rank(theta, eps, regularization)
        lt = soft_topk_indicator(r, 3, 0.5)
        (lt * torch.arange(6, dtype=dtype)).sum().backward()
        assert torch.isfinite(r).all() and torch.isfinite(theta.grad).all()
        assert r.dtype == dtype
        theta.grad = None


@pytest.mark.parametrize("regularization", ["l2", "kl"])
def test_autograd_matches_finite_differences(regularization):
    g = torch.Generator().manual_seed(3)
    theta = torch.randn(2, 7, generator=g, dtype=torch.float64, requires_grad=True)
    torch.autograd.gradcheck(lambda t: soft_rank(t, 0.5, regularization), (theta,))
    torch.autograd.gradgradcheck(lambda t: soft_rank(t, 0.5, regularization), (theta,))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="eps"):
        soft_rank(torch.zeros(3), 0.0)
    with pytest.raises(ValueError, match="regularization"):
        soft_rank(torch.zeros(3), 1.0, "l1")
    with pytest.raises(ValueError, match="z"):
        soft_rank(torch.tensor([0.0, float("nan")]), 1.0)
    with pytest.raises(ValueError, match="w"):
        permutahedron_projection(torch.zeros(3), torch.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="tau"):
        soft_topk_indicator(torch.zeros(3), 2, 0.0)
