"""Advantages from grouped rewards: GRPO's group normalisation, RLOO's leave-one-out baseline,
and the degenerate-group fraction.

Rewards are a ``(B,)`` tensor laid out as TRL lays them out: ``B = num_prompts · group_size``
with the ``group_size`` completions of one prompt consecutive (``repeat_interleave``).

GRPO (Shao et al. 2024) as TRL 1.16.0 computes it in
``GRPOTrainer._generate_and_score_completions``: A_i = (r_i − mean_group) / (std + 1e-4) with the
Bessel-corrected std of the group (``scale="group"``), of the whole batch (``"batch"``, PPO-Lite)
or no division (``"none"``, Dr. GRPO).  A NaN reward is an error by default; with
``nan_policy="omit"`` NaN rewards mark unscorable completions: they are left out of the means and
standard deviations and get advantage 0.  The off-policy GRPO
paper's whitening (r − μ)/sqrt(σ² + ε) is :func:`optzoo.policy.offpolicy_grpo.whitened_advantages`.
"""

from __future__ import annotations

import torch
from torch import Tensor

from optzoo.checks import check_real

SCALES = ("group", "batch", "none")
NAN_POLICIES = ("raise", "omit")

__all__ = ["SCALES", "degenerate_group_fraction", "grouped", "grpo_advantages", "rloo_advantages"]


def grouped(rewards: Tensor, group_size: int, *, finite: bool = True) -> Tensor:
    """``rewards`` ``(B,)`` viewed as ``(B // group_size, group_size)``; ``ValueError`` naming the
    argument when the shapes do not fit, or (``finite``) when a reward is NaN or ±inf."""
    if not isinstance(rewards, Tensor) or rewards.dim() != 1:
        raise ValueError(f"rewards must be a 1-D tensor, got {getattr(rewards, 'shape', rewards)}")
    if not rewards.is_floating_point():
        raise ValueError(f"rewards must be floating point, got {rewards.dtype}")
    if finite and not bool(torch.isfinite(rewards).all()):
        raise ValueError("rewards: expected finite values, got NaN or ±inf")
    if not isinstance(group_size, int) or group_size < 1:
        raise ValueError(f"group_size must be a positive int, got {group_size!r}")
    if rewards.numel() % group_size != 0:
        raise ValueError(f"len(rewards) = {rewards.numel()} is not a multiple of group_size = "
                         f"{group_size}")
    return rewards.view(-1, group_size)


def _nanstd(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    # Bessel-corrected std ignoring NaNs; NaN when fewer than two values (TRL's ``nanstd``).
    if dim is None:
        x, dim = x.reshape(-1), 0
    mean = torch.nanmean(x, dim=dim, keepdim=True)
    var = torch.nanmean((x - mean) ** 2, dim=dim, keepdim=True)
    count = (~torch.isnan(x)).sum(dim=dim, keepdim=True).to(x.dtype)
    var = torch.where(count > 1, var * count / (count - 1).clamp(min=1.0),
                      torch.full_like(var, float("nan")))
    std = var.sqrt()
    return std if keepdim else std.squeeze(dim)


def grpo_advantages(rewards: Tensor, group_size: int, scale: str = "group",
                    eps: float = 1e-4, *, nan_policy: str = "raise") -> Tensor:
    """GRPO advantages ``(B,)``: (r − group mean) / (std + ``eps``), TRL 1.16.0's formula.

    Args:
        rewards: ``(B,)`` rewards, groups of ``group_size`` consecutive completions.
        group_size: completions per prompt (TRL's ``num_generations``).
        scale: ``"group"`` (std of the group), ``"batch"`` (std of all B rewards) or ``"none"``.
        eps: added to the std (TRL's 1e-4); finite, ``>= 0``.
        nan_policy: ``"raise"`` (default): a NaN reward is a ``ValueError``; ``"omit"``: NaN
            rewards are unscorable completions, left out of the statistics, advantage 0.
            A ±inf reward is always an error.

    Example::

        >>> import torch
        >>> from optzoo.policy import grpo_advantages
        >>> grpo_advantages(torch.tensor([1.0, 0.0, 0.0, 0.0]), 4)
        tensor([ 1.4997, -0.4999, -0.4999, -0.4999])
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    if nan_policy not in NAN_POLICIES:
        raise ValueError(f"nan_policy must be one of {NAN_POLICIES}, got {nan_policy!r}")
    check_real("eps", eps, low=0.0)
    g = grouped(rewards, group_size, finite=False)
    if bool(torch.isinf(rewards).any()):
        raise ValueError("rewards: expected finite values, got ±inf")
    if nan_policy == "raise" and bool(torch.isnan(rewards).any()):
        raise ValueError("rewards: expected no NaN (pass nan_policy='omit' to treat NaN rewards "
                         "as unscorable completions with advantage 0)")
    mean = torch.nanmean(g, dim=1, keepdim=True)
    adv = g - mean
    if scale == "group":
        std = _nanstd(g, dim=1, keepdim=True) if group_size > 1 else torch.zeros_like(mean)
        adv = adv / (std + eps)
    elif scale == "batch":
        std = _nanstd(rewards) if rewards.numel() > 1 else rewards.new_zeros(())
        adv = adv / (std + eps)
    return torch.nan_to_num(adv.reshape(-1), nan=0.0)


def rloo_advantages(rewards: Tensor, group_size: int) -> Tensor:
    """REINFORCE-leave-one-out advantages (Kool et al. 2019; Ahmadian et al. 2024):
    A_i = r_i − (Σ_j r_j − r_i)/(K − 1) within each group of K = ``group_size`` ≥ 2."""
    g = grouped(rewards, group_size)
    if group_size < 2:
        raise ValueError(f"rloo_advantages needs group_size >= 2, got {group_size}")
    baseline = (g.sum(1, keepdim=True) - g) / (group_size - 1)
    return (g - baseline).reshape(-1)


def degenerate_group_fraction(rewards: Tensor, group_size: int) -> Tensor:
    """Fraction of groups whose rewards are all equal (zero advantage under GRPO): the
    "degenerate groups" of the SPO paper and TRL's ``frac_reward_zero_std``."""
    g = grouped(rewards, group_size)
    return (g.amax(1) == g.amin(1)).to(rewards.dtype).mean()
