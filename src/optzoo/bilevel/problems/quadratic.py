"""A quadratic bilevel problem with everything in closed form — the reference the solvers'
tests use::

    g(x, y) = ½ yᵀAy − yᵀBx,                 y*(x) = A⁻¹Bx      (A ≻ 0: μ-strongly convex)
    f(x, y) = ½‖y − c‖² + ½ρ‖x‖²,            Φ(x) = ½‖A⁻¹Bx − c‖² + ½ρ‖x‖²
    ∇Φ(x) = BᵀA⁻¹(A⁻¹Bx − c) + ρx.
"""

from __future__ import annotations

import torch

from optzoo.bilevel.problem import BilevelProblem

__all__ = ["QuadraticBilevel"]


class QuadraticBilevel(BilevelProblem):
    """Random instance: ``A = QΛQᵀ`` with eigenvalues in ``[mu, L]``, Gaussian ``B`` and ``c``.

    Args:
        dim_x, dim_y: dimensions.
        mu, L: extreme eigenvalues of A (condition number L/mu).
        rho: upper-level ridge ρ.
        seed: instance seed.
    """

    name = "quadratic"

    def __init__(self, dim_x: int = 5, dim_y: int = 8, *, mu: float = 0.5, L: float = 2.0,
                 rho: float = 0.1, seed: int = 0, dtype: torch.dtype = torch.float64) -> None:
        if dim_x < 1 or dim_y < 1:
            raise ValueError(f"dim_x, dim_y: expected >= 1, got {dim_x}, {dim_y}")
        if not 0 < mu <= L:
            raise ValueError(f"mu, L: expected 0 < mu <= L, got {mu}, {L}")
        g = torch.Generator().manual_seed(seed)
        q, _ = torch.linalg.qr(torch.randn(dim_y, dim_y, generator=g, dtype=dtype))
        eig = torch.linspace(mu, L, dim_y, dtype=dtype)
        self.A = q @ torch.diag(eig) @ q.T
        self.B = torch.randn(dim_y, dim_x, generator=g, dtype=dtype) / dim_x**0.5
        self.c = torch.randn(dim_y, generator=g, dtype=dtype)
        self.rho = float(rho)
        self._x0 = torch.randn(dim_x, generator=g, dtype=dtype)
        self.dim_x, self.dim_y = dim_x, dim_y

    def f(self, x, y, batch=None):
        return 0.5 * ((y - self.c) ** 2).sum() + 0.5 * self.rho * (x**2).sum()

    def g(self, x, y, batch=None):
        return 0.5 * y @ (self.A @ y) - y @ (self.B @ x)

    def x0(self):
        return self._x0.clone()

    def y0(self):
        return torch.zeros(self.dim_y, dtype=self.A.dtype)

    def lower_solution(self, x, y_init=None, **kwargs):
        return torch.linalg.solve(self.A, self.B @ x.detach())

    def hypergradient(self, x, y=None):
        x = x.detach()
        return self.B.T @ torch.linalg.solve(self.A, self.lower_solution(x) - self.c) + self.rho * x

    def x_star(self) -> torch.Tensor:
        """The minimiser of Φ: ``(MᵀM + ρI) x = Mᵀc`` with ``M = A⁻¹B``."""
        M = torch.linalg.solve(self.A, self.B)
        eye = torch.eye(self.dim_x, dtype=M.dtype)
        return torch.linalg.solve(M.T @ M + self.rho * eye, M.T @ self.c)
