r"""Decision-theoretic measures for learning-augmented online algorithms.

The measures of Angelopoulos, Dürr & Melidi, *Decision-Theoretic Approaches for Improved
Learning-Augmented Algorithms* (ICLR 2026, arXiv 2501.17701): a prediction :math:`y` of a scalar
:math:`x_\sigma` of the input; a family of r-robust algorithms :math:`A_T` indexed by one real
parameter :math:`T` in a *robust interval*; an *ideal solution* :math:`I_r` (per input, the best
ratio any r-robust algorithm attains); and three ways to pick :math:`T` given the prediction:

* **MAX** -- :math:`d_{\max}(T) = \sup_{x\in R_y} g_T(x)\, w_y(x)`;
* **AVG** -- :math:`d_{\mathrm{avg}}(T) = \frac{1}{|R_y|}\int_{R_y} g_T(z)\, w_y(z)\,dz`;
* **CVaR** -- :math:`\alpha\text{-cons}(T) = \mathrm{CVaR}_\alpha(\mathrm{cost}_T)/E[\mathrm{OPT}]`
  (profit problems: the CVaR of the lost profit :math:`\mathrm{OPT}-\mathrm{ALG}`).

with the gap :math:`g_T(x) = \mathrm{pr}(A_T, x) - \mathrm{pr}(I_r, x)` (a *difference* of
performance ratios, never a ratio of ratios) and a weight :math:`w_y` on the prediction range
:math:`R_y=[\ell,u]`, non-decreasing on :math:`[\ell, y]` and non-increasing on :math:`[y, u]`.

Readings we chose (the paper's text past its introduction was not retrievable here):

* ``CVaR`` follows the paper's convention: :math:`\alpha = 0` is the mean and
  :math:`\alpha\to 1` the worst case, computed *exactly* for a discrete distribution (atoms with
  weights) by the Rockafellar--Uryasev formula
  :math:`\mathrm{CVaR}_\alpha(X) = \min_t\, t + E[(X-t)_+]/(1-\alpha)`, i.e. the mean of the upper
  :math:`1-\alpha` tail with the boundary atom split -- not a quantile.
* The sup over the set :math:`\mathcal F` of input distributions consistent with the
  prediction is taken over :math:`\mathcal F = \{\mu\}`: the prediction *is* the distribution.
* For the one-max and contract problems an input :math:`\sigma` is identified with its scalar
  :math:`x_\sigma` by the worst case over inputs with that scalar; the ideal is the pointwise
  lower envelope of the r-robust family, :math:`\mathrm{pr}(I_r,x)=\min_T \mathrm{pr}(A_T,x)`
  (for ski rental the two coincide with the paper's closed form).
* :math:`d_{\max}` / :math:`d_{\mathrm{avg}}` are evaluated on a fine grid of :math:`R_y` plus both
  one-sided limits at every discontinuity of the gap (``breakpoints``), so the jump of a brittle
  algorithm right next to its threshold is seen exactly, not missed between grid points.
* The optimal parameters are found by a generic 1-D search: a fine grid of the robust interval,
  the problem's exact candidate points (e.g. atoms of the distribution), then bounded
  (Brent/golden-section) refinement around the best grid point; the best value seen is returned.

Sources checked (search, about 10 minutes): the arXiv 2501.17701 v2 HTML and the OpenReview
page returned only the abstract and introduction; no public code of the paper, of Benomar &
Perchet's ski-rental family (arXiv 2501.12770) or of Sun et al.'s thresholds was found.  So the
closed forms of T*_max / T*_avg / T*_CVaR, BP_ρ, PO1/PO2 and δ-TOL are computed or reconstructed
as documented in :mod:`~optzoo.predictions.ski_rental`, :mod:`~optzoo.predictions.one_max` and
:mod:`~optzoo.predictions.contract_scheduling`.

References:
    S. Angelopoulos, C. Dürr, G. Melidi. Decision-Theoretic Approaches for Improved
    Learning-Augmented Algorithms. ICLR 2026. arXiv:2501.17701; OpenReview XGEZ9q02Ys.

    R. T. Rockafellar, S. Uryasev. Optimization of conditional value-at-risk. J. Risk 2(3), 2000.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "cvar",
    "alpha_consistency",
    "Weight",
    "IndicatorWeight",
    "UniformWeight",
    "TriangularWeight",
    "window_weight",
    "gap",
    "weighted_sup",
    "weighted_mean",
    "d_max",
    "d_avg",
    "Optimum",
    "minimize_on_interval",
    "RobustFamily",
]

FloatArray = NDArray[np.float64]


# ----------------------------------------------------------------------------------------------
# validation helpers
# ----------------------------------------------------------------------------------------------
def _as_float(name: str, value: ArrayLike) -> FloatArray:
    arr = np.asarray(value, dtype=float)
    if np.isnan(arr).any():
        raise ValueError(f"{name}: expected numbers, got NaN")
    return arr


def _check_alpha(alpha: float) -> float:
    a = float(alpha)
    if not (0.0 <= a < 1.0) or math.isnan(a):
        raise ValueError(f"alpha: expected a level in [0, 1), got {alpha!r}")
    return a


def _check_positive_scalar(name: str, value: float, *, allow_inf: bool = False) -> float:
    v = float(value)
    if math.isnan(v) or v <= 0 or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name}: expected a finite number > 0, got {value!r}")
    return v


# ----------------------------------------------------------------------------------------------
# CVaR and alpha-consistency
# ----------------------------------------------------------------------------------------------
def cvar(values: ArrayLike, alpha: float, weights: ArrayLike | None = None) -> FloatArray:
    r"""Exact conditional value-at-risk of a discrete distribution (upper tail).

    :math:`\mathrm{CVaR}_\alpha(X) = \min_t\{t + E[(X-t)_+]/(1-\alpha)\}`: the mean of the worst
    :math:`1-\alpha` probability mass, the atom at the boundary taken fractionally.  The paper's
    convention: :math:`\alpha=0` gives the mean, :math:`\alpha\to1` the maximum of the support.

    Args:
        values: ``... x n`` outcomes (costs; larger is worse); the last axis holds the atoms.
        alpha: level in ``[0, 1)``.
        weights: ``n`` or ``... x n`` non-negative atom weights (normalised here; their sum must
            be positive). ``None`` means equal weights.

    Returns:
        ``...``-shaped array of CVaR values.

    Example:
        >>> from optzoo.predictions import cvar
        >>> float(cvar([1.0, 2.0, 3.0, 4.0], 0.5))
        3.5
        >>> float(cvar([0.0, 10.0], 0.75, weights=[0.9, 0.1]))  # tail 0.25 = 0.1 @10 + 0.15 @0
        4.0

    References:
        Rockafellar & Uryasev (2000); Angelopoulos, Dürr & Melidi (ICLR 2026), Sec. on risk.
    """
    a = _check_alpha(alpha)
    v = _as_float("values", values)
    if np.isinf(v).any():
        raise ValueError("values: expected finite outcomes, got ±inf")
    if v.ndim == 0 or v.shape[-1] == 0:
        raise ValueError("values: expected at least one atom on the last axis")
    if weights is None:
        p = np.full(v.shape[-1], 1.0 / v.shape[-1])
    else:
        p = _as_float("weights", weights)
        if (p < 0).any() or not np.isfinite(p).all():
            raise ValueError("weights: expected finite non-negative numbers")
        total = p.sum(axis=-1, keepdims=True)
        if (total <= 0).any():
            raise ValueError("weights: expected a positive sum")
        p = p / total
    p = np.broadcast_to(p, v.shape)
    if np.isinf(v).any():
        # an atom at +inf with positive weight makes every tail infinite
        return np.where((np.isposinf(v) & (p > 0)).any(axis=-1), np.inf,
                        cvar(np.where(np.isinf(v), 0.0, v), a, p))
    beta = 1.0 - a
    order = np.argsort(-v, axis=-1, kind="stable")
    vs = np.take_along_axis(v, order, axis=-1)
    ps = np.take_along_axis(p, order, axis=-1)
    before = np.cumsum(ps, axis=-1) - ps
    take = np.clip(beta - before, 0.0, ps)
    return (take * vs).sum(axis=-1) / take.sum(axis=-1)


def alpha_consistency(alg: ArrayLike, opt: ArrayLike, alpha: float,
                      weights: ArrayLike | None = None,
                      kind: Literal["cost", "profit"] = "cost") -> FloatArray:
    r"""The paper's :math:`\alpha`-consistency of an algorithm under a discrete input distribution.

    Cost problems: :math:`\mathrm{CVaR}_\alpha(\mathrm{ALG}) / E[\mathrm{OPT}]` (CVaR of the cost,
    normalised by the expected optimum -- not the CVaR of the ratio).  Profit problems:
    :math:`\mathrm{CVaR}_\alpha(\mathrm{OPT}-\mathrm{ALG}) / E[\mathrm{OPT}]`, the risk of the lost
    profit (the lower tail of the profit).

    Args:
        alg: ``... x n`` cost (or profit) of the algorithm on each atom.
        opt: ``n`` or ``... x n`` optimal offline cost (or profit) on each atom, positive mean.
        alpha: CVaR level in ``[0, 1)``.
        weights: ``n`` atom weights (``None``: equal).
        kind: ``"cost"`` or ``"profit"``.

    Returns:
        ``...``-shaped array.
    """
    if kind not in ("cost", "profit"):
        raise ValueError(f"kind: expected 'cost' or 'profit', got {kind!r}")
    alg_a = _as_float("alg", alg)
    opt_a = _as_float("opt", opt)
    if weights is None:
        p = np.full(opt_a.shape[-1], 1.0 / opt_a.shape[-1])
    else:
        p = _as_float("weights", weights)
        if (p < 0).any() or p.sum() <= 0:
            raise ValueError("weights: expected non-negative numbers with a positive sum")
        p = p / p.sum(axis=-1, keepdims=True)
    mean_opt = (np.broadcast_to(opt_a, np.broadcast_shapes(opt_a.shape, p.shape)) * p).sum(-1)
    if (mean_opt <= 0).any():
        raise ValueError("opt: expected a positive expected optimum")
    outcome = alg_a if kind == "cost" else np.broadcast_to(opt_a, alg_a.shape) - alg_a
    return cvar(outcome, alpha, p) / mean_opt


# ----------------------------------------------------------------------------------------------
# weights on the prediction range
# ----------------------------------------------------------------------------------------------
class Weight(ABC):
    """A weight :math:`w_y: R_y=[lo, hi] \\to [0,1]`, non-decreasing up to ``mode`` (= the
    prediction y) and non-increasing after it; zero outside ``[lo, hi]``."""

    lo: float
    mode: float
    hi: float

    @abstractmethod
    def __call__(self, x: ArrayLike) -> FloatArray: ...

    @property
    def width(self) -> float:
        return self.hi - self.lo

    def _validate(self) -> None:
        for name in ("lo", "mode", "hi"):
            v = getattr(self, name)
            if math.isnan(v) or math.isinf(v):
                raise ValueError(f"{name}: expected a finite number, got {v!r}")
        if not self.lo <= self.mode <= self.hi:
            raise ValueError(f"lo, mode, hi: expected lo <= mode <= hi, got "
                             f"{self.lo!r}, {self.mode!r}, {self.hi!r}")


@dataclass(frozen=True)
class IndicatorWeight(Weight):
    """:math:`w_y = \\mathbb 1\\{x = y\\}`: the prediction range is the point ``y``.

    With it :math:`d_{\\max}(A) = \\mathrm{pr}(A, y) - \\mathrm{pr}(I_r, y)`, the consistency gap,
    so MAX-optimality reduces to ordinary (Pareto) consistency.
    """

    y: float

    def __post_init__(self) -> None:
        self._validate()

    @property
    def lo(self) -> float:  # type: ignore[override]
        return self.y

    @property
    def mode(self) -> float:  # type: ignore[override]
        return self.y

    @property
    def hi(self) -> float:  # type: ignore[override]
        return self.y

    def __call__(self, x: ArrayLike) -> FloatArray:
        return (np.asarray(x, dtype=float) == self.y).astype(float)


@dataclass(frozen=True)
class UniformWeight(Weight):
    """:math:`w = 1` on ``[lo, hi]`` (``mode`` only marks the prediction)."""

    lo: float
    hi: float
    mode: float = float("nan")

    def __post_init__(self) -> None:
        if math.isnan(self.mode):
            object.__setattr__(self, "mode", 0.5 * (self.lo + self.hi))
        self._validate()

    def __call__(self, x: ArrayLike) -> FloatArray:
        xa = np.asarray(x, dtype=float)
        return ((xa >= self.lo) & (xa <= self.hi)).astype(float)


@dataclass(frozen=True)
class TriangularWeight(Weight):
    """Linear weight: 0 at ``lo``, rising linearly to 1 at ``mode``, falling linearly to 0 at
    ``hi`` (the "linear symmetric" weight when ``mode`` is the midpoint).  If ``lo == mode``
    (or ``mode == hi``) that side is a step to 1."""

    lo: float
    mode: float
    hi: float

    def __post_init__(self) -> None:
        self._validate()
        if self.hi <= self.lo:
            raise ValueError(f"hi: expected hi > lo for a triangular weight, got "
                             f"lo={self.lo!r}, hi={self.hi!r}")

    def __call__(self, x: ArrayLike) -> FloatArray:
        xa = np.asarray(x, dtype=float)
        up = np.where(self.mode > self.lo,
                      (xa - self.lo) / max(self.mode - self.lo, 1e-300), 1.0)
        down = np.where(self.hi > self.mode,
                        (self.hi - xa) / max(self.hi - self.mode, 1e-300), 1.0)
        w = np.where(xa <= self.mode, up, down)
        return np.where((xa >= self.lo) & (xa <= self.hi), np.clip(w, 0.0, 1.0), 0.0)


def window_weight(y: float, lo_factor: float, hi_factor: float,
                  shape: Literal["triangular", "uniform", "indicator"] = "triangular",
                  domain: tuple[float, float] = (0.0, math.inf)) -> Weight:
    """The weight on the multiplicative window ``R_y = [lo_factor*y, hi_factor*y]`` clipped to
    ``domain``, peaked at ``y`` (e.g. ``(0.5, 2)`` -> ``[y/2, 2y]``, ``(0, 2)`` -> ``[0, 2y]``;
    the paper's δ-tolerance range is ``(1-δ, 1+δ)``).

    Args:
        y: the prediction, > 0 and inside ``domain``.
        lo_factor, hi_factor: ``0 <= lo_factor <= 1 <= hi_factor``.
        shape: ``"triangular"`` (linear, mode y), ``"uniform"`` or ``"indicator"``.
        domain: where the true value can lie.
    """
    y = _check_positive_scalar("y", y)
    if not (0 <= lo_factor <= 1 <= hi_factor) or math.isinf(hi_factor):
        raise ValueError(f"lo_factor, hi_factor: expected 0 <= lo_factor <= 1 <= hi_factor < inf,"
                         f" got {lo_factor!r}, {hi_factor!r}")
    if not domain[0] <= y <= domain[1]:
        raise ValueError(f"y: expected a prediction inside the domain {domain}, got {y!r}")
    lo = max(lo_factor * y, domain[0])
    hi = min(hi_factor * y, domain[1])
    if shape == "indicator":
        return IndicatorWeight(y)
    if shape == "uniform":
        return UniformWeight(lo, hi, y)
    if shape == "triangular":
        if hi <= lo:
            return IndicatorWeight(y)
        return TriangularWeight(lo, y, hi)
    raise ValueError(f"shape: expected 'triangular', 'uniform' or 'indicator', got {shape!r}")


# ----------------------------------------------------------------------------------------------
# gap, d_max, d_avg
# ----------------------------------------------------------------------------------------------
def gap(pr_alg: ArrayLike, pr_ideal: ArrayLike) -> FloatArray:
    """:math:`g = \\mathrm{pr}(A) - \\mathrm{pr}(I_r)`, the paper's distance to the ideal (a
    difference of performance ratios).  Non-negative for every r-robust ``A``."""
    a = _as_float("pr_alg", pr_alg)
    b = _as_float("pr_ideal", pr_ideal)
    return a - b


def _x_points(weight: Weight, params: FloatArray, n_grid: int,
              breakpoints: Callable[[FloatArray], FloatArray] | None) -> FloatArray:
    """``n x m`` evaluation points: a grid of the window, plus every breakpoint and its two
    floating-point neighbours (one-sided limits), clipped to the window, sorted per row."""
    base = np.linspace(weight.lo, weight.hi, n_grid)
    pts = np.broadcast_to(base, (params.size, n_grid))
    if breakpoints is not None:
        bp = np.asarray(breakpoints(params), dtype=float).reshape(params.size, -1)
        bp = np.concatenate([bp, np.full((params.size, 1), weight.mode)], axis=1)
        near = np.concatenate([np.nextafter(bp, -np.inf), bp, np.nextafter(bp, np.inf)], axis=1)
        near = np.where(np.isfinite(near), near, weight.mode)
        pts = np.concatenate([pts, np.clip(near, weight.lo, weight.hi)], axis=1)
    return np.sort(pts, axis=1)


def weighted_sup(fn: Callable[[FloatArray, FloatArray], FloatArray], weight: Weight,
                 params: ArrayLike, *, n_grid: int = 1025,
                 breakpoints: Callable[[FloatArray], FloatArray] | None = None) -> FloatArray:
    r""":math:`\sup_{x\in R_y} f(T, x)\,w_y(x)` for each parameter ``T``.

    Args:
        fn: ``fn(T[:, None], x) -> n x m`` values (vectorised).
        weight: the weight (its ``[lo, hi]`` is the range :math:`R_y`).
        params: ``n`` parameters.
        n_grid: grid points of the range.
        breakpoints: ``breakpoints(T) -> n x k`` locations of discontinuities of ``fn(T, .)``;
            both one-sided limits are evaluated there.

    Returns:
        ``n`` array.
    """
    t = np.atleast_1d(_as_float("params", params)).ravel()
    if isinstance(weight, IndicatorWeight):
        return np.asarray(fn(t[:, None], np.full((t.size, 1), weight.y)), float)[:, 0]
    x = _x_points(weight, t, n_grid, breakpoints)
    vals = np.asarray(fn(t[:, None], x), dtype=float) * weight(x)
    return vals.max(axis=1)


def weighted_mean(fn: Callable[[FloatArray, FloatArray], FloatArray], weight: Weight,
                  params: ArrayLike, *, n_grid: int = 1025,
                  breakpoints: Callable[[FloatArray], FloatArray] | None = None) -> FloatArray:
    r""":math:`\frac1{|R_y|}\int_{R_y} f(T, z)\,w_y(z)\,dz` for each ``T`` (trapezoid rule on the
    grid refined at the breakpoints, so jumps are integrated exactly up to grid error).

    Raises:
        ValueError: for an :class:`IndicatorWeight` (a point range has no average).
    """
    if isinstance(weight, IndicatorWeight) or weight.width <= 0:
        raise ValueError("weight: d_avg needs a range of positive length; an indicator weight "
                         "has none (use d_max)")
    t = np.atleast_1d(_as_float("params", params)).ravel()
    x = _x_points(weight, t, n_grid, breakpoints)
    vals = np.asarray(fn(t[:, None], x), dtype=float) * weight(x)
    return np.trapezoid(vals, x, axis=1) / weight.width


def d_max(gap_fn: Callable[[FloatArray, FloatArray], FloatArray], weight: Weight,
          params: ArrayLike, **kw) -> FloatArray:
    r"""The paper's :math:`d_{\max}(A_T) = \sup_{x\in R_y} g_T(x) w_y(x)` (see
    :func:`weighted_sup` for the arguments); ``gap_fn(T, x)`` is :math:`g_T(x)`."""
    return weighted_sup(gap_fn, weight, params, **kw)


def d_avg(gap_fn: Callable[[FloatArray, FloatArray], FloatArray], weight: Weight,
          params: ArrayLike, **kw) -> FloatArray:
    r"""The paper's :math:`d_{\mathrm{avg}}(A_T) = \frac{1}{|R_y|}\int_{R_y} g_T(z) w_y(z) dz`
    (see :func:`weighted_mean`).

    Example:
        >>> import numpy as np
        >>> from optzoo.predictions import SkiRental, d_avg, window_weight
        >>> ski = SkiRental(b=10.0, r=5.0)
        >>> w = window_weight(y=6.0, lo_factor=0.5, hi_factor=2.0)  # prediction 6 (< b)
        >>> np.round(d_avg(ski.gap, w, [2.5, 6.0, 10.0]), 3)  # g_T(x) = pr(A_T, x) − pr(I_r, x)
        array([0.463, 0.354, 0.035])
    """
    return weighted_mean(gap_fn, weight, params, **kw)


# ----------------------------------------------------------------------------------------------
# 1-D optimiser over the robust interval
# ----------------------------------------------------------------------------------------------
class Optimum(NamedTuple):
    """Result of :func:`minimize_on_interval`: the argmin and the value there."""

    x: float
    value: float


def minimize_on_interval(f: Callable[[FloatArray], FloatArray], lo: float, hi: float, *,
                         n_grid: int = 257, candidates: ArrayLike = (),
                         refine: bool = True, xatol: float | None = None) -> Optimum:
    """Minimise a (possibly discontinuous) function of one parameter over ``[lo, hi]``.

    Evaluates ``f`` (vectorised: ``n -> n``) on ``n_grid`` equispaced points, the endpoints and the
    supplied exact ``candidates`` inside the interval, then refines with SciPy's bounded scalar
    search (Brent's method: golden-section steps with parabolic interpolation) between the
    neighbours of the best grid point; returns the best point ever evaluated.  Ties go to the
    smaller parameter.

    Args:
        f: vectorised objective.
        lo, hi: the interval, ``lo <= hi``.
        n_grid: grid size (>= 2).
        candidates: extra exact points (outside ones are dropped).
        refine: run the bounded refinement.
        xatol: refinement tolerance (default ``1e-10 * max(1, |hi|)``).
    """
    lo, hi = float(lo), float(hi)
    if math.isnan(lo) or math.isnan(hi) or lo > hi or math.isinf(lo) or math.isinf(hi):
        raise ValueError(f"lo, hi: expected a finite interval lo <= hi, got [{lo!r}, {hi!r}]")
    if n_grid < 2:
        raise ValueError(f"n_grid: expected >= 2, got {n_grid}")
    grid = np.linspace(lo, hi, n_grid)
    cand = np.asarray(candidates, dtype=float).ravel()
    cand = cand[np.isfinite(cand) & (cand >= lo) & (cand <= hi)]
    pts = np.unique(np.concatenate([grid, cand]))
    vals = np.asarray(f(pts), dtype=float)
    if np.isnan(vals).any():
        raise ValueError("f: returned NaN on the robust interval")
    i = int(np.argmin(vals))
    best = Optimum(float(pts[i]), float(vals[i]))
    if refine and hi > lo:
        from scipy.optimize import minimize_scalar

        gi = int(np.clip(np.searchsorted(grid, best.x), 0, n_grid - 1))
        a, b = grid[max(gi - 1, 0)], grid[min(gi + 1, n_grid - 1)]
        if b > a:
            res = minimize_scalar(lambda s: float(np.asarray(f(np.array([s])))[0]),
                                  bounds=(a, b), method="bounded",
                                  options={"xatol": xatol or 1e-10 * max(1.0, abs(hi))})
            if res.success and float(res.fun) < best.value:
                best = Optimum(float(res.x), float(res.fun))
    return best


# ----------------------------------------------------------------------------------------------
# a one-parameter family of r-robust algorithms
# ----------------------------------------------------------------------------------------------
class RobustFamily(ABC):
    """A problem with a one-parameter family :math:`A_T` of online algorithms, its ideal
    solution :math:`I_r`, and the paper's MAX-, AVG- and CVaR-optimal choices of ``T``.

    Subclasses (:class:`~optzoo.predictions.ski_rental.SkiRental`,
    :class:`~optzoo.predictions.one_max.OneMaxSearch`,
    :class:`~optzoo.predictions.contract_scheduling.ContractScheduling`) supply the closed forms;
    every method here is generic.  ``ratio`` / ``alg_value`` broadcast ``T`` against ``x``.
    """

    kind: Literal["cost", "profit"] = "cost"
    #: the set the true value lives in
    domain: tuple[float, float] = (0.0, math.inf)

    # -- problem-specific -----------------------------------------------------------------
    @property
    @abstractmethod
    def robust_interval(self) -> tuple[float, float]:
        """The parameters ``T`` for which ``A_T`` is r-robust."""

    @abstractmethod
    def ratio(self, T: ArrayLike, x: ArrayLike) -> FloatArray:
        """:math:`\\mathrm{pr}(A_T, x)` (>= 1) for the true value ``x``."""

    @abstractmethod
    def ideal_ratio(self, x: ArrayLike) -> FloatArray:
        """:math:`\\mathrm{pr}(I_r, x)`."""

    @abstractmethod
    def alg_value(self, T: ArrayLike, x: ArrayLike) -> FloatArray:
        """Cost (or profit) of ``A_T`` on the true value ``x``."""

    @abstractmethod
    def opt(self, x: ArrayLike) -> FloatArray:
        """Optimal offline cost (or profit)."""

    @abstractmethod
    def robustness(self, T: ArrayLike) -> FloatArray:
        """Exact worst-case ratio :math:`\\sup_x \\mathrm{pr}(A_T, x)`."""

    @abstractmethod
    def breakpoints(self, T: FloatArray, y: float) -> FloatArray:
        """``n x k`` true values where ``ratio(T, .)`` or ``ideal_ratio`` jumps (any finite
        list that contains them; ``y`` locates periodic families)."""

    def candidates(self, x_atoms: FloatArray, y: float) -> FloatArray:
        """Exact candidate parameters for the CVaR optimum under atoms ``x_atoms``."""
        return np.asarray(x_atoms, dtype=float)

    def prediction_domain_check(self, y: float) -> float:
        y = _check_positive_scalar("y", y)
        if not self.domain[0] <= y <= self.domain[1]:
            raise ValueError(f"y: expected a prediction in {self.domain}, got {y!r}")
        return y

    def check_param(self, T: ArrayLike) -> FloatArray:
        t = _as_float("T", T)
        if (t <= 0).any() or np.isinf(t).any():
            raise ValueError("T: expected parameters in (0, inf)")
        return t

    # -- generic ----------------------------------------------------------------------------
    def gap(self, T: ArrayLike, x: ArrayLike) -> FloatArray:
        """:math:`g_T(x) = \\mathrm{pr}(A_T, x) - \\mathrm{pr}(I_r, x)`."""
        return gap(self.ratio(T, x), self.ideal_ratio(x))

    def is_robust(self, T: ArrayLike, r: float | None = None, tol: float = 1e-9) -> NDArray:
        """Whether ``A_T`` is r-robust by its exact worst case."""
        r = self.r if r is None else r  # type: ignore[attr-defined]
        return self.robustness(T) <= r * (1 + tol)

    def _bp(self, y: float) -> Callable[[FloatArray], FloatArray]:
        return lambda t: self.breakpoints(np.asarray(t, float).reshape(-1), y)

    def d_max(self, T: ArrayLike, y: float, weight: Weight, n_grid: int = 1025) -> FloatArray:
        """The paper's :math:`d_{\\max}` of each ``T`` given the prediction ``y``."""
        return d_max(self.gap, weight, T, n_grid=n_grid, breakpoints=self._bp(y))

    def d_avg(self, T: ArrayLike, y: float, weight: Weight, n_grid: int = 1025) -> FloatArray:
        """The paper's :math:`d_{\\mathrm{avg}}` of each ``T`` given the prediction ``y``."""
        return d_avg(self.gap, weight, T, n_grid=n_grid, breakpoints=self._bp(y))

    def alpha_consistency(self, T: ArrayLike, x_atoms: ArrayLike, alpha: float,
                          weights: ArrayLike | None = None) -> FloatArray:
        """:math:`\\alpha`-consistency of each ``T`` when the true value is distributed on
        ``x_atoms`` (with ``weights``)."""
        t = np.atleast_1d(self.check_param(T)).ravel()
        xs = _as_float("x_atoms", x_atoms).ravel()
        return alpha_consistency(self.alg_value(t[:, None], xs[None, :]), self.opt(xs),
                                 alpha, weights, kind=self.kind)

    def max_optimal(self, y: float, weight: Weight, *, n_grid: int = 257,
                    n_x: int = 1025) -> Optimum:
        """MAX-optimal parameter: argmin of :math:`d_{\\max}` over the robust interval."""
        self.prediction_domain_check(y)
        lo, hi = self.robust_interval
        return minimize_on_interval(lambda t: self.d_max(t, y, weight, n_x), lo, hi,
                                    n_grid=n_grid, candidates=self._static_candidates(y))

    def avg_optimal(self, y: float, weight: Weight, *, n_grid: int = 257,
                    n_x: int = 1025) -> Optimum:
        """AVG-optimal parameter: argmin of :math:`d_{\\mathrm{avg}}` over the robust interval."""
        self.prediction_domain_check(y)
        lo, hi = self.robust_interval
        return minimize_on_interval(lambda t: self.d_avg(t, y, weight, n_x), lo, hi,
                                    n_grid=n_grid, candidates=self._static_candidates(y))

    def cvar_optimal(self, y: float, x_atoms: ArrayLike, alpha: float,
                     weights: ArrayLike | None = None, *, n_grid: int = 257) -> Optimum:
        """CVaR-optimal parameter: argmin of the :math:`\\alpha`-consistency under the discrete
        distribution ``x_atoms`` (the prediction's distribution for prediction ``y``)."""
        self.prediction_domain_check(y)
        _check_alpha(alpha)
        xs = _as_float("x_atoms", x_atoms).ravel()
        lo, hi = self.robust_interval
        cand = np.concatenate([self.candidates(xs, y), self._static_candidates(y)])
        return minimize_on_interval(lambda t: self.alpha_consistency(t, xs, alpha, weights),
                                    lo, hi, n_grid=n_grid, candidates=cand)

    def delta_tolerant(self, y: float, delta: float, *, n_grid: int = 257,
                       n_x: int = 1025) -> Optimum:
        """δ-tolerance design: the r-robust parameter with the best worst-case ratio over the
        tolerance range :math:`R_y = [(1-δ)y, (1+δ)y]` (the paper's special case of the range;
        our generic reading of the δ-TOL baselines of Angelopoulos et al. 2022)."""
        self.prediction_domain_check(y)
        if not 0 < delta < 1:
            raise ValueError(f"delta: expected a tolerance in (0, 1), got {delta!r}")
        w = window_weight(y, 1 - delta, 1 + delta, "uniform", self.domain)
        lo, hi = self.robust_interval
        return minimize_on_interval(
            lambda t: weighted_sup(self.ratio, w, t, n_grid=n_x, breakpoints=self._bp(y)),
            lo, hi, n_grid=n_grid, candidates=self._static_candidates(y))

    def brittleness(self, T: ArrayLike, y: float, rel_eta: float = 1e-3,
                    n_grid: int = 65) -> FloatArray:
        """Jump of the distance to the ideal as the error :math:`\\eta\\to0^+`:
        :math:`\\sup_{|x-y|\\le \\eta} g_T(x) - g_T(y)` with :math:`\\eta` = ``rel_eta * y``.

        A brittle algorithm (a threshold right at the prediction) has a jump of order one; the
        gap rather than the ratio is used so that a discontinuity of the ideal itself (e.g. at
        ``M/r`` in one-max) is not counted against the algorithm.
        """
        self.prediction_domain_check(y)
        w = window_weight(y, 1 - rel_eta, 1 + rel_eta, "uniform", self.domain)
        t = np.atleast_1d(self.check_param(T)).ravel()
        sup = weighted_sup(self.gap, w, t, n_grid=n_grid, breakpoints=self._bp(y))
        return sup - self.gap(t, np.full_like(t, y))

    def _static_candidates(self, y: float) -> FloatArray:
        lo, hi = self.robust_interval
        return np.array([lo, hi, y])
