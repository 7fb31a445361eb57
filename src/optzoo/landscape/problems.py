"""The toy landscape of Di Carlo, Goddard & Schwab, "Entropic Confinement and Mode Connectivity
in Overparameterized Neural Networks" (ICLR 2026, arXiv 2512.06297), §2–§3:

    V(y, x) = ½ g(y) |x|²,   y ∈ [0, 1] the slow coordinate along the path (x = 0),
                             x ∈ R^D the fast transverse coordinates,

with ``g(y) = 1 + (ratio − 1) sin²(πy)``: curvature 1 at the endpoints and ``ratio`` at the
midpoint, the loss exactly 0 along the whole path.  At temperature ``T`` integrating out ``x``
gives ``V_eff(y) = (D T / 2) ln g(y)``: a force toward the flat endpoints that the loss alone
(zero along the path) does not have.  Gradient descent started on the path never moves.

Minibatch ("SGD-like") noise: the per-sample loss is
``ℓ_i = ½ g(y)|x|² + √g(y) a_iᵀx`` with ``Σ_i a_i = 0``, so the full-batch loss is exactly ``V``
(GD is unchanged) while a minibatch gradient in ``x`` carries noise of covariance
``g(y)·Cov(a)/B`` -- proportional to the curvature, as SGD noise near a minimum is (∝ H).
A model for :func:`optzoo.landscape.release_dynamics`: parameters are the flat vector
``(y, x_1..x_D)``, inputs are the rows ``a_i``, ``loss_fn`` is :func:`toy_loss`.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from optzoo.checks import check_int, check_real


class EntropicToy(nn.Module):
    """``V = ½ g(y)|x|²`` with ``D`` transverse dimensions (see the module docstring).

    Args:
        dims: D, the number of transverse coordinates.
        ratio: g at the midpoint over g at the endpoints (the interior curvature excess).

    Example:
        Zero loss along the path ``(y = t, x = 0)``, curvature 1 at the ends and 4 midway;
        released at y = 0.3 with Langevin noise, the path coordinate drifts toward y = 0:

        >>> import torch
        >>> from optzoo.landscape import (EntropicToy, functional_loss, release_dynamics,
        ...                               toy_data, toy_loss, toy_path)
        >>> toy, path = EntropicToy(dims=50, ratio=4.0), toy_path(50)
        >>> toy.g(torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64))
        tensor([1., 4., 1.], dtype=torch.float64)
        >>> data = toy_data(64, 50, noise=0.0)     # (a, dummy targets); noise=0: no SGD noise
        >>> loss = functional_loss(toy, toy_loss)  # loss(flat parameters, inputs, targets)
        >>> float(loss(path(0.3), *data))
        0.0
        >>> out = release_dynamics(toy, toy_loss, path, 0.3, data, steps=300, temperature=1e-3,
        ...                        generator=torch.Generator().manual_seed(0))
        >>> len(out.ys), bool(out.ys[-1] < 0.2)     # y every 15 steps (projection cycles)
        (21, True)
    """

    def __init__(self, dims: int = 50, ratio: float = 4.0) -> None:
        super().__init__()
        check_int("dims", dims, low=1)
        check_real("ratio", ratio, low=0.0, low_open=True)
        self.dims, self.ratio = dims, float(ratio)
        self.y = nn.Parameter(torch.zeros(1, dtype=torch.float64))
        self.x = nn.Parameter(torch.zeros(dims, dtype=torch.float64))

    def g(self, y: torch.Tensor) -> torch.Tensor:
        """Transverse curvature ``g(y) = 1 + (ratio − 1) sin²(πy)``."""
        return 1.0 + (self.ratio - 1.0) * torch.sin(math.pi * y) ** 2

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        """Per-sample losses ``ℓ_i`` for the noise rows ``a`` of shape (n, D): shape (n,)."""
        if a.ndim != 2 or a.shape[1] != self.dims:
            raise ValueError(f"a: expected shape (n, {self.dims}), got {tuple(a.shape)}")
        gy = self.g(self.y)
        return 0.5 * gy * (self.x @ self.x) + torch.sqrt(gy) * (a @ self.x)


def toy_loss(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The mean of the per-sample losses (``targets`` are unused; pass any tensor)."""
    return outputs.mean()


def toy_data(n: int, dims: int, noise: float, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``(a, dummy targets)``: n rows of N(0, noise²) centred to ``Σ_i a_i = 0`` exactly."""
    check_int("n", n, low=2)
    check_int("dims", dims, low=1)
    check_real("noise", noise, low=0.0)
    a = noise * torch.randn(n, dims, generator=torch.Generator().manual_seed(seed),
                            dtype=torch.float64)
    return a - a.mean(0), torch.zeros(n)


def toy_path(dims: int):
    """The path ``t ↦ (y = t, x = 0)`` as flat parameters of :class:`EntropicToy`."""
    check_int("dims", dims, low=1)

    def path(t: float) -> torch.Tensor:
        out = torch.zeros(dims + 1, dtype=torch.float64)
        out[0] = float(t)
        return out

    return path
