"""AuxDPO's penalty terms against direct evaluations, and W-DPO's weighting."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from optzoo.preference import (
    AuxDelta,
    auxdpo_loss,
    dpo_loss,
    null_space_penalty,
    reference_score_vectors,
    wdpo_loss,
)

D = torch.float64


def test_null_space_penalty_is_the_norm_of_a_transpose_delta():
    g = torch.Generator().manual_seed(0)
    gw, gl = torch.randn(3, 5, generator=g, dtype=D), torch.randn(3, 5, generator=g, dtype=D)
    dw, dl = torch.randn(3, generator=g, dtype=D), torch.randn(3, generator=g, dtype=D)
    a = torch.stack([gw[0], gl[0], gw[1], gl[1], gw[2], gl[2]])  # one row per response
    delta = torch.stack([dw[0], dl[0], dw[1], dl[1], dw[2], dl[2]])
    want = float((a.T @ delta).pow(2).sum())
    assert float(null_space_penalty(dw, dl, gw, gl)) == pytest.approx(want, rel=1e-12)
    # a δ in N(Aᵀ) costs nothing; one in the row space costs ‖AᵀA v‖² > 0
    null = torch.linalg.svd(a.T).Vh[-1]  # a ⊥ every column of Aᵀ... (6 > 5: a null vector)
    assert float(null_space_penalty(null[0::2], null[1::2], gw, gl)) < 1e-20
    row = a @ torch.ones(5, dtype=D)
    assert float(null_space_penalty(row[0::2], row[1::2], gw, gl)) > 1.0


def test_auxdpo_adds_delta_inside_beta_and_the_negative_amp_term():
    g = torch.Generator().manual_seed(1)
    c, r = torch.randn(4, generator=g, dtype=D), torch.randn(4, generator=g, dtype=D)
    dw, dl = torch.rand(4, generator=g, dtype=D), torch.rand(4, generator=g, dtype=D)
    gw, gl = torch.randn(4, 3, generator=g, dtype=D), torch.randn(4, 3, generator=g, dtype=D)
    loss, m = auxdpo_loss(c, r, dw, dl, grads_chosen=gw, grads_rejected=gl, beta=0.5,
                          lambda_null=0.1, lambda_amp=2.0)
    dpo = -F.logsigmoid(0.5 * (c - r + dw - dl)).mean()
    amp = -0.5 * ((dw ** 2).mean() + (dl ** 2).mean())
    want = dpo + 0.1 * null_space_penalty(dw, dl, gw, gl) + 2.0 * amp
    assert float(loss) == pytest.approx(float(want), rel=1e-12)
    assert float(m["aux/delta_max_abs"]) == pytest.approx(float(torch.cat([dw, dl]).max()))
    with pytest.raises(ValueError, match="grads_chosen"):
        auxdpo_loss(c, r, dw, dl, lambda_null=1.0)


def test_aux_delta_is_capped_by_tanh_and_indexed_by_pair():
    d = AuxDelta(3, cap=0.5, init_std=0.0)
    with torch.no_grad():
        d.raw.copy_(torch.tensor([0.0, 1.0, 100.0, -100.0, 2.0, 3.0], dtype=D))
    w, lo = d(torch.tensor([1, 0]))
    assert torch.allclose(w, torch.tensor([0.5, 0.0], dtype=D))
    assert torch.allclose(lo, torch.tensor([-0.5, 0.5 * torch.tanh(torch.tensor(1.0))],
                                           dtype=D))
    with pytest.raises(ValueError, match="idx"):
        d(torch.tensor([3]))


def test_reference_score_vectors_equal_torch_func_per_sample_gradients():
    from torch.func import functional_call, grad
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    ref = LlamaForCausalLM(LlamaConfig(vocab_size=9, hidden_size=8, intermediate_size=16,
                                       num_hidden_layers=1, num_attention_heads=2,
                                       num_key_value_heads=2)).double()
    for p in ref.parameters():
        p.requires_grad_(False)  # a frozen reference, as TRL keeps it
    ids = torch.tensor([[2, 3, 4, 5, 6], [2, 7, 8, 3, 1]])
    att = torch.ones_like(ids)
    cm = torch.tensor([[0, 0, 1, 1, 1], [0, 0, 0, 1, 1]])
    names = ["lm_head.weight", "model.layers.0.mlp.down_proj.weight"]
    got = reference_score_vectors(ref, ids, att, cm, params=names)
    assert not any(p.requires_grad for p in ref.parameters())
    base = {n: p.detach() for n, p in ref.named_parameters()}

    def seq_logp(sub, i):
        out = functional_call(ref, {**base, **sub}, (ids[i:i + 1],),
                              {"attention_mask": att[i:i + 1]}).logits[0, :-1]
        lp = torch.log_softmax(out, -1).gather(-1, ids[i, 1:, None]).squeeze(-1)
        return (lp * cm[i, 1:]).sum()

    for i in range(2):
        gi = grad(seq_logp)({n: base[n] for n in names}, i)
        want = torch.cat([gi[n].reshape(-1) for n in names])
        assert torch.allclose(got[i], want, rtol=1e-9, atol=1e-12)
    assert got.shape[1] == sum(base[n].numel() for n in names)


def test_wdpo_weights_and_normalisations():
    g = torch.Generator().manual_seed(2)
    c, r, rc, rr = (torch.randn(5, generator=g, dtype=D) for _ in range(4))
    w = torch.tensor([0.0, 1.0, 2.0, 0.5, 0.0], dtype=D)
    per = torch.stack([dpo_loss(c[i:i + 1], r[i:i + 1], rc[i:i + 1], rr[i:i + 1],
                                beta=0.2)[0] for i in range(5)])
    mean, _ = wdpo_loss(c, r, w, rc, rr, beta=0.2)
    wsum, _ = wdpo_loss(c, r, w, rc, rr, beta=0.2, normalize="weight_sum")
    assert float(mean) == pytest.approx(float((w * per).mean()), rel=1e-12)
    assert float(wsum) == pytest.approx(float((w * per).sum() / w.sum()), rel=1e-12)
    free, _ = wdpo_loss(c, r, w, beta=0.2)  # the reference-free printed form
    assert float(free) == pytest.approx(float((w * -F.logsigmoid(0.2 * (c - r))).mean()))
    with pytest.raises(ValueError, match="weights"):
        wdpo_loss(c, r, -w, rc, rr)
    with pytest.raises(ValueError, match="ref_chosen_logps, ref_rejected_logps"):
        wdpo_loss(c, r, w, rc)
