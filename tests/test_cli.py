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


@pytest.mark.parametrize("args,needle", [
    (["reproduce", "no-such-paper"], "unknown paper 'no-such-paper'"),
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


# --- issue 26: a CLI that helps ---------------------------------------------------------------

def test_version_is_the_installed_package_version():
    from importlib.metadata import version

    proc = _optzoo("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"optzoo {version('optzoo')}\n"


def test_help_shows_examples_and_defaults(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    top = capsys.readouterr().out
    assert "examples:" in top and "optzoo reproduce ham --preset smoke" in top
    assert "--version" in top
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    sub = capsys.readouterr().out
    assert "examples:" in sub
    for shown in ("(default: quick)", "(default: local)", "(default: cpu)", "(default: runs)"):
        assert shown in " ".join(sub.split()), shown
    assert "(default: None)" not in sub and "(default: False)" not in sub


@pytest.mark.parametrize("target,suggestion", [
    ("hamm", "'ham'"),
    ("dr_sac", "'dr-sac'"),
    ("predictons", "'predictions'"),   # an area
    ("HAM", "'ham'"),
])
def test_unknown_target_suggests_the_closest_names(target, suggestion):
    proc = _optzoo("reproduce", target)
    assert proc.returncode == 2
    assert f"unknown paper {target!r}; did you mean {suggestion}" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert "predictions-smoothness, decision-metrics" not in proc.stderr  # no dump of all slugs
    assert "kvda-uct" not in proc.stderr


def test_unknown_target_without_close_name_points_to_list():
    proc = _optzoo("reproduce", "zzzzzz")
    assert proc.returncode == 2
    assert "did you mean" not in proc.stderr and "optzoo list" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_an_area_whose_papers_are_all_planned_exits_2(monkeypatch, tmp_path, capsys):
    """Independent of which areas happen to lack a paper today: mark scaling's papers
    planned and ask for the area."""
    import dataclasses

    planned = tuple(dataclasses.replace(p, reproduction=None) if p.area == "scaling" else p
                    for p in registry.PAPERS)
    monkeypatch.setattr(registry, "PAPERS", planned)
    out = tmp_path / "runs"
    assert main(["reproduce", "scaling", "--preset", "smoke", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "area 'scaling': no implemented paper yet" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()  # nothing ran, no index written


def test_a_planned_paper_exits_2(monkeypatch, capsys):
    import dataclasses

    paper = registry.PAPERS[0]
    slug = paper.slug
    monkeypatch.setitem(registry._BY_SLUG, slug, dataclasses.replace(paper, reproduction=None))
    assert main(["reproduce", slug, "--preset", "smoke"]) == 2
    err = capsys.readouterr().err
    assert f"{slug}: the reproduction is planned" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_list_shows_method_and_module_columns(capsys):
    from pathlib import Path

    import optzoo
    from optzoo.cli import method_module

    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["slug", "status", "area", "method", "module", "title"]
    root = Path(optzoo.__file__).parent
    for p in registry.PAPERS:
        row = next(line for line in lines if line.startswith(p.slug + " "))
        module = method_module(p)
        assert p.method in row and f"  {module}  " in row, p.slug
        if p.status == "implemented":
            rel = Path(*module.split(".")[1:])
            assert (root / rel).with_suffix(".py").is_file() or (root / rel).is_dir(), module
        else:
            assert module == "-"
    assert method_module(registry.get("les")) == "optzoo.bo.les"
    assert method_module(registry.get("f2sa-p")) == "optzoo.bilevel.f2sa"


def _deny_writes_under(root, monkeypatch, code: int) -> None:
    """Make every write-open and folder creation under ``root`` fail with ``code``, as a
    read-only mount (EROFS) or a folder the user may not write (EACCES) would -- also for root,
    whom file modes do not stop."""
    import builtins
    import errno
    import os
    from pathlib import Path

    root = Path(root).resolve()
    real_os_open, real_open, real_mkdir = os.open, builtins.open, os.mkdir
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def under(path) -> bool:
        try:
            return Path(os.fsdecode(path)).resolve().is_relative_to(root)
        except (TypeError, ValueError):
            return False

    def deny(path):
        raise OSError(code, os.strerror(code), os.fsdecode(path))

    def os_open(path, flags, *a, **kw):
        if flags & writing and under(path):
            deny(path)
        return real_os_open(path, flags, *a, **kw)

    def open_(file, mode="r", *a, **kw):
        if isinstance(file, (str, bytes, os.PathLike)) and set(mode) & set("wax+") \
                and under(file):
            deny(file)
        return real_open(file, mode, *a, **kw)

    def mkdir(path, *a, **kw):
        if under(path):
            deny(path)
        return real_mkdir(path, *a, **kw)

    assert code in (errno.EROFS, errno.EACCES)
    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(builtins, "open", open_)
    monkeypatch.setattr(os, "mkdir", mkdir)


@pytest.mark.parametrize("code", ["EROFS", "EACCES"])
def test_unwritable_out_is_one_line_exit_1_and_keeps_finished_trials(code, tmp_path, capsys,
                                                                      monkeypatch):
    import errno

    out = tmp_path / "runs"
    assert main(["reproduce", "_selftest", "--preset", "smoke", "--out", str(out), "--quiet",
                 "--jobs", "1"]) == 0
    stores = sorted(out.rglob("trials.jsonl"))
    assert stores
    before = {p: p.read_bytes() for p in stores}
    capsys.readouterr()
    _deny_writes_under(out, monkeypatch, getattr(errno, code))
    # more seeds: new trials to write into a folder that now refuses every write
    rc = main(["reproduce", "_selftest", "--preset", "smoke", "--seeds", "6", "--out", str(out),
               "--quiet", "--jobs", "1"])
    err = capsys.readouterr().err
    monkeypatch.undo()
    assert rc == 1, err
    assert "Traceback" not in err
    lines = [ln for ln in err.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("optzoo: error:"), err
    assert str(out) in lines[0] and os_strerror(code) in lines[0], lines[0]
    assert {p: p.read_bytes() for p in stores} == before  # nothing finished was lost


def os_strerror(name: str) -> str:
    import errno
    import os

    return os.strerror(getattr(errno, name))


def test_out_folder_the_user_may_not_write(tmp_path):
    """The real thing, where file modes bind: a folder without write permission, written by a
    forked process of an ordinary user (uid 65534 when the test runs as root, whom modes do not
    stop; the test's own user otherwise).  The fork has every module it needs imported already,
    so a checkout in a private folder does not matter."""
    import os
    import stat

    import optzoo.experiment.runner  # noqa: F401  (imported before the fork drops privileges)
    import optzoo.report.render  # noqa: F401

    registry.get("_selftest").load()
    out = tmp_path / "locked"
    out.mkdir()
    out.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH
              | stat.S_IXOTH)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: become the ordinary user, run the command, report its stderr
        code = 99
        try:
            os.close(read)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
            sys.stderr = os.fdopen(write, "w")  # pytest's capture has replaced the old one
            code = main(["reproduce", "_selftest", "--preset", "smoke", "--out",
                         str(out / "runs"), "--quiet", "--jobs", "1"])
        finally:
            sys.stderr.flush()
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as pipe:
        err = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 1, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert "Permission denied" in err and str(out / "runs") in err, err


def test_list_into_a_closed_pipe_has_no_traceback():
    """`optzoo list | head`: the reader is gone before optzoo writes (both ends of the pipe are
    closed here before the child has imported anything), so every write fails with EPIPE."""
    import os
    import subprocess
    import sys

    r, w = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "optzoo", "list"], stdout=w,
                            stderr=subprocess.PIPE, text=True)
    os.close(w)
    os.close(r)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err
