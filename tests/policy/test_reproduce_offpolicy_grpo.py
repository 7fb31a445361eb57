"""Tests of the ``offpolicy-grpo`` reproduction's own logic: method names, preset validation,
trial expansion, the per-trial metrics, the Theorem-1 checker, and the claim verdicts of
``summarize`` on hand-built results (one case where each claim holds, one where it does not).
The smoke run itself is exercised by tests/test_reproductions.py."""

from __future__ import annotations

import dataclasses
import math

import pytest

from optzoo.errors import ConfigError
from optzoo.experiment import Result, Trial
from optzoo.policy.reproduce import offpolicy_grpo as repro
from optzoo.policy.reproduce.offpolicy_grpo import (
    MASK_MODES,
    ON_POLICY,
    PRESETS,
    THEOREM,
    OffPolicyGRPORepro,
    mask_mode,
    method_name,
    parse_method,
    ratio_level,
    theorem_check,
)

T, EVERY = 60, 15
EVALS = list(range(0, T + 1, EVERY))


# -- method names --------------------------------------------------------------------------

@pytest.mark.parametrize("name, parsed", [("v1-i1-mask", (1, 1, True)),
                                          ("v10-i1-nomask", (10, 1, False)),
                                          ("v1-i4-mask", (1, 4, True))])
def test_parse_method_round_trips(name, parsed):
    assert parse_method(name) == parsed
    assert method_name(*parsed) == name


@pytest.mark.parametrize("name, mode, level", [
    ("v1-i1-renorm", "renorm", "token"), ("v4-i1-mask-seqsum", "mask", "sequence_sum"),
    ("v1-i1-nomask", "nomask", "token")])
def test_mask_modes_and_ratio_levels_round_trip(name, mode, level):
    v, i, mask = parse_method(name)
    assert mask == (mode != "nomask")
    assert (mask_mode(name), ratio_level(name)) == (mode, level)
    assert method_name(v, i, mode, level) == name
    with pytest.raises(ValueError, match="mask"):
        method_name(1, 1, "sometimes")


@pytest.mark.parametrize("bad", ["v0-i1-mask", "v1-i0-mask", "v1-i1", "v1-i1-masked", "grpo",
                                 "v-1-i1-mask", "", 3, "v1-i1-renorm-seq", "v1-i1-seqsum"])
def test_parse_method_rejects_bad_names(bad):
    with pytest.raises(ValueError, match="method"):
        parse_method(bad)


# -- presets -------------------------------------------------------------------------------

@pytest.mark.parametrize("change, field", [
    ({"methods": ("v4-i1-mask",)}, "methods"),
    ({"methods": ("v1-i1-mask", "v1-i1-mask")}, "methods"),
    ({"methods": ("v1-i1-mask", "on-policy")}, "methods"),
    ({"steps": 50}, "steps"),            # 50 / 4 is not an integer (claim 3's comparison point)
    ({"eval_every": 10}, "eval_every"),  # 60 / 4 = 15 is not an evaluation
    ({"eval_size": 400}, "eval_size"),
    ({"digits": (3, 2)}, "digits"),
    ({"operands": (1, 2)}, "operands"),
    ({"group_size": 1}, "group_size"),
    ({"lr": 0.0}, "lr"),
    ({"beta": -0.1}, "beta"),
    ({"pretrain_target": 1.5}, "pretrain_target"),
    ({"theorem_draws": -1}, "theorem_draws"),
    ({"hidden_size": 130}, "hidden_size"),
    ({"seeds": 0}, "seeds"),
])
def test_preset_validation_names_the_field(change, field):
    with pytest.raises(ConfigError, match=field):
        dataclasses.replace(PRESETS["quick"], **change)


def test_presets_cover_the_brief():
    quick, full = PRESETS["quick"], PRESETS["full"]
    assert quick.seeds >= 3 and full.seeds >= 5
    # quick: every claim can be evaluated
    cfgs = {parse_method(m) for m in quick.methods}
    assert {(1, 1, True), (1, 1, False), (4, 1, True), (10, 1, True), (1, 4, True)} <= cfgs
    # full: the brief's eight configs, 300 steps, its hyperparameters
    assert {parse_method(m) for m in full.methods} == {
        (v, i, mk) for v, i in ((1, 1), (4, 1), (10, 1), (1, 4)) for mk in (True, False)}
    assert full.steps == 300
    # the mask both ways (issue 22), and the theorem's sequence-level ratios in full
    assert "v1-i1-renorm" in quick.methods
    assert {mask_mode(m) for m in full.methods} == set(MASK_MODES)
    assert {m for m in full.methods if ratio_level(m) == "sequence_sum"} == {
        "v4-i1-mask-seqsum", "v10-i1-mask-seqsum"}
    for cfg in PRESETS.values():
        assert (cfg.epsilon, cfg.beta, cfg.lr) == (0.2, 0.01, 1e-4)
    for cfg in (quick, full):
        assert (cfg.group_size, cfg.prompts_per_step, cfg.ref_refresh_period) == (8, 8, 50)


def test_trials_expand_methods_seeds_and_theorem_checks():
    cfg = PRESETS["quick"]
    ts = repro.trials(cfg)
    assert len(ts) == cfg.seeds * (len(cfg.methods) + 1)
    assert len({t.key(repro.SLUG) for t in ts}) == len(ts)
    assert sum(t.method == THEOREM for t in ts) == cfg.seeds
    assert not any(t.method == THEOREM for t in repro.trials(
        dataclasses.replace(cfg, theorem_draws=0)))
    # a trial's params rebuild the preset (minus seeds and methods)
    rl = next(t for t in ts if t.method != THEOREM)
    assert repro._config(dict(rl.params)).steps == cfg.steps


# -- per-trial metrics -----------------------------------------------------------------------

def _history(inner_steps: int, v: int) -> list[dict]:
    rows = [{"step": 0, "test_accuracy": 0.4, "samples": 0, "syncs": 0, "wall_s": 0.0}]
    for s in range(1, 9):
        row = {"step": s, "reward": 0.5, "accuracy": 0.5, "tokens": 100, "samples": 64 * s,
               "syncs": math.ceil(s / v), "wall_s": 0.1 * s, "degenerate_frac": s / 10,
               "max_abs_anchor_log_ratio": float(s % 3), "anchor_shift": 0.01,
               "clip_ratio/region_mean": 0.0}
        if s % 4 == 0:
            row["test_accuracy"] = 0.4 + s / 100
        rows.append(row)
    return rows


def test_trial_metrics_curves_windows_and_budgets():
    cfg = dataclasses.replace(PRESETS["smoke"], steps=8, eval_every=4)
    out = repro._trial_metrics(_history(2, 4), cfg, inner_steps=2)
    assert out["test_accuracy@4"] == pytest.approx(0.44)
    assert out["optimizer_steps@8"] == 16 and out["optimizer_steps"] == 16
    assert out["syncs"] == 2 and out["samples"] == 512 and out["tokens"] == 800
    # windows (0, 4] and (4, 8]
    assert out["masked_frac@4"] == pytest.approx((0.1 + 0.2 + 0.3 + 0.4) / 4)
    assert out["max_abs_log_ratio@8"] == 2.0
    assert out["initial_accuracy"] == 0.4 and out["final_accuracy"] == pytest.approx(0.48)
    assert "masked_frac@0" not in out


# -- Theorem 1 checker ---------------------------------------------------------------------

def test_theorem_check_finds_no_violation_and_is_deterministic():
    a, b = theorem_check(300, seed=3), theorem_check(300, seed=3)
    assert a == b
    assert a["theorem_violations"] == 0 and a["theorem_min_slack"] >= -1e-12
    assert a["theorem_max_weight"] > 0


def test_theorem_check_counts_violations_of_a_wrong_bound(monkeypatch):
    import optzoo.policy.offpolicy_grpo as loss_module

    true_bound = loss_module.improvement_bound

    def too_optimistic(*args, **kwargs):  # drops the −2·TV(π_k, α) term: sometimes violated
        gap, bound = true_bound(*args, **kwargs)
        pi_k, alpha = args[1], args[2]
        return gap, bound + abs(pi_k - alpha).sum()

    monkeypatch.setattr(loss_module, "improvement_bound", too_optimistic)
    assert theorem_check(300, seed=0)["theorem_violations"] > 0
    with pytest.raises(ValueError, match="draws"):
        theorem_check(0, seed=0)


# -- claims on hand-built results ----------------------------------------------------------

def _result(method: str, seed: int, curve: list[float], *, syncs: int | None = None) -> Result:
    v, i, _ = parse_method(method)
    m = {"initial_accuracy": curve[0], "final_accuracy": curve[-1], "steps": T,
         "optimizer_steps": T * i, "syncs": math.ceil(T / v) if syncs is None else syncs,
         "samples": 64 * T, "train_wall_s": 10.0, "masked_frac": 0.3, "max_abs_log_ratio": 0.1,
         "clip_frac": 0.0, "num_parameters": 1000, "pretrain_accuracy": 0.4}
    for s, acc in zip(EVALS, curve, strict=True):
        m |= {f"test_accuracy@{s}": acc, f"optimizer_steps@{s}": s * i,
              f"syncs@{s}": math.ceil(s / v), f"samples@{s}": 64 * s,
              f"train@{s}_wall_s": s / 6}
        if s:
            m |= {f"masked_frac@{s}": 0.3, f"max_abs_log_ratio@{s}": 0.1}
    return Result(Trial(method, "addition-d2-o2", seed, {}), m)


def _rising(end: float) -> list[float]:
    return [0.4 + (end - 0.4) * k / 4 for k in range(5)]


SEEDS = 6  # enough seeds that a clear effect is decided (with 3, t₀.₉₇₅ = 4.3)
ON_END = [0.50, 0.52, 0.54, 0.51, 0.53, 0.52]
# a wide spread of the change and one collapse (seed 0 dips to 0.1 < 0.5 × 0.4)
UNSTABLE = [[0.4, 0.1, 0.3, 0.4, 0.45]] + [_rising(a) for a in (0.70, 0.20, 0.65, 0.25, 0.50)]


def _results(good: bool) -> list[Result]:
    on_curves = [_rising(a) for a in ON_END] if good else UNSTABLE
    out = [_result(ON_POLICY, s, c) for s, c in enumerate(on_curves)]
    on_end = [c[-1] for c in on_curves]
    off = ([a + d for a, d in zip(ON_END, (0.010, 0.012, 0.008, 0.011, 0.009, 0.010),
                                   strict=True)]
           if good else [0.10, 0.12, 0.11, 0.10, 0.12, 0.11])
    out += [_result("v4-i1-mask", s, _rising(a)) for s, a in enumerate(off)]
    nomask = UNSTABLE if good else [_rising(0.51 + 0.002 * s) for s in range(SEEDS)]
    out += [_result("v1-i1-nomask", s, c) for s, c in enumerate(nomask)]
    # claim 3 reads the reuse run at step T/4 = 15 (the second evaluation)
    reuse_at_15 = ([0.41, 0.42, 0.40, 0.41, 0.42, 0.40] if good
                   else [a + 0.05 + 0.001 * s for s, a in enumerate(on_end)])
    out += [_result("v1-i4-mask", s, [0.4, a, a, a, a]) for s, a in enumerate(reuse_at_15)]
    out += [Result(Trial(THEOREM, "discrete", s, {}),
                   {"theorem_draws": 100, "theorem_violations": 0 if good else 2,
                    "theorem_min_slack": 0.01 if good else -0.2, "theorem_max_weight": 3.0})
            for s in range(SEEDS)]
    return out


def _verdicts(results, tmp_path):
    cfg = dataclasses.replace(PRESETS["quick"], methods=(
        ON_POLICY, "v1-i1-nomask", "v4-i1-mask", "v1-i4-mask"))
    summary = repro.summarize(results, cfg, tmp_path)
    assert summary.tables and len(summary.figures) == 2
    assert all(f.path.read_bytes()[:4] == b"\x89PNG" for f in summary.figures)
    return {c.text[:3]: c.status for c in summary.claims}, summary


def test_claims_hold_on_results_that_show_them(tmp_path):
    verdicts, summary = _verdicts(_results(good=True), tmp_path)
    assert verdicts == {"(1)": "held", "(2)": "held", "(3)": "held", "(4)": "held"}
    assert any("collapsed 0/6 vs 1/6" in c.evidence for c in summary.claims)
    tests = {c.text[:3]: c.verdict.test for c in summary.claims}
    assert tests == {"(1)": "all_of", "(2)": "all_of", "(3)": "superior", "(4)": "bound_holds"}
    c1 = next(c for c in summary.claims if c.text.startswith("(1)"))
    assert [v.test for _, v in c1.verdict.cells] == ["noninferior", "superior", "bound_holds"]
    assert c1.verdict.cells[0][1].margin == PRESETS["quick"].noninferiority_margin_acc


def test_claims_fail_on_results_that_contradict_them(tmp_path):
    verdicts, _ = _verdicts(_results(good=False), tmp_path)
    assert verdicts == {"(1)": "not held", "(2)": "not held", "(3)": "not held",
                        "(4)": "not held"}


def test_claim_1_needs_v_times_fewer_syncs(tmp_path):
    results = [r if r.trial.method != "v4-i1-mask"
               else _result("v4-i1-mask", r.trial.seed, _rising(0.53), syncs=T)
               for r in _results(good=True)]
    verdicts, _ = _verdicts(results, tmp_path)
    assert verdicts["(1)"] == "not held" and verdicts["(3)"] == "held"


def _flat(method: str, seed: int, acc: float) -> Result:
    return _result(method, seed, [acc] * len(EVALS))


def test_claim_1_a_method_that_learns_nothing_does_not_pass(tmp_path):
    """The named defect: the old rule, mean(off) ≥ mean(on) − CI half-width, passed an
    off-policy run that stayed at its step-0 accuracy while on-policy learned."""
    on_end = [0.50, 0.56, 0.44]  # three seeds, a wide on-policy CI: the old threshold ≈ 0.35
    results = [r for r in _results(good=True) if r.trial.seed < 3
               and r.trial.method not in (ON_POLICY, "v4-i1-mask")]
    results += [_result(ON_POLICY, s, _rising(a)) for s, a in enumerate(on_end)]
    results += [_flat("v4-i1-mask", s, 0.4) for s in range(3)]
    # the old rule would have passed it
    assert 0.4 >= 0.50 - 2 * 0.06
    verdicts, summary = _verdicts(results, tmp_path)
    assert verdicts["(1)"] == "not held"
    c1 = next(c for c in summary.claims if c.text.startswith("(1)"))
    learns = dict(c1.verdict.cells)["v = 4 learns (final − step 0 > 0.02)"]
    assert learns.verdict == "not held" and learns.test == "superior"


def test_claims_1_and_3_are_inconclusive_when_rl_moves_nothing(tmp_path):
    """Every run stays at its step-0 accuracy: non-inferiority would hold trivially and the
    reuse comparison would read "not worse"; RL does not act, so both are inconclusive."""
    results = [r for r in _results(good=True)
               if r.trial.method not in (ON_POLICY, "v4-i1-mask", "v1-i4-mask")]
    for s, a in enumerate([0.40, 0.42, 0.41, 0.40, 0.42, 0.41]):
        results += [_flat(m, s, a) for m in (ON_POLICY, "v4-i1-mask", "v1-i4-mask")]
    verdicts, summary = _verdicts(results, tmp_path)
    assert verdicts["(1)"] == "inconclusive" and verdicts["(3)"] == "inconclusive"
    c1 = next(c for c in summary.claims if c.text.startswith("(1)"))
    assert "does not act" in c1.verdict.reason


def test_claim_1_a_small_loss_within_the_margin_is_non_inferior(tmp_path):
    results = [r for r in _results(good=True) if r.trial.method != "v4-i1-mask"]
    results += [_result("v4-i1-mask", s, _rising(a - 0.01 + 0.001 * s))
                for s, a in enumerate(ON_END)]
    verdicts, _ = _verdicts(results, tmp_path)
    assert verdicts["(1)"] == "held"
    # the same loss beyond the margin is not non-inferior
    results = [r for r in results if r.trial.method != "v4-i1-mask"]
    results += [_result("v4-i1-mask", s, _rising(a - 0.08 + 0.001 * s))
                for s, a in enumerate(ON_END)]
    verdicts, _ = _verdicts(results, tmp_path)
    assert verdicts["(1)"] == "not held"


def test_claim_2_a_negligible_spread_reduction_does_not_pass(tmp_path):
    """The mask's spread is lower, but by a fraction of an accuracy point and with no
    collapse either way: the old rule (a lower std, no more collapses) passed; not held now."""
    wiggle = [0.001, -0.001, 0.0, 0.001, -0.001, 0.0]
    results = [r for r in _results(good=True)
               if r.trial.method not in (ON_POLICY, "v1-i1-nomask")]
    results += [_result(ON_POLICY, s, _rising(0.52 + w)) for s, w in enumerate(wiggle)]
    results += [_result("v1-i1-nomask", s, _rising(0.52 + 2 * w)) for s, w in enumerate(wiggle)]
    verdicts, summary = _verdicts(results, tmp_path)
    c2 = next(c for c in summary.claims if c.text.startswith("(2)"))
    assert "collapsed 0/6 vs 0/6" in c2.evidence
    assert verdicts["(2)"] == "not held"


def test_claim_2_is_inconclusive_when_the_mask_masks_nothing(tmp_path):
    results = [Result(r.trial, {**r.metrics, "masked_frac": 0.0})
               if r.trial.method == ON_POLICY else r for r in _results(good=True)]
    verdicts, _ = _verdicts(results, tmp_path)
    assert verdicts["(2)"] == "inconclusive"


def test_claim_3_a_tie_is_not_worse(tmp_path):
    results = [r for r in _results(good=True) if r.trial.method != "v1-i4-mask"]
    on = {r.trial.seed: r.metrics["final_accuracy"] for r in results
          if r.trial.method == ON_POLICY}
    results += [_result("v1-i4-mask", s, [0.4] + [on[s]] * 4) for s in on]
    verdicts, _ = _verdicts(results, tmp_path)
    assert verdicts["(3)"] == "not held"


def test_margins_stay_out_of_trial_keys():
    cfg = PRESETS["quick"]
    keys = {t.key(repro.SLUG) for t in repro.trials(cfg)}
    other = dataclasses.replace(cfg, noninferiority_margin_acc=0.05, min_effect_acc=0.03,
                                min_spread_acc=0.02)
    assert {t.key(repro.SLUG) for t in repro.trials(other)} == keys
    with pytest.raises(ConfigError, match="min_effect_acc"):
        dataclasses.replace(cfg, min_effect_acc=0.0)


def test_collapse_threshold_is_half_the_step_0_accuracy():
    assert repro._collapsed(_result(ON_POLICY, 0, [0.4, 0.19, 0.4, 0.4, 0.4]))
    assert not repro._collapsed(_result(ON_POLICY, 0, [0.4, 0.21, 0.4, 0.4, 0.4]))


def test_config_error_is_a_value_error():
    with pytest.raises(ValueError, match="methods"):
        OffPolicyGRPORepro(methods=("v2-i1-mask",))


def test_claim_2r_judges_the_renormalising_mask_on_its_own_runs(tmp_path):
    """The renormalising mask gets its own claim against the same no-mask runs: held when its
    runs are stable, not held when they are less stable than no-mask's; absent runs leave it
    out."""
    base = _results(good=True)
    stable = [_result("v1-i1-renorm", s, _rising(a + 0.004)) for s, a in enumerate(ON_END)]
    # wider than no-mask's spread and two collapses against its one
    worse = [[0.4, 0.1, 0.3, 0.4, 0.45], [0.4, 0.15, 0.2, 0.3, 0.3]] + [
        _rising(a) for a in (0.90, 0.05, 0.85, 0.10)]
    shaky = [_result("v1-i1-renorm", s, c) for s, c in enumerate(worse)]
    cfg = dataclasses.replace(PRESETS["quick"], methods=(
        ON_POLICY, "v1-i1-nomask", "v1-i1-renorm", "v4-i1-mask", "v1-i4-mask"))
    held = {c.text[:3]: c.status for c in repro.summarize(base + stable, cfg, tmp_path).claims}
    failed = {c.text[:3]: c.status for c in repro.summarize(base + shaky, cfg, tmp_path).claims}
    assert held["(2r"] == "held" and failed["(2r"] == "not held"
    assert held["(2)"] == failed["(2)"] == "held"  # the paper's mask is judged on its own runs
    assert "(2r" not in {c.text[:3] for c in repro.summarize(base, cfg, tmp_path).claims}


def test_claim_1s_sequence_level_ratios_are_their_own_claim(tmp_path):
    base = _results(good=True)
    seq = [_result("v4-i1-mask-seqsum", s, _rising(0.40 + 0.001 * s)) for s in range(SEEDS)]
    cfg = dataclasses.replace(PRESETS["quick"], methods=(
        ON_POLICY, "v1-i1-nomask", "v4-i1-mask", "v4-i1-mask-seqsum", "v1-i4-mask"))
    verdicts = {c.text[:3]: c.status for c in repro.summarize(base + seq, cfg, tmp_path).claims}
    # the sequence-level run learns nothing: its claim fails, the token-level one still holds
    assert verdicts["(1s"] == "not held" and verdicts["(1)"] == "held"


def test_claim_2r_is_inconclusive_when_renormalising_changes_nothing(tmp_path):
    """Renormalising only rescales the gradient; under the grad-norm clip and Adam the runs can
    equal the paper's mask runs exactly (as in the quick run): then the mask does not act."""
    base = _results(good=True)
    same = [_result("v1-i1-renorm", s, _rising(a)) for s, a in enumerate(ON_END)]
    cfg = dataclasses.replace(PRESETS["quick"], methods=(
        ON_POLICY, "v1-i1-nomask", "v1-i1-renorm", "v4-i1-mask", "v1-i4-mask"))
    claims = {c.text[:3]: c for c in repro.summarize(base + same, cfg, tmp_path).claims}
    assert claims["(2r"].status == "inconclusive"
    assert "only rescales the gradient" in claims["(2r"].verdict.reason
