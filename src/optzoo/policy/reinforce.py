"""REINFORCE with a baseline (Williams 1992): the score-function loss −A·log π(y|x) with
A = r − b, the baseline-only ablation of the three ICLR 2026 briefs of this area (``spo``:
"SPO with v̂ = 0"; ``gn-ivo``: plain REINFORCE and RLOO; ``offpolicy-grpo``).

Baselines (:func:`reinforce_advantages`): ``"none"`` (b = 0), ``"batch_mean"`` (mean reward of
the batch, SPO's v̂ = 0 ablation before its global normalisation), ``"group_mean"`` (mean of the
prompt's group, unscaled GRPO / Dr. GRPO's advantage) and ``"rloo"`` (leave-one-out mean of the
group).  A baseline that does not depend on the response keeps the gradient unbiased; the group
mean includes the response itself, so it is biased by a factor (K − 1)/K, which RLOO removes.

Loss: per token −A·logp_t (+ β·k3 KL), aggregated by ``loss_type``: ``"sum"`` (default) sums a
response's token log-probs, log π(y|x) = Σ_t logp_t, and averages over responses: the textbook
estimator; the GRPO aggregations (``"grpo"``, ``"bnpo"``, ``"dr_grpo"``, ``"dapo"``) are also
accepted.  On-policy with one update, its gradient equals :func:`optzoo.policy.grpo_loss`'s at
ratio 1 with the same aggregation (tested).
"""

from __future__ import annotations

import torch
from torch import Tensor

from optzoo.policy.advantages import grouped, rloo_advantages
from optzoo.policy.grpo import (
    LOSS_TYPES,
    aggregate_token_loss,
    check_token_inputs,
    k3_kl,
    masked_mean,
)

BASELINES = ("none", "batch_mean", "group_mean", "rloo")
REINFORCE_LOSS_TYPES = ("sum", *LOSS_TYPES)

__all__ = ["BASELINES", "REINFORCE_LOSS_TYPES", "reinforce_advantages", "reinforce_loss"]


def reinforce_advantages(rewards: Tensor, baseline: str = "batch_mean",
                         group_size: int = 1) -> Tensor:
    """``(B,)`` advantages r − b for the ``baseline`` of :data:`BASELINES`; the group baselines
    need ``group_size`` (consecutive responses to one prompt, ≥ 2 for ``"rloo"``)."""
    if baseline not in BASELINES:
        raise ValueError(f"baseline must be one of {BASELINES}, got {baseline!r}")
    g = grouped(rewards, group_size)
    if baseline == "none":
        return rewards.clone()
    if baseline == "batch_mean":
        return rewards - rewards.mean()
    if baseline == "group_mean":
        return (g - g.mean(1, keepdim=True)).reshape(-1)
    return rloo_advantages(rewards, group_size)


def reinforce_loss(logp: Tensor, advantages: Tensor, mask: Tensor, *, loss_type: str = "sum",
                   ref_logp: Tensor | None = None, beta: float = 0.0,
                   max_completion_length: int | None = None,
                   num_items_in_batch: float | Tensor | None = None,
                   ) -> tuple[Tensor, dict[str, Tensor]]:
    """REINFORCE loss (to minimise).

    Args:
        logp: ``(B, T)`` per-token log-probs of the sampled tokens (with grad).
        advantages: ``(B,)`` or ``(B, T)`` (detached inside), e.g. :func:`reinforce_advantages`.
        mask: ``(B, T)`` completion mask.
        loss_type: ``"sum"`` (mean over responses of −A·Σ_t logp_t) or a GRPO aggregation.
        ref_logp, beta: optional k3 KL penalty (β times the per-token k3, aggregated likewise).
        max_completion_length, num_items_in_batch: as :func:`optzoo.policy.grpo_loss`.

    Returns:
        ``(loss, metrics)``; metrics: ``kl`` when ``ref_logp`` is given.
    """
    check_token_inputs(mask, logp=logp, ref_logp=ref_logp)
    if loss_type not in REINFORCE_LOSS_TYPES:
        raise ValueError(f"loss_type must be one of {REINFORCE_LOSS_TYPES}, got {loss_type!r}")
    if beta < 0.0:
        raise ValueError(f"beta must be >= 0, got {beta}")
    if beta != 0.0 and ref_logp is None:
        raise ValueError("ref_logp is required when beta != 0")
    if advantages.dim() == 1 and advantages.shape[0] == mask.shape[0]:
        adv = advantages.detach().unsqueeze(1)
    elif advantages.shape == mask.shape:
        adv = advantages.detach()
    else:
        raise ValueError(f"advantages must be (B,) or (B, T) with (B, T) = {tuple(mask.shape)}, "
                         f"got {tuple(advantages.shape)}")
    active = mask > 0
    m = mask.to(logp.dtype)
    zero = logp.new_zeros(())
    lp = torch.where(active, logp, zero)
    per_token_loss = -adv * lp
    per_token_kl = None
    if ref_logp is not None:
        per_token_kl = k3_kl(lp, torch.where(active, ref_logp.detach(), zero))
    if beta != 0.0:
        per_token_loss = per_token_loss + beta * per_token_kl
    if loss_type == "sum":
        loss = (per_token_loss * m).sum(-1).mean()
    else:
        loss = aggregate_token_loss(per_token_loss, m, loss_type,
                                    max_completion_length=max_completion_length,
                                    num_items_in_batch=num_items_in_batch)
    metrics: dict[str, Tensor] = {}
    if per_token_kl is not None:
        with torch.no_grad():
            metrics["kl"] = masked_mean(per_token_kl, m)
    return loss, metrics
