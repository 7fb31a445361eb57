"""REINFORCE with a baseline: closed form, equality with GRPO's gradient at ratio 1, and exact
expected gradients on an enumerated bandit (unbiased for RLOO, shrunk by (K − 1)/K for the group
mean)."""

from __future__ import annotations

import itertools

import pytest
import torch

from optzoo.policy import grpo_loss, reinforce_advantages, reinforce_loss


def _batch(seed=0):
    gen = torch.Generator().manual_seed(seed)
    mask = (torch.arange(5).unsqueeze(0) < torch.tensor([5, 2, 4, 0]).unsqueeze(1)).double()
    logp = -torch.rand(4, 5, generator=gen, dtype=torch.float64) * 2
    adv = torch.randn(4, generator=gen, dtype=torch.float64)
    return logp, adv, mask


def test_sum_loss_closed_form():
    logp, adv, mask = _batch()
    loss, _ = reinforce_loss(logp, adv, mask)
    expected = -sum(float(adv[i]) * float((logp[i] * mask[i]).sum()) for i in range(4)) / 4
    assert float(loss) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("loss_type", ["grpo", "bnpo", "dr_grpo", "dapo"])
def test_gradient_equals_grpo_at_ratio_one(loss_type):
    logp, adv, mask = _batch(seed=1)
    a = logp.clone().requires_grad_(True)
    reinforce_loss(a, adv, mask, loss_type=loss_type)[0].backward()
    b = logp.clone().requires_grad_(True)
    grpo_loss(b, None, adv, mask, loss_type=loss_type)[0].backward()
    torch.testing.assert_close(a.grad, b.grad, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("baseline,factor", [("rloo", 1.0), ("group_mean", 0.5), ("none", 1.0)])
def test_expected_gradient_on_an_enumerated_bandit(baseline, factor):
    # A 3-armed softmax policy, groups of K = 2 i.i.d. pulls: the exact expectation over all 9
    # groups of the REINFORCE gradient is −∇J for an action-independent baseline (RLOO, none)
    # and −(K − 1)/K·∇J for the group mean, which contains the pull itself.
    theta = torch.tensor([0.3, -0.5, 0.1], dtype=torch.float64, requires_grad=True)
    r = torch.tensor([1.0, 0.0, 0.4], dtype=torch.float64)
    logits = torch.log_softmax(theta, 0)
    expected_loss = torch.zeros((), dtype=torch.float64)
    for a, b in itertools.product(range(3), repeat=2):
        prob = torch.exp(logits[a] + logits[b]).detach()
        rewards = r[[a, b]]
        adv = reinforce_advantages(rewards, baseline, group_size=2)
        loss, _ = reinforce_loss(logits[[a, b]].unsqueeze(1), adv, torch.ones(2, 1))
        expected_loss = expected_loss + prob * loss
    (grad,) = torch.autograd.grad(expected_loss, theta)
    (true,) = torch.autograd.grad(-(torch.softmax(theta, 0) * r).sum(), theta)
    torch.testing.assert_close(grad, factor * true, rtol=1e-12, atol=1e-14)


def test_kl_term_and_errors():
    logp, adv, mask = _batch(seed=2)
    ref = logp + 0.2
    base, _ = reinforce_loss(logp, adv, mask, loss_type="bnpo")
    with_kl, metrics = reinforce_loss(logp, adv, mask, loss_type="bnpo", ref_logp=ref, beta=0.1)
    k3 = (torch.exp(torch.tensor(0.2)) - 0.2 - 1).double()
    torch.testing.assert_close(with_kl, base + 0.1 * k3)
    torch.testing.assert_close(metrics["kl"], k3)
    with pytest.raises(ValueError, match="loss_type"):
        reinforce_loss(logp, adv, mask, loss_type="mean")
    with pytest.raises(ValueError, match="advantages"):
        reinforce_loss(logp, adv[:2], mask)
    with pytest.raises(ValueError, match="ref_logp"):
        reinforce_loss(logp, adv, mask, beta=0.1)
