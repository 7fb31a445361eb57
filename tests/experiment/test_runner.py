"""The runner: determinism, resume, SIGKILL mid-run, Ray equals local, reports."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from optzoo.errors import ConfigError
from optzoo.experiment.backends import execute
from optzoo.experiment.runner import run
from optzoo.experiment.store import ResultStore


def _metrics_by_key(outdir: Path) -> dict[str, dict]:
    return {r["key"]: r["metrics"] for r in map(json.loads, (outdir / "trials.jsonl").open())}


def test_worker_is_prepared_once_with_one_thread(monkeypatch):
    # issue 29: the first trial of a process limits BLAS/OpenMP and torch to one thread (the
    # runner runs one trial per core); later trials leave the process as they find it
    import torch
    from threadpoolctl import threadpool_info

    from optzoo.experiment import backends

    monkeypatch.setattr(backends, "_PREPARED", False)
    old = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        backends.prepare_worker()
        assert torch.get_num_threads() == 1
        assert all(lib["num_threads"] == 1 for lib in threadpool_info())
        torch.set_num_threads(2)
        backends.prepare_worker()  # once per process: a no-op now
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(old)


def test_trial_is_deterministic_given_its_seed():
    t = {"method": "hit-or-miss", "problem": "pi", "seed": 7,
         "params": {"samples": 500, "sleep": 0.0}}
    assert execute("_selftest", t, "cpu")[0] == execute("_selftest", t, "cpu")[0]


def test_torch_global_rng_is_seeded_per_trial(monkeypatch):
    # library code draws from torch's global generator (BoTorch restarts, HF sampling): a
    # trial must not see what the worker's earlier trials left in it
    import dataclasses
    import types

    import torch

    from optzoo import registry

    repro = dataclasses.replace(registry.get("_selftest").load(),
                                run_trial=lambda trial, device: {"u": float(torch.rand(()))})
    monkeypatch.setattr(registry, "get", lambda slug: types.SimpleNamespace(load=lambda: repro))
    t = {"method": "hit-or-miss", "problem": "pi", "seed": 7, "params": {"samples": 5}}
    first = execute("_selftest", t, "cpu")[0]
    torch.rand(100)  # an earlier trial's draws
    assert execute("_selftest", t, "cpu")[0] == first
    assert execute("_selftest", {**t, "seed": 8}, "cpu")[0] != first


def test_torch_is_seeded_when_the_trial_imports_it_first():
    # a reproduction that imports torch inside run_trial: the worker's first trial must not
    # draw from torch's fixed default seed while later ones draw from the seeded generator
    code = """
import dataclasses, sys, types
from optzoo import registry
from optzoo.experiment.backends import execute
assert "torch" not in sys.modules
def draw(trial, device):
    import torch
    return {"u": float(torch.rand(()))}
repro = dataclasses.replace(registry.get("_selftest").load(), run_trial=draw)
registry.get = lambda slug: types.SimpleNamespace(load=lambda: repro)
t = {"method": "hit-or-miss", "problem": "pi", "seed": 7, "params": {"samples": 5}}
first = execute("_selftest", t, "cpu")[0]
sys.modules["torch"].rand(100)
print(first == execute("_selftest", t, "cpu")[0])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "True", out.stderr


def test_run_writes_reports_and_resumes(tmp_path):
    first = run("_selftest", "smoke", jobs=1, out=tmp_path, progress=False)
    assert first.ran == 4 and first.skipped == 0
    outdir = tmp_path / "_selftest" / "smoke"
    for name in ("trials.jsonl", "run.json", "report.md", "report.html", "summary.json",
                 "estimates.png"):
        assert (outdir / name).is_file(), name
    summary = json.loads((outdir / "summary.json").read_text())
    assert summary["claims_total"] == 2 and summary["n_trials"] == 4
    assert "data:image/png;base64," in (outdir / "report.html").read_text()
    again = run("_selftest", "smoke", jobs=1, out=tmp_path, progress=False)
    assert again.ran == 0 and again.skipped == 4
    more = run("_selftest", "smoke", seeds=3, jobs=1, out=tmp_path, progress=False)
    assert more.ran == 2 and more.skipped == 4  # only the new seed's trials run


def test_pool_equals_inline(tmp_path):
    run("_selftest", "smoke", jobs=1, out=tmp_path / "a", progress=False)
    run("_selftest", "smoke", jobs=2, out=tmp_path / "b", progress=False)
    assert (_metrics_by_key(tmp_path / "a" / "_selftest" / "smoke")
            == _metrics_by_key(tmp_path / "b" / "_selftest" / "smoke"))


@pytest.mark.parametrize("kwargs,needle", [
    ({"backend": "slurm"}, "backend"), ({"device": "tpu"}, "device"),
    ({"jobs": 0}, "jobs"), ({"seeds": 0}, "seeds"),
])
def test_bad_run_arguments_are_named(tmp_path, kwargs, needle):
    with pytest.raises(ConfigError, match=needle):
        run("_selftest", "smoke", out=tmp_path, progress=False, **kwargs)


@pytest.mark.parametrize("jobs", [1, 2])
def test_resume_after_sigkill(tmp_path, jobs):
    """Kill a run (its whole process group) with SIGKILL mid-way, as a dying machine would;
    also tear the last line as a kill inside ``write`` would.  The rerun must finish every
    trial exactly once with results equal to an uninterrupted run."""
    cmd = [sys.executable, "-m", "optzoo", "reproduce", "_selftest", "--preset", "smoke",
           "--seeds", "6", "--set", "sleep=0.25", "--jobs", str(jobs), "--quiet"]
    killed_out = tmp_path / "killed"
    store = killed_out / "_selftest" / "smoke" / "trials.jsonl"
    proc = subprocess.Popen([*cmd, "--out", str(killed_out)], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if store.exists() and store.read_text().count("\n") >= 3:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = store.read_text().count("\n")
    assert 3 <= done_before < 12, "the kill must land mid-run"
    with store.open("ab") as fh:
        fh.write(b'{"key": "torn-by-the-kill", "metr')

    subprocess.run([*cmd, "--out", str(killed_out)], check=True, capture_output=True)
    lines = store.read_text().splitlines()
    keys = [json.loads(line)["key"] for line in lines]  # every line parses: nothing corrupt
    assert len(keys) == 12 and len(set(keys)) == 12
    assert "torn-by-the-kill" not in keys

    clean_out = tmp_path / "clean"
    subprocess.run([*cmd, "--out", str(clean_out)], check=True, capture_output=True)
    assert _metrics_by_key(killed_out / "_selftest" / "smoke") == _metrics_by_key(
        clean_out / "_selftest" / "smoke")
    assert json.loads((killed_out / "_selftest" / "smoke" / "summary.json").read_text())[
        "n_trials"] == 12


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ray_backend_equals_local(tmp_path):
    """Ray on an existing cluster (``--address``, a loopback head started with ``ray start``)
    and on a local instance gives the results of the local backend.  One test, run in order:
    ``ray stop`` must not hit another test's Ray."""
    import ray

    ray_cli = str(Path(sys.executable).parent / "ray")
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}  # a loopback test cluster, no token
    port = _free_port()
    subprocess.run([ray_cli, "start", "--head", f"--port={port}", "--num-cpus=2",
                    "--include-dashboard=false", "--disable-usage-stats"],
                   check=True, capture_output=True, env=env, timeout=120)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "optzoo", "reproduce", "_selftest", "--preset", "smoke",
             "--backend", "ray", "--address", f"127.0.0.1:{port}", "--quiet",
             "--out", str(tmp_path / "cluster")],
            capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
    finally:
        subprocess.run([ray_cli, "stop", "--force"], capture_output=True, env=env, timeout=120)
    run("_selftest", "smoke", jobs=1, out=tmp_path / "local", progress=False)
    assert (_metrics_by_key(tmp_path / "cluster" / "_selftest" / "smoke")
            == _metrics_by_key(tmp_path / "local" / "_selftest" / "smoke"))

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        for slug in ("_selftest", "decision-metrics", "predictions-smoothness"):
            run(slug, "smoke", backend="ray", out=tmp_path / "ray", progress=False)
            run(slug, "smoke", jobs=1, out=tmp_path / "local", progress=False)
            ray_m = _metrics_by_key(tmp_path / "ray" / slug / "smoke")
            local_m = _metrics_by_key(tmp_path / "local" / slug / "smoke")
            assert ray_m and ray_m == local_m
            assert {json.loads(line)["meta"]["pid"] for line in
                    (tmp_path / "ray" / slug / "smoke" / "trials.jsonl").open()} != {os.getpid()}
    finally:
        ray.shutdown()


def test_unreachable_ray_cluster_is_a_clear_error(tmp_path, monkeypatch):
    """Our wrapping of a failed connection (a real one retries for minutes: simulated here)."""
    import ray

    from optzoo.errors import BackendError

    def refuse(*args, **kwargs):
        raise ConnectionError("Failed to connect to Ray cluster at 127.0.0.1:1\nmore detail")

    monkeypatch.setattr(ray, "init", refuse)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    # the address answers TCP (as a half-up cluster would): ray.init's own failure is wrapped
    monkeypatch.setattr("optzoo.experiment.backends._check_reachable", lambda address: None)
    with pytest.raises(BackendError, match=r"--address 127.0.0.1:1: cannot connect .*at "
                                           r"127.0.0.1:1\);"):
        run("_selftest", "smoke", backend="ray", address="127.0.0.1:1", out=tmp_path,
            progress=False)


def test_report_command_rebuilds_from_the_store(tmp_path):
    from optzoo.cli import main

    run("_selftest", "smoke", jobs=1, out=tmp_path, progress=False)
    outdir = tmp_path / "_selftest" / "smoke"
    (outdir / "report.html").unlink()
    (outdir / "summary.json").unlink()
    assert main(["report", str(outdir)]) == 0
    assert (outdir / "report.html").is_file()
    assert len(ResultStore(outdir / "trials.jsonl")) == 4
    assert main(["report", str(tmp_path)]) == 2  # not a run folder


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failing_trial_loses_no_finished_result(tmp_path, monkeypatch, jobs):
    monkeypatch.setenv("OPTZOO_SELFTEST_FAIL_SEED", "3")
    with pytest.raises(RuntimeError, match="seed 3 fails on purpose"):
        run("_selftest", "smoke", seeds=5, jobs=jobs, out=tmp_path, progress=False)
    store = ResultStore(tmp_path / "_selftest" / "smoke" / "trials.jsonl")
    finished = len(store)
    assert finished >= 1 and all(r.trial.seed != 3 for r in store.results())
    monkeypatch.delenv("OPTZOO_SELFTEST_FAIL_SEED")
    again = run("_selftest", "smoke", seeds=5, jobs=jobs, out=tmp_path, progress=False)
    assert again.skipped == finished and again.ran == 10 - finished


def test_seed_start_runs_fresh_seeds_and_keeps_the_default_keys(tmp_path):
    from optzoo import registry
    from optzoo.experiment.runner import expected_trials, resolve_config

    repro = registry.get("_selftest").load()
    default = resolve_config(repro, "smoke")
    # the default seeds' keys are those of the reproduction's own trials, unshifted
    assert [k for k, _ in expected_trials("_selftest", repro, default)] == [
        t.key("_selftest") for t in repro.trials(default)]
    shifted = resolve_config(repro, "smoke", seed_start=10)
    assert sorted({t.seed for _, t in expected_trials("_selftest", repro, shifted)}) == [10, 11]
    assert "seed_start" not in shifted.to_dict()  # reproductions hash to_dict into params

    outcome = run("_selftest", "smoke", jobs=1, out=tmp_path, progress=False, seed_start=10)
    assert sorted({r.trial.seed for r in outcome.results}) == [10, 11]
    info = json.loads((outcome.outdir / "run.json").read_text())
    assert info["seed_start"] == 10
    # a rebuilt report reads the same shifted trials (no "missing trials" error)
    proc = subprocess.run([sys.executable, "-m", "optzoo", "report", str(outcome.outdir)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    data = json.loads((outcome.outdir / "summary.json").read_text())
    assert data["seed_start"] == 10 and data["n_trials"] == 4
    with pytest.raises(ConfigError, match="--seed-start"):
        resolve_config(repro, "smoke", seed_start=-1)


def test_quick_report_is_evidence_and_smoke_is_not(tmp_path):
    smoke = run("_selftest", "smoke", jobs=1, out=tmp_path, progress=False)
    quick = run("_selftest", "quick", jobs=1, out=tmp_path, progress=False)
    s = json.loads((smoke.outdir / "summary.json").read_text())
    q = json.loads((quick.outdir / "summary.json").read_text())
    assert s["evidence"] is False and "smoke — not evidence" in (smoke.outdir / "report.html"
                                                                 ).read_text()
    assert q["evidence"] is True and "not evidence" not in (quick.outdir / "report.md").read_text()
    for claim in q["claims"]:
        assert claim["held"] == (claim["status"] == "held")
        assert {"test", "effect", "ci", "n", "margin"} <= set(claim["verdict"])


def test_two_processes_on_one_out_never_duplicate_a_trial(tmp_path):
    cmd = [sys.executable, "-m", "optzoo", "reproduce", "_selftest", "--preset", "smoke",
           "--jobs", "1", "--quiet", "--set", "sleep=0.5", "--out", str(tmp_path)]
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run_json = tmp_path / "_selftest" / "smoke" / "run.json"
    deadline = time.monotonic() + 60
    while not run_json.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    second = subprocess.run(cmd, capture_output=True, text=True, check=False)
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert second.returncode == 1
    assert "another optzoo process" in second.stderr and "Traceback" not in second.stderr
    lines = [json.loads(x) for x in (run_json.parent / "trials.jsonl").open()]
    assert len(lines) == len({x["key"] for x in lines}) == 4


def test_index_survives_a_truncated_summary(tmp_path):
    from optzoo import registry
    from optzoo.report import write_index

    run("_selftest", "smoke", jobs=1, out=tmp_path, progress=False)
    (tmp_path / "_selftest" / "smoke" / "summary.json").write_text("")  # an old, killed write
    page = write_index(tmp_path, [registry.get("_selftest")], "smoke").read_text()
    assert "unreadable summary.json" in page
    # rerunning rebuilds it atomically
    run("_selftest", "smoke", jobs=1, out=tmp_path, progress=False)
    data = json.loads((tmp_path / "_selftest" / "smoke" / "summary.json").read_text())
    assert data["claims_total"] == 2


@pytest.mark.parametrize("args, needle, code", [
    (["--out", ""], "--out", 2),
    (["--set", "sleep=inf"], "finite", 2),
    (["--seeds", "100000000000"], "--seeds", 2),
])
def test_bad_cli_inputs_are_one_line_errors(tmp_path, args, needle, code):
    base = [sys.executable, "-m", "optzoo", "reproduce", "_selftest", "--preset", "smoke",
            "--quiet", "--jobs", "1"]
    if "--out" not in args:
        base += ["--out", str(tmp_path)]
    proc = subprocess.run(base + args, capture_output=True, text=True, check=False,
                          cwd=tmp_path)
    assert proc.returncode == code and needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_an_out_path_that_is_a_file_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = subprocess.run([sys.executable, "-m", "optzoo", "reproduce", "_selftest", "--preset",
                           "smoke", "--quiet", "--out", str(blocker)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode in (1, 2) and "Traceback" not in proc.stderr
    assert str(blocker) in proc.stderr


def test_an_unreachable_ray_address_fails_fast(tmp_path):
    """A real connection attempt to a closed loopback port: a one-line error in seconds, not
    Ray's minutes of retries."""
    from optzoo.errors import BackendError

    start = time.monotonic()
    with pytest.raises(BackendError, match="127.0.0.1:1: cannot connect"):
        run("_selftest", "smoke", backend="ray", address="127.0.0.1:1", out=tmp_path,
            progress=False)
    assert time.monotonic() - start < 15


def _selftest_items(prefix: str, sleeps: list[float]) -> list[tuple[str, dict]]:
    return [(f"{prefix}{i}", {"method": "hit-or-miss", "problem": "pi", "seed": i,
                              "params": {"samples": 200, "sleep": s}})
            for i, s in enumerate(sleeps)]


def test_groups_share_the_workers_and_the_next_starts_before_the_last_round_ends():
    from optzoo.experiment.backends import run_local_groups

    # A: three 1.5 s trials on 2 workers, so its last round leaves a worker idle; B's two
    # short trials fill it: B is done long before A's third trial (run one after another, B
    # would start only after it)
    groups = iter([("A", "_selftest", _selftest_items("a", [1.5, 1.5, 1.5])),
                   ("B", "_selftest", _selftest_items("b", [0.05, 0.05]))])
    events = list(run_local_groups(groups, "cpu", 2))
    kinds = [(e[0], e[1]) for e in events]
    assert kinds.count(("result", "A")) == 3 and kinds.count(("result", "B")) == 2
    assert kinds.index(("done", "B")) < max(i for i, k in enumerate(kinds) if k == ("result", "A"))
    assert kinds[-1] == ("done", "A")
    a_pids = {e[4]["pid"] for e in events if e[:2] == ("result", "A")}
    b_pids = {e[4]["pid"] for e in events if e[:2] == ("result", "B")}
    assert not a_pids & b_pids  # each group in its own processes, as runs one after another


def test_a_failing_group_does_not_stop_the_others(monkeypatch):
    from optzoo.experiment.backends import run_local_groups

    monkeypatch.setenv("OPTZOO_SELFTEST_FAIL_SEED", "1")
    groups = iter([("A", "_selftest", _selftest_items("a", [0.0, 0.0, 0.0, 0.0])),
                   ("B", "_selftest", [(f"b{i}", {"method": "quarter-circle", "problem": "pi",
                                                  "seed": s, "params": {"samples": 200,
                                                                        "sleep": 0.0}})
                                       for i, s in enumerate((0, 2, 3))]),
                   ("C", "_selftest", [])])
    events = list(run_local_groups(groups, "cpu", 2))
    errors = [e for e in events if e[0] == "error"]
    assert len(errors) == 1 and errors[0][1] == "A" and "seed 1 fails" in str(errors[0][2])
    assert ("done", "B") in [e[:2] for e in events] and ("done", "C") in [e[:2] for e in events]
    assert sum(e[:2] == ("result", "B") for e in events) == 3
    # A's trials that finished are yielded, the failing one is not
    assert all(e[2] != "a1" for e in events if e[:2] == ("result", "A"))


def test_run_all_equals_one_run_per_paper(tmp_path):
    from optzoo.experiment.runner import run_all

    slugs = ["_selftest", "decision-metrics"]
    together = dict(run_all(slugs, "smoke", jobs=2, out=tmp_path / "all", progress=False))
    assert set(together) == set(slugs)
    for slug in slugs:
        alone = run(slug, "smoke", jobs=1, out=tmp_path / "one", progress=False)
        outcome = together[slug]
        assert not isinstance(outcome, Exception), outcome
        assert outcome.ran == alone.ran and outcome.summary.claims == alone.summary.claims
        assert _metrics_by_key(tmp_path / "all" / slug / "smoke") == _metrics_by_key(
            tmp_path / "one" / slug / "smoke")
    again = dict(run_all(slugs, "smoke", jobs=2, out=tmp_path / "all", progress=False))
    assert all(o.ran == 0 and o.skipped == together[s].ran for s, o in again.items())


def test_run_all_reports_a_paper_that_cannot_open_and_runs_the_rest(tmp_path):
    from optzoo.experiment.runner import run_all
    from optzoo.experiment.store import RunLock

    with RunLock(tmp_path / "_selftest" / "smoke"):  # another process holds this run
        out = dict(run_all(["_selftest", "decision-metrics"], "smoke", jobs=2, out=tmp_path,
                           progress=False))
    assert "another optzoo process" in str(out["_selftest"])
    assert out["decision-metrics"].ran > 0
