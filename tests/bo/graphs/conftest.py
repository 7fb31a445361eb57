"""Fixtures of the BoGrape tests: small spaces and seeded generators."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyscipopt")
pytest.importorskip("botorch")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)
