"""NSGA-II and MOEA/D baselines for the multi-objective FJSP, as compared against by Smit et
al., "Neural Multi-Objective Combinatorial Optimization for Flexible Job Shop Scheduling
Problems" (ICLR 2026, OpenReview YAgOaYedLQ), run on pymoo (Deb et al. 2002; Zhang & Li 2007).

Encoding (OUR CHOICE; the paper's operators were not retrieved): a random-key vector
x ∈ [0, 1]^{2N} (Bean 1994).  The first N keys give the operation sequence OS: sorting them
orders the job-repetition vector (job i repeated n_i times), so the k-th appearance of job i
stands for O_ik (Bierwirth's permutation with repetition); the last N keys give the machine
assignment MS: operation o runs on the ⌊x_{N+o} · |M_o|⌋-th of its eligible machines (sorted).
Every x decodes to a feasible *active* schedule with
:func:`~optzoo.scheduling.schedule.decode_active` (left-shift insertion), as the brief asks
("NSGA-II must decode to feasible active schedules").  Variation: pymoo's defaults for real
vectors (NSGA-II: SBX η=15 p=0.9, polynomial mutation η=20; MOEA/D: SBX η=20 p=1, PM η=20,
neighbourhood 20, mating in the neighbourhood with probability 0.9, pymoo's default
decomposition: Tchebycheff for 2 objectives, PBI for more).

Objectives are divided by the instance scales of :class:`~optzoo.scheduling.env.FJSPEnv`
(H_i(s_0), the same normalisation as the rewards) inside the search so that MOEA/D's
decomposition is not dominated by the objective with the largest numbers; NSGA-II is invariant
to it.  The reported front is the non-dominated set of *every* schedule evaluated (an external
archive), in the original units, with the wall time and the evaluation count; the budget is a
fixed number of evaluations (pymoo finishes the generation in progress, so NSGA-II may exceed it
by less than one population).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from pymoo.algorithms.moo.moead import MOEAD
from pymoo.algorithms.moo.nsga2 import NSGA2
from pymoo.core.problem import Problem
from pymoo.optimize import minimize
from pymoo.util.ref_dirs import get_reference_directions

from optzoo.scheduling.env import FJSPEnv
from optzoo.scheduling.instance import FJSPInstance
from optzoo.scheduling.metrics import FrontResult
from optzoo.scheduling.schedule import Schedule, check_objectives, decode_active, evaluate


class RandomKeyFJSP(Problem):
    """The FJSP as a pymoo problem on random keys x ∈ [0, 1]^{2N} (see module docstring).

    Args:
        instance: the instance.
        objectives: the objectives (minimised).

    Attributes:
        archive_x, archive_f: every evaluated x and its objective vector (original units).
        scales: the divisors of the objectives pymoo sees.
    """

    def __init__(self, instance: FJSPInstance, objectives: Sequence[str] = ("makespan", "cost")):
        self.instance = instance
        self.objective_names = check_objectives(objectives, instance)
        env = FJSPEnv(self.objective_names)
        env.reset(instance)
        self.scales = env.scales
        n = instance.n_ops
        self._n_elig = instance.eligible.sum(axis=1)
        # eligible machines of each operation, sorted, padded with the last one
        order = np.argsort(~instance.eligible, axis=1, kind="stable")
        self._elig_sorted = order
        self.archive_x: list[np.ndarray] = []
        self.archive_f: list[np.ndarray] = []
        super().__init__(n_var=2 * n, n_obj=len(self.objective_names), xl=0.0, xu=1.0)

    def encoding(self, x) -> tuple[np.ndarray, np.ndarray]:
        """The OS (job ids) and MS (machines) of random keys ``x``."""
        x = np.asarray(x, dtype=float)
        n = self.instance.n_ops
        if x.shape != (2 * n,):
            raise ValueError(f"x: expected {2 * n} keys, got shape {x.shape}")
        os_ = self.instance.job_of_op[np.argsort(x[:n], kind="stable")]
        idx = np.minimum((np.clip(x[n:], 0.0, 1.0) * self._n_elig).astype(np.int64),
                         self._n_elig - 1)
        ms = self._elig_sorted[np.arange(n), idx]
        return os_, ms

    def decode(self, x) -> Schedule:
        """The active schedule of random keys ``x``."""
        os_, ms = self.encoding(x)
        return decode_active(self.instance, os_, ms)

    def _evaluate(self, X, out, *args, **kwargs):
        F = np.empty((X.shape[0], self.n_obj))
        for r, x in enumerate(X):
            F[r] = evaluate(self.instance, self.decode(x), self.objective_names)
        self.archive_x.extend(np.array(X, copy=True))
        self.archive_f.extend(F)
        out["F"] = F / self.scales

    def front(self, method: str, wall_time: float) -> FrontResult:
        """The non-dominated set of the archive, with one decoded schedule per point."""
        f = np.array(self.archive_f)
        res = FrontResult.from_candidates(f, list(range(len(f))), wall_time=wall_time,
                                          evaluations=len(f), method=method)
        res.schedules = [self.decode(self.archive_x[i]) for i in res.schedules]
        return res


def _check_budget(n_evals, pop_size):
    for arg, v in (("n_evals", n_evals), ("pop_size", pop_size)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{arg}: expected a positive int, got {v!r}")
    if n_evals < pop_size:
        raise ValueError(f"n_evals: expected at least pop_size ({pop_size}), got {n_evals}")


def nsga2(instance: FJSPInstance, objectives: Sequence[str] = ("makespan", "cost"), *,
          n_evals: int = 10_000, pop_size: int = 100, seed: int = 0) -> FrontResult:
    """NSGA-II (pymoo) on the random-key encoding.

    Args:
        instance: the instance.
        objectives: the objectives (minimised).
        n_evals: evaluation budget (schedules decoded).
        pop_size: population size.
        seed: the run is deterministic given it.

    Example:
        >>> from optzoo.scheduling import nsga2, sd2_instance
        >>> instance = sd2_instance(n_jobs=4, n_machines=3, seed=0)
        >>> front = nsga2(instance, ("makespan", "cost"), n_evals=400, pop_size=20, seed=0)
        >>> front.points.shape[1], front.evaluations, len(front.schedules) == len(front.points)
        (2, 400, True)
    """
    _check_budget(n_evals, pop_size)
    problem = RandomKeyFJSP(instance, objectives)
    t0 = time.perf_counter()
    minimize(problem, NSGA2(pop_size=pop_size), ("n_eval", n_evals), seed=seed, verbose=False)
    return problem.front("nsga2", time.perf_counter() - t0)


def moead(instance: FJSPInstance, objectives: Sequence[str] = ("makespan", "cost"), *,
          n_evals: int = 10_000, pop_size: int = 100, n_neighbors: int = 20,
          seed: int = 0) -> FrontResult:
    """MOEA/D (pymoo) on the random-key encoding, with a Das-Dennis set of at most
    ``pop_size`` weight vectors (the largest lattice that fits; 2 objectives: exactly
    ``pop_size``).

    Args:
        instance: the instance.
        objectives: the objectives (minimised).
        n_evals: evaluation budget.
        pop_size: the upper bound on the number of subproblems.
        n_neighbors: neighbourhood size T (capped at the number of subproblems).
        seed: the run is deterministic given it.
    """
    _check_budget(n_evals, pop_size)
    if not isinstance(n_neighbors, (int, np.integer)) or n_neighbors < 2:
        raise ValueError(f"n_neighbors: expected an int >= 2, got {n_neighbors!r}")
    problem = RandomKeyFJSP(instance, objectives)
    n_obj = problem.n_obj
    h = 1
    while _lattice_size(n_obj, h + 1) <= pop_size:
        h += 1
    ref_dirs = get_reference_directions("das-dennis", n_obj, n_partitions=h)
    algo = MOEAD(ref_dirs, n_neighbors=min(n_neighbors, len(ref_dirs)))
    t0 = time.perf_counter()
    minimize(problem, algo, ("n_eval", n_evals), seed=seed, verbose=False)
    return problem.front("moead", time.perf_counter() - t0)


def _lattice_size(n_obj: int, h: int) -> int:
    from math import comb

    return comb(h + n_obj - 1, n_obj - 1)
