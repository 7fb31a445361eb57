"""Reparameterized models and their steepest mirror flows (the analysis side of the paper).

Paper: Jacobs, Zhou & Burkholz, "Never Saddle for Reparameterized Steepest Descent as Mirror
Flow" (ICLR 2026, OpenReview YgudIlQ9nC, arXiv 2603.02064), Sec. 4.  The theorem/lemma numbers
differ between the OpenReview and arXiv versions, so results are cited by content.

Models (run the steepest flow of :mod:`optzoo.optim.steepest_descent` on their factors):

* :class:`HadamardProduct` -- the L = 2 diagonal network ``x = m ⊙ w``;
* :class:`DeepDiagonal` -- the deep diagonal reparameterization ``x = Π_{i=1..L} w_i``
  (entrywise; the paper's proxy for attention's ``K Qᵀ``), with the paper's two inits:
  ``"saddle"`` (``w_1 = 0``, ``w_{i≥2} = λ``, the init of its saddle-escape corollary) and
  ``"balanced"`` (``w_i = α₀``);
* :class:`PowerDifference` -- ``x = u^L - v^L`` (sign freedom; ``u^L`` is a shared-weight power,
  which under sign descent moves ``x`` exactly like L balanced factors, and under gradient
  descent like L balanced factors with time scaled by L).

Flows (derived here for ``x = u ⊙ v`` from the factor flow ``dw/dt = -sign(∇_w f)|∇_w f|^{q-1}
- α w``; they are the paper's statements):

* λ-L_p balance (paper's balance lemma): ``d(|u|^q - |v|^q)/dt = -q α (|u|^q - |v|^q)``, so the
  imbalance decays as ``exp(-q ∫α)`` and is conserved without weight decay (:func:`balance`).
* Steepest mirror flow, L = 2 (paper's mirror-flow theorem): with ``λ = |u_0|^q - |v_0|^q``,
  ``dx/dt = -(|u|^q + |v|^q) sign(g)|g|^{q-1} - 2αx`` and ``(|u|^q + |v|^q)² = 4|x|^q + λ²``,
  i.e. ``d∇R(x)/dt = -sign(g)|g|^{q-1}`` with ``∇²R(x) = 1/sqrt(4|x|^q + λ²)`` (:func:`metric`,
  :func:`grad_R`, :func:`integrate_mirror_flow`).
* Deep balanced flow (λ = 0): ``dx/dt = -L |x|^{m} sign(g)|g|^{q-1}`` with metric exponent
  ``m = q(L-1)/L`` (:func:`metric_exponent`); R is a valid Legendre function only for
  ``m ≤ 1`` (:func:`is_legendre`): for q = 2 only L = 2, for q = 1 every L.
* Decoupled weight decay with balanced init acts as the regularizer
  ``L/(L(2-q)+q) Σ |x_i|^{2 - q(L-1)/L}`` (paper's Table 1; :func:`decoupled_wd_regularizer`):
  L1 for GD with L = 2, L_{3/2} for sign descent with L = 2.

:func:`integrate_mirror_flow` integrates the x-space form ``dx/dt = ∇²R(x)^{-1} · d∇R/dt``
(equivalent by the chain rule, and smooth where ``∇R`` has no closed form) with
``scipy.integrate.solve_ivp``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from scipy import integrate

__all__ = [
    "HadamardProduct", "DeepDiagonal", "PowerDifference", "balance", "metric", "grad_R",
    "mirror_velocity", "integrate_mirror_flow", "metric_exponent", "is_legendre",
    "deep_balanced_velocity", "decoupled_wd_regularizer",
]


def _check_depth(depth: int) -> int:
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"depth: expected an integer >= 1, got {depth!r}")
    return depth


# -- models ----------------------------------------------------------------------------------

class HadamardProduct(torch.nn.Module):
    """The L = 2 diagonal network ``x = m ⊙ w``.

    Args:
        m0, w0: initial factors (same shape); copied into parameters ``m`` and ``w``.
    """

    def __init__(self, m0: torch.Tensor, w0: torch.Tensor):
        super().__init__()
        if m0.shape != w0.shape:
            raise ValueError(f"w0: expected the shape of m0 {tuple(m0.shape)}, "
                             f"got {tuple(w0.shape)}")
        self.m = torch.nn.Parameter(m0.detach().clone())
        self.w = torch.nn.Parameter(w0.detach().clone())

    def forward(self) -> torch.Tensor:
        return self.m * self.w


class DeepDiagonal(torch.nn.Module):
    """The deep diagonal reparameterization ``x = Π_{i=1..L} w_i`` (entrywise).

    Args:
        dim: length k of x.
        depth: number of factors L (≥ 1).
        scale: λ (``"saddle"``) or α₀ (``"balanced"``).
        init: ``"saddle"`` -- ``w_1 = 0``, ``w_{i≥2} = scale`` (the paper's saddle init);
            ``"balanced"`` -- every ``w_i = scale``.
        dtype: parameter dtype.
    """

    def __init__(self, dim: int, depth: int, scale: float, init: str = "balanced",
                 dtype: torch.dtype = torch.float64):
        super().__init__()
        _check_depth(depth)
        if init not in ("saddle", "balanced"):
            raise ValueError(f"init: expected 'saddle' or 'balanced', got {init!r}")
        if not scale > 0:
            raise ValueError(f"scale: expected > 0 (all-zero factors are stationary for every "
                             f"method), got {scale!r}")
        self.depth = depth
        self.factors = torch.nn.ParameterList(
            torch.nn.Parameter(torch.full((dim,), 0.0 if (init == "saddle" and i == 0)
                                          else float(scale), dtype=dtype))
            for i in range(depth))

    def forward(self) -> torch.Tensor:
        x = self.factors[0]
        for w in self.factors[1:]:
            x = x * w
        return x


class PowerDifference(torch.nn.Module):
    """``x = u^L - v^L`` (entrywise), a sign-free deep diagonal model.

    Args:
        u0, v0: initial u and v (same shape).
        depth: the power L (≥ 1).
    """

    def __init__(self, u0: torch.Tensor, v0: torch.Tensor, depth: int):
        super().__init__()
        if u0.shape != v0.shape:
            raise ValueError(f"v0: expected the shape of u0 {tuple(u0.shape)}, "
                             f"got {tuple(v0.shape)}")
        self.depth = _check_depth(depth)
        self.u = torch.nn.Parameter(u0.detach().clone())
        self.v = torch.nn.Parameter(v0.detach().clone())

    def forward(self) -> torch.Tensor:
        return self.u ** self.depth - self.v ** self.depth


def balance(wi: torch.Tensor, wj: torch.Tensor, q: float) -> torch.Tensor:
    """The λ-L_p balance quantity ``|w_i|^q - |w_j|^q`` (conserved by the steepest flow without
    weight decay, decaying as ``exp(-q∫α)`` with decoupled weight decay α)."""
    return wi.abs() ** q - wj.abs() ** q


# -- the L = 2 steepest mirror flow ----------------------------------------------------------

def _check_q(q: float) -> float:
    if not 1.0 <= q <= 2.0:
        raise ValueError(f"q: expected a value in [1, 2], got {q!r}")
    return float(q)


def metric(x: np.ndarray, lam: np.ndarray | float, q: float) -> np.ndarray:
    """``∇²R(x) = 1 / sqrt(4|x|^q + λ²)`` (diagonal), the L = 2 steepest mirror map's Hessian."""
    _check_q(q)
    x = np.asarray(x, dtype=float)
    return 1.0 / np.sqrt(4.0 * np.abs(x) ** q + np.asarray(lam, dtype=float) ** 2)


def grad_R(x: np.ndarray, lam: np.ndarray | float, q: float) -> np.ndarray:
    """``∇R(x) = ∫_0^x dz / sqrt(4|z|^q + λ²)`` (the mirror map, normalised ``∇R(0) = 0``).

    Closed forms: q = 2 gives ``½ asinh(2x/|λ|)`` (the hyperbolic entropy of Woodworth et al.);
    q = 1 gives ``½ sign(x) (sqrt(4|x| + λ²) - |λ|)``; other q use ``scipy.integrate.quad``.
    Requires ``λ ≠ 0`` for q = 2 (λ = 0 is the entropy case, unbounded at 0).
    """
    _check_q(q)
    x = np.asarray(x, dtype=float)
    lam = np.broadcast_to(np.abs(np.asarray(lam, dtype=float)), x.shape)
    if q == 2.0:
        if np.any(lam == 0):
            raise ValueError("lam: q = 2 needs a nonzero imbalance λ (λ = 0: entropy mirror map)")
        return 0.5 * np.arcsinh(2.0 * x / lam)
    if q == 1.0:
        return 0.5 * np.sign(x) * (np.sqrt(4.0 * np.abs(x) + lam**2) - lam)
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape):
        val, _ = integrate.quad(lambda z, l_=lam[idx]: 1.0 / np.sqrt(4 * z**q + l_**2),
                                0.0, abs(x[idx]))
        out[idx] = np.sign(x[idx]) * val
    return out


def _direction(g: np.ndarray, q: float) -> np.ndarray:
    return np.sign(g) * np.abs(g) ** (q - 1.0) if q != 1.0 else np.sign(g)


def mirror_velocity(x: np.ndarray, g: np.ndarray, lam: np.ndarray | float, q: float,
                    weight_decay: float = 0.0) -> np.ndarray:
    """``dx/dt = -sqrt(4|x|^q + λ²) sign(g)|g|^{q-1} - 2αx`` for ``x = u ⊙ v`` (L = 2), i.e.
    ``d∇R(x)/dt = -sign(g)|g|^{q-1}`` plus the decoupled decay ``-α`` on each factor."""
    _check_q(q)
    x = np.asarray(x, dtype=float)
    return -_direction(np.asarray(g, dtype=float), q) / metric(x, lam, q) \
        - 2.0 * weight_decay * x


def integrate_mirror_flow(grad_fn: Callable[[np.ndarray], np.ndarray], x0: np.ndarray,
                          lam: np.ndarray | float, q: float, t_eval: np.ndarray,
                          weight_decay: float = 0.0, stop_at_sign_change: bool | None = None,
                          sign_eps: float = 0.0, method: str = "RK45",
                          rtol: float = 1e-8, atol: float = 1e-10
                          ) -> tuple[np.ndarray, np.ndarray]:
    """Integrate the L = 2 steepest mirror flow from ``x0``; return ``(t, x(t))``.

    For ``q < 2`` the right-hand side ``sign(g)|g|^{q-1}`` is discontinuous (q = 1) or
    non-Lipschitz (1 < q < 2) where a gradient coordinate vanishes: there the flow enters a
    sliding regime which the discrete method only shadows within ±lr, the paper's mirror-flow
    statement holds "almost everywhere", and an adaptive integrator would chatter.  By default
    (``stop_at_sign_change=None`` -> ``q < 2``) integration therefore stops at the first time a
    coordinate of ``∇f`` changes sign (a terminal ``solve_ivp`` event), and only the ``t_eval``
    times reached are returned.

    Args:
        grad_fn: ``x -> ∇_x f(x)`` (NumPy in, NumPy out).
        x0: initial ``x = u_0 ⊙ v_0`` (shape (k,)).
        lam: initial imbalance ``|u_0|^q - |v_0|^q`` (scalar or shape (k,)); with decoupled
            weight decay α it decays as ``λ exp(-qαt)`` (the balance lemma).
        q: steepest-flow exponent in [1, 2].
        t_eval: increasing times ≥ 0 (time = lr × steps of the discrete method).
        weight_decay: decoupled weight decay α on the factors.
        stop_at_sign_change: see above.

    Returns:
        ``t`` (the reached prefix of ``t_eval``) and ``x`` of shape ``(len(t), k)``.
    """
    _check_q(q)
    t_eval = np.asarray(t_eval, dtype=float)
    if t_eval.ndim != 1 or t_eval.size == 0 or np.any(np.diff(t_eval) < 0) or t_eval[0] < 0:
        raise ValueError("t_eval: expected a non-empty increasing 1-D array of times >= 0")
    lam0 = np.asarray(lam, dtype=float)
    x0 = np.asarray(x0, dtype=float)
    if stop_at_sign_change is None:
        stop_at_sign_change = q < 2.0

    def rhs(t: float, x: np.ndarray) -> np.ndarray:
        lam_t = lam0 * np.exp(-q * weight_decay * t)
        g = grad_fn(x)
        if sign_eps > 0.0:  # regularised (Filippov) sign: sign(g) -> tanh(g/eps)
            g = np.tanh(g / sign_eps) * np.abs(g) ** (q - 1.0)
            return -g / metric(x, lam_t, q) - 2.0 * weight_decay * x
        return mirror_velocity(x, g, lam_t, q, weight_decay)

    events = None
    if stop_at_sign_change:
        s0 = np.sign(grad_fn(x0))

        def flip(t: float, x: np.ndarray) -> float:
            return float(np.min(s0 * grad_fn(x)))

        flip.terminal = True
        events = flip
    sol = integrate.solve_ivp(rhs, (0.0, float(t_eval[-1])), x0, t_eval=t_eval, rtol=rtol,
                              atol=atol, method=method, events=events)
    if sol.status < 0:
        raise RuntimeError(f"integrate_mirror_flow: solve_ivp failed: {sol.message}")
    return sol.t, np.asarray(sol.y, dtype=float).reshape(x0.size, -1).T


# -- depth L ---------------------------------------------------------------------------------

def metric_exponent(q: float, depth: int) -> float:
    """``m = q(L-1)/L``: the balanced deep flow is ``dx/dt = -L|x|^m sign(g)|g|^{q-1}``."""
    return _check_q(q) * (_check_depth(depth) - 1) / depth


def is_legendre(q: float, depth: int) -> bool:
    """Whether the balanced (λ = 0) mirror map is a valid Legendre/Bregman function (m ≤ 1)."""
    return metric_exponent(q, depth) <= 1.0 + 1e-12


def deep_balanced_velocity(x: np.ndarray, g: np.ndarray, q: float, depth: int) -> np.ndarray:
    """``dx/dt = -L |x|^{q(L-1)/L} sign(g)|g|^{q-1}`` for balanced ``x = Π w_i`` (λ = 0)."""
    m = metric_exponent(q, depth)
    return -depth * np.abs(np.asarray(x, dtype=float)) ** m * _direction(np.asarray(g), q)


def decoupled_wd_regularizer(x: np.ndarray, q: float, depth: int) -> float:
    """``L/(L(2-q)+q) Σ|x_i|^{2 - q(L-1)/L}``: the on-manifold regularizer that decoupled weight
    decay α induces for balanced ``x = Π w_i`` (paper's Table 1), up to the factor ``α·L``
    (balanced flow: ``d∇R/dt = -sign(g)|g|^{q-1} - Lα x|x|^{-m}``)."""
    m = metric_exponent(q, depth)
    return float(depth / (depth * (2.0 - q) + q) * np.sum(np.abs(x) ** (2.0 - m)))
