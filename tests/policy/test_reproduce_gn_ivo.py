"""The ``gn-ivo`` reproduction: preset validation, method parsing, the reused-batch REINFORCE
baseline, the claim logic on hand-built results, and the brief's exact check of Theorem 3.2
(fit a tabular policy to the EXPECTED GN-IVO loss on a vocab-3, length-3 tree)."""

from __future__ import annotations

import dataclasses
import itertools
import math
from types import SimpleNamespace

import pytest
import torch

from optzoo.errors import ConfigError
from optzoo.experiment import Result, Trial
from optzoo.policy import gn_ivo_loss
from optzoo.policy.reproduce import gn_ivo as repro
from optzoo.policy.trainer import GNIVO, GRPO, Reinforce

SMOKE = repro.PRESETS["smoke"]


# -- presets and method parsing -----------------------------------------------------------------

@pytest.mark.parametrize("changes,field", [
    ({"cells": ("gn-ivo@4", "ppo@4")}, "cells"),
    ({"cells": ("gn-ivo",)}, "cells"),
    ({"cells": ("gn-ivo@1",)}, "cells"),
    ({"cells": ("gn-ivo@4", "gn-ivo@4")}, "cells"),
    ({"cells": ()}, "cells"),
    ({"samples_per_iteration": 6, "cells": ("gn-ivo@4",)}, "samples_per_iteration"),
    ({"pretrain_target": 0.0}, "pretrain_target"),
    ({"alpha": 0.0}, "alpha"),
    ({"beta": -0.1}, "beta"),
    ({"gn_ivo_kl": "sum"}, "gn_ivo_kl"),
    ({"epsilon": 1.0}, "epsilon"),
    ({"iterations": 0}, "iterations"),
    ({"operands": 1}, "operands"),
    ({"cuda_hidden_size": 100, "cuda_num_heads": 8}, "cuda_hidden_size"),
    ({"main_group_size": 1}, "main_group_size"),
    ({"tabular_group_sizes": (3, 2)}, "tabular_group_sizes"),
    ({"tabular_vocab": 5, "tabular_length": 6}, "tabular_vocab"),
    ({"tabular_group_sizes": (2, 8)}, "tabular_group_sizes"),
])
def test_bad_presets_name_the_field(changes, field):
    with pytest.raises(ConfigError, match=field):
        dataclasses.replace(SMOKE, **changes)


def test_presets_cover_the_briefs_grid():
    full, quick = repro.PRESETS["full"], repro.PRESETS["quick"]
    assert full.seeds >= 5 and full.iterations == 150 and full.samples_per_iteration == 200
    assert set(full.grid()) == {(m, k) for m in repro.METHODS for k in (2, 4, 8)}
    assert (full.hidden_size, full.num_layers, full.num_heads, full.intermediate_size) == (
        128, 4, 4, 256)
    assert (full.alpha, full.lr, full.inner_steps, full.main_group_size) == (0.2, 1e-4, 2, 4)
    quick_grid = set(quick.grid())
    assert {(m, 4) for m in repro.METHODS} <= quick_grid
    assert {("gn-ivo", 2), ("grpo", 2), ("rloo", 2)} <= quick_grid and quick.seeds >= 3


def test_trials_one_per_cell_and_seed_plus_the_theorem_check():
    ts = repro.trials(SMOKE)
    assert len(ts) == SMOKE.seeds * (len(SMOKE.cells) + 1)
    assert len({t.key(repro.SLUG) for t in ts}) == len(ts)
    theorem = [t for t in ts if t.method == repro.THEOREM]
    assert [t.seed for t in theorem] == list(range(SMOKE.seeds))
    assert all("group_size" not in t.params and "iterations" not in t.params for t in theorem)
    rl = [t for t in ts if t.method != repro.THEOREM]
    assert all(t.params["group_size"] == 2 and "tabular_vocab" not in t.params for t in rl)


def test_parse_cell():
    assert repro.parse_cell("gn-ivo-one@8") == ("gn-ivo-one", 8)
    for bad in ("gn-ivo@x", "gn-ivo@4@2", "GRPO@4", 4):
        with pytest.raises(ConfigError, match="cells"):
            repro.parse_cell(bad)


def test_methods_build_the_right_algorithms_on_a_shared_sample_budget():
    cfg = dataclasses.replace(repro.PRESETS["full"])
    a = repro.make_algorithm("gn-ivo", 4, cfg)
    assert isinstance(a, GNIVO) and a.steps == "line" and a.step_separator == ";"
    assert (a.group_size, a.prompts_per_step, a.alpha, a.inner_steps, a.num_t) == (
        4, 50, 0.2, 2, 1)
    assert a.normalize_weights and a.beta == cfg.beta
    # β on the scale of g in every preset (issue 22); the earlier token mean stays an option
    assert all(p.gn_ivo_kl == "response_sum" for p in repro.PRESETS.values())
    assert a.kl_reduction == "response_sum"
    assert repro.make_algorithm("gn-ivo", 4, dataclasses.replace(
        cfg, gn_ivo_kl="token_mean")).kl_reduction == "token_mean"
    one = repro.make_algorithm("gn-ivo-one", 2, cfg)
    assert isinstance(one, GNIVO) and one.steps == "one" and one.prompts_per_step == 100
    g = repro.make_algorithm("grpo", 8, cfg)
    assert isinstance(g, GRPO) and g.inner_steps == 2 and g.prompts_per_step == 25
    r = repro.make_algorithm("rloo", 4, cfg)
    assert isinstance(r, repro.ReusedReinforce) and r.baseline == "rloo" and r.inner_steps == 2
    b = repro.make_algorithm("reinforce", 4, cfg)
    assert b.baseline == "batch_mean"
    plain = repro.make_algorithm("rloo", 4, dataclasses.replace(cfg, baseline_inner_steps=1))
    assert type(plain) is Reinforce and plain.loss_type == "sum"
    with pytest.raises(ConfigError, match="method"):
        repro.make_algorithm("ppo", 4, cfg)
    with pytest.raises(ConfigError, match="group_size"):
        repro.make_algorithm("grpo", 3, cfg)


# -- the reused-batch REINFORCE baseline --------------------------------------------------------

class _FakeTrainer:
    """Just what ``ReusedReinforce.update`` calls; records d loss / d logp of every step."""

    def __init__(self, logp, max_new_tokens):
        self.logp, self.max_new_tokens, self.grads = logp, max_new_tokens, []

    def policy_logprobs(self, r):
        return self.logp * 1.0

    def reference_logprobs(self, r):
        return self.logp.detach() - 0.1

    def optimizer_step(self, loss):
        self.grads.append(torch.autograd.grad(loss, self.logp)[0])


def test_reused_reinforce_first_step_is_rloo_and_later_steps_are_clipped():
    gen = torch.Generator().manual_seed(0)
    b, t, k = 6, 5, 3
    mask = (torch.arange(t) < torch.tensor([5, 3, 4, 5, 2, 1]).unsqueeze(1)).long()
    old = -torch.rand(b, t, generator=gen) - 0.1
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 0.0])
    batch = SimpleNamespace(rollout=SimpleNamespace(logprobs=old, completion_mask=mask),
                            rewards=rewards)
    algo = repro.ReusedReinforce(group_size=k, prompts_per_step=2, baseline="rloo", beta=0.0,
                                 inner_steps=3, epsilon=0.2)
    fake = _FakeTrainer(old.clone().requires_grad_(True), max_new_tokens=7)
    metrics = algo.update(fake, batch, 0)
    assert len(fake.grads) == 3 and 0.0 <= metrics["degenerate_frac"] <= 1.0
    # RLOO advantage r_i − mean of the other K − 1 rewards, by hand
    g = rewards.view(-1, k)
    adv = (g - (g.sum(1, keepdim=True) - g) / (k - 1)).reshape(-1)
    expected = -adv.unsqueeze(1) * mask / (b * 7)  # −A·Σ_t log π, over B·max_len
    torch.testing.assert_close(fake.grads[0], expected)
    # beyond the clip window (ratio e^0.5 on a positive advantage) the gradient vanishes
    moved = old + 0.5 * (adv > 0).unsqueeze(1)
    fake = _FakeTrainer(moved.clone().requires_grad_(True), max_new_tokens=7)
    algo.update(fake, batch, 0)
    assert torch.all(fake.grads[0][adv > 0] == 0)
    assert torch.any(fake.grads[0][adv < 0] != 0)


def test_reused_reinforce_rejects_bad_arguments():
    with pytest.raises(ValueError, match="inner_steps"):
        repro.ReusedReinforce(inner_steps=0)
    with pytest.raises(ValueError, match="epsilon"):
        repro.ReusedReinforce(epsilon=1.5)
    with pytest.raises(ValueError, match="baseline"):
        repro.ReusedReinforce(baseline="critic")


# -- Theorem 3.2, exactly -----------------------------------------------------------------------

def _brute_force_values(tree, alpha):
    """V(y_≤t) = log Σ_{y ⊒ y_≤t} π_old(y | y_≤t) exp(R(y)/α), by enumerating completions with
    per-node softmaxes (no use of the module's helpers)."""
    vocab, length = tree.vocab, len(tree.old)
    probs = [torch.softmax(t, -1) for t in tree.old]

    def seq_prob(seq, start):
        p, node = 1.0, 0
        for d, tok in enumerate(seq):
            if d >= start:
                p *= float(probs[d][node, tok])
            node = node * vocab + tok
        return p

    values = {}
    for t in range(1, length + 1):
        for prefix in itertools.product(range(vocab), repeat=t):
            total = 0.0
            for rest in itertools.product(range(vocab), repeat=length - t):
                seq = prefix + rest
                index = sum(tok * vocab ** (length - 1 - d) for d, tok in enumerate(seq))
                total += seq_prob(seq, t) * math.exp(float(tree.reward[index]) / alpha)
            values[prefix] = math.log(total)
    return values


def _policy_logprob(tables, seq, vocab):
    lp, node = 0.0, 0
    for d, tok in enumerate(seq):
        lp += float(torch.log_softmax(tables[d][node], -1)[tok])
        node = node * vocab + tok
    return lp


def test_theorem_3_2_unnormalized_minimiser_is_the_soft_optimum():
    alpha, vocab, length = 0.2, 3, 3
    tree = repro.TabularTree.random(vocab, length, seed=11)
    theta = repro.fit_tabular(tree, 2, alpha, normalize=False)
    values = _brute_force_values(tree, alpha)
    seqs = list(itertools.product(range(vocab), repeat=length))
    for t in range(1, length + 1):
        diffs = [_policy_logprob(theta, s[:t], vocab) - _policy_logprob(tree.old, s[:t], vocab)
                 - values[s[:t]] for s in seqs]
        assert max(diffs) - min(diffs) < 1e-3, t
    log_star = torch.tensor([_policy_logprob(tree.old, s, vocab) + float(tree.reward[i]) / alpha
                             for i, s in enumerate(seqs)], dtype=torch.float64)
    log_star -= torch.logsumexp(log_star, 0)
    log_theta = torch.tensor([_policy_logprob(theta, s, vocab) for s in seqs],
                             dtype=torch.float64)
    assert float((log_theta - log_star).abs().max()) < 1e-3
    # the fit really moved: π_old itself is far from π*
    log_old = torch.tensor([_policy_logprob(tree.old, s, vocab) for s in seqs])
    assert float((log_old - log_star).abs().max()) > 1.0
    # and the module's own residuals agree
    res = repro.theorem_residuals(tree, theta, alpha)
    assert max(v for k, v in res.items() if k.startswith("spread")) < 1e-3


def test_theorem_3_2_normalized_weights_are_biased_and_the_bias_shrinks_with_k():
    alpha = 0.2
    tree = repro.TabularTree.random(3, 3, seed=11)
    tv = [repro.theorem_residuals(tree, repro.fit_tabular(tree, k, alpha, normalize=True),
                                  alpha)["tv"] for k in (2, 3)]
    assert tv[0] > 1e-2 and tv[0] > tv[1] > 1e-3


def test_group_probabilities_and_the_weight_shift_identities():
    tree = repro.TabularTree.random(2, 2, seed=0)
    idx, log_c = repro.expected_loss_groups(tree, 3)
    assert idx.shape == (math.comb(4 + 2, 3), 3)
    torch.testing.assert_close(float(log_c.exp().sum()), 1.0)
    # softmax(R/α) weights = exp of rewards shifted by −α·LSE(R/α), and a group-constant
    # shift α·log c scales that group's loss by c
    gen = torch.Generator().manual_seed(2)
    b, t, k, alpha = 6, 4, 3, 0.2
    logp = -torch.rand(b, t, generator=gen, dtype=torch.float64)
    old = logp + 0.2 * torch.randn(b, t, generator=gen, dtype=torch.float64)
    mask = torch.ones(b, t, dtype=torch.float64)
    r = torch.rand(b, generator=gen, dtype=torch.float64)
    norm, _ = gn_ivo_loss(logp, old, r, mask, k, alpha=alpha, normalize_weights=True)
    shift = r.view(-1, k) - alpha * torch.logsumexp(r.view(-1, k) / alpha, 1, keepdim=True)
    same, _ = gn_ivo_loss(logp, old, shift.reshape(-1), mask, k, alpha=alpha,
                          normalize_weights=False)
    torch.testing.assert_close(norm, same)
    c = torch.tensor([0.3, 0.05], dtype=torch.float64)
    scaled = (shift + alpha * c.log().unsqueeze(1)).reshape(-1)
    first = gn_ivo_loss(logp[:3], old[:3], r[:3], mask[:3], k, alpha=alpha)[0]
    second = gn_ivo_loss(logp[3:], old[3:], r[3:], mask[3:], k, alpha=alpha)[0]
    weighted, _ = gn_ivo_loss(logp, old, scaled, mask, k, alpha=alpha, normalize_weights=False)
    torch.testing.assert_close(weighted * 2, 0.3 * first + 0.05 * second)


# -- claims on hand-built results ---------------------------------------------------------------

def _result(method, k, seed, final, initial=0.35):
    return Result(Trial(method, repro.TASK_NAME, seed, {"group_size": k}),
                  {"final_accuracy": final, "initial_accuracy": initial,
                   "test_accuracy@0": initial, "test_accuracy@10": final,
                   "optimizer_steps@0": 0, "optimizer_steps@10": 20, "samples@0": 0,
                   "samples@10": 640, "train@0_wall_s": 0.0, "train@10_wall_s": 5.0,
                   "train_wall_s": 5.0, "tokens": 1000, "optimizer_steps": 20,
                   "reward_first": 0.3, "reward_last": 0.4, "degenerate_frac": 0.5,
                   "kl_last": 0.01})


def _theorem(seed, tv, spread=1e-6):
    metrics = {}
    for k, v in tv.items():
        metrics.update({f"normalized_tv@{k}": v * (1 + 0.01 * seed), f"normalized_spread@{k}": 1.0,
                        f"normalized_logratio_err@{k}": 1.0, f"unnormalized_spread@{k}": spread,
                        f"unnormalized_logratio_err@{k}": spread,
                        f"unnormalized_tv@{k}": spread})
    return Result(Trial(repro.THEOREM, repro.TABULAR_NAME, seed, {}), metrics)


SEEDS = 6  # with three seeds a t interval (t₀.₉₇₅ = 4.3) decides only huge effects
NOISE = (0.0, 0.002, -0.001, 0.001, -0.002, 0.0)


def _results(acc, theorem_tv=None, spread=1e-6, initial=0.35):
    """``acc[(method, K)]`` = a final accuracy, spread over the seeds by :data:`NOISE` (or a
    list of per-seed values)."""
    out = []
    for (m, k), v in acc.items():
        vals = v if isinstance(v, list) else [v + e for e in NOISE]
        out += [_result(m, k, s, x, initial) for s, x in enumerate(vals)]
    if theorem_tv is not None:
        out += [_theorem(s, theorem_tv, spread) for s in range(SEEDS)]
    return out


GOOD = {("gn-ivo", 2): 0.50, ("grpo", 2): 0.40, ("rloo", 2): 0.41, ("gn-ivo", 4): 0.50,
        ("grpo", 4): 0.47, ("rloo", 4): 0.465, ("gn-ivo-one", 4): 0.45, ("reinforce", 4): 0.40}
TV = {2: 0.1, 3: 0.06, 4: 0.04}


def _status(summary):
    return [c.status for c in summary.claims]


def test_claims_hold_on_results_that_support_them(tmp_path):
    cfg = dataclasses.replace(repro.PRESETS["quick"])
    summary = repro.summarize(_results(GOOD, TV), cfg, tmp_path)
    assert _status(summary) == ["held"] * 6, [c.verdict.describe() for c in summary.claims]
    assert [c.verdict.test for c in summary.claims] == [
        "all_of", "all_of", "superior", "noninferior", "bound_holds", "all_of"]
    assert all(f.path.is_file() for f in summary.figures) and len(summary.figures) == 2
    assert "+0.100" in summary.claims[1].evidence  # K=2 gap over GRPO: 0.50 − 0.40


def test_claims_fail_on_results_that_contradict_them(tmp_path):
    bad = dict(GOOD)
    bad[("grpo", 4)] = 0.55        # (1) GRPO better at K = 4
    bad[("rloo", 2)] = 0.60        # (2) gap over RLOO negative at K = 2
    bad[("gn-ivo-one", 4)] = 0.52  # (3) one-step better
    bad[("gn-ivo", 4)] = 0.30      # (4) below the SFT start of 0.35 by more than the margin
    cfg = dataclasses.replace(repro.PRESETS["quick"])
    summary = repro.summarize(_results(bad, {2: 0.04, 3: 0.06, 4: 0.05}, spread=2e-3), cfg,
                              tmp_path)
    assert _status(summary) == ["not held"] * 6, [c.verdict.describe() for c in summary.claims]


def test_ties_and_negligible_gains_do_not_pass(tmp_path):
    """The old rules ("≥ in mean") passed exact ties and any positive difference."""
    tie = dict(GOOD)
    tie[("grpo", 4)] = tie[("rloo", 4)] = 0.50   # (1) a tie with both baselines
    tie[("gn-ivo-one", 4)] = 0.495               # (3) half a point below: under min_effect
    summary = repro.summarize(_results(tie, TV), repro.PRESETS["quick"], tmp_path)
    assert _status(summary)[0] == "not held" and _status(summary)[2] == "not held"
    # (6): TV falls by 1 % per K step (strictly decreasing, so the old rule passed)
    slow = repro.claim_normalized_bias_shrinks(_results(GOOD, {2: 0.1, 3: 0.099, 4: 0.098}))
    assert slow.status == "not held"


def test_comparisons_are_inconclusive_when_rl_moves_nothing(tmp_path):
    """Every run ends at its pre-RL accuracy: no comparison between them is evidence."""
    flat = {key: 0.35 for key in GOOD}
    summary = repro.summarize(_results(flat, TV), repro.PRESETS["quick"], tmp_path)
    assert _status(summary)[:3] == ["inconclusive"] * 3
    assert "does not act" in summary.claims[0].verdict.reason
    assert summary.claims[3].status == "held"  # no collapse: a flat run does not collapse


def test_gap_claim_needs_the_gap_to_be_largest_at_k2():
    acc = dict(GOOD)
    acc[("grpo", 4)] = 0.30  # gap at K = 4 (0.20) exceeds the gap at K = 2
    assert repro.claim_gap_largest_at_k2(_results(acc)).status == "not held"
    assert repro.claim_gap_largest_at_k2(_results(GOOD)).status == "held"


def test_claims_say_when_the_preset_did_not_run_them(tmp_path):
    only4 = {key: v for key, v in GOOD.items() if key[1] == 4}
    claim = repro.claim_gap_largest_at_k2(_results(only4))
    assert isinstance(claim, repro.NotEvaluated) and "not run" in claim.why
    claim = repro.claim_normalized_bias_shrinks(_results(only4, {2: 0.1}))
    assert isinstance(claim, repro.NotEvaluated)
    assert isinstance(repro.claim_beats_baselines(_results(only4), 8), repro.NotEvaluated)
    # summarize leaves them out of the claims and names them in the notes
    summary = repro.summarize(_results(only4, {2: 0.1}), repro.PRESETS["quick"], tmp_path)
    assert [c.text[:3] for c in summary.claims] == ["(1)", "(3)", "(4)", "(5)"]
    assert sum(n.startswith("Not evaluated in this run") for n in summary.notes) == 2


def test_margins_stay_out_of_trial_keys():
    cfg = repro.PRESETS["quick"]
    keys = {t.key(repro.SLUG) for t in repro.trials(cfg)}
    other = dataclasses.replace(cfg, min_effect_acc=0.05, noninferiority_margin_acc=0.05,
                                min_tv_ratio=1.2)
    assert {t.key(repro.SLUG) for t in repro.trials(other)} == keys
    with pytest.raises(ConfigError, match="min_tv_ratio"):
        dataclasses.replace(cfg, min_tv_ratio=1.0)
