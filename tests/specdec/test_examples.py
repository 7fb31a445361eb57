"""The docstring examples of the specdec modules run and give what they print."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["optzoo.specdec.eagle", "optzoo.specdec.tree",
                                    "optzoo.specdec.gto", "optzoo.specdec.problems"])
def test_docstring_examples_run(module):
    m = importlib.import_module(module)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in doctest.DocTestFinder(recurse=False).find(m, globs=vars(m).copy()):
        runner.run(t)
    assert runner.tries > 0 and runner.failures == 0, f"{module}: {runner.failures} failing"
