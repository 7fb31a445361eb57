"""The README's Python examples run as written, and every area with a package has one."""

from __future__ import annotations

import re
import sys
import time
import types

import pytest

from optzoo import registry
from tests.conftest import REPO

README = (REPO / "README.md").read_text()
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _blocks() -> list[tuple[str, str]]:
    """(id, code) of every ```python block; the id is the nearest heading above it."""
    out, seen = [], {}
    for match in _BLOCK.finditer(README):
        headings = re.findall(r"^#+ (.+)$", README[:match.start()], re.M)
        name = re.sub(r"[^a-z0-9]+", "-", headings[-1].lower()).strip("-") if headings else "top"
        seen[name] = seen.get(name, 0) + 1
        out.append((name if seen[name] == 1 else f"{name}-{seen[name]}", match.group(1)))
    return out


BLOCKS = _blocks()


@pytest.fixture()
def _one_thread():
    # tiny models run fastest single-threaded; on shared CPUs torch's default pool makes the
    # examples several times slower.  Restored after each block.
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_readme_has_python_blocks():
    assert BLOCKS, "the README must show how to use a method from Python"


@pytest.mark.parametrize("code", [c for _, c in BLOCKS], ids=[i for i, _ in BLOCKS])
def test_readme_python_block_runs(code, _one_thread, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that writes a file leaves nothing in the repo
    module = types.ModuleType("readme")  # a real module, as a script's __main__ is (dataclasses)
    monkeypatch.setitem(sys.modules, "readme", module)
    start = time.perf_counter()
    exec(compile(code, "README.md", "exec"), module.__dict__)
    # a README example is for reading: it must stay small (generous for shared CI machines)
    assert time.perf_counter() - start < 60


def test_every_area_with_a_package_has_a_readme_example():
    root = REPO / "src" / "optzoo"
    code = "\n".join(c for _, c in BLOCKS)
    missing = [area for area in registry.AREAS if (root / area).is_dir()
               and not re.search(rf"^\s*(from|import) optzoo\.{area}\b", code, re.M)]
    assert not missing, f"areas without a runnable README example: {missing}"
