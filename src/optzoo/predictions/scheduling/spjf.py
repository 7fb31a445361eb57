"""Shortest Predicted Job First (SPJF) for ``1 | online-time-nclv, pmtn | Σ C_j``.

Zhao & Zomaya (ICLR 2026), Thm 4.2: SPJF -- run jobs to completion in non-decreasing predicted
size -- is ``η²``-smooth.  Proof (checkable): ``Σ C_j = Σ p*_j + Σ_{i before j} p*_i`` while
``OPT = Σ p*_j + Σ_{pairs} min(p*_i, p*_j)``; if ``p_i ≤ p_j`` then
``p*_i ≤ η p_i ≤ η p_j ≤ η² p*_j``, so each pair costs at most ``η²`` times its share of OPT.
The guarantee beats Round Robin's 2 only while ``η² < 2``.

Ties in the predictions are broken by job id, which the Thm 4.1 lower bound exploits (all its
jobs share one prediction).  On ``capacity = m`` machines the ``m`` shortest-predicted unfinished
jobs run at rate 1 each (not used by the paper; kept so the policy is total).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from optzoo.predictions.scheduling.simulator import JobView


class SPJF:
    """Shortest Predicted Job First (non-preemptive order by prediction, ties by id)."""

    def start(self, jobs: Sequence[JobView], capacity: float) -> None:
        self._order = sorted(range(len(jobs)), key=lambda j: (jobs[j].prediction, j))
        self._capacity = capacity
        self._pos = 0

    def decide(self, now: float, jobs: Sequence[JobView]) -> np.ndarray:
        rates = np.zeros(len(jobs))
        while self._pos < len(self._order) and jobs[self._order[self._pos]].done:
            self._pos += 1
        left = self._capacity
        k = self._pos
        while left > 1e-12 and k < len(self._order):
            j = self._order[k]
            if not jobs[j].done:
                rates[j] = min(1.0, left)
                left -= rates[j]
            k += 1
        return rates
