r"""Continuous ski rental with a prediction of the season length, and its decision-theoretic
choices (Angelopoulos, Dürr & Melidi, ICLR 2026).

Renting costs 1 per unit of time, buying costs ``b``; the season lasts ``x`` (unknown).  The
deterministic algorithm :math:`A_T` rents until time ``T`` and then buys:

.. math::
    \mathrm{cost}(A_T, x) = \begin{cases} x & x \le T \\ T + b & x > T\end{cases},\qquad
    \mathrm{OPT}(x) = \min(x, b),\qquad \mathrm{pr}(A_T, x) = \mathrm{cost}/\mathrm{OPT}.

* Robustness (exact): :math:`\sup_x \mathrm{pr}(A_T,x) = 1 + \max(T/b,\, b/T)`; hence for
  :math:`r\ge 2`, :math:`A_T` is r-robust iff :math:`T\in[b/(r-1),\, b(r-1)]` (paper).
* Ideal solution (paper): :math:`\mathrm{pr}(I_r,x)=1` for :math:`x<b`, :math:`x/b` for
  :math:`x\in[b,\min\{br/(r-1), b(r-1)\}]`, :math:`r/(r-1)` beyond.  (It is
  :math:`\min_{T\in[b/(r-1),b(r-1)]}\mathrm{pr}(A_T,x)`.)
* Pareto-optimal consistency at robustness ``r`` is :math:`r/(r-1) = \max_x \mathrm{pr}(I_r, x)`.

Baselines:

* break-even ``T = b`` (2-competitive, prediction-free optimum);
* Purohit, Svitkina & Kumar (2018), deterministic: ``T = λb`` if ``y >= b`` else ``b/λ``,
  consistency ``1 + λ``, robustness ``1 + 1/λ``;
* ``BP_ρ`` -- *our reconstruction* of the Benomar & Perchet (2025) Pareto family used as the
  paper's baseline (their exact rule was not retrievable): buy at ``b/(r-1)`` if ``y >= b`` and at
  ``ρ ∈ [b, b(r-1)]`` otherwise.  Every member has the Pareto-optimal pair (consistency
  ``r/(r-1)``, robustness ``r``); ``BP_{b(r-1)}`` is Purohit with ``λ = 1/(r-1)`` (= follow the
  prediction, clipped to the robust interval); ``BP_b`` buys at break-even on short predictions.
* ``pareto_follow``: the consistency-optimal choice that follows the prediction as far as the
  ideal allows, ``T = clip(y)`` while ``y <= b r/(r-1)`` and ``b/(r-1)`` beyond: it attains the
  ideal at ``x = y`` (d_max with the indicator weight is 0) and is brittle (a jump of ``b/min(y,b)``
  at ``x = y^+``).
* δ-tolerance: generic, :meth:`RobustFamily.delta_tolerant`.

References:
    Angelopoulos, Dürr, Melidi. Decision-Theoretic Approaches for Improved Learning-Augmented
    Algorithms. ICLR 2026 (arXiv 2501.17701).
    Purohit, Svitkina, Kumar. Improving online algorithms via ML predictions. NeurIPS 2018.
    Benomar, Perchet. On tradeoffs in learning-augmented algorithms. AISTATS 2025
    (arXiv 2501.12770).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from optzoo.checks import check_real
from optzoo.predictions.decision_metrics import FloatArray, RobustFamily, _as_float

__all__ = ["SkiRental"]


@dataclass(frozen=True)
class SkiRental(RobustFamily):
    """Continuous ski rental with buy cost ``b`` and robustness target ``r``.

    Args:
        b: buying cost (renting costs 1 per unit time), finite and > 0.
        r: robustness target, ``r >= 2`` (below 2 no deterministic algorithm is r-robust).

    Example:
        >>> from optzoo.predictions import SkiRental, window_weight
        >>> sr = SkiRental(b=10.0, r=5.0)
        >>> sr.robust_interval
        (2.5, 40.0)
        >>> float(sr.ratio(10.0, 20.0)), float(sr.ideal_ratio(11.0))
        (2.0, 1.1)
        >>> w = window_weight(y=12.0, lo_factor=0.5, hi_factor=2.0)  # prediction 12
        >>> sr.max_optimal(12.0, w).x, sr.avg_optimal(12.0, w).x  # MAX- and AVG-optimal T
        (2.5, 2.5)
    """

    b: float = 10.0
    r: float = 5.0
    kind = "cost"
    #: season lengths are > 0 (a window [0, 2y] starts at the smallest positive float)
    domain = (float(np.finfo(float).tiny), math.inf)

    def __post_init__(self) -> None:
        check_real("b", self.b, finite=False)
        check_real("r", self.r, finite=False)
        if not (math.isfinite(self.b) and self.b > 0):
            raise ValueError(f"b: expected a finite buy cost > 0, got {self.b!r}")
        if math.isnan(self.r) or self.r < 2 or math.isinf(self.r):
            raise ValueError(f"r: expected a finite robustness target r >= 2, got {self.r!r}")

    # -- closed forms ---------------------------------------------------------------------
    @property
    def robust_interval(self) -> tuple[float, float]:
        return (self.b / (self.r - 1), self.b * (self.r - 1))

    def _x(self, x: ArrayLike) -> FloatArray:
        xa = _as_float("x", x)
        if (xa <= 0).any():
            raise ValueError("x: expected season lengths > 0")
        return xa

    def alg_value(self, T: ArrayLike, x: ArrayLike) -> FloatArray:
        t, xa = self.check_param(T), self._x(x)
        return np.where(xa <= t, xa, t + self.b)

    def opt(self, x: ArrayLike) -> FloatArray:
        return np.minimum(self._x(x), self.b)

    def ratio(self, T: ArrayLike, x: ArrayLike) -> FloatArray:
        return self.alg_value(T, x) / self.opt(x)

    def ideal_ratio(self, x: ArrayLike) -> FloatArray:
        xa = self._x(x)
        b, r = self.b, self.r
        cap = r / (r - 1)
        return np.where(xa < b, 1.0, np.where(xa <= b * (r - 1), np.minimum(xa / b, cap), cap))

    def ideal_cost(self, x: ArrayLike) -> FloatArray:
        """Cost of :math:`I_r` (``pr(I_r, x) * OPT(x)``)."""
        return self.ideal_ratio(x) * self.opt(x)

    def robustness(self, T: ArrayLike) -> FloatArray:
        t = self.check_param(T)
        return 1.0 + np.maximum(t / self.b, self.b / t)

    def breakpoints(self, T: FloatArray, y: float) -> FloatArray:
        t = np.asarray(T, float).reshape(-1, 1)
        b, r = self.b, self.r
        fixed = np.array([b, b * r / (r - 1), b * (r - 1)])
        return np.concatenate([t, np.broadcast_to(fixed, (t.shape[0], 3))], axis=1)

    # -- baselines ------------------------------------------------------------------------
    def break_even(self) -> float:
        """Prediction-free optimum ``T = b`` (ratio 2)."""
        return self.b

    def purohit(self, y: ArrayLike, lam: float) -> FloatArray:
        """Purohit et al. (2018) deterministic rule: ``λb`` if ``y >= b`` else ``b/λ``,
        ``λ ∈ (0, 1]``; consistency ``1+λ``, robustness ``1+1/λ``."""
        if not 0 < lam <= 1:
            raise ValueError(f"lam: expected λ in (0, 1], got {lam!r}")
        ya = self._x(y)
        return np.where(ya >= self.b, lam * self.b, self.b / lam)

    def bp(self, y: ArrayLike, rho: float) -> FloatArray:
        """``BP_ρ`` (our reconstruction, see the module docstring): ``b/(r-1)`` if ``y >= b``,
        else ``ρ``, for ``ρ ∈ [b, b(r-1)]``."""
        lo, hi = self.robust_interval
        if not (self.b <= rho <= hi):
            raise ValueError(f"rho: expected ρ in [b, b(r-1)] = [{self.b}, {hi}], got {rho!r}")
        ya = self._x(y)
        return np.where(ya >= self.b, lo, float(rho))

    def follow_clipped(self, y: ArrayLike) -> FloatArray:
        """Follow the prediction, clipped to the robust interval: buy at ``b/(r-1)`` if
        ``y >= b`` else at ``b(r-1)`` (= Purohit with ``λ = 1/(r-1)`` = ``BP_{b(r-1)}``)."""
        lo, hi = self.robust_interval
        return np.where(self._x(y) >= self.b, lo, hi)

    def pareto_follow(self, y: ArrayLike) -> FloatArray:
        """Consistency-optimal choice closest to the prediction: ``clip(y, b/(r-1), b(r-1))`` for
        ``y <= b r/(r-1)``, else ``b/(r-1)``.  Attains ``pr(I_r, y)`` at ``x = y``; brittle."""
        lo, hi = self.robust_interval
        ya = self._x(y)
        return np.where(ya <= self.b * self.r / (self.r - 1), np.clip(ya, lo, hi), lo)

    def pareto_consistency(self) -> float:
        """Best consistency of an r-robust algorithm: ``r/(r-1)``."""
        return self.r / (self.r - 1)
