"""Multiplicative prediction error and the refined-smoothness instance predicate.

Zhao & Zomaya, "On Smoothness Bounds for Non-Clairvoyant Scheduling with Predictions"
(ICLR 2026, OpenReview Zcn4n57lHg), §3 and Def. 3.1.

The error of a prediction ``p_j`` of a true size ``p*_j`` is multiplicative,

.. math::  \\eta_j = \\max(p_j / p^*_j,\\ p^*_j / p_j), \\qquad \\eta(I) = \\max_j \\eta_j \\ge 1,

so it is invariant to rescaling all sizes (unlike the L1 error).  Refined smoothness takes the
sup of ALG/OPT only over instances in which the predictions carry information, I_s.  The paper
gives the closed form for the multiplicative error: ``I ∈ I_s ⇔ 1 < η(I) < sqrt(P(I))`` with
``P(I) = max_j p*_j / min_j p*_j`` -- a ratio of TRUE sizes.  The reason: the best constant
guess ``c = sqrt(max p* · min p*)`` has error ``sqrt(P)`` and every larger error is reachable by
a constant too, so an instance whose error is ``≥ sqrt(P)`` could have come from a constant
prediction vector (predicate R(I)), i.e. from predictions that say nothing.

:func:`informative` implements ``η > 1 and max p* > η² · min p*`` (strict), the squared form of
the closed form, which avoids a square root.  :func:`unrestricted` accepts every imperfect
instance: the paper's s'_A, whose lower bounds coincide with s_A and whose upper bounds are
identical.  A search takes either (or any callable ``(true, pred) -> bool``) as its predicate.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

InstancePredicate = Callable[[np.ndarray, np.ndarray], bool]


def check_sizes(values: object, name: str) -> np.ndarray:
    """``values`` as a 1-D float array of finite, strictly positive sizes.

    Raises:
        ValueError: naming ``name`` if the input is empty, not 1-D, non-finite or ≤ 0.
    """
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty 1-D array of sizes, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: expected finite sizes, got {arr.tolist()}")
    if np.any(arr <= 0):
        raise ValueError(f"{name}: expected strictly positive sizes, got min {arr.min()!r}")
    return arr


def _pair(true: object, pred: object) -> tuple[np.ndarray, np.ndarray]:
    t = check_sizes(true, "true")
    p = check_sizes(pred, "pred")
    if t.shape != p.shape:
        raise ValueError(f"pred: expected the shape of true {t.shape}, got {p.shape}")
    return t, p


def job_errors(true: object, pred: object) -> np.ndarray:
    """Per-job multiplicative errors ``η_j = max(p_j/p*_j, p*_j/p_j)`` (each ≥ 1)."""
    t, p = _pair(true, pred)
    return np.maximum(p / t, t / p)


def eta(true: object, pred: object) -> float:
    """The instance error ``η(I) = max_j η_j``."""
    return float(job_errors(true, pred).max())


def size_ratio(true: object) -> float:
    """``P(I) = max_j p*_j / min_j p*_j`` of the true sizes."""
    t = check_sizes(true, "true")
    return float(t.max() / t.min())


def informative(true: object, pred: object) -> bool:
    """Refined-smoothness predicate: ``η(I) > 1`` and ``max p* > η(I)² · min p*`` (strict).

    True iff the instance lies in I_s: imperfect, and no constant prediction vector has the
    same error (so the predictions can order or group jobs).
    """
    t, p = _pair(true, pred)
    e = float(np.maximum(p / t, t / p).max())
    return bool(e > 1.0 and t.max() > e * e * t.min())


def unrestricted(true: object, pred: object) -> bool:
    """The predicate of s'_A: every imperfect instance (``η(I) > 1``) counts."""
    return eta(true, pred) > 1.0
