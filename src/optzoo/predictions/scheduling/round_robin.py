"""Round Robin (processor sharing): the prediction-free baseline.

Every unfinished job receives the same rate ``min(1, capacity / #unfinished)``.  On one machine
RR is 2-competitive for ``Σ C_j`` (Motwani, Phillips, Torng 1994), which is the robustness that
SPJF's ``η²`` must be compared with (Zhao & Zomaya, ICLR 2026, §4).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from optzoo.predictions.scheduling.simulator import JobView


class RoundRobin:
    """Equal sharing among unfinished jobs."""

    def start(self, jobs: Sequence[JobView], capacity: float) -> None:
        self._capacity = capacity

    def decide(self, now: float, jobs: Sequence[JobView]) -> np.ndarray:
        alive = np.array([not j.done for j in jobs])
        rates = np.zeros(len(jobs))
        k = int(alive.sum())
        if k:
            rates[alive] = min(1.0, self._capacity / k)
        return rates
