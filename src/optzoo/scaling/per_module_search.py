"""Per-module hyperparameter search of Complete(d)P (Mlodozeniec et al., ICLR 2026, §
"per-module hyperparameters"): multipliers of each module kind's learning rate and weight decay,
relative to the parameterisation, searched on a small proxy and reused at every scale.

The paper searches with a *trust-region random search*, because the per-module landscape is
high-dimensional and "jagged": perturbations are sampled around the incumbent inside a region
that grows after a success and shrinks after a failure.  Its schedule (initial radius, factors,
budget) is not in the material read; the reading here, written down as defaults:

* the search runs in log2 space of the multipliers, starting from 0 (every multiplier 1: the
  global setting the proxy was tuned at);
* a candidate is the incumbent plus a uniform draw from the box [−r, r]^dim;
* success (strictly lower objective): accept, r ← min(2r, r_max); failure: r ← max(r/2, r_min);
* r₀ = 1 (a 2× factor), r_min = 1/8, r_max = 4.

:func:`per_module_multipliers` turns a point of the search space into the ``multipliers``
mapping of :class:`~optzoo.scaling.complete_p.Parameterisation`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from optzoo.scaling.complete_p import KINDS

#: (kind, key) of the per-module search space: every kind's lr, the weight decay of the kinds
#: that have one (norms and biases are not decayed)
SEARCH_SPACE: tuple[tuple[str, str], ...] = tuple(
    [(k, "lr") for k in KINDS] + [(k, "wd") for k in ("input", "hidden", "output")])

__all__ = ["SEARCH_SPACE", "SearchResult", "per_module_multipliers", "trust_region_search"]


@dataclass(frozen=True)
class SearchResult:
    """The incumbent ``x`` (log2 multipliers), its objective ``value``, and the history of
    every evaluated ``(x, value, radius)``."""

    x: tuple[float, ...]
    value: float
    history: tuple[tuple[tuple[float, ...], float, float], ...]

    @property
    def evaluations(self) -> int:
        return len(self.history)


def trust_region_search(objective: Callable[[np.ndarray], float], dim: int, budget: int, *,
                        radius: float = 1.0, shrink: float = 0.5, grow: float = 2.0,
                        min_radius: float = 0.125, max_radius: float = 4.0,
                        x0: Sequence[float] | None = None, seed: int = 0) -> SearchResult:
    """Minimise ``objective`` over R^dim by trust-region random search with ``budget``
    evaluations (the first at ``x0``, default 0).  A non-finite value is a failure."""
    for name, v in (("dim", dim), ("budget", budget)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name}: expected an integer >= 1, got {v!r}")
    for name, v in (("radius", radius), ("min_radius", min_radius), ("max_radius", max_radius)):
        if not (isinstance(v, int | float) and math.isfinite(v) and v > 0):
            raise ValueError(f"{name}: expected a finite number > 0, got {v!r}")
    if not min_radius <= radius <= max_radius:
        raise ValueError(f"radius: expected min_radius <= radius <= max_radius, got "
                         f"{min_radius} <= {radius} <= {max_radius}")
    if not (0 < shrink < 1 < grow):
        raise ValueError(f"shrink, grow: expected 0 < shrink < 1 < grow, got {shrink}, {grow}")
    x = np.zeros(dim) if x0 is None else np.asarray(x0, dtype=float)
    if x.shape != (dim,) or not np.all(np.isfinite(x)):
        raise ValueError(f"x0: expected {dim} finite numbers, got {x0!r}")
    rng = np.random.default_rng(seed)
    best = float(objective(x.copy()))
    best = best if math.isfinite(best) else math.inf
    history = [(tuple(map(float, x)), best, float(radius))]
    r = float(radius)
    for _ in range(budget - 1):
        cand = x + r * rng.uniform(-1.0, 1.0, size=dim)
        value = float(objective(cand.copy()))
        history.append((tuple(map(float, cand)), value, r))
        if math.isfinite(value) and value < best:
            x, best, r = cand, value, min(r * grow, max_radius)
        else:
            r = max(r * shrink, min_radius)
    return SearchResult(tuple(map(float, x)), best, tuple(history))


def per_module_multipliers(x: Sequence[float], space: Sequence[tuple[str, str]] = SEARCH_SPACE
                           ) -> dict[str, dict[str, float]]:
    """``{kind: {key: 2**x_i}}`` for a point ``x`` of ``space`` (log2 multipliers)."""
    if len(x) != len(space):
        raise ValueError(f"x: expected {len(space)} values (one per entry of space), got "
                         f"{len(x)}")
    out: dict[str, dict[str, float]] = {}
    for (kind, key), v in zip(space, x, strict=True):
        if not math.isfinite(float(v)):
            raise ValueError(f"x: expected finite log2 multipliers, got {v!r} for {kind}.{key}")
        out.setdefault(kind, {})[key] = float(2.0 ** float(v))
    return out
