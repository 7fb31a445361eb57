"""Noisy dynamics released from a point of a low-loss path, projected back onto it.

Di Carlo, Goddard & Schwab, "Entropic Confinement and Mode Connectivity in Overparameterized
Neural Networks" (ICLR 2026, arXiv 2512.06297), §4 step 4 ("projected SGD"): start at path
coordinate ``y0``, run an optimizer, and every ``k`` steps (paper: ``k = 15``) replace the
parameters by their projection onto the nearest segment of the piecewise-linear path; the path
coordinate ``y`` after each projection is the observable.  Projecting every step would freeze
the transverse motion that creates the entropic force; never projecting lets runs leave.

Noise sources: minibatch SGD (paper; temperature ``T ∝ η/B``), or overdamped Langevin
``θ ← θ − η ∇L(θ) + √(2ηT) ξ`` with full-batch gradients and an explicit temperature ``T`` (the
brief's control with known ``T``); ``T = 0`` with full batch is noise-free projected GD (the
brief's control, not in the paper).  Optimizers: SGD, SGD + Nesterov (momentum 0.9) and Adam,
as in the paper's ablation; the optimizer state is kept across projections (the paper does not
say; resetting it would be the other reading).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from optzoo.landscape.curvature import functional_loss

OPTIMIZERS = ("sgd", "nesterov", "adam")


@dataclass
class Release:
    """Path coordinates ``ys`` (``ys[0] = y0``) after every projection, at ``steps`` and
    the training loss there."""

    steps: list[int]
    ys: list[float]
    losses: list[float]


def project(theta: torch.Tensor, ts: torch.Tensor, points: torch.Tensor
            ) -> tuple[torch.Tensor, float]:
    """Nearest point of the polyline ``points`` (rows at parameters ``ts``) to ``theta``:
    ``(projection, path coordinate)``."""
    p0, seg = points[:-1], points[1:] - points[:-1]
    u = (((theta - p0) * seg).sum(1) / (seg * seg).sum(1).clamp_min(1e-300)).clamp(0.0, 1.0)
    foot = p0 + u[:, None] * seg
    i = int(((foot - theta) ** 2).sum(1).argmin())
    y = float(ts[i] + u[i] * (ts[i + 1] - ts[i]))
    return foot[i].clone(), y


def release_dynamics(model: nn.Module, loss_fn: Callable, path: Callable, y0: float,
                     data: tuple[torch.Tensor, torch.Tensor], steps: int = 1500,
                     lr: float = 0.02, batch_size: int | None = 16, temperature: float = 0.0,
                     project_every: int = 15, optimizer: str = "sgd", grid: int = 101,
                     generator: torch.Generator | None = None) -> Release:
    """Run projected noisy dynamics from ``path(y0)``; see the module docstring.

    ``batch_size=None`` uses full-batch gradients.  ``temperature > 0`` adds Langevin noise
    ``√(2·lr·T) ξ`` after each optimizer step.  ``path`` maps ``t ∈ [0, 1]`` to flat parameters
    and is discretised into ``grid`` points for the projection.
    """
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer: expected one of {OPTIMIZERS}, got {optimizer!r}")
    if temperature < 0 or lr <= 0 or project_every < 1 or steps < 0:
        raise ValueError("temperature >= 0, lr > 0, project_every >= 1, steps >= 0 required")
    if not 0.0 <= y0 <= 1.0:
        raise ValueError(f"y0: expected in [0, 1], got {y0}")
    f = functional_loss(model, loss_fn)
    ts = torch.linspace(0.0, 1.0, grid, dtype=torch.float64)
    pts = torch.stack([path(float(t)).detach() for t in ts])
    theta = nn.Parameter(path(y0).detach().clone())
    if optimizer == "adam":
        opt = torch.optim.Adam([theta], lr=lr)
    else:
        opt = torch.optim.SGD([theta], lr=lr, momentum=0.9 if optimizer == "nesterov" else 0.0,
                              nesterov=optimizer == "nesterov")
    x, y = data
    n = x.shape[0]
    noise = math.sqrt(2.0 * lr * temperature)
    out = Release(steps=[0], ys=[float(y0)], losses=[float(f(theta.detach(), x, y))])
    for k in range(1, steps + 1):
        if batch_size is None or batch_size >= n:
            xb, yb = x, y
        else:
            idx = torch.randint(0, n, (batch_size,), generator=generator)
            xb, yb = x[idx], y[idx]
        opt.zero_grad()
        f(theta, xb, yb).backward()
        opt.step()
        with torch.no_grad():
            if noise > 0:
                theta.add_(torch.randn(theta.shape, generator=generator,
                                       dtype=theta.dtype), alpha=noise)
            if k % project_every == 0:
                proj, yk = project(theta.detach(), ts, pts)
                theta.copy_(proj)
                out.steps.append(k)
                out.ys.append(yk)
                out.losses.append(float(f(theta.detach(), x, y)))
    return out


def entropic_drift_rate(lr: float, temperature: float, project_every: int,
                        dcurvatures, curvatures=None) -> float:
    """Expected change of the path coordinate per step of projected Langevin dynamics in the
    quadratic model of the paper's §2 (``V = ½ Σ_i h_i(s) x_i²``, ``s`` = arc length along the
    path, ``x`` transverse), averaged over one projection cycle.

    After a projection ``x = 0``; ``k`` noisy steps later ``E x_i² = 2ηT Σ_{j<k} (1 − ηh_i)^{2j}``
    (discrete Ornstein-Uhlenbeck), and the step on ``s`` is ``−η ½ Σ_i h_i'(s) E x_i²``:
    negative where the curvature grows with ``s``, i.e. toward flatter regions.

    Args:
        lr: η.  temperature: T.  project_every: k, steps between projections.
        dcurvatures: ``h_i'(s)``, one per transverse direction (or their sum, ``d tr H/ds``,
            with ``curvatures=None``).
        curvatures: ``h_i(s)``; ``None`` takes the un-equilibrated limit ``η h_i k ≪ 1``
            (``E x_i² = 2ηTk``), an upper bound on the drift of every direction with h_i > 0.

    Example:
        The predicted drift on :class:`~optzoo.landscape.EntropicToy` at y = 0.3, where the
        transverse curvature g(y) grows with y in each of the D = 50 directions:

        >>> import torch
        >>> from optzoo.landscape import EntropicToy, entropic_drift_rate
        >>> y = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
        >>> g = EntropicToy(dims=50).g(y)
        >>> (dg,) = torch.autograd.grad(g, y)
        >>> rate = entropic_drift_rate(0.02, 1e-3, 15, [float(dg)] * 50, [g.item()] * 50)
        >>> f"{rate:.1e}"                           # per step: toward y = 0, the flatter end
        '-8.0e-04'
        >>> bound = entropic_drift_rate(0.02, 1e-3, 15, [float(dg)] * 50)   # η h k ≪ 1 limit
        >>> bool(bound < rate < 0)
        True
    """
    if not lr > 0 or not temperature >= 0 or project_every < 1:
        raise ValueError(f"lr > 0, temperature >= 0, project_every >= 1 required, got {lr}, "
                         f"{temperature}, {project_every}")
    dh = torch.as_tensor(dcurvatures, dtype=torch.float64).reshape(-1)
    k = torch.arange(project_every, dtype=torch.float64)  # noisy steps before each gradient
    if curvatures is None:
        var = 2 * lr * temperature * k.expand(dh.numel(), -1)
    else:
        h = torch.as_tensor(curvatures, dtype=torch.float64).reshape(-1, 1)
        if h.shape[0] != dh.numel():
            raise ValueError(f"curvatures: expected {dh.numel()} values to match dcurvatures, "
                             f"got {h.shape[0]}")
        q2 = (1 - lr * h) ** 2
        # Σ_{j<k} q2^j, written so that q2 = 1 (h = 0) gives k exactly
        geo = torch.where((q2 - 1).abs() < 1e-12, k, (1 - q2**k) / (1 - q2).where(
            (q2 - 1).abs() >= 1e-12, torch.ones_like(q2)))
        var = 2 * lr * temperature * geo
    return float(-lr * 0.5 * (dh[:, None] * var).sum(0).mean())
