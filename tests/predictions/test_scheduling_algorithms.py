"""Algorithms: hand cases and the paper's upper bounds as properties on random instances."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.predictions.scheduling import (
    LPPT,
    PPRR,
    SPJF,
    ListScheduling,
    PreferentialRoundRobin,
    RelatedDoubling,
    RoundRobin,
    Simple,
    chen_tan_bound,
    eta,
    makespan_ratio,
    preemptive_ratio,
    simulate_machines,
    single_machine_ratio,
    water_fill,
)

TOL = 1e-9


def instance(seed, n, eta_max):
    rng = np.random.default_rng(seed)
    true = np.exp(rng.uniform(0, np.log(100), n))
    pred = true * np.exp(rng.uniform(-np.log(eta_max), np.log(eta_max), n))
    return true, pred


seeds = st.integers(0, 2**31 - 1)
etas = st.floats(1.0, 4.0)


@settings(max_examples=30, deadline=None)
@given(seeds, st.integers(2, 8), etas)
def test_single_machine_bounds(seed, n, eta_max):
    true, pred = instance(seed, n, eta_max)
    e = eta(true, pred)
    spjf = single_machine_ratio(SPJF(), true, pred)
    rr = single_machine_ratio(RoundRobin(), true, pred)
    prr = single_machine_ratio(PreferentialRoundRobin(0.5), true, pred)
    assert 1 - TOL <= spjf <= e * e + TOL  # Thm 4.2
    assert 1 - TOL <= rr <= 2 + TOL
    assert 1 - TOL <= prr <= 2 / (1 - 0.5) + TOL  # Purohit et al. robustness


@settings(max_examples=20, deadline=None)
@given(seeds, st.integers(2, 8))
def test_spjf_optimal_with_exact_predictions(seed, n):
    true, _ = instance(seed, n, 1.0)
    assert single_machine_ratio(SPJF(), true, true) == pytest.approx(1.0)


@settings(max_examples=20, deadline=None)
@given(seeds, st.integers(2, 8), etas, st.integers(2, 3))
def test_simple_adjust_bound(seed, n, eta_max, m):
    true, pred = instance(seed, n, eta_max)
    e = eta(true, pred)
    speeds = np.ones(m)
    adj = simulate_machines(Simple(adjust=True), pred, true, speeds)
    plain = simulate_machines(Simple(adjust=False), pred, true, speeds)
    from optzoo.predictions.scheduling import exact_makespan
    opt = exact_makespan(true, m=m)[0]
    assert adj.makespan / opt <= min(e * e, 2 - 1 / m) + TOL  # Thm 5.4 with eps = 0
    assert plain.makespan / opt <= e * e + TOL
    # list adjusting never delays a job relative to SIMPLE
    assert np.all(adj.completion <= plain.completion + TOL)
    assert adj.restarts == 0 and plain.restarts == 0


@settings(max_examples=20, deadline=None)
@given(seeds, st.integers(2, 8), etas, st.integers(2, 3))
def test_list_schedules_within_graham(seed, n, eta_max, m):
    true, pred = instance(seed, n, eta_max)
    for alg in (ListScheduling(), LPPT()):
        r = makespan_ratio(alg, true, pred, np.ones(m))
        assert 1 - TOL <= r <= 2 - 1 / m + TOL
    r = makespan_ratio(LPPT(), true, pred, np.ones(m))
    assert r <= chen_tan_bound(eta(true, pred), m) + TOL


@settings(max_examples=15, deadline=None)
@given(seeds, st.integers(1, 8), st.integers(2, 3))
def test_pprr_consistent(seed, n, m):
    true, _ = instance(seed, n, 1.0)
    assert preemptive_ratio(PPRR(), true, true, m) == pytest.approx(1.0)


def test_water_fill():
    r = water_fill(np.array([10.0, 1.0, 1.0]), 2.0)
    np.testing.assert_allclose(r, [1.0, 0.5, 0.5])
    np.testing.assert_allclose(water_fill(np.array([1.0, 3.0]), 2.0), [1.0, 1.0])


@settings(max_examples=10, deadline=None)
@given(seeds, st.integers(2, 7), st.floats(1.0, 4.0))
def test_related_algorithms_finish_and_known_eta_helps(seed, n, eta_max):
    true, pred = instance(seed, n, eta_max)
    speeds = np.array([4.0, 2.0, 1.0])
    e = max(eta(true, pred), 1.0)
    for alg in (RelatedDoubling(e), RelatedDoubling(None), ListScheduling(),
                ListScheduling("1/m")):
        assert makespan_ratio(alg, true, pred, speeds) >= 1 - TOL
    # Known eta, exact predictions: one round of LPT on the true sizes (< 2 OPT).
    assert makespan_ratio(RelatedDoubling(1.0), true, true, speeds) < 2.0


def test_simple_hand_robustness_gap():
    # SIMPLE trusts predictions: {a} vs {b, c}; truth makes the second list long.
    pred, true = [4.0, 2.0, 2.0], [1.0, 8.0, 8.0]
    plain = makespan_ratio(Simple(adjust=False), true, pred, np.ones(2))
    adj = makespan_ratio(Simple(adjust=True), true, pred, np.ones(2))
    assert plain == pytest.approx(16 / 9)
    assert adj == pytest.approx(1.0)  # idle machine steals the waiting 8 at t=1: 9 = OPT


def test_bad_parameters():
    with pytest.raises(ValueError, match="lam"):
        PreferentialRoundRobin(1.5)
    with pytest.raises(ValueError, match="eta"):
        RelatedDoubling(0.5)
    with pytest.raises(ValueError, match="min_speed_ratio"):
        ListScheduling("fast")
