"""The command line: fast listing, one-line errors with exit code 2, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from optzoo import registry
from optzoo.cli import main


def _optzoo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "optzoo", *args], capture_output=True,
                          text=True, timeout=120)


def test_help_and_list_answer_in_under_a_second():
    for args in (["--help"], ["list"]):
        start = time.perf_counter()
        proc = _optzoo(*args)
        assert proc.returncode == 0
        assert time.perf_counter() - start < 1.0, args
    assert "numpy" not in _optzoo("list").stderr


def test_list_shows_every_paper_with_status(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for p in registry.PAPERS:
        assert p.slug in out
    implemented = sum(p.status == "implemented" for p in registry.PAPERS)
    assert f"{implemented} implemented, {35 - implemented} planned" in out


# Some paper that is still only planned (the list shrinks as reproductions land).
_PLANNED = next(p.slug for p in registry.PAPERS if p.status == "planned")


@pytest.mark.parametrize("args,needle", [
    (["reproduce", "no-such-paper"], "unknown paper 'no-such-paper'"),
    (["reproduce", _PLANNED], f"{_PLANNED}: the reproduction is planned"),
    (["reproduce", "_selftest", "--set", "bogus=1"], "unknown override key 'bogus'"),
    (["reproduce", "_selftest", "--set", "samples=many"], "samples='many': expected"),
    (["reproduce", "_selftest", "--set", "samples"], "expected key=value"),
    (["reproduce", "predictions", "--set", "seeds=3"], "name a single slug"),
])
def test_user_errors_are_one_line_exit_2(args, needle):
    proc = _optzoo(*args)
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args,needle", [
    (["reproduce", "_selftest", "--preset", "huge"], "invalid choice: 'huge'"),
    (["reproduce", "_selftest", "--seeds", "0"], "--seeds"),
    (["reproduce", "_selftest", "--device", "tpu"], "invalid choice: 'tpu'"),
    (["reproduce"], "required: target"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
])
def test_argparse_errors_are_one_line_exit_2(args, needle):
    proc = _optzoo(*args)
    assert proc.returncode == 2 and needle in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_cuda_without_gpu_is_a_clear_error(tmp_path):
    proc = _optzoo("reproduce", "_selftest", "--preset", "smoke", "--device", "cuda",
                   "--out", str(tmp_path))
    assert proc.returncode == 2
    assert "cuda" in proc.stderr and "Traceback" not in proc.stderr


def test_reproduce_cli_end_to_end(tmp_path):
    proc = _optzoo("reproduce", "_selftest", "--preset", "smoke", "--jobs", "1",
                   "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "2 held, 0 not held, 0 inconclusive (smoke — not evidence)" in proc.stdout
    assert "4/4 trials" in proc.stderr  # plain progress lines when not a terminal
    assert (tmp_path / "_selftest" / "smoke" / "report.html").is_file()
    assert (tmp_path / "index.html").is_file()  # a one-paper run refreshes the index too


def test_seed_start_option(tmp_path):
    proc = _optzoo("reproduce", "_selftest", "--preset", "smoke", "--jobs", "1", "--quiet",
                   "--seed-start", "5", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    stored = [json.loads(line) for line in
              (tmp_path / "_selftest" / "smoke" / "trials.jsonl").open()]
    assert sorted({r["trial"]["seed"] for r in stored}) == [5, 6]
    bad = _optzoo("reproduce", "_selftest", "--seed-start", "-1", "--out", str(tmp_path))
    assert bad.returncode == 2 and "--seed-start" in bad.stderr
