"""Reproduction ``adagrad-nesterov``: Kovalev, "SGD with Adaptive Preconditioning: Unified
Analysis and Momentum Acceleration" (ICLR 2026, arXiv 2506.23803, OpenReview XhXMzPJJ7J).

The paper is theory only (convex stochastic optimization; no experiments, no code).  Its claims
are rates, checked here on the brief's small convex problems:

(a) anisotropic quadratic ``f(X) = ½ Σ L_ij (X_ij − X*_ij)²`` over X ∈ R^{m×n} (d = m·n),
    ``L_ij`` log-uniform in [1e-3, 1e2] (a few large curvatures: "sparse l"), X* ~ N(0, 1)
    dense, X₀ = 0; deterministic and with N(0, σ²) gradient noise (``noise_levels``).  It is
    separable, so diagonal AdaGrad is exactly scale-invariant on it (each coordinate a 1-D
    problem: Alg. 2 at round-off in ~10 iterations) — the best case of claim 1, no test of
    diagonal AdaGrad's acceleration;
(a') (issue 20) the non-separable quadratic ``f(X) = ½ eᵀ S Pᵀ Λ P S e``, ``e = vec(X − X*)``:
    the same axis-aligned anisotropy ``S² = diag(L)`` coupled by a rotation
    ``P = Q_n ⊗ Q_m`` of two Haar rotations (:func:`scipy.stats.ortho_group`) with ``Λ``
    log-uniform in [1, ``rot_spread`` = 10] —
    deterministic (``rot-sigma0``) and with *sparse* noise (``rot-sparse``: N(0, σ²) on a seeded
    random 5 % of the coordinates only);
(b) L2-regularised multinomial logistic regression on scikit-learn digits (W ∈ R^{10×64}, no
    bias, pixels / 16 then each feature times a random factor log-uniform in [0.01, 10]),
    full-batch gradients, W₀ = 0, W* and f* from SciPy L-BFGS (to its float64 limit:
    projected gradient ≲ 1e-9).

Methods: AdaGrad-Norm, diagonal AdaGrad, ASGO (left side; ``asgo_right`` = the 64-dim side on
(b)), DASGO, each with Algorithm 1 (η = R, output: iterate average) and Algorithm 2 (η = 2R,
output x̄; for ASGO beyond the paper's theory); references SGD (step 1/L), SGD with Nesterov
momentum 0.9 (step 1/L), Adam (lr 1e-2, torch defaults otherwise) and AcceleGrad (Levy,
Yurtsever & Cevher 2018, the prior accelerated scalar adaptive method; unconstrained, output the
α-weighted average ȳ, D = 2‖X₀ − X*‖_F: its D is the diameter of a Euclidean set K holding x*,
and the ball around X₀ through X* has that diameter; G = 1e-6, i.e. G² = δ).  η follows the paper's
rule with R the distance ‖X₀ − X*‖ in the method's R-norm (AdaGrad-Norm ‖·‖_F/√d, AdaGrad
‖·‖_max, ASGO σ_max/√n (left) or σ_max/√m (right), DASGO ‖·‖_{2→∞}/√n), computed from the known
X*; no tuning.  (The theory's R bounds the distance of ALL iterates; the initial distance is the
usual practical reading.)  Measured: relative gap ``(f(out) − f*)/(f(X₀) − f*)`` at the output
point; iterations to reach ``tol`` (f evaluated on a 250-point log grid of k); log-log slope
of the gap over the last decade of iterations (points below ``FLOOR`` excluded: round-off).

Verdicts (:mod:`optzoo.experiment.verdicts`; comparisons are paired by seed: the methods of a
problem share its data and noise stream).  No step size is tuned: η = R or 2R from the paper's
rule, SGD 1/L, Adam a fixed default, so no ``tune``/``guard`` applies (every method has the same
budget: one setting).  Each claim's old rule compared *means* with no CI:

(1) ``all_of`` over (problem, Algorithm 1 / 2) of ``superior`` on the per-seed log10 final gap,
    lower is better, ``min_effect = min_gap_log10`` (was: mean log gap lower by any amount).
    Noise-aware (issue 20): the cells are the problems where the theory predicts the advantage
    — no noise (the smooth term ‖l‖₁ vs d‖l‖_∞ with sparse l) and sparse noise (the noise term
    ‖σ‖₁‖X*‖_∞ against √d‖σ‖₂·RMS(X*)).  With *isotropic* noise the noise term favours
    AdaGrad-Norm by ‖X*‖_∞/RMS(X*) ≈ 3 at these d, so no advantage is predicted: those cells are
    shown in the evidence, not part of the claim (before: they were, and made it "not held").
(2a) ``all_of`` over (deterministic problem, AdaGrad / DASGO) of ``superior`` on
    log(iterations Alg. 2 / iterations Alg. 1), ``min_effect = log min_speedup`` (was: mean
    iterations fewer by any amount).  Unreached counts as K + 1, a lower bound: a *held* that
    rests on an unreached Alg. 2 seed, or a *not held* on an unreached Alg. 1 seed, is
    downgraded to inconclusive (the bound cannot support it).  Diagonal AdaGrad is not tested
    on the separable quadratic (exact scale invariance, above); the rotated one replaces it.
(2b) (issue 20) ``all_of`` over the same cells of :func:`~optzoo.experiment.verdicts.slope`:
    the slope of log(gap Alg. 2 / gap Alg. 1) on log k — slope Alg. 2 − slope Alg. 1 — over the
    last decade where both gaps are above ``FLOOR`` (``[k_end/10, k_end]``, ``k_end ≥ K/10``),
    points of all seeds pooled, percentile-bootstrap CI; held if the CI lies below
    ``−min_slope_gain``, not held if entirely above it (a tie, slope 0, is not held).  Before:
    ``within`` bands "Alg. 2 ≤ −1.5, Alg. 1 in [−1.5, −0.5]", which read the worst-case bounds
    1/K² and 1/K as exact rates; Alg. 1 with averaging already reaches −2 on a quadratic and
    failed that band while being slower.  No measurable decade → inconclusive.
(3) ``all_of`` of ``within``: the CI of every variant's mean tail slope lies inside
    ``noise_slope_band`` (was: the means).

Verdict margins (fields of :class:`AdaNesterovConfig`, the same in every preset, fixed before
looking at results; trial parameters do not contain them):

* ``min_gap_log10 = 0.3`` — a factor 2 in the relative gap: the smallest advantage of the
  diagonal preconditioner that counts (the theory's gain is a dimension-dependent factor).
* ``min_speedup = 1.5`` — Alg. 2 must need ≤ 2/3 of Alg. 1's iterations; 1/K² vs 1/K predicts
  a factor of order √(1/tol) = 1000 at tol = 1e-6, so 1.5 is a conservative smallest speed-up.
* ``min_slope_gain = 0.5`` (issue 20; replaces ``acc_slope_max``/``plain_slope_band``) — half
  the gap between the exponents of Thm 2 (−2) and Thm 1 (−1): a steeper tail by less than
  that is not the acceleration the theorems separate.
* ``noise_slope_band = (−0.8, −0.2)`` — ±0.3 around the noise rate −½; unchanged.

Read top to bottom: config and presets, problems, one trial, summary with claims.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

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
    mean_ci,
)
from optzoo.experiment.stats import fmt_ci
from optzoo.experiment.verdicts import (
    Verdict,
    all_of,
    censored,
    common_seeds,
    slope,
    superior,
    undecided,
    within,
)
from optzoo.optim.accelegrad import AcceleGrad
from optzoo.optim.adagrad import DiagAdaGrad
from optzoo.optim.adagrad_norm import AdaGradNorm
from optzoo.optim.asgo import ASGO
from optzoo.optim.dasgo import DASGO
from optzoo.report.figures import color, grid, line_panel, save

SLUG = "adagrad-nesterov"

ADAPTIVE = ("adagrad_norm", "diag_adagrad", "asgo", "dasgo")
METHODS = (*ADAPTIVE, *(f"{m}_nesterov" for m in ADAPTIVE), "sgd", "sgd_nesterov", "adam",
           "accelegrad")
LOGREG_EXTRA = ("asgo_right",)
FLOOR = 1e-12  # relative gaps below this are round-off, excluded from slope fits


# -- configuration ---------------------------------------------------------------------------

@dataclass(frozen=True)
class AdaNesterovConfig(Preset):
    """Settings of the reproduction.

    Args:
        seeds: seeds per (method, problem) cell.
        rows / cols: the quadratic's X ∈ R^{rows×cols} (d = rows·cols).
        iters: iterations K per trial.
        noise_levels: σ of the quadratic's gradient noise (0 = deterministic).
        logreg_samples: digits samples used (≤ 1797; first ones).
        l2: L2 regularisation λ of the logistic regression.
        tol: relative-gap threshold for "iterations to reach".
        high_noise: σ at which claim (3) is evaluated (must be in ``noise_levels``).
        rotated: also run the non-separable quadratic ``rot-sigma0`` (claims 1, 2a, 2b).
        rot_spread: eigenvalue range ``[1, rot_spread]`` of the rotated coupling ``C``.
        sparse_noise: σ of ``rot-sparse``: the rotated quadratic with noise on a random
            ``noise_fraction`` of the coordinates only (claim 1's noisy cell; 0 = not run).
        noise_fraction: share of coordinates that carry noise in ``rot-sparse``.
        min_gap_log10: claim 1's smallest log10 gap advantage that counts.
        min_speedup: claim 2a's smallest iteration ratio Alg. 1 / Alg. 2 that counts.
        min_slope_gain: claim 2b: Alg. 2's tail slope must be steeper than Alg. 1's by more
            than this (bootstrap CI of the slope of log(gap Alg. 2 / gap Alg. 1)).
        noise_slope_band: claim 3: every variant's tail slope at high noise lies in this.
    """

    seeds: int = 3
    rows: int = 10
    cols: int = 20
    iters: int = 2000
    noise_levels: tuple[float, ...] = (0.0, 1.0)
    logreg_samples: int = 1797
    l2: float = 1e-3
    tol: float = 1e-6
    high_noise: float = 1.0
    rotated: bool = True
    rot_spread: float = 10.0
    sparse_noise: float = 1.0
    noise_fraction: float = 0.05
    min_gap_log10: float = 0.3
    min_speedup: float = 1.5
    min_slope_gain: float = 0.5
    noise_slope_band: tuple[float, ...] = (-0.8, -0.2)

    def validate(self) -> None:
        super().validate()
        if self.rows < 1 or self.cols < 1:
            raise ConfigError(f"rows/cols: expected >= 1, got {self.rows}x{self.cols}")
        if self.iters < 20:
            raise ConfigError(f"iters: expected >= 20, got {self.iters}")
        if not 10 <= self.logreg_samples <= 1797:
            raise ConfigError(f"logreg_samples: expected 10..1797, got {self.logreg_samples}")
        if any(s < 0 for s in self.noise_levels):
            raise ConfigError(f"noise_levels: expected >= 0, got {self.noise_levels}")
        band = self.noise_slope_band
        if len(band) != 2 or band[0] > band[1]:
            raise ConfigError(f"noise_slope_band: expected (lo, hi) with lo <= hi, got {band}")
        if self.rot_spread < 1:
            raise ConfigError(f"rot_spread: expected >= 1, got {self.rot_spread}")
        if self.sparse_noise < 0 or not 0 < self.noise_fraction <= 1:
            raise ConfigError(f"sparse_noise / noise_fraction: expected >= 0 / in (0, 1], got "
                              f"{self.sparse_noise} / {self.noise_fraction}")
        if self.min_slope_gain < 0:
            raise ConfigError(f"min_slope_gain: expected >= 0, got {self.min_slope_gain}")
        if self.min_gap_log10 < 0 or self.min_speedup < 1:
            raise ConfigError(f"min_gap_log10 / min_speedup: expected >= 0 / >= 1, got "
                              f"{self.min_gap_log10} / {self.min_speedup}")


PRESETS = {
    "smoke": AdaNesterovConfig(seeds=1, rows=3, cols=5, iters=40, logreg_samples=200),
    "quick": AdaNesterovConfig(seeds=3, rows=10, cols=20, iters=2000, logreg_samples=300),
    "full": AdaNesterovConfig(seeds=5, rows=20, cols=50, iters=10000),
}


def trials(cfg: AdaNesterovConfig) -> list[Trial]:
    out = []
    problems = [(f"quad-sigma{s:g}", {"sigma": float(s)}) for s in cfg.noise_levels]
    if cfg.rotated:
        problems.append(("rot-sigma0", {"sigma": 0.0, "spread": cfg.rot_spread}))
        if cfg.sparse_noise > 0:
            problems.append(("rot-sparse", {"sigma": float(cfg.sparse_noise),
                                            "spread": cfg.rot_spread,
                                            "noise_fraction": cfg.noise_fraction}))
    problems.append(("logreg", {}))
    for problem, extra in problems:
        methods = METHODS + (LOGREG_EXTRA if problem == "logreg" else ())
        for method in methods:
            for seed in range(cfg.seeds):
                params = {"iters": cfg.iters, "tol": cfg.tol, **extra}
                if problem == "logreg":
                    params.update(samples=cfg.logreg_samples, l2=cfg.l2)
                else:
                    params.update(rows=cfg.rows, cols=cfg.cols)
                out.append(Trial(method=method, problem=problem, seed=seed, params=params))
    return out


# -- problems ----------------------------------------------------------------------------------

@dataclass
class Problem:
    """A smooth convex problem over one matrix X with an exact gradient oracle (+ noise)."""

    x_star: torch.Tensor
    f_star: float
    lipschitz: float  # bound on the Euclidean smoothness constant, for SGD's step 1/L
    value: object  # X -> float tensor
    grad: object  # X -> gradient (exact)


def _quadratic(rows: int, cols: int, seed: int) -> Problem:
    g = torch.Generator().manual_seed(10_000 + seed)
    curv = 10.0 ** (torch.rand(rows, cols, generator=g, dtype=torch.float64) * 5 - 3)
    x_star = torch.randn(rows, cols, generator=g, dtype=torch.float64)
    return Problem(x_star=x_star, f_star=0.0, lipschitz=float(curv.max()),
                   value=lambda x: 0.5 * (curv * (x - x_star) ** 2).sum(),
                   grad=lambda x: curv * (x - x_star))


@functools.lru_cache(maxsize=4)
def _rotated(rows: int, cols: int, seed: int, spread: float) -> Problem:
    """Non-separable quadratic ``f(X) = ½ ⟨E, S ⊙ Pᵀ(Λ ⊙ P(S ⊙ E))⟩``, ``E = X − X*``.

    ``S`` holds ``√L_ij`` with ``L_ij`` log-uniform in [1e-3, 1e2] (the separable problem's
    axis-aligned anisotropy: sparse diagonal smoothness), ``P(Y) = Q_m Y Q_nᵀ`` is a rotation of
    R^{m×n} made of two Haar-random rotations (:func:`scipy.stats.ortho_group`; a Kronecker
    rotation, so a gradient costs O(mn(m + n)) instead of O((mn)²)), and ``Λ`` is log-uniform in
    ``[1, spread]``: a coupling that no diagonal preconditioner removes, so diagonal AdaGrad is
    no longer exactly scale-invariant (on the separable problem it converges in ~10 iterations).
    """
    from scipy.stats import ortho_group

    rng = np.random.default_rng(40_000 + seed)
    scale = torch.as_tensor(np.sqrt(10.0 ** rng.uniform(-3.0, 2.0, size=(rows, cols))))
    lam = torch.as_tensor(spread ** rng.uniform(0.0, 1.0, size=(rows, cols)))
    qm, qn = (torch.as_tensor(ortho_group.rvs(k, random_state=rng)) if k > 1
              else torch.ones(1, 1, dtype=torch.float64) for k in (rows, cols))
    x_star = torch.as_tensor(rng.standard_normal((rows, cols)))

    def hess_vec(e):
        return scale * (qm.T @ (lam * (qm @ (scale * e) @ qn.T)) @ qn)

    def grad(x):
        return hess_vec(x - x_star)

    def value(x):
        e = x - x_star
        return 0.5 * (e * hess_vec(e)).sum()

    basis = torch.eye(rows * cols, dtype=torch.float64).reshape(-1, rows, cols)
    hess = torch.stack([hess_vec(b).reshape(-1) for b in basis], 1)
    return Problem(x_star=x_star, f_star=0.0,
                   lipschitz=float(torch.linalg.eigvalsh((hess + hess.T) / 2).max()),
                   value=value, grad=grad)


@functools.lru_cache(maxsize=8)
def _digits(samples: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    from sklearn.datasets import load_digits

    data = load_digits()
    a = torch.as_tensor(data.data[:samples], dtype=torch.float64) / 16.0
    rng = np.random.default_rng(20_000 + seed)
    scale = 10.0 ** rng.uniform(-2.0, 1.0, size=a.shape[1])  # per-feature factor in [0.01, 10]
    a = a * torch.as_tensor(scale)
    y = torch.nn.functional.one_hot(torch.as_tensor(data.target[:samples]), 10).double()
    return a, y


@functools.lru_cache(maxsize=8)
def _logreg_solution(samples: int, l2: float, seed: int) -> tuple[np.ndarray, float]:
    from scipy.optimize import minimize
    from threadpoolctl import threadpool_limits

    a, y = _digits(samples, seed)
    an, yn = a.numpy(), y.numpy()

    def fg(w):
        w = w.reshape(10, -1)
        z = an @ w.T
        # clamp: exp of very negative logits would produce slow denormals, changing nothing
        z = np.maximum(z - z.max(axis=1, keepdims=True), -600.0)
        lse = np.log(np.exp(z).sum(axis=1, keepdims=True))
        p = np.exp(z - lse)
        f = -(yn * (z - lse)).sum() / len(an) + 0.5 * l2 * (w * w).sum()
        g = (p - yn).T @ an / len(an) + l2 * w
        return f, g.ravel()

    with threadpool_limits(1):  # BLAS threads oversubscribe 2-core machines (20x slower)
        res = minimize(fg, np.zeros(10 * an.shape[1]), jac=True, method="L-BFGS-B",
                       options={"maxiter": 50_000, "gtol": 1e-10, "ftol": 0.0, "maxcor": 30})
    return res.x.reshape(10, -1), float(res.fun)


def _logreg(samples: int, l2: float, seed: int) -> Problem:
    a, y = _digits(samples, seed)
    w_star, f_star = _logreg_solution(samples, l2, seed)
    n = a.shape[0]
    # softmax Hessian in the logits is ⪯ ½ I, so L ≤ λ_max(AᵀA/N)/2 + λ
    lip = float(torch.linalg.eigvalsh(a.T @ a / n).max()) / 2 + l2

    def logits(w):
        z = a @ w.T
        return (z - z.max(dim=1, keepdim=True).values).clamp_min(-600.0)  # no denormals

    def value(w):
        return -(y * torch.log_softmax(logits(w), dim=1)).sum() / n + 0.5 * l2 * (w * w).sum()

    def grad(w):
        p = torch.softmax(logits(w), dim=1)
        return (p - y).T @ a / n + l2 * w

    # f* from L-BFGS, but never above a value the torch objective reaches at W*
    f_star = min(f_star, float(value(torch.as_tensor(w_star))))
    return Problem(x_star=torch.as_tensor(w_star), f_star=f_star, lipschitz=lip, value=value,
                   grad=grad)


# -- one trial ---------------------------------------------------------------------------------

def _radius(method: str, e: torch.Tensor) -> float:
    """R = ‖X₀ − X*‖ in the method's R-norm (paper §3 table)."""
    m, n = e.shape
    if method.startswith("adagrad_norm"):
        return float(e.norm()) / math.sqrt(m * n)
    if method.startswith("diag_adagrad"):
        return float(e.abs().max())
    if method.startswith("asgo_right"):
        return float(torch.linalg.matrix_norm(e, ord=2)) / math.sqrt(m)
    if method.startswith("asgo"):
        return float(torch.linalg.matrix_norm(e, ord=2)) / math.sqrt(n)
    if method.startswith("dasgo"):
        return float(e.norm(dim=1).max()) / math.sqrt(n)
    raise ValueError(f"method: no R-norm for {method!r}")


def _make(method: str, p: torch.nn.Parameter, prob: Problem, x0: torch.Tensor):
    if method == "sgd":
        return torch.optim.SGD([p], lr=1.0 / prob.lipschitz)
    if method == "sgd_nesterov":
        return torch.optim.SGD([p], lr=1.0 / prob.lipschitz, momentum=0.9, nesterov=True)
    if method == "adam":
        return torch.optim.Adam([p], lr=1e-2)
    if method == "accelegrad":
        # D is a Euclidean diameter (no tuning): the ball around X₀ through X*; G² = δ = 1e-12
        return AcceleGrad([p], lr=2.0 * float((x0 - prob.x_star).norm()), G=1e-6)
    nesterov = method.endswith("_nesterov")
    base = method.removesuffix("_nesterov")
    r = _radius(base, x0 - prob.x_star)
    eta = 2 * r if nesterov else r
    cls = {"adagrad_norm": AdaGradNorm, "diag_adagrad": DiagAdaGrad, "asgo": ASGO,
           "asgo_right": ASGO, "dasgo": DASGO}[base]
    kw = {"side": "right"} if base == "asgo_right" else {}
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ASGO + nesterov: documented extrapolation warning
        return cls([p], lr=eta, eps=1e-12, nesterov=nesterov, **kw)


def _checkpoints(iters: int, points: int = 25) -> list[int]:
    return sorted({int(round(v)) for v in np.logspace(0, math.log10(iters), points)})


def _problem(name: str, prm: dict, seed: int) -> Problem:
    if name == "logreg":
        return _logreg(int(prm["samples"]), float(prm["l2"]), seed)
    if name.startswith("rot-"):
        return _rotated(int(prm["rows"]), int(prm["cols"]), seed, float(prm["spread"]))
    return _quadratic(int(prm["rows"]), int(prm["cols"]), seed)


def _noise_mask(shape: tuple[int, ...], fraction: float, seed: int) -> torch.Tensor:
    """1 on the coordinates that carry gradient noise: all of them (``fraction = 1``) or a
    seeded random ``fraction`` of them (at least one) — sparse noise, the case where the theory
    puts diagonal AdaGrad's noise term below AdaGrad-Norm's."""
    d = math.prod(shape)
    if fraction >= 1:
        return torch.ones(shape, dtype=torch.float64)
    k = max(1, round(fraction * d))
    g = torch.Generator().manual_seed(50_000 + seed)
    mask = torch.zeros(d, dtype=torch.float64)
    mask[torch.randperm(d, generator=g)[:k]] = 1.0
    return mask.reshape(shape)


def run_trial(trial: Trial, device: str) -> dict:
    torch.set_num_threads(1)
    torch.manual_seed(trial.seed)
    prm = trial.params
    prob = _problem(trial.problem, prm, trial.seed)
    sigma = float(prm.get("sigma", 0.0))
    noise = torch.Generator().manual_seed(30_000 + trial.seed)
    mask = _noise_mask(prob.x_star.shape, float(prm.get("noise_fraction", 1.0)), trial.seed)
    x0 = torch.zeros_like(prob.x_star)
    p = torch.nn.Parameter(x0.clone())
    opt = _make(trial.method, p, prob, x0)
    gap0 = float(prob.value(x0)) - prob.f_star
    iters, tol = int(prm["iters"]), float(prm["tol"])
    marks = set(_checkpoints(iters))
    # f at the output on a fine log grid (≤ ~4 % resolution for "iterations to tol")
    evals = marks | set(_checkpoints(iters, 250))
    out: dict = {"iters_to_tol": None}
    curve = []
    with torch.no_grad():
        for k in range(1, iters + 1):
            g = prob.grad(p.detach())
            if sigma > 0:
                g = g + sigma * mask * torch.randn(g.shape, generator=noise, dtype=g.dtype)
            p.grad = g
            opt.step()
            if k not in evals:
                continue
            x_out = opt.output()[p] if hasattr(opt, "output") else p.detach()
            rel = max((float(prob.value(x_out)) - prob.f_star) / gap0, 0.0)
            if not math.isfinite(rel):
                rel = math.inf
            if out["iters_to_tol"] is None and rel <= tol:
                out["iters_to_tol"] = k
            if k in marks:
                curve.append((k, rel))
                out[f"gap_k{k:06d}"] = rel if math.isfinite(rel) else None
    out["final_gap"] = curve[-1][1] if math.isfinite(curve[-1][1]) else None
    out["tail_slope"] = _tail_slope(curve, iters)
    out["reached"] = out["iters_to_tol"] is not None
    return out


def _tail_slope(curve: list[tuple[int, float]], iters: int) -> float | None:
    """Least-squares slope of log gap vs log k over k ∈ [K/10, K], gaps above ``FLOOR``."""
    pts = [(math.log(k), math.log(v)) for k, v in curve
           if k >= iters / 10 and FLOOR < v < math.inf]
    if len(pts) < 3:
        return None
    x, y = np.array(pts).T
    return float(np.polyfit(x, y, 1)[0])


# -- summary -----------------------------------------------------------------------------------

def _cell(results: list[Result], problem: str, method: str) -> list[Result]:
    return [r for r in results if r.trial.problem == problem and r.trial.method == method]


def _iters(rs: list[Result], cap: int) -> list[float]:
    """Iterations to tol; a trial that never reached counts as K + 1."""
    return [float(r.metrics["iters_to_tol"]) if r.metrics.get("iters_to_tol") else cap + 1.0
            for r in rs]


def _log_gaps(rs: list[Result]) -> list[float]:
    return [math.log10(max(float(r.metrics["final_gap"]), 1e-300))
            if r.metrics.get("final_gap") is not None else math.inf for r in rs]


def _slopes(rs: list[Result]) -> list[float]:
    return [float(r.metrics["tail_slope"]) for r in rs if r.metrics.get("tail_slope") is not None]


def _fmt(vals: list[float], digits: int = 3) -> str:
    vals = [v for v in vals if math.isfinite(v)]
    return fmt_ci(*mean_ci(vals), digits=digits) if vals else "—"


def summarize(results: list[Result], cfg: AdaNesterovConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    problems = list(dict.fromkeys(r.trial.problem for r in results))
    K = cfg.iters

    rows = []
    for problem in problems:
        for method in dict.fromkeys(r.trial.method for r in results if r.trial.problem == problem):
            rs = _cell(results, problem, method)
            reached = sum(1 for r in rs if r.metrics.get("iters_to_tol"))
            slopes = _slopes(rs)
            rows.append([problem, method, _fmt(_log_gaps(rs)),
                         _fmt(_iters(rs, K)) + f" ({reached}/{len(rs)} reached)",
                         _fmt(slopes) if slopes else "— (at floor)", len(rs)])
    table = Table(
        title=f"Relative gap (f − f*)/(f₀ − f*) at the output after K = {K}: log10 mean ± 95% CI; "
              f"iterations to {cfg.tol:g} (unreached = K+1); tail slope on [K/10, K]",
        columns=["problem", "method", "log10 final gap", "iters to tol", "tail slope", "n"],
        rows=rows)

    figures = [_plot(results, problems, outdir / "gap_vs_iterations.png")]
    claims = _claims(results, cfg, problems)
    notes = [
        "The paper is theory only (no experiments, no official code): the claims below restate "
        "its rates (Thm 1, Thm 2) at small scale; a slope over one decade of iterations is a "
        "finite-K proxy for an asymptotic rate.",
        "η = R (Alg. 1) or 2R (Alg. 2) with R the INITIAL distance to the known solution in the "
        "method's R-norm; the theory's R bounds every iterate's distance, and its stochastic "
        "analysis adds a projection onto the R-ball (App. D), not used here. δ = 1e-12.",
        "Algorithm 1's output is the uniform iterate average, Algorithm 2's is x̄ (the paper's "
        "outputs); SGD, SGD-Nesterov and Adam report their last iterate. SGD uses 1/L with L "
        "the global smoothness bound; Adam lr 1e-2 is a fixed default, not tuned.",
        "AcceleGrad (Levy, Yurtsever & Cevher 2018, Alg. 1; reference row, in no claim): "
        "unconstrained, D = 2‖X₀ − X*‖_F (the diameter of the Euclidean ball around X₀ through "
        "X*, same known-X* rule), G = 1e-6 (G² = δ), output the α-weighted average ȳ.",
        "ASGO + Nesterov is outside the paper's acceleration theorem (non-commuting 𝓗); "
        "asgo_right preconditions the 64-dim side of W ∈ R^{10×64} (logistic regression only).",
        "Brief item (4) — DASGO with a one-step accumulator equals Scion's row-normalized step, "
        "one-sided Shampoo equals U Vᵀ — is checked by unit tests "
        "(tests/optim/test_adaptive_preconditioning.py), not by this run.",
        "rot-sigma0 / rot-sparse: the non-separable quadratic (axis-aligned anisotropy coupled "
        f"by a Haar rotation, coupling eigenvalues in [1, {cfg.rot_spread:g}]); rot-sparse has "
        f"noise σ = {cfg.sparse_noise:g} on {cfg.noise_fraction:.0%} of the coordinates. Claim 1 "
        "leaves out isotropic-noise cells (the theory's noise term favours AdaGrad-Norm there); "
        "claims 2a/2b leave out diagonal AdaGrad on the separable quadratic (exactly "
        "scale-invariant there).",
        f"Setting: quadratic d = {cfg.rows}×{cfg.cols}, noise σ ∈ {list(cfg.noise_levels)}; "
        f"digits N = {cfg.logreg_samples}, λ = {cfg.l2:g}; K = {K}; {cfg.seeds} seeds "
        "(the brief's full setting is d = 1000, 5 seeds).",
    ]
    return Summary(tables=[table], figures=figures, claims=claims, notes=notes)


def _plot(results: list[Result], problems: list[str], path: Path) -> Figure:
    fig, axes = grid(len(problems), panel=(5, 4.2))
    # colour = preconditioner family, dashed = Algorithm 2 / Nesterov momentum
    bases = ("adagrad_norm", "diag_adagrad", "asgo", "dasgo", "asgo_right", "sgd", "adam",
             "accelegrad")
    for ax, problem in zip(axes, problems, strict=True):
        series, colors = {}, {}
        for method in dict.fromkeys(r.trial.method for r in results if r.trial.problem == problem):
            rs = _cell(results, problem, method)
            keys = sorted(k for k in rs[0].metrics if k.startswith("gap_k"))
            # log10 of the gap per seed: its mean is the log of the geometric mean; a
            # non-finite gap (stored as None) is NaN, left out and counted in the legend
            cells = {int(key[5:]): [math.log10(v) if v is not None else math.nan
                                    for r in rs if (v := r.metrics.get(key)) is None or v > 0]
                     for key in keys}
            series[method] = {k: v for k, v in cells.items() if v}
            base = method.removesuffix("_nesterov")
            if base in bases:
                colors[method] = color(bases.index(base))
        line_panel(ax, series, xlabel="iteration k", ylabel="log10 (f(out) − f*) / (f₀ − f*)",
                   title=problem, xlog=True, ylog=False, colors=colors, legend=False)
        # figures.py has no line styles: the Nesterov / Algorithm 2 variants are dashed here
        for line in ax.get_lines():
            if str(line.get_label()).split(" (")[0].endswith("_nesterov"):
                line.set_linestyle("--")
        if ax.get_ylim()[0] < -16:  # gaps below 1e-16 are round-off
            ax.set_ylim(bottom=-16)
    # one legend for all panels (a method keeps its colour and style), outside on the right
    handles = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    if handles:
        fig.legend(list(handles.values()), list(handles), fontsize=7, loc="center left",
                   bbox_to_anchor=(1.0, 0.5))
    return save(fig, path, "Relative gap vs iterations (log10, mean ± 95 % CI over seeds: the "
                           "geometric mean; dashed = Algorithm 2 / Nesterov)")


# a non-finite final gap (a divergent run) counts as this log10 gap, worse than any finite one;
# an exact 0 counts as 1e-300 (log10 −300), better than any
_DIVERGED_LOG10 = 300.0


def _seeded(results: list[Result], problem: str, method: str, value) -> dict[int, float]:
    """``{seed: value(result)}`` of one (problem, method) cell."""
    return {r.trial.seed: value(r) for r in _cell(results, problem, method)}


def _log_gap(r: Result) -> float:
    g = r.metrics.get("final_gap")
    return _DIVERGED_LOG10 if g is None else math.log10(max(float(g), 1e-300))


def _censored(v: Verdict, a_cut: bool, b_cut: bool) -> Verdict:
    """Unreached trials count the budget K + 1, a lower bound of their iterations
    (:func:`~optzoo.experiment.verdicts.censored`)."""
    return censored(v, a_censored=a_cut, b_censored=b_cut,
                    why="some seed did not reach tol; K + 1 is only a lower bound")


def _g(x: float) -> str:
    return f"{x:.3g}" if math.isfinite(x) else "—"


def _no_slope(why: str) -> Verdict:
    """A cell whose curves lie at the round-off floor: no slope to test."""
    return undecided(f"no slope: {why}")


def _slope_cell(slopes: list[float], lo: float, hi: float, who: str) -> Verdict:
    if not slopes:
        return _no_slope(f"{who} at the round-off floor over [K/10, K] in every seed")
    return within(slopes, lo, hi)


#: problems without gradient noise (claims 1, 2a, 2b)
DETERMINISTIC = ("quad-sigma0", "rot-sigma0", "logreg")
#: problems whose noise is sparse: the theory's noise term favours diagonal AdaGrad (claim 1)
SPARSE_NOISE = ("rot-sparse",)


def _acc_cells(problem: str) -> tuple[str, ...]:
    """The preconditioners whose acceleration claims 2a/2b test on ``problem``.  On the separable
    quadratic diagonal AdaGrad is exactly scale-invariant (each coordinate is a 1-D problem it
    solves in ~10 iterations, Alg. 2 hits the round-off floor), so only DASGO is tested there;
    the rotated quadratic is where diagonal AdaGrad's acceleration is measured."""
    return ("dasgo",) if problem == "quad-sigma0" else ("diag_adagrad", "dasgo")


def _ratio_points(acc: Result, plain: Result, K: int) -> list[tuple[int, float]]:
    """``(k, gap Alg. 2 / gap Alg. 1)`` over the last decade where both gaps are measurable:
    ``k ∈ [k_end/10, k_end]``, ``k_end`` the last checkpoint with both gaps in (FLOOR, ∞);
    nothing if ``k_end < K/10`` (no decade of the tail is measurable)."""
    keys = sorted(k for k in acc.metrics if k.startswith("gap_k") and k in plain.metrics)
    both = []
    for key in keys:
        ga, gp = acc.metrics.get(key), plain.metrics.get(key)
        if ga is not None and gp is not None and FLOOR < ga < math.inf and FLOOR < gp < math.inf:
            both.append((int(key[5:]), float(ga) / float(gp)))
    if not both or both[-1][0] < K / 10:
        return []
    k_end = both[-1][0]
    return [(k, r) for k, r in both if k >= k_end / 10]


def _steeper(results: list[Result], problem: str, base: str, K: int,
             gain: float) -> tuple[Verdict | None, str]:
    """Claim 2b's cell: the slope of log(gap Alg. 2 / gap Alg. 1) vs log k (= slope Alg. 2 −
    slope Alg. 1) lies below −``gain``; bootstrap CI over the (k, ratio) points of every seed
    (:func:`~optzoo.experiment.verdicts.slope`, band (−∞, −gain])."""
    acc = {r.trial.seed: r for r in _cell(results, problem, f"{base}_nesterov")}
    plain = {r.trial.seed: r for r in _cell(results, problem, base)}
    if not acc or not plain:
        return None, ""
    pts = [pt for s in sorted(set(acc) & set(plain)) for pt in _ratio_points(acc[s], plain[s], K)]
    slopes = (f"slope Alg. 2 {_fmt(_slopes(list(acc.values())))}, "
              f"Alg. 1 {_fmt(_slopes(list(plain.values())))}")
    if len({k for k, _ in pts}) < 3:
        return _no_slope("Alg. 2 or Alg. 1 at the round-off floor before the last decade "
                         "[K/10, K] in every seed"), slopes
    ks, ratios = zip(*pts, strict=True)
    return slope(ks, ratios, band=(-math.inf, -gain), log=True), slopes


def _claims(results: list[Result], cfg: AdaNesterovConfig, problems: list[str]) -> list[Claim]:
    K = cfg.iters
    claims = []

    # (1) AdaGrad beats AdaGrad-Norm on the anisotropic problems, where the theory predicts it:
    # without noise (the smooth term: sparse l, dense X*) and with sparse noise (the noise term
    # ‖σ‖₁‖X*‖_∞ against √d‖σ‖₂‖X*‖₂/√d).  With isotropic noise the noise term favours
    # AdaGrad-Norm by ‖X*‖_∞/RMS(X*) ≈ 3: no advantage is predicted there, the cell is shown only.
    parts, cells = [], {}
    for problem in problems:
        applies = problem in DETERMINISTIC or problem in SPARSE_NOISE
        for suffix in ("", "_nesterov"):
            a, b = common_seeds(_seeded(results, problem, f"diag_adagrad{suffix}", _log_gap),
                                _seeded(results, problem, f"adagrad_norm{suffix}", _log_gap))
            if not a:
                continue
            if applies:
                cells[f"{problem}{suffix}"] = superior(a, b, min_effect=cfg.min_gap_log10,
                                                       direction="less")
            parts.append(f"{problem}{suffix}: log10 gap AdaGrad {_fmt(list(a.values()))} vs "
                         f"AdaGrad-Norm {_fmt(list(b.values()))}"
                         + ("" if applies else " (isotropic noise: not part of the claim)"))
    if cells:
        claims.append(Claim(
            text="(1) Diagonal AdaGrad beats AdaGrad-Norm on the anisotropic problems (sparse "
                 "curvatures, dense solution) where the theory predicts it — deterministic "
                 "gradients and sparse gradient noise: lower final gap, by more than a factor "
                 f"10^{cfg.min_gap_log10:g} (paired CI), on every such problem, for Algorithm 1 "
                 "and for Algorithm 2.",
            evidence="; ".join(parts), verdict=all_of(cells)))

    det = [p for p in problems if p in DETERMINISTIC]

    def iters(r: Result) -> float:
        v = r.metrics.get("iters_to_tol")
        return float(v) if v else K + 1.0

    # (2a) acceleration reaches tol in fewer iterations (deterministic problems).
    parts, cells = [], {}
    for problem in det:
        for base in _acc_cells(problem):
            acc, plain = common_seeds(_seeded(results, problem, f"{base}_nesterov", iters),
                                      _seeded(results, problem, base, iters))
            if not acc:
                continue
            v = superior(acc, plain, min_effect=math.log(cfg.min_speedup), direction="less",
                         log_ratio=True)
            cells[f"{problem} {base}"] = _censored(v, any(x > K for x in acc.values()),
                                                   any(x > K for x in plain.values()))
            parts.append(f"{problem} {base}: {_fmt(list(acc.values()))} (Alg. 2) vs "
                         f"{_fmt(list(plain.values()))} (Alg. 1)")
    if cells:
        claims.append(Claim(
            text=f"(2a) Accelerated AdaGrad and accelerated DASGO reach a relative gap ≤ "
                 f"{cfg.tol:g} in fewer iterations than Algorithm 1 on the deterministic "
                 f"problems, by more than a factor {cfg.min_speedup:g} (paired log-ratio CI; "
                 f"K = {K}, unreached counts as K + 1; diagonal AdaGrad not on the separable "
                 "quadratic, where it is exactly scale-invariant).",
            evidence="; ".join(parts), verdict=all_of(cells)))

    # (2b) the accelerated tail is steeper by a declared margin (not: "≈ −2 vs ≈ −1", which
    # reads worst-case bounds as exact rates — Alg. 1 with averaging already reaches −2 on a
    # quadratic).
    parts, cells = [], {}
    for problem in det:
        for base in _acc_cells(problem):
            v, slopes = _steeper(results, problem, base, K, cfg.min_slope_gain)
            if v is None:
                continue
            cells[f"{problem} {base}"] = v
            parts.append(f"{problem} {base}: slope of log(gap Alg. 2 / gap Alg. 1) "
                         f"{_g(v.effect)} [{_g(v.ci[0])}, {_g(v.ci[1])}] ({slopes})")
    if cells:
        claims.append(Claim(
            text="(2b) On the deterministic problems accelerated AdaGrad/DASGO's gap falls "
                 f"faster than Algorithm 1's: its tail log-log slope is steeper by more than "
                 f"{cfg.min_slope_gain:g} (bootstrap CI of the slope of log(gap Alg. 2 / gap "
                 "Alg. 1) vs log k over the last measurable decade, points of all seeds) — "
                 "Thm 2's Õ(1/K²) against Thm 1's O(1/K) smooth term, as an ordering, not as "
                 "exact exponents.",
            evidence="; ".join(parts) + " (tail slopes on [K/10, K], gaps > 1e-12)",
            verdict=all_of(cells)))

    # (3) high noise: every adaptive variant in the 1/√K regime.
    noisy = f"quad-sigma{cfg.high_noise:g}"
    n_lo, n_hi = cfg.noise_slope_band
    if noisy in problems:
        parts, cells = [], {}
        for method in (*ADAPTIVE, *(f"{m}_nesterov" for m in ADAPTIVE)):
            s = _slopes(_cell(results, noisy, method))
            cells[method] = _slope_cell(s, n_lo, n_hi, method)
            parts.append(f"{method}: {_fmt(s) if s else 'no slope'}")
        claims.append(Claim(
            text=f"(3) At high gradient noise (σ = {cfg.high_noise:g}) all AdaGrad-type variants, "
                 "accelerated or not, share the noise-dominated 1/√K regime: tail slope in "
                 f"[{n_lo:g}, {n_hi:g}] (CI of the mean; acceleration only improves the smooth "
                 "term).",
            evidence="; ".join(parts), verdict=all_of(cells)))
    return claims


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Kovalev (ICLR 2026) is theory only; this run checks its rates at small scale. "
        "AdaGrad-Norm, diagonal AdaGrad, ASGO and DASGO, each as Algorithm 1 (η = R, iterate "
        "average) and the accelerated Algorithm 2 (η = 2R, output x̄), with η from the paper's "
        "rule (no tuning), against SGD, SGD-Nesterov, Adam and AcceleGrad, on an anisotropic "
        "quadratic (deterministic and noisy gradients), a non-separable rotated quadratic "
        "(deterministic and with sparse noise) and L2-regularised multinomial logistic "
        "regression "
        "on rescaled scikit-learn digits; reports f − f* vs iterations, tail log-log slopes and "
        "iterations to a relative gap of 1e-6."
        " Trials are CPU-sized (single-threaded) and run on the CPU whatever --device says."),
)
