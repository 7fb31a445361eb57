"""Quality of approximate Pareto fronts as reported by Smit et al. (ICLR 2026, OpenReview
YAgOaYedLQ): hypervolume gap to a reference front, Pareto-set size (unique non-dominated
points) and IGD+ (their appendix); IGD for completeness.  The indicators are pymoo's
(:class:`pymoo.indicators.hv.HV`, :class:`~pymoo.indicators.igd.IGD`,
:class:`~pymoo.indicators.igd_plus.IGDPlus`), fed with normalised points.

Normalisation (OUR CHOICE, the brief's "fix them per instance from the union of methods"):
per instance, the ideal and nadir points are the component-wise min and max over the union of
the fronts of all methods (and the reference front) — :func:`normalisation_bounds`; objectives
are mapped by (f − ideal) / (nadir − ideal) (a zero range becomes 1) and the hypervolume
reference point is 1.1 in every normalised coordinate.  Points beyond it add no volume.  The
HV gap is (HV(reference) − HV(front)) / HV(reference): positive when the front is worse,
negative when it beats the reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from pymoo.indicators.hv import HV
from pymoo.indicators.igd import IGD
from pymoo.indicators.igd_plus import IGDPlus

REF_POINT = 1.1


def _points(points, arg: str = "points") -> np.ndarray:
    f = np.asarray(points, dtype=float)
    if f.ndim == 1 and f.size == 0:
        return f.reshape(0, 0)
    if f.ndim != 2:
        raise ValueError(f"{arg}: expected a (K, n_obj) array, got shape {f.shape}")
    if not np.isfinite(f).all():
        raise ValueError(f"{arg}: objective values must be finite")
    return f


def non_dominated_mask(points) -> np.ndarray:
    """``K`` bool: True for points no other point weakly dominates with a strict improvement
    (Pareto-optimal within the set; duplicates of a non-dominated point are all kept)."""
    f = _points(points)
    if f.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    keep = np.ones(f.shape[0], dtype=bool)
    for i in range(f.shape[0]):
        if keep[i]:
            dominated = (f[i] <= f).all(axis=1) & (f[i] < f).any(axis=1)
            keep &= ~dominated
    return keep


def non_dominated(points) -> np.ndarray:
    """The unique non-dominated rows of ``points``, sorted lexicographically (first objective
    first)."""
    f = _points(points)
    if f.shape[0] == 0:
        return f
    return np.unique(f[non_dominated_mask(f)], axis=0)


def unique_count(points) -> int:
    """The number of distinct non-dominated objective vectors (the paper's |PF|)."""
    return int(non_dominated(points).shape[0])


def normalisation_bounds(*fronts) -> tuple[np.ndarray, np.ndarray]:
    """Ideal and nadir of the union of ``fronts`` (each ``K_i x n_obj``; empty ones skipped).

    Raises:
        ValueError: no points, or fronts with different numbers of objectives.
    """
    arrays = [_points(f, "fronts") for f in fronts]
    arrays = [a for a in arrays if a.size]
    if not arrays:
        raise ValueError("fronts: expected at least one point")
    if len({a.shape[1] for a in arrays}) != 1:
        raise ValueError("fronts: different numbers of objectives")
    union = np.vstack(arrays)
    return union.min(axis=0), union.max(axis=0)


def normalise(points, ideal, nadir) -> np.ndarray:
    """(f − ideal) / (nadir − ideal), a zero range treated as 1."""
    f = _points(points)
    ideal = np.asarray(ideal, dtype=float)
    nadir = np.asarray(nadir, dtype=float)
    for name, v in (("ideal", ideal), ("nadir", nadir)):
        if not np.isfinite(v).all():
            raise ValueError(f"{name}: expected finite objective values")
    if ideal.shape != nadir.shape or (f.size and f.shape[1] != ideal.size):
        raise ValueError(f"ideal, nadir: expected {f.shape[1]} values each, got {ideal.shape}, "
                         f"{nadir.shape}")
    span = np.where(nadir > ideal, nadir - ideal, 1.0)
    return (f - ideal) / span


def hypervolume(front, ideal, nadir, *, ref: float = REF_POINT) -> float:
    """Hypervolume of ``front`` in the normalised space, reference point ``ref`` per axis.

    Example:
        >>> from optzoo.scheduling import hypervolume
        >>> round(hypervolume([[0.0, 1.0], [1.0, 0.0]], [0, 0], [1, 1]), 4)  # ref (1.1, 1.1)
        0.21
        >>> round(hypervolume([[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]], [0, 0], [1, 1]), 4)
        0.46
    """
    f = _points(front, "front")
    if f.shape[0] == 0:
        return 0.0
    z = normalise(f, ideal, nadir)
    return float(HV(ref_point=np.full(z.shape[1], float(ref)))(z))


def hv_gap(front, reference_front, ideal, nadir, *, ref: float = REF_POINT) -> float:
    """(HV(reference_front) − HV(front)) / HV(reference_front) (the paper's "HV gap").

    Raises:
        ValueError: the reference front has zero hypervolume.
    """
    hv_ref = hypervolume(reference_front, ideal, nadir, ref=ref)
    if hv_ref <= 0:
        raise ValueError("reference_front: has zero hypervolume under this normalisation")
    return (hv_ref - hypervolume(front, ideal, nadir, ref=ref)) / hv_ref


def igd(front, reference_front, ideal, nadir) -> float:
    """Inverted generational distance of ``front`` to ``reference_front`` (normalised)."""
    f, r = _points(front, "front"), _points(reference_front, "reference_front")
    if f.shape[0] == 0 or r.shape[0] == 0:
        raise ValueError("front, reference_front: expected non-empty fronts")
    return float(IGD(normalise(r, ideal, nadir))(normalise(f, ideal, nadir)))


def igd_plus(front, reference_front, ideal, nadir) -> float:
    """IGD+ (Ishibuchi et al. 2015) of ``front`` to ``reference_front`` (normalised)."""
    f, r = _points(front, "front"), _points(reference_front, "reference_front")
    if f.shape[0] == 0 or r.shape[0] == 0:
        raise ValueError("front, reference_front: expected non-empty fronts")
    return float(IGDPlus(normalise(r, ideal, nadir))(normalise(f, ideal, nadir)))


@dataclass
class FrontResult:
    """An approximate Pareto front and how it was obtained.

    Attributes:
        points: ``K x n_obj`` unique non-dominated objective vectors, sorted lexicographically.
        schedules: one schedule per point (aligned with ``points``).
        wall_time: seconds.
        evaluations: schedules built (decodings, or rule runs).
        method: a label.
    """

    points: np.ndarray
    schedules: list = field(default_factory=list)
    wall_time: float = 0.0
    evaluations: int = 0
    method: str = ""

    @classmethod
    def from_candidates(cls, values, schedules: Sequence, **kwargs) -> FrontResult:
        """Keep the unique non-dominated ``values`` (first schedule of each)."""
        f = _points(values, "values")
        if len(schedules) != f.shape[0]:
            raise ValueError(f"schedules: expected {f.shape[0]}, got {len(schedules)}")
        keep = np.flatnonzero(non_dominated_mask(f))
        pts, first = np.unique(f[keep], axis=0, return_index=True)
        return cls(points=pts, schedules=[schedules[keep[i]] for i in first], **kwargs)
