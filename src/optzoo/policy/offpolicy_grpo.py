"""Off-policy GRPO: Mroueh, Dupuis, Belgodere, Nitsure, Rigotti, Greenewald, Navratil, Ross &
Rios, "Revisiting Group Relative Policy Optimization: Insights into On-Policy and Off-Policy
Training" (ICLR 2026 poster, OpenReview ``XXfOf22o3K``, arXiv 2505.22257).  No official code
(the experiments modify TRL's GRPO inside Open-R1).

Notation: π_k the policy at the start of training step k, α the sampler (the inference
server's weights, synchronised every ``v`` steps, so α = π_{k−lag} with lag ∈ {0..v−1}),
π_ref the KL reference.  Rewards r ∈ [0, 1].

* Whitened off-policy advantage (paper): A_α(x, y) = (r − μ_α(x)) / sqrt(σ_α²(x) + ε), μ, σ² of
  the G rewards of the group actually drawn from α (:func:`whitened_advantages`).
* Clipped objective (paper, from a TV trust region via Pinsker):
  f_ε(ρ, c, A) = min(ρ·A, clip(ρ, max(c − ε, 0), c + ε)·A) with ρ = π/α and c = π_k/α: the clip
  window is centred on how far π_k already is from the sampler, not on 1.  With α = π_k it is
  GRPO's clip (the test checks equality with :func:`optzoo.policy.grpo_loss` and TRL).
* Full objective: maximise E_x 1[σ_α(x) ≠ 0]·(E_{y~α} f_ε − β·KL(π ‖ π_ref))
  (:func:`offpolicy_grpo_loss`, :func:`zero_variance_mask`).
* Algorithm 1's two knobs: ``v`` = sync period of the sampler, ``i`` = SGD steps per sampled
  batch (:class:`OffPolicySchedule`).  (v=1, i=1) on-policy GRPO; (v=1, i>1) sample reuse
  (Shao et al.); (v>1, i=1) the paper's off-policy GRPO.
* Theorem 1's improvement bound, computed exactly on a discrete response set:
  :func:`improvement_bound`.

Readings where the paper material available here is silent (the brief's *inferred* steps; the
arXiv full text beyond the introduction, the official code and the sequence/token choice of the
experiments could not be read):

* Ratio level. The theory is written with sequence probabilities; TRL, which the experiments
  modify, uses per-token ratios.  Default ``importance_sampling_level="token"``:
  ρ_t = exp(logp_θ − logp_α), c_t = exp(logp_{π_k} − logp_α) per token.  ``"sequence_sum"`` is the
  theorem's form (ratios of the summed log-probs of the response); ``"sequence"`` is TRL's
  length-normalised (GSPO) sequence ratio, kept so that v = 1 matches TRL at that level too.
* c is computed from π_k at the START of step k and detached: the caller passes
  ``anchor_logp`` (scored once per training step, before the ``i`` inner updates) and
  ``sampler_logp`` (the server snapshot's log-probs of the sampled tokens, NOT the trainer's
  log-probs at generation time, which would be π_k's and would remove the π/α correction).
* Zero-variance indicator.  The paper writes it with π_k's reward std; the only group at hand is
  drawn from α, so the mask uses that group's rewards: a group is masked when all its rewards are
  equal.  The indicator multiplies each masked prompt's whole per-token loss (policy term AND KL
  term, as in E_x 1[σ≠0](…)) and the aggregation's normaliser is left unchanged (masked
  prompts still count in the expectation over x).  Since a zero-variance group's whitened
  advantages are already 0, the mask's only effect on the gradient is then to drop those
  prompts' KL.  ``renormalize_mask=True`` is the other reading, the one DAPO's dynamic sampling
  and TRL's token aggregations imply: the masked prompts leave the normaliser as well, so the
  kept prompts' policy gradient is scaled up by (all / kept) — a mask that acts even at β = 0.
* ε in σ_ε (a variance floor) is not given in the material read; default 1e-4.  Variances are
  Bessel-corrected (the estimator of the TRL code the paper modifies); both are arguments.
* KL: TRL's k3 estimator on the sampled tokens, without the importance correction by default
  (the TRL the paper modified had none); ``use_bias_correction_kl=True`` multiplies it by ρ.
* An asymmetric window [max(c − ε_low, 0), c + ε_high] is allowed (``epsilon_high``); the paper
  has one ε.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from optzoo.checks import check_real
from optzoo.policy.advantages import grouped
from optzoo.policy.grpo import (
    LOSS_TYPES,
    MAX_LOG_RATIO,
    aggregate_token_loss,
    check_token_inputs,
    k3_kl,
    masked_mean,
)

RATIO_LEVELS = ("token", "sequence", "sequence_sum")

__all__ = [
    "RATIO_LEVELS", "OffPolicySchedule", "improvement_bound", "offpolicy_grpo_loss",
    "whitened_advantages", "zero_variance_mask",
]


def whitened_advantages(rewards: Tensor, group_size: int, eps: float = 1e-4,
                        unbiased: bool = True) -> Tensor:
    """The paper's A_α = (r − μ) / sqrt(σ² + ``eps``) per group of ``group_size`` consecutive
    rewards drawn from the sampler α; ``unbiased`` selects the Bessel-corrected variance."""
    check_real("eps", eps, low=0.0, low_open=True)  # the variance floor of sigma_eps
    g = grouped(rewards, group_size)
    if unbiased and group_size < 2:
        raise ValueError("unbiased variance needs group_size >= 2")
    mean = g.mean(1, keepdim=True)
    var = g.var(1, keepdim=True, correction=1 if unbiased else 0)
    return ((g - mean) / torch.sqrt(var + eps)).reshape(-1)


def zero_variance_mask(rewards: Tensor, group_size: int) -> Tensor:
    """``(B,)`` indicator 1[σ(x) ≠ 0] of the group of each completion: 0 where all rewards of the
    group are equal (all-correct or all-wrong prompts), else 1."""
    g = grouped(rewards, group_size)
    keep = (g.amax(1) != g.amin(1)).to(rewards.dtype)
    return keep.repeat_interleave(group_size)


def offpolicy_grpo_loss(logp: Tensor, sampler_logp: Tensor, anchor_logp: Tensor,
                        advantages: Tensor, mask: Tensor, *, group_mask: Tensor | None = None,
                        ref_logp: Tensor | None = None, beta: float = 0.0, epsilon: float = 0.2,
                        epsilon_high: float | None = None, loss_type: str = "grpo",
                        importance_sampling_level: str = "token",
                        use_bias_correction_kl: bool = False,
                        max_completion_length: int | None = None,
                        num_items_in_batch: float | Tensor | None = None,
                        renormalize_mask: bool = False,
                        ) -> tuple[Tensor, dict[str, Tensor]]:
    """The paper's clipped off-policy GRPO loss (to minimise).

    Args:
        logp: ``(B, T)`` log-probs of the sampled tokens under the trained policy π (with grad).
        sampler_logp: ``(B, T)`` log-probs under the sampler α that generated them.
        anchor_logp: ``(B, T)`` log-probs under π_k, the policy at the start of this training
            step (fixed during its inner steps).  ``anchor_logp == sampler_logp`` gives GRPO.
        advantages: ``(B,)`` (e.g. :func:`whitened_advantages`) or ``(B, T)``.
        mask: ``(B, T)`` completion mask.
        group_mask: optional ``(B,)`` indicator (:func:`zero_variance_mask`) multiplying each
            completion's per-token loss, KL included.
        ref_logp, beta: k3 KL to π_ref and its coefficient.
        epsilon, epsilon_high: window [max(c − ε, 0), c + ε_high]; ``None`` means ε.
        loss_type: aggregation, as :func:`optzoo.policy.grpo_loss` (default ``"grpo"``: the mean
            over responses of the per-response mean, E_x E_y of the objective).
        importance_sampling_level: ``"token"``, ``"sequence"`` (mean log-ratio) or
            ``"sequence_sum"`` (summed log-ratio: π(y|x)/α(y|x)).
        use_bias_correction_kl: multiply the per-token KL by ρ.
        max_completion_length, num_items_in_batch: as :func:`optzoo.policy.grpo_loss`.
        renormalize_mask: aggregate over the kept completions only (the masked ones leave the
            normaliser too: ``"grpo"`` averages over the kept responses, ``"bnpo"`` / ``"dapo"``
            over their tokens, ``"dr_grpo"`` over kept responses × length), as DAPO's dynamic
            sampling and TRL's token-level aggregations do when degenerate groups are dropped;
            ``False`` (default, the paper's E_x 1[σ ≠ 0](…)): masked prompts still count.  With
            ``"dapo"`` and ``num_items_in_batch`` the caller's count is used as given.  A batch
            with every group masked gives a zero loss (with a graph).

    Returns:
        ``(loss, metrics)`` with detached scalars ``clip_ratio/low_mean``,
        ``clip_ratio/high_mean``, ``clip_ratio/region_mean`` (where the clipped branch binds),
        ``kl`` (when ``ref_logp`` is given), ``max_abs_log_ratio`` (|log ρ| over active tokens),
        ``anchor_shift`` (mean |log c|: how far π_k is from α) and ``masked_fraction``.

    Example:
        >>> import torch
        >>> from optzoo.policy import offpolicy_grpo_loss, whitened_advantages, zero_variance_mask
        >>> logp = (-torch.rand(4, 5, generator=torch.Generator().manual_seed(0))).requires_grad_()
        >>> rewards = torch.tensor([1.0, 0.0, 1.0, 1.0])  # 2 prompts x 2 completions
        >>> adv = whitened_advantages(rewards, group_size=2)
        >>> keep = zero_variance_mask(rewards, group_size=2)  # drops the all-correct prompt
        >>> sampler = logp.detach() - 0.1  # a stale sampler α; π_k is the current policy
        >>> loss, metrics = offpolicy_grpo_loss(logp, sampler, logp.detach(), adv,
        ...                                     torch.ones(4, 5), group_mask=keep)
        >>> loss.backward()
        >>> keep, round(metrics["anchor_shift"].item(), 2), float(metrics["masked_fraction"])
        (tensor([1., 1., 0., 0.]), 0.1, 0.5)
    """
    check_token_inputs(mask, logp=logp, sampler_logp=sampler_logp, anchor_logp=anchor_logp,
                       ref_logp=ref_logp)
    if importance_sampling_level not in RATIO_LEVELS:
        raise ValueError(f"importance_sampling_level must be one of {RATIO_LEVELS}, got "
                         f"{importance_sampling_level!r}")
    if loss_type not in LOSS_TYPES:
        raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {loss_type!r}")
    eps_high = epsilon if epsilon_high is None else epsilon_high
    if epsilon < 0.0 or eps_high < 0.0:
        raise ValueError(f"epsilon and epsilon_high must be >= 0, got {epsilon}, {epsilon_high}")
    if beta < 0.0:
        raise ValueError(f"beta must be >= 0, got {beta}")
    if beta != 0.0 and ref_logp is None:
        raise ValueError("ref_logp is required when beta != 0")
    if advantages.dim() == 1 and advantages.shape[0] == mask.shape[0]:
        adv = advantages.unsqueeze(1)
    elif advantages.shape == mask.shape:
        adv = advantages
    else:
        raise ValueError(f"advantages must be (B,) or (B, T) with (B, T) = {tuple(mask.shape)}, "
                         f"got {tuple(advantages.shape)}")
    if group_mask is not None and group_mask.shape != (mask.shape[0],):
        raise ValueError(f"group_mask must be ({mask.shape[0]},), got {tuple(group_mask.shape)}")

    active = mask > 0
    m = mask.to(logp.dtype)
    zero = logp.new_zeros(())
    lp = torch.where(active, logp, zero)
    lp_alpha = torch.where(active, sampler_logp.detach(), zero)
    lp_anchor = torch.where(active, anchor_logp.detach(), zero)

    def level(log_ratio: Tensor) -> Tensor:
        if importance_sampling_level == "token":
            return log_ratio
        total = (log_ratio * m).sum(-1, keepdim=True)
        if importance_sampling_level == "sequence_sum":
            return total
        return total / m.sum(-1, keepdim=True).clamp(min=1.0)

    log_rho = level(lp - lp_alpha).clamp(-MAX_LOG_RATIO, MAX_LOG_RATIO)
    log_c = level(lp_anchor - lp_alpha).clamp(-MAX_LOG_RATIO, MAX_LOG_RATIO)
    rho = torch.exp(log_rho)
    centre = torch.exp(log_c)
    lower = (centre - epsilon).clamp(min=0.0)
    upper = centre + eps_high
    clipped = torch.minimum(torch.maximum(rho, lower), upper)
    per_token_loss = -torch.min(rho * adv, clipped * adv)

    per_token_kl = None
    if ref_logp is not None:
        per_token_kl = k3_kl(lp, torch.where(active, ref_logp.detach(), zero))
        if use_bias_correction_kl:
            per_token_kl = per_token_kl * rho
    if beta != 0.0:
        per_token_loss = per_token_loss + beta * per_token_kl
    if group_mask is not None:
        per_token_loss = per_token_loss * group_mask.to(logp.dtype).unsqueeze(1)
    if group_mask is not None and renormalize_mask:
        keep = group_mask > 0
        if not keep.any():
            loss = (per_token_loss * m).sum() * 0.0
        else:
            loss = aggregate_token_loss(per_token_loss[keep], m[keep], loss_type,
                                        max_completion_length=max_completion_length or m.shape[1],
                                        num_items_in_batch=num_items_in_batch)
    else:
        loss = aggregate_token_loss(per_token_loss, m, loss_type,
                                    max_completion_length=max_completion_length,
                                    num_items_in_batch=num_items_in_batch)

    with torch.no_grad():
        low = ((rho < lower) & (adv < 0)).to(logp.dtype)
        high = ((rho > upper) & (adv > 0)).to(logp.dtype)
        abs_log_rho = (lp - lp_alpha).abs()  # 0 on padding, which was replaced by 0 above
        metrics = {
            "clip_ratio/low_mean": masked_mean(low, m),
            "clip_ratio/high_mean": masked_mean(high, m),
            "clip_ratio/region_mean": masked_mean(torch.maximum(low, high), m),
            "max_abs_log_ratio": abs_log_rho.amax() if abs_log_rho.numel() else zero.detach(),
            "anchor_shift": masked_mean((lp_anchor - lp_alpha).abs(), m),
            "masked_fraction": (1.0 - group_mask.to(logp.dtype).mean()) if group_mask is not None
            else zero.detach(),
        }
        if per_token_kl is not None:
            metrics["kl"] = masked_mean(per_token_kl, m)
    return loss, metrics


@dataclass(frozen=True)
class OffPolicySchedule:
    """Algorithm 1's loop knobs.

    Args:
        sync_period: ``v``, training steps between copies of the trained weights to the sampler
            (the server is synced at the start of steps 0, v, 2v, …).
        inner_steps: ``i``, SGD steps on each sampled batch.
        ref_refresh_period: training steps between refreshes π_ref ← π_θ (the paper's outer loop;
            its period is not given in the material read), ``None`` for a fixed reference.

    Example:
        >>> from optzoo.policy import OffPolicySchedule
        >>> schedule = OffPolicySchedule(sync_period=4, inner_steps=2)
        >>> [schedule.syncs_sampler(step) for step in range(6)]
        [True, False, False, False, True, False]
        >>> [schedule.lag(step) for step in range(6)], schedule.syncs_until(10)
        ([0, 1, 2, 3, 0, 1], 3)
    """

    sync_period: int = 1
    inner_steps: int = 1
    ref_refresh_period: int | None = None

    def __post_init__(self) -> None:
        for name in ("sync_period", "inner_steps"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        r = self.ref_refresh_period
        if r is not None and (not isinstance(r, int) or r < 1):
            raise ValueError(f"ref_refresh_period must be None or an int >= 1, got {r!r}")

    def syncs_sampler(self, step: int) -> bool:
        """Whether the sampler gets the trained weights at the start of training step ``step``."""
        return step % self.sync_period == 0

    def refreshes_reference(self, step: int) -> bool:
        """Whether π_ref ← π_θ at the start of training step ``step`` (> 0)."""
        return (self.ref_refresh_period is not None and step > 0
                and step % self.ref_refresh_period == 0)

    def lag(self, step: int) -> int:
        """Training steps by which the sampler trails π_k at step ``step`` (0 … v − 1)."""
        return step % self.sync_period

    def syncs_until(self, steps: int) -> int:
        """Number of sampler syncs in training steps 0 … ``steps`` − 1."""
        return -(-steps // self.sync_period)


def improvement_bound(pi: np.ndarray, pi_k: np.ndarray, alpha: np.ndarray, rewards: np.ndarray,
                      eps: float = 0.0) -> tuple[float, float]:
    """Theorem 1 on one prompt with a finite response set, computed exactly.

    Returns ``(J(π) − J(π_k), bound)`` with
    bound = L_α(π) − 2·(1 − σ_ε)/σ_ε·TV(π, α) − 2·TV(π_k, α), L_α(π) = E_α[π/α · A_α],
    A_α = (r − μ_α)/σ_ε, σ_ε = sqrt(Var_α r + ε) and TV = ½‖·‖₁.  The theorem asserts
    gap ≥ bound when rewards lie in [0, 1] and σ_ε ≤ 1."""
    pi, pi_k, alpha, r = (np.asarray(a, dtype=np.float64) for a in (pi, pi_k, alpha, rewards))
    for name, p in (("pi", pi), ("pi_k", pi_k), ("alpha", alpha)):
        if p.shape != r.shape or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
            raise ValueError(f"{name} must be a probability vector of the shape of rewards")
    if np.any(alpha <= 0):
        raise ValueError("alpha must give every response positive probability")
    mu = float(alpha @ r)
    sigma = float(np.sqrt(alpha @ (r - mu) ** 2 + eps))
    if sigma <= 0.0:
        raise ValueError("sigma_eps is 0: give eps > 0 or rewards that vary under alpha")
    adv = (r - mu) / sigma
    surrogate = float(alpha @ (pi / alpha * adv))
    tv = 0.5 * float(np.abs(pi - alpha).sum())
    tv_k = 0.5 * float(np.abs(pi_k - alpha).sum())
    gap = float(pi @ r - pi_k @ r)
    return gap, surrogate - 2.0 * (1.0 - sigma) / sigma * tv - 2.0 * tv_k
