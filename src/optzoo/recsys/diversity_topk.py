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
* Gradient scale (``normalize``).  The soft indicator's gradient is of order 1/(ε τ) on the
  items whose scores lie within ~ε of each other near rank k, so with ε = 1/n_items and
  τ = 0.5 ‖g_div‖ is ~200× ‖g_rel‖ on MovieLens-100K (issue 23).  MGDA on the raw gradients
  then picks the min-norm point next to the short vector: β* = 1 − O((a/b)²) ≈ 0.99998 and the
  diversity part of the step is ≈ 0.5 % of the relevance part — DDT is relevance-only
  fine-tuning.  The material read does not say how the paper balances the two scales (a
  search of the stored public pages found the abstract, the OpenReview page and the section
  note only); we take the standard remedy of MGDA for losses on different scales, unit-
  normalised gradients (Sener & Koltun, NeurIPS 2018, §3.2 and their ``l2`` normalisation):
  ``normalize="l2"`` (default) runs MGDA and the step on ĝ_rel = g_rel/‖g_rel‖ and
  ĝ_div = g_div/‖g_div‖, which is MGDA on the losses L_rel/‖g_rel‖ and L_div/‖g_div‖ (norms
  held constant).  For two objectives of equal norm the min-norm point is the bisector:
  β* = 1/2 exactly unless ρ = 1, so the adaptive β* of the paper's Lemma 3 is 1/2 at every
  step; the step β ĝ_rel + (1 − β) ĝ_div is a descent direction for both losses whenever
  ρ > −1 (Lemma 3's feasible interval contains 1/2 then).  ``normalize="none"`` is the literal
  formula on the raw gradients.  :func:`train` records both β* (applied and raw) per step.
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

import dataclasses
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
NORMALIZATIONS = ("l2", "none")
ZERO_GRAD = 1e-8  # relative norm below which a gradient counts as zero in normalised MGDA


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
        normalize: ``"l2"`` (MGDA and the step on unit-normalised gradients; module
            docstring, "Gradient scale") or ``"none"`` (raw gradients).
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
    normalize: str = "l2"

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
        if self.normalize not in NORMALIZATIONS:
            raise ValueError(f"normalize: expected one of {NORMALIZATIONS}, "
                             f"got {self.normalize!r}")


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
    the weight of g_rel in the min-norm convex combination β g_rel + (1 − β) g_div.

    Example:
        >>> import torch
        >>> from optzoo.recsys import mgda_beta
        >>> mgda_beta(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0]))  # orthogonal, equal
        0.5
        >>> mgda_beta(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 3.0]))  # weight the smaller
        0.9
    """
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


@dataclass(frozen=True)
class Balance:
    """How one DDT / MDR step combines the two gradients: the step is
    ``w_rel · g_rel + w_div · g_div`` (raw gradients).

    Args:
        beta: the applied β (MGDA's β* on the normalised gradients, or the fixed β).
        beta_raw: MGDA's β* on the raw gradients (the literal formula; recorded only).
        w_rel, w_div: the weights of the raw gradients, β·c_rel and (1 − β)·c_div.
        ratio: ‖g_div‖ / ‖g_rel‖ (with ``"l2"``, a round-off gradient counted as zero).
        cos: cos(g_rel, g_div) (ρ of Lemma 3; NaN when a gradient is zero).
        div_share: ‖w_div g_div‖ / ‖w_rel g_rel‖, the diversity part of the step relative to
            the relevance part (inf when the relevance part is zero).
    """

    beta: float
    beta_raw: float
    w_rel: float
    w_div: float
    ratio: float
    cos: float
    div_share: float


def balance(g_rel: torch.Tensor, g_div: torch.Tensor, normalize: str = "l2",
            beta: float | None = None) -> Balance:
    """MGDA's β* (paper Lemma 3 / Corollary 4) on the raw (``"none"``) or unit-normalised
    (``"l2"``, Sener & Koltun 2018) flattened gradients, or a fixed ``beta``, and the weights
    of the raw gradients in the step (module docstring, "Gradient scale").  With ``"l2"`` a
    zero gradient (no soft-rank tie on the batch) is left at zero and the step follows the
    other objective alone (β = 1 or 0); so is one below ``ZERO_GRAD`` (1e-8) of the other's
    norm.

    Example:
        >>> import torch
        >>> from optzoo.recsys import balance
        >>> g_rel, g_div = torch.tensor([1.0, 0.0]), torch.tensor([0.0, 200.0])  # scales differ
        >>> b = balance(g_rel, g_div)  # β* on unit-normalised gradients (the default "l2")
        >>> b.beta, round(b.beta_raw, 4), b.w_rel, b.w_div  # step: w_rel g_rel + w_div g_div
        (0.5, 1.0, 0.5, 0.0025)
        >>> balance(g_rel, g_div, beta=0.8).w_rel  # a fixed β
        0.8
    """
    if normalize not in NORMALIZATIONS:
        raise ValueError(f"normalize: expected one of {NORMALIZATIONS}, got {normalize!r}")
    g1, g2 = g_rel.reshape(-1).double(), g_div.reshape(-1).double()
    beta_raw = mgda_beta(g1, g2)  # checks shapes and finiteness
    a, b = float(g1.norm()), float(g2.norm())
    if normalize == "l2":
        # a gradient below ZERO_GRAD of the other's norm is round-off (a soft indicator
        # collapsed to ~e^-24, measured): unit-normalising it would step along noise
        a = 0.0 if a <= ZERO_GRAD * b else a
        b = 0.0 if b <= ZERO_GRAD * a else b
    cos = float(g1 @ g2) / (a * b) if a > 0 and b > 0 else math.nan
    c1, c2 = (1.0 / a if a > 0 else 1.0, 1.0 / b if b > 0 else 1.0) if normalize == "l2" \
        else (1.0, 1.0)
    if beta is not None:
        bt = float(beta)
    elif normalize == "l2" and (a == 0.0) != (b == 0.0):
        bt = 1.0 if b == 0.0 else 0.0
    else:
        bt = mgda_beta(c1 * g1, c2 * g2)
    w1, w2 = bt * c1, (1.0 - bt) * c2
    if normalize == "l2":  # a zeroed gradient takes no part in the step
        w1, w2 = (w1 if a > 0 else 0.0), (w2 if b > 0 else 0.0)
    part1, part2 = w1 * a, w2 * b
    share = part2 / part1 if part1 > 0 else (math.inf if part2 > 0 else 0.0)
    return Balance(bt, beta_raw, w1, w2, b / a if a > 0 else math.inf, cos, share)


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
        Per step (NaN where it does not apply): ``"rel"`` the relevance loss (NaN for MDR),
        ``"div"`` the soft DDRO of the step's users, and the :class:`Balance` of the step:
        ``"beta"`` (applied), ``"beta_raw"`` (MGDA on the raw gradients), ``"grad_ratio"``
        ‖g_div‖ / ‖g_rel‖, ``"cos"`` and ``"div_share"`` (for MDR: of the gradients with
        respect to the pair weights ε, see :func:`mdr_meta_gradient`).
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
    hist: dict[str, list[float]] = {key: [] for key in ("rel", "div", *_BALANCE_KEYS)}
    for step in range(1, steps + 1):
        u, i, t = _relevance_batch(data, s, g)
        if method == "relevance":
            opt.zero_grad()
            loss = relevance_loss(model(u, i), t)
            loss.backward()
            for key in _BALANCE_KEYS:
                hist[key].append(math.nan)
            hist["div"].append(math.nan)
        elif method == "ddt":
            users = _diversity_users(data, s, g)
            loss = relevance_loss(model(u, i), t)
            div = ddro(model(users), data.seen[users], sim, s)
            g_rel = torch.autograd.grad(loss, params, allow_unused=True)
            g_div = torch.autograd.grad(-div, params, allow_unused=True)
            bal = balance(_flat(g_rel, params), _flat(g_div, params), s.normalize, beta)
            for p, a1, a2 in zip(params, g_rel, g_div, strict=True):
                a1 = torch.zeros_like(p) if a1 is None else a1
                a2 = torch.zeros_like(p) if a2 is None else a2
                p.grad = bal.w_rel * a1 + bal.w_div * a2
            _record(hist, bal)
            hist["div"].append(float(div.detach()))
        else:
            bal, div = _mdr_step(model, data, sim, s, g, u, i, t, opt, beta)
            loss = torch.tensor(math.nan)
            _record(hist, bal)
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


_BALANCE_KEYS = ("beta", "beta_raw", "grad_ratio", "cos", "div_share")


def _record(hist: dict[str, list[float]], bal: Balance) -> None:
    for key in _BALANCE_KEYS:
        hist[key].append(getattr(bal, key if key != "grad_ratio" else "ratio"))


def mdr_meta_gradient(model: nn.Module, batch, meta_batch, users: torch.Tensor,
                      seen: torch.Tensor, similarity: torch.Tensor, settings: DiversitySettings,
                      beta: float | None = None) -> tuple[torch.Tensor, Balance, float]:
    """MDR's meta-gradient (learning to reweight, Ren et al. 2018; paper §4.2): with per-pair
    weights ε (zero) on the relevance batch, Θ'(ε) = Θ − η ∇_Θ Σ_j ε_j ℓ_j(Θ) and

        ∂/∂ε [ w_rel · L_rel(Θ'; meta batch) + w_div · (−DDRO(Θ'; users)) ]  at ε = 0,

    the weights w of :func:`balance` (MGDA's β*, on normalised gradients by default) from the
    gradients with respect to Θ at ε = 0 (where Θ' = Θ, so they are ∇L(Θ)).

    Args:
        model: the backbone.
        batch: ``(users, items, targets)`` of the relevance batch (the pairs to weight).
        meta_batch: ``(users, items, targets)`` of the meta objective's relevance term.
        users: the meta objective's diversity users; seen: ``n_users x n_items`` mask.
        similarity: item affinity S; settings: ``mdr_eta`` (η), ``normalize`` and the DDRO
            settings.
        beta: a fixed β instead of MGDA's β*.

    Returns:
        ``(∂L_JOINT/∂ε, balance, DDRO at Θ)``; the balance's ``div_share`` is that of the two
        terms' gradients with respect to ε.
    """
    u, i, t = batch
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    params = [p for p in model.parameters() if p.requires_grad]
    eps = torch.zeros(u.numel(), dtype=params[0].dtype, requires_grad=True)
    per = (model(u, i) - t) ** 2
    grads = torch.autograd.grad((eps * per).sum(), params, create_graph=True, allow_unused=True)
    virtual = {n: p - settings.mdr_eta * (gr if gr is not None else torch.zeros_like(p))
               for n, p, gr in zip(names, params, grads, strict=True)}
    u2, i2, t2 = meta_batch
    rel2 = relevance_loss(functional_call(model, virtual, (u2, i2)), t2)
    div2 = ddro(functional_call(model, virtual, (users,)), seen[users], similarity, settings)
    d_rel = torch.autograd.grad(rel2, [*params, eps], retain_graph=True, allow_unused=True)
    d_div = torch.autograd.grad(-div2, [*params, eps], allow_unused=True)
    bal = balance(_flat(d_rel[:-1], params), _flat(d_div[:-1], params), settings.normalize,
                  beta)
    e_rel = d_rel[-1] if d_rel[-1] is not None else torch.zeros_like(eps)
    e_div = d_div[-1] if d_div[-1] is not None else torch.zeros_like(eps)
    part1, part2 = float((bal.w_rel * e_rel).norm()), float((bal.w_div * e_div).norm())
    share = part2 / part1 if part1 > 0 else (math.inf if part2 > 0 else 0.0)
    geps = (bal.w_rel * e_rel + bal.w_div * e_div).detach()
    return geps, dataclasses.replace(bal, div_share=share), float(div2.detach())


def _mdr_step(model, data, sim, s, g, u, i, t, opt, beta) -> tuple[Balance, float]:
    """One learning-to-reweight step (module docstring); returns (balance, DDRO at Θ)."""
    params = [p for p in model.parameters() if p.requires_grad]
    meta = _relevance_batch(data, s, g)
    users = _diversity_users(data, s, g)
    geps, bal, div = mdr_meta_gradient(model, (u, i, t), meta, users, data.seen, sim, s, beta)
    w = torch.clamp(-geps, min=0.0)
    w = w / w.max() if float(w.max()) > 0 else torch.ones_like(w)
    opt.zero_grad()
    relevance_loss(model(u, i), t, w).backward()
    for p in params:
        if p.grad is not None and not torch.isfinite(p.grad).all():
            raise FloatingPointError("MDR step: non-finite gradient")
    opt.step()
    return bal, div


@torch.no_grad()
def score_all(model: nn.Module, n_users: int, batch: int = 1024) -> torch.Tensor:
    """``n_users x n_items`` scores of every user."""
    out = [model(torch.arange(a, min(a + batch, n_users))) for a in range(0, n_users, batch)]
    return torch.cat(out)
