"""Bilevel problems whose lower level is uniformly convex of order p but not strongly convex
(p > 2): the synthetic problems of UniBiO (Wu, Gong, Hao & Liu, "Bilevel Optimization with
Lower-Level Uniform Convexity: Theory and Algorithm", ICLR 2026, OpenReview dJgb3ngAvT).

Both lower levels are ``(1/p)Σ|y_i|^p − ⟨c(x), y⟩``: the lower gradient is
``[y]^{∘(p−1)} − c(x)`` with the *signed* power ``[y]^{∘(p−1)} = sign(y)|y|^{p−1}`` (valid for
odd p as well; the paper's script writes ``y**p``, which is only convex for even p), the lower
Hessian ``diag((p−1)|y|^{p−2})`` is singular at y = 0 for p > 2, and ``y*(x) = [c(x)]^{∘1/(p−1)}``.

* :class:`UniformlyConvexSynthetic` — vector problem "A" of the reproduction brief
  (designed for the reproduction, not in the paper)::

      g(x, y) = (1/p) Σ|y_i|^p − ⟨Bx, y⟩,     f(x, y) = ½‖[y]^{∘(p−1)} − b‖²,
      y*(x) = [Bx]^{∘1/(p−1)},   Φ(x) = ½‖Bx − b‖²,   ∇Φ(x) = Bᵀ(Bx − b).

  ∇_y f and ∇²_yy g share the factor (p−1)|y|^{p−2}, which cancels in the implicit formula, so
  Φ is smooth although y* is only Hölder.  B is square with singular values in [s_min, s_max]
  and the first ``zeros`` entries of b are 0: at the minimiser x* = B⁻¹b those lower
  coordinates sit exactly at the degenerate point y_i = 0.

* :class:`ScalarUniformlyConvex` — the paper's synthetic (its §6 / ``synthetic_exp.py``)::

      g(x, y) = |y|^p/p − y sin x,      f(x, y) = sin(clip([y]^{∘(p−1)}, ±π/2)),
      y*(x) = [sin x]^{∘1/(p−1)},   Φ(x) = sin(sin x),   ∇Φ(x) = cos x · cos(sin x).

  (The script writes f piecewise: ±1 beyond |y| = (π/2)^{1/(p−1)}, sin(y^{p−1}) inside — the
  clip.)  Its stochastic oracle follows the script: Gaussian noise of std ``lower_noise`` on
  the lower gradient and of std ``upper_noise`` on every hyper-gradient ingredient (∇f, HVP,
  cross product; the script adds N(0, 0.01²) to its closed-form hyper-gradient).  The noise is
  drawn by :meth:`sample` — one batch is one draw — so an :class:`~optzoo.bilevel.Oracle` with
  ``noise=0`` and a generator gives the paper's oracle.

All derivative methods are closed forms (overriding the autograd defaults, for speed — the
tests compare them with the defaults), as are ``lower_solution``, ``hypergradient`` and ``phi``.
"""

from __future__ import annotations

import math

import torch

from optzoo.bilevel.problem import BilevelProblem

__all__ = ["ScalarUniformlyConvex", "UniformlyConvexSynthetic", "signed_power"]


def signed_power(t: torch.Tensor, e: float) -> torch.Tensor:
    """``sign(t)|t|^e`` elementwise (the odd extension of the power)."""
    # Tensor.pow, not ``**``: the same kernel without the operator's Python wrapper (a hot
    # path: it runs in every lower-gradient call)
    return torch.sign(t) * t.abs().pow(e)


def _check_p(p) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 2 <= p < math.inf:
        raise ValueError(f"p: expected a uniform-convexity order >= 2, got {p!r}")
    return float(p)


def _curvature(y: torch.Tensor, p: float) -> torch.Tensor:
    """``(p−1)|y|^{p−2}``: the lower Hessian's diagonal (1 everywhere at p = 2)."""
    return (p - 1.0) * y.abs().pow(p - 2.0)


class UniformlyConvexSynthetic(BilevelProblem):
    """Vector problem A: ``g = (1/p)Σ|y_i|^p − ⟨Bx, y⟩``, ``f = ½‖[y]^{∘(p−1)} − b‖²``.

    Args:
        p: uniform-convexity order (≥ 2).
        dim: dimension of x and of y (B is square).
        zeros: how many entries of b are 0 (lower coordinates degenerate at the optimum).
        s_min, s_max: extreme singular values of B.
        scale: standard deviation of the entries of b and of the start x0 (0.5 keeps
            |Bx| ≲ 1, the range |sin x| ≤ 1 of the paper's scalar problem for which the
            Epoch-SGD constants γ1 = 1, D1 = 1 were set: for |y| > 1 the lower curvature
            (p−1)|y|^{p−2} makes γ = 1 unstable).
        seed: instance seed (B, b and the starting point x0).
    """

    def __init__(self, p: float = 4.0, dim: int = 20, *, zeros: int = 5, s_min: float = 0.5,
                 s_max: float = 1.0, scale: float = 0.5, seed: int = 0,
                 dtype: torch.dtype = torch.float64) -> None:
        self.p = _check_p(p)
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim: expected an integer >= 1, got {dim!r}")
        if not isinstance(zeros, int) or not 0 <= zeros <= dim:
            raise ValueError(f"zeros: expected an integer in [0, dim], got {zeros!r}")
        if not scale > 0:
            raise ValueError(f"scale: expected > 0, got {scale!r}")
        if not 0 < s_min <= s_max:
            raise ValueError(f"s_min, s_max: expected 0 < s_min <= s_max, got {s_min}, {s_max}")
        g = torch.Generator().manual_seed(seed)
        u, _ = torch.linalg.qr(torch.randn(dim, dim, generator=g, dtype=dtype))
        v, _ = torch.linalg.qr(torch.randn(dim, dim, generator=g, dtype=dtype))
        self.B = u @ torch.diag(torch.linspace(s_max, s_min, dim, dtype=dtype)) @ v.T
        self.b = scale * torch.randn(dim, generator=g, dtype=dtype)
        self.b[:zeros] = 0.0
        self._x0 = scale * torch.randn(dim, generator=g, dtype=dtype)
        self.dim = dim
        self.name = f"uc-vector-p{self.p:g}"

    def f(self, x, y, batch=None):
        return 0.5 * ((signed_power(y, self.p - 1.0) - self.b) ** 2).sum()

    def g(self, x, y, batch=None):
        return (y.abs() ** self.p).sum() / self.p - y @ (self.B @ x)

    def x0(self):
        return self._x0.clone()

    def y0(self):
        return torch.zeros(self.dim, dtype=self.B.dtype)

    # closed-form derivatives
    def grad_f(self, x, y, batch=None):
        fy = (signed_power(y, self.p - 1.0) - self.b) * _curvature(y, self.p)
        return torch.zeros_like(x), fy

    def grad_g(self, x, y, batch=None):
        return -self.B.T @ y, self.grad_g_y(x, y, batch)

    def grad_g_y(self, x, y, batch=None):
        return signed_power(y, self.p - 1.0) - self.B @ x

    def hvp_yy(self, x, y, v, batch=None):
        return _curvature(y, self.p) * v

    def cross_xy(self, x, y, v, batch=None):
        return -self.B.T @ v

    def lower_solution(self, x, y_init=None, **kwargs):
        return signed_power(self.B @ x.detach(), 1.0 / (self.p - 1.0))

    def hypergradient(self, x, y=None):
        return self.B.T @ (self.B @ x.detach() - self.b)

    def phi(self, x, y=None):
        return 0.5 * float(((self.B @ x.detach() - self.b) ** 2).sum())

    def x_star(self) -> torch.Tensor:
        """The minimiser of Φ, ``B⁻¹b`` (Φ(x*) = 0)."""
        return torch.linalg.solve(self.B, self.b)


class ScalarUniformlyConvex(BilevelProblem):
    """The paper's synthetic: ``g = |y|^p/p − y sin x``, ``f = sin(clip(sign(y)|y|^{p−1}))``.

    Args:
        p: uniform-convexity order (≥ 2).
        lower_noise: std of the Gaussian noise on ∇g (the script's ``noise_rate``).
        upper_noise: std of the Gaussian noise on ∇f, HVPs and cross products (the script's
            hyper-gradient noise 0.01).
        x0, y0: starting point (the script's 1, 1).
    """

    def __init__(self, p: float = 2.0, *, lower_noise: float = 0.0, upper_noise: float = 0.01,
                 x0: float = 1.0, y0: float = 1.0, dtype: torch.dtype = torch.float64) -> None:
        self.p = _check_p(p)
        for name, val in (("lower_noise", lower_noise), ("upper_noise", upper_noise)):
            if not isinstance(val, (int, float)) or not 0 <= val < math.inf:
                raise ValueError(f"{name}: expected a standard deviation >= 0, got {val!r}")
        self.lower_noise, self.upper_noise = float(lower_noise), float(upper_noise)
        self._x0 = torch.tensor([float(x0)], dtype=dtype)
        self._y0 = torch.tensor([float(y0)], dtype=dtype)
        self.name = f"uc-scalar-p{self.p:g}"

    def sample(self, level, batch_size, generator):
        """One noise draw (two standard normals) for the next oracle call; None when
        noise-free."""
        if self.lower_noise == 0.0 and self.upper_noise == 0.0:
            return None
        return torch.randn(2, generator=generator, dtype=self._x0.dtype)

    def _h(self, y):
        return signed_power(y, self.p - 1.0)

    def f(self, x, y, batch=None):
        return torch.sin(self._h(y).clamp(-math.pi / 2, math.pi / 2)).sum()

    def g(self, x, y, batch=None):
        return ((y.abs() ** self.p) / self.p - y * torch.sin(x)).sum()

    def x0(self):
        return self._x0.clone()

    def y0(self):
        return self._y0.clone()

    @staticmethod
    def _noise(batch, sd: float, row: int) -> torch.Tensor | float:
        return 0.0 if batch is None or sd == 0.0 else sd * batch[row:row + 1]

    def grad_f(self, x, y, batch=None):
        h = self._h(y)
        inside = (h.abs() < math.pi / 2).to(y.dtype)  # the script's f is flat beyond the clip
        fy = torch.cos(h) * _curvature(y, self.p) * inside
        return (torch.zeros_like(x) + self._noise(batch, self.upper_noise, 0),
                fy + self._noise(batch, self.upper_noise, 1))

    def grad_g(self, x, y, batch=None):
        gx = -y * torch.cos(x) + self._noise(batch, self.lower_noise, 1)
        return gx, self.grad_g_y(x, y, batch)

    def grad_g_y(self, x, y, batch=None):
        return self._h(y) - torch.sin(x) + self._noise(batch, self.lower_noise, 0)

    def hvp_yy(self, x, y, v, batch=None):
        return _curvature(y, self.p) * v + self._noise(batch, self.upper_noise, 0)

    def cross_xy(self, x, y, v, batch=None):
        return -torch.cos(x) * v + self._noise(batch, self.upper_noise, 1)

    def lower_solution(self, x, y_init=None, **kwargs):
        return signed_power(torch.sin(x.detach()), 1.0 / (self.p - 1.0))

    def hypergradient(self, x, y=None):
        x = x.detach()
        return torch.cos(x) * torch.cos(torch.sin(x))

    def phi(self, x, y=None):
        return float(torch.sin(torch.sin(x.detach())).sum())
