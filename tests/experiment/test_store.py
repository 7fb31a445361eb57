"""The result store: durable appends, torn-tail repair, corruption detection."""

from __future__ import annotations

import json

import pytest

from optzoo.errors import StoreError
from optzoo.experiment import Result, Trial
from optzoo.experiment.store import ResultStore


def _result(seed: int) -> Result:
    return Result(Trial("m", "p", seed, {"x": seed}), {"v": seed * 1.5}, {"seconds": 0.1})


def test_append_and_reload(tmp_path):
    store = ResultStore(tmp_path / "runs" / "t.jsonl")
    for s in range(3):
        store.append(f"k{s}", "slug", _result(s))
    store.append("k1", "slug", _result(99))  # a key is recorded once; the first result wins
    again = ResultStore(tmp_path / "runs" / "t.jsonl")
    assert again.keys() == {"k0", "k1", "k2"}
    assert [r.metrics["v"] for r in again.results(["k2", "k1", "missing"])] == [3.0, 1.5]
    lines = (tmp_path / "runs" / "t.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line)["slug"] == "slug" for line in lines)


def test_torn_last_line_is_discarded_and_file_repaired(tmp_path):
    path = tmp_path / "t.jsonl"
    store = ResultStore(path)
    store.append("k0", "s", _result(0))
    store.append("k1", "s", _result(1))
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"key": "k2", "trial": {"meth')  # killed mid-write
    repaired = ResultStore(path)
    assert repaired.keys() == {"k0", "k1"}
    assert repaired.discarded_tail.startswith(b'{"key": "k2"')
    assert path.read_bytes() == whole
    repaired.append("k2", "s", _result(2))
    assert ResultStore(path).keys() == {"k0", "k1", "k2"}


def test_corrupt_line_in_the_middle_raises(tmp_path):
    path = tmp_path / "t.jsonl"
    store = ResultStore(path)
    store.append("k0", "s", _result(0))
    path.write_bytes(path.read_bytes() + b"garbage\n")
    # A complete but invalid line is corruption, not a torn write: refuse, lose nothing.
    with pytest.raises(StoreError, match="line 2"):
        ResultStore(path)
    assert b"garbage" in path.read_bytes()
