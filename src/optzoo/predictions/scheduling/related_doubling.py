"""Round-based doubling for ``Q | online-time-nclv, pmtn-restart | C_max`` -- a RECONSTRUCTION.

The paper (Zhao & Zomaya, ICLR 2026, §6) proves the lower bound ``⌈log₂ η⌉`` (Thm 6.1) and
matches it with the authors' earlier ``O(min{log η, log m})`` algorithm (Zhao, Li, Zomaya,
"Uniform Machine Scheduling with Predictions", ICAPS 2022).  Only that paper's abstract was
retrieved: an offline "improved 2-relaxed decision procedure" on predicted sizes, an online
algorithm for a known ``η``, and a robust extension for an unknown ``η``.  Its internals are NOT
known here; this module is our reconstruction of that outline, and its numbers must not be
presented as the ICAPS algorithm's.

Known ``η`` (``eta=float``): every job has a size guess ``g_j``, initially ``p_j/η ≤ p*_j``.
Rounds: the unfinished jobs are assigned by LPT on the guesses (each job, largest guess first,
to the machine where it would finish earliest -- a 2-relaxed decision procedure, since LPT on
related machines is within a factor 2 of the optimum of the guesses); each machine runs its
jobs one after the other, giving job ``j`` a slot of ``g_j / s_i``; a job still running when its
slot ends is killed (restart model: its work is lost) and its guess doubles, capped at
``η p_j ≥ p*_j``.  When every machine has used up its round, the next round starts.  A job's
guess stays ``≤ 2 p*_j`` (or at the cap), so each round's LPT optimum is ``O(OPT)`` and a job
fails at most ``⌈log₂ η²⌉`` times: ``O(log η)`` rounds of ``O(OPT)`` each.

Unknown ``η`` (``eta=None``): an error guess ``η̂ = 2`` replaces ``η``; when a job fails at its
cap ``η̂ p_j`` the guess is squared (``η̂ ← η̂²``) and the caps of all jobs grow with it.  This is
a reconstruction of the "robust extension" by the standard guess-and-double device; we claim no
bound for it.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence

import numpy as np

from optzoo.predictions.scheduling.opt import lpt_assignment
from optzoo.predictions.scheduling.simulator import JobView

_TOL = 1e-9


class RelatedDoubling:
    """Round-based guess doubling with LPT rounds (reconstruction, see module docstring).

    Args:
        eta: the known prediction error (``>= 1``), or ``None`` for the unknown-error variant.
    """

    def __init__(self, eta: float | None = None) -> None:
        if eta is not None and not (math.isfinite(eta) and eta >= 1.0):
            raise ValueError(f"eta: expected a finite error >= 1 or None, got {eta}")
        self.eta = eta

    def start(self, jobs: Sequence[JobView], speeds: np.ndarray) -> None:
        self._pred = np.array([j.prediction for j in jobs])
        self._speeds = speeds
        self._eta_hat = self.eta if self.eta is not None else 2.0
        self._guess = self._pred / self._eta_hat
        m = speeds.size
        self._queues: list[deque[int]] = [deque() for _ in range(m)]
        self._cur = np.full(m, -1)
        self._slot_end = np.full(m, math.inf)
        self.rounds = 0

    def _cap(self) -> np.ndarray:
        return self._pred * self._eta_hat

    def _new_round(self, jobs: Sequence[JobView]) -> None:
        left = [j for j in range(len(jobs)) if not jobs[j].done]
        _, where = lpt_assignment(self._guess[left], speeds=self._speeds)
        order = np.argsort(-self._guess[left], kind="stable")  # LPT order within each machine
        for r in order:
            self._queues[int(where[r])].append(left[r])
        self.rounds += 1

    def decide(self, now: float, jobs: Sequence[JobView], running: Sequence[int | None]):
        changes: dict[int, int | None] = {}
        tol = _TOL * max(1.0, now)
        busy = np.flatnonzero(self._cur >= 0)
        for i in busy:
            j = int(self._cur[i])
            if jobs[j].done:
                self._cur[i] = -1
                self._slot_end[i] = math.inf
            elif self._slot_end[i] <= now + tol:  # slot used up: kill, double the guess
                cap = self._cap()[j]
                if self.eta is None and self._guess[j] >= cap * (1 - _TOL):
                    self._eta_hat = self._eta_hat ** 2
                    cap = self._cap()[j]
                self._guess[j] = min(2.0 * self._guess[j], cap)
                self._cur[i] = -1
                self._slot_end[i] = math.inf
                changes[i] = None
        if (self._cur < 0).all() and not any(self._queues):
            self._new_round(jobs)
        for i in np.flatnonzero(self._cur < 0):
            q = self._queues[i]
            while q and jobs[q[0]].done:
                q.popleft()
            if q:
                j = q.popleft()
                changes[int(i)] = j
                self._cur[i] = j
                self._slot_end[i] = now + self._guess[j] / self._speeds[i]
        wake = float(self._slot_end.min())
        return changes, (wake if math.isfinite(wake) else None)
