"""LPPT -- Longest Predicted Processing Time first (Bampis, Kononov, Lucarelli, Pascual, ISAAC
2023; tighter analysis by Chen & Tan, IPL 2025 / arXiv 2504.10945).

List scheduling whose list is the jobs in non-increasing prediction (ties by id): whenever a
machine is idle, start the longest-predicted job not yet started.  Chen & Tan's bound for ``m``
identical machines and error ``α``: ``1 + (m-1)α²/(3m)`` for ``α ≤ sqrt(3m/(m+2))``, then
``1 + α²/2`` up to ``α ≤ sqrt((3m-2)/m)``, then ``2 - 1/m`` (:func:`chen_tan_bound`), a reference
curve for the reproduction.  Being a list schedule it never exceeds ``2 - 1/m``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from optzoo.predictions.scheduling.list_scheduling import ListScheduling
from optzoo.predictions.scheduling.simulator import JobView


class LPPT(ListScheduling):
    """List scheduling in non-increasing predicted size."""

    def order(self, jobs: Sequence[JobView]) -> list[int]:
        return sorted(range(len(jobs)), key=lambda j: (-jobs[j].prediction, j))


def chen_tan_bound(alpha: float, m: int) -> float:
    """Chen & Tan's competitive ratio of LPPT on ``m`` identical machines at error ``alpha``."""
    if alpha < 1:
        raise ValueError(f"alpha: expected an error >= 1, got {alpha}")
    if m < 1:
        raise ValueError(f"m: expected >= 1 machines, got {m}")
    a2 = alpha * alpha
    if alpha <= math.sqrt(3 * m / (m + 2)):
        return 1 + (m - 1) * a2 / (3 * m)
    if alpha <= math.sqrt((3 * m - 2) / m):
        return 1 + a2 / 2
    return 2 - 1 / m
