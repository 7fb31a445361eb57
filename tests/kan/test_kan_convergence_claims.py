"""The ``kan-convergence`` claims are decided by verdict tests that a tie or a coarse grid cannot
pass (issue 18): synthetic results fed straight into the claim functions."""

from __future__ import annotations

import pytest

from optzoo.errors import ConfigError
from optzoo.experiment import Result, Trial
from optzoo.kan.reproduce.kan_convergence import (
    PRESETS,
    KanConvergenceConfig,
    _growth_claim,
    _layer_claims,
    trials,
)

NS = (10, 20, 40)
WIDTHS = (16, 64, 256, 1024, 4096, 16384)


def _threshold_results(mstar: dict[str, dict[int, int]], seeds=(0, 1, 2)) -> list[Result]:
    """Threshold trials where a width works iff it is ≥ the given m*(n) (every seed alike)."""
    out = []
    for meth, per_n in mstar.items():
        for n, m_star in per_n.items():
            for m in WIDTHS:
                for s in seeds:
                    t = Trial(meth, "threshold", s, {"n": n, "width": m})
                    out.append(Result(t, {"works": m >= m_star}))
    return out


def _claim(mstar, seeds=(0, 1, 2)):
    cfg = KanConvergenceConfig(threshold_ns=NS, threshold_widths=WIDTHS)
    results = _threshold_results(mstar, seeds)
    table = {meth: [float(v) for v in per_n.values()] for meth, per_n in mstar.items()}
    return _growth_claim(results, cfg, list(NS), table)


def test_growth_claim_a_tie_on_the_grid_is_not_held():
    # the old rule read log2 growth 0 ≤ 0 and passed; the grid cannot tell these apart
    c = _claim({"kan": dict.fromkeys(NS, 256), "relu": dict.fromkeys(NS, 256)})
    assert c.status == "inconclusive" and not c.held
    assert c.verdict.test == "superior"
    assert "too coarse" in c.verdict.reason


def test_growth_claim_held_only_when_the_worst_case_of_the_brackets_wins():
    c = _claim({"kan": dict.fromkeys(NS, 64), "relu": {10: 64, 20: 256, 40: 4096}})
    assert c.status == "held"


def test_growth_claim_not_held_when_the_kan_grows_faster():
    c = _claim({"kan": {10: 64, 20: 256, 40: 4096}, "relu": dict.fromkeys(NS, 64)})
    assert c.status == "not held"


def test_growth_claim_on_the_grid_edge_is_inconclusive():
    # KAN m* at the grid's smallest width: the threshold may lie below the grid
    c = _claim({"kan": dict.fromkeys(NS, 16), "relu": {10: 64, 20: 256, 40: 4096}})
    assert c.status == "inconclusive"
    assert "grid edge" in c.verdict.reason or any("grid edge" in g for g in c.verdict.guards)


def test_growth_claim_one_seed_is_inconclusive():
    c = _claim({"kan": dict.fromkeys(NS, 64), "relu": {10: 64, 20: 256, 40: 4096}}, seeds=(5,))
    assert c.status == "inconclusive"


def _layers(first, second, full, seeds=(3, 4, 5)):
    lay = {}
    for md, vals in (("first", first), ("second", second), ("full", full)):
        lay[md] = [Result(Trial("kan", f"layers-{md}", s, {}), {"loss_ratio": v})
                   for s, v in zip(seeds, vals, strict=True)]
    return lay


def test_layer_claims_a_tie_does_not_pass_slower_and_closeness_has_a_fixed_margin():
    cfg = PRESETS["quick"]
    slower, close = _layer_claims(_layers([0.3, 0.4, 0.5], [0.3, 0.4, 0.5],
                                          [0.3, 0.4, 0.5]), cfg)
    assert slower.status == "not held"  # second == first in every seed: a tie
    assert close.status == "held"
    slower, close = _layer_claims(_layers([0.3, 0.4, 0.5], [0.9, 0.95, 0.99],
                                          [3e-3, 5e-3, 4e-3]), cfg)
    assert slower.status == "held"
    assert close.status == "not held"  # first-layer-only ≈ 100× above full training


def test_margins_are_not_trial_parameters():
    cfg = PRESETS["quick"]
    for t in trials(cfg):
        assert not {"min_loss_factor", "close_factor", "pred_tol", "min_drift_exponent",
                    "min_steps", "min_exponent_gap"} & set(t.params)
    with pytest.raises(ConfigError, match="min_loss_factor"):
        KanConvergenceConfig(min_loss_factor=1.0)
