"""Bilevel problems and their stochastic oracles — the interface every solver of
:mod:`optzoo.bilevel` works on.

A bilevel problem (the standard form of UniBiO, F²SA-p and their baselines)::

    min_x Φ(x) = f(x, y*(x)),     y*(x) = argmin_y g(x, y),

with x and y *flat* 1-D tensors (a problem whose lower variable is the weights of an
``nn.Module`` unflattens them itself, e.g. with ``torch.func.functional_call``).  Solvers see
the problem only through an :class:`Oracle`: stochastic gradients of f and g, Hessian-vector
products ``∇²_yy g·v`` and cross products ``∇²_xy g·v`` computed by autograd on a minibatch (or
with Gaussian noise added, for synthetic problems), each call counted so that methods are
compared at equal oracle budgets.

References for what a problem must provide: the exact hyper-gradient by the implicit-function
theorem, ``∇Φ = ∇_x f − ∇²_xy g [∇²_yy g]⁻¹ ∇_y f`` at ``y*(x)`` (Ghadimi & Wang 2018), which
:meth:`BilevelProblem.hypergradient` computes with dense full-batch Hessians (small problems);
problems with a closed form override it.
"""

from __future__ import annotations

import abc
from collections import Counter
from typing import Any

import torch

from optzoo.checks import check_int, check_real

__all__ = ["BilevelProblem", "Oracle"]

Batch = Any  # whatever a problem's ``sample`` returns (e.g. an index tensor); None = full data


class BilevelProblem(abc.ABC):
    """Upper objective ``f(x, y)``, lower objective ``g(x, y)`` and their data.

    Subclasses implement :meth:`f`, :meth:`g`, :meth:`x0`, :meth:`y0`; stochastic problems
    implement :meth:`sample`; problems with closed forms override :meth:`lower_solution` and
    :meth:`hypergradient` (the defaults are exact but dense: fine up to a few thousand lower
    variables).  The derivative methods (:meth:`grad_f`, :meth:`grad_g`, :meth:`grad_g_y`,
    :meth:`hvp_yy`, :meth:`cross_xy`) default to reverse-mode autograd (double backward for
    the second-order ones); a problem with cheap closed forms may override them for speed —
    its tests then compare the override with the autograd default.

    Example:
        A new problem is four methods; the oracles (autograd) and the exact references
        (``lower_solution``, ``hypergradient``, ``phi``) come with it:

        >>> import torch
        >>> from optzoo.bilevel import F2SA, BilevelProblem, Oracle
        >>> class Toy(BilevelProblem):              # y*(x) = x and Φ(x) = ½‖x − 1‖²
        ...     def f(self, x, y, batch=None):
        ...         return 0.5 * ((y - 1.0) ** 2).sum()
        ...     def g(self, x, y, batch=None):
        ...         return 0.5 * ((y - x) ** 2).sum()
        ...     def x0(self):
        ...         return torch.zeros(3, dtype=torch.float64)
        ...     def y0(self):
        ...         return torch.zeros(3, dtype=torch.float64)
        >>> problem = Toy()
        >>> problem.grad_g(problem.x0(), torch.ones(3, dtype=torch.float64))   # (∇_x g, ∇_y g)
        (tensor([-1., -1., -1.], dtype=torch.float64), tensor([1., 1., 1.], dtype=torch.float64))
        >>> solver = F2SA(Oracle(problem), nu=0.05, lr=0.5, inner_lr=0.5, normalized=False)
        >>> history = solver.run(steps=20)
        >>> history[-1]["calls"], bool(((solver.x - 1.0).abs() < 1e-4).all())   # x* = 1
        (660, True)
    """

    name: str = "bilevel"

    @abc.abstractmethod
    def f(self, x: torch.Tensor, y: torch.Tensor, batch: Batch = None) -> torch.Tensor:
        """Upper-level objective (a scalar tensor, differentiable in x and y)."""

    @abc.abstractmethod
    def g(self, x: torch.Tensor, y: torch.Tensor, batch: Batch = None) -> torch.Tensor:
        """Lower-level objective (a scalar tensor, differentiable twice in y, once in x)."""

    @abc.abstractmethod
    def x0(self) -> torch.Tensor:
        """Initial upper variable (flat)."""

    @abc.abstractmethod
    def y0(self) -> torch.Tensor:
        """Initial lower variable (flat)."""

    def sample(self, level: str, batch_size: int | None,
               generator: torch.Generator | None) -> Batch:
        """A minibatch for ``level`` (``"upper"`` or ``"lower"``); ``None`` means the full
        (deterministic) objective, which is the default for problems without data."""
        return None

    # -- derivatives (autograd defaults) ---------------------------------------------------------
    def grad_f(self, x: torch.Tensor, y: torch.Tensor,
               batch: Batch = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(∇_x f, ∇_y f) at (x, y) on ``batch``."""
        return _grads(self.f, x, y, batch)

    def grad_g(self, x: torch.Tensor, y: torch.Tensor,
               batch: Batch = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(∇_x g, ∇_y g) at (x, y) on ``batch``."""
        return _grads(self.g, x, y, batch)

    def grad_g_y(self, x: torch.Tensor, y: torch.Tensor, batch: Batch = None) -> torch.Tensor:
        """∇_y g at (x, y) on ``batch``."""
        with torch.enable_grad():
            yy = y.detach().requires_grad_()
            (gy,) = torch.autograd.grad(self.g(x.detach(), yy, batch), yy)
        return gy

    def hvp_yy(self, x: torch.Tensor, y: torch.Tensor, v: torch.Tensor,
               batch: Batch = None) -> torch.Tensor:
        """∇²_yy g(x, y) · v on ``batch``."""
        with torch.enable_grad():
            yy = y.detach().requires_grad_()
            (gy,) = torch.autograd.grad(self.g(x.detach(), yy, batch), yy, create_graph=True)
            (hv,) = torch.autograd.grad(gy, yy, v.detach())
        return hv

    def cross_xy(self, x: torch.Tensor, y: torch.Tensor, v: torch.Tensor,
                 batch: Batch = None) -> torch.Tensor:
        """∇²_xy g(x, y) · v = ∇_x ⟨∇_y g(x, y), v⟩ on ``batch`` (shaped like x)."""
        with torch.enable_grad():
            xx, yy = x.detach().requires_grad_(), y.detach().requires_grad_()
            (gy,) = torch.autograd.grad(self.g(xx, yy, batch), yy, create_graph=True)
            (out,) = torch.autograd.grad(gy, xx, v.detach(), allow_unused=True)
        return torch.zeros_like(x) if out is None else out

    # -- references (full batch, exact, dense) --------------------------------------------------
    def lower_solution(self, x: torch.Tensor, y_init: torch.Tensor | None = None, *,
                       tol: float = 1e-12, max_iter: int = 100) -> torch.Tensor:
        """``y*(x)`` by damped Newton on the full-batch ``g`` (dense Hessian)."""
        y = (self.y0() if y_init is None else y_init).detach().clone()
        x = x.detach()
        for _ in range(max_iter):
            gy = self.grad_g_y(x, y)
            if float(gy.norm()) <= tol:
                break
            H = torch.func.hessian(lambda yy: self.g(x, yy))(y)
            step = torch.linalg.solve(H, gy)
            value, t = float(self.g(x, y)), 1.0
            # backtracking keeps Newton monotone on non-quadratic g; near y* the decrease is
            # below round-off, so a step within round-off of ``value`` is accepted
            slack = 1e-13 * max(1.0, abs(value))
            while t > 1e-8 and not float(self.g(x, y - t * step)) <= value + slack:
                t *= 0.5
            y = (y - t * step).detach()
        return y

    def hypergradient(self, x: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
        """Exact ``∇Φ(x)`` by the implicit-function theorem at ``y*(x)`` (full batch, dense
        ``∇²_yy g`` solved exactly); ``y`` warm-starts the lower solve."""
        x = x.detach()
        y = self.lower_solution(x, y)
        fx, fy = _grads(self.f, x, y, None)
        H = torch.func.hessian(lambda yy: self.g(x, yy))(y)
        v = torch.linalg.solve(H, fy)
        return fx - BilevelProblem.cross_xy(self, x, y, v)

    def phi(self, x: torch.Tensor, y: torch.Tensor | None = None) -> float:
        """``Φ(x) = f(x, y*(x))`` (full batch)."""
        x = x.detach()
        return float(self.f(x, self.lower_solution(x, y)))


def _grads(fn, x: torch.Tensor, y: torch.Tensor, batch: Batch) -> tuple[torch.Tensor,
                                                                          torch.Tensor]:
    with torch.enable_grad():
        xx, yy = x.detach().requires_grad_(), y.detach().requires_grad_()
        gx, gy = torch.autograd.grad(fn(xx, yy, batch), (xx, yy), allow_unused=True)
    return (torch.zeros_like(x) if gx is None else gx), (torch.zeros_like(y) if gy is None
                                                         else gy)


class Oracle:
    """Counted stochastic oracles of a :class:`BilevelProblem`.

    Args:
        problem: the problem.
        batch_size: minibatch size passed to ``problem.sample`` (``None``: full batch).
        noise: standard deviation of Gaussian noise added to every returned vector (the
            synthetic problems' "stochastic oracle"; 0 for data problems, whose noise is the
            minibatch).
        generator: RNG for minibatches and noise.

    Every method returns detached tensors and increments ``calls[kind]`` by one, with kinds
    ``grad_f`` (∇_x f and ∇_y f together), ``grad_g`` (∇_y g, or both parts), ``hvp``
    (∇²_yy g·v) and ``cross`` (∇²_xy g·v).  ``total`` is their sum — the oracle budget the
    reproductions compare methods at.
    """

    KINDS = ("grad_f", "grad_g", "hvp", "cross")

    def __init__(self, problem: BilevelProblem, *, batch_size: int | None = None,
                 noise: float = 0.0, generator: torch.Generator | None = None) -> None:
        if batch_size is not None:
            check_int("batch_size", batch_size)
        check_real("noise", noise, low=0.0)
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size: expected a positive integer or None, got {batch_size}")
        if not noise >= 0.0:
            raise ValueError(f"noise: expected a standard deviation >= 0, got {noise}")
        self.problem = problem
        self.batch_size = batch_size
        self.noise = float(noise)
        self.generator = generator
        self.calls: Counter[str] = Counter({k: 0 for k in self.KINDS})

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def sample(self, level: str = "lower") -> Batch:
        if level not in ("upper", "lower"):
            raise ValueError(f"level: expected 'upper' or 'lower', got {level!r}")
        return self.problem.sample(level, self.batch_size, self.generator)

    def _noisy(self, t: torch.Tensor) -> torch.Tensor:
        # the oracles run once per inner step on tiny vectors, where each torch call's
        # overhead is the cost: detach only what autograd tracks, and name a device only
        # off the CPU (the same numbers either way)
        if t.requires_grad:
            t = t.detach()
        if self.noise > 0.0:
            if t.is_cpu:
                noise = torch.randn(t.shape, generator=self.generator, dtype=t.dtype)
            else:
                noise = torch.randn(t.shape, generator=self.generator, dtype=t.dtype,
                                    device=t.device)
            t = t + self.noise * noise
        return t

    def grad_f(self, x: torch.Tensor, y: torch.Tensor,
               batch: Batch = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(∇_x f, ∇_y f) at (x, y) on ``batch``."""
        self.calls["grad_f"] += 1
        gx, gy = self.problem.grad_f(x, y, batch)
        return self._noisy(gx), self._noisy(gy)

    def grad_g(self, x: torch.Tensor, y: torch.Tensor,
               batch: Batch = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(∇_x g, ∇_y g) at (x, y) on ``batch``."""
        self.calls["grad_g"] += 1
        gx, gy = self.problem.grad_g(x, y, batch)
        return self._noisy(gx), self._noisy(gy)

    def grad_g_y(self, x: torch.Tensor, y: torch.Tensor, batch: Batch = None) -> torch.Tensor:
        """∇_y g at (x, y) on ``batch`` (one ``grad_g`` call)."""
        self.calls["grad_g"] += 1
        return self._noisy(self.problem.grad_g_y(x, y, batch))

    def hvp(self, x: torch.Tensor, y: torch.Tensor, v: torch.Tensor,
            batch: Batch = None) -> torch.Tensor:
        """∇²_yy g(x, y) · v on ``batch``."""
        self.calls["hvp"] += 1
        return self._noisy(self.problem.hvp_yy(x, y, v, batch))

    def cross(self, x: torch.Tensor, y: torch.Tensor, v: torch.Tensor,
              batch: Batch = None) -> torch.Tensor:
        """∇²_xy g(x, y) · v = ∇_x ⟨∇_y g, v⟩ on ``batch`` (a vector shaped like x)."""
        self.calls["cross"] += 1
        return self._noisy(self.problem.cross_xy(x, y, v, batch))
