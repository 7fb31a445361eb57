"""The auxdpo reproduction's claims can fail: a no-op method does not pass, ties do not pass."""

from __future__ import annotations

from dataclasses import replace

from optzoo.experiment import Result, Trial
from optzoo.preference.reproduce.auxdpo import PRESETS, _claim_auxdpo, _claim_reversal, run_trial


def _headline() -> Result:
    t = Trial("all", "bandit-a", 0, {"ratio": 20.0, "beta": 1.0, "dpop_lambda": 50.0})
    return Result(t, run_trial(t))


def test_a_method_that_stays_at_the_base_cannot_show_a_reversal_or_a_fix():
    cfg = PRESETS["quick"]
    r = _headline()
    m = dict(r.metrics)
    for meth in ("dpo", "ipo", "dpop", "auxdpo"):  # every method left at θ = 0 (uniform)
        m[f"reward_{meth}"] = 1.0
        for i in (1, 2, 3):
            m[f"r{i}_{meth}"] = 0.0
    m["aux_gap_to_local"] = 0.5
    noop = replace(r, metrics=m)
    assert _claim_reversal([noop], cfg).status == "not held"
    assert _claim_auxdpo([noop], cfg).status == "not held"


def test_headline_cell_decides_the_auxdpo_claim_from_the_learned_reward():
    cfg = PRESETS["quick"]
    r = _headline()
    claim = _claim_auxdpo([r], cfg)
    assert claim.verdict.test == "all_of"
    # the policy alone cannot rank a2 > a1 > a3 with logits [θ, −θ, 0]; the learned reward does
    assert r.metrics["order_auxdpo"] == "213" and claim.status == "held"
