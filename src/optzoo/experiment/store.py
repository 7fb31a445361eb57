"""Append-only result store: one JSON line per finished trial, keyed by the trial's hash.

Every line is written whole (``os.write`` is looped until every byte is out, then the file is
``fsync``-ed), so a run killed at any moment leaves at worst a torn *last* line.  A write that
fails part-way (a full disk, a read-only file system) truncates the file back to its last
complete line and raises :class:`~optzoo.errors.StoreError` naming the path: a torn line never
sits in the middle of the file, and every finished trial before it is kept.  Opening the store
detects a torn tail (no final newline) and truncates it away; a malformed line anywhere else,
a record with missing or mistyped fields, or a line whose key is not the hash of its trial
(tampering, or a bug) is corruption and raises :class:`StoreError` rather than being believed.

:class:`RunLock` makes a run directory exclusive to one process (two ``optzoo reproduce``
processes on one ``--out`` would otherwise both run every trial), and :func:`atomic_write_text`
writes reports so that a kill leaves the old file or the new one, never a truncated one.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import tempfile
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
            rec = self._parse(raw, i + 1)
            self._records.setdefault(rec["key"], rec)

    def _parse(self, raw: bytes, lineno: int) -> dict[str, Any]:
        where = f"{self.path}: line {lineno}"
        hint = "(only a torn last line can be repaired); move the file away to start over"
        try:
            rec = json.loads(raw)
        except ValueError:
            raise StoreError(f"{where} is not a valid trial record {hint}") from None
        if not isinstance(rec, dict) or not {"key", "slug", "trial", "metrics"} <= rec.keys():
            raise StoreError(f"{where} is not a valid trial record: expected the fields key, "
                             f"slug, trial, metrics {hint}")
        if not isinstance(rec["key"], str) or not isinstance(rec["slug"], str) \
                or not isinstance(rec["metrics"], dict) or not isinstance(rec["trial"], dict):
            raise StoreError(f"{where}: key and slug must be strings, trial and metrics objects")
        try:
            trial = Trial.from_dict(rec["trial"])
            expected = trial.key(rec["slug"])
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise StoreError(f"{where}: its trial is malformed ({err!r}) {hint}") from None
        if expected != rec["key"]:
            raise StoreError(f"{where}: stored key {rec['key']} is not the hash of its trial "
                             f"({expected}); the file was edited or corrupted {hint}")
        if rec.get("meta") is not None and not isinstance(rec["meta"], dict):
            raise StoreError(f"{where}: meta must be an object")
        return rec

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
        line = (json.dumps(rec, sort_keys=True, allow_nan=True) + "\n").encode()
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as err:
            raise StoreError(f"{self.path}: cannot open the result store for writing "
                             f"({err.strerror}); finished trials are kept") from None
        try:
            start = os.fstat(fd).st_size
            try:
                _write_all(fd, line)
                os.fsync(fd)
            except OSError as err:
                # never leave a torn line that a later append would bury mid-file
                try:
                    os.ftruncate(fd, start)
                    os.fsync(fd)
                except OSError:
                    pass
                raise StoreError(f"{self.path}: writing a trial failed ({err.strerror}); "
                                 f"{len(self._records)} finished trials are kept") from None
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


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is written (a full disk may write part of a buffer)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:
            raise OSError(errno.EIO, "write returned 0 bytes")
        view = view[n:]


def atomic_write_text(path: Path | str, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same folder, fsync and rename, so
    that readers (and a run killed mid-write) see the old file or the new one, never a partial
    one.  Raises :class:`StoreError` naming the path on any OS error (full disk, read-only)."""
    path = Path(path)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            _write_all(fd, text.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        tmp = None
    except OSError as err:
        raise StoreError(f"{path}: cannot write ({err.strerror or err})") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


class RunLock:
    """An exclusive lock on a run directory, held while a process runs or summarises it.

    A second process that asks for the same directory gets a :class:`StoreError` naming the
    holder's pid at once (``wait=False``) or blocks until the first is done (``wait=True``).
    The lock is an ``flock`` on ``<dir>/.lock``: the kernel releases it when its holder dies,
    so a killed run never leaves a stale lock behind.
    """

    def __init__(self, directory: Path | str, *, wait: bool = False):
        self.path = Path(directory) / ".lock"
        self.wait = wait
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:
            raise StoreError(f"{self.path.parent}: cannot use as a run folder "
                             f"({err.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if self.wait else fcntl.LOCK_NB))
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise StoreError(f"{self.path.parent}: another optzoo process (pid {holder}) is "
                             f"running this reproduction; wait for it to finish or use another "
                             f"--out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
