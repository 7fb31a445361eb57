"""Low-loss paths between two minima (mode connectivity), Garipov et al. 2018 curve fitting.

Di Carlo, Goddard & Schwab, "Entropic Confinement and Mode Connectivity in Overparameterized
Neural Networks" (ICLR 2026, arXiv 2512.06297), §4 step 2, find minimum-energy paths with
AutoNEB (Draxler et al. 2018); the brief allows the cheaper curve fit of Garipov et al. 2018
("Loss Surfaces, Mode Connectivity, and Fast Ensembling of DNNs", §3): a curve ``φ_c(t)`` with
fixed endpoints ``φ(0) = θ_A``, ``φ(1) = θ_B`` and a trainable bend ``c``, fitted by SGD on
``E_{t~U(0,1)} L(φ_c(t))`` (one ``t`` per minibatch).  Two curves of that paper:

* quadratic Bezier ``φ(t) = (1−t)² θ_A + 2t(1−t) c + t² θ_B``;
* polygonal chain with one bend ``θ_A → c → θ_B`` (``t = ½`` at the bend).

Deviation: not AutoNEB (no nudged elastic band, no image insertion); the bend starts at the
midpoint of the straight line, as in Garipov et al.  The loss is the plain training loss (no
weight decay on the bend).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from optzoo.checks import check_tensor
from optzoo.landscape.curvature import functional_loss

KINDS = ("bezier", "polychain")


@dataclass
class LowLossPath:
    """A curve in flat parameter space from ``start`` (t = 0) to ``end`` (t = 1)."""

    kind: str
    start: torch.Tensor
    bend: torch.Tensor
    end: torch.Tensor

    def __call__(self, t: float | torch.Tensor) -> torch.Tensor:
        return point(self.kind, self.start, self.bend, self.end, t)

    def polyline(self, points: int = 101) -> tuple[torch.Tensor, torch.Tensor]:
        """``(ts, P)``: ``points`` equally spaced parameters and the curve at them (rows)."""
        ts = torch.linspace(0.0, 1.0, points, dtype=torch.float64)
        return ts, torch.stack([self(float(t)) for t in ts])


def point(kind: str, a: torch.Tensor, c: torch.Tensor, b: torch.Tensor,
          t: float | torch.Tensor) -> torch.Tensor:
    """``φ(t)`` of a Bezier curve or one-bend polygonal chain with bend ``c``."""
    if kind == "bezier":
        return (1 - t) ** 2 * a + 2 * t * (1 - t) * c + t**2 * b
    if kind == "polychain":
        # convex-combination form: exact endpoints at t = 0 and t = 1
        if float(t) <= 0.5:
            return (1 - 2 * t) * a + 2 * t * c
        return (2 - 2 * t) * c + (2 * t - 1) * b
    raise ValueError(f"kind: expected one of {KINDS}, got {kind!r}")


def linear_path(theta_a: torch.Tensor, theta_b: torch.Tensor) -> LowLossPath:
    """The straight line (the energetic-barrier baseline), as a path object; ``theta_a`` and
    ``theta_b`` are flat parameter vectors of one shape.

    Example::

        >>> import torch
        >>> linear_path(torch.zeros(2), torch.ones(2)).bend
        tensor([0.5000, 0.5000])
    """
    check_tensor("theta_a", theta_a, ndim=1)
    check_tensor("theta_b", theta_b, ndim=1)
    if theta_a.shape != theta_b.shape:
        raise ValueError(f"theta_b: expected the shape of theta_a {tuple(theta_a.shape)}, got "
                         f"{tuple(theta_b.shape)}")
    a, b = theta_a.detach().clone(), theta_b.detach().clone()
    return LowLossPath("bezier", a, (a + b) / 2, b)  # a Bezier with the midpoint bend is linear


def find_path(model: nn.Module, loss_fn: Callable, theta_a: torch.Tensor, theta_b: torch.Tensor,
              data: tuple[torch.Tensor, torch.Tensor], kind: str = "bezier", steps: int = 500,
              lr: float = 0.05, momentum: float = 0.9, batch_size: int = 128,
              generator: torch.Generator | None = None) -> LowLossPath:
    """Fit the bend of a ``kind`` curve between the flat minima ``theta_a`` and ``theta_b``.

    Each step draws ``t ~ U(0, 1)`` and a minibatch of ``data = (inputs, targets)`` and takes
    an SGD (heavy-ball ``momentum``) step on ``L(φ_c(t))`` in ``c``; the endpoints stay fixed.

    Example:
        Two minima of a small network; the fitted Bézier curve removes most of the barrier of
        the straight line between them:

        >>> import torch
        >>> from optzoo.landscape import find_path, flat_params, linear_path, path_losses
        >>> _ = torch.manual_seed(0)
        >>> x = torch.randn(64, 4)
        >>> y = (x[:, :1] * x[:, 1:2]).tanh()
        >>> loss_fn = torch.nn.functional.mse_loss
        >>> def net():
        ...     return torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(),
        ...                                torch.nn.Linear(16, 1))
        >>> def minimum(seed):                      # train from one init; flat parameters
        ...     torch.manual_seed(seed)
        ...     model = net()
        ...     opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        ...     for _ in range(100):
        ...         opt.zero_grad()
        ...         loss_fn(model(x), y).backward()
        ...         opt.step()
        ...     return flat_params(model)
        >>> model, theta_a, theta_b = net(), minimum(1), minimum(2)   # `model` gives the shapes
        >>> curve = find_path(model, loss_fn, theta_a, theta_b, (x, y), steps=100, lr=0.05,
        ...                   generator=torch.Generator().manual_seed(0))
        >>> curve.kind, curve.bend.shape
        ('bezier', torch.Size([97]))
        >>> ts = [0.0, 0.25, 0.5, 0.75, 1.0]
        >>> line = path_losses(model, loss_fn, linear_path(theta_a, theta_b), ts, (x, y))
        >>> bent = path_losses(model, loss_fn, curve, ts, (x, y))
        >>> bool(max(bent) < 0.5 * max(line))
        True
    """
    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {KINDS}, got {kind!r}")
    if steps < 0 or batch_size < 1:
        raise ValueError(f"steps, batch_size: got {steps}, {batch_size}")
    f = functional_loss(model, loss_fn)
    a, b = theta_a.detach().clone(), theta_b.detach().clone()
    bend = nn.Parameter((a + b) / 2)
    opt = torch.optim.SGD([bend], lr=lr, momentum=momentum)
    x, y = data
    n = x.shape[0]
    for _ in range(steps):
        t = float(torch.rand((), generator=generator, dtype=torch.float64))
        idx = torch.randperm(n, generator=generator)[: min(batch_size, n)]
        opt.zero_grad()
        f(point(kind, a, bend, b, t), x[idx], y[idx]).backward()
        opt.step()
    return LowLossPath(kind, a, bend.detach().clone(), b)


def path_losses(model: nn.Module, loss_fn: Callable, path: Callable,
                ts, data: tuple[torch.Tensor, torch.Tensor]) -> list[float]:
    """The loss on ``data`` at ``path(t)`` for each ``t`` in ``ts``."""
    f = functional_loss(model, loss_fn)
    with torch.no_grad():
        return [float(f(path(float(t)), *data)) for t in ts]
