"""Fine-tuning on the retain set (FT): descend L_r only, relying on catastrophic forgetting of
D_f — a baseline of the OFMU paper (Asif & Amiri, ICLR 2026, OpenReview ZDuyNJI56H; Warnecke et
al. 2023, "Machine Unlearning of Features and Labels").  It is the forget-weight-0 end of
GradDiff's weighted sum, so it runs :func:`optzoo.unlearning.graddiff.graddiff`'s loop.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from optzoo.unlearning._loop import Callback, Loss, Monitor, UnlearningResult
from optzoo.unlearning.graddiff import graddiff

__all__ = ["finetune"]


def finetune(model: nn.Module, retain_loss: Loss, retain_data: Any, *, steps: int = 100,
             lr: float = 0.1, max_grad_norm: float | None = None,
             monitor: Monitor | None = None, monitor_every: int = 1,
             callback: Callback | None = None) -> UnlearningResult:
    """``steps`` descent steps on ``retain_loss`` (arguments as in
    :func:`optzoo.unlearning.graddiff.graddiff`)."""
    return graddiff(model, None, retain_loss, None, retain_data, forget_weight=0.0,
                    steps=steps, lr=lr, max_grad_norm=max_grad_norm, monitor=monitor,
                    monitor_every=monitor_every, callback=callback)
