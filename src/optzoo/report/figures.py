"""Figures of reproduction reports: one small set of panels that every reproduction draws with.

The reports are read as evidence, so every figure follows the same rules:

* every plotted mean carries its 95 % confidence interval across seeds (Student t, the same
  :func:`optzoo.experiment.stats.mean_ci` the tables use): a band on a line panel, an error bar
  on a categorical panel; a cell with one seed shows its point alone (no interval exists);
* categorical domains (methods, environments, problems) are drawn as bars or points with their
  full names, rotated when long, never as a line joining categories;
* an axis whose positive values span more than two orders of magnitude becomes logarithmic
  (``log="auto"``), so one diverged arm at 450 cannot flatten every other bar to zero;
  non-finite values (diverged runs) are left out and counted in the legend or tick label;
* figures are written once at a fixed size and resolution by :func:`save`, which returns the
  :class:`~optzoo.experiment.Figure` the summary lists.

Example:
    >>> import numpy as np
    >>> from optzoo.report.figures import grid, line_panel, category_panel, save
    >>> fig, (a, b) = grid(2)
    >>> line_panel(a, {"adam": {1e-3: [0.5, 0.6, 0.55], 1e-2: [0.2, 0.25, 0.3]}},
    ...            xlabel="lr", ylabel="loss", xlog=True)
    >>> category_panel(b, {"adam": [0.9, 0.91, 0.92], "sgd": [0.85, 0.88, 0.86]},
    ...                ylabel="accuracy")
    >>> import tempfile, pathlib
    >>> out = save(fig, pathlib.Path(tempfile.mkdtemp()) / "f.png", "Two panels.")
    >>> out.path.exists()
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from optzoo.experiment.core import Figure
from optzoo.experiment.stats import mean_ci

__all__ = ["grid", "line_panel", "curves_panel", "category_panel", "scatter_panel",
           "heatmap_panel", "save", "span_is_wide", "color"]

#: Positive values spanning at least this ratio get a log axis under ``log="auto"``.
LOG_SPAN = 100.0
#: Category labels longer than this many characters are rotated.
ROTATE_AFTER = 6


def _pyplot():
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "cairo"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def color(i: int) -> str:
    """The ``i``-th colour of matplotlib's default cycle (``C0``, ``C1``, …), for a method that
    keeps one colour across panels."""
    return f"C{i % 10}"


def grid(n: int, *, ncols: int | None = None, panel: tuple[float, float] = (5.0, 3.8),
         sharey: bool = False, sharex: bool = False):
    """A figure of ``n`` panels, ``ncols`` to a row (all in one row up to four); ``sharey`` /
    ``sharex`` share the axes' limits across panels, as in :func:`matplotlib.pyplot.subplots`.

    Returns ``(fig, axes)`` with ``axes`` a flat list of length ``n``; unused cells of the last
    row are hidden.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n: expected a positive number of panels, got {n!r}")
    plt = _pyplot()
    ncols = min(n, 4) if ncols is None else max(1, min(int(ncols), n))
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel[0] * ncols, panel[1] * nrows),
                             squeeze=False, sharey=sharey, sharex=sharex)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def _finite(values: Sequence[float] | Any) -> tuple[list[float], int]:
    if isinstance(values, Mapping):  # {seed: value}, as experiment.stats.by_seed returns
        values = list(values.values())
    flat = np.ravel(np.asarray(values, dtype=object))
    vals = [math.nan if v is None else float(v) for v in flat]
    good = [v for v in vals if math.isfinite(v)]
    return good, len(vals) - len(good)


def _scalar(x: Any) -> bool:
    return x is None or isinstance(x, (int, float, np.number))


def _mean_half(values: Sequence[float]) -> tuple[float, float]:
    m, h = mean_ci(values)
    return m, (0.0 if math.isnan(h) else h)


def span_is_wide(values: Sequence[float]) -> bool:
    """Whether the positive finite ``values`` span at least :data:`LOG_SPAN` (and none is
    non-positive, which a log axis could not show)."""
    v = np.asarray([x for x in values if x is not None and math.isfinite(x)], dtype=float)
    if v.size < 2 or np.any(v <= 0):
        return False
    return bool(v.max() / v.min() >= LOG_SPAN)


def _apply_log(ax, axis: str, log: bool | str, values: Sequence[float]) -> None:
    if log == "auto":
        log = span_is_wide(values)
    elif log == "symlog":  # signed values, or values that reach 0, over orders of magnitude
        (ax.set_xscale if axis == "x" else ax.set_yscale)("symlog")
        return
    elif not isinstance(log, bool):
        raise ValueError(f"{axis}log: expected True, False, 'auto' or 'symlog', got {log!r}")
    if log:
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log")


def _decorate(ax, *, xlabel: str | None, ylabel: str | None, title: str | None,
              legend: bool | str) -> None:
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=9)
    if legend and ax.get_legend_handles_labels()[0]:
        if legend == "outside":  # beside the panel, where it cannot cover a line
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
        else:
            ax.legend(fontsize=7, loc="best" if legend is True else legend)
    ax.grid(True, alpha=0.25, lw=0.5)


def _references(ax, reference, hline) -> None:
    for name, (rx, ry) in (reference or {}).items():
        ax.plot(rx, ry, color="0.5", lw=0.8, ls="--", label=name)
    if hline is not None:
        ax.axhline(hline, color="0.4", lw=0.8, ls="--")


def _label(name: str, dropped: int) -> str:
    return f"{name} ({dropped} non-finite left out)" if dropped else name


def line_panel(ax, series: Mapping[str, Mapping[float, Sequence[float]]], *,
               xlabel: str | None = None, ylabel: str | None = None, title: str | None = None,
               xlog: bool | str = "auto", ylog: bool | str = "auto",
               colors: Mapping[str, str] | None = None,
               reference: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
               hline: float | None = None, marker: str | None = "o",
               legend: bool | str = True) -> None:
    """Means over seeds against a numeric ``x``, with 95 % CI bands.

    Args:
        ax: a matplotlib axes (from :func:`grid`).
        series: ``{label: {x: per-seed values}}`` (a list, or ``{seed: value}``); an ``x``
            whose values are all non-finite is left out (the count is shown in the legend).
        xlabel, ylabel, title: axis labels and panel title.
        xlog, ylog: ``True``, ``False``, ``"auto"`` (log when the span reaches
            :data:`LOG_SPAN`) or ``"symlog"`` (signed values over orders of magnitude).
        colors: ``{label: colour}``; default: the colour cycle in ``series`` order.
        reference: ``{label: (xs, ys)}`` drawn as thin dashed grey lines (a bound, a slope).
        hline: a reference level drawn as a dashed line.
        marker: the marker of each mean (``None`` for dense curves); a series with a single
            ``x`` always shows a marker and an error bar, since a band would have no width.
        legend: draw the legend (``True``), not (``False``), or a matplotlib ``loc`` string;
            ``"outside"`` puts it to the right of the panel.
    """
    xs_all: list[float] = []
    ys_all: list[float] = []
    for i, (name, cells) in enumerate(series.items()):
        xs, ms, lo, hi, dropped = [], [], [], [], 0
        for x in sorted(cells):
            good, bad = _finite(cells[x])
            dropped += bad
            if not good:
                continue
            m, h = _mean_half(good)
            xs.append(float(x))
            ms.append(m)
            lo.append(m - h)
            hi.append(m + h)
        if not xs:
            continue
        c = (colors or {}).get(name, color(i))
        if len(xs) == 1:
            ax.errorbar(xs, ms, yerr=[[ms[0] - lo[0]], [hi[0] - ms[0]]], fmt="o", ms=4,
                        color=c, capsize=3, label=_label(name, dropped))
        else:
            ax.plot(xs, ms, marker=marker, ms=4, color=c, label=_label(name, dropped))
            ax.fill_between(xs, lo, hi, color=c, alpha=0.18, lw=0)
        xs_all += xs
        ys_all += ms
    _references(ax, reference, hline)
    _apply_log(ax, "x", xlog, xs_all)
    _apply_log(ax, "y", ylog, ys_all)
    _decorate(ax, xlabel=xlabel, ylabel=ylabel, title=title, legend=legend)


def curves_panel(ax, curves: Mapping[str, Sequence[Sequence[float]]], *,
                 x: Sequence[float] | Mapping[str, Sequence[float]] | None = None,
                 xlabel: str | None = None, ylabel: str | None = None,
                 title: str | None = None, xlog: bool | str = False,
                 ylog: bool | str = "auto", colors: Mapping[str, str] | None = None,
                 reference: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
                 hline: float | None = None, vline: float | None = None,
                 marker: str | None = None, legend: bool | str = True) -> None:
    """Per-seed curves (training loss, gradient norm, …) as their mean with a 95 % CI band.

    Args:
        curves: ``{label: [curve of seed 0, curve of seed 1, …]}``; curves of one label are cut
            to the shortest; non-finite points are left out of that point's mean.
        x: the shared abscissa, or ``{label: abscissa}``; default ``0, 1, …``.
        vline: an abscissa marked with a dashed vertical line (a budget, a switch point).
    Other arguments as in :func:`line_panel`.
    """
    from scipy.stats import t as student

    ys_all: list[float] = []
    for i, (name, runs) in enumerate(curves.items()):
        runs = [np.asarray(r, dtype=float) for r in runs if len(r)]
        if not runs:
            continue
        n = min(len(r) for r in runs)
        a = np.stack([r[:n] for r in runs])
        xs = np.arange(n) if x is None else np.asarray(
            x[name] if isinstance(x, Mapping) else x, dtype=float)[:n]
        ok = np.isfinite(a)
        k = ok.sum(axis=0)
        keep = k > 0
        if not keep.any():
            continue
        s = np.where(ok, a, 0.0)
        mean = s.sum(axis=0)[keep] / k[keep]
        dev = np.where(ok, a - np.where(keep, s.sum(axis=0) / np.maximum(k, 1), 0.0), 0.0)
        var = (dev ** 2).sum(axis=0)[keep] / np.maximum(k[keep] - 1, 1)
        kk = k[keep]
        half = np.where(kk > 1, student.ppf(0.975, np.maximum(kk - 1, 1)) * np.sqrt(var / kk),
                        0.0)
        c = (colors or {}).get(name, color(i))
        ax.plot(xs[keep], mean, color=c, lw=1.2, marker=marker, ms=3,
                label=f"{name} (n = {len(runs)})")
        ax.fill_between(xs[keep], mean - half, mean + half, color=c, alpha=0.18, lw=0)
        ys_all += list(mean)
    _references(ax, reference, hline)
    if vline is not None:
        ax.axvline(vline, color="0.4", lw=0.8, ls="--")
    _apply_log(ax, "x", xlog, [])
    _apply_log(ax, "y", ylog, ys_all)
    _decorate(ax, xlabel=xlabel, ylabel=ylabel, title=title, legend=legend)


def category_panel(ax, values: Mapping[str, Any], *, ylabel: str | None = None,
                   title: str | None = None, kind: str = "bar", ylog: bool | str = "auto",
                   colors: Mapping[str, str] | None = None, hline: float | None = None,
                   xlabel: str | None = None, legend: bool | str = True) -> None:
    """Means over seeds per category, as bars or points with 95 % CI error bars.

    Args:
        values: ``{category: per-seed values}`` (one series), or
            ``{series: {category: per-seed values}}`` (grouped: series side by side in each
            category, in a legend).
        kind: ``"bar"`` or ``"point"`` (points suit metrics whose zero is not meaningful).
        hline: a reference level drawn as a dashed line (a chance level, a bound).
        colors: ``{category or series: colour}``.
    Other arguments as in :func:`line_panel`.  Categories keep their full names; labels longer
    than :data:`ROTATE_AFTER` characters are rotated.
    """
    if kind not in ("bar", "point"):
        raise ValueError(f"kind: expected 'bar' or 'point', got {kind!r}")
    # {category: {seed: value}} (what by_seed returns) is one series; a mapping whose values
    # are themselves collections of seeds is grouped.
    grouped = bool(values) and all(
        isinstance(v, Mapping) and v and not all(_scalar(x) for x in v.values())
        for v in values.values())
    table: dict[str, dict[str, Any]] = (
        {s: dict(c) for s, c in values.items()} if grouped else {"": dict(values)})
    cats: list[str] = []
    for cells in table.values():
        cats += [str(c) for c in cells if str(c) not in cats]
    ticks = list(cats)
    nser = len(table)
    width = 0.8 / nser
    means_all: list[float] = []
    for j, (sname, cells) in enumerate(table.items()):
        cells = {str(k): v for k, v in cells.items()}
        pos, ms, hs, cols, dropped = [], [], [], [], 0
        for ci, cat in enumerate(cats):
            if cat not in cells:
                continue
            good, bad = _finite(cells[cat])
            dropped += bad
            if bad and not grouped:
                ticks[ci] = f"{cat}\n({bad} non-finite left out)"
            if not good:
                ax.annotate("n/a", (ci + (j - (nser - 1) / 2) * width, 0), fontsize=7,
                            ha="center", xycoords=("data", "axes fraction"),
                            textcoords="offset points", xytext=(0, 3))
                continue
            m, h = _mean_half(good)
            pos.append(ci + (j - (nser - 1) / 2) * width)
            ms.append(m)
            hs.append(h)
            key = sname if grouped else cat
            cols.append((colors or {}).get(key, color(j if grouped else ci)))
        if not pos:
            continue
        label = _label(sname, dropped) if grouped else None
        if kind == "bar":
            ax.bar(pos, ms, width=width * 0.9, color=cols, label=label,
                   yerr=hs, capsize=3, error_kw={"lw": 0.9})
            # a tick at each mean, so a bar of height 0 is seen as a value, not a missing cell
            ax.scatter(pos, ms, marker="_", s=60, color="0.2", lw=1.0, zorder=3)
        else:
            ax.errorbar(pos, ms, yerr=hs, fmt="none", ecolor="0.3", capsize=3, lw=0.9)
            ax.scatter(pos, ms, c=cols, s=28, zorder=3, label=label)
        means_all += ms
    if hline is not None:
        ax.axhline(hline, color="0.4", lw=0.8, ls="--")
    rotate = any(len(c) > ROTATE_AFTER for c in cats)
    ax.set_xlim(-0.6, len(cats) - 0.4)
    ax.set_xticks(range(len(cats)), ticks, rotation=30 if rotate else 0,
                  ha="right" if rotate else "center", rotation_mode="anchor", fontsize=8)
    _apply_log(ax, "y", ylog, means_all)
    _decorate(ax, xlabel=xlabel, ylabel=ylabel, title=title, legend=legend if grouped else False)


def scatter_panel(ax, points: Mapping[str, tuple[Sequence[float], Sequence[float]]], *,
                  xlabel: str | None = None, ylabel: str | None = None,
                  title: str | None = None, xlog: bool | str = "auto",
                  ylog: bool | str = "auto", colors: Mapping[str, str] | None = None,
                  seeds: bool = True, legend: bool | str = True) -> None:
    """One point per method at its mean on two metrics, with 95 % CIs on both (a trade-off
    or Pareto plot: forget vs retain accuracy, return vs cost).

    Args:
        points: ``{label: (per-seed x values, per-seed y values)}`` (paired by seed).
        seeds: also draw each seed as a small faint dot.
    Other arguments as in :func:`line_panel`.
    """
    xs_all: list[float] = []
    ys_all: list[float] = []
    for i, (name, (xv, yv)) in enumerate(points.items()):
        pairs = [(float(a), float(b)) for a, b in zip(xv, yv, strict=True)
                 if a is not None and b is not None and math.isfinite(a) and math.isfinite(b)]
        if not pairs:
            continue
        gx, gy = [p[0] for p in pairs], [p[1] for p in pairs]
        (mx, hx), (my, hy) = _mean_half(gx), _mean_half(gy)
        c = (colors or {}).get(name, color(i))
        if seeds and len(pairs) > 1:
            ax.scatter(gx, gy, color=c, s=8, alpha=0.35, lw=0)
        ax.errorbar([mx], [my], xerr=[hx], yerr=[hy], fmt="o", ms=5, color=c, capsize=3,
                    label=_label(name, len(list(xv)) - len(pairs)))
        xs_all.append(mx)
        ys_all.append(my)
    _apply_log(ax, "x", xlog, xs_all)
    _apply_log(ax, "y", ylog, ys_all)
    _decorate(ax, xlabel=xlabel, ylabel=ylabel, title=title, legend=legend)


def heatmap_panel(ax, matrix: Sequence[Sequence[float]], *, xticks: Sequence[Any],
                  yticks: Sequence[Any], xlabel: str | None = None, ylabel: str | None = None,
                  title: str | None = None, annotate: bool = True, fmt: str = "{:.3g}",
                  cmap: str = "viridis", log: bool | str = "auto") -> None:
    """A grid of means (a learning-rate × width sweep, a v × i grid) with its values written in
    each cell; a colour bar; ``log="auto"`` uses a log colour scale for wide positive spans."""
    from matplotlib.colors import LogNorm

    m = np.asarray(matrix, dtype=float)
    fin = m[np.isfinite(m)]
    use_log = span_is_wide(list(fin)) if log == "auto" else bool(log)
    norm = LogNorm(vmin=fin.min(), vmax=fin.max()) if use_log and fin.size else None
    im = ax.imshow(np.ma.masked_invalid(m), aspect="auto", cmap=cmap, norm=norm, origin="lower")
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    rotate = any(len(str(x)) > ROTATE_AFTER for x in xticks)
    ax.set_xticks(range(len(xticks)), [str(x) for x in xticks], fontsize=8,
                  rotation=30 if rotate else 0, ha="right" if rotate else "center",
                  rotation_mode="anchor")
    ax.set_yticks(range(len(yticks)), [str(y) for y in yticks], fontsize=8)
    if annotate:
        for (r, c), v in np.ndenumerate(m):
            ax.text(c, r, "n/a" if not math.isfinite(v) else fmt.format(v), ha="center",
                    va="center", fontsize=7, color="w")
    _decorate(ax, xlabel=xlabel, ylabel=ylabel, title=title, legend=False)
    ax.grid(False)


def save(fig, path: Path | str, caption: str, *, dpi: int = 110,
         title: str | None = None) -> Figure:
    """Lay out, write and close ``fig``; the :class:`~optzoo.experiment.Figure` for the summary.
    ``title`` is a figure-wide title above all panels.

    ``bbox_inches="tight"`` keeps rotated tick labels and outside legends inside the image.
    """
    plt = _pyplot()
    path = Path(path)
    if path.suffix.lower() != ".png":
        raise ValueError(f"path: expected a .png file, got {str(path)!r}")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return Figure(path=path, caption=caption)
