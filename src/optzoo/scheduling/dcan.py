"""DCAN, the dual conditional attention network of Smit et al., "Neural Multi-Objective
Combinatorial Optimization for Flexible Job Shop Scheduling Problems" (ICLR 2026, OpenReview
YAgOaYedLQ, §4), and its baselines WI-DAN and DAN, on the features of
:class:`~optzoo.scheduling.env.FJSPEnv`.

DAN (Wang et al., "Flexible Job Shop Scheduling via Dual Attention Network-Based
Reinforcement Learning", IEEE TNNLS 2023; wrqccc/FJSP-DRL ``model/``) stacks L layers of two
blocks, each multi-head GAT-style attention with LeakyReLU slope 0.2:

* operation message attention: operation O_ij attends to its predecessor, itself and its
  successor in the job, e(ij, ip) = LeakyReLU(a_1ᵀ W h_ij + a_2ᵀ W h_ip), softmax over the
  (unmasked) neighbours, h'_ij = Σ_p α_(ij,ip) W h_ip;
* machine message attention: machine M_k attends to the machines q it shares a remaining
  operation with, e(k, q) = LeakyReLU(a_1ᵀ W h_k + a_2ᵀ W h_q + a_3ᵀ W_e c_kq), where the
  competition c_kq = Σ_j [k and q both can take job j's next operation] h_{O_j} (the current
  embeddings of the candidate operations), h'_k = Σ_q α_kq W h_q.

Heads are concatenated in hidden layers and averaged in the last, each followed by ELU; graph
embeddings are means over the remaining operations and machines.  The actor is an MLP
(3 layers, 64 hidden, tanh) on [h_{O_j}, h_{M_k}, pair features, pooled embeddings] for every
(job j, machine k) pair, masked to the legal pairs and soft-maxed; the critic an MLP on the
pooled embeddings.

DCAN (the paper) adds a preference *virtual node* h_λ to both blocks:

    h^{l+1}_{O_ij} = σ( Σ_{p=j−1}^{j+1} a_(ij,ip) W h^l_{O_ip} + a_(ij,λ) W h^l_λ ),

with e(ij, λ) = LeakyReLU(a_1ᵀ W h_ij + a_2ᵀ W h_λ) in the same softmax; in the machine block
the edge machine–preference has no natural competition c, so the mean of all c_kq is used.
The preference nodes get their own embedding update every layer.

READINGS AND INFERRED CHOICES (the paper's code was not available; marked where ours):

* Two preference nodes, one per block (h^O_λ with the operations' dimensions, h^M_λ with the
  machines'), initialised from λ by a learned linear map λ → R^{d_0} (the brief: "initialised
  from λ").  OUR READING of "their own embedding update": h^{l+1}_λ = ELU(W^l_λ h^l_λ) with
  per-layer weights of the node's own (the virtual node sends messages to every operation /
  machine but receives none), sized like the heads (concatenated / averaged) of that layer.
* "the mean of all c": the mean of c_kq over all pairs of (unpadded) machines k, q.
* Sizes (*inferred* from DAN's params.py): 2 layers, heads [4, 4], output dims [32, 8],
  actor and critic 3 × 64 (tanh), no dropout.
* Actor input: [h_{O_j}, h_{M_k}, pair features, mean op embedding, mean machine embedding,
  h^{O,L}_λ, h^{M,L}_λ, H(s)] — the last two terms are DCAN's preference embeddings and the
  normalised bound vector H(s) (the paper: "the same bounds are also fed as state features").
* Critic: one value per objective (the paper), input [pooled embeddings, preference
  embeddings, λ, H(s)] — the critic sees λ.  The scalar value is λᵀ v
  (:mod:`optzoo.scheduling.decomposition_ppo`).
* Pooling: mean over operations that are valid and not deleted (DAN's ``deleted_op_nodes``)
  and over machines that are valid with a non-zero input feature row (DAN's
  ``nonzero_averaging``: deleted machines have all-zero z-scored features); explicit masks
  instead of DAN's test on the output, because with a preference node a deleted node's
  output is no longer zero.
* WI-DAN (the paper's baseline): DAN with λ concatenated to every operation and machine
  feature (and fed to the critic).  OUR CHANGE (issue 22): DCAN's actor also receives the
  preference-node embeddings h^{O,L}_λ, h^{M,L}_λ directly, so by default WI-DAN gets the same
  λ input — the same λ → embedding path (initial linear map and per-layer ELU updates), fed
  to its actor and critic, but not into the attention.  The DCAN vs WI-DAN comparison then
  differs only in whether λ enters the attention as a virtual node or the features by
  concatenation.  ``lambda_embedding=False`` gives the paper's plain WI-DAN (λ only in the
  features).
* Hyper (the paper's baseline; PMOCO, Lin et al. 2022, style): DAN's encoder without λ, and
  an actor whose parameters are generated from λ by a hypernetwork (a 2-layer MLP, ReLU,
  ``hyper_hidden`` units, to every weight and bias of the 3-layer actor; the generated
  weights are scaled by 1/sqrt(fan-in) so that at initialisation the actor's activations have
  the scale of a default ``nn.Linear``, OUR CHOICE).  The critic sees λ, as everywhere.
* ``"blind"``: the DCAN architecture with λ replaced by the constant (1/n, …, 1/n) everywhere
  (the λ-blind ablation).  ``"dan"``: plain DAN (no λ).

Masking uses DAN's finite −9e15 instead of −∞ so a node without neighbours (padding) stays
finite; illegal pairs get the logit −9e15, hence probability exactly 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from optzoo.scheduling.env import MACHINE_FEATURES, OP_FEATURES, PAIR_FEATURES

MODES = ("dcan", "wi-dan", "blind", "dan", "hyper")
_NEG = -9e15  # DAN's mask value
_SLOPE = 0.2  # DAN's LeakyReLU slope


def _xavier(*shape: int) -> nn.Parameter:
    w = torch.empty(*shape)
    # DAN initialises W and a with xavier_uniform(gain 1.414) per head
    for h in range(shape[0]):
        nn.init.xavier_uniform_(w[h], gain=1.414)
    return nn.Parameter(w)


class OpAttention(nn.Module):
    """DAN's multi-head operation message attention block, with DCAN's optional preference
    node.

    Args:
        d_in: input dimension (operations and preference node).
        d_out: output dimension per head.
        heads: number of heads.
        concat: concatenate the heads (hidden layers) or average them (last layer).

    Shapes: ``h`` B x N x d_in, ``op_mask`` B x N x 3 (1 = predecessor / self / successor
    message masked), ``h_pref`` B x d_in, ``pref_mask`` B x N bool (True = the edge to the
    preference node exists).  Output B x N x (heads·d_out or d_out).
    """

    def __init__(self, d_in: int, d_out: int, heads: int, concat: bool):
        super().__init__()
        self.d_out, self.heads, self.concat = d_out, heads, concat
        self.W = _xavier(heads, d_in, d_out)
        self.a = _xavier(heads, 2 * d_out, 1)

    def _messages(self, h, h_pref):
        wh = _project(h, self.W)
        pad = torch.zeros_like(wh[:, :, :1])
        msgs = [torch.cat([pad, wh[:, :, :-1]], dim=2), wh, torch.cat([wh[:, :, 1:], pad], dim=2)]
        if h_pref is not None:
            msgs.append(_project(h_pref[:, None], self.W))  # B x heads x 1 x d_out
        return msgs

    def scores(self, h, op_mask, h_pref=None, pref_mask=None, msgs=None):
        """Attention weights B x heads x N x K over (predecessor, self, successor[, preference
        node])."""
        if msgs is None:
            msgs = self._messages(h, h_pref)
        a1, a2 = self.a[:, :self.d_out, 0], self.a[:, self.d_out:, 0]
        e1 = (msgs[1] * a1[None, :, None]).sum(-1)
        e2 = [(m * a2[None, :, None]).sum(-1) for m in msgs]
        e = torch.stack([e1 + x for x in e2[:3]] + ([e1 + e2[3]] if len(e2) == 4 else []), -1)
        e = F.leaky_relu(e, _SLOPE)
        masks = [op_mask[..., 0] > 0, op_mask[..., 1] > 0, op_mask[..., 2] > 0]
        if h_pref is not None:
            if pref_mask is None:
                pref_mask = torch.ones(h.shape[:2], dtype=torch.bool, device=h.device)
            masks.append(~pref_mask)
        masked = torch.stack(masks, dim=-1)[:, None]
        return torch.softmax(torch.where(masked, torch.full_like(e, _NEG), e), dim=-1)

    def forward(self, h, op_mask, h_pref=None, pref_mask=None):
        msgs = self._messages(h, h_pref)
        att = self.scores(h, op_mask, h_pref, pref_mask, msgs)
        out = sum(att[..., i, None] * m for i, m in enumerate(msgs))
        return _merge_heads(out, self.concat)


class MachineAttention(nn.Module):
    """DAN's multi-head machine message attention block, with DCAN's optional preference
    node (edge feature: the mean of all competitions c_kq).

    Args:
        d_in: machine (and preference node) input dimension.
        d_edge: dimension of the competition vectors c_kq (the operations' input dimension).
        d_out, heads, concat: as :class:`OpAttention`.

    Shapes: ``h`` B x M x d_in, ``machine_mask`` B x M x M (1 = edge), ``comp`` B x M x M x
    d_edge, ``h_pref`` B x d_in, ``pref_mask`` B x M bool, ``machine_valid`` B x M bool (which
    machines enter the mean of c).
    """

    def __init__(self, d_in: int, d_edge: int, d_out: int, heads: int, concat: bool):
        super().__init__()
        self.d_out, self.heads, self.concat = d_out, heads, concat
        self.W = _xavier(heads, d_in, d_out)
        self.W_edge = _xavier(heads, d_edge, d_out)
        self.a = _xavier(heads, 3 * d_out, 1)

    def scores(self, h, machine_mask, comp, h_pref=None, pref_mask=None, machine_valid=None):
        d = self.d_out
        wh = _project(h, self.W)
        a1, a2, a3 = self.a[:, :d, 0], self.a[:, d:2 * d, 0], self.a[:, 2 * d:, 0]
        # a_3ᵀ W_e c_kq, with W_e a_3 folded first (the same number, less memory)
        v_edge = torch.einsum("hde,he->hd", self.W_edge, a3)
        e_edge = (comp @ v_edge.T).permute(0, 3, 1, 2)
        e1 = (wh * a1[None, :, None]).sum(-1)
        e2 = (wh * a2[None, :, None]).sum(-1)
        e = e1[..., :, None] + e2[..., None, :] + e_edge
        mask = machine_mask[:, None] > 0
        msg = wh
        if h_pref is not None:
            if machine_valid is None:
                machine_valid = torch.ones(h.shape[:2], dtype=torch.bool, device=h.device)
            pair_valid = (machine_valid[:, :, None] & machine_valid[:, None, :]).to(comp.dtype)
            c_mean = (comp * pair_valid[..., None]).sum((1, 2)) / \
                pair_valid.sum((1, 2)).clamp_min(1.0)[:, None]
            wp = _project(h_pref[:, None], self.W)[:, :, 0]
            e_pref = e1 + torch.einsum("bhe,he->bh", wp, a2)[..., None] + \
                torch.einsum("bd,hd->bh", c_mean, v_edge)[..., None]
            e = torch.cat([e, e_pref[..., None]], dim=-1)
            if pref_mask is None:
                pref_mask = torch.ones(h.shape[:2], dtype=torch.bool, device=h.device)
            mask = torch.cat([mask, pref_mask[:, None, :, None]], dim=-1)
            msg = torch.cat([wh, wp[:, :, None, :]], dim=2)
        e = F.leaky_relu(e, _SLOPE)
        att = torch.softmax(torch.where(mask, e, torch.full_like(e, _NEG)), dim=-1)
        return att, msg

    def forward(self, h, machine_mask, comp, h_pref=None, pref_mask=None, machine_valid=None):
        att, msg = self.scores(h, machine_mask, comp, h_pref, pref_mask, machine_valid)
        out = att @ msg
        return _merge_heads(out, self.concat)


def _project(h, weight):
    """W h for every head: h B x n x d_in, weight heads x d_in x d_out → B x heads x n x d_out
    (one matmul)."""
    heads, d_in, d_out = weight.shape
    w = weight.permute(1, 0, 2).reshape(d_in, heads * d_out)
    return (h @ w).unflatten(-1, (heads, d_out)).transpose(-3, -2)


def _merge_heads(out, concat: bool):
    """B x heads x n x d → ELU of the concatenation (B x n x heads·d) or of the mean."""
    if concat:
        out = out.permute(0, 2, 1, 3).flatten(2)
    else:
        out = out.mean(dim=1)
    return F.elu(out)


def _mlp(d_in: int, hidden: int, d_out: int, layers: int) -> nn.Sequential:
    """DAN's Actor/Critic MLP: ``layers`` linear layers, tanh between them."""
    mods: list[nn.Module] = []
    dims = [d_in] + [hidden] * (layers - 1) + [d_out]
    for i in range(layers):
        mods.append(nn.Linear(dims[i], dims[i + 1]))
        if i < layers - 1:
            mods.append(nn.Tanh())
    return nn.Sequential(*mods)


@dataclass
class PolicyOutput:
    """What a policy returns for a batch.

    Attributes:
        logits: B x (J·M) scores of the flattened (job, machine) pairs (row-major, the padded
            M), illegal pairs at a large negative finite value.
        log_probs: B x (J·M) log-probabilities (illegal pairs: probability exactly 0).
        values: B x n_obj, one value per objective.
    """

    logits: torch.Tensor
    log_probs: torch.Tensor
    values: torch.Tensor

    @property
    def probs(self) -> torch.Tensor:
        return self.log_probs.exp()

    def entropy(self) -> torch.Tensor:
        """B: the entropy of each distribution (0·log 0 = 0)."""
        p = self.probs
        return -(p * torch.where(p > 0, self.log_probs, torch.zeros_like(p))).sum(-1)


class DCANPolicy(nn.Module):
    """Actor-critic for the (multi-objective) FJSP: DCAN and its baselines.

    Args:
        n_obj: number of objectives (length of λ and of the value vector).
        mode: ``"dcan"`` (preference virtual nodes), ``"wi-dan"`` (λ concatenated to every
            operation and machine feature), ``"blind"`` (DCAN fed the constant λ = 1/n: the
            λ-blind ablation), ``"dan"`` (plain DAN, no λ anywhere) or ``"hyper"`` (DAN with a
            hypernetwork λ → actor parameters).
        dims: output dimension per layer (DAN: [32, 8]).
        heads: heads per layer, both blocks (DAN: [4, 4]).
        hidden: actor and critic hidden width (DAN: 64).
        mlp_layers: actor and critic depth (DAN: 3).
        op_dim, machine_dim, pair_dim: raw feature sizes (default: the environment's).
        lambda_embedding: feed the preference embeddings (λ → linear → per-layer ELU updates)
            to the actor and critic; always on for ``"dcan"`` / ``"blind"`` (they are the
            virtual nodes), default on for ``"wi-dan"`` (the same λ input as DCAN's actor),
            off for ``"dan"`` / ``"hyper"``.
        hyper_hidden: hidden width of the ``"hyper"`` hypernetwork.

    ``forward(features, prefs)`` takes the dict of :meth:`FJSPFeatures.to_torch` (batched with
    :func:`~optzoo.scheduling.env.batch_features`) and λ (B x n_obj) and returns a
    :class:`PolicyOutput`.
    """

    def __init__(self, n_obj: int = 2, mode: str = "dcan", *, dims: Sequence[int] = (32, 8),
                 heads: Sequence[int] = (4, 4), hidden: int = 64, mlp_layers: int = 3,
                 op_dim: int = len(OP_FEATURES), machine_dim: int = len(MACHINE_FEATURES),
                 pair_dim: int = len(PAIR_FEATURES), lambda_embedding: bool | None = None,
                 hyper_hidden: int = 32):
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"mode: expected one of {MODES}, got {mode!r}")
        if not isinstance(n_obj, int) or n_obj < 1:
            raise ValueError(f"n_obj: expected a positive int, got {n_obj!r}")
        dims, heads = tuple(int(d) for d in dims), tuple(int(h) for h in heads)
        if len(dims) == 0 or len(dims) != len(heads) or min(dims) < 1 or min(heads) < 1:
            raise ValueError(f"dims, heads: expected two equally long lists of positive ints, "
                             f"got {dims}, {heads}")
        if mlp_layers < 1 or hidden < 1:
            raise ValueError(f"mlp_layers, hidden: expected positive ints, got {mlp_layers}, "
                             f"{hidden}")
        self.n_obj, self.mode = n_obj, mode
        self.pref_nodes = mode in ("dcan", "blind")
        if lambda_embedding is None:
            lambda_embedding = mode in ("dcan", "blind", "wi-dan")
        if not isinstance(lambda_embedding, bool):
            raise TypeError(f"lambda_embedding: expected a bool or None, got "
                            f"{lambda_embedding!r}")
        if self.pref_nodes and not lambda_embedding:
            raise ValueError(f"lambda_embedding: mode {mode!r} needs its preference nodes")
        if lambda_embedding and mode in ("dan", "hyper"):
            raise ValueError(f"lambda_embedding: not available for mode {mode!r}")
        if not isinstance(hyper_hidden, int) or hyper_hidden < 1:
            raise ValueError(f"hyper_hidden: expected a positive int, got {hyper_hidden!r}")
        self.pref_embed = lambda_embedding
        extra = n_obj if mode == "wi-dan" else 0
        d_op, d_m = op_dim + extra, machine_dim + extra
        self.op_dim, self.machine_dim, self.pair_dim = op_dim, machine_dim, pair_dim
        self.op_blocks, self.machine_blocks = nn.ModuleList(), nn.ModuleList()
        self.op_pref, self.machine_pref = nn.ModuleList(), nn.ModuleList()
        if self.pref_embed:
            self.op_pref_init = nn.Linear(n_obj, d_op)
            self.machine_pref_init = nn.Linear(n_obj, d_m)
        for i, (d, h) in enumerate(zip(dims, heads, strict=True)):
            last = i == len(dims) - 1
            width = d if last else d * h
            self.op_blocks.append(OpAttention(d_op, d, h, concat=not last))
            self.machine_blocks.append(MachineAttention(d_m, d_op, d, h, concat=not last))
            if self.pref_embed:
                self.op_pref.append(nn.Linear(d_op, width))
                self.machine_pref.append(nn.Linear(d_m, width))
            d_op = d_m = width
        d = dims[-1]
        n_pref = 2 * d if self.pref_embed else 0
        d_actor = 4 * d + pair_dim + n_pref + n_obj
        self.actor = _mlp(d_actor, hidden, 1, mlp_layers)
        if mode == "hyper":
            # the hypernetwork replaces the actor's own parameters
            self.actor = None
            dims_a = [d_actor] + [hidden] * (mlp_layers - 1) + [1]
            self.actor_shapes = list(zip(dims_a[:-1], dims_a[1:], strict=True))
            n_params = sum(i * o + o for i, o in self.actor_shapes)
            self.hyper = nn.Sequential(nn.Linear(n_obj, hyper_hidden), nn.ReLU(),
                                       nn.Linear(hyper_hidden, n_params))
        lam_in = 0 if mode == "dan" else n_obj
        self.critic = _mlp(2 * d + n_pref + lam_in + n_obj, hidden, n_obj, mlp_layers)

    def _lambda(self, prefs, batch: int, device) -> torch.Tensor:
        if self.mode in ("blind", "dan") or prefs is None:
            return torch.full((batch, self.n_obj), 1.0 / self.n_obj, device=device)
        lam = torch.as_tensor(prefs, dtype=torch.float32, device=device)
        if lam.shape != (batch, self.n_obj):
            raise ValueError(f"prefs: expected shape ({batch}, {self.n_obj}), got "
                             f"{tuple(lam.shape)}")
        return lam

    def embed(self, feats: Mapping[str, torch.Tensor], prefs=None) -> dict[str, torch.Tensor]:
        """The DAN / DCAN embeddings: ``op`` B x N x d, ``machine`` B x M x d, pooled ``g_op``
        and ``g_machine`` B x d, preference embeddings ``pref_op`` / ``pref_machine`` B x d
        (when ``lambda_embedding``) and the λ actually fed ``lam`` B x n_obj."""
        h_op, h_m = feats["op"].float(), feats["machine"].float()
        b = h_op.shape[0]
        lam = self._lambda(prefs, b, h_op.device)
        if self.mode == "wi-dan":
            h_op = torch.cat([h_op, lam[:, None].expand(-1, h_op.shape[1], -1)], -1)
            h_m = torch.cat([h_m, lam[:, None].expand(-1, h_m.shape[1], -1)], -1)
        op_mask, cand = feats["op_mask"], feats["candidate"]
        comp_idx = feats["competition"].float()
        m_valid = feats["machine_valid"]
        m_pad = m_valid.shape[1]
        p_op = p_m = None
        if self.pref_embed:
            p_op, p_m = self.op_pref_init(lam), self.machine_pref_init(lam)
        # only the virtual nodes of DCAN / blind enter the attention
        a_op, a_m = (p_op, p_m) if self.pref_nodes else (None, None)
        for i in range(len(self.op_blocks)):
            idx = cand[..., None].expand(-1, -1, h_op.shape[-1])
            cand_emb = torch.gather(h_op, 1, idx)
            comp = (comp_idx.flatten(1, 2) @ cand_emb).unflatten(1, (m_pad, m_pad))
            new_op = self.op_blocks[i](h_op, op_mask, a_op, feats["op_valid"])
            h_m = self.machine_blocks[i](h_m, feats["machine_mask"], comp, a_m, m_valid, m_valid)
            h_op = new_op
            if self.pref_embed:
                p_op = F.elu(self.op_pref[i](p_op))
                p_m = F.elu(self.machine_pref[i](p_m))
                if self.pref_nodes:
                    a_op, a_m = p_op, p_m
        op_alive = (feats["op_valid"] & ~feats["deleted"]).float()
        m_alive = (m_valid & (feats["machine"].abs().sum(-1) > 0)).float()
        g_op = (h_op * op_alive[..., None]).sum(1) / op_alive.sum(1, keepdim=True).clamp_min(1)
        g_m = (h_m * m_alive[..., None]).sum(1) / m_alive.sum(1, keepdim=True).clamp_min(1)
        out = {"op": h_op, "machine": h_m, "g_op": g_op, "g_machine": g_m, "lam": lam}
        if self.pref_embed:
            out["pref_op"], out["pref_machine"] = p_op, p_m
        return out

    def _hyper_actor(self, x: torch.Tensor, lam: torch.Tensor) -> torch.Tensor:
        """The actor MLP with λ-generated parameters: x B x n x D → B x n."""
        params = self.hyper(lam)
        lo = 0
        for i, (d_in, d_out) in enumerate(self.actor_shapes):
            w = params[:, lo:lo + d_in * d_out].reshape(-1, d_in, d_out) / d_in ** 0.5
            lo += d_in * d_out
            b = params[:, lo:lo + d_out]
            lo += d_out
            x = torch.bmm(x, w) + b[:, None]
            if i < len(self.actor_shapes) - 1:
                x = torch.tanh(x)
        return x.squeeze(-1)

    def forward(self, feats: Mapping[str, torch.Tensor], prefs=None) -> PolicyOutput:
        emb = self.embed(feats, prefs)
        legal = feats["legal"]
        b, j, m = legal.shape
        d = emb["op"].shape[-1]
        cand = feats["candidate"]
        h_cand = torch.gather(emb["op"], 1, cand[..., None].expand(-1, -1, d))
        glob = [emb["g_op"], emb["g_machine"]]
        if self.pref_embed:
            glob += [emb["pref_op"], emb["pref_machine"]]
        quality = feats["quality"].float()
        g = torch.cat(glob + [quality], -1)
        x = torch.cat([h_cand[:, :, None].expand(-1, -1, m, -1),
                       emb["machine"][:, None].expand(-1, j, -1, -1),
                       feats["pair"].float(),
                       g[:, None, None].expand(-1, j, m, -1)], -1)
        if self.mode == "hyper":
            scores = self._hyper_actor(x.reshape(b, j * m, -1), emb["lam"])
        else:
            scores = self.actor(x).squeeze(-1).reshape(b, j * m)
        flat_legal = legal.reshape(b, j * m)
        logits = torch.where(flat_legal, scores, torch.full_like(scores, _NEG))
        log_probs = torch.log_softmax(logits, -1)
        crit = glob + ([] if self.mode == "dan" else [emb["lam"]]) + [quality]
        values = self.critic(torch.cat(crit, -1))
        return PolicyOutput(logits, log_probs, values)


def dcan(n_obj: int = 2, **kwargs) -> DCANPolicy:
    """The paper's DCAN (preference virtual nodes in both attention blocks)."""
    return DCANPolicy(n_obj, "dcan", **kwargs)


def wi_dan(n_obj: int = 2, **kwargs) -> DCANPolicy:
    """The paper's WI-DAN baseline (λ concatenated to every operation and machine feature;
    by default its actor also gets DCAN's λ-embeddings, see the module docstring)."""
    return DCANPolicy(n_obj, "wi-dan", **kwargs)


def hyper(n_obj: int = 2, **kwargs) -> DCANPolicy:
    """The paper's Hyper baseline (DAN with a hypernetwork λ → actor parameters)."""
    return DCANPolicy(n_obj, "hyper", **kwargs)
