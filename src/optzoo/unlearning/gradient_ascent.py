"""Gradient ascent (GA): unlearning by raising the forget loss alone, θ ← θ + η ∇L_f.

The simplest baseline of the OFMU paper (Asif & Amiri, ICLR 2026, OpenReview ZDuyNJI56H)
(Golatkar et al. 2020; Thudi et al. 2022; OpenUnlearning's ``GradAscent``).  It is GradDiff
with λ = 0, so it runs :func:`optzoo.unlearning.graddiff.graddiff`'s loop.  Bound the forget loss
(:func:`optzoo.unlearning.losses.capped`): ascent on raw cross-entropy diverges.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from optzoo.unlearning._loop import Callback, Loss, Monitor, UnlearningResult
from optzoo.unlearning.graddiff import graddiff

__all__ = ["gradient_ascent"]


def gradient_ascent(model: nn.Module, forget_loss: Loss, forget_data: Any, *, steps: int = 100,
                    lr: float = 0.1, max_grad_norm: float | None = None,
                    monitor: Monitor | None = None, monitor_every: int = 1,
                    callback: Callback | None = None) -> UnlearningResult:
    """``steps`` ascent steps on ``forget_loss`` (arguments as in
    :func:`optzoo.unlearning.graddiff.graddiff`)."""
    return graddiff(model, forget_loss, None, forget_data, None, retain_weight=0.0,
                    steps=steps, lr=lr, max_grad_norm=max_grad_norm, monitor=monitor,
                    monitor_every=monitor_every, callback=callback)
