"""Front metrics against hand-computed areas and distances, non-domination against pymoo's
sorting, and the preference sets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

from optzoo.scheduling.metrics import (
    FrontResult,
    hv_gap,
    hypervolume,
    igd,
    igd_plus,
    non_dominated,
    non_dominated_mask,
    normalisation_bounds,
    unique_count,
)
from optzoo.scheduling.preferences import dirichlet_preferences, uniform_preferences

# A 2-D front in raw units; ideal (10, 100), nadir (20, 200) map it to (0,1), (.5,.5), (1,0).
FRONT = np.array([[10.0, 200.0], [15.0, 150.0], [20.0, 100.0]])
IDEAL, NADIR = np.array([10.0, 100.0]), np.array([20.0, 200.0])


def test_hypervolume_of_a_hand_made_front():
    # staircase to the reference point (1.1, 1.1) in normalised space:
    #   x in [0, .5):  height 1.1 − 1   = 0.1  -> 0.05
    #   x in [.5, 1):  height 1.1 − 0.5 = 0.6  -> 0.30
    #   x in [1, 1.1): height 1.1 − 0   = 1.1  -> 0.11      total 0.46
    assert hypervolume(FRONT, IDEAL, NADIR) == pytest.approx(0.46, abs=1e-12)
    # the middle point alone: 0.6 x 0.6 = 0.36; gap (0.46 − 0.36) / 0.46
    assert hypervolume(FRONT[1:2], IDEAL, NADIR) == pytest.approx(0.36, abs=1e-12)
    assert hv_gap(FRONT[1:2], FRONT, IDEAL, NADIR) == pytest.approx(0.10 / 0.46, abs=1e-12)
    assert hv_gap(FRONT, FRONT, IDEAL, NADIR) == 0.0
    # a dominated extra point and a point beyond the reference add nothing
    more = np.vstack([FRONT, [[18.0, 190.0], [40.0, 90.0]]])
    assert hypervolume(more, IDEAL, NADIR) == pytest.approx(0.46, abs=1e-12)
    assert hypervolume(np.zeros((0, 2)), IDEAL, NADIR) == 0.0
    assert hypervolume(FRONT, IDEAL, NADIR, ref=1.0) == pytest.approx(0.25, abs=1e-12)


def test_igd_and_igd_plus_by_hand():
    a = FRONT[1:2]  # (.5, .5)
    # IGD+: reference (0,1) -> d+ = |max(a − z, 0)| = |(.5, 0)| = .5; (.5,.5) -> 0; (1,0) -> .5
    assert igd_plus(a, FRONT, IDEAL, NADIR) == pytest.approx(1 / 3, abs=1e-12)
    # IGD: Euclidean distances √.5, 0, √.5
    assert igd(a, FRONT, IDEAL, NADIR) == pytest.approx(2 * np.sqrt(0.5) / 3, abs=1e-12)
    assert igd_plus(FRONT, FRONT, IDEAL, NADIR) == 0.0
    with pytest.raises(ValueError, match="non-empty"):
        igd(np.zeros((0, 2)), FRONT, IDEAL, NADIR)


def test_bounds_non_domination_and_counts():
    ideal, nadir = normalisation_bounds(FRONT[:2], FRONT[2:], np.zeros((0, 2)))
    np.testing.assert_array_equal(ideal, IDEAL)
    np.testing.assert_array_equal(nadir, NADIR)
    pts = np.array([[1, 5], [2, 2], [2, 2], [3, 3], [5, 1], [1, 6]], float)
    np.testing.assert_array_equal(non_dominated_mask(pts), [1, 1, 1, 0, 1, 0])
    np.testing.assert_array_equal(non_dominated(pts), [[1, 5], [2, 2], [5, 1]])
    assert unique_count(pts) == 3
    with pytest.raises(ValueError, match="fronts"):
        normalisation_bounds(np.zeros((0, 2)))
    with pytest.raises(ValueError, match="finite"):
        non_dominated([[np.nan, 1.0]])
    with pytest.raises(ValueError, match="reference_front"):
        hv_gap(FRONT, [[30.0, 300.0]], IDEAL, NADIR)
    res = FrontResult.from_candidates(pts, list("abcdef"), method="x")
    np.testing.assert_array_equal(res.points, [[1, 5], [2, 2], [5, 1]])
    assert res.schedules == ["a", "b", "e"]


@settings(max_examples=50)
@given(st.lists(st.tuples(*[st.integers(0, 6)] * 3), min_size=1, max_size=30))
def test_non_dominated_matches_pymoo(rows):
    f = np.array(rows, float)
    ours = non_dominated_mask(f)
    first = NonDominatedSorting().do(f, only_non_dominated_front=True)
    np.testing.assert_array_equal(np.flatnonzero(ours), np.sort(first))


def test_preferences():
    two, three = uniform_preferences(2), uniform_preferences(3)
    assert two.shape == (101, 2) and three.shape == (105, 3)  # the paper's set sizes
    for p in (two, three):
        np.testing.assert_allclose(p.sum(axis=1), 1.0)
        assert (p >= 0).all() and len(np.unique(p, axis=0)) == len(p)
    np.testing.assert_array_equal(two[0], [1, 0])
    assert uniform_preferences(4, 2).shape == (10, 4)
    d = dirichlet_preferences(3, 2000, np.random.default_rng(0))
    np.testing.assert_allclose(d.sum(axis=1), 1.0)
    np.testing.assert_allclose(d.mean(axis=0), 1 / 3, atol=0.02)
    with pytest.raises(ValueError, match="n_partitions"):
        uniform_preferences(4)
    with pytest.raises(ValueError, match="n_obj"):
        uniform_preferences(1, 3)
