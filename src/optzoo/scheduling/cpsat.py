"""CP-SAT weighted-sum reference fronts for the multi-objective FJSP, as used to compute the HV
gap by Smit et al., "Neural Multi-Objective Combinatorial Optimization for Flexible Job Shop
Scheduling Problems" (ICLR 2026, OpenReview YAgOaYedLQ): one time-limited CP-SAT (OR-Tools)
solve of the weighted-sum subproblem min_x Σ_i λ_i f_i(x) / s_i per preference λ, the
non-dominated set of the solutions kept.

Model (the standard FJSP interval model with optional intervals): per operation o a
start s_o and end e_o, per eligible machine k a presence literal x_ok with an optional interval
[s_o, s_o + p^k_o) on k; Σ_k x_ok = 1, e_o = s_o + Σ_k p^k_o x_ok, e_{O_ij} ≤ s_{O_i(j+1)},
NoOverlap of the intervals of every machine.  Objectives (see
:mod:`optzoo.scheduling.schedule`): makespan C ≥ C_i, tardiness T_i = max(C_i − D_i, 0),
flowtime Σ C_i, earliness E_i = max(D_i − C_i, 0), cost Σ c^k_o x_ok.  All data must be
integers (as on SD2 and Brandimarte instances).

OUR CHOICES (the paper's CP-SAT settings were not retrieved):

* CP-SAT minimises an integer objective, so the weights become integer coefficients
  w_i = round(R · (λ_i / s_i) / max_j(λ_j / s_j)) with resolution R = 10⁴
  (:func:`weighted_coefficients`); with ``tie_break`` each w_i gets + 1, a lexicographic
  tie-break that keeps a weight vector with a zero component from returning a weakly dominated
  schedule.  The default scales s_i are those of :class:`~optzoo.scheduling.env.FJSPEnv`
  (H_i(s_0)), the normalisation of the rewards.
* The time limit is CP-SAT's *deterministic* time (``max_deterministic_time``) with one search
  worker, so a run is reproducible; an optional wall-clock cap can be added.
* Each solve is warm-started (a solution hint) from the previous preference's schedule.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model

from optzoo.scheduling.env import FJSPEnv
from optzoo.scheduling.instance import FJSPInstance
from optzoo.scheduling.metrics import FrontResult
from optzoo.scheduling.schedule import Schedule, check_objectives, evaluate

RESOLUTION = 10_000


@dataclass
class CPSATSolution:
    """One weighted-sum solve.

    Attributes:
        schedule: the best schedule found (``None`` if none was found in time).
        values: its objective vector (``None`` likewise).
        coefficients: the integer weights minimised.
        weighted: Σ_i w_i f_i of the schedule (``None`` likewise).
        bound: CP-SAT's lower bound on that weighted sum.
        optimal: the solve proved optimality.
        wall_time: seconds.
    """

    schedule: Schedule | None
    values: np.ndarray | None
    coefficients: tuple[int, ...]
    weighted: float | None
    bound: float
    optimal: bool
    wall_time: float


@dataclass
class CPSATFront:
    """A CP-SAT weighted-sum front: the non-dominated set and every solve."""

    front: FrontResult
    solutions: list[CPSATSolution] = field(default_factory=list)

    @property
    def n_optimal(self) -> int:
        """How many solves proved optimality."""
        return sum(s.optimal for s in self.solutions)


def _integral(a, arg: str) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if not np.array_equal(a, np.round(a)):
        raise ValueError(f"instance: CP-SAT needs integer {arg}")
    return np.round(a).astype(np.int64)


def weighted_coefficients(weights, scales, *, resolution: int = RESOLUTION,
                          tie_break: bool = True) -> tuple[int, ...]:
    """Integer coefficients w_i ∝ λ_i / s_i, the largest = ``resolution`` (+ 1 each with
    ``tie_break``).

    Raises:
        ValueError: weights not finite and non-negative with a positive sum, scales not
            positive, or shapes that differ.
    """
    lam = np.asarray(weights, dtype=float)
    s = np.asarray(scales, dtype=float)
    if lam.ndim != 1 or lam.shape != s.shape:
        raise ValueError(f"weights, scales: expected two vectors of one length, got shapes "
                         f"{lam.shape}, {s.shape}")
    if not np.isfinite(lam).all() or (lam < 0).any() or lam.sum() <= 0:
        raise ValueError(f"weights: expected finite non-negative weights, not all 0, got {lam}")
    if not (np.isfinite(s).all() and (s > 0).all()):
        raise ValueError(f"scales: expected positive finite scales, got {s}")
    if not isinstance(resolution, (int, np.integer)) or resolution < 1:
        raise ValueError(f"resolution: expected a positive int, got {resolution!r}")
    raw = lam / s
    w = np.rint(resolution * raw / raw.max()).astype(np.int64)
    if tie_break:
        w = w + 1
    return tuple(int(v) for v in w)


def cpsat_weighted_sum(instance: FJSPInstance, coefficients: Sequence[int],
                       objectives: Sequence[str] = ("makespan", "cost"), *,
                       deterministic_time: float = 1.0, time_limit: float | None = None,
                       hint: Schedule | None = None, workers: int = 1,
                       seed: int = 0) -> CPSATSolution:
    """Minimise Σ_i w_i f_i exactly (integer ``coefficients`` w_i ≥ 0) with CP-SAT.

    Args:
        instance: integer processing times (and costs / due dates where an objective needs
            them).
        coefficients: one non-negative int per objective.
        objectives: names from :data:`~optzoo.scheduling.schedule.OBJECTIVES`.
        deterministic_time: CP-SAT's ``max_deterministic_time`` (reproducible limit).
        time_limit: optional wall-clock limit in seconds.
        hint: a schedule to warm-start from.
        workers: CP-SAT search workers (1 keeps runs reproducible).
        seed: CP-SAT's random seed.

    Raises:
        ValueError: non-integer data, bad coefficients or limits.
    """
    objs = check_objectives(objectives, instance)
    coefs = [int(c) for c in coefficients]
    if len(coefs) != len(objs) or any(c < 0 for c in coefs) or sum(coefs) == 0 or \
            any(float(c) != float(o) for c, o in zip(coefs, coefficients, strict=True)):
        raise ValueError(f"coefficients: expected {len(objs)} non-negative ints, not all 0, got "
                         f"{coefficients!r}")
    if not (deterministic_time > 0):
        raise ValueError(f"deterministic_time: expected > 0, got {deterministic_time}")
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time_limit: expected > 0 or None, got {time_limit}")
    if not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers: expected a positive int, got {workers!r}")
    p = _integral(instance.processing, "processing times")
    cost = _integral(instance.cost, "costs") if "cost" in objs else None
    due = _integral(instance.due_dates, "due dates") \
        if {"tardiness", "earliness"} & set(objs) else None
    n, m = p.shape
    elig = instance.eligible
    horizon = int(np.where(elig, p, 0).max(axis=1).sum())
    model = cp_model.CpModel()
    start = [model.NewIntVar(0, horizon, f"s{o}") for o in range(n)]
    end = [model.NewIntVar(0, horizon, f"e{o}") for o in range(n)]
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    per_machine: list[list] = [[] for _ in range(m)]
    for o in range(n):
        ks = np.flatnonzero(elig[o]).tolist()
        for k in ks:
            x[o, k] = model.NewBoolVar(f"x{o}_{k}")
            per_machine[k].append(model.NewOptionalFixedSizeIntervalVar(
                start[o], int(p[o, k]), x[o, k], f"i{o}_{k}"))
        model.AddExactlyOne(x[o, k] for k in ks)
        model.Add(end[o] == start[o] + sum(int(p[o, k]) * x[o, k] for k in ks))
    for o in range(n - 1):
        if instance.job_of_op[o] == instance.job_of_op[o + 1]:
            model.Add(start[o + 1] >= end[o])
    for ivs in per_machine:
        if len(ivs) > 1:
            model.AddNoOverlap(ivs)
    c_job = [end[int(o)] for o in instance.last_op]
    terms = []
    for name, w in zip(objs, coefs, strict=True):
        if w == 0:
            continue
        if name == "makespan":
            cmax = model.NewIntVar(0, horizon, "cmax")
            model.AddMaxEquality(cmax, c_job)
            f = cmax
        elif name == "flowtime":
            f = sum(c_job)
        elif name == "cost":
            f = sum(int(cost[o, k]) * v for (o, k), v in x.items())
        else:
            slack = []
            for i, c in enumerate(c_job):
                d = int(due[i])
                t = model.NewIntVar(0, horizon + abs(d), f"{name}{i}")
                model.AddMaxEquality(t, [c - d, 0] if name == "tardiness" else [d - c, 0])
                slack.append(t)
            f = sum(slack)
        terms.append(w * f)
    model.Minimize(sum(terms))
    if hint is not None:
        for o in range(n):
            model.AddHint(start[o], int(round(hint.start[o])))
            for k in np.flatnonzero(elig[o]):
                model.AddHint(x[o, int(k)], int(hint.machine[o] == k))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = int(workers)
    solver.parameters.max_deterministic_time = float(deterministic_time)
    solver.parameters.random_seed = int(seed)
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    t0 = time.perf_counter()
    status = solver.Solve(model)
    wall = time.perf_counter() - t0
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return CPSATSolution(None, None, tuple(coefs), None, float(solver.BestObjectiveBound()),
                             False, wall)
    mach = np.array([next(k for k in np.flatnonzero(elig[o]) if solver.Value(x[o, int(k)]))
                     for o in range(n)], dtype=np.int64)
    st = np.array([solver.Value(v) for v in start], dtype=float)
    sched = Schedule(mach, st, st + p[np.arange(n), mach])
    values = evaluate(instance, sched, objs)
    return CPSATSolution(sched, values, tuple(coefs), float(np.dot(coefs, values)),
                         float(solver.BestObjectiveBound()), status == cp_model.OPTIMAL, wall)


def cpsat_front(instance: FJSPInstance, preferences,
                objectives: Sequence[str] = ("makespan", "cost"), *,
                deterministic_time: float = 1.0, time_limit: float | None = None,
                scales=None, resolution: int = RESOLUTION, tie_break: bool = True,
                workers: int = 1, seed: int = 0) -> CPSATFront:
    """The CP-SAT weighted-sum front: one solve per preference (``deterministic_time`` /
    ``time_limit`` each), warm-started from the previous one.

    Args:
        preferences: ``P x n_obj`` weight vectors.
        scales: the divisors s_i (default: the environment's H_i(s_0)).

    Returns:
        :class:`CPSATFront`; ``front.wall_time`` is the total, ``front.evaluations`` the
        number of solves.
    """
    objs = check_objectives(objectives, instance)
    prefs = np.asarray(preferences, dtype=float)
    if prefs.ndim != 2 or prefs.shape[1] != len(objs) or prefs.shape[0] == 0:
        raise ValueError(f"preferences: expected a (P, {len(objs)}) array, got {prefs.shape}")
    if scales is None:
        env = FJSPEnv(objs)
        env.reset(instance)
        scales = env.scales
    sols: list[CPSATSolution] = []
    hint = None
    t0 = time.perf_counter()
    for lam in prefs:
        coefs = weighted_coefficients(lam, scales, resolution=resolution, tie_break=tie_break)
        sol = cpsat_weighted_sum(instance, coefs, objs, deterministic_time=deterministic_time,
                                 time_limit=time_limit, hint=hint, workers=workers, seed=seed)
        sols.append(sol)
        if sol.schedule is not None:
            hint = sol.schedule
    wall = time.perf_counter() - t0
    found = [s for s in sols if s.schedule is not None]
    if not found:
        front = FrontResult(points=np.zeros((0, len(objs))), wall_time=wall,
                            evaluations=len(sols), method="cpsat")
    else:
        front = FrontResult.from_candidates(np.array([s.values for s in found]),
                                            [s.schedule for s in found], wall_time=wall,
                                            evaluations=len(sols), method="cpsat")
    return CPSATFront(front, sols)
