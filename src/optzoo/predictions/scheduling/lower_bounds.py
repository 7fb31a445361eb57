"""The paper's lower-bound constructions as instance families with lazy adaptive adversaries.

Zhao & Zomaya, "On Smoothness Bounds for Non-Clairvoyant Scheduling with Predictions" (ICLR
2026).  Each family adds the paper's trick: one job of negligible size ``δ`` with an EXACT
prediction, which makes ``P(I) = max p*/min p*`` huge (so the instance is informative, in
``I_s``) and costs almost nothing.  Each family returns predictions and a fresh
:class:`~optzoo.predictions.scheduling.simulator.SizeOracle` that commits sizes only when the
algorithm's processing forces it (the simulator checks consistency).

* Thm 4.1 (one machine, ``Σ C_j``): :func:`thm41_instance`.  ``n`` jobs predicted ``p``, sizes in
  ``[p/η, ηp]``.  Before ``t* = ηp·β*·n`` (``β* = 1/(η+1)``, the static adversary's optimal
  fraction of big jobs) a job that receives ``ηp`` of work is big (size ``ηp``); at ``t*`` every
  job that has received at least ``p/η`` finishes at once (size = its work) and every other job
  becomes small (``p/η``).  Against SPJF the ratio is exactly ``η`` as ``n → ∞`` (the algebra:
  alg ``n²p·η/(η+1)`` over OPT ``n²p/(η+1)``); against RR it is ``≈ 2``.  The paper's bound is
  ``η`` for ``η ≤ η* ≈ 1.835`` (:func:`eta_star`, root of ``x⁴ - 4x - 4``).
* Thm 5.1 (identical machines, restart, ``C_max``): :func:`thm51_instance`.  ``m(m-1)+1``
  indistinguishable jobs predicted ``η``; all have size 1 except the last one to reach one unit
  of processing, which gets ``L``.  The brief says "the one started last"; with restarts a
  start reveals nothing, so the adaptive form used here -- a job that completes a unit of work
  is a unit job unless it is the last uncommitted one -- is our reading (*inferred*).  Two
  variants: ``m = ⌈η²⌉, L = η²`` (ratio ``1 + (η²-1)/⌈η²⌉``) and ``m = ⌊η²⌋, L = m`` (ratio
  ``2 - 1/⌊η²⌋``); :func:`thm51_bound` is the max, and :func:`thm51_instance` builds the variant
  attaining it.
* Thm 6.1 (related machines, restart, ``C_max``): :func:`thm61_instance`, after Cho & Sahni
  (1980).  ``k`` groups; group ``i`` has ``2^(2k-2i-1)`` machines of speed ``2^i`` and as many
  jobs of size ``2^i``, all predicted ``η = 2^((k-1)/2)`` (so ``k = 2 log₂ η + 1``), plus a
  ``δ``-speed machine and an exactly predicted ``δ`` job.  ``OPT = 1`` (every job on a machine of
  its group; and ``Σ p* / Σ s = 1`` bounds any schedule).  The adversary hands out the sizes in
  increasing order: the next jobs to reach the smallest size not yet used get it.  Bound
  ``⌈log₂ η⌉`` for every deterministic algorithm.  ``k = 5, 6`` give ``η = 4, 2^2.5`` with 682 /
  2,730 machines.

Static seeds for the adversarial search (issue 21): :func:`realized` runs an algorithm against a
family's adaptive adversary and returns the static instance the adversary committed to (true
sizes and predictions), on which the same deterministic algorithm repeats the same schedule;
:func:`thm41_vertices` lists the vertices of Thm 4.1's static linear-fractional program (``k``
big jobs ``ηp`` run first, ``n - k`` small ones ``p/η``, one shared prediction, the tiny exact
job), with the big jobs' predictions a relative ``1e-9`` lower so that SPJF runs them first
without relying on tie-breaking; :func:`thm51_seed` builds Thm 5.1's instance for a given number
of machines and pads it with tiny exact jobs to a search's job count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from optzoo.predictions.scheduling.simulator import Progress, simulate_machines, simulate_sharing

DEFAULT_DELTA = 1e-6


def eta_star() -> float:
    """The positive real root of ``x⁴ - 4x - 4 = 0`` (``≈ 1.8351``): Thm 4.1's range ``η ≤ η*``."""
    roots = np.roots([1.0, 0.0, 0.0, -4.0, -4.0])
    real = roots[np.abs(roots.imag) < 1e-12].real
    return float(real[real > 0].max())


@dataclass
class LowerBoundInstance:
    """A lower-bound instance: predictions, a fresh lazy adversary, and what the paper proves.

    Attributes:
        predictions: predicted sizes, shape ``(n,)`` (the tiny job last).
        oracle: the adaptive adversary (a SizeOracle); single use.
        bound: the paper's lower bound on ALG/OPT for this family.
        eta: the family's prediction error.
        speeds: machine speeds (``None`` for one machine).
    """

    predictions: np.ndarray
    oracle: object
    bound: float
    eta: float
    speeds: np.ndarray | None = None


# -- Thm 4.1 ---------------------------------------------------------------------------------

class Thm41Adversary:
    """Thm 4.1's adaptive adversary on ``n`` jobs predicted ``p`` plus a tiny exact job."""

    def __init__(self, n: int, eta: float, p: float = 1.0, delta: float = DEFAULT_DELTA) -> None:
        self.n, self.eta, self.p, self.delta = n, eta, p, delta
        self.beta = 1.0 / (eta + 1.0)
        self.t_star = eta * p * self.beta * n
        self._fired = False

    def bind(self, progress: Progress) -> None:
        progress.commit(self.n, self.delta)

    def thresholds(self) -> np.ndarray:
        thr = np.full(self.n + 1, self.eta * self.p)
        thr[self.n] = math.inf
        return thr

    def on_threshold(self, job: int, progress: Progress) -> None:
        progress.commit(job, self.eta * self.p)  # received ηp before t*: big

    def next_time(self) -> float:
        return math.inf if self._fired else self.t_star

    def on_time(self, progress: Progress) -> None:
        self._fired = True
        work = progress.work()
        small = self.p / self.eta
        for j in np.flatnonzero(~progress.committed[: self.n]):
            w = float(work[j])
            progress.commit(int(j), w if w >= small else small)


def thm41_vertices(eta: float, n: int, p: float = 1.0, delta: float = DEFAULT_DELTA,
                   gap: float = 1e-9) -> list[tuple[np.ndarray, np.ndarray]]:
    """Vertices of Thm 4.1's static program as ``(true, pred)`` pairs, ``k = 0 … n`` big jobs.

    Job ``j < k`` has true size ``ηp(1 - g_j)`` and prediction ``p(1 - g_j)`` with
    ``g_j = gap · (k - j)`` (so SPJF runs the big jobs first, in id order), jobs ``k … n-1``
    have size ``p/η`` and prediction ``p``, and job ``n`` is the tiny exact job ``δ``.  Every
    instance has error exactly ``η`` and ``n + 1`` jobs.
    """
    if not (math.isfinite(eta) and eta > 1.0):
        raise ValueError(f"eta: expected an error > 1, got {eta}")
    if n < 1:
        raise ValueError(f"n: expected at least 1 job, got {n}")
    if not (0 < delta < p / eta):
        raise ValueError(f"delta: expected 0 < delta < p/eta = {p / eta}, got {delta}")
    if not (0 <= gap * (n + 1) < 1e-3):
        raise ValueError(f"gap: expected a small relative gap >= 0, got {gap}")
    out = []
    for k in range(n + 1):
        shrink = 1.0 - gap * (k - np.arange(k))
        true = np.r_[eta * p * shrink, np.full(n - k, p / eta), delta]
        pred = np.r_[p * shrink, np.full(n - k, float(p)), delta]
        out.append((true, pred))
    return out


def realized(instance: LowerBoundInstance, algorithm: object) -> tuple[np.ndarray, np.ndarray]:
    """The static instance ``(true, pred)`` that ``instance``'s adaptive adversary commits to
    against ``algorithm`` (a one-machine sharing scheduler when ``instance.speeds`` is ``None``,
    else a restart-model machine scheduler).  ``instance``'s oracle is used up."""
    if instance.speeds is None:
        res = simulate_sharing(algorithm, instance.predictions, instance.oracle)  # type: ignore[arg-type]
    else:
        res = simulate_machines(algorithm, instance.predictions, instance.oracle,  # type: ignore[arg-type]
                                instance.speeds)
    return np.asarray(res.sizes, dtype=float).copy(), np.asarray(instance.predictions,
                                                                  dtype=float).copy()


def thm41_bound(eta: float) -> float:
    """Thm 4.1's lower bound on the smoothness of any deterministic algorithm at error ``η``.

    ``η`` for ``η ≤ η*``; ``2`` for ``η ≥ 1 + √3``.  In between the paper's piecewise ``λ(η)``
    was not retrieved; since the smoothness ``s(η)`` is a sup over a set of instances that
    grows with ``η``, every lower bound is non-decreasing in ``η``, so ``η*`` is returned there
    (valid, not tight).
    """
    if not (math.isfinite(eta) and eta >= 1.0):
        raise ValueError(f"eta: expected an error >= 1, got {eta}")
    star = eta_star()
    if eta <= star:
        return float(eta)
    return 2.0 if eta >= 1.0 + math.sqrt(3.0) else star


def thm41_instance(eta: float, n: int, p: float = 1.0,
                   delta: float = DEFAULT_DELTA) -> LowerBoundInstance:
    """Thm 4.1's family on ``n`` jobs (plus the tiny one); bound :func:`thm41_bound`."""
    if not (math.isfinite(eta) and eta > 1.0):
        raise ValueError(f"eta: expected an error > 1, got {eta}")
    if n < 2:
        raise ValueError(f"n: expected at least 2 jobs, got {n}")
    if not (0 < delta < p / eta):
        raise ValueError(f"delta: expected 0 < delta < p/eta = {p / eta}, got {delta}")
    pred = np.r_[np.full(n, float(p)), delta]
    return LowerBoundInstance(pred, Thm41Adversary(n, eta, p, delta), bound=thm41_bound(eta),
                              eta=eta)


# -- Thm 5.1 ---------------------------------------------------------------------------------

def thm51_bound(eta: float) -> float:
    """``max{1 + (⌊η²⌋-1)/⌊η²⌋, 1 + (η²-1)/⌈η²⌉}`` (Thm 5.1)."""
    if not (math.isfinite(eta) and eta >= 1.0):
        raise ValueError(f"eta: expected an error >= 1, got {eta}")
    e2 = eta * eta
    lo, hi = math.floor(e2), math.ceil(e2)
    return max(1 + (lo - 1) / lo, 1 + (e2 - 1) / hi)


def _thm51_variant(eta: float) -> tuple[int, float]:
    """``(m, L)`` of the variant attaining :func:`thm51_bound`."""
    e2 = eta * eta
    lo, hi = math.floor(e2), math.ceil(e2)
    floor_val = 1 + (lo - 1) / lo
    ceil_val = 1 + (e2 - 1) / hi
    if lo >= 2 and floor_val >= ceil_val:
        return lo, float(lo)
    return hi, e2


class Thm51Adversary:
    """Unit jobs until one remains; the last gets ``L`` (see module docstring)."""

    def __init__(self, m: int, big: float, delta: float = DEFAULT_DELTA) -> None:
        self.m, self.big, self.delta = m, big, delta
        self.n_main = m * (m - 1) + 1

    def bind(self, progress: Progress) -> None:
        progress.commit(self.n_main, self.delta)

    def thresholds(self) -> np.ndarray:
        thr = np.ones(self.n_main + 1)
        thr[self.n_main] = math.inf
        return thr

    def on_threshold(self, job: int, progress: Progress) -> None:
        open_ = np.flatnonzero(~progress.committed[: self.n_main])
        progress.commit(job, self.big if open_.size == 1 else 1.0)
        open_ = np.flatnonzero(~progress.committed[: self.n_main])
        if open_.size == 1:  # the last one: its size is now forced
            progress.commit(int(open_[0]), self.big)

    def next_time(self) -> float:
        return math.inf

    def on_time(self, progress: Progress) -> None:
        return None


def thm51_instance(eta: float, delta: float = DEFAULT_DELTA) -> LowerBoundInstance:
    """Thm 5.1's family for error ``η``: ``m`` identical machines, ``m(m-1)+1`` jobs + tiny."""
    if not (math.isfinite(eta) and eta > 1.0):
        raise ValueError(f"eta: expected an error > 1, got {eta}")
    m, big = _thm51_variant(eta)
    adv = Thm51Adversary(m, big, delta)
    pred = np.r_[np.full(adv.n_main, float(eta)), delta]
    return LowerBoundInstance(pred, adv, bound=thm51_bound(eta), eta=eta, speeds=np.ones(m))


def thm51_seed(algorithm: object, eta: float, m: int, n: int, unit: float = 1.0,
               delta: float = DEFAULT_DELTA) -> tuple[np.ndarray, np.ndarray] | None:
    """Thm 5.1's construction on ``m`` identical machines, realised against ``algorithm`` and
    padded with tiny exact jobs to ``n`` jobs, as a static ``(true, pred)`` pair.

    ``m(m-1)+1`` jobs predicted ``η·unit``, unit jobs except the last to reach one unit of work,
    which gets ``L = min(η², m)·unit`` (the larger of the two variants that fits ``m``
    machines), plus ``n - m(m-1) - 1`` exact jobs of size ``δ·unit``.  ``None`` when it does not
    fit: fewer than ``m(m-1)+2`` jobs, or ``η² ≤ m - 1`` (no ``L`` in ``(m-1, m]`` within the
    error ``η``).
    """
    if not (math.isfinite(eta) and eta > 1.0):
        raise ValueError(f"eta: expected an error > 1, got {eta}")
    if m < 2:
        raise ValueError(f"m: expected at least 2 machines, got {m}")
    big = min(eta * eta, float(m))
    if n < m * (m - 1) + 2 or big <= m - 1:
        return None
    adv = Thm51Adversary(m, big, delta)
    pred = np.r_[np.full(adv.n_main, float(eta)), delta]
    inst = LowerBoundInstance(pred, adv, bound=thm51_bound(eta), eta=eta, speeds=np.ones(m))
    true, pred = realized(inst, algorithm)
    pad = n - true.size
    true = np.r_[true, np.full(pad, delta)] * unit
    pred = np.r_[pred, np.full(pad, delta)] * unit
    return true, pred


def thm51_opt(m: int, big: float, delta: float = DEFAULT_DELTA) -> float:
    """OPT of the final Thm 5.1 instance: ``m(m-1)`` unit jobs, one of size ``L ∈ (m-1, m]``,
    and ``δ``.  Putting ``L`` with any unit job costs ``L + 1 > m``, so ``L`` shares its machine
    only with ``δ`` (or not) and the other ``m-1`` machines take ``m`` units each:
    ``OPT = min(max(m, L+δ), m+δ)``.  Cross-checked against the exact solver in the tests."""
    if not (m - 1 < big <= m):
        raise ValueError(f"big: expected a size in (m-1, m] = ({m - 1}, {m}], got {big}")
    return float(min(max(m, big + delta), m + delta))


# -- Thm 6.1 ---------------------------------------------------------------------------------

def thm61_speeds(k: int, delta: float = 1e-3) -> np.ndarray:
    """Speeds of the Thm 6.1 family: group ``i`` has ``2^(2k-2i-1)`` machines of speed ``2^i``,
    fastest first, then one machine of speed ``δ``."""
    groups = [np.full(2 ** (2 * k - 2 * i - 1), 2.0 ** i) for i in range(k - 1, -1, -1)]
    return np.r_[np.concatenate(groups), delta]


class Thm61Adversary:
    """Sizes ``2^0, 2^1, …`` handed out in increasing order to the jobs that reach them first."""

    def __init__(self, k: int, delta: float = 1e-3) -> None:
        self.k, self.delta = k, delta
        self.counts = [2 ** (2 * k - 2 * i - 1) for i in range(k)]
        self.n_main = sum(self.counts)
        self.level = 0

    def bind(self, progress: Progress) -> None:
        progress.commit(self.n_main, self.delta)

    def thresholds(self) -> np.ndarray:
        thr = np.full(self.n_main + 1, 2.0 ** self.level)
        thr[self.n_main] = math.inf
        return thr

    def on_threshold(self, job: int, progress: Progress) -> None:
        progress.commit(job, 2.0 ** self.level)
        self.counts[self.level] -= 1
        while self.level < self.k - 1 and self.counts[self.level] == 0:
            self.level += 1

    def next_time(self) -> float:
        return math.inf

    def on_time(self, progress: Progress) -> None:
        return None


def thm61_bound(k: int) -> float:
    """``⌈log₂ η⌉`` with ``η = 2^((k-1)/2)``, i.e. ``⌈(k-1)/2⌉``."""
    return float(math.ceil((k - 1) / 2))


def thm61_instance(k: int, delta: float = 1e-3) -> LowerBoundInstance:
    """Thm 6.1's family with ``k`` groups (``η = 2^((k-1)/2)``); ``OPT = 1``."""
    if k < 2:
        raise ValueError(f"k: expected at least 2 groups, got {k}")
    if not (0 < delta < 1):
        raise ValueError(f"delta: expected a value in (0, 1), got {delta}")
    eta = 2.0 ** ((k - 1) / 2)
    adv = Thm61Adversary(k, delta)
    pred = np.r_[np.full(adv.n_main, eta), delta]
    return LowerBoundInstance(pred, adv, bound=thm61_bound(k), eta=eta,
                              speeds=thm61_speeds(k, delta))


def thm61_opt(sizes: np.ndarray, speeds: np.ndarray) -> float:
    """OPT of a finished Thm 6.1 instance: the group-matching assignment's makespan, certified
    optimal when it equals the lower bound ``Σ p* / Σ s`` (raises otherwise)."""
    p = np.sort(np.asarray(sizes, dtype=float))
    s = np.sort(np.asarray(speeds, dtype=float))
    if p.size != s.size:
        raise ValueError(f"sizes: expected one job per machine ({s.size}), got {p.size}")
    matched = float((p / s).max())  # i-th smallest job on i-th slowest machine
    lower = float(p.sum() / s.sum())
    if not math.isclose(matched, lower, rel_tol=1e-9):
        raise ValueError(f"sizes: not a Thm 6.1 instance (matching {matched} != bound {lower})")
    return matched
