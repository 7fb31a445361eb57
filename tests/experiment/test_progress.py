"""Progress output: a redrawn bar on a terminal, throttled plain lines elsewhere."""

from __future__ import annotations

import io

import pytest

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


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_eta_waits_for_warmup_and_ignores_the_slow_first_trial():
    # 32 trials: the first finishes after 4 s (start-up, imports), the others 0.125 s apart,
    # so the run takes about 8 s. Extrapolating from the first trial alone says 02:04.
    clock = _Clock()
    bar = Progress("x", total=32, stream=io.StringIO(), enabled=False, clock=clock)
    assert bar.eta_seconds() is None
    clock.now = 4.0
    bar.update()
    assert bar.eta_seconds() is None and bar._eta() == "--:--"  # one trial is not a rate
    etas = []
    for _ in range(31):
        clock.now += 0.125
        bar.update()
        etas.append(bar.eta_seconds())
    shown = [(i, e) for i, e in enumerate(etas) if e is not None]
    assert shown, "an ETA appears once warmed up"
    first_index, first_eta = shown[0]
    actual_left = 0.125 * (30 - first_index)
    assert abs(first_eta - actual_left) <= 0.5 * actual_left + 0.5
    assert etas[-1] == 0.0


def test_eta_with_parallel_workers_finishing_in_batches():
    # 8 workers: batches of 8 trials finish together every 2 s after a 3 s start-up.
    clock = _Clock()
    bar = Progress("x", total=40, stream=io.StringIO(), enabled=False, clock=clock)
    clock.now = 3.0
    for _ in range(8):
        bar.update()
    assert bar.eta_seconds() is None  # one burst: no time window to measure a rate over
    clock.now = 5.0
    for _ in range(8):
        bar.update()
    eta = bar.eta_seconds()
    assert eta is not None and 4.0 <= eta <= 12.0  # truly 6 s left (3 batches)


def test_eta_counts_only_trials_of_this_run():
    clock = _Clock()
    bar = Progress("x", total=20, done=10, stream=io.StringIO(), enabled=False, clock=clock)
    for _ in range(5):
        clock.now += 1.0
        bar.update()
    assert bar.eta_seconds() == 4.0 / 4 * 5  # rate after the first: 4 trials in 4 s


def test_eta_appears_for_many_fast_sequential_trials():
    # 0.05 s per trial: later finishes must not all be taken for the first batch
    clock = _Clock()
    bar = Progress("x", total=1000, stream=io.StringIO(), enabled=False, clock=clock)
    for _ in range(100):
        clock.now += 0.05
        bar.update()
    eta = bar.eta_seconds()
    assert eta is not None and abs(eta - 0.05 * 900) < 1.0


def test_bad_warmup_arguments_are_named():
    with pytest.raises(ValueError, match="warmup_trials"):
        Progress("x", total=2, enabled=False, warmup_trials=0)
    with pytest.raises(ValueError, match="warmup_seconds"):
        Progress("x", total=2, enabled=False, warmup_seconds=-1.0)
