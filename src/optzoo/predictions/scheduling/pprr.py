"""Predicted Proportional Round Robin (PPRR), Bampis, Kononov, Lucarelli, Pascual, ISAAC 2023.

Reading chosen (the ISAAC paper's text was not retrieved; the abstract names "a variant of the
classical Round Robin algorithm (RR), the Predicted Proportional Round Robin algorithm"): every
unfinished job ``j`` is processed at a rate proportional to its prediction ``p_j``, capped at 1
(one job cannot use two machines at once), with the ``m`` machines fully used -- water-filling:
``r_j = min(1, c · p_j)`` with ``c`` chosen so that ``Σ r_j = min(m, #unfinished)``.  With exact
predictions and no cap all jobs end together at ``Σ p / m``, so PPRR is 1-consistent for the
preemptive makespan ``max(max p, Σ p / m)``.

PPRR needs fractional machine sharing, i.e. preemption with RESUMPTION and migration (``P | pmtn
| C_max``): it runs in :class:`~optzoo.predictions.scheduling.simulator.SharingSimulator` with
``capacity = m``, ``max_rate = 1``, and its ratio is taken against McNaughton's preemptive
optimum. It is not an algorithm for the paper's restart model and is reported as a reference
curve only; no claim of the reproduction rests on it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from optzoo.predictions.scheduling.simulator import JobView


def water_fill(weights: np.ndarray, capacity: float) -> np.ndarray:
    """Rates ``min(1, c · w)`` summing to ``min(capacity, len(w))`` (``w > 0``)."""
    w = np.asarray(weights, dtype=float)
    total = min(capacity, float(w.size))
    rates = np.zeros(w.size)
    free = np.ones(w.size, dtype=bool)
    left = total
    # Cap the largest weights at 1 until the proportional share of the rest fits under 1.
    for j in np.argsort(-w, kind="stable"):
        share = left * w[j] / w[free].sum()
        if share >= 1.0:
            rates[j] = 1.0
            free[j] = False
            left -= 1.0
        else:
            break
    if free.any():
        rates[free] = left * w[free] / w[free].sum()
    return rates


class PPRR:
    """Predicted Proportional Round Robin on ``capacity = m`` machines (resume model)."""

    def start(self, jobs: Sequence[JobView], capacity: float) -> None:
        self._capacity = capacity
        self._pred = np.array([j.prediction for j in jobs])

    def decide(self, now: float, jobs: Sequence[JobView]) -> np.ndarray:
        alive = np.flatnonzero([not j.done for j in jobs])
        rates = np.zeros(len(jobs))
        if alive.size:
            rates[alive] = water_fill(self._pred[alive], self._capacity)
        return rates
