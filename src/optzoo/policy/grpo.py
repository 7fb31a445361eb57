"""GRPO's clipped surrogate loss on per-token log-probs, with the aggregations TRL supports.

Group Relative Policy Optimization (Shao et al., "DeepSeekMath", 2024) as TRL 1.16.0's
``GRPOTrainer._compute_loss`` computes it; the briefs ``offpolicy-grpo`` (OpenReview
``XXfOf22o3K``), ``spo`` (``b61UW62K7W``) and ``gn-ivo`` (``eFXmrCun0c``) of ICLR 2026 use it as
their baseline, and SPO uses it as its policy loss.  The reference test
(``tests/policy/test_grpo_trl.py``) calls TRL's own ``_compute_loss`` on the same tensors.

Tensor conventions (TRL's): ``logp``, ``old_logp``, ``ref_logp`` are ``(B, T)`` per-token
log-probabilities of the sampled completion tokens under the current, the sampling ("old") and
the reference policy; ``mask`` ``(B, T)`` is 1 on completion tokens and 0 on padding;
``advantages`` is ``(B,)`` (one per completion) or ``(B, T)``.

Per token, with ``ρ = exp(logp − old_logp)`` (``importance_sampling_level="token"``) or the
length-normalised sequence ratio ``exp(mean_t(logp − old_logp))`` (``"sequence"``, GSPO):

    ℓ_t = −min(ρ·A, clip(ρ, 1 − ε_low, 1 + ε_high)·A) + β·KL_t,
    KL_t = exp(ref − logp) − (ref − logp) − 1            (Schulman's k3 estimator)

and, as in TRL 1.16's default ``use_bias_correction_kl=True``, ``KL_t`` is multiplied by ρ
(DeepSeek-V3.2's unbiased reverse-KL gradient).  ``delta`` caps ρ in the unclipped branch
(INTELLECT-2's two-sided clip).  Aggregation (``loss_type``):

* ``"grpo"``: mean over each sequence's tokens, then over the batch;
* ``"bnpo"``: sum over all tokens / number of active tokens of this batch;
* ``"dr_grpo"``: sum over all tokens / (B · ``max_completion_length``);
* ``"dapo"`` (TRL's default): sum over all tokens / ``num_items_in_batch``, the active tokens
  of the whole optimizer step's batch (default: this batch's).

Differences from TRL, each deliberate:

* The returned loss is not divided by the gradient-accumulation count (TRL does that inside
  ``_compute_loss`` for ``grpo``/``bnpo``/``dr_grpo``); the trainer divides.  For ``dapo`` pass
  the token count of the whole accumulated batch as ``num_items_in_batch``; the micro-batch
  losses then sum to the token mean, which is TRL's value when ``steps_per_generation`` equals
  ``gradient_accumulation_steps`` (its default) on one process.
* Masked positions are replaced by 0 before any arithmetic, so padding that holds ``-inf`` or
  NaN (a log-prob of an impossible pad token) cannot leak NaN into the loss or its gradient;
  TRL multiplies by the mask instead, which equals this on finite inputs.
* Log-ratios (the importance weight's and the KL's ``ref − logp``) are clamped to
  ``±MAX_LOG_RATIO`` = ±20 before ``exp``, so an extreme log-prob gives a large finite loss and
  a finite gradient instead of ``inf``/NaN; TRL does not clamp.  The two agree whenever every
  |log-ratio| ≤ 20 (ratios within e^±20 ≈ 4.9e8); beyond it the clamped branch has zero gradient.
* ``old_logp`` and ``ref_logp`` are detached (TRL computes them under ``no_grad``).

Not supported (TRL options outside the four aggregations): ``cispo``, ``sapo``, ``luspo``,
``vespo``, the entropy mask (``top_entropy_quantile``), the off-policy sequence mask, vLLM
importance-sampling correction, the entropy bonus.
"""

from __future__ import annotations

import torch
from torch import Tensor

from optzoo.checks import check_int, check_real

LOSS_TYPES = ("grpo", "bnpo", "dr_grpo", "dapo")
IMPORTANCE_SAMPLING_LEVELS = ("token", "sequence")
MAX_LOG_RATIO = 20.0

__all__ = [
    "IMPORTANCE_SAMPLING_LEVELS", "LOSS_TYPES", "MAX_LOG_RATIO", "aggregate_token_loss",
    "check_token_inputs", "grpo_loss", "k3_kl", "masked_mean",
]


def check_token_inputs(mask: Tensor, **tensors: Tensor | None) -> None:
    """Raise ``ValueError`` naming the argument unless ``mask`` is ``(B, T)`` and every other
    given tensor has its shape (``None`` entries are skipped)."""
    if not isinstance(mask, Tensor) or mask.dim() != 2:
        raise ValueError(f"mask must be a (B, T) tensor, got {getattr(mask, 'shape', type(mask))}")
    for name, t in tensors.items():
        if t is None:
            continue
        if not isinstance(t, Tensor):
            raise ValueError(f"{name} must be a tensor, got {type(t).__name__}")
        if t.shape != mask.shape:
            raise ValueError(
                f"{name} must have the shape of mask {tuple(mask.shape)}, got {tuple(t.shape)}")
        if not t.is_floating_point():
            raise ValueError(f"{name} must be a floating-point tensor, got {t.dtype}")


def masked_mean(x: Tensor, mask: Tensor) -> Tensor:
    """Mean of ``x`` over the active tokens of ``mask`` (0 when none); a ``(B, 1)`` ``x`` (one
    value per sequence) is averaged over sequences, as TRL's metrics do."""
    if x.dim() == 2 and x.shape[1] == 1 and mask.shape[1] != 1:
        return x.sum() / max(x.shape[0], 1)
    return (x * mask).sum() / mask.sum().clamp(min=1.0)


def k3_kl(logp: Tensor, ref_logp: Tensor) -> Tensor:
    """Per-token k3 estimator of KL(π ‖ π_ref) on tokens sampled from π:
    exp(ref − logp) − (ref − logp) − 1 ≥ 0, with the log-ratio clamped to ±``MAX_LOG_RATIO``."""
    d = (ref_logp - logp).clamp(-MAX_LOG_RATIO, MAX_LOG_RATIO)
    return torch.exp(d) - d - 1.0


def aggregate_token_loss(per_token_loss: Tensor, mask: Tensor, loss_type: str = "dapo", *,
                         max_completion_length: int | None = None,
                         num_items_in_batch: float | Tensor | None = None) -> Tensor:
    """Reduce a ``(B, T)`` (or ``(B, 1)``, broadcast over tokens) per-token loss to a scalar the
    way TRL's ``loss_type`` does (see the module docstring); ``mask`` is ``(B, T)`` float."""
    if loss_type not in LOSS_TYPES:
        raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {loss_type!r}")
    masked = per_token_loss * mask
    if loss_type == "grpo":
        return (masked.sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()
    if loss_type == "bnpo":
        return masked.sum() / mask.sum().clamp(min=1.0)
    if loss_type == "dr_grpo":
        length = mask.shape[1] if max_completion_length is None else max_completion_length
        check_int("max_completion_length", length, low=1)
        return masked.sum() / (per_token_loss.shape[0] * length)
    if num_items_in_batch is None:
        count = mask.sum()
    else:
        check_real("num_items_in_batch", num_items_in_batch, low=1.0)
        count = torch.as_tensor(num_items_in_batch, dtype=mask.dtype, device=mask.device)
    return masked.sum() / count.clamp(min=1.0)


def _advantages_2d(advantages: Tensor, mask: Tensor) -> Tensor:
    if not isinstance(advantages, Tensor) or not advantages.is_floating_point():
        raise ValueError("advantages must be a floating-point tensor")
    if advantages.dim() == 1 and advantages.shape[0] == mask.shape[0]:
        return advantages.unsqueeze(1)
    if advantages.shape == mask.shape:
        return advantages
    raise ValueError(f"advantages must be (B,) or (B, T) with (B, T) = {tuple(mask.shape)}, got "
                     f"{tuple(advantages.shape)}")


def grpo_loss(logp: Tensor, old_logp: Tensor | None, advantages: Tensor, mask: Tensor, *,
              ref_logp: Tensor | None = None, beta: float = 0.0, epsilon_low: float = 0.2,
              epsilon_high: float | None = None, loss_type: str = "dapo",
              importance_sampling_level: str = "token", delta: float | None = None,
              use_bias_correction_kl: bool = True, max_completion_length: int | None = None,
              num_items_in_batch: float | Tensor | None = None) -> tuple[Tensor, dict[str, Tensor]]:
    """GRPO loss (TRL 1.16.0's ``_compute_loss`` for ``loss_type`` in ``LOSS_TYPES``).

    Args:
        logp: ``(B, T)`` log-probs of the completion tokens under the trained policy (with grad).
        old_logp: ``(B, T)`` log-probs under the sampling policy; ``None`` means on-policy with a
            single update (TRL's ``num_iterations == 1``): ``logp.detach()``.
        advantages: ``(B,)`` or ``(B, T)``, e.g. :func:`optzoo.policy.grpo_advantages`.
        mask: ``(B, T)`` completion mask (bool, int or float 0/1).
        ref_logp: ``(B, T)`` reference log-probs; required when ``beta != 0``; when given with
            ``beta == 0`` the KL is still reported in the metrics.
        beta: KL coefficient (TRL default 0.0).
        epsilon_low, epsilon_high: clip range [1 − ε_low, 1 + ε_high]; ``epsilon_high=None``
            means ``epsilon_low`` (TRL's ``epsilon`` / ``epsilon_high``).
        loss_type: ``"grpo"``, ``"bnpo"``, ``"dr_grpo"`` or ``"dapo"``.
        importance_sampling_level: ``"token"`` or ``"sequence"`` (mean log-ratio per sequence).
        delta: optional upper cap (finite, ``>= 1``; TRL recommends ``> 1 + epsilon_high``) of
            the unclipped ratio (two-sided clipping).
        use_bias_correction_kl: multiply the per-token KL by the importance ratio (TRL 1.16
            default ``True``).
        max_completion_length: ``dr_grpo``'s constant (default ``T``).
        num_items_in_batch: ``dapo``'s token count, ``>= 1`` (default: active tokens of
            ``mask``).

    Returns:
        ``(loss, metrics)``: a scalar loss to minimise and detached scalar tensors ``kl`` (when
        ``ref_logp`` is given), ``clip_ratio/low_mean``, ``clip_ratio/high_mean``,
        ``clip_ratio/region_mean`` (fractions of active tokens, TRL's definitions).

    Example::

        >>> import torch
        >>> from optzoo.policy import grpo_advantages, grpo_loss
        >>> logp = torch.zeros(4, 3, requires_grad=True)
        >>> adv = grpo_advantages(torch.tensor([1.0, 0.0, 0.0, 1.0]), group_size=2)
        >>> loss, metrics = grpo_loss(logp, None, adv, torch.ones(4, 3), loss_type="grpo")
        >>> float(loss.detach()), sorted(metrics)
        (0.0, ['clip_ratio/high_mean', 'clip_ratio/low_mean', 'clip_ratio/region_mean'])
        >>> loss.backward()
        >>> logp.grad[:, 0]
        tensor([-0.0589,  0.0589,  0.0589, -0.0589])
    """
    check_token_inputs(mask, logp=logp, old_logp=old_logp, ref_logp=ref_logp)
    if importance_sampling_level not in IMPORTANCE_SAMPLING_LEVELS:
        raise ValueError(f"importance_sampling_level must be one of {IMPORTANCE_SAMPLING_LEVELS},"
                         f" got {importance_sampling_level!r}")
    if loss_type not in LOSS_TYPES:
        raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {loss_type!r}")
    eps_high = epsilon_low if epsilon_high is None else epsilon_high
    check_real("epsilon_low", epsilon_low, low=0.0, high=1.0, high_open=True)
    check_real("epsilon_high", eps_high, low=0.0)
    check_real("beta", beta, low=0.0)
    if delta is not None:
        check_real("delta", delta, low=1.0)
    if beta != 0.0 and ref_logp is None:
        raise ValueError("ref_logp is required when beta != 0")
    adv = _advantages_2d(advantages, mask)

    active = mask > 0
    m = mask.to(logp.dtype)
    zero = logp.new_zeros(())
    lp = torch.where(active, logp, zero)
    old = lp.detach() if old_logp is None else torch.where(active, old_logp.detach(), zero)
    log_ratio = lp - old
    if importance_sampling_level == "token":
        log_w = log_ratio
    else:
        log_w = ((log_ratio * m).sum(-1) / m.sum(-1).clamp(min=1.0)).unsqueeze(-1)
    coef_1 = torch.exp(log_w.clamp(-MAX_LOG_RATIO, MAX_LOG_RATIO))

    per_token_kl = None
    if ref_logp is not None:
        per_token_kl = k3_kl(lp, torch.where(active, ref_logp.detach(), zero))
        if use_bias_correction_kl:
            per_token_kl = per_token_kl * coef_1

    coef_2 = torch.clamp(coef_1, 1.0 - epsilon_low, 1.0 + eps_high)
    if delta is not None:
        coef_1 = torch.clamp(coef_1, max=delta)
    per_token_loss = -torch.min(coef_1 * adv, coef_2 * adv)
    if beta != 0.0:
        per_token_loss = per_token_loss + beta * per_token_kl
    loss = aggregate_token_loss(per_token_loss, m, loss_type,
                                max_completion_length=max_completion_length,
                                num_items_in_batch=num_items_in_batch)

    with torch.no_grad():
        low = ((coef_1 < 1.0 - epsilon_low) & (adv < 0)).to(logp.dtype)
        high = ((coef_1 > 1.0 + eps_high) & (adv > 0)).to(logp.dtype)
        metrics = {
            "clip_ratio/low_mean": masked_mean(low, m),
            "clip_ratio/high_mean": masked_mean(high, m),
            "clip_ratio/region_mean": masked_mean(torch.maximum(low, high), m),
        }
        if per_token_kl is not None:
            metrics["kl"] = masked_mean(per_token_kl, m)
    return loss, metrics
