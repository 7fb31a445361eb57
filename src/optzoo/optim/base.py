"""The contract every optzoo optimizer keeps (``shared/STYLE.md``, PyTorch's ``optim_db``).

:class:`ZooOptimizer` is a thin :class:`torch.optim.Optimizer` subclass.  It adds nothing to the
mathematics; it gives every method in :mod:`optzoo.optim` the same behaviour at the edges:

* hyperparameters live in ``defaults`` and therefore per parameter group and in ``state_dict``;
* ``maximize`` flips the gradient sign, nothing else;
* a sparse gradient raises a ``RuntimeError`` that names the optimizer (none of these methods
  has a sparse update);
* a bad hyperparameter raises a ``ValueError`` naming it (:func:`check_hyper`); in every
  parameter group (at construction and in ``add_param_group``) ``lr`` must be finite and
  ``>= 0``, no float hyperparameter may be NaN, and every parameter must be a floating-point
  tensor (``TypeError`` otherwise: an integer tensor cannot take a fractional step);
* a NaN gradient is a ``ValueError`` for the sign-based updates (``sign(NaN)`` would silently
  skip the coordinate), see :meth:`ZooOptimizer._check_no_nan`;
* per-parameter state sits in ``self.state[p]`` as tensors, so ``load_state_dict`` casts it to the
  parameter's dtype and device;
* methods whose *output* is not the point the gradient is queried at (an iterate average, an
  episode average) expose it through :meth:`ZooOptimizer.output` and
  :meth:`ZooOptimizer.swap_output`, the way ``torch.optim.swa_utils`` does for SWA.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import torch

__all__ = ["ZooOptimizer", "check_group", "check_hyper", "default_foreach"]


def check_hyper(name: str, value: object, *, low: float | None = 0.0, high: float | None = None,
                low_open: bool = False, high_open: bool = False, finite: bool = True) -> float:
    """Validate a scalar hyperparameter; raise ``ValueError`` naming it otherwise.

    Args:
        name: the argument's name, used verbatim in the message.
        value: the value given.
        low / high: bounds (``None`` = unbounded).
        low_open / high_open: exclude the bound itself.
        finite: reject ±inf (default); ``False`` where ``inf`` means "off".

    Example::

        >>> from optzoo.optim.base import check_hyper
        >>> check_hyper("lr", 0.1, low=0.0, low_open=True)
        0.1
        >>> check_hyper("lr", float("inf"))
        Traceback (most recent call last):
        ...
        ValueError: lr: expected a finite real number, got inf
    """
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise ValueError(
                f"{name}: expected a scalar, got a tensor of shape {tuple(value.shape)}")
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name}: expected a real number, got {value!r}")
    v = float(value)
    if math.isnan(v):
        raise ValueError(f"{name}: expected a real number, got nan")
    if finite and math.isinf(v):
        raise ValueError(f"{name}: expected a finite real number, got {value!r}")
    if low is not None and (v < low or (low_open and v == low)):
        op = ">" if low_open else ">="
        raise ValueError(f"{name}: expected {op} {low}, got {value!r}")
    if high is not None and (v > high or (high_open and v == high)):
        op = "<" if high_open else "<="
        raise ValueError(f"{name}: expected {op} {high}, got {value!r}")
    return v


def default_foreach(params: list[torch.Tensor]) -> bool:
    """PyTorch's rule: use the multi-tensor path when every tensor is on a native CUDA device."""
    return bool(params) and all(p.device.type == "cuda" for p in params)


def check_group(owner: str, group: dict) -> None:
    """The checks every parameter group passes (module docstring): floating-point parameters,
    a finite ``lr >= 0``, no NaN float hyperparameter.  ``owner`` names the optimizer."""
    for p in group["params"]:
        if not isinstance(p, torch.Tensor):
            raise TypeError(f"params: {owner} expected tensors, got {type(p).__name__}")
        if not p.is_floating_point():
            raise TypeError(f"params: {owner} expected floating-point tensors, got a parameter "
                            f"of dtype {p.dtype} and shape {tuple(p.shape)}")
    if "lr" in group:
        lr = group["lr"]
        if isinstance(lr, torch.Tensor) and lr.numel() == 1:
            lr = lr.item()
        if isinstance(lr, bool) or not isinstance(lr, int | float):
            raise ValueError(f"lr: expected a finite real number >= 0, got {group['lr']!r}")
        if not math.isfinite(lr) or lr < 0:
            raise ValueError(f"lr: expected a finite real number >= 0, got {group['lr']!r}")
    for k, v in group.items():
        if isinstance(v, float) and math.isnan(v):
            raise ValueError(f"{k}: expected a real number, got nan")


class ZooOptimizer(torch.optim.Optimizer):
    """Base class: shared edge behaviour, no mathematics (see the module docstring).

    Example::

        >>> import torch
        >>> from optzoo.optim import SignSGD
        >>> try:
        ...     SignSGD([torch.zeros(2, dtype=torch.int64)], lr=0.1)
        ... except TypeError as e:
        ...     print(str(e)[:44])
        params: SignSGD expected floating-point tens
    """

    def add_param_group(self, param_group: dict) -> None:
        """``torch.optim.Optimizer.add_param_group``, then :func:`check_group` on the group."""
        super().add_param_group(param_group)
        check_group(type(self).__name__, self.param_groups[-1])

    def _check_no_nan(self, grads: list[torch.Tensor], why: str = "its sign-based update "
                      "would silently skip those coordinates", *, inf: bool = False) -> None:
        """Raise ``ValueError`` if a gradient holds NaN (or ±inf when ``inf``); one device
        synchronisation per call."""
        bad = torch.isnan if not inf else (lambda g: ~torch.isfinite(g))
        if grads and bool(torch.stack([bad(g).any() for g in grads]).any()):
            what = "NaN or ±inf" if inf else "NaN"
            raise ValueError(f"gradient: {type(self).__name__} got a {what} gradient ({why}); "
                             "check the loss")

    def _grads(self, group: dict) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """The group's parameters that have a gradient, and those gradients (sign-flipped when
        ``maximize``).  Raises on sparse gradients."""
        params, grads = [], []
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.grad.is_sparse:
                raise RuntimeError(
                    f"{type(self).__name__} does not support sparse gradients "
                    f"(parameter of shape {tuple(p.shape)}); use a dense embedding or "
                    "torch.optim.SparseAdam")
            params.append(p)
            grads.append(-p.grad if group.get("maximize", False) else p.grad)
        return params, grads

    def _group_of(self, p: torch.Tensor) -> dict:
        """The parameter group holding ``p`` (``KeyError`` if none does)."""
        for group in self.param_groups:
            if any(q is p for q in group["params"]):
                return group
        raise KeyError(f"the parameter of shape {tuple(p.shape)} is not in this optimizer")

    @torch.no_grad()
    def step(self, closure=None):
        """Evaluate ``closure`` (with grad enabled) if given, then update every group that has
        gradients through :meth:`_step_group`; return the closure's loss."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params, grads = self._grads(group)
            if params:
                self._step_group(group, params, grads)
        return loss

    def _step_group(self, group: dict, params: list[torch.Tensor],
                    grads: list[torch.Tensor]) -> None:
        """Update one group's ``params`` from ``grads`` (already sign-flipped for maximize).
        Optimizers that keep the standard step override this, others override :meth:`step`."""
        raise NotImplementedError(f"{type(self).__name__} overrides neither step nor _step_group")

    def _use_foreach(self, group: dict, params: list[torch.Tensor]) -> bool:
        foreach = group.get("foreach")
        return default_foreach(params) if foreach is None else bool(foreach)

    # -- output point ---------------------------------------------------------------------
    def output(self) -> dict[torch.Tensor, torch.Tensor]:
        """The point the method returns, per parameter.  Default: the parameters themselves.

        Methods that query gradients at one point and return another (iterate averages,
        episode averages) override this.
        """
        return {p: p.detach() for g in self.param_groups for p in g["params"]}

    @contextlib.contextmanager
    def swap_output(self) -> Iterator[None]:
        """Temporarily load :meth:`output` into the parameters (e.g. to evaluate or save it)."""
        out = self.output()
        saved = {p: p.detach().clone() for p in out}
        with torch.no_grad():
            for p, v in out.items():
                p.copy_(v)
        try:
            yield
        finally:
            with torch.no_grad():
                for p, v in saved.items():
                    p.copy_(v)
