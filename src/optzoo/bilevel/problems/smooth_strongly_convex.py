"""Test problem A of the F²SA-p reproduction (Chen, Li, Chayti & Zhang, "Faster Gradient
Methods for Highly-Smooth Stochastic Bilevel Optimization", ICLR 2026, OpenReview XIAta0WOJ6):
a non-quadratic, infinitely smooth, strongly convex lower level::

    g(x, y) = ½‖y‖² + Σ_i log cosh(y_i) − ⟨Bx, y⟩        (∇²_yy g = I + diag sech²(y) ⪰ I)
    f(x, y) = ½‖y − c‖² + 0.1 Σ_i cos(x_i)

Every derivative of f and g in y is Lipschitz to all orders (the paper's Assumption 2.5 for
every p), and because ``log cosh`` is not quadratic, ``y_ν(x) = argmin_y νf + g`` is a
genuinely non-polynomial function of ν — so the finite-difference bias of F²SA-p is O(ν^p)
and not zero.  μ = 1 and L_f = 1 (smoothness of f in y), so the penalised problems
``jν f + g`` stay strongly convex for ``jν > −1``.

Closed forms (they override the autograd defaults; the tests compare both):
``∇_x f = −0.1 sin x``, ``∇_y f = y − c``, ``∇_x g = −Bᵀy``, ``∇_y g = y + tanh y − Bx``,
``∇²_yy g·v = (1 + sech² y) ⊙ v``, ``∇²_xy g·v = −Bᵀv``.  ``y*(x)`` solves the separable
scalar equations ``y_i + tanh y_i = (Bx)_i`` by Newton, and the implicit-function formula
reduces to ``∇Φ(x) = −0.1 sin x + Bᵀ[(y* − c) / (1 + sech² y*)]``.
"""

from __future__ import annotations

import torch

from optzoo.bilevel.problem import BilevelProblem

__all__ = ["FiniteSumSmoothStronglyConvex", "SmoothStronglyConvex"]


class SmoothStronglyConvex(BilevelProblem):
    """Random instance of problem A: ``B`` with N(0, 1/dim_x) entries, ``c`` and ``x0`` N(0, 1).

    Args:
        dim_x, dim_y: dimensions of the upper and lower variables.
        seed: instance seed (B, c, x0).
        dtype: floating dtype of every tensor (float64 by default; the bias test needs it).
    """

    name = "smooth-strongly-convex"

    def __init__(self, dim_x: int = 10, dim_y: int | None = None, *, seed: int = 0,
                 dtype: torch.dtype = torch.float64) -> None:
        dim_y = dim_x if dim_y is None else dim_y
        for name, v in (("dim_x", dim_x), ("dim_y", dim_y)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name}: expected a positive integer, got {v!r}")
        g = torch.Generator().manual_seed(seed)
        self.B = torch.randn(dim_y, dim_x, generator=g, dtype=dtype) / dim_x**0.5
        self.c = torch.randn(dim_y, generator=g, dtype=dtype)
        self._x0 = torch.randn(dim_x, generator=g, dtype=dtype)
        self.dim_x, self.dim_y = dim_x, dim_y
        self.mu, self.L_f = 1.0, 1.0  # strong convexity of g, smoothness of f (both in y)

    # -- objectives ----------------------------------------------------------------------------
    def f(self, x, y, batch=None):
        return 0.5 * ((y - self.c) ** 2).sum() + 0.1 * torch.cos(x).sum()

    def g(self, x, y, batch=None):
        # log cosh(y) = |y| + log1p(exp(−2|y|)) − log 2, stable for large |y|
        a = y.abs()
        logcosh = a + torch.log1p(torch.exp(-2.0 * a)) - torch.log(torch.tensor(2.0,
                                                                                  dtype=y.dtype))
        return 0.5 * (y**2).sum() + logcosh.sum() - y @ (self.B @ x)

    def x0(self):
        return self._x0.clone()

    def y0(self):
        return torch.zeros(self.dim_y, dtype=self.B.dtype)

    # -- closed-form derivatives -----------------------------------------------------------------
    def grad_f(self, x, y, batch=None):
        return -0.1 * torch.sin(x), y - self.c

    def grad_g(self, x, y, batch=None):
        return -(self.B.T @ y), y + torch.tanh(y) - self.B @ x

    def grad_g_y(self, x, y, batch=None):
        return y + torch.tanh(y) - self.B @ x

    def hvp_yy(self, x, y, v, batch=None):
        return (2.0 - torch.tanh(y) ** 2) * v  # 1 + sech² = 2 − tanh²

    def cross_xy(self, x, y, v, batch=None):
        return -(self.B.T @ v)

    # -- exact references ----------------------------------------------------------------------
    def lower_solution(self, x, y_init=None, *, tol=1e-15, max_iter=100):
        """``y*(x)``: Newton on the separable equations ``y + tanh y = Bx`` (h' ∈ [1, 2], so
        Newton from ``Bx/2`` converges globally and quadratically near the root)."""
        b = self.B @ x.detach()
        y = 0.5 * b if y_init is None else y_init.detach().clone()
        for _ in range(max_iter):
            t = torch.tanh(y)
            step = (y + t - b) / (2.0 - t * t)
            y = y - step
            if float(step.abs().max()) <= tol * (1.0 + float(y.abs().max())):
                break
        return y

    def penalized_solution(self, x, weight):
        """``argmin_y weight·f(x, y) + g(x, y)`` for ``weight > −1`` (the F²SA-p node problems):
        the separable equations ``(1 + w) y + tanh y = Bx + w c`` solved by Newton safeguarded
        with bisection on the bracket ``[(b − 1)/(1 + w), (b + 1)/(1 + w)]`` (|tanh| ≤ 1), to
        machine precision."""
        w = float(weight)
        if not w > -1.0:
            raise ValueError(f"weight: expected > -1 (strong convexity of w·f + g), got {w}")
        b = self.B @ x.detach() + w * self.c
        lo, hi = (b - 1.0) / (1.0 + w), (b + 1.0) / (1.0 + w)
        y = b / (2.0 + w)
        for _ in range(200):
            t = torch.tanh(y)
            h = (1.0 + w) * y + t - b
            lo = torch.where(h < 0, y, lo)
            hi = torch.where(h > 0, y, hi)
            new = y - h / (2.0 + w - t * t)
            outside = (new <= lo) | (new >= hi)
            new = torch.where(outside, 0.5 * (lo + hi), new)
            done = torch.equal(new, y) or float((new - y).abs().max()) <= 1e-16 * (
                1.0 + float(y.abs().max()))
            y = new
            if done:
                break
        return y

    def hypergradient(self, x, y=None):
        x = x.detach()
        ys = self.lower_solution(x, y)
        return -0.1 * torch.sin(x) + self.B.T @ ((ys - self.c) / (2.0 - torch.tanh(ys) ** 2))


class FiniteSumSmoothStronglyConvex(SmoothStronglyConvex):
    """Problem A as a finite sum over ``n`` samples, the stochastic setting in which F²SA-p's
    shared minibatches (Alg. 1 line 13, common random numbers) act::

        g(x, y) = (1/n) Σ_i [½‖y‖² + Σ log cosh y − ⟨B_i x, y⟩],
        f(x, y) = (1/n) Σ_i ½‖y − c_i‖² + 0.1 Σ cos x,

    with ``B_i = B + spread·E_i`` and ``c_i = c + spread·e_i`` (E_i with N(0, 1/dim_x) and e_i
    with N(0, 1) entries, centred so that their means are exactly 0): the full-batch problem
    *is* problem A, so ``lower_solution``, ``penalized_solution`` and ``hypergradient`` are
    inherited.  A minibatch is ``batch_size`` sample indices drawn uniformly with replacement
    (an unbiased estimate of every mean).  The sample-dependent ``∇_x g_i = −B_iᵀ y`` is what
    makes shared batches matter: with one batch ζ at every node the finite difference
    ``Σ_j a_j ∇_x g(x, y_j; ζ)/ν = −B_ζᵀ Σ_j a_j y_j/ν`` keeps a noise of order ``spread``,
    while an independent batch per node leaves ``Σ_j a_j (B − B_{ζ_j})ᵀ y_j/ν``, of order
    ``spread·‖y‖/ν``.  With ``spread = 0.2`` and batches of 4 the per-coordinate noise of
    ``∇_y g`` is ≈ 0.1‖x‖/√dim_x, the level of the Gaussian-noise runs.

    Args:
        dim_x, dim_y: dimensions of the upper and lower variables.
        n: number of samples (> 1).
        spread: scale of the per-sample perturbations (> 0).
        seed: instance seed (B, c, x0 as in problem A; then the perturbations).
        dtype: floating dtype.
    """

    name = "smooth-strongly-convex-finite-sum"

    def __init__(self, dim_x: int = 10, dim_y: int | None = None, *, n: int = 256,
                 spread: float = 0.2, seed: int = 0, dtype: torch.dtype = torch.float64) -> None:
        super().__init__(dim_x, dim_y, seed=seed, dtype=dtype)
        if not isinstance(n, int) or isinstance(n, bool) or n < 2:
            raise ValueError(f"n: expected an integer >= 2, got {n!r}")
        if isinstance(spread, bool) or not isinstance(spread, (int, float)) or not (
                0 < spread < float("inf")):
            raise ValueError(f"spread: expected a finite number > 0, got {spread!r}")
        g = torch.Generator().manual_seed(10_007 + seed)
        e_b = torch.randn(n, self.dim_y, self.dim_x, generator=g, dtype=dtype) / self.dim_x**0.5
        e_c = torch.randn(n, self.dim_y, generator=g, dtype=dtype)
        self.Bs = self.B + spread * (e_b - e_b.mean(0))
        self.cs = self.c + spread * (e_c - e_c.mean(0))
        self.n, self.spread = n, float(spread)

    def sample(self, level, batch_size, generator):
        if batch_size is None or batch_size >= self.n:
            return None
        return torch.randint(self.n, (batch_size,), generator=generator)

    def _bc(self, batch) -> tuple[torch.Tensor, torch.Tensor]:
        if batch is None:
            return self.B, self.c
        return self.Bs[batch].mean(0), self.cs[batch].mean(0)

    def f(self, x, y, batch=None):
        cs = self.cs if batch is None else self.cs[batch]
        # the mean of ½‖y − c_i‖² (it differs from ½‖y − mean c‖² by a constant in y)
        return 0.5 * ((y - cs) ** 2).sum(-1).mean() + 0.1 * torch.cos(x).sum()

    def g(self, x, y, batch=None):
        b, _ = self._bc(batch)
        a = y.abs()
        logcosh = a + torch.log1p(torch.exp(-2.0 * a)) - torch.log(torch.tensor(2.0,
                                                                                  dtype=y.dtype))
        return 0.5 * (y**2).sum() + logcosh.sum() - y @ (b @ x)

    def grad_f(self, x, y, batch=None):
        _, c = self._bc(batch)
        return -0.1 * torch.sin(x), y - c

    def grad_g(self, x, y, batch=None):
        b, _ = self._bc(batch)
        return -(b.T @ y), y + torch.tanh(y) - b @ x

    def grad_g_y(self, x, y, batch=None):
        b, _ = self._bc(batch)
        return y + torch.tanh(y) - b @ x

    def cross_xy(self, x, y, v, batch=None):
        b, _ = self._bc(batch)
        return -(b.T @ v)
