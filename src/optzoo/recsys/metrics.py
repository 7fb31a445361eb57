"""Accuracy and diversity of top-k recommendation lists (Zhou et al., ICLR 2026, OpenReview
cuzWopwoZG, §5 and the brief's small-scale protocol).

A *list* is a ``users x L`` integer array of item indices, best first (L ≥ k; positions k+1..2k
give the spillover diversity).  Relevant items are each user's held-out test items (binary
relevance).

* NDCG@k = DCG/IDCG with gain 1/log2(position + 1), IDCG over min(k, |T_u|) hits;
* Recall@k = hits / |T_u|;
* ILD@k = D_S of the paper at k: the mean of 1 − S_ij over the k(k−1)/2 unordered pairs of the
  list (ILD with distance 1 − Jaccard);
* genre coverage@k: distinct genres in the top-k over the number of genres (mean over users);
* catalogue coverage@k: distinct items in all users' top-k over the catalogue size;
* Gini@k: Gini index of how often each catalogue item is recommended (0 = even exposure);
* relevance share@k: the paper's main-table relevance — the share of recommended items whose
  predicted likelihood (the model's score on the [0, 1] target scale) reaches a threshold.
"""

from __future__ import annotations

import numpy as np
import torch

from optzoo.checks import check_int


def _check_lists(lists: np.ndarray, k: int) -> np.ndarray:
    lists = np.asarray(lists)
    if lists.ndim != 2 or lists.shape[1] < k:
        raise ValueError(f"lists: expected a users x L array with L >= k = {k}, "
                         f"got shape {lists.shape}")
    if k < 1:
        raise ValueError(f"k: expected an integer >= 1, got {k}")
    return lists


def topk_lists(scores: torch.Tensor | np.ndarray, seen: np.ndarray, length: int) -> np.ndarray:
    """The ``length`` best unseen items per user (``users x length``), best first."""
    s = torch.as_tensor(scores).detach().clone().double()
    seen_t = torch.as_tensor(np.asarray(seen), dtype=torch.bool)
    if s.shape != seen_t.shape:
        raise ValueError(f"seen: expected shape {tuple(s.shape)}, got {tuple(seen_t.shape)}")
    if s.dim() != 2:
        raise ValueError(f"scores: expected a users x items matrix, got shape {tuple(s.shape)}")
    if torch.isnan(s).any():
        raise ValueError("scores: expected no NaN")
    check_int("length", length, low=1, high=s.shape[1])
    s[seen_t] = -torch.inf
    return torch.topk(s, length, dim=1).indices.numpy()


def ndcg_at_k(lists: np.ndarray, test_sets: list[set[int]], k: int = 10) -> np.ndarray:
    """Per-user NDCG@k (binary gains); users without test items get NaN."""
    lists = _check_lists(lists, k)
    disc = 1.0 / np.log2(np.arange(2, k + 2))
    out = np.full(lists.shape[0], np.nan)
    for u, t in enumerate(test_sets):
        if not t:
            continue
        hits = np.array([it in t for it in lists[u, :k]], dtype=float)
        out[u] = float(hits @ disc) / float(disc[:min(k, len(t))].sum())
    return out


def recall_at_k(lists: np.ndarray, test_sets: list[set[int]], k: int = 10) -> np.ndarray:
    """Per-user hits@k / |T_u|; users without test items get NaN."""
    lists = _check_lists(lists, k)
    out = np.full(lists.shape[0], np.nan)
    for u, t in enumerate(test_sets):
        if t:
            out[u] = sum(it in t for it in lists[u, :k]) / len(t)
    return out


def ild(lists: np.ndarray, similarity: np.ndarray, start: int = 0, stop: int = 10) -> np.ndarray:
    """Per-user mean pairwise dissimilarity 1 − S_ij of the items at positions start..stop−1
    (0-based, half-open): D_S of the paper for start = 0, stop = k."""
    lists = _check_lists(lists, stop)
    if stop - start < 2:
        raise ValueError(f"start, stop: expected at least two positions, got {start}, {stop}")
    sub = lists[:, start:stop]
    s = np.asarray(similarity)[sub[:, :, None], sub[:, None, :]]
    m = stop - start
    return (1.0 - s).sum((1, 2)) / (m * (m - 1)) - np.diagonal(1.0 - s, 0, 1, 2).sum(1) / (
        m * (m - 1))


def genre_coverage(lists: np.ndarray, item_genres: np.ndarray, k: int = 10) -> np.ndarray:
    """Per-user share of genres present in the top-k."""
    lists = _check_lists(lists, k)
    g = np.asarray(item_genres, dtype=bool)
    return g[lists[:, :k]].any(1).sum(1) / g.shape[1]


def catalogue_coverage(lists: np.ndarray, n_items: int, k: int = 10) -> float:
    """Distinct items in all top-k lists over the catalogue size."""
    lists = _check_lists(lists, k)
    return float(np.unique(lists[:, :k]).size / n_items)


def gini(counts: np.ndarray) -> float:
    """Gini index of non-negative counts: Σ_i (2i − n − 1) x_(i) / (n Σ x), x sorted ascending."""
    x = np.sort(np.asarray(counts, dtype=float))
    if x.ndim != 1 or x.size == 0 or (x < 0).any() or not np.isfinite(x).all():
        raise ValueError("counts: expected a non-empty vector of finite non-negative numbers")
    if x.sum() == 0:
        return 0.0
    n = x.size
    i = np.arange(1, n + 1)
    return float(((2 * i - n - 1) * x).sum() / (n * x.sum()))


def exposure_gini(lists: np.ndarray, n_items: int, k: int = 10) -> float:
    """Gini of how often each catalogue item appears in the top-k lists."""
    lists = _check_lists(lists, k)
    return gini(np.bincount(lists[:, :k].ravel(), minlength=n_items))


def relevance_share(lists: np.ndarray, scores: np.ndarray, threshold: float = 0.5,
                    k: int = 10) -> np.ndarray:
    """Per-user share of top-k items whose predicted score reaches ``threshold``."""
    lists = _check_lists(lists, k)
    sc = np.asarray(scores)
    return (np.take_along_axis(sc, lists[:, :k], 1) >= threshold).mean(1)


def evaluate(lists: np.ndarray, test_sets: list[set[int]], similarity: np.ndarray,
             item_genres: np.ndarray, scores: np.ndarray | None = None, k: int = 10,
             threshold: float = 0.5) -> dict[str, float]:
    """All metrics of one method's lists, averaged over users with test items.

    Spillover ILD (positions k+1..2k) is included when the lists have at least 2k items.
    """
    lists = _check_lists(lists, k)
    has = np.array([bool(t) for t in test_sets])
    out = {
        "ndcg": float(np.nanmean(ndcg_at_k(lists, test_sets, k))),
        "recall": float(np.nanmean(recall_at_k(lists, test_sets, k))),
        "ild": float(ild(lists, similarity, 0, k)[has].mean()),
        "genre_cov": float(genre_coverage(lists, item_genres, k)[has].mean()),
        "cat_cov": catalogue_coverage(lists[has], item_genres.shape[0], k),
        "gini": exposure_gini(lists[has], item_genres.shape[0], k),
    }
    if lists.shape[1] >= 2 * k:
        out["ild_next"] = float(ild(lists, similarity, k, 2 * k)[has].mean())
    if scores is not None:
        out["rel_share"] = float(relevance_share(lists, scores, threshold, k)[has].mean())
    return out
