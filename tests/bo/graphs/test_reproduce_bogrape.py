"""The ``bogrape`` reproduction through its functions (trials → run_trial → summarize)."""

from __future__ import annotations

import dataclasses

import pytest

from optzoo.bo.reproduce import bogrape as repro
from optzoo.errors import ConfigError
from optzoo.experiment import Preset, Result


def test_presets_follow_the_contract():
    assert set(repro.PRESETS) == {"smoke", "quick", "full"}
    assert all(isinstance(c, Preset) for c in repro.PRESETS.values())
    assert repro.PRESETS["quick"].seeds >= 3 and repro.PRESETS["full"].seeds >= 5
    for cfg in repro.PRESETS.values():
        ts = repro.trials(cfg)
        assert len({t.key(repro.SLUG) for t in ts}) == len(ts)
    # brute force is only defined on enumerable (synthetic) spaces
    assert not any(t.method == "gp-enum" and t.problem == "qed"
                   for t in repro.trials(repro.PRESETS["quick"]))


@pytest.mark.parametrize("change, field", [
    ({"problems": ("tsp",)}, "problems"), ({"kernels": ("WL",)}, "kernels"),
    ({"n_max": 8}, "n_max"), ({"time_limit": 0.0}, "time_limit"), ({"n_init": 1}, "n_init"),
    ({"baselines": ("bfgs",)}, "baselines"), ({"noise": -1.0}, "noise")])
def test_config_errors_name_the_field(change, field):
    with pytest.raises(ConfigError, match=field):
        dataclasses.replace(repro.PRESETS["smoke"], **change)


def test_a_trial_is_deterministic():
    trial = repro.trials(repro.PRESETS["smoke"])[0]
    assert trial.method.startswith("bogrape")
    a, b = repro.run_trial(trial, "cpu"), repro.run_trial(trial, "cpu")
    strip = lambda m: {k: v for k, v in m.items() if not k.endswith("_wall_s")}  # noqa: E731
    assert strip(a) == strip(b)


def test_smoke_preset_reports_claims(tmp_path):
    cfg = repro.PRESETS["smoke"]
    results = [Result(t, repro.run_trial(t, "cpu")) for t in repro.trials(cfg)]
    for r in results:
        assert r.metrics["feasible"] == 1.0
        if r.trial.method.startswith("bogrape") and r.trial.problem == "gcn":
            assert r.metrics["brute_checked"] == cfg.iterations
    summary = repro.summarize(results, cfg, tmp_path)
    assert len(summary.claims) == 5
    for claim in summary.claims:
        assert claim.text and claim.evidence and isinstance(claim.held, bool)
    assert summary.claims[0].held and summary.claims[1].held  # exactness and feasibility
    assert summary.tables and summary.figures
    for fig in summary.figures:
        assert fig.path.read_bytes()[:4] == b"\x89PNG"
