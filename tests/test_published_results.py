"""The repository's ``results/``: every published result matches what its preset expands to now
(or is marked stale), and ``RESULTS.md`` is what ``optzoo publish`` generates from the folders."""

from __future__ import annotations

import json
from pathlib import Path

from optzoo import registry
from optzoo.experiment import publish as pub

RESULTS = Path(__file__).resolve().parents[1] / "results"


def test_no_unmarked_stale_result():
    unmarked = [(s.slug, s.preset, s.missing, s.extra)
                for s in pub.stale_results(RESULTS) if not s.marked]
    assert unmarked == [], ("published results whose trial keys the current presets no longer "
                            "expand to: re-run and `optzoo publish` them, or "
                            "`optzoo publish --mark-stale`")


def test_results_md_is_generated():
    assert (RESULTS / "RESULTS.md").read_text() == pub.results_markdown(RESULTS), \
        "results/RESULTS.md is out of date: run `optzoo publish --mark-stale`"


def test_every_implemented_preset_has_a_result_or_a_note():
    notes = json.loads((RESULTS / "notes.json").read_text())
    have = {(r.slug, r.preset) for r in pub.published(RESULTS)}
    lacking = [f"{p.slug}/{preset}" for p in registry.PAPERS if p.status == "implemented"
               for preset in pub.PUBLISHED_PRESETS
               if (p.slug, preset) not in have and f"{p.slug}/{preset}" not in notes]
    assert lacking == [], "add a result or a note in results/notes.json for these"
    unknown = [k for k in notes if k.partition("/")[0] not in {p.slug for p in registry.PAPERS}]
    assert unknown == []


def test_published_summaries_are_evidence():
    for r in pub.published(RESULTS):
        assert r.summary["evidence"] is True and r.summary["preset"] == r.preset
        assert r.summary["n_trials"] == len(r.keys) == r.provenance["n_trials"]
