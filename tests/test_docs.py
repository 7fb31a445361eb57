"""The documentation site: `mkdocs build --strict` passes, every paper has a page, every area
page has API content, and published verdicts are picked up from ``results/``."""

from __future__ import annotations

import html
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from optzoo import registry

ROOT = Path(__file__).resolve().parent.parent

if os.environ.get("CI"):  # CI installs the docs extra (make install): a skip would hide that
    import mkdocs  # noqa: F401
else:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed")
    pytest.importorskip("mkdocstrings")


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen_pages = _load("gen_pages")
griffe_roles = _load("griffe_roles")


@pytest.fixture(scope="session")
def site(tmp_path_factory, worker_id):
    """The site built once per test session (shared between xdist workers under a lock)."""
    from filelock import FileLock

    if worker_id == "master":
        base = tmp_path_factory.mktemp("docs")
    else:
        base = tmp_path_factory.getbasetemp().parent / "docs-site"
        base.mkdir(exist_ok=True)
    out = base / "site"
    log = base / "build.log"
    with FileLock(str(base / "lock")):
        if not (base / "rc").exists():
            env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
            proc = subprocess.run(
                [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
            log.write_text(proc.stdout + proc.stderr)
            (base / "rc").write_text(str(proc.returncode))
    return out, int((base / "rc").read_text()), log.read_text()


@pytest.mark.slow
def test_site_builds_with_warnings_as_errors(site):
    out, rc, log = site
    assert rc == 0, log[-4000:]
    assert "WARNING" not in log, log[-4000:]
    assert (out / "index.html").exists() and (out / "contract" / "index.html").exists()


@pytest.mark.slow
def test_home_page_is_the_readme_opening(site):
    out, rc, log = site
    assert rc == 0, log[-4000:]
    page = (out / "index.html").read_text()
    assert "The optimization research of ICLR 2026, usable and checkable." in page
    assert "Two commands" in page  # the README's first section
    for p in registry.PAPERS:
        assert f'href="papers/{p.slug}/"' in page, p.slug


@pytest.mark.slow
def test_every_paper_has_a_page(site):
    out, rc, log = site
    assert rc == 0, log[-4000:]
    for p in registry.PAPERS:
        page = (out / "papers" / p.slug / "index.html").read_text()
        assert html.escape(p.title, quote=False) in page, p.slug
        assert html.escape(p.method, quote=False) in page, p.slug
        if p.reproduction is None:
            assert "planned" in page
            continue
        module = gen_pages.method_module(p)
        assert f"../../api/{p.area}/#{module}" in page, p.slug
        area_page = (out / "api" / p.area / "index.html").read_text()
        assert f'id="{module}"' in area_page, (p.slug, module)
        if gen_pages.published(p.slug):
            assert "Preset" in page, p.slug
        else:
            assert gen_pages.NO_RESULTS in page, p.slug


@pytest.mark.slow
def test_every_area_page_has_api_content(site):
    out, rc, log = site
    assert rc == 0, log[-4000:]
    areas = gen_pages.areas()
    assert {"optim", "bo", "policy", "routing", "llm"} <= set(areas)
    for area in areas:
        page = (out / "api" / area / "index.html").read_text()
        assert f'id="optzoo.{area}"' in page, area
        # at least one documented function or class with its signature
        assert page.count('class="doc doc-object doc-function"') + page.count(
            'class="doc doc-object doc-class"') >= 1, area
    # exports griffe cannot see on the package (lazy, or named like their module) still appear
    assert 'id="optzoo.llm.models.TinyLlama"' in (out / "api/llm/index.html").read_text()
    assert 'id="optzoo.unlearning.ofmu.ofmu"' in (
        out / "api/unlearning/index.html").read_text()


def _summary(preset: str, statuses: list[str]) -> dict:
    return {"slug": "ham", "preset": preset, "evidence": preset != "smoke", "n_trials": 6,
            "written": "2026-12-01T00:00:00+00:00",
            "claims": [{"text": f"claim {i} | piped", "status": s,
                        "verdict": {"verdict": s, "test": "superior", "effect": 0.5,
                                    "ci": [0.1, 0.9], "n": 3, "margin": 0.05,
                                    "p_value": 0.01}}
                       for i, s in enumerate(statuses)]}


def test_paper_page_shows_published_verdicts(tmp_path):
    paper = registry.get("ham")
    assert gen_pages.NO_RESULTS in gen_pages.paper_page(paper, tmp_path)
    for preset, statuses in (("quick", ["held", "not held"]), ("smoke", ["inconclusive"]),
                             ("full", ["held", "held", "inconclusive"])):
        (tmp_path / "ham" / preset).mkdir(parents=True)
        (tmp_path / "ham" / preset / "summary.json").write_text(
            json.dumps(_summary(preset, statuses)))
    (tmp_path / "ham" / "broken").mkdir()
    (tmp_path / "ham" / "broken" / "summary.json").write_text("{not json")
    page = gen_pages.paper_page(paper, tmp_path)
    assert gen_pages.NO_RESULTS not in page
    assert page.index("Preset `full`") < page.index("Preset `quick`") < page.index(
        "Preset `smoke`")
    assert "2 held, 0 not held, 1 inconclusive of 3 claims" in page
    assert "Preset `smoke` (smoke — not evidence)" in page
    assert "claim 0 \\| piped" in page  # a pipe does not break the table
    assert "broken" not in page


def test_docstring_example_and_rst_helpers():
    doc = "Title.\n\nExample:\n    >>> 1 + 1\n    2\n\nMore text.\n"
    assert gen_pages.docstring_example(doc) == ">>> 1 + 1\n2"
    assert gen_pages.docstring_example("Example::\n\n    x = 1\n") == "x = 1"
    assert gen_pages.docstring_example("No example here.") is None
    assert griffe_roles.strip_roles(":class:`~a.b.C` and :func:`f`") == "`C` and `f`"
    table = "\n".join(["===  ===", "a    b", "===  ===", "1    2", "     3", "===  ==="])
    assert griffe_roles.rst_tables(table).splitlines() == ["| a | b |", "|---|---|",
                                                           "| 1 | 2 3 |"]
    assert griffe_roles.literal_blocks("Example::\n\n    x = 1\nSee this::") == (
        "**Example:**\n\n    x = 1\nSee this:")


def test_paper_example_comes_from_the_method_module():
    where, code = gen_pages.module_example("optzoo.predictions.scheduling")
    assert where == "optzoo.predictions.scheduling" and code.startswith(">>>")
    page = gen_pages.paper_page(registry.get("predictions-smoothness"), ROOT / "no-results")
    assert "```pycon" in page and "single_machine_ratio" in page


def test_contract_page_examples_run():
    import re

    text = (ROOT / "docs" / "contract.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, "docs/contract.md", "exec"), {})  # noqa: S102


def test_singular_example_sections_render_as_code():
    # griffe parses only "Examples:" as an examples section; "Example:" would be Markdown text
    # in which x[0]["grad"] reads as a reference link (a strict-build warning)
    assert griffe_roles.example_sections("A.\n\n    Example:\n        >>> x[0]['g']\n") == (
        "A.\n\n    Examples:\n        >>> x[0]['g']\n")
