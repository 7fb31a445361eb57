r"""Contract scheduling with a predicted interruption time, and its decision-theoretic choices
(Angelopoulos, Dürr & Melidi, ICLR 2026, appendix; Angelopoulos & Kamali, AAAI 2021).

A schedule runs contracts of lengths :math:`x_0, x_1, \dots` back to back; when interrupted at
time ``T`` the system returns the longest contract completed by ``T``, :math:`\ell(X, T)`.  The
acceleration ratio at ``T`` is :math:`T/\ell(X,T)` (the offline optimum runs one contract of
length ``T``); the worst case over ``T`` is the schedule's robustness, optimally 4 (doubling).

Candidate family (*inferred* from the brief; the paper's appendix was not retrievable): the
4-robust doubling schedules :math:`x_i=\lambda 2^i` (:math:`i\in\mathbb Z`, bi-infinite so there
is no start-up effect), with phase :math:`\lambda\in[1,2]` (``λ=2`` is ``λ=1`` shifted).  Contract
``i`` completes at :math:`\lambda 2^{i+1}`, so with :math:`u=\log_2(T/\lambda)`

.. math:: \mathrm{pr}(X_\lambda, T) = 2^{\,1+\{u\}}\in[2,4),

2 right at a completion time, tending to 4 just before the next.  Every member is exactly
4-robust (supremum 4, not attained); the ideal over the family is :math:`\mathrm{pr}(I_4,T)=2`.

Choices of ``λ`` given the predicted interruption ``τ`` (= ``y``):

* prediction-free: ``λ = 1`` (schedule ``2^i``);
* ``follow`` (Angelopoulos--Kamali's consistent schedule :math:`X^*_\tau` within this family): a
  contract completes exactly at ``τ``, ``λ = 2^{frac(log2 τ)}``; consistency 2, brittle (an
  interruption just before ``τ`` gives ratio ~4);
* δ-tolerance: generic (a completion at ``(1-δ)τ``, Angelopoulos--Kamali's buffered schedule);
* MAX/AVG/CVaR: generic :class:`~optzoo.predictions.decision_metrics.RobustFamily` searches
  over ``λ ∈ [1, 2]``.

The CVaR choice treats the returned contract length as a profit and uses the lost length
``T - ℓ(X, T)`` (our reading of "lost profit" for this problem).

References:
    Angelopoulos, Dürr, Melidi. ICLR 2026 (arXiv 2501.17701), contract scheduling appendix.
    Angelopoulos, Kamali. Contract scheduling with predictions. AAAI 2021 / JAIR 2023.
    Russell, Zilberstein. Composing real-time systems. IJCAI 1991 (doubling schedules).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from optzoo.checks import check_real
from optzoo.predictions.decision_metrics import FloatArray, RobustFamily, _as_float

__all__ = ["ContractScheduling", "acceleration_ratio", "doubling_lengths"]

_TINY = np.finfo(float).tiny


def doubling_lengths(lam: float, n: int) -> FloatArray:
    """The first ``n`` contract lengths ``λ 2^i`` (``i = 0..n-1``) of a one-sided doubling
    schedule (for tests against the bi-infinite closed form)."""
    if not (math.isfinite(lam) and lam > 0):
        raise ValueError(f"lam: expected a phase > 0, got {lam!r}")
    if n < 1:
        raise ValueError(f"n: expected >= 1 contracts, got {n}")
    return lam * 2.0 ** np.arange(n)


def acceleration_ratio(lengths: ArrayLike) -> float:
    """Exact worst-case acceleration ratio of a finite schedule, over interruptions between
    its first and last completion: :math:`\\sup_T T/\\ell(X,T)` is approached just before each
    completion time :math:`t_{i+1}`, giving :math:`\\max_i t_{i+1}/\\max_{j\\le i} x_j`.

    Args:
        lengths: ``n >= 2`` positive contract lengths in execution order.
    """
    x = _as_float("lengths", lengths).ravel()
    if x.size < 2 or (x <= 0).any() or not np.isfinite(x).all():
        raise ValueError("lengths: expected at least two finite contract lengths > 0")
    t = np.cumsum(x)
    best = np.maximum.accumulate(x)
    return float(np.max(t[1:] / best[:-1]))


@dataclass(frozen=True)
class ContractScheduling(RobustFamily):
    """Doubling contract schedules ``λ 2^i``, parameter ``λ ∈ [1, 2]``, robustness 4.

    Args:
        r: robustness target; must be ``>= 4`` (the optimal acceleration ratio).  Every
            doubling schedule is exactly 4-robust, so the robust interval is all of ``[1, 2]``.

    Example:
        >>> from optzoo.predictions import ContractScheduling, window_weight
        >>> cs = ContractScheduling()
        >>> float(cs.ratio(1.0, 8.0)), float(cs.ratio(1.0, 6.0))  # completions at 2^k
        (2.0, 3.0)
        >>> w = window_weight(y=10.0, lo_factor=0.5, hi_factor=2.0)  # interruption near 10
        >>> round(cs.avg_optimal(10.0, w).x, 2)  # the AVG-optimal λ of the schedule λ 2^i
        1.49
    """

    r: float = 4.0
    kind = "profit"
    domain = (0.0, math.inf)

    def __post_init__(self) -> None:
        check_real("r", self.r, finite=False)
        if math.isnan(self.r) or self.r < 4 or math.isinf(self.r):
            raise ValueError(f"r: expected a finite robustness target r >= 4 (the optimal "
                             f"acceleration ratio), got {self.r!r}")

    @property
    def robust_interval(self) -> tuple[float, float]:
        return (1.0, 2.0)

    def _t(self, x: ArrayLike) -> FloatArray:
        xa = _as_float("x", x)
        if (xa < 0).any() or np.isinf(xa).any():
            raise ValueError("x: expected interruption times in [0, inf)")
        return np.maximum(xa, _TINY)

    def last_completion(self, T: ArrayLike, x: ArrayLike) -> FloatArray:
        """The last completion time ``λ 2^k <= x`` (exact: powers of two scale exactly, and the
        log2 estimate of ``k`` is corrected by exact comparisons, so interruptions one ulp
        before a completion are told apart from the completion itself)."""
        lam, t = self.check_param(T), self._t(x)
        lam, t = np.broadcast_arrays(lam, t)
        k = np.floor(np.log2(t) - np.log2(lam)).astype(np.int64)
        c = np.ldexp(lam, k)
        c = np.where(c > t, c / 2, c)
        return np.where(2 * c <= t, 2 * c, c)

    def ratio(self, T: ArrayLike, x: ArrayLike) -> FloatArray:
        t = self._t(x)
        return 2.0 * t / self.last_completion(T, t)

    def ideal_ratio(self, x: ArrayLike) -> FloatArray:
        return np.full(np.shape(self._t(x)), 2.0)

    def alg_value(self, T: ArrayLike, x: ArrayLike) -> FloatArray:
        """Length of the longest completed contract, ``ℓ(X_λ, T)`` (half the last completion
        time)."""
        return self.last_completion(T, x) / 2.0

    def opt(self, x: ArrayLike) -> FloatArray:
        return self._t(x)

    def robustness(self, T: ArrayLike) -> FloatArray:
        lam = self.check_param(T)
        return np.full(np.shape(lam), 4.0)

    def completion_times(self, lam: float, lo: float, hi: float) -> FloatArray:
        """Completion times ``λ 2^k`` in ``[lo, hi]``."""
        lam = float(self.check_param(lam))
        if not 0 < lo <= hi:
            raise ValueError(f"lo, hi: expected 0 < lo <= hi, got {lo!r}, {hi!r}")
        k = np.arange(math.floor(math.log2(lo / lam)), math.ceil(math.log2(hi / lam)) + 1)
        c = lam * 2.0 ** k
        return c[(c >= lo) & (c <= hi)]

    def breakpoints(self, T: FloatArray, y: float) -> FloatArray:
        lam = np.asarray(T, float).reshape(-1, 1)
        k = np.arange(math.floor(math.log2(y)) - 14, math.ceil(math.log2(y)) + 4)
        return lam * 2.0 ** k[None, :]

    def candidates(self, x_atoms: FloatArray, y: float) -> FloatArray:
        """The phases that put a completion exactly at an atom (the CVaR optimum is one of
        them or an endpoint: between them every lost length grows with ``λ``)."""
        return self.follow(x_atoms)

    # -- baselines ------------------------------------------------------------------------
    def prediction_free(self) -> float:
        """``λ = 1``: the schedule ``2^i`` that ignores the prediction."""
        return 1.0

    def follow(self, tau: ArrayLike) -> FloatArray:
        """A completion exactly at the predicted interruption ``τ`` (consistency 2)."""
        m, _ = np.frexp(self._t(tau))  # τ = m 2^e exactly, m in [0.5, 1)
        return 2.0 * m

    def pareto_consistency(self) -> float:
        """Consistency of the doubling schedule aimed at ``τ``: 2."""
        return 2.0
