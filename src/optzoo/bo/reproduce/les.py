"""Reproduction ``les``: Stenger, Lindicke, von Rohr & Trimpe, "Local Entropy Search over Descent
Sequences for Bayesian Optimization" (ICLR 2026, OpenReview cPxmLZmFa7, arXiv 2511.19241).
Official code: github.com/Data-Science-in-Mechanical-Engineering/local-entropy-search (read for
the settings below, see :mod:`optzoo.bo.les` and :mod:`optzoo.bo.local_baselines`).

Setting (the brief's small-scale reproduction, minimisation on [0, 1]^d):

* ``gp-d{d}`` -- a GP sample path per seed: random Fourier features (2,048 cosines, SE kernel,
  length-scale 0.1·√d, variance 1), observations with Gaussian noise std 1e-3.  All GP methods get
  the true hyperparameters and no outcome standardisation (the paper's *within-model* comparison;
  the official script's ``WITHIN_MODEL_COMPARISON``).
* ``ackley-d{d}``, ``dixonprice-d{d}`` -- BoTorch's test functions on their standard boxes
  (scaled to [0, 1]^d), noise-free as in the official script; hyperparameters fitted by
  marginal likelihood (box prior [0.05, √d], init 0.2·√d, noise std fixed at 1.42e-3 on
  standardised values: the official box-prior setting).
* 2 initial scrambled-Sobol points per seed, shared by all methods; budget = total evaluations.
* Methods: ``les`` (:func:`optzoo.bo.les.run_les`, S samples, M = 8 points, Adam with
  lr·steps = 1 as the paper's 0.002 × 500), the paper's global baselines ``logei``, ``mes``
  (BoTorch's qMaxValueEntropy) and ``sobol``, and its local ones ``turbo`` (TuRBO-1),
  ``gibo`` (GIBO, high-confidence variant) and ``lts`` (local Thompson sampling: one sample
  path, LES's Adam from the incumbent, its end point evaluated -- the brief's reading of the
  official code's ablation); see :mod:`optzoo.bo.local_baselines`.
* Budget: ``budget`` evaluations, or min(``budget_per_dim`` · d, ``budget_cap``) -- the
  paper's min(20 d, 400) in full.

Metrics per trial: ``best_f`` -- the lowest *true* (noise-free) f among the evaluated points;
``path_dist`` -- mean over the evaluations after the initial ones of the distance to the true
descent path, i.e. the iterates of the same Adam run (lr, steps of LES's inner optimiser) on the
true f from the initial incumbent; ``iter_wall_s`` -- seconds of model fit + acquisition per
iteration in wall time (``iter_wall_s``) and CPU time (``iter_cpu_wall_s``: process time, named
``*_wall_s`` because it is a measured resource excluded from determinism checks).

Claims, on ``claim_problem`` (gp-d10 in quick and full), each decided by a test of
:mod:`optzoo.experiment.verdicts` with per-seed values paired by seed (every method of a seed
sees the same GP sample, initial points and noise):
(1) LES reaches a lower best-f than the global baselines LogEI, MES and Sobol after the budget:
``all_of`` three ``superior`` tests (lower is better, ``min_effect_f``);
(2) LES is not worse than the local baselines TuRBO, GIBO and local TS: ``all_of`` three
``noninferior`` tests with the fixed margin ``margin_f``, on 10 seeds in quick and full;
(3) LES's evaluations lie closer to the true descent path: ``all_of`` one ``superior`` test per
baseline on the mean path distance (``min_effect_dist``);
(4) one LES iteration (fit + acquisition) costs < ``iter_cpu_bound_s`` = 1 s on one CPU thread:
``within`` on the per-seed mean CPU (process) seconds per iteration (the CI of their mean must
lie below the bound).

Verdict margins (preset fields, the same in every preset, fixed before results were seen; they
are not part of the trials' parameters, so the trial keys do not change):

* ``min_effect_f = 0.05`` -- 5 % of the GP sample's prior standard deviation (1): a smaller gap
  in best true f is no difference in what the methods found;
* ``margin_f = 0.1`` -- LES may trail a local baseline by at most a tenth of the prior standard
  deviation (twice ``min_effect_f``) and still count as "not worse"; declared before the
  10-seed runs.  The claim can fail: with 10 seeds a paired difference whose CI lies wholly
  above 0.1 is "not held" (tested), which the 3 seeds of before (CI ±2.6) could never show;
* ``min_effect_dist = 0.05`` -- a twentieth of the unit cube's side (a sixth of the d = 10
  length-scale 0.32): closer by less is no difference in where a method samples;
* ``iter_cpu_bound_s = 1.0`` -- the brief's "< 1 s per iteration on CPU".

Rules changed by issue 18 (verdicts that are evidence): claim 1 compared medians with no
smallest effect (a tie-level gap passed) and claim 3 likewise: both are now paired superiority
tests with a declared ``min_effect``; claim 2 passed whenever the CI of LES − baseline merely
reached 0 (large variance passed): it is now a non-inferiority test with a fixed margin;
claim 4 compared a median with 1 s: it is now ``within`` on the per-seed values.  CPU seconds
are process time with one thread, measured inside each trial (not wall times of concurrent
trials), so claim 4 needs no interleaved timing; no hyperparameter is tuned on a grid here.

Changed by issue 21: MES and local TS added (claims 1-3 cover them); claim 2 runs on 10 seeds in
quick too (quick now runs only the claims' problem gp-d10, to pay for them); the full preset
moves to the paper's S = 250, Adam 500 × 0.002 and budget min(20 d, 400).

Cost (CPU seconds on one thread, measured here on gp-d10 with the quick settings, budget 40):
les 13, logei 15, mes 53, turbo 9, gibo 7, lts 12 per run, i.e. ~110 s per seed and ~18
CPU-minutes for quick's 10 seeds.  Full: per run, LES's acquisition grows ~linearly in
S × steps (250 × 500 vs 32 × 100: ×39; ~10 s per iteration at d = 10) and the budget is
100 (d = 5) or 200 (d = 10) evaluations, so one LES run on gp-d10 costs ~30-40 CPU-minutes and
a MES run ~10; 10 seeds × 4 problems × 7 methods come to roughly 40-60 CPU-hours: not run on the
2-core development machine (use ``--jobs`` or ``--device cuda`` on a larger one).

Read top to bottom: problems, config and presets, trial expansion, one trial, summary, claims.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import torch
from torch import Tensor
from torch.quasirandom import SobolEngine

from optzoo.bo.les import adam_descent, make_gp, run_les
from optzoo.bo.local_baselines import (
    run_gibo,
    run_local_ts,
    run_logei,
    run_mes,
    run_sobol,
    run_turbo,
)
from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment.core import NotEvaluated, split_claims
from optzoo.experiment.stats import fmt_values, metric_values
from optzoo.experiment.verdicts import (
    all_of,
    by_seed,
    common_seeds,
    noninferior,
    not_acting,
    superior,
    within,
)
from optzoo.report.figures import color, grid, line_panel, save

SLUG = "les"
METHODS = ("les", "logei", "mes", "turbo", "gibo", "lts", "sobol")
BASELINES = ("logei", "mes", "turbo", "gibo", "lts", "sobol")
GLOBAL = ("logei", "mes", "sobol")  # claim 1: the paper's global baselines
LOCAL = ("turbo", "gibo", "lts")  # claim 2: the paper's local baselines
CURVE_POINTS = 10  # best-so-far recorded at this many equally spaced evaluation counts
GP_NOISE_STD = 1e-3
GP_FEATURES = 2048
_PROBLEM = re.compile(r"^(gp|ackley|dixonprice)-d(\d+)$")


# -- problems --------------------------------------------------------------------------------------

class GPSample:
    """One SE-kernel GP sample path on [0, 1]^d by random Fourier features:
    f(x) = √(2/F) Σ_i w_i cos(ω_i·x + b_i), ω_i ~ N(0, I/ℓ²), b_i ~ U(0, 2π), w_i ~ N(0, 1), so
    Cov(f(x), f(x')) → exp(−‖x − x'‖² / (2ℓ²)) as F grows (variance 1)."""

    def __init__(self, d: int, lengthscale: float, features: int, generator: torch.Generator,
                 dtype: torch.dtype = torch.float64, device: str | torch.device = "cpu") -> None:
        if d < 1 or lengthscale <= 0 or features < 1:
            raise ValueError(f"d, lengthscale, features: expected >= 1, > 0, >= 1, got "
                             f"{d}, {lengthscale}, {features}")
        self.d, self.lengthscale = d, lengthscale
        kw = {"generator": generator, "dtype": dtype}
        self.omega = (torch.randn(features, d, **kw) / lengthscale).to(device)
        self.phase = (2 * math.pi * torch.rand(features, **kw)).to(device)
        self.weight = (torch.randn(features, **kw) * math.sqrt(2.0 / features)).to(device)

    def __call__(self, X: Tensor) -> Tensor:
        return torch.cos(X @ self.omega.T + self.phase) @ self.weight


@dataclass(frozen=True)
class Problem:
    name: str
    d: int
    f: object  # unit-cube function, differentiable torch
    noise_std: float
    lengthscale: float | None  # known (within-model) length-scale, or None (fitted)


def parse_problem(name: str) -> tuple[str, int]:
    match = _PROBLEM.match(name)
    if match is None or int(match.group(2)) < 1:
        raise ConfigError(f"problems: expected names like 'gp-d10', 'ackley-d5', "
                          f"'dixonprice-d5', got {name!r}")
    return match.group(1), int(match.group(2))


def make_problem(name: str, seed: int, device: str = "cpu") -> Problem:
    """The seed's instance of ``name`` as a function on [0, 1]^d (float64)."""
    kind, d = parse_problem(name)
    if kind == "gp":
        ls = 0.1 * math.sqrt(d)
        gen = torch.Generator().manual_seed(10_000 + seed)
        return Problem(name, d, GPSample(d, ls, GP_FEATURES, gen, device=device), GP_NOISE_STD,
                       ls)
    from botorch.test_functions import Ackley, DixonPrice

    fn = (Ackley if kind == "ackley" else DixonPrice)(dim=d).to(device=device,
                                                               dtype=torch.float64)
    lo, hi = fn.bounds[0], fn.bounds[1]
    return Problem(name, d, lambda X: fn.evaluate_true(lo + (hi - lo) * X), 0.0, None)


def true_descent_path(problem: Problem, x0: Tensor, lr: float, steps: int) -> Tensor:
    """Iterates of the inner optimiser (Adam, clip to the box) run on the true f from ``x0``."""
    descent = adam_descent(lr=lr, steps=steps)
    bounds = torch.stack([torch.zeros_like(x0), torch.ones_like(x0)])
    return descent(lambda x: problem.f(x), x0.reshape(1, -1), bounds)[:, 0]


def path_distances(X: Tensor, path: Tensor) -> Tensor:
    """Distance of each row of ``X`` to the nearest iterate of ``path`` (``(T+1) x d``)."""
    return torch.cdist(X, path).min(dim=-1).values


# -- configuration ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class LESConfig(Preset):
    """Settings of the reproduction.

    Args:
        seeds: seeds per (method, problem); a seed fixes the GP sample, the initial points and
            the noise.
        problems: problem names ('gp-d{d}', 'ackley-d{d}', 'dixonprice-d{d}').
        claim_problem: the problem the claims are evaluated on.
        methods: methods run (subset of METHODS containing 'les').
        budget: evaluations per run, initial points included (when ``budget_per_dim`` is 0).
        budget_per_dim, budget_cap: if ``budget_per_dim`` > 0, the budget of a d-dimensional
            problem is min(budget_per_dim · d, budget_cap) (the paper's min(20 d, 400)).
        n_init: initial Sobol points.
        les_samples: S.  les_points: M.  les_steps, les_lr: the inner Adam.
        les_features: random Fourier features per posterior sample path.
        logei_restarts, logei_raw: optimize_acqf settings of LogEI.
        turbo_candidates: Thompson-sampling candidates of TuRBO (0: the tutorial's
            min(5000, max(2000, 200 d))).
        gibo_restarts, gibo_raw: optimize_acqf settings of GIBO's gradient information.
        mes_candidates: Sobol points on which MES samples the minimum (its restarts and raw
            samples are LogEI's).
        min_effect_f: smallest best-f gap that counts (claim 1; module docstring).
        margin_f: non-inferiority margin on best f (claim 2).
        min_effect_dist: smallest path-distance gap that counts (claim 3).
        iter_cpu_bound_s: the CPU seconds per LES iteration claim 4 bounds.
    """

    seeds: int = 3
    problems: tuple[str, ...] = ("gp-d5", "gp-d10")
    claim_problem: str = "gp-d10"
    methods: tuple[str, ...] = METHODS
    budget: int = 40
    budget_per_dim: int = 0
    budget_cap: int = 400
    n_init: int = 2
    les_samples: int = 32
    les_points: int = 8
    les_steps: int = 100
    les_lr: float = 0.01
    les_features: int = 1024
    logei_restarts: int = 5
    logei_raw: int = 256
    turbo_candidates: int = 0
    gibo_restarts: int = 5
    gibo_raw: int = 64
    mes_candidates: int = 1000
    min_effect_f: float = 0.05
    margin_f: float = 0.1
    min_effect_dist: float = 0.05
    iter_cpu_bound_s: float = 1.0

    def validate(self) -> None:
        super().validate()
        for p in self.problems:
            parse_problem(p)
        if self.claim_problem not in self.problems:
            raise ConfigError(f"claim_problem: expected one of {self.problems}, got "
                              f"{self.claim_problem!r}")
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown or "les" not in self.methods:
            raise ConfigError(f"methods: expected a subset of {list(METHODS)} containing 'les', "
                              f"got {self.methods}")
        if self.n_init < 1:
            raise ConfigError(f"n_init: expected >= 1, got {self.n_init}")
        for p in self.problems:
            if self.budget_for(p) <= self.n_init:
                raise ConfigError(f"budget: expected > n_init = {self.n_init} on {p}, got "
                                  f"{self.budget_for(p)} (budget, budget_per_dim, budget_cap)")
        if self.budget_per_dim < 0:
            raise ConfigError(f"budget_per_dim: expected >= 0, got {self.budget_per_dim}")
        for name in ("les_samples", "les_points", "les_steps", "les_features", "logei_restarts",
                     "logei_raw", "gibo_restarts", "gibo_raw", "mes_candidates"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected >= 1, got {getattr(self, name)}")
        if self.turbo_candidates < 0:
            raise ConfigError(f"turbo_candidates: expected >= 0, got {self.turbo_candidates}")
        if not (self.les_lr > 0 and math.isfinite(self.les_lr)):
            raise ConfigError(f"les_lr: expected a finite number > 0, got {self.les_lr}")
        for name in ("min_effect_f", "margin_f", "min_effect_dist", "iter_cpu_bound_s"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v > 0):
                raise ConfigError(f"{name}: expected a finite number > 0, got {v}")

    def budget_for(self, problem: str) -> int:
        """Evaluations of a run on ``problem`` (initial points included)."""
        if self.budget_per_dim > 0:
            return min(self.budget_per_dim * parse_problem(problem)[1], self.budget_cap)
        return self.budget


PRESETS = {
    "smoke": LESConfig(seeds=2, problems=("gp-d3", "ackley-d2"), claim_problem="gp-d3",
                       budget=4, les_samples=8, les_points=4, les_steps=20, les_lr=0.05,
                       les_features=256, logei_restarts=2, logei_raw=32, turbo_candidates=200,
                       gibo_restarts=2, gibo_raw=16, mes_candidates=64),
    # the claims' problem only, with the full preset's 10 seeds (claim 2 needs them: with 3
    # seeds the CI of a paired best-f difference is ±2.6, far wider than any margin)
    "quick": LESConfig(seeds=10, problems=("gp-d10",)),
    # the paper's S = 250, Adam 500 × 0.002 and budget min(20 d, 400): ~100-200 evaluations per
    # run; many CPU-hours (see the module docstring), meant for a many-core machine (--jobs)
    "full": LESConfig(seeds=10, problems=("gp-d5", "gp-d10", "ackley-d5", "dixonprice-d5"),
                      budget_per_dim=20, budget_cap=400, les_samples=250, les_steps=500,
                      les_lr=0.002, logei_restarts=10, logei_raw=512),
}


#: configuration fields that are not trial parameters (the verdict margins only decide claims)
NOT_TRIAL_PARAMS = ("seeds", "problems", "claim_problem", "methods", "min_effect_f", "margin_f",
                    "min_effect_dist", "iter_cpu_bound_s", "budget_per_dim", "budget_cap")


def trials(cfg: LESConfig) -> list[Trial]:
    shared = {k: v for k, v in cfg.to_dict().items() if k not in NOT_TRIAL_PARAMS}
    # LES and the local baselines first (claim 2), then the global ones; seed-major inside
    # each group: a run stopped early holds whole seeds of every method of a group, which the
    # paired tests can use
    groups = [[m for m in cfg.methods if m in ("les", *LOCAL, "sobol")],
              [m for m in cfg.methods if m not in ("les", *LOCAL, "sobol")]]
    return [Trial(method=m, problem=p, seed=s, params={**shared, "budget": cfg.budget_for(p)})
            for group in groups for s in range(cfg.seeds) for p in cfg.problems
            for m in group]


# -- one trial -------------------------------------------------------------------------------------

def run_trial(trial: Trial, device: str) -> dict:
    torch.set_num_threads(1)
    torch.manual_seed(trial.seed)
    p = trial.params
    dev = torch.device(device)
    problem = make_problem(trial.problem, trial.seed, device=str(dev))
    d = problem.d
    bounds = torch.stack([torch.zeros(d), torch.ones(d)]).to(dev, torch.float64)
    X_init = SobolEngine(d, scramble=True, seed=trial.seed).draw(int(p["n_init"]))
    X_init = X_init.to(dev, torch.float64)
    noise_gen = torch.Generator().manual_seed(20_000 + trial.seed)

    def objective(X: Tensor) -> Tensor:
        with torch.no_grad():
            y = problem.f(X)
        noise = torch.randn(y.shape, generator=noise_gen, dtype=y.dtype).to(y.device)
        return y + problem.noise_std * noise

    if problem.lengthscale is not None:
        model_fn = partial(make_gp, noise_std=problem.noise_std,
                           lengthscales=torch.full((d,), problem.lengthscale))
        standardize = False
    else:
        model_fn, standardize = make_gp, True
    budget = int(p["budget"])
    t0 = time.perf_counter()
    if trial.method == "les":
        res = run_les(objective, bounds, budget, X_init, model_fn=model_fn,
                      standardize=standardize, num_samples=int(p["les_samples"]),
                      num_points=int(p["les_points"]),
                      descent=adam_descent(float(p["les_lr"]), int(p["les_steps"])),
                      num_features=int(p["les_features"]))
    elif trial.method == "logei":
        res = run_logei(objective, bounds, budget, X_init, model_fn=model_fn,
                        standardize=standardize, num_restarts=int(p["logei_restarts"]),
                        raw_samples=int(p["logei_raw"]))
    elif trial.method == "turbo":
        res = run_turbo(objective, bounds, budget, X_init, model_fn=model_fn,
                        standardize=standardize, n_candidates=int(p["turbo_candidates"]) or None,
                        seed=trial.seed)
    elif trial.method == "gibo":
        res = run_gibo(objective, bounds, budget, X_init, model_fn=model_fn,
                       standardize=standardize, num_restarts=int(p["gibo_restarts"]),
                       raw_samples=int(p["gibo_raw"]))
    elif trial.method == "mes":
        res = run_mes(objective, bounds, budget, X_init, model_fn=model_fn,
                      standardize=standardize, num_restarts=int(p["logei_restarts"]),
                      raw_samples=int(p["logei_raw"]), n_candidates=int(p["mes_candidates"]),
                      seed=trial.seed)
    elif trial.method == "lts":
        res = run_local_ts(objective, bounds, budget, X_init, model_fn=model_fn,
                           standardize=standardize,
                           descent=adam_descent(float(p["les_lr"]), int(p["les_steps"])),
                           num_features=int(p["les_features"]))
    elif trial.method == "sobol":
        res = run_sobol(objective, bounds, budget, X_init, seed=trial.seed)
    else:
        raise ConfigError(f"method: expected one of {METHODS}, got {trial.method!r}")
    wall = time.perf_counter() - t0
    with torch.no_grad():
        f_true = problem.f(res.X)
    n0 = res.n_init
    incumbent = X_init[res.Y[:n0].argmin()]
    path = true_descent_path(problem, incumbent, float(p["les_lr"]), int(p["les_steps"]))
    with torch.no_grad():
        dists = path_distances(res.X[n0:], path)
        path_end_f = float(problem.f(path[-1:]))
    best_so_far = torch.cummin(f_true, dim=0).values
    out = {"d": d, "evaluations": int(res.X.shape[0]), "best_f": float(f_true.min()),
           "best_f_init": float(f_true[:n0].min()), "path_end_f": path_end_f,
           "path_dist": float(dists.mean()) if dists.numel() else 0.0,
           "path_dist_median": float(dists.median()) if dists.numel() else 0.0,
           "path_length": float((path[1:] - path[:-1]).norm(dim=-1).sum()),
           "iter_wall_s": float(np.mean(res.seconds)) if res.seconds else 0.0,
           "iter_cpu_wall_s": float(np.mean(res.cpu_seconds)) if res.cpu_seconds else 0.0,
           "total_wall_s": wall}
    counts = np.linspace(n0, res.X.shape[0], CURVE_POINTS).round().astype(int)
    for i, c in enumerate(counts):
        out[f"curve_n_{i}"] = int(c)
        out[f"curve_f_{i}"] = float(best_so_far[c - 1])
    if trial.method == "les":
        conv = res.info["converged_fraction"]
        out["les_converged_fraction"] = float(conv[-1]) if conv else 0.0
    if trial.method == "gibo":
        out["gibo_steps"] = int(res.info["steps"])
    if trial.method == "lts":
        out["lts_mean_step"] = float(np.mean(res.info["step_lengths"]))
    return out


# -- summary ---------------------------------------------------------------------------------------

def _cell(results: list[Result], method: str, problem: str) -> list[Result]:
    rs = [r for r in results if r.trial.method == method and r.trial.problem == problem]
    return sorted(rs, key=lambda r: r.trial.seed)


def _median(values) -> float:
    return float(np.median(values)) if len(values) else math.nan


def summarize(results: list[Result], cfg: LESConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    methods = [m for m in METHODS if any(r.trial.method == m for r in results)]
    problems = [p for p in cfg.problems if any(r.trial.problem == p for r in results)]
    rows = []
    for prob in problems:
        for m in methods:
            rs = _cell(results, m, prob)
            if not rs:
                continue
            best = metric_values(rs, "best_f")
            dist = metric_values(rs, "path_dist")
            rows.append([prob, m, fmt_values(best), f"{_median(best):.4g}", fmt_values(dist),
                         f"{_median(dist):.3g}", fmt_values(metric_values(rs, "path_end_f")),
                         fmt_values(metric_values(rs, "iter_cpu_wall_s")), len(rs)])
    budgets = ", ".join(f"{p}: {cfg.budget_for(p)}" for p in problems)
    t1 = Table(title=f"Best true f after the budget ({budgets} evaluations) and mean "
                     "distance of the evaluations to the true descent path (mean ± 95% CI over "
                     "seeds, and median); f at the end of the true Adam path for reference; "
                     "CPU seconds of fit + acquisition per iteration",
               columns=["problem", "method", "best f", "median best f", "path dist",
                        "median path dist", "f(true path end)", "s / iteration", "n"],
               rows=rows)
    claims, missing_notes = split_claims(_claims(results, cfg, methods))
    figures = [_plot(results, problems, methods, outdir / "best_f_curves.png")]
    return Summary(tables=[t1], figures=figures, claims=claims,
                   notes=[*_notes(cfg), *missing_notes])


def _claims(results: list[Result], cfg: LESConfig, methods: list[str]
            ) -> list[Claim | NotEvaluated]:
    prob = cfg.claim_problem

    def seeds_of(method: str, metric: str) -> dict[int, float]:
        return by_seed(results, metric,
                       where=lambda r: r.trial.method == method and r.trial.problem == prob)

    best = {m: seeds_of(m, "best_f") for m in methods}
    dist = {m: seeds_of(m, "path_dist") for m in methods}
    med = {m: _median(list(best[m].values())) for m in methods}
    # LES must act before it is compared: its best f must improve on the shared initial points
    # by at least the smallest gap that counts (a no-op would tie non-inferiority with
    # baselines that do nothing either)
    init = seeds_of("les", "best_f_init")
    gains = [init[s] - best["les"][s] for s in best["les"] if s in init]
    gain = float(np.mean(gains)) if gains else math.nan

    def guard(v):
        if gains and gain >= cfg.min_effect_f:
            return v
        return not_acting(v, f"LES improves the initial best f by {gain:.3g} on average, "
                             f"below the smallest gap that counts {cfg.min_effect_f:g}")

    claims: list = []

    def missing(group, values) -> list[str]:
        """Methods of ``group`` the config runs that lack 2 seeds in common with LES (a run
        stopped early): the claim, which needs all of them, is then not evaluated."""
        return [m for m in group if m in cfg.methods
                and (m not in values or len(common_seeds(values["les"], values[m])[0]) < 2)]

    def not_evaluated(number: int, lacking: list[str]) -> NotEvaluated:
        return NotEvaluated(text=f"({number}) on {prob}, LES against {', '.join(lacking)}",
                            why=f"fewer than 2 seeds in common with LES for {lacking}")

    def paired(test, values, m, **kw):
        return test(*common_seeds(values["les"], values[m]), **kw)

    global_ = [m for m in GLOBAL if m in methods]
    if missing(GLOBAL, best):
        claims.append(not_evaluated(1, missing(GLOBAL, best)))
    elif global_:
        cells = {f"LES vs {m}": paired(superior, best, m, min_effect=cfg.min_effect_f,
                                       direction="less") for m in global_}
        claims.append(Claim(
            text=f"(1) On {prob}, LES reaches a lower best-f than the global baselines "
                 f"({', '.join(global_)}) after {cfg.budget_for(prob)} evaluations (seed-paired, "
                 "smallest gap that counts "
                 f"{cfg.min_effect_f:g}).",
            evidence="; ".join(f"LES − {m}: {v.describe()}" for m, v in
                               zip(global_, cells.values(), strict=True))
                     + "; median best f: " + ", ".join(f"{m} {med[m]:.4g}"
                                                        for m in ["les", *global_]),
            verdict=guard(all_of(cells))))
    local = [m for m in LOCAL if m in methods]
    if missing(LOCAL, best):
        claims.append(not_evaluated(2, missing(LOCAL, best)))
    elif local:
        cells = {f"LES vs {m}": paired(noninferior, best, m, margin=cfg.margin_f,
                                       direction="less") for m in local}
        claims.append(Claim(
            text=f"(2) On {prob}, LES is not worse than the local baselines "
                 f"({', '.join(local)}): the 95% CI of the seed-paired difference "
                 f"best-f(LES) − best-f(baseline) lies below the margin {cfg.margin_f:g} "
                 f"({min(v.n for v in cells.values())} seeds).",
            evidence="; ".join(f"LES − {m}: {v.describe()}" for m, v in
                               zip(local, cells.values(), strict=True))
                     + f"; LES's mean gain over the initial best f {gain:.3g}",
            verdict=guard(all_of(cells))))
    others = [m for m in BASELINES if m in methods]
    if missing(BASELINES, dist):
        claims.append(not_evaluated(3, missing(BASELINES, dist)))
    elif others:
        cells = {f"LES vs {m}": paired(superior, dist, m, min_effect=cfg.min_effect_dist,
                                       direction="less") for m in others}
        claims.append(Claim(
            text=f"(3) On {prob}, LES's evaluations lie closer to the true descent path: its "
                 "mean distance to the true Adam path is below every baseline's by more than "
                 f"{cfg.min_effect_dist:g} (seed-paired).",
            evidence="; ".join(f"LES − {m}: {v.describe()}" for m, v in
                               zip(others, cells.values(), strict=True))
                     + "; median path distance: " + ", ".join(
                         f"{m} {_median(list(dist[m].values())):.3g}" for m in ["les", *others]),
            verdict=guard(all_of(cells))))
    secs = seeds_of("les", "iter_cpu_wall_s")
    verdict = within(list(secs.values()), -math.inf, cfg.iter_cpu_bound_s)
    claims.append(Claim(
        text=f"(4) One LES iteration (fit + acquisition, S = {cfg.les_samples}, "
             f"{cfg.les_steps} Adam steps) on {prob} costs < {cfg.iter_cpu_bound_s:g} s on one "
             "CPU thread.",
        evidence=f"per-seed mean CPU seconds per iteration: {verdict.describe()} (process time "
                 "with one thread, measured inside each trial: depends on the machine, hardly "
                 "on its load)",
        verdict=verdict))
    return claims


def _plot(results, problems, methods, path: Path) -> Figure:
    fig, axes = grid(len(problems), panel=(4.5, 3.6))
    colors = {m: color(i) for i, m in enumerate(methods)}
    for ax, prob in zip(axes, problems, strict=True):
        series: dict[str, dict[int, list[float]]] = {}
        for m in methods:
            for r in _cell(results, m, prob):
                for i in range(CURVE_POINTS):
                    n = int(r.metrics[f"curve_n_{i}"])
                    series.setdefault(m, {}).setdefault(n, []).append(
                        float(r.metrics[f"curve_f_{i}"]))
        line_panel(ax, series, xlabel="evaluations", ylabel="best true f (lower is better)",
                   title=prob, xlog=False, colors=colors)
    return save(fig, path, "Best true f found vs number of evaluations, per problem (mean ± "
                           "95 % CI over seeds)")


def _notes(cfg: LESConfig) -> list[str]:
    return [
        f"Setting: problems {list(cfg.problems)}, budget "
        f"{', '.join(str(cfg.budget_for(p)) for p in cfg.problems)} evaluations incl. "
        f"{cfg.n_init} initial Sobol points, {cfg.seeds} seeds.  Paper: GP samples at d = 5-50 "
        "with budget min(20 d, 400), 20 seeds; Ackley / Dixon-Price / shifted sphere at d = 5 "
        "and 30, 10 seeds; 2 initial points.",
        f"LES: S = {cfg.les_samples} sample paths (paper 250), M = {cfg.les_points}, Adam "
        f"{cfg.les_steps} steps at lr {cfg.les_lr} (paper 500 × 0.002; lr·steps kept at the "
        f"paper's 1 so traces can travel as far), {cfg.les_features} random features per "
        "sample path (paper 1,024).",
        "GP samples: SE length-scale 0.1·√d (the brief's choice; the paper draws length-scales "
        "from a log-normal 'complexity' prior), within-model (true hyperparameters for every GP "
        "method).  Test functions: hyperparameters fitted under the official box prior.",
        f"Baselines: LogEI ({cfg.logei_restarts} restarts / {cfg.logei_raw} raw samples; paper "
        "10 / 512), TuRBO-1 (tutorial logic, authors' settings, no restarts), GIBO with the "
        "high-confidence step rule (α = 0.9, η = 0.25), MES (BoTorch's qMaxValueEntropy, "
        f"{cfg.mes_candidates} Sobol candidates, LogEI's restarts), local Thompson sampling "
        "(one sample path, LES's Adam from the incumbent, its end point evaluated), Sobol after "
        "the shared initial points.",
        "Path distance: to the iterates of Adam (same lr and steps as LES's inner optimiser) run "
        "on the true f from the initial incumbent, which is what LES targets at its first "
        "iteration; the incumbent changes later, so the metric favours methods that stay near "
        "the initial descent path.",
        "Trials run on the device given by --device (torch tensors); the cost claim uses CPU "
        "(process) seconds with one thread, which do not grow with other jobs' load.",
    ]


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Stenger et al. (ICLR 2026): Local Entropy Search -- pathwise posterior samples, Adam "
        "descent sequences on each, mutual information with the discretised sequences -- against "
        "LogEI, TuRBO-1, GIBO and Sobol on within-model GP sample paths (d = 5, 10) and BoTorch "
        "test functions; best true f after a fixed budget, distance of the evaluations to the "
        "true descent path, and CPU seconds per iteration."),
)
