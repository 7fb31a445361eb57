"""Determinantal point process re-ranking by fast greedy MAP inference (Chen, Zhang & Zhou,
"Fast Greedy MAP Inference for Determinantal Point Process to Improve Recommendation
Diversity", NeurIPS 2018, Alg. 1) — the post-processing baseline of Zhou et al. (ICLR 2026,
OpenReview cuzWopwoZG).

Kernel (Chen et al. §4): L = Diag(q) S Diag(q), q_i = exp(α r_i), α = θ / (2(1 − θ)), with S the
PSD item similarity (genre Jaccard, a Tanimoto kernel) and r the relevance min-max normalised
within the user's pool.  The greedy step adds argmax_i log det L_{Y∪{i}}, maintained by
incremental Cholesky rows: e_i = (L_{ji} − ⟨c_j, c_i⟩)/d_j, d_i² ← d_i² − e_i².  When every
remaining d_i² falls below ``tol`` (the kernel's rank is exhausted, e.g. items with identical
genres) the list is completed in relevance order, as Chen et al.'s algorithm stops there.
"""

from __future__ import annotations

import numpy as np

from optzoo.recsys.mmr import _check, _pool


def greedy_map(kernel: np.ndarray, length: int, tol: float = 1e-10) -> list[int]:
    """Chen et al.'s Alg. 1 on one PSD ``kernel`` (n x n): up to ``length`` indices; stops early
    when the best marginal gain d_j² drops below ``tol``."""
    lk = np.asarray(kernel, dtype=float)
    if lk.ndim != 2 or lk.shape[0] != lk.shape[1]:
        raise ValueError(f"kernel: expected a square matrix, got shape {lk.shape}")
    n = lk.shape[0]
    if not 1 <= length <= n:
        raise ValueError(f"length: expected 1 <= length <= {n}, got {length}")
    c = np.zeros((length, n))
    d2 = np.diag(lk).copy()
    sel: list[int] = []
    j = int(np.argmax(d2))
    while True:
        if d2[j] < tol:
            break
        sel.append(j)
        if len(sel) == length:
            break
        t = len(sel) - 1
        e = (lk[j] - c[:t, j] @ c[:t]) / np.sqrt(d2[j])
        c[t] = e
        d2 = d2 - e ** 2
        d2[sel] = -np.inf
        j = int(np.argmax(d2))
    return sel


def dpp_rerank(scores: np.ndarray, seen: np.ndarray, similarity: np.ndarray, theta: float,
               length: int = 20, pool: int = 100, tol: float = 1e-10) -> np.ndarray:
    """``users x length`` DPP greedy-MAP lists.

    Args:
        scores: ``users x n_items`` base relevance scores.
        seen: ``users x n_items`` boolean; seen items are never recommended.
        similarity: ``n_items x n_items`` PSD item similarity S.
        theta: relevance/diversity trade-off θ ∈ (0, 1) (larger = more relevance).
        length: list length.
        pool: candidates per user.
        tol: stopping threshold of the greedy gain.

    Example:
        >>> import numpy as np
        >>> from optzoo.recsys import dpp_rerank
        >>> scores = np.array([[0.9, 0.8, 0.7, 0.1, 0.0]])
        >>> seen = np.zeros((1, 5), dtype=bool)
        >>> similarity = np.eye(5)
        >>> similarity[0, 1] = similarity[1, 0] = 0.95  # items 0 and 1 are near duplicates
        >>> dpp_rerank(scores, seen, similarity, theta=0.5, length=3, pool=5)
        array([[0, 2, 3]])
        >>> dpp_rerank(scores, seen, similarity, theta=0.99, length=3, pool=5)  # relevance
        array([[0, 1, 2]])
    """
    if not 0.0 < theta < 1.0:
        raise ValueError(f"theta: expected a number in (0, 1), got {theta}")
    _check(scores, seen, similarity, length, pool)
    idx, rel = _pool(scores, seen, pool)
    alpha = theta / (2.0 * (1.0 - theta))
    s = np.asarray(similarity)
    out = np.empty((idx.shape[0], length), dtype=np.int64)
    for u in range(idx.shape[0]):
        q = np.exp(alpha * (rel[u] - 1.0))  # shift by max: same argmaxes, no overflow
        lk = q[:, None] * s[np.ix_(idx[u], idx[u])] * q[None, :]
        sel = greedy_map(lk, length, tol)
        if len(sel) < length:  # rank exhausted: complete by relevance (pool is relevance-sorted)
            rest = [i for i in range(idx.shape[1]) if i not in set(sel)]
            sel = sel + rest[:length - len(sel)]
        out[u] = idx[u, sel]
    return out
