"""Exact optima: hand values, enumeration vs HiGHS, LPT and McNaughton."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.predictions.scheduling import (
    exact_makespan,
    lpt_assignment,
    preemptive_makespan,
    spt_total_completion,
    thm51_opt,
)


def test_spt_hand():
    assert spt_total_completion([3.0, 1.0, 2.0]) == pytest.approx(1 + 3 + 6)


def test_makespan_hand():
    span, where = exact_makespan([3.0, 3.0, 2.0, 2.0, 2.0], m=2)
    assert span == pytest.approx(6.0)
    loads = np.bincount(where, weights=[3, 3, 2, 2, 2], minlength=2)
    assert loads.max() == pytest.approx(6.0)
    # LPT is suboptimal here (7), the classic example
    assert lpt_assignment([3.0, 3.0, 2.0, 2.0, 2.0], m=2)[0] == pytest.approx(7.0)


def test_related_hand():
    span, _ = exact_makespan([4.0, 1.0], speeds=[4.0, 1.0])
    assert span == pytest.approx(1.0)


@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(1, 30), min_size=2, max_size=7), st.integers(2, 3),
       st.booleans())
def test_enumeration_matches_highs(sizes, m, related):
    speeds = [1.0, 2.0, 0.5][:m] if related else [1.0] * m
    a, wa = exact_makespan(sizes, speeds=speeds, method="enumerate")
    b, wb = exact_makespan(sizes, speeds=speeds, method="milp")
    assert a == pytest.approx(b, rel=1e-9)
    for where in (wa, wb):
        loads = np.bincount(where, weights=sizes, minlength=m) / np.asarray(speeds)
        assert loads.max() == pytest.approx(a, rel=1e-9)


def test_mcnaughton():
    assert preemptive_makespan([5.0, 1.0, 1.0], 2) == pytest.approx(5.0)
    assert preemptive_makespan([2.0, 2.0, 2.0], 2) == pytest.approx(3.0)


@pytest.mark.parametrize("m,big", [(2, 1.5), (2, 2.0), (3, 2.5), (3, 3.0)])
def test_thm51_opt_closed_form(m, big):
    delta = 1e-3
    sizes = [1.0] * (m * (m - 1)) + [big, delta]
    assert thm51_opt(m, big, delta) == pytest.approx(exact_makespan(sizes, m=m)[0])


def test_bad_input():
    with pytest.raises(ValueError, match="method"):
        exact_makespan([1.0, 2.0], m=2, method="magic")
    with pytest.raises(ValueError, match="m:"):
        exact_makespan([1.0, 2.0])
    with pytest.raises(ValueError, match="sizes"):
        spt_total_completion([])
