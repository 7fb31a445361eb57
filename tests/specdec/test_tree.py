"""EAGLE-2 trees and speculative decoding: tree attention against running each path alone, the
tree builder against a slow re-implementation of EAGLE-2, losslessness against the target's own
greedy decoding (``transformers`` ``generate``), and exactness of speculative sampling (χ²)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from optzoo.specdec import (
    DraftSession,
    EagleDraft,
    TreeConfig,
    build_trees,
    chain_generate,
    speculative_generate,
    target_greedy,
    target_tree_logits,
    verify_tree_sample,
)
from optzoo.specdec.tree import tree_ancestors


def _target(vocab=12, seed=0, init=0.3, layers=2):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=vocab, hidden_size=32, intermediate_size=64,
                      num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=2,
                      initializer_range=init, eos_token_id=2, pad_token_id=0, bos_token_id=1,
                      max_position_embeddings=128)
    torch.manual_seed(seed)
    return LlamaForCausalLM(cfg).eval()


@pytest.fixture(scope="module")
def models():
    target = _target()
    draft = EagleDraft(target, hidden_size=16, num_heads=2, seed=1)
    # a draft that is not a pure random guesser: a few token-loss steps
    from optzoo.specdec import token_loss

    opt = torch.optim.Adam([p for p in draft.parameters() if p.requires_grad], lr=1e-2)
    gen = torch.Generator().manual_seed(0)
    for _ in range(15):
        ids = torch.randint(3, 12, (4, 16), generator=gen)
        loss = token_loss(draft, target, ids, ttt_steps=1)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return target, draft.eval()


def test_target_tree_logits_equal_each_path_run_alone(models):
    target, draft = models
    ids = torch.randint(3, 12, (2, 10), generator=torch.Generator().manual_seed(3))
    anchors = torch.tensor([[2, 6], [4, 7]])
    with torch.no_grad():
        trees = build_trees(DraftSession(draft, target(ids, output_hidden_states=True)
                                         .hidden_states[-1][:, :9], ids[:, 1:]), anchors,
                            TreeConfig(3, 2, 6))
        root, nodes = target_tree_logits(target, ids, trees)
        for b in range(2):
            for a in range(2):
                pre = ids[b, :int(anchors[b, a]) + 2].tolist()
                full = target(torch.tensor([pre])).logits[0, -1]
                torch.testing.assert_close(root[b, a], full, atol=1e-5, rtol=1e-5)
                par = trees.parents[b, a].tolist()
                for j in range(6):
                    path, k = [], j
                    while k >= 0:
                        path.append(int(trees.tokens[b, a, k]))
                        k = par[k]
                    alone = target(torch.tensor([pre + path[::-1]])).logits[0, -1]
                    torch.testing.assert_close(nodes[b, a, j], alone, atol=1e-5, rtol=1e-5)


def test_draft_session_nodes_equal_a_fresh_chain(models):
    """A tree node's draft logits do not depend on its siblings or on other trees."""
    target, draft = models
    ids = torch.randint(3, 12, (1, 9), generator=torch.Generator().manual_seed(4))
    hid = target(ids, output_hidden_states=True).hidden_states[-1][:, :8].detach()
    with torch.no_grad():
        s = DraftSession(draft, hid, ids[:, 1:])
        la = s.extend(torch.tensor([[3, 3, 5]]), torch.tensor([[-1, -1, -1]]),
                      torch.tensor([[4, 5, 6]]))
        lb = s.extend(torch.tensor([[3, 5]]), torch.tensor([[1, 2]]), torch.tensor([[7, 8]]))
        for anchor, toks, got in ((3, [5, 7], lb[0, 0]), (5, [6, 8], lb[0, 1]),
                                  (3, [4], la[0, 0])):
            fresh = DraftSession(draft, hid[:, :anchor + 1], ids[:, 1:anchor + 2])
            par = -1
            for t in toks:
                out = fresh.extend(torch.tensor([[anchor]]), torch.tensor([[par]]),
                                   torch.tensor([[t]]))
                par = fresh.num_nodes - 1
            torch.testing.assert_close(got, out[0, 0], atol=1e-5, rtol=1e-5)


def _eagle2_slow(draft, hid, toks, anchor, cfg: TreeConfig):
    """EAGLE-2 written node by node: every path's draft distribution from a fresh chain."""

    def logq(path):
        s = DraftSession(draft, hid[:, :anchor + 1], toks[:, :anchor + 1])
        lg, par = s.prefix_logits[0, anchor], -1
        for t in path:
            lg = s.extend(torch.tensor([[anchor]]), torch.tensor([[par]]),
                          torch.tensor([[t]]))[0, 0]
            par = s.num_nodes - 1
        return torch.log_softmax(lg.double(), -1)

    k = cfg.top_k
    pool = []                                   # (score, depth, order, path)
    lq = logq([])
    top = torch.topk(lq, k)
    frontier = [(float(v), [int(t)]) for v, t in zip(top.values, top.indices, strict=True)]
    pool += [(sc, 1, path) for sc, path in frontier]
    for d in range(2, cfg.depth + 1):
        cands = []
        for sc, path in frontier:
            lq = logq(path)
            top = torch.topk(lq, k)
            cands += [(sc + float(v), path + [int(t)]) for v, t in zip(top.values, top.indices,
                                                                      strict=True)]
        pool += [(sc, d, path) for sc, path in cands]
        frontier = sorted(cands, key=lambda c: -c[0])[:k]
    order = sorted(range(len(pool)), key=lambda i: (-pool[i][0], i))[:cfg.total_tokens]
    return {tuple(pool[i][2]) for i in order}


@settings(max_examples=4, deadline=None)
@given(depth=st.integers(1, 3), k=st.integers(1, 3), frac=st.floats(0.1, 1.0),
       anchor=st.integers(1, 6))
def test_build_trees_matches_slow_eagle2(models, depth, k, frac, anchor):
    target, draft = models
    pool = k + (depth - 1) * k * k
    cfg = TreeConfig(depth, k, max(1, int(frac * pool)))
    ids = torch.randint(3, 12, (1, 9), generator=torch.Generator().manual_seed(anchor))
    hid = target(ids, output_hidden_states=True).hidden_states[-1][:, :8].detach()
    with torch.no_grad():
        t = build_trees(DraftSession(draft, hid, ids[:, 1:]), torch.tensor([[anchor]]), cfg)
        par = t.parents[0, 0].tolist()
        fast = set()
        for j in range(cfg.total_tokens):
            path, n = [], j
            while n >= 0:
                path.append(int(t.tokens[0, 0, n]))
                n = par[n]
            fast.add(tuple(path[::-1]))
        assert fast == _eagle2_slow(draft, hid, ids[:, 1:], anchor, cfg)
    anc = tree_ancestors(t.parents[0, 0])
    assert bool(anc.diagonal().all())
    assert (t.depth[0, 0] == anc.sum(-1)).all()        # depth = number of ancestors + self


@pytest.mark.parametrize("tree", [TreeConfig(5, 4, 16), TreeConfig(3, 2, 4), TreeConfig(1, 1, 1)])
def test_greedy_tree_decoding_is_lossless(models, tree):
    target, draft = models
    gen = torch.Generator().manual_seed(11)
    for _ in range(3):
        prompt = torch.randint(3, 12, (int(torch.randint(1, 6, (1,), generator=gen)),),
                               generator=gen)
        ref = target_greedy(target, prompt, 24)
        out = speculative_generate(target, draft, prompt, tree=tree, max_new_tokens=24)
        assert out.tokens == ref
        assert out.target_forwards == 1 + len(out.accept_lengths)
        assert 1 <= out.tau <= tree.depth + 1
        assert sum(out.accept_lengths) >= 24 - 1


def test_chain_decoding_is_lossless_and_stops_at_eos(models):
    target, draft = models
    prompt = torch.tensor([1, 5, 7])
    ref = target_greedy(target, prompt, 20)
    assert chain_generate(target, draft, prompt, num_draft=3, max_new_tokens=20).tokens == ref
    eos = ref[4]
    short = target_greedy(target, prompt, 20, eos_token_id=eos)
    got = speculative_generate(target, draft, prompt, max_new_tokens=20, eos_token_id=eos)
    assert got.tokens == short and got.tokens[-1] == eos


def test_trained_draft_accepts_more_than_a_random_one():
    """The draft acts: after token-level training on the target's own samples the tree accepts
    more tokens per cycle than with the untrained draft."""
    from optzoo.specdec import token_loss

    target = _target(vocab=8, init=0.6, seed=2)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        data = target.generate(torch.full((64, 1), 3), do_sample=True, max_new_tokens=15,
                               pad_token_id=0, eos_token_id=None)
    fresh = EagleDraft(target, hidden_size=16, num_heads=2, seed=0)
    trained = EagleDraft(target, hidden_size=16, num_heads=2, seed=0)
    opt = torch.optim.Adam([p for p in trained.parameters() if p.requires_grad], lr=1e-2)
    for _ in range(30):
        idx = torch.randint(0, 64, (16,), generator=gen)
        loss = token_loss(trained, target, data[idx], ttt_steps=1)
        opt.zero_grad()
        loss.backward()
        opt.step()
    taus = {}
    for name, d in (("fresh", fresh), ("trained", trained)):
        taus[name] = np.mean([speculative_generate(target, d.eval(), [3, int(t)],
                                                   tree=TreeConfig(3, 2, 6),
                                                   max_new_tokens=12).tau for t in range(3, 6)])
    assert taus["trained"] > taus["fresh"] + 0.2


def test_tree_sampling_verification_samples_the_target():
    """Recursive rejection with point-mass children: the first emitted token is distributed as
    the target's root distribution, the second (after an accepted child) as that child's."""
    gen = torch.Generator().manual_seed(0)
    V = 5
    root = torch.randn(V, generator=gen) * 1.5
    nodes = torch.randn(4, V, generator=gen) * 1.5
    tokens, parents = [1, 3, 0, 2], [-1, -1, 0, 0]       # two root children, two grandchildren
    T = 0.8
    n = 6000
    first = np.zeros(V)
    second = np.zeros(V)
    for _ in range(n):
        acc, bonus = verify_tree_sample(tokens, parents, root, nodes, T, gen)
        seq = [tokens[j] for j in acc] + [bonus]
        first[seq[0]] += 1
        if seq[0] == 1:
            second[seq[1]] += 1
    p1 = torch.softmax(root.double() / T, -1).numpy()
    p2 = torch.softmax(nodes[0].double() / T, -1).numpy()
    assert chisquare(first, p1 * n).pvalue > 1e-3
    assert chisquare(second, p2 * second.sum()).pvalue > 1e-3


def _exact_joint(target, prompt, steps, T, V):
    probs = {}

    def rec(seq, p):
        if len(seq) == len(prompt) + steps:
            probs[tuple(seq[len(prompt):])] = p
            return
        with torch.no_grad():
            q = torch.softmax(target(torch.tensor([seq])).logits[0, -1].double() / T, -1)
        for t in range(V):
            rec(seq + [t], p * float(q[t]))

    rec(list(prompt), 1.0)
    return probs


@pytest.mark.parametrize("method", ["tree", "chain"])
def test_speculative_sampling_output_is_the_targets_distribution(method):
    """χ² of the first three generated tokens (tiny vocabulary) against the exact joint."""
    V = 3
    target = _target(vocab=V, init=0.5, seed=5, layers=1)
    draft = EagleDraft(target, hidden_size=8, num_heads=2, seed=3).eval()
    prompt, T, n = [1, 2], 1.0, 800
    exact = _exact_joint(target, prompt, 3, T, V)
    gen = torch.Generator().manual_seed(1)
    counts = dict.fromkeys(exact, 0)
    for _ in range(n):
        if method == "tree":
            out = speculative_generate(target, draft, prompt, tree=TreeConfig(2, 2, 4),
                                       max_new_tokens=3, temperature=T, generator=gen)
        else:
            out = chain_generate(target, draft, prompt, num_draft=2, max_new_tokens=3,
                                 temperature=T, generator=gen)
        counts[tuple(out.tokens)] += 1
    keys = sorted(exact, key=exact.get)
    obs, exp, o_small, e_small = [], [], 0, 0.0
    for key in keys:               # pool the cells expected below 5 into one
        e = exact[key] * n
        if e < 5:
            o_small += counts[key]
            e_small += e
        else:
            obs.append(counts[key])
            exp.append(e)
    obs.append(o_small)
    exp.append(e_small)
    assert math.isclose(sum(exp), n, rel_tol=1e-9)
    assert chisquare(obs, exp).pvalue > 1e-3


def test_bad_inputs_name_the_argument(models):
    target, draft = models
    with pytest.raises(ValueError, match="total_tokens"):
        TreeConfig(depth=2, top_k=2, total_tokens=7)
    with pytest.raises(ValueError, match="hidden_size"):
        EagleDraft(target, hidden_size=10, num_heads=4)
    with pytest.raises(ValueError, match="max_new_tokens"):
        speculative_generate(target, draft, [1, 2], max_new_tokens=0)
    with pytest.raises(ValueError, match="tree"):
        speculative_generate(target, draft, [1, 2], tree=(5, 4, 16))
    s = DraftSession(draft, torch.zeros(1, 4, 32), torch.ones(1, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="anchor"):
        s.extend(torch.tensor([[4]]), torch.tensor([[-1]]), torch.tensor([[3]]))
    with pytest.raises(ValueError, match="parent"):
        s.extend(torch.tensor([[1]]), torch.tensor([[0]]), torch.tensor([[3]]))


@pytest.mark.parametrize("arch", ["qwen2", "gpt2"])
def test_any_hugging_face_causal_target(arch):
    """The draft, the tree mask and lossless decoding work for other architectures (grouped
    KV heads; learned absolute positions)."""
    from transformers import GPT2Config, GPT2LMHeadModel, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    if arch == "qwen2":
        target = Qwen2ForCausalLM(Qwen2Config(
            vocab_size=12, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64))
    else:
        target = GPT2LMHeadModel(GPT2Config(vocab_size=12, n_embd=32, n_layer=2, n_head=2,
                                            n_positions=64, initializer_range=0.3,
                                            bos_token_id=1, eos_token_id=2))
    target.eval()
    draft = EagleDraft(target, hidden_size=16, num_heads=2)
    for s in range(2):
        prompt = torch.randint(3, 12, (4,), generator=torch.Generator().manual_seed(s))
        out = speculative_generate(target, draft, prompt, tree=TreeConfig(3, 2, 6),
                                   max_new_tokens=12)
        assert out.tokens == target_greedy(target, prompt, 12)
    ids = torch.randint(3, 12, (1, 8), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        hid = target(ids, output_hidden_states=True).hidden_states[-1]
        t = build_trees(DraftSession(draft, hid[:, :7], ids[:, 1:]), torch.tensor([[3]]),
                        TreeConfig(2, 2, 4))
        _, nodes = target_tree_logits(target, ids, t)
        for j in range(4):
            path, k = [], j
            while k >= 0:
                path.append(int(t.tokens[0, 0, k]))
                k = int(t.parents[0, 0, k])
            alone = target(torch.tensor([ids[0, :5].tolist() + path[::-1]])).logits[0, -1]
            torch.testing.assert_close(nodes[0, 0, j], alone, atol=1e-5, rtol=1e-5)
