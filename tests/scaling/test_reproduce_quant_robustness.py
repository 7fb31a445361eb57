"""The ``quant-robustness`` reproduction's own logic: preset validation, trial expansion, one
tiny trial's metrics, and the claims on hand-built results (held where the data show the
effect; inconclusive when quantization or LAWA does not act; not held when the effect is
reversed)."""

from __future__ import annotations

import dataclasses

import pytest

from optzoo.errors import ConfigError
from optzoo.experiment import Result, Trial
from optzoo.scaling.reproduce import quant_robustness as repro

QUICK = repro.PRESETS["quick"]
SMOKE = repro.PRESETS["smoke"]


@pytest.mark.parametrize("change, field", [
    ({"budgets": (1.0, 0.5)}, "budgets"),
    ({"budgets": (0.5,)}, "budgets"),
    ({"budgets": (0.04, 1.0)}, "budgets"),
    ({"methods": ("rtn",)}, "methods"),
    ({"claim_methods": ()}, "claim_methods"),
    ({"methods": ("gptq",)}, "claim_methods"),
    ({"bits": (4,)}, "bits"),
    ({"hidden": 33}, "hidden"),
    ({"cooldown_frac": 1.0}, "cooldown_frac"),
    ({"lawa_window": 100}, "lawa_window"),
    ({"high_lr_factor": 1.0}, "high_lr_factor"),
    ({"min_effect_dce": 0.0}, "min_effect_dce"),
])
def test_bad_presets_name_the_field(change, field):
    with pytest.raises(ConfigError, match=field):
        dataclasses.replace(QUICK, **change)


def test_presets_and_trials():
    full = repro.PRESETS["full"]
    assert QUICK.seeds >= 3 and full.seeds >= 5
    # issue 28: width 32 (groups of 32), long enough that 3-bit quantization bites
    assert QUICK.group_size == QUICK.hidden == 32 and QUICK.primary_bits == 3
    assert full.steps > QUICK.steps and set(full.bits) == {3, 4}
    ts = repro.trials(QUICK)
    assert len(ts) == 3 * QUICK.seeds
    assert {t.method for t in ts} == set(repro.FAMILIES)
    hi = next(t for t in ts if t.method == "high-lr")
    assert hi.params["peak_lr"] == pytest.approx(QUICK.peak_lr * QUICK.high_lr_factor)
    assert len({t.key(repro.SLUG) for t in ts}) == len(ts)


def test_one_base_trial_records_every_run():
    t = next(t for t in repro.trials(SMOKE) if t.method == "base" and t.seed == 0)
    m = repro.run_trial(t)
    T = SMOKE.steps
    for tag in (f"const@{T}", f"wsd1@{T}", f"wsd0.5@{T // 2}", f"lawa@{T}"):
        for k in ("ce_fp", "gptq3_dce", "rtn3_dce", "gptq3_rel", "gptq3_ce_q"):
            assert f"{tag}:{k}" in m, (tag, k)
        assert m[f"{tag}:gptq3_dce"] == pytest.approx(m[f"{tag}:gptq3_ce_q"] - m[f"{tag}:ce_fp"])
    assert m["wsd0.5:start"] == round(0.5 * T * 0.8) and m["wsd1:end"] == T
    assert m["lawa:relative_distance"] > 0
    # the WSD cooldown branches off the trunk: before it, the runs are the same model
    assert m[f"const@{T // 2}:ce_fp"] != m[f"wsd0.5@{T // 2}:ce_fp"]


# -- claims on hand-built results --------------------------------------------------------------

def _results(*, jump=0.02, const=0.004, budgets_gap=0.0, high=0.005, lawa=0.004, cosine=0.04,
             fp_gain=0.05, lawa_distance=0.01, seeds=5, noise=0.0005, trace=None):
    cfg = dataclasses.replace(QUICK, seeds=seeds)
    T = cfg.steps
    out = []
    for s in range(seeds):
        e = noise * (s - seeds / 2)

        def cell(tag, dce, fp):
            return {f"{tag}:ce_fp": fp, f"{tag}:gptq3_dce": dce, f"{tag}:gptq3_ce_q": fp + dce,
                    f"{tag}:gptq3_rel": dce / fp, f"{tag}:rtn3_dce": 2 * dce,
                    f"{tag}:rtn3_rel": 2 * dce / fp, f"{tag}:rtn3_ce_q": fp + 2 * dce}

        wsd = const + jump + e
        base = {**cell(f"const@{T}", const + e, 2.10 + e),
                **cell(f"wsd1@{T}", wsd, 2.10 - fp_gain + e),
                **cell(f"wsd0.5@{T // 2}", wsd + budgets_gap, 2.20 + e),
                **cell(f"lawa@{T}", lawa + e, 2.09 - 0.3 * fp_gain + e),
                "lawa:relative_distance": lawa_distance, "entropy_rate": 1.9}
        if trace is not None:  # ΔCE along the trunk and the trace as a function of it
            for i, step in enumerate((50, 100, 150, 200)):
                d = const + 0.003 * i + e
                base.update(cell(f"const@{step}", d, 2.5 - 0.1 * i))
                base[f"const@{step}:hessian_trace"] = trace(d, s)
        out.append(Result(Trial("base", "zipf-ngram", s, {}), base))
        out.append(Result(Trial("high-lr", "zipf-ngram", s, {}),
                          cell(f"wsd1@{T}", high + e, 2.10 - fp_gain + e)))
        out.append(Result(Trial("cosine", "zipf-ngram", s, {}),
                          cell(f"cosine@{T}", cosine + e, 2.04 + e)))
    return out, cfg


def _verdicts(results, cfg, tmp_path):
    return [c.verdict.verdict for c in repro.summarize(results, cfg, tmp_path).claims]


def test_claims_hold_on_data_showing_every_effect(tmp_path):
    results, cfg = _results()
    assert _verdicts(results, cfg, tmp_path) == ["held"] * 10  # GPTQ's five, then RTN's


def test_no_quantization_effect_is_inconclusive(tmp_path):
    # a quantizer that changes nothing: ΔCE 0 everywhere must not pass any claim
    results, cfg = _results(jump=0.0, const=0.0, high=0.0, lawa=0.0, cosine=0.0, noise=0.0)
    summary = repro.summarize(results, cfg, tmp_path)
    assert [c.verdict.verdict for c in summary.claims] == ["inconclusive"] * 10
    assert all("does not act" in c.verdict.reason for c in summary.claims)


def test_reversed_effects_are_not_held(tmp_path):
    results, cfg = _results(jump=0.01, const=0.004, budgets_gap=0.02, high=0.03, lawa=0.05,
                            cosine=0.0)
    v = _verdicts(results, cfg, tmp_path)
    assert v == (["held"] + ["not held"] * 4) * 2


def test_lawa_that_does_not_move_the_weights_is_inconclusive(tmp_path):
    results, cfg = _results(lawa_distance=0.0)
    v = _verdicts(results, cfg, tmp_path)
    assert v[3] == v[8] == "inconclusive" and v.count("held") == 8


def test_hessian_trace_claim(tmp_path):
    results, cfg = _results(trace=lambda d, s: 100 * d + 1)   # monotone in ΔCE: ρ = 1
    summary = repro.summarize(results, cfg, tmp_path)
    assert [c.verdict.verdict for c in summary.claims if c.text.startswith("(6")] == [
        "held", "held"]
    results, cfg = _results(trace=lambda d, s: (-1) ** s * 3.0 + s)  # unrelated to ΔCE
    summary = repro.summarize(results, cfg, tmp_path)
    assert [c.verdict.verdict for c in summary.claims if c.text.startswith("(6")] != [
        "held", "held"]
    results, cfg = _results()
    assert not any(c.text.startswith("(6") for c in repro.summarize(results, cfg,
                                                                    tmp_path).claims)
