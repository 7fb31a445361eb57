"""Shared fixtures: paths of the repository and of the project's shared folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

os.environ.setdefault("MPLBACKEND", "Agg")
# Generated artefacts (model zoos, ground-truth tables) are cached per user; tests keep theirs
# in a throw-away folder so they neither read a developer's cache nor leave files behind.
if "OPTZOO_CACHE" not in os.environ:
    import tempfile

    os.environ["OPTZOO_CACHE"] = tempfile.mkdtemp(prefix="optzoo-test-cache-")

# CI explores the same examples on every run, so a red build is reproducible; a local run
# explores new ones each time.  No per-example deadline: CI machines are shared and slow.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """``../shared`` beside the repository (or ``OPTZOO_SHARED``), as on dev machines and CI."""
    return Path(os.environ.get("OPTZOO_SHARED", REPO.parent / "shared"))


@pytest.fixture
def repo() -> Path:
    return REPO
