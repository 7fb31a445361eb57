"""Continuous ski rental: closed forms, exact robustness, ideal solution, baselines and the
MAX / AVG / CVaR / δ-TOL choices."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.predictions.decision_metrics import IndicatorWeight, window_weight
from optzoo.predictions.ski_rental import SkiRental

SETTINGS = settings(max_examples=60, deadline=None)
SR = SkiRental(b=10.0, r=5.0)


def brute_worst_ratio(sr: SkiRental, t: float) -> float:
    """sup_x pr(A_T, x) on a dense grid plus the adversary's point x = T^+."""
    xs = np.concatenate([np.geomspace(1e-3, 1e4, 20001), [np.nextafter(t, np.inf)]])
    return float(sr.ratio(t, xs).max())


def test_hand_worked_ratios():
    assert float(SR.ratio(10.0, 20.0)) == 2.0          # break-even, long season
    assert float(SR.ratio(5.0, 3.0)) == 1.0            # season ends before buying
    assert float(SR.ratio(5.0, 6.0)) == pytest.approx(15.0 / 6.0)
    assert float(SR.ratio(40.0, 30.0)) == pytest.approx(3.0)
    assert float(SR.alg_value(5.0, 5.0)) == 5.0        # x <= T: rented throughout
    assert SR.robust_interval == (2.5, 40.0)


def test_ideal_closed_form_both_regimes():
    np.testing.assert_allclose(SR.ideal_ratio([5.0, 10.0, 11.0, 12.5, 30.0, 100.0]),
                               [1.0, 1.0, 1.1, 1.25, 1.25, 1.25])
    # r < (3+sqrt5)/2: b(r-1) = 15 < br/(r-1) = 16.67, so x/b stops at 15
    sr = SkiRental(b=10.0, r=2.5)
    np.testing.assert_allclose(sr.ideal_ratio([14.0, 15.0, 16.0]), [1.4, 1.5, 2.5 / 1.5])


@pytest.mark.parametrize("r", [2.0, 2.5, 5.0, 9.0])
def test_ideal_is_the_lower_envelope_of_the_robust_family(r):
    sr = SkiRental(b=10.0, r=r)
    lo, hi = sr.robust_interval
    ts = np.linspace(lo, hi, 4001)
    xs = np.concatenate([np.geomspace(0.1, 200, 300), [10.0, 10 * r / (r - 1), 10 * (r - 1)]])
    # the envelope attains its min at T >= x (T = x exactly) when x is inside the interval
    ts = np.concatenate([ts, np.clip(xs, lo, hi)])
    env = sr.ratio(ts[:, None], xs[None, :]).min(axis=0)
    np.testing.assert_allclose(sr.ideal_ratio(xs), env, rtol=1e-12)


@SETTINGS
@given(t=st.floats(0.05, 500.0))
def test_exact_robustness_matches_brute_force_and_the_interval(t):
    rob = float(SR.robustness(t))
    assert rob == pytest.approx(1 + max(t / 10, 10 / t))
    assert rob == pytest.approx(brute_worst_ratio(SR, t), rel=1e-6)
    assert bool(SR.is_robust(t)) == (2.5 * (1 - 1e-9) <= t <= 40.0 * (1 + 1e-9))


@SETTINGS
@given(t=st.floats(2.5, 40.0), x=st.floats(1e-3, 1e4), r=st.sampled_from([2.0, 3.0, 5.0]))
def test_robust_algorithms_dominate_the_ideal_and_ratios_exceed_one(t, x, r):
    sr = SkiRental(b=10.0, r=r)
    lo, hi = sr.robust_interval
    t = lo + (t - 2.5) / 37.5 * (hi - lo)
    assert float(sr.ratio(t, x)) >= 1.0
    assert float(sr.ratio(t, x)) >= float(sr.ideal_ratio(x)) - 1e-12
    assert float(sr.gap(t, x)) >= -1e-12


@SETTINGS
@given(lam=st.floats(0.05, 1.0))
def test_purohit_consistency_and_robustness(lam):
    ys = np.concatenate([np.geomspace(0.01, 1000, 4001), [10.0, np.nextafter(10.0, 0)]])
    cons = float(SR.ratio(SR.purohit(ys, lam), ys).max())
    assert cons == pytest.approx(1 + lam, rel=1e-12)
    ts = np.unique(SR.purohit(ys, lam))
    assert float(SR.robustness(ts).max()) == pytest.approx(1 + 1 / lam)
    assert max(brute_worst_ratio(SR, float(t)) for t in ts) == pytest.approx(1 + 1 / lam,
                                                                             rel=1e-6)


@pytest.mark.parametrize("rho", [10.0, 25.0, 40.0])
def test_bp_family_is_pareto_optimal(rho):
    ys = np.geomspace(0.01, 1000, 5001)
    ts = SR.bp(ys, rho)
    assert float(SR.ratio(ts, ys).max()) == pytest.approx(SR.pareto_consistency())
    assert bool(SR.is_robust(ts).all())
    np.testing.assert_array_equal(SR.bp(ys, 40.0), SR.follow_clipped(ys))
    np.testing.assert_array_equal(SR.bp(ys, 40.0), SR.purohit(ys, 1 / 4))


def test_pareto_follow_attains_the_ideal_at_y_and_is_brittle():
    ys = np.geomspace(2.5, 12.5, 30)
    ts = SR.pareto_follow(ys)
    np.testing.assert_allclose(SR.ratio(ts, ys), SR.ideal_ratio(ys), rtol=1e-12)
    for y in (3.0, 8.0, 12.0):
        jump = float(SR.brittleness(SR.pareto_follow(y), y)[0])
        assert jump == pytest.approx(10.0 / min(y, 10.0), rel=1e-6)
        assert float(SR.d_max(SR.pareto_follow(y), y, IndicatorWeight(y))[0]) == pytest.approx(0)


@SETTINGS
@given(y=st.floats(1.0, 80.0), window=st.sampled_from([(0.5, 2.0), (0.0, 2.0)]))
def test_selected_choices_are_robust_and_minimise_their_measure(y, window):
    w = window_weight(y, *window, domain=SR.domain)
    lo, hi = SR.robust_interval
    mx = SR.max_optimal(y, w, n_grid=65, n_x=257)
    av = SR.avg_optimal(y, w, n_grid=65, n_x=257)
    dt = SR.delta_tolerant(y, 0.2, n_grid=65, n_x=257)
    for o in (mx, av, dt):
        assert lo <= o.x <= hi and bool(SR.is_robust(o.x))
    # no baseline beats the optimum on its own measure
    for t in (SR.break_even(), float(SR.bp(y, 10.0)), float(SR.pareto_follow(y)), lo, hi):
        assert mx.value <= float(SR.d_max(t, y, w, 257)[0]) + 1e-9
        assert av.value <= float(SR.d_avg(t, y, w, 257)[0]) + 1e-9


@pytest.mark.parametrize("alpha", [0.0, 0.1, 0.5, 0.9])
def test_cvar_optimum_is_exact_for_discrete_atoms(alpha):
    rng = np.random.default_rng(3)
    y = 8.0
    atoms = y * np.exp(0.4 * rng.standard_normal(60))
    best = SR.cvar_optimal(y, atoms, alpha, n_grid=17)
    lo, hi = SR.robust_interval
    fine = np.linspace(lo, hi, 20001)
    brute = float(SR.alpha_consistency(np.concatenate([fine, atoms[(atoms >= lo) & (atoms <= hi)]]),
                                       atoms, alpha).min())
    assert best.value <= brute + 1e-12
    assert best.value == pytest.approx(brute, rel=1e-9)
    assert bool(SR.is_robust(best.x))


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="r"):
        SkiRental(b=10.0, r=1.5)
    with pytest.raises(ValueError, match="b"):
        SkiRental(b=0.0, r=5.0)
    with pytest.raises(ValueError, match="T"):
        SR.ratio(0.0, 5.0)
    with pytest.raises(ValueError, match="T"):
        SR.ratio(math.inf, 5.0)
    with pytest.raises(ValueError, match="x"):
        SR.ratio(5.0, math.nan)
    with pytest.raises(ValueError, match="x"):
        SR.ratio(5.0, -1.0)
    with pytest.raises(ValueError, match="lam"):
        SR.purohit(5.0, 1.5)
    with pytest.raises(ValueError, match="rho"):
        SR.bp(5.0, 5.0)
    with pytest.raises(ValueError, match="alpha"):
        SR.cvar_optimal(5.0, [4.0, 6.0], 1.0)
    with pytest.raises(ValueError, match="delta"):
        SR.delta_tolerant(5.0, 0.0)
