"""The diversity-topk reproduction's smoke preset through its own functions (trials →
run_trial → summarize), determinism of a trial, and config validation."""

from __future__ import annotations

import json

import pytest

from optzoo.errors import ConfigError
from optzoo.experiment import Result
from optzoo.recsys.reproduce.diversity_topk import PRESETS, REPRODUCTION, DiversityTopkConfig


def test_smoke_preset_runs_and_reports_claims(tmp_path):
    cfg = PRESETS["smoke"]
    trials = REPRODUCTION.trials(cfg)
    assert len({t.key("diversity-topk") for t in trials}) == len(trials)
    results = [Result(t, REPRODUCTION.run_trial(t, "cpu")) for t in trials]
    for r in results:
        json.dumps(dict(r.metrics), allow_nan=False)
    again = REPRODUCTION.run_trial(trials[0], "cpu")
    assert again == results[0].metrics
    summary = REPRODUCTION.summarize(results, cfg, tmp_path)
    assert len(summary.claims) == 6
    for c in summary.claims:
        assert c.text and c.evidence and isinstance(c.held, bool)
    assert summary.tables and summary.figures
    assert summary.figures[0].path.read_bytes()[:4] == b"\x89PNG"
    names = [row[0] for row in summary.tables[0].rows]
    assert names[0] == "(a) relevance-only" and any("MDR" in n for n in names)


def test_presets_follow_the_contract():
    assert PRESETS["quick"].seeds >= 3 and PRESETS["full"].seeds >= 5
    assert PRESETS["smoke"].data == "synthetic"  # the test suite needs no recbole


def test_bad_config_is_named():
    with pytest.raises(ConfigError, match="claim_steps"):
        DiversityTopkConfig(ft_steps=(10, 20), claim_steps=50)
    with pytest.raises(ConfigError, match="backbones"):
        DiversityTopkConfig(backbones=("gru",))
    with pytest.raises(ConfigError, match="tau"):
        DiversityTopkConfig(tau=0.0)
