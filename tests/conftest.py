"""Shared fixtures: paths of the repository and of the project's shared folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """``../shared`` beside the repository (or ``OPTZOO_SHARED``), as on dev machines and CI."""
    return Path(os.environ.get("OPTZOO_SHARED", REPO.parent / "shared"))


@pytest.fixture
def repo() -> Path:
    return REPO
