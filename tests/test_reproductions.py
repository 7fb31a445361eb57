"""Generic checks every implemented reproduction must pass (one table drives them all)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from optzoo import registry
from optzoo.experiment import Preset, verdicts
from optzoo.experiment.backends import execute
from optzoo.experiment.runner import run

IMPLEMENTED = [p.slug for p in registry.PAPERS if p.status == "implemented"]


@pytest.mark.parametrize("slug", IMPLEMENTED)
def test_presets_follow_the_contract(slug):
    repro = registry.get(slug).load()
    assert set(repro.presets) >= {"smoke", "quick", "full"}
    for cfg in repro.presets.values():
        assert isinstance(cfg, Preset)
    assert repro.presets["quick"].seeds >= 3
    assert repro.presets["full"].seeds >= 5
    trials = repro.trials(repro.presets["quick"])
    assert len({t.key(slug) for t in trials}) == len(trials)


@pytest.mark.parametrize("slug", IMPLEMENTED)
def test_a_trial_is_deterministic(slug):
    repro = registry.get(slug).load()
    trial = repro.trials(repro.presets["smoke"])[0].to_dict()
    first, second = execute(slug, trial, "cpu")[0], execute(slug, trial, "cpu")[0]
    # measured resources -- wall-clock times (*_wall_s) and memory (*_mem_mb) -- are the only
    # allowed differences
    assert set(first) == set(second)
    measured = ("_wall_s", "_mem_mb")
    assert {k: v for k, v in first.items() if not k.endswith(measured)} == {
        k: v for k, v in second.items() if not k.endswith(measured)}


@pytest.mark.parametrize("slug", IMPLEMENTED)
def test_smoke_preset_runs_and_reports_claims(slug, tmp_path):
    outcome = run(slug, "smoke", jobs=1, out=tmp_path, progress=False)
    assert outcome.summary.claims, "a reproduction must state its claims"
    for claim in outcome.summary.claims:
        assert claim.text and claim.evidence
        # every claim is decided by a named test of the verdict module, never a boolean
        assert isinstance(claim.verdict, verdicts.Verdict), claim.text
        assert claim.verdict.test in verdicts.TESTS, claim.text
        assert claim.status in verdicts.VERDICTS
        for _, cell in claim.verdict.cells:
            assert cell.test in verdicts.TESTS
    data = json.loads((outcome.outdir / "summary.json").read_text())
    assert data["claims_total"] == len(outcome.summary.claims)
    assert data["evidence"] is False and data["label"] == "smoke — not evidence"
    assert (data["claims_held"] + data["claims_not_held"] + data["claims_inconclusive"]
            == data["claims_total"])
    assert outcome.summary.tables and outcome.summary.figures
    for fig in outcome.summary.figures:
        assert fig.path.is_file() and fig.path.read_bytes()[:4] == b"\x89PNG"


REPRODUCE_MODULES = sorted(
    (Path(__file__).resolve().parents[1] / "src" / "optzoo").glob("*/reproduce/*.py"))


@pytest.mark.parametrize("path", REPRODUCE_MODULES, ids=lambda p: f"{p.parent.parent.name}/"
                                                                 f"{p.stem}")
def test_no_claim_is_a_hand_written_verdict(path):
    """A reproduction decides claims only through the verdict module's tests: it neither builds
    a ``Verdict`` by hand nor passes ``held=`` to anything."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            assert name != "Verdict", f"{path.name}:{node.lineno}: Verdict built by hand"
            for kw in node.keywords:
                assert kw.arg != "held", f"{path.name}:{node.lineno}: held= passed"
