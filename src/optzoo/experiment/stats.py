"""Means with 95 % confidence intervals across seeds, and grouping of trial results into tables."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from optzoo.experiment.core import Result, Table


def mean_ci(values: Iterable[float], level: float = 0.95) -> tuple[float, float]:
    """Mean and half-width of the Student-t confidence interval at ``level``.

    One value gives a half-width of ``nan`` (no spread can be estimated); an empty input raises.
    """
    x = np.asarray(list(values), dtype=float)
    if x.size == 0:
        raise ValueError("values: expected at least one number, got none")
    mean = float(x.mean())
    if x.size == 1:
        return mean, math.nan
    from scipy.stats import t

    half = float(t.ppf(0.5 + level / 2, df=x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return mean, half


def fmt_ci(mean: float, half: float, digits: int = 4) -> str:
    """``mean ± half`` with ``digits`` significant digits (``±`` omitted when undefined)."""
    if math.isnan(half):
        return f"{mean:.{digits}g}"
    if half <= 1e-12 * max(1.0, abs(mean)):  # equal values up to rounding: no spread
        half = 0.0
    return f"{mean:.{digits}g} ± {half:.2g}"


def metric_values(results: Iterable[Result], key: str) -> list[float]:
    """The metric ``key`` of every result that has it (``None`` values skipped), as floats."""
    return [float(r.metrics[key]) for r in results if r.metrics.get(key) is not None]


def fmt_values(values: Sequence[float], digits: int = 3) -> str:
    """``mean ± half-width`` of ``values`` (:func:`mean_ci`, :func:`fmt_ci`); ``—`` if empty."""
    return fmt_ci(*mean_ci(values), digits=digits) if len(values) else "—"


def ci_above(values: Sequence[float], level: float = 0.0) -> bool:
    """Whether the whole 95 % confidence interval of the mean lies above ``level`` (needs at
    least two values: one value has no interval)."""
    m, h = mean_ci(values)
    return bool(math.isfinite(h) and m - h > level)


def group(results: Sequence[Result],
          key: Callable[[Result], Any]) -> dict[Any, list[Result]]:
    """Results grouped by ``key(result)``, keys in first-seen order."""
    out: dict[Any, list[Result]] = defaultdict(list)
    for r in results:
        out[key(r)].append(r)
    return dict(out)


def aggregate(results: Sequence[Result], by: Sequence[str], metrics: Sequence[str],
              title: str, digits: int = 4) -> Table:
    """A table with one row per distinct value of ``by`` and one ``mean ± 95% CI`` cell per
    metric, the CI taken across the seeds in that row.

    ``by`` entries are ``"method"``, ``"problem"`` or keys of ``trial.params``.
    """

    def field(r: Result, name: str) -> Any:
        if name in ("method", "problem", "seed"):
            return getattr(r.trial, name)
        return r.trial.params[name]

    rows = []
    for k, rs in group(results, lambda r: tuple(field(r, b) for b in by)).items():
        cells = list(k)
        for m in metrics:
            vals = [float(r.metrics[m]) for r in rs if r.metrics.get(m) is not None]
            cells.append(fmt_ci(*mean_ci(vals), digits=digits) if vals else "—")
        cells.append(len(rs))
        rows.append(cells)
    return Table(title=title, columns=[*by, *metrics, "n"], rows=rows)
