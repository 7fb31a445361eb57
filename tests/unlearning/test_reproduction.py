"""The ``ofmu`` reproduction: presets follow the contract, the digits problems are what the
brief describes, and the smoke preset runs trials → run_trial → summarize into claims."""

from __future__ import annotations

import dataclasses

import pytest

from optzoo.errors import ConfigError
from optzoo.experiment import Result
from optzoo.unlearning.problems import digits_forgetting
from optzoo.unlearning.reproduce.ofmu import REPRODUCTION, OFMUConfig, total_variation


def test_presets_follow_the_contract():
    assert REPRODUCTION.slug == "ofmu"
    assert REPRODUCTION.presets["quick"].seeds >= 3
    assert REPRODUCTION.presets["full"].seeds >= 5
    for cfg in REPRODUCTION.presets.values():
        ts = REPRODUCTION.trials(cfg)
        assert len({t.key("ofmu") for t in ts}) == len(ts)
    with pytest.raises(ConfigError, match="tasks"):
        OFMUConfig(tasks=("sideways",))
    with pytest.raises(ConfigError, match="lambdas"):
        OFMUConfig(lambdas=(0.5, 2.0))
    with pytest.raises(ConfigError, match="gamma"):
        dataclasses.replace(OFMUConfig(), gamma=0.9)


def test_digits_problems_split_as_described():
    cw = digits_forgetting("classwise", 0)
    assert (cw.forget[1] == 3).all() and not (cw.retain[1] == 3).any()
    assert not (cw.test[1] == 3).any() and (cw.nonmembers[1] == 3).all()
    rnd = digits_forgetting("random", 0)
    n_train = rnd.forget[0].shape[0] + rnd.retain[0].shape[0]
    assert rnd.forget[0].shape[0] == round(0.1 * n_train)
    assert cw.forget[0].shape[0] + cw.retain[0].shape[0] == n_train
    # D_f and D_r are disjoint (no image row appears in both)
    f = {tuple(r.tolist()) for r in rnd.forget[0]}
    assert not any(tuple(r.tolist()) in f for r in rnd.retain[0][:200])
    with pytest.raises(ValueError, match="task"):
        digits_forgetting("all", 0)


def test_total_variation():
    assert total_variation([1.0, 0.5, 0.75, 0.75]) == pytest.approx(0.75)
    assert total_variation([0.3]) == 0.0


def test_smoke_preset_produces_claims(tmp_path):
    cfg = REPRODUCTION.presets["smoke"]
    results = [Result(trial=t, metrics=REPRODUCTION.run_trial(t, "cpu"))
               for t in REPRODUCTION.trials(cfg)]
    by = {(r.trial.method, r.trial.problem): r.metrics for r in results}
    ofmu_trial = next(t for t in REPRODUCTION.trials(cfg) if t.method == "ofmu")
    assert REPRODUCTION.run_trial(ofmu_trial, "cpu") == by[("ofmu", ofmu_trial.problem)]
    # the retrained model never saw digit 3: it cannot classify it
    assert by[("retrain", "classwise")]["forget_acc"] == 0.0
    assert by[("retrain", "classwise")]["kl_retrain"] == pytest.approx(0.0, abs=1e-12)
    summary = REPRODUCTION.summarize(results, cfg, tmp_path)
    assert len(summary.claims) == 4 * len(cfg.tasks)
    for c in summary.claims:
        assert c.text and c.evidence and isinstance(c.held, bool)
    assert summary.tables and summary.notes
    for fig in summary.figures:
        assert fig.path.read_bytes()[:4] == b"\x89PNG"
