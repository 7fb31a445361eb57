"""Off-policy GRPO: the clipped objective against a per-token scalar implementation, reduction
to GRPO when the sampler is π_k, the zero-variance mask, the whitened advantage, Theorem 1."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from optzoo.policy import (
    OffPolicySchedule,
    grpo_loss,
    improvement_bound,
    offpolicy_grpo_loss,
    whitened_advantages,
    zero_variance_mask,
)

B, T, G = 6, 5, 3


def _batch(seed=0, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.tensor([5, 2, 4, 1, 5, 3])
    mask = (torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)).to(dtype)
    logp = -torch.rand(B, T, generator=gen, dtype=dtype) * 2 - 0.1
    sampler = logp + 0.4 * torch.randn(B, T, generator=gen, dtype=dtype)
    anchor = logp + 0.2 * torch.randn(B, T, generator=gen, dtype=dtype)
    ref = logp + 0.3 * torch.randn(B, T, generator=gen, dtype=dtype)
    adv = torch.randn(B, generator=gen, dtype=dtype)
    return logp, sampler, anchor, ref, adv, mask


def _slow_offpolicy(logp, sampler, anchor, ref, adv, mask, eps, beta, level, loss_type, keep):
    """Per-token scalar implementation of E 1[σ≠0](f_ε(π/α, π_k/α, A) − β·k3)."""
    rows = []
    for i in range(B):
        toks = [t for t in range(T) if mask[i, t] > 0]
        if level == "sequence_sum":
            log_rho = sum((logp[i, t] - sampler[i, t] for t in toks), torch.zeros(()))
            log_c = sum((anchor[i, t] - sampler[i, t] for t in toks), torch.zeros(()))
        terms = []
        for t in toks:
            if level == "token":
                log_rho, log_c = logp[i, t] - sampler[i, t], anchor[i, t] - sampler[i, t]
            rho, c = torch.exp(log_rho), torch.exp(log_c.detach())
            lo, hi = max(float(c) - eps, 0.0), float(c) + eps
            clipped = torch.clamp(rho, lo, hi)
            surrogate = torch.minimum(rho * adv[i], clipped * adv[i])
            d = ref[i, t] - logp[i, t]
            kl = torch.exp(d) - d - 1
            terms.append(keep[i] * (-surrogate + beta * kl))
        rows.append(terms)
    if loss_type == "grpo":
        return sum(sum(r, torch.zeros(())) / max(len(r), 1) for r in rows) / B
    n = sum(len(r) for r in rows)
    return sum(sum(r, torch.zeros(())) for r in rows) / n


@pytest.mark.parametrize("level,loss_type", list(itertools.product(("token", "sequence_sum"),
                                                                   ("grpo", "bnpo"))))
def test_clipped_objective_equals_scalar_implementation(level, loss_type):
    logp, sampler, anchor, ref, adv, mask = _batch(seed=1)
    keep = torch.tensor([1.0, 0.0, 1.0, 1.0, 1.0, 0.0], dtype=logp.dtype)
    leaf = logp.clone().requires_grad_(True)
    loss, metrics = offpolicy_grpo_loss(leaf, sampler, anchor, adv, mask, group_mask=keep,
                                        ref_logp=ref, beta=0.05, epsilon=0.2,
                                        loss_type=loss_type, importance_sampling_level=level)
    loss.backward()
    slow_leaf = logp.clone().requires_grad_(True)
    slow = _slow_offpolicy(slow_leaf, sampler, anchor, ref, adv, mask, 0.2, 0.05, level,
                           loss_type, keep)
    slow.backward()
    torch.testing.assert_close(loss.detach(), slow.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(leaf.grad, slow_leaf.grad, rtol=1e-12, atol=1e-12)
    if level == "token":
        assert float(metrics["clip_ratio/region_mean"]) > 0  # the window binds somewhere


@pytest.mark.parametrize("loss_type,level,beta,bias",
                         list(itertools.product(("grpo", "bnpo", "dr_grpo", "dapo"),
                                                ("token", "sequence"), (0.0, 0.1),
                                                (False, True))))
def test_sampler_equal_to_anchor_is_grpo(loss_type, level, beta, bias):
    logp, sampler, _, ref, adv, mask = _batch(seed=2)
    kw = dict(ref_logp=ref, beta=beta, loss_type=loss_type, importance_sampling_level=level,
              use_bias_correction_kl=bias)
    a = logp.clone().requires_grad_(True)
    la, ma = offpolicy_grpo_loss(a, sampler, sampler, adv, mask, epsilon=0.2, epsilon_high=0.3,
                                 **kw)
    la.backward()
    b = logp.clone().requires_grad_(True)
    lb, mb = grpo_loss(b, sampler, adv, mask, epsilon_low=0.2, epsilon_high=0.3, **kw)
    lb.backward()
    torch.testing.assert_close(la, lb, rtol=1e-13, atol=1e-13)
    torch.testing.assert_close(a.grad, b.grad, rtol=1e-13, atol=1e-13)
    for key in ("clip_ratio/region_mean", "kl"):
        torch.testing.assert_close(ma[key], mb[key])


def test_loss_differs_from_grpo_exactly_where_the_anchor_moved():
    logp, sampler, _, _, adv, mask = _batch(seed=3)
    anchor = sampler.clone()
    moved = torch.zeros(B, T, dtype=torch.bool)
    moved[0, 1] = moved[2, 3] = moved[4, 0] = True
    anchor[moved] += 0.7  # c = e^0.7 ≈ 2: the window [1.8, 2.2] excludes ρ ≈ 1 there
    a = logp.clone().requires_grad_(True)
    offpolicy_grpo_loss(a, sampler, anchor, adv, mask, epsilon=0.2)[0].backward()
    b = logp.clone().requires_grad_(True)
    grpo_loss(b, sampler, adv, mask, epsilon_low=0.2, loss_type="grpo")[0].backward()
    differs = (a.grad - b.grad).abs() > 1e-12
    # Only tokens whose centre c_t moved can differ (elsewhere the two losses are term-by-term
    # equal); where the moved window changes which branch of the min is taken, they do.
    assert not torch.any(differs & ~moved)
    assert differs.sum() >= 2


def test_zero_variance_mask_drops_degenerate_prompts_kl():
    logp, sampler, anchor, ref, _, mask = _batch(seed=4)
    rewards = torch.tensor([1.0, 1.0, 1.0, 0.0, 1.0, 0.0], dtype=logp.dtype)
    keep = zero_variance_mask(rewards, G)
    torch.testing.assert_close(keep, torch.tensor([0.0, 0, 0, 1, 1, 1], dtype=logp.dtype))
    adv = whitened_advantages(rewards, G)
    assert torch.all(adv[:3] == 0)
    leaf = logp.clone().requires_grad_(True)
    loss, metrics = offpolicy_grpo_loss(leaf, sampler, anchor, adv, mask, group_mask=keep,
                                        ref_logp=ref, beta=0.1)
    loss.backward()
    assert torch.all(leaf.grad[:3] == 0) and torch.any(leaf.grad[3:] != 0)
    assert float(metrics["masked_fraction"]) == 0.5
    unmasked = logp.clone().requires_grad_(True)
    offpolicy_grpo_loss(unmasked, sampler, anchor, adv, mask, ref_logp=ref,
                        beta=0.1)[0].backward()
    assert torch.any(unmasked.grad[:3] != 0)  # only the KL acts on the degenerate group
    torch.testing.assert_close(unmasked.grad[3:], leaf.grad[3:])


@pytest.mark.parametrize("loss_type", ["grpo", "bnpo"])
def test_renormalised_mask_averages_over_the_kept_prompts_only(loss_type):
    """``renormalize_mask``: the slow per-token loss over the kept rows alone, which scales the
    kept prompts' gradient by all / kept (the mask now acts at β = 0 too)."""
    logp, sampler, anchor, ref, _, mask = _batch(seed=5)
    rewards = torch.tensor([1.0, 1.0, 1.0, 0.0, 1.0, 0.0], dtype=logp.dtype)
    keep = zero_variance_mask(rewards, G)
    adv = whitened_advantages(rewards, G)
    kept = keep > 0
    slow_rows = [t[kept] for t in (logp, sampler, anchor, ref)]
    global B
    saved, B = B, int(kept.sum())
    try:
        slow = _slow_offpolicy(*slow_rows, adv[kept], mask[kept], 0.2, 0.0, "token", loss_type,
                               torch.ones(B, dtype=logp.dtype))
    finally:
        B = saved
    leaf = logp.clone().requires_grad_(True)
    loss, _ = offpolicy_grpo_loss(leaf, sampler, anchor, adv, mask, group_mask=keep,
                                  loss_type=loss_type, renormalize_mask=True)
    torch.testing.assert_close(loss, slow)
    loss.backward()
    plain = logp.clone().requires_grad_(True)
    offpolicy_grpo_loss(plain, sampler, anchor, adv, mask, group_mask=keep,
                        loss_type=loss_type)[0].backward()
    assert torch.all(leaf.grad[:3] == 0)
    if loss_type == "grpo":  # 6 responses in the mean, 3 kept
        torch.testing.assert_close(leaf.grad[3:], 2.0 * plain.grad[3:])
    else:  # tokens: all active / kept active
        ratio = mask.sum() / mask[kept].sum()
        torch.testing.assert_close(leaf.grad[3:], ratio * plain.grad[3:])
    none, _ = offpolicy_grpo_loss(leaf, sampler, anchor, adv, mask, group_mask=torch.zeros(B),
                                  renormalize_mask=True)
    assert none.item() == 0.0 and none.requires_grad


def test_whitened_advantages_closed_form():
    r = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.5])
    adv = whitened_advantages(torch.tensor(r), 3, eps=1e-4).numpy()
    g = r.reshape(2, 3)
    expected = (g - g.mean(1, keepdims=True)) / np.sqrt(g.var(1, ddof=1, keepdims=True) + 1e-4)
    np.testing.assert_allclose(adv, expected.reshape(-1), rtol=1e-12)
    biased = whitened_advantages(torch.tensor(r), 3, eps=0.01, unbiased=False).numpy()
    expected = (g - g.mean(1, keepdims=True)) / np.sqrt(g.var(1, keepdims=True) + 0.01)
    np.testing.assert_allclose(biased, expected.reshape(-1), rtol=1e-12)


def test_improvement_bound_hand_worked():
    # α = π_k = (½, ½), π = (¾, ¼), r = (1, 0), ε = 0: μ = ½, σ = ½, A = (1, −1), L = ½,
    # TV(π, α) = ¼, weight 2(1 − σ)/σ = 2: bound = ½ − ½ = 0; gap = ¾ − ½ = ¼.
    gap, bound = improvement_bound([0.75, 0.25], [0.5, 0.5], [0.5, 0.5], [1.0, 0.0])
    assert gap == pytest.approx(0.25) and bound == pytest.approx(0.0, abs=1e-15)


@given(st.integers(2, 8), st.floats(0.0, 0.5), st.integers(0, 2**32 - 1))
def test_theorem_1_bound_holds(m, eps, seed):
    rng = np.random.default_rng(seed)
    pi, pi_k, alpha = (rng.dirichlet(np.full(m, 0.5)) for _ in range(3))
    alpha = np.clip(alpha, 1e-6, None)
    alpha /= alpha.sum()
    rewards = rng.integers(0, 2, size=m).astype(float)
    rewards[0], rewards[1] = 0.0, 1.0  # σ_α > 0
    gap, bound = improvement_bound(pi, pi_k, alpha, rewards, eps=eps)
    assert gap >= bound - 1e-12


def test_schedule_knobs():
    s = OffPolicySchedule(sync_period=4, inner_steps=2, ref_refresh_period=10)
    assert [k for k in range(10) if s.syncs_sampler(k)] == [0, 4, 8]
    assert [s.lag(k) for k in range(6)] == [0, 1, 2, 3, 0, 1]
    assert s.syncs_until(10) == 3 and s.syncs_until(8) == 2
    assert [k for k in range(25) if s.refreshes_reference(k)] == [10, 20]
    on_policy = OffPolicySchedule()
    assert all(on_policy.syncs_sampler(k) for k in range(5)) and on_policy.lag(3) == 0
    for bad in (dict(sync_period=0), dict(inner_steps=1.5), dict(ref_refresh_period=0)):
        with pytest.raises(ValueError, match=next(iter(bad))):
            OffPolicySchedule(**bad)


def test_bad_inputs_name_the_argument():
    logp, sampler, anchor, ref, adv, mask = _batch()
    with pytest.raises(ValueError, match="anchor_logp"):
        offpolicy_grpo_loss(logp, sampler, anchor[:, :2], adv, mask)
    with pytest.raises(ValueError, match="importance_sampling_level"):
        offpolicy_grpo_loss(logp, sampler, anchor, adv, mask, importance_sampling_level="seq")
    with pytest.raises(ValueError, match="ref_logp"):
        offpolicy_grpo_loss(logp, sampler, anchor, adv, mask, beta=0.1)
    with pytest.raises(ValueError, match="group_mask"):
        offpolicy_grpo_loss(logp, sampler, anchor, adv, mask, group_mask=torch.ones(3))
    with pytest.raises(ValueError, match="eps"):
        whitened_advantages(torch.ones(4), 2, eps=0.0)
    with pytest.raises(ValueError, match="alpha"):
        improvement_bound([0.5, 0.5], [0.5, 0.5], [1.0, 0.0], [1.0, 0.0])
