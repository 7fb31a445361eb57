"""The steporlm reproduction's checks and claims can fail: a broken pair rule, W-DPO weighting
or solver is caught by the exact checks; a policy that stays at SFT, a GenPRM at chance and
ties do not pass; the claims decide from the metrics they name."""

from __future__ import annotations

import numpy as np
import pytest

from optzoo.errors import ConfigError
from optzoo.experiment import Result, Trial
from optzoo.experiment.core import NotEvaluated
from optzoo.preference import steporlm as steporlm_module
from optzoo.preference.reproduce import steporlm as repro
from optzoo.preference.reproduce.steporlm import (
    PRESETS,
    _check_pairs,
    _check_solver,
    _check_wdpo,
    _claim_best_of_n,
    _claim_chain,
    _claim_disc,
    _claim_frozen,
    _claim_prm_acts,
    _spec_pairs,
    trials,
)


def test_spec_pairs_by_hand():
    o, r = [True, False, False, True], [0.75, 0.5, 0.25, 0.75]
    assert _spec_pairs(o, r, "dual") == {(0, 1, 1.0), (0, 2, 1.0), (1, 2, 0.25), (3, 1, 1.0),
                                         (3, 2, 1.0)}
    assert _spec_pairs(o, r, "outcome") == {(0, 1, 1.0), (0, 2, 1.0), (3, 1, 1.0), (3, 2, 1.0)}


def test_checks_pass_on_the_code_and_catch_broken_rules(monkeypatch):
    rng = np.random.default_rng(0)
    assert _check_pairs(50, rng) == 0
    assert _check_wdpo(10, rng) < 1e-9
    assert _check_solver(20, {"max_vars": 2, "max_constraints": 2}) == 0
    real = steporlm_module.build_pairs

    def no_solver_first(outcomes, scores, **kw):  # ranks by r only: Algorithm 1 broken
        return real([False] * len(outcomes), scores, **kw)

    monkeypatch.setattr(repro, "build_pairs", no_solver_first)
    assert _check_pairs(50, np.random.default_rng(0)) > 0

    def wrong_verify(text, gold, **kw):  # everything verifies: malformed models pass
        return steporlm_module.Outcome(True, "optimal", gold)

    monkeypatch.setattr(repro, "verify", wrong_verify)
    assert _check_solver(5, {"max_vars": 2, "max_constraints": 2}) > 0


def _results(**series):
    """One ``all`` result per seed with the given per-seed metrics."""
    n = len(next(iter(series.values())))
    return [Result(Trial("all", "or-lp", s, {}), {k: v[s] for k, v in series.items()})
            for s in range(n)]


BASE = {"changed_steporlm": [0.3] * 4, "prm_accuracy_initial": [0.9, 0.91, 0.92, 0.9],
        "prm_chance": [0.7, 0.71, 0.7, 0.69]}


def test_chain_holds_only_with_both_gaps_and_an_acting_policy():
    cfg = PRESETS["quick"]
    good = _results(**BASE, accuracy_steporlm=[0.6, 0.62, 0.61, 0.63],
                    accuracy_plain=[0.5, 0.52, 0.5, 0.51], accuracy_outcome=[0.4, 0.41, 0.4, 0.42],
                    accuracy_sft=[0.3] * 4)
    assert _claim_chain(good, cfg, "accuracy").status == "held"
    tie = _results(**BASE, accuracy_steporlm=[0.5, 0.52, 0.5, 0.51],
                   accuracy_plain=[0.5, 0.52, 0.5, 0.51], accuracy_outcome=[0.4, 0.41, 0.4, 0.42],
                   accuracy_sft=[0.3] * 4)
    assert _claim_chain(tie, cfg, "accuracy").status != "held"
    still = dict(BASE, changed_steporlm=[0.0] * 4)
    noop = _results(**still, accuracy_steporlm=[0.6, 0.62, 0.61, 0.63],
                    accuracy_plain=[0.5, 0.52, 0.5, 0.51], accuracy_outcome=[0.4, 0.41, 0.4, 0.42],
                    accuracy_sft=[0.3] * 4)
    claim = _claim_chain(noop, cfg, "accuracy")
    assert claim.status == "inconclusive" and "does not act" in claim.verdict.reason


def test_a_genprm_at_chance_decides_nothing():
    cfg = PRESETS["quick"]
    chance = dict(BASE, prm_accuracy_initial=[0.7, 0.71, 0.7, 0.69])
    res = _results(**chance, bon_steporlm=[0.7, 0.72, 0.71, 0.7],
                   maj_steporlm=[0.5, 0.5, 0.52, 0.5], bon_sft=[0.6, 0.6, 0.62, 0.61],
                   maj_sft=[0.4, 0.41, 0.4, 0.4], single_steporlm=[0.5] * 4,
                   prm_accuracy_refined=[0.8] * 4, prm_kept_steporlm=[10] * 4,
                   accuracy_steporlm=[0.6] * 4, accuracy_frozen=[0.5] * 4)
    assert _claim_prm_acts(res, cfg).status == "not held"
    assert _claim_best_of_n(res, cfg).status == "inconclusive"
    assert all(c.status == "inconclusive" for c in _claim_frozen(res, PRESETS["full"]))
    # one iteration: the frozen and co-evolving policies are one model, so no verdict
    assert isinstance(_claim_frozen(res, cfg)[0], NotEvaluated)
    acting = _results(**BASE, bon_steporlm=[0.7, 0.72, 0.71, 0.7],
                      maj_steporlm=[0.5, 0.5, 0.52, 0.5], bon_sft=[0.6, 0.6, 0.62, 0.61],
                      maj_sft=[0.4, 0.41, 0.4, 0.4], single_steporlm=[0.5] * 4)
    assert _claim_prm_acts(acting, cfg).status == "held"
    assert _claim_best_of_n(acting, cfg).status == "held"


def test_the_discriminative_prm_claims_can_fail():
    cfg = PRESETS["full"]
    gen = BASE["prm_accuracy_initial"]
    worse = _results(**BASE, prm_accuracy_disc=[a + 0.06 for a in gen])
    assert _claim_disc(worse, cfg)[0].status == "not held"
    better = _results(**BASE, prm_accuracy_disc=[a - 0.08 for a in gen],
                      accuracy_steporlm=[0.6, 0.62, 0.61, 0.63],
                      accuracy_disc=[0.6, 0.62, 0.61, 0.63])
    first, second = _claim_disc(better, cfg)
    assert first.status == "held"
    assert second.status != "held"  # a tie of the policies never passes
    chance = dict(BASE, prm_accuracy_initial=[0.7, 0.71, 0.7, 0.69])
    blind = _results(**chance, prm_accuracy_disc=[0.6] * 4)
    assert _claim_disc(blind, cfg)[0].status == "inconclusive"  # a GenPRM at chance
    assert all(isinstance(c, NotEvaluated) for c in _claim_disc(_results(**BASE), cfg))


def test_trials_and_presets():
    for name, cfg in PRESETS.items():
        ts = trials(cfg)
        assert ts[0].method == "checks" and len(ts) == cfg.seeds + 1, name
        assert len({t.key("steporlm") for t in ts}) == len(ts)
    assert PRESETS["quick"].seeds >= 3 and PRESETS["full"].seeds >= 5
    assert PRESETS["full"].iterations == 3 and PRESETS["quick"].iterations == 1
    assert "disc" in PRESETS["full"].arms and PRESETS["full"].disc_prm
    with pytest.raises(ConfigError, match="disc_prm"):
        PRESETS["quick"].with_overrides({"arms": "steporlm,disc", "disc_prm": "false"})
