"""The ``spo`` reproduction: preset validation, method parsing, the budget and smoothness
measures, and the claim logic of ``summarize`` on hand-built results (one case that holds and
one that does not)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from optzoo.errors import ConfigError
from optzoo.experiment import Result, Trial
from optzoo.policy.reproduce import spo as repro

QUICK = repro.PRESETS["quick"]


@pytest.mark.parametrize(("change", "field"), [
    ({"methods": ("spo", "grpo", "ppo")}, "methods"),
    ({"methods": ("spo", "grpo", "spo")}, "methods"),
    ({"methods": ("spo", "spo-notracker")}, "methods"),
    ({"steps": 100, "eval_every": 30}, "eval_every"),
    ({"spo_prompts": 32}, "spo_prompts"),
    ({"group_size": 1, "grpo_prompts": 64}, "group_size"),
    ({"rho_min": 0.97}, "rho_min"),
    ({"pretrain_target": 0.0}, "pretrain_target"),
    ({"min_digits": 3, "max_digits": 2}, "min_digits"),
    ({"max_operands": 9}, "max_operands"),
    ({"n0": -1}, "n0"),
    ({"lr": 0.0}, "lr"),
    ({"cuda_max_digits": 19}, "cuda_max_digits"),
])
def test_bad_presets_name_the_field(change, field):
    with pytest.raises(ConfigError, match=field):
        dataclasses.replace(QUICK, **change)


def test_presets_fix_the_briefs_setting():
    full = repro.PRESETS["full"]
    assert set(full.methods) == set(repro.METHODS) and full.seeds >= 5
    assert (full.min_digits, full.max_digits, full.min_operands, full.max_operands) == (
        1, 4, 2, 4)
    # quick narrows the task so that per-seed pretraining fits one core (module docstring)
    assert (QUICK.min_digits, QUICK.max_digits, QUICK.min_operands, QUICK.max_operands) == (
        1, 3, 2, 2)
    for cfg in (QUICK, full):
        assert (cfg.n_train, cfg.n_test, cfg.n0, cfg.d_half) == (1000, 300, 4, 0.06)
        assert (cfg.rho_min, cfg.rho_max, cfg.lr, cfg.epsilon) == (0.875, 0.96, 1e-4, 0.2)
        assert cfg.spo_prompts == 64 and (cfg.grpo_prompts, cfg.group_size) == (8, 8)
    assert {"spo", "grpo", "spo-notracker"} <= set(QUICK.methods)


def test_method_names_build_the_right_algorithms():
    from optzoo.policy.trainer import GRPO, SPO, Reinforce

    spo = repro.build_algorithm("spo", QUICK)
    assert isinstance(spo, SPO) and spo.prompts_per_step == 64 and spo.n0 == 4
    assert (spo.baseline, spo.sampling, spo.rho_mode) == ("tracker", "prioritised", "kl")
    assert spo.tracker.rho_min == 0.875 and spo.tracker.d_half == 0.06
    assert repro.build_algorithm("spo-notracker", QUICK).baseline == "none"
    assert repro.build_algorithm("spo-uniform", QUICK).sampling == "uniform"
    const = repro.build_algorithm("spo-constrho", QUICK)
    assert const.rho_mode == "constant" and const.tracker.rho_constant == 0.9
    grpo = repro.build_algorithm("grpo", QUICK)
    assert isinstance(grpo, GRPO) and grpo.scale_rewards == "group"
    assert (grpo.group_size, grpo.prompts_per_step, grpo.epsilon) == (8, 8, 0.2)
    assert repro.build_algorithm("grpo-batchstd", QUICK).scale_rewards == "batch"
    rloo = repro.build_algorithm("rloo", QUICK)
    assert isinstance(rloo, Reinforce) and rloo.baseline == "rloo"
    with pytest.raises(ConfigError, match="method"):
        repro.build_algorithm("dapo", QUICK)


def test_offline_budget_and_trials():
    # 4 offline samples × 1000 prompts = 4000 = 62.5 steps of 64 responses → 63 extra steps
    assert repro.offline_extra_steps(QUICK) == 63
    assert repro.offline_extra_steps(QUICK, n_train=5000) == 313
    assert repro.offline_extra_steps(dataclasses.replace(QUICK, match_offline_budget=False)) == 0
    assert repro.offline_extra_steps(dataclasses.replace(QUICK, n0=0)) == 0
    ts = repro.trials(QUICK)
    assert len(ts) == len(QUICK.methods) * QUICK.seeds
    # a trial's key does not depend on which other methods the preset runs
    fewer = dataclasses.replace(QUICK, methods=("spo", "grpo"))
    assert {t.key("spo") for t in repro.trials(fewer)} <= {t.key("spo") for t in ts}


def test_majority_vote_and_raw_group_advantage_variance():
    assert repro.majority_vote(["12", " 13", "13 ", "12"]) == "12"  # tie: first seen
    assert repro.majority_vote(["7", "8", "8"]) == "8"
    with pytest.raises(ValueError, match="completions"):
        repro.majority_vote([])
    rewards = torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0])
    # group 1: mean 0.25 → (0.75, −0.25, −0.25, −0.25); group 2: all 0; batch mean 0
    expected = (0.75 ** 2 + 3 * 0.25 ** 2) / 7
    assert repro._raw_group_advantage_var(rewards, 4) == pytest.approx(expected)


def test_smoothness_measures_by_hand():
    steady = np.array([[0.1, 0.2, 0.3, 0.4], [0.2, 0.3, 0.4, 0.5]])
    assert repro.step_to_step_var(steady) == pytest.approx([0.0, 0.0], abs=1e-12)
    assert repro.seed_to_seed_std(steady) == pytest.approx(0.0, abs=1e-12)
    zigzag = np.array([[0.1, 0.3, 0.1, 0.3], [0.1, 0.1, 0.1, 0.1]])
    # seed 0: increments (0.2, −0.2, 0.2), variance 0.0355…; seed 1 flat
    assert repro.step_to_step_var(zigzag) == pytest.approx([np.var([0.2, -0.2, 0.2]), 0.0])
    # gains: seed 0 (0.2, 0, 0.2), seed 1 (0, 0, 0): stds (0.1414, 0, 0.1414), mean 0.0943
    assert repro.seed_to_seed_std(zigzag) == pytest.approx(2 * np.sqrt(0.02) / 3)
    assert np.isnan(repro.seed_to_seed_std(zigzag[:1]))


def _cfg():
    return dataclasses.replace(repro.PRESETS["smoke"], steps=6, eval_every=3, seeds=3)


def _result(method, seed, curve, zero_adv=(0.0, 0.0), final_budget=None):
    """A hand-built trial result with held-out ``curve`` at steps 0, 3, 6."""
    m = {f"test_accuracy@{t}": a for t, a in zip((0, 3, 6), curve, strict=True)}
    m.update({f"train@{t}_wall_s": float(t) for t in (0, 3, 6)})
    m.update({"final_accuracy": curve[-1], "zero_adv_early": zero_adv[0],
              "zero_adv_late": zero_adv[1], "zero_adv_frac": float(np.mean(zero_adv)),
              "advantage_var": 0.2, "reward": 0.3, "samples": 48, "tokens": 200,
              "train_wall_s": 1.0, "setup_samples": 96 if method.startswith("spo") else 0,
              "extra_steps": 0 if method.startswith("spo") else 12,
              "zero_adv_frac@3": zero_adv[0], "zero_adv_frac@6": zero_adv[1]})
    if final_budget is not None:
        m.update({"final_accuracy_budget": final_budget, "samples_budget": 144})
    return Result(trial=Trial(method, "addition", seed, {}), metrics=m)


def _summary(tmp_path, spo_curves, grpo_curves, notracker_finals, grpo_zero, budget):
    results = []
    for s in range(len(spo_curves)):
        results.append(_result("spo", s, spo_curves[s]))
        results.append(_result("grpo", s, grpo_curves[s], zero_adv=grpo_zero[s],
                               final_budget=budget[s]))
        results.append(_result("spo-notracker", s, (0.1, 0.1, notracker_finals[s])))
    return {c.text[:4]: c for c in repro.summarize(results, _cfg(), tmp_path).claims}


# six seeds: with three, a t interval (t₀.₉₇₅ = 4.3) decides only huge effects
STEADY = [(0.1, 0.2 + e, 0.3 + f) for e, f in
          ((0.0, 0.0), (0.002, 0.004), (-0.003, 0.001), (0.001, -0.002), (0.004, 0.003),
           (-0.002, -0.004))]
ZIGZAG = [(0.1, 0.3, 0.1), (0.1, 0.0, 0.25), (0.1, 0.35, 0.15), (0.1, 0.02, 0.2),
          (0.1, 0.28, 0.12), (0.1, 0.05, 0.22)]
GROWING = [(0.5, 0.7), (0.55, 0.8), (0.5, 0.75), (0.52, 0.72), (0.56, 0.78), (0.54, 0.76)]
HOLD = dict(spo_curves=STEADY, grpo_curves=ZIGZAG,
            notracker_finals=(0.2, 0.22, 0.18, 0.21, 0.19, 0.2), grpo_zero=GROWING,
            budget=(0.25, 0.28, 0.22, 0.24, 0.26, 0.23))


def _status(claims):
    return {k: c.status for k, c in claims.items()}


def test_claims_hold_on_results_built_to_hold(tmp_path):
    claims = _summary(tmp_path, **HOLD)
    assert set(claims) == {"(1) ", "(1b)", "(2) ", "(3) ", "(4) "}
    assert all(c.held for c in claims.values()), {k: c.verdict.describe()
                                                  for k, c in claims.items()}
    assert {k: c.verdict.test for k, c in claims.items()} == {
        "(1) ": "all_of", "(1b)": "all_of", "(2) ": "all_of", "(3) ": "all_of",
        "(4) ": "superior"}
    assert [v.test for _, v in claims["(1) "].verdict.cells] == ["noninferior", "superior"]
    assert [v.test for _, v in claims["(3) "].verdict.cells] == ["within", "superior"]


def test_claims_fail_on_results_built_to_fail(tmp_path):
    claims = _summary(
        tmp_path,
        # SPO zig-zags and ends below GRPO; GRPO climbs steadily
        spo_curves=ZIGZAG, grpo_curves=STEADY,
        notracker_finals=(0.3,) * 6,
        # large but shrinking (late < early): not growing
        grpo_zero=[(0.8, 0.6), (0.85, 0.7), (0.9, 0.65), (0.82, 0.62), (0.88, 0.66),
                   (0.86, 0.64)],
        budget=(0.35,) * 6)
    assert set(_status(claims).values()) == {"not held"}, {
        k: c.verdict.describe() for k, c in claims.items()}


def test_claim_1_a_method_that_learns_nothing_does_not_pass(tmp_path):
    """SPO stays at its step-0 accuracy while GRPO degrades: the old rule (mean SPO ≥ mean
    GRPO) passed; SPO learns nothing, so the claim is not held."""
    flat = [(0.1, 0.1, 0.1)] * 6
    slips = [(0.1, 0.08, 0.05 - d) for d in (0.01, 0.0, 0.005, 0.01, 0.0, 0.005)]
    claims = _summary(tmp_path, **{**HOLD, "spo_curves": flat, "grpo_curves": slips})
    assert claims["(1) "].status == "not held"
    cells = dict(claims["(1) "].verdict.cells)
    assert cells["non-inferior to GRPO (margin 0.03)"].verdict == "held"
    assert cells["SPO learns (final − step 0 > 0.02)"].verdict == "not held"


def test_claims_1_and_4_are_inconclusive_when_rl_moves_nothing(tmp_path):
    flat = [(0.1, 0.1, 0.1)] * 6
    claims = _summary(tmp_path, **{**HOLD, "spo_curves": flat, "grpo_curves": flat,
                                   "notracker_finals": (0.1,) * 6})
    assert claims["(1) "].status == "inconclusive"
    assert claims["(4) "].status == "inconclusive"
    assert "does not act" in claims["(4) "].verdict.reason


def test_claim_4_a_negligible_difference_does_not_pass(tmp_path):
    """The no-tracker run ends half a point below SPO on every seed: the old rule (mean below
    SPO's) passed; below the 2-point minimal effect it is not held."""
    finals = tuple(c[-1] - 0.005 for c in STEADY)
    claims = _summary(tmp_path, **{**HOLD, "notracker_finals": finals})
    assert claims["(4) "].status == "not held"


def test_claim_2_a_negligible_smoothness_difference_does_not_pass(tmp_path):
    """GRPO's curves are a hair rougher than SPO's: the old rule (both measures lower, by any
    amount) passed; under the 1-point minimal effect it is not held."""
    rougher = [(a, b + 0.5 * (b - 0.2), c + 0.5 * (c - 0.3)) for a, b, c in STEADY]
    claims = _summary(tmp_path, **{**HOLD, "grpo_curves": rougher})
    assert claims["(2) "].status == "not held"


def test_degenerate_claim_needs_a_large_level_and_a_real_growth(tmp_path):
    # growing (0.1 → 0.3 in every seed) but not large (< 0.5): not held on "large" alone
    claims = _summary(tmp_path, **{**HOLD, "grpo_zero": [(0.1, 0.3), (0.12, 0.3), (0.1, 0.32),
                                                         (0.11, 0.31), (0.1, 0.3),
                                                         (0.12, 0.32)]})
    cells = dict(claims["(3) "].verdict.cells)
    assert claims["(3) "].status == "not held"
    assert cells["large: late in [0.5, 1]"].verdict == "not held"
    assert cells["growing: late − early > 0.05"].verdict == "held"
    # large, and late − early has a CI above 0 (the old rule) but under 5 % of the samples
    claims = _summary(tmp_path, **{**HOLD, "grpo_zero": [(0.7, 0.71), (0.72, 0.73),
                                                         (0.7, 0.712), (0.71, 0.718),
                                                         (0.7, 0.709), (0.72, 0.731)]})
    assert claims["(3) "].status == "not held"


def test_margins_stay_out_of_trial_keys():
    cfg = repro.PRESETS["quick"]
    keys = {t.key(repro.SLUG) for t in repro.trials(cfg)}
    other = dataclasses.replace(cfg, noninferiority_margin_acc=0.05, min_effect_acc=0.03,
                                min_smooth_acc=0.02, large_degenerate_frac=0.6,
                                min_growth_frac=0.1)
    assert {t.key(repro.SLUG) for t in repro.trials(other)} == keys
    with pytest.raises(ConfigError, match="min_growth_frac"):
        dataclasses.replace(cfg, min_growth_frac=0.0)


def test_phase_means_take_first_and_last_thirds():
    rows = [{"step": 0}] + [{"step": t, "x": float(t)} for t in range(1, 10)]
    assert repro._phase_means(rows, "x", 9) == (2.0, 8.0)


def _tiny_trainer(method, reward, **change):
    from optzoo.llm import Addition, TinyLlama, char_tokenizer
    from optzoo.policy.trainer import PolicyTrainer, TrainerConfig

    task = Addition(digits=1)
    tok = char_tokenizer()
    model = TinyLlama(hidden_size=16, intermediate_size=32, num_layers=1,
                      num_heads=2).build(tok, seed=0)
    train, test = task.split(20, 4, seed=0)
    cfg = dataclasses.replace(repro.PRESETS["smoke"], **change)
    algo = repro.build_algorithm(method, cfg)
    return PolicyTrainer(model, tok, task, train, test, algo,
                         TrainerConfig(steps=1, eval_every=0, eval_size=4, max_new_tokens=3),
                         reward=reward), algo


def _alternate(prompts, completions, **kwargs):
    return [float(i % 2) for i in range(len(completions))]


@pytest.mark.parametrize("method", ["spo", "spo-notracker"])
def test_zero_advantage_is_measured_on_the_loss_advantage(method):
    trainer, algo = _tiny_trainer(method, _alternate)
    row = trainer.train_step()
    # half the rewards are 1 and the normalised advantages are ±1: no sample lacks a gradient,
    # although without the tracker half the *raw* advantages (r − 0) are 0
    assert row["zero_adv_frac"] == row["degenerate_frac"] == 0.0
    assert algo.prior_values.shape == (20,) and trainer.setup_samples == 20 * 2


def test_all_equal_rewards_without_tracker_give_no_gradient_signal():
    trainer, _ = _tiny_trainer("spo-notracker", lambda p, c, **k: [1.0] * len(c))
    assert trainer.train_step()["zero_adv_frac"] == 1.0


def test_group_methods_log_the_raw_advantage_variance():
    for method in ("grpo", "rloo"):
        trainer, _ = _tiny_trainer(method, _alternate)
        row = trainer.train_step()
        n = 2 * 4  # smoke: 2 prompts × G = 4, rewards (0, 1, 0, 1) per group
        # GRPO: r − group mean = ±0.5; RLOO: r − mean of the other three = 1 − 1/3 or 0 − 2/3
        raw = [0.5, -0.5] * 4 if method == "grpo" else [-2 / 3, 2 / 3] * 4
        assert row["advantage_var"] == pytest.approx(np.var(raw) * n / (n - 1))
        assert row["degenerate_frac"] == 0.0
