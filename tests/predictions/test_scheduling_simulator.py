"""Simulator: hand-worked schedules, non-clairvoyance, restart semantics, adversary checks."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.errors import ClairvoyanceError
from optzoo.predictions.scheduling import (
    SPJF,
    AdversaryError,
    ListScheduling,
    RoundRobin,
    simulate_machines,
    simulate_sharing,
)


class Peeker:
    """Tries to read every unfinished job's size at every decision; records what it saw."""

    def __init__(self, inner):
        self.inner = inner
        self.leaks = 0
        self.blocked = 0
        self.seen_done = {}

    def start(self, jobs, capacity):
        self.inner.start(jobs, capacity)

    def decide(self, now, jobs):
        for j in jobs:
            if j.done:
                self.seen_done[j.id] = j.size
            else:
                try:
                    _ = j.size
                    self.leaks += 1
                except ClairvoyanceError:
                    self.blocked += 1
        return self.inner.decide(now, jobs)


def test_spjf_hand_worked():
    # predictions order 1 < 2 < 0 ; true sizes 3, 1, 2 -> runs job1 (1), job2 (2), job0 (3)
    res = simulate_sharing(SPJF(), [5.0, 1.0, 2.0], [3.0, 1.0, 2.0])
    np.testing.assert_allclose(res.completion, [6.0, 1.0, 3.0])
    assert res.total_completion == pytest.approx(10.0)


def test_round_robin_hand_worked():
    # sizes 1, 2, 3 shared equally: C = 3, 5, 6
    res = simulate_sharing(RoundRobin(), [1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(res.completion, [3.0, 5.0, 6.0])


def test_view_hides_size_until_completion():
    peek = Peeker(RoundRobin())
    simulate_sharing(peek, [1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    assert peek.leaks == 0 and peek.blocked > 0
    assert peek.seen_done == {0: 1.0, 1: 2.0}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.1, 50.0), min_size=2, max_size=7))
def test_sizes_never_revealed_early(sizes):
    peek = Peeker(SPJF())
    res = simulate_sharing(peek, [1.0] * len(sizes), sizes)
    assert peek.leaks == 0
    for j, s in peek.seen_done.items():
        assert s == pytest.approx(sizes[j])
    assert np.all(np.isfinite(res.completion))


class Mover:
    """Runs job 0 on machine 0 until t=1, then moves it to machine 1 (a restart)."""

    def start(self, jobs, speeds):
        self.moved = False

    def decide(self, now, jobs, running):
        if now == 0:
            return {0: 0}, 1.0
        if not self.moved:
            self.moved = True
            return {0: None, 1: 0}
        return {}


def test_restart_loses_work():
    # size 2 on speed-1 machines: 1 unit on machine 0, moved at t=1, restarts: done at t=3
    res = simulate_machines(Mover(), [2.0], [2.0], [1.0, 1.0])
    assert res.makespan == pytest.approx(3.0)
    assert res.restarts == 1


def test_related_speed_scales_time():
    res = simulate_machines(ListScheduling(), [1.0, 1.0], [4.0, 4.0], [4.0, 1.0])
    np.testing.assert_allclose(res.completion, [1.0, 4.0])


def test_bad_decisions_raise():
    class TwoMachines:
        def start(self, jobs, speeds):
            pass

        def decide(self, now, jobs, running):
            return {0: 0, 1: 0}

    with pytest.raises(ValueError, match="two machines"):
        simulate_machines(TwoMachines(), [1.0], [1.0], [1.0, 1.0])

    class Greedy:
        def start(self, jobs, capacity):
            pass

        def decide(self, now, jobs):
            return np.ones(len(jobs))

    with pytest.raises(ValueError, match="rates"):
        simulate_sharing(Greedy(), [1.0, 1.0], [1.0, 1.0])

    class Idle:
        def start(self, jobs, capacity):
            pass

        def decide(self, now, jobs):
            return np.zeros(len(jobs))

    with pytest.raises(RuntimeError, match="deadlock"):
        simulate_sharing(Idle(), [1.0], [1.0])


def test_bad_inputs_name_argument():
    with pytest.raises(ValueError, match="predictions"):
        simulate_sharing(SPJF(), [1.0, -1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="sizes"):
        simulate_sharing(SPJF(), [1.0, 1.0], [1.0, math.nan])
    with pytest.raises(ValueError, match="sizes"):
        simulate_sharing(SPJF(), [1.0, 1.0], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="speeds"):
        simulate_machines(ListScheduling(), [1.0], [1.0], [0.0])


class Liar:
    """An adversary that commits a size below the work already done."""

    def bind(self, progress):
        pass

    def thresholds(self):
        return np.array([1.0])

    def on_threshold(self, job, progress):
        progress.commit(job, 0.5)

    def next_time(self):
        return math.inf

    def on_time(self, progress):
        pass


class Silent(Liar):
    def on_threshold(self, job, progress):
        pass  # neither commits nor raises the threshold


def test_adversary_consistency_enforced():
    with pytest.raises(AdversaryError, match="below its current work"):
        simulate_sharing(SPJF(), [1.0], Liar())
    with pytest.raises(AdversaryError, match="neither committed"):
        simulate_sharing(SPJF(), [1.0], Silent())


def test_adversary_cannot_undercut_earlier_attempt():
    class Late(Liar):
        def thresholds(self):
            return np.array([np.inf])

        def next_time(self):
            return 2.5

        def on_time(self, progress):
            progress.commit(0, 1.5)  # job 0 reached 2.0 in its first attempt

    class StopStart:
        def start(self, jobs, speeds):
            self.k = 0

        def decide(self, now, jobs, running):
            self.k += 1
            if self.k == 1:
                return {0: 0}, 2.0
            if self.k == 2:
                return {0: None, 1: 0}
            return {}

    with pytest.raises(AdversaryError, match="earlier attempt"):
        simulate_machines(StopStart(), [1.0], Late(), [1.0, 1.0])
