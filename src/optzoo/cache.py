"""Where optzoo keeps what it generates and reuses (zoos, ground-truth tables, reference costs,
pretrained tiny models): ``$OPTZOO_CACHE``, else ``$XDG_CACHE_HOME/optzoo``, else
``~/.cache/optzoo`` — never inside the repository."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The root of optzoo's user cache (read at every call, so tests can redirect it)."""
    if os.environ.get("OPTZOO_CACHE"):
        return Path(os.environ["OPTZOO_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "optzoo"
