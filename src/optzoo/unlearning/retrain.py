"""Retraining from scratch on the retain set: the gold standard ("exact unlearning") every
approximate unlearning method is measured against in the OFMU paper (Asif & Amiri, ICLR 2026,
OpenReview ZDuyNJI56H).  A plain Adam training loop from a fresh initialisation; the same loop
trains the original model on D_f ∪ D_r in the reproduction, so both share one recipe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
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
)

__all__ = ["retrain"]


def retrain(make_model: Callable[[], nn.Module], loss: Loss, retain_data: Any, *,
            steps: int = 1000, lr: float = 1e-3, weight_decay: float = 0.0, seed: int = 0,
            monitor: Monitor | None = None, monitor_every: int = 1,
            callback: Callback | None = None) -> UnlearningResult:
    """Train ``make_model()`` (initialised under ``torch.manual_seed(seed)``) by Adam.

    Args:
        make_model: builds a freshly initialised model.
        loss: ``loss(model, batch) -> scalar``.
        retain_data: one batch or an iterable of batches (cycled).
        steps, lr, weight_decay: Adam steps, step size and (L2) weight decay.
        seed: seed of the initialisation.
        monitor, monitor_every, callback: as in :func:`optzoo.unlearning.ofmu`.
    """
    check_steps(steps=steps)
    check_positive(lr=lr)
    check_nonnegative(weight_decay=weight_decay)
    torch.manual_seed(seed)
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    data = batches(retain_data, "retain_data")
    rec = Recorder(model, monitor, monitor_every, callback)
    model.train()
    for _ in range(steps):
        opt.zero_grad()
        value = loss(model, next(data))
        check_finite(value.detach(), "loss")
        value.backward()
        opt.step()
        rec.update(phase="train", retain_loss=float(value.detach()))
    model.eval()
    return rec.result
