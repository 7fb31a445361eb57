"""W-DPO, StepORLM's weighted DPO (Zhou, Xu, Lin & Ge, "StepORLM: A Self-Evolving Framework With
Generative Process Supervision For Operations Research Language Models", ICLR 2026,
arXiv 2509.22558).

Each preference pair (τ_w, τ_l) carries a weight w ≥ 0 from the dual feedback (solver outcome
and the generative process reward model's step judgements), and the policy minimises

    L = −E[w · log σ(β·(log π_θ(τ_w|x) − log π_θ(τ_l|x)
                         − (log π_ref(τ_w|x) − log π_ref(τ_l|x))))].

Reading (the brief ``steporlm.md``; the paper's loss section and code are not public): the
printed form shows no reference term; since the method is called weighted DPO and mentions no
length normalisation or SFT term, the default keeps DPO's reference with π_ref = the policy at
the start of the iteration.  ``ref_*=None`` gives the reference-free printed form (an
ablation: without a reference DPO drifts).  ``normalize="mean"`` averages w·ℓ over the n pairs
(the printed expectation); ``"weight_sum"`` divides by Σw instead (a weighted mean).
With w ≡ 1 and a reference the loss equals TRL's sigmoid DPO loss.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor

from optzoo.checks import check_real
from optzoo.preference.dpo import _check_pairs, pair_metrics

__all__ = ["NORMALIZATIONS", "wdpo_loss"]

NORMALIZATIONS = ("mean", "weight_sum")


def wdpo_loss(chosen_logps: Tensor, rejected_logps: Tensor, weights: Tensor,
              ref_chosen_logps: Tensor | None = None, ref_rejected_logps: Tensor | None = None,
              *, beta: float = 0.1, normalize: str = "mean") -> tuple[Tensor, dict[str, Tensor]]:
    """Weighted sigmoid DPO on sequence log-probs ``(B,)`` with per-pair weights ``(B,)`` ≥ 0.

    Example:
        >>> import torch
        >>> from optzoo.preference import wdpo_loss
        >>> z = torch.zeros(2)
        >>> loss, _ = wdpo_loss(z, z, torch.tensor([1.0, 0.0]), z, z, beta=1.0)
        >>> round(float(loss), 4)  # (1·log 2 + 0·log 2) / 2
        0.3466
    """
    _check_pairs(chosen_logps=chosen_logps, rejected_logps=rejected_logps, weights=weights)
    if (ref_chosen_logps is None) != (ref_rejected_logps is None):
        raise ValueError("ref_chosen_logps, ref_rejected_logps: give both (DPO's reference) or "
                         "neither (the reference-free ablation)")
    if ref_chosen_logps is not None:
        _check_pairs(chosen_logps=chosen_logps, ref_chosen_logps=ref_chosen_logps,
                     ref_rejected_logps=ref_rejected_logps)
    check_real("beta", beta, low=0, low_open=True)
    if normalize not in NORMALIZATIONS:
        raise ValueError(f"normalize: expected one of {NORMALIZATIONS}, got {normalize!r}")
    if bool((weights < 0).any()):
        raise ValueError("weights: expected non-negative pair weights")
    w = weights.detach().to(chosen_logps.dtype)
    chosen, rejected = chosen_logps, rejected_logps
    if ref_chosen_logps is not None:
        chosen = chosen - ref_chosen_logps.detach()
        rejected = rejected - ref_rejected_logps.detach()
    losses = -F.logsigmoid(beta * (chosen - rejected))
    if normalize == "mean":
        loss = (w * losses).mean()
    else:
        total = w.sum()
        if not float(total) > 0:
            raise ValueError("weights: normalize='weight_sum' needs a positive weight sum")
        loss = (w * losses).sum() / total
    metrics = pair_metrics(beta * chosen, beta * rejected)
    metrics["weights/mean"] = w.mean()
    return loss, metrics
