"""The README's Python examples run as written."""

from __future__ import annotations

import re

from tests.conftest import REPO


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    assert blocks, "the README must show how to use a method from Python"
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
