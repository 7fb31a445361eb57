"""Maximal Marginal Relevance re-ranking (Carbonell & Goldstein, SIGIR 1998), the post-hoc
baseline of Zhou et al. (ICLR 2026, OpenReview cuzWopwoZG).

Greedy: from each user's pool of the best unseen items, pick
argmax_i λ·rel_i − (1 − λ)·max_{j ∈ selected} S_ij, with rel min-max normalised to [0, 1]
within the user's pool (so that λ means the same for every user); the first pick is the most
relevant item.  λ = 1 is the base ranking.
"""

from __future__ import annotations

import numpy as np


def _pool(scores: np.ndarray, seen: np.ndarray, pool: int) -> tuple[np.ndarray, np.ndarray]:
    s = np.where(np.asarray(seen, dtype=bool), -np.inf, np.asarray(scores, dtype=float))
    idx = np.argsort(-s, axis=1, kind="stable")[:, :pool]
    rel = np.take_along_axis(s, idx, 1)
    lo, hi = rel.min(1, keepdims=True), rel.max(1, keepdims=True)
    return idx, (rel - lo) / np.where(hi > lo, hi - lo, 1.0)


def _check(scores, seen, similarity, length: int, pool: int) -> None:
    scores, seen = np.asarray(scores), np.asarray(seen)
    if scores.ndim != 2 or seen.shape != scores.shape:
        raise ValueError(f"scores, seen: expected two users x n_items arrays, got "
                         f"{scores.shape} and {seen.shape}")
    n = scores.shape[1]
    if np.asarray(similarity).shape != (n, n):
        raise ValueError(f"similarity: expected shape ({n}, {n}), got "
                         f"{np.asarray(similarity).shape}")
    if not 1 <= length <= pool:
        raise ValueError(f"length: expected 1 <= length <= pool = {pool}, got {length}")
    if int((~seen.astype(bool)).sum(1).min()) < pool:
        raise ValueError(f"pool: a user has fewer than {pool} unseen items")


def mmr_rerank(scores: np.ndarray, seen: np.ndarray, similarity: np.ndarray, lam: float,
               length: int = 20, pool: int = 100) -> np.ndarray:
    """``users x length`` MMR lists.

    Args:
        scores: ``users x n_items`` base relevance scores.
        seen: ``users x n_items`` boolean; seen items are never recommended.
        similarity: ``n_items x n_items`` item affinity S.
        lam: λ ∈ [0, 1] (1 = relevance only).
        length: list length.
        pool: candidates per user.
    """
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam: expected a number in [0, 1], got {lam}")
    _check(scores, seen, similarity, length, pool)
    idx, rel = _pool(scores, seen, pool)
    sim = np.asarray(similarity)[idx[:, :, None], idx[:, None, :]]
    users = np.arange(idx.shape[0])
    chosen = np.zeros((idx.shape[0], length), dtype=np.int64)
    max_sim = np.zeros_like(rel)
    taken = np.zeros(rel.shape, dtype=bool)
    for t in range(length):
        obj = lam * rel - (1.0 - lam) * max_sim if t else rel.copy()
        obj[taken] = -np.inf
        j = obj.argmax(1)
        chosen[:, t] = j
        taken[users, j] = True
        max_sim = np.maximum(max_sim, sim[users, j, :])
    return np.take_along_axis(idx, chosen, 1)
