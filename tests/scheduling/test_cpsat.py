"""CP-SAT weighted sums: on tiny instances the optimum equals the brute-force optimum over every
active schedule (all operation sequences × machine assignments decoded with left-shift
insertion), no enumerated schedule beats it, every schedule is valid, and the front is
non-dominated and reproducible."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from optzoo.scheduling.cpsat import cpsat_front, cpsat_weighted_sum, weighted_coefficients
from optzoo.scheduling.instance import FJSPInstance, sd2_instance
from optzoo.scheduling.metrics import non_dominated
from optzoo.scheduling.preferences import uniform_preferences
from optzoo.scheduling.schedule import check_schedule, decode_active, evaluate

TINY = FJSPInstance(
    [[{0: 3, 1: 5}, {1: 2}], [{0: 4}, {0: 2, 1: 1}], [{1: 3, 0: 2}, {0: 3, 1: 4}]],
    costs=[[{0: 6, 1: 2}, {1: 3}], [{0: 1}, {0: 2, 1: 5}], [{1: 1, 0: 4}, {0: 5, 1: 2}]],
    due_dates=[6, 5, 7])


def all_active_values(inst: FJSPInstance, objectives) -> np.ndarray:
    """Objective vectors of every (OS, MS) decoded actively: all regular-objective optima
    of a weighted sum are among them."""
    jobs = np.repeat(np.arange(inst.n_jobs), inst.job_lengths)
    sequences = sorted(set(itertools.permutations(jobs.tolist())))
    machines = [np.flatnonzero(inst.eligible[o]).tolist() for o in range(inst.n_ops)]
    out = []
    for ms in itertools.product(*machines):
        for os_ in sequences:
            s = decode_active(inst, np.array(os_), np.array(ms))
            out.append(evaluate(inst, s, objectives))
    return np.array(out)


@pytest.mark.parametrize("objectives", [("makespan", "cost"), ("tardiness", "cost"),
                                        ("makespan", "flowtime", "cost")])
def test_weighted_sum_equals_the_brute_force_optimum(objectives):
    values = all_active_values(TINY, objectives)
    rng = np.random.default_rng(0)
    for _ in range(4):
        coefs = tuple(int(c) for c in rng.integers(0, 6, size=len(objectives)))
        if sum(coefs) == 0:
            continue
        sol = cpsat_weighted_sum(TINY, coefs, objectives, deterministic_time=5.0)
        assert sol.optimal
        assert check_schedule(TINY, sol.schedule) == []
        np.testing.assert_array_equal(sol.values, evaluate(TINY, sol.schedule, objectives))
        brute = values @ np.array(coefs)
        assert sol.weighted <= brute.min() + 1e-9  # nothing enumerated is better
        assert sol.weighted == brute.min()        # and the optimum is attained
        assert sol.bound == pytest.approx(sol.weighted)


def test_weighted_coefficients():
    assert weighted_coefficients([0.5, 0.5], [2.0, 1.0], resolution=100,
                                 tie_break=False) == (50, 100)
    assert weighted_coefficients([1.0, 0.0], [1.0, 1.0], resolution=10) == (11, 1)
    with pytest.raises(ValueError, match="weights"):
        weighted_coefficients([0.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="scales"):
        weighted_coefficients([1.0, 0.0], [0.0, 1.0])


def test_front_is_valid_non_dominated_and_reproducible():
    inst = sd2_instance(4, 3, 5)
    prefs = uniform_preferences(2, 6)
    a = cpsat_front(inst, prefs, deterministic_time=0.5)
    b = cpsat_front(inst, prefs, deterministic_time=0.5)
    np.testing.assert_array_equal(a.front.points, b.front.points)
    np.testing.assert_array_equal(a.front.points, non_dominated(a.front.points))
    assert a.front.evaluations == 7 and len(a.solutions) == 7
    assert a.n_optimal == 7  # 12 operations: every subproblem is solved to optimality
    for p, s in zip(a.front.points, a.front.schedules, strict=True):
        assert check_schedule(inst, s) == []
        np.testing.assert_array_equal(evaluate(inst, s), p)
    # the extreme preferences reach the single-objective optima of their objective
    lo = [s.values for s in a.solutions]
    assert min(v[1] for v in lo) == np.where(inst.eligible, inst.cost, np.inf).min(1).sum()


def test_errors():
    frac = FJSPInstance([[{0: 1.5}]], costs=[[{0: 1}]])
    with pytest.raises(ValueError, match="integer"):
        cpsat_weighted_sum(frac, (1, 1))
    with pytest.raises(ValueError, match="coefficients"):
        cpsat_weighted_sum(TINY, (1.5, 1))
    with pytest.raises(ValueError, match="coefficients"):
        cpsat_weighted_sum(TINY, (0, 0))
    with pytest.raises(ValueError, match="preferences"):
        cpsat_front(TINY, np.ones((2, 3)))
    with pytest.raises(ValueError, match="deterministic_time"):
        cpsat_weighted_sum(TINY, (1, 1), deterministic_time=0)
