"""NPO: Negative Preference Optimization for unlearning (Zhang, Lin, Bai & Mei, "Negative
Preference Optimization: From Catastrophic Collapse to Effective Unlearning", COLM 2024,
arXiv 2404.05868) — a baseline of the OFMU paper (Asif & Amiri, ICLR 2026, OpenReview
ZDuyNJI56H).

Loss on the forget set (Zhang et al., Eq. 3), with ``π_ref`` the model before unlearning::

    L_NPO(θ) = −(2/β) E_{D_f} log σ(−β log(π_θ(y|x) / π_ref(y|x)))

It is bounded below by 0 in the log-ratio and its gradient is the GA gradient reweighted by
``2 π_θ^β / (π_θ^β + π_ref^β)``, which vanishes as the example is forgotten (no collapse).
``retain_weight > 0`` adds λ L_r (Zhang et al.'s NPO+RT).  ``log π`` is the label's log-probability
for a classifier and the whole sequence's for a causal LM
(:func:`optzoo.unlearning.losses.sequence_logprob`); the reference model is a frozen copy taken
at the start, evaluated on the same batch.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from optzoo.unlearning._loop import (
    Callback,
    Loss,
    Monitor,
    Recorder,
    UnlearningResult,
    batches,
    check_finite,
    check_nonnegative,
    check_positive,
    check_steps,
    grads,
    step,
    trainable,
)
from optzoo.unlearning.losses import sequence_logprob

__all__ = ["npo", "npo_loss"]


def npo_loss(logp: torch.Tensor, logp_ref: torch.Tensor, beta: float = 0.1) -> torch.Tensor:
    """``−(2/β) mean log σ(−β (logp − logp_ref))`` (Zhang et al. 2024, Eq. 3).

    Args:
        logp: ``log π_θ(y|x)`` per example, shape ``(B,)``.
        logp_ref: ``log π_ref(y|x)``, same shape (treated as a constant).
        beta: inverse temperature β > 0.

    Example:
        >>> import torch
        >>> from optzoo.unlearning import npo_loss
        >>> logp_ref = torch.tensor([-1.0, -2.0])  # forget-set log-probs under π_ref
        >>> round(float(npo_loss(logp_ref.clone(), logp_ref)), 4)  # (2/β) log 2 at θ = θ_ref
        13.8629
        >>> logp = (logp_ref - 1.0).requires_grad_()  # after some unlearning
        >>> loss = npo_loss(logp, logp_ref)
        >>> loss.backward()
        >>> bool(loss < 13.8629), bool((logp.grad > 0).all())  # still pushes logp down
        (True, True)
    """
    check_positive(beta=beta)
    for name, t in (("logp", logp), ("logp_ref", logp_ref)):
        if not isinstance(t, torch.Tensor) or not t.is_floating_point():
            raise TypeError(f"{name}: expected a floating-point tensor, got "
                            f"{getattr(t, 'dtype', type(t).__name__)}")
    if logp.shape != logp_ref.shape or logp.dim() != 1:
        raise ValueError(f"logp, logp_ref: expected equal shapes (B,), got {tuple(logp.shape)} "
                         f"and {tuple(logp_ref.shape)}")
    # log σ(z) by logsigmoid: finite for any log-ratio (σ(z) underflows for z ≪ 0)
    return -(2.0 / beta) * F.logsigmoid(-beta * (logp - logp_ref.detach())).mean()


def npo(model: nn.Module, forget_data: Any, *, beta: float = 0.1, steps: int = 100,
        lr: float = 0.1, logprob: Callable[[nn.Module, Any], torch.Tensor] = sequence_logprob,
        retain_loss: Loss | None = None, retain_data: Any = None, retain_weight: float = 0.0,
        reference: nn.Module | None = None, max_grad_norm: float | None = None,
        monitor: Monitor | None = None, monitor_every: int = 1,
        callback: Callback | None = None) -> UnlearningResult:
    """Minimise ``L_NPO + retain_weight · L_r`` by ``steps`` gradient steps, in place.

    Args:
        model: any ``nn.Module``; updated in place.
        forget_data: one batch or an iterable of batches (cycled).
        beta: NPO's β > 0.
        steps, lr: number and size of the gradient steps.
        logprob: ``logprob(model, batch) -> (B,)`` log-likelihoods (default: label / sequence).
        retain_loss, retain_data, retain_weight: optional retain term λ L_r (NPO+RT).
        reference: π_ref (default: a frozen copy of ``model`` taken now).
        max_grad_norm, monitor, monitor_every, callback: as in :func:`optzoo.unlearning.ofmu`.
    """
    check_steps(steps=steps)
    check_positive(lr=lr, beta=beta)
    check_nonnegative(retain_weight=retain_weight)
    if retain_weight > 0 and retain_loss is None:
        raise ValueError("retain_loss: required when retain_weight > 0")
    ref = copy.deepcopy(model) if reference is None else reference
    ref.eval()
    for p in ref.parameters():
        p.requires_grad_(False)
    fb = batches(forget_data, "forget_data")
    rb = batches(retain_data, "retain_data") if retain_weight > 0 else None
    params = trainable(model)
    rec = Recorder(model, monitor, monitor_every, callback)
    for _ in range(steps):
        b = next(fb)
        with torch.no_grad():
            lp_ref = logprob(ref, b)
        loss = npo_loss(logprob(model, b), lp_ref, beta)
        check_finite(loss.detach(), "NPO loss")
        info: dict[str, Any] = {"phase": "step", "npo_loss": float(loss.detach())}
        if rb is not None:
            lr_ = retain_loss(model, next(rb))
            check_finite(lr_.detach(), "retain_loss")
            info["retain_loss"] = float(lr_.detach())
            loss = loss + retain_weight * lr_
        info["grad_norm"] = step(params, grads(loss, params), lr, max_grad_norm)
        rec.update(**info)
    return rec.result
