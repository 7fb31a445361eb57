"""Tiny models run fastest single-threaded; on shared CPUs torch's default thread pool makes
them several times slower.  The thread count is restored after each test."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
