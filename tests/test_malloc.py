"""optzoo.malloc: raising glibc's thresholds works once per process, and is a no-op elsewhere."""

import sys

import pytest

from optzoo import malloc


def test_retain_freed_memory_once(monkeypatch):
    monkeypatch.setattr(malloc, "_DONE", False)
    first = malloc.retain_freed_memory()
    if not sys.platform.startswith("linux"):
        assert first is False
        return
    assert first in (True, False)  # False: a C library without mallopt (musl)
    assert malloc.retain_freed_memory() is False  # already done (or unavailable)


def test_not_linux_is_a_no_op(monkeypatch):
    monkeypatch.setattr(malloc, "_DONE", False)
    monkeypatch.setattr(sys, "platform", "darwin")
    assert malloc.retain_freed_memory() is False
    assert malloc._DONE is False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_big_tensor_allocations_after_retaining():
    torch = pytest.importorskip("torch")
    malloc.retain_freed_memory()
    x = torch.ones(1 << 20)
    assert float((x * 2).sum()) == 2.0 * (1 << 20)
