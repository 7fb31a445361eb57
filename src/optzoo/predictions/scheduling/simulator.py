"""Event-driven non-clairvoyant scheduling simulators with fixed or adversarial (lazy) sizes.

Setting of Zhao & Zomaya (ICLR 2026, OpenReview Zcn4n57lHg), §3: ``n`` jobs are present at
time 0; the scheduler sees each job's prediction ``p_j`` up front, but its true size ``p*_j``
only when the job completes.  Two machine models are simulated:

* :class:`SharingSimulator` -- preemption with resumption as processor sharing: the algorithm
  sets a rate per job (each ≤ ``max_rate``, summing to ≤ ``capacity``).  ``capacity = 1`` is
  problem (i) ``1 | online-time-nclv, pmtn | Σ C_j``; ``capacity = m`` with ``max_rate = 1`` is
  ``P | pmtn | C_max`` (resume), the model of Bampis et al.'s PPRR.
* :class:`RestartSimulator` -- machines with known speeds ``s_i`` and preemption with RESTART:
  each machine runs at most one job; a job that is taken off its machine (or moved) loses all
  its work.  Identical speeds give problem (ii) ``P | pmtn-restart | C_max``; arbitrary speeds
  give problem (iii) ``Q | pmtn-restart | C_max``.

Non-clairvoyance is enforced by the API: algorithms receive only :class:`JobView` objects, whose
:attr:`JobView.size` raises :class:`~optzoo.errors.ClairvoyanceError` until the job is done; the
true sizes live in a private ledger that views cannot reach.  The algorithm is consulted at
time 0, at every completion and at wake-up times it asked for -- never at events it could not
observe (an adversary's internal decisions).

Sizes come from a :class:`SizeOracle`.  :class:`FixedSizes` commits every size at time 0.  A
*lazy adversary* (the adaptive lower bounds of Thms 4.1, 5.1, 6.1) commits a size only when it
must: each uncommitted job carries a work *threshold* at which the adversary is consulted, and
the adversary may also ask to be consulted at given times.  Commitments are checked for
consistency with what the algorithm has already observed: a committed size must be at least the
job's current work, and must exceed the work of any earlier (interrupted) attempt -- otherwise
the job would already have completed.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from optzoo.errors import ClairvoyanceError
from optzoo.predictions.scheduling.error import check_sizes

_REL_TOL = 1e-9


class AdversaryError(ValueError):
    """A size oracle broke consistency (a size below observed work, or no decision when due)."""


class _Board:
    """What the scheduler may know: work, starts, completions, and sizes of finished jobs.

    Deliberately holds no reference to the size ledger: views read only this board.
    """

    def __init__(self, n: int) -> None:
        self.now = 0.0
        self.work0 = np.zeros(n)  # work of the current attempt at time ``since``
        self.since = np.zeros(n)
        self.rate = np.zeros(n)  # work per unit time right now (rate or machine speed)
        self.started = np.zeros(n, dtype=bool)
        self.done = np.zeros(n, dtype=bool)
        self.completion = np.full(n, np.nan)
        self.revealed = np.full(n, np.nan)  # true size, written only at completion
        self.machine = np.full(n, -1, dtype=int)
        self.attempts = np.zeros(n, dtype=int)

    def work_now(self) -> np.ndarray:
        return self.work0 + (self.now - self.since) * self.rate


class JobView:
    """A scheduler's view of one job.

    Attributes:
        id: the job index.
        prediction: the predicted size ``p_j``.
    """

    __slots__ = ("_board", "id", "prediction")

    def __init__(self, board: _Board, job_id: int, prediction: float) -> None:
        self._board = board
        self.id = job_id
        self.prediction = prediction

    @property
    def processed(self) -> float:
        """Work received so far in the current attempt (restart model: since the last start)."""
        b = self._board
        return float(b.work0[self.id] + (b.now - b.since[self.id]) * b.rate[self.id])

    @property
    def started(self) -> bool:
        return bool(self._board.started[self.id])

    @property
    def done(self) -> bool:
        return bool(self._board.done[self.id])

    @property
    def completion_time(self) -> float | None:
        return float(self._board.completion[self.id]) if self._board.done[self.id] else None

    @property
    def size(self) -> float:
        """The true size -- only once the job has completed.

        Raises:
            ClairvoyanceError: the job is not done yet.
        """
        if not self._board.done[self.id]:
            raise ClairvoyanceError(
                f"job {self.id}: its true size is revealed only at completion (non-clairvoyant)")
        return float(self._board.revealed[self.id])

    def __repr__(self) -> str:
        state = "done" if self.done else ("started" if self.started else "waiting")
        return f"JobView(id={self.id}, prediction={self.prediction:g}, {state})"


class Progress:
    """The adversary's side of the simulation: observed work, and the commit/threshold API."""

    def __init__(self, sim: _Simulation) -> None:
        self._sim = sim

    @property
    def now(self) -> float:
        return self._sim._board.now

    @property
    def predictions(self) -> np.ndarray:
        return self._sim._pred

    def work(self) -> np.ndarray:
        """Current-attempt work of every job (a copy)."""
        return self._sim._board.work_now()

    @property
    def max_prior(self) -> np.ndarray:
        """Largest work any earlier, interrupted attempt of each job reached."""
        return self._sim._max_prior

    @property
    def done(self) -> np.ndarray:
        return self._sim._board.done

    @property
    def committed(self) -> np.ndarray:
        return ~np.isnan(self._sim._sizes)

    def commit(self, job: int, size: float) -> None:
        """Fix job ``job``'s true size.

        Raises:
            AdversaryError: the size is not finite and positive, is below the job's current
                work, does not exceed an earlier attempt's work, or the job is already fixed.
        """
        sim = self._sim
        if not math.isfinite(size) or size <= 0:
            raise AdversaryError(f"size of job {job}: expected a finite positive value, got {size}")
        if not np.isnan(sim._sizes[job]):
            raise AdversaryError(f"job {job}: size already committed ({sim._sizes[job]})")
        w = float(sim._board.work_now()[job])
        tol = _REL_TOL * max(1.0, size)
        if size < w - tol:
            raise AdversaryError(f"job {job}: size {size} is below its current work {w}")
        if size <= sim._max_prior[job] + tol and size > w + tol:
            raise AdversaryError(
                f"job {job}: size {size} would have completed an earlier attempt that reached "
                f"{sim._max_prior[job]}")
        sim._sizes[job] = size



@runtime_checkable
class SizeOracle(Protocol):
    """Source of true sizes.  ``bind`` is called once at time 0, before the scheduler acts."""

    def bind(self, progress: Progress) -> None: ...

    def thresholds(self) -> np.ndarray:
        """Per job, the work level of its current attempt at which the oracle must be consulted
        (read for uncommitted jobs only; ``inf`` for none)."""
        ...

    def on_threshold(self, job: int, progress: Progress) -> None:
        """Job ``job`` reached its threshold: commit its size or raise its threshold."""
        ...

    def next_time(self) -> float:
        """Next time the oracle wants to be consulted (``inf`` for none)."""
        ...

    def on_time(self, progress: Progress) -> None: ...


class FixedSizes:
    """An oblivious oracle: all true sizes are fixed up front (and hidden from the scheduler)."""

    def __init__(self, sizes: object) -> None:
        self._sizes = check_sizes(sizes, "sizes")

    def bind(self, progress: Progress) -> None:
        if self._sizes.shape != progress.predictions.shape:
            raise ValueError(f"sizes: expected shape {progress.predictions.shape} (one per "
                             f"prediction), got {self._sizes.shape}")
        for j, s in enumerate(self._sizes):
            progress.commit(j, float(s))

    def thresholds(self) -> np.ndarray:
        return np.full(self._sizes.size, math.inf)

    def on_threshold(self, job: int, progress: Progress) -> None:  # never called
        raise AssertionError("fixed sizes have no thresholds")

    def next_time(self) -> float:
        return math.inf

    def on_time(self, progress: Progress) -> None:
        return None


@dataclass(frozen=True)
class ScheduleResult:
    """Outcome of a simulation.

    Attributes:
        sizes: true sizes (as committed by the oracle), shape ``(n,)``.
        predictions: predictions, shape ``(n,)``.
        completion: completion times, shape ``(n,)``.
        events: number of event times processed.
        restarts: number of attempts that were interrupted (restart model; 0 for sharing).
    """

    sizes: np.ndarray
    predictions: np.ndarray
    completion: np.ndarray
    events: int
    restarts: int

    @property
    def total_completion(self) -> float:
        return float(self.completion.sum())

    @property
    def makespan(self) -> float:
        return float(self.completion.max())


class SharingScheduler(Protocol):
    """A processor-sharing policy: rates per job at each decision time."""

    def start(self, jobs: Sequence[JobView], capacity: float) -> None: ...

    def decide(self, now: float, jobs: Sequence[JobView]) -> object:
        """Rates (array of length n), or ``(rates, wake_at)``."""
        ...


class MachineScheduler(Protocol):
    """A restart-model policy: which job runs on which machine."""

    def start(self, jobs: Sequence[JobView], speeds: np.ndarray) -> None: ...

    def decide(self, now: float, jobs: Sequence[JobView],
               running: Sequence[int | None]) -> object:
        """Changes ``{machine: job or None}``, or ``(changes, wake_at)``.

        Machines not named keep their job; a job moved or removed loses its work (restart).
        """
        ...


def _split_decision(out: object) -> tuple[object, float]:
    if isinstance(out, tuple):
        if len(out) != 2:
            raise ValueError(f"decision: expected (decision, wake_at), got a {len(out)}-tuple")
        return out[0], (math.inf if out[1] is None else float(out[1]))
    return out, math.inf


class _Simulation(abc.ABC):
    """Shared event loop of both machine models."""

    def __init__(self, predictions: object, sizes: object) -> None:
        self._pred = check_sizes(predictions, "predictions")
        n = self._pred.size
        if isinstance(sizes, SizeOracle):
            self._oracle = sizes
        else:
            self._oracle = FixedSizes(sizes)
        self._board = _Board(n)
        self._sizes = np.full(n, np.nan)  # private ledger of committed true sizes
        self._thresholds = np.full(n, math.inf)
        self._max_prior = np.zeros(n)
        self._progress = Progress(self)
        self._views = [JobView(self._board, j, float(self._pred[j])) for j in range(n)]
        self._wake = math.inf
        self._events = 0
        self._restarts = 0

    # -- hooks of the two models ---------------------------------------------------------
    @abc.abstractmethod
    def _first_decision(self) -> None: ...

    @abc.abstractmethod
    def _decide(self) -> None: ...

    @abc.abstractmethod
    def _on_complete(self, jobs: np.ndarray) -> None: ...

    # -- event loop ----------------------------------------------------------------------
    def _set_wake(self, wake: float) -> None:
        if wake <= self._board.now:
            raise ValueError(f"wake_at: expected a time after now ({self._board.now}), got {wake}")
        self._wake = wake

    def _refresh_thresholds(self) -> None:
        thr = np.asarray(self._oracle.thresholds(), dtype=float)
        if thr.shape != self._pred.shape:
            raise AdversaryError(f"thresholds: expected shape {self._pred.shape}, got {thr.shape}")
        self._thresholds[:] = thr

    def _complete_due(self) -> bool:
        b = self._board
        work = b.work_now()
        sizes = self._sizes
        with np.errstate(invalid="ignore"):
            due = ~b.done & ~np.isnan(sizes) & (work >= sizes - _REL_TOL * np.maximum(1.0, sizes))
        if not due.any():
            return False
        idx = np.flatnonzero(due)
        b.done[idx] = True
        b.completion[idx] = b.now
        b.revealed[idx] = sizes[idx]
        b.work0[idx] = sizes[idx]
        b.rate[idx] = 0.0
        self._on_complete(idx)
        return True

    def _next_job_event(self) -> float:
        b = self._board
        moving = ~b.done & (b.rate > 0)
        if not moving.any():
            return math.inf
        target = np.where(np.isnan(self._sizes), self._thresholds, self._sizes)[moving]
        t = b.since[moving] + (target - b.work0[moving]) / b.rate[moving]
        return float(t.min())

    def _advance(self, t: float) -> None:
        b = self._board
        moving = b.rate > 0
        b.work0[moving] += (t - b.since[moving]) * b.rate[moving]
        b.since[:] = t
        b.now = t

    def run(self, max_events: int | None = None) -> ScheduleResult:
        b = self._board
        n = self._pred.size
        limit = max_events if max_events is not None else 200 * n + 10_000
        self._oracle.bind(self._progress)
        self._refresh_thresholds()
        self._complete_due()
        self._first_decision()
        while not b.done.all():
            self._events += 1
            if self._events > limit:
                raise RuntimeError(f"simulation exceeded {limit} events (algorithm livelock?)")
            t_job = self._next_job_event()
            t_adv = self._oracle.next_time()
            t = min(t_job, t_adv, self._wake)
            if not math.isfinite(t):
                raise RuntimeError(
                    f"deadlock at t={b.now}: {int((~b.done).sum())} jobs unfinished, none "
                    "progressing, and no wake-up requested")
            t = max(t, b.now)
            self._advance(t)
            tol_t = _REL_TOL * max(1.0, t)
            # Adversary decisions first: a threshold reached, then a decision time.
            work = b.work_now()
            uncommitted = np.isnan(self._sizes) & ~b.done
            with np.errstate(invalid="ignore"):
                hit = uncommitted & (b.rate > 0) & (
                    work >= self._thresholds - _REL_TOL * np.maximum(1.0, np.abs(work)))
            for j in np.flatnonzero(hit):
                if not np.isnan(self._sizes[j]):
                    continue  # committed by an earlier callback of this batch
                self._oracle.on_threshold(int(j), self._progress)
            if t_adv <= t + tol_t:
                self._oracle.on_time(self._progress)
                if self._oracle.next_time() <= t + tol_t:
                    raise AdversaryError("oracle: next_time must move past the current time")
            if hit.any() or t_adv <= t + tol_t:
                self._refresh_thresholds()
                stuck = hit & np.isnan(self._sizes) & (
                    self._thresholds <= work + _REL_TOL * np.maximum(1.0, np.abs(work)))
                if stuck.any():
                    j = int(np.flatnonzero(stuck)[0])
                    raise AdversaryError(
                        f"job {j}: oracle neither committed a size nor raised the threshold "
                        f"above the current work {work[j]}")
            completed = self._complete_due()
            woke = self._wake <= t + tol_t
            if woke:
                self._wake = math.inf
            if (completed or woke) and not b.done.all():
                self._decide()
        return ScheduleResult(sizes=self._sizes.copy(), predictions=self._pred.copy(),
                              completion=b.completion.copy(), events=self._events,
                              restarts=self._restarts)


class SharingSimulator(_Simulation):
    """Preemptive-resume processor sharing (Σ C_j on one machine, or m machines with migration).

    Args:
        algorithm: a :class:`SharingScheduler`.
        predictions: predicted sizes, shape ``(n,)``.
        sizes: true sizes ``(n,)`` or a :class:`SizeOracle` (lazy adversary).
        capacity: total rate available (1 for a single machine, m for m machines).
        max_rate: largest rate one job may receive (1: a job runs on one machine at a time).
    """

    def __init__(self, algorithm: SharingScheduler, predictions: object, sizes: object,
                 capacity: float = 1.0, max_rate: float = 1.0) -> None:
        super().__init__(predictions, sizes)
        if not (math.isfinite(capacity) and capacity > 0):
            raise ValueError(f"capacity: expected a positive number, got {capacity}")
        if not (math.isfinite(max_rate) and max_rate > 0):
            raise ValueError(f"max_rate: expected a positive number, got {max_rate}")
        self._alg = algorithm
        self._capacity = float(capacity)
        self._max_rate = float(max_rate)

    def _first_decision(self) -> None:
        self._alg.start(self._views, self._capacity)
        self._decide()

    def _decide(self) -> None:
        b = self._board
        rates, wake = _split_decision(self._alg.decide(b.now, self._views))
        r = np.asarray(rates, dtype=float)
        n = self._pred.size
        if r.shape != (n,):
            raise ValueError(f"rates: expected shape ({n},), got {r.shape}")
        tol = 1e-9 * max(1.0, self._capacity)
        if not np.all(np.isfinite(r)) or np.any(r < -tol):
            raise ValueError(f"rates: expected finite non-negative values, got {r.tolist()}")
        if np.any(r > self._max_rate + tol):
            raise ValueError(f"rates: each rate must be <= max_rate={self._max_rate}")
        if r.sum() > self._capacity + tol:
            raise ValueError(f"rates: sum {r.sum()} exceeds capacity {self._capacity}")
        if np.any(r[b.done] > tol):
            raise ValueError("rates: finished jobs must get rate 0")
        r = np.clip(r, 0.0, self._max_rate)
        r[b.done] = 0.0
        b.rate[:] = r
        b.started |= r > 0
        if math.isfinite(wake):
            self._set_wake(wake)

    def _on_complete(self, jobs: np.ndarray) -> None:
        return None


class RestartSimulator(_Simulation):
    """Machines with known speeds; a job interrupted or moved restarts from scratch.

    Args:
        algorithm: a :class:`MachineScheduler`.
        predictions: predicted sizes, shape ``(n,)``.
        sizes: true sizes ``(n,)`` or a :class:`SizeOracle` (lazy adversary).
        speeds: machine speeds, shape ``(m,)`` (all ones: identical machines).
    """

    def __init__(self, algorithm: MachineScheduler, predictions: object, sizes: object,
                 speeds: object) -> None:
        super().__init__(predictions, sizes)
        self._speeds = check_sizes(speeds, "speeds")
        self._alg = algorithm
        self._running: list[int | None] = [None] * self._speeds.size

    def _first_decision(self) -> None:
        self._alg.start(self._views, self._speeds.copy())
        self._decide()

    def _decide(self) -> None:
        b = self._board
        changes, wake = _split_decision(
            self._alg.decide(b.now, self._views, tuple(self._running)))
        if not isinstance(changes, Mapping):
            raise ValueError(f"changes: expected a mapping machine -> job or None, got "
                             f"{type(changes).__name__}")
        m = self._speeds.size
        n = self._pred.size
        for i, j in changes.items():
            if not (isinstance(i, (int, np.integer)) and 0 <= i < m):
                raise ValueError(f"changes: machine {i!r} is not in 0..{m - 1}")
            if j is not None and not (isinstance(j, (int, np.integer)) and 0 <= j < n):
                raise ValueError(f"changes: job {j!r} on machine {i} is not in 0..{n - 1}")
            if j is not None and b.done[j]:
                raise ValueError(f"changes: job {j} on machine {i} is already done")
        new = {int(i): (None if j is None else int(j)) for i, j in changes.items()
               if self._running[int(i)] != (None if j is None else int(j))}
        # Every job may run on one machine only, after the changes.
        starting = [j for j in new.values() if j is not None]
        if len(starting) != len(set(starting)):
            raise ValueError("changes: a job would run on two machines at once")
        for j in starting:
            k = int(b.machine[j])
            if k >= 0 and k not in new:
                raise ValueError(f"changes: job {j} is still running on machine {k}")
        work = b.work_now()
        for i in new:  # stops first: the machine's current job loses its work
            cur = self._running[i]
            if cur is not None:
                self._max_prior[cur] = max(self._max_prior[cur], work[cur])
                b.work0[cur] = 0.0
                b.rate[cur] = 0.0
                b.machine[cur] = -1
                self._restarts += 1
                self._running[i] = None
        for i, j in new.items():
            if j is None:
                continue
            b.work0[j] = 0.0
            b.since[j] = b.now
            b.rate[j] = self._speeds[i]
            b.machine[j] = i
            b.started[j] = True
            b.attempts[j] += 1
            self._running[i] = j
        if math.isfinite(wake):
            self._set_wake(wake)

    def _on_complete(self, jobs: np.ndarray) -> None:
        b = self._board
        for j in jobs:
            i = b.machine[j]
            if i >= 0:
                self._running[i] = None
                b.machine[j] = -1


def simulate_sharing(algorithm: SharingScheduler, predictions: object, sizes: object,
                     capacity: float = 1.0, max_rate: float = 1.0) -> ScheduleResult:
    """Run ``algorithm`` under processor sharing; see :class:`SharingSimulator`."""
    return SharingSimulator(algorithm, predictions, sizes, capacity, max_rate).run()


def simulate_machines(algorithm: MachineScheduler, predictions: object, sizes: object,
                      speeds: object) -> ScheduleResult:
    """Run ``algorithm`` on machines with restart; see :class:`RestartSimulator`."""
    return RestartSimulator(algorithm, predictions, sizes, speeds).run()
