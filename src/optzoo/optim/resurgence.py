"""Asymptotic series of ``Z(g) = ∫ exp(−L(θ)/g) dθ`` and their Borel singularities: the analysis
phase of SURGE, Bu, "Globally Aware Optimization with Resurgence" (ICLR 2026, OpenReview
dhnyoea2Qj, arXiv 2509.01329).  The optimization phase (the learning-rate rule) is
:mod:`optzoo.optim.surge`.

The paper (§2.3, "critical point correspondence") states that the critical values ``L(θ*)`` of
the loss are singularities of the Borel transform ``B[Z](ζ) = Σ a_n ζⁿ/Γ(n+1)`` of the
small-coupling expansion ``Z(g) ~ Σ a_n gⁿ``.  Two routes are implemented for one-dimensional
polynomial losses (the brief's theory check):

* **Local (textbook) route** — :func:`local_series`, :func:`borel_pade_singularities`.  Around a
  minimum ``θ_c`` (value ``L_c``, curvature ``h``), ``Z_c(g) = e^{−L_c/g} √(2πg/h) Σ c_n gⁿ``;
  the ``c_n`` come from substituting ``θ = θ_c + √g s`` and integrating Gaussian moments term by
  term.  Their Borel transform ``Σ c_n tⁿ/n!`` has branch points at ``t = L_k − L_c`` for the
  other critical values ``L_k`` (a *negative* ``t`` reveals a lower minimum).  The singularities
  are located as the real poles of the ``[M/M]`` Padé approximant nearest to the origin on each
  half-axis (a branch cut shows as a line of poles starting at the branch point).  The
  arithmetic is generic: with :class:`sympy.Rational` Taylor data the ``c_n`` are exact
  rationals, with :class:`mpmath.mpf` they are high-precision floats (the critical points of a
  tilted double well are irrational, so the reproduction uses ``mp.dps = 60``).
* **Paper's global route** — :func:`partition_function`, :func:`fit_coefficients`,
  :func:`ratio_singularity`, :func:`threshold_singularities` (§3.1 steps 1–3).  ``Z(g_s)`` on a
  grid of small couplings by quadrature (the paper uses a learned variational sampler in
  high dimension; in 1-D quadrature is exact), weighted least squares
  ``min Σ w_s (Z(g_s) − Σ_{j≤N} a_j g_sʲ)²`` with ``w_s = 1/(g_s + ε)``, ``b_n = a_n/n!``, then
  the ratio rule ``ζ ≈ b_n/b_{n+1}`` or a threshold scan ``|Σ b_n ζⁿ| > τ``.  Caveat (brief,
  pitfalls): ``Z(g)`` is ``O(e^{−L_min/g})`` with no power series at ``g = 0`` unless
  ``L_min = 0`` is attained, so the fitted ``a_n`` are properties of the fit window, not of the
  loss; the reproduction measures how well this route recovers critical values.

:func:`critical_values` gives the exact reference (real roots of ``L'``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import mpmath
import numpy as np
import sympy

__all__ = ["borel_pade_singularities", "critical_values", "fit_coefficients",
           "local_series", "partition_function", "ratio_singularity",
           "taylor_at", "threshold_singularities"]


def _poly(coeffs: Sequence) -> sympy.Poly:
    """``coeffs`` lowest degree first → a sympy polynomial in ``x``."""
    x = sympy.Symbol("x")
    # A float is taken as the exact decimal it prints as (so the roots are over ℚ).
    exact = [sympy.Rational(repr(c)) if isinstance(c, float) else sympy.Rational(c)
             for c in coeffs]
    return sympy.Poly(sum(c * x**k for k, c in enumerate(exact)), x)


def critical_values(coeffs: Sequence, dps: int = 50) -> list[tuple[float, float, float]]:
    """Exact reference: the real critical points of the polynomial ``Σ coeffs[k] xᵏ``.

    Returns ``(θ*, L(θ*), L''(θ*))`` per real root of ``L'``, sorted by ``θ*``.
    """
    return list(_critical_values(tuple(coeffs), dps))


@functools.lru_cache(maxsize=256)
def _critical_values(coeffs: tuple, dps: int) -> tuple[tuple[float, float, float], ...]:
    # Roots of L' (exact rational coefficients) to ``dps`` digits; a real root has |Im| ~ 0.
    p = _poly(coeffs)
    dp, d2 = p.diff(), p.diff().diff()
    out = []
    with mpmath.workdps(dps):
        num = [mpmath.mpf(c.p) / c.q for c in dp.all_coeffs()]
        for r in mpmath.polyroots(num, maxsteps=200, extraprec=2 * mpmath.mp.prec):
            if abs(mpmath.im(r)) > mpmath.mpf(10) ** (-dps // 2):
                continue
            v = mpmath.re(r)
            val = mpmath.polyval([mpmath.mpf(c.p) / c.q for c in p.all_coeffs()], v)
            cur = mpmath.polyval([mpmath.mpf(c.p) / c.q for c in d2.all_coeffs()], v)
            out.append((float(v), float(val), float(cur)))
    return tuple(sorted(out))


def taylor_at(coeffs: Sequence, center) -> list:
    """Taylor coefficients ``l_k = L⁽ᵏ⁾(center)/k!`` of the polynomial, in ``center``'s arithmetic
    (sympy ``Rational`` → exact; ``mpmath.mpf`` → high precision)."""
    c = list(coeffs)
    n = len(c)
    out = []
    for k in range(n):
        # Σ_j binom(j, k) c_j center^{j−k}: exact shift of the polynomial to the new origin.
        out.append(sum(math.comb(j, k) * c[j] * center ** (j - k) for j in range(k, n)))
    return out


def local_series(taylor: Sequence, order: int) -> list:
    """Coefficients ``c_0 … c_order`` of ``Z_c(g) = e^{−L_c/g} √(2πg/h) Σ c_n gⁿ`` (``c_0 = 1``).

    Args:
        taylor: ``[L_c, 0, h/2, l_3, l_4, …]`` — Taylor data at a non-degenerate minimum
            (``taylor[1]`` must be 0 and ``h = 2·taylor[2] > 0``).
        order: highest power of ``g``.

    With ``θ = θ_c + √g s`` and ``ε = √g``, ``(L − L_c)/g = h s²/2 + Σ_{k≥3} l_k ε^{k−2} sᵏ``;
    ``exp(−Σ …) = Σ_j E_j(s) εʲ`` by the recursion ``j E_j = −Σ_i i P_i E_{j−i}``
    (``P_i = l_{i+2} s^{i+2}``), and ``c_n = ⟨E_{2n}⟩`` under ``N(0, 1/h)`` (odd ``j`` vanish).
    """
    half_h = taylor[2]
    if not half_h > 0:
        raise ValueError("taylor: the expansion point must be a non-degenerate minimum")
    zero = half_h * 0
    h = 2 * half_h
    P = {i: taylor[i + 2] for i in range(1, len(taylor) - 2) if taylor[i + 2] != 0}
    jmax = 2 * order
    E = [{0: zero + 1}]  # E_j as {power of s: coefficient}
    for j in range(1, jmax + 1):
        acc: dict[int, object] = {}
        for i, li in P.items():
            if i > j:
                continue
            for m, e in E[j - i].items():
                acc[m + i + 2] = acc.get(m + i + 2, zero) - i * li * e
        E.append({m: v / j for m, v in acc.items()})
    out = []
    for n in range(order + 1):
        # ⟨s^m⟩ = (m−1)!! / h^{m/2} for even m.
        total = zero
        for m, v in E[2 * n].items():
            if m % 2 == 0:
                total = total + v * _double_factorial(m - 1) / h ** (m // 2)
        out.append(total)
    return out


def _double_factorial(k: int) -> int:
    return math.prod(range(k, 0, -2)) if k > 0 else 1


def borel_pade_singularities(coeffs: Sequence, m: int | None = None,
                             imag_tol: float = 1e-6) -> dict[str, float | None]:
    """Nearest real singularities of ``B(t) = Σ c_n tⁿ/n!`` from its ``[m/m]`` Padé approximant.

    Returns ``{"positive": t₊, "negative": t₋}`` — the real denominator roots closest to the
    origin on each half-axis (``None`` if none), computed with ``mpmath`` at its current
    precision.
    """
    b = [mpmath.mpf(c) / mpmath.factorial(n) for n, c in enumerate(coeffs)]
    if m is None:
        m = (len(b) - 1) // 2
    if 2 * m > len(b) - 1:
        raise ValueError(f"m: [m/m] Padé needs {2 * m + 1} coefficients, got {len(b)}")
    _, q = mpmath.pade(b[: 2 * m + 1], m, m)
    roots = mpmath.polyroots(q[::-1], maxsteps=400, extraprec=4 * mpmath.mp.prec)
    real = [float(mpmath.re(r)) for r in roots
            if abs(mpmath.im(r)) < imag_tol * max(1.0, abs(r))]
    pos = [r for r in real if r > 0]
    neg = [r for r in real if r < 0]
    return {"positive": min(pos) if pos else None, "negative": max(neg) if neg else None}


# -- the paper's global route (§3.1) ------------------------------------------------------------
def partition_function(coeffs: Sequence, g: float, lo: float = -4.0, hi: float = 4.0) -> float:
    """``Z(g) = ∫ exp(−L(θ)/g) dθ`` by adaptive quadrature (``scipy.integrate.quad``) over
    ``[lo, hi]``, split at the real critical points where the integrand peaks; the global
    minimum's ``exp(−L_min/g)`` is factored out so the integrand stays O(1)."""
    from scipy.integrate import quad

    c = np.asarray([float(v) for v in coeffs])
    crit = critical_values(coeffs)
    lmin = min(v for _, v, _ in crit)
    pts = [lo] + [p for p, _, _ in crit if lo < p < hi] + [hi]
    f = lambda x: math.exp(-(np.polynomial.polynomial.polyval(x, c) - lmin) / g)  # noqa: E731
    total = sum(quad(f, a, b, epsabs=0.0, epsrel=1e-12, limit=200)[0]
                for a, b in zip(pts[:-1], pts[1:], strict=True))
    return total * math.exp(-lmin / g)


def fit_coefficients(gs: Sequence[float], zs: Sequence[float], n_coeffs: int,
                     eps: float = 1e-3) -> np.ndarray:
    """Weighted least squares ``min Σ_s w_s (Z_s − Σ_{j<n_coeffs} a_j g_sʲ)²``, ``w_s = 1/(g_s+ε)``
    (paper §3.1 step 2).  Returns ``a_0 … a_{n_coeffs−1}``."""
    g = np.asarray(gs, dtype=float)
    z = np.asarray(zs, dtype=float)
    w = np.sqrt(1.0 / (g + eps))
    V = np.vander(g, n_coeffs, increasing=True)
    a, *_ = np.linalg.lstsq(V * w[:, None], z * w, rcond=None)
    return a


def ratio_singularity(a: Sequence[float]) -> float:
    """Ratio rule ``ζ ≈ b_n/b_{n+1}`` at the last available ``n`` (``b_n = a_n/n!``)."""
    b = [float(v) / math.factorial(n) for n, v in enumerate(a)]
    return b[-2] / b[-1]


def threshold_singularities(a: Sequence[float], zetas: Sequence[float],
                            tau: float) -> list[float]:
    """Left ends of the runs of ``ζ`` where ``|Σ b_n ζⁿ| > τ`` (paper §3.1 step 3)."""
    b = np.array([float(v) / math.factorial(n) for n, v in enumerate(a)])
    z = np.asarray(zetas, dtype=float)
    vals = np.abs(np.polynomial.polynomial.polyval(z, b))
    flag = vals > tau
    return [float(z[i]) for i in range(len(z)) if flag[i] and (i == 0 or not flag[i - 1])]
