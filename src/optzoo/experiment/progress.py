"""Progress of a run: a live bar on a terminal, plain log lines elsewhere (CI, files)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _hms(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    """Trials done / total, elapsed time and ETA.

    Args:
        label: what is running (the paper's slug and preset).
        total: number of trials of the run, finished ones included.
        done: trials already finished before this run (resumed from the store).
        stream: where to write; a TTY gets a redrawn bar, anything else a line at most every
            ``interval`` seconds and at the end.
        enabled: ``False`` silences it.
    """

    def __init__(self, label: str, total: int, done: int = 0, stream: TextIO | None = None,
                 enabled: bool = True, interval: float = 5.0):
        self.label, self.total, self.done = label, total, done
        self.resumed = done
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.interval = interval
        self.start = time.monotonic()
        self._last_line = -float("inf")
        if enabled and not self.tty:
            self._line(f"{label}: {total} trials, {done} already done")
        self._draw()

    def _line(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def _eta(self) -> str:
        ran = self.done - self.resumed
        left = self.total - self.done
        if ran == 0 or left == 0:
            return "--:--" if left else "00:00"
        return _hms((time.monotonic() - self.start) / ran * left)

    def update(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        if self.tty:
            self._draw()
            return
        elapsed = _hms(time.monotonic() - self.start)
        if (time.monotonic() - self._last_line >= self.interval
                or self.done == self.total):
            self._last_line = time.monotonic()
            self._line(f"{self.label}: {self.done}/{self.total} trials, "
                       f"elapsed {elapsed}, eta {self._eta()}")

    def _draw(self) -> None:
        if not self.tty:
            return
        elapsed = _hms(time.monotonic() - self.start)
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
