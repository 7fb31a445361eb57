"""The registry: every paper of shared/papers registered, README in sync."""

from __future__ import annotations

import re

from optzoo import registry
from tests.conftest import REPO, shared_dir


def test_all_35_papers_registered_matching_the_briefs():
    slugs = [p.slug for p in registry.PAPERS]
    assert len(slugs) == len(set(slugs)) == 35
    briefs = {p.stem for p in (shared_dir() / "papers").glob("*.md")}
    assert briefs, f"no briefs found under {shared_dir()}"
    assert set(slugs) == briefs
    for p in registry.PAPERS:
        assert p.area in registry.AREAS, p.slug
        assert p.title and p.method
        assert p.openreview is None or re.fullmatch(r"[A-Za-z0-9_-]{10}", p.openreview)


def test_implemented_papers_load_their_reproduction():
    implemented = [p for p in registry.PAPERS if p.status == "implemented"]
    assert {p.slug for p in implemented} >= {"predictions-smoothness", "decision-metrics"}
    for p in implemented:
        assert p.load().slug == p.slug


def test_select_by_area_and_all():
    assert {p.slug for p in registry.select("predictions")} == {
        "predictions-smoothness", "decision-metrics"}
    assert len(registry.select("all")) == 35
    assert "_selftest" not in {p.slug for p in registry.select("all")}


def test_readme_table_is_in_sync_with_the_registry():
    readme = (REPO / "README.md").read_text()
    assert registry.markdown_table() in readme, (
        "README.md's paper table is stale: regenerate it with `optzoo list --markdown`")
