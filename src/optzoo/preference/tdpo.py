"""TDPO: token-level DPO with a sequential KL term (Zeng et al., "Token-level Direct Preference
Optimization", ICML 2024) — the base TI-DPO (ICLR 2026, OpenReview ``cMEnMVvMw9``) weights.

For a response y to prompt x, the sequential KL is the sum over response positions of the
per-position KL between the reference's and the policy's next-token distributions,

    SeqKL(x, y) = Σ_t KL(π_ref(· | x, y_<t) ‖ π_θ(· | x, y_<t))      (TDPO Eq. 9)

and with the log-ratio margin u = (log π_θ − log π_ref)(y_w) − (log π_θ − log π_ref)(y_l):

    TDPO1:  ℓ = −log σ(β·(u − (SeqKL(x, y_l) − SeqKL(x, y_w))))
    TDPO2:  ℓ = −log σ(β·(u − α·(SeqKL(x, y_l) − sg(SeqKL(x, y_w)))))   (TDPO Eq. 15)

sg = stop-gradient.  β multiplies the KL difference too, as in the official code (the
direction KL(ref ‖ θ) is the code's: ``Σ_v p_ref (log p_ref − log p_θ)``).  TRL has no TDPO: the
reference test checks :func:`sequential_kl` against a per-position Python loop over the
vocabulary and the loss against its formula by hand.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from optzoo.checks import check_real
from optzoo.preference.dpo import _check_pairs, pair_metrics


def _wide(x: Tensor) -> Tensor:
    """At least float32 for the softmax (half-precision logits lose the small log-probs), and
    float64 stays float64."""
    return x.to(torch.promote_types(x.dtype, torch.float32))


__all__ = ["TDPO_VARIANTS", "per_token_logratios", "sequential_kl", "tdpo_loss"]

TDPO_VARIANTS = ("tdpo1", "tdpo2")


def _check_logits(logits: Tensor, ref_logits: Tensor, mask: Tensor) -> None:
    if not isinstance(logits, Tensor) or logits.dim() != 3:
        raise ValueError(f"logits: expected a (B, T, V) tensor, got "
                         f"{getattr(logits, 'shape', type(logits).__name__)}")
    if not isinstance(ref_logits, Tensor) or ref_logits.shape != logits.shape:
        raise ValueError(f"ref_logits: expected the shape of logits {tuple(logits.shape)}, got "
                         f"{getattr(ref_logits, 'shape', type(ref_logits).__name__)}")
    if not isinstance(mask, Tensor) or mask.shape != logits.shape[:2]:
        raise ValueError(f"mask: expected shape {tuple(logits.shape[:2])} (B, T), got "
                         f"{getattr(mask, 'shape', type(mask).__name__)}")


def sequential_kl(logits: Tensor, ref_logits: Tensor, mask: Tensor) -> Tensor:
    """SeqKL per sequence, ``(B,)``: Σ over masked positions of KL(π_ref ‖ π_θ).

    ``logits`` and ``ref_logits`` ``(B, T, V)`` are the next-token logits AT the response
    positions (position t predicts response token t), ``mask`` ``(B, T)`` marks the response.
    Gradients flow into ``logits`` only.
    """
    _check_logits(logits, ref_logits, mask)
    logp = F.log_softmax(_wide(logits), dim=-1)
    ref_logp = F.log_softmax(_wide(ref_logits.detach()), dim=-1)
    kl = (ref_logp.exp() * (ref_logp - logp)).sum(-1)
    return torch.where(mask.bool(), kl, torch.zeros_like(kl)).sum(1).to(logits.dtype)


def per_token_logratios(logits: Tensor, ref_logits: Tensor, tokens: Tensor,
                        mask: Tensor) -> Tensor:
    """ρ_t = log π_θ(y_t | ·) − log π_ref(y_t | ·) at the response positions, 0 elsewhere,
    ``(B, T)``; ``tokens`` ``(B, T)`` are the response token ids."""
    _check_logits(logits, ref_logits, mask)
    if not isinstance(tokens, Tensor) or tokens.shape != mask.shape:
        raise ValueError(f"tokens: expected shape {tuple(mask.shape)}, got "
                         f"{getattr(tokens, 'shape', type(tokens).__name__)}")
    idx = tokens.long().clamp(0, logits.shape[-1] - 1).unsqueeze(-1)
    logp = F.log_softmax(_wide(logits), -1).gather(-1, idx).squeeze(-1)
    ref = F.log_softmax(_wide(ref_logits.detach()), -1).gather(-1, idx).squeeze(-1)
    rho = (logp - ref).to(logits.dtype)
    return torch.where(mask.bool(), rho, torch.zeros_like(rho))


def tdpo_loss(chosen_logratios: Tensor, rejected_logratios: Tensor, chosen_kl: Tensor,
              rejected_kl: Tensor, *, beta: float = 0.1, alpha: float = 0.5,
              variant: str = "tdpo2") -> tuple[Tensor, dict[str, Tensor]]:
    """TDPO1 / TDPO2 on sequence-level log-ratio sums and sequential KLs, each ``(B,)``.

    Args:
        chosen_logratios, rejected_logratios: Σ_t ρ_t over y_w and y_l.
        chosen_kl, rejected_kl: SeqKL(x, y_w), SeqKL(x, y_l) (:func:`sequential_kl`).
        beta: β > 0.
        alpha: α ≥ 0, TDPO2's weight of the KL difference (ignored by TDPO1).
        variant: ``"tdpo1"`` or ``"tdpo2"`` (the official default).

    Example:
        >>> import torch
        >>> from optzoo.preference import tdpo_loss
        >>> z = torch.zeros(1)
        >>> loss, _ = tdpo_loss(z, z, z, torch.tensor([2.0]), beta=1.0, alpha=0.5)
        >>> round(float(loss), 4)  # −log σ(−0.5·2)
        1.3133
    """
    _check_pairs(chosen_logratios=chosen_logratios, rejected_logratios=rejected_logratios,
                 chosen_kl=chosen_kl, rejected_kl=rejected_kl)
    check_real("beta", beta, low=0, low_open=True)
    check_real("alpha", alpha, low=0)
    if variant not in TDPO_VARIANTS:
        raise ValueError(f"variant: expected one of {TDPO_VARIANTS}, got {variant!r}")
    margin = chosen_logratios - rejected_logratios
    if variant == "tdpo1":
        z = margin - (rejected_kl - chosen_kl)
    else:
        z = margin - alpha * (rejected_kl - chosen_kl.detach())
    losses = -F.logsigmoid(beta * z)
    metrics = pair_metrics(beta * chosen_logratios, beta * rejected_logratios)
    metrics["kl/chosen"] = chosen_kl.detach().mean()
    metrics["kl/rejected"] = rejected_kl.detach().mean()
    return losses.mean(), metrics
