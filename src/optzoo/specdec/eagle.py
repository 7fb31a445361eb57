"""An EAGLE-style draft model for any Hugging Face causal target, and its token-level training.

EAGLE (Li et al., ICML 2024; EAGLE-2 EMNLP 2024; EAGLE-3 2025) drafts at the *feature* level:
the draft's input at position ``i`` is the target's last hidden state ``h_i`` (the vector its LM
head reads, which predicts token ``x_{i+1}``) together with the embedding of the token
``x_{i+1}`` that was actually chosen, and the draft predicts ``x_{i+2}``.  Deeper draft tokens
reuse the draft's own output feature in place of the target's (the target's features of the
drafted tokens are not known yet).  :class:`EagleDraft` is that model:

* ``g_i = fc(h_i)`` maps the target feature (width ``H`` of the target) to the draft width ``d``;
* ``z_i = proj([E(x_{i+1}); g_i])`` with ``E`` a frozen copy of the target's input embedding;
* one Llama decoder layer of width ``d`` (``transformers.LlamaModel`` with one layer, rotary
  positions, final RMSNorm) gives the draft feature ``f_i``; its own head ``W f_i`` gives the
  logits (EAGLE-3 trains a separate head; EAGLE-1/2 reuse the target's).

The draft sees a *tree*: :class:`DraftSession` runs it over a prefix once (KV cache) and then
extends it by nodes, each with an ``anchor`` (the prefix entry its chain starts from) and a
``parent`` (an earlier node, or ``-1`` for the anchor).  A node's input feature is its parent's
output feature, its position id is ``anchor + depth``, and it attends to the prefix entries
``<= anchor`` and to its ancestors only (the tree attention mask): siblings never see each other.
The same session serves EAGLE-2 tree drafting (:mod:`optzoo.specdec.tree`), EAGLE-3's
training-time test (:func:`token_loss`) and GTO's path log-likelihoods
(:mod:`optzoo.specdec.gto`), so training and decoding run exactly the same computation.

Token-level objective (EAGLE-3, "training-time test"): step 0 drafts every position from the
target's features; step ``s`` (1 … ``ttt_steps``) feeds back the draft's own step ``s − 1``
feature with the ground-truth token, as in decoding.  Each step's loss is the cross-entropy to
the target's next-token distribution, weighted ``0.8^s`` (EAGLE-3's code).  Choice: the position
id of step ``s`` at position ``i`` is ``i + s`` (what decoding uses; EAGLE-3's code keeps ``i``).

Example:
    >>> import torch
    >>> from optzoo.llm import tiny_llama
    >>> target = tiny_llama(20, hidden_size=32, intermediate_size=64, num_layers=1, num_heads=2)
    >>> draft = EagleDraft(target, hidden_size=16, num_heads=2)
    >>> ids = torch.randint(4, 20, (2, 10))
    >>> loss = token_loss(draft, target, ids, ttt_steps=2)
    >>> loss.backward()
    >>> bool(torch.isfinite(loss))
    True
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from optzoo.checks import check_int, check_real

__all__ = ["DraftSession", "EagleDraft", "target_features", "token_loss"]


def _neg(dtype) -> float:
    return torch.finfo(dtype).min


class EagleDraft(nn.Module):
    """EAGLE draft head for ``target`` (a ``transformers`` causal LM; only its config and input
    embedding are read, and the embedding is copied, frozen).

    Args:
        target: the causal LM whose features the draft reads.
        hidden_size: draft width ``d``.
        num_heads: attention heads of the draft layer (divides ``hidden_size``).
        intermediate_size: MLP width of the draft layer (default ``4 * hidden_size``).
        seed: seed of the initialisation (a forked RNG: the global one is untouched).
    """

    def __init__(self, target, *, hidden_size: int = 128, num_heads: int = 4,
                 intermediate_size: int | None = None, seed: int = 0):
        super().__init__()
        from transformers import LlamaConfig, LlamaModel

        check_int("hidden_size", hidden_size, low=1)
        check_int("num_heads", num_heads, low=1)
        if hidden_size % num_heads:
            raise ValueError(f"hidden_size: expected a multiple of num_heads={num_heads}, got "
                             f"{hidden_size}")
        cfg = getattr(target, "config", None)
        emb = target.get_input_embeddings() if hasattr(target, "get_input_embeddings") else None
        if cfg is None or emb is None:
            raise ValueError("target: expected a transformers causal LM (config and input "
                             "embedding)")
        t_hidden = int(cfg.hidden_size)
        self.vocab_size = int(emb.weight.shape[0])
        self.target_hidden_size = t_hidden
        inter = 4 * hidden_size if intermediate_size is None else intermediate_size
        check_int("intermediate_size", inter, low=1)
        body_cfg = LlamaConfig(vocab_size=1, hidden_size=hidden_size, intermediate_size=inter,
                               num_hidden_layers=1, num_attention_heads=num_heads,
                               num_key_value_heads=num_heads,
                               max_position_embeddings=int(getattr(
                                   cfg, "max_position_embeddings", 2048)) + 64,
                               pad_token_id=None, bos_token_id=None, eos_token_id=None)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            self.fc = nn.Linear(t_hidden, hidden_size, bias=False)
            self.proj = nn.Linear(emb.weight.shape[1] + hidden_size, hidden_size, bias=False)
            self.body = LlamaModel(body_cfg)
            self.head = nn.Linear(hidden_size, self.vocab_size, bias=False)
        self.body.embed_tokens.requires_grad_(False)  # unused: inputs come as embeddings
        self.register_buffer("embed_weight", emb.weight.detach().clone(), persistent=True)
        self.to(emb.weight.device, emb.weight.dtype)

    def step(self, feats: torch.Tensor, tokens: torch.Tensor, position_ids: torch.Tensor,
             mask: torch.Tensor, cache=None) -> tuple[torch.Tensor, torch.Tensor]:
        """One pass of the draft layer.

        Args:
            feats: ``B x q x d`` input features (``fc`` of target features, or draft outputs).
            tokens: ``B x q`` token ids paired with them.
            position_ids: ``B x q``.
            mask: ``B x 1 x q x kv`` additive attention mask (0 = attend, dtype min = blocked).
            cache: a ``transformers`` ``DynamicCache`` (appended to) or None.

        Returns:
            ``(features, logits)``: ``B x q x d`` and ``B x q x V``.
        """
        z = self.proj(torch.cat([F.embedding(tokens, self.embed_weight), feats], dim=-1))
        f = self.run_body(z, mask, position_ids, cache)
        return f, self.head(f)

    def run_body(self, z: torch.Tensor, mask: torch.Tensor, position_ids: torch.Tensor,
                 cache=None, *, direct: bool = True) -> torch.Tensor:
        """The Llama layer(s) and final norm on the inputs ``z`` (``B x q x d``): the last
        hidden state of ``self.body(inputs_embeds=z, attention_mask=mask, ...)``.

        ``direct`` calls the body's own modules in the order ``LlamaModel.forward`` does
        (rotary embedding, decoder layers, final norm) instead of ``LlamaModel.forward``
        itself: with a 4-D mask that method only passes the mask through, and its wrappers
        (config defaults, output capturing, mask preparation) cost about a third of a draft
        step at this size (the draft runs thousands of tiny steps per decoding run).  The
        result is bit-for-bit the same (the tests compare both paths); ``direct=False``, or a
        body without those modules, takes ``LlamaModel.forward``.
        """
        body = self.body
        use_cache = cache is not None
        if not (direct and all(hasattr(body, a) for a in ("rotary_emb", "layers", "norm"))):
            return body(inputs_embeds=z, attention_mask=mask, position_ids=position_ids,
                        past_key_values=cache, use_cache=use_cache).last_hidden_state
        pe = body.rotary_emb(z, position_ids=position_ids)
        h = z
        for layer in body.layers:
            h = layer(h, attention_mask=mask, position_embeddings=pe, position_ids=position_ids,
                      past_key_values=cache, use_cache=use_cache)
            if isinstance(h, tuple):    # decoder layers of older transformers return tuples
                h = h[0]
        return body.norm(h)


def target_features(target, ids: torch.Tensor, attention_mask: torch.Tensor | None = None):
    """The target's last hidden states and logits on ``ids`` (``B x n``), without gradients.

    Returns:
        ``(hidden, logits)``: ``B x n x H`` (the features the LM head reads) and ``B x n x V``.
    """
    with torch.no_grad():
        out = target(input_ids=ids, attention_mask=attention_mask, output_hidden_states=True)
    return out.hidden_states[-1], out.logits


class DraftSession:
    """The draft run over a prefix (KV cache), extended node by node into chains and trees.

    Prefix entry ``i`` (``0 <= i < P``) pairs the target feature ``hidden[:, i]`` with the token
    ``tokens[:, i]`` (= ``x_{i+1}``, the token that feature predicted) at position ``i``; its
    logits (``prefix_logits[:, i]``) are the draft's distribution of ``x_{i+2}``.

    Args:
        draft: the :class:`EagleDraft`.
        hidden: ``B x P x H`` target features.
        tokens: ``B x P`` the tokens that follow them.
    """

    def __init__(self, draft: EagleDraft, hidden: torch.Tensor, tokens: torch.Tensor):
        from transformers import DynamicCache

        if hidden.dim() != 3 or tokens.shape != hidden.shape[:2]:
            raise ValueError(f"hidden, tokens: expected B x P x H and B x P, got "
                             f"{tuple(hidden.shape)} and {tuple(tokens.shape)}")
        self.draft = draft
        self.B, self.P = tokens.shape
        dev, dt = hidden.device, draft.embed_weight.dtype
        self.cache = DynamicCache()
        pos = torch.arange(self.P, device=dev).expand(self.B, -1)
        causal = torch.full((self.P, self.P), _neg(dt), device=dev, dtype=dt).triu(1)
        self.prefix_feats, self.prefix_logits = draft.step(
            draft.fc(hidden.to(dt)), tokens, pos, causal.expand(self.B, 1, -1, -1), self.cache)
        self.feats = self.prefix_feats.new_zeros(self.B, 0, self.prefix_feats.shape[-1])
        self.logits = self.prefix_logits.new_zeros(self.B, 0, self.prefix_logits.shape[-1])
        self.anchor = torch.zeros(self.B, 0, dtype=torch.long, device=dev)
        self.depth = torch.zeros(self.B, 0, dtype=torch.long, device=dev)
        self.ancestors = torch.zeros(self.B, 0, 0, dtype=torch.bool, device=dev)
        self._cols = torch.arange(self.P, device=dev)
        self._zero = torch.zeros((), dtype=dt, device=dev)
        self._blocked = torch.full((), _neg(dt), dtype=dt, device=dev)

    @property
    def num_nodes(self) -> int:
        return self.feats.shape[1]

    def extend(self, anchor: torch.Tensor, parent: torch.Tensor,
               token: torch.Tensor) -> torch.Tensor:
        """Add ``q`` nodes per row and return their logits (``B x q x V``).

        Args:
            anchor: ``B x q`` prefix entry each node's chain starts from (0 … P−1).
            parent: ``B x q`` index of an earlier node of this session, or −1 (child of the
                anchor).  A node's parent must have the same anchor.
            token: ``B x q`` the node's token.
        """
        B, q = token.shape
        M = self.num_nodes
        if anchor.shape != (B, q) or parent.shape != (B, q) or B != self.B:
            raise ValueError(f"anchor, parent, token: expected matching {self.B} x q shapes, "
                             f"got {tuple(anchor.shape)}, {tuple(parent.shape)}, "
                             f"{tuple(token.shape)}")
        # few, small tensor operations: a decoding cycle calls this depth − 1 times, and each
        # operation's fixed cost matters next to a draft step of a tiny model
        if q:
            lo, hi = torch.aminmax(anchor)
            if int(lo) < 0 or int(hi) >= self.P:
                raise ValueError(f"anchor: expected prefix entries in [0, {self.P}), got "
                                 f"{int(lo)}..{int(hi)}")
            lo, hi = torch.aminmax(parent)
            if int(hi) >= M or int(lo) < -1:
                raise ValueError(f"parent: expected -1 or an existing node index < {M}")
        has_parent = parent >= 0
        d = self.prefix_feats.shape[-1]
        anchor_feat = torch.gather(self.prefix_feats, 1, anchor[..., None].expand(-1, -1, d))
        if M:
            pidx = parent.clamp(min=0)
            par_feat = torch.gather(self.feats, 1, pidx[..., None].expand(-1, -1, d))
            par_anchor = torch.gather(self.anchor, 1, pidx)
            if bool((has_parent & (par_anchor != anchor)).any()):
                raise ValueError("parent: a node's parent must have the same anchor")
            par_anc = torch.gather(self.ancestors, 1, pidx[..., None].expand(-1, -1, M))
            par_anc &= has_parent[..., None]
            feats_in = torch.where(has_parent[..., None], par_feat, anchor_feat)
            depth = torch.where(has_parent, torch.gather(self.depth, 1, pidx) + 1, 1)
        else:
            par_anc = self.ancestors.new_zeros(B, q, 0)
            feats_in = anchor_feat
            depth = torch.ones_like(anchor)
        # attention: prefix <= anchor, ancestors, self
        eye = torch.eye(q, dtype=torch.bool, device=anchor.device).expand(B, -1, -1)
        allow = torch.cat([self._cols <= anchor[..., None], par_anc, eye], dim=-1)
        mask = torch.where(allow, self._zero, self._blocked)[:, None]
        f, logits = self.draft.step(feats_in, token, anchor + depth, mask, self.cache)
        self.ancestors = torch.cat([F.pad(self.ancestors, (0, q)), allow[..., self.P:]], dim=1)
        self.feats = torch.cat([self.feats, f], dim=1)
        self.logits = torch.cat([self.logits, logits], dim=1)
        self.anchor = torch.cat([self.anchor, anchor], dim=1)
        self.depth = torch.cat([self.depth, depth], dim=1)
        return logits


def _soft_ce(logits: torch.Tensor, target_probs: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of ``logits`` to the distributions ``target_probs`` (same shape)."""
    return -(target_probs * F.log_softmax(logits.float(), dim=-1)).sum(-1).mean()


def token_loss(draft: EagleDraft, target, ids: torch.Tensor, *, ttt_steps: int = 2,
               step_weight: float = 0.8, features=None, session_out: list | None = None):
    """EAGLE-3 token-level loss with training-time test on the sequences ``ids`` (``B x n``).

    Step 0: at every position ``i`` the draft (target feature ``h_i``, token ``x_{i+1}``)
    predicts ``x_{i+2}``; step ``s``: the node of depth ``s`` anchored at ``i`` (input: the
    draft's own depth ``s − 1`` feature and the ground-truth token ``x_{i+1+s}``) predicts
    ``x_{i+2+s}``.  Each is the cross-entropy to the target's distribution at that position.

    Args:
        draft: the draft.
        target: the target causal LM (frozen; run without gradients).
        ids: ``B x n`` training sequences (``n >= ttt_steps + 3``).
        ttt_steps: extra training-time-test steps (EAGLE-3 uses several; 0 = EAGLE-1/2).
        step_weight: weight ``w^s`` of step ``s``.
        features: ``(hidden, logits)`` of :func:`target_features` on ``ids`` if already known.
        session_out: if a list, the :class:`DraftSession` is appended to it (for reuse).

    Returns:
        The scalar loss ``Σ_s w^s CE_s / Σ_s w^s``.
    """
    check_int("ttt_steps", ttt_steps, low=0)
    check_real("step_weight", step_weight, low=0, low_open=True)
    if ids.dim() != 2 or ids.shape[1] < ttt_steps + 3:
        raise ValueError(f"ids: expected B x n with n >= ttt_steps + 3 = {ttt_steps + 3}, got "
                         f"{tuple(ids.shape)}")
    hidden, logits = target_features(target, ids) if features is None else features
    probs = F.softmax(logits.float(), dim=-1)
    B, n = ids.shape
    P = n - 1
    sess = DraftSession(draft, hidden[:, :P], ids[:, 1:])
    if session_out is not None:
        session_out.append(sess)
    # prefix entry i predicts x_{i+2}: the target's distribution at position i + 1
    losses = [_soft_ce(sess.prefix_logits, probs[:, 1:])]
    parent = None
    for s in range(1, ttt_steps + 1):
        A = P - s  # anchors 0 … A−1 have a token x_{a+1+s} and a label at a+1+s
        anchor = torch.arange(A, device=ids.device).expand(B, -1)
        par = (torch.full_like(anchor, -1) if parent is None else parent[:, :A])
        lg = sess.extend(anchor, par, ids[:, 1 + s:1 + s + A])
        losses.append(_soft_ce(lg, probs[:, 1 + s:1 + s + A]))
        parent = torch.arange(sess.num_nodes - A, sess.num_nodes,
                              device=ids.device).expand(B, -1)
    w = torch.tensor([step_weight ** s for s in range(len(losses))])
    return sum(wi * li for wi, li in zip(w.tolist(), losses, strict=True)) / float(w.sum())


def num_trainable(draft: nn.Module) -> int:
    """Trainable parameters of a draft (the frozen embedding copy excluded)."""
    return sum(p.numel() for p in draft.parameters() if p.requires_grad)

