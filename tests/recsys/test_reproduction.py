"""The diversity-topk reproduction's smoke preset through its own functions (trials →
run_trial → summarize), determinism of a trial, and config validation."""

from __future__ import annotations

import dataclasses
import json

import pytest

from optzoo.errors import ConfigError
from optzoo.experiment import Result
from optzoo.experiment.verdicts import TESTS
from optzoo.recsys.reproduce.diversity_topk import (
    MARGINS,
    PRESETS,
    REPRODUCTION,
    DiversityTopkConfig,
    _claims,
)


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
        assert c.text and c.evidence and c.verdict.test in TESTS
        assert c.status in ("held", "not held", "inconclusive")
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
    with pytest.raises(ConfigError, match="normalize"):
        DiversityTopkConfig(normalize="max")


# -- verdicts on synthetic per-seed metrics ----------------------------------------------------

CFG = PRESETS["quick"]  # claim_steps 50, ft_steps (10, 50, 200)


def _seeds(ild_gain, ndcg_gain=(0.0, 0.0, 0.0), *, base_ild=0.5, base_ndcg=0.2,
           scratch_steps=1000):
    """Per-seed metrics in which every DDT / MDR model changes the relevance-only model's
    ILD@10 (and ILD@11-20) by ``ild_gain[s]`` and its NDCG@10 by ``ndcg_gain[s]`` (relative);
    scratch equals the 50-step fine-tune; the re-rankers' sweeps bracket DDT's ILD with the
    NDCG of relevance-only."""
    out = {}
    for s, (gi, gn) in enumerate(zip(ild_gain, ndcg_gain, strict=True)):
        m = {"steps_scratch": scratch_steps, "base__ild": base_ild, "base__ndcg": base_ndcg,
             "base__ild_next": base_ild, "reach_steps": max(1, int(0.05 * scratch_steps))}
        for key in ["ddt_scratch", "mdr", "ddt_ft_reach", *(f"ddt_ft{t}" for t in CFG.ft_steps)]:
            m[f"{key}__ild"] = base_ild * (1 + gi)
            m[f"{key}__ndcg"] = base_ndcg * (1 + gn)
            m[f"{key}__ild_next"] = base_ild * (1 + gi)
        for prefix, values in (("mmr", CFG.mmr_lambdas), ("dpp", CFG.dpp_thetas)):
            for j, v in enumerate(values):
                m[f"{prefix}{v:g}__ild"] = base_ild * (1 + 2 * gi * j / (len(values) - 1)) - 1e-3
                m[f"{prefix}{v:g}__ndcg"] = base_ndcg
        out[s] = m
    return out


def test_a_model_that_changes_nothing_holds_no_claim():
    claims = _claims(_seeds((0.0, 0.0, 0.0)), CFG)
    status = {c.text[:3]: c.status for c in claims}
    # (1) (2) (3) (6) claim a gain: no change is "not held", never held
    for k in ("(1)", "(2)", "(3)", "(6)"):
        assert status[k] == "not held", (k, claims)
    assert all(c.status != "held" for c in claims if c.text[:3] != "(5)")


def test_a_mean_gain_of_ten_percent_with_a_wide_ci_is_no_clear_margin():
    # old rule: mean gain >= 10 % and CI above 0 -> held; the CI must now lie above 10 %
    claims = _claims(_seeds((0.04, 0.12, 0.16)), CFG)
    assert claims[0].status == "inconclusive"
    assert claims[0].verdict.cells[0][1].test == "superior"
    # a clear, consistent gain with unchanged NDCG is held
    claims = _claims(_seeds((0.20, 0.21, 0.22)), CFG)
    assert claims[0].status == "held" and claims[1].status == "held"
    assert claims[5].status == "held"


def test_an_accuracy_loss_beyond_the_margin_is_not_held():
    # gain clear, but NDCG@10 drops 5 % in every seed (old: mean only; now non-inferiority)
    claims = _claims(_seeds((0.20, 0.21, 0.22), (-0.05, -0.051, -0.049)), CFG)
    assert claims[0].status == "not held"
    assert dict(claims[0].verdict.cells)["NDCG@10 loss < 0.02"].verdict == "not held"


def test_matched_ild_comparison_needs_an_advantage_and_a_matched_point():
    seeds = _seeds((0.20, 0.21, 0.22), (0.001, 0.0012, 0.0008))  # +0.1 % NDCG: a tie
    assert _claims(seeds, CFG)[3].status == "not held"
    seeds = _seeds((0.20, 0.21, 0.22), (0.10, 0.11, 0.12))
    assert _claims(seeds, CFG)[3].status == "held"
    for m in seeds.values():  # DDT's ILD above every MMR point: no matched-ILD reading
        for v in CFG.mmr_lambdas:
            m[f"mmr{v:g}__ild"] = m["base__ild"] * (1.0 + 0.01 * v)
    claim = _claims(seeds, CFG)[3]
    assert claim.status == "inconclusive"
    assert dict(claim.verdict.cells)["vs MMR"].verdict == "inconclusive"
    assert dict(claim.verdict.cells)["vs DPP"].verdict == "held"
    assert "outside" in dict(claim.verdict.cells)["vs MMR"].reason


def test_the_base_model_is_the_relevance_end_of_each_sweep():
    # every MMR / DPP point is more diverse than DDT, the base ranking less: DDT's ILD lies
    # inside the sweep only through the base point (λ = 1), and the baseline's NDCG is read
    # between the base and the least diverse re-ranked point
    seeds = _seeds((0.20, 0.21, 0.22), (0.10, 0.11, 0.12))
    for m in seeds.values():
        for prefix, values in (("mmr", CFG.mmr_lambdas), ("dpp", CFG.dpp_thetas)):
            for j, v in enumerate(values):
                m[f"{prefix}{v:g}__ild"] = m["ddt_ft50__ild"] * (1.05 + 0.05 * j)
                m[f"{prefix}{v:g}__ndcg"] = m["base__ndcg"] * 0.5
    claim = _claims(seeds, CFG)[3]
    assert claim.status == "held"
    assert "outside the sweep in 0 of 3" in claim.evidence
    for m in seeds.values():  # DDT less diverse than the base ranking: outside every sweep
        m["ddt_ft50__ild"] = m["base__ild"] * 0.99
    claim = _claims(seeds, CFG)[3]
    assert claim.status == "inconclusive"
    assert all(c.verdict == "inconclusive" for _, c in claim.verdict.cells)


def test_reaching_the_scratch_tradeoff_is_tested_at_the_five_percent_checkpoint():
    claims = _claims(_seeds((0.20, 0.21, 0.22)), CFG)
    assert claims[4].status == "held"
    assert "the 5 % checkpoint, 50–50 steps" in claims[4].evidence
    seeds = _seeds((0.20, 0.21, 0.22))
    for m in seeds.values():  # scratch 10 % more diverse than the 5 % checkpoint
        m["ddt_scratch__ild"] *= 1.10
        for t in CFG.ft_steps:  # ... but not than the other checkpoints: they do not decide
            m[f"ddt_ft{t}__ild"] = m["ddt_scratch__ild"]
    assert _claims(seeds, CFG)[4].status == "not held"
    seeds = _seeds((0.20, 0.21, 0.22), scratch_steps=100)  # 5 % = 5 steps, below every ft_step
    for m in seeds.values():
        for t in CFG.ft_steps:
            m[f"ddt_ft{t}__ild"] *= 0.5
    assert _claims(seeds, CFG)[4].status == "held"
    for m in seeds.values():  # trials stored without the 5 % checkpoint: no checkpoint <= 5
        del m["ddt_ft_reach__ild"], m["ddt_ft_reach__ndcg"]
    claim = _claims(seeds, CFG)[4]
    assert claim.status == "inconclusive" and claim.verdict.test == "undecided"


def test_margins_are_not_trial_parameters():
    keys = [t.key("diversity-topk") for t in REPRODUCTION.trials(CFG)]
    other = dataclasses.replace(CFG, min_ild_gain=0.3, ndcg_margin=0.05, min_gain=0.05,
                                reach_margin=0.05)
    assert [t.key("diversity-topk") for t in REPRODUCTION.trials(other)] == keys
    for t in REPRODUCTION.trials(CFG):
        assert not set(MARGINS) & set(t.params)


def test_claims_on_a_run_whose_diversity_weight_stays_zero_are_inconclusive():
    seeds = _seeds((0.20, 0.21, 0.22))
    for m in seeds.values():  # MGDA's β* stays at 1: a diversity share of ~1 % of the step
        m.update({"ddt_ft__beta": 0.99995, "ddt_ft__grad_ratio": 230.0,
                  "ddt_scratch__beta": 0.9, "ddt_scratch__grad_ratio": 230.0,
                  "mdr__beta": 0.99995})
    claims = _claims(seeds, CFG)
    assert [c.status for c in claims] == ["inconclusive", "held", "inconclusive",
                                          "inconclusive", "inconclusive", "inconclusive"]
    assert "β*" in claims[0].verdict.reason
    for m in seeds.values():
        m["ddt_ft__beta"] = m["mdr__beta"] = 0.9
    assert all(c.status == "held" for c in _claims(seeds, CFG)
               if c.text[:3] in ("(1)", "(3)", "(6)"))


def test_the_measured_diversity_share_of_the_step_decides_whether_ddt_acts():
    seeds = _seeds((0.20, 0.21, 0.22), (0.10, 0.11, 0.12))
    for m in seeds.values():  # normalised MGDA: β = 1/2, both parts of equal norm
        m.update({"ddt_ft__beta": 0.5, "ddt_ft__div_share": 1.0, "ddt_scratch__beta": 0.5,
                  "ddt_scratch__div_share": 1.0, "mdr__beta": 0.5, "mdr__div_share": 0.8,
                  "ddt_ft__grad_ratio": 230.0})
    assert all(c.status == "held" for c in _claims(seeds, CFG))
    for m in seeds.values():  # a measured share of 1 % swamps the diversity part
        m["ddt_ft__div_share"] = 0.01
    claims = _claims(seeds, CFG)
    assert [c.status for c in claims] == ["inconclusive", "held", "held", "inconclusive",
                                          "inconclusive", "inconclusive"]
    assert "1 % of the relevance part" in claims[0].verdict.reason
