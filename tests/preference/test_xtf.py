"""XTF's three scores against direct computations, its thresholds on synthetic scores (the
per-example caps against a slow reference, and the type-level collapse of issue 24 they
prevent), and the collator's masking against the causal-LM loss."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from optzoo.preference.xtf import (
    CAPS,
    XTFCollator,
    cap_per_example,
    context_free_states,
    iqr_low,
    knowledge_novelty,
    multiotsu_second_lowest,
    reasoning_importance,
    task_relevance,
    xtf_noise,
)


def _lm():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=13, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2)
    cfg._attn_implementation = "eager"
    return LlamaForCausalLM(cfg).double().eval()


IDS = torch.tensor([[3, 4, 5, 6, 7, 0], [8, 9, 10, 11, 12, 2]])
ATT = torch.tensor([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1]])
LAB = torch.tensor([[0, 0, 1, 1, 1, 0], [0, 0, 0, 1, 1, 1]])


def test_knowledge_novelty_is_one_minus_the_teacher_forced_probability():
    model = _lm()
    kn = knowledge_novelty(model, IDS, ATT, LAB)
    with torch.no_grad():
        for b in range(2):
            for j in range(1, 6):
                if not LAB[b, j]:
                    assert float(kn[b, j]) == 0.0
                    continue
                n = int(ATT[b].sum())
                logits = model(input_ids=IDS[b:b + 1, :n]).logits[0, j - 1]
                want = 1 - torch.softmax(logits, -1)[IDS[b, j]]
                assert float(kn[b, j]) == pytest.approx(float(want), rel=1e-9)


def test_reasoning_importance_is_the_normalised_attention_received_from_later_positions():
    model = _lm()
    ri = reasoning_importance(model, IDS, ATT, LAB)
    with torch.no_grad():
        att = model(input_ids=IDS, attention_mask=ATT, output_attentions=True).attentions[-1]
    a = att.mean(1)  # heads of the last layer
    for b in range(2):
        n = int(ATT[b].sum())
        raw = {j: float(a[b, j + 1:n, j].mean()) for j in range(n) if LAB[b, j] and j < n - 1}
        mean = np.mean(list(raw.values()))
        for j, v in raw.items():
            assert float(ri[b, j]) == pytest.approx(v / mean, rel=1e-9)
        assert float(ri[b, n - 1]) == pytest.approx(1.0)  # the last token: the sequence mean
    assert float(ri[LAB == 0].abs().sum()) == 0.0


def test_reasoning_importance_needs_attention_weights():
    from types import SimpleNamespace

    def no_attentions(**kw):  # what a fused-attention model returns
        return SimpleNamespace(attentions=(None,), logits=None)

    with pytest.raises(ValueError, match="eager"):
        reasoning_importance(no_attentions, IDS, ATT, LAB)


def test_task_relevance_is_the_cosine_similarity_to_the_mean_of_the_domain_words():
    emb = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]])
    domain = torch.tensor([0, 0, 2])  # centre (1, 1/3)
    tr = task_relevance(emb, torch.tensor([[0, 1], [3, 2]]), domain)
    c = np.array([1.0, 1 / 3])
    want = [[float(e @ c / np.linalg.norm(e) / np.linalg.norm(c)) for e in row]
            for row in (emb[[0, 1]].numpy(), emb[[3, 2]].numpy())]
    assert tr.shape == (2, 2) and np.allclose(tr.numpy(), want)
    assert float(tr[1, 0]) < 0 < float(tr[0, 1])  # the opposite direction is the least relevant
    with pytest.raises(ValueError, match="domain_ids"):
        task_relevance(emb, torch.tensor([0]), torch.tensor([4]))


def test_context_free_states_are_the_last_hidden_state_of_each_token_alone():
    model = _lm()
    ids = torch.tensor([3, 7, 12])
    got = context_free_states(model, ids)
    with torch.no_grad():
        for row, t in enumerate(ids.tolist()):
            want = model(input_ids=torch.tensor([[t]]), output_hidden_states=True
                         ).hidden_states[-1][0, 0]
            assert torch.allclose(got[row], want, atol=1e-12)
    with pytest.raises(ValueError, match="token_ids"):
        context_free_states(model, ids.reshape(1, 3))


def _slow_cap(flags, scores, groups, share, lowest):
    """Per example: sort the flagged tokens by score (position breaks ties), keep the first
    floor(share * n)."""
    out = np.zeros(len(flags), dtype=bool)
    for g in np.unique(groups):
        idx = [i for i in range(len(flags)) if groups[i] == g]
        k = int(np.floor(share * len(idx) + 1e-9))
        cand = sorted((i for i in idx if flags[i]),
                      key=lambda i: (scores[i] if lowest else -scores[i], i))
        out[cand[:k]] = True
    return out


@pytest.mark.parametrize("seed", range(5))
def test_cap_per_example_matches_a_slow_reference(seed):
    rng = np.random.default_rng(seed)
    n = 300
    groups = np.sort(rng.integers(0, 17, n))
    scores = rng.integers(0, 6, n).astype(float)  # many ties
    flags = rng.random(n) < 0.5
    for share in (0.05, 0.1, 0.3, 1.0):
        for lowest in (True, False):
            got = cap_per_example(flags, scores, groups, share=share, lowest=lowest,
                                  among="flagged")
            assert got.tolist() == _slow_cap(flags, scores, groups, share, lowest).tolist()
    with pytest.raises(ValueError, match="share"):
        cap_per_example(flags, scores, groups, share=1.5)


@pytest.mark.parametrize("seed", range(3))
def test_the_official_cap_keeps_flags_strictly_beyond_the_examples_order_statistic(seed):
    """``among="all"``: the comparison of ``XTF_script.filtering_tokens_and_give_labels``,
    written out per example as a loop over Python lists."""
    rng = np.random.default_rng(seed)
    n = 200
    groups = np.sort(rng.integers(0, 9, n))
    scores = rng.integers(0, 8, n).astype(float)
    flags = rng.random(n) < 0.6
    for share in (0.05, 0.1, 0.5):
        want_low, want_high = np.zeros(n, bool), np.zeros(n, bool)
        for g in np.unique(groups):
            idx = [i for i in range(n) if groups[i] == g]
            vals = sorted(scores[i] for i in idx)
            for i in idx:
                want_low[i] = flags[i] and scores[i] < vals[int(len(idx) * share)]
                want_high[i] = flags[i] and not scores[i] <= vals[int(len(idx) * (1 - share))]
        got_low = cap_per_example(flags, scores, groups, share=share, among="all")
        got_high = cap_per_example(flags, scores, groups, share=share, lowest=False,
                                   among="all")
        assert got_low.tolist() == want_low.tolist()
        assert got_high.tolist() == want_high.tolist()
    with pytest.raises(ValueError, match="among"):
        cap_per_example(flags, scores, groups, share=0.1, among="some")


def _typed_dataset(n_examples=60, length=25, seed=0):
    """Label tokens of a word-level dataset: word 0 (think "is", needed by every answer) has
    the lowest task relevance of the mid cluster and the highest base probability in every
    example, as the boilerplate did in the xtf reproduction."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_examples), length)
    word = np.tile(np.arange(length), n_examples)
    tr = np.where(word == 0, 0.40, np.where(word < 3, 0.05, np.where(word < 12, 0.5, 0.9)))
    tr = tr + 0.01 * rng.standard_normal(tr.size)
    kn = np.where(word == 0, 0.001, 0.5 + 0.1 * rng.random(tr.size))
    ri = 1.0 + 0.1 * rng.standard_normal(tr.size)
    return ri, kn, tr, groups, word


def test_the_caps_stop_a_type_level_threshold_from_removing_every_occurrence_of_a_word():
    ri, kn, tr, groups, word = _typed_dataset()
    # uncapped (the reading of issue 24): TR's mid class is every token of words 0 and 3..11,
    # KN every token of word 0: whole word types vanish from the targets
    raw = xtf_noise(ri, kn, tr, groups=groups, caps=None, otsu_classes=3)
    assert raw["tr"][word == 0].all() and raw["ratio"] > 0.35
    n = 25
    for among in ("all", "flagged"):  # the official rule (default) and the adaptation
        capped = xtf_noise(ri, kn, tr, groups=groups, otsu_classes=3, cap_among=among)
        for g in range(60):
            in_g = groups == g
            for a, share in zip(("ri", "kn", "tr"), CAPS, strict=True):
                assert capped[a][in_g].sum() <= int(share * n)
            # an example never loses more than the three caps together: it stays supervised
            assert capped["union"][in_g].sum() <= sum(int(c * n) for c in CAPS) < n
        assert capped["ratio"] <= sum(int(c * n) for c in CAPS) / n
    # the adaptation keeps the most extreme flagged tokens: TR's lowest mid-class token is word 0
    assert capped["tr"][word == 0].all() and not capped["tr"][(word >= 1) & (word < 3)].any()
    # the official rule keeps a flag only below the example's order statistic over all tokens:
    # here the lowest class (words 1, 2) holds those, so TR's mid class is never masked
    official = xtf_noise(ri, kn, tr, groups=groups, otsu_classes=3)
    assert not official["tr"].any()


def test_multiotsu_flags_the_second_lowest_cluster_not_the_lowest():
    rng = np.random.default_rng(0)
    s = np.concatenate([rng.normal(0.1, 0.01, 50), rng.normal(0.5, 0.01, 40),
                        rng.normal(0.9, 0.01, 60)])
    noise = multiotsu_second_lowest(s, classes=3)
    assert noise[50:90].all() and not noise[:50].any() and not noise[90:].any()


def test_iqr_rule_and_the_union():
    s = np.r_[np.linspace(1.0, 2.0, 20), -5.0]
    low = iqr_low(s)
    q1, q3 = np.percentile(s, [25, 75])
    assert low.tolist() == (s < q1 - (q3 - q1)).tolist() and low[-1]
    kn = np.r_[np.full(20, 0.5), 0.01]
    tr = np.linspace(0, 1, 21)
    out = xtf_noise(s, kn, tr, caps=None, use=("ri", "kn"))
    assert out["union"].tolist() == (out["ri"] | out["kn"]).tolist()
    with pytest.raises(ValueError, match="use"):
        xtf_noise(s, kn, tr, use=("ri", "zz"))
    with pytest.raises(ValueError, match="caps"):
        xtf_noise(s, kn, tr, caps=(0.1, 0.1))
    with pytest.raises(ValueError, match="groups"):
        xtf_noise(s, kn, tr, groups=np.zeros(3))


def test_collator_masks_exactly_the_noise_tokens_and_changes_the_loss_by_their_terms():
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    base = DataCollatorForLanguageModeling(pad_token_id=0)
    examples = [{"input_ids": [3, 4, 5, 6, 7], "labels": [-100, -100, 5, 6, 7]},
                {"input_ids": [8, 9, 10, 11, 12, 2], "labels": [-100, -100, -100, 11, 12, 2]}]
    plain = base([dict(e) for e in examples])
    none = XTFCollator(base)([{**e, "xtf_noise": [0] * len(e["input_ids"])} for e in examples])
    assert torch.equal(none["labels"], plain["labels"])
    noisy = XTFCollator(base)([{**examples[0], "xtf_noise": [0, 0, 0, 1, 0]},
                               {**examples[1], "xtf_noise": [0, 0, 0, 0, 0, 1]}])
    assert noisy["labels"][0, 3] == -100 and noisy["labels"][1, 5] == -100
    model = _lm()
    with torch.no_grad():
        logits = model(input_ids=plain["input_ids"]).logits[:, :-1]

    def total(labels):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1),
                               ignore_index=-100, reduction="sum")

    term = (F.cross_entropy(logits[0, 2], plain["labels"][0, 3], reduction="sum")
            + F.cross_entropy(logits[1, 4], plain["labels"][1, 5], reduction="sum"))
    assert float(total(plain["labels"]) - total(noisy["labels"])) == pytest.approx(float(term))
