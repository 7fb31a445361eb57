"""Preferential Round Robin (Purohit, Svitkina, Kumar, NeurIPS 2018), one machine, ``Σ C_j``.

With ``λ ∈ [0, 1]``, the unfinished job of shortest prediction runs at rate ``λ`` (SPJF share)
and every unfinished job, that one included, also gets ``(1 - λ)/k`` (RR share), ``k`` the number
of unfinished jobs.  ``λ = 1`` is SPJF, ``λ = 0`` is RR; Purohit et al. prove it
``min{(1/λ)(1 + 2η_L1/n), 2/(1-λ)}``-competitive.  Zhao & Zomaya's Thm 4.1 analysis shows that
between ``η*`` and ``1 + √3`` the best response to their adversary mixes SPJF and RR in this way;
:class:`PreferentialRoundRobin` is therefore also the "SPJF/RR mixture" of the lower bound.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from optzoo.predictions.scheduling.simulator import JobView


class PreferentialRoundRobin:
    """SPJF at rate ``lam`` plus RR at rate ``1 - lam`` (single machine).

    Args:
        lam: share of the machine given to the shortest-predicted unfinished job, in [0, 1].
    """

    def __init__(self, lam: float = 0.5) -> None:
        if not (0.0 <= lam <= 1.0):
            raise ValueError(f"lam: expected a value in [0, 1], got {lam}")
        self.lam = float(lam)

    def start(self, jobs: Sequence[JobView], capacity: float) -> None:
        if capacity != 1.0:
            raise ValueError(f"capacity: PreferentialRoundRobin is a single-machine policy "
                             f"(capacity 1), got {capacity}")
        self._order = sorted(range(len(jobs)), key=lambda j: (jobs[j].prediction, j))
        self._pos = 0

    def decide(self, now: float, jobs: Sequence[JobView]) -> np.ndarray:
        while self._pos < len(self._order) and jobs[self._order[self._pos]].done:
            self._pos += 1
        alive = np.array([not j.done for j in jobs])
        rates = np.zeros(len(jobs))
        k = int(alive.sum())
        if k:
            rates[alive] = (1.0 - self.lam) / k
            rates[self._order[self._pos]] += self.lam
        return rates
