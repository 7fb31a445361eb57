"""Evaluation of unlearning as in the OFMU paper (Asif & Amiri, ICLR 2026, OpenReview
ZDuyNJI56H) at classifier scale: accuracies (UA/RA/TA: forget, retain, test), the loss-threshold
membership-inference AUC (Yeom et al. 2018: members have lower loss; score = −loss, members are
the positives), and the divergence of the output distribution from the retrained model's on the
forget set.

``KL(p_ref ‖ p)`` is taken with the retrained model as the reference ``p_ref`` (the
distribution the unlearned model should match), averaged over examples.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from optzoo.checks import check_tensor
from optzoo.unlearning.losses import example_losses

__all__ = ["accuracy", "js_divergence", "kl_divergence", "loss_mia_auc", "mia_auc"]


@torch.no_grad()
def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of ``argmax model(x) == y`` (NaN for an empty set)."""
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x, y: expected the same number of rows, got {x.shape[0]} and "
                         f"{y.shape[0]}")
    if x.shape[0] == 0:
        return float("nan")
    return float((model(x).argmax(-1) == y).double().mean())


def mia_auc(member_losses, nonmember_losses) -> float:
    """AUC of the loss-threshold attack: P(loss_member < loss_nonmember) + ½ P(equal).

    0.5 = the attacker cannot tell D_f from unseen data (what a retrained model gives on random
    forgetting); 1 = every member has a lower loss than every non-member.
    """
    m = np.asarray(member_losses, dtype=np.float64).ravel()
    n = np.asarray(nonmember_losses, dtype=np.float64).ravel()
    if m.size == 0 or n.size == 0:
        raise ValueError(f"member_losses, nonmember_losses: expected non-empty, got sizes "
                         f"{m.size} and {n.size}")
    if not (np.isfinite(m).all() and np.isfinite(n).all()):
        raise ValueError("member_losses, nonmember_losses: expected finite values")
    # Mann–Whitney U with mid-ranks for ties, on the score −loss (members positive)
    scores = -np.concatenate([m, n])
    order = scores.argsort(kind="mergesort")
    ranks = np.empty(scores.size, dtype=np.float64)
    sorted_s = scores[order]
    i = 0
    while i < scores.size:
        j = i
        while j + 1 < scores.size and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i:j + 1]] = 0.5 * (i + j) + 1.0
        i = j + 1
    u = ranks[:m.size].sum() - m.size * (m.size + 1) / 2.0
    return float(u / (m.size * n.size))


@torch.no_grad()
def loss_mia_auc(model: nn.Module, members, nonmembers) -> float:
    """:func:`mia_auc` of ``model``'s per-example losses on the batches ``members`` (e.g. D_f)
    and ``nonmembers`` (held-out data never trained on)."""
    return mia_auc(example_losses(model, members).cpu().numpy(),
                   example_losses(model, nonmembers).cpu().numpy())


def _check_logits(logits_ref: torch.Tensor, logits: torch.Tensor) -> None:
    for name, t in (("logits_ref", logits_ref), ("logits", logits)):
        check_tensor(name, t, finite=False)  # -inf logits (masked classes) are fine
        if bool(torch.isnan(t).any()):
            raise ValueError(f"{name}: expected no NaN logits")
    if logits_ref.shape != logits.shape or logits.dim() < 2:
        raise ValueError(f"logits_ref, logits: expected equal shapes (..., C), got "
                         f"{tuple(logits_ref.shape)} and {tuple(logits.shape)}")


def kl_divergence(logits_ref: torch.Tensor, logits: torch.Tensor) -> float:
    """Mean over examples (all leading dims) of ``KL(softmax(logits_ref) ‖ softmax(logits))``."""
    _check_logits(logits_ref, logits)
    lp_ref = F.log_softmax(logits_ref.double(), -1)
    lp = F.log_softmax(logits.double(), -1)
    return float((lp_ref.exp() * (lp_ref - lp)).sum(-1).mean().detach())


def js_divergence(logits_ref: torch.Tensor, logits: torch.Tensor) -> float:
    """Mean Jensen–Shannon divergence (nats) between the two softmax distributions."""
    _check_logits(logits_ref, logits)
    p = F.softmax(logits_ref.double(), -1)
    q = F.softmax(logits.double(), -1)
    m = 0.5 * (p + q)

    def kl(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.where(a > 0, a * (a.clamp_min(1e-300).log() - b.clamp_min(1e-300).log()),
                           torch.zeros_like(a)).sum(-1)

    return float((0.5 * kl(p, m) + 0.5 * kl(q, m)).mean())
