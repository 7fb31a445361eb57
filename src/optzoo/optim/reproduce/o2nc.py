"""Reproduction ``o2nc-doubly-optimistic``: Patitucci, Jiang & Mokhtari, "Improving
Online-to-Nonconvex Conversion for Smooth Optimization via Double Optimism" (ICLR 2026,
OpenReview ZAflv4dxQ9, arXiv 2510.03167).

The paper is pure theory (complexity bounds) and has **no experiments**; the claims checked here
are the brief's proposed small-scale checks of its complexity table, not results of the paper:

1. ODOG needs fewer gradient calls than CMO23's double-loop O2NC (fixed-point hints) at every ε;
2. ODOG needs fewer calls than O2NC with the naive hint ``h_n = g_{n-1}`` and with plain projected
   OGD (no hint) at every ε;
3. with Gaussian gradient noise the *unchanged* ODOG code path still reaches every ε, and its
   calls-vs-ε log-log slope is shallower than SGD's (theory: −3.5 vs −4; qualitative);
4. the adaptive step of §4 is within 2× of tuned-η ODOG at every ε.

Problems (smooth, Lipschitz Hessian, full batch): (a) "smoothed robust regression"
``F(x) = mean_i φ(a_iᵀx − b_i)``, ``φ(r) = r²/(1 + r²)``, Gaussian ``a_i`` (d = 50, n = 500),
``b = A x* + 0.1·noise`` with 10 % of the ``b_i`` replaced by outliers; (b) a tanh MLP
64→16→10 on scikit-learn digits (pixels / 16), mean cross-entropy + ``1e-4‖θ‖²``.  Noisy variant:
every gradient query gets ``N(0, σ² I)`` added.

Protocol.  A run is one (method, problem, σ, target ε, seed, grid point), started from x₀; it
stops at its gradient-call budget or once ``‖∇F(candidate)‖ ≤ ε``.  (Before issue 20 one run
served every ε; now ``D`` — and with noise ``T`` and η — depend on ε, so each ε is its own run.)
Candidates are checked with the *exact* gradient (a monitor outside the budget) every ``T``
iterations for every method: the episode average ``w̄`` just completed for the O2NC methods, the
iterate for GD/SGD and normalized SGD.  The metric is the number of gradient calls made when
the target first held.  On the robust regression a candidate counts only if ``F(candidate) ≤
F(x₀)``: ``φ(r) = r²/(1+r²)`` is flat at infinity, and SGD with a large step, blowing the
residuals up, met ``‖∇F‖ ≤ ε`` there in 10 calls (found in the issue-20 quick run; such checks
are counted in ``plateau_checks``).  **Selection rule, the same for every method:** for each
(method, problem, σ, ε) the grid point :func:`~optzoo.experiment.verdicts.tune` picks: the
fewest gradient calls, mean over seeds, a seed that does not reach ε counting the budget (a
lower bound).  Choosing per ε mirrors the theory, whose D, T and η depend on ε.

Radius (issue 20).  The theory takes ``D ∝ ε^{3/4}`` (with ``T ∝ ε^{-1/4}``: ``T·D ∝ ε^{1/2}``,
the episode diameter the Hessian-Lipschitz error allows); its constant is problem-dependent.
Every O2NC method (adaptive included) therefore grids ``D``: ``D(ε) = s·D_ref·(ε/ε_ref)^a``
with ``s ∈ radius_scales`` crossed with its step grid (4 × 5 = 20 points; GD/SGD gets 20 step
values, the same budget), tuned at each ε.  ``a = radius_exponent``: a probe before the presets were
fixed (2 seeds, robust regression, ε = 1e-2 and 1e-3, grids ×3 apart) put the best ``D`` of
ODOG, CMO23 and the naive hint at roughly the same value (≈ 0.08–0.13) at both targets, i.e.
on opposite ends of a ``D ∝ ε^{3/4}`` grid (which moves by 5.6× over that decade): the
theory's worst-case exponent is not the best one here.  The presets use ``a = 0`` — one grid
at every ε, the tuned ``D`` free to follow ε (the report shows it per cell); ``--set
radius_exponent=0.75`` runs the theory's law.  ``T = T₀ = 10`` deterministic (the theory's
``ε^{-1/4}`` changes T by < 2× over these targets and T is also the check period).

Noise (issue 20).  With ``N(0, σ²I)`` noise in d dimensions (``E‖noise‖² = σ²d``) the episode
must average the noise below ε: ``T = max(T₀, ⌈σ²d/ε²⌉)`` (the theory's ``T ∝ σ²/ε²``), and
``D`` shrinks by ``T₀/T`` so that the episode diameter ``T·D`` stays the deterministic one
(``D ≈ √(ε/L₂)/T``).  η follows σ through ``η = η_scale/(L̂₁ + σ√d·√T/D)``: ``η_scale/L̂₁``
without noise and the regret-optimal ``∝ D/(σ√(dT))`` of Lemma 3.1/3.2 (``4D²/η`` against
``(5η/2)·Tσ²d`` per episode) when noise dominates; the noisy η multipliers are
``eta_scales_noisy``.  SGD is tuned on its 20-value grid per ε.

Verdicts (:mod:`optzoo.experiment.verdicts`; all paired by seed, the methods sharing each seed's
problem and noise stream).  Old rules compared *means* over seeds with no CI ("fewer" by one
call passed) — lenient.  Now:

* (1), (2): ``all_of`` over (problem, ε) [and baseline] of ``superior`` on
  log(calls ODOG / calls baseline), lower is better, ``min_effect = log min_call_ratio``.
* (3): ``all_of`` over noisy settings of ``bound_holds`` (ODOG reaches every ε in every seed at
  its tuned step: exact per-seed counts) and ``superior`` on the per-seed log-log slopes
  (ODOG − SGD, a shallower slope is greater, ``min_effect = min_slope_gap``; a seed's slope is
  the fit over the ε it reached, two at least; no slope in any seed → inconclusive).
* (4): ``all_of`` of ``noninferior`` on log(calls adaptive / calls ODOG) with the fixed margin
  ``log adaptive_factor`` (was: mean ≤ 2 × mean).
* Every comparison goes through :func:`~optzoo.experiment.verdicts.guard` with both methods'
  ``Tuned`` steps: a best step on its grid's edge (no end is a hard limit: η = 1/L̂₁ is already
  above the theory's √(2/5)/L₁, L̂₁ is an estimate, and GD's 2/L̂₁ is a stability limit only for
  the exact L₁) or unequal grid sizes make the cell *inconclusive*.
* Censoring: a seed that does not reach ε counts the budget, a lower bound.  A *held* that
  rests on such a value for the method under test, or a *not held* that rests on one for the
  baseline, is *inconclusive* (the budget decides it; was: not held whenever ODOG missed ε).
* Issue 18's fixed radius D is replaced by the D grid above (issue 20); the best (η, D) of a
  cell must be interior on *both* axes, else the cell is inconclusive (grid edge).

Verdict margins (fields of :class:`O2NCConfig`, the same in every preset, fixed before looking
at results; unchanged by issue 20; trial parameters do not contain them):

* ``min_call_ratio = 1.1`` — at least 10 % fewer calls: the stationarity check runs every
  T = 10 iterations (20–30 calls), about 10 % of a typical count, so smaller gaps are the
  check's granularity, not the method.
* ``min_slope_gap = 0.25`` — half of the theory's gap between −3.5 (ODOG) and −4 (SGD).
* ``adaptive_factor = 2`` — the brief's "within ~2× calls" of tuned-η ODOG.

Settings shared by all O2NC variants: the (η, D) or (γ, D) grid above, ``T``; η grid
``{¼, ½, 1, 2}/L̂₁`` (robust), ``{1, 2, 4, 8}/L̂₁`` (MLP, whose L̂₁ is a loose bound) and
``{1, 2, 4, 8}`` (noisy, times the σ-scaled step); ``D_ref = 0.12`` (robust) / ``0.5`` (MLP)
times ``{1/9, ⅓, 1, 3, 9}``; CMO23's inner loop has ``inner_steps`` fixed-point iterations;
the adaptive step uses ``α = 1e-8`` and ``γ ∈ {¼, ½, 1, 2}``.  GD/SGD uses ``2^{-10..9}/L̂₁``
(20 values); normalized SGD with momentum β = 0.9 uses step lengths ``{1, ⅓, ⅒}·D(ε)`` (a
reference row in no claim).  The grid centres were set from a probe (ODOG, CMO23, naive hint;
2 seeds) before any preset run; a first quick run on 3 × 3 grids ({½, 1, 2} / {1, 2, 4} × {⅓,
1, 3}) left best values on edges (naive hint and adaptive at the smallest D, OGD at the largest,
MLP and noisy ODOG at the largest η and D, noisy SGD at the smallest step), so every axis was
widened, for every method alike, until this grid (the noisy η grid, best at its top 4 at every
ε on ``{½, 1, 2, 4}``, was shifted to ``{1, 2, 4, 8}``); margins were not touched.

Read top to bottom: config and presets, problems, one trial, summary with claims.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment.stats import fmt_ci, mean_ci
from optzoo.experiment.verdicts import (
    Tuned,
    Verdict,
    all_of,
    bound_holds,
    censored,
    common_seeds,
    guard,
    noninferior,
    superior,
    tune,
    undecided,
)
from optzoo.optim.normalized_sgd import NormalizedSGD
from optzoo.optim.o2nc import O2NC
from optzoo.report.figures import color, grid, line_panel, save

SLUG = "o2nc-doubly-optimistic"

O2NC_METHODS = {"odog": "extrapolated", "naive_hint": "previous", "ogd": "none",
                "cmo23": "fixed_point"}
METHODS = ("odog", "naive_hint", "ogd", "cmo23", "odog_adaptive", "gd", "nsgd")
PROBLEMS = ("robust", "mlp")
LABEL = {"odog": "ODOG (this paper)", "naive_hint": "O2NC, naive hint", "ogd": "O2NC, plain OGD",
         "cmo23": "CMO23 double loop", "odog_adaptive": "ODOG, adaptive step (§4)",
         "gd": "GD / SGD", "nsgd": "normalized SGD + momentum"}


# -- configuration ---------------------------------------------------------------------------

@dataclass(frozen=True)
class O2NCConfig(Preset):
    """Settings of the ODOG reproduction.

    Args:
        seeds: seeds per cell (data / initialisation / noise stream).
        problems: subset of ``("robust", "mlp")``.
        noisy_problems: problems also run with gradient noise ``sigmas``.
        sigmas: noise levels (per coordinate) of the stochastic variant.
        eps: deterministic targets ``‖∇F‖ ≤ ε`` of the robust regression (‖∇F(x₀)‖ ≈ 0.16).
        eps_mlp: deterministic targets of the MLP (‖∇F(x₀)‖ ≈ 0.6).
        eps_noisy: targets of the noisy runs.
        budget: gradient calls per deterministic run.
        budget_noisy: gradient calls per noisy run.
        mlp_samples: digits used by the MLP (the first ``mlp_samples`` of a seeded shuffle).
        episode: deterministic O2NC episode length ``T₀``.
        radius_robust / radius_mlp: O2NC ball radius ``D_ref`` at the problem's reference
            target (``eps_ref_robust`` / ``eps_ref_mlp``); at target ε the radius is
            ``D(ε) = D_ref·(ε/ε_ref)^{radius_exponent}``.
        eps_ref_robust / eps_ref_mlp: the reference targets of those radii.
        radius_exponent: how ``D`` follows ε: ``0.75`` is the theory's ``D ∝ ε^{3/4}``; ``0``
            (the presets) grids ``D`` at every ε on the same grid, the tuned value free to
            follow ε (see "Radius" in the module docstring for why).
        radius_scales: grid of multipliers of ``D(ε)``, for every O2NC method (adaptive
            included), each ε tuned on its own.
        eta_scales: O2NC η grid on the robust regression, times ``1/L̂₁``.
        eta_scales_mlp: the same on the MLP (its L̂₁ is a loose bound, so the grid sits higher).
        eta_scales_noisy: the η multipliers of the noisy runs (on top of the σ-scaling of η).
        gd_scales: GD/SGD step grid, times ``1/L̂₁``; as many values as the O2NC grid has
            points (``eta_scales × radius_scales``): the same tuning budget.
        gammas: adaptive-step γ grid (crossed with ``radius_scales``).
        nsgd_scales: normalized-SGD step-length grid, times ``D(ε)``.
        inner_steps: CMO23 fixed-point iterations per step.
        methods: methods to run.
        noisy_methods: methods also run with noise (claim 3 needs ``odog`` and ``gd``).
        min_call_ratio: claims 1–2: the smallest calls ratio (baseline / ODOG) that counts.
        min_slope_gap: claim 3: the smallest slope difference (ODOG − SGD) that counts.
        adaptive_factor: claim 4: adaptive ODOG may need up to this factor of tuned ODOG's calls.
    """

    seeds: int = 3
    problems: tuple[str, ...] = PROBLEMS
    noisy_problems: tuple[str, ...] = ("robust",)
    sigmas: tuple[float, ...] = (0.01,)
    eps: tuple[float, ...] = (1e-2, 3e-3, 1e-3, 3e-4)
    eps_mlp: tuple[float, ...] = (1e-2, 3e-3, 1e-3, 3e-4)
    eps_noisy: tuple[float, ...] = (3e-2, 2e-2, 1e-2)
    budget: int = 4000
    budget_noisy: int = 4000
    mlp_samples: int = 1797
    episode: int = 10
    radius_robust: float = 0.12
    radius_mlp: float = 0.5
    eps_ref_robust: float = 1e-2
    eps_ref_mlp: float = 3e-2
    radius_exponent: float = 0.0
    radius_scales: tuple[float, ...] = (1 / 9, 1 / 3, 1.0, 3.0, 9.0)
    eta_scales: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0)
    eta_scales_mlp: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0)
    eta_scales_noisy: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0)
    gd_scales: tuple[float, ...] = tuple(2.0 ** k for k in range(-10, 10))
    gammas: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0)
    nsgd_scales: tuple[float, ...] = (1.0, 1 / 3, 0.1)
    inner_steps: int = 2
    methods: tuple[str, ...] = METHODS
    noisy_methods: tuple[str, ...] = METHODS
    min_call_ratio: float = 1.1
    min_slope_gap: float = 0.25
    adaptive_factor: float = 2.0

    def validate(self) -> None:
        super().validate()
        for name in ("problems", "noisy_problems"):
            bad = [p for p in getattr(self, name) if p not in PROBLEMS]
            if bad:
                raise ConfigError(f"{name}: unknown problems {bad}; allowed: {PROBLEMS}")
        bad = [m for m in self.methods + self.noisy_methods if m not in METHODS]
        if bad:
            raise ConfigError(f"methods: unknown {bad}; allowed: {METHODS}")
        for name in ("budget", "budget_noisy", "mlp_samples", "episode"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected an integer >= 1, got {getattr(self, name)}")
        if not self.eps or any(e <= 0 for e in self.eps + self.eps_mlp + self.eps_noisy):
            raise ConfigError(f"eps: expected positive targets, got {self.eps}")
        for name in ("radius_scales", "eta_scales", "eta_scales_mlp", "eta_scales_noisy",
                     "gd_scales", "gammas", "nsgd_scales"):
            vals = getattr(self, name)
            if not vals or any(v <= 0 for v in vals):
                raise ConfigError(f"{name}: expected positive values, got {vals}")
        if self.radius_exponent < 0:
            raise ConfigError(f"radius_exponent: expected >= 0, got {self.radius_exponent}")
        for name in ("radius_robust", "radius_mlp", "eps_ref_robust", "eps_ref_mlp"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name}: expected > 0, got {getattr(self, name)}")
        if any(s < 0 for s in self.sigmas):
            raise ConfigError(f"sigmas: expected >= 0, got {self.sigmas}")
        if self.inner_steps < 0:
            raise ConfigError(f"inner_steps: expected >= 0, got {self.inner_steps}")
        if self.min_call_ratio < 1 or self.adaptive_factor <= 1 or self.min_slope_gap < 0:
            raise ConfigError(f"min_call_ratio / adaptive_factor / min_slope_gap: expected >= 1 / "
                              f"> 1 / >= 0, got {self.min_call_ratio} / {self.adaptive_factor} / "
                              f"{self.min_slope_gap}")


PRESETS = {
    "smoke": O2NCConfig(seeds=1, eps=(1e-2, 3e-3), eps_mlp=(3e-2,), eps_noisy=(3e-2,),
                        budget=150,
                        budget_noisy=150, mlp_samples=200, eta_scales=(1.0,),
                        eta_scales_mlp=(2.0,), eta_scales_noisy=(1.0,), radius_scales=(1.0,),
                        gd_scales=(1.0,),
                        gammas=(1.0,), nsgd_scales=(1 / 3,)),
    "quick": O2NCConfig(seeds=3, eps=(1e-2, 3e-3, 1e-3), eps_mlp=(3e-2, 1e-2),
                        budget=1500, budget_noisy=3000, mlp_samples=300,
                        noisy_methods=("odog", "gd")),
    "full": O2NCConfig(seeds=5, sigmas=(0.01, 0.1), budget=20000, budget_noisy=20000,
                       eps_noisy=(3e-2, 2e-2, 1e-2, 5e-3)),
}


def _grid(cfg: O2NCConfig, method: str, problem: str, sigma: float = 0.0) -> list[dict]:
    """The grid points of one method: every O2NC method crosses its step (η or γ) with the
    ``D(ε)`` multipliers; GD/SGD has as many step values (the same budget)."""
    radii = [{"radius_scale": r} for r in cfg.radius_scales]
    if method in O2NC_METHODS:
        etas = (cfg.eta_scales_noisy if sigma > 0 else cfg.eta_scales_mlp if problem == "mlp"
                else cfg.eta_scales)
        return [{"eta_scale": s, **r} for s in etas for r in radii]
    if method == "odog_adaptive":
        return [{"gamma": g, **r} for g in cfg.gammas for r in radii]
    if method == "gd":
        return [{"eta_scale": s} for s in cfg.gd_scales]
    return [{"step_scale": s} for s in cfg.nsgd_scales]


def trials(cfg: O2NCConfig) -> list[Trial]:
    """One trial per (method, problem, σ, ε, grid point, seed): ``D`` (and, with noise, ``T``
    and η) depend on the target ε, so each ε is its own run from x₀."""
    out = []
    for problem in cfg.problems:
        sigmas = (0.0, *cfg.sigmas) if problem in cfg.noisy_problems else (0.0,)
        for sigma in sigmas:
            methods = [m for m in cfg.methods if sigma == 0.0 or m in cfg.noisy_methods]
            eps = cfg.eps_noisy if sigma > 0 else cfg.eps_mlp if problem == "mlp" else cfg.eps
            for e in eps:
                shared = _shared(cfg, problem, sigma, e)
                for method in methods:
                    for point in _grid(cfg, method, problem, sigma):
                        for seed in range(cfg.seeds):
                            out.append(Trial(method=method, problem=problem, seed=seed,
                                             params={"sigma": sigma, **point, **shared}))
    return out


_DIM = {"robust": 50}  # the MLP's dimension is computed from its shapes


def _dimension(problem: str) -> int:
    if problem == "robust":
        return _DIM["robust"]
    return 64 * 16 + 16 + 16 * 10 + 10


def _shared(cfg: O2NCConfig, problem: str, sigma: float, e: float) -> dict:
    """``D(ε, σ)`` (before the grid's multiplier) and ``T(ε, σ)`` of one run.

    Deterministic: ``D = D_ref·(ε/ε_ref)^{radius_exponent}``, ``T = T₀``.  With noise the
    episode must average the noise down to ε, ``T = max(T₀, ⌈σ²d/ε²⌉)`` (``σ²d = E‖noise‖²``;
    the theory's ``T ∝ σ²/ε²``), and ``D`` shrinks by ``T₀/T`` so that an episode's diameter
    ``T·D`` — which the Hessian-Lipschitz error bounds — stays the deterministic one (the
    theory's ``D ≈ √(ε/L₂)/T``).  η's σ-scaling is applied in :func:`_optimizer` (it needs L̂₁).
    """
    radius, ref = ((cfg.radius_mlp, cfg.eps_ref_mlp) if problem == "mlp"
                   else (cfg.radius_robust, cfg.eps_ref_robust))
    T = cfg.episode
    if sigma > 0:
        # round first: σ²d/ε² = 5000.000000000001 must give 5000, not 5001
        T = max(cfg.episode, math.ceil(round(sigma * sigma * _dimension(problem) / (e * e), 9)))
    D = radius * (e / ref) ** cfg.radius_exponent * cfg.episode / T
    # φ(r) = r²/(1+r²) is flat at infinity: a run that blows the residuals up finds ‖∇F‖ ≤ ε
    # on that plateau (SGD with a huge step did, in 10 calls).  On the robust regression a
    # candidate therefore counts only if F(candidate) ≤ F(x₀) (a descent method's output is).
    guard = {"f_guard": True} if problem == "robust" else {}
    return {"D": D, "T": T, **guard, "inner_steps": cfg.inner_steps,
            "budget": cfg.budget_noisy if sigma > 0 else cfg.budget, "eps": [e],
            "mlp_samples": cfg.mlp_samples}


# -- problems --------------------------------------------------------------------------------

class _Problem(abc.ABC):
    """A full-batch objective on one flat float64 vector with a hand-written gradient."""

    x0: torch.Tensor
    lipschitz: float  # L̂₁, the step-size scale

    @abc.abstractmethod
    def value_and_grad(self, x: torch.Tensor) -> tuple[float, torch.Tensor]:
        """``F(x)`` and ``∇F(x)``."""


class _RobustRegression(_Problem):
    """``F(x) = mean φ(Ax − b)``, ``φ(r) = r²/(1+r²)``; ``L₁ ≤ 2 λ_max(AᵀA/n)`` (φ'' ≤ 2)."""

    def __init__(self, seed: int, n: int = 500, d: int = 50):
        g = torch.Generator().manual_seed(10_000 + seed)
        self.A = torch.randn(n, d, generator=g, dtype=torch.float64)
        x_star = torch.randn(d, generator=g, dtype=torch.float64) / math.sqrt(d) * 2.0
        b = self.A @ x_star + 0.1 * torch.randn(n, generator=g, dtype=torch.float64)
        outliers = torch.rand(n, generator=g, dtype=torch.float64) < 0.1
        self.b = torch.where(outliers, 5.0 * torch.randn(n, generator=g, dtype=torch.float64), b)
        self.x0 = torch.zeros(d, dtype=torch.float64)
        self.lipschitz = 2.0 * float(torch.linalg.eigvalsh(self.A.T @ self.A / n).max())

    def value_and_grad(self, x):
        r = self.A @ x - self.b
        q = 1.0 + r * r
        return float((r * r / q).mean()), self.A.T @ (2.0 * r / (q * q)) / r.numel()


class _DigitsMLP(_Problem):
    """tanh MLP 64→16→10, mean cross-entropy + λ‖θ‖², manual backprop on a flat θ."""

    def __init__(self, seed: int, samples: int, hidden: int = 16, reg: float = 1e-4):
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        perm = np.random.default_rng(seed).permutation(len(y))[:samples]
        self.X = torch.tensor(X[perm] / 16.0, dtype=torch.float64)
        self.Y = torch.nn.functional.one_hot(torch.tensor(y[perm]), 10).to(torch.float64)
        self.shapes = [(64, hidden), (hidden,), (hidden, 10), (10,)]
        g = torch.Generator().manual_seed(20_000 + seed)
        parts = [torch.randn(64, hidden, generator=g, dtype=torch.float64) / 8.0,
                 torch.zeros(hidden, dtype=torch.float64),
                 torch.randn(hidden, 10, generator=g, dtype=torch.float64) / 4.0,
                 torch.zeros(10, dtype=torch.float64)]
        self.x0 = torch.cat([p.reshape(-1) for p in parts])
        self.reg = reg
        # Softmax-CE curvature ≤ ½ per logit; with ‖X‖/√n-type scaling this is a rough L̂₁.
        self.lipschitz = 0.5 * float(torch.linalg.matrix_norm(self.X, 2) ** 2 / samples) + 1.0

    def _unpack(self, x):
        out, i = [], 0
        for s in self.shapes:
            k = math.prod(s)
            out.append(x[i:i + k].view(s))
            i += k
        return out

    def value_and_grad(self, x):
        W1, b1, W2, b2 = self._unpack(x)
        H = torch.tanh(self.X @ W1 + b1)
        Z = H @ W2 + b2
        logp = Z - torch.logsumexp(Z, dim=1, keepdim=True)
        n = self.X.shape[0]
        loss = float(-(self.Y * logp).sum() / n + self.reg * (x * x).sum())
        dZ = (logp.exp() - self.Y) / n
        dA = (dZ @ W2.T) * (1.0 - H * H)
        grad = torch.cat([(self.X.T @ dA).reshape(-1), dA.sum(0), (H.T @ dZ).reshape(-1),
                          dZ.sum(0)])
        return loss, grad + 2.0 * self.reg * x


def _make_problem(name: str, seed: int, mlp_samples: int) -> _Problem:
    return _RobustRegression(seed) if name == "robust" else _DigitsMLP(seed, mlp_samples)


# -- one trial -------------------------------------------------------------------------------

def _step(p: dict, lipschitz: float, D: float) -> float:
    """O2NC's η: ``η_scale / (L̂₁ + σ√d·√T/D)``.  Without noise this is ``η_scale/L̂₁``; when
    the noise term of Lemma 3.1/3.2 dominates (``(5η/2)·Tσ²d`` against ``4D²/η`` per episode)
    the regret-optimal step is ``∝ D/(σ√d·√T)``, which the harmonic blend reaches."""
    noise = float(p["sigma"]) * math.sqrt(p["dim"]) * math.sqrt(p["T"]) / D
    return p["eta_scale"] / (lipschitz + noise)


def _optimizer(method: str, x: torch.nn.Parameter, p: dict, lipschitz: float):
    D = p["D"] * p.get("radius_scale", 1.0)
    if method in O2NC_METHODS:
        return O2NC([x], lr=_step(p, lipschitz, D), D=D, T=p["T"], hint=O2NC_METHODS[method],
                    inner_steps=p["inner_steps"])
    if method == "odog_adaptive":
        return O2NC([x], adaptive=True, gamma=p["gamma"], alpha=1e-8, D=D, T=p["T"])
    if method == "gd":
        return torch.optim.SGD([x], lr=p["eta_scale"] / lipschitz)
    return NormalizedSGD([x], lr=p["step_scale"] * p["D"], momentum=0.9)


def run_trial(trial: Trial, device: str = "cpu") -> dict:
    torch.set_num_threads(1)
    p = dict(trial.params)
    problem = _make_problem(trial.problem, trial.seed, int(p["mlp_samples"]))
    p["dim"] = problem.x0.numel()
    assert p["dim"] == _dimension(trial.problem)  # T(ε, σ) was set from this dimension
    x = torch.nn.Parameter(problem.x0.clone())
    opt = _optimizer(trial.method, x, p, problem.lipschitz)
    noise = torch.Generator().manual_seed(30_000 + trial.seed)
    sigma = float(p["sigma"])
    calls = 0

    def closure():
        nonlocal calls
        calls += 1
        loss, grad = problem.value_and_grad(x.detach())
        if sigma > 0:
            grad = grad + sigma * torch.randn(grad.shape, generator=noise, dtype=grad.dtype)
        x.grad = grad
        return torch.tensor(loss)

    eps = sorted(p["eps"], reverse=True)
    reached: dict[float, int] = {}
    best = math.inf
    f0 = problem.value_and_grad(problem.x0)[0] if p.get("f_guard") else math.inf
    plateau = 0  # checks with ‖∇F‖ ≤ max ε but F above F(x₀): not counted
    steps = 0
    is_o2nc = isinstance(opt, O2NC)
    diverged = False
    while calls < p["budget"] and len(reached) < len(eps):
        opt.step(closure)
        steps += 1
        # Every method is checked once per T iterations: when an O2NC episode completes.
        if steps % p["T"]:
            continue
        candidate = opt.output()[x] if is_o2nc else x.detach()
        f, g = problem.value_and_grad(candidate)
        gnorm = float(torch.linalg.vector_norm(g))
        if not math.isfinite(gnorm) or gnorm > 1e8:
            diverged = True
            break
        if f > f0:  # escaped towards the flat region at infinity: not a stationary point found
            plateau += gnorm <= eps[0]
            continue
        best = min(best, gnorm)
        for e in eps:
            if e not in reached and gnorm <= e:
                reached[e] = calls
    if is_o2nc:
        assert opt.grad_calls == calls  # the optimizer's own count agrees with the closure's
    out = {"grad_calls": calls, "best_grad_norm": best if math.isfinite(best) else None,
           "diverged": diverged, "lipschitz": problem.lipschitz, "plateau_checks": plateau}
    for e in eps:
        out[f"calls@{e:g}"] = reached.get(e)
    return out


# -- summary ---------------------------------------------------------------------------------

_GRID_KEYS = ("eta_scale", "gamma", "step_scale", "radius_scale")
_GRID_NAME = {"eta_scale": "η·L̂₁", "gamma": "γ", "step_scale": "step/D", "radius_scale": "D×"}


@dataclass(frozen=True)
class _Pick:
    """One (method, problem, σ, ε) cell at its tuned grid point."""

    tuned: Tuned
    calls: dict  # {seed: calls, or the budget where not reached (a lower bound)}
    reached: dict  # {seed: bool}


def _point(r: Result) -> tuple[tuple[str, ...], tuple]:
    keys = tuple(k for k in _GRID_KEYS if k in r.trial.params)
    return keys, tuple(float(r.trial.params[k]) for k in keys)


def _tune_cell(name: str, keys: tuple[str, ...], points: dict) -> Tuned:
    """:func:`tune` over the grid points of one cell (mean calls over seeds, budget where not
    reached).  With a 2-D grid (``radius_scales`` gridded) a best point is on the edge when
    any coordinate sits at its axis's end (``tune`` alone sorts points lexicographically)."""
    scores = {pt if len(pt) > 1 else pt[0]: [c if c is not None else b
                                             for c, b in seeds.values()]
              for pt, seeds in points.items()}
    t = tune(f"{name} {'/'.join(_GRID_NAME[k] for k in keys)}", scores, minimize=True)
    if len(keys) > 1:
        best = t.best
        edge = False
        for i in range(len(keys)):
            axis = sorted({pt[i] for pt in points})
            edge |= len(axis) > 1 and best[i] in (axis[0], axis[-1])
        t = replace(t, on_edge=edge)
    return t


def _selected(results: list[Result]) -> dict:
    """``{(method, problem, σ, ε): _Pick}``: every cell at the grid point :func:`tune` picks."""
    raw: dict = {}
    keys_of: dict = {}
    for r in results:
        sigma = float(r.trial.params["sigma"])
        keys, pt = _point(r)
        budget = int(r.trial.params["budget"])
        for e in r.trial.params["eps"]:
            cell = (r.trial.method, r.trial.problem, sigma, float(e))
            c = r.metrics.get(f"calls@{e:g}")
            raw.setdefault(cell, {}).setdefault(pt, {})[r.trial.seed] = (
                None if c is None else int(c), budget)
            keys_of[cell] = keys
    picks = {}
    for cell, points in raw.items():
        method, problem, sigma, e = cell
        t = _tune_cell(f"{LABEL[method]} ({problem}, σ={sigma:g}, ε={e:g})", keys_of[cell],
                       points)
        best = t.best if isinstance(t.best, tuple) else (t.best,)
        seeds = points[best]
        picks[cell] = _Pick(t, {s: c if c is not None else b for s, (c, b) in seeds.items()},
                            {s: c is not None for s, (c, _) in seeds.items()})
    return picks


def _cell_stats(picks: dict, method: str, problem: str, sigma: float, e: float):
    """Calls over seeds at the tuned point (budget where not reached): mean, CI half-width,
    reached count, n, the tuned value."""
    pick = picks.get((method, problem, sigma, e))
    if pick is None:
        return None
    xs = list(pick.calls.values())
    mean, half = mean_ci(xs)
    return {"values": xs, "mean": mean, "half": half, "reached": sum(pick.reached.values()),
            "n": len(xs), "best": pick.tuned.best, "edge": pick.tuned.on_edge}


def _fmt(st: dict | None) -> str:
    if st is None:
        return "—"
    txt = fmt_ci(st["mean"], st["half"], digits=4)
    return txt if st["reached"] == st["n"] else f"≥ {txt} ({st['reached']}/{st['n']} reached)"


def _fmt_best(st: dict | None) -> str:
    if st is None:
        return ""
    b = st["best"]
    txt = ", ".join(f"{v:.3g}" for v in b) if isinstance(b, tuple) else f"{b:.3g}"
    return f" @ {txt}{' (edge)' if st['edge'] else ''}"


def _censored(v: Verdict, a_cut: bool, b_cut: bool) -> Verdict:
    """A cell not reached within the budget counts the budget, a lower bound of its calls
    (:func:`~optzoo.experiment.verdicts.censored`)."""
    return censored(v, a_censored=a_cut, b_censored=b_cut,
                    why="a seed that does not reach ε counts the budget, only a lower bound of "
                        "its calls")


def _undecided(why: str) -> Verdict:
    return undecided(why)


def _versus(picks: dict, problem: str, sigma: float, e: float, a: str, b: str,
            test) -> Verdict | None:
    """``test(calls a, calls b)`` paired by seed at each method's tuned point, then the
    censoring guard and :func:`guard` (grid edge, equal budgets)."""
    pa, pb = picks.get((a, problem, sigma, e)), picks.get((b, problem, sigma, e))
    if pa is None or pb is None:
        return None
    va, vb = common_seeds(pa.calls, pb.calls)
    if not va:
        return None
    v = _censored(test(va, vb), any(not pa.reached[s] for s in va),
                  any(not pb.reached[s] for s in vb))
    return guard(v, pa.tuned, pb.tuned)


def _compare(picks, problems, eps_of, a: str, b: str, test) -> tuple[dict, list[str]]:
    """One cell verdict per deterministic (problem, ε), and the evidence."""
    cells, parts = {}, []
    for problem in problems:
        for e in eps_of(problem):
            v = _versus(picks, problem, 0.0, e, a, b, test)
            if v is None:
                continue
            sa, sb = (_cell_stats(picks, m, problem, 0.0, e) for m in (a, b))
            cells[f"{a} vs {b}, {problem} ε={e:g}"] = v
            parts.append(f"{problem} ε={e:g}: {a} {_fmt(sa)}{_fmt_best(sa)} vs {b} {_fmt(sb)}"
                         f"{_fmt_best(sb)} [{v.verdict}]")
    return cells, parts


def _seed_slopes(picks: dict, method: str, problem: str, sigma: float,
                 eps: list[float]) -> dict[int, float]:
    """Per seed: the log-log slope of calls vs ε over the ε that seed reached (≥ 2 needed)."""
    seeds: dict = {}
    for e in eps:
        pick = picks.get((method, problem, sigma, e))
        if pick is None:
            continue
        for s, c in pick.calls.items():
            if pick.reached[s]:
                seeds.setdefault(s, []).append((e, c))
    return {s: float(np.polyfit(np.log([e for e, _ in pts]), np.log([c for _, c in pts]), 1)[0])
            for s, pts in seeds.items() if len(pts) >= 2}


def _plot(cells: dict, settings: list[tuple[str, float]], methods: list[str],
          path: Path) -> Figure:
    fig, axes = grid(len(settings), panel=(4.6, 3.8))
    colors = {LABEL[m]: color(i) for i, m in enumerate(methods)}
    for ax, (problem, sigma) in zip(axes, settings, strict=True):
        eps = sorted({k[3] for k in cells if k[1] == problem and k[2] == sigma})
        series, cens = {}, {}
        for method in methods:
            for e in eps:
                st = _cell_stats(cells, method, problem, sigma, e)
                if st is None:
                    continue
                series.setdefault(LABEL[method], {})[e] = st["values"]
                if st["reached"] < st["n"]:
                    cens.setdefault(LABEL[method], []).append((e, st["mean"]))
        line_panel(ax, series, xlabel="ε  (‖∇F(output)‖ ≤ ε)",
                   ylabel="gradient calls (best grid point)", title=f"{problem}, σ = {sigma:g}",
                   xlog=True, ylog=True, colors=colors, legend=False)
        # figures.py has no marker for censored cells (a lower bound): open triangles on top
        for name, pts in cens.items():
            ax.plot(*zip(*pts, strict=True), ls="none", marker="^", ms=8, mfc="none",
                    color=colors[name])
        ax.invert_xaxis()
    # one legend for all panels (colours are per method), outside the panels on the right
    handles = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    if handles:
        axes[-1].plot([], [], ls="none", marker="^", ms=8, mfc="none", color="0.3",
                      label="not reached by every seed (lower bound)")
        h, lab = axes[-1].get_legend_handles_labels()
        handles.setdefault(lab[-1], h[-1])
        fig.legend(list(handles.values()), list(handles), fontsize=7, loc="center left",
                   bbox_to_anchor=(1.0, 0.5))
    return save(fig, path, "Gradient calls to reach ‖∇F‖ ≤ ε per method at its tuned grid point "
                           "(log-log; mean ± 95 % CI over seeds; open triangles: not reached by "
                           "every seed, the budget counted, a lower bound)")


def summarize(results: list[Result], cfg: O2NCConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    picks = _selected(results)
    methods = [m for m in METHODS if any(k[0] == m for k in picks)]
    settings = sorted({(k[1], k[2]) for k in picks}, key=lambda t: (PROBLEMS.index(t[0]), t[1]))

    rows = []
    for problem, sigma in settings:
        eps = sorted({k[3] for k in picks if k[1:3] == (problem, sigma)}, reverse=True)
        for method in methods:
            stats = [_cell_stats(picks, method, problem, sigma, e) for e in eps]
            if all(st is None for st in stats):  # method not run in this setting
                continue
            rows.append([problem, f"{sigma:g}", LABEL[method],
                         *(_fmt(st) + _fmt_best(st) for st in stats)])
    width = max(len(cfg.eps), len(cfg.eps_noisy))
    tables = [Table(
        title="Gradient calls to reach ‖∇F‖ ≤ ε (mean ± 95% CI over seeds) at the grid point "
              "tune() picks per (method, problem, σ, ε): fewest mean calls, budget where not "
              "reached; '@ v' is that step (η·L̂₁, γ, or step/D), '(edge)' an end of its grid; "
              "columns are the ε of that row's setting, largest first",
        columns=["problem", "σ", "method", *[f"ε #{i + 1}" for i in range(width)]],
        rows=[r + [""] * (3 + width - len(r)) for r in rows])]
    eps_table = [[problem, f"{sigma:g}", ", ".join(f"{e:g}" for e in sorted(
        {k[3] for k in picks if k[1:3] == (problem, sigma)}, reverse=True))]
        for problem, sigma in settings]
    tables.append(Table(title="ε targets per setting", columns=["problem", "σ", "ε #1, #2, …"],
                        rows=eps_table))
    figures = [_plot(picks, settings, methods, outdir / "calls_vs_eps.png")]

    det_problems = [p for p, s in settings if s == 0.0]

    def det_eps(problem):
        return sorted({k[3] for k in picks if k[1:3] == (problem, 0.0)}, reverse=True)

    claims = []
    ratio = math.log(cfg.min_call_ratio)

    def fewer(a, b):
        return superior(a, b, min_effect=ratio, direction="less", log_ratio=True)

    if {"odog", "cmo23"} <= set(methods):
        cells, ev = _compare(picks, det_problems, det_eps, "odog", "cmo23", fewer)
        if cells:
            claims.append(Claim(
                text="(1) ODOG needs fewer gradient calls than CMO23's double-loop O2NC "
                     f"(fixed-point hints, {cfg.inner_steps} inner iterations) at every ε "
                     f"(deterministic): by more than a factor {cfg.min_call_ratio:g} (paired "
                     "log-ratio CI, each method at its tuned step).",
                evidence="; ".join(ev), verdict=all_of(cells)))
    if {"odog", "naive_hint", "ogd"} <= set(methods):
        c1, ev1 = _compare(picks, det_problems, det_eps, "odog", "naive_hint", fewer)
        c2, ev2 = _compare(picks, det_problems, det_eps, "odog", "ogd", fewer)
        if c1 or c2:
            claims.append(Claim(
                text="(2) ODOG needs fewer gradient calls than O2NC with the naive hint "
                     "h_n = g_{n−1} and than O2NC with plain projected OGD, at every ε "
                     f"(deterministic): by more than a factor {cfg.min_call_ratio:g} (paired "
                     "log-ratio CI, each method at its tuned step).",
                evidence="; ".join(ev1) + " | " + "; ".join(ev2),
                verdict=all_of({**c1, **c2})))
    noisy = [(p, s) for p, s in settings if s > 0]
    if noisy and {"odog", "gd"} <= set(methods):
        cells, parts = {}, []
        for problem, sigma in noisy:
            eps = sorted({k[3] for k in picks if k[1:3] == (problem, sigma)}, reverse=True)
            stats = {m: [(e, _cell_stats(picks, m, problem, sigma, e)) for e in eps]
                     for m in ("odog", "gd")}
            reached = [float(r) for e in eps if (p := picks.get(("odog", problem, sigma, e)))
                       for r in p.reached.values()]
            where = f"{problem} σ={sigma:g}"
            tuned = {m: [p.tuned for e in eps if (p := picks.get((m, problem, sigma, e)))]
                     for m in ("odog", "gd")}
            # whether ODOG reaches ε rests on its tuned η: guarded like every comparison
            cells[f"{where}: ODOG reaches every ε in every seed"] = guard(
                bound_holds(reached, 1.0, side="ge"), *tuned["odog"])
            so, sg = common_seeds(_seed_slopes(picks, "odog", problem, sigma, eps),
                                  _seed_slopes(picks, "gd", problem, sigma, eps))
            if so:
                sv = superior(so, sg, min_effect=cfg.min_slope_gap, direction="greater")
            else:
                sv = _undecided("no seed where ODOG and SGD both reach two ε: no slopes to "
                                "compare")
            cells[f"{where}: slope ODOG − slope SGD"] = guard(sv, *tuned["odog"], *tuned["gd"])
            fmt_s = {m: ", ".join(f"{v:.2f}" for v in d.values()) or "n/a"
                     for m, d in (("odog", so), ("gd", sg))}
            parts.append(
                f"{where}: ODOG ("
                + ", ".join(f"ε={e:g}: {_fmt(st)}{_fmt_best(st)}" for e, st in stats["odog"])
                + f"); per-seed log-log slope ODOG [{fmt_s['odog']}] vs SGD [{fmt_s['gd']}] "
                + "(SGD " + ", ".join(f"ε={e:g}: {_fmt(st)}{_fmt_best(st)}"
                                       for e, st in stats["gd"]) + ")")
        claims.append(Claim(
            text="(3) With Gaussian gradient noise the unchanged ODOG code path (no option "
                 "changed, radius scaled as for every O2NC method) reaches every ε in every "
                 "seed, and its calls-vs-ε log-log slope is shallower than SGD's by more than "
                 f"{cfg.min_slope_gap:g} (paired per-seed slopes; theory −3.5 vs −4; "
                 "qualitative).", evidence="; ".join(parts), verdict=all_of(cells)))
    if {"odog", "odog_adaptive"} <= set(methods):
        margin = math.log(cfg.adaptive_factor)
        cells, ev = _compare(
            picks, det_problems, det_eps, "odog_adaptive", "odog",
            lambda a, b: noninferior(a, b, margin=margin, direction="less", log_ratio=True))
        if cells:
            claims.append(Claim(
                text="(4) ODOG with the adaptive step of §4 (γ grid, α = 1e-8, accumulator "
                     f"reset every episode) needs at most {cfg.adaptive_factor:g}× the calls of "
                     "tuned-η ODOG at every ε (deterministic; non-inferiority of the paired "
                     "log-ratio).", evidence="; ".join(ev), verdict=all_of(cells)))

    notes = [
        "The paper has NO experiments (pure complexity theory); these four claims are the brief's "
        "proposed small-scale checks of its complexity table, not numbers from the paper.",
        "Selection rule (identical for every method): for each (method, problem, σ, ε) the "
        "grid point with the fewest mean gradient calls over seeds (verdicts.tune; a seed not "
        "reaching ε counts the budget). Cells not reached by some seed show '≥'. A comparison "
        "whose tuned step sits on its grid's edge is inconclusive (grid edge; no end is a hard "
        "limit: η = 1/L̂₁ already exceeds the theory's √(2/5)/L₁ and L̂₁ is only an estimate); "
        "one that rests on a budget value where it would need the true count is inconclusive "
        "(censored).",
        f"Grids (fixed before running; every O2NC method crosses its step with D): O2NC η ∈ "
        f"{[round(v, 3) for v in cfg.eta_scales]}/L̂₁ (robust), "
        f"{[round(v, 3) for v in cfg.eta_scales_mlp]}/L̂₁ (MLP); D = "
        f"{[round(v, 3) for v in cfg.radius_scales]} × D_ref·(ε/ε_ref)^{cfg.radius_exponent:g} "
        f"with D_ref = {cfg.radius_robust} at ε_ref = {cfg.eps_ref_robust:g} (robust) / "
        f"{cfg.radius_mlp} at {cfg.eps_ref_mlp:g} (MLP); T₀ = {cfg.episode}; CMO23 inner_steps "
        f"= {cfg.inner_steps}; adaptive γ ∈ {list(cfg.gammas)}; GD/SGD η ∈ "
        f"{[round(v, 4) for v in cfg.gd_scales]}/L̂₁; normalized SGD step ∈ "
        f"{[round(s, 3) for s in cfg.nsgd_scales]}·D(ε), β = 0.9. L̂₁ = 2λ_max(AᵀA/n) for the "
        "robust regression and a rough bound for the MLP. The theory's D ∝ ε^{3/4} put the best "
        "D on opposite grid ends at the two ends of the ε range in a probe, so the presets grid "
        "D at every ε (radius_exponent = 0; the tuned D is shown per cell as '@ η, D×').",
        "Robust regression: a check counts only at F(candidate) ≤ F(x₀) (φ is flat at "
        "infinity; SGD with a huge step otherwise 'reached' ε on that plateau).",
        "Noise: T = max(T₀, ⌈σ²d/ε²⌉), D × T₀/T (episode diameter T·D as without noise), "
        "η = η_scale/(L̂₁ + σ√d·√T/D) (the regret-optimal step when noise dominates).",
        f"Budgets: {cfg.budget} gradient calls (deterministic), {cfg.budget_noisy} (noisy); the "
        f"MLP uses {cfg.mlp_samples} digits. Stationarity is checked with the exact gradient "
        "outside the budget, every T iterations for every method: O2NC at the episode average just "
        "completed, GD/NSGD at the iterate.",
        "Inferred details of ODOG (see optzoo.optim.o2nc): h₁ = ∇F(x₀), Δ₁ = Π_D(−ηh₁), Δ not "
        "reset between episodes, output = last completed episode average.",
        f"Methods run with noise σ ∈ {list(cfg.sigmas)} on {list(cfg.noisy_problems)}: "
        f"{list(cfg.noisy_methods)} (the quick preset keeps only the claim-3 pair to bound its "
        "cost: 2 205 trials, about 6 CPU-minutes; the MLP is run without noise to bound the "
        "full preset: 9 840 trials, about 12 CPU-hours — the robust regression's 7 380 trials "
        "2.9 CPU-h, the MLP's 2 460 about 13 CPU-s each — measured on the 2-core development "
        "machine).",
        "Deterministic T is fixed (T₀), not the theory's ε^{-1/4}; the slope claim (3) is "
        "qualitative (worst-case exponents, small ε range).",
    ]
    return Summary(tables=tables, figures=figures, claims=claims, notes=notes)


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "The paper (ODOG, ICLR 2026) has no experiments; this runs the brief's proposed checks of "
        "its complexity table. Gradient calls to reach ‖∇F‖ ≤ ε on a smoothed robust regression "
        "(d = 50, n = 500) and a full-batch tanh MLP on digits, deterministic and with Gaussian "
        "gradient noise, for ODOG, O2NC with the naive hint, plain projected OGD, CMO23's "
        "fixed-point double loop, adaptive ODOG, GD/SGD and normalized SGD with momentum; a "
        "step × radius grid per O2NC method (same size for GD), best point per (method, problem, "
        "σ, ε)."
        " Trials are CPU-sized (single-threaded) and run on the CPU whatever --device says."),
)
