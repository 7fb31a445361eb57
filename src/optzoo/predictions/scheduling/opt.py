"""Exact offline optima (clairvoyant OPT) and the LPT heuristic.

* ``Σ C_j`` on one machine: SPT (Smith's rule) is optimal; :func:`spt_total_completion`.
* ``C_max`` on identical or related machines without preemption -- the offline optimum of the
  restart model, since an optimal clairvoyant schedule never needs to interrupt a job:
  :func:`exact_makespan`, by vectorised enumeration of all assignments when ``m^n`` is small
  and otherwise by a MILP solved with HiGHS (``scipy.optimize.milp``).  The two agree (tested).
* ``C_max`` with preemption and resumption on identical machines (the model of PPRR):
  McNaughton's ``max(max_j p_j, Σ_j p_j / m)``; :func:`preemptive_makespan`.
* :func:`lpt_assignment`: LPT (largest first, each job to the machine where it finishes
  earliest), the offline routine SIMPLE uses for ``n > 12`` and the decision procedure of the
  related-machine reconstruction.  On identical machines LPT is ``(4/3 - 1/(3m))``-approximate
  (Graham 1969); on related machines it is ``< 2``-approximate (Gonzalez, Ibarra, Sahni 1977).
"""

from __future__ import annotations

import numpy as np

from optzoo.predictions.scheduling.error import check_sizes

#: Largest number of assignment rows enumerated at once (rows x machines float64 array).
ENUMERATION_LIMIT = 1_600_000


def spt_total_completion(sizes: object) -> float:
    """Optimal ``Σ C_j`` on one machine: process in non-decreasing size (SPT)."""
    p = np.sort(check_sizes(sizes, "sizes"))
    return float(np.cumsum(p).sum())


def preemptive_makespan(sizes: object, m: int) -> float:
    """Optimal makespan of ``P | pmtn | C_max`` (McNaughton 1959)."""
    p = check_sizes(sizes, "sizes")
    if m < 1:
        raise ValueError(f"m: expected a number of machines >= 1, got {m}")
    return float(max(p.max(), p.sum() / m))


def _speeds(speeds: object | None, m: int | None) -> np.ndarray:
    if speeds is None:
        if m is None or m < 1:
            raise ValueError(f"m: expected a number of machines >= 1 when speeds is None, got {m}")
        return np.ones(int(m))
    return check_sizes(speeds, "speeds")


def lpt_assignment(sizes: object, speeds: object | None = None,
                   m: int | None = None) -> tuple[float, np.ndarray]:
    """LPT: jobs by non-increasing size, each to the machine where it would finish earliest.

    Returns:
        ``(makespan, machine_of_job)`` with ``machine_of_job`` of shape ``(n,)``.
    """
    p = check_sizes(sizes, "sizes")
    s = _speeds(speeds, m)
    load = np.zeros(s.size)
    where = np.empty(p.size, dtype=int)
    for j in np.argsort(-p, kind="stable"):
        i = int(np.argmin((load + p[j]) / s))
        load[i] += p[j]
        where[j] = i
    return float((load / s).max()), where


def _enumerate(p: np.ndarray, s: np.ndarray, identical: bool) -> tuple[float, np.ndarray]:
    m = s.size
    n = p.size
    # Identical machines are interchangeable: fix job 0 on machine 0.
    first = 1 if identical else 0
    loads = np.zeros((1, m))
    if identical:
        loads[0, 0] = p[0]
    for j in range(first, n):
        grown = np.repeat(loads, m, axis=0)  # row r*m + i: old row r with job j on machine i
        grown[np.arange(grown.shape[0]), np.tile(np.arange(m), loads.shape[0])] += p[j]
        loads = grown
    spans = (loads / s).max(axis=1)
    best = int(np.argmin(spans))
    # Decode the row index into the assignment (base-m digits, job n-1 least significant).
    where = np.zeros(n, dtype=int)
    r = best
    for j in range(n - 1, first - 1, -1):
        where[j] = r % m
        r //= m
    return float(spans[best]), where


def _milp(p: np.ndarray, s: np.ndarray, time_limit: float) -> tuple[float, np.ndarray]:
    from scipy.optimize import Bounds, LinearConstraint, milp

    n, m = p.size, s.size
    nx = n * m  # x[j, i] at j*m + i, then C
    c = np.zeros(nx + 1)
    c[-1] = 1.0
    assign = np.zeros((n, nx + 1))
    for j in range(n):
        assign[j, j * m:(j + 1) * m] = 1.0
    load = np.zeros((m, nx + 1))
    for i in range(m):
        load[i, i:nx:m] = p / s[i]
        load[i, -1] = -1.0
    upper = float(p.sum() / s.min())
    integrality = np.r_[np.ones(nx), 0.0]
    res = milp(c, integrality=integrality,
               bounds=Bounds(np.zeros(nx + 1), np.r_[np.ones(nx), upper]),
               constraints=[LinearConstraint(assign, 1.0, 1.0),
                            LinearConstraint(load, -np.inf, 0.0)],
               options={"time_limit": time_limit, "mip_rel_gap": 0.0})
    if res.status != 0:
        raise RuntimeError(f"HiGHS did not prove optimality (status {res.status}: {res.message})")
    x = res.x[:nx].reshape(n, m)
    where = np.argmax(x, axis=1)
    # Report the makespan of the rounded assignment (exact arithmetic, no solver tolerance).
    loads = np.bincount(where, weights=p, minlength=m)
    return float((loads / s).max()), where


def exact_makespan(sizes: object, speeds: object | None = None, m: int | None = None,
                   method: str = "auto", time_limit: float = 60.0) -> tuple[float, np.ndarray]:
    """Optimal non-preemptive makespan on identical (``m``) or related (``speeds``) machines.

    Args:
        sizes: job sizes, shape ``(n,)``.
        speeds: machine speeds, shape ``(m,)``; ``None`` for ``m`` identical unit-speed machines.
        m: number of identical machines (used when ``speeds`` is None).
        method: ``"enumerate"``, ``"milp"`` (HiGHS) or ``"auto"`` (enumerate when
            ``m^n <= ENUMERATION_LIMIT``).
        time_limit: HiGHS time limit in seconds.

    Returns:
        ``(makespan, machine_of_job)``.
    """
    p = check_sizes(sizes, "sizes")
    s = _speeds(speeds, m)
    identical = bool(np.all(s == s[0]))
    rows = float(s.size) ** (p.size - (1 if identical else 0))
    if method == "auto":
        method = "enumerate" if rows <= ENUMERATION_LIMIT else "milp"
    if method == "enumerate":
        if rows > ENUMERATION_LIMIT:
            raise ValueError(f"method: enumeration of {rows:.3g} assignments exceeds "
                             f"ENUMERATION_LIMIT={ENUMERATION_LIMIT}; use 'milp'")
        return _enumerate(p, s, identical)
    if method == "milp":
        return _milp(p, s, time_limit)
    raise ValueError(f"method: expected 'auto', 'enumerate' or 'milp', got {method!r}")
