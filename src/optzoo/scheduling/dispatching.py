"""Priority dispatching rules for the (multi-objective) FJSP: the "weighted dispatching rules"
baseline of the reproduction of Smit et al. (ICLR 2026, OpenReview YAgOaYedLQ), and classic
single-objective rules as used in DAN's comparison (Wang et al., IEEE TNNLS 2023).

Every rule is run in :class:`~optzoo.scheduling.env.FJSPEnv` (DAN's non-insertion
construction): at each step it picks one legal (job, machine) pair.  With ``st`` the pair's
start time max(job ready, machine ready), ``p`` its processing time and ``end = st + p``:

* ``spt``: shortest processing time pair (ties: earliest end);
* ``mor``: the job with the most operations remaining, on its earliest-ending machine;
* ``mwkr``: the job with the most work remaining (Σ mean processing time of its unscheduled
  operations), on its earliest-ending machine;
* ``edd``: the job with the earliest due date, on its earliest-ending machine;
* ``cheapest``: the cheapest pair (ties: earliest end);
* ``weighted`` (for a preference λ): the pair minimising Σ_i λ_i s_i, each score s_i min-max
  normalised over the legal pairs of the step (0 when constant).  OUR READING of "a λ-weighted
  score of normalised processing time/cost/slack": makespan and flowtime score the pair's end
  time (earliest-finish rule: processing time plus the wait it causes); tardiness the modified
  due date max(D_i, end + Σ min p of the job's later operations) (Baker & Bertrand's MDD: the
  urgent job on a fast machine); earliness the job's earliness bound after the pair,
  max(D_i − (end + Σ min p of later operations), 0); cost the pair's cost.

Ties always fall to the earliest end, then to the lowest (job, machine) in row-major order.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from optzoo.scheduling.env import FJSPEnv
from optzoo.scheduling.instance import FJSPInstance
from optzoo.scheduling.metrics import FrontResult
from optzoo.scheduling.schedule import Schedule, check_objectives

RULES = ("spt", "mor", "mwkr", "edd", "cheapest", "weighted")


def dispatch(instance: FJSPInstance, rule: str = "spt", *, weights: Sequence[float] | None = None,
             objectives: Sequence[str] = ("makespan", "cost"), candidates: str = "all"
             ) -> tuple[Schedule, np.ndarray]:
    """Build one schedule with ``rule``.

    Args:
        instance: the instance.
        rule: one of :data:`RULES`.
        weights: the preference λ (one per objective, ≥ 0, not all 0) for ``"weighted"``.
        objectives: the objectives reported (and scored by ``"weighted"``).
        candidates: the environment's action set (``"all"`` or DAN's ``"earliest"``).

    Returns:
        The schedule and its objective vector.

    Raises:
        ValueError: an unknown rule, bad weights, or an instance without the due dates / costs
            the rule or objectives need.

    Example:
        >>> from optzoo.scheduling import dispatch, sd2_instance
        >>> instance = sd2_instance(n_jobs=4, n_machines=3, seed=0)
        >>> schedule, values = dispatch(instance, "spt")  # (makespan, cost)
        >>> _, weighted = dispatch(instance, "weighted", weights=[1.0, 0.0])
        >>> values.shape, bool(weighted[0] <= values[0])  # λ = (1, 0): makespan first
        ((2,), True)
    """
    objs = check_objectives(objectives, instance)
    if rule not in RULES:
        raise ValueError(f"rule: expected one of {RULES}, got {rule!r}")
    if rule == "weighted":
        lam = _check_weights(weights, len(objs))
    elif weights is not None:
        raise ValueError(f"weights: only the 'weighted' rule takes weights, not {rule!r}")
    if rule == "edd" and instance.due_dates is None:
        raise ValueError("rule: 'edd' needs an instance with due dates")
    if rule == "cheapest" and instance.cost is None:
        raise ValueError("rule: 'cheapest' needs an instance with costs")
    env = FJSPEnv(objs, candidates=candidates, normalise=False)
    env.reset(instance)
    p = instance.processing
    elig_p = np.where(instance.eligible, p, np.inf)
    mean_p = np.where(instance.eligible, p, 0).sum(axis=1) / instance.eligible.sum(axis=1)
    min_p = elig_p.min(axis=1)
    # Σ min p of the operations after each one in its job
    rev = np.cumsum(min_p[::-1])[::-1]
    after = rev - min_p - np.repeat(rev[instance.last_op] - min_p[instance.last_op],
                                    instance.job_lengths)
    after = np.maximum(after, 0.0)
    job_of = instance.job_of_op
    while not env.done:
        legal = env.action_mask()
        js, ks = np.nonzero(legal)
        o = env.next_op[js]
        st = np.maximum(env.job_ready[js], env.machine_ready[ks])
        pt = p[o, ks]
        end = st + pt
        if rule == "spt":
            key = pt
        elif rule == "mor":
            left = np.bincount(job_of[~env.scheduled], minlength=instance.n_jobs)
            key = -left[js].astype(float)
        elif rule == "mwkr":
            work = np.bincount(job_of[~env.scheduled], weights=mean_p[~env.scheduled],
                               minlength=instance.n_jobs)
            key = -work[js]
        elif rule == "edd":
            key = instance.due_dates[js]
        elif rule == "cheapest":
            key = instance.cost[o, ks]
        else:
            key = np.zeros(js.size)
            for w, name in zip(lam, objs, strict=True):
                if w == 0:
                    continue
                if name in ("makespan", "flowtime"):
                    s = end
                elif name == "tardiness":
                    s = np.maximum(instance.due_dates[js], end + after[o])
                elif name == "earliness":
                    s = np.maximum(instance.due_dates[js] - end - after[o], 0.0)
                else:
                    s = instance.cost[o, ks]
                key = key + w * _minmax(s)
        best = np.lexsort((np.arange(js.size), end, key))[0]
        env.step((js[best], ks[best]))
    return env.schedule(), env.objective_values()


def _minmax(x: np.ndarray) -> np.ndarray:
    lo, hi = x.min(), x.max()
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def _check_weights(weights, n_obj: int) -> np.ndarray:
    if weights is None:
        raise ValueError("weights: the 'weighted' rule needs a preference vector")
    lam = np.asarray(weights, dtype=float)
    if lam.shape != (n_obj,) or not np.isfinite(lam).all() or (lam < 0).any() or lam.sum() <= 0:
        raise ValueError(f"weights: expected {n_obj} finite non-negative weights, not all 0, got "
                         f"{weights!r}")
    return lam


def weighted_rule_front(instance: FJSPInstance, preferences: np.ndarray, *,
                        objectives: Sequence[str] = ("makespan", "cost"),
                        candidates: str = "all") -> FrontResult:
    """The non-dominated set of the ``weighted`` rule run once per preference.

    Args:
        preferences: ``P x n_obj`` weight vectors (e.g.
            :func:`~optzoo.scheduling.preferences.uniform_preferences`).
    """
    objs = check_objectives(objectives, instance)
    prefs = np.asarray(preferences, dtype=float)
    if prefs.ndim != 2 or prefs.shape[1] != len(objs) or prefs.shape[0] == 0:
        raise ValueError(f"preferences: expected a (P, {len(objs)}) array, got {prefs.shape}")
    t0 = time.perf_counter()
    scheds, values = [], []
    for lam in prefs:
        s, f = dispatch(instance, "weighted", weights=lam, objectives=objs,
                        candidates=candidates)
        scheds.append(s)
        values.append(f)
    wall = time.perf_counter() - t0
    return FrontResult.from_candidates(np.array(values), scheds, wall_time=wall,
                                       evaluations=len(prefs), method="weighted-rule")

