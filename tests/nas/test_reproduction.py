"""The ``connas`` reproduction's smoke preset, run through its functions on a fresh cache."""

from __future__ import annotations

import pytest

from optzoo.errors import ConfigError
from optzoo.experiment import Result
from optzoo.nas.reproduce.connas import (
    PRESETS,
    REPRODUCTION,
    ConNASConfig,
    budgets_for,
    space_for,
)
from optzoo.nas.search_space import MINI_TOPOLOGY


def test_smoke_end_to_end(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTZOO_CACHE", str(tmp_path / "cache"))
    cfg = REPRODUCTION.presets["smoke"]
    results = [Result(t, REPRODUCTION.run_trial(t, "cpu")) for t in REPRODUCTION.trials(cfg)]
    assert {r.trial.method for r in results} >= {"connas", "darts", "darts_penalty", "random"}
    s = REPRODUCTION.summarize(results, cfg, tmp_path / "out")
    assert len(s.claims) == 4 and all(f.path.exists() for f in s.figures)
    assert any((tmp_path / "cache" / "nas").glob("digits_*.json"))
    for r in results:
        if r.trial.method == "random":
            assert r.metrics["feasible"] == 1.0


def test_budgets_and_presets():
    assert space_for(3) == MINI_TOPOLOGY and space_for(2).size == 5
    levels = budgets_for(MINI_TOPOLOGY, "flops", (0.5, 0.4, 0.2))
    assert [round(f, 3) for _, f in levels] == [0.504, 0.432, 0.216]
    assert PRESETS["quick"].seeds >= 3 and PRESETS["full"].seeds >= 5
    with pytest.raises(ConfigError, match="budget_fracs"):
        ConNASConfig(budget_fracs=(0.0,))
    with pytest.raises(ConfigError, match="cost"):
        ConNASConfig(cost="latency")
