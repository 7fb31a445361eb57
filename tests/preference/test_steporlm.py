"""StepORLM: Algorithm 1's pair construction, the GenPRM's generative step verdicts, W-DPO
inside the loop, one co-evolution iteration on a tiny model, best-of-N and majority vote.

References: pairs enumerated by hand; the GenPRM's constrained greedy verdicts against a slow
loop of full forwards (no cache); the loop's W-DPO loss against
:func:`~optzoo.preference.wdpo_loss` recomputed on the same pairs."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.preference.genprm import BAD, GOOD, GenPRM, StepClassifierPRM, judge_prompt
from optzoo.preference.or_problems import or_tokenizer, sample_problems, step_labels
from optzoo.preference.problems import word_llama
from optzoo.preference.steporlm import (
    StepORLMConfig,
    best_of_n,
    build_pairs,
    coevolve_iteration,
    completion_logps,
    majority_vote,
    sft,
    train_wdpo,
)
from optzoo.preference.wdpo import wdpo_loss


@pytest.fixture(scope="module")
def tok():
    return or_tokenizer()


def _model(tok, seed=0):
    return word_llama(len(tok), hidden=32, layers=1, max_positions=256, seed=seed)


def test_pairs_by_hand():
    # k = 4: outcomes T F F T, scores .75 .5 .25 .75
    o, r = [True, False, False, True], [0.75, 0.5, 0.25, 0.75]
    assert build_pairs(o, r, rule="dual") == [(0, 1, 1.0), (0, 2, 1.0), (1, 2, 0.25),
                                              (3, 1, 1.0), (3, 2, 1.0)]
    assert build_pairs(o, r, rule="dual_unweighted")[2] == (1, 2, 1.0)
    assert build_pairs(o, r, rule="outcome") == [(0, 1, 1.0), (0, 2, 1.0), (3, 1, 1.0),
                                                 (3, 2, 1.0)]
    # solver first: a correct trajectory beats an incorrect one whatever the GenPRM says
    assert build_pairs([False, True], [1.0, 0.0]) == [(1, 0, 1.0)]
    # same outcome and score: no pair (w = 0 dropped); all identical: nothing
    assert build_pairs([True, True], [0.5, 0.5]) == []


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 4)), min_size=2, max_size=6),
       st.integers(1, 5))
def test_pair_properties(traj, cap):
    o = [t[0] for t in traj]
    r = [t[1] / 4 for t in traj]
    pairs = build_pairs(o, r, rule="dual")
    for w, lo, wt in pairs:
        assert wt > 0 and w != lo
        if o[w] != o[lo]:
            assert o[w] and wt == 1.0
        else:
            assert r[w] > r[lo] and wt == pytest.approx(r[w] - r[lo])
    expected = sum(1 for i in range(len(o)) for j in range(i + 1, len(o))
                   if o[i] != o[j] or r[i] != r[j])
    assert len(pairs) == expected
    sub = build_pairs(o, r, rule="dual", max_pairs=cap, rng=np.random.default_rng(0))
    assert len(sub) == min(cap, expected) and set(sub) <= set(pairs)


def test_pair_errors():
    with pytest.raises(ValueError, match="scores"):
        build_pairs([True], [0.5, 0.5])
    with pytest.raises(ValueError, match="rule"):
        build_pairs([True], [0.5], rule="weighted")
    with pytest.raises(ValueError, match="scores"):
        build_pairs([True, False], [0.5, 1.5])
    with pytest.raises(ValueError, match="rng"):
        build_pairs([True, False, False], [0.0, 0.5, 1.0], max_pairs=1)
    with pytest.raises(ValueError, match="max_pairs"):
        build_pairs([True, False], [0.0, 0.5], max_pairs=0)
    with pytest.raises(ValueError, match="reference"):
        StepORLMConfig(reference="sft")
    with pytest.raises(ValueError, match="k"):
        StepORLMConfig(k=1)


def test_genprm_verdicts_match_slow_loop(tok):
    """Cached constrained greedy decoding = a loop of full forwards over the growing text."""
    prm = GenPRM(_model(tok, seed=3), tok)
    probs = sample_problems(3, seed=0, max_vars=2)
    trajs = [probs[0].solution, "VARS x1 ; SOLVE", probs[2].solution.replace("<=", ">=")]
    prompts = [p.prompt for p in probs]
    fast = prm.judge(prompts, trajs)
    good, bad = tok.convert_tokens_to_ids([GOOD, BAD])
    for p, t, v in zip(prompts, trajs, fast, strict=True):
        text = judge_prompt(p, t)
        slow = []
        for _ in range(len(t.split(";"))):
            ids = torch.tensor([tok(text).input_ids])
            with torch.no_grad():
                logits = prm.model(input_ids=ids).logits[0, -1]
            ok = bool(logits[good] >= logits[bad])
            slow.append(ok)
            text += " " + (GOOD if ok else BAD)
        assert v == slow
    assert prm.score(prompts, trajs) == [sum(v) / len(v) for v in fast]
    assert prm.judge(["p =>"], [""]) == [[]] and prm.score(["p =>"], [""]) == [0.0]


def _critiques():
    """Four problems' gold trajectories, every second with a flipped constraint (step 2), and
    their oracle step labels."""
    probs = sample_problems(4, seed=1, max_vars=2, max_constraints=2, integer_share=0.0)
    prompts, trajs, labels = [], [], []
    for n, p in enumerate(probs):
        steps = list(p.steps)
        if n % 2:
            steps[2] = steps[2].replace("<=", ">=") if "<=" in steps[2] else \
                steps[2].replace(">=", "<=")
        t = " ; ".join(steps)
        prompts.append(p.prompt)
        trajs.append(t)
        labels.append(step_labels(p, t))
    return prompts, trajs, labels


def test_genprm_training_and_judging_agree(tok):
    """SFT on critiques and generation use the same format: after fitting four oracle
    critiques (two right trajectories, two with a corrupted constraint, each of its own
    problem) the GenPRM writes exactly them back."""
    prompts, trajs, labels = _critiques()
    assert labels[1][2] is False and labels[1][-1] is False and all(labels[0])
    prm = GenPRM(_model(tok, seed=1), tok)
    losses = prm.train(prompts, trajs, labels, steps=60, lr=1e-2, batch_size=4)
    assert np.isfinite(losses).all() and losses[-1] < 0.1 * losses[0]
    assert prm.judge(prompts, trajs) == [list(lab) for lab in labels]
    with pytest.raises(ValueError, match="labels"):
        prm.train(prompts[:1], trajs[:1], [[True]], steps=1)


def test_wdpo_training_uses_wdpo_loss(tok):
    """One step of train_wdpo equals a hand step with wdpo_loss on the same batch."""
    probs = sample_problems(2, seed=2, max_vars=2)
    prompts = [p.prompt for p in probs]
    chosen = [p.solution for p in probs]
    rejected = ["VARS x1 ; SOLVE", "VARS x1 x2 ; OBJ max 1 x1 ; SOLVE"]
    w = [1.0, 0.25]
    pol = _model(tok, seed=4)
    ref = copy.deepcopy(pol)
    twin = copy.deepcopy(pol)
    losses = train_wdpo(pol, ref, tok, prompts, chosen, rejected, w, steps=1, batch_size=2,
                        lr=1e-2, beta=0.1, seed=0)
    idx = np.random.default_rng(0).choice(2, size=2, replace=False)
    ps = [prompts[i] for i in idx]
    lp, m = completion_logps(twin, tok, ps + ps, [chosen[i] for i in idx]
                             + [rejected[i] for i in idx])
    seq = (lp * m).sum(-1)
    with torch.no_grad():
        rl, rm = completion_logps(ref, tok, ps + ps, [chosen[i] for i in idx]
                                  + [rejected[i] for i in idx])
        rseq = (rl * rm).sum(-1)
    loss, _ = wdpo_loss(seq[:2], seq[2:], torch.tensor([w[i] for i in idx]), rseq[:2],
                        rseq[2:], beta=0.1)
    assert losses[0] == pytest.approx(float(loss), rel=1e-5)
    assert losses[0] == pytest.approx(np.log(2) * np.mean(w), rel=1e-5)  # policy = reference
    changed = any(not torch.equal(a, b) for a, b in zip(pol.parameters(), twin.parameters(),
                                                        strict=True))
    assert changed


def test_step_classifier_is_myopic_and_learns(tok):
    """The discriminative baseline judges each step from the problem and the steps up to it:
    a step's verdict does not change when later steps change (the GenPRM's may), the batched
    one-forward judge matches a slow one-prefix-at-a-time forward, a JUDGE word inside a
    step is not taken for a tag, and it fits the labels it is trained on."""
    prompts, trajs, labels = _critiques()
    disc = StepClassifierPRM(_model(tok, seed=2), tok)
    v = disc.judge(prompts, trajs)
    assert [len(x) for x in v] == [len(lab) for lab in labels]
    good, bad, tag = tok.convert_tokens_to_ids([GOOD, BAD, "JUDGE"])
    steps0 = trajs[0].split(" ; ")
    for i in range(len(steps0)):  # slow reference: one prefix (steps 1..i tagged), no batch
        row = tok(prompts[0]).input_ids
        for st_ in steps0[:i + 1]:
            row += tok(st_, add_special_tokens=False).input_ids + [tag]
        ids = torch.tensor([row])
        with torch.no_grad():
            logits = disc.model(input_ids=ids).logits[0, -1]
        assert v[0][i] == bool(logits[good] >= logits[bad])
    # myopic: changing the last step leaves the verdicts of the earlier steps as they were
    other = " ; ".join(steps0[:-1] + ["INT x1"])
    assert disc.judge(prompts[:1], [other])[0][:-1] == v[0][:-1]
    assert len(disc.judge(prompts[:1], ["VARS x1 JUDGE ; SOLVE"])[0]) == 2
    losses = disc.train(prompts, trajs, labels, steps=60, lr=1e-2, batch_size=4)
    assert np.isfinite(losses).all() and losses[-1] < 0.1 * losses[0]
    assert disc.judge(prompts, trajs) == [list(lab) for lab in labels]
    assert disc.score(["p =>"], [""]) == [0.0]
    with pytest.raises(ValueError, match="labels"):
        disc.train(prompts[:1], trajs[:1], [[True]], steps=1)


def test_one_coevolution_iteration(tok):
    """A whole iteration on a tiny model: samples, dual feedback, pairs, W-DPO, GenPRM
    refinement; the policy and (only when asked) the GenPRM change."""
    probs = sample_problems(6, seed=3, max_vars=2, max_constraints=2, integer_share=0.0)
    policy = _model(tok, seed=5)
    # a little SFT so that some samples compile and outcomes differ
    sft(policy, tok, [p.prompt for p in probs], [p.solution for p in probs], steps=30, lr=1e-2)
    prm = GenPRM(_model(tok, seed=6), tok)
    before_pol = copy.deepcopy(policy.state_dict())
    before_prm = copy.deepcopy(prm.model.state_dict())
    cfg = StepORLMConfig(k=4, steps=2, batch_size=4, prm_steps=2, max_new_tokens=40,
                         temperature=1.5)
    # an untrained policy is never solver-correct: a stand-in verifier (parity of the text's
    # length) gives mixed outcomes so that outcome pairs exist
    from optzoo.preference.or_modelling import Outcome

    def parity(text, gold):
        return Outcome(len(text) % 2 == 0, "optimal")

    stats = coevolve_iteration(policy, prm, tok, probs, cfg, seed=0, verifier=parity)
    assert stats.trajectories == 24 and 0 <= stats.sample_accuracy <= 1
    assert stats.pairs > 0 and 0 < stats.mean_weight <= 1 and len(stats.losses) == 2
    assert any(not torch.equal(v, policy.state_dict()[k]) for k, v in before_pol.items())
    prm_changed = any(not torch.equal(v, prm.model.state_dict()[k])
                      for k, v in before_prm.items())
    assert prm_changed == (stats.prm_kept > 0)
    frozen = GenPRM(_model(tok, seed=6), tok)
    snap = copy.deepcopy(frozen.model.state_dict())
    coevolve_iteration(policy, frozen, tok, probs,
                       StepORLMConfig(k=2, steps=1, batch_size=2, update_prm=False,
                                      max_new_tokens=40), seed=1)
    assert all(torch.equal(v, frozen.model.state_dict()[k]) for k, v in snap.items())
    with pytest.raises(ValueError, match="initial_policy"):
        coevolve_iteration(policy, prm, tok, probs, StepORLMConfig(reference="initial_sft"))


def test_best_of_n_and_majority_vote():
    assert best_of_n([0.2, 0.9, 0.9]) == 1
    assert majority_vote([None, 3.0, 2.0, 3.0000000001, None]) == 3.0
    assert majority_vote([2.0, 3.0]) == 2.0 and majority_vote([None, None]) is None
    with pytest.raises(ValueError, match="scores"):
        best_of_n([])
