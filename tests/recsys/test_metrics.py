"""Top-k metrics against values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optzoo.recsys.metrics import (
    catalogue_coverage,
    evaluate,
    exposure_gini,
    genre_coverage,
    gini,
    ild,
    ndcg_at_k,
    recall_at_k,
    relevance_share,
    topk_lists,
)


def test_ndcg_and_recall_by_hand():
    lists = np.array([[3, 1, 4, 0], [2, 0, 1, 3]])
    tests = [{1, 0}, {9}]
    # user 0: hits at positions 2 and 4 of k = 4 -> DCG = 1/log2(3) + 1/log2(5);
    # IDCG over min(4, 2) = 2 hits = 1 + 1/log2(3)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    np.testing.assert_allclose(ndcg_at_k(lists, tests, 4), [dcg / (1 + 1 / math.log2(3)), 0.0])
    np.testing.assert_allclose(recall_at_k(lists, tests, 4), [1.0, 0.0])
    np.testing.assert_allclose(recall_at_k(lists, tests, 2), [0.5, 0.0])
    assert math.isnan(ndcg_at_k(lists, [{1}, set()], 2)[1])


def test_ild_is_the_mean_pairwise_dissimilarity():
    s = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.25], [0.0, 0.25, 1.0]])
    # pairs (0,1), (0,2), (1,2): 1 - S = 0.5, 1.0, 0.75 -> mean 0.75
    np.testing.assert_allclose(ild(np.array([[0, 1, 2]]), s, 0, 3), [0.75])
    np.testing.assert_allclose(ild(np.array([[2, 0, 1]]), s, 1, 3), [0.5])


def test_coverage_gini_and_share_by_hand():
    genres = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=bool)
    lists = np.array([[0, 1], [0, 3]])
    np.testing.assert_allclose(genre_coverage(lists, genres, 2), [2 / 3, 1 / 3])
    assert catalogue_coverage(lists, 4, 2) == 3 / 4
    # counts of items 0..3 = (2, 1, 0, 1): sorted (0, 1, 1, 2), n = 4, sum 4:
    # Σ(2i − n − 1) x = (-3)0 + (-1)1 + (1)1 + (3)2 = 6 -> 6 / 16
    assert exposure_gini(lists, 4, 2) == pytest.approx(6 / 16)
    assert gini(np.array([5, 5, 5])) == 0.0
    assert gini(np.array([0, 0, 7])) == pytest.approx(2 / 3)
    scores = np.array([[0.9, 0.4, 0.0, 0.0], [0.6, 0.0, 0.0, 0.5]])
    np.testing.assert_allclose(relevance_share(lists, scores, 0.5, 2), [0.5, 1.0])


def test_topk_lists_skip_seen_items_and_evaluate_keys():
    scores = np.array([[0.1, 0.9, 0.5, 0.3], [0.2, 0.1, 0.4, 0.3]])
    seen = np.array([[False, True, False, False], [False, False, True, False]])
    np.testing.assert_array_equal(topk_lists(scores, seen, 2), [[2, 3], [3, 0]])
    s = np.eye(4)
    out = evaluate(np.array([[2, 3, 0, 1], [3, 0, 1, 2]]), [{2}, {0}], s,
                   np.eye(4, dtype=bool), scores, k=2)
    assert out["ndcg"] == pytest.approx((1 + 1 / math.log2(3)) / 2)
    assert out["ild"] == 1.0 and out["ild_next"] == 1.0 and out["genre_cov"] == 0.5


def test_bad_lists_are_named():
    with pytest.raises(ValueError, match="lists"):
        ndcg_at_k(np.array([[1, 2]]), [{1}], 10)
    with pytest.raises(ValueError, match="counts"):
        gini(np.array([-1.0, 2.0]))
