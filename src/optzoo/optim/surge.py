"""SURGE learning-rate rule — Bu, "Globally Aware Optimization with Resurgence" (ICLR 2026,
OpenReview dhnyoea2Qj, arXiv 2509.01329), §3.1 "optimization phase", Eqs. 33–34.

Given a target set ``T`` of estimated critical values (from the analysis phase,
:mod:`optzoo.optim.resurgence`; for a network :func:`~optzoo.optim.resurgence.module_targets`)
and the current loss ``L_t``::

    ζ_t = max{ζ ∈ T : ζ < L_t}                      (nearest target BELOW the loss, Eq. 33)
    a_t = 1 + λ · min((L_t − ζ_t) / L_t, 1)          (Eq. 34)
    lr_t = a_t · lr_base                             (any base optimizer: SGD, Adam, AdamW, …)

and ``a_t = 1`` when no target lies below ``L_t`` (the paper's graceful fallback).

Framing.  The paper presents SURGE as a wrapper that *multiplies the base optimizer's learning
rate* by ``a_t``; the base update is untouched.  It is therefore implemented as a learning-rate
scheduler, :class:`SurgeLR`, a :class:`torch.optim.lr_scheduler.LRScheduler` driven by the loss
the way ``ReduceLROnPlateau`` is driven by a metric: call ``scheduler.step(loss)`` *before*
``optimizer.step()`` (the factor uses the loss at the current iterate ``θ_t``).  It is not a
:class:`torch.optim.Optimizer` and is not in the optimizer registry.

Composition.  ``lr_base`` is not a rate frozen at construction: it is whatever the optimizer's
``lr`` is apart from SURGE's own factor.  When another scheduler (or the user) has changed a
group's ``lr`` since SURGE last wrote it, SURGE divides out its previous factor and applies the
new one, so chained with a multiplicative schedule (``CosineAnnealingLR`` with ``eta_min = 0``,
``ExponentialLR``, ``LinearLR`` warm-up, …) the rate is the product ``schedule_t · a_t`` — inside
``ChainedScheduler`` and ``SequentialLR`` too (at the milestone that hands over to SURGE,
``SequentialLR`` restarts from the base rates, as with every torch scheduler).  Those call
``step()`` without a loss (which keeps ``a_t``); give them the loss with
:meth:`SurgeLR.observe` before ``optimizer.step()``.
Alone, the rate is computed as ``a_t · lr_base`` from the stored ``lr_base`` (no drift over
steps).

Deviations / readings: ``L_t`` is assumed positive (the paper's losses are MSE / cross-entropy);
for ``L_t ≤ 0`` the relative gap is undefined and ``a_t = 1`` is used.  The paper's value of ``λ``
was not retrieved (the brief suggests ``λ ∈ {0.5, 1, 2}``); the default is 1.

References:
    W. Bu. Globally Aware Optimization with Resurgence. ICLR 2026. arXiv 2509.01329.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable

import torch
from torch.optim.lr_scheduler import LRScheduler

from optzoo.optim.base import check_hyper

__all__ = ["SurgeLR", "surge_factor"]


def surge_factor(loss: float, targets: Iterable[float] | list[float], lam: float) -> float:
    """``a_t`` of Eq. 34 for the current ``loss`` (``targets`` need not be sorted).

    Example::

        >>> from optzoo.optim.surge import surge_factor
        >>> surge_factor(1.0, [0.1, 0.5, 2.0], lam=1.0)  # ζ = 0.5: 1 + (1 − 0.5)/1
        1.5
    """
    ts = sorted(float(t) for t in targets)
    return _factor(float(loss), ts, lam)


def _factor(loss: float, sorted_targets: list[float], lam: float) -> float:
    i = bisect.bisect_left(sorted_targets, loss)  # targets[:i] < loss
    if i == 0 or not loss > 0.0:
        return 1.0
    zeta = sorted_targets[i - 1]
    return 1.0 + lam * min((loss - zeta) / loss, 1.0)


def _loss_value(loss: float | torch.Tensor) -> float:
    if isinstance(loss, torch.Tensor):
        if loss.numel() != 1:
            raise ValueError(f"loss: expected a scalar, got a tensor of shape {tuple(loss.shape)}")
        return float(loss.detach())
    if not isinstance(loss, str | bytes | bool):
        try:
            return float(loss)  # a float, an int, a NumPy scalar
        except (TypeError, ValueError):
            pass
    raise TypeError(f"loss: expected a float or a scalar tensor, got {type(loss).__name__}")


class SurgeLR(LRScheduler):
    """Scale every parameter group's learning rate by SURGE's ``a_t`` (Eqs. 33–34).

    A :class:`torch.optim.lr_scheduler.LRScheduler` (``get_last_lr``, ``last_epoch``,
    ``state_dict`` / ``load_state_dict``) that composes with other schedulers (module docstring).

    Args:
        optimizer: the base optimizer; its groups' current ``lr`` are the starting base rates.
        targets: estimated critical values ``T`` (an empty set gives ``a_t = 1``).
        lam: amplification ``λ ≥ 0``; the rate is at most ``(1 + λ)·lr_base``.
        last_epoch: as in every torch scheduler (``-1``: a fresh start).

    Attributes:
        last_factor: the current ``a_t``.
        last_loss: the loss it was computed from (``None`` before the first one).

    Example::

        >>> import torch
        >>> from optzoo.optim import SurgeLR
        >>> model = torch.nn.Linear(2, 1)
        >>> x, y = torch.randn(8, 2), torch.randn(8, 1)
        >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> sched = SurgeLR(opt, targets=[0.02, 0.3], lam=1.0)
        >>> for _ in range(3):
        ...     opt.zero_grad()
        ...     loss = torch.nn.functional.mse_loss(model(x), y)
        ...     loss.backward()
        ...     a = sched.step(loss)  # before opt.step(): a_t from L(θ_t)
        ...     opt.step()
        >>> sched.get_last_lr() == [0.1 * a]
        True

    With a cosine schedule (``lr_t = cosine_t · a_t``)::

        >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> surge = SurgeLR(opt, targets=[0.02])
        >>> sched = torch.optim.lr_scheduler.ChainedScheduler(
        ...     [torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10), surge])
        >>> for _ in range(3):
        ...     opt.zero_grad()
        ...     loss = torch.nn.functional.mse_loss(model(x), y)
        ...     loss.backward()
        ...     _ = surge.observe(loss)  # sets lr = cosine_t · a_t now
        ...     opt.step()
        ...     sched.step()
    """

    def __init__(self, optimizer: torch.optim.Optimizer, targets: Iterable[float],
                 lam: float = 1.0, last_epoch: int = -1):
        self.lam = check_hyper("lam", lam)
        ts = [float(t) for t in targets]
        if not all(math.isfinite(t) for t in ts):
            raise ValueError(f"targets: expected finite values, got {ts}")
        self.targets = sorted(ts)
        self.last_factor = 1.0
        self.last_loss: float | None = None
        self._applied = 1.0  # the factor inside the lrs SURGE last wrote
        self._inner: list[float] = []  # the groups' lr without SURGE's factor
        self._written: list[float] = []  # the lrs SURGE last wrote
        super().__init__(optimizer, last_epoch)

    # -- the factor -----------------------------------------------------------------------------
    def observe(self, loss: float | torch.Tensor) -> float:
        """Set ``lr = a_t · lr_base`` now from the loss at the current iterate, without advancing
        ``last_epoch`` (for use inside ``ChainedScheduler`` / ``SequentialLR``, whose ``step()``
        passes no loss); returns ``a_t``."""
        self._set_loss(loss)
        lrs = self._lrs()
        for group, lr in zip(self.optimizer.param_groups, lrs, strict=True):
            if isinstance(group["lr"], torch.Tensor):
                group["lr"].fill_(lr)
            else:
                group["lr"] = lr
        self._last_lr = [float(g["lr"]) for g in self.optimizer.param_groups]
        return self.last_factor

    def step(self, loss: float | torch.Tensor | None = None) -> float:  # type: ignore[override]
        """Set ``lr = a_t · lr_base`` for the loss at the current iterate (call it before
        ``optimizer.step()``) and advance ``last_epoch``; returns ``a_t``.  Without ``loss``
        (as ``ChainedScheduler`` / ``SequentialLR`` call it) ``a_t`` is kept and only
        re-applied over the other schedulers' rates."""
        if loss is not None:
            self._set_loss(loss)
        # No "step before optimizer.step()" warning: SURGE is meant to run before the step.
        self._step_count += 1
        self._update_lr()
        return self.last_factor

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore :meth:`state_dict` (also the ``{lam, targets, base_lrs, last_factor}`` dict
        of the earlier, non-``LRScheduler`` SurgeLR)."""
        state = dict(state_dict)
        if "_inner" not in state and "base_lrs" in state:  # the earlier format
            base = [float(b) for b in state["base_lrs"]]
            a = float(state.get("last_factor", 1.0))
            state.update(_inner=base, _applied=a, _written=[a * b for b in base])
        super().load_state_dict(state)

    def _set_loss(self, loss: float | torch.Tensor) -> None:
        value = _loss_value(loss)
        self.last_loss = value
        self.last_factor = _factor(value, self.targets, self.lam)

    def get_lr(self) -> list[float]:
        """``a_t · lr_base`` per group (called by ``step``; read rates with ``get_last_lr``)."""
        return self._lrs()

    def _get_closed_form_lr(self) -> list[float]:
        """``a_t · base_lrs`` (the groups' ``initial_lr``): what ``SequentialLR`` uses at the
        milestone that hands over to SURGE, restarting from the base rates as every torch
        scheduler does there."""
        self._inner = [float(b) for b in self.base_lrs]
        self._inner += [float(g["lr"]) for g in self.optimizer.param_groups[len(self._inner):]]
        self._applied = self.last_factor
        self._written = [self._applied * b for b in self._inner]
        return list(self._written)

    def _lrs(self) -> list[float]:
        groups = self.optimizer.param_groups
        a = self.last_factor
        out = []
        for i, group in enumerate(groups):
            lr = float(group["lr"])
            if i >= len(self._inner):  # the first call, or a group added since: not yet scaled
                self._inner.append(lr)
            elif lr != self._written[i]:  # another scheduler or the user changed it
                self._inner[i] = lr / self._applied
            out.append(a * self._inner[i])
        self._written = list(out)
        self._applied = a
        return out
