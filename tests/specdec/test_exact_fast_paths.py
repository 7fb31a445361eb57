"""The speed paths of the draft and the tree builder compute exactly what the plain paths do:
the draft's direct body call against ``LlamaModel.forward`` (bit for bit, values and
gradients), the level-by-level ancestor matrix against a node-by-node walk, the draft's greedy
chain against EAGLE-2 replayed path by path, and inference-mode decoding against decoding with
autograd merely disabled."""

from __future__ import annotations

import copy

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.specdec import DraftSession, EagleDraft, TreeConfig, build_trees, token_loss
from optzoo.specdec.tree import _decode, speculative_generate, tree_ancestors


def _target(vocab=12, seed=0):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=vocab, hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                      initializer_range=0.3, max_position_embeddings=128)
    torch.manual_seed(seed)
    return LlamaForCausalLM(cfg).eval()


@pytest.fixture(scope="module")
def models():
    target = _target()
    draft = EagleDraft(target, hidden_size=16, num_heads=2, seed=1)
    opt = torch.optim.Adam([p for p in draft.parameters() if p.requires_grad], lr=1e-2)
    gen = torch.Generator().manual_seed(0)
    for _ in range(10):
        loss = token_loss(draft, target, torch.randint(3, 12, (4, 16), generator=gen),
                          ttt_steps=1)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return target, draft.eval()


def _slow_body(draft):
    """A draft whose ``run_body`` always takes ``LlamaModel.forward``."""
    slow = copy.deepcopy(draft)
    fast_run = slow.run_body
    slow.run_body = lambda z, mask, pos, cache=None, direct=True: fast_run(
        z, mask, pos, cache, direct=False)
    return slow


def test_direct_body_equals_llama_model_forward_bit_for_bit(models):
    target, draft = models
    draft = copy.deepcopy(draft).train()
    slow = _slow_body(draft)
    ids = torch.randint(3, 12, (3, 14), generator=torch.Generator().manual_seed(2))
    # the training path: prefix, training-time-test nodes, a backward pass
    grads = []
    for d in (draft, slow):
        d.zero_grad(set_to_none=True)
        loss = token_loss(d, target, ids, ttt_steps=2)
        loss.backward()
        grads.append((loss.detach(), [p.grad.clone() for p in d.parameters()
                                      if p.requires_grad]))
    assert torch.equal(grads[0][0], grads[1][0])
    assert all(torch.equal(a, b) for a, b in zip(grads[0][1], grads[1][1], strict=True))
    # the decoding path: a KV-cached session extended into a tree
    with torch.no_grad():
        hid = target(ids, output_hidden_states=True).hidden_states[-1][:, :13]
        t = [build_trees(DraftSession(d.eval(), hid, ids[:, 1:]),
                         torch.tensor([[4, 9]] * 3), TreeConfig(4, 3, 12)) for d in (draft, slow)]
    for f in ("tokens", "parents", "depth", "scores", "greedy_nodes"):
        assert torch.equal(getattr(t[0], f), getattr(t[1], f)), f


def _ancestors_slow(parents: list[int]) -> list[list[bool]]:
    g = len(parents)
    out = [[False] * g for _ in range(g)]
    for j in range(g):
        n = j
        while n >= 0:
            out[j][n] = True
            n = parents[n]
    return out


@settings(max_examples=25, deadline=None)
@given(data=st.data(), g=st.integers(1, 12), batch=st.integers(1, 3))
def test_tree_ancestors_equals_a_node_by_node_walk(data, g, batch):
    rows = [[data.draw(st.integers(-1, j - 1)) for j in range(g)] for _ in range(batch)]
    got = tree_ancestors(torch.tensor(rows))
    assert got.dtype == torch.bool and got.shape == (batch, g, g)
    for b, row in enumerate(rows):
        assert got[b].tolist() == _ancestors_slow(row)


def test_tree_ancestors_rejects_a_parent_after_its_child():
    with pytest.raises(ValueError, match="parents"):
        tree_ancestors(torch.tensor([-1, 2, 0]))
    with pytest.raises(ValueError, match="parents"):
        tree_ancestors(torch.tensor([[-1, 0], [-1, 1]]))


def _greedy_slow(draft, hid, toks, anchor, cfg: TreeConfig):
    """The draft's greedy chain and EAGLE-2's frontiers, replayed path by path: a node has its
    top-1 child in the pool only if it was expanded (in its layer's frontier)."""

    def logq(path):
        s = DraftSession(draft, hid[:, :anchor + 1], toks[:, :anchor + 1])
        lg, par = s.prefix_logits[0, anchor], -1
        for t in path:
            lg = s.extend(torch.tensor([[anchor]]), torch.tensor([[par]]),
                          torch.tensor([[t]]))[0, 0]
            par = s.num_nodes - 1
        return torch.log_softmax(lg.float(), -1)

    k = cfg.top_k
    top = logq([]).topk(k)
    frontier = [(float(v), [int(t)]) for v, t in zip(top.values, top.indices, strict=True)]
    frontiers = [[p for _, p in frontier]]
    for _ in range(2, cfg.depth):
        cands = []
        for sc, path in frontier:
            top = logq(path).topk(k)
            cands += [(sc + float(v), path + [int(t)]) for v, t in zip(top.values, top.indices,
                                                                      strict=True)]
        frontier = sorted(cands, key=lambda c: -c[0])[:k]
        frontiers.append([p for _, p in frontier])
    chain = [[int(logq([]).argmax())]]
    for d in range(1, cfg.depth):
        if chain[-1] not in frontiers[d - 1]:
            break
        chain.append(chain[-1] + [int(logq(chain[-1]).argmax())])
    return chain


@settings(max_examples=4, deadline=None)
@given(depth=st.integers(2, 4), k=st.integers(1, 3), frac=st.floats(0.2, 1.0),
       anchor=st.integers(1, 6))
def test_greedy_chain_matches_eagle2_replayed(models, depth, k, frac, anchor):
    target, draft = models
    pool = k + (depth - 1) * k * k
    cfg = TreeConfig(depth, k, max(1, int(frac * pool)))
    ids = torch.randint(3, 12, (1, 9), generator=torch.Generator().manual_seed(anchor))
    with torch.no_grad():
        hid = target(ids, output_hidden_states=True).hidden_states[-1][:, :8]
        t = build_trees(DraftSession(draft, hid, ids[:, 1:]), torch.tensor([[anchor]]), cfg)
        par = t.parents[0, 0].tolist()
        local = {}
        for j in range(cfg.total_tokens):
            path, n = [], j
            while n >= 0:
                path.append(int(t.tokens[0, 0, n]))
                n = par[n]
            local[tuple(path[::-1])] = j
        want, alive = [], True
        chain = _greedy_slow(draft, hid, ids[:, 1:], anchor, cfg)
        for d in range(depth):
            node = local.get(tuple(chain[d])) if alive and d < len(chain) else None
            want.append(-1 if node is None else node)
            alive = node is not None
    assert t.greedy_nodes[0, 0].tolist() == want


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_inference_mode_decoding_equals_no_grad_decoding(models, temperature):
    target, draft = models
    tree = TreeConfig(3, 2, 6)
    for s in range(3):
        prompt = torch.randint(3, 12, (5,), generator=torch.Generator().manual_seed(s))
        outs = []
        for decode in (_decode, torch.no_grad()(_decode.__wrapped__)):
            gen = torch.Generator().manual_seed(s)

            def propose(sess, anchor):
                tr = build_trees(sess, torch.tensor([[anchor]]), tree)
                return (tr.tokens[0, 0].tolist(), tr.parents[0, 0].tolist(),
                        tr.depth[0, 0].tolist(), {"greedy": tr.greedy_nodes[0, 0].tolist(),
                                                  "pruned": bool(tr.greedy_pruned[0, 0])})

            def verify(tokens, parents, root, nodes, extra, gen=gen):
                from optzoo.specdec.tree import verify_tree_greedy, verify_tree_sample

                if temperature == 0:
                    return verify_tree_greedy(tokens, parents, root, nodes)
                return verify_tree_sample(tokens, parents, root, nodes, temperature, gen)

            r = decode(target, draft, prompt, 16, temperature, gen, None, propose, verify)
            outs.append((r.tokens, r.accept_lengths, r.greedy_pruned, r.overlap))
        assert outs[0] == outs[1]
        assert outs[0][0] == speculative_generate(
            target, draft, prompt, tree=tree, max_new_tokens=16, temperature=temperature,
            generator=torch.Generator().manual_seed(s)).tokens
