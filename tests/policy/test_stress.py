"""NaN/Inf stress tests: every loss and its gradient stay finite on extreme log-probs (0, −1e4,
log-ratios of ±1e4), non-finite padding (−inf, NaN, +inf in masked positions), all-equal rewards
in a group, empty responses and an all-empty mask, in float32 and float64."""

from __future__ import annotations

import itertools

import pytest
import torch

from optzoo.policy import (
    SPOValueTracker,
    gn_ivo_loss,
    grpo_advantages,
    grpo_loss,
    offpolicy_grpo_loss,
    reinforce_advantages,
    reinforce_loss,
    rloo_advantages,
    spo_advantages,
    whitened_advantages,
    zero_variance_mask,
)

DTYPES = (torch.float32, torch.float64)
K = 3
MASK_ROWS = [[1, 1, 1, 1], [1, 1, 0, 0], [0, 0, 0, 0], [1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1]]


def _extreme(dtype, empty=False):
    mask = torch.tensor(MASK_ROWS, dtype=dtype)
    if empty:
        mask = torch.zeros_like(mask)
    pattern = torch.tensor([0.0, -1e4, -50.0, -1e-6], dtype=dtype)
    logp = pattern.roll(1).repeat(6, 1)
    old = torch.tensor([-1e4, 0.0, -50.0, -30.0], dtype=dtype).repeat(6, 1)
    ref = torch.tensor([-1e4, 0.0, 0.0, -1e4], dtype=dtype).repeat(6, 1)
    pad = mask == 0
    logp = logp.masked_fill(pad, float("-inf"))
    old = old.masked_fill(pad, float("nan"))
    ref = ref.masked_fill(pad, float("inf"))
    rewards = torch.tensor([1.0, 1.0, 1.0, 0.0, 1.0, 0.5], dtype=dtype)  # group 0 all equal
    return logp, old, ref, mask, rewards


def _check(loss, metrics, leaf, mask):
    assert torch.isfinite(loss), loss
    for key, value in metrics.items():
        assert torch.isfinite(value).all(), key
    loss.backward()
    assert torch.isfinite(leaf.grad).all()
    assert torch.all(leaf.grad[mask == 0] == 0)


def _advantage_sets(rewards):
    return {
        "grpo": grpo_advantages(rewards, K),
        "batch": grpo_advantages(rewards, K, scale="batch"),
        "whitened": whitened_advantages(rewards, K),
        "rloo": rloo_advantages(rewards, K),
        "huge": torch.full_like(rewards, 1e3) * torch.tensor([1, -1, 1, -1, 1, -1]).to(rewards),
    }


GRPO_CASES = list(itertools.product(DTYPES, ("grpo", "bnpo", "dr_grpo", "dapo"),
                                    ("token", "sequence"), (0.0, 0.1), (False, True)))


@pytest.mark.parametrize("dtype,loss_type,level,beta,empty", GRPO_CASES)
def test_grpo_loss_finite(dtype, loss_type, level, beta, empty):
    logp, old, ref, mask, rewards = _extreme(dtype, empty)
    for adv in _advantage_sets(rewards).values():
        assert torch.isfinite(adv).all()
        leaf = logp.clone().requires_grad_(True)
        loss, metrics = grpo_loss(leaf, old, adv, mask, ref_logp=ref, beta=beta,
                                  loss_type=loss_type, importance_sampling_level=level,
                                  delta=1.5)
        _check(loss, metrics, leaf, mask)


@pytest.mark.parametrize("dtype,level,beta,empty",
                         list(itertools.product(DTYPES, ("token", "sequence", "sequence_sum"),
                                                (0.0, 0.1), (False, True))))
def test_offpolicy_grpo_loss_finite(dtype, level, beta, empty):
    logp, old, ref, mask, rewards = _extreme(dtype, empty)
    anchor = old - 7.0  # c = e^-7 on every token: the window sits far from the ratio
    for adv in _advantage_sets(rewards).values():
        leaf = logp.clone().requires_grad_(True)
        loss, metrics = offpolicy_grpo_loss(
            leaf, old, anchor, adv, mask, group_mask=zero_variance_mask(rewards, K),
            ref_logp=ref, beta=beta, importance_sampling_level=level,
            use_bias_correction_kl=True)
        _check(loss, metrics, leaf, mask)


@pytest.mark.parametrize("dtype,loss_type,empty",
                         list(itertools.product(DTYPES, ("sum", "grpo", "dapo"), (False, True))))
def test_reinforce_loss_finite(dtype, loss_type, empty):
    logp, _, ref, mask, rewards = _extreme(dtype, empty)
    for baseline in ("none", "batch_mean", "group_mean", "rloo"):
        adv = reinforce_advantages(rewards, baseline, K)
        leaf = logp.clone().requires_grad_(True)
        loss, metrics = reinforce_loss(leaf, adv, mask, loss_type=loss_type, ref_logp=ref,
                                       beta=0.1)
        _check(loss, metrics, leaf, mask)


@pytest.mark.parametrize("dtype,steps,normalize,empty",
                         list(itertools.product(DTYPES, ("tokens", "one_step"), (True, False),
                                                (False, True))))
def test_gn_ivo_loss_finite(dtype, steps, normalize, empty):
    logp, old, ref, mask, rewards = _extreme(dtype, empty)
    step_ids = None if steps == "tokens" else torch.zeros(mask.shape, dtype=torch.long)
    reward_sets = [rewards, torch.zeros_like(rewards)]  # the second: every group degenerate
    if normalize:
        reward_sets.append(torch.tensor([1e6, -1e6, 0.0, 3e4, -3e4, 1.0], dtype=dtype))
    for r in reward_sets:
        leaf = logp.clone().requires_grad_(True)
        loss, metrics = gn_ivo_loss(leaf, old, r, mask, K, step_ids=step_ids,
                                    normalize_weights=normalize, ref_logp=ref, beta=0.1)
        _check(loss, metrics, leaf, mask)


@pytest.mark.parametrize("dtype", DTYPES)
def test_spo_finite(dtype):
    logp, old, ref, mask, _ = _extreme(dtype)
    tracker = SPOValueTracker()
    keys = list(range(6))
    for step in range(300):  # ρ at both ends, many visits
        rho = torch.tensor([0.0, 1.0, 0.96, 0.875, 0.5, 1.0])
        tracker.update(keys, [float((step + i) % 2) for i in keys], rho)
    values = tracker.values(keys)
    assert torch.isfinite(values).all() and torch.isfinite(tracker.sampling_weights(keys)).all()
    rewards = torch.tensor([1.0, 1.0, 1.0, 1.0, 1.0, 1.0], dtype=dtype)
    for v in (values, torch.ones(6, dtype=torch.float64), torch.full((6,), 1e-300)):
        adv = spo_advantages(rewards, v)
        assert adv.dtype == dtype and torch.isfinite(adv).all()
        leaf = logp.clone().requires_grad_(True)
        loss, metrics = grpo_loss(leaf, old, adv, mask, ref_logp=ref, beta=0.1, loss_type="bnpo")
        _check(loss, metrics, leaf, mask)
