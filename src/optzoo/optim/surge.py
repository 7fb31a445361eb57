"""SURGE learning-rate rule — Bu, "Globally Aware Optimization with Resurgence" (ICLR 2026,
OpenReview dhnyoea2Qj, arXiv 2509.01329), §3.1 "optimization phase", Eqs. 33–34.

Given a target set ``T`` of estimated critical values (from the analysis phase,
:mod:`optzoo.optim.resurgence`) and the current loss ``L_t``::

    ζ_t = max{ζ ∈ T : ζ < L_t}                      (nearest target BELOW the loss, Eq. 33)
    a_t = 1 + λ · min((L_t − ζ_t) / L_t, 1)          (Eq. 34)
    lr_t = a_t · lr_base                             (any base optimizer: SGD, Adam, AdamW, …)

and ``a_t = 1`` when no target lies below ``L_t`` (the paper's graceful fallback).

Framing.  The paper presents SURGE as a wrapper that *multiplies the base optimizer's learning
rate* by ``a_t``; the base update is untouched.  It is therefore implemented as a learning-rate
scheduler, :class:`SurgeLR`, driven by the loss the way ``torch.optim.lr_scheduler.
ReduceLROnPlateau`` is driven by a metric: call ``scheduler.step(loss)`` before
``optimizer.step()`` (the factor uses the loss at the current iterate ``θ_t``).  It is not a
:class:`torch.optim.Optimizer` and is not in the optimizer registry.

Deviations / readings: ``L_t`` is assumed positive (the paper's losses are MSE / cross-entropy);
for ``L_t ≤ 0`` the relative gap is undefined and ``a_t = 1`` is used.  The paper's value of ``λ``
was not retrieved (the brief suggests ``λ ∈ {0.5, 1, 2}``); the default is 1.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

import torch

from optzoo.optim.base import check_hyper

__all__ = ["SurgeLR", "surge_factor"]


def surge_factor(loss: float, targets: Iterable[float] | list[float], lam: float) -> float:
    """``a_t`` of Eq. 34 for the current ``loss`` (``targets`` need not be sorted)."""
    ts = sorted(float(t) for t in targets)
    return _factor(float(loss), ts, lam)


def _factor(loss: float, sorted_targets: list[float], lam: float) -> float:
    i = bisect.bisect_left(sorted_targets, loss)  # targets[:i] < loss
    if i == 0 or not loss > 0.0:
        return 1.0
    zeta = sorted_targets[i - 1]
    return 1.0 + lam * min((loss - zeta) / loss, 1.0)


class SurgeLR:
    """Scale every parameter group's learning rate by SURGE's ``a_t`` (Eqs. 33–34).

    Args:
        optimizer: the base optimizer (its groups' ``lr`` at construction are the base rates).
        targets: estimated critical values ``T`` (an empty set gives ``a_t = 1``).
        lam: amplification ``λ ≥ 0``; the rate is at most ``(1 + λ)·lr_base``.

    Example::

        sched = SurgeLR(torch.optim.SGD(model.parameters(), lr=0.1), targets=[0.02, 0.3])
        loss = loss_fn(model(x), y); loss.backward()
        sched.step(loss.item()); opt.step()
    """

    def __init__(self, optimizer: torch.optim.Optimizer, targets: Iterable[float],
                 lam: float = 1.0):
        self.optimizer = optimizer
        self.lam = check_hyper("lam", lam)
        self.targets = sorted(float(t) for t in targets)
        self.base_lrs = [float(g["lr"]) for g in optimizer.param_groups]
        self.last_factor = 1.0

    def step(self, loss: float | torch.Tensor) -> float:
        """Set ``lr = a_t · lr_base`` for the loss at the current iterate; returns ``a_t``."""
        value = float(loss.detach()) if isinstance(loss, torch.Tensor) else float(loss)
        a = _factor(value, self.targets, self.lam)
        for group, base in zip(self.optimizer.param_groups, self.base_lrs, strict=True):
            group["lr"] = a * base
        self.last_factor = a
        return a

    def state_dict(self) -> dict:
        return {"lam": self.lam, "targets": list(self.targets), "base_lrs": list(self.base_lrs),
                "last_factor": self.last_factor}

    def load_state_dict(self, state: dict) -> None:
        self.lam = float(state["lam"])
        self.targets = [float(t) for t in state["targets"]]
        self.base_lrs = [float(b) for b in state["base_lrs"]]
        self.last_factor = float(state["last_factor"])
