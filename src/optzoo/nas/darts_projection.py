"""Baseline: unconstrained DARTS / Gumbel search, then a greedy projection onto the budgets.

The search ignores the hardware (:func:`optzoo.nas.darts.search` without a hook); afterwards the
argmax architecture is repaired greedily: while a budget is violated, among all single-edge
swaps that strictly lower the total relative violation ``Σ_k max(0, c_k − b_k)/b_k``, take the
one that gives up the least architecture weight (smallest ``α_l[current] − α_l[new]``; ties to
the larger violation drop).  Each swap strictly lowers the violation, so it stops; it returns
an infeasible architecture only when no swap helps (a budget below the space's minimum).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch

from optzoo.nas.search_space import Arch


def _violation(c: Mapping[str, float], budgets: Mapping[str, float]) -> float:
    return sum(max(0.0, c[k] - b) / b for k, b in budgets.items())


def greedy_projection(arch: Arch, alpha: torch.Tensor,
                      cost_fn: Callable[[Arch], Mapping[str, float]],
                      budgets: Mapping[str, float]) -> tuple[Arch, int]:
    """The repaired architecture and the number of swaps made."""
    if any(not b > 0 for b in budgets.values()):
        raise ValueError(f"budgets: expected positive bounds, got {dict(budgets)}")
    a = list(arch)
    swaps = 0
    viol = _violation(cost_fn(tuple(a)), budgets)
    while viol > 0:
        best = None
        for e in range(len(a)):
            for j in range(alpha.shape[1]):
                if j == a[e]:
                    continue
                cand = a[:e] + [j] + a[e + 1:]
                v = _violation(cost_fn(tuple(cand)), budgets)
                if v < viol:
                    key = (float(alpha[e, a[e]] - alpha[e, j]), v)
                    if best is None or key < best[0]:
                        best = (key, e, j, v)
        if best is None:
            break
        _, e, j, viol = best
        a[e] = j
        swaps += 1
    return tuple(a), swaps
