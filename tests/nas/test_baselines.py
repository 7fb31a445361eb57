"""Baselines: the expected-cost penalty against brute-force enumeration, the greedy projection,
and constrained random search."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from optzoo.nas import MINI_TOPOLOGY as S
from optzoo.nas.darts_penalty import PenaltyGradient, expected_cost
from optzoo.nas.darts_projection import greedy_projection
from optzoo.nas.random_search import constrained_random_search


def _brute_expected(alpha: torch.Tensor, cost: str) -> torch.Tensor:
    p = alpha.softmax(dim=1)
    total = 0
    for arch in itertools.product(range(S.n_ops), repeat=S.n_edges):
        prob = p[0, arch[0]] * p[1, arch[1]] * p[2, arch[2]]
        total = total + prob * S.costs(arch)[cost]
    return total


@pytest.mark.parametrize("cost", ["flops", "params"])
def test_expected_cost_equals_enumeration_and_gradient_matches(cost):
    alpha = torch.randn(3, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    pen = PenaltyGradient(S, cost, lam=0.3)
    e = expected_cost(alpha, pen.edge_costs, pen.base)
    brute = _brute_expected(alpha, cost)
    assert torch.allclose(e, brute, rtol=1e-12)
    a = alpha.clone().requires_grad_()
    (g,) = torch.autograd.grad(_brute_expected(a, cost), a)
    got = pen(alpha, torch.zeros_like(alpha))
    assert torch.allclose(got, 0.3 * g / pen.ref, rtol=1e-9, atol=1e-15)
    assert pen.ref == max(S.costs(a)[cost] for a in S.all_archs())


def test_greedy_projection_is_feasible_and_keeps_feasible_inputs():
    alpha = torch.zeros(3, 5)
    alpha[:, 3], alpha[:, 2] = 2.0, 1.0  # prefers conv3x3, then conv1x1
    tight = S.costs((2, 0, 0))["flops"]
    proj, swaps = greedy_projection((3, 3, 3), alpha, S.costs, {"flops": tight})
    # smallest α drop first: conv3x3 → conv1x1 on all 3 edges (drop 1 each, still 3 × 1x1 over
    # budget), then conv1x1 → a free op (drop 1) on 2 edges: 5 swaps, one conv1x1 left
    assert S.costs(proj)["flops"] <= tight and swaps == 5
    assert sorted(proj).count(2) == 1 and 3 not in proj
    assert greedy_projection((0, 1, 4), alpha, S.costs, {"flops": tight}) == ((0, 1, 4), 0)
    with pytest.raises(ValueError, match="budgets"):
        greedy_projection((0, 0, 0), alpha, S.costs, {"flops": 0.0})


def test_random_search_feasible_within_budget_and_seeded():
    rng = np.random.default_rng(0)
    n = 50
    feas = rng.random(n) < 0.4
    val = rng.random(n)
    charge = rng.uniform(1, 2, n)
    row, drawn = constrained_random_search(feas, val, charge, 10.0, np.random.default_rng(3))
    assert feas[row]
    again = constrained_random_search(feas, val, charge, 10.0, np.random.default_rng(3))
    assert again == (row, drawn)
    # it draws while the budget lasts: drawn architectures cost ≤ 10 and one more would not fit
    order = np.random.default_rng(3).permutation(np.flatnonzero(feas))
    spent = np.cumsum(charge[order])
    assert drawn == max(1, int(np.sum(spent <= 10.0)))
    assert val[row] == val[order[:drawn]].max()
    with pytest.raises(ValueError, match="feasible"):
        constrained_random_search(np.zeros(3, bool), val[:3], charge[:3], 1.0, rng)


def test_additive_fit_recovers_an_additive_cost_exactly():
    from optzoo.nas import MINI_TOPOLOGY as S
    from optzoo.nas.darts_penalty import additive_fit

    flops = [S.costs(a)["flops"] for a in S.all_archs()]
    base, d = additive_fit(S, flops)
    edges = S.edge_costs()["flops"]  # the analytic count, op 0 ("none") as the reference
    assert base == pytest.approx(S.base_costs()["flops"] + sum(e[0] for e in edges))
    for fit, exact in zip(d, edges, strict=True):
        assert fit == pytest.approx([c - exact[0] for c in exact], abs=1e-6)
    with pytest.raises(ValueError, match="values"):
        additive_fit(S, flops[:-1])
