"""Where optzoo keeps what it generates and reuses (zoos, ground-truth tables, reference costs,
pretrained tiny models): ``$OPTZOO_CACHE``, else ``$XDG_CACHE_HOME/optzoo``, else
``~/.cache/optzoo`` — never inside the repository."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path


def cache_dir() -> Path:
    """The root of optzoo's user cache (read at every call, so tests can redirect it)."""
    if os.environ.get("OPTZOO_CACHE"):
        return Path(os.environ["OPTZOO_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "optzoo"


@contextlib.contextmanager
def locked(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_file`` (created with its folder) for the block:
    two processes filling the same cache entry (parallel trials) build it once, the second
    then reads what the first wrote."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
