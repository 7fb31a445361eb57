"""RFTHGS's policy loss as verl computes it (``compute_policy_loss`` + ``agg_loss`` with
``loss_agg_mode="seq-mean-token-sum"``), against a slow per-token loop of verl's formula, and
the per-token protocol of both generators."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from optzoo.routing.crossover_dsl import SLOTS, random_program  # noqa: E402
from optzoo.routing.rfthgs import (  # noqa: E402
    CacheEntry,
    RFTConfig,
    SlotPolicy,
    verl_policy_loss,
)


def _verl_loop(logp, old, adv, mask, lo, hi, c, scale):
    """verl 0.4's compute_policy_loss then agg_loss("seq-mean-token-sum") (and the RFTHGS
    fork's division by loss_scale_factor > 1), written out token by token."""
    seq_losses = []
    for b in range(logp.shape[0]):
        total = logp.new_zeros(())
        a = adv[b]
        for t in range(logp.shape[1]):
            d = torch.clamp(logp[b, t] - old[b, t], -20.0, 20.0)
            ratio = torch.exp(d)
            pg1 = -a * ratio
            pg2 = -a * torch.clamp(ratio, 1 - lo, 1 + hi)
            clip1 = torch.maximum(pg1, pg2)
            loss_t = torch.minimum(-a * c, clip1) if a < 0 else clip1
            total = total + loss_t * mask[b, t]
        seq_losses.append(total)
    loss = torch.stack(seq_losses).mean()
    return loss / scale if scale > 1.0 else loss


def _batch(seed, b=6, t=7, spread=3.0):
    g = torch.Generator().manual_seed(seed)
    old = -torch.rand(b, t, generator=g, dtype=torch.float64) * 4
    logp = old + (torch.rand(b, t, generator=g, dtype=torch.float64) - 0.5) * 2 * spread
    adv = torch.randn(b, generator=g, dtype=torch.float64)
    lengths = torch.randint(1, t + 1, (b,), generator=g)
    mask = (torch.arange(t)[None, :] < lengths[:, None]).to(torch.float64)
    return logp, old, adv, mask


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("lo, hi, c, scale", [(0.2, 0.28, 10.0, 1.0), (0.2, 0.28, 3.0, 500.0),
                                              (0.1, 0.5, 2.0, 1.0)])
def test_loss_and_gradient_equal_verl_loop(seed, lo, hi, c, scale):
    logp, old, adv, mask = _batch(seed)
    ratios = torch.exp(logp - old)[mask > 0]
    # the batch reaches every branch: both clips and, for c = 2 or 3, the dual clip
    assert (ratios < 1 - lo).any() and (ratios > 1 + hi).any() and (ratios > c).any()
    assert (adv < 0).any() and (adv > 0).any()
    a = logp.clone().requires_grad_()
    b = logp.clone().requires_grad_()
    got, metrics = verl_policy_loss(a, old, adv, mask, lo, hi, c, scale)
    ref = _verl_loop(b, old, adv, mask, lo, hi, c, scale)
    assert float(got.detach()) == pytest.approx(float(ref.detach()), rel=1e-12, abs=1e-12)
    got.backward()
    ref.backward()
    torch.testing.assert_close(a.grad, b.grad, rtol=1e-12, atol=1e-12)
    assert a.grad.abs().sum() > 0 and torch.all(a.grad[mask == 0] == 0)
    assert 0 < float(metrics["clip_ratio/region_mean"]) < 1


def test_dual_clip_caps_negative_advantage_tokens():
    # one token, A = -1: the loss follows the ratio up to c and stays at c beyond it
    old = torch.zeros(1, 1)
    adv = torch.tensor([-1.0])
    mask = torch.ones(1, 1)
    for r, expected in [(2.0, 2.0), (9.0, 9.0), (30.0, 10.0)]:
        logp = torch.full((1, 1), math.log(r), requires_grad=True)
        loss, _ = verl_policy_loss(logp, old, adv, mask)
        assert float(loss.detach()) == pytest.approx(expected, rel=1e-6)
        loss.backward()
        assert (float(logp.grad) == 0.0) == (r > 10.0)


def test_token_level_differs_from_a_sequence_level_ratio():
    # two tokens with ratios 1.5 and 0.5 (product 0.75), A = +1: per token the first is
    # clipped at 1.28 and the second counts 0.5; one sequence ratio would give 0.75
    old = torch.zeros(1, 2)
    logp = torch.log(torch.tensor([[1.5, 0.5]]))
    loss, _ = verl_policy_loss(logp, old, torch.tensor([1.0]), torch.ones(1, 2))
    assert float(loss.detach()) == pytest.approx(-(1.28 + 0.5))
    # summed over tokens, averaged over sequences: padding neither counts nor dilutes
    logp2 = torch.log(torch.tensor([[1.5, 0.5, 1.0], [1.1, 7.0, 7.0]]))
    mask2 = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    loss2, _ = verl_policy_loss(logp2, torch.zeros(2, 3), torch.tensor([1.0, 1.0]), mask2)
    assert float(loss2.detach()) == pytest.approx(-((1.28 + 0.5 + 1.0) + 1.1) / 2)


def test_bad_arguments_are_named():
    logp, old, adv, mask = _batch(0)
    with pytest.raises(ValueError, match="clip_ratio_c"):
        verl_policy_loss(logp, old, adv, mask, clip_ratio_c=1.2)
    with pytest.raises(ValueError, match="loss_scale_factor"):
        verl_policy_loss(logp, old, adv, mask, loss_scale_factor=0.0)
    with pytest.raises(ValueError, match="mask"):
        verl_policy_loss(logp, old, adv, mask[:, :3])
    with pytest.raises(ValueError, match="clip_ratio_c"):
        RFTConfig(clip_ratio_c=1.1)
    with pytest.raises(ValueError, match="loss_scale_factor"):
        RFTConfig(loss_scale_factor=-1.0)


def test_slot_policy_tokens_are_its_slot_decisions():
    pol = SlotPolicy()
    with torch.no_grad():
        for s in SLOTS:
            pol.logits(s).normal_(generator=torch.Generator().manual_seed(len(s)))
    import random

    rng = random.Random(0)
    parents = [CacheEntry(random_program(rng), "", 0.0, 0.0) for _ in range(5)]
    children = [random_program(rng) for _ in range(5)]
    logp, mask = pol.token_log_probs(parents, children)
    assert logp.shape == mask.shape == (5, len(SLOTS)) and torch.all(mask == 1)
    torch.testing.assert_close(logp.sum(-1), pol.sequence_log_probs(parents, children))
    # token j is slot j's decision: its log-prob is that slot's log-softmax entry
    for j, s in enumerate(pol.slots):
        row = SLOTS[s].index(parents[0].program[s])
        col = SLOTS[s].index(children[0][s])
        assert float(logp[0, j].detach()) == pytest.approx(
            float(torch.log_softmax(pol.logits(s)[row], -1)[col].detach()))
    with pytest.raises(ValueError, match="parent"):
        pol.propose(CacheEntry(None, "def crossover(a, b, c, d): pass", 0.0, 0.0), 2,
                    torch.Generator())
    assert np.isfinite(logp.detach().numpy()).all()
