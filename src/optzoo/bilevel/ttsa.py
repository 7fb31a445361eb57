"""TTSA — Hong, Wai, Wang & Yang, "A Two-Timescale Stochastic Algorithm Framework for Bilevel
Optimization: Complexity Analysis and Application to Actor-Critic", SIAM J. Optim. 2023
(arXiv 2007.05170); a baseline of UniBiO (ICLR 2026, OpenReview dJgb3ngAvT).

One iteration (paper Alg. 1, unconstrained x)::

    y_{k+1} = y_k − β ∇_y g(x_k, y_k; ζ)                       (one SGD step, the fast scale)
    h_k = ∇_x f(x_k, y_{k+1}) − ∇²_xy g · v,
          v = Q η_N Π_{i=1}^{q} (I − η_N ∇²_yy g(·; ζ_i)) ∇_y f,   q ~ Uniform{0, …, Q−1}
    x_{k+1} = x_k − α h_k                                        (the slow scale)

The randomly truncated product (Hong et al. eq. 10, with η_N = 1/L_g) is an unbiased estimate
of the Q-term Neumann series ``η_N Σ_{q<Q} (I − η_N ∇²g)^q ∇_y f`` at a cost of q HVPs.
Defaults are UniBiO's ``main.py`` settings for TTSA (α = 1e-3, β = 2e-2, one lower step,
η_N = 1e-2, Q = 3).  DEVIATION from that code (read, not copied): its ``methods/ttsa.py``
indexes ``(I − η_N H)^{q+1}`` with q ∈ {0..Q−1} and omits the factor Q; we follow the paper's
estimator (factor Q, q ∈ {0..Q−1}).
"""

from __future__ import annotations

import torch

from optzoo.bilevel.base import BilevelSolver, check_positive
from optzoo.bilevel.problem import Oracle

__all__ = ["TTSA"]


class TTSA(BilevelSolver):
    """Two-timescale stochastic approximation with a randomly truncated Neumann series.

    Args:
        oracle: the problem's counted oracle.
        lr: α, the upper step.
        inner_lr: β, the lower SGD step.
        inner_steps: lower SGD steps per iteration (1 in the paper).
        neumann_eta: η_N (1/L_g in the paper).
        terms: Q, the truncation level (0 … Q−1 HVPs per estimate).
        generator: RNG of the truncation index (default: the oracle's).
        x0, y0: starting points (default: the problem's).
    """

    def __init__(self, oracle: Oracle, *, lr: float = 1e-3, inner_lr: float = 2e-2,
                 inner_steps: int = 1, neumann_eta: float = 1e-2, terms: int = 3,
                 generator: torch.Generator | None = None, x0: torch.Tensor | None = None,
                 y0: torch.Tensor | None = None) -> None:
        super().__init__(oracle, x0, y0)
        self.lr = check_positive("lr", lr)
        self.inner_lr = check_positive("inner_lr", inner_lr)
        self.inner_steps = check_positive("inner_steps", inner_steps, integer=True)
        self.neumann_eta = check_positive("neumann_eta", neumann_eta)
        self.terms = check_positive("terms", terms, integer=True)
        self.generator = generator if generator is not None else oracle.generator

    def hypergradient(self) -> torch.Tensor:
        """The randomly truncated hyper-gradient estimate at the current (x, y)."""
        o = self.oracle
        fx, fy = o.grad_f(self.x, self.y, o.sample("upper"))
        q = int(torch.randint(self.terms, (1,), generator=self.generator))
        v = fy
        for _ in range(q):
            v = v - self.neumann_eta * o.hvp(self.x, self.y, v, o.sample("lower"))
        v = self.terms * self.neumann_eta * v
        return fx - o.cross(self.x, self.y, v, o.sample("lower"))

    def step(self) -> None:
        o = self.oracle
        for _ in range(self.inner_steps):
            self.y = self.y - self.inner_lr * o.grad_g_y(self.x, self.y, o.sample("lower"))
        self.x = self.x - self.lr * self.hypergradient()
