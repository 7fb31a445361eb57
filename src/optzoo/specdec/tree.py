"""EAGLE-2 dynamic draft trees, tree-attention verification, and tree / chain speculative decoding.

Drafting (EAGLE-2, Li et al., EMNLP 2024, "dynamic draft trees"; :func:`build_trees`): from the
root, take the draft's top-``k`` tokens; then for ``depth − 1`` layers, feed the ``k`` frontier
nodes through the draft, take each one's top-``k`` children (``k²`` candidates) scored by the
*global* value — the product of draft probabilities along the path (a sum of log-probabilities)
— and keep the ``k`` best of the layer as the next frontier.  Every candidate enters the pool;
at the end the ``total_tokens`` (``g``) best nodes of the pool by global score form the tree (a
parent scores at least as much as its child, and ties go to the shallower, earlier node, so a
kept node's ancestors are kept).  This is EAGLE-2's ``topK_genrate``.

Verification: the target runs once over the last committed token(s) and all tree nodes with a
tree attention mask (a node attends to the committed context and to its ancestors; siblings never
see each other; position id = context length + depth − 1), so each node's logits are the target's
prediction after that node's path (:func:`target_tree_logits` for many trees at once in
training, a KV-cached variant in decoding).

* Greedy (T = 0): walk from the root, moving to the child whose token is the target's argmax;
  the target's argmax at the last accepted node is the bonus token.  The output is exactly the
  target's greedy continuation (lossless).
* Sampling (T > 0), :func:`verify_tree_sample`: the children of a node are deterministic (top-k),
  so each child is its own point-mass proposal and recursive rejection sampling (SpecInfer,
  Miao et al. 2024) accepts child ``c`` with probability ``p(c)`` under the current residual,
  then removes ``c`` and renormalises; if every child is rejected the bonus token is drawn from
  the residual.  This samples exactly from the target (the χ² tests check it), and the
  probability of reaching a node is the product of target probabilities along its path — the
  quantity GTO's sample-free reward sums (:func:`optzoo.specdec.gto.draft_tree_reward`).

Chain speculative decoding (the baseline, Leviathan et al. 2023; :func:`chain_generate`):
``num_draft`` tokens drafted one after another (argmax at T = 0, sampled from the draft's
tempered distribution q at T > 0), accepted with probability ``min(1, p/q)``, the first rejection
resampled from ``norm(max(p − q, 0))``.

Acceptance length ``τ``: tokens committed per target forward of a drafting cycle, the bonus token
counted (EAGLE's convention), so autoregressive decoding has ``τ = 1``.

Example:
    >>> import torch
    >>> from optzoo.llm import tiny_llama
    >>> from optzoo.specdec import EagleDraft
    >>> target = tiny_llama(20, hidden_size=32, intermediate_size=64, num_layers=1, num_heads=2)
    >>> draft = EagleDraft(target, hidden_size=16, num_heads=2)
    >>> prompt = torch.tensor([1, 5, 6, 7])
    >>> out = speculative_generate(target, draft, prompt, tree=TreeConfig(3, 2, 5),
    ...                            max_new_tokens=8)
    >>> out.tokens == target_greedy(target, prompt, 8)
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch.nn import functional as F

from optzoo.checks import check_int, check_real
from optzoo.specdec.eagle import DraftSession, EagleDraft

__all__ = ["DecodeResult", "TreeConfig", "Trees", "build_trees", "chain_generate",
           "greedy_accepted", "speculative_generate", "target_greedy", "target_tree_logits",
           "tree_ancestors", "verify_tree_greedy", "verify_tree_sample"]


@dataclass(frozen=True)
class TreeConfig:
    """Shape of an EAGLE-2 dynamic tree.

    Args:
        depth: layers of the tree (longest draft path).
        top_k: children per expanded node and frontier width.
        total_tokens: nodes kept after the global re-ranking (``g``), at most
            ``top_k + (depth − 1)·top_k²``.
    """

    depth: int = 5
    top_k: int = 4
    total_tokens: int = 16

    def __post_init__(self):
        check_int("depth", self.depth, low=1)
        check_int("top_k", self.top_k, low=1)
        check_int("total_tokens", self.total_tokens, low=1, high=self.pool_size)

    @property
    def pool_size(self) -> int:
        return self.top_k + (self.depth - 1) * self.top_k ** 2


@dataclass
class Trees:
    """``B x A`` draft trees of ``g`` nodes each (nodes in pool order: a parent precedes its
    children).

    Attributes:
        tokens, parents, depth: ``B x A x g`` long tensors (``parents`` local, −1 = root).
        scores: ``B x A x g`` global scores (sum of draft log-probabilities along the path).
        anchors: ``B x A`` the draft prefix entry each tree continues.
        greedy_nodes: ``B x A x depth`` local index of the draft's greedy (top-1) chain at each
            depth, −1 where that node is not in the tree (pruned).
    """

    tokens: torch.Tensor
    parents: torch.Tensor
    depth: torch.Tensor
    scores: torch.Tensor
    anchors: torch.Tensor
    greedy_nodes: torch.Tensor

    @property
    def greedy_pruned(self) -> torch.Tensor:
        """``B x A`` whether the draft's greedy chain was cut shorter than the tree: the tree
        keeps a node at some depth where the greedy chain's node is missing."""
        kept = (self.greedy_nodes >= 0).long().cumprod(-1).sum(-1)
        return kept < self.depth.max(-1).values


def _take(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """``x[..., idx]`` along the last dimension, batched over the leading ones."""
    return torch.gather(x, -1, idx)


@torch.no_grad()
def build_trees(session: DraftSession, anchors: torch.Tensor, config: TreeConfig) -> Trees:
    """EAGLE-2 trees from the draft prefix entries ``anchors`` (``B x A``) of ``session``.

    The session is extended by the expanded (frontier) nodes, ``(depth − 1)·k`` per tree.
    """
    if anchors.dim() != 2 or anchors.shape[0] != session.B:
        raise ValueError(f"anchors: expected {session.B} x A, got {tuple(anchors.shape)}")
    k, D, g = config.top_k, config.depth, config.total_tokens
    B, A = anchors.shape
    dev = anchors.device
    vocab = session.prefix_logits.shape[-1]
    if k > vocab:
        raise ValueError(f"top_k: expected at most the vocabulary size {vocab}, got {k}")
    root = torch.gather(session.prefix_logits, 1, anchors[..., None].expand(-1, -1, vocab))
    lq = F.log_softmax(root.float(), -1)
    sc, tok = lq.topk(k, dim=-1)                                   # B x A x k
    pool_tok, pool_sc = [tok], [sc]
    pool_par = [torch.full_like(tok, -1)]
    front_pool = torch.arange(k, device=dev).expand(B, A, -1)     # pool index of the frontier
    front_tok, front_sc = tok, sc
    front_sess_par = torch.full_like(tok, -1)                     # session index of its parent
    offset = k
    fronts = [front_pool]   # frontier of every fed layer (for the greedy chain)
    # loop invariants hoisted: a decoding cycle builds one small tree, so the fixed cost of
    # each tensor operation, not its size, sets the time
    layer_anchors = anchors.repeat_interleave(k, dim=1)
    layer_idx = torch.arange(A * k, device=dev).reshape(1, A, k)
    for d in range(2, D + 1):
        base = session.num_nodes
        logits = session.extend(layer_anchors, front_sess_par.reshape(B, A * k),
                                front_tok.reshape(B, A * k))
        clq, ctok = F.log_softmax(logits.float(), -1).topk(k, dim=-1)
        ctok = ctok.reshape(B, A, k * k)
        cu = (front_sc[..., None] + clq.reshape(B, A, k, k)).reshape(B, A, k * k)
        pool_tok.append(ctok)
        pool_sc.append(cu)
        pool_par.append(front_pool.repeat_interleave(k, dim=-1))
        if d < D:
            best_sc, best = cu.topk(k, dim=-1)
            front_pool = offset + best
            front_tok = _take(ctok, best)
            front_sc = best_sc
            front_sess_par = _take((layer_idx + base).expand(B, -1, -1), best // k)
            fronts.append(front_pool)
        offset += k * k
    ptok, psc, ppar = torch.cat(pool_tok, -1), torch.cat(pool_sc, -1), torch.cat(pool_par, -1)
    pdep = torch.tensor([1] * k + [d for d in range(2, D + 1) for _ in range(k * k)],
                        device=dev).expand(B, A, -1)
    # global re-ranking: stable sort keeps pool (= depth) order among equal scores
    order = torch.sort(psc, dim=-1, descending=True, stable=True).indices[..., :g]
    keep = torch.sort(order, dim=-1).values                       # pool order: parents first
    local = torch.full_like(ptok, -1).scatter(-1, keep, torch.arange(g, device=dev).expand(
        B, A, -1).contiguous())
    par_pool = _take(ppar, keep)
    parents = torch.where(par_pool >= 0, _take(local, par_pool.clamp(min=0)), -1)
    if bool(((par_pool >= 0) & (parents < 0)).any()):
        raise RuntimeError("build_trees: a kept node lost its parent (ranking bug)")
    return Trees(_take(ptok, keep), parents, _take(pdep, keep), _take(psc, keep), anchors,
                 _greedy_chain(local, fronts, k, D).to(dev))


def _greedy_chain(local: torch.Tensor, fronts: list[torch.Tensor], k: int,
                  D: int) -> torch.Tensor:
    """``B x A x D`` local index of the draft's greedy chain in each tree (−1 once cut): the
    top-1 of the root, then the top-1 child of each node, which exists in the pool only while
    the node was expanded (in its layer's frontier; its top-1 child is then the first of its
    ``k`` children in the pool).  Integer bookkeeping of a few entries, done in NumPy, whose
    per-operation cost is a fraction of torch's."""
    loc = local.cpu().numpy()
    fr = [f.cpu().numpy() for f in fronts]
    B, A = loc.shape[:2]
    greedy = np.full((B, A, D), -1, dtype=np.int64)
    g_pool = np.zeros((B, A, 1), dtype=np.int64)
    alive = np.ones((B, A), dtype=bool)
    off = k
    for d in range(1, D + 1):
        here = np.take_along_axis(loc, g_pool, -1)[..., 0]
        greedy[..., d - 1] = np.where(alive, here, -1)
        alive &= here >= 0
        if d == D:
            break
        hit = fr[d - 1] == g_pool                                 # B x A x k
        alive &= hit.any(-1)
        g_pool = (off + hit.argmax(-1) * k)[..., None]
        off += k * k
    return torch.from_numpy(greedy)


def tree_ancestors(parents: torch.Tensor) -> torch.Tensor:
    """``... x g x g`` boolean: ``[..., j, i]`` is True when node ``i`` is ``j`` or an ancestor
    of ``j`` (``parents``: ``... x g``, parents before children, −1 = root).

    Walks all nodes up at once, one tree level per step (depth steps, not ``g`` node steps).
    """
    g = parents.shape[-1]
    idx = torch.arange(g, device=parents.device)
    if bool((parents >= idx).any()):
        raise ValueError("parents: every parent must precede its child")
    anc = torch.eye(g, dtype=torch.bool, device=parents.device).expand(
        *parents.shape, g).clone()
    cur = parents
    while True:
        up = cur >= 0
        if not bool(up.any()):
            return anc
        anc |= cur[..., None] == idx                  # cur < 0 matches no column
        cur = torch.where(up, torch.gather(parents, -1, cur.clamp(min=0)), cur)


def _neg(dtype) -> float:
    return torch.finfo(dtype).min


@torch.no_grad()
def target_tree_logits(target, ids: torch.Tensor, trees: Trees):
    """One target forward over the sequences ``ids`` (``B x n``) and every tree node.

    Tree ``(b, a)`` continues the prefix ``ids[b, :anchor + 2]`` (its draft anchor is prefix
    entry ``anchor``): node ``j`` at depth ``k`` is the token at position ``anchor + 1 + k``.

    Returns:
        ``(root, nodes)``: ``B x A x V`` the target's logits at position ``anchor + 1`` (which
        judge the depth-1 nodes) and ``B x A x g x V`` the logits after each node.
    """
    B, n = ids.shape
    _, A, g = trees.tokens.shape
    dev = ids.device
    last = trees.anchors + 1                                       # B x A prefix end
    if bool((last >= n).any()):
        raise ValueError(f"trees: an anchor + 1 lies outside the {n} positions of ids")
    dt = next(target.parameters()).dtype
    anc = tree_ancestors(trees.parents)                            # B x A x g x g
    cols = torch.arange(n, device=dev)
    allow_prefix = torch.cat([
        torch.ones(n, n, dtype=torch.bool, device=dev).tril().expand(B, -1, -1),
        torch.zeros(B, n, A * g, dtype=torch.bool, device=dev)], -1)
    node_prefix = (cols[None, None, None, :] <= last[..., None, None]).expand(-1, -1, g, -1)
    block = torch.zeros(B, A, g, A, g, dtype=torch.bool, device=dev)
    ar = torch.arange(A, device=dev)
    block[:, ar, :, ar, :] = anc.permute(1, 0, 2, 3)
    node_rows = torch.cat([node_prefix, block.reshape(B, A, g, A * g)], -1).reshape(
        B, A * g, n + A * g)
    allow = torch.cat([allow_prefix, node_rows], 1)
    mask = torch.where(allow, torch.zeros((), dtype=dt, device=dev),
                       torch.full((), _neg(dt), dtype=dt, device=dev))[:, None]
    pos = torch.cat([cols.expand(B, -1), (last[..., None] + trees.depth).reshape(B, A * g)], 1)
    inp = torch.cat([ids, trees.tokens.reshape(B, A * g)], 1)
    logits = target(input_ids=inp, attention_mask=mask, position_ids=pos).logits
    V = logits.shape[-1]
    root = torch.gather(logits[:, :n], 1, last[..., None].expand(-1, -1, V))
    return root, logits[:, n:].reshape(B, A, g, V)


def node_target_logits(root: torch.Tensor, nodes: torch.Tensor,
                       parents: torch.Tensor) -> torch.Tensor:
    """The target logits that judge each node's token: the root's for depth-1 nodes, the
    parent's otherwise (``... x g x V``)."""
    V = nodes.shape[-1]
    par = torch.gather(nodes, -2, parents.clamp(min=0)[..., None].expand(*parents.shape, V))
    return torch.where((parents < 0)[..., None], root[..., None, :].expand_as(nodes), par)


def greedy_accepted(trees: Trees, root: torch.Tensor, nodes: torch.Tensor):
    """Greedy (T = 0) verification of many trees at once.

    Returns:
        ``(accepted, deepest)``: ``B x A x g`` whether each node is on the accepted path, and
        ``B x A`` the local index of the deepest accepted node (−1: nothing accepted).
    """
    judge = node_target_logits(root, nodes, trees.parents).argmax(-1)
    match = judge == trees.tokens
    acc = torch.zeros_like(match)
    g = match.shape[-1]
    for j in range(g):
        p = trees.parents[..., j]
        up = torch.where(p >= 0, torch.gather(acc, -1, p.clamp(min=0)[..., None])[..., 0],
                         torch.ones_like(match[..., j]))
        acc[..., j] = match[..., j] & up
    score = torch.where(acc, trees.depth, torch.zeros_like(trees.depth))
    deepest = torch.where(acc.any(-1), score.argmax(-1), torch.full_like(score[..., 0], -1))
    return acc, deepest


def _path(parents: Sequence[int], node: int) -> list[int]:
    out = []
    while node >= 0:
        out.append(node)
        node = parents[node]
    return out[::-1]


def verify_tree_greedy(tokens: Sequence[int], parents: Sequence[int], root_logits: torch.Tensor,
                       node_logits: torch.Tensor) -> tuple[list[int], int]:
    """Greedy verification of one tree: ``(accepted local node indices, bonus token)``."""
    children: dict[int, dict[int, int]] = {}
    for j, (t, p) in enumerate(zip(tokens, parents, strict=True)):
        children.setdefault(int(p), {})[int(t)] = j
    cur, acc = -1, []
    while True:
        best = int((root_logits if cur < 0 else node_logits[cur]).argmax())
        nxt = children.get(cur, {}).get(best)
        if nxt is None:
            return acc, best
        acc.append(nxt)
        cur = nxt


def verify_tree_sample(tokens: Sequence[int], parents: Sequence[int], root_logits: torch.Tensor,
                       node_logits: torch.Tensor, temperature: float,
                       generator: torch.Generator | None = None) -> tuple[list[int], int]:
    """Tree speculative sampling of one tree at ``temperature > 0`` (recursive rejection
    sampling with each deterministic child as a point-mass proposal, children tried in tree
    order): ``(accepted local node indices, bonus token)``; samples exactly from the target."""
    check_real("temperature", temperature, low=0, low_open=True)
    children: dict[int, list[int]] = {}
    for j, p in enumerate(parents):
        children.setdefault(int(p), []).append(j)
    cur, acc = -1, []
    while True:
        logits = root_logits if cur < 0 else node_logits[cur]
        p = F.softmax(logits.double() / temperature, -1)
        moved = False
        for c in children.get(cur, []):
            t = int(tokens[c])
            u = float(torch.rand((), generator=generator, dtype=torch.float64))
            if u < float(p[t]):               # min(1, p(t) / 1): point-mass proposal
                acc.append(c)
                cur, moved = c, True
                break
            p[t] = 0.0                        # residual norm(max(p − δ_t, 0))
            s = p.sum()
            if s <= 0:
                break
            p = p / s
        if not moved:
            bonus = int(torch.multinomial(p.float(), 1, generator=generator))
            return acc, bonus


@dataclass
class DecodeResult:
    """Output of a speculative decoding run.

    Attributes:
        tokens: the new tokens (prompt excluded).
        accept_lengths: tokens committed by each drafting cycle (bonus counted).
        target_forwards: target forward passes (prefill included).
        greedy_pruned: per cycle, whether the draft's greedy chain was pruned from the tree.
        overlap: per cycle with at least one accepted draft token, the fraction of the accepted
            path that coincides with the draft's greedy chain (common prefix / accepted).
    """

    tokens: list[int]
    accept_lengths: list[int] = field(default_factory=list)
    target_forwards: int = 0
    greedy_pruned: list[bool] = field(default_factory=list)
    overlap: list[float] = field(default_factory=list)

    @property
    def tau(self) -> float:
        """Mean acceptance length (bonus counted)."""
        return sum(self.accept_lengths) / max(1, len(self.accept_lengths))


def _crop(cache, keep: int) -> None:
    """Keep the first ``keep`` positions of a ``DynamicCache`` (across transformers versions:
    5.x takes a negative count to remove, 4.x the length to keep)."""
    drop = cache.get_seq_length() - keep
    if drop > 0:
        try:
            cache.crop(-drop)
        except (ValueError, TypeError):
            cache.crop(keep)


def _as_prompt(input_ids) -> list[int]:
    ids = input_ids.tolist() if isinstance(input_ids, torch.Tensor) else list(input_ids)
    if isinstance(ids[0] if ids else 0, list):
        if len(ids) != 1:
            raise ValueError("input_ids: expected one prompt (1-D, or 1 x n)")
        ids = ids[0]
    if len(ids) < 1:
        raise ValueError("input_ids: expected at least one token")
    return [int(t) for t in ids]


def _choose(logits: torch.Tensor, temperature: float, generator) -> int:
    if temperature == 0:
        return int(logits.argmax())
    p = F.softmax(logits.double() / temperature, -1)
    return int(torch.multinomial(p.float(), 1, generator=generator))


# inference mode, not just no_grad: decoding returns plain lists, and skipping autograd's
# per-tensor bookkeeping cuts a sixth of the per-operation cost of these tiny steps
@torch.inference_mode()
def _decode(target, draft: EagleDraft, prompt, max_new_tokens: int, temperature: float,
            generator, eos_token_id, propose, verify) -> DecodeResult:
    from transformers import DynamicCache

    check_int("max_new_tokens", max_new_tokens, low=1)
    check_real("temperature", temperature, low=0)
    ids = _as_prompt(prompt)
    dev = draft.embed_weight.device
    dt = next(target.parameters()).dtype
    zero, blocked = (torch.full((), v, dtype=dt, device=dev) for v in (0.0, _neg(dt)))
    cache = DynamicCache()
    out = target(input_ids=torch.tensor([ids], device=dev), past_key_values=cache,
                 use_cache=True, output_hidden_states=True)
    hid = out.hidden_states[-1][0]
    res = DecodeResult(tokens=[], target_forwards=1)
    first = _choose(out.logits[0, -1], temperature, generator)
    res.tokens.append(first)
    ids.append(first)
    pending = [first]
    past = len(ids) - 1
    while len(res.tokens) < max_new_tokens and (eos_token_id is None
                                                 or res.tokens[-1] != eos_token_id):
        L = len(ids)
        sess = DraftSession(draft, hid[None, :L - 1], torch.tensor([ids[1:L]], device=dev))
        tokens, parents, depth, extra = propose(sess, L - 2)
        g = len(tokens)
        q = len(pending)
        allow = torch.zeros(q + g, past + q + g, dtype=torch.bool, device=dev)
        allow[:, :past] = True
        allow[:q, past:past + q] = torch.ones(q, q, dtype=torch.bool, device=dev).tril()
        allow[q:, past:past + q] = True
        if g:
            allow[q:, past + q:] = tree_ancestors(torch.tensor(parents, device=dev))
        mask = torch.where(allow, zero, blocked)
        pos = torch.tensor([list(range(past, past + q)) + [L - 1 + d for d in depth]],
                           device=dev)
        vo = target(input_ids=torch.tensor([pending + list(tokens)], device=dev),
                    attention_mask=mask[None, None], position_ids=pos, past_key_values=cache,
                    use_cache=True, output_hidden_states=True)
        res.target_forwards += 1
        logits, vh = vo.logits[0], vo.hidden_states[-1][0]
        accepted, bonus = verify(tokens, parents, logits[q - 1], logits[q:], extra)
        _crop(cache, past + q)
        hid = torch.cat([hid[:past], vh[:q], vh[q + torch.tensor(accepted, dtype=torch.long,
                                                                   device=dev)]], 0)
        past += q
        new = [int(tokens[j]) for j in accepted] + [bonus]
        res.accept_lengths.append(len(new))
        greedy = extra.get("greedy")
        if greedy is not None:
            res.greedy_pruned.append(extra["pruned"])
            if accepted:
                common = 0
                for a, gnode in zip(accepted, greedy, strict=False):
                    if a != gnode:
                        break
                    common += 1
                res.overlap.append(common / len(accepted))
        if eos_token_id is not None and eos_token_id in new:
            new = new[:new.index(eos_token_id) + 1]
        new = new[:max_new_tokens - len(res.tokens)]
        res.tokens.extend(new)
        ids.extend(new)
        pending = new
    return res


def speculative_generate(target, draft: EagleDraft, input_ids, *, tree: TreeConfig | None = None,
                         max_new_tokens: int = 32, temperature: float = 0.0,
                         generator: torch.Generator | None = None,
                         eos_token_id: int | None = None) -> DecodeResult:
    """EAGLE-2 tree speculative decoding of one prompt.

    Args:
        target: the target causal LM (any ``transformers`` model that takes a 4-D additive
            ``attention_mask``, ``position_ids`` and a ``DynamicCache``).
        draft: its :class:`~optzoo.specdec.eagle.EagleDraft`.
        input_ids: the prompt (1-D, or ``1 x n``).
        tree: the tree shape (default :class:`TreeConfig`: depth 5, top-4, 16 nodes).
        max_new_tokens: tokens to generate (fewer if ``eos_token_id`` comes first).
        temperature: 0 = greedy verification (output = the target's greedy decoding); > 0 =
            tree speculative sampling (output distributed as the target's at that temperature).
        generator: torch RNG for sampling.
        eos_token_id: stop after this token (None: never stop early).
    """
    tree = TreeConfig() if tree is None else tree
    if not isinstance(tree, TreeConfig):
        raise ValueError(f"tree: expected a TreeConfig, got {type(tree).__name__}")

    def propose(sess, anchor):
        t = build_trees(sess, torch.tensor([[anchor]], device=sess.prefix_feats.device), tree)
        return (t.tokens[0, 0].tolist(), t.parents[0, 0].tolist(), t.depth[0, 0].tolist(),
                {"greedy": t.greedy_nodes[0, 0].tolist(),
                 "pruned": bool(t.greedy_pruned[0, 0])})

    def verify(tokens, parents, root, nodes, extra):
        if temperature == 0:
            return verify_tree_greedy(tokens, parents, root, nodes)
        return verify_tree_sample(tokens, parents, root, nodes, temperature, generator)

    return _decode(target, draft, input_ids, max_new_tokens, temperature, generator,
                   eos_token_id, propose, verify)


def chain_generate(target, draft: EagleDraft, input_ids, *, num_draft: int = 5,
                   max_new_tokens: int = 32, temperature: float = 0.0,
                   generator: torch.Generator | None = None,
                   eos_token_id: int | None = None) -> DecodeResult:
    """Chain (non-tree) speculative decoding with the EAGLE draft (Leviathan et al. 2023).

    ``num_draft`` tokens are drafted one by one (argmax at T = 0; sampled from the draft's
    distribution at ``temperature`` otherwise) and verified in one target forward: greedily at
    T = 0, else accepted with probability ``min(1, p/q)`` and the first rejection resampled
    from ``norm(max(p − q, 0))`` (all accepted: a bonus token from the target).
    """
    check_int("num_draft", num_draft, low=1)

    def propose(sess, anchor):
        dev = sess.prefix_feats.device
        logits = sess.prefix_logits[0, anchor]
        toks, qs = [], []
        parent = -1
        for j in range(num_draft):
            if temperature == 0:
                t = int(logits.argmax())
                qs.append(None)
            else:
                q = F.softmax(logits.double() / temperature, -1)
                t = int(torch.multinomial(q.float(), 1, generator=generator))
                qs.append(q)
            toks.append(t)
            if j + 1 < num_draft:
                logits = sess.extend(torch.tensor([[anchor]], device=dev),
                                     torch.tensor([[parent]], device=dev),
                                     torch.tensor([[t]], device=dev))[0, 0]
                parent = sess.num_nodes - 1
        return toks, list(range(-1, num_draft - 1)), list(range(1, num_draft + 1)), {"q": qs}

    def verify(tokens, parents, root, nodes, extra):
        if temperature == 0:
            return verify_tree_greedy(tokens, parents, root, nodes)
        acc = []
        for j, (t, q) in enumerate(zip(tokens, extra["q"], strict=True)):
            p = F.softmax((root if j == 0 else nodes[j - 1]).double() / temperature, -1)
            u = float(torch.rand((), generator=generator, dtype=torch.float64))
            if u < min(1.0, float(p[t]) / float(q[t])):
                acc.append(j)
                continue
            r = (p - q).clamp(min=0)
            r = r / r.sum() if float(r.sum()) > 0 else p
            return acc, int(torch.multinomial(r.float(), 1, generator=generator))
        p = F.softmax(nodes[len(tokens) - 1].double() / temperature, -1)
        return acc, int(torch.multinomial(p.float(), 1, generator=generator))

    return _decode(target, draft, input_ids, max_new_tokens, temperature, generator,
                   eos_token_id, propose, verify)


@torch.inference_mode()
def target_greedy(target, input_ids, max_new_tokens: int,
                  eos_token_id: int | None = None) -> list[int]:
    """The target's own greedy continuation (``transformers`` ``generate``, KV cache): the
    reference that lossless speculative decoding must reproduce token for token."""
    ids = torch.tensor([_as_prompt(input_ids)], device=next(target.parameters()).device)
    out = target.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False,
                          max_new_tokens=max_new_tokens, min_new_tokens=0,
                          eos_token_id=eos_token_id, pad_token_id=eos_token_id or 0)
    return out[0, ids.shape[1]:].tolist()
