"""Contract scheduling with doubling schedules: closed-form ratio against an explicit schedule,
acceleration ratio 4, the ideal, and the MAX / AVG / CVaR phases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.predictions.contract_scheduling import (
    ContractScheduling,
    acceleration_ratio,
    doubling_lengths,
)
from optzoo.predictions.decision_metrics import window_weight

SETTINGS = settings(max_examples=60, deadline=None)
CS = ContractScheduling()


def simulated_ratio(lam: float, t: float) -> float:
    """Run the schedule lam*2^i from i = -40 (a stand-in for the bi-infinite one) and return
    T / (longest contract completed by T)."""
    i = np.arange(-40, 40)
    lengths = np.ldexp(lam, i)
    # contract i ends at sum_{j<=i} lam 2^j = lam 2^(i+1) (exact for the bi-infinite schedule)
    done = np.ldexp(lam, i + 1)
    return t / lengths[done <= t].max()


@SETTINGS
@given(lam=st.floats(1.0, 2.0), t=st.floats(1e-3, 1e3))
def test_closed_form_ratio_matches_the_explicit_schedule(lam, t):
    assert float(CS.ratio(lam, t)) == pytest.approx(simulated_ratio(lam, t), rel=1e-9)
    assert 2.0 <= float(CS.ratio(lam, t)) < 4.0
    assert float(CS.ratio(lam, t)) >= float(CS.ideal_ratio(t))


def test_hand_worked_values_and_the_worst_case():
    assert float(CS.ratio(1.0, 8.0)) == 2.0                  # contract of 4 ends at 8
    assert float(CS.ratio(1.0, 6.0)) == pytest.approx(3.0)   # longest done: 2 (ends at 4)
    assert float(CS.alg_value(1.0, 6.0)) == pytest.approx(2.0)
    assert float(CS.ratio(1.0, np.nextafter(8.0, 0))) == pytest.approx(4.0)
    # a finite doubling schedule approaches 4 = a^2/(a-1) at a = 2
    assert acceleration_ratio(doubling_lengths(1.3, 40)) == pytest.approx(4.0, abs=1e-9)
    assert acceleration_ratio(doubling_lengths(1.0, 3)) == pytest.approx(3.5)  # 7 / 2
    # tripling is worse: 9/2
    assert acceleration_ratio(3.0 ** np.arange(30)) == pytest.approx(4.5, abs=1e-9)
    assert float(CS.robustness(1.7)) == 4.0 and bool(CS.is_robust(1.7))


def test_ideal_is_the_lower_envelope_over_phases():
    ts = np.geomspace(0.1, 100, 200)
    lams = np.concatenate([np.linspace(1, 2, 2001), CS.follow(ts)])
    env = CS.ratio(lams[:, None], ts[None, :]).min(axis=0)
    np.testing.assert_allclose(env, CS.ideal_ratio(ts), rtol=1e-12)


def test_follow_is_consistent_and_brittle_prediction_free_is_not_adaptive():
    for tau in (1.0, 1.37, 5.0, 77.0):
        lam = float(CS.follow(tau))
        assert float(CS.ratio(lam, tau)) == pytest.approx(2.0)
        assert float(CS.brittleness(lam, tau)[0]) == pytest.approx(2.0, rel=1e-3)
    assert float(CS.ratio(CS.prediction_free(), 3.0)) == pytest.approx(3.0)


@pytest.mark.parametrize("tau", [1.0, 1.5, 3.7])
def test_max_avg_phases_minimise_their_measure_on_a_fine_grid(tau):
    w = window_weight(tau, 0.5, 2.0)
    mx = CS.max_optimal(tau, w, n_grid=129, n_x=513)
    av = CS.avg_optimal(tau, w, n_grid=129, n_x=513)
    lams = np.linspace(1, 2, 401)
    assert mx.value <= float(CS.d_max(lams, tau, w, 513).min()) + 1e-9
    assert av.value <= float(CS.d_avg(lams, tau, w, 513).min()) + 1e-9
    # the MAX phase balances the weights at the two completions inside [τ/2, 2τ]: every
    # completion just missed costs a gap -> 2, so d_max = 2 * max weight at a completion
    done = CS.completion_times(mx.x, w.lo, w.hi)
    assert mx.value == pytest.approx(2 * float(w(done).max()), rel=1e-4)
    # a brittle phase (completion right at τ) has the worst d_max: 2
    assert float(CS.d_max(CS.follow(tau), tau, w, 513)[0]) == pytest.approx(2.0, rel=1e-6)


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.9])
def test_cvar_phase_is_exact_for_discrete_atoms(alpha):
    rng = np.random.default_rng(11)
    tau = 2.3
    atoms = tau * np.exp(0.3 * rng.standard_normal(40))
    best = CS.cvar_optimal(tau, atoms, alpha, n_grid=9)
    fine = np.concatenate([np.linspace(1, 2, 20001), CS.candidates(atoms, tau)])
    assert best.value == pytest.approx(float(CS.alpha_consistency(fine, atoms, alpha).min()),
                                       rel=1e-9)


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="r"):
        ContractScheduling(r=3.0)
    with pytest.raises(ValueError, match="lengths"):
        acceleration_ratio([1.0])
    with pytest.raises(ValueError, match="lengths"):
        acceleration_ratio([1.0, math.nan])
    with pytest.raises(ValueError, match="x"):
        CS.ratio(1.0, -1.0)
    with pytest.raises(ValueError, match="T"):
        CS.ratio(0.0, 1.0)
    with pytest.raises(ValueError, match="lam"):
        doubling_lengths(0.0, 3)
