"""The construction MDP: every episode yields a valid schedule, the bound-based rewards sum to
H(s_0) − f(schedule) exactly, the bounds are monotone and bracket the final objectives, DAN's
"earliest" action set, and the policy features."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.scheduling.env import (
    MACHINE_FEATURES,
    OP_FEATURES,
    PAIR_FEATURES,
    FJSPEnv,
    FJSPFeatures,
    batch_features,
)
from optzoo.scheduling.instance import FJSPInstance, read_fjs, sd2_instance
from optzoo.scheduling.schedule import OBJECTIVES, check_schedule, evaluate
from tests.conftest import shared_dir
from tests.scheduling.strategies import instances

MK01 = shared_dir() / "data" / "fjsp" / "mk01.fjs"
LOWER = ("makespan", "tardiness", "flowtime", "cost")  # lower bounds; earliness: upper


def run_random(env: FJSPEnv, inst: FJSPInstance, seed: int, check_bounds: bool = False):
    rng = np.random.default_rng(seed)
    env.reset(inst)
    rewards, qualities = [], [env.quality.copy()]
    while not env.done:
        legal = env.legal_actions()
        assert len(legal) > 0
        rewards.append(env.step(legal[rng.integers(len(legal))]))
        qualities.append(env.quality.copy())
        if check_bounds:
            c = definition_bounds(env, inst)
            np.testing.assert_array_equal(env.completion_bounds(), c)
            cj, d = c[inst.last_op], inst.due_dates
            k = np.where(env.scheduled, env.machine_of, 0)
            cmin = np.where(inst.eligible, inst.cost, np.inf).min(axis=1)
            cost = np.where(env.scheduled, inst.cost[np.arange(inst.n_ops), k], cmin).sum()
            h = [cj.max(), np.maximum(cj - d, 0).sum(), cj.sum(), cost,
                 np.maximum(d - cj, 0).sum()]
            np.testing.assert_array_equal(env.quality, h)  # env.objectives == OBJECTIVES
    return np.array(rewards), np.array(qualities)


def definition_bounds(env: FJSPEnv, inst: FJSPInstance) -> np.ndarray:
    """C(O_ij, s): the actual end when scheduled, else C(O_i(j-1), s) + min_k p^k_ij."""
    pmin = np.where(inst.eligible, inst.processing, np.inf).min(axis=1)
    c = np.zeros(inst.n_ops)
    for o in range(inst.n_ops):
        prev = 0.0 if inst.op_pos[o] == 0 else c[o - 1]
        c[o] = env.end[o] if env.scheduled[o] else prev + pmin[o]
    return c


def closed_form_bounds(inst: FJSPInstance) -> np.ndarray:
    """H(s_0) from the definitions: C_i(s_0) = Σ_j min_k p^k_ij."""
    pmin = np.where(inst.eligible, inst.processing, np.inf).min(axis=1)
    c = np.array([pmin[inst.first_op[i]:inst.last_op[i] + 1].sum() for i in range(inst.n_jobs)])
    cmin = np.where(inst.eligible, inst.cost, np.inf).min(axis=1).sum()
    d = inst.due_dates
    return np.array([c.max(), np.maximum(c - d, 0).sum(), c.sum(), cmin,
                     np.maximum(d - c, 0).sum()])


@settings(max_examples=80)
@given(instances(), st.integers(0, 2**31), st.sampled_from(["all", "earliest"]))
def test_episodes_are_valid_and_rewards_telescope_exactly(inst, seed, candidates):
    env = FJSPEnv(OBJECTIVES, candidates=candidates, normalise=False)
    rewards, q = run_random(env, inst, seed, check_bounds=True)
    sched = env.schedule()
    assert check_schedule(inst, sched) == []
    f = evaluate(inst, sched, OBJECTIVES)
    np.testing.assert_array_equal(q[0], closed_form_bounds(inst))
    # integer data: the identity Σ_t r_t = H(s_0) − f holds exactly
    np.testing.assert_array_equal(rewards.sum(axis=0), q[0] - f)
    np.testing.assert_array_equal(env.objective_values(), f)
    lower = [OBJECTIVES.index(o) for o in LOWER]
    assert np.all(rewards[:, lower] <= 0)          # lower bounds never decrease
    assert np.all(q[:, lower] <= f[lower])         # ... and stay below the final value
    e = OBJECTIVES.index("earliness")
    assert np.all(rewards[:, e] >= 0) and np.all(q[:, e] >= f[e])
    # normalised rewards are the raw ones over the scales and telescope the same way
    env_n = FJSPEnv(OBJECTIVES, candidates=candidates)
    rn, _ = run_random(env_n, inst, seed)
    np.testing.assert_allclose(rn, rewards / env_n.scales, rtol=1e-12)
    assert np.all(env_n.scales > 0)


@settings(max_examples=40)
@given(instances(), st.integers(0, 2**31))
def test_earliest_candidates_start_first(inst, seed):
    env = FJSPEnv(("makespan",), candidates="earliest")
    rng = np.random.default_rng(seed)
    env.reset(inst)
    while not env.done:
        everything = np.zeros_like(env.action_mask())
        alive = ~env.job_done
        everything[alive] = inst.eligible[env.next_op[alive]]
        st_ = np.maximum(env.job_ready[:, None], env.machine_ready[None, :])
        expect = everything & (st_ == st_[everything].min())
        np.testing.assert_array_equal(env.action_mask(), expect)
        legal = env.legal_actions()
        env.step(legal[rng.integers(len(legal))])


def test_scales_and_mk01_bounds():
    inst = sd2_instance(10, 5, 3)
    env = FJSPEnv(OBJECTIVES)
    env.reset(inst)
    h0 = closed_form_bounds(inst)
    assert h0[1] == 0  # SD2 due dates use mean times, the bound min times: no tardiness at s_0
    # inferred scales: H_i(s_0), tardiness borrows the flowtime bound
    np.testing.assert_array_equal(env.scales, [h0[0], h0[2], h0[2], h0[3], h0[4]])
    mk01 = read_fjs(MK01)
    env = FJSPEnv(("makespan",), normalise=False)
    env.reset(mk01)
    assert env.quality[0] <= 36  # our trivial bound cannot exceed the proven lower bound


def test_actions_and_errors():
    inst = FJSPInstance([[{0: 2, 1: 3}, {1: 1}], [{0: 4}]], costs=[[{0: 1, 1: 0}, {1: 2}],
                                                                    [{0: 5}]])
    env = FJSPEnv(("makespan", "cost"))
    with pytest.raises(RuntimeError, match="reset"):
        env.legal_actions()
    with pytest.raises(ValueError, match="objectives: 'tardiness'"):
        FJSPEnv(("tardiness",)).reset(inst)
    with pytest.raises(ValueError, match="candidates"):
        FJSPEnv(candidates="some")
    env.reset(inst)
    assert env.legal_actions().tolist() == [[0, 0], [0, 1], [1, 0]]
    with pytest.raises(ValueError, match="machine 1 cannot process job 1"):
        env.step((1, 1))
    with pytest.raises(ValueError, match="outside"):
        env.step((2, 0))
    env.step(1 * 2 + 0)  # flat index job * M + machine: job 1 on machine 0, [0, 4)
    env.step((0, 0))     # job 0's first operation on machine 0 after it: [4, 6)
    with pytest.raises(ValueError, match="job 1 is finished"):
        env.step((1, 0))
    env.step((0, 1))
    assert env.done
    with pytest.raises(RuntimeError, match="over"):
        env.step((0, 1))
    s = env.schedule()
    np.testing.assert_array_equal(s.start, [4, 6, 0])
    np.testing.assert_array_equal(env.objective_values(), [7, 1 + 2 + 5])
    env.reset(inst)
    with pytest.raises(RuntimeError, match="unscheduled"):
        env.schedule()
    twin = env.copy()
    twin.step((0, 0))
    assert env.steps == 0 and twin.steps == 1


def test_features_shapes_meaning_and_batching():
    inst = sd2_instance(6, 4, 0)
    env = FJSPEnv(("makespan", "cost"))
    env.reset(inst)
    rng = np.random.default_rng(0)
    for _ in range(7):
        legal = env.legal_actions()
        env.step(legal[rng.integers(len(legal))])
    raw = env.features(zscore=False)
    n, m, jn = inst.n_ops, inst.n_machines, inst.n_jobs
    assert raw.op.shape == (n, len(OP_FEATURES)) and raw.op.dtype == np.float32
    assert raw.machine.shape == (m, len(MACHINE_FEATURES))
    assert raw.pair.shape == (jn, m, len(PAIR_FEATURES))
    assert raw.competition.shape == (m, m, jn) and raw.machine_mask.shape == (m, m)
    np.testing.assert_array_equal(raw.legal, env.action_mask())
    T = inst.processing.max()
    col = OP_FEATURES.index
    np.testing.assert_allclose(raw.op[:, col("lb_completion")], env.completion_bounds() / T,
                               rtol=1e-6)
    np.testing.assert_array_equal(raw.op[:, col("scheduled")], env.scheduled)
    np.testing.assert_allclose(raw.machine[:, MACHINE_FEATURES.index("ready_time")],
                               env.machine_ready / T, rtol=1e-6)
    j, k = env.legal_actions()[0]
    o = env.next_op[j]
    pc = PAIR_FEATURES.index
    assert raw.pair[j, k, pc("pt")] == pytest.approx(inst.processing[o, k] / T, rel=1e-6)
    assert raw.pair[j, k, pc("cost")] == pytest.approx(inst.cost[o, k] / inst.cost.max(),
                                                       rel=1e-6)
    start = max(env.job_ready[j], env.machine_ready[k])
    assert raw.pair[j, k, pc("start")] == pytest.approx(start / T, rel=1e-6)
    assert np.all(raw.pair[~raw.legal] == 0)
    assert raw.competition[k, k, j] == 1 and raw.competition.sum() == \
        (raw.legal.sum(axis=1) ** 2).sum()
    np.testing.assert_allclose(raw.quality, env.quality / env.scales, rtol=1e-6)
    z = env.features()
    keep = ~z.deleted
    np.testing.assert_allclose(z.op[keep].mean(axis=0), 0, atol=1e-5)
    assert np.all(z.op[~keep] == 0)
    # a batch of two sizes: padding is marked invalid and illegal
    small = FJSPEnv(("makespan", "cost"))
    small.reset(sd2_instance(3, 2, 1))
    b = batch_features([env, small])
    assert b.op.shape == (2, n, len(OP_FEATURES)) and b.legal.shape == (2, jn, m)
    assert b.op_valid[1].sum() == 6 and b.job_valid[1].sum() == 3 and \
        b.machine_valid[1].sum() == 2
    assert not b.legal[1, 3:].any() and not b.legal[1, :, 2:].any()
    assert np.all(b.machine_mask[1].diagonal() == 1)
    np.testing.assert_array_equal(b.op[0], z.op)
    tensors = b.to_torch()
    assert tuple(tensors["pair"].shape) == (2, jn, m, len(PAIR_FEATURES))
    with pytest.raises(ValueError, match="batch"):
        batch_features([])


def _reference_features(env: FJSPEnv, zscore: bool) -> FJSPFeatures:
    """The reference: one environment's features, written per environment over its own
    arrays (the implementation before issue 29 batched them; kept here, outside the
    library, as the slow exact version that the stacked pass must equal bit for bit)."""
    inst = env.instance
    n, m, jn = inst.n_ops, env.machine_ready.size, inst.n_jobs
    T = env._tscale
    legal = env.action_mask()
    alive = ~env.job_done
    cand = env.next_op
    st = np.maximum(env.job_ready[:, None], env.machine_ready[None, :])
    elig_cand = np.zeros((jn, m), dtype=bool)
    elig_cand[alive] = env._elig[cand[alive]]
    # DAN's next schedule time: the earliest start over all compatible candidate pairs
    tn = float(st[elig_cand].min()) if elig_cand.any() else float(env.machine_ready.max())
    remaining = ~env.scheduled
    job_of = inst.job_of_op

    # -- operations
    ops_left = np.bincount(job_of[remaining], minlength=jn)
    work_left = np.bincount(job_of[remaining], weights=env._op_mean_pt[remaining],
                            minlength=jn)
    waiting = np.zeros(n)
    waiting[cand[alive]] = np.maximum(tn - env.job_ready[alive], 0.0) / T
    ends = np.where(env.scheduled, env.end, 0.0)
    remain_work = np.maximum(ends - tn, 0.0) / T
    c_job = env._lb[env._last]
    slack = (env._due - c_job) / T if env._due is not None else np.zeros(jn)
    op = np.stack([
        env.scheduled.astype(float), env._lb / T, env._op_min_pt,
        env._op_max_pt - env._op_min_pt, env._op_mean_pt, waiting, remain_work,
        ops_left[job_of].astype(float), work_left[job_of], env._elig_frac,
        env._op_min_c, env._op_mean_c, slack[job_of],
    ], axis=1)
    deleted = env.scheduled & (ends <= tn)
    op_mask = np.zeros((n, 3))
    op_mask[:, 0] = env._is_first
    op_mask[1:, 0] = np.maximum(op_mask[1:, 0], deleted[:-1] & ~env._is_first[1:])
    op_mask[:, 2] = env._is_last | deleted

    # -- machines
    rem_elig = env._elig & remaining[:, None]
    mr = env.machine_ready
    mach = np.stack([
        legal.sum(axis=0).astype(float), rem_elig.sum(axis=0).astype(float), env._m_min_pt,
        env._m_mean_pt, np.maximum(tn - mr, 0.0) / T, np.maximum(mr - tn, 0.0) / T,
        mr / T, (mr > tn).astype(float), env.workload / T, env._m_min_c, env._m_mean_c,
    ], axis=1)
    share = rem_elig.T.astype(np.float32) @ rem_elig.astype(np.float32)
    m_deleted = np.diag(share) == 0
    machine_mask = (share > 0).astype(np.float32)
    np.fill_diagonal(machine_mask, 1.0)
    lf = legal.astype(np.float32)
    competition = lf.T[:, None, :] * lf.T[None, :, :]

    # -- pairs
    cp = np.where(legal, env._pn[cand], 0.0)
    rem_pn = np.where(rem_elig, env._pn, 0.0)
    eps = 1e-8
    cand_work = work_left + eps
    pair_wait = waiting[cand][:, None] + np.maximum(tn - mr, 0.0)[None, :] / T
    cc = np.where(legal, env._cn[cand], 0.0)
    lb_inc = np.where(legal, (st + env._p[cand] - env._lb[cand][:, None]) / T, 0.0)
    pair = np.stack([
        cp, cp / np.maximum(env._op_max_pt[cand], eps)[:, None],
        cp / (cp.max(axis=0, keepdims=True) + eps), cp / (rem_pn.max() + eps),
        cp / (rem_pn.max(axis=0, keepdims=True) + eps), cp / (cp.max() + eps),
        cp / cand_work[:, None], np.where(legal, pair_wait, 0.0),
        cc, cc / np.maximum(env._op_max_c[cand], eps)[:, None],
        np.where(legal, st / T, 0.0), lb_inc,
    ], axis=-1)

    if zscore:
        op = _reference_zscore(op, deleted)
        mach = _reference_zscore(mach, m_deleted)
    return FJSPFeatures(
        op=op.astype(np.float32), op_mask=op_mask.astype(np.float32), deleted=deleted,
        op_job=job_of.astype(np.int64), op_pos=inst.op_pos.astype(np.int64),
        candidate=cand.astype(np.int64), machine=mach.astype(np.float32),
        machine_mask=machine_mask, competition=competition.astype(np.float32),
        pair=pair.astype(np.float32), legal=legal.copy(),
        quality=(env.quality / env.scales).astype(np.float32),
        op_valid=np.ones(n, dtype=bool), job_valid=np.ones(jn, dtype=bool),
        machine_valid=np.ones(m, dtype=bool))


def _reference_zscore(x: np.ndarray, deleted: np.ndarray) -> np.ndarray:
    """DAN's normalisation: standardise each column over the rows not deleted; deleted rows
    become 0."""
    keep = ~deleted
    if keep.sum() == 0:
        return np.zeros_like(x)
    xs = x[keep]
    return np.where(keep[:, None], (x - xs.mean(axis=0)) / (xs.std(axis=0) + 1e-8), 0.0)


def _per_env(envs, zscore):
    """The reference features of each environment, stacked (FJSPFeatures items never take the
    stacked pass)."""
    return batch_features([_reference_features(e, zscore) for e in envs])


@pytest.mark.parametrize("objectives,candidates,cost", [
    (("makespan", "cost"), "all", True),
    (("makespan", "tardiness", "flowtime", "earliness"), "earliest", False),
    (OBJECTIVES, "all", True),
])
def test_batched_features_equal_the_per_environment_ones_bit_for_bit(objectives, candidates,
                                                                     cost):
    """Issue 29: same-shape environments take one stacked pass (env._stacked_features), and
    a single environment's features are its batch of one. Both must equal the per-environment
    reference exactly, at every stage of the episodes (start, middle, one step before the end;
    different instances and progress per env)."""
    from dataclasses import fields

    from optzoo.scheduling.env import _stackable

    insts = [sd2_instance(5, 3, s, cost=cost) for s in range(4)]
    envs = []
    for inst in insts:
        env = FJSPEnv(objectives, candidates=candidates)
        env.reset(inst)
        envs.append(env)
    assert _stackable(envs)
    rng = np.random.default_rng(0)
    targets = [0, 4, 9, insts[0].n_ops - 1]
    for step in range(insts[0].n_ops - 1):
        for env, target in zip(envs, targets, strict=True):
            if env.steps < target:
                legal = env.legal_actions()
                env.step(legal[rng.integers(len(legal))])
        for zscore in (True, False):
            fast, slow = batch_features(envs, zscore=zscore), _per_env(envs, zscore)
            for f in fields(fast):
                a, b = getattr(fast, f.name), getattr(slow, f.name)
                assert a.dtype == b.dtype and a.shape == b.shape, f.name
                np.testing.assert_array_equal(a, b, err_msg=f"{f.name} at step {step}")
            for i, env in enumerate(envs):
                one, ref = env.features(zscore=zscore), _reference_features(env, zscore)
                for f in fields(one):
                    a, b = getattr(one, f.name), getattr(ref, f.name)
                    assert a.dtype == b.dtype and a.shape == b.shape, f.name
                    np.testing.assert_array_equal(a, b, err_msg=f"{f.name}, env {i}")
                    np.testing.assert_array_equal(a, getattr(fast, f.name)[i])


def test_mixed_shapes_or_feature_items_take_the_padded_path():
    a, b = FJSPEnv(("makespan", "cost")), FJSPEnv(("makespan", "cost"))
    a.reset(sd2_instance(4, 3, 0))
    b.reset(sd2_instance(3, 3, 1))
    from optzoo.scheduling.env import _stackable

    assert not _stackable([a, b]) and not _stackable([a.features(), a])
    mixed = batch_features([a, b])
    assert mixed.op_valid[1].sum() == b.instance.n_ops < mixed.op.shape[1]
    np.testing.assert_array_equal(mixed.op[0], a.features().op)
    np.testing.assert_array_equal(batch_features([a.features(), a]).op[1], a.features().op)
