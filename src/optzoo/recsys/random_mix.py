"""ε-mixing random exploration, a sanity floor for diversity (brief of Zhou et al., ICLR 2026,
OpenReview cuzWopwoZG): each list position is replaced, with probability ε, by an item drawn
uniformly from the user's unseen items not already in the list."""

from __future__ import annotations

import numpy as np


def epsilon_mix(lists: np.ndarray, seen: np.ndarray, eps: float,
                rng: np.random.Generator) -> np.ndarray:
    """A copy of ``lists`` (``users x L``) with positions replaced at rate ``eps``."""
    if not 0.0 <= eps <= 1.0:
        raise ValueError(f"eps: expected a number in [0, 1], got {eps}")
    lists = np.array(lists, copy=True)
    seen = np.asarray(seen, dtype=bool)
    if lists.ndim != 2 or seen.shape[0] != lists.shape[0]:
        raise ValueError(f"lists, seen: expected matching users, got {lists.shape}, {seen.shape}")
    for u in range(lists.shape[0]):
        swap = np.flatnonzero(rng.random(lists.shape[1]) < eps)
        if swap.size == 0:
            continue
        allowed = ~seen[u]
        allowed[lists[u]] = False
        cand = np.flatnonzero(allowed)
        swap = swap[:cand.size]
        lists[u, swap] = rng.choice(cand, size=swap.size, replace=False)
    return lists
