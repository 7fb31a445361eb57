"""Differentiable top-k diversity: DDRO, MGDA-balanced direct tuning (DDT) and meta-diversity
reweighting (MDR) of Zhou, Dalleiger, Calikus & Gionis, "Gradient-Based Diversity Optimization
with Differentiable Top-k Objective" (ICLR 2026, OpenReview cuzWopwoZG).  No official code.

Objective (paper §3).  With item affinity S (genre Jaccard, fixed), a user's scores r̃_u and its
top-k indicator l_u,

    D_S(Z_u(k)) = 2/(k(k−1)) Σ_{i<j} l_u(i) l_u(j) (1 − S_ij)                 (DRO, hard)

is the mean pairwise dissimilarity of the top-k set.  DDRO (paper Eq. 5) replaces l_u by
l̃_u(i) = σ_τ(k − z̃_u(i)) with z̃_u = softrank_ε(r̃_u) (:mod:`optzoo.recsys.soft_rank`).
L_div = −DDRO, L_rel = MSE, L_JOINT(β) = β L_rel + (1 − β) L_div.

Adaptive β (paper Lemma 3, Corollary 4): with a = ‖g_rel‖, b = ‖g_div‖, ρ = cos(g_rel, g_div),
β* = b(b − aρ)/(a² + b² − 2abρ), the min-norm point of the segment [g_div, g_rel] (two-task
MGDA), which equalises the first-order decreases of both losses.

DDT (paper §4.1, Alg. 1): per minibatch compute L_rel and DDRO, both gradients, β*, and step
on L_JOINT(β*) — from scratch or as fine-tuning of a trained relevance model.
MDR (paper §4.2): relevance-only loss with per-pair weights w_ui ∈ [0, 1] set by a meta step.

Readings (the brief marks them INFERRED; a search of the stored public pages found only the
abstract/TL;DR, the OpenReview page and the same section note, nothing more specific):

* D_S sums over unordered pairs (the transcribed double sum counts each pair twice) and
  1 − S_ii = 0 (S_ii = 1 for every item).
* Soft ranks: Blondel et al.'s entropic ("kl") projection, descending (rank 1 = top score),
  ε = ``eps_times_n`` / n with n the number of ranked items (paper: ε = 1/n); τ = 0.5 rank units.
* Candidate pool (brief's pitfall on the O(n²) pair term): per user the ``pool`` best items not
  in the user's training set by the current, detached scores; soft ranks and pairs are over the
  pool only (items outside it get no diversity gradient).  n in ε = 1/n is the catalogue size
  n_items: with n = pool, the close scores within a pool give near-constant soft ranks and a
  vanishing indicator (measured on MovieLens-100K: DDRO ≈ 1e-15), against the paper's
  "ε = 1/n gives near-zero rank error".  With ``pool = n_items`` the projection is exact over
  the whole catalogue (slower: PAV runs in Python).
* β* is clipped to [0, 1] and computed on the full flattened gradient of all parameters
  (embedding tables included); equal gradients give β* = 1/2.
* L_rel: MSE on ratings / 5 plus ``negatives`` sampled unobserved (user, item) pairs per rating
  with target 0.  DEVIATION: the paper uses MSE on observed ratings only; on the full catalogue
  that makes MF a rating predictor that ranks rarely-rated items first, so top-10 accuracy is
  near zero; the sampled zeros make the model rank the catalogue (``negatives=0`` gives the
  paper's loss).
* MDR weight parameterisation: free per-pair weights by learning to reweight (Ren et al. 2018):
  ε_ui = 0, Θ' = Θ − η ∇_Θ Σ ε_ui ℓ_ui, w̃ = max(0, −∂L_JOINT(Θ')/∂ε), w = w̃ / max w̃ (all
  zero → w = 1), then one real step on mean(w ℓ).  The meta objective uses β* of the current
  Θ (MGDA, as DDT) on a second relevance batch and the diversity users of the step; all pairs of
  the relevance batch (sampled zeros too) are weighted.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.func import functional_call

from optzoo.checks import check_int, check_real
from optzoo.recsys.data import RatingsData
from optzoo.recsys.soft_rank import REGULARIZATIONS, hard_rank, soft_rank, soft_topk_indicator

METHODS = ("relevance", "ddt", "mdr")


@dataclass(frozen=True)
class TrainSet:
    """Training pairs on the model's target scale and the users' seen items.

    Args:
        users, items: ``N`` observed pairs.
        targets: ``N`` targets (ratings / ``rating_scale``).
        seen: ``n_users x n_items`` boolean, true where a pair is in training.
    """

    users: torch.Tensor
    items: torch.Tensor
    targets: torch.Tensor
    seen: torch.Tensor

    @classmethod
    def from_ratings(cls, data: RatingsData, train_mask: np.ndarray,
                     rating_scale: float = 5.0) -> TrainSet:
        m = np.asarray(train_mask, dtype=bool)
        if m.shape != data.users.shape:
            raise ValueError(f"train_mask: expected shape {data.users.shape}, got {m.shape}")
        seen = torch.zeros(data.n_users, data.n_items, dtype=torch.bool)
        u, i = torch.as_tensor(data.users[m]), torch.as_tensor(data.items[m])
        seen[u, i] = True
        return cls(u, i, torch.as_tensor(data.ratings[m] / rating_scale, dtype=torch.float32),
                   seen)

    @property
    def n_users(self) -> int:
        return int(self.seen.shape[0])

    @property
    def n_items(self) -> int:
        return int(self.seen.shape[1])


@dataclass(frozen=True)
class DiversitySettings:
    """Settings of the diversity term and of the training steps.

    Args:
        k: top-k size.
        pool: candidate pool per user (soft ranks and pairs are over it).
        eps_times_n: ε = eps_times_n / n_items (paper: ε = 1/n, n the number of ranked items).
        tau: temperature of the soft indicator, in rank units.
        regularization: ``"kl"`` (the paper's entropic projection) or ``"l2"``.
        straight_through: hard top-k indicator forward, soft gradient backward (the ablation).
        div_users: users per step in the diversity term.
        batch_size: observed ratings per step in the relevance term.
        negatives: sampled unobserved pairs (target 0) per rating.
        mdr_eta: MDR's virtual step size η.
    """

    k: int = 10
    pool: int = 50
    eps_times_n: float = 1.0
    tau: float = 0.5
    regularization: str = "kl"
    straight_through: bool = False
    div_users: int = 64
    batch_size: int = 1024
    negatives: int = 1
    mdr_eta: float = 0.1

    def __post_init__(self) -> None:
        for name in ("k", "pool", "div_users", "batch_size", "negatives"):
            check_int(name, getattr(self, name))
        for name in ("eps_times_n", "tau", "mdr_eta"):
            check_real(name, getattr(self, name), low=0.0, low_open=True)
        for name in ("k", "div_users", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: expected an integer >= 1, got {getattr(self, name)}")
        if self.k < 2:
            raise ValueError(f"k: expected >= 2 (pairs), got {self.k}")
        if self.pool < self.k:
            raise ValueError(f"pool: expected >= k = {self.k}, got {self.pool}")
        if self.negatives < 0:
            raise ValueError(f"negatives: expected >= 0, got {self.negatives}")
        for name in ("eps_times_n", "tau", "mdr_eta"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: expected a positive number, got {getattr(self, name)}")
        if self.regularization not in REGULARIZATIONS:
            raise ValueError(f"regularization: expected one of {REGULARIZATIONS}, "
                             f"got {self.regularization!r}")


# -- the objective -----------------------------------------------------------------------------

def pairwise_diversity(indicator: torch.Tensor, dissimilarity: torch.Tensor,
                       k: int) -> torch.Tensor:
    """2/(k(k−1)) Σ_{i<j} l_i l_j d_ij per row, with d = 1 − S (zero diagonal).

    Args:
        indicator: ``users x n`` (soft or hard) top-k indicator l.
        dissimilarity: ``users x n x n`` (or ``n x n``) matrix 1 − S over the same items.
        k: the k of the normalisation.
    """
    quad = torch.einsum("ui,uij,uj->u", indicator, dissimilarity.expand(
        indicator.shape[0], -1, -1), indicator)
    return quad / (k * (k - 1))


def ddro(scores: torch.Tensor, seen: torch.Tensor, similarity: torch.Tensor,
         settings: DiversitySettings) -> torch.Tensor:
    """Mean over the rows of DDRO (soft top-k diversity, paper Eq. 5) on each row's pool.

    Args:
        scores: ``users x n_items`` scores r̃ (differentiable).
        seen: ``users x n_items`` boolean; seen items are not candidates.
        similarity: ``n_items x n_items`` item affinity S.
        settings: k, pool, ε, τ, regulariser, straight-through switch.
    """
    if scores.shape != seen.shape:
        raise ValueError(f"seen: expected shape {tuple(scores.shape)}, got {tuple(seen.shape)}")
    pool = min(settings.pool, scores.shape[1])
    masked = scores.detach().masked_fill(seen, -torch.inf)
    idx = torch.topk(masked, pool, dim=1).indices
    theta = scores.gather(1, idx)
    # ε = 1/n with n the number of ranked items (the catalogue), not the pool: the pool only
    # saves work; ε = 1/pool would smooth the pool's close scores into near-constant ranks
    ranks = soft_rank(theta, settings.eps_times_n / scores.shape[1], settings.regularization)
    lt = soft_topk_indicator(ranks, settings.k, settings.tau)
    if settings.straight_through:
        hard = (hard_rank(theta.detach()) <= settings.k).to(lt.dtype)
        lt = hard + lt - lt.detach()
    d = 1.0 - similarity.to(scores.dtype)[idx[:, :, None], idx[:, None, :]]
    return pairwise_diversity(lt, d, settings.k).mean()


def hard_topk_diversity(scores: torch.Tensor, seen: torch.Tensor, similarity: torch.Tensor,
                        k: int) -> torch.Tensor:
    """Mean over the rows of D_S of the hard top-k unseen items (DRO; = ILD@k)."""
    idx = torch.topk(scores.detach().masked_fill(seen, -torch.inf), k, dim=1).indices
    d = 1.0 - similarity.to(scores.dtype)[idx[:, :, None], idx[:, None, :]]
    return pairwise_diversity(torch.ones_like(idx, dtype=scores.dtype), d, k).mean()


def mgda_beta(g_rel: torch.Tensor, g_div: torch.Tensor) -> float:
    """β* = b(b − aρ)/(a² + b² − 2abρ), clipped to [0, 1] (paper Lemma 3 / Corollary 4):
    the weight of g_rel in the min-norm convex combination β g_rel + (1 − β) g_div."""
    g1, g2 = g_rel.reshape(-1).double(), g_div.reshape(-1).double()
    if g1.shape != g2.shape:
        raise ValueError(f"g_div: expected {g1.numel()} entries like g_rel, got {g2.numel()}")
    if not (torch.isfinite(g1).all() and torch.isfinite(g2).all()):
        raise ValueError("g_rel, g_div: expected finite gradients (got NaN or inf)")
    diff = g1 - g2
    den = float(diff @ diff)
    if den <= 1e-300:
        return 0.5
    return float(min(1.0, max(0.0, float((g2 - g1) @ g2) / den)))


def relevance_loss(pred: torch.Tensor, targets: torch.Tensor,
                   weights: torch.Tensor | None = None) -> torch.Tensor:
    """Mean (weighted) squared error."""
    err = (pred - targets) ** 2
    return err.mean() if weights is None else (weights * err).mean()


# -- batches -----------------------------------------------------------------------------------

def _relevance_batch(data: TrainSet, s: DiversitySettings, g: torch.Generator):
    idx = torch.randint(0, data.users.numel(), (s.batch_size,), generator=g)
    u, i, t = data.users[idx], data.items[idx], data.targets[idx]
    if s.negatives:
        nu = u.repeat(s.negatives)
        ni = torch.randint(0, data.n_items, (nu.numel(),), generator=g)
        keep = ~data.seen[nu, ni]  # a sampled pair that was rated is not a negative
        u = torch.cat([u, nu[keep]])
        i = torch.cat([i, ni[keep]])
        t = torch.cat([t, torch.zeros(int(keep.sum()))])
    return u, i, t


def _diversity_users(data: TrainSet, s: DiversitySettings, g: torch.Generator) -> torch.Tensor:
    n = min(s.div_users, data.n_users)
    return torch.randperm(data.n_users, generator=g)[:n]


def _flat(grads, params) -> torch.Tensor:
    return torch.cat([(gr if gr is not None else torch.zeros_like(p)).reshape(-1)
                      for gr, p in zip(grads, params, strict=True)])


# -- training ----------------------------------------------------------------------------------

def train(model: nn.Module, data: TrainSet, similarity: torch.Tensor, steps: int, *,
          method: str = "ddt", beta: float | None = None,
          settings: DiversitySettings | None = None,
          optimizer: torch.optim.Optimizer | None = None, lr: float = 1e-3,
          generator: torch.Generator | None = None,
          callback: Callable[[int, nn.Module], None] | None = None) -> dict[str, list[float]]:
    """Run ``steps`` minibatch steps of relevance-only training, DDT or MDR.

    Args:
        model: maps ``(users, items)`` to scores and ``(users,)`` to ``users x n_items``.
        data: training pairs and seen mask.
        similarity: ``n_items x n_items`` item affinity S (fixed, model-independent).
        steps: number of optimizer steps.
        method: ``"relevance"`` (L_rel), ``"ddt"`` (L_JOINT) or ``"mdr"`` (reweighted L_rel).
        beta: fixed β of L_JOINT (the fixed-β scalarisation); ``None`` uses MGDA's β*.
        settings: diversity and batch settings.
        optimizer: defaults to Adam(lr) on the model's parameters.
        generator: the batches' random source.
        callback: called as ``callback(step, model)`` after every step (1-based).

    Returns:
        ``{"beta": [...], "rel": [...], "div": [...], "grad_ratio": [...]}`` per step: β of the
        step (NaN for relevance-only), the relevance loss, the soft DDRO of the step's users (NaN
        for relevance-only) and, for DDT, ‖g_div‖ / ‖g_rel‖.
    """
    if method not in METHODS:
        raise ValueError(f"method: expected one of {METHODS}, got {method!r}")
    if steps < 0:
        raise ValueError(f"steps: expected an integer >= 0, got {steps}")
    if beta is not None and not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta: expected a number in [0, 1] or None, got {beta}")
    s = settings or DiversitySettings()
    g = generator or torch.Generator().manual_seed(0)
    opt = optimizer or torch.optim.Adam(model.parameters(), lr=lr)
    params = [p for p in model.parameters() if p.requires_grad]
    sim = torch.as_tensor(similarity, dtype=torch.float32)
    hist: dict[str, list[float]] = {"beta": [], "rel": [], "div": [], "grad_ratio": []}
    for step in range(1, steps + 1):
        u, i, t = _relevance_batch(data, s, g)
        if method == "relevance":
            opt.zero_grad()
            loss = relevance_loss(model(u, i), t)
            loss.backward()
            hist["beta"].append(math.nan)
            hist["div"].append(math.nan)
        elif method == "ddt":
            users = _diversity_users(data, s, g)
            loss = relevance_loss(model(u, i), t)
            div = ddro(model(users), data.seen[users], sim, s)
            g_rel = torch.autograd.grad(loss, params, allow_unused=True)
            g_div = torch.autograd.grad(-div, params, allow_unused=True)
            f_rel, f_div = _flat(g_rel, params), _flat(g_div, params)
            b = mgda_beta(f_rel, f_div) if beta is None else beta
            hist["grad_ratio"].append(float(f_div.norm() / f_rel.norm().clamp_min(1e-30)))
            for p, a1, a2 in zip(params, g_rel, g_div, strict=True):
                a1 = torch.zeros_like(p) if a1 is None else a1
                a2 = torch.zeros_like(p) if a2 is None else a2
                p.grad = b * a1 + (1.0 - b) * a2
            hist["beta"].append(b)
            hist["div"].append(float(div.detach()))
        else:
            b, div = _mdr_step(model, data, sim, s, g, u, i, t, opt, beta)
            loss = torch.tensor(math.nan)
            hist["beta"].append(b)
            hist["div"].append(div)
        if method != "mdr":
            for p in params:
                if p.grad is not None and not torch.isfinite(p.grad).all():
                    raise FloatingPointError(f"step {step}: non-finite gradient in {method}")
            opt.step()
        hist["rel"].append(float(loss.detach()))
        if callback is not None:
            callback(step, model)
    return hist


def _mdr_step(model, data, sim, s, g, u, i, t, opt, beta) -> tuple[float, float]:
    """One learning-to-reweight step (module docstring); returns (β, DDRO at Θ)."""
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    params = [p for p in model.parameters() if p.requires_grad]
    eps = torch.zeros(u.numel(), requires_grad=True)
    per = (model(u, i) - t) ** 2
    grads = torch.autograd.grad((eps * per).sum(), params, create_graph=True, allow_unused=True)
    virtual = {n: p - s.mdr_eta * (gr if gr is not None else torch.zeros_like(p))
               for n, p, gr in zip(names, params, grads, strict=True)}
    u2, i2, t2 = _relevance_batch(data, s, g)
    users = _diversity_users(data, s, g)
    rel2 = relevance_loss(functional_call(model, virtual, (u2, i2)), t2)
    div2 = ddro(functional_call(model, virtual, (users,)), data.seen[users], sim, s)
    # at ε = 0, Θ' = Θ: the gradients w.r.t. Θ through Θ' are ∇L(Θ), so β* comes for free
    d_rel = torch.autograd.grad(rel2, [*params, eps], retain_graph=True, allow_unused=True)
    d_div = torch.autograd.grad(-div2, [*params, eps], allow_unused=True)
    if beta is None:
        b = mgda_beta(_flat(d_rel[:-1], params), _flat(d_div[:-1], params))
    else:
        b = beta
    geps = b * d_rel[-1] + (1.0 - b) * d_div[-1]
    w = torch.clamp(-geps.detach(), min=0.0)
    w = w / w.max() if float(w.max()) > 0 else torch.ones_like(w)
    opt.zero_grad()
    relevance_loss(model(u, i), t, w).backward()
    for p in params:
        if p.grad is not None and not torch.isfinite(p.grad).all():
            raise FloatingPointError("MDR step: non-finite gradient")
    opt.step()
    return b, float(div2.detach())


@torch.no_grad()
def score_all(model: nn.Module, n_users: int, batch: int = 1024) -> torch.Tensor:
    """``n_users x n_items`` scores of every user."""
    out = [model(torch.arange(a, min(a + batch, n_users))) for a in range(0, n_users, batch)]
    return torch.cat(out)
