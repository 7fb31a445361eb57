"""Baseline: random search under the constraint, at equal compute, on a trained table.

Architectures are drawn uniformly without replacement from the feasible set (a rejection
sampler that never spends budget on infeasible ones, so it is feasible by construction); each
draw is charged its training cost; drawing stops once the next one would exceed the budget
(at least one is drawn).  The one with the best table *validation* accuracy is returned; results
report its *test* accuracy.  In the ConNAS reproduction the charge is the FLOPs of training the
architecture (``epochs x train images x FLOPs``) and the budget is the supernet search's FLOPs
(FLOPs as a deterministic stand-in for wall-clock, so trials are reproducible).
"""

from __future__ import annotations

import numpy as np


def constrained_random_search(feasible: np.ndarray, val_acc: np.ndarray, charge: np.ndarray,
                              budget: float, rng: np.random.Generator) -> tuple[int, int]:
    """(row of the chosen architecture, number drawn).

    Args:
        feasible: boolean mask over the table's rows.
        val_acc: validation accuracy per row (the searcher's only signal).
        charge: cost of evaluating each row (same unit as ``budget``).
        budget: total evaluation budget.
        rng: the generator of the draws.
    """
    feasible, val_acc, charge = (np.asarray(a) for a in (feasible, val_acc, charge))
    if not feasible.shape == val_acc.shape == charge.shape or feasible.ndim != 1:
        raise ValueError("feasible, val_acc, charge: expected 1-D arrays of one length, got "
                         f"{feasible.shape}, {val_acc.shape}, {charge.shape}")
    rows = np.flatnonzero(feasible)
    if rows.size == 0:
        raise ValueError("feasible: no feasible architecture to draw")
    order = rng.permutation(rows)
    spent, drawn = 0.0, []
    for r in order:
        if drawn and spent + charge[r] > budget:
            break
        spent += float(charge[r])
        drawn.append(int(r))
    best = max(drawn, key=lambda r: (val_acc[r], -r))
    return best, len(drawn)
