"""Dispatching rules, NSGA-II and MOEA/D: every schedule they return is valid and carries its
objective vector; closed-form checks (the cheapest rule reaches Σ min cost; nothing beats
Brandimarte's proven lower bound on mk01); determinism per seed."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.scheduling.dispatching import RULES, dispatch, weighted_rule_front
from optzoo.scheduling.evolutionary import RandomKeyFJSP, moead, nsga2
from optzoo.scheduling.instance import brandimarte_bounds, read_fjs, sd2_instance
from optzoo.scheduling.metrics import non_dominated
from optzoo.scheduling.preferences import uniform_preferences
from optzoo.scheduling.schedule import OBJECTIVES, check_schedule, evaluate
from tests.conftest import shared_dir
from tests.scheduling.strategies import instances

MK01 = shared_dir() / "data" / "fjsp" / "mk01.fjs"


@settings(max_examples=30)
@given(instances(), st.sampled_from(RULES), st.sampled_from(["all", "earliest"]),
       st.lists(st.floats(0, 1), min_size=5, max_size=5).filter(lambda w: sum(w) > 0))
def test_every_rule_builds_a_valid_schedule(inst, rule, candidates, w):
    kwargs = {"weights": w} if rule == "weighted" else {}
    sched, f = dispatch(inst, rule, objectives=OBJECTIVES, candidates=candidates, **kwargs)
    assert check_schedule(inst, sched) == []
    np.testing.assert_array_equal(f, evaluate(inst, sched, OBJECTIVES))


def test_cost_rules_reach_the_minimum_cost():
    inst = sd2_instance(8, 4, 2)
    least = np.where(inst.eligible, inst.cost, np.inf).min(axis=1).sum()
    _, f = dispatch(inst, "cheapest")
    assert f[1] == least
    sched_w, f_w = dispatch(inst, "weighted", weights=[0, 1])
    assert f_w[1] == least
    _, f_spt = dispatch(inst, "spt")
    assert f_spt[1] > least  # fastest machines are the dearest on SD2


def test_rules_on_mk01_respect_the_proven_bound():
    inst = read_fjs(MK01)
    lb, _ = brandimarte_bounds()["mk01"]
    for rule in ("spt", "mor", "mwkr"):
        sched, f = dispatch(inst, rule, objectives=("makespan",))
        assert check_schedule(inst, sched) == [] and f[0] >= lb


def test_dispatch_errors():
    inst = sd2_instance(3, 2, 0, cost=False, due_dates=False)
    with pytest.raises(ValueError, match="rule"):
        dispatch(inst, "fifo", objectives=("makespan",))
    with pytest.raises(ValueError, match="weights"):
        dispatch(inst, "weighted", objectives=("makespan",))
    with pytest.raises(ValueError, match="weights"):
        dispatch(inst, "weighted", weights=[-1.0], objectives=("makespan",))
    with pytest.raises(ValueError, match="weights: only"):
        dispatch(inst, "spt", weights=[1.0], objectives=("makespan",))
    with pytest.raises(ValueError, match="edd"):
        dispatch(inst, "edd", objectives=("makespan",))
    with pytest.raises(ValueError, match="cheapest"):
        dispatch(inst, "cheapest", objectives=("makespan",))
    with pytest.raises(ValueError, match="preferences"):
        weighted_rule_front(sd2_instance(3, 2, 0), np.ones((2, 3)))


def test_weighted_rule_front():
    inst = sd2_instance(6, 3, 1)
    res = weighted_rule_front(inst, uniform_preferences(2, 10))
    assert res.evaluations == 11 and res.wall_time > 0
    np.testing.assert_array_equal(res.points, non_dominated(res.points))
    for s, f in zip(res.schedules, res.points, strict=True):
        assert check_schedule(inst, s) == []
        np.testing.assert_array_equal(evaluate(inst, s), f)
    assert len(res.points) >= 2  # makespan and cost conflict on SD2


@pytest.mark.parametrize("algo", [nsga2, moead])
def test_evolutionary_fronts_are_valid_and_reproducible(algo):
    inst = sd2_instance(5, 3, 4)
    res = algo(inst, ("makespan", "cost"), n_evals=240, pop_size=20, seed=1)
    assert res.evaluations >= 240 and res.method == algo.__name__
    np.testing.assert_array_equal(res.points, non_dominated(res.points))
    least = np.where(inst.eligible, inst.cost, np.inf).min(axis=1).sum()
    for s, f in zip(res.schedules, res.points, strict=True):
        assert check_schedule(inst, s) == []
        np.testing.assert_array_equal(evaluate(inst, s), f)
        assert f[1] >= least
    again = algo(inst, ("makespan", "cost"), n_evals=240, pop_size=20, seed=1)
    np.testing.assert_array_equal(again.points, res.points)


def test_three_objective_moead_and_budget_errors():
    inst = sd2_instance(4, 3, 5)
    res = moead(inst, ("makespan", "tardiness", "cost"), n_evals=60, pop_size=15, seed=0)
    assert res.points.shape[1] == 3 and res.evaluations >= 60
    with pytest.raises(ValueError, match="n_evals"):
        nsga2(inst, n_evals=10, pop_size=20)
    with pytest.raises(ValueError, match="pop_size"):
        nsga2(inst, pop_size=0)
    with pytest.raises(ValueError, match="n_neighbors"):
        moead(inst, n_neighbors=1)


@settings(max_examples=40)
@given(instances(), st.lists(st.floats(0, 1), min_size=32, max_size=32))
def test_random_keys_decode_to_valid_active_schedules(inst, keys):
    problem = RandomKeyFJSP(inst, ("makespan",))
    n = inst.n_ops
    x = np.resize(np.array(keys), 2 * n)
    os_, ms = problem.encoding(x)
    np.testing.assert_array_equal(np.bincount(os_, minlength=inst.n_jobs), inst.job_lengths)
    assert inst.eligible[np.arange(n), ms].all()
    assert check_schedule(inst, problem.decode(x)) == []
    # key 1.0 is the last eligible machine, key 0.0 the first
    ones = problem.encoding(np.ones(2 * n))[1]
    zeros = problem.encoding(np.zeros(2 * n))[1]
    for o in range(n):
        el = np.flatnonzero(inst.eligible[o])
        assert ones[o] == el[-1] and zeros[o] == el[0]
