"""Append-only result store: one JSON line per finished trial, keyed by the trial's hash.

Every line is written with a single ``write`` of the whole line, flushed and ``fsync``-ed, so a
run killed at any moment leaves at worst a torn *last* line.  Opening the store detects such a
tail (no final newline, or not valid JSON) and truncates it away; a malformed line anywhere else
is real corruption and raises :class:`~optzoo.errors.StoreError` rather than losing results.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from optzoo.errors import StoreError
from optzoo.experiment.core import Result, Trial


class ResultStore:
    """The ``trials.jsonl`` of one run directory.

    Args:
        path: the JSON-lines file (created with its parent folders if missing).
    """

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._records: dict[str, dict[str, Any]] = {}
        self.discarded_tail = b""
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        complete, _, tail = data.rpartition(b"\n")
        if tail:
            # Bytes after the last newline are a write the kill interrupted: drop them, the
            # trial simply runs again.
            self.discarded_tail = tail
            with open(self.path, "r+b") as fh:
                fh.truncate(len(data) - len(tail))
                os.fsync(fh.fileno())
        if not complete:
            return
        for i, raw in enumerate(complete.split(b"\n")):
            try:
                rec = json.loads(raw)
                if not isinstance(rec, dict) or not {"key", "trial", "metrics"} <= rec.keys():
                    raise ValueError("incomplete record")
            except ValueError:
                raise StoreError(
                    f"{self.path}: line {i + 1} is not a valid trial record "
                    f"(only a torn last line can be repaired); move the file away to start over"
                ) from None
            self._records.setdefault(rec["key"], rec)

    def __contains__(self, key: str) -> bool:
        return key in self._records

    def __len__(self) -> int:
        return len(self._records)

    def keys(self) -> set[str]:
        return set(self._records)

    def append(self, key: str, slug: str, result: Result) -> None:
        """Record a finished trial durably (write, flush, fsync) unless its key is present."""
        if key in self._records:
            return
        rec = {
            "key": key,
            "slug": slug,
            "trial": result.trial.to_dict(),
            "metrics": dict(result.metrics),
            "meta": {"host": socket.gethostname(), **dict(result.meta)},
        }
        line = json.dumps(rec, sort_keys=True, allow_nan=True) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        self._records[key] = json.loads(line)

    def results(self, keys: Iterable[str] | None = None) -> list[Result]:
        """Stored results, in the order of ``keys`` (all, in file order, when ``None``)."""
        wanted = self._records if keys is None else keys
        out = []
        for k in wanted:
            rec = self._records.get(k)
            if rec is not None:
                out.append(Result(Trial.from_dict(rec["trial"]), rec["metrics"], rec["meta"]))
        return out
