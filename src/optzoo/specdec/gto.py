"""GTO: Group Tree Optimization of a speculative-decoding draft (Hu, Li, Lu, Zhou: "Bridging
Draft Policy Misalignment: Group Tree Optimization for Speculative Decoding", ICLR 2026,
arXiv 2509.22134, OpenReview ``dwPdYFqVWO``).

Token-level draft training (EAGLE-3) fits the draft to the target along one greedy path, but
decoding uses a *tree* (:mod:`optzoo.specdec.tree`): GTO trains the draft for the tree it will
actually build.  The pieces, with the paper's notation:

* **Tree policy** ``G(M, x_{1:t})``: the EAGLE-2 tree of :func:`~optzoo.specdec.tree.build_trees`,
  the very procedure used in decoding (same depth, top-k and ``g``).
* **Draft tree reward** (:func:`draft_tree_reward`, sample-free): for a candidate sequence
  ``S_i`` (a root-to-leaf path of the tree) of length ``l_i``,
  ``L_i = Σ_{j=1..l_i} Π_{u=1..j} p_target(x̄_u | x_{1:t}, x̄_{<u})`` — the expected number of
  its tokens accepted when each is accepted with the target's probability (cumulative
  products); the tree's reward is the smooth max ``r = (1/η) log Σ_i exp(η L_i)``, η = 1
  (ablations: the mean and the hard max).  :func:`expected_acceptance_length` is the tree's own
  expected accepted length under that acceptance rule, ``Σ_v Π_{u ∈ path(v)} p(u)``, which tree
  speculative sampling with deterministic children realises exactly at the reward temperature.
* **Groups of adjacent prefixes**: the tree is deterministic, so instead of several rollouts
  from one state GTO groups ``m`` adjacent positions of a training sequence,
  ``G(k) = {t_k, …, t_k + m − 1}``.
* **Reference de-biasing**: ``R_i = r(G(M, x_{1:i})) − r(G(M_0, x_{1:i}))`` with ``M_0`` the frozen
  Phase-I draft, and the group-standardised advantage ``A_i = (R_i − mean_G R) / (std_G R + δ)``.
* **Clipped surrogate along the longest accepted sequence**: ``Ŝ_i`` = the candidate the target
  accepts under greedy verification (the root-to-node path of the deepest node whose tokens all
  equal the target's argmax), length ``l_i``; ``s_i = exp((log M(Ŝ_i) − log M_0(Ŝ_i)) /
  max(l_i, 1))`` (``ratio_norm = "geomean"``; ``"sum"`` keeps the summed log-ratio of a public
  port) and ``L_GTO = −(1/m) Σ_{i ∈ G(k)} min(s_i A_i, clip(s_i, 1 − ε, 1 + ε) A_i)``, averaged
  over the groups.
* **Objective** (Phase II): ``L = L_token + ω · L_GTO`` (:func:`gto_objective`), ``L_token`` the
  EAGLE-3 loss of :func:`optzoo.specdec.eagle.token_loss`.

Readings of the brief's *inferred* points (the method section was not reachable): candidates
are the leaves' paths (EAGLE's ``retrieve_indices``); the reward uses the target's probabilities
at temperature 1 (``reward_temperature``); ``Ŝ_i`` comes from greedy verification (T = 0), as in
the public port; the standard deviation is the unbiased one over the group (TRL's GRPO);
defaults ε = 0.2, δ = 1e-6, m = 4, ω = 1, four groups per sequence, non-overlapping, starting at
random positions of equal segments of the sequence.  At the start of Phase II ``M = M_0``, so
every ``R_i`` is 0 and GTO's gradient vanishes until the token loss moves the draft: this follows
from the definitions (the public port behaves the same way).  The "no grouping" ablation draws
the positions independently and standardises over the whole batch.

Example:
    >>> import torch
    >>> probs = torch.tensor([0.9, 0.5, 0.2])        # a root child, its child, another root child
    >>> parents = torch.tensor([-1, 0, -1])
    >>> round(float(draft_tree_reward(probs, parents, aggregation="max")), 4)   # 0.9 + 0.45
    1.35
    >>> round(float(expected_acceptance_length(probs, parents)), 4)             # 0.9 + 0.45 + 0.2
    1.55
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
import torch
from torch.nn import functional as F

from optzoo.checks import check_int, check_real
from optzoo.specdec.eagle import DraftSession, EagleDraft, target_features, token_loss
from optzoo.specdec.tree import (
    TreeConfig,
    Trees,
    build_trees,
    greedy_accepted,
    node_target_logits,
    target_tree_logits,
    tree_ancestors,
)

__all__ = ["AGGREGATIONS", "GTOConfig", "candidate_lengths", "clipped_surrogate",
           "draft_tree_reward", "expected_acceptance_length", "frozen_copy", "group_advantages",
           "gto_loss", "gto_objective"]

AGGREGATIONS = ("smooth", "mean", "max")


def _check_tree(node_probs: torch.Tensor, parents: torch.Tensor) -> None:
    if not isinstance(node_probs, torch.Tensor) or not node_probs.is_floating_point():
        raise TypeError("node_probs: expected a floating-point tensor")
    if parents.shape != node_probs.shape:
        raise ValueError(f"parents: expected the shape of node_probs {tuple(node_probs.shape)}, "
                         f"got {tuple(parents.shape)}")
    if bool(((node_probs < 0) | (node_probs > 1) | ~torch.isfinite(node_probs)).any()):
        raise ValueError("node_probs: expected probabilities in [0, 1]")


def _reach(node_probs: torch.Tensor, parents: torch.Tensor):
    """Ancestor matrix and the probability of reaching each node (product along its path)."""
    anc = tree_ancestors(parents)
    logp = torch.log(node_probs.clamp_min(1e-30))
    reach = torch.exp((anc.to(logp.dtype) * logp[..., None, :]).sum(-1))
    return anc, reach


def expected_acceptance_length(node_probs: torch.Tensor, parents: torch.Tensor) -> torch.Tensor:
    """Expected number of tree tokens accepted when, from the root, the target draws each next
    token from its distribution and the walk moves while the token is a child (tree speculative
    sampling with deterministic children): ``Σ_v Π_{u ∈ path(v)} p(u)``, bonus not counted.

    Args:
        node_probs: ``... x g`` target probability of each node's token given its path.
        parents: ``... x g`` parent index (−1 = root), parents before children.
    """
    _check_tree(node_probs, parents)
    return _reach(node_probs, parents)[1].sum(-1)


def candidate_lengths(node_probs: torch.Tensor, parents: torch.Tensor):
    """``(L, is_leaf)``: ``L[..., j] = Σ_{v ∈ path(j)} reach(v)`` (the paper's ``L_{t,i}`` of
    the candidate ending at ``j``) and which nodes are leaves (the candidates)."""
    _check_tree(node_probs, parents)
    anc, reach = _reach(node_probs, parents)
    lengths = (anc.to(reach.dtype) * reach[..., None, :]).sum(-1)
    g = parents.shape[-1]
    has_child = (parents[..., None, :] == torch.arange(g, device=parents.device)[:, None]).any(-1)
    return lengths, ~has_child


def draft_tree_reward(node_probs: torch.Tensor, parents: torch.Tensor, *, eta: float = 1.0,
                      aggregation: str = "smooth") -> torch.Tensor:
    """GTO's sample-free draft tree reward (differentiable in ``node_probs``).

    ``aggregation``: ``"smooth"`` = ``(1/η) log Σ_i exp(η L_i)`` over the candidates (leaves),
    ``"mean"`` = their mean, ``"max"`` = the largest ``L_i``.

    Args:
        node_probs: ``... x g`` target probability of each node's token given its path.
        parents: ``... x g`` parent index (−1 = root), parents before children.
        eta: temperature of the smooth max (> 0).
        aggregation: one of :data:`AGGREGATIONS`.
    """
    check_real("eta", eta, low=0, low_open=True)
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation: expected one of {AGGREGATIONS}, got {aggregation!r}")
    lengths, leaf = candidate_lengths(node_probs, parents)
    if aggregation == "smooth":
        z = torch.where(leaf, eta * lengths, torch.full_like(lengths, -torch.inf))
        return torch.logsumexp(z, -1) / eta
    if aggregation == "max":
        return torch.where(leaf, lengths, torch.full_like(lengths, -torch.inf)).max(-1).values
    w = leaf.to(lengths.dtype)
    return (lengths * w).sum(-1) / w.sum(-1)


@dataclass(frozen=True)
class GTOConfig:
    """GTO's knobs (defaults: the brief's, see the module docstring).

    Args:
        tree: the tree policy (must be the decoding tree).
        group_size: ``m`` adjacent positions per group (>= 2).
        groups: groups per training sequence.
        clip_eps: PPO clip ε.
        delta: δ of the standardisation.
        omega: weight ω of ``L_GTO``.
        eta: smooth-max temperature η.
        aggregation: ``"smooth"`` | ``"mean"`` | ``"max"`` (ablations).
        debias: subtract the reference tree's reward (False: the "no de-biasing" ablation).
        grouping: adjacent groups standardised per group (False: independent positions
            standardised over the batch, the "no grouping" ablation).
        ratio_norm: ``"geomean"`` (divide the log-ratio by the path length) or ``"sum"``.
        reward_temperature: temperature of the target probabilities in the reward.
        ttt_steps: training-time-test steps of ``L_token``.
        min_context: first anchor (draft prefix entry) a group may use.
    """

    tree: TreeConfig = field(default_factory=TreeConfig)
    group_size: int = 4
    groups: int = 4
    clip_eps: float = 0.2
    delta: float = 1e-6
    omega: float = 1.0
    eta: float = 1.0
    aggregation: str = "smooth"
    debias: bool = True
    grouping: bool = True
    ratio_norm: str = "geomean"
    reward_temperature: float = 1.0
    ttt_steps: int = 2
    min_context: int = 2

    def __post_init__(self):
        if not isinstance(self.tree, TreeConfig):
            raise ValueError(f"tree: expected a TreeConfig, got {self.tree!r}")
        check_int("group_size", self.group_size, low=2)
        check_int("groups", self.groups, low=1)
        check_real("clip_eps", self.clip_eps, low=0, low_open=True, high=1, high_open=True)
        check_real("delta", self.delta, low=0, low_open=True)
        check_real("omega", self.omega, low=0)
        check_real("eta", self.eta, low=0, low_open=True)
        check_real("reward_temperature", self.reward_temperature, low=0, low_open=True)
        check_int("ttt_steps", self.ttt_steps, low=0)
        check_int("min_context", self.min_context, low=0)
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"aggregation: expected one of {AGGREGATIONS}, got "
                             f"{self.aggregation!r}")
        if self.ratio_norm not in ("geomean", "sum"):
            raise ValueError(f"ratio_norm: expected 'geomean' or 'sum', got {self.ratio_norm!r}")


def frozen_copy(draft: EagleDraft) -> EagleDraft:
    """A frozen deep copy of a draft: GTO's reference ``M_0``."""
    ref = copy.deepcopy(draft).eval()
    ref.requires_grad_(False)
    return ref


def _anchors(B: int, P: int, cfg: GTOConfig, rng: np.random.Generator) -> np.ndarray:
    """``B x (groups·m)`` draft prefix entries: ``groups`` non-overlapping runs of ``m``
    adjacent positions (one per equal segment of [min_context, P − 1]), or independent distinct
    positions when ``grouping`` is off."""
    lo, hi = cfg.min_context, P - 1
    m, G = cfg.group_size, cfg.groups
    span = hi - lo + 1
    if span < G * m:
        raise ValueError(f"ids: sequences too short for {G} groups of {m} positions from "
                         f"position {lo} (need >= {lo + G * m + 1} draft positions, got {P})")
    out = np.empty((B, G * m), dtype=np.int64)
    seg = span // G
    for b in range(B):
        if not cfg.grouping:
            out[b] = np.sort(rng.choice(np.arange(lo, hi + 1), size=G * m, replace=False))
            continue
        for k in range(G):
            s0 = lo + k * seg
            start = s0 + int(rng.integers(0, seg - m + 1))
            out[b, k * m:(k + 1) * m] = np.arange(start, start + m)
    return out


def _path_logprob(sess: DraftSession, anchors: torch.Tensor, path: torch.Tensor,
                  length: torch.Tensor) -> torch.Tensor:
    """Σ of the draft's log-probabilities of ``path`` (``B x A x D`` tokens, the first
    ``length`` valid) continuing prefix entry ``anchors`` — the same tree computation as
    drafting (each path is a chain of nodes)."""
    B, A, D = path.shape
    vocab = sess.prefix_logits.shape[-1]
    root = torch.gather(sess.prefix_logits, 1, anchors[..., None].expand(-1, -1, vocab))
    lps = [F.log_softmax(root.float(), -1).gather(-1, path[..., :1])[..., 0]]
    parent = torch.full((B, A), -1, dtype=torch.long, device=path.device)
    for j in range(1, D):
        if not bool((length > j).any()):
            break
        base = sess.num_nodes
        lg = sess.extend(anchors, parent, path[..., j - 1])
        lps.append(F.log_softmax(lg.float(), -1).gather(-1, path[..., j:j + 1])[..., 0])
        parent = base + torch.arange(A, device=path.device).expand(B, -1)
    lp = torch.stack(lps, -1)
    valid = torch.arange(lp.shape[-1], device=path.device) < length[..., None]
    return (lp * valid).sum(-1)


def group_advantages(rewards: torch.Tensor, group_size: int | None,
                     delta: float = 1e-6) -> torch.Tensor:
    """``A_i = (R_i − mean_G R) / (std_G R + δ)`` over consecutive groups of ``group_size``
    entries of the last dimension (unbiased std, as TRL's GRPO); ``group_size=None``
    standardises over the whole tensor (the "no grouping" ablation)."""
    check_real("delta", delta, low=0, low_open=True)
    if group_size is None:
        if rewards.numel() < 2:
            raise ValueError("rewards: expected at least 2 values to standardise")
        return (rewards - rewards.mean()) / (rewards.std() + delta)
    check_int("group_size", group_size, low=2)
    if rewards.shape[-1] % group_size:
        raise ValueError(f"rewards: expected a last dimension divisible by group_size="
                         f"{group_size}, got {rewards.shape[-1]}")
    g = rewards.reshape(*rewards.shape[:-1], -1, group_size)
    adv = (g - g.mean(-1, keepdim=True)) / (g.std(-1, keepdim=True) + delta)
    return adv.reshape(rewards.shape)


def clipped_surrogate(log_ratio: torch.Tensor, advantages: torch.Tensor,
                      clip_eps: float) -> torch.Tensor:
    """``−mean_i min(s_i A_i, clip(s_i, 1 − ε, 1 + ε) A_i)`` with ``s_i = exp(log_ratio_i)``
    (PPO's clipped objective; the mean over a group is GTO's ``(1/m) Σ_{i ∈ G(k)}``, over all
    groups their average)."""
    check_real("clip_eps", clip_eps, low=0, low_open=True, high=1, high_open=True)
    if log_ratio.shape != advantages.shape:
        raise ValueError(f"advantages: expected the shape of log_ratio {tuple(log_ratio.shape)}, "
                         f"got {tuple(advantages.shape)}")
    s = torch.exp(log_ratio)
    return -torch.minimum(s * advantages,
                          s.clamp(1 - clip_eps, 1 + clip_eps) * advantages).mean()


def _rewards(trees: Trees, root, nodes, cfg: GTOConfig) -> torch.Tensor:
    judge = node_target_logits(root, nodes, trees.parents).float()
    probs = F.softmax(judge / cfg.reward_temperature, -1).gather(
        -1, trees.tokens[..., None])[..., 0]
    return draft_tree_reward(probs, trees.parents, eta=cfg.eta, aggregation=cfg.aggregation)


@torch.no_grad()
def tree_rewards(draft: EagleDraft, target, ids: torch.Tensor, config: GTOConfig | None = None,
                 *, anchors: torch.Tensor | None = None) -> torch.Tensor:
    """The draft tree reward ``r(G(M, x_{1:t}))`` of ``draft``'s trees at the draft prefix
    entries ``anchors`` (``B x A``; default every entry from ``min_context``) of ``ids``, with
    ``config``'s tree, aggregation and reward temperature: ``B x A``.  What GTO raises."""
    cfg = GTOConfig() if config is None else config
    B, n = ids.shape
    if anchors is None:
        anchors = torch.arange(cfg.min_context, n - 1, device=ids.device).expand(B, -1)
    hidden, _ = target_features(target, ids)
    trees = build_trees(DraftSession(draft, hidden[:, :n - 1], ids[:, 1:]), anchors, cfg.tree)
    root, nodes = target_tree_logits(target, ids, trees)
    return _rewards(trees, root, nodes, cfg)


def gto_loss(draft: EagleDraft, reference: EagleDraft, target, ids: torch.Tensor,
             config: GTOConfig | None = None, *, rng: np.random.Generator | None = None,
             features=None) -> tuple[torch.Tensor, dict]:
    """``L_GTO`` on the sequences ``ids`` (``B x n``), and diagnostics.

    Args:
        draft: the draft being trained (``M``).
        reference: the frozen Phase-I draft (``M_0``).
        target: the target causal LM.
        ids: training sequences.
        config: :class:`GTOConfig`.
        rng: NumPy generator of the group positions.
        features: ``(hidden, logits)`` of :func:`~optzoo.specdec.eagle.target_features`.

    Returns:
        ``(loss, stats)`` with ``stats``: ``reward`` and ``reward_ref`` (mean tree rewards),
        ``adv_abs`` (mean |A|), ``clip_frac``, ``log_ratio_abs``, ``accepted`` (mean greedy
        accepted length of the current trees), ``reward_gap_std`` (std of R).
    """
    cfg = GTOConfig() if config is None else config
    rng = np.random.default_rng(0) if rng is None else rng
    if ids.dim() != 2:
        raise ValueError(f"ids: expected B x n token ids, got shape {tuple(ids.shape)}")
    B, n = ids.shape
    P = n - 1
    hidden, _ = target_features(target, ids) if features is None else features
    anchors = torch.as_tensor(_anchors(B, P, cfg, rng), device=ids.device)
    A = anchors.shape[1]
    with torch.no_grad():
        trees = build_trees(DraftSession(draft, hidden[:, :P], ids[:, 1:]), anchors, cfg.tree)
        ref_trees = (build_trees(DraftSession(reference, hidden[:, :P], ids[:, 1:]), anchors,
                                 cfg.tree) if cfg.debias else None)
        both = trees if ref_trees is None else Trees(
            *(torch.cat([getattr(trees, f), getattr(ref_trees, f)], 1) for f in
              ("tokens", "parents", "depth", "scores", "anchors", "greedy_nodes")))
        root, nodes = target_tree_logits(target, ids, both)
        r = _rewards(trees, root[:, :A], nodes[:, :A], cfg)
        r_ref = (_rewards(ref_trees, root[:, A:], nodes[:, A:], cfg) if cfg.debias
                 else torch.zeros_like(r))
        R = r - r_ref
        adv = group_advantages(R, cfg.group_size if cfg.grouping else None, cfg.delta)
        acc, deepest = greedy_accepted(trees, root[:, :A], nodes[:, :A])
        length = torch.where(deepest >= 0, torch.gather(trees.depth, -1,
                                                        deepest.clamp(min=0)[..., None])[..., 0],
                             torch.zeros_like(deepest))
        # tokens of the accepted path by depth (the accepted nodes form exactly one path:
        # siblings carry distinct tokens); 0 beyond its length
        D = cfg.tree.depth
        path = torch.stack([(trees.tokens * (acc & (trees.depth == j + 1))).sum(-1)
                            for j in range(D)], -1)
        lp_ref = _path_logprob(DraftSession(reference, hidden[:, :P], ids[:, 1:]), anchors,
                               path, length)
    lp = _path_logprob(DraftSession(draft, hidden[:, :P], ids[:, 1:]), anchors, path, length)
    log_ratio = lp - lp_ref
    if cfg.ratio_norm == "geomean":
        log_ratio = log_ratio / length.clamp(min=1).to(log_ratio.dtype)
    loss = clipped_surrogate(log_ratio, adv, cfg.clip_eps)
    s = torch.exp(log_ratio)
    with torch.no_grad():
        clipped = ((s < 1 - cfg.clip_eps) | (s > 1 + cfg.clip_eps)).float().mean()
        stats = {"reward": float(r.mean()), "reward_ref": float(r_ref.mean()),
                 "adv_abs": float(adv.abs().mean()), "clip_frac": float(clipped),
                 "log_ratio_abs": float(log_ratio.abs().mean()),
                 "accepted": float(length.float().mean()),
                 "reward_gap_std": float(R.std()) if R.numel() > 1 else 0.0}
    return loss, stats


def gto_objective(draft: EagleDraft, reference: EagleDraft | None, target, ids: torch.Tensor,
                  config: GTOConfig | None = None, *, rng: np.random.Generator | None = None,
                  use_gto: bool = True) -> tuple[torch.Tensor, dict]:
    """Phase-II loss ``L_token + ω · L_GTO`` (``use_gto=False``: ``L_token`` alone, the
    token-level baseline trained for the same steps)."""
    cfg = GTOConfig() if config is None else config
    feats = target_features(target, ids)
    lt = token_loss(draft, target, ids, ttt_steps=cfg.ttt_steps, features=feats)
    stats = {"token_loss": float(lt.detach())}
    if not use_gto or cfg.omega == 0:
        return lt, stats
    if reference is None:
        raise ValueError("reference: GTO needs the frozen Phase-I draft")
    lg, st = gto_loss(draft, reference, target, ids, cfg, rng=rng, features=feats)
    stats.update(st, gto_loss=float(lg.detach()))
    return lt + cfg.omega * lg, stats
