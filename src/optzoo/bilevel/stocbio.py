"""stocBiO (Ji, Yang & Liang, "Bilevel Optimization: Convergence Analysis and Enhanced Design",
ICML 2021) and its deterministic parent AID (approximate implicit differentiation), the
Hessian-inverse baselines of UniBiO and F²SA-p.

One outer iteration::

    y ← K steps of SGD on g(x, ·) (step β, warm-started from the previous y)
    v ≈ [∇²_yy g]⁻¹ ∇_y f(x, y)                (Neumann series or conjugate gradient)
    ĝ = ∇_x f(x, y) − ∇²_xy g(x, y) · v
    x ← x − α ĝ

Neumann (stocBiO, Ji et al. Alg. 2): ``v = η Σ_{q=0}^{Q−1} (I − η∇²_yy g)^q ∇_y f`` — Q
Hessian-vector products, each on its own minibatch as in the paper (a product of independent
estimates is an unbiased estimate of the product of expectations).  Conjugate gradient (AID-CG,
Grazzi et al. 2020): Q CG iterations on ``∇²_yy g v = ∇_y f`` with one minibatch shared by all
products (CG needs one fixed linear operator).
"""

from __future__ import annotations

import torch

from optzoo.bilevel.base import BilevelSolver, check_positive
from optzoo.bilevel.problem import Oracle

__all__ = ["StocBiO", "neumann_inverse_hvp", "cg_inverse_hvp"]


def neumann_inverse_hvp(oracle: Oracle, x: torch.Tensor, y: torch.Tensor, b: torch.Tensor, *,
                        eta: float, terms: int, fresh_batches: bool = True) -> torch.Tensor:
    """``η Σ_{q<terms} (I − η∇²_yy g)^q b`` ≈ ``[∇²_yy g]⁻¹ b`` (needs ``η‖∇²_yy g‖ < 2``)."""
    batch = oracle.sample("lower")
    term, total = b.clone(), b.clone()
    for _ in range(terms - 1):
        if fresh_batches:
            batch = oracle.sample("lower")
        term = term - eta * oracle.hvp(x, y, term, batch)
        total = total + term
    return eta * total


def cg_inverse_hvp(oracle: Oracle, x: torch.Tensor, y: torch.Tensor, b: torch.Tensor, *,
                   iters: int, tol: float = 1e-12) -> torch.Tensor:
    """``iters`` conjugate-gradient iterations on ``∇²_yy g v = b`` from ``v = 0``."""
    batch = oracle.sample("lower")
    v = torch.zeros_like(b)
    r = b.clone()
    p = r.clone()
    rr = torch.dot(r, r)
    for _ in range(iters):
        if float(rr.sqrt()) <= tol:
            break
        Ap = oracle.hvp(x, y, p, batch)
        alpha = rr / torch.dot(p, Ap)
        v = v + alpha * p
        r = r - alpha * Ap
        rr_new = torch.dot(r, r)
        p = r + (rr_new / rr) * p
        rr = rr_new
    return v


class StocBiO(BilevelSolver):
    """stocBiO / AID: lower SGD, an inverse-HVP solve, a plain hyper-gradient step.

    Args:
        oracle: the problem's counted oracle (its ``batch_size`` sets the minibatches).
        lr: α, the upper step.
        inner_lr: β, the lower SGD step.
        inner_steps: K, lower SGD steps per outer iteration.
        inverse: ``"neumann"`` (stocBiO) or ``"cg"`` (AID-CG).
        neumann_eta: η of the Neumann series.
        terms: Q, Neumann terms or CG iterations.
        x0, y0: starting points (default: the problem's).
    """

    def __init__(self, oracle: Oracle, *, lr: float = 0.1, inner_lr: float = 0.1,
                 inner_steps: int = 10, inverse: str = "neumann", neumann_eta: float = 0.1,
                 terms: int = 10, x0: torch.Tensor | None = None,
                 y0: torch.Tensor | None = None) -> None:
        super().__init__(oracle, x0, y0)
        if inverse not in ("neumann", "cg"):
            raise ValueError(f"inverse: expected 'neumann' or 'cg', got {inverse!r}")
        self.lr = check_positive("lr", lr)
        self.inner_lr = check_positive("inner_lr", inner_lr)
        self.inner_steps = check_positive("inner_steps", inner_steps, integer=True,
                                          allow_zero=True)
        self.neumann_eta = check_positive("neumann_eta", neumann_eta)
        self.terms = check_positive("terms", terms, integer=True)
        self.inverse = inverse

    def hypergradient(self) -> torch.Tensor:
        """The stochastic hyper-gradient at the current (x, y)."""
        o = self.oracle
        fx, fy = o.grad_f(self.x, self.y, o.sample("upper"))
        if self.inverse == "neumann":
            v = neumann_inverse_hvp(o, self.x, self.y, fy, eta=self.neumann_eta,
                                    terms=self.terms)
        else:
            v = cg_inverse_hvp(o, self.x, self.y, fy, iters=self.terms)
        return fx - o.cross(self.x, self.y, v, o.sample("lower"))

    def step(self) -> None:
        o = self.oracle
        for _ in range(self.inner_steps):
            self.y = self.y - self.inner_lr * o.grad_g_y(self.x, self.y, o.sample("lower"))
        self.x = self.x - self.lr * self.hypergradient()
