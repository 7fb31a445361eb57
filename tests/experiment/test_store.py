"""The result store: durable appends, torn-tail repair, corruption detection."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys

import pytest

from optzoo.errors import StoreError
from optzoo.experiment import Result, Trial
from optzoo.experiment.store import ResultStore, RunLock, atomic_write_text


def _result(seed: int) -> Result:
    return Result(Trial("m", "p", seed, {"x": seed}), {"v": seed * 1.5}, {"seconds": 0.1})


def _k(seed: int, slug: str = "s") -> str:
    """The store's key of ``_result(seed)``: the hash of its trial (anything else is corrupt)."""
    return _result(seed).trial.key(slug)


def test_append_and_reload(tmp_path):
    store = ResultStore(tmp_path / "runs" / "t.jsonl")
    for s in range(3):
        store.append(_k(s, "slug"), "slug", _result(s))
    store.append(_k(1, "slug"), "slug", _result(1))  # a key is recorded once
    again = ResultStore(tmp_path / "runs" / "t.jsonl")
    assert again.keys() == {_k(0, "slug"), _k(1, "slug"), _k(2, "slug")}
    assert [r.metrics["v"] for r in again.results([_k(2, "slug"), _k(1, "slug"), "missing"])
            ] == [3.0, 1.5]
    lines = (tmp_path / "runs" / "t.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line)["slug"] == "slug" for line in lines)


def test_torn_last_line_is_discarded_and_file_repaired(tmp_path):
    path = tmp_path / "t.jsonl"
    store = ResultStore(path)
    store.append(_k(0), "s", _result(0))
    store.append(_k(1), "s", _result(1))
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"key": "k2", "trial": {"meth')  # killed mid-write
    repaired = ResultStore(path)
    assert repaired.keys() == {_k(0), _k(1)}
    assert repaired.discarded_tail.startswith(b'{"key": "k2"')
    assert path.read_bytes() == whole
    repaired.append(_k(2), "s", _result(2))
    assert ResultStore(path).keys() == {_k(0), _k(1), _k(2)}


def test_corrupt_line_in_the_middle_raises(tmp_path):
    path = tmp_path / "t.jsonl"
    store = ResultStore(path)
    store.append(_k(0), "s", _result(0))
    path.write_bytes(path.read_bytes() + b"garbage\n")
    # A complete but invalid line is corruption, not a torn write: refuse, lose nothing.
    with pytest.raises(StoreError, match="line 2"):
        ResultStore(path)
    assert b"garbage" in path.read_bytes()


def test_a_line_whose_key_is_not_its_trials_hash_is_corruption(tmp_path):
    path = tmp_path / "t.jsonl"
    store = ResultStore(path)
    trial = Trial("m", "p", 0, {"x": 0})
    store.append(trial.key("s"), "s", Result(trial, {"v": 1.0}))
    rec = json.loads(path.read_text())
    rec["trial"]["params"]["x"] = 5  # tampered: the metrics now claim to be another trial's
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(StoreError, match="not the hash of its trial"):
        ResultStore(path)


@pytest.mark.parametrize("record", [
    {"key": "k", "slug": "s", "metrics": {}},                       # no trial
    {"key": 3, "slug": "s", "trial": {}, "metrics": {}},            # mistyped key
    {"key": "k", "slug": "s", "trial": {"method": "m"}, "metrics": {}},  # trial lacks fields
    {"key": "k", "slug": "s", "trial": {"method": "m", "problem": "p", "seed": "x"},
     "metrics": {}},                                                # seed not a number
    {"key": "k", "slug": "s", "trial": [], "metrics": {}},          # trial not an object
])
def test_records_with_missing_or_mistyped_fields_raise_store_error(tmp_path, record):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(StoreError, match="line 1"):
        ResultStore(path)


def test_a_partial_write_is_completed(tmp_path, monkeypatch):
    import optzoo.experiment.store as store_mod

    real = os.write
    monkeypatch.setattr(store_mod.os, "write", lambda fd, data: real(fd, bytes(data)[:7]))
    path = tmp_path / "t.jsonl"
    store = ResultStore(path)
    trial = Trial("m", "p", 1, {"x": 1})
    store.append(trial.key("s"), "s", Result(trial, {"v": 2.0}))
    monkeypatch.undo()
    assert ResultStore(path).keys() == {trial.key("s")}


def test_a_full_disk_keeps_every_finished_trial_and_leaves_no_torn_line(tmp_path, monkeypatch):
    import optzoo.experiment.store as store_mod

    path = tmp_path / "t.jsonl"
    store = ResultStore(path)
    done = [Trial("m", "p", s, {"x": s}) for s in range(3)]
    for t in done:
        store.append(t.key("s"), "s", Result(t, {"v": 1.0}))
    before = path.read_bytes()
    real = os.write
    calls = {"n": 0}

    def full_disk(fd, data):
        calls["n"] += 1
        if calls["n"] == 1:
            return real(fd, bytes(data)[:10])  # part of the line, then ENOSPC
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_mod.os, "write", full_disk)
    t = Trial("m", "p", 9, {"x": 9})
    with pytest.raises(StoreError, match="No space left on device"):
        store.append(t.key("s"), "s", Result(t, {"v": 1.0}))
    monkeypatch.undo()
    assert path.read_bytes() == before  # truncated back: no torn line mid-file
    store.append(t.key("s"), "s", Result(t, {"v": 1.0}))
    assert len(ResultStore(path)) == 4


def test_atomic_write_leaves_the_old_file_when_the_write_fails(tmp_path, monkeypatch):
    import optzoo.experiment.store as store_mod

    target = tmp_path / "summary.json"
    atomic_write_text(target, '{"ok": 1}\n')

    def fail(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_mod.os, "write", fail)
    with pytest.raises(StoreError, match="summary.json"):
        atomic_write_text(target, '{"ok": 2}\n')
    monkeypatch.undo()
    assert target.read_text() == '{"ok": 1}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]  # no temporary left


def test_run_lock_is_exclusive_across_processes(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from optzoo.experiment.store import RunLock\n"
         f"with RunLock({str(tmp_path)!r}):\n    print('locked', flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(StoreError, match=f"pid {holder.pid}"), RunLock(tmp_path):
            pass
    finally:
        holder.kill()
        holder.wait()
    with RunLock(tmp_path):  # the kernel released the dead holder's lock
        pass
