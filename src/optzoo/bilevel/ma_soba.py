"""MA-SOBA — Chen, Xu & Zhang, "Optimal Algorithms for Stochastic Bilevel Optimization under
Relaxed Smoothness Conditions" (2023, arXiv 2306.12067): SOBA (Dagréou et al. 2022) with a
moving average of the hyper-gradient estimates; a baseline of UniBiO (ICLR 2026, OpenReview
dJgb3ngAvT).

One iteration, all estimates at (x_t, y_t, z_t) on fresh minibatches::

    D_y = ∇_y g,    D_z = ∇²_yy g · z − ∇_y f,    D_x = ∇_x f − ∇²_xy g · z
    y_{t+1} = y_t − γ D_y,    z_{t+1} = z_t − ν D_z,    h_{t+1} = β h_t + (1 − β) D_x
    x_{t+1} = x_t − α h_{t+1}

z tracks ``[∇²_yy g]⁻¹ ∇_y f`` by one SGD step per iteration on ``½zᵀ∇²g z − ⟨∇f, z⟩``.  The
paper projects z onto a ball; this is unconstrained (``z_radius`` restores the projection).
Defaults are UniBiO's ``main.py`` settings for MA-SOBA (α = 1e-2, γ = 1e-2, ν = 1e-2,
β = 0.9 ⇒ averaging weight θ = 1 − β = 0.1).  Reading of that code (``methods/ma_soba.py``,
read, not copied): it evaluates the z update's ∇f after the y step and takes the x step with the
freshly averaged h; we evaluate every estimate at (x_t, y_t, z_t) as in the paper's Alg. 1 and,
like the code, step x with h_{t+1}; z starts at 0 (the code: Xavier-random).
"""

from __future__ import annotations

import torch

from optzoo.bilevel.base import BilevelSolver, check_positive
from optzoo.bilevel.problem import Oracle
from optzoo.bilevel.unibio import project_ball

__all__ = ["MASOBA"]


class MASOBA(BilevelSolver):
    """Moving-average SOBA.

    Args:
        oracle: the problem's counted oracle.
        lr: α, the upper step.
        inner_lr: γ, the lower SGD step.
        z_lr: ν, the step of the linear-system variable z.
        beta: β, the moving-average factor of the hyper-gradient (θ = 1 − β).
        z_radius: radius of the ball z is projected on (None: no projection).
        x0, y0: starting points (default: the problem's).
    """

    def __init__(self, oracle: Oracle, *, lr: float = 1e-2, inner_lr: float = 1e-2,
                 z_lr: float = 1e-2, beta: float = 0.9, z_radius: float | None = None,
                 x0: torch.Tensor | None = None, y0: torch.Tensor | None = None) -> None:
        super().__init__(oracle, x0, y0)
        self.lr = check_positive("lr", lr)
        self.inner_lr = check_positive("inner_lr", inner_lr)
        self.z_lr = check_positive("z_lr", z_lr)
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not 0 <= beta < 1:
            raise ValueError(f"beta: expected a moving-average factor in [0, 1), got {beta!r}")
        self.beta = float(beta)
        self.z_radius = None if z_radius is None else check_positive("z_radius", z_radius)
        self.z = torch.zeros_like(self.y)
        self.h = torch.zeros_like(self.x)

    def step(self) -> None:
        o, x, y, z = self.oracle, self.x, self.y, self.z
        d_y = o.grad_g_y(x, y, o.sample("lower"))
        fx, fy = o.grad_f(x, y, o.sample("upper"))
        d_z = o.hvp(x, y, z, o.sample("lower")) - fy
        d_x = fx - o.cross(x, y, z, o.sample("lower"))
        self.y = y - self.inner_lr * d_y
        z = z - self.z_lr * d_z
        self.z = z if self.z_radius is None else project_ball(z, torch.zeros_like(z),
                                                              self.z_radius)
        self.h = self.beta * self.h + (1.0 - self.beta) * d_x
        self.x = x - self.lr * self.h
