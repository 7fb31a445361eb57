"""The loop every bilevel solver shares: outer steps until an oracle budget or a step count is
spent, with a history of the metrics a caller asks for."""

from __future__ import annotations

import abc
from collections.abc import Callable

import torch

from optzoo.bilevel.problem import Oracle

__all__ = ["BilevelSolver", "check_positive"]


def check_positive(name: str, value, *, integer: bool = False, allow_zero: bool = False):
    """``value`` if it is a (finite) positive number (an int if ``integer``), else a
    ``ValueError`` naming ``name``."""
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if ok and not isinstance(value, bool):
        if (value >= 0 if allow_zero else value > 0) and value < float("inf"):
            return value
    kind = "integer" if integer else "number"
    bound = ">= 0" if allow_zero else "> 0"
    raise ValueError(f"{name}: expected a finite {kind} {bound}, got {value!r}")


def _start(name: str, given, default: torch.Tensor) -> torch.Tensor:
    """The starting iterate: ``default`` when ``given`` is None, else ``given`` checked against
    the problem's shape (a wrong shape would broadcast silently in the first step)."""
    if given is None:
        return default.detach().clone()
    if not isinstance(given, torch.Tensor) or not given.is_floating_point():
        raise TypeError(f"{name}: expected a floating-point tensor of shape "
                        f"{tuple(default.shape)}, got {type(given).__name__}"
                        + (f" of dtype {given.dtype}" if isinstance(given, torch.Tensor) else ""))
    if given.shape != default.shape:
        raise ValueError(f"{name}: expected shape {tuple(default.shape)} (the problem's), got "
                         f"{tuple(given.shape)}")
    if not bool(torch.isfinite(given).all()):
        raise ValueError(f"{name}: expected finite values, got NaN or inf")
    return given.detach().clone().to(default.dtype)


class BilevelSolver(abc.ABC):
    """An iterative bilevel method holding the upper iterate ``x`` and lower iterate(s) ``y``.

    Subclasses implement :meth:`step` (one outer iteration, calling the oracle) and may
    override :meth:`output` (the point they report, e.g. an average).
    """

    def __init__(self, oracle: Oracle, x0: torch.Tensor | None = None,
                 y0: torch.Tensor | None = None) -> None:
        if not isinstance(oracle, Oracle):
            raise ValueError(f"oracle: expected an optzoo.bilevel.Oracle, got "
                             f"{type(oracle).__name__}")
        self.oracle = oracle
        problem = oracle.problem
        self.x = _start("x0", x0, problem.x0())
        self.y = _start("y0", y0, problem.y0())
        self.steps = 0

    @abc.abstractmethod
    def step(self) -> None:
        """One outer iteration (updates ``self.x`` and the lower iterates)."""

    def output(self) -> torch.Tensor:
        """The upper point the method reports (the last iterate by default)."""
        return self.x

    def run(self, *, budget: int | None = None, steps: int | None = None,
            callback: Callable[[BilevelSolver], dict] | None = None,
            every: int = 1) -> list[dict]:
        """Outer steps until ``oracle.total ≥ budget`` or ``steps`` steps (whichever first).

        ``callback(self)`` returns metrics recorded (with ``step`` and ``calls``) at the start,
        every ``every`` steps and at the end.  A non-finite iterate stops the run with
        ``diverged: True`` in the last record instead of propagating NaNs.
        """
        if budget is None and steps is None:
            raise ValueError("budget, steps: give at least one stopping rule")
        if budget is not None:
            check_positive("budget", budget, integer=True)
        if steps is not None:
            check_positive("steps", steps, integer=True)
        check_positive("every", every, integer=True)
        history: list[dict] = []

        def record(**extra) -> None:
            row = {"step": self.steps, "calls": self.oracle.total, **extra}
            if callback is not None:
                row.update(callback(self))
            history.append(row)

        record()
        while ((budget is None or self.oracle.total < budget)
               and (steps is None or self.steps < steps)):
            self.step()
            self.steps += 1
            if not bool(torch.isfinite(self.x).all()) or not bool(torch.isfinite(self.y).all()):
                history.append({"step": self.steps, "calls": self.oracle.total,
                                "diverged": True})
                return history
            if self.steps % every == 0:
                record()
        if history[-1]["step"] != self.steps:
            record()
        return history
