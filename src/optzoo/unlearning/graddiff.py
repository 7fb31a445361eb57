"""GradDiff: unlearning by gradient descent on the weighted sum −L_f + λ L_r.

The scalarised baseline the OFMU paper (Asif & Amiri, ICLR 2026, OpenReview ZDuyNJI56H) argues
against: min_θ −L_f(θ) + λ L_r(θ) ("gradient difference"; Liu et al., "Continual Learning and
Private Unlearning", CoLLAs 2022; as in OpenUnlearning's ``GradDiff``).  Plain gradient steps,
full-batch or minibatch.  Gradient ascent (λ = 0) and fine-tuning on D_r (no forget term) are the
two ends of the same weighted sum; :mod:`gradient_ascent` and :mod:`finetune` call this loop.
"""

from __future__ import annotations

from typing import Any

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

__all__ = ["graddiff"]


def graddiff(model: nn.Module, forget_loss: Loss | None, retain_loss: Loss | None,
             forget_data: Any, retain_data: Any, *, retain_weight: float = 1.0,
             forget_weight: float = 1.0, steps: int = 100, lr: float = 0.1,
             max_grad_norm: float | None = None, monitor: Monitor | None = None,
             monitor_every: int = 1, callback: Callback | None = None) -> UnlearningResult:
    """Descend ``−forget_weight·L_f + retain_weight·L_r`` for ``steps`` gradient steps, in place.

    Args:
        model: any ``nn.Module``; updated in place.
        forget_loss, retain_loss: ``loss(model, batch) -> scalar`` (None when its weight is 0).
        forget_data, retain_data: one batch or an iterable of batches (cycled).
        retain_weight: λ ≥ 0 (0: gradient ascent).
        forget_weight: weight ≥ 0 of −L_f (0: fine-tuning on the retain set).
        steps: number of gradient steps.
        lr: step size η.
        max_grad_norm: rescale a longer update direction to this norm (None: never).
        monitor, monitor_every, callback: as in :func:`optzoo.unlearning.ofmu`.

    Returns:
        :class:`UnlearningResult` with ``forget_loss`` / ``retain_loss`` (before each step, when
        the term is used) and ``grad_norm`` per step.
    """
    check_steps(steps=steps)
    check_positive(lr=lr)
    check_nonnegative(retain_weight=retain_weight, forget_weight=forget_weight)
    if retain_weight == 0 and forget_weight == 0:
        raise ValueError("retain_weight, forget_weight: expected at least one > 0, got 0 and 0")
    if forget_weight > 0 and forget_loss is None:
        raise ValueError("forget_loss: required when forget_weight > 0")
    if retain_weight > 0 and retain_loss is None:
        raise ValueError("retain_loss: required when retain_weight > 0")
    if max_grad_norm is not None:
        check_positive(max_grad_norm=max_grad_norm)
    fb = batches(forget_data, "forget_data") if forget_weight > 0 else None
    rb = batches(retain_data, "retain_data") if retain_weight > 0 else None
    params = trainable(model)
    rec = Recorder(model, monitor, monitor_every, callback)
    for _ in range(steps):
        info: dict[str, Any] = {"phase": "step"}
        total: Any = 0.0
        if fb is not None:
            lf = forget_loss(model, next(fb))
            check_finite(lf.detach(), "forget_loss")
            info["forget_loss"] = float(lf.detach())
            total = total - forget_weight * lf
        if rb is not None:
            lr_ = retain_loss(model, next(rb))
            check_finite(lr_.detach(), "retain_loss")
            info["retain_loss"] = float(lr_.detach())
            total = total + retain_weight * lr_
        info["grad_norm"] = step(params, grads(total, params), lr, max_grad_norm)
        rec.update(**info)
    return rec.result
