"""Reproduction ``steepest-mirror-flows``: Jacobs, Zhou & Burkholz, "Never Saddle for
Reparameterized Steepest Descent as Mirror Flow" (ICLR 2026, OpenReview YgudIlQ9nC).

Five experiments, the brief's small-scale reproduction items (1)-(5), all on CPU:

1. ``escape`` -- saddle escape in sparse regression ``f(x) = ‖Ax - y‖²/(2n)``, ``A`` Gaussian
   ``n x k`` (k = 300, n = 100), 5-sparse positive target in [1, 2], model ``x = Π_{i≤L} w_i``
   (:class:`~optzoo.optim.mirror_flow.DeepDiagonal`), inits "saddle" (``w_1 = 0``,
   ``w_{i≥2} = λ``) and "balanced" (``w_i = α₀``), steepest descent with q ∈ {1, 1.5, 2} at a
   fixed small lr (1e-3), no weight decay.  Escape = first step with loss < 10 % of the initial
   loss; runs that do not escape within the budget are censored at the budget (their means are
   lower bounds).  Escape is compared in continuous time ``t = lr × steps`` (the flow's time;
   at a shared lr it orders like steps).  A ``gd_large`` method (q = 2 at a larger lr) tests
   "only a large lr rescues GD": within the same step budget, and at equal continuous time
   against SignGD at the small lr.
2. ``mirror`` -- ``x = u ⊙ v`` trained by steepest descent at small lr versus the integrated
   steepest mirror flow ``d∇R(x)/dt = -sign(∇f)|∇f|^{q-1}``, ``∇²R = 1/sqrt(4|x|^q + λ²)``
   (:func:`~optzoo.optim.mirror_flow.integrate_mirror_flow`; for q < 2 the sign is regularised
   as ``tanh(g/ε)``, ε = 1e-4, to integrate through the sliding regime).  Time = lr x steps.
3. ``balance`` -- the same model with weight decay α: decoupled (AdamW-like) sign descent and GD,
   coupled (Adam + L2-like) sign descent, and no decay.  Measured per coordinate: the largest
   deviation over time of ``r_i(t) = (|u_i|^q - |v_i|^q)_t / (|u_i|^q - |v_i|^q)_0`` from the
   law ``exp(-qαt)`` (Lemma 4.4); the law is judged at a high quantile of the coordinates, the
   worst coordinate is reported beside it.
4. ``sparsity`` -- sparse regression (k = 60, n = 25, 3-sparse target) with balanced
   ``x = Π w_i``, L ∈ {2, 4, 8}, run to (approximate) convergence with a cosine-decayed lr:
   sign descent with decoupled vs coupled weight decay, and GD + WD (coupled = decoupled for
   q = 2).  Measured: effective number of nonzeros ``(‖x‖_1/‖x‖_2)²``, relative error to the
   target, collapse (``‖x‖ < 0.1‖x*‖``).
5. ``finetune`` -- proxy of the paper's fine-tuning table on scikit-learn digits: an MLP
   (64-64-64, ReLU) pretrained with Adam on classes 0-4, fine-tuned (all layers) on classes 5-9
   with a new zero-initialised linear head or a zero-initialised product head ``B·A`` (``B = 0``,
   ``A`` small random: the ``w_1 = 0, w_2 = λ`` saddle init); SGD, Adam and SignSGD at the
   small lr 1e-3 versus SGD with the lr chosen from a fixed grid by mean validation accuracy
   ("tuned large-lr SGD").  Metric: validation accuracy (%).

Deviations from the paper (whose exact lrs, budgets and fine-tuning data were not retrieved):
the escape threshold, budgets and grids are ours; the fine-tuning study is a digits proxy of
ResNet/ViT/BERT fine-tuning; experiment (4) is the reduced form of the paper's ResNet-50 /
regression sparsity study; the sparse classification (k = 80) and Hessian-eigenvalue studies are
not reproduced.

Verdicts (issue 18).  Every claim is decided by a named test of
:mod:`optzoo.experiment.verdicts`, paired by seed (every experiment draws its problem from the
seed, so the cells of a seed share it).  Escape comparisons are per (depth, init, scale) cell.
A *censored* comparison -- every run of both sides at the budget (escape steps) or at 0 % /
100 % escaped in every run (fractions) -- cannot show an order that lies beyond the budget:
that cell is *inconclusive* (``not_acting``), except in the slow-start claim, whose text names
the loss at the budget as the tie-break.  Rules that changed (old → new):

* escape order (q): means ordered with ``≤`` (a tie at the budget passed) → paired log-ratio
  ``superior`` per consecutive q pair with ``min_escape_ratio``; censored pairs inconclusive.
* gap grows with depth: "both 0 %" counted as consistent → paired ``superior`` of the escaped
  fraction (shallowest − deepest) per q > 1 with ``min_effect_frac``; saturated pairs
  inconclusive; SignGD "every run" is an exact count (``bound_holds``).
* large lr rescues GD: fraction ``>`` → paired ``superior`` with ``min_effect_frac``.
* GD blow-up (full only): ratio of means ``> 2×`` → paired log-ratio ``superior`` of the
  per-seed ratios with ``min_effect = log blowup_factor``.
* slow start: mean steps (ties broken by mean loss) → paired ``superior`` on steps (log ratio)
  or, where both depths are censored, on the loss at the budget with ``min_effect_loss``.
* mirror flow, balance, coupled "no law": unchanged worst-case rules, now ``bound_holds``
  (balance and "no law" judged at a quantile of coordinates since issue 20, below).
* sparsity vs depth: comparisons of means with no CI → paired ``superior`` with
  ``min_effect_nnz``; coupled "at least as sparse" → ``noninferior`` with ``margin_nnz``, or
  collapsed in most runs (``within``), combined with Holm's ``any_of``.
* fine-tuning (**the defect named in issue 18**): "paired CI of Adam − tuned SGD reaches ≥ 0"
  passed whenever the variance was large → ``noninferior`` with the fixed ``ft_margin``; the
  stall part ("≥ 10 points") → ``superior`` with ``ft_min_stall``; the SGD lr is picked by
  ``tune`` and the comparison is ``guard``-ed (grid edge).  The tuning budgets are unequal by
  the claim's design (Adam at one fixed small lr against SGD tuned on a grid -- the paper's
  table); the difference favours the baseline, so that guard is not applied
  (``equal_budget=False``) and the budgets are recorded.

Issue 20 (old → new):

* partly censored escape comparisons (some runs at the budget) are guarded by ``censored``:
  a censored time is a lower bound, so it cannot decide in the direction the cap favours (the
  full run had "q = 1.5 before q = 2 at L = 4" *not held* with q = 2 censored in every run);
  the same for the blow-up ratios;
* escape times are compared at equal continuous time ``lr × steps`` (``_escape_times``); the
  large-lr rescue claim, which compared escaped fractions of GD at lr 3e-2 and 1e-3 within the
  same step *count* (30× more flow time for the large lr), now also asks the paper's point --
  the large lr is a time rescaling: at equal continuous time SignGD at the small lr escapes
  ≥ ``min_escape_ratio``× earlier than GD at the large lr (log-ratio ``superior``, ``censored``
  guard);
* balance law: judged on the worst coordinate over all coordinates (one coordinate chattering
  across 0 decided it) → on the ``balance_quantile`` of the per-coordinate worst deviations
  (``bound_holds`` in every seed); "no law" under coupled decay on the ``no_law_quantile``
  (was: the worst coordinate, so one deviating coordinate sufficed); the worst coordinate is
  reported in both;
* fine-tuning (both heads, the adapter included): the ``noninferior`` test with the declared
  ``ft_margin`` of issue 18 is kept; its tests feed a high-variance tie.

Verdict margins (preset fields, the same in every preset, fixed before results were seen):

* ``min_escape_ratio = 1.2``: "escapes faster" needs ≥ 20 % fewer steps; smaller gaps are of
  the size of the escape threshold's discretisation (10 % of the initial loss, one step of lr).
* ``min_effect_frac = 0.2``: a change of the escaped fraction counts from 20 points (at 3-5
  seeds, one run).
* ``min_effect_loss = 0.05``: a difference of the loss at the budget counts from 5 % of the
  initial loss (half the 10 % escape threshold).
* ``blowup_factor = 2.0``: the claim's own "more than twice SignGD's ratio".
* ``mirror_tol = balance_tol = 0.05``, ``no_law = 0.2``: the brief's "< 5 %" and the module's
  "no such law = above 20 %" (unchanged thresholds).
* ``balance_quantile = 0.9``: the law must hold for 90 % of the coordinates (Thm 4.6 is an
  "almost everywhere" statement: the coordinates whose factor is driven to 0 leave it, and
  sign descent chatters there); ``no_law_quantile = 0.5``: "no law" must hold for the typical
  (median) coordinate, not for one outlier.
* ``min_effect_nnz = margin_nnz = 1.0``: one effective nonzero, a third of the 3-sparse
  target's support -- less is not a difference in sparsity.
* ``ft_min_stall = 10.0``: the claim's "at least 10 accuracy points".
* ``ft_margin = 1.0``: one accuracy point; the paper's Adam-over-tuned-SGD gaps are 0.2-1.6
  points on CIFAR-10 / MRPC, so a deficit above one point would reverse its table.

Read top to bottom: config and presets, trial expansion, one trial per experiment, summary.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from optzoo.errors import ConfigError
from optzoo.experiment import (
    Claim,
    Figure,
    Preset,
    Reproduction,
    Result,
    Summary,
    Table,
    Trial,
    aggregate,
    fmt_ci,
    mean_ci,
)
from optzoo.experiment.verdicts import (
    Verdict,
    all_of,
    any_of,
    bound_holds,
    by_seed,
    censored,
    downgrade,
    guard,
    noninferior,
    not_acting,
    superior,
    tune,
    undecided,
    within,
)
from optzoo.optim.mirror_flow import DeepDiagonal, HadamardProduct, integrate_mirror_flow
from optzoo.optim.steepest_descent import SignSGD, SteepestDescent
from optzoo.report.figures import category_panel, line_panel, save
from optzoo.report.figures import grid as panel_grid  # `grid` names lr grids here

SLUG = "steepest-mirror-flows"

ESCAPE_FRACTION = 0.1        # escape: loss below 10 % of its initial value
MIRROR_TOL = 0.05            # brief item (2): < 5 % relative error
BALANCE_TOL = 0.05           # the balance law holds within 5 %
NO_LAW = 0.2                 # coupled decay: "no such law" = deviation above 20 %
COLLAPSE = 0.1               # ‖x‖ < 10 % of ‖x*‖
SIGN_EPS = 1e-4              # tanh regularisation of sign in the mirror ODE


# -- configuration ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SteepestConfig(Preset):
    """Settings of the steepest-mirror-flows reproduction.

    Args:
        seeds: seeds per cell.
        escape_k, escape_n, escape_s: dimension, samples, sparsity of the escape regression.
        escape_depths: depths L of ``x = Π w_i``.
        escape_qs: steepest-descent exponents q.
        escape_saddle: λ values of the saddle init (``w_1 = 0``, ``w_{i≥2} = λ``).
        escape_balanced: α₀ values of the balanced init.
        escape_lr: the small fixed lr.
        escape_budget: step budget (censoring).
        large_lr: the larger lr of ``gd_large`` (run at the smallest saddle λ; 0 = skip).
        mirror_qs: q values of the mirror-flow check (empty: skip).
        mirror_lr: lr of the discrete run; mirror_time: horizon (time = lr x steps).
        balance_alpha: weight decay α; balance_time: horizon; balance_lr: lr.
        sparsity_depths: depths of the sparsity study (empty: skip).
        sparsity_steps: steps; sparsity_lr: initial lr (cosine-decayed to 0);
        sparsity_alpha: weight decay; sparsity_init: balanced α₀.
        ft_heads: ``"zero_head"`` / ``"adapter"`` (empty: skip).
        ft_epochs: fine-tuning epochs; ft_small_lr: the small lr; ft_sgd_grid: SGD lr grid.
        ft_pretrain_steps: full-batch Adam steps of the pretraining.
        min_escape_ratio, min_effect_frac, min_effect_loss, blowup_factor, mirror_tol,
        balance_tol, no_law, balance_quantile, no_law_quantile, min_effect_nnz, margin_nnz,
        ft_min_stall, ft_margin: the verdict margins (module docstring, "Verdict margins");
            not part of any trial.
    """

    seeds: int = 3
    escape_k: int = 300
    escape_n: int = 100
    escape_s: int = 5
    escape_depths: tuple[int, ...] = (2, 3, 4)
    escape_qs: tuple[float, ...] = (1.0, 1.5, 2.0)
    escape_saddle: tuple[float, ...] = (1e-2,)
    escape_balanced: tuple[float, ...] = (1e-2,)
    escape_lr: float = 1e-3
    escape_budget: int = 2000
    large_lr: float = 3e-2
    mirror_qs: tuple[float, ...] = (1.0, 1.5, 2.0)
    mirror_lr: float = 2.5e-4
    mirror_time: float = 1.0
    balance_alpha: float = 0.5
    balance_time: float = 2.0
    balance_lr: float = 1e-3
    sparsity_depths: tuple[int, ...] = (2, 4, 8)
    sparsity_steps: int = 3000
    sparsity_lr: float = 1e-2
    sparsity_alpha: float = 0.05
    sparsity_init: float = 0.5
    ft_heads: tuple[str, ...] = ("zero_head", "adapter")
    ft_epochs: int = 10
    ft_small_lr: float = 1e-3
    ft_sgd_grid: tuple[float, ...] = (1e-2, 3e-2, 1e-1, 3e-1, 1.0)
    ft_pretrain_steps: int = 300
    min_escape_ratio: float = 1.2
    min_effect_frac: float = 0.2
    min_effect_loss: float = 0.05
    blowup_factor: float = 2.0
    mirror_tol: float = MIRROR_TOL
    balance_tol: float = BALANCE_TOL
    no_law: float = NO_LAW
    balance_quantile: float = 0.9
    no_law_quantile: float = 0.5
    min_effect_nnz: float = 1.0
    margin_nnz: float = 1.0
    ft_min_stall: float = 10.0
    ft_margin: float = 1.0

    def validate(self) -> None:
        super().validate()
        for name in ("escape_k", "escape_n", "escape_s", "escape_budget", "sparsity_steps",
                     "ft_epochs", "ft_pretrain_steps"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected an integer >= 1, got {getattr(self, name)}")
        if self.escape_s > self.escape_k:
            raise ConfigError(f"escape_s: expected <= escape_k = {self.escape_k}")
        for name in ("escape_qs", "mirror_qs"):
            if any(not 1.0 <= q <= 2.0 for q in getattr(self, name)):
                raise ConfigError(f"{name}: expected values in [1, 2], got {getattr(self, name)}")
        for name in ("escape_depths", "sparsity_depths"):
            if any(d < 1 for d in getattr(self, name)):
                raise ConfigError(f"{name}: expected depths >= 1, got {getattr(self, name)}")
        for name in ("escape_saddle", "escape_balanced", "ft_sgd_grid"):
            if any(not v > 0 for v in getattr(self, name)):
                raise ConfigError(f"{name}: expected positive values, got {getattr(self, name)}")
        for name in ("escape_lr", "mirror_lr", "mirror_time", "balance_time", "balance_lr",
                     "sparsity_lr", "sparsity_init", "ft_small_lr"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name}: expected > 0, got {getattr(self, name)}")
        for name in ("large_lr", "balance_alpha", "sparsity_alpha"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name}: expected >= 0, got {getattr(self, name)}")
        for name in ("min_effect_frac", "min_effect_loss", "mirror_tol", "balance_tol",
                     "no_law", "min_effect_nnz", "margin_nnz", "ft_min_stall", "ft_margin"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name}: expected > 0, got {getattr(self, name)}")
        for name in ("min_escape_ratio", "blowup_factor"):
            if not getattr(self, name) > 1:
                raise ConfigError(f"{name}: expected > 1, got {getattr(self, name)}")
        for name in ("balance_quantile", "no_law_quantile"):
            if not 0.0 < getattr(self, name) <= 1.0:
                raise ConfigError(f"{name}: expected a quantile in (0, 1], got "
                                  f"{getattr(self, name)}")
        if any(h not in ("zero_head", "adapter") for h in self.ft_heads):
            raise ConfigError(f"ft_heads: expected 'zero_head'/'adapter', got {self.ft_heads}")


PRESETS = {
    # Every code path once, tiny budgets: the test suite runs this.
    "smoke": SteepestConfig(
        seeds=2, escape_k=60, escape_n=20, escape_s=3, escape_depths=(2, 3),
        escape_qs=(1.0, 2.0), escape_saddle=(1e-1,), escape_balanced=(), escape_budget=300,
        mirror_qs=(1.0,), mirror_lr=1e-3, mirror_time=0.5, balance_time=0.5,
        sparsity_depths=(2,), sparsity_steps=200, ft_heads=("zero_head",), ft_epochs=1,
        ft_sgd_grid=(1e-1,), ft_pretrain_steps=30),
    # Brief items (1)-(5) shrunk to ~60 s on 2 cores: one saddle and one balanced scale,
    # 2,000-step budget, depths {2, 4, 8} for sparsity, 10 fine-tuning epochs.
    "quick": SteepestConfig(seeds=3),
    # The brief's setting: λ, α₀ ∈ {1e-1, 1e-2, 1e-3}, 20,000-step budget, 5 seeds.
    "full": SteepestConfig(
        seeds=5, escape_saddle=(1e-1, 1e-2, 1e-3), escape_balanced=(1e-1, 1e-2, 1e-3),
        escape_budget=20000, mirror_lr=1e-4, sparsity_steps=10000, ft_epochs=30),
}


# -- trials ----------------------------------------------------------------------------------

def trials(cfg: SteepestConfig) -> list[Trial]:
    out: list[Trial] = []
    esc = {"k": cfg.escape_k, "n": cfg.escape_n, "s": cfg.escape_s,
           "budget": cfg.escape_budget}
    inits = [("saddle", s) for s in cfg.escape_saddle] + \
        [("balanced", a) for a in cfg.escape_balanced]
    for L in cfg.escape_depths:
        for init, scale in inits:
            for q in cfg.escape_qs:
                for seed in range(cfg.seeds):
                    out.append(Trial(f"q={q:g}", "escape", seed, {
                        **esc, "L": L, "init": init, "scale": scale, "q": q,
                        "lr": cfg.escape_lr}))
        if cfg.large_lr > 0 and cfg.escape_saddle:
            for seed in range(cfg.seeds):
                out.append(Trial("gd_large", "escape", seed, {
                    **esc, "L": L, "init": "saddle", "scale": min(cfg.escape_saddle),
                    "q": 2.0, "lr": cfg.large_lr}))
    for q in cfg.mirror_qs:
        for seed in range(cfg.seeds):
            out.append(Trial(f"q={q:g}", "mirror", seed, {
                "q": q, "lr": cfg.mirror_lr, "time": cfg.mirror_time}))
    for method, q, wd, cwd in (("sign_decoupled", 1.0, cfg.balance_alpha, 0.0),
                               ("gd_decoupled", 2.0, cfg.balance_alpha, 0.0),
                               ("sign_coupled", 1.0, 0.0, cfg.balance_alpha),
                               ("sign_no_wd", 1.0, 0.0, 0.0),
                               ("gd_no_wd", 2.0, 0.0, 0.0)):
        for seed in range(cfg.seeds):
            out.append(Trial(method, "balance", seed, {
                "q": q, "wd": wd, "cwd": cwd, "lr": cfg.balance_lr,
                "time": cfg.balance_time}))
    for L in cfg.sparsity_depths:
        for method in ("sign_decoupled", "sign_coupled", "gd_wd"):
            if method == "gd_wd" and L > 4:
                continue  # GD with L ≥ 3 is in the m > 1 regime: it does not leave α₀ here
            for seed in range(cfg.seeds):
                out.append(Trial(method, "sparsity", seed, {
                    "L": L, "steps": cfg.sparsity_steps, "lr": cfg.sparsity_lr,
                    "alpha": cfg.sparsity_alpha, "init": cfg.sparsity_init}))
    ft_methods = [("sgd", cfg.ft_small_lr), ("adam", cfg.ft_small_lr),
                  ("signsgd", cfg.ft_small_lr)] + [("sgd_grid", lr) for lr in cfg.ft_sgd_grid]
    for head in cfg.ft_heads:
        for method, lr in ft_methods:
            for seed in range(cfg.seeds):
                out.append(Trial(method, f"finetune-{head}", seed, {
                    "head": head, "lr": lr, "epochs": cfg.ft_epochs,
                    "pretrain_steps": cfg.ft_pretrain_steps}))
    return out


# -- (1) saddle escape -----------------------------------------------------------------------

def _sparse_regression(seed: int, k: int, n: int, s: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(n, k, generator=g, dtype=torch.float64)
    x_star = torch.zeros(k, dtype=torch.float64)
    support = torch.randperm(k, generator=g)[:s]
    x_star[support] = 1.0 + torch.rand(s, generator=g, dtype=torch.float64)
    return A, A @ x_star, x_star


def _set_product_grads(ws: list[torch.Tensor], gx: torch.Tensor) -> None:
    """∂f/∂w_i = ∂f/∂x ⊙ Π_{j≠i} w_j (prefix x suffix products; cheaper than autograd)."""
    prefix = [torch.ones_like(gx)]
    for w in ws[:-1]:
        prefix.append(prefix[-1] * w)
    suffix = torch.ones_like(gx)
    for i in reversed(range(len(ws))):
        ws[i].grad = gx * prefix[i] * suffix
        suffix = suffix * ws[i]


def _product(ws: list[torch.Tensor]) -> torch.Tensor:
    x = ws[0].detach().clone()
    for w in ws[1:]:
        x.mul_(w)
    return x


def _run_escape(trial: Trial) -> dict[str, Any]:
    p = trial.params
    A, y, _ = _sparse_regression(trial.seed, int(p["k"]), int(p["n"]), int(p["s"]))
    n = A.shape[0]
    model = DeepDiagonal(int(p["k"]), int(p["L"]), float(p["scale"]), str(p["init"]))
    ws = list(model.factors)
    opt = SteepestDescent(ws, lr=float(p["lr"]), norm="lp", q=float(p["q"]))
    budget = int(p["budget"])
    f0 = None
    escape = budget
    loss = math.nan
    with torch.no_grad():
        for t in range(budget + 1):
            r = A @ _product(ws) - y
            loss = float(r @ r) / (2 * n)
            if not math.isfinite(loss):
                break
            if f0 is None:
                f0 = loss
            if loss < ESCAPE_FRACTION * f0:
                escape = t
                break
            if t == budget:
                break
            _set_product_grads(ws, A.T @ r / n)
            opt.step()
    escaped = escape < budget and math.isfinite(loss)
    steps = int(escape if escaped else budget)
    return {"escape_steps": steps, "escape_time": float(p["lr"]) * steps,
            "escaped": bool(escaped),
            "final_rel_loss": float(loss / f0) if f0 and math.isfinite(loss) else None,
            "diverged": not math.isfinite(loss)}


# -- (2) + (3) L = 2 mirror flow and balance ------------------------------------------------

def _two_factor_problem(seed: int, k: int = 20, n: int = 10) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng([seed, 2])
    A = rng.standard_normal((n, k)) / math.sqrt(n)
    x_star = np.zeros(k)
    x_star[:3] = (1.0, -0.5, 0.8)
    u0 = 0.3 + 0.1 * rng.random(k)
    v0 = 0.1 + 0.1 * rng.random(k)
    return A, A @ x_star, u0, v0


def _run_two_factor(A, y, u0, v0, opt_factory, lr: float, time: float, n_eval: int = 50):
    """Train ``x = u ⊙ v`` on ``½‖Ax - y‖²``; return eval times and (x, u, v) snapshots."""
    model = HadamardProduct(torch.tensor(u0), torch.tensor(v0))
    opt = opt_factory([model.m, model.w])
    At, yt = torch.tensor(A), torch.tensor(y)
    steps = int(round(time / lr))
    every = max(1, steps // n_eval)
    ts, xs, us, vs = [], [], [], []
    with torch.no_grad():
        for s in range(1, steps + 1):
            gx = At.T @ (At @ (model.m * model.w) - yt)
            model.m.grad, model.w.grad = gx * model.w, gx * model.m
            opt.step()
            if s % every == 0:
                ts.append(s * lr)
                xs.append((model.m * model.w).numpy().copy())
                us.append(model.m.numpy().copy())
                vs.append(model.w.numpy().copy())
    return np.array(ts), np.array(xs), np.array(us), np.array(vs)


def _run_mirror(trial: Trial) -> dict[str, Any]:
    p = trial.params
    q, lr = float(p["q"]), float(p["lr"])
    A, y, u0, v0 = _two_factor_problem(trial.seed)
    ts, xs, _, _ = _run_two_factor(
        A, y, u0, v0, lambda ps: SteepestDescent(ps, lr=lr, norm="lp", q=q), lr,
        float(p["time"]))
    lam = np.abs(u0) ** q - np.abs(v0) ** q
    t_ode, x_ode = integrate_mirror_flow(
        lambda x: A.T @ (A @ x - y), u0 * v0, lam, q, ts, stop_at_sign_change=False,
        sign_eps=SIGN_EPS if q < 2 else 0.0, method="LSODA", rtol=1e-7, atol=1e-10)
    err = np.linalg.norm(xs[: len(t_ode)] - x_ode, axis=1) / np.linalg.norm(x_ode, axis=1)
    f = lambda x: 0.5 * float(np.sum((A @ x - y) ** 2))  # noqa: E731
    return {"max_rel_error": float(err.max()), "final_rel_error": float(err[-1]),
            "reached_time": float(t_ode[-1]), "loss_ratio": f(xs[-1]) / f(u0 * v0)}


def _run_balance(trial: Trial) -> dict[str, Any]:
    p = trial.params
    q, wd, cwd, lr = float(p["q"]), float(p["wd"]), float(p["cwd"]), float(p["lr"])
    A, y, u0, v0 = _two_factor_problem(trial.seed)
    ts, _, us, vs = _run_two_factor(
        A, y, u0, v0, lambda ps: SteepestDescent(ps, lr=lr, norm="lp", q=q, weight_decay=wd,
                                                 coupled_weight_decay=cwd), lr,
        float(p["time"]))
    imb0 = np.abs(u0) ** q - np.abs(v0) ** q
    ratio = (np.abs(us) ** q - np.abs(vs) ** q) / imb0
    alpha = wd if wd > 0 else cwd  # the law a decay of strength α would follow
    dev = law_deviations(ts, ratio, q * alpha)
    # Decay-rate fit on the coordinate-median ratio (log-linear through r(0) = 1).
    med = np.median(ratio, axis=1)
    ok = med > 0
    rate = float(-np.sum(ts[ok] * np.log(med[ok])) / np.sum(ts[ok] ** 2)) if ok.any() else None
    return {"max_law_deviation": float(dev.max()),
            "median_law_deviation": float(np.median(dev)),
            "coord_law_deviations": ",".join(f"{v:.6g}" for v in dev),
            "fitted_rate": rate, "law_rate": q * alpha}


def law_deviations(ts: np.ndarray, ratio: np.ndarray, rate: float) -> np.ndarray:
    """Per coordinate, the largest deviation over time of the balance ratio from the law.

    Args:
        ts: evaluation times, shape ``T``.
        ratio: ``r_i(t) = (|u_i|^q − |v_i|^q)_t / (|u_i|^q − |v_i|^q)_0``, shape ``T x k``.
        rate: the law's decay rate ``q·α`` (Lemma 4.4: ``r_i(t) = exp(−q α t)``).

    Returns ``max_t |r_i(t) − exp(−rate·t)|`` for each of the ``k`` coordinates.
    """
    ts = np.asarray(ts, dtype=float)
    ratio = np.asarray(ratio, dtype=float)
    if ratio.ndim != 2 or ratio.shape[0] != ts.shape[0]:
        raise ValueError(f"ratio: expected shape (len(ts), k) = ({ts.shape[0]}, k), got "
                         f"{ratio.shape}")
    return np.max(np.abs(ratio - np.exp(-rate * ts)[:, None]), axis=0)


def coordinate_quantile(metrics: dict[str, Any], quantile: float) -> float | None:
    """The ``quantile`` of a balance trial's per-coordinate law deviations (``None`` when the
    trial did not store them)."""
    raw = metrics.get("coord_law_deviations")
    if not raw:
        return None
    return float(np.quantile([float(v) for v in str(raw).split(",")], quantile))


# -- (4) sparsity / bias vs depth ------------------------------------------------------------

def _run_sparsity(trial: Trial) -> dict[str, Any]:
    p = trial.params
    L, steps, lr, alpha = int(p["L"]), int(p["steps"]), float(p["lr"]), float(p["alpha"])
    A, y, x_star = _sparse_regression(1000 + trial.seed, 60, 25, 3)
    n = A.shape[0]
    model = DeepDiagonal(A.shape[1], L, float(p["init"]), "balanced")
    ws = list(model.factors)
    if trial.method == "sign_decoupled":
        opt = SignSGD(ws, lr=lr, weight_decay=alpha)
    elif trial.method == "sign_coupled":
        opt = SignSGD(ws, lr=lr, coupled_weight_decay=alpha)
    else:  # gd_wd: for q = 2 coupled and decoupled weight decay coincide
        opt = SteepestDescent(ws, lr=lr, norm="l2", weight_decay=alpha)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    with torch.no_grad():
        for _ in range(steps):
            r = A @ _product(ws) - y
            _set_product_grads(ws, A.T @ r / n)
            opt.step()
            sched.step()
        x = _product(ws)
        r = A @ x - y
    l1, l2 = float(x.abs().sum()), float(torch.linalg.vector_norm(x))
    support = x_star != 0
    return {"eff_nnz": (l1 / l2) ** 2 if l2 > 0 else 0.0,
            "rel_error": float(torch.linalg.vector_norm(x - x_star) / torch.linalg.vector_norm(
                x_star)),
            "support_mass": float(x[support].abs().sum()) / l1 if l1 > 0 else 0.0,
            "collapsed": bool(l2 < COLLAPSE * float(torch.linalg.vector_norm(x_star))),
            "final_loss": float(r @ r) / (2 * n)}


# -- (5) fine-tuning proxy -------------------------------------------------------------------

@functools.lru_cache(maxsize=8)
def _digits_split(seed: int) -> tuple[torch.Tensor, ...]:
    from sklearn.datasets import load_digits

    X, t = load_digits(return_X_y=True)
    X = torch.tensor(X / 16.0, dtype=torch.float32)
    t = torch.tensor(t)
    pre = t < 5
    Xf, tf = X[~pre], t[~pre] - 5
    perm = torch.randperm(len(tf), generator=torch.Generator().manual_seed(seed))
    n_train = int(0.6 * len(tf))
    tr, va = perm[:n_train], perm[n_train:]
    return X[pre], t[pre], Xf[tr], tf[tr], Xf[va], tf[va]


@functools.lru_cache(maxsize=8)
def _pretrained_body(seed: int, steps: int) -> dict[str, torch.Tensor]:
    """An MLP 64-64-64 body pretrained (with a temporary head) on digits 0-4 by Adam."""
    Xp, tp, *_ = _digits_split(seed)
    torch.manual_seed(seed)
    body = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 64), torch.nn.ReLU())
    head = torch.nn.Linear(64, 5)
    opt = torch.optim.Adam([*body.parameters(), *head.parameters()], lr=1e-2)
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(head(body(Xp)), tp).backward()
        opt.step()
    return {k: v.detach().clone() for k, v in body.state_dict().items()}


class _ProductHead(torch.nn.Module):
    """``logits = h Aᵀ Bᵀ`` with ``B = 0`` and ``A`` small random: the ``w_1 = 0, w_2 = λ``
    saddle init of a zero-initialised product (LoRA-like) adapter."""

    def __init__(self, rank: int = 8, scale: float = 0.1):
        super().__init__()
        self.A = torch.nn.Parameter(scale * torch.randn(rank, 64) / 8.0)
        self.B = torch.nn.Parameter(torch.zeros(5, rank))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h @ self.A.T @ self.B.T


def _run_finetune(trial: Trial) -> dict[str, Any]:
    p = trial.params
    _, _, Xtr, ttr, Xva, tva = _digits_split(trial.seed)
    body = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 64), torch.nn.ReLU())
    body.load_state_dict(_pretrained_body(trial.seed, int(p["pretrain_steps"])))
    torch.manual_seed(10_000 + trial.seed)
    if p["head"] == "zero_head":
        head: torch.nn.Module = torch.nn.Linear(64, 5)
        torch.nn.init.zeros_(head.weight)
        torch.nn.init.zeros_(head.bias)
    else:
        head = _ProductHead()
    params = [*body.parameters(), *head.parameters()]
    lr = float(p["lr"])
    if trial.method == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(params, lr=lr)
    elif trial.method == "signsgd":
        opt = SignSGD(params, lr=lr)
    else:
        opt = torch.optim.SGD(params, lr=lr)
    g = torch.Generator().manual_seed(20_000 + trial.seed)
    for _ in range(int(p["epochs"])):
        for idx in torch.randperm(len(ttr), generator=g).split(32):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(head(body(Xtr[idx])), ttr[idx])
            loss.backward()
            opt.step()
    with torch.no_grad():
        acc = float((head(body(Xva)).argmax(1) == tva).float().mean()) * 100
        train_loss = float(torch.nn.functional.cross_entropy(head(body(Xtr)), ttr))
    return {"val_acc": acc if math.isfinite(train_loss) else 0.0,
            "train_loss": train_loss if math.isfinite(train_loss) else None}


def run_trial(trial: Trial, device: str = "cpu") -> dict[str, Any]:
    torch.set_num_threads(1)
    runner = {"escape": _run_escape, "mirror": _run_mirror, "balance": _run_balance,
              "sparsity": _run_sparsity}.get(trial.problem)
    if runner is None and trial.problem.startswith("finetune-"):
        runner = _run_finetune
    if runner is None:
        raise ValueError(f"trial.problem: unknown problem {trial.problem!r}")
    return runner(trial)


# -- summary ---------------------------------------------------------------------------------

def _vals(rs: list[Result], metric: str) -> list[float]:
    return [float(r.metrics[metric]) for r in rs if r.metrics.get(metric) is not None]


def _mean(rs: list[Result], metric: str) -> float:
    v = _vals(rs, metric)
    return float(np.mean(v)) if v else math.nan


def _ci(rs: list[Result], metric: str) -> str:
    v = _vals(rs, metric)
    return fmt_ci(*mean_ci(v)) if v else "—"


def _select(results: list[Result], problem: str, method: str | None = None,
            **params: Any) -> list[Result]:
    return [r for r in results if r.trial.problem == problem
            and (method is None or r.trial.method == method)
            and all(r.trial.params.get(k) == v for k, v in params.items())]


def _censored(rs: list[Result]) -> bool:
    """Every run censored at the budget (none escaped)."""
    return bool(rs) and not any(r.metrics.get("escaped") for r in rs)


def _saturated(rs: list[Result]) -> bool:
    """The escaped fraction at a bound: no run or every run escaped."""
    esc = [bool(r.metrics.get("escaped")) for r in rs]
    return bool(esc) and (not any(esc) or all(esc))


def _paired(a: dict, b: dict) -> tuple[dict, dict]:
    """The seeds both sides have (a diverged run has no loss at the budget)."""
    common = [k for k in a if k in b]
    return {k: a[k] for k in common}, {k: b[k] for k in common}


def _escape_times(rs: list[Result]) -> dict[int, float]:
    """``{seed: lr × escape steps}``: the continuous time of the flow at escape (censored runs:
    lr × budget).  Every escape comparison is made in this time, so that runs at different lrs
    are compared at equal continuous time (issue 20); at a shared lr it orders like steps."""
    return {s: float(r.trial.params["lr"]) * v for r in rs
            for s, v in [(r.trial.seed, r.metrics.get("escape_steps"))] if v is not None}


def _escapes_later(faster: list[Result], slower: list[Result], cfg: SteepestConfig,
                   on_censored: str) -> Verdict:
    """``slower`` escapes later than ``faster`` (paired by seed), in continuous time.

    Escape times as a log ratio with ``min_escape_ratio``; where every run of both sides is
    censored at the budget the order is beyond the budget: ``on_censored="inconclusive"`` makes
    the cell inconclusive, ``on_censored="loss"`` compares the loss at the budget instead (the
    slow-start claim's own tie-break) with ``min_effect_loss``.  Where only some runs are
    censored, their times are lower bounds: a censored ``faster`` cannot support *held*, a
    censored ``slower`` cannot support *not held* (:func:`~optzoo.experiment.verdicts.censored`).
    """
    if _censored(faster) and _censored(slower):
        if on_censored == "loss":
            b, a = _paired(by_seed(slower, "final_rel_loss"), by_seed(faster, "final_rel_loss"))
            return superior(b, a, min_effect=cfg.min_effect_loss)
        v = superior(_escape_times(slower), _escape_times(faster),
                     min_effect=math.log(cfg.min_escape_ratio), log_ratio=True)
        return downgrade(v, "every run of both sides is censored at the budget "
                             f"({cfg.escape_budget} steps): their order lies beyond it")
    v = superior(_escape_times(slower), _escape_times(faster),
                 min_effect=math.log(cfg.min_escape_ratio), log_ratio=True)
    return censored(v, a_censored=_any_censored(faster), b_censored=_any_censored(slower))


def _any_censored(rs: list[Result]) -> bool:
    """Some run did not escape within the budget (its time is a lower bound)."""
    return any(not r.metrics.get("escaped") for r in rs)


def _fmt_times(times: dict[int, float]) -> str:
    return fmt_ci(*mean_ci(list(times.values()))) if times else "—"


def _escape_claims(results: list[Result], cfg: SteepestConfig) -> list[Claim]:
    claims: list[Claim] = []
    rs = _select(results, "escape")
    if not rs:
        return claims
    depths = sorted({int(r.trial.params["L"]) for r in rs})
    qs = sorted({float(r.trial.params["q"]) for r in rs if r.trial.method != "gd_large"})
    small = [r for r in rs if r.trial.method != "gd_large"]
    inits = sorted({(r.trial.params["init"], float(r.trial.params["scale"])) for r in small})

    def sel(L, q, init=None, scale=None):
        return [r for r in small if r.trial.params["L"] == L and r.trial.params["q"] == q
                and (init is None or r.trial.params["init"] == init)
                and (scale is None or float(r.trial.params["scale"]) == scale)]

    mean = {(L, q): _mean(sel(L, q), "escape_steps") for L in depths for q in qs}
    frac = {(L, q): _mean(sel(L, q), "escaped") for L in depths for q in qs}
    budget = cfg.escape_budget
    if len(qs) >= 2:
        cells = {f"L={L} {init} {scale:g}: q={a:g} before q={b:g}":
                 _escapes_later(sel(L, a, init, scale), sel(L, b, init, scale), cfg,
                                "inconclusive")
                 for L in depths for init, scale in inits
                 for a, b in itertools.pairwise(qs)}
        claims.append(Claim(
            text="Steeper descent escapes the saddle faster: at equal continuous time "
                 "(lr × steps, every q at the same small lr) the escape time (loss < 10 % of "
                 "initial) increases with q, SignGD (q = 1) fastest, at every depth and init "
                 f"(each consecutive q pair ≥ {cfg.min_escape_ratio:g}× apart, paired by seed; "
                 "a pair censored at the budget on both sides is inconclusive).",
            evidence="; ".join(f"L={L}: " + ", ".join(
                f"q={q:g} t = {mean[(L, q)] * cfg.escape_lr:.3g} ({frac[(L, q)]:.0%} escaped)"
                for q in qs) for L in depths)
            + f" (budget {budget} steps = time {budget * cfg.escape_lr:g}, lr "
              f"{cfg.escape_lr:g})",
            verdict=all_of(cells)))
        if len(depths) >= 2:
            lo, hi = depths[0], depths[-1]
            steep = [float(bool(r.metrics.get("escaped"))) for L in depths for r in sel(L, qs[0])]
            cells = {f"q={qs[0]:g} escapes in every run": bound_holds(steep, 1.0, side="ge")}
            for q in qs[1:]:
                for init, scale in inits:
                    a, b = sel(lo, q, init, scale), sel(hi, q, init, scale)
                    v = superior(by_seed(a, "escaped"), by_seed(b, "escaped"),
                                 min_effect=cfg.min_effect_frac)
                    if _saturated(a) and _saturated(b) and _mean(a, "escaped") == _mean(
                            b, "escaped"):
                        v = downgrade(v, f"the escaped fraction is {_mean(a, 'escaped'):.0%} "
                                          f"at both L = {lo} and L = {hi}: saturated within the "
                                          "budget, it cannot show the gap")
                    cells[f"q={q:g} {init} {scale:g}: L={lo} escapes more than L={hi}"] = v
            claims.append(Claim(
                text="The gap grows with depth: the fraction of runs escaping within the "
                     f"budget falls by ≥ {cfg.min_effect_frac:.0%} from the shallowest to the "
                     "deepest model for q > 1 (every init), while SignGD (q = 1) escapes in "
                     "every run at every depth.",
                evidence="; ".join(f"q={q:g}: " + ", ".join(
                    f"L={L} {frac[(L, q)]:.0%}" for L in depths) for q in qs),
                verdict=all_of(cells)))
    # GD blow-up as the init scale shrinks, and the large-lr rescue.
    if 2.0 in qs and 1.0 in qs:
        rows, cells = [], {}
        for init in sorted({i for i, _ in inits}):
            scales = sorted(s for i, s in inits if i == init)
            if len(scales) < 2:
                continue
            for L in depths:
                def ratios(q, L=L, init=init, scales=scales):
                    lo_s = _escape_times(sel(L, q, init, scales[0]))
                    hi_s = _escape_times(sel(L, q, init, scales[-1]))
                    return {k: lo_s[k] / hi_s[k] for k in lo_s if k in hi_s}
                gd, sg = _paired(ratios(2.0), ratios(1.0))
                v = superior(gd, sg, min_effect=math.log(cfg.blowup_factor), log_ratio=True)
                if _censored(sel(L, 2.0, init, scales[0])) and _censored(
                        sel(L, 2.0, init, scales[-1])):
                    v = downgrade(v, "GD is censored at the budget at both scales: its "
                                      "ratio is 1 by censoring, not by measurement")
                else:
                    # A censored time is a lower bound: at the smallest scale it makes GD's
                    # ratio (SignGD's: the opposite) a lower bound, at the largest an upper one.
                    v = censored(
                        v, a_censored=_any_censored(sel(L, 2.0, init, scales[-1]))
                        or _any_censored(sel(L, 1.0, init, scales[0])),
                        b_censored=_any_censored(sel(L, 2.0, init, scales[0]))
                        or _any_censored(sel(L, 1.0, init, scales[-1])),
                        why="a censored escape time makes a ratio a bound in the direction "
                            "that favours this verdict")
                cells[f"{init} L={L}"] = v
                rows.append(f"{init} L={L}: GD x{np.mean(list(gd.values())):.2f} (lower bound "
                            f"if censored), SignGD x{np.mean(list(sg.values())):.2f}")
        if rows:
            claims.append(Claim(
                text="GD's escape time blows up as the init scale λ, α₀ shrinks (ratio of "
                     "escape steps smallest/largest scale more than "
                     f"{cfg.blowup_factor:g}× SignGD's ratio, paired by seed).",
                evidence="; ".join(rows), verdict=all_of(cells)))
    large = [r for r in rs if r.trial.method == "gd_large"]
    if large:
        s_min = min(float(r.trial.params["scale"]) for r in large)
        parts, cells = [], {}
        for L in depths:
            lg = [r for r in large if r.trial.params["L"] == L]
            sm = sel(L, 2.0, "saddle", s_min)
            sg = sel(L, 1.0, "saddle", s_min)
            parts.append(f"L={L}: GD lr {cfg.escape_lr:g} {_mean(sm, 'escaped'):.0%} escaped, "
                         f"GD lr {cfg.large_lr:g} {_mean(lg, 'escaped'):.0%} "
                         f"({_ci(lg, 'escape_steps')} steps = time "
                         f"{_fmt_times(_escape_times(lg))}), SignGD lr {cfg.escape_lr:g} "
                         f"{_mean(sg, 'escaped'):.0%} ({_ci(sg, 'escape_steps')} steps = time "
                         f"{_fmt_times(_escape_times(sg))})")
            if not sm:
                continue
            v = superior(by_seed(lg, "escaped"), by_seed(sm, "escaped"),
                         min_effect=cfg.min_effect_frac)
            if all(r.metrics.get("escaped") for r in sm):
                v = not_acting(v, f"GD at the small lr already escapes in every run at L = {L}: "
                                  "nothing to rescue")
            cells[f"L={L}: the large lr escapes within the step budget"] = v
            if sg:
                # Equal continuous time: the large lr is a time rescaling, not a faster flow --
                # SignGD at the small lr still needs less time (lr × steps) than GD at the
                # large lr.  A censored time is a lower bound: a censored SignGD cannot
                # support "held", a censored GD cannot support "not held".
                t_sg, t_lg = _paired(_escape_times(sg), _escape_times(lg))
                ft = superior(t_sg, t_lg, min_effect=math.log(cfg.min_escape_ratio),
                              direction="less", log_ratio=True)
                cells[f"L={L}: at equal time SignGD (small lr) escapes before GD (large lr)"] = \
                    censored(ft, a_censored=not all(r.metrics.get("escaped") for r in sg),
                             b_censored=not all(r.metrics.get("escaped") for r in lg))
        if cells:
            claims.append(Claim(
                text=f"Only a much larger lr rescues GD: at the saddle init λ = {s_min:g}, GD at "
                     f"lr {cfg.large_lr:g} ({cfg.large_lr / cfg.escape_lr:.0f}x) escapes within "
                     f"the same step budget in at least {cfg.min_effect_frac:.0%} more runs than "
                     "GD at the small lr, and the rescue is a time rescaling: at equal "
                     "continuous time (lr × steps) SignGD at the small lr escapes at least "
                     f"{cfg.min_escape_ratio:g}× earlier than GD at the large lr; at every depth.",
                evidence="; ".join(parts), verdict=all_of(cells)))
    # Slow start of GD for L >= 3 (m > 1): balanced init, GD slower at L = 3 than L = 2.
    bal = [r for r in small if r.trial.params["init"] == "balanced" and r.trial.params["q"] == 2.0]
    deep = [L for L in depths if L >= 3]
    if bal and 2 in depths and deep:
        def at(L, metric):
            return _mean([r for r in bal if r.trial.params["L"] == L], metric)
        m2, l2 = at(2, "escape_steps"), at(2, "final_rel_loss")
        md = {L: at(L, "escape_steps") for L in deep}
        ld = {L: at(L, "final_rel_loss") for L in deep}
        fr = {L: at(L, "escaped") for L in deep}
        cells = {f"L={L} balanced {scale:g}": _escapes_later(
                     sel(2, 2.0, "balanced", scale), sel(L, 2.0, "balanced", scale), cfg, "loss")
                 for L in deep for init, scale in inits if init == "balanced"}
        claims.append(Claim(
            text="GD with L ≥ 3 (metric exponent m = 2(L-1)/L > 1) shows the predicted slow "
                 "start from a balanced small init: it escapes later than GD with L = 2 (m = 1) "
                 f"(≥ {cfg.min_escape_ratio:g}× the steps; if both are censored: its loss at the "
                 f"budget is higher by ≥ {cfg.min_effect_loss:g} of the initial loss).",
            evidence=f"balanced GD mean escape steps (loss/initial at the end): L=2 {m2:.0f} "
                     f"({l2:.3g}); " + ", ".join(
                         f"L={L} {md[L]:.0f} ({ld[L]:.3g}; {fr[L]:.0%} escaped)" for L in deep),
            verdict=all_of(cells)))
    return claims


def _figure_escape(results: list[Result], outdir: Path) -> Figure | None:
    rs = [r for r in _select(results, "escape") if r.trial.method != "gd_large"]
    if not rs:
        return None
    inits = sorted({(r.trial.params["init"], float(r.trial.params["scale"])) for r in rs})
    kinds = sorted({i for i, _ in inits})
    ncol = max(sum(1 for i, _ in inits if i == k) for k in kinds)
    fig, axes = panel_grid(len(kinds) * ncol, ncols=ncol, panel=(4, 3.4))
    slots = [axes[kinds.index(k) * ncol + [s for i, s in inits if i == k].index(sc)]
             for k, sc in inits]
    for ax in axes:
        if ax not in slots:
            ax.set_visible(False)
    qs = sorted({float(r.trial.params["q"]) for r in rs})
    budget = float(rs[0].trial.params["budget"])
    for ax, (init, scale) in zip(slots, inits, strict=True):
        series = {}
        for L in sorted({int(r.trial.params["L"]) for r in rs}):
            for q in qs:
                sel = [r for r in rs if r.trial.params["L"] == L and r.trial.params["q"] == q
                       and r.trial.params["init"] == init
                       and float(r.trial.params["scale"]) == scale]
                if sel:
                    series.setdefault(f"L = {L}", {})[q] = _vals(sel, "escape_steps")
        line_panel(ax, series, xlabel="q (1 = sign descent, 2 = GD)",
                   ylabel="steps to loss < 10 % of initial", title=f"{init} init, scale {scale:g}",
                   xlog=False, ylog=True,
                   reference={"budget": ([qs[0], qs[-1]], [budget, budget])})
    return save(fig, outdir / "escape_steps.png",
                "Saddle escape: steps vs q per depth (mean ± 95 % CI over seeds; censored at "
                "the budget)")


def _balance_claims(results: list[Result], cfg: SteepestConfig) -> list[Claim]:
    """Claims (3): the λ-L_p balance law (Lemma 4.4) and its absence under coupled decay.

    Each trial stores, per coordinate, the largest deviation over time from ``exp(−qαt)``.  The
    law is judged at the ``balance_quantile`` of the coordinates in every seed (Thm 4.6 holds
    "almost everywhere": a coordinate whose factor is driven to 0 chatters across it under
    discrete sign descent), "no law" at the ``no_law_quantile`` (a typical coordinate); the
    worst coordinate is reported beside both.
    """
    claims: list[Claim] = []

    def per_seed(method: str, quantile: float) -> list[float | None]:
        return [coordinate_quantile(r.metrics, quantile)
                for r in _select(results, "balance", method)]

    def worst(method: str) -> float:
        v = _vals(_select(results, "balance", method), "max_law_deviation")
        return max(v) if v else math.nan

    def cell(method: str, quantile: float, bound: float, side: str) -> Verdict:
        vals = per_seed(method, quantile)
        if any(v is None for v in vals):
            return undecided(f"{method}: a trial stored no per-coordinate deviations",
                             n=len(vals))
        return bound_holds(vals, bound, side=side)

    qb, qn = cfg.balance_quantile, cfg.no_law_quantile
    law_methods = [m for m in ("sign_decoupled", "gd_decoupled", "sign_no_wd", "gd_no_wd")
                   if _select(results, "balance", m)]
    if law_methods:
        def show(method: str, quantile: float) -> str:
            vals = [v for v in per_seed(method, quantile) if v is not None]
            return f"{max(vals):.3g}" if vals else "—"
        claims.append(Claim(
            text="λ-L_p balance: with decoupled weight decay α, |u| − |v| decays like exp(−αt) "
                 "under sign descent and |u|² − |v|² like exp(−2αt) under GD (within "
                 f"{cfg.balance_tol:.0%}); without weight decay it is conserved -- for "
                 f"{qb:.0%} of the coordinates (the {qb:.0%} quantile of the per-coordinate "
                 "worst deviation over time), in every seed.",
            evidence=", ".join(f"{m}: {qb:.0%}-quantile deviation (worst seed) {show(m, qb)}, "
                               f"worst coordinate {worst(m):.3g}" for m in law_methods)
            + "; fitted decay rate of the coordinate-median imbalance: " + ", ".join(
                f"{m} {_ci(_select(results, 'balance', m), 'fitted_rate')}"
                for m in ("sign_decoupled", "gd_decoupled") if m in law_methods)
            + f" (law: α = {cfg.balance_alpha:g} for q = 1, 2α for q = 2)",
            verdict=all_of({m: cell(m, qb, cfg.balance_tol, "le") for m in law_methods})))
    cpl = _select(results, "balance", "sign_coupled")
    if cpl:
        vals = [v for v in per_seed("sign_coupled", qn) if v is not None]
        claims.append(Claim(
            text="With coupled weight decay (Adam + L2-like sign descent) no such law holds: "
                 f"the {qn:.0%} quantile of the coordinates deviates from exp(−αt) by more "
                 f"than {cfg.no_law:.0%}, in every seed.",
            evidence=f"sign_coupled: {qn:.0%}-quantile deviation, smallest over seeds "
                     f"{min(vals) if vals else math.nan:.3g}; worst coordinate {worst('sign_coupled'):.3g}; "  # noqa: E501
                     f"fitted rate {_ci(cpl, 'fitted_rate')} vs α = {cfg.balance_alpha:g}",
            verdict=cell("sign_coupled", qn, cfg.no_law, "ge")))
    return claims


def _finetune_summary(results: list[Result], cfg: SteepestConfig, outdir: Path
                      ) -> tuple[list[Table], list[Figure], list[Claim]]:
    tables: list[Table] = []
    claims: list[Claim] = []
    bars: dict[str, dict[str, list[float]]] = {}
    for problem in sorted({r.trial.problem for r in results
                           if r.trial.problem.startswith("finetune-")}):
        rs = _select(results, problem)
        tables.append(aggregate(rs, by=["method", "lr"], metrics=["val_acc", "train_loss"],
                                title=f"Fine-tuning proxy ({problem}): validation accuracy (%)"))
        grid = {}
        for r in rs:
            if r.trial.method == "sgd_grid":
                grid.setdefault(float(r.trial.params["lr"]), []).append(r)
        if not grid:
            continue
        tuned_sgd = tune(f"SGD lr ({problem})",
                         {lr: _vals(v, "val_acc") for lr, v in grid.items()}, minimize=False)
        best_lr = tuned_sgd.best
        cells = {"SGD (small lr)": _select(results, problem, "sgd"),
                 f"SGD (tuned, lr {best_lr:g})": grid[best_lr],
                 "Adam (small lr)": _select(results, problem, "adam"),
                 "SignSGD (small lr)": _select(results, problem, "signsgd")}
        bars[problem] = {k: _vals(v, "val_acc") for k, v in cells.items() if v}
        sgd, adam, tuned = (cells["SGD (small lr)"], cells["Adam (small lr)"], grid[best_lr])
        if sgd and adam:
            adam_lr = tune(f"Adam lr ({problem}, fixed small lr)",
                           {float(adam[0].trial.params["lr"]): _vals(adam, "val_acc")},
                           minimize=False)
            stall = superior(by_seed(adam, "val_acc"), by_seed(sgd, "val_acc"),
                             min_effect=cfg.ft_min_stall)
            # The claim compares Adam at one fixed small lr with SGD tuned on a grid (the
            # paper's table): the unequal budget favours the baseline, so only the grid edge
            # of the tuned SGD lr can undermine it.
            keep_up = guard(noninferior(by_seed(adam, "val_acc"), by_seed(tuned, "val_acc"),
                                        margin=cfg.ft_margin),
                            tuned_sgd, adam_lr, equal_budget=False)
            claims.append(Claim(
                text=f"Fine-tuning ({problem}): small-lr SGD stalls (Adam at the same small lr is "
                     f"at least {cfg.ft_min_stall:g} points better) and small-lr Adam is not "
                     f"worse than tuned large-lr SGD by more than {cfg.ft_margin:g} point(s) "
                     "(paired by seed).",
                evidence=f"val acc: SGD small {_ci(sgd, 'val_acc')}, Adam small "
                         f"{_ci(adam, 'val_acc')}, SignSGD small "
                         f"{_ci(cells['SignSGD (small lr)'], 'val_acc')}, SGD tuned (lr "
                         f"{best_lr:g} of {list(tuned_sgd.grid)}) {_ci(tuned, 'val_acc')}; "
                         f"Adam − SGD small = {stall.effect:.2f}, Adam − tuned = "
                         f"{keep_up.effect:.2f}",
                verdict=all_of({"small-lr SGD stalls": stall,
                                "Adam not worse than tuned SGD": keep_up})))
    figures: list[Figure] = []
    if bars:
        fig, axes = panel_grid(len(bars), panel=(5, 3.4))
        for ax, (problem, cells) in zip(axes, bars.items(), strict=True):
            category_panel(ax, cells, ylabel="validation accuracy (%)", title=problem,
                           ylog=False, colors=dict(zip(cells, ("tab:gray", "tab:blue",
                                                               "tab:orange", "tab:green"),
                                                       strict=False)))
            ax.set_ylim(0, 100)
        figures.append(save(fig, outdir / "finetune_accuracy.png",
                            "Fine-tuning proxy on digits 5-9 (mean ± 95 % CI over seeds)"))
    return tables, figures, claims


def summarize(results: list[Result], cfg: SteepestConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    tables: list[Table] = []
    figures: list[Figure] = []
    claims: list[Claim] = []

    # (1) saddle escape
    esc = _select(results, "escape")
    if esc:
        tables.append(aggregate(esc, by=["method", "L", "init", "scale", "lr"],
                                metrics=["escape_steps", "escape_time", "escaped",
                                         "final_rel_loss"],
                                title="(1) Saddle escape: steps to loss < 10 % of initial "
                                      f"(censored at {cfg.escape_budget})"))
        claims += _escape_claims(results, cfg)
        fig = _figure_escape(results, outdir)
        if fig:
            figures.append(fig)

    # (2) mirror flow
    mir = _select(results, "mirror")
    if mir:
        tables.append(aggregate(mir, by=["method", "lr"], metrics=[
            "max_rel_error", "final_rel_error", "loss_ratio"],
            title="(2) Discrete steepest descent on u ⊙ v vs the integrated mirror flow"))
        worst = {m: max(_vals(_select(results, "mirror", m), "max_rel_error"))
                 for m in sorted({r.trial.method for r in mir})}
        claims.append(Claim(
            text="At small lr the trajectory of x = u ⊙ v under steepest descent matches the "
                 "steepest mirror flow d∇R(x)/dt = −sign(∇f)|∇f|^{q−1}, "
                 "∇²R = 1/sqrt(4|x|^q + λ²), to < 5 % relative error.",
            evidence="worst max-over-time relative error over seeds: " + ", ".join(
                f"{m} {v:.2%}" for m, v in worst.items()) + f" (lr {cfg.mirror_lr:g}, "
                f"time {cfg.mirror_time:g})",
            verdict=all_of({m: bound_holds(_vals(_select(results, "mirror", m),
                                                 "max_rel_error"), cfg.mirror_tol)
                            for m in worst})))

    # (3) balance
    bal = _select(results, "balance")
    if bal:
        tables.append(aggregate(bal, by=["method", "q", "wd", "cwd"], metrics=[
            "max_law_deviation", "median_law_deviation", "fitted_rate", "law_rate"],
            title="(3) Balance |u|^q − |v|^q: deviation from exp(−qαt) (worst and median "
                  "coordinate) and fitted decay rate"))
        claims += _balance_claims(results, cfg)

    # (4) sparsity
    sp = _select(results, "sparsity")
    if sp:
        tables.append(aggregate(sp, by=["method", "L"], metrics=[
            "eff_nnz", "rel_error", "support_mass", "collapsed", "final_loss"],
            title="(4) Sparsity vs depth (3-sparse target): effective nonzeros (‖x‖₁/‖x‖₂)²"))
        depths = sorted({int(r.trial.params["L"]) for r in sp})

        def nnz(m, L):
            return by_seed(_select(results, "sparsity", m, L=L), "eff_nnz")
        if len(depths) >= 2:
            lo, hi = depths[0], depths[-1]
            cells = {f"sign+decoupled sparser at L={hi} than at L={lo}": superior(
                nnz("sign_decoupled", lo), nnz("sign_decoupled", hi),
                min_effect=cfg.min_effect_nnz)}
            if nnz("gd_wd", lo):
                cells[f"sign+decoupled denser than GD+WD at L={lo}"] = superior(
                    nnz("sign_decoupled", lo), nnz("gd_wd", lo), min_effect=cfg.min_effect_nnz)
            claims.append(Claim(
                text=f"Decoupled-WD sign descent needs depth for sparsity: its solution is "
                     f"sparser at L = {hi} than at L = {lo}, and at L = {lo} denser than GD + WD "
                     f"(L_3/2 vs L1 bias, Table 1), by ≥ {cfg.min_effect_nnz:g} effective "
                     "nonzero(s), paired by seed.",
                evidence=f"effective nnz: sign+decoupled L={lo} "
                         f"{_ci(_select(results, 'sparsity', 'sign_decoupled', L=lo), 'eff_nnz')}"
                         f", L={hi} "
                         f"{_ci(_select(results, 'sparsity', 'sign_decoupled', L=hi), 'eff_nnz')}"
                         f"; GD+WD L={lo} "
                         f"{_ci(_select(results, 'sparsity', 'gd_wd', L=lo), 'eff_nnz')}",
                verdict=all_of(cells)))
            mid = [L for L in depths if L > lo]
            L1 = mid[0]
            cpl = _select(results, "sparsity", "sign_coupled", L=L1)
            coll = _mean(cpl, "collapsed")
            claims.append(Claim(
                text=f"Coupled WD sparsifies or collapses quickly with depth: already at L = {L1} "
                     f"coupled-WD sign descent is collapsed (in most runs) or at least as sparse "
                     f"as decoupled-WD sign descent at L = {hi} (within {cfg.margin_nnz:g} "
                     "effective nonzero(s), paired by seed).",
                evidence=f"sign+coupled L={L1}: effective nnz {_ci(cpl, 'eff_nnz')}, collapsed "
                         f"{coll:.0%}; sign+decoupled L={hi}: effective nnz "
                         f"{_ci(_select(results, 'sparsity', 'sign_decoupled', L=hi), 'eff_nnz')}",
                verdict=any_of({
                    "collapsed in most runs": within(list(by_seed(cpl, "collapsed").values()),
                                                     0.5, 1.0),
                    f"as sparse as sign+decoupled at L={hi}": noninferior(
                        nnz("sign_coupled", L1), nnz("sign_decoupled", hi),
                        margin=cfg.margin_nnz, direction="less")})))

    # (5) fine-tuning
    t5, f5, c5 = _finetune_summary(results, cfg, outdir)
    tables += t5
    figures += f5
    claims += c5

    notes = [
        "Escape: time = lr x steps; a run that does not reach 10 % of its initial loss within the "
        "budget is counted at the budget, so means of slow methods are lower bounds and ratios "
        "against them understate the gap.",
        "Balance: per coordinate, the deviation is the maximum over time; the law is judged "
        f"at the {cfg.balance_quantile:.0%} quantile of the coordinates (the worst one is "
        "reported beside it). Where a factor reaches 0 (an off-support coordinate driven to "
        "x_i = 0) discrete sign descent chatters across 0 and the other factor random-walks by "
        "±lr: the continuous law holds only 'almost everywhere' there (Thm 4.6), which the "
        "quantile and the coordinate-median fitted rate separate out.",
        "Sparsity: with the cosine schedule the total time is Σ lr ≈ lr·steps/2, so α·t = "
        f"{cfg.sparsity_alpha * cfg.sparsity_lr * cfg.sparsity_steps / 2:.2g}: the imbalance has "
        "decayed only by exp(−α t) and the weight-decay bias has acted only that far.",
        "The GD blow-up claim (escape ratio between the smallest and largest init scale) needs "
        "two scales per init; it is evaluated in the full preset (λ, α₀ ∈ {1e-1, 1e-2, 1e-3}, "
        "20,000 steps) and absent from quick, whose 2,000-step budget censors GD at every scale.",
        "Changed after the first quick run (a measurement defect, not a threshold): the GD "
        "slow-start claim breaks ties at the budget by the loss at the budget.",
        "Mirror flow: the ODE is integrated in x (dx/dt = ∇²R(x)^{-1} d∇R/dt) by LSODA; for q < 2 "
        f"sign(g) is regularised as tanh(g/{SIGN_EPS:g}) to pass through the sliding regime that "
        "the discrete method shadows within ±lr.",
        "Balance: coupled and decoupled weight decay coincide for GD (q = 2), so the coupled "
        "contrast is run with sign descent (the Adam + L2 proxy).",
        "Sparsity: the lr is cosine-decayed to 0 so sign descent's ±lr oscillation does not "
        "blur the solution; GD + WD is run for L ≤ 4 only (m > 1 for L ≥ 3 stalls it at "
        "balanced init).",
        "Fine-tuning: a digits MLP stands in for ResNet/ViT/BERT; 'tuned' SGD picks the lr of a "
        "fixed grid with the best mean validation accuracy (the same split reports it, as a "
        "tuned baseline in the paper's table would).",
        "Verdicts: comparisons are paired by seed; an escape comparison whose both sides are "
        "censored at the budget in every run (or whose escaped fraction sits at 0 % or 100 % on "
        "both sides) cannot show an order beyond the budget and is inconclusive; Adam's fixed "
        "small lr against SGD tuned on a grid is the claim's own (unequal) budget, only the grid "
        "edge of the SGD lr is guarded.",
    ]
    return Summary(tables=tables, figures=figures, claims=claims, notes=notes)


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Reparameterized steepest descent as mirror flow (Jacobs, Zhou & Burkholz, ICLR 2026): "
        "saddle escape of L_p steepest descent (q = 1 sign ... q = 2 GD) on deep diagonal "
        "networks, the L = 2 mirror-flow and balance laws with decoupled vs coupled weight "
        "decay, sparsity vs depth, and a digits fine-tuning proxy (small-lr SGD vs Adam vs "
        "SignSGD vs tuned SGD)."
        " Trials are CPU-sized (single-threaded) and run on the CPU whatever --device says."),
)
