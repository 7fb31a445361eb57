"""Progress output: a redrawn bar on a terminal, throttled plain lines elsewhere."""

from __future__ import annotations

import io

from optzoo.experiment.progress import Progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_gets_a_redrawn_bar_with_eta():
    out = _Tty()
    bar = Progress("x [quick]", total=4, done=1, stream=out)
    bar.update()
    bar.close()
    frames = out.getvalue().split("\r")[1:]
    assert frames[0].startswith("x [quick] [") and "1/4" in frames[0]
    assert "2/4" in frames[1] and "eta" in frames[1] and "elapsed" in frames[1]
    assert out.getvalue().endswith("\n")


def test_pipe_gets_plain_lines_and_always_the_last_one():
    out = io.StringIO()
    bar = Progress("x [smoke]", total=3, stream=out, interval=3600)
    for _ in range(3):
        bar.update()
    lines = out.getvalue().splitlines()
    assert lines[0] == "x [smoke]: 3 trials, 0 already done"
    assert lines[-1].startswith("x [smoke]: 3/3 trials")
    assert "\r" not in out.getvalue()
    assert len(lines) == 3  # first update prints, the middle one is throttled, the last prints


def test_disabled_prints_nothing():
    out = _Tty()
    bar = Progress("x", total=2, stream=out, enabled=False)
    bar.update()
    bar.close()
    assert out.getvalue() == ""
