"""Plumbing shared by every unlearning method of this area: the batch streams, the record of a
run (:class:`UnlearningResult`), the monitoring hook and the plain gradient step.

The methods are written as plain (full-batch or minibatch) gradient steps θ ← θ ∓ η g, as in
the papers' algorithms; this module holds only what all of them need to do that in one way.

Data convention: ``forget_data`` / ``retain_data`` are either ONE batch (a tensor, tuple, list or
dict), used at every step (full-batch unlearning), or any other iterable of batches (e.g. a
``DataLoader``), cycled: re-iterated from the start when it runs out.  A loss is a callable
``loss(model, batch) -> scalar tensor``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

Loss = Callable[[nn.Module, Any], torch.Tensor]
Monitor = Callable[[nn.Module], Mapping[str, float]]
Callback = Callable[[Mapping[str, Any]], None]


@dataclass
class UnlearningResult:
    """What an unlearning run returns.

    Args:
        model: the unlearned model (the same object that was passed in, updated in place).
        history: one dict per gradient update (``step``, ``phase``, losses, …) plus, every
            ``monitor_every`` updates, the values returned by ``monitor`` (and at step 0).
    """

    model: nn.Module
    history: list[dict[str, Any]] = field(default_factory=list)

    def series(self, key: str) -> list[float]:
        """The values of ``key`` in ``history``, in order, where recorded."""
        return [float(h[key]) for h in self.history if key in h]


def batches(data: Any, name: str) -> Iterator[Any]:
    """An endless stream of batches from ``data`` (see the module docstring)."""
    if data is None:
        raise ValueError(f"{name}: expected a batch or an iterable of batches, got None")
    if isinstance(data, (torch.Tensor, tuple, list, dict)):
        return _repeat(data)
    if not isinstance(data, Iterable):
        raise ValueError(f"{name}: expected a batch (tensor/tuple/list/dict) or an iterable of "
                         f"batches, got {type(data).__name__}")
    return _cycle(data, name)


def _repeat(batch: Any) -> Iterator[Any]:
    while True:
        yield batch


def _cycle(data: Iterable, name: str) -> Iterator[Any]:
    while True:
        empty = True
        for b in data:
            empty = False
            yield b
        if empty:
            raise ValueError(f"{name}: the iterable of batches is empty")


def trainable(model: nn.Module) -> list[nn.Parameter]:
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("model: expected at least one parameter with requires_grad=True")
    return params


def grads(out: torch.Tensor, params: Sequence[torch.Tensor], *, create_graph: bool = False,
          retain_graph: bool | None = None) -> list[torch.Tensor]:
    """``torch.autograd.grad`` with zeros (not None) for parameters the output does not use."""
    gs = torch.autograd.grad(out, params, create_graph=create_graph, retain_graph=retain_graph,
                             allow_unused=True)
    return [torch.zeros_like(p) if g is None else g for g, p in zip(gs, params, strict=True)]


def check_finite(value: torch.Tensor, what: str) -> None:
    if not bool(torch.isfinite(value).all()):
        raise FloatingPointError(f"{what} is not finite ({value}); lower the learning rate or "
                                 "bound the forget loss")


@torch.no_grad()
def step(params: Sequence[torch.Tensor], direction: Sequence[torch.Tensor], lr: float,
         max_norm: float | None = None) -> float:
    """θ ← θ − lr · d (pass −g to ascend); ``d`` is rescaled to norm ``max_norm`` if longer.
    Returns ‖d‖ before rescaling."""
    norm = math.sqrt(sum(float(d.pow(2).sum()) for d in direction))
    if not math.isfinite(norm):
        raise FloatingPointError("update direction is not finite; lower the learning rate or "
                                 "bound the forget loss")
    scale = lr
    if max_norm is not None and norm > max_norm:
        scale = lr * max_norm / norm
    for p, d in zip(params, direction, strict=True):
        p.add_(d, alpha=-scale)
    return norm


def check_positive(**kwargs: float) -> None:
    for k, v in kwargs.items():
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ValueError(f"{k}: expected a finite number > 0, got {v!r}")


def check_nonnegative(**kwargs: float) -> None:
    for k, v in kwargs.items():
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
            raise ValueError(f"{k}: expected a finite number >= 0, got {v!r}")


def check_steps(**kwargs: int) -> None:
    for k, v in kwargs.items():
        if not (isinstance(v, int) and not isinstance(v, bool) and v >= 1):
            raise ValueError(f"{k}: expected an integer >= 1, got {v!r}")


class Recorder:
    """Appends per-update records to a result, calls ``monitor`` every ``monitor_every`` updates
    (and before the first), and forwards every record to ``callback``."""

    def __init__(self, model: nn.Module, monitor: Monitor | None, monitor_every: int,
                 callback: Callback | None) -> None:
        check_steps(monitor_every=monitor_every)
        self.result = UnlearningResult(model=model)
        self.model, self.monitor, self.callback = model, monitor, callback
        self.every = monitor_every
        self.updates = 0
        if monitor is not None:
            self._emit({"step": 0, "phase": "init", **self._watch()})

    def _watch(self) -> dict[str, float]:
        was = self.model.training
        self.model.eval()
        try:
            with torch.no_grad():
                return {k: float(v) for k, v in self.monitor(self.model).items()}
        finally:
            self.model.train(was)

    def _emit(self, rec: dict[str, Any]) -> None:
        self.result.history.append(rec)
        if self.callback is not None:
            self.callback(rec)

    def update(self, **info: Any) -> None:
        """Record one gradient update (its ``info``: phase, losses, …)."""
        self.updates += 1
        rec: dict[str, Any] = {"step": self.updates, **info}
        if self.monitor is not None and self.updates % self.every == 0:
            rec.update(self._watch())
        self._emit(rec)
