"""Flexible job shop instances for the multi-objective FJSP of Smit et al., "Neural
Multi-Objective Combinatorial Optimization for Flexible Job Shop Scheduling Problems" (ICLR 2026,
OpenReview YAgOaYedLQ): jobs i are chains of operations O_ij, each operation may run on a
subset M_ij of the machines with processing time p^k_ij, optionally with a machine-dependent
cost c^k_ij and a due date D_i per job.

* :class:`FJSPInstance` holds the data as arrays over the ``N`` operations in job-major order
  (O_11, O_12, ..., O_21, ...) and ``M`` machines, validated on construction.
* :func:`read_fjs` parses the standard ``.fjs`` text format of Brandimarte's mk01-mk10 (machines
  1-based in the file, 0-based here); :func:`load_brandimarte` finds them under ``path``,
  ``$OPTZOO_DATA/fjsp``, ``$OPTZOO_SHARED/data/fjsp`` or ``../shared/data/fjsp`` beside the
  repository (:func:`fjsp_data_dir`).  The files are never copied into the repository.
* :func:`brandimarte_bounds`: the published makespan (LB, UB) of mk01-mk10, as listed in
  ``shared/data/fjsp/SOURCE.md``.
* :func:`sd2_instance`: the SD2 generator of DAN (Wang et al., "Flexible Job Shop Scheduling via
  Dual Attention Network-Based Reinforcement Learning", IEEE TNNLS 2023; ``data_utils.py`` of
  wrqccc/FJSP-DRL): ``ops_per_job`` operations per job (default ``m``), each eligible on
  U{1..m} machines drawn without replacement, p ~ U{1..99} on each.

INFERRED (the paper's generation of the extra data was not retrieved; the brief's reading):

* cost c^k_ij = round(κ · (P − p^k_ij + 1)) with P the instance's largest processing time, so a
  faster machine is dearer (the paper: cost "inversely correlated with processing time");
  ``round`` is :func:`numpy.rint` (exact for the default integer times and κ = 1).
* due date D_i = round(τ_i · Σ_j mean_{k∈M_ij} p^k_ij) with τ_i ~ U[1, 1.5].  Rounded to an
  integer (our choice) so that every objective is an integer on generated instances and the
  reward identities of :mod:`optzoo.scheduling.env` hold exactly.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

# Brandimarte (1993) makespan bounds (lower bound, best known upper bound) as listed in
# shared/data/fjsp/SOURCE.md; kept here so they are available without the data files.
_BRANDIMARTE_BOUNDS = {
    "mk01": (36, 39), "mk02": (24, 26), "mk03": (204, 204), "mk04": (48, 60),
    "mk05": (168, 172), "mk06": (33, 58), "mk07": (133, 139), "mk08": (523, 523),
    "mk09": (299, 307), "mk10": (165, 197),
}


class FJSPInstance:
    """A flexible job shop instance, optionally with costs and due dates.

    Args:
        jobs: one list per job of its operations in precedence order; an operation is a mapping
            ``machine -> processing time`` (machines 0-based) or a length-``M`` sequence with
            ``0`` (or ``None``/NaN) for machines that cannot process it.
        n_machines: ``M``; default: one more than the largest machine named.
        costs: optional cost c^k_ij of each operation on each eligible machine, in the same
            nested form as ``jobs`` (same machines) or as an ``N x M`` array (ignored where
            ineligible).
        due_dates: optional due date D_i of each job (length ``J``).
        name: a label (the file stem for read instances).

    Attributes:
        processing: ``N x M`` float array, p^k_ij where eligible, 0 elsewhere.
        eligible: ``N x M`` bool array.
        cost: ``N x M`` float array (0 where ineligible) or ``None``.
        due_dates: ``J`` float array or ``None``.
        job_lengths: ``J`` int array, the number of operations n_i of each job.
        job_of_op, op_pos: ``N`` int arrays, the job of each operation and its index in the job.
        first_op, last_op: ``J`` int arrays, global index of each job's first/last operation.

    Raises:
        ValueError: naming the argument, for an empty job list or job, an operation without an
            eligible machine, a machine index outside ``0..M-1``, a processing time that is not
            positive and finite, a negative or missing cost, or due dates of the wrong length or
            not finite.
    """

    def __init__(self, jobs: Sequence[Sequence[Mapping[int, float] | Sequence[float]]], *,
                 n_machines: int | None = None, costs=None, due_dates=None, name: str = ""):
        if isinstance(jobs, (str, bytes)) or not isinstance(jobs, Sequence) or len(jobs) == 0:
            raise ValueError("jobs: expected a non-empty list of jobs (lists of operations)")
        ops: list[Mapping[int, float] | Sequence[float]] = []
        lengths = []
        for i, job in enumerate(jobs):
            if isinstance(job, (str, bytes, Mapping)) or not isinstance(job, Sequence) \
                    or len(job) == 0:
                raise ValueError(f"jobs[{i}]: expected a non-empty list of operations")
            lengths.append(len(job))
            ops.extend(job)
        m = n_machines if n_machines is not None else _infer_machines(ops)
        processing, eligible = _op_table(ops, m, "jobs", positions=_positions(lengths))
        cost = None
        if costs is not None:
            if isinstance(costs, np.ndarray):
                cost = np.asarray(costs, dtype=float)
            else:
                flat = [op for job in costs for op in job]
                if len(flat) != len(ops):
                    raise ValueError(f"costs: expected {len(ops)} operations like jobs, got "
                                     f"{len(flat)}")
                cost, _ = _op_table(flat, m, "costs", positions=_positions(lengths),
                                    allow_zero=True)
        self._set(np.asarray(lengths, dtype=np.int64), processing, eligible, cost, due_dates,
                  name)

    @classmethod
    def from_arrays(cls, job_lengths, processing, eligible=None, *, cost=None, due_dates=None,
                    name: str = "") -> FJSPInstance:
        """An instance from arrays (the form of DAN's ``job_length``/``op_pt``).

        Args:
            job_lengths: ``J`` positive ints, the operations per job (job-major order).
            processing: ``N x M`` processing times, ``N = sum(job_lengths)``.
            eligible: ``N x M`` bool; default ``processing > 0`` (DAN's convention).
            cost: optional ``N x M`` costs (read where eligible).
            due_dates: optional ``J`` due dates.
        """
        self = cls.__new__(cls)
        lengths = np.asarray(job_lengths)
        if lengths.ndim != 1 or lengths.size == 0 or not np.issubdtype(lengths.dtype, np.integer) \
                or (lengths < 1).any():
            raise ValueError(f"job_lengths: expected a non-empty 1-D array of positive ints, got "
                             f"{job_lengths!r}")
        p = np.asarray(processing, dtype=float)
        if p.ndim != 2 or p.shape[0] != lengths.sum() or p.shape[1] < 1:
            raise ValueError(f"processing: expected shape ({int(lengths.sum())}, M), got {p.shape}")
        elig = (np.nan_to_num(p) > 0) if eligible is None else np.asarray(eligible)
        if elig.shape != p.shape or elig.dtype != bool:
            raise ValueError(f"eligible: expected a bool array of shape {p.shape}")
        self._set(lengths.astype(np.int64), p, elig, cost, due_dates, name)
        return self

    def _set(self, lengths, processing, eligible, cost, due_dates, name):
        n, m = processing.shape
        where = _positions(lengths)
        empty = ~eligible.any(axis=1)
        if empty.any():
            raise ValueError(f"jobs: operation {where(int(np.argmax(empty)))} has no eligible "
                             "machine")
        bad = eligible & ~(np.isfinite(processing) & (processing > 0))
        if bad.any():
            o, k = np.argwhere(bad)[0]
            raise ValueError(f"jobs: processing time of operation {where(int(o))} on machine "
                             f"{k} must be positive and finite, got {processing[o, k]}")
        processing = np.where(eligible, processing, 0.0)
        if cost is not None:
            cost = np.asarray(cost, dtype=float)
            if cost.shape != (n, m):
                raise ValueError(f"costs: expected shape {(n, m)}, got {cost.shape}")
            bad = eligible & ~(np.isfinite(cost) & (cost >= 0))
            if bad.any():
                o, k = np.argwhere(bad)[0]
                raise ValueError(f"costs: cost of operation {where(int(o))} on machine {k} must "
                                 f"be finite and >= 0, got {cost[o, k]}")
            cost = np.where(eligible, cost, 0.0)
        if due_dates is not None:
            due_dates = np.asarray(due_dates, dtype=float)
            if due_dates.shape != lengths.shape or not np.isfinite(due_dates).all():
                raise ValueError(f"due_dates: expected {lengths.size} finite values, got "
                                 f"shape {due_dates.shape}")
        self.job_lengths = lengths
        self.processing = processing
        self.eligible = eligible.copy()
        self.cost = cost
        self.due_dates = due_dates
        self.name = str(name)
        self.last_op = np.cumsum(lengths) - 1
        self.first_op = self.last_op - lengths + 1
        self.job_of_op = np.repeat(np.arange(lengths.size), lengths)
        self.op_pos = np.arange(n) - self.first_op[self.job_of_op]
        for a in (self.job_lengths, self.processing, self.eligible, self.cost, self.due_dates,
                  self.last_op, self.first_op, self.job_of_op, self.op_pos):
            if a is not None:
                a.flags.writeable = False

    @property
    def n_jobs(self) -> int:
        return int(self.job_lengths.size)

    @property
    def n_machines(self) -> int:
        return int(self.processing.shape[1])

    @property
    def n_ops(self) -> int:
        return int(self.processing.shape[0])

    def op_id(self, job: int, index: int) -> int:
        """Global index of operation O_{job,index} (both 0-based)."""
        if not 0 <= job < self.n_jobs:
            raise ValueError(f"job: expected 0..{self.n_jobs - 1}, got {job}")
        if not 0 <= index < self.job_lengths[job]:
            raise ValueError(f"index: job {job} has {self.job_lengths[job]} operations, got "
                             f"{index}")
        return int(self.first_op[job] + index)

    def operations(self, job: int) -> list[dict[int, float]]:
        """The operations of ``job`` as ``{machine: processing time}`` dicts."""
        ids = range(self.op_id(job, 0), int(self.last_op[job]) + 1)
        return [{int(k): float(self.processing[o, k]) for k in np.flatnonzero(self.eligible[o])}
                for o in ids]

    def with_extras(self, *, cost=None, due_dates=None) -> FJSPInstance:
        """A copy with ``cost`` (``N x M``) and/or ``due_dates`` (``J``) replaced."""
        return FJSPInstance.from_arrays(
            self.job_lengths, self.processing, self.eligible,
            cost=self.cost if cost is None else cost,
            due_dates=self.due_dates if due_dates is None else due_dates, name=self.name)

    def __repr__(self) -> str:
        extras = [e for e, v in (("cost", self.cost), ("due_dates", self.due_dates))
                  if v is not None]
        label = f"{self.name!r}, " if self.name else ""
        return (f"FJSPInstance({label}jobs={self.n_jobs}, machines={self.n_machines}, "
                f"ops={self.n_ops}{', ' if extras else ''}{', '.join(extras)})")


def _positions(lengths):
    last = np.cumsum(lengths) - 1
    first = last - np.asarray(lengths) + 1

    def where(o: int) -> str:
        j = int(np.searchsorted(last, o))
        return f"O[{j}][{o - first[j]}]"
    return where


def _infer_machines(ops) -> int:
    m = 0
    for op in ops:
        if isinstance(op, Mapping):
            keys = [k for k in op]
            if any(not isinstance(k, (int, np.integer)) for k in keys):
                raise ValueError(f"jobs: machine indices must be ints, got {keys}")
            m = max([m] + [int(k) + 1 for k in keys])
        else:
            m = max(m, len(op))
    return m


def _op_table(ops, m: int, arg: str, positions, allow_zero: bool = False):
    """``N x M`` values and eligibility from mappings / dense rows (0, None or NaN = ineligible
    in a dense row; a mapping lists only eligible machines)."""
    if not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"n_machines: expected a positive int, got {m!r}")
    n = len(ops)
    values = np.zeros((n, m))
    eligible = np.zeros((n, m), dtype=bool)
    for o, op in enumerate(ops):
        if isinstance(op, Mapping):
            for k, v in op.items():
                if not isinstance(k, (int, np.integer)) or not 0 <= k < m:
                    raise ValueError(f"{arg}: operation {positions(o)} names machine {k!r}, "
                                     f"expected an int in 0..{m - 1}")
                values[o, k] = float(v)
                eligible[o, k] = True
        elif isinstance(op, (Sequence, np.ndarray)) and not isinstance(op, (str, bytes)):
            if len(op) != m:
                raise ValueError(f"{arg}: operation {positions(o)} has {len(op)} entries, "
                                 f"expected one per machine ({m})")
            row = np.array([np.nan if v is None else float(v) for v in op])
            ok = ~np.isnan(row) & ((row != 0) | allow_zero)
            values[o, ok] = row[ok]
            eligible[o] = ok
        else:
            raise ValueError(f"{arg}: operation {positions(o)} must be a mapping machine -> "
                             f"value or a sequence of length {m}, got {type(op).__name__}")
    return values, eligible


# -- the .fjs format -------------------------------------------------------------------------

def read_fjs(path: str | os.PathLike) -> FJSPInstance:
    """Read a ``.fjs`` file (Brandimarte / DAN format).

    First line: ``J M [average machines per operation]``; then one line per job:
    ``n_i`` then, per operation, the number of eligible machines followed by that many
    ``machine time`` pairs, machines 1-based.  Blank lines are ignored.

    Args:
        path: the file.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: a malformed file, naming its line.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"path: no .fjs file at {path}")
    lines = [(i + 1, ln) for i, ln in enumerate(path.read_text().splitlines()) if ln.strip()]
    if not lines:
        raise ValueError(f"{path.name}: empty file")
    head = lines[0][1].split()
    if len(head) < 2 or not all(_is_int(t) for t in head[:2]):
        raise ValueError(f"{path.name}: line {lines[0][0]}: expected 'jobs machines [flex]', "
                         f"got {lines[0][1].strip()!r}")
    jn, m = int(head[0]), int(head[1])
    if jn < 1 or m < 1:
        raise ValueError(f"{path.name}: line {lines[0][0]}: jobs and machines must be positive")
    if len(lines) - 1 != jn:
        raise ValueError(f"{path.name}: header announces {jn} jobs, found {len(lines) - 1} job "
                         "lines")
    jobs = []
    for lineno, text in lines[1:]:
        tokens = re.split(r"\s+", text.strip())
        if not all(_is_int(t) for t in tokens):
            raise ValueError(f"{path.name}: line {lineno}: non-integer token in {text.strip()!r}")
        vals = [int(t) for t in tokens]
        pos, ops = 1, []
        for _ in range(vals[0]):
            if pos >= len(vals):
                raise ValueError(f"{path.name}: line {lineno}: job announces {vals[0]} "
                                 f"operations, the line ends after {len(ops)}")
            k = vals[pos]
            pairs = vals[pos + 1:pos + 1 + 2 * k]
            if k < 1 or len(pairs) != 2 * k:
                raise ValueError(f"{path.name}: line {lineno}: operation {len(ops)} announces "
                                 f"{k} machines, found {len(pairs) // 2}")
            op: dict[int, float] = {}
            for mach, t in zip(pairs[::2], pairs[1::2], strict=True):
                if not 1 <= mach <= m:
                    raise ValueError(f"{path.name}: line {lineno}: machine {mach} outside "
                                     f"1..{m}")
                if mach - 1 in op:
                    raise ValueError(f"{path.name}: line {lineno}: machine {mach} listed twice "
                                     f"for operation {len(ops)}")
                op[mach - 1] = float(t)
            ops.append(op)
            pos += 1 + 2 * k
        if pos != len(vals):
            raise ValueError(f"{path.name}: line {lineno}: {len(vals) - pos} trailing tokens "
                             f"after {vals[0]} operations")
        jobs.append(ops)
    try:
        return FJSPInstance(jobs, n_machines=m, name=path.stem)
    except ValueError as e:
        raise ValueError(f"{path.name}: {e}") from None


def _is_int(t: str) -> bool:
    return re.fullmatch(r"[+-]?\d+", t) is not None


def write_fjs(instance: FJSPInstance, path: str | os.PathLike) -> Path:
    """Write ``instance`` in ``.fjs`` format (integer times; costs and due dates are dropped,
    the format has no place for them).

    Raises:
        ValueError: a processing time that is not an integer.
    """
    p = instance.processing
    if not np.array_equal(p, np.round(p)):
        raise ValueError("instance: .fjs stores integer processing times only")
    flex = instance.eligible.sum() / instance.n_ops
    lines = [f"{instance.n_jobs}\t{instance.n_machines}\t{flex:g}"]
    for j in range(instance.n_jobs):
        parts = [str(int(instance.job_lengths[j]))]
        for op in instance.operations(j):
            parts.append(str(len(op)))
            parts += [f"{k + 1} {int(t)}" for k, t in op.items()]
        lines.append(" ".join(parts))
    path = Path(path)
    path.write_text("\n".join(lines) + "\n")
    return path


# -- Brandimarte files ------------------------------------------------------------------------

BRANDIMARTE = tuple(f"mk{i:02d}" for i in range(1, 11))


def fjsp_data_dir(path: str | os.PathLike | None = None) -> Path | None:
    """The folder holding ``mk01.fjs`` ... or ``None`` when none is found.

    Looks at ``path`` (and ``path/fjsp``), else ``$OPTZOO_DATA`` (and ``$OPTZOO_DATA/fjsp``),
    ``$OPTZOO_SHARED/data/fjsp`` and ``shared/data/fjsp`` beside the repository checkout.
    """
    candidates: list[Path] = []
    if path is not None:
        candidates += [Path(path), Path(path) / "fjsp"]
    else:
        if os.environ.get("OPTZOO_DATA"):
            root = Path(os.environ["OPTZOO_DATA"])
            candidates += [root, root / "fjsp"]
        if os.environ.get("OPTZOO_SHARED"):
            candidates.append(Path(os.environ["OPTZOO_SHARED"]) / "data" / "fjsp")
        # src/optzoo/scheduling/instance.py -> the checkout's parent holds shared/
        candidates.append(Path(__file__).resolve().parents[4] / "shared" / "data" / "fjsp")
    for c in candidates:
        if (c / "mk01.fjs").is_file():
            return c
    return None


def load_brandimarte(name: str, path: str | os.PathLike | None = None) -> FJSPInstance:
    """Brandimarte's instance ``name`` (``"mk01"`` ... ``"mk10"``).

    Raises:
        ValueError: an unknown name.
        FileNotFoundError: the files are not found (see :func:`fjsp_data_dir`).
    """
    if name not in BRANDIMARTE:
        raise ValueError(f"name: expected one of {', '.join(BRANDIMARTE)}, got {name!r}")
    folder = fjsp_data_dir(path)
    if folder is None:
        where = f"in {path}" if path is not None else \
            "($OPTZOO_DATA/fjsp, $OPTZOO_SHARED/data/fjsp and ../shared/data/fjsp lack mk01.fjs)"
        raise FileNotFoundError(f"path: Brandimarte .fjs files not found {where}")
    return read_fjs(folder / f"{name}.fjs")


def brandimarte_bounds() -> dict[str, tuple[int, int]]:
    """Known makespan bounds ``name -> (lower bound, best known upper bound)`` of mk01-mk10."""
    return dict(_BRANDIMARTE_BOUNDS)


# -- SD2 generator -----------------------------------------------------------------------------

def sd2_instance(n_jobs: int, n_machines: int, seed: int, *, ops_per_job: int | None = None,
                 p_low: int = 1, p_high: int = 99, kappa: float = 1.0,
                 tau: tuple[float, float] = (1.0, 1.5), cost: bool = True,
                 due_dates: bool = True) -> FJSPInstance:
    """An SD2-style instance (DAN, Wang et al. 2023) with the brief's inferred cost and due dates.

    Args:
        n_jobs, n_machines: ``J`` and ``M``.
        seed: the instance is a deterministic function of all arguments.
        ops_per_job: operations per job (DAN's ``op_per_job``; default ``M``).
        p_low, p_high: processing times ~ U{p_low..p_high} (DAN: 1..99).
        kappa: cost scale κ in c^k_ij = round(κ (P − p^k_ij + 1)).
        tau: τ_i ~ U[tau] in D_i = round(τ_i Σ_j mean_k p^k_ij).
        cost, due_dates: whether to attach them.

    Example:
        >>> from optzoo.scheduling import sd2_instance
        >>> instance = sd2_instance(n_jobs=4, n_machines=3, seed=0)
        >>> instance.name, instance.processing.shape, instance.due_dates.shape  # N x M
        ('sd2-4x3-s0', (12, 3), (4,))
        >>> bool((instance.cost[instance.eligible] > 0).all())
        True
    """
    for arg, v in (("n_jobs", n_jobs), ("n_machines", n_machines)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{arg}: expected a positive int, got {v!r}")
    ops = n_machines if ops_per_job is None else ops_per_job
    if not isinstance(ops, (int, np.integer)) or ops < 1:
        raise ValueError(f"ops_per_job: expected a positive int, got {ops_per_job!r}")
    if not 1 <= p_low <= p_high:
        raise ValueError(f"p_low, p_high: expected 1 <= p_low <= p_high, got {p_low}, {p_high}")
    if not (np.isfinite(kappa) and kappa > 0):
        raise ValueError(f"kappa: expected a positive number, got {kappa}")
    if not (len(tau) == 2 and 0 < tau[0] <= tau[1]):
        raise ValueError(f"tau: expected (low, high) with 0 < low <= high, got {tau}")
    rng = np.random.default_rng(seed)
    n = n_jobs * ops
    n_eligible = rng.integers(1, n_machines + 1, size=n)
    p = rng.integers(p_low, p_high + 1, size=(n, n_machines)).astype(float)
    eligible = np.zeros((n, n_machines), dtype=bool)
    for o in range(n):
        eligible[o, rng.choice(n_machines, size=n_eligible[o], replace=False)] = True
    p[~eligible] = 0.0
    c = np.rint(kappa * (p.max() - p + 1.0)) if cost else None
    d = None
    if due_dates:
        mean_p = p.sum(axis=1) / eligible.sum(axis=1)
        work = mean_p.reshape(n_jobs, ops).sum(axis=1)
        d = np.rint(rng.uniform(tau[0], tau[1], size=n_jobs) * work)
    return FJSPInstance.from_arrays(np.full(n_jobs, ops), p, eligible, cost=c, due_dates=d,
                                    name=f"sd2-{n_jobs}x{n_machines}-s{seed}")
