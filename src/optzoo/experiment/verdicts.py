"""Verdicts that are evidence: a claim is *held*, *not held* or *inconclusive* by a named test.

Every claim of every reproduction is decided here, never by a hand-written boolean.  Each test is
a small pure function over per-seed values that returns a :class:`Verdict`: the decision, the
test's name, the effect estimate with its 95 % confidence interval, ``n``, the margin or
threshold, and, where it applies, a one-sided p-value and the minimum effect detectable at this
``n``.  The decision rules (all at the 95 % level, two-sided CIs unless a rule says otherwise):

=================  =========================================================================
test               held / not held / inconclusive
=================  =========================================================================
``superior``       CI of the difference (claimed direction) lies above ``min_effect`` / lies
                   below 0 or entirely inside ±``min_effect`` / anything else.  A tie is
                   inside ±``min_effect`` (or exactly 0), so it never passes.
``noninferior``    CI lies above −``margin`` / lies below −``margin`` / straddles −``margin``.
``equivalent``     TOST: the 90 % CI lies inside ±``margin`` / the CI lies entirely outside
                   ±``margin`` / straddles a margin.
``within``         the value (or the CI of the mean) lies in [lo, hi] / entirely outside /
                   straddles an end.
``bound_holds``    exact checks (theorems, deterministic counts): no violation / at least one.
``slope``          bootstrap CI of the OLS slope inside ``band`` / entirely outside / else.
``trend``          bootstrap CI of Spearman's ρ beyond ``min_rho`` in the claimed direction /
                   on the other side of 0 or inside ±``min_rho`` / else.
``ratio_bound``    CI of the geometric-mean ratio (t on log ratios) below ``at_most`` (or
                   above ``at_least``) / entirely on the wrong side / straddles it.
``undecided``      never held: the data cannot decide (censored, missing); inconclusive.
=================  =========================================================================

One value (one seed) has no confidence interval: every statistical test is then *inconclusive*,
unless the spread is exactly zero by construction (a deterministic quantity, marked by
``exact=True``).  NaN or infinite inputs raise a :class:`ValueError` that names the argument.

Claims over several cells combine with :func:`all_of` (every cell held), :func:`any_of` (at least
one cell held after Holm's correction of the cells' one-sided p-values) or :func:`at_least`
(``k`` of the cells held); each cell's verdict is kept in the combined one.

Fairness guards:

* :func:`tune` picks a hyperparameter on a grid and records the budget and whether the best
  value lies on the grid's edge; :func:`guard` downgrades a verdict to *inconclusive (grid
  edge)* when a comparison rests on such a value (unless the edge is a hard limit that the
  caller names) or *inconclusive (unequal tuning budget)* when the compared methods were tuned
  on grids of different sizes.
* :func:`interleaved` times two callables as A B A B … pairs in one process;
  :func:`ratio_bound` decides a timing claim from the per-pair ratios (never from the wall times
  of trials that ran concurrently).
* :func:`censored` keeps a budget-capped cost (a run that never reached its target) from
  deciding a comparison in the direction the cap favours.
* ``superior`` and ``trend`` take the smallest change that counts (``min_effect`` /
  ``min_rho``), so that a method that changes nothing cannot pass a claim that it changes
  something.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

HELD = "held"
NOT_HELD = "not held"
INCONCLUSIVE = "inconclusive"
VERDICTS = (HELD, NOT_HELD, INCONCLUSIVE)

LEVEL = 0.95
_BOOTSTRAP = 2000

#: the names of this module's tests; a claim whose verdict names another test is a defect
TESTS = ("superior", "noninferior", "equivalent", "within", "bound_holds", "slope", "trend",
         "ratio_bound", "all_of", "any_of", "at_least", "undecided")


@dataclass(frozen=True)
class Verdict:
    """The decision of one test and everything needed to check it.

    Args:
        verdict: ``"held"``, ``"not held"`` or ``"inconclusive"``.
        test: the test's name (one of :data:`TESTS`).
        effect: the effect estimate (a difference, a slope, a ratio, a count...).
        ci: its 95 % confidence interval ``(lo, hi)`` (NaN where none can be computed).
        n: number of values (seeds, pairs, cells) the decision rests on.
        margin: the margin, minimal effect or threshold the rule compares with.
        p_value: one-sided p-value of the test that would make the claim held, if any.
        mde: the smallest effect this test could declare held at this ``n`` with 80 % power
            (from the observed spread), if it applies.
        reason: one line on why this verdict.
        cells: the cells' verdicts of a combined claim, as ``(name, verdict)`` pairs.
        guards: fairness notes (tuning budgets, grid edges) recorded with the claim.
    """

    verdict: str
    test: str
    effect: float
    ci: tuple[float, float]
    n: int
    margin: Any = None
    p_value: float | None = None
    mde: float | None = None
    reason: str = ""
    cells: tuple[tuple[str, Verdict], ...] = ()
    guards: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict: expected one of {VERDICTS}, got {self.verdict!r}")
        if self.test not in TESTS:
            raise ValueError(f"test: expected one of {TESTS}, got {self.test!r}")

    @property
    def held(self) -> bool:
        return self.verdict == HELD

    def inside(self, m: float) -> bool:
        """Whether the CI lies inside ``±m``: no change of size ``m`` (a method that does not
        act, a run that does not move).  False when there is no CI."""
        lo, hi = self.ci
        return math.isfinite(lo) and math.isfinite(hi) and -m <= lo and hi <= m

    def describe(self) -> str:
        """One line: test, effect, CI, n, margin (and p / mde where present)."""
        parts = [f"{self.test}: effect {_g(self.effect)}"]
        if not (math.isnan(self.ci[0]) and math.isnan(self.ci[1])):
            label = {"bound_holds": "range", "equivalent": "90% CI"}.get(self.test, "95% CI")
            parts.append(f"{label} [{_g(self.ci[0])}, {_g(self.ci[1])}]")
        parts.append(f"n = {self.n}")
        if self.margin is not None:
            parts.append(f"margin {_margin_str(self.margin)}")
        if self.p_value is not None and math.isfinite(self.p_value):
            parts.append(f"p = {self.p_value:.3g}")
        if self.mde is not None and math.isfinite(self.mde):
            parts.append(f"mde {_g(self.mde)}")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "test": self.test, "effect": _num(self.effect),
                "ci": [_num(self.ci[0]), _num(self.ci[1])], "n": self.n,
                "margin": _margin_json(self.margin),
                "p_value": None if self.p_value is None else _num(self.p_value),
                "mde": None if self.mde is None else _num(self.mde),
                "reason": self.reason, "guards": list(self.guards),
                "cells": [{"cell": name, **v.to_dict()} for name, v in self.cells]}


def _g(x: float) -> str:
    return f"{x:.4g}" if isinstance(x, (int, float)) else str(x)


def _num(x: Any) -> Any:
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x) if math.isfinite(x) else None
    return x


def _margin_str(m: Any) -> str:
    if isinstance(m, tuple):
        return "[" + ", ".join(_g(v) for v in m) + "]"
    return _g(m)


def _margin_json(m: Any) -> Any:
    if isinstance(m, tuple):
        return [_num(v) for v in m]
    return _num(m)


# ----------------------------------------------------------------------------- input checks

def _values(name: str, x: Any) -> np.ndarray:
    if isinstance(x, Mapping):
        x = list(x.values())
    try:
        arr = np.asarray(list(x) if not np.isscalar(x) else [x], dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a sequence of numbers, got {x!r}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a flat sequence of numbers, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: expected at least one value, got none")
    if not np.all(np.isfinite(arr)):
        bad = [i for i, v in enumerate(arr) if not math.isfinite(v)]
        raise ValueError(f"{name}: expected finite numbers, got NaN/inf at positions {bad}")
    return arr


def _finite(name: str, v: float, *, positive: bool = False, nonneg: bool = False) -> float:
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
        raise ValueError(f"{name}: expected a finite number, got {v!r}")
    if positive and v <= 0:
        raise ValueError(f"{name}: expected a number > 0, got {v!r}")
    if nonneg and v < 0:
        raise ValueError(f"{name}: expected a number >= 0, got {v!r}")
    return float(v)


def _direction(direction: str) -> float:
    if direction in ("greater", "higher"):
        return 1.0
    if direction in ("less", "lower"):
        return -1.0
    raise ValueError(f"direction: expected 'greater' or 'less', got {direction!r}")


def _differences(a: Any, b: Any, paired: bool | None, log: bool) -> tuple[np.ndarray,
                                                                         np.ndarray | None,
                                                                         bool]:
    """``(diffs or a, b or None, paired)``: paired differences, or the two samples."""
    if paired is None:
        paired = isinstance(a, Mapping) and isinstance(b, Mapping)
    if paired and isinstance(a, Mapping) and isinstance(b, Mapping):
        common = [k for k in a if k in b]
        if not common:
            raise ValueError("a, b: paired by key, but they share no key (seed)")
        if len(common) != len(a) or len(common) != len(b):
            raise ValueError(f"a, b: paired by key, but their keys differ: "
                             f"{sorted(map(str, a))} vs {sorted(map(str, b))}")
        xa = _values("a", [a[k] for k in common])
        xb = _values("b", [b[k] for k in common])
    else:
        xa, xb = _values("a", a), _values("b", b)
    if log:
        for name, arr in (("a", xa), ("b", xb)):
            if np.any(arr <= 0):
                raise ValueError(f"{name}: a log-ratio needs positive values, got {arr.min()}")
        xa, xb = np.log(xa), np.log(xb)
    if paired:
        if xa.size != xb.size:
            raise ValueError(f"a, b: paired values need equal lengths, got {xa.size} and "
                             f"{xb.size}")
        return xa - xb, None, True
    return xa, xb, False


@dataclass(frozen=True)
class _Estimate:
    effect: float
    se: float  # nan if not estimable
    df: float
    n: int

    def ci(self, level: float = LEVEL) -> tuple[float, float]:
        if self.se == 0.0:
            return self.effect, self.effect
        if not math.isfinite(self.se):
            return math.nan, math.nan
        from scipy.stats import t

        h = float(t.ppf(0.5 + level / 2, self.df)) * self.se
        return self.effect - h, self.effect + h

    def p_above(self, threshold: float) -> float:
        """One-sided p-value of H0: effect <= threshold."""
        if self.se == 0.0:
            return 0.0 if self.effect > threshold else 1.0
        if not math.isfinite(self.se):
            return math.nan
        from scipy.stats import t

        return float(t.sf((self.effect - threshold) / self.se, self.df))

    def mde(self, base: float) -> float:
        """Smallest true effect above ``base`` detected with 80 % power (two-sided 95 %)."""
        if not math.isfinite(self.se):
            return math.nan
        from scipy.stats import t

        return base + (float(t.ppf(0.975, self.df)) + float(t.ppf(0.8, self.df))) * self.se


def _estimate(d: np.ndarray, b: np.ndarray | None, sign: float, exact: bool) -> _Estimate:
    """Mean difference (oriented by ``sign``), Welch's standard error when unpaired."""
    if b is None:
        n = d.size
        eff = sign * float(d.mean())
        if n == 1:
            return _Estimate(eff, 0.0 if exact else math.nan, math.nan, 1)
        sd = float(d.std(ddof=1))
        if sd <= 1e-12 * max(1.0, float(np.abs(d).max())):
            sd = 0.0
        return _Estimate(eff, sd / math.sqrt(n), n - 1, n)
    a = d
    eff = sign * float(a.mean() - b.mean())
    n = a.size + b.size
    if a.size == 1 or b.size == 1:
        spread = (a.size > 1 and float(a.std(ddof=1)) > 0) or (b.size > 1
                                                               and float(b.std(ddof=1)) > 0)
        return _Estimate(eff, 0.0 if exact and not spread else math.nan, math.nan, n)
    va, vb = float(a.var(ddof=1)) / a.size, float(b.var(ddof=1)) / b.size
    se2 = va + vb
    if se2 <= 1e-24 * max(1.0, float(np.abs(np.concatenate([a, b])).max())) ** 2:
        return _Estimate(eff, 0.0, math.inf, n)
    df = se2 ** 2 / ((va ** 2) / (a.size - 1) + (vb ** 2) / (b.size - 1)) if se2 > 0 else math.inf
    return _Estimate(eff, math.sqrt(se2), df, n)


# ----------------------------------------------------------------------------- comparisons

def _minimal_effect_rule(lo: float, hi: float, m: float) -> tuple[str, str]:
    """The rule of every "changes by more than ``m``" test (``superior``, ``trend``): held if
    the CI lies above ``m``; not held if it lies below 0 or inside ±``m``; else inconclusive.
    Returns the verdict and which case decided it (``above``, ``other side``, ``inside``,
    ``straddles``)."""
    if lo > m:
        return HELD, "above"
    if hi < 0:
        return NOT_HELD, "other side"
    if -m <= lo and hi <= m:
        return NOT_HELD, "inside"
    return INCONCLUSIVE, "straddles"


def superior(a: Any, b: Any, *, min_effect: float, direction: str = "greater",
             paired: bool | None = None, log_ratio: bool = False,
             exact: bool = False) -> Verdict:
    """Is ``a`` better than ``b`` by more than ``min_effect``?

    Args:
        a, b: per-seed values of the method and of the baseline: sequences, or mappings
            ``{seed: value}`` (then paired by seed unless ``paired=False``).
        min_effect: the smallest difference that counts, in the metric's units (or in log
            units when ``log_ratio``); fixed in the preset before results are seen.
        direction: ``"greater"`` (higher is better) or ``"less"`` (lower is better).
        paired: force paired (by position) or unpaired (Welch) differences.
        log_ratio: compare ``log a − log b`` (positive metrics: times, costs, errors).
        exact: the values are deterministic, so one value or zero spread is a point CI.

    Decision: with ``lo, hi`` the 95 % CI of the difference in the claimed direction,
    held if ``lo > min_effect``; not held if ``hi < 0`` or ``−min_effect ≤ lo ≤ hi ≤
    min_effect``; inconclusive otherwise (and with one seed, unless ``exact``).
    """
    m = _finite("min_effect", min_effect, nonneg=True)
    sign = _direction(direction)
    d, b_, _ = _differences(a, b, paired, log_ratio)
    est = _estimate(d, b_, sign, exact)
    lo, hi = est.ci()
    p = est.p_above(m)
    mde = est.mde(m)
    if math.isnan(lo):
        v, why = INCONCLUSIVE, "one value per side: no confidence interval"
    else:
        v, case = _minimal_effect_rule(lo, hi, m)
        why = {"above": f"CI lies above the minimal effect {m:g}",
               "other side": "CI lies on the other side of 0",
               "inside": f"CI lies inside ±{m:g} (no effect that counts)",
               "straddles": f"CI straddles the minimal effect {m:g} or 0"}[case]
    return Verdict(v, "superior", est.effect, (lo, hi), est.n, m, p, mde,
                   why + (" (log ratio)" if log_ratio else ""))


def noninferior(a: Any, b: Any, *, margin: float, direction: str = "greater",
                paired: bool | None = None, log_ratio: bool = False,
                exact: bool = False) -> Verdict:
    """Is ``a`` no worse than ``b`` by more than ``margin`` (a fixed number, metric's units)?

    Decision: with ``lo, hi`` the 95 % CI of ``a − b`` in the claimed direction, held if
    ``lo > −margin``; not held if ``hi < −margin``; inconclusive otherwise.
    """
    m = _finite("margin", margin, positive=True)
    sign = _direction(direction)
    d, b_, _ = _differences(a, b, paired, log_ratio)
    est = _estimate(d, b_, sign, exact)
    lo, hi = est.ci()
    p = est.p_above(-m)
    if math.isnan(lo):
        v, why = INCONCLUSIVE, "one value per side: no confidence interval"
    elif lo > -m:
        v, why = HELD, f"CI lies above −{m:g}"
    elif hi < -m:
        v, why = NOT_HELD, f"CI lies below −{m:g}"
    else:
        v, why = INCONCLUSIVE, f"CI straddles −{m:g}"
    return Verdict(v, "noninferior", est.effect, (lo, hi), est.n, m, p, est.mde(-m), why)


def equivalent(a: Any, b: Any, *, margin: float, paired: bool | None = None,
               log_ratio: bool = False, exact: bool = False) -> Verdict:
    """Are ``a`` and ``b`` equal up to ``±margin``?  Two one-sided tests (TOST) at 5 % each.

    Decision: held if the 90 % CI of ``a − b`` lies inside ``(−margin, margin)``; not held if
    the 95 % CI lies entirely outside it; inconclusive otherwise.  The reported CI is the 90 %
    one that TOST uses.
    """
    m = _finite("margin", margin, positive=True)
    d, b_, _ = _differences(a, b, paired, log_ratio)
    est = _estimate(d, b_, 1.0, exact)
    lo, hi = est.ci(0.90)
    lo95, hi95 = est.ci(0.95)
    p = None
    if math.isfinite(est.se):
        p = max(est.p_above(-m), 1.0 - est.p_above(m) if est.se > 0 else
                (0.0 if est.effect < m else 1.0))
    if math.isnan(lo):
        v, why = INCONCLUSIVE, "one value per side: no confidence interval"
    elif -m < lo and hi < m:
        v, why = HELD, f"90% CI inside ±{m:g}"
    elif lo95 > m or hi95 < -m:
        v, why = NOT_HELD, f"CI lies outside ±{m:g}"
    else:
        v, why = INCONCLUSIVE, f"CI straddles ±{m:g}"
    return Verdict(v, "equivalent", est.effect, (lo, hi), est.n, m, p, None, why)


def within(value: Any, lo: float, hi: float, *, exact: bool | None = None) -> Verdict:
    """Does a quantity lie in ``[lo, hi]`` (either end may be ±inf)?

    A scalar ``value`` is a deterministic quantity (``exact``): held iff it lies in the
    interval.  A sequence is per-seed values: held if the 95 % CI of its mean lies in the
    interval, not held if it lies entirely outside, inconclusive otherwise (and for one value).
    """
    lo_, hi_ = float(lo), float(hi)
    if math.isnan(lo_) or math.isnan(hi_) or lo_ > hi_:
        raise ValueError(f"lo, hi: expected lo <= hi, got {lo!r}, {hi!r}")
    scalar = np.isscalar(value)
    x = _values("value", value)
    exact = scalar if exact is None else exact
    est = _estimate(x, None, 1.0, exact)
    c_lo, c_hi = est.ci()
    if math.isnan(c_lo):
        v, why = INCONCLUSIVE, "one value: no confidence interval"
    elif lo_ <= c_lo and c_hi <= hi_:
        v, why = HELD, f"inside [{lo_:g}, {hi_:g}]"
    elif c_hi < lo_ or c_lo > hi_:
        v, why = NOT_HELD, f"outside [{lo_:g}, {hi_:g}]"
    else:
        v, why = INCONCLUSIVE, f"CI straddles an end of [{lo_:g}, {hi_:g}]"
    return Verdict(v, "within", est.effect, (c_lo, c_hi), est.n, (lo_, hi_), None, None, why)


def bound_holds(values: Any, bound: float, *, side: str = "le", tol: float = 0.0) -> Verdict:
    """An exact check: every value satisfies ``value <= bound + tol`` (``side="le"``) or
    ``value >= bound − tol`` (``side="ge"``).  For theorems and deterministic counts, not for
    noisy measurements.  Held with no violation; not held with at least one.  The effect is the
    number of violations; the CI is the range of the values.
    """
    x = _values("values", values)
    b = _finite("bound", bound)
    t = _finite("tol", tol, nonneg=True)
    if side == "le":
        bad = int(np.sum(x > b + t))
    elif side == "ge":
        bad = int(np.sum(x < b - t))
    else:
        raise ValueError(f"side: expected 'le' or 'ge', got {side!r}")
    v = HELD if bad == 0 else NOT_HELD
    why = f"{bad} of {x.size} values violate {'≤' if side == 'le' else '≥'} {b:g}"
    return Verdict(v, "bound_holds", float(bad), (float(x.min()), float(x.max())), int(x.size),
                   b, None, None, why)


def _bootstrap_indices(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, size=(_BOOTSTRAP, n))


def slope(xs: Any, ys: Any, *, band: tuple[float, float], log: bool = False,
          seed: int = 0) -> Verdict:
    """Is the OLS slope of ``ys`` on ``xs`` inside ``band = (lo, hi)``?

    ``log=True`` fits ``log y`` on ``log x`` (a power law's exponent).  The 95 % CI is a
    percentile bootstrap over the (x, y) points, with a fixed ``seed``.  Held if the CI lies
    inside the band, not held if it lies entirely outside, inconclusive otherwise.  Needs at
    least three distinct x values.
    """
    x, y = _values("xs", xs), _values("ys", ys)
    if x.size != y.size:
        raise ValueError(f"xs, ys: expected equal lengths, got {x.size} and {y.size}")
    lo, hi = float(band[0]), float(band[1])
    if math.isnan(lo) or math.isnan(hi) or lo > hi:
        raise ValueError(f"band: expected (lo, hi) with lo <= hi, got {band!r}")
    if log:
        if np.any(x <= 0) or np.any(y <= 0):
            raise ValueError("xs, ys: a log-log slope needs positive values")
        x, y = np.log(x), np.log(y)
    if np.unique(x).size < 3:
        raise ValueError(f"xs: a slope needs at least 3 distinct x values, got "
                         f"{np.unique(x).size}")
    est = float(np.polyfit(x, y, 1)[0])
    idx = _bootstrap_indices(x.size, seed)
    xb, yb = x[idx], y[idx]
    xm, ym = xb.mean(1, keepdims=True), yb.mean(1, keepdims=True)
    sxx = ((xb - xm) ** 2).sum(1)
    ok = sxx > 0
    slopes = (((xb - xm) * (yb - ym)).sum(1)[ok] / sxx[ok])
    c_lo, c_hi = (float(np.quantile(slopes, 0.025)), float(np.quantile(slopes, 0.975)))
    if lo <= c_lo and c_hi <= hi:
        v, why = HELD, f"slope CI inside [{lo:g}, {hi:g}]"
    elif c_hi < lo or c_lo > hi:
        v, why = NOT_HELD, f"slope CI outside [{lo:g}, {hi:g}]"
    else:
        v, why = INCONCLUSIVE, f"slope CI straddles an end of [{lo:g}, {hi:g}]"
    return Verdict(v, "slope", est, (c_lo, c_hi), int(x.size), (lo, hi), None, None,
                   why + (" (log-log)" if log else ""))


def trend(xs: Any, ys: Any, *, direction: str = "increasing", min_rho: float = 0.0,
          seed: int = 0) -> Verdict:
    """Does ``ys`` rise (``"increasing"``) or fall (``"decreasing"``) with ``xs``?

    The effect is Spearman's ρ (oriented: positive means the claimed direction), its 95 % CI
    a percentile bootstrap over points with a fixed ``seed``.  Held if the CI lies above
    ``min_rho``; not held if it lies below 0 or inside ±``min_rho``; inconclusive otherwise.
    """
    from scipy.stats import rankdata

    x, y = _values("xs", xs), _values("ys", ys)
    if x.size != y.size:
        raise ValueError(f"xs, ys: expected equal lengths, got {x.size} and {y.size}")
    if x.size < 3:
        raise ValueError(f"xs: a trend needs at least 3 points, got {x.size}")
    if direction not in ("increasing", "decreasing"):
        raise ValueError(f"direction: expected 'increasing' or 'decreasing', got {direction!r}")
    m = _finite("min_rho", min_rho, nonneg=True)
    sign = 1.0 if direction == "increasing" else -1.0

    def rho(xx: np.ndarray, yy: np.ndarray) -> np.ndarray:
        rx = np.apply_along_axis(rankdata, -1, xx)
        ry = np.apply_along_axis(rankdata, -1, yy)
        rx = rx - rx.mean(-1, keepdims=True)
        ry = ry - ry.mean(-1, keepdims=True)
        den = np.sqrt((rx ** 2).sum(-1) * (ry ** 2).sum(-1))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, (rx * ry).sum(-1) / np.where(den > 0, den, 1.0), 0.0)

    est = sign * float(rho(x[None], y[None])[0])
    idx = _bootstrap_indices(x.size, seed)
    boot = sign * rho(x[idx], y[idx])
    c_lo, c_hi = float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))
    v, case = _minimal_effect_rule(c_lo, c_hi, m)
    why = {"above": f"ρ CI lies above {m:g}",
           "other side": "ρ CI lies below 0 (the other direction)",
           "inside": f"ρ CI lies inside ±{m:g}",
           "straddles": f"ρ CI straddles {m:g} or 0"}[case]
    return Verdict(v, "trend", est, (c_lo, c_hi), int(x.size), m, None, None, why)


def ratio_bound(ratios: Any, *, at_most: float | None = None,
                at_least: float | None = None) -> Verdict:
    """A timing (or cost) claim from per-pair ratios ``t_A / t_B`` measured interleaved.

    The effect is the geometric-mean ratio; its 95 % CI is a Student-t interval on the log
    ratios.  With ``at_most``: held if the CI lies below it, not held if above, inconclusive
    if it straddles it; ``at_least`` mirrors that.  Give exactly one of the two.
    """
    if (at_most is None) == (at_least is None):
        raise ValueError("ratio_bound: give exactly one of at_most, at_least")
    r = _values("ratios", ratios)
    if np.any(r <= 0):
        raise ValueError(f"ratios: expected positive ratios, got {r.min()}")
    return _ratio_verdict(_estimate(np.log(r), None, 1.0, exact=False), at_most, at_least)


def _ratio_verdict(est: _Estimate, at_most: float | None, at_least: float | None) -> Verdict:
    """:func:`ratio_bound`'s rule on an estimate of the mean log ratio."""
    bound = _finite("at_most" if at_most is not None else "at_least",
                    at_most if at_most is not None else at_least, positive=True)
    lo, hi = est.ci()
    eff = math.exp(est.effect)
    ci = (math.exp(lo), math.exp(hi)) if math.isfinite(lo) else (math.nan, math.nan)
    if math.isnan(lo):
        v, why = INCONCLUSIVE, "one ratio: no confidence interval"
    elif at_most is not None:
        if ci[1] < bound:
            v, why = HELD, f"ratio CI lies below {bound:g}"
        elif ci[0] > bound:
            v, why = NOT_HELD, f"ratio CI lies above {bound:g}"
        else:
            v, why = INCONCLUSIVE, f"ratio CI straddles {bound:g}"
    else:
        if ci[0] > bound:
            v, why = HELD, f"ratio CI lies above {bound:g}"
        elif ci[1] < bound:
            v, why = NOT_HELD, f"ratio CI lies below {bound:g}"
        else:
            v, why = INCONCLUSIVE, f"ratio CI straddles {bound:g}"
    p = None
    if math.isfinite(est.se) and est.se > 0:
        up = est.p_above(math.log(bound))
        p = 1.0 - up if at_most is not None else up
    side = "≤" if at_most is not None else "≥"
    return Verdict(v, "ratio_bound", eff, ci, est.n, f"{side} {bound:g}", p, None, why)


# ----------------------------------------------------------------------------- combinations

def _cells(cells: Mapping[str, Verdict] | Sequence[tuple[str, Verdict]]):
    items = list(cells.items()) if isinstance(cells, Mapping) else list(cells)
    if not items:
        raise ValueError("cells: expected at least one cell verdict, got none")
    for name, v in items:
        if not isinstance(v, Verdict):
            raise ValueError(f"cells[{name!r}]: expected a Verdict, got {type(v).__name__}")
    return tuple((str(n), v) for n, v in items)


def _counts(items) -> tuple[int, int, int]:
    h = sum(v.verdict == HELD for _, v in items)
    nh = sum(v.verdict == NOT_HELD for _, v in items)
    return h, nh, len(items) - h - nh


def all_of(cells: Mapping[str, Verdict] | Sequence[tuple[str, Verdict]]) -> Verdict:
    """A claim "at every cell": held if every cell is held, not held if any cell is not held,
    inconclusive otherwise.  The effect is the number of cells held."""
    items = _cells(cells)
    h, nh, inc = _counts(items)
    if nh:
        v = NOT_HELD
    elif inc:
        v = INCONCLUSIVE
    else:
        v = HELD
    why = f"{h} held, {nh} not held, {inc} inconclusive of {len(items)} cells (all needed)"
    return Verdict(v, "all_of", float(h), (math.nan, math.nan), len(items), len(items),
                   None, None, why, items, _merge_guards(items))


def any_of(cells: Mapping[str, Verdict] | Sequence[tuple[str, Verdict]]) -> Verdict:
    """A claim "at some cell", Holm-corrected: held if the smallest one-sided p-value among the
    cells is at most ``0.025 / m`` (the first step of Holm's procedure at the two-sided 95 %
    level of every test here); cells without a p-value count as held only when exact (an
    ``exact`` or ``bound_holds`` verdict).  Not held if every cell is not held; inconclusive
    otherwise."""
    items = _cells(cells)
    m = len(items)
    h, nh, inc = _counts(items)
    ps = [v.p_value for _, v in items if v.p_value is not None and math.isfinite(v.p_value)]
    exact_held = any(v.held and (v.p_value is None) and v.test in ("bound_holds", "within")
                     for _, v in items)
    pmin = min(ps) if ps else math.nan
    holm = (ps and pmin <= 0.025 / m) or exact_held
    if holm:
        v = HELD
    elif nh == m:
        v = NOT_HELD
    else:
        v = INCONCLUSIVE
    why = (f"{h} held, {nh} not held, {inc} inconclusive of {m} cells; smallest one-sided "
           f"p = {pmin:.3g} vs Holm's 0.025/{m}")
    return Verdict(v, "any_of", float(h), (math.nan, math.nan), m, 0.025 / m,
                   None if math.isnan(pmin) else pmin, None, why, items, _merge_guards(items))


def at_least(cells: Mapping[str, Verdict] | Sequence[tuple[str, Verdict]], k: int) -> Verdict:
    """A claim "in at least ``k`` cells": held if ``k`` or more cells are held, not held if so
    many are not held that ``k`` can no longer be reached, inconclusive otherwise."""
    items = _cells(cells)
    m = len(items)
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= m:
        raise ValueError(f"k: expected an integer in 1..{m}, got {k!r}")
    h, nh, inc = _counts(items)
    if h >= k:
        v = HELD
    elif m - nh < k:
        v = NOT_HELD
    else:
        v = INCONCLUSIVE
    why = f"{h} held, {nh} not held, {inc} inconclusive of {m} cells ({k} needed)"
    return Verdict(v, "at_least", float(h), (math.nan, math.nan), m, k, None, None, why, items,
                   _merge_guards(items))


def _merge_guards(items) -> tuple[str, ...]:
    out: list[str] = []
    for _, v in items:
        out += [g for g in v.guards if g not in out]
    return tuple(out)


# ----------------------------------------------------------------------------- fairness guards

@dataclass(frozen=True)
class Tuned:
    """A hyperparameter picked on a grid by :func:`tune`.

    Args:
        name: what was tuned (``"Adam lr"``).
        best: the chosen grid value.
        score: its score (mean over seeds).
        grid: the grid, sorted.
        scores: the mean score of every grid value, in grid order.
        on_edge: the best value is the grid's smallest or largest, and that end is no hard
            limit.
        hard_limits: grid ends that are hard limits (a step size above which the method
            diverges by theory, a probability of 1), named in the report.
    """

    name: str
    best: Any
    score: float
    grid: tuple[Any, ...]
    scores: tuple[float, ...]
    on_edge: bool
    hard_limits: tuple[Any, ...] = ()

    @property
    def budget(self) -> int:
        return len(self.grid)

    def describe(self) -> str:
        edge = " (on the grid's edge)" if self.on_edge else ""
        if not math.isfinite(self.score):
            # every grid value failed (diverged, never worked): the pick is only the first
            # of equals, and the report must not read it as a tuned value
            return (f"{self.name}: no value of the {self.budget}-value grid "
                    f"{list(self.grid)} scores finitely (the pick {self.best!r} is arbitrary)"
                    f"{edge}")
        return (f"{self.name} = {self.best!r} tuned on {self.budget} values "
                f"{list(self.grid)}{edge}")


def tune(name: str, scores: Mapping[Any, Any], *, minimize: bool = True,
         hard_limits: Sequence[Any] = ()) -> Tuned:
    """Pick the best value of a hyperparameter grid.

    Args:
        name: what is tuned, for the report (``"SGD lr"``).
        scores: ``{grid value: score or per-seed scores}``; the mean over seeds is compared.
            Non-finite scores (a divergent run) rank last.
        minimize: lower score is better.
        hard_limits: grid ends that are hard limits, so a best value there is no edge.

    A grid of one value is recorded as a budget of 1 (an untuned setting).
    """
    if not scores:
        raise ValueError(f"scores: expected at least one grid value for {name!r}, got none")
    try:
        grid = sorted(scores)
    except TypeError:
        grid = list(scores)
    means = []
    for g in grid:
        s = scores[g]
        arr = np.asarray([s] if np.isscalar(s) else list(s), dtype=float)
        if arr.size == 0:
            raise ValueError(f"scores[{g!r}]: expected at least one value, got none")
        mu = float(arr.mean()) if np.all(np.isfinite(arr)) else math.inf * (1 if minimize
                                                                            else -1)
        means.append(mu)
    key = np.asarray(means) if minimize else -np.asarray(means)
    i = int(np.argmin(np.where(np.isnan(key), np.inf, key)))
    best = grid[i]
    edge = len(grid) > 1 and i in (0, len(grid) - 1) and best not in tuple(hard_limits)
    return Tuned(name, best, means[i], tuple(grid), tuple(means), bool(edge),
                 tuple(hard_limits))


def guard(verdict: Verdict, *tuned: Tuned, equal_budget: bool = True) -> Verdict:
    """Record the tuning behind a comparison and downgrade what it cannot support.

    A held or not-held verdict becomes *inconclusive (grid edge)* when any of ``tuned`` has its
    best value on the grid's edge, and *inconclusive (unequal tuning budget)* when
    ``equal_budget`` and the grids differ in size.  The notes are kept in ``guards``.
    """
    notes = list(verdict.guards) + [t.describe() for t in tuned]
    problems = []
    edges = [t.name for t in tuned if t.on_edge]
    if edges:
        problems.append("grid edge: " + ", ".join(edges))
    budgets = {t.budget for t in tuned}
    if equal_budget and len(budgets) > 1:
        problems.append("unequal tuning budget: " + ", ".join(f"{t.name} {t.budget}"
                                                              for t in tuned))
    if problems and verdict.verdict != INCONCLUSIVE:
        return replace(verdict, verdict=INCONCLUSIVE,
                       reason=f"{verdict.reason}; inconclusive ({'; '.join(problems)})",
                       guards=tuple(notes + [f"would be {verdict.verdict} without the guard"]))
    return replace(verdict, guards=tuple(notes + [f"{p}" for p in problems]))


def undecided(why: str, *, n: int = 0) -> Verdict:
    """A cell or claim that no test can decide from these data (no seed reached the target, a
    quantity is censored, the metric is missing): *inconclusive*, with ``why`` recorded.  Use it
    instead of dressing an empty comparison up as a test."""
    if not why:
        raise ValueError("why: expected a reason, got an empty string")
    return Verdict(INCONCLUSIVE, "undecided", math.nan, (math.nan, math.nan), int(n), None,
                   None, None, why)


def censored(verdict: Verdict, *, a_censored: bool, b_censored: bool, why: str = "") -> Verdict:
    """Guard a "``a`` needs less than ``b``" comparison whose unreached runs were counted at the
    budget (a lower bound of their true cost).  A censored ``a`` cannot support *held* and a
    censored ``b`` cannot support *not held*: those become *inconclusive (censored)*; other
    verdicts are kept."""
    if (verdict.verdict == HELD and a_censored) or (verdict.verdict == NOT_HELD and b_censored):
        side = "the method" if verdict.verdict == HELD else "the baseline"
        note = why or f"{side} did not reach the target in some seed; the budget is only a " \
                      "lower bound of its cost"
        return replace(verdict, verdict=INCONCLUSIVE,
                       reason=f"{verdict.reason}; inconclusive (censored: {note})",
                       guards=(*verdict.guards, f"would be {verdict.verdict} without censoring"))
    return verdict


def downgrade(verdict: Verdict, why: str) -> Verdict:
    """These data cannot decide ``verdict`` (a grid too coarse to place a threshold, a target
    no seed reached): *inconclusive*, with ``why`` and what the test alone said recorded."""
    if not why:
        raise ValueError("why: expected a reason, got an empty string")
    return replace(verdict, verdict=INCONCLUSIVE, reason=f"not decidable here: {why}",
                   guards=(*verdict.guards, f"would be {verdict.verdict}: {verdict.reason}"))


def not_acting(verdict: Verdict, why: str) -> Verdict:
    """The method cannot act in this setup (the effect it relies on is absent): the claim is
    *inconclusive* whatever the comparison says, with ``why`` recorded."""
    if not why:
        raise ValueError("why: expected a reason, got an empty string")
    return replace(verdict, verdict=INCONCLUSIVE,
                   reason=f"the method does not act here: {why}",
                   guards=(*verdict.guards, f"would be {verdict.verdict}: {verdict.reason}"))


# ----------------------------------------------------------------------------- timing

@dataclass(frozen=True)
class Interleaved:
    """Times of two callables measured as interleaved pairs (A B, B A, A B, …) in one process.

    ``ratios`` are ``t_A / t_B`` pair by pair; :meth:`metrics` flattens them for a trial's
    result (``<prefix>_ratio``, ``_log_ratio_mean``, ``_log_ratio_sd``, ``_pairs``,
    ``_a_s``, ``_b_s``) and :func:`ratio_bound_from_metrics` decides a claim from those.
    """

    a: tuple[float, ...]
    b: tuple[float, ...]

    @property
    def ratios(self) -> np.ndarray:
        return np.asarray(self.a) / np.asarray(self.b)

    def metrics(self, prefix: str) -> dict[str, float]:
        lr = np.log(self.ratios)
        return {f"{prefix}_ratio": float(np.exp(lr.mean())),
                f"{prefix}_log_ratio_mean": float(lr.mean()),
                f"{prefix}_log_ratio_sd": float(lr.std(ddof=1)) if lr.size > 1 else math.nan,
                f"{prefix}_pairs": int(lr.size),
                f"{prefix}_a_s": float(np.median(self.a)),
                f"{prefix}_b_s": float(np.median(self.b))}


def interleaved(fa: Callable[[], Any], fb: Callable[[], Any], *, pairs: int = 20,
                warmup: int = 2, clock: Callable[[], float] = time.perf_counter) -> Interleaved:
    """Time ``fa`` and ``fb`` alternately, ``pairs`` times each, after ``warmup`` untimed calls
    of each.  The order inside a pair alternates (A B, then B A) so that a drift of the machine
    (a neighbour's load, a cache warming) falls on both sides alike."""
    if not isinstance(pairs, int) or pairs < 2:
        raise ValueError(f"pairs: expected an integer >= 2, got {pairs!r}")
    if not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup: expected an integer >= 0, got {warmup!r}")
    for _ in range(warmup):
        fa()
        fb()
    ta, tb = [], []

    def timed(f):
        t0 = clock()
        f()
        return clock() - t0

    for i in range(pairs):
        if i % 2 == 0:
            ta.append(timed(fa))
            tb.append(timed(fb))
        else:
            tb.append(timed(fb))
            ta.append(timed(fa))
    if min(ta) <= 0 or min(tb) <= 0:
        raise ValueError("interleaved: a call took no measurable time; time a larger unit")
    return Interleaved(tuple(ta), tuple(tb))


def ratio_bound_from_metrics(metrics: Sequence[Mapping[str, Any]], prefix: str, *,
                             at_most: float | None = None,
                             at_least: float | None = None) -> Verdict:
    """:func:`ratio_bound` over the interleaved timings stored by :meth:`Interleaved.metrics`.

    With several trials (seeds), each trial's geometric-mean ratio is one observation; with
    one trial, its pairs are (the CI then comes from the stored log-ratio mean and sd).
    """
    rows = [m for m in metrics if m.get(f"{prefix}_ratio") is not None]
    if not rows:
        raise ValueError(f"metrics: no trial has {prefix}_ratio")
    if len(rows) > 1:
        return ratio_bound([float(m[f"{prefix}_ratio"]) for m in rows], at_most=at_most,
                           at_least=at_least)
    m = rows[0]
    mean, sd, n = (float(m[f"{prefix}_log_ratio_mean"]), float(m[f"{prefix}_log_ratio_sd"]),
                   int(m[f"{prefix}_pairs"]))
    if not math.isfinite(sd) or n < 2:
        return ratio_bound([math.exp(mean)], at_most=at_most, at_least=at_least)
    if (at_most is None) == (at_least is None):
        raise ValueError("ratio_bound: give exactly one of at_most, at_least")
    # the t interval needs only the pairs' mean, sd and count
    if sd <= 1e-12 * max(1.0, abs(mean)):
        sd = 0.0
    return _ratio_verdict(_Estimate(mean, sd / math.sqrt(n), n - 1, n), at_most, at_least)


# ----------------------------------------------------------------------------- per-seed helpers

def by_seed(results: Sequence[Any], metric: str,
            where: Callable[[Any], bool] = lambda r: True) -> dict[int, float]:
    """``{seed: value}`` of ``metric`` over the results that satisfy ``where`` (``None`` values
    skipped).  Two results with the same seed raise: pairing would be ambiguous."""
    out: dict[int, float] = {}
    for r in results:
        if not where(r) or r.metrics.get(metric) is None:
            continue
        s = r.trial.seed
        if s in out:
            raise ValueError(f"by_seed({metric!r}): two results with seed {s}; narrow `where`")
        out[s] = float(r.metrics[metric])
    return out


def common_seeds(*mappings: Mapping[Any, Any]) -> tuple[dict[Any, Any], ...]:
    """The ``{seed: value}`` mappings restricted to the seeds all of them have (a partial
    store, or a method that failed on a seed), in the first mapping's order: what the paired
    tests need, since they refuse mappings with different keys."""
    if not mappings:
        raise ValueError("mappings: expected at least one {seed: value} mapping")
    keys = [k for k in mappings[0] if all(k in m for m in mappings[1:])]
    return tuple({k: m[k] for k in keys} for m in mappings)
