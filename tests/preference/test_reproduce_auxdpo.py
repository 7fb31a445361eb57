"""The auxdpo reproduction's claims can fail: a no-op method does not pass, ties do not pass."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from optzoo.experiment import Result, Trial
from optzoo.experiment.core import NotEvaluated
from optzoo.preference.reproduce.auxdpo import (
    PRESETS,
    _claim_auxdpo,
    _claim_lm,
    _claim_reversal,
    lm_expected_reward,
    lm_features,
    lm_logps,
    lm_task,
    offspan_share,
    run_trial,
    trials,
)


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


# -- Bandit C: the tiny LM -------------------------------------------------------------------------

def test_bandit_a_and_b_trial_keys_are_those_before_bandit_c():
    """HEAD's trial list (before Bandit C), written out: A and B keep their keys; C is extra."""
    for preset, n_c in (("smoke", 1), ("quick", 0), ("full", 5)):
        cfg = PRESETS[preset]
        old = [Trial("all", "bandit-a", 0, {"ratio": r, "beta": b,
                                            "dpop_lambda": cfg.dpop_lambda})
               for r in cfg.ratios for b in cfg.betas]
        old += [Trial("all", "bandit-b", s, {"dim": d, "beta": cfg.beta_b, "states": cfg.states,
                                             "actions": cfg.actions})
                for d in cfg.dims for s in range(cfg.seeds)]
        new = trials(cfg)
        assert [t.key("auxdpo") for t in new if t.problem != "bandit-c"] == \
            [t.key("auxdpo") for t in old]
        assert sum(t.problem == "bandit-c" for t in new) == n_c


def _tiny_lm(seed=0, prompts=2, answers=3, hidden=16):
    import torch

    from optzoo.llm import tiny_llama

    task = lm_task(seed, prompts, answers)
    model = tiny_llama(task.vocab, hidden_size=hidden, intermediate_size=4 * hidden,
                       num_layers=1, num_heads=2, max_position_embeddings=8, pad_token_id=0,
                       bos_token_id=1, eos_token_id=2, seed=seed)
    model.eval()
    torch.manual_seed(seed)
    with torch.no_grad():  # a non-trivial head: random init is near uniform
        model.lm_head.weight.mul_(20.0)
    return task, model


def test_lm_task_enumerates_every_two_token_answer_of_every_prompt():
    task = lm_task(0, 3, 4)
    ids = task.ids.numpy()
    assert ids.shape == (3 * 16, 4) and task.reward.shape == (48,)
    assert len({tuple(r) for r in ids}) == 48 and set(ids[:, 0]) == {1}
    assert set(ids[:, 1]) == {3, 4, 5} and set(ids[:, 2:].ravel()) == {6, 7, 8, 9}
    assert (ids[:16, 1] == 3).all()  # prompt-major, as reward.reshape(prompts, -1) assumes
    np.testing.assert_array_equal(task.worst, task.reward.reshape(3, -1).min(1))


def test_head_on_frozen_features_equals_the_full_forward_per_answer():
    import torch

    task, model = _tiny_lm()
    fast = lm_logps(model.lm_head, lm_features(model, task), task).detach()
    slow = []
    with torch.no_grad():
        for row in task.ids:  # one forward per answer, no shared features
            logp = torch.log_softmax(model(input_ids=row[None]).logits[0].double(), -1)
            slow.append(float(logp[1, row[2]] + logp[2, row[3]]))
    np.testing.assert_allclose(fast.numpy(), slow, rtol=1e-5, atol=1e-6)
    assert float(fast.exp().sum()) < task.prompts  # some mass leaks to non-answer tokens


def test_expected_reward_closed_form_for_a_uniform_head():
    import torch

    task, model = _tiny_lm(prompts=3, answers=4)
    head = torch.nn.Linear(model.config.hidden_size, task.vocab, bias=False)
    torch.nn.init.zeros_(head.weight)  # every token 1/V: each answer (1/V)², the rest leaks
    lp = lm_logps(head, lm_features(model, task), task).detach()
    v, k = task.vocab, task.answers
    r = task.reward.reshape(task.prompts, -1)
    closed = np.mean(r.sum(1) / v ** 2 + (1 - k ** 2 / v ** 2) * task.worst)
    assert lm_expected_reward(lp.numpy(), task) == pytest.approx(closed, rel=1e-12)


def test_rlhf_objective_is_maximised_by_the_gibbs_policy_at_beta_log_z():
    import torch

    from optzoo.preference.reproduce.auxdpo import _rlhf_objective

    task, model = _tiny_lm(prompts=2, answers=3)
    ref = lm_logps(model.lm_head, lm_features(model, task), task).detach()
    beta = 0.7
    n = task.prompts
    ref_p = ref.exp().view(n, -1).numpy()
    r = task.reward.reshape(n, -1)
    other = 1 - ref_p.sum(1)
    # tabular optimum over answers + the "other" bucket (worth the worst answer)
    z = (ref_p * np.exp(r / beta)).sum(1) + other * np.exp(task.worst / beta)
    star = torch.as_tensor((np.log(ref_p) + r / beta - np.log(z)[:, None]).ravel())
    assert float(_rlhf_objective(star, ref, task, beta)) == pytest.approx(
        float(np.mean(beta * np.log(z))), rel=1e-9)
    # at the reference the KL is 0: the objective is the expected reward
    assert float(_rlhf_objective(ref, ref, task, beta)) == pytest.approx(
        lm_expected_reward(ref.numpy(), task), rel=1e-9)
    rng = np.random.default_rng(0)
    full = np.concatenate([star.view(n, -1).numpy(),
                           np.log(1 - star.exp().view(n, -1).sum(1).numpy())[:, None]], 1)
    best = float(_rlhf_objective(star, ref, task, beta))
    for _ in range(5):  # any other policy (answers + the "other" bucket) scores lower
        q = full + 0.3 * rng.normal(size=full.shape)
        q = q - np.log(np.exp(q).sum(1, keepdims=True))
        assert float(_rlhf_objective(torch.as_tensor(q[:, :-1].ravel()), ref, task,
                                     beta)) < best


def test_offspan_share_against_least_squares():
    task = lm_task(1, 3, 3)
    rng = np.random.default_rng(0)
    m = task.ids.shape[0]
    g = rng.normal(size=(m, 5))
    share, rank = offspan_share(g, task)
    ind = np.kron(np.eye(3), np.ones((9, 1)))
    rc = task.reward - ind @ (ind.T @ task.reward) / 9
    coef, *_ = np.linalg.lstsq(np.hstack([g, ind]), rc, rcond=None)
    res = rc - np.hstack([g, ind]) @ coef
    assert share == pytest.approx(float(res @ res / (rc @ rc)), rel=1e-9) and rank == 5
    assert 0.0 < share < 1.0
    # a reward inside the span (plus per-prompt constants) is not misspecified
    inside = replace(task, reward=g @ rng.normal(size=5) + ind @ rng.normal(size=3))
    assert offspan_share(g, inside)[0] < 1e-20


def test_lm_pairs_compare_answers_of_one_prompt_with_btl_labels():
    from optzoo.preference.reproduce.auxdpo import _lm_pairs

    task = lm_task(2, 4, 3)
    iw, il = _lm_pairs(task, 20_000, np.random.default_rng(0))
    per = task.answers ** 2
    assert (iw // per == il // per).all() and (iw != il).all()
    hi = task.reward[iw] > task.reward[il]
    p_hi = 1 / (1 + np.exp(-np.abs(task.reward[iw] - task.reward[il])))
    se = np.sqrt(np.mean(p_hi * (1 - p_hi)) / len(iw))
    assert abs(hi.mean() - p_hi.mean()) < 4 * se
    # skewed: a few unordered pairs carry most of the data (Gamma(0.3) weights)
    _, counts = np.unique(np.minimum(iw, il) * 10_000 + np.maximum(iw, il), return_counts=True)
    assert np.sort(counts)[::-1][: len(counts) // 10].sum() > 0.4 * len(iw)


def test_bandit_c_trial_runs_and_reports_every_metric():
    cfg = PRESETS["smoke"]
    t = next(t for t in trials(cfg) if t.problem == "bandit-c")
    m = run_trial(t)
    for meth in ("dpo", "auxdpo", "rlhf"):
        assert np.isfinite(m[f"reward_{meth}"])
    assert m["reward_rlhf"] > m["reward_base"]  # the oracle improves on the base
    assert m["answers"] == 2 * 9 and m["head_params"] == 16 * (3 + 2 + 3)
    assert 0 < m["delta_mean_abs"] <= m["delta_max_abs"] <= 1.0
    assert m == run_trial(t)  # deterministic given the seed


def _c_results(aux, dpo, off=0.3, delta=0.2):
    out = []
    for s, (a, d) in enumerate(zip(aux, dpo, strict=True)):
        m = {"reward_base": 0.0, "reward_dpo": d, "reward_auxdpo": a, "reward_rlhf": 1.0,
             "regret_dpo": 1 - d, "regret_auxdpo": 1 - a, "offspan_share": off,
             "score_rank": 10, "answers": 20, "head_params": 40, "delta_mean_abs": delta,
             "delta_max_abs": delta, "delta_rowspace_ratio": 0.1, "answer_mass_dpo": 1.0,
             "answer_mass_auxdpo": 1.0, "answer_mass_rlhf": 1.0}
        out.append(Result(Trial("all", "bandit-c", s, {}), m))
    return out


def test_bandit_c_claim_needs_a_gain_misspecification_and_a_delta_that_acts():
    cfg = PRESETS["full"]
    assert _claim_lm(_c_results([0.5, 0.55, 0.52, 0.5, 0.53], [0.3, 0.32, 0.31, 0.3, 0.29]),
                     cfg).status == "held"
    assert _claim_lm(_c_results([0.3, 0.32, 0.31, 0.3, 0.29], [0.3, 0.32, 0.31, 0.3, 0.29]),
                     cfg).status == "not held"
    well = _claim_lm(_c_results([0.5, 0.55, 0.52, 0.5, 0.53], [0.3, 0.32, 0.31, 0.3, 0.29],
                                off=0.01), cfg)
    assert well.status == "inconclusive" and "misspecified" in well.verdict.reason
    idle = _claim_lm(_c_results([0.5, 0.55, 0.52, 0.5, 0.53], [0.3, 0.32, 0.31, 0.3, 0.29],
                                delta=0.001), cfg)
    assert idle.status == "inconclusive" and "δ" in idle.verdict.reason
    assert isinstance(_claim_lm([], PRESETS["quick"]), NotEvaluated)
    assert isinstance(_claim_lm([], cfg), NotEvaluated)
