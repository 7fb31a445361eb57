"""Progress of a run: a live bar on a terminal, plain log lines elsewhere (CI, files)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


def _hms(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    """Trials done / total, elapsed time and ETA.

    The ETA is the rate of the trials finished *after* the first one (and those finishing
    within 0.1 s of it: a batch of parallel workers), times the trials left.  The first
    finished trial also carries the run's start-up (worker processes, imports, caches), so an
    extrapolation from it alone is far off (a 1-minute ETA for an 8-second run).  Until
    ``warmup_trials`` trials have finished and ``warmup_seconds`` have passed since the first
    one, the ETA reads ``--:--``.

    Example:
        >>> import io
        >>> bar = Progress("demo [smoke]", total=10, stream=io.StringIO())
        >>> bar.update(3)
        >>> bar.done, bar.total
        (3, 10)

    Args:
        label: what is running (the paper's slug and preset).
        total: number of trials of the run, finished ones included.
        done: trials already finished before this run (resumed from the store).
        stream: where to write; a TTY gets a redrawn bar, anything else a line at most every
            ``interval`` seconds and at the end.
        enabled: ``False`` silences it.
        interval: seconds between two plain lines (not on a TTY).
        warmup_trials: trials of this run to finish before an ETA is shown.
        warmup_seconds: seconds after the first finished trial before an ETA is shown.
        clock: the time source (monotonic seconds), replaceable in tests.
    """

    def __init__(self, label: str, total: int, done: int = 0, stream: TextIO | None = None,
                 enabled: bool = True, interval: float = 5.0, warmup_trials: int = 3,
                 warmup_seconds: float = 1.0,
                 clock: Callable[[], float] = time.monotonic):
        if not isinstance(warmup_trials, int) or warmup_trials < 1:
            raise ValueError(f"warmup_trials: expected an integer >= 1, got {warmup_trials!r}")
        if not warmup_seconds >= 0:
            raise ValueError(f"warmup_seconds: expected seconds >= 0, got {warmup_seconds!r}")
        self.label, self.total, self.done = label, total, done
        self.warmup_trials, self.warmup_seconds = warmup_trials, warmup_seconds
        self.clock = clock
        self.batch_seconds = 0.1  # finishes this close to the first belong to its batch
        self._first_finish: float | None = None  # when the first trial of this run finished
        self._first: tuple[float, int] | None = None  # (time, trials done) at the first batch
        self.resumed = done
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.interval = interval
        self.start = self.clock()
        self._last_line = -float("inf")
        if enabled and not self.tty:
            self._line(f"{label}: {total} trials, {done} already done")
        self._draw()

    def _line(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def eta_seconds(self) -> float | None:
        """Seconds left, or ``None`` while there is too little to estimate from."""
        left = self.total - self.done
        if left <= 0:
            return 0.0
        if self._first is None or self.done - self.resumed < self.warmup_trials:
            return None
        t_first, done_first = self._first
        window = self.clock() - t_first
        if window < self.warmup_seconds or self.done == done_first:
            return None
        return window / (self.done - done_first) * left

    def _eta(self) -> str:
        seconds = self.eta_seconds()
        return "--:--" if seconds is None else _hms(seconds)

    def update(self, n: int = 1) -> None:
        self.done += n
        if n > 0:
            now = self.clock()
            # the first finish and those arriving with it (a batch of parallel workers)
            if self._first_finish is None:
                self._first_finish = now
            if now - self._first_finish <= self.batch_seconds:
                self._first = (now, self.done)
        if not self.enabled:
            return
        if self.tty:
            self._draw()
            return
        now = self.clock()
        elapsed = _hms(now - self.start)
        if now - self._last_line >= self.interval or self.done == self.total:
            self._last_line = now
            self._line(f"{self.label}: {self.done}/{self.total} trials, "
                       f"elapsed {elapsed}, eta {self._eta()}")

    def _draw(self) -> None:
        if not self.tty:
            return
        elapsed = _hms(self.clock() - self.start)
        width = 30
        filled = int(width * self.done / max(self.total, 1))
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} "
                          f"elapsed {elapsed} eta {self._eta()}")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()
