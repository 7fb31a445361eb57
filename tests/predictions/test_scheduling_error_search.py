"""Error measure, instance predicate, and the adversarial search."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.predictions.scheduling import (
    SPJF,
    adversarial_search,
    eta,
    informative,
    job_errors,
    single_machine_ratio,
    unrestricted,
)


def test_errors_hand():
    np.testing.assert_allclose(job_errors([1.0, 4.0], [2.0, 1.0]), [2.0, 4.0])
    assert eta([1.0, 4.0], [2.0, 1.0]) == 4.0


def test_predicate_hand():
    # eta = 2, P = 100 / 1 > 4: informative
    assert informative([1.0, 100.0], [2.0, 100.0])
    # eta = 2, P = 3 < 4: a constant guess would do as well
    assert not informative([1.0, 3.0], [2.0, 3.0])
    # perfect predictions are excluded from both
    assert not informative([1.0, 10.0], [1.0, 10.0])
    assert not unrestricted([1.0, 10.0], [1.0, 10.0])
    assert unrestricted([1.0, 3.0], [2.0, 3.0])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.01, 100.0), min_size=2, max_size=6),
       st.lists(st.floats(-1.0, 1.0), min_size=6, max_size=6), st.floats(1.0, 2.0))
def test_predicate_monotone(true, u, shrink):
    """Shrinking every error (u -> u/shrink) keeps an informative instance informative; and
    informative implies unrestricted."""
    t = np.array(true)
    p = t * np.exp(np.array(u[: t.size]))
    if informative(t, p):
        assert unrestricted(t, p)
        p2 = t * np.exp(np.array(u[: t.size]) / shrink)
        assert informative(t, p2) or eta(t, p2) == 1.0


@pytest.mark.parametrize("bad,match", [
    (([1.0, 2.0], [1.0]), "pred"),
    (([1.0, -2.0], [1.0, 1.0]), "true"),
    (([1.0, 2.0], [1.0, math.nan]), "pred"),
    (([], []), "true"),
])
def test_bad_input(bad, match):
    with pytest.raises(ValueError, match=match):
        informative(*bad)


def spjf_ratio(t, p):
    return single_machine_ratio(SPJF(), t, p)


def test_search_deterministic_and_feasible():
    a = adversarial_search(spjf_ratio, 5, 1.5, np.random.default_rng(3), steps=60, restarts=2)
    b = adversarial_search(spjf_ratio, 5, 1.5, np.random.default_rng(3), steps=60, restarts=2)
    assert a.ratio == b.ratio
    np.testing.assert_array_equal(a.true, b.true)
    assert informative(a.true, a.pred)
    assert a.eta <= 1.5 + 1e-9
    assert a.ratio == pytest.approx(spjf_ratio(a.true, a.pred))
    assert 1.0 <= a.ratio <= a.eta**2 + 1e-9


def test_search_finds_something_above_random():
    rng = np.random.default_rng(0)
    res = adversarial_search(spjf_ratio, 4, 2.0, rng, steps=300, restarts=3)
    assert res.ratio > 1.2  # SPJF can be driven well above 1 at eta = 2


def test_search_arguments():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="eta_max"):
        adversarial_search(spjf_ratio, 4, 1.0, rng)
    with pytest.raises(ValueError, match="n"):
        adversarial_search(spjf_ratio, 1, 2.0, rng)
    with pytest.raises(ValueError, match="predicate"):
        adversarial_search(spjf_ratio, 3, 1.01, rng, predicate=lambda t, p: False,
                           max_resample=5)
