"""DPP greedy MAP against brute-force determinants, MMR against a direct loop, ε-mixing."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from optzoo.recsys.dpp import dpp_rerank, greedy_map
from optzoo.recsys.mmr import mmr_rerank
from optzoo.recsys.random_mix import epsilon_mix


def _psd(n, rank, seed):
    rng = np.random.default_rng(seed)
    b = rng.normal(size=(n, rank))
    return b @ b.T + 1e-3 * np.eye(n)


def _naive_greedy(lk, length):
    sel = []
    for _ in range(length):
        best, val = None, -np.inf
        for i in range(lk.shape[0]):
            if i in sel:
                continue
            sign, logdet = np.linalg.slogdet(lk[np.ix_(sel + [i], sel + [i])])
            if sign > 0 and logdet > val:
                best, val = i, logdet
        sel.append(best)
    return sel


@pytest.mark.parametrize("seed", range(5))
def test_fast_greedy_map_equals_the_determinant_greedy(seed):
    lk = _psd(8, 6, seed)
    assert greedy_map(lk, 5) == _naive_greedy(lk, 5)


def test_greedy_map_is_exact_when_the_kernel_is_diagonal_and_bounded_by_brute_force():
    rng = np.random.default_rng(3)
    d = rng.uniform(0.5, 3.0, size=7)
    sel = greedy_map(np.diag(d), 3)
    best = max(itertools.combinations(range(7), 3), key=lambda c: np.prod(d[list(c)]))
    assert sorted(sel) == sorted(best)
    lk = _psd(7, 7, 4)
    sel = greedy_map(lk, 3)
    exact = max(np.linalg.slogdet(lk[np.ix_(c, c)])[1]
                for c in map(list, itertools.combinations(range(7), 3)))
    got = np.linalg.slogdet(lk[np.ix_(sel, sel)])[1]
    assert got <= exact + 1e-12 and got >= exact - 1.0  # greedy: never above the MAP


def test_greedy_map_stops_when_the_rank_is_exhausted():
    lk = _psd(6, 2, 0) - 1e-3 * np.eye(6)  # rank 2
    assert len(greedy_map(lk, 4)) == 2


def _toy(seed=0, users=3, items=30):
    rng = np.random.default_rng(seed)
    g = rng.random((items, 4)) < 0.4
    inter = g.astype(float) @ g.T.astype(float)
    sz = g.sum(1)
    union = sz[:, None] + sz[None, :] - inter
    s = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    np.fill_diagonal(s, 1.0)
    scores = rng.normal(size=(users, items))
    seen = rng.random((users, items)) < 0.1
    return scores, seen, s


def test_mmr_matches_a_direct_greedy_loop():
    scores, seen, s = _toy()
    got = mmr_rerank(scores, seen, s, 0.6, length=5, pool=20)
    for u in range(scores.shape[0]):
        cand = [i for i in np.argsort(-scores[u], kind="stable") if not seen[u, i]][:20]
        rel = scores[u, cand]
        rel = (rel - rel.min()) / (rel.max() - rel.min())
        chosen = [0]
        while len(chosen) < 5:
            vals = {c: 0.6 * rel[c] - 0.4 * max(s[cand[c], cand[j]] for j in chosen)
                    for c in range(20) if c not in chosen}
            chosen.append(max(vals, key=vals.get))
        assert list(got[u]) == [cand[c] for c in chosen]
    # λ = 1 is the base ranking
    base = mmr_rerank(scores, seen, s, 1.0, length=5, pool=20)
    for u in range(scores.shape[0]):
        cand = [i for i in np.argsort(-scores[u], kind="stable") if not seen[u, i]][:5]
        assert list(base[u]) == cand


def test_dpp_rerank_lists_are_unseen_distinct_and_more_diverse_at_low_theta():
    scores, seen, s = _toy(1, users=5, items=60)
    hi = dpp_rerank(scores, seen, s, 0.99, length=8, pool=30)
    lo = dpp_rerank(scores, seen, s, 0.3, length=8, pool=30)
    for lists in (hi, lo):
        for u in range(lists.shape[0]):
            assert len(set(lists[u])) == 8 and not seen[u, lists[u]].any()

    def mean_sim(lists):
        return np.mean([s[np.ix_(r, r)][np.triu_indices(8, 1)].mean() for r in lists])
    assert mean_sim(lo) < mean_sim(hi)
    with pytest.raises(ValueError, match="theta"):
        dpp_rerank(scores, seen, s, 1.0)


def test_epsilon_mix_replaces_at_the_given_rate_with_unseen_items():
    scores, seen, s = _toy(2, users=200, items=60)
    from optzoo.recsys.metrics import topk_lists
    lists = topk_lists(scores, seen, 10)
    mixed = epsilon_mix(lists, seen, 0.3, np.random.default_rng(0))
    rate = (mixed != lists).mean()
    assert 0.25 < rate < 0.35
    for u in range(200):
        assert len(set(mixed[u])) == 10 and not seen[u, mixed[u]].any()
    assert (epsilon_mix(lists, seen, 0.0, np.random.default_rng(0)) == lists).all()
