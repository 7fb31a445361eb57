"""DCAN and its baselines: the attention blocks against slow loop implementations of DAN's and
DCAN's equations, softmax normalisation over the neighbourhood with the preference node, valid
distributions over exactly the legal pairs on padded batches (equal to the unpadded output),
job-permutation equivariance, and λ-(in)sensitivity of DCAN / WI-DAN / the λ-blind ablation."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from optzoo.scheduling.dcan import DCANPolicy, MachineAttention, OpAttention, dcan, wi_dan
from optzoo.scheduling.env import FJSPEnv, batch_features
from optzoo.scheduling.instance import FJSPInstance, sd2_instance

OBJS = ("makespan", "cost")


def env_after(inst: FJSPInstance, steps: int, seed: int) -> FJSPEnv:
    env = FJSPEnv(OBJS)
    env.reset(inst)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        legal = env.legal_actions()
        env.step(legal[rng.integers(len(legal))])
    return env


def feats_of(envs) -> dict:
    return batch_features(envs).to_torch()


# -- slow references of the equations ----------------------------------------------------------

def slow_op_block(block: OpAttention, h, op_mask, h_pref=None, pref_on=None):
    """DAN's operation block (and DCAN's with a preference node) with explicit loops:
    e(ij, x) = LeakyReLU(a_1ᵀ W h_ij + a_2ᵀ W h_x) over the unmasked neighbours, softmax,
    Σ α W h_x; heads concatenated or averaged; ELU."""
    b_n, n, _ = h.shape
    heads, d = block.heads, block.d_out
    out = torch.zeros(b_n, heads, n, d, dtype=torch.float64)
    W, a = block.W.double(), block.a.double()
    for b in range(b_n):
        for hd in range(heads):
            a1, a2 = a[hd, :d, 0], a[hd, d:, 0]
            for i in range(n):
                nbrs = []
                for col, p in ((0, i - 1), (1, i), (2, i + 1)):
                    if op_mask[b, i, col] == 0:
                        nbrs.append(h[b, p].double() @ W[hd])
                if h_pref is not None and pref_on[b, i]:
                    nbrs.append(h_pref[b].double() @ W[hd])
                if not nbrs:  # padding: no message at all, never read
                    continue
                self_w = h[b, i].double() @ W[hd]
                e = torch.stack([F.leaky_relu(a1 @ self_w + a2 @ x, 0.2) for x in nbrs])
                alpha = torch.softmax(e, 0)
                out[b, hd, i] = sum(al * x for al, x in zip(alpha, nbrs, strict=True))
    out = out.permute(0, 2, 1, 3).flatten(2) if block.concat else out.mean(1)
    return F.elu(out)


def slow_machine_block(block: MachineAttention, h, machine_mask, comp, h_pref=None,
                       valid=None):
    """DAN's machine block with explicit loops; DCAN's preference edge uses the mean of c_kq
    over valid machine pairs."""
    b_n, m, _ = h.shape
    heads, d = block.heads, block.d_out
    out = torch.zeros(b_n, heads, m, d, dtype=torch.float64)
    W, We, a = block.W.double(), block.W_edge.double(), block.a.double()
    for b in range(b_n):
        vk = [k for k in range(m) if valid is None or valid[b, k]]
        c_mean = sum(comp[b, k, q].double() for k in vk for q in vk) / len(vk) ** 2
        for hd in range(heads):
            a1, a2, a3 = a[hd, :d, 0], a[hd, d:2 * d, 0], a[hd, 2 * d:, 0]
            for k in range(m):
                wk = h[b, k].double() @ W[hd]
                es, msgs = [], []
                for q in range(m):
                    if machine_mask[b, k, q] > 0:
                        wq = h[b, q].double() @ W[hd]
                        es.append(F.leaky_relu(a1 @ wk + a2 @ wq + a3 @ (comp[b, k, q].double()
                                                                          @ We[hd]), 0.2))
                        msgs.append(wq)
                if h_pref is not None and valid[b, k]:
                    wp = h_pref[b].double() @ W[hd]
                    es.append(F.leaky_relu(a1 @ wk + a2 @ wp + a3 @ (c_mean @ We[hd]), 0.2))
                    msgs.append(wp)
                alpha = torch.softmax(torch.stack(es), 0)
                out[b, hd, k] = sum(al * x for al, x in zip(alpha, msgs, strict=True))
    out = out.permute(0, 2, 1, 3).flatten(2) if block.concat else out.mean(1)
    return F.elu(out)


@pytest.fixture
def padded():
    envs = [env_after(sd2_instance(3, 2, 1), 2, 0), env_after(sd2_instance(4, 3, 2), 5, 1)]
    return envs, feats_of(envs)


@pytest.mark.parametrize("concat", [True, False])
def test_op_block_matches_dan_and_dcan_equations(padded, concat):
    torch.manual_seed(0)
    _, f = padded
    h = f["op"]
    block = OpAttention(h.shape[-1], 5, 3, concat=concat)
    h_pref = torch.randn(h.shape[0], h.shape[-1])
    on = f["op_valid"]
    with torch.no_grad():
        dan = block(h, f["op_mask"])
        forced = block(h, f["op_mask"], h_pref, torch.zeros_like(on))  # preference weight 0
        full = block(h, f["op_mask"], h_pref, on)
        ref_dan = slow_op_block(block, h, f["op_mask"])
        ref_dcan = slow_op_block(block, h, f["op_mask"], h_pref, on)
    valid = f["op_valid"]
    # DAN's equations on every real operation; padding rows attend to nothing and are unused
    torch.testing.assert_close(dan[valid].double(), ref_dan[valid], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(forced[valid], dan[valid], atol=0, rtol=0)
    torch.testing.assert_close(full[valid].double(), ref_dcan[valid], atol=1e-5, rtol=1e-5)
    assert not torch.allclose(full[valid], dan[valid])


def test_attention_weights_sum_to_one_over_the_neighbourhood_with_the_preference_node(padded):
    torch.manual_seed(1)
    _, f = padded
    h = f["op"]
    block = OpAttention(h.shape[-1], 4, 2, concat=True)
    att = block.scores(h, f["op_mask"], torch.randn(2, h.shape[-1]), f["op_valid"])
    assert att.shape[-1] == 4
    valid = f["op_valid"][:, None, :].expand(-1, 2, -1)
    sums = att.sum(-1)[valid]
    torch.testing.assert_close(sums, torch.ones_like(sums))
    assert (att[..., 3][valid] > 0).all()
    # masked neighbours (no predecessor / successor) get weight exactly 0
    masked = (f["op_mask"] > 0)[:, None].expand(-1, 2, -1, -1)
    assert (att[..., :3][masked & valid[..., None]] == 0).all()

    mblock = MachineAttention(f["machine"].shape[-1], h.shape[-1], 4, 2, concat=True)
    comp = torch.rand(*f["machine_mask"].shape, h.shape[-1])
    m_att, _ = mblock.scores(f["machine"], f["machine_mask"], comp,
                             torch.randn(2, f["machine"].shape[-1]), f["machine_valid"],
                             f["machine_valid"])
    mv = f["machine_valid"][:, None, :].expand(-1, 2, -1)
    s = m_att.sum(-1)[mv]
    torch.testing.assert_close(s, torch.ones_like(s))
    assert (m_att[..., -1][mv] > 0).all()


@pytest.mark.parametrize("concat", [True, False])
def test_machine_block_matches_dan_and_dcan_equations(padded, concat):
    torch.manual_seed(2)
    _, f = padded
    hm, mm, valid = f["machine"], f["machine_mask"], f["machine_valid"]
    d_edge = 6
    comp = torch.rand(*mm.shape, d_edge)
    block = MachineAttention(hm.shape[-1], d_edge, 5, 3, concat=concat)
    h_pref = torch.randn(hm.shape[0], hm.shape[-1])
    with torch.no_grad():
        dan = block(hm, mm, comp)
        forced = block(hm, mm, comp, h_pref, torch.zeros_like(valid), valid)
        full = block(hm, mm, comp, h_pref, valid, valid)
        ref_dan = slow_machine_block(block, hm, mm, comp)
        ref_dcan = slow_machine_block(block, hm, mm, comp, h_pref, valid)
    torch.testing.assert_close(dan[valid].double(), ref_dan[valid], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(forced[valid], dan[valid], atol=0, rtol=0)
    torch.testing.assert_close(full[valid].double(), ref_dcan[valid], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("mode", ["dcan", "wi-dan", "blind", "dan", "hyper"])
def test_policy_is_a_distribution_over_exactly_the_legal_pairs_on_padded_batches(padded, mode):
    torch.manual_seed(3)
    envs, f = padded
    pol = DCANPolicy(2, mode)
    lam = torch.tensor([[0.3, 0.7], [0.8, 0.2]])
    with torch.no_grad():
        out = pol(f, lam)
    m_pad = f["legal"].shape[2]
    probs = out.probs
    torch.testing.assert_close(probs.sum(-1), torch.ones(2))
    legal = f["legal"].reshape(2, -1)
    assert (probs[~legal] == 0).all() and (probs[legal] > 0).all()
    assert out.values.shape == (2, 2) and torch.isfinite(out.values).all()
    # padding does not change an environment's output
    for b, env in enumerate(envs):
        with torch.no_grad():
            alone = pol(feats_of([env]), lam[b:b + 1])
        jn, m = env.action_mask().shape
        idx = [j * m_pad + k for j in range(jn) for k in range(m)]
        torch.testing.assert_close(probs[b, idx], alone.probs[0], atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(out.values[b], alone.values[0], atol=1e-6, rtol=1e-5)


def permuted(inst: FJSPInstance, perm) -> FJSPInstance:
    """The instance with job ``perm[i]`` placed at position i."""
    ops = [np.arange(inst.first_op[j], inst.last_op[j] + 1) for j in perm]
    order = np.concatenate(ops)
    return FJSPInstance.from_arrays(inst.job_lengths[perm], inst.processing[order],
                                    inst.eligible[order], cost=inst.cost[order],
                                    due_dates=inst.due_dates[perm])


@pytest.mark.parametrize("mode", ["dcan", "wi-dan"])
def test_permuting_jobs_permutes_the_action_probabilities(mode):
    torch.manual_seed(4)
    inst = sd2_instance(5, 3, 7)
    perm = np.array([3, 0, 4, 2, 1])
    inv = np.argsort(perm)
    pol = DCANPolicy(2, mode)
    lam = torch.tensor([[0.4, 0.6]])
    env_a, env_b = FJSPEnv(OBJS), FJSPEnv(OBJS)
    env_a.reset(inst)
    env_b.reset(permuted(inst, perm))
    rng = np.random.default_rng(0)
    for _ in range(6):
        with torch.no_grad():
            pa = pol(feats_of([env_a]), lam).probs[0].reshape(5, 3)
            pb = pol(feats_of([env_b]), lam).probs[0].reshape(5, 3)
        torch.testing.assert_close(pb, pa[perm], atol=1e-6, rtol=1e-5)
        legal = env_a.legal_actions()
        j, k = legal[rng.integers(len(legal))]
        env_a.step((j, k))
        env_b.step((inv[j], k))


def test_lambda_changes_dcan_and_wi_dan_but_not_the_blind_ablation():
    torch.manual_seed(5)
    f = feats_of([env_after(sd2_instance(4, 3, 3), 3, 2)])
    for mode, sensitive in (("dcan", True), ("wi-dan", True), ("blind", False), ("dan", False),
                            ("hyper", True)):
        pol = DCANPolicy(2, mode)
        with torch.no_grad():
            a, b = pol(f, torch.tensor([[0.9, 0.1]])), pol(f, torch.tensor([[0.1, 0.9]]))
        diff = (a.probs - b.probs).abs().max().item()
        vdiff = (a.values - b.values).abs().max().item()
        if sensitive:
            assert diff > 1e-4 and vdiff > 1e-4, mode
        else:
            assert diff == 0 and vdiff == 0, mode


def test_factories_and_errors():
    assert dcan(3).mode == "dcan" and dcan(3).n_obj == 3
    assert wi_dan().mode == "wi-dan"
    with pytest.raises(ValueError, match="mode"):
        DCANPolicy(2, "hypernet")
    with pytest.raises(ValueError, match="lambda_embedding"):
        DCANPolicy(2, "dcan", lambda_embedding=False)
    with pytest.raises(ValueError, match="lambda_embedding"):
        DCANPolicy(2, "dan", lambda_embedding=True)
    with pytest.raises(TypeError, match="lambda_embedding"):
        DCANPolicy(2, "wi-dan", lambda_embedding=1)
    with pytest.raises(ValueError, match="hyper_hidden"):
        DCANPolicy(2, "hyper", hyper_hidden=0)
    with pytest.raises(ValueError, match="dims, heads"):
        DCANPolicy(2, dims=(32,), heads=(4, 4))
    with pytest.raises(ValueError, match="n_obj"):
        DCANPolicy(0)
    env = env_after(sd2_instance(3, 2, 0), 0, 0)
    with pytest.raises(ValueError, match="prefs"):
        dcan(2)(feats_of([env]), torch.ones(1, 3) / 3)


def test_wi_dan_actor_gets_the_same_lambda_embeddings_as_dcan():
    """Issue 22: DCAN's actor receives the λ-embeddings directly; WI-DAN's must too, so that
    the two differ only in how λ enters the encoder."""
    f = feats_of([env_after(sd2_instance(4, 3, 3), 3, 2)])
    d, w, plain = dcan(2), wi_dan(2), wi_dan(2, lambda_embedding=False)
    assert d.actor[0].in_features == w.actor[0].in_features
    assert plain.actor[0].in_features == d.actor[0].in_features - 2 * 8
    lam = torch.tensor([[0.9, 0.1]])
    emb = w.embed(f, lam)
    # the embedding is the λ path alone (λ → linear → ELU per layer), not the attention
    ref = lam
    ref_op = w.op_pref_init(ref)
    for layer in w.op_pref:
        ref_op = torch.nn.functional.elu(layer(ref_op))
    torch.testing.assert_close(emb["pref_op"], ref_op)
    # and it reaches the actor: changing only the embedding path changes the probabilities
    with torch.no_grad():
        before = w(f, lam).probs
        w.op_pref_init.bias.add_(1.0)
        after = w(f, lam).probs
    assert (before - after).abs().max() > 1e-5
    # the WI-DAN encoder attends over no preference node: the operation embeddings do not
    # depend on the λ path's weights
    torch.testing.assert_close(w.embed(f, lam)["op"], emb["op"])


def test_hyper_actor_is_an_mlp_with_parameters_generated_from_lambda():
    torch.manual_seed(6)
    f = feats_of([env_after(sd2_instance(4, 3, 3), 2, 1)])
    pol = DCANPolicy(2, "hyper")
    lam = torch.tensor([[0.25, 0.75]])
    with torch.no_grad():
        out = pol(f, lam)
        emb = pol.embed(f, lam)
        params = pol.hyper(lam)[0]
        # the actor's input, built as forward does, then the MLP written out by hand
        legal = f["legal"]
        _, j, m = legal.shape
        cand = f["candidate"]
        h_cand = emb["op"][0, cand[0]]
        g = torch.cat([emb["g_op"][0], emb["g_machine"][0], f["quality"][0].float()])
        x = torch.cat([h_cand[:, None].expand(-1, m, -1), emb["machine"][0][None].expand(j, -1, -1),
                       f["pair"][0].float(), g[None, None].expand(j, m, -1)], -1).reshape(j * m, -1)
        lo = 0
        for i, (a, b) in enumerate(pol.actor_shapes):
            W = params[lo:lo + a * b].reshape(a, b) / a ** 0.5
            lo += a * b
            x = x @ W + params[lo:lo + b]
            lo += b
            if i < len(pol.actor_shapes) - 1:
                x = torch.tanh(x)
        ref = torch.where(legal.reshape(-1), x[:, 0], torch.full_like(x[:, 0], -9e15))
    torch.testing.assert_close(out.logits[0], ref, atol=1e-5, rtol=1e-5)
    assert lo == sum(a * b + b for a, b in pol.actor_shapes) == params.numel()
    # λ reaches only the actor through the hypernetwork: the encoder ignores it
    torch.testing.assert_close(pol.embed(f, torch.tensor([[0.9, 0.1]]))["op"], emb["op"])
