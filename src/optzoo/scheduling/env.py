"""The construction MDP of the multi-objective FJSP with bound-based vector rewards, after Smit
et al., "Neural Multi-Objective Combinatorial Optimization for Flexible Job Shop Scheduling
Problems" (ICLR 2026, OpenReview YAgOaYedLQ, §3), on DAN's MDP (Wang et al., "Flexible Job Shop
Scheduling via Dual Attention Network-Based Reinforcement Learning", IEEE TNNLS 2023;
wrqccc/FJSP-DRL ``fjsp_env_same_op_nums.py``).

MDP.  The state is a partial schedule.  An action is a pair (job i, machine k): the next
unscheduled operation O_ij of an unfinished job i on one of its eligible machines k ∈ M_ij.  The
operation starts at max(C(O_i(j−1)), machine k's ready time) — DAN's *non-insertion* rule: it is
appended after the last operation on k, never inserted into an idle gap (so every episode yields
a semi-active schedule; :func:`optzoo.scheduling.schedule.decode_active` is the insertion
decoder of the GA baselines).  An episode has N steps.

``candidates``: ``"all"`` (default) makes every eligible (next operation, machine) pair legal, as
the paper's description ("the next operation of each job × its eligible machines"); ``"earliest"``
is DAN's ``dynamic_pair_mask``, which keeps only pairs whose start time equals the earliest start
over all pairs.  Our choice: ``"all"``, because under ``"earliest"`` the cheapest machine of an
operation may never be selectable, which cuts the cost end off the Pareto front; DAN's rule is
one argument away.

Quality metrics H_i(s) (paper §3.3).  With the completion lower bounds
C(O_ij, s) = C(O_i(j−1), s) + min_{k∈M_ij} p^k_ij for unscheduled operations and the actual end
for scheduled ones, and C_i(s) = C(O_{i,n_i}, s):

* makespan   H = max_i C_i(s)                                   (lower bound, non-decreasing)
* tardiness  H = Σ_i max(C_i(s) − D_i, 0)                       (lower bound, non-decreasing)
* flowtime   H = Σ_i C_i(s)                                     (lower bound, non-decreasing)
* cost       H = incurred cost + Σ_{unscheduled} min_k c^k_ij   (lower bound, non-decreasing)
* earliness  H = Σ_i max(D_i − C_i(s), 0)                       (upper bound, non-increasing)

Every C(O_ij, s) only grows during construction (an operation's actual end is at least its
bound and its successors shift by the same amount), hence the monotonicity; at the terminal
state C_i(s) is the true completion time and H(s_N) = f(schedule) exactly.  The step reward
vector is r_t = H(s_t) − H(s_{t+1}) so that Σ_t r_t = H(s_0) − f(schedule): maximising the
return minimises every objective, and the scalarised reward λᵀ r_t sums to the weighted-sum
decomposition λᵀ(H(s_0) − f) (paper: why the weighted sum, not Tchebycheff).

INFERRED (not retrieved from the paper): each reward component is divided by an instance scale
(``normalise=True``): H_i(s_0) for makespan, flowtime, cost and earliness; for tardiness the
flowtime bound H_flowtime(s_0), since H_tardiness(s_0) is 0 whenever every job can meet its due
date (always on :func:`~optzoo.scheduling.instance.sd2_instance`, where τ ≥ 1 and D_i uses mean
rather than min times); a scale that is not positive becomes 1.

Features (:meth:`FJSPEnv.features`): DAN's raw operation (10), machine (8) and pair (8)
features, in the order of DAN's code, plus the multi-objective bounds (paper: "the same bounds
are also fed as state features"): operation min/mean cost and job due-date slack, machine
workload and min/mean cost, pair cost, cost ratio, start estimate and bound increase, and the
normalised H(s) vector.  Times are divided by the instance's largest processing time (DAN
min-max normalises processing times) and costs by the largest cost.  With ``zscore=True`` the
operation and machine features are standardised over the nodes still present, DAN's
normalisation (an operation is "deleted" when it is scheduled and ends by the next decision
time; a machine when it can process no remaining operation).  :func:`batch_features` stacks
the features of several environments (padded, with validity masks) for a batched policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

from optzoo.scheduling.instance import FJSPInstance
from optzoo.scheduling.schedule import Schedule, check_objectives

CANDIDATES = ("all", "earliest")

OP_FEATURES = (
    # DAN (fjsp_env_same_op_nums.construct_op_features)
    "scheduled", "lb_completion", "min_pt", "pt_span", "mean_pt", "waiting_time",
    "remaining_work", "job_ops_left", "job_work_left", "eligible_fraction",
    # multi-objective bounds
    "min_cost", "mean_cost", "job_due_slack",
)
MACHINE_FEATURES = (
    # DAN (construct_mch_features)
    "legal_pairs", "ops_left", "min_pt", "mean_pt", "waiting_time", "remaining_work",
    "ready_time", "working",
    # multi-objective
    "workload", "min_cost", "mean_cost",
)
PAIR_FEATURES = (
    # DAN (construct_pair_features)
    "pt", "pt/op_max", "pt/machine_max_candidate", "pt/max_remaining", "pt/machine_max_remaining",
    "pt/max_candidate", "pt/job_work_left", "waiting_time",
    # multi-objective
    "cost", "cost/op_max", "start", "lb_increase",
)


@dataclass
class FJSPFeatures:
    """What a DAN-style policy reads, as NumPy arrays (``float32`` features, ``bool`` masks,
    ``int64`` indices).  Shapes are for one environment; :func:`batch_features` prepends a
    batch dimension ``B``.

    Attributes:
        op: ``N x len(OP_FEATURES)``.
        op_mask: ``N x 3`` DAN's ``op_mask``: 1 where the predecessor (column 0) / successor
            (column 2) message is masked (absent, or the operation deleted); column 1 is 0.
        deleted: ``N`` operations no longer in the graph (DAN's ``deleted_op_nodes``).
        op_job, op_pos: ``N`` the job of each operation and its index in the job.
        candidate: ``J`` global index of each job's next operation (its last one once done).
        machine: ``M x len(MACHINE_FEATURES)``.
        machine_mask: ``M x M`` 1 where machines k, q can both process a remaining operation
            (diagonal 1): DAN's ``mch_mask``.
        competition: ``M x M x J`` 1 where machines k and q compete for job j's next operation
            (both legal): DAN's ``comp_idx``.
        pair: ``J x M x len(PAIR_FEATURES)`` (0 on illegal pairs).
        legal: ``J x M`` True on legal actions (DAN's ``dynamic_pair_mask`` is its negation).
        quality: ``n_obj`` the current H(s) divided by the reward scales.
        op_valid, job_valid, machine_valid: ``N``, ``J``, ``M`` True except on batch padding.
    """

    op: np.ndarray
    op_mask: np.ndarray
    deleted: np.ndarray
    op_job: np.ndarray
    op_pos: np.ndarray
    candidate: np.ndarray
    machine: np.ndarray
    machine_mask: np.ndarray
    competition: np.ndarray
    pair: np.ndarray
    legal: np.ndarray
    quality: np.ndarray
    op_valid: np.ndarray
    job_valid: np.ndarray
    machine_valid: np.ndarray

    def to_torch(self, device=None) -> dict:
        """The arrays as ``torch`` tensors (``float32``, ``bool``, ``int64`` kept) on
        ``device``, keyed by field name."""
        import torch

        return {f.name: torch.from_numpy(np.ascontiguousarray(getattr(self, f.name))).to(device)
                for f in fields(self)}


class FJSPEnv:
    """One FJSP construction episode with vector rewards (see the module docstring).

    Args:
        objectives: names from :data:`optzoo.scheduling.schedule.OBJECTIVES`; the order of the
            reward vector.
        candidates: ``"all"`` (default) or ``"earliest"`` (DAN's pair mask).
        normalise: divide rewards by the instance scales :attr:`scales` (see module docstring).

    Example:
        >>> from optzoo.scheduling import FJSPEnv, sd2_instance
        >>> instance = sd2_instance(n_jobs=4, n_machines=3, seed=0)
        >>> env = FJSPEnv(("makespan", "cost"))
        >>> env.reset(instance)
        >>> steps = 0
        >>> while not env.done:
        ...     j, k = env.legal_actions()[0]  # (operation, machine) pairs
        ...     r = env.step((j, k))  # reward vector, len(objectives)
        ...     steps += 1
        >>> steps == instance.n_ops, r.shape, env.objective_values().shape
        (True, (2,), (2,))
        >>> sched = env.schedule()
    """

    def __init__(self, objectives: Sequence[str] = ("makespan", "cost"), *,
                 candidates: str = "all", normalise: bool = True):
        self.objectives = check_objectives(objectives)
        if candidates not in CANDIDATES:
            raise ValueError(f"candidates: expected one of {CANDIDATES}, got {candidates!r}")
        self.candidates = candidates
        self.normalise = bool(normalise)
        self.instance: FJSPInstance | None = None

    # -- episode --------------------------------------------------------------------------
    def reset(self, instance: FJSPInstance) -> None:
        """Start an episode on ``instance`` (empty schedule).

        Raises:
            ValueError: the instance lacks costs / due dates an objective needs.
        """
        if not isinstance(instance, FJSPInstance):
            raise ValueError(f"instance: expected an FJSPInstance, got {type(instance).__name__}")
        check_objectives(self.objectives, instance)
        inst = self.instance = instance
        n, m = inst.n_ops, inst.n_machines
        self._p = inst.processing
        self._elig = inst.eligible
        p_inf = np.where(self._elig, self._p, np.inf)
        self._pmin = p_inf.min(axis=1)
        self._last = inst.last_op
        self._last_list = inst.last_op.tolist()
        self._due = inst.due_dates
        if inst.cost is not None:
            self._cmin = np.where(self._elig, inst.cost, np.inf).min(axis=1)
        else:
            self._cmin = np.zeros(n)
        # completion lower bounds: cumulative min processing times along each job
        cum = np.cumsum(self._pmin)
        self._lb = cum - np.repeat(cum[inst.first_op] - self._pmin[inst.first_op],
                                   inst.job_lengths)
        self.machine_of = np.full(n, -1, dtype=np.int64)
        self.start = np.full(n, np.nan)
        self.end = np.full(n, np.nan)
        self.scheduled = np.zeros(n, dtype=bool)
        self.next_op = inst.first_op.copy().astype(np.int64)
        self.job_done = np.zeros(inst.n_jobs, dtype=bool)
        self.job_ready = np.zeros(inst.n_jobs)
        self.machine_ready = np.zeros(m)
        self.workload = np.zeros(m)
        self.cost_incurred = 0.0
        self._cmin_left = float(self._cmin.sum())
        self.steps = 0
        self._mask_cache = None
        self.initial_quality = self._quality()
        self.quality = self.initial_quality.copy()
        self.scales = self._scales() if self.normalise else np.ones(len(self.objectives))
        self._static_features()

    @property
    def done(self) -> bool:
        """All operations are scheduled."""
        return self.instance is not None and self.steps == self.instance.n_ops

    def _require(self):
        if self.instance is None:
            raise RuntimeError("FJSPEnv: call reset(instance) first")

    def action_mask(self) -> np.ndarray:
        """``J x M`` bool, True on legal (job, machine) pairs (a read-only view)."""
        self._require()
        if self._mask_cache is None:
            alive = ~self.job_done
            mask = np.zeros((self.job_done.size, self._elig.shape[1]), dtype=bool)
            mask[alive] = self._elig[self.next_op[alive]]
            if self.candidates == "earliest" and mask.any():
                st = np.maximum(self.job_ready[:, None], self.machine_ready[None, :])
                mask &= st <= st[mask].min()
            mask.flags.writeable = False
            self._mask_cache = mask
        return self._mask_cache

    def legal_actions(self) -> np.ndarray:
        """``K x 2`` int array of the legal (job, machine) pairs, row-major order."""
        return np.argwhere(self.action_mask())

    def step(self, action) -> np.ndarray:
        """Schedule a pair and return the reward vector r_t = (H(s_t) − H(s_{t+1})) / scales.

        Args:
            action: ``(job, machine)`` or the flat index ``job * M + machine`` (DAN's).

        Raises:
            ValueError: an illegal action (unknown job/machine, finished job, ineligible or
                masked machine); RuntimeError: the episode is over.
        """
        self._require()
        if self.done:
            raise RuntimeError("FJSPEnv: the episode is over; call reset()")
        m = self.machine_ready.size
        if isinstance(action, (tuple, list, np.ndarray)) and np.size(action) == 2:
            j, k = (int(a) for a in np.ravel(action))
        elif np.ndim(action) == 0 and float(action) == int(action):
            j, k = divmod(int(action), m)
        else:
            raise ValueError(f"action: expected (job, machine) or a flat int, got {action!r}")
        if not (0 <= j < self.job_done.size and 0 <= k < m):
            raise ValueError(f"action: ({j}, {k}) outside {self.job_done.size} jobs x {m} "
                             "machines")
        if self.job_done[j]:
            raise ValueError(f"action: job {j} is finished")
        o = int(self.next_op[j])
        if not self._elig[o, k]:
            raise ValueError(f"action: machine {k} cannot process job {j}'s next operation")
        if self.candidates == "earliest" and not self.action_mask()[j, k]:
            raise ValueError(f"action: ({j}, {k}) does not start at the earliest time "
                             "(candidates='earliest')")
        jr, mr = self.job_ready[j], self.machine_ready[k]
        st = jr if jr > mr else mr
        p = self._p[o, k]
        en = st + p
        self.machine_of[o] = k
        self.start[o] = st
        self.end[o] = en
        self.scheduled[o] = True
        last = self._last_list[j]
        diff = en - self._lb[o]
        if diff:
            self._lb[o:last + 1] += diff
        self.job_ready[j] = en
        self.machine_ready[k] = en
        self.workload[k] += p
        if self.instance.cost is not None:
            self.cost_incurred += self.instance.cost[o, k]
            self._cmin_left -= self._cmin[o]
        if o == last:
            self.job_done[j] = True
        else:
            self.next_op[j] = o + 1
        self.steps += 1
        self._mask_cache = None
        new = self._quality()
        reward = (self.quality - new) / self.scales
        self.quality = new
        return reward

    def schedule(self) -> Schedule:
        """The finished schedule.

        Raises:
            RuntimeError: the episode is not finished.
        """
        self._require()
        if not self.done:
            raise RuntimeError(f"FJSPEnv: {self.instance.n_ops - self.steps} operations are "
                               "unscheduled")
        return Schedule(self.machine_of.copy(), self.start.copy(), self.end.copy())

    def objective_values(self) -> np.ndarray:
        """f(schedule) in the order of ``objectives`` (= H(s_N)); only when done."""
        self.schedule()
        return self.quality.copy()

    def copy(self) -> FJSPEnv:
        """An independent copy of the current state (for look-ahead or sampling)."""
        self._require()
        new = object.__new__(FJSPEnv)
        new.__dict__ = {k: (v.copy() if isinstance(v, np.ndarray) and v.flags.writeable else v)
                        for k, v in self.__dict__.items()}
        return new

    # -- bounds ---------------------------------------------------------------------------
    def completion_bounds(self) -> np.ndarray:
        """``N`` completion lower bounds C(O_ij, s) (actual ends of scheduled operations)."""
        return self._lb.copy()

    def _quality(self) -> np.ndarray:
        c = self._lb[self._last]
        out = []
        for name in self.objectives:
            if name == "makespan":
                out.append(c.max())
            elif name == "flowtime":
                out.append(c.sum())
            elif name == "tardiness":
                out.append(np.maximum(c - self._due, 0.0).sum())
            elif name == "earliness":
                out.append(np.maximum(self._due - c, 0.0).sum())
            else:
                out.append(self.cost_incurred + self._cmin_left)
        return np.array(out, dtype=float)

    def _scales(self) -> np.ndarray:
        c = self._lb[self._last]
        flow = float(c.sum())
        out = []
        for name, h in zip(self.objectives, self.initial_quality, strict=True):
            s = flow if name == "tardiness" else float(h)
            out.append(s if s > 0 else 1.0)
        return np.array(out)

    # -- features -------------------------------------------------------------------------
    def _static_features(self) -> None:
        inst = self.instance
        elig, p = self._elig, self._p
        self._tscale = float(p.max())
        cost = inst.cost
        self._cscale = float(cost.max()) if cost is not None and cost.max() > 0 else 1.0
        pn = p / self._tscale
        self._pn = pn
        n_el = elig.sum(axis=1)
        self._op_max_pt = np.where(elig, pn, -np.inf).max(axis=1)
        self._op_min_pt = self._pmin / self._tscale
        self._op_mean_pt = pn.sum(axis=1) / n_el
        self._elig_frac = n_el / elig.shape[1]
        per_m = np.maximum(elig.sum(axis=0), 1)
        self._m_min_pt = np.where(elig, pn, np.inf).min(axis=0)
        self._m_min_pt[~np.isfinite(self._m_min_pt)] = 0.0
        self._m_mean_pt = pn.sum(axis=0) / per_m
        if cost is not None:
            cn = cost / self._cscale
            self._cn = cn
            self._op_min_c = self._cmin / self._cscale
            self._op_mean_c = cn.sum(axis=1) / n_el
            self._op_max_c = np.where(elig, cn, -np.inf).max(axis=1)
            mmin = np.where(elig, cn, np.inf).min(axis=0)
            self._m_min_c = np.where(np.isfinite(mmin), mmin, 0.0)
            self._m_mean_c = cn.sum(axis=0) / per_m
        else:
            n, m = p.shape
            self._cn = np.zeros((n, m))
            self._op_min_c = self._op_mean_c = self._op_max_c = np.zeros(n)
            self._m_min_c = self._m_mean_c = np.zeros(m)
        self._is_first = np.zeros(inst.n_ops, dtype=bool)
        self._is_first[inst.first_op] = True
        self._is_last = np.zeros(inst.n_ops, dtype=bool)
        self._is_last[inst.last_op] = True

    def features(self, *, zscore: bool = True) -> FJSPFeatures:
        """The policy's view of the current state (see :class:`FJSPFeatures`): the batch of
        one of :func:`batch_features`, so a single environment and a stacked batch share one
        implementation of the formulas."""
        self._require()
        f = _stacked_features([self], zscore=zscore)
        return FJSPFeatures(**{k.name: getattr(f, k.name)[0] for k in fields(f)})


def _zscore(x: np.ndarray, deleted: np.ndarray) -> np.ndarray:
    """DAN's normalisation of each ``x[b]``: standardise each column over the rows
    ``~deleted[b]``; deleted rows become 0.

    Bit for bit ``xs.mean(axis=0)`` / ``xs.std(axis=0)`` on ``xs = x[b][~deleted[b]]`` (NumPy
    sums a non-inner axis row after row): the deleted rows enter the sums as exact zeros, so a
    batch gives every environment the numbers it would get alone (a zero may differ in sign).
    """
    keep = ~deleted
    count = keep.sum(axis=1)[:, None].astype(float)  # (B, 1)
    k3 = keep[:, :, None]
    safe = np.maximum(count, 1.0)
    mean = np.where(k3, x, 0.0).sum(axis=1) / safe
    d = np.where(k3, x - mean[:, None, :], 0.0)
    std = np.sqrt((d * d).sum(axis=1) / safe)
    out = np.where(k3, (x - mean[:, None, :]) / (std[:, None, :] + 1e-8), 0.0)
    out[count[:, 0] == 0] = 0.0
    return out


_PAD = {"op_mask": 1.0, "deleted": True, "machine_mask": 0.0}


def batch_features(batch: Sequence[FJSPFeatures | FJSPEnv], *, zscore: bool = True
                   ) -> FJSPFeatures:
    """Stack the features of several environments (or their :class:`FJSPFeatures`) along a new
    leading axis, padding operations / jobs / machines to the largest size.

    Padding: features 0, ``legal`` False, ``op_mask`` 1 (no messages), ``deleted`` True,
    ``machine_mask`` 0 except a 1 on the diagonal (so a masked softmax stays finite); the
    ``*_valid`` masks are False on padding.
    """
    if len(batch) == 0:
        raise ValueError("batch: expected at least one environment or FJSPFeatures")
    if _stackable(batch):
        return _stacked_features(batch, zscore=zscore)
    feats = [b.features(zscore=zscore) if isinstance(b, FJSPEnv) else b for b in batch]
    if not all(isinstance(f, FJSPFeatures) for f in feats):
        raise ValueError("batch: expected FJSPEnv or FJSPFeatures items")
    n = max(f.op.shape[0] for f in feats)
    jn = max(f.legal.shape[0] for f in feats)
    m = max(f.legal.shape[1] for f in feats)
    sizes = {"N": n, "J": jn, "M": m}
    axes = {"op": "N.", "op_mask": "N.", "deleted": "N", "op_job": "N", "op_pos": "N",
            "candidate": "J", "machine": "M.", "machine_mask": "MM", "competition": "MMJ",
            "pair": "JM.", "legal": "JM", "quality": ".", "op_valid": "N", "job_valid": "J",
            "machine_valid": "M"}
    out = {}
    for name, spec in axes.items():
        arrays = []
        for f in feats:
            a = getattr(f, name)
            widths = [(0, sizes[s] - a.shape[d] if s in sizes else 0)
                      for d, s in enumerate(spec)]
            fill = _PAD.get(name, False if a.dtype == bool else 0)
            if any(w for _, w in widths):
                a = np.pad(a, widths, constant_values=fill)
                if name == "machine_mask":
                    np.fill_diagonal(a, 1.0)
            arrays.append(a)
        out[name] = np.stack(arrays)
    return FJSPFeatures(**out)


def _stackable(batch: Sequence[FJSPFeatures | FJSPEnv]) -> bool:
    """Environments of one shape (operations, jobs, machines, objectives) and the same optional
    data (costs, due dates): :func:`_stacked_features` computes their features at once."""
    if not all(isinstance(b, FJSPEnv) and b.instance is not None for b in batch):
        return False
    first = batch[0]

    def shape(e: FJSPEnv):
        return (e._p.shape, e.job_done.size, len(e.objectives), e._due is None,
                e.instance.cost is None)

    return all(shape(e) == shape(first) for e in batch[1:])


def _stacked_features(envs: Sequence[FJSPEnv], *, zscore: bool) -> FJSPFeatures:
    """The features of same-shape environments, stacked, in one pass of array operations over
    a leading batch axis (issue 29: per-environment passes were 45-60 % of a DCAN training
    trial). :meth:`FJSPEnv.features` is its batch of one.

    Each environment's slice equals what it gets alone, bit for bit, and both equal the
    per-environment reference in ``tests/scheduling/test_env.py`` (tested): every reduction
    runs over the same axis and length as the per-environment formula (max / min are exact,
    the bincount sums keep their order per bin, the 0/1 products are exact integers, the
    z-scores' sums see the deleted rows as exact zeros: :func:`_zscore`).
    """
    def stack(name: str) -> np.ndarray:
        if len(envs) == 1:  # a view: np.stack would copy every array of a lone environment
            return getattr(envs[0], name)[None]
        return np.stack([getattr(e, name) for e in envs])

    inst0 = envs[0].instance
    n, m = envs[0]._p.shape
    jn = inst0.n_jobs
    B = len(envs)
    T = np.array([e._tscale for e in envs])[:, None]  # (B, 1): per-environment time scale
    legal = np.stack([e.action_mask() for e in envs])
    alive = ~stack("job_done")
    cand = stack("next_op")
    job_ready, mr = stack("job_ready"), stack("machine_ready")
    elig, p, pn, cn, lb = stack("_elig"), stack("_p"), stack("_pn"), stack("_cn"), stack("_lb")
    scheduled, end = stack("scheduled"), stack("end")
    job_of = np.stack([e.instance.job_of_op for e in envs])
    st = np.maximum(job_ready[:, :, None], mr[:, None, :])
    elig_cand = np.take_along_axis(elig, cand[:, :, None], axis=1) & alive[:, :, None]
    any_cand = elig_cand.any(axis=(1, 2))
    tn = np.where(any_cand, np.where(elig_cand, st, np.inf).min(axis=(1, 2)), mr.max(axis=1))
    tnc = tn[:, None]
    remaining = ~scheduled

    # -- operations
    rows = np.nonzero(remaining)
    bins = (rows[0] * jn + job_of[rows]).ravel()
    ops_left = np.bincount(bins, minlength=B * jn).reshape(B, jn)
    mean_pt = stack("_op_mean_pt")
    work_left = np.bincount(bins, weights=mean_pt[rows], minlength=B * jn).reshape(B, jn)
    waiting = np.zeros((B, n))
    bi, ji = np.nonzero(alive)
    waiting[bi, cand[bi, ji]] = (np.maximum(tnc - job_ready, 0.0) / T)[bi, ji]
    ends = np.where(scheduled, end, 0.0)
    remain_work = np.maximum(ends - tnc, 0.0) / T
    c_job = np.take_along_axis(lb, np.stack([e._last for e in envs]), axis=1)
    slack = ((stack("_due") - c_job) / T if envs[0]._due is not None else np.zeros((B, jn)))
    min_pt, max_pt = stack("_op_min_pt"), stack("_op_max_pt")
    op = np.stack([
        scheduled.astype(float), lb / T, min_pt, max_pt - min_pt, mean_pt, waiting, remain_work,
        np.take_along_axis(ops_left, job_of, axis=1).astype(float),
        np.take_along_axis(work_left, job_of, axis=1), stack("_elig_frac"),
        stack("_op_min_c"), stack("_op_mean_c"), np.take_along_axis(slack, job_of, axis=1),
    ], axis=2)
    deleted = scheduled & (ends <= tnc)
    is_first = stack("_is_first")
    op_mask = np.zeros((B, n, 3))
    op_mask[:, :, 0] = is_first
    op_mask[:, 1:, 0] = np.maximum(op_mask[:, 1:, 0], deleted[:, :-1] & ~is_first[:, 1:])
    op_mask[:, :, 2] = stack("_is_last") | deleted

    # -- machines
    rem_elig = elig & remaining[:, :, None]
    mach = np.stack([
        legal.sum(axis=1).astype(float), rem_elig.sum(axis=1).astype(float), stack("_m_min_pt"),
        stack("_m_mean_pt"), np.maximum(tnc - mr, 0.0) / T, np.maximum(mr - tnc, 0.0) / T,
        mr / T, (mr > tnc).astype(float), stack("workload") / T, stack("_m_min_c"),
        stack("_m_mean_c"),
    ], axis=2)
    re32 = rem_elig.astype(np.float32)
    share = re32.transpose(0, 2, 1) @ re32
    m_deleted = np.diagonal(share, axis1=1, axis2=2) == 0
    machine_mask = (share > 0).astype(np.float32)
    machine_mask[:, np.arange(m), np.arange(m)] = 1.0
    lfT = legal.astype(np.float32).transpose(0, 2, 1)
    competition = lfT[:, :, None, :] * lfT[:, None, :, :]

    # -- pairs
    cp = np.where(legal, np.take_along_axis(pn, cand[:, :, None], axis=1), 0.0)
    rem_pn = np.where(rem_elig, pn, 0.0)
    eps = 1e-8
    cand_work = work_left + eps
    pair_wait = (np.take_along_axis(waiting, cand, axis=1)[:, :, None]
                 + (np.maximum(tnc - mr, 0.0) / T)[:, None, :])
    cc = np.where(legal, np.take_along_axis(cn, cand[:, :, None], axis=1), 0.0)
    p_c = np.take_along_axis(p, cand[:, :, None], axis=1)
    lb_c = np.take_along_axis(lb, cand, axis=1)
    T3 = T[:, :, None]
    lb_inc = np.where(legal, (st + p_c - lb_c[:, :, None]) / T3, 0.0)
    op_max_c = np.take_along_axis(stack("_op_max_c"), cand, axis=1)
    pair = np.stack([
        cp, cp / np.maximum(np.take_along_axis(max_pt, cand, axis=1), eps)[:, :, None],
        cp / (cp.max(axis=1, keepdims=True) + eps),
        cp / (rem_pn.max(axis=(1, 2))[:, None, None] + eps),
        cp / (rem_pn.max(axis=1, keepdims=True) + eps),
        cp / (cp.max(axis=(1, 2))[:, None, None] + eps),
        cp / cand_work[:, :, None], np.where(legal, pair_wait, 0.0),
        cc, cc / np.maximum(op_max_c, eps)[:, :, None],
        np.where(legal, st / T3, 0.0), lb_inc,
    ], axis=-1)

    if zscore:
        op, mach = _zscore(op, deleted), _zscore(mach, m_deleted)
    return FJSPFeatures(
        op=op.astype(np.float32), op_mask=op_mask.astype(np.float32), deleted=deleted,
        op_job=job_of.astype(np.int64),
        op_pos=np.stack([e.instance.op_pos for e in envs]).astype(np.int64),
        candidate=cand.astype(np.int64), machine=mach.astype(np.float32),
        machine_mask=machine_mask, competition=competition.astype(np.float32),
        pair=pair.astype(np.float32), legal=legal.copy(),
        quality=np.stack([e.quality / e.scales for e in envs]).astype(np.float32),
        op_valid=np.ones((B, n), dtype=bool), job_valid=np.ones((B, jn), dtype=bool),
        machine_valid=np.ones((B, m), dtype=bool))
