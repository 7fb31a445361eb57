"""Schedules: the validity checker, the objectives on a schedule of mk01's first two jobs worked
out by hand, and the active decoder against a slow reference and the append decoder."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.scheduling.env import FJSPEnv
from optzoo.scheduling.instance import FJSPInstance, read_fjs
from optzoo.scheduling.schedule import (
    Schedule,
    check_objectives,
    check_schedule,
    decode_active,
    evaluate,
    flowtime,
    makespan,
    schedule_violations,
    total_cost,
    total_earliness,
    total_tardiness,
)
from tests.conftest import shared_dir
from tests.scheduling.strategies import instances

MK01 = shared_dir() / "data" / "fjsp" / "mk01.fjs"


def mk01_two_jobs() -> FJSPInstance:
    """Jobs 0 and 1 of mk01 (read from the file), 6 machines."""
    inst = read_fjs(MK01)
    return FJSPInstance([inst.operations(0), inst.operations(1)], n_machines=6,
                        due_dates=[12, 18], costs=[[{k: k + 1 for k in op} for op in job]
                                                   for job in (inst.operations(0),
                                                               inst.operations(1))])


# mk01 job 0: O00 {M0:5, M2:4}, O01 {M4:3, M2:5, M1:1}, O02 {M2:4, M5:2}, O03 {M5:5, M1:6, M0:1},
#             O04 {M2:1}, O05 {M5:6, M2:6, M3:3}
# mk01 job 1: O10 {M1:6}, O11 {M2:1}, O12 {M0:2}, O13 {M1:6, M3:6}, O14 {M5:5, M1:6, M0:1}
# Machines: job 0 -> M2, M1, M5, M0, M2, M3; job 1 -> M1, M2, M0, M3, M0.
MACHINES = [2, 1, 5, 0, 2, 3, 1, 2, 0, 3, 0]
# OS = 1 1 1 0 0 0 0 0 0 1 1, decoded with insertion (active), by hand:
#   O10 M1 [0,6)   O11 M2 [6,7)   O12 M0 [7,9)
#   O00 M2: the gap [0,6) of M2 holds 4 -> [0,4)        (appending would give [7,11))
#   O01 M1: job ready 4, M1 busy [0,6) -> [6,7)
#   O02 M5 [7,9)   O03 M0: job ready 9, M0 [7,9) -> [9,10)   O04 M2: ready 10 -> [10,11)
#   O05 M3 [11,14)
#   O13 M3 (6): job ready 9, gap [0,11) of M3 ends at 11 < 15 -> after O05: [14,20)
#   O14 M0 (1): job ready 20 -> [20,21)
OS = [1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1]
ACTIVE_START = [0, 6, 7, 9, 10, 11, 0, 6, 7, 14, 20]
# The same OS/MS appended at each machine's end (DAN's rule), by hand:
#   O10 [0,6) M1, O11 [6,7) M2, O12 [7,9) M0, O00 M2 [7,11), O01 M1 [11,12), O02 M5 [12,14),
#   O03 M0 [14,15), O04 M2 [15,16), O05 M3 [16,19), O13 M3 [19,25), O14 M0 [25,26)
APPEND_START = [7, 11, 12, 14, 15, 16, 0, 6, 7, 19, 25]


def test_hand_built_schedule_on_mk01():
    inst = mk01_two_jobs()
    p = inst.processing[np.arange(inst.n_ops), MACHINES]
    sched = Schedule(np.array(MACHINES), np.array(ACTIVE_START, float),
                     np.array(ACTIVE_START) + p)
    assert check_schedule(inst, sched) == []
    # C_0 = end of O05 = 14, C_1 = end of O14 = 21
    assert makespan(inst, sched) == 21
    assert flowtime(inst, sched) == 14 + 21
    assert total_tardiness(inst, sched) == max(14 - 12, 0) + max(21 - 18, 0)  # 5
    assert total_earliness(inst, sched) == 0
    # costs are machine index + 1
    assert total_cost(inst, sched) == sum(k + 1 for k in MACHINES)
    np.testing.assert_array_equal(evaluate(inst, sched, ("makespan", "flowtime")), [21, 35])
    decoded = decode_active(inst, OS, MACHINES)
    np.testing.assert_array_equal(decoded.start, ACTIVE_START)
    np.testing.assert_array_equal(decoded.machine, MACHINES)


def test_env_appends_like_the_hand_computation():
    inst = mk01_two_jobs()
    env = FJSPEnv(("makespan", "flowtime"), normalise=False)
    env.reset(inst)
    for t, j in enumerate(OS):
        o = int(env.next_op[j])
        env.step((j, MACHINES[o]))
        assert t + 1 == env.steps
    sched = env.schedule()
    np.testing.assert_array_equal(sched.start, APPEND_START)
    assert makespan(inst, sched) == 26 and flowtime(inst, sched) == 19 + 26


def test_checker_reports_each_violation():
    inst = mk01_two_jobs()
    p = inst.processing[np.arange(inst.n_ops), MACHINES]
    start = np.array(ACTIVE_START, float)

    def violations(machine=MACHINES, start=start, end=None):
        end = np.asarray(start) + p if end is None else end
        return schedule_violations(inst, Schedule(np.array(machine), start, end))

    bad = list(MACHINES)
    bad[4] = 0  # O04 only runs on M2
    assert any("O[0][4]: machine 0 is not eligible" in v for v in violations(bad))
    bad = list(MACHINES)
    bad[0] = 9
    assert any("outside" in v for v in violations(bad))
    late = start.copy()
    late[1] = 3.0  # O01 on M1 at [3, 4): before O00 ends (4) and inside O10's [0, 6) on M1
    out = violations(start=late)
    assert any("O[0][1] starts at 3.0 before its predecessor" in v for v in out)
    assert any("machine 1" in v and "overlap" in v for v in out)
    assert any("runs" in v for v in violations(end=start + p + 1))
    neg = start.copy()
    neg[6] = -1.0
    assert any("not finite and non-negative" in v for v in violations(start=neg))
    with pytest.raises(ValueError, match="infeasible"):
        check_schedule(inst, Schedule(np.array(MACHINES), late, late + p))
    assert check_schedule(inst, Schedule(np.array(MACHINES), late, late + p),
                          raise_error=False)
    assert schedule_violations(inst, Schedule(np.zeros(2, int), np.zeros(2), np.ones(2))) \
        == ["schedule has 2 operations, the instance 11"]


def test_objective_and_decoder_errors():
    inst = mk01_two_jobs()
    plain = read_fjs(MK01)
    with pytest.raises(ValueError, match="objectives: unknown"):
        check_objectives(["speed"])
    with pytest.raises(ValueError, match="repeated"):
        check_objectives(["cost", "cost"])
    with pytest.raises(ValueError, match="costs"):
        check_objectives(["cost"], plain)
    with pytest.raises(ValueError, match="due dates"):
        check_objectives(["tardiness"], plain)
    with pytest.raises(ValueError, match="operation_sequence"):
        decode_active(inst, [0] * 11, MACHINES)
    with pytest.raises(ValueError, match="machine_assignment"):
        decode_active(inst, OS, [0] * 11)
    with pytest.raises(ValueError, match="machine, start, end"):
        Schedule(np.zeros(2, int), np.zeros(3), np.zeros(2))


def reference_active(inst: FJSPInstance, os_, ms) -> np.ndarray:
    """Slow insertion decoder: the earliest feasible start is the job's ready time or the end
    of an operation on the machine; try them in increasing order."""
    placed: dict[int, list[tuple[float, float]]] = {k: [] for k in range(inst.n_machines)}
    nxt = inst.first_op.tolist()
    ready = [0.0] * inst.n_jobs
    start = np.zeros(inst.n_ops)
    for j in os_:
        o = nxt[j]
        nxt[j] += 1
        k, p = ms[o], inst.processing[o, ms[o]]
        for t in sorted({ready[j]} | {e for _, e in placed[k] if e >= ready[j]}):
            if all(t + p <= s or t >= e for s, e in placed[k]):
                break
        start[o] = t
        placed[k].append((t, t + p))
        ready[j] = t + p
    return start


def random_encoding(inst: FJSPInstance, seed: int):
    rng = np.random.default_rng(seed)
    os_ = rng.permutation(inst.job_of_op)
    ms = np.array([rng.choice(np.flatnonzero(inst.eligible[o])) for o in range(inst.n_ops)])
    return os_, ms


@settings(max_examples=60)
@given(instances(), st.integers(0, 2**31))
def test_decode_active_is_valid_matches_reference_and_beats_appending(inst, seed):
    os_, ms = random_encoding(inst, seed)
    sched = decode_active(inst, os_, ms)
    assert check_schedule(inst, sched) == []
    np.testing.assert_array_equal(sched.start, reference_active(inst, os_.tolist(),
                                                                ms.tolist()))
    # appending the same OS/MS (the environment) never ends an operation earlier
    env = FJSPEnv(("makespan",))
    env.reset(inst)
    for j in os_:
        env.step((j, ms[env.next_op[j]]))
    assert np.all(sched.end <= env.schedule().end)
    # active: no operation fits into an earlier idle slot of its machine
    for o in range(inst.n_ops):
        k, p = sched.machine[o], sched.end[o] - sched.start[o]
        r = 0.0 if o in inst.first_op else sched.end[o - 1]
        others = [(sched.start[q], sched.end[q]) for q in np.flatnonzero(sched.machine == k)
                  if q != o]
        for t in sorted({r} | {e for _, e in others if e >= r}):
            if t >= sched.start[o]:
                break
            assert not all(t + p <= s or t >= e for s, e in others)
