"""Closed forms, slow exact versions and stress tests of the preference losses."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from optzoo.preference import (
    align_completions,
    dpo_loss,
    gaussian_prior,
    hybrid_weights,
    logratio_distance,
    per_token_logratios,
    sequence_logps,
    sequential_kl,
    simpo_loss,
    tdpo_loss,
    ti_dpo_loss,
    token_importance,
)

D = torch.float64


def _pairs(b=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(b, generator=g, dtype=D) for _ in range(4)]


# -- DPO, SimPO ---------------------------------------------------------------------------------

def test_dpo_closed_form_value_and_gradient():
    c, r, rc, rr = (t.requires_grad_(True) for t in _pairs())
    loss, m = dpo_loss(c, r, rc, rr, beta=0.5)
    h = 0.5 * ((c - rc) - (r - rr))
    want = torch.log1p(torch.exp(-h.detach())).mean()
    assert float(loss.detach()) == pytest.approx(float(want), rel=1e-12)
    loss.backward()
    # d/dc of −log σ(h) = −β·σ(−h)/B; the reference gets no gradient
    expected = -0.5 * torch.sigmoid(-h.detach()) / c.shape[0]
    assert torch.allclose(c.grad, expected) and torch.allclose(r.grad, -expected)
    assert rc.grad is None and rr.grad is None
    accuracy = ((c - rc) > (r - rr)).double().mean()
    assert float(m["rewards/accuracies"]) == pytest.approx(float(accuracy))


def test_dpo_label_smoothing_is_conservative_dpo_and_symmetric_at_a_tie():
    c, r, rc, rr = _pairs()
    eps = 0.2
    loss, _ = dpo_loss(c, r, rc, rr, beta=1.0, label_smoothing=eps)
    h = (c - rc) - (r - rr)
    ref = (-(1 - eps) * F.logsigmoid(h) - eps * F.logsigmoid(-h)).mean()
    assert float(loss) == pytest.approx(float(ref), rel=1e-12)
    z = torch.zeros(3, dtype=D)
    assert float(dpo_loss(z, z, z, z, label_smoothing=eps)[0]) == pytest.approx(math.log(2))


def test_simpo_is_length_normalised_with_a_margin():
    c, r = torch.tensor([-4.0, -2.0], dtype=D), torch.tensor([-6.0, -1.0], dtype=D)
    lc, lr = torch.tensor([2, 4]), torch.tensor([3, 1])
    loss, _ = simpo_loss(c, r, lc, lr, beta=2.0, gamma=0.5)
    z = 2.0 * (c / lc.double()) - 2.0 * (r / lr.double()) - 0.5
    assert float(loss) == pytest.approx(float(-F.logsigmoid(z).mean()), rel=1e-12)
    with pytest.raises(ValueError, match="chosen_lengths"):
        simpo_loss(c, r, torch.tensor([0, 1]), lr)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_dpo_rejects_nan_and_inf_log_probs_by_name(bad):
    c, r, rc, rr = _pairs()
    rr[2] = bad
    with pytest.raises(ValueError, match="ref_rejected_logps"):
        dpo_loss(c, r, rc, rr)


def test_sequence_logps_ignores_minus_inf_padding():
    lp = torch.tensor([[-1.0, -2.0, -math.inf]], dtype=D)
    assert float(sequence_logps(lp, torch.tensor([[1, 1, 0]]))) == -3.0


# -- TDPO ---------------------------------------------------------------------------------------

def _slow_seqkl(logits, ref_logits, mask):
    out = []
    for b in range(logits.shape[0]):
        total = 0.0
        for t in range(logits.shape[1]):
            if not mask[b, t]:
                continue
            p_ref = torch.softmax(ref_logits[b, t], -1)
            p = torch.softmax(logits[b, t], -1)
            total += sum(float(p_ref[v]) * (math.log(float(p_ref[v])) - math.log(float(p[v])))
                         for v in range(logits.shape[2]))
        out.append(total)
    return torch.tensor(out, dtype=D)


def test_sequential_kl_equals_a_per_position_loop_and_is_zero_at_the_reference():
    g = torch.Generator().manual_seed(3)
    logits, ref = (torch.randn(3, 4, 6, generator=g, dtype=D) for _ in range(2))
    mask = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1]])
    assert torch.allclose(sequential_kl(logits, ref, mask), _slow_seqkl(logits, ref, mask))
    assert torch.allclose(sequential_kl(ref, ref, mask), torch.zeros(3, dtype=D), atol=1e-12)


def test_tdpo_variants_match_their_formulas_and_tdpo2_stops_the_chosen_kl_gradient():
    c, r, kc, kr = (t.requires_grad_(True) for t in _pairs())
    kc_, kr_ = kc.detach().abs(), kr.detach().abs()
    kc2, kr2 = kc_.clone().requires_grad_(True), kr_.clone().requires_grad_(True)
    l1, _ = tdpo_loss(c, r, kc2, kr2, beta=0.2, variant="tdpo1")
    z1 = (c - r) - (kr_ - kc_)
    assert float(l1) == pytest.approx(float(-F.logsigmoid(0.2 * z1).mean()), rel=1e-12)
    l1.backward()
    assert kc2.grad is not None and float(kc2.grad.abs().sum()) > 0
    kc3, kr3 = kc_.clone().requires_grad_(True), kr_.clone().requires_grad_(True)
    l2, _ = tdpo_loss(c, r, kc3, kr3, beta=0.2, alpha=0.3)
    z2 = (c - r) - 0.3 * (kr_ - kc_)
    assert float(l2) == pytest.approx(float(-F.logsigmoid(0.2 * z2).mean()), rel=1e-12)
    l2.backward()
    assert kc3.grad is None and float(kr3.grad.abs().sum()) > 0


def test_per_token_logratios_gather_the_response_tokens():
    g = torch.Generator().manual_seed(4)
    logits, ref = (torch.randn(2, 3, 5, generator=g, dtype=D) for _ in range(2))
    tokens = torch.tensor([[1, 4, 0], [2, 2, 3]])
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    rho = per_token_logratios(logits, ref, tokens, mask)
    b, t = 1, 2
    want = (torch.log_softmax(logits[b, t], -1) - torch.log_softmax(ref[b, t], -1))[3]
    assert float(rho[b, t]) == pytest.approx(float(want)) and float(rho[0, 2]) == 0.0


# -- TI-DPO -------------------------------------------------------------------------------------

def test_gaussian_prior_closed_form():
    mask = torch.tensor([[1, 1, 1, 1, 1, 0, 0]])
    p = gaussian_prior(mask)  # T = 5: μ = 2, σ = 5/4
    t = torch.arange(5, dtype=D)
    assert torch.allclose(p[0, :5], torch.exp(-0.5 * ((t - 2) / 1.25) ** 2))
    assert float(p[0, 5:].abs().sum()) == 0.0
    assert torch.allclose(gaussian_prior(mask, sigma_div=8)[0, :5],
                          torch.exp(-0.5 * ((t - 2) / 0.625) ** 2))


@pytest.mark.parametrize("norm", ["sum_to_T", "sum_to_1", "minmax"])
def test_hybrid_weights_normalisations(norm):
    mask = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 0, 0, 0]])
    imp = torch.tensor([[0.0, 1.0, 3.0, 0.0, 9.0], [2.0, 2.0, 5.0, 5.0, 5.0]], dtype=D)
    w = hybrid_weights(imp, gaussian_prior(mask), mask, lam=0.7, weight_norm=norm)
    assert float(w[mask == 0].abs().sum()) == 0.0  # padding never weighs
    if norm == "sum_to_T":
        assert torch.allclose(w.sum(1), mask.sum(1).to(D))
    elif norm == "sum_to_1":
        assert torch.allclose(w.sum(1), torch.ones(2, dtype=D))
    else:
        assert float(w.max()) <= 1.0 + 1e-12 and float(w.min()) >= 0.0
    assert int(w[0].argmax()) == 2  # the most important token leads at λ = 0.7
    # λ = 0: the prior alone, symmetric about the centre
    w0 = hybrid_weights(imp, gaussian_prior(mask), mask, lam=0.0, weight_norm=norm)
    assert torch.allclose(w0[0, :4], w0[0, :4].flip(0))


def test_ti_dpo_with_unit_weights_and_no_kl_or_triplet_equals_dpo():
    g = torch.Generator().manual_seed(5)
    rc, rr = torch.randn(4, 6, generator=g, dtype=D), torch.randn(4, 3, generator=g, dtype=D)
    mc = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 2 + [0] * 4, [1] * 5 + [0]])
    mr = torch.tensor([[1, 1, 1], [1, 0, 0], [1, 1, 0], [1, 1, 1]])
    kc, kr = torch.rand(4, generator=g, dtype=D), torch.rand(4, generator=g, dtype=D)
    ti, _ = ti_dpo_loss(rc, rr, mc, mr, mc.to(D), mr.to(D), kc, kr, alpha=0.0, gamma=0.0,
                        beta=0.1)
    z = torch.zeros(4, dtype=D)
    dpo, _ = dpo_loss((rc * mc).sum(1), (rr * mr).sum(1), z, z, beta=0.1)
    assert float(ti) == pytest.approx(float(dpo), rel=1e-12)


def test_ti_dpo_weights_change_the_loss_and_the_triplet_term_acts():
    g = torch.Generator().manual_seed(6)
    rc, rr = torch.randn(2, 4, generator=g, dtype=D), torch.randn(2, 4, generator=g, dtype=D)
    m = torch.ones(2, 4)
    kc = kr = torch.zeros(2, dtype=D)
    uniform, _ = ti_dpo_loss(rc, rr, m, m, m.to(D), m.to(D), kc, kr, gamma=0.0)
    w = torch.tensor([[4.0, 0, 0, 0], [0, 0, 0, 4.0]], dtype=D)
    weighted, _ = ti_dpo_loss(rc, rr, m, m, w, m.to(D), kc, kr, gamma=0.0)
    assert abs(float(uniform) - float(weighted)) > 1e-6
    anchor = rc.clone()  # the anchor sits ON the chosen response: d(y, y_w) = 0
    full, mt = ti_dpo_loss(rc, rr, m, m, m.to(D), m.to(D), kc, kr, anchor_logratios=anchor,
                           anchor_mask=m, gamma=0.1, triplet_margin=0.01)
    d_neg = ((anchor - rr) ** 2).sum(1)
    assert float(mt["loss/triplet"]) == pytest.approx(float(torch.relu(0.01 - d_neg).mean()))
    with pytest.raises(ValueError, match="anchor_logratios"):
        ti_dpo_loss(rc, rr, m, m, m.to(D), m.to(D), kc, kr, gamma=0.1)
    assert float(full) >= float(uniform) - 1e-12


def test_logratio_distance_compares_positions_over_the_common_length():
    a = torch.tensor([[1.0, 2.0, 3.0]], dtype=D)
    b = torch.tensor([[0.0, 2.0, 0.0, 0.0, 7.0]], dtype=D)
    ma, mb = torch.tensor([[1, 1, 1]]), torch.tensor([[1, 1, 0, 0, 0]])
    assert float(logratio_distance(a, ma, b, mb)) == 1.0  # only t = 0, 1 are in both
    assert float(logratio_distance(a, ma, b, mb, distance="scalar_reward_sq")) == 16.0


def test_align_completions_round_trips_trls_layout():
    v = torch.arange(12, dtype=D).reshape(2, 6)
    cm = torch.tensor([[0, 0, 1, 1, 1, 0], [0, 1, 1, 0, 0, 0]])
    out, m = align_completions(v, cm)
    assert out.tolist() == [[2.0, 3.0, 4.0], [7.0, 8.0, 0.0]] and m.tolist() == [[1, 1, 1],
                                                                                  [1, 1, 0]]


def _tiny_lm():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(vocab_size=11, hidden_size=16, intermediate_size=32,
                                        num_hidden_layers=2, num_attention_heads=2,
                                        num_key_value_heads=2)).double()


def test_token_importance_equals_a_per_sequence_attribution_and_leaves_grads_alone():
    model = _tiny_lm()
    ids = torch.tensor([[3, 4, 5, 6, 0, 0], [7, 8, 9, 2, 3, 4]])
    att = torch.tensor([[1, 1, 1, 1, 0, 0], [1] * 6])
    for p in model.parameters():
        p.grad = torch.full_like(p, 0.5)
    imp = token_importance(model, ids, att)
    assert all(bool((p.grad == 0.5).all()) for p in model.parameters())
    for b in range(2):  # the slow version: one unpadded sequence, one forward, one backward
        n = int(att[b].sum())
        e = model.get_input_embeddings()(ids[b:b + 1, :n]).detach().requires_grad_(True)
        target = model(inputs_embeds=e).logits[0, -1].max()
        (grad,) = torch.autograd.grad(target, e)
        assert torch.allclose(imp[b, :n], grad.abs().sum(-1)[0], rtol=1e-9, atol=1e-12)
        assert float(imp[b, n:].abs().sum()) == 0.0
    assert not imp.requires_grad


@pytest.mark.parametrize("arg", ["chosen_logratios", "rejected_weights", "chosen_kl"])
def test_ti_dpo_rejects_non_finite_inputs_by_name(arg):
    m = torch.ones(2, 3)
    kw = dict(chosen_logratios=torch.zeros(2, 3, dtype=D), rejected_logratios=torch.zeros(2, 3,
                                                                                        dtype=D),
              chosen_mask=m, rejected_mask=m, chosen_weights=m.to(D), rejected_weights=m.to(D),
              chosen_kl=torch.zeros(2, dtype=D), rejected_kl=torch.zeros(2, dtype=D), gamma=0.0)
    kw[arg] = kw[arg].clone()
    kw[arg].view(-1)[0] = float("nan")
    with pytest.raises(ValueError, match=arg):
        ti_dpo_loss(**kw)
