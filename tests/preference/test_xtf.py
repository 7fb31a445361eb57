"""XTF's three scores against direct computations, its thresholds on synthetic scores, and the
collator's masking against the causal-LM loss."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from optzoo.preference.xtf import (
    XTFCollator,
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


def test_task_relevance_closed_form():
    emb = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]])
    domain = torch.tensor([0, 0, 2])  # centre (2/3, 1/3)
    tr = task_relevance(emb, torch.tensor([0, 1, 3]), domain)
    centre = emb[domain].mean(0)
    d = 1 - F.cosine_similarity(emb[[0, 1, 3]], centre[None].expand(3, 2), dim=1).double()
    want = 1 - (d - d.min()) / (d.max() - d.min())
    assert torch.allclose(tr, want) and float(tr[2]) == 0.0 and float(tr[0]) == 1.0


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
    out = xtf_noise(s, kn, tr, use=("ri", "kn"))
    assert out["union"].tolist() == (out["ri"] | out["kn"]).tolist()
    with pytest.raises(ValueError, match="use"):
        xtf_noise(s, kn, tr, use=("ri", "zz"))


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
