"""DPO and SimPO: the sequence-level preference losses the token-level methods build on.

Direct Preference Optimization (Rafailov et al., NeurIPS 2023, Eq. 7) as TRL 1.16.0's
``DPOTrainer`` computes it with ``loss_type="sigmoid"`` (the baseline of the ICLR 2026 papers
TI-DPO, OpenReview ``cMEnMVvMw9``, and AuxDPO), and SimPO (Meng, Xia & Chen, NeurIPS 2024,
Eq. 6), TI-DPO's reference-free baseline.  The reference test
(``tests/preference/test_dpo_trl.py``) runs TRL's own ``DPOTrainer._compute_loss`` on a tiny
model and compares it with :func:`dpo_loss` on the log-probs of the same batch.

Tensor conventions (TRL's): a batch of ``B`` pairs.  Sequence log-probs ``(B,)`` are sums of the
per-token log-probs over each completion (``logps = per_token_logps.sum(1)`` with the prompt
and padding masked out), as TRL forms them; :func:`sequence_logps` makes them from ``(B, T)``
per-token log-probs and a completion mask.

    DPO:    ℓ = −(1 − ε)·log σ(β·h) − ε·log σ(−β·h),
            h = (log π(y_w) − log π_ref(y_w)) − (log π(y_l) − log π_ref(y_l))
    SimPO:  ℓ = −log σ(β/|y_w|·log π(y_w) − β/|y_l|·log π(y_l) − γ)

``ε`` is conservative DPO's label smoothing (Mitchell 2023; TRL before 1.x applied it to the
sigmoid loss, TRL 1.16 only to ``"robust"``); ε = 0, the default, is plain DPO and TRL 1.16's
sigmoid loss.  Both
return ``(loss, metrics)``: the batch mean and detached diagnostics (implicit rewards β·log
ratio, their margin and the pair accuracy, as TRL logs them).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from optzoo.checks import check_real

__all__ = ["dpo_loss", "dpop_loss", "ipo_loss", "pair_metrics", "sequence_logps", "simpo_loss"]


def _check_pairs(**tensors: Tensor) -> int:
    """The common batch size of ``(B,)`` floating tensors, or a ValueError naming the culprit."""
    size = None
    for name, t in tensors.items():
        if not isinstance(t, Tensor) or not t.is_floating_point():
            raise TypeError(f"{name}: expected a floating-point tensor of shape (B,), got "
                            f"{type(t).__name__}"
                            + (f" of dtype {t.dtype}" if isinstance(t, Tensor) else ""))
        if t.dim() != 1:
            raise ValueError(f"{name}: expected shape (B,) (one value per pair), got "
                             f"{tuple(t.shape)}")
        if size is None:
            size = t.shape[0]
        elif t.shape[0] != size:
            raise ValueError(f"{name}: expected {size} values (the batch of the first "
                             f"argument), got {t.shape[0]}")
        if not bool(torch.isfinite(t).all()):
            raise ValueError(f"{name}: contains NaN or infinite log-probs")
    return int(size or 0)


def sequence_logps(per_token_logps: Tensor, mask: Tensor) -> Tensor:
    """``Σ_t per_token_logps[b, t]`` over the completion tokens (``mask`` 1): ``(B, T) → (B,)``.

    Masked positions are replaced by 0 before the sum, so a padding log-prob of ``-inf`` cannot
    turn the sum into NaN.
    """
    if not isinstance(per_token_logps, Tensor) or per_token_logps.dim() != 2:
        raise ValueError(f"per_token_logps: expected a (B, T) tensor, got "
                         f"{getattr(per_token_logps, 'shape', type(per_token_logps).__name__)}")
    if not isinstance(mask, Tensor) or mask.shape != per_token_logps.shape:
        raise ValueError(f"mask: expected the shape of per_token_logps "
                         f"{tuple(per_token_logps.shape)}, got "
                         f"{getattr(mask, 'shape', type(mask).__name__)}")
    keep = mask.bool()
    return torch.where(keep, per_token_logps, torch.zeros_like(per_token_logps)).sum(1)


def pair_metrics(chosen_rewards: Tensor, rejected_rewards: Tensor) -> dict[str, Tensor]:
    """TRL's logged diagnostics of implicit rewards: means, margin and accuracy (detached)."""
    c, r = chosen_rewards.detach(), rejected_rewards.detach()
    return {"rewards/chosen": c.mean(), "rewards/rejected": r.mean(),
            "rewards/margins": (c - r).mean(), "rewards/accuracies": (c > r).float().mean()}


def dpo_loss(chosen_logps: Tensor, rejected_logps: Tensor, ref_chosen_logps: Tensor,
             ref_rejected_logps: Tensor, *, beta: float = 0.1,
             label_smoothing: float = 0.0) -> tuple[Tensor, dict[str, Tensor]]:
    """DPO's sigmoid loss (TRL ``loss_type="sigmoid"``) on sequence log-probs, each ``(B,)``.

    Args:
        chosen_logps, rejected_logps: log π_θ(y_w | x), log π_θ(y_l | x) (sums over tokens).
        ref_chosen_logps, ref_rejected_logps: the same under π_ref (treated as constants).
        beta: β > 0, the strength of the KL regularisation.
        label_smoothing: ε ∈ [0, 0.5), the assumed probability that a label is flipped.

    Example:
        >>> import torch
        >>> from optzoo.preference import dpo_loss
        >>> z = torch.zeros(2)
        >>> loss, m = dpo_loss(torch.tensor([1.0, 0.0]), z, z, z, beta=1.0)
        >>> round(float(loss), 4)  # mean of −log σ(1) and −log σ(0)
        0.5032
    """
    _check_pairs(chosen_logps=chosen_logps, rejected_logps=rejected_logps,
                 ref_chosen_logps=ref_chosen_logps, ref_rejected_logps=ref_rejected_logps)
    check_real("beta", beta, low=0, low_open=True)
    check_real("label_smoothing", label_smoothing, low=0, high=0.5, high_open=True)
    chosen = chosen_logps - ref_chosen_logps.detach()
    rejected = rejected_logps - ref_rejected_logps.detach()
    h = beta * (chosen - rejected)
    losses = -(1 - label_smoothing) * F.logsigmoid(h) - label_smoothing * F.logsigmoid(-h)
    return losses.mean(), pair_metrics(beta * chosen, beta * rejected)


def simpo_loss(chosen_logps: Tensor, rejected_logps: Tensor, chosen_lengths: Tensor,
               rejected_lengths: Tensor, *, beta: float = 2.0,
               gamma: float = 0.5) -> tuple[Tensor, dict[str, Tensor]]:
    """SimPO (Meng et al. 2024, Eq. 6): reference-free, length-normalised, with a target margin.

    ``−log σ(β·log π(y_w)/|y_w| − β·log π(y_l)/|y_l| − γ)``; the lengths are the completion token
    counts (``mask.sum(1)``).  Defaults are SimPO's Llama-3-Instruct setting (β = 2.0 with
    γ/β = 0.25).
    """
    _check_pairs(chosen_logps=chosen_logps, rejected_logps=rejected_logps,
                 chosen_lengths=chosen_lengths.to(chosen_logps.dtype)
                 if isinstance(chosen_lengths, Tensor) else chosen_lengths,
                 rejected_lengths=rejected_lengths.to(chosen_logps.dtype)
                 if isinstance(rejected_lengths, Tensor) else rejected_lengths)
    for name, n in (("chosen_lengths", chosen_lengths), ("rejected_lengths", rejected_lengths)):
        if not bool((n >= 1).all()):
            raise ValueError(f"{name}: expected every completion to have >= 1 token")
    check_real("beta", beta, low=0, low_open=True)
    check_real("gamma", gamma)
    chosen = beta * chosen_logps / chosen_lengths.to(chosen_logps.dtype)
    rejected = beta * rejected_logps / rejected_lengths.to(rejected_logps.dtype)
    losses = -F.logsigmoid(chosen - rejected - gamma)
    return losses.mean(), pair_metrics(chosen, rejected)


def ipo_loss(chosen_logps: Tensor, rejected_logps: Tensor, ref_chosen_logps: Tensor,
             ref_rejected_logps: Tensor, chosen_lengths: Tensor, rejected_lengths: Tensor, *,
             beta: float = 0.1) -> tuple[Tensor, dict[str, Tensor]]:
    """IPO (Azar et al. 2024, Eq. 17) as TRL 1.16's ``loss_type="ipo"``: the log-ratios are
    averaged per completion token, ``ℓ = (h̄ − 1/(2β))²`` with
    ``h̄ = (log π − log π_ref)(y_w)/|y_w| − (log π − log π_ref)(y_l)/|y_l|`` (β is IPO's τ)."""
    _check_pairs(chosen_logps=chosen_logps, rejected_logps=rejected_logps,
                 ref_chosen_logps=ref_chosen_logps, ref_rejected_logps=ref_rejected_logps)
    check_real("beta", beta, low=0, low_open=True)
    chosen = (chosen_logps - ref_chosen_logps.detach()) / _lengths("chosen_lengths",
                                                                   chosen_lengths, chosen_logps)
    rejected = (rejected_logps - ref_rejected_logps.detach()) / _lengths(
        "rejected_lengths", rejected_lengths, rejected_logps)
    losses = (chosen - rejected - 1 / (2 * beta)) ** 2
    return losses.mean(), pair_metrics(beta * (chosen_logps - ref_chosen_logps),
                                       beta * (rejected_logps - ref_rejected_logps))


def dpop_loss(chosen_logps: Tensor, rejected_logps: Tensor, ref_chosen_logps: Tensor,
              ref_rejected_logps: Tensor, *, beta: float = 0.1,
              lam: float = 50.0) -> tuple[Tensor, dict[str, Tensor]]:
    """DPO-Positive (Pal et al. 2024, Eq. 3): DPO whose margin is lowered by
    ``λ·max(0, log π_ref(y_w) − log π_θ(y_w))`` — a penalty when the chosen response's
    likelihood falls below the reference's.  λ = 50 is the paper's setting."""
    _check_pairs(chosen_logps=chosen_logps, rejected_logps=rejected_logps,
                 ref_chosen_logps=ref_chosen_logps, ref_rejected_logps=ref_rejected_logps)
    check_real("beta", beta, low=0, low_open=True)
    check_real("lam", lam, low=0)
    chosen = chosen_logps - ref_chosen_logps.detach()
    rejected = rejected_logps - ref_rejected_logps.detach()
    penalty = torch.relu(-chosen)
    losses = -F.logsigmoid(beta * (chosen - rejected - lam * penalty))
    metrics = pair_metrics(beta * chosen, beta * rejected)
    metrics["dpop/penalty"] = penalty.detach().mean()
    return losses.mean(), metrics


def _lengths(name: str, n, like: Tensor) -> Tensor:
    if not isinstance(n, Tensor) or n.shape != like.shape:
        raise ValueError(f"{name}: expected a tensor of shape {tuple(like.shape)} (token counts), "
                         f"got {getattr(n, 'shape', type(n).__name__)}")
    if not bool((n >= 1).all()):
        raise ValueError(f"{name}: expected every completion to have >= 1 token")
    return n.to(like.dtype)
