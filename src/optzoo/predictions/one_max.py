r"""One-max search with a prediction of the maximum price, and its decision-theoretic choices
(Angelopoulos, Dürr & Melidi, ICLR 2026).

Prices lie in ``[1, M]``; the trader sells once, irrevocably, and is forced to sell at the last
price (1 in the worst case).  A threshold algorithm :math:`A_T` sells at the first price
:math:`\ge T`.  Given the maximum price :math:`p^*` of the sequence, the adversary's worst case is

.. math::
    \mathrm{pr}(A_T, p^*) = \begin{cases} p^*/T & p^* \ge T \ \text{(a price exactly T comes
    first)}\\ p^* & p^* < T\ \text{(forced sale at 1)}\end{cases}

so the profit is ``T`` or ``1`` and ``OPT = p*``.  Robustness :math:`\max(M/T, T)`; for
:math:`r\ge\sqrt M`, ``A_T`` is r-robust iff :math:`T\in[M/r, r]` (paper).  Averages over random
instances always use this adversarial price path given :math:`p^*` (never random paths).

Ideal solution (our reading, the lower envelope of the r-robust thresholds given :math:`p^*`):
:math:`\mathrm{pr}(I_r,p^*) = p^*` for :math:`p^*<M/r`, ``1`` on :math:`[M/r, r]`,
:math:`p^*/r` above ``r``.

Baselines (the paper's PO1/PO2 are "Pareto-optimal" thresholds of Sun et al. 2021; their exact
formulas were not retrievable, these are our readings of the two ends of the Pareto family with
consistency ``M/r`` at robustness ``r``):

* prediction-free ``T = sqrt(M)`` (El-Yaniv et al. 2001);
* ``po1``: follow the prediction inside the robust interval, ``T = clip(y, M/r, r)`` (brittle:
  a price just below ``y`` makes the ratio jump from 1 to about ``y``);
* ``po2``: the most conservative Pareto-optimal threshold, ``T = max(M/r, r y / M)`` (the
  smallest ``T`` whose ratio at ``p* = y`` is still ``<= M/r``);
* δ-TOL: the best worst-case threshold over ``[(1-δ)y, (1+δ)y]``
  (:meth:`RobustFamily.delta_tolerant`), i.e. ``clip((1-δ)y, M/r, r)`` in this model
  (Angelopoulos et al. 2022's δ-tolerant design, as we read it).

CVaR choices use the lost profit ``p* - profit``.

References:
    Angelopoulos, Dürr, Melidi. ICLR 2026 (arXiv 2501.17701).
    Sun, Lee, Hajiesmaili, Wierman, Tsang. Pareto-optimal learning-augmented algorithms for
    online conversion problems. NeurIPS 2021.
    El-Yaniv, Fiat, Karp, Turpin. Optimal search and one-way trading online algorithms.
    Algorithmica 30, 2001.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from optzoo.checks import check_real
from optzoo.predictions.decision_metrics import FloatArray, RobustFamily, _as_float

__all__ = ["OneMaxSearch"]


@dataclass(frozen=True)
class OneMaxSearch(RobustFamily):
    """One-max search on prices in ``[1, M]`` with robustness target ``r``.

    Args:
        M: ratio of the largest to the smallest price, finite and > 1.
        r: robustness target, ``sqrt(M) <= r <= M``.

    Example:
        >>> from optzoo.predictions import OneMaxSearch, window_weight
        >>> om = OneMaxSearch(M=1000.0, r=100.0)
        >>> om.robust_interval
        (10.0, 100.0)
        >>> float(om.ratio(50.0, 200.0)), float(om.ratio(50.0, 40.0))
        (4.0, 40.0)
        >>> w = window_weight(y=50.0, lo_factor=0.5, hi_factor=2.0, domain=om.domain)
        >>> round(om.avg_optimal(50.0, w).x, 1)  # the AVG-optimal threshold for prediction 50
        27.7
    """

    M: float = 1000.0
    r: float = 100.0
    kind = "profit"

    def __post_init__(self) -> None:
        check_real("M", self.M, finite=False)
        check_real("r", self.r, finite=False)
        if not (math.isfinite(self.M) and self.M > 1):
            raise ValueError(f"M: expected a finite price ratio > 1, got {self.M!r}")
        if math.isnan(self.r) or not (math.sqrt(self.M) * (1 - 1e-12) <= self.r <= self.M):
            raise ValueError(f"r: expected sqrt(M) <= r <= M = {self.M}, got {self.r!r}")

    @property
    def domain(self) -> tuple[float, float]:  # type: ignore[override]
        return (1.0, self.M)

    @property
    def robust_interval(self) -> tuple[float, float]:
        return (self.M / self.r, self.r)

    def _p(self, p: ArrayLike) -> FloatArray:
        pa = _as_float("p", p)
        if (pa < 1 - 1e-12).any() or (pa > self.M * (1 + 1e-12)).any():
            raise ValueError(f"p: expected maximum prices in [1, M] = [1, {self.M}]")
        return pa

    def alg_value(self, T: ArrayLike, x: ArrayLike) -> FloatArray:
        t, p = self.check_param(T), self._p(x)
        return np.where(p >= t, t, 1.0)

    def opt(self, x: ArrayLike) -> FloatArray:
        return self._p(x)

    def ratio(self, T: ArrayLike, x: ArrayLike) -> FloatArray:
        t, p = self.check_param(T), self._p(x)
        return np.where(p >= t, p / t, p)

    def ideal_ratio(self, x: ArrayLike) -> FloatArray:
        p = self._p(x)
        lo, hi = self.robust_interval
        return np.where(p < lo, p, np.where(p <= hi, 1.0, p / hi))

    def robustness(self, T: ArrayLike) -> FloatArray:
        t = self.check_param(T)
        return np.maximum(self.M / t, t)

    def breakpoints(self, T: FloatArray, y: float) -> FloatArray:
        t = np.asarray(T, float).reshape(-1, 1)
        lo, hi = self.robust_interval
        return np.concatenate([t, np.broadcast_to([lo, hi], (t.shape[0], 2))], axis=1)

    # -- baselines ------------------------------------------------------------------------
    def prediction_free(self) -> float:
        """``sqrt(M)``: the optimal threshold without prediction (ratio ``sqrt(M)``)."""
        return math.sqrt(self.M)

    def po1(self, y: ArrayLike) -> FloatArray:
        """Pareto-optimal, follows the prediction: ``clip(y, M/r, r)``."""
        lo, hi = self.robust_interval
        return np.clip(self._p(y), lo, hi)

    def po2(self, y: ArrayLike) -> FloatArray:
        """Pareto-optimal, most conservative: ``max(M/r, r y/M)``."""
        lo, _ = self.robust_interval
        return np.maximum(lo, self.r * self._p(y) / self.M)

    def pareto_consistency(self) -> float:
        """Best consistency of an r-robust threshold: ``M/r``."""
        return self.M / self.r
