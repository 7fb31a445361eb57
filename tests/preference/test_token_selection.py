"""The token/sample-selection baselines of XTF's comparison against slow references and hand
computations: Token Cleaning's global top-k (a port of the selection loop of
UCSC-REAL/TokenCleaning's ``generate_token_label.py``), Rho-1's per-batch top-k of the excess
loss, DF's perplexity filter, and the per-token NLL against ``F.cross_entropy``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.preference.token_selection import (
    perplexity_filter,
    rho1_select,
    shifted_nll,
    token_cleaning,
    token_losses,
)


def _tc_reference(base, ref, keep):
    """Token Cleaning's ``get_global_top_k_indices`` on the loss difference (its
    ``select_token_level == 'global'`` branch), on one flat list of tokens."""
    flat = [(b - r, j) for j, (b, r) in enumerate(zip(base, ref, strict=True))]
    top = sorted(flat, key=lambda x: x[0], reverse=True)[:int(len(flat) * keep)]
    out = np.zeros(len(flat), dtype=bool)
    out[[j for _, j in top]] = True
    return out


def test_token_cleaning_keeps_exactly_the_top_share_by_influence():
    base = np.array([2.0, 0.1, 3.0, 1.0, 0.5, 4.0, 0.2, 1.5, 0.0, 2.5])
    ref = np.array([0.5, 0.1, 0.1, 1.0, 0.6, 0.2, 0.1, 0.4, 0.3, 2.4])
    # influence: 1.5, 0, 2.9, 0, -0.1, 3.8, 0.1, 1.1, -0.3, 0.1 -> top 6 of 10
    keep = token_cleaning(base, ref, keep=0.6)
    assert keep.sum() == 6
    assert np.flatnonzero(keep).tolist() == [0, 2, 5, 6, 7, 9]
    # the base model's loss alone does not decide: token 3 (high base loss, no influence) goes
    assert not keep[3]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.5]),
                          st.sampled_from([0.0, 0.5, 1.0, 2.0])), min_size=1, max_size=40),
       st.sampled_from([0.0, 0.25, 0.6, 0.9, 1.0]))
def test_token_cleaning_equals_the_reference_selection_with_ties(pairs, keep):
    base, ref = (np.array([p[i] for p in pairs]) for i in (0, 1))
    got = token_cleaning(base, ref, keep=keep)
    assert got.tolist() == _tc_reference(base.tolist(), ref.tolist(), keep).tolist()
    assert got.sum() == int(len(pairs) * keep)
    if got.any() and (~got).any():  # every kept influence >= every dropped one
        d = base - ref
        assert d[got].min() >= d[~got].max()


def _rho1_reference(train, ref, valid, keep):
    cells = [(float(train[b, j] - ref[b, j]), b * train.shape[1] + j, b, j)
             for b in range(train.shape[0]) for j in range(train.shape[1]) if valid[b, j]]
    k = max(1, int(len(cells) * keep)) if cells else 0
    top = sorted(cells, key=lambda c: (-c[0], c[1]))[:k]
    out = torch.zeros_like(valid, dtype=torch.bool)
    for _, _, b, j in top:
        out[b, j] = True
    return out


def test_rho1_selects_the_top_excess_loss_tokens_of_the_batch_only_among_labels():
    train = torch.tensor([[9.0, 1.0, 2.0, 3.0], [9.0, 0.5, 4.0, 0.1]], requires_grad=True)
    ref = torch.tensor([[0.0, 0.5, 0.0, 2.5], [0.0, 0.4, 1.0, 0.0]])
    valid = torch.tensor([[0, 1, 1, 1], [0, 1, 1, 1]])
    # excess at the labels: row 0: 0.5, 2.0, 0.5; row 1: 0.1, 3.0, 0.1 -> int(6·0.5) = 3 kept
    got = rho1_select(train, ref, valid, keep=0.5)
    assert got.tolist() == [[False, True, True, False], [False, False, True, False]]
    # the excess loss ranks, not the training loss: the padded 9.0s are never chosen
    assert not got[:, 0].any()
    rng = np.random.default_rng(0)
    for _ in range(20):
        t = torch.tensor(rng.integers(0, 4, size=(3, 7)), dtype=torch.float64)
        r = torch.tensor(rng.integers(0, 3, size=(3, 7)), dtype=torch.float64)
        v = torch.tensor(rng.random((3, 7)) < 0.6)
        for keep in (0.1, 0.6, 1.0):
            assert torch.equal(rho1_select(t, r, v, keep=keep), _rho1_reference(t, r, v, keep))


def test_rho1_rejects_bad_shapes_and_handles_an_empty_batch():
    z = torch.zeros(2, 3)
    assert not rho1_select(z, z, torch.zeros(2, 3, dtype=torch.bool)).any()
    with pytest.raises(ValueError, match="one shape"):
        rho1_select(z, torch.zeros(2, 4), z.bool())


def test_df_drops_exactly_the_highest_perplexity_fifth():
    # mean NLLs 0.1 .. 1.0 in a shuffled order: the two largest (samples 3 and 7) go
    means = [0.3, 0.1, 0.5, 1.0, 0.2, 0.4, 0.6, 0.9, 0.7, 0.8]
    samples = [[m - 0.05, m + 0.05] for m in means]  # per-token NLLs with that mean
    keep = perplexity_filter(samples, drop=0.2)
    assert np.flatnonzero(~keep).tolist() == [3, 7]
    # perplexity is exp(mean NLL) per sample, so one long easy sample does not outweigh
    ppl = [math.exp(np.mean(s)) for s in samples]
    assert min(ppl[3], ppl[7]) > max(p for i, p in enumerate(ppl) if i not in (3, 7))
    # 11 samples: int(11·0.2) = 2 dropped; drop 0 keeps everything
    assert (~perplexity_filter([*samples, [0.0]], drop=0.2)).sum() == 2
    assert perplexity_filter(samples, drop=0.0).all()
    with pytest.raises(ValueError, match="sample_losses"):
        perplexity_filter([[0.1], []])


def test_token_losses_is_the_teacher_forced_nll_at_the_labels():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=11, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2)
    model = LlamaForCausalLM(cfg).double().eval()
    ids = torch.tensor([[3, 4, 5, 6, 0], [7, 8, 9, 10, 2]])
    att = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
    lab = torch.tensor([[0, 0, 1, 1, 0], [0, 1, 1, 1, 1]])
    nll = token_losses(model, ids, att, lab)
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=att).logits
    for b in range(2):
        for j in range(5):
            want = float(F.cross_entropy(logits[b, j - 1], ids[b, j])) if lab[b, j] else 0.0
            assert float(nll[b, j]) == pytest.approx(want, rel=1e-9, abs=1e-12)
    # the mean of the kept NLLs is the causal-LM loss with -100 elsewhere (what SFT minimises)
    labels = torch.where(lab.bool(), ids, torch.full_like(ids, -100))
    with torch.no_grad():  # (transformers' loss upcasts to float32 only: float32 accuracy)
        hf = model(input_ids=ids, attention_mask=att, labels=labels).loss
    assert float(nll[lab.bool()].mean()) == pytest.approx(float(hf), rel=1e-6)
    # shifted_nll keeps gradients
    g = shifted_nll(logits.clone().requires_grad_(True), ids, lab)
    assert g.requires_grad
