"""One-max search: worst-case ratios, exact robustness, ideal, Pareto thresholds, δ-TOL and the
MAX / AVG / CVaR thresholds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.predictions.decision_metrics import alpha_consistency, window_weight
from optzoo.predictions.one_max import OneMaxSearch

SETTINGS = settings(max_examples=60, deadline=None)
OM = OneMaxSearch(M=1000.0, r=100.0)


def adversary_ratio(t: float, p_star: float) -> float:
    """Play the adversary's price path explicitly: price T (if p* >= T) then p*, then 1."""
    path = [t, p_star, 1.0] if p_star >= t else [p_star, 1.0]
    sale = next((p for p in path if p >= t), path[-1])
    return p_star / sale


def test_hand_worked_ratios_and_profits():
    assert float(OM.ratio(50.0, 200.0)) == 4.0
    assert float(OM.ratio(50.0, 40.0)) == 40.0       # never reaches T: forced sale at 1
    assert float(OM.ratio(50.0, 50.0)) == 1.0
    assert float(OM.alg_value(50.0, 200.0)) == 50.0
    assert float(OM.alg_value(50.0, 40.0)) == 1.0
    assert OM.robust_interval == (10.0, 100.0)
    for t, p in [(20.0, 5.0), (20.0, 20.0), (20.0, 900.0), (31.6, 31.0)]:
        assert float(OM.ratio(t, p)) == pytest.approx(adversary_ratio(t, p))


@SETTINGS
@given(t=st.floats(1.0, 1000.0))
def test_exact_robustness_matches_brute_force_and_the_interval(t):
    ps = np.concatenate([np.geomspace(1, 1000, 20001), [np.nextafter(t, 0)]])
    ps = ps[(ps >= 1) & (ps <= 1000)]
    assert float(OM.robustness(t)) == pytest.approx(float(OM.ratio(t, ps).max()), rel=1e-6)
    assert bool(OM.is_robust(t)) == (10 * (1 - 1e-9) <= t <= 100 * (1 + 1e-9))


def test_prediction_free_threshold_is_sqrt_m_competitive():
    assert float(OM.robustness(OM.prediction_free())) == pytest.approx(math.sqrt(1000))


def test_ideal_is_the_lower_envelope_of_the_robust_thresholds():
    ts = np.linspace(10, 100, 9001)
    ps = np.geomspace(1, 1000, 400)
    ts = np.concatenate([ts, np.clip(ps, 10, 100)])
    env = OM.ratio(ts[:, None], ps[None, :]).min(axis=0)
    np.testing.assert_allclose(OM.ideal_ratio(ps), env, rtol=1e-12)


@SETTINGS
@given(t=st.floats(10.0, 100.0), p=st.floats(1.0, 1000.0))
def test_robust_thresholds_dominate_the_ideal(t, p):
    assert float(OM.ratio(t, p)) >= 1.0
    assert float(OM.ratio(t, p)) >= float(OM.ideal_ratio(p)) - 1e-12


def test_pareto_thresholds_have_optimal_consistency_and_robustness():
    ys = np.geomspace(1, 1000, 5001)
    for rule in (OM.po1, OM.po2):
        ts = rule(ys)
        assert bool(OM.is_robust(ts).all())
        assert float(OM.ratio(ts, ys).max()) == pytest.approx(OM.pareto_consistency())
    # PO1 is brittle: a max price just below the threshold loses almost everything
    assert float(OM.brittleness(OM.po1(50.0), 50.0)[0]) == pytest.approx(49.0, rel=1e-3)
    # PO2 is not: only the continuous slope of p*/T over the tiny window (1e-3 * y) shows
    assert float(OM.brittleness(OM.po2(50.0), 50.0)[0]) == pytest.approx(0.005, abs=1e-6)


@pytest.mark.parametrize("y", [5.0, 30.0, 80.0, 300.0])
def test_delta_tol_is_the_clipped_lower_edge_of_the_tolerance_window(y):
    got = OM.delta_tolerant(y, 0.2, n_grid=65, n_x=257)
    want = min(max(0.8 * y, 10.0), 100.0)
    # where the window lies below M/r every robust threshold ties; otherwise the edge is unique
    if 1.2 * y > 10:
        assert got.x == pytest.approx(want, rel=1e-6)
    assert bool(OM.is_robust(got.x))


@SETTINGS
@given(y=st.floats(1.0, 1000.0), window=st.sampled_from([(0.5, 2.0), (0.0, 2.0)]))
def test_max_and_avg_thresholds_are_robust_and_minimise_their_measure(y, window):
    w = window_weight(y, *window, domain=OM.domain)
    mx = OM.max_optimal(y, w, n_grid=65, n_x=257)
    av = OM.avg_optimal(y, w, n_grid=65, n_x=257)
    for o in (mx, av):
        assert 10 <= o.x <= 100 and bool(OM.is_robust(o.x))
    for t in (OM.prediction_free(), float(OM.po1(y)), float(OM.po2(y)), 10.0, 100.0):
        assert mx.value <= float(OM.d_max(t, y, w, 257)[0]) + 1e-9
        assert av.value <= float(OM.d_avg(t, y, w, 257)[0]) + 1e-9


@pytest.mark.parametrize("alpha", [0.0, 0.1, 0.9])
def test_cvar_uses_lost_profit_and_is_exact(alpha):
    rng = np.random.default_rng(5)
    y = 40.0
    atoms = np.clip(y * np.exp(0.5 * rng.standard_normal(50)), 1, 1000)
    best = OM.cvar_optimal(y, atoms, alpha, n_grid=9)
    fine = np.concatenate([np.linspace(10, 100, 9001), atoms[(atoms >= 10) & (atoms <= 100)]])
    brute = OM.alpha_consistency(fine, atoms, alpha)
    assert best.value == pytest.approx(float(brute.min()), rel=1e-9)
    manual = alpha_consistency(OM.alg_value(best.x, atoms), atoms, alpha, kind="profit")
    assert best.value == pytest.approx(float(manual))
    # α = 0: the lost profit's mean, i.e. the threshold with the largest expected profit
    if alpha == 0.0:
        profits = OM.alg_value(fine[:, None], atoms[None, :]).mean(axis=1)
        assert float(OM.alg_value(best.x, atoms).mean()) == pytest.approx(profits.max())


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="r"):
        OneMaxSearch(M=1000.0, r=10.0)
    with pytest.raises(ValueError, match="M"):
        OneMaxSearch(M=1.0, r=1.0)
    with pytest.raises(ValueError, match="p"):
        OM.ratio(20.0, 0.5)
    with pytest.raises(ValueError, match="p"):
        OM.ratio(20.0, 2000.0)
    with pytest.raises(ValueError, match="T"):
        OM.ratio(-3.0, 20.0)
    with pytest.raises(ValueError, match="y"):
        OM.max_optimal(5000.0, window_weight(10.0, 0.5, 2.0))
