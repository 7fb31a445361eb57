"""Schedules of a flexible job shop, their validity, the objectives of the multi-objective FJSP
of Smit et al. (ICLR 2026, OpenReview YAgOaYedLQ) and the active-schedule decoder of the
OS+MS encoding used by genetic algorithms for the FJSP.

Objectives (all minimised; C_i is the completion time of job i's last operation, release
times are 0):

* ``makespan``   C_max = max_i C_i
* ``tardiness``  Σ_i max(C_i − D_i, 0)
* ``flowtime``   Σ_i C_i
* ``cost``       Σ_ij c^{k(ij)}_ij, the cost of each operation on the machine it runs on
* ``earliness``  Σ_i max(D_i − C_i, 0)

:func:`decode_active` turns an operation sequence (OS: job ids, the k-th occurrence of job i
standing for O_ik) and a machine assignment (MS) into an *active* schedule: operations are
placed in OS order, each at the earliest start on its machine, into an idle gap before already
placed operations when it fits there (left-shift insertion; Pezzella, Morganti & Ciaschetti,
Computers & OR 2008; Zhang, Gao & Shi, Expert Syst. Appl. 2011).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from optzoo.scheduling.instance import FJSPInstance

OBJECTIVES = ("makespan", "tardiness", "flowtime", "cost", "earliness")


@dataclass(frozen=True, eq=False)
class Schedule:
    """A complete schedule: for each operation (global index, job-major order) its machine,
    start and end time.

    Args:
        machine: ``N`` ints.
        start: ``N`` floats.
        end: ``N`` floats.
    """

    machine: np.ndarray
    start: np.ndarray
    end: np.ndarray

    def __post_init__(self):
        machine = np.asarray(self.machine)
        start = np.asarray(self.start, dtype=float)
        end = np.asarray(self.end, dtype=float)
        if machine.ndim != 1 or start.shape != machine.shape or end.shape != machine.shape:
            raise ValueError(f"machine, start, end: expected three 1-D arrays of one length, got "
                             f"shapes {machine.shape}, {start.shape}, {end.shape}")
        if machine.size and not np.issubdtype(machine.dtype, np.integer):
            raise ValueError(f"machine: expected ints, got dtype {machine.dtype}")
        object.__setattr__(self, "machine", machine.astype(np.int64))
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "end", end)

    def completion_times(self, instance: FJSPInstance) -> np.ndarray:
        """C_i of every job (the end of its last operation)."""
        _check_size(instance, self)
        return self.end[instance.last_op]


def _check_size(instance: FJSPInstance, schedule: Schedule) -> None:
    if schedule.machine.size != instance.n_ops:
        raise ValueError(f"schedule: has {schedule.machine.size} operations, the instance "
                         f"{instance.n_ops}")


def schedule_violations(instance: FJSPInstance, schedule: Schedule, *,
                        tol: float = 1e-9) -> list[str]:
    """Every violated constraint of ``schedule`` on ``instance``, as sentences (empty = valid).

    Checks machine indices and eligibility, finite non-negative starts, end − start = p^k_ij,
    precedence within each job and no overlap of two operations on a machine (touching ends
    are allowed).  ``tol`` is relative to the largest processing time.
    """
    n, m = instance.n_ops, instance.n_machines
    if schedule.machine.size != n:
        return [f"schedule has {schedule.machine.size} operations, the instance {n}"]
    out: list[str] = []
    eps = tol * max(1.0, float(instance.processing.max()))
    mach, start, end = schedule.machine, schedule.start, schedule.end
    in_range = (mach >= 0) & (mach < m)
    for o in np.flatnonzero(~in_range):
        out.append(f"operation {_name(instance, o)}: machine {mach[o]} outside 0..{m - 1}")
    k = np.where(in_range, mach, 0)
    for o in np.flatnonzero(in_range & ~instance.eligible[np.arange(n), k]):
        out.append(f"operation {_name(instance, o)}: machine {mach[o]} is not eligible")
    for o in np.flatnonzero(~(np.isfinite(start) & np.isfinite(end)) | (start < -eps)):
        out.append(f"operation {_name(instance, o)}: start {start[o]} / end {end[o]} not finite "
                   "and non-negative")
    p = instance.processing[np.arange(n), k]
    ok = in_range & instance.eligible[np.arange(n), k]
    for o in np.flatnonzero(ok & (np.abs(end - start - p) > eps)):
        out.append(f"operation {_name(instance, o)}: runs {end[o] - start[o]} on machine "
                   f"{mach[o]}, its processing time is {p[o]}")
    succ = np.setdiff1d(np.arange(n), instance.first_op)
    for o in succ[start[succ] < end[succ - 1] - eps]:
        out.append(f"operation {_name(instance, o)} starts at {start[o]} before its predecessor "
                   f"ends at {end[o - 1]}")
    for q in range(m):
        ops = np.flatnonzero(mach == q)
        ops = ops[np.lexsort((end[ops], start[ops]))]
        for a, b in zip(ops[:-1], ops[1:], strict=True):
            if start[b] < end[a] - eps:
                out.append(f"machine {q}: operations {_name(instance, a)} [{start[a]}, {end[a]}) "
                           f"and {_name(instance, b)} [{start[b]}, {end[b]}) overlap")
    return out


def check_schedule(instance: FJSPInstance, schedule: Schedule, *, raise_error: bool = True,
                   tol: float = 1e-9) -> list[str]:
    """The violations of :func:`schedule_violations`; raise ``ValueError`` listing them when
    ``raise_error`` and there are any."""
    out = schedule_violations(instance, schedule, tol=tol)
    if out and raise_error:
        shown = "; ".join(out[:10]) + (f"; ... ({len(out)} in all)" if len(out) > 10 else "")
        raise ValueError(f"schedule: infeasible: {shown}")
    return out


def _name(instance: FJSPInstance, o) -> str:
    return f"O[{instance.job_of_op[o]}][{instance.op_pos[o]}]"


# -- objectives -------------------------------------------------------------------------------

def makespan(instance: FJSPInstance, schedule: Schedule) -> float:
    """C_max = max_i C_i."""
    return float(schedule.completion_times(instance).max())


def flowtime(instance: FJSPInstance, schedule: Schedule) -> float:
    """Σ_i C_i (all jobs released at 0)."""
    return float(schedule.completion_times(instance).sum())


def total_tardiness(instance: FJSPInstance, schedule: Schedule) -> float:
    """Σ_i max(C_i − D_i, 0)."""
    d = _due(instance)
    return float(np.maximum(schedule.completion_times(instance) - d, 0.0).sum())


def total_earliness(instance: FJSPInstance, schedule: Schedule) -> float:
    """Σ_i max(D_i − C_i, 0)."""
    d = _due(instance)
    return float(np.maximum(d - schedule.completion_times(instance), 0.0).sum())


def total_cost(instance: FJSPInstance, schedule: Schedule) -> float:
    """Σ c^k_ij over operations on their machines."""
    if instance.cost is None:
        raise ValueError("instance: has no costs, the cost objective is undefined")
    _check_size(instance, schedule)
    if ((schedule.machine < 0) | (schedule.machine >= instance.n_machines)).any():
        raise ValueError("schedule: machine index outside the instance's machines")
    return float(instance.cost[np.arange(instance.n_ops), schedule.machine].sum())


def _due(instance: FJSPInstance) -> np.ndarray:
    if instance.due_dates is None:
        raise ValueError("instance: has no due dates, tardiness/earliness are undefined")
    return instance.due_dates


_OBJECTIVE_FNS = {"makespan": makespan, "tardiness": total_tardiness, "flowtime": flowtime,
                  "cost": total_cost, "earliness": total_earliness}


def check_objectives(objectives: Sequence[str], instance: FJSPInstance | None = None
                     ) -> tuple[str, ...]:
    """``objectives`` as a tuple, validated against :data:`OBJECTIVES` and, when ``instance``
    is given, against the data it has (costs, due dates).

    Raises:
        ValueError: an unknown or repeated name, none, or missing data.
    """
    if isinstance(objectives, str):
        objectives = (objectives,)
    objs = tuple(objectives)
    if not objs:
        raise ValueError("objectives: expected at least one objective")
    for o in objs:
        if o not in OBJECTIVES:
            raise ValueError(f"objectives: unknown {o!r}, expected names from {OBJECTIVES}")
    if len(set(objs)) != len(objs):
        raise ValueError(f"objectives: repeated names in {objs}")
    if instance is not None:
        if "cost" in objs and instance.cost is None:
            raise ValueError("objectives: 'cost' needs an instance with costs")
        if {"tardiness", "earliness"} & set(objs) and instance.due_dates is None:
            raise ValueError("objectives: 'tardiness'/'earliness' need an instance with due "
                             "dates")
    return objs


def evaluate(instance: FJSPInstance, schedule: Schedule,
             objectives: Sequence[str] = ("makespan", "cost")) -> np.ndarray:
    """The objective vector of ``schedule`` (in the order of ``objectives``)."""
    objs = check_objectives(objectives, instance)
    return np.array([_OBJECTIVE_FNS[o](instance, schedule) for o in objs])


# -- active decoding of OS + MS -----------------------------------------------------------------

def decode_active(instance: FJSPInstance, operation_sequence, machine_assignment) -> Schedule:
    """The active schedule of an OS+MS encoding.

    Args:
        operation_sequence: ``N`` job ids; job i appears exactly ``n_i`` times and its k-th
            appearance stands for operation O_ik.
        machine_assignment: ``N`` machines, one per operation (global index), each eligible.

    Each operation, in OS order, starts at the earliest time t ≥ (its job predecessor's end)
    such that [t, t + p) lies in an idle interval of its machine, before or after the
    operations already placed there.

    Raises:
        ValueError: a sequence that is not a permutation with repetition of the jobs, or an
            ineligible machine.
    """
    os_ = np.asarray(operation_sequence)
    ms = np.asarray(machine_assignment)
    n = instance.n_ops
    if os_.shape != (n,) or (os_.size and not np.issubdtype(os_.dtype, np.integer)):
        raise ValueError(f"operation_sequence: expected {n} job ids, got shape {os_.shape}")
    if os_.size and (os_.min() < 0 or os_.max() >= instance.n_jobs
                     or not np.array_equal(np.bincount(os_, minlength=instance.n_jobs),
                                           instance.job_lengths)):
        raise ValueError("operation_sequence: each job i must appear exactly n_i times "
                         f"(job lengths {instance.job_lengths.tolist()})")
    if ms.shape != (n,) or (ms.size and not np.issubdtype(ms.dtype, np.integer)):
        raise ValueError(f"machine_assignment: expected {n} machine ids, got shape {ms.shape}")
    if ((ms < 0) | (ms >= instance.n_machines)).any() or \
            not instance.eligible[np.arange(n), np.clip(ms, 0, instance.n_machines - 1)].all():
        bad = np.flatnonzero(~instance.eligible[np.arange(n),
                                                np.clip(ms, 0, instance.n_machines - 1)]
                             | (ms < 0) | (ms >= instance.n_machines))[0]
        raise ValueError(f"machine_assignment: machine {ms[bad]} is not eligible for operation "
                         f"{_name(instance, bad)}")
    proc = instance.processing[np.arange(n), ms].tolist()
    first = instance.first_op.tolist()
    msl = ms.tolist()
    next_op = list(first)
    job_ready = [0.0] * instance.n_jobs
    starts: list[list[float]] = [[] for _ in range(instance.n_machines)]
    ends: list[list[float]] = [[] for _ in range(instance.n_machines)]
    start = [0.0] * n
    for j in os_.tolist():
        o = next_op[j]
        next_op[j] = o + 1
        k, p, r = msl[o], proc[o], job_ready[j]
        st, en = starts[k], ends[k]
        t = None
        # gaps that close after r: the gap before interval i is [ends[i-1], starts[i])
        for i in range(bisect_right(st, r), len(st)):
            a = en[i - 1] if i > 0 and en[i - 1] > r else r
            if a + p <= st[i]:
                t = a
                st.insert(i, a)
                en.insert(i, a + p)
                break
        if t is None:
            t = en[-1] if en and en[-1] > r else r
            st.append(t)
            en.append(t + p)
        start[o] = t
        job_ready[j] = t + p
    s = np.array(start)
    return Schedule(ms.astype(np.int64), s, s + np.asarray(proc))
