"""Prediction-free list scheduling for the restart model (identical or related machines).

Graham's list scheduling: whenever a machine is idle and a job has not been started, start the
next job of a fixed list on it.  Jobs are never interrupted, so no work is lost to restarts.  On
identical machines any such schedule has makespan ``≤ (2 - 1/m) · OPT`` without knowing sizes
(Graham 1966), the robustness reference of Zhao & Zomaya (ICLR 2026, §5).

On related machines idle machines are served fastest first (greedy).  ``min_speed_ratio``
restricts the schedule to machines of speed ``≥ min_speed_ratio · s_max``; with ``1/m`` it drops
machines that together are slower than the fastest one, which costs at most a factor 2 of OPT
and protects against very slow machines (such as the ``δ``-speed machine of Thm 6.1).  That
restricted greedy is this library's prediction-free reference for related machines: the
Shmoys--Wein--Williamson (1995) ``O(log m)`` algorithm named in the brief was not retrieved, so
it is *not* implemented here and no ``O(log m)`` guarantee is claimed for the reference.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import numpy as np

from optzoo.predictions.scheduling.simulator import JobView


class ListScheduling:
    """Start jobs in a fixed order (job id by default) on idle machines, fastest first.

    Args:
        min_speed_ratio: use only machines with speed ``>= min_speed_ratio * max speed``;
            ``"1/m"`` for ``1/m``; ``None`` uses every machine.
    """

    def __init__(self, min_speed_ratio: float | str | None = None) -> None:
        if isinstance(min_speed_ratio, str) and min_speed_ratio != "1/m":
            raise ValueError(f"min_speed_ratio: expected a float in (0, 1], '1/m' or None, "
                             f"got {min_speed_ratio!r}")
        if isinstance(min_speed_ratio, float) and not (0.0 < min_speed_ratio <= 1.0):
            raise ValueError(f"min_speed_ratio: expected a value in (0, 1], got {min_speed_ratio}")
        self.min_speed_ratio = min_speed_ratio

    def order(self, jobs: Sequence[JobView]) -> list[int]:
        """The list: job ids in the order they are started."""
        return list(range(len(jobs)))

    def start(self, jobs: Sequence[JobView], speeds: np.ndarray) -> None:
        self._queue = deque(self.order(jobs))
        ratio = self.min_speed_ratio
        if ratio == "1/m":
            ratio = 1.0 / speeds.size
        usable = np.arange(speeds.size) if ratio is None else np.flatnonzero(
            speeds >= ratio * speeds.max())
        self._machines = usable[np.argsort(-speeds[usable], kind="stable")].tolist()

    def decide(self, now: float, jobs: Sequence[JobView],
               running: Sequence[int | None]) -> dict[int, int | None]:
        changes: dict[int, int | None] = {}
        if not self._queue:
            return changes
        for i in self._machines:
            if running[i] is None:
                changes[i] = self._queue.popleft()
                if not self._queue:
                    break
        return changes
