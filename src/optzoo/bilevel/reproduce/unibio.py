"""Reproduction ``unibio``: Wu, Gong, Hao & Liu, "Bilevel Optimization with Lower-Level Uniform
Convexity: Theory and Algorithm" (ICLR 2026, OpenReview dJgb3ngAvT, arXiv 2603.00027).
Official code: ``MingruiLiu-ML-Lab/bilevel-optimization-lower-level-uniform-convexity`` (its
readings are in :mod:`optzoo.bilevel.unibio`).

Three parts, all on CPU, float64, every oracle call counted (∇f, ∇g, HVP, cross product):

A. Vector synthetic (:class:`~optzoo.bilevel.problems.uniformly_convex.UniformlyConvexSynthetic`,
   d = 20, 5 lower coordinates degenerate at the optimum), p ∈ {2, 4, 6}, Gaussian oracle
   noise σ = 0.1 on every call, equal oracle budgets.  UniBiO with the synthetic script's
   constants (η = 0.05/0.03/0.02 for p = 2/4/6, β = 0.9, I = 2, Epoch-SGD K = 100, T1 = 5,
   D1 = 1, γ1 = 1) and η_N = 0.5, Q = 5, floor 1e-6 (INFERRED: the script plugs in the closed-
   form ∇Φ; the generalized Hessian of this lower level is I, so η_N = 0.5 contracts the series
   by 1/2 per term).  Baselines StocBiO (3 lower steps, Neumann η_N = 0.1, 10 terms), TTSA
   (1 lower step, Q = 10, η_N = 0.1), MA-SOBA (ν = 0.1, β = 0.9), lower step 0.1 for all, and
   their upper step α chosen per (method, p) as the best of the grid ``a_lrs`` by mean min‖∇Φ‖
   over the seeds (a tuning that favours the baselines; UniBiO is not tuned).  Metric: exact
   ‖∇Φ(x_t)‖ = ‖Bᵀ(Bx_t − b)‖ every ``a_every`` outer steps; we report its minimum over the run
   (normalized steps never shrink, so the last iterate oscillates at scale η).
S. The paper's scalar synthetic (g = |y|^p/p − y sin x, f = sin(y^{p−1}) clipped, x0 = y0 = 1,
   T = 500, p ∈ {2, 4, 6, 8}, η = 0.05/0.03/0.02/0.01) through the HVP path: lower-gradient
   noise std ∈ ``s_noises`` (the script's ``noise_rate``, passed to ``np.random.normal`` as a
   standard deviation; the paper writes N(0, 0.01), N(0, 1), N(0, 10)) and noise of std 0.01
   on ∇f, HVPs and cross products (the script's hyper-gradient noise).
B. Digits hyper-cleaning (:class:`~optzoo.bilevel.problems.hyper_cleaning.DigitsHyperCleaning`:
   40 % flipped training labels, linear soft-max model, lower regulariser 1e-3 Σ|W|^3, clean
   validation upper level), batch 128, equal oracle budget ``b_budget``; every method with its
   constants in the official ``main.py`` (UniBiO: η = 5e-2, 3 SGD steps of 2e-2 every I = 2,
   η_N = 1e-2, Q = 3, β = 0.9; StocBiO: α = 1e-2, 3 steps of 2e-3, η_N = 1e-2, Q = 3; TTSA:
   α = 1e-3, 1 step of 2e-2; MA-SOBA: α = 1e-2, γ = ν = 1e-2, β = 0.9).  Metrics: test accuracy
   of the method's own classifier, of the classifier refitted (L-BFGS) at its learned weights,
   and the AUC of −λ as a detector of flipped labels.

Claims (thresholds fixed before any run; since issue 18 each is decided by a named test of
:mod:`optzoo.experiment.verdicts`, paired by seed where trials share seeds).  Old rule → new:

(A1) UniBiO's min ‖∇Φ‖ ≤ 1e-2 — was "in every seed, every p"; now ``all_of`` over p of
     ``within(−∞, 1e-2)`` on the per-seed minima (CI of their mean).
(A2) StocBiO (best α of the grid) stalls for p ≥ 4 — was "mean min ‖∇Φ‖ > 1e-2 and above
     UniBiO's, or a diverged run"; now ``all_of`` over p ≥ 4 of [``within(1e-2, ∞)`` on
     StocBiO's per-seed minima, ``superior`` (StocBiO's min ‖∇Φ‖ above UniBiO's by more than
     ``min_effect_grad``, paired by seed)] (a diverged run counts by its minimum before it
     diverged; the "or diverged" branch is gone).  The defect named in issue 18: UniBiO runs
     at the script's fixed η while every baseline's α is the best of ``a_lrs``; every pick is
     now made by ``tune`` (UniBiO's recorded as a grid of one value, budget 1) and the verdict
     goes through ``guard``, so this comparison is *inconclusive (unequal tuning budget)*
     until UniBiO is tuned on a grid of the same size.
(A3) UniBiO's oracle calls to ‖∇Φ‖ ≤ 1e-2 grow with p — was "seed means strictly increasing,
     every seed reaching"; now ``trend`` (Spearman ρ of calls against p over seeds, increasing,
     beyond ``min_rho``); a seed that never reaches the target counts at the budget (a lower
     bound), and when no seed reaches it at any p the claim is inconclusive (``not_acting``:
     the calls are not observed).
(S)  For every noise level the mean over t ≤ T of |∇Φ(x_t)| increases with p — was "seed
     means strictly increasing"; now ``all_of`` over noise levels of ``trend`` (ρ beyond
     ``min_rho``).  With fewer than three (p, seed) points (smoke) a paired ``superior`` of the
     largest p over the smallest on log values stands in.
(B1) UniBiO's test accuracy ≥ StocBiO's, TTSA's and MA-SOBA's at equal oracle budget — was
     "mean ≥ mean" (a tie passed; lenient); now ``all_of`` of paired ``superior`` tests, higher
     by more than ``min_effect_acc`` (the paper's "beats").  Part B uses each method's constants
     from the official code, no grid: no tuning to guard.
(B2) UniBiO's AUC > 0.9 — was "mean > 0.9"; now ``within(0.9, ∞)`` on the per-seed AUCs.

Verdict margins (preset fields, the same for every preset, not trial parameters):

- ``min_effect_grad = 1e-2``: a gap in ‖∇Φ‖ smaller than the claims' own 1e-2 target is below the
  accuracy they care about.
- ``min_effect_acc = 0.01``: one accuracy point (≈ 5 of the ~500 test digits) is the smallest
  gain reported as "beats".
- ``min_rho = 0.3``: a rank correlation below the conventional "moderate" 0.3 shows no growth
  with p.

No preset was changed.  Trials are single-threaded CPU work; ``--device`` is ignored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from optzoo.bilevel.ma_soba import MASOBA
from optzoo.bilevel.problem import Oracle
from optzoo.bilevel.problems.hyper_cleaning import DigitsHyperCleaning
from optzoo.bilevel.problems.uniformly_convex import (
    ScalarUniformlyConvex,
    UniformlyConvexSynthetic,
)
from optzoo.bilevel.stocbio import StocBiO
from optzoo.bilevel.ttsa import TTSA
from optzoo.bilevel.unibio import UniBiO
from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment.stats import fmt_values as _fmt
from optzoo.experiment.stats import metric_values as _vals
from optzoo.experiment.verdicts import (
    Tuned,
    Verdict,
    all_of,
    by_seed,
    downgrade,
    guard,
    superior,
    trend,
    tune,
    undecided,
    within,
)

SLUG = "unibio"
METHODS = ("unibio", "stocbio", "ttsa", "masoba")
LABELS = {"unibio": "UniBiO", "stocbio": "StocBiO", "ttsa": "TTSA", "masoba": "MA-SOBA"}
SCRIPT_LR = {2: 0.05, 4: 0.03, 6: 0.02, 8: 0.01}  # synthetic_exp.py's η per p
TARGET = 1e-2
CHECKPOINTS = 20


# -- configuration ---------------------------------------------------------------------------

@dataclass(frozen=True)
class UniBiOConfig(Preset):
    """Settings of the reproduction.

    Args:
        seeds: seeds per cell.
        a_ps: orders p of part A.
        a_noise: oracle noise std of part A.
        a_budget: oracle calls per part-A run.
        a_lrs: grid of the baselines' upper step in part A.
        a_every: outer steps between evaluations of ‖∇Φ‖ in part A.
        s_ps: orders p of the scalar synthetic.
        s_noises: lower-gradient noise stds of the scalar synthetic.
        s_steps: outer steps T of the scalar synthetic.
        b_budget: oracle calls per hyper-cleaning run.
        b_n_train, b_n_val: hyper-cleaning split sizes.
        b_refit_iters: L-BFGS iterations of the refitted classifier.
        min_effect_grad, min_effect_acc, min_rho: verdict margins (module docstring, "Verdict
            margins"); not trial parameters.
    """

    seeds: int = 3
    a_ps: tuple[int, ...] = (2, 4, 6)
    a_noise: float = 0.1
    a_budget: int = 20_000
    a_lrs: tuple[float, ...] = (0.1, 0.03, 0.01)
    a_every: int = 5
    s_ps: tuple[int, ...] = (2, 4, 6, 8)
    s_noises: tuple[float, ...] = (0.0, 0.01, 1.0, 10.0)
    s_steps: int = 500
    b_budget: int = 3_000
    b_n_train: int = 1000
    b_n_val: int = 300
    b_refit_iters: int = 100
    min_effect_grad: float = 1e-2
    min_effect_acc: float = 0.01
    min_rho: float = 0.3

    def validate(self) -> None:
        super().validate()
        for name in ("a_ps", "s_ps"):
            ps = getattr(self, name)
            if not ps or any(p not in SCRIPT_LR for p in ps):
                raise ConfigError(f"{name}: expected orders among {sorted(SCRIPT_LR)}, got {ps}")
        if not self.a_lrs or any(lr <= 0 for lr in self.a_lrs):
            raise ConfigError(f"a_lrs: expected positive step sizes, got {self.a_lrs}")
        if not self.s_noises or any(s < 0 for s in self.s_noises):
            raise ConfigError(f"s_noises: expected stds >= 0, got {self.s_noises}")
        if self.a_noise < 0:
            raise ConfigError(f"a_noise: expected >= 0, got {self.a_noise}")
        for name in ("a_budget", "a_every", "s_steps", "b_budget", "b_refit_iters"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected >= 1, got {getattr(self, name)}")
        if self.s_steps < CHECKPOINTS:
            raise ConfigError(f"s_steps: expected >= {CHECKPOINTS}, got {self.s_steps}")
        for name in ("min_effect_grad", "min_effect_acc", "min_rho"):
            if not getattr(self, name) >= 0:
                raise ConfigError(f"{name}: expected >= 0, got {getattr(self, name)}")
        if self.b_n_train < 50 or self.b_n_val < 20 or self.b_n_train + self.b_n_val > 1700:
            raise ConfigError(f"b_n_train, b_n_val: expected >= 50, >= 20 and a sum <= 1700, "
                              f"got {self.b_n_train}, {self.b_n_val}")


PRESETS = {
    "smoke": UniBiOConfig(seeds=1, a_ps=(2, 4), a_budget=1500, a_lrs=(0.1,), s_ps=(2, 4),
                          s_noises=(0.0, 1.0), s_steps=40, b_budget=200, b_n_train=300,
                          b_n_val=100, b_refit_iters=10),
    # quick: a_budget 20000 -> 10000 and b_refit_iters 100 -> 50 after a first timing (257 s of
    # CPU, over the ~120 s on 2 cores); the class defaults stay the documented setting
    "quick": UniBiOConfig(a_budget=10_000, b_refit_iters=50),
    "full": UniBiOConfig(seeds=5, a_budget=200_000, b_budget=10_000),
}


def trials(cfg: UniBiOConfig) -> list[Trial]:
    out = []
    for p in cfg.a_ps:
        common = {"part": "A", "p": p, "noise": cfg.a_noise, "budget": cfg.a_budget,
                  "every": cfg.a_every}
        for s in range(cfg.seeds):
            out.append(Trial("unibio", f"A-p{p}", s, {**common, "lr": SCRIPT_LR[p]}))
            out += [Trial(m, f"A-p{p}", s, {**common, "lr": lr})
                    for m in METHODS[1:] for lr in cfg.a_lrs]
    out += [Trial("unibio", f"S-p{p}-n{noise:g}", s,
                  {"part": "S", "p": p, "noise": noise, "steps": cfg.s_steps})
            for p in cfg.s_ps for noise in cfg.s_noises for s in range(cfg.seeds)]
    b = {"part": "B", "budget": cfg.b_budget, "n_train": cfg.b_n_train, "n_val": cfg.b_n_val,
         "refit_iters": cfg.b_refit_iters}
    out += [Trial(m, "digits", s, b) for m in METHODS for s in range(cfg.seeds)]
    return out


# -- one trial ---------------------------------------------------------------------------------

def _solver_a(method: str, oracle: Oracle, p: int, lr: float):
    if method == "unibio":
        return UniBiO(oracle, p=p, lr=lr, beta=0.9, refresh_every=2, lower_budget=100,
                      first_epoch=5, radius=1.0, inner_lr=1.0, neumann_eta=0.5, terms=5)
    if method == "stocbio":
        return StocBiO(oracle, lr=lr, inner_lr=0.1, inner_steps=3, neumann_eta=0.1, terms=10)
    if method == "ttsa":
        return TTSA(oracle, lr=lr, inner_lr=0.1, neumann_eta=0.1, terms=10)
    return MASOBA(oracle, lr=lr, inner_lr=0.1, z_lr=0.1, beta=0.9)


def _run_a(trial: Trial) -> dict:
    q = trial.params
    p, budget = int(q["p"]), int(q["budget"])
    problem = UniformlyConvexSynthetic(p, seed=trial.seed)
    oracle = Oracle(problem, noise=float(q["noise"]),
                    generator=torch.Generator().manual_seed(1000 + trial.seed))
    solver = _solver_a(trial.method, oracle, p, float(q["lr"]))
    hist = solver.run(budget=budget, every=int(q["every"]),
                      callback=lambda s: {"grad": float(problem.hypergradient(s.x).norm())})
    rows = [r for r in hist if "grad" in r]
    grads = np.array([r["grad"] for r in rows])
    calls = np.array([r["calls"] for r in rows])
    hit = np.nonzero(grads <= TARGET)[0]
    out = {"min_grad": float(grads.min()), "final_grad": float(grads[-1]),
           "mean_grad_last_half": float(grads[len(grads) // 2:].mean()),
           "calls_to_target": int(calls[hit[0]]) if hit.size else None,
           "diverged": bool(hist[-1].get("diverged", False)), "steps": solver.steps,
           "calls": oracle.total, "init_grad": float(grads[0])}
    for j in range(CHECKPOINTS + 1):  # min-so-far ‖∇Φ‖ at equally spaced budgets
        upto = grads[calls <= budget * j / CHECKPOINTS]
        out[f"curve_{j:02d}"] = float(upto.min()) if upto.size else float(grads[0])
    return out


def _run_scalar(trial: Trial) -> dict:
    q = trial.params
    p, steps = int(q["p"]), int(q["steps"])
    problem = ScalarUniformlyConvex(p, lower_noise=float(q["noise"]), upper_noise=0.01)
    oracle = Oracle(problem, generator=torch.Generator().manual_seed(2000 + trial.seed))
    solver = UniBiO(oracle, p=p, lr=SCRIPT_LR[p], beta=0.9, refresh_every=2, lower_budget=100,
                    first_epoch=5, radius=1.0, inner_lr=1.0, neumann_eta=0.5, terms=5)
    hist = solver.run(steps=steps, every=1,
                      callback=lambda s: {"grad": float(problem.hypergradient(s.x).abs())})
    grads = np.array([r["grad"] for r in hist if "grad" in r])
    out = {"mean_grad": float(grads[1:].mean()), "final_grad": float(grads[-1]),
           "min_grad": float(grads.min()), "calls": oracle.total,
           "diverged": bool(hist[-1].get("diverged", False))}
    for j, t in enumerate(np.linspace(0, len(grads) - 1, CHECKPOINTS + 1).round().astype(int)):
        out[f"curve_{j:02d}"] = float(grads[t])
    return out


def _solver_b(method: str, oracle: Oracle):
    if method == "unibio":
        return UniBiO(oracle, p=3.0, lr=5e-2, beta=0.9, refresh_every=2, lower="sgd",
                      inner_lr=2e-2, lower_steps=3, neumann_eta=1e-2, terms=3)
    if method == "stocbio":  # terms = 4: three HVPs as in the code's Q = 3
        return StocBiO(oracle, lr=1e-2, inner_lr=2e-3, inner_steps=3, neumann_eta=1e-2,
                       terms=4)
    if method == "ttsa":
        return TTSA(oracle, lr=1e-3, inner_lr=2e-2, neumann_eta=1e-2, terms=3)
    return MASOBA(oracle, lr=1e-2, inner_lr=1e-2, z_lr=1e-2, beta=0.9)


def _run_b(trial: Trial) -> dict:
    q = trial.params
    problem = DigitsHyperCleaning(n_train=int(q["n_train"]), n_val=int(q["n_val"]), flip=0.4,
                                  p=3.0, reg=1e-3, seed=trial.seed)
    oracle = Oracle(problem, batch_size=128,
                    generator=torch.Generator().manual_seed(3000 + trial.seed))
    solver = _solver_b(trial.method, oracle)
    hist = solver.run(budget=int(q["budget"]))
    refit = problem.refit(solver.x, iters=int(q["refit_iters"]))
    return {"test_acc": problem.test_accuracy(solver.y), "refit_test_acc":
            problem.test_accuracy(refit), "auc": problem.cleaning_auc(solver.x),
            "steps": solver.steps, "calls": oracle.total,
            "diverged": bool(hist[-1].get("diverged", False))}


def run_trial(trial: Trial, device: str) -> dict:
    torch.set_num_threads(1)
    part = trial.params["part"]
    if part == "A":
        return _run_a(trial)
    if part == "S":
        return _run_scalar(trial)
    return _run_b(trial)


# -- summary -----------------------------------------------------------------------------------

def _mean(results: list[Result], key: str) -> float:
    vals = _vals(results, key)
    return float(np.mean(vals)) if vals else math.nan


def _cells(results: list[Result], part: str) -> dict[tuple, list[Result]]:
    out: dict[tuple, list[Result]] = {}
    for r in sorted(results, key=lambda r: r.trial.seed):
        q = r.trial.params
        if q["part"] != part:
            continue
        key = (r.trial.method, int(q.get("p", 0)), float(q.get("lr", 0.0)),
               float(q.get("noise", 0.0)))
        out.setdefault(key, []).append(r)
    return out


def _score(r: Result) -> float:
    return math.inf if r.metrics["diverged"] else float(r.metrics["min_grad"])


def _best_a(results: list[Result]) -> tuple[dict[tuple[str, int], tuple[float, list[Result]]],
                                            dict[tuple[str, int], Tuned]]:
    """Per (method, p): the upper step with the lowest mean min‖∇Φ‖ (diverged runs count as
    ∞) picked by :func:`tune` and its results, and the :class:`Tuned` record (UniBiO's step is
    the script's, a grid of one value: budget 1)."""
    grids: dict[tuple[str, int], dict[float, list[Result]]] = {}
    for (m, p, lr, _), rs in _cells(results, "A").items():
        grids.setdefault((m, p), {})[lr] = rs
    best, tuned = {}, {}
    for (m, p), grid in grids.items():
        name = f"{LABELS[m]} {'η' if m == 'unibio' else 'α'} (p={p})"
        t = tune(name, {lr: [_score(r) for r in rs] for lr, rs in grid.items()})
        best[(m, p)], tuned[(m, p)] = (t.best, grid[t.best]), t
    return best, tuned


def summarize(results: list[Result], cfg: UniBiOConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    tables, figures, claims = [], [], []
    best, tuned = _best_a(results)
    ps = sorted({p for _, p in best})
    rows = []
    for p in ps:
        for m in METHODS:
            if (m, p) not in best:
                continue
            lr, rs = best[(m, p)]
            reached = sum(r.metrics["calls_to_target"] is not None for r in rs)
            rows.append([p, LABELS[m], f"{lr:g}", _fmt(_vals(rs, "min_grad")),
                         _fmt(_vals(rs, "mean_grad_last_half")),
                         _fmt(_vals(rs, "calls_to_target")), f"{reached}/{len(rs)}",
                         sum(bool(r.metrics["diverged"]) for r in rs), len(rs)])
    tables.append(Table(
        title=f"A. Vector synthetic, noise σ = {cfg.a_noise:g}, {cfg.a_budget} oracle calls: "
              "‖∇Φ‖ (mean ± 95% CI over seeds; baselines at their best step of the grid "
              f"{list(cfg.a_lrs)}, UniBiO at the script's η)",
        columns=["p", "method", "step", "min ‖∇Φ‖", "mean ‖∇Φ‖ (last half)",
                 f"calls to ‖∇Φ‖ ≤ {TARGET:g}", "reached", "diverged", "n"], rows=rows))
    grid_rows = [[p, LABELS[m], f"{lr:g}", _fmt(_vals(rs, "min_grad")),
                  sum(bool(r.metrics["diverged"]) for r in rs)]
                 for (m, p, lr, _), rs in _cells(results, "A").items() if m != "unibio"]
    tables.append(Table(title="A. Baselines' step-size grid (min ‖∇Φ‖, mean ± 95% CI)",
                        columns=["p", "method", "step", "min ‖∇Φ‖", "diverged"],
                        rows=grid_rows))
    scal = _cells(results, "S")
    tables.append(Table(
        title=f"S. Scalar synthetic (paper §6), UniBiO, T = {cfg.s_steps}: |∇Φ(x_t)| (mean ± "
              "95% CI over seeds)",
        columns=["p", "lower noise std", "η", "mean over t", "final", "min", "oracle calls",
                 "n"],
        rows=[[p, f"{noise:g}", f"{SCRIPT_LR[p]:g}", _fmt(_vals(rs, "mean_grad")),
               _fmt(_vals(rs, "final_grad")), _fmt(_vals(rs, "min_grad")),
               _fmt(_vals(rs, "calls"), 5), len(rs)]
              for (_, p, _, noise), rs in sorted(scal.items(), key=lambda kv: (kv[0][3],
                                                                              kv[0][1]))]))
    hc = _cells(results, "B")
    tables.append(Table(
        title=f"B. Digits hyper-cleaning (40% flipped labels, ℓ_3 lower regulariser), "
              f"{cfg.b_budget} oracle calls (mean ± 95% CI over seeds)",
        columns=["method", "test acc (own y)", "test acc (refitted at λ)", "AUC noisy/clean",
                 "outer steps", "n"],
        rows=[[LABELS[m], _fmt(_vals(rs, "test_acc")), _fmt(_vals(rs, "refit_test_acc")),
               _fmt(_vals(rs, "auc")), _fmt(_vals(rs, "steps"), 5), len(rs)]
              for (m, *_), rs in hc.items()]))
    if best:
        figures.append(_plot_a(best, ps, cfg, outdir / "synthetic_vector.png"))
        claims += _claims_a(best, tuned, ps, cfg)
    if scal:
        figures.append(_plot_scalar(scal, cfg, outdir / "synthetic_scalar.png"))
        claims.append(_claim_scalar(scal, cfg))
    if hc:
        claims += _claims_b(hc, cfg)
    return Summary(tables=tables, figures=figures, claims=claims, notes=_notes(cfg))


def _increasing(points: dict[float, dict[int, float]], min_rho: float) -> Verdict:
    """``ys`` grow with ``x``: Spearman ``trend`` over every (x, seed) point; with fewer than
    three points (smoke), a paired ``superior`` of the largest x over the smallest on log
    values (min_effect 0) stands in."""
    xs = [x for x in sorted(points) for _ in points[x]]
    ys = [v for x in sorted(points) for v in points[x].values()]
    if len(xs) >= 3 and len(set(xs)) >= 2:
        return trend(xs, ys, direction="increasing", min_rho=min_rho)
    lo, hi = points[min(points)], points[max(points)]
    return superior(hi, lo, min_effect=0.0, direction="greater", log_ratio=True)


def _claims_a(best, tuned, ps, cfg: UniBiOConfig) -> list[Claim]:
    uni = {p: best[("unibio", p)][1] for p in ps if ("unibio", p) in best}
    mins = {p: by_seed(rs, "min_grad") for p, rs in uni.items()}
    uni_t = [tuned[("unibio", p)] for p in uni]
    cells = {f"p={p}": within(list(v.values()), -math.inf, TARGET) for p, v in mins.items()}
    a1 = Claim(
        text=f"(A1) UniBiO reaches ‖∇Φ‖ ≤ {TARGET:g} for every p (minimum over the run; CI of "
             "the seeds' mean) under noisy oracles.",
        evidence="; ".join(f"p={p}: min ‖∇Φ‖ {_fmt(list(v.values()))} (max over seeds "
                           f"{max(v.values()):.3g})" for p, v in mins.items()),
        verdict=guard(all_of(cells), *uni_t))
    high = [p for p in ps if p >= 4 and ("stocbio", p) in best and p in uni]
    parts, cells = [], {}
    for p in high:
        lr, rs = best[("stocbio", p)]
        div = sum(bool(r.metrics["diverged"]) for r in rs)
        s_min = by_seed(rs, "min_grad")
        stall = within(list(s_min.values()), TARGET, math.inf)
        worse = superior(s_min, mins[p], min_effect=cfg.min_effect_grad, direction="greater")
        cells[f"p={p}"] = all_of({"stalls": stall, "above UniBiO": worse})
        parts.append(f"p={p}: StocBiO (α={lr:g}) min ‖∇Φ‖ {_fmt(list(s_min.values()))}, "
                     f"{div} diverged; UniBiO {_fmt(list(mins[p].values()))}; StocBiO − UniBiO "
                     f"{worse.describe()}")
    if cells:
        a2v = guard(all_of(cells), *(tuned[("stocbio", p)] for p in high),
                    *(tuned[("unibio", p)] for p in high))
    else:
        a2v = undecided("no p ≥ 4 in this preset")
    a2 = Claim(
        text="(A2) StocBiO (plain Neumann series, unnormalised SGD step; best α of the grid) "
             f"stalls for p ≥ 4: its min ‖∇Φ‖ stays above {TARGET:g} and above UniBiO's by more "
             f"than {cfg.min_effect_grad:g} (paired by seed).",
        evidence="; ".join(parts) if parts else "no p ≥ 4 in this preset",
        verdict=a2v)
    budget = {p: float(rs[0].trial.params["budget"]) for p, rs in uni.items()}
    calls = {p: {r.trial.seed: (float(r.metrics["calls_to_target"])
                                if r.metrics["calls_to_target"] is not None else budget[p])
                 for r in rs} for p, rs in uni.items()}
    reached = {p: sum(r.metrics["calls_to_target"] is not None for r in rs)
               for p, rs in uni.items()}
    a3v = guard(_increasing(calls, cfg.min_rho), *uni_t)
    if not any(reached.values()):
        a3v = downgrade(a3v, f"no seed reaches ‖∇Φ‖ ≤ {TARGET:g} at any p within the budget: "
                              "the calls to the target are not observed")
    a3 = Claim(
        text=f"(A3) UniBiO's oracle calls to reach ‖∇Φ‖ ≤ {TARGET:g} grow with p (Spearman ρ "
             f"over seeds beyond {cfg.min_rho:g}; a seed that never reaches it counts at the "
             "budget).",
        evidence="; ".join(f"p={p}: {_fmt(list(c.values()))} calls, {reached[p]}/{len(c)} "
                           "seeds reached" for p, c in calls.items()),
        verdict=a3v)
    return [a1, a2, a3]


def _claim_scalar(scal, cfg: UniBiOConfig) -> Claim:
    by_noise: dict[float, dict[int, list[Result]]] = {}
    for (_, p, _, noise), rs in scal.items():
        by_noise.setdefault(noise, {})[p] = rs
    cells, parts = {}, []
    for noise, d in sorted(by_noise.items()):
        v = _increasing({p: by_seed(d[p], "mean_grad") for p in sorted(d)}, cfg.min_rho)
        cells[f"std {noise:g}"] = v
        parts.append(f"std {noise:g}: " + ", ".join(f"p={p}: {_mean(d[p], 'mean_grad'):.3g}"
                                                   for p in sorted(d)) + f" ({v.describe()})")
    return Claim(
        text="(S) Paper's scalar synthetic: the hypergradient norm decreases more slowly for "
             "larger p at every noise level — mean over t ≤ T of |∇Φ(x_t)| increases with p "
             f"(Spearman ρ over (p, seed) beyond {cfg.min_rho:g}).",
        evidence="; ".join(parts), verdict=all_of(cells))


def _claims_b(hc, cfg: UniBiOConfig) -> list[Claim]:
    rs_by = {m: rs for (m, *_), rs in hc.items()}
    if "unibio" not in rs_by:
        return []
    acc = {m: by_seed(rs, "test_acc") for m, rs in rs_by.items()}
    auc = {m: by_seed(rs, "auc") for m, rs in rs_by.items()}
    others = [m for m in acc if m != "unibio"]
    cells = {f"vs {LABELS[m]}": superior(acc["unibio"], acc[m], min_effect=cfg.min_effect_acc,
                                         direction="greater") for m in others}
    b1 = Claim(
        text="(B1) Hyper-cleaning: UniBiO's test accuracy beats StocBiO's, TTSA's and MA-SOBA's "
             f"at equal oracle budget by more than {cfg.min_effect_acc * 100:g} points (paired "
             "by seed).",
        evidence=", ".join(f"{LABELS[m]} {_fmt(list(v.values()))}" for m, v in acc.items())
        + "; " + "; ".join(f"UniBiO − {c[3:]}: {v.describe()}" for c, v in cells.items()),
        verdict=all_of(cells))
    b2v = within(list(auc["unibio"].values()), 0.9, math.inf)
    b2 = Claim(
        text="(B2) UniBiO's learned weights separate flipped from clean samples: AUC > 0.9 (CI "
             "of the seeds' mean).",
        evidence=", ".join(f"{LABELS[m]} AUC {_fmt(list(v.values()))}" for m, v in auc.items())
        + f"; UniBiO {b2v.describe()}",
        verdict=b2v)
    return [b1, b2]


def _curve(rs: list[Result]) -> np.ndarray:
    return np.array([[float(r.metrics[f"curve_{j:02d}"]) for j in range(CHECKPOINTS + 1)]
                     for r in rs]).mean(0)


def _plot_a(best, ps, cfg, path: Path) -> Figure:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(ps), figsize=(4.2 * len(ps), 3.6), squeeze=False)
    budgets = np.linspace(0, cfg.a_budget, CHECKPOINTS + 1)
    for ax, p in zip(axes[0], ps, strict=True):
        for m in METHODS:
            if (m, p) in best:
                lr, rs = best[(m, p)]
                ax.semilogy(budgets, _curve(rs), label=f"{LABELS[m]} (η={lr:g})")
        ax.axhline(TARGET, color="gray", ls="--", lw=0.8)
        ax.set_title(f"p = {p}")
        ax.set_xlabel("oracle calls")
        ax.set_ylabel("min ‖∇Φ‖ so far")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Figure(path=path, caption="A. Vector synthetic: running minimum of ‖∇Φ‖ vs oracle "
                  "calls (mean over seeds; dashed: the 1e-2 target)")


def _plot_scalar(scal, cfg, path: Path) -> Figure:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    noises = sorted({k[3] for k in scal})
    fig, axes = plt.subplots(1, len(noises), figsize=(4.2 * len(noises), 3.6), squeeze=False)
    ts = np.linspace(0, cfg.s_steps, CHECKPOINTS + 1)
    for ax, noise in zip(axes[0], noises, strict=True):
        for (_, p, _, nz), rs in sorted(scal.items()):
            if nz == noise:
                ax.plot(ts, _curve(rs), label=f"p = {p}")
        ax.set_title(f"lower noise std {noise:g}")
        ax.set_xlabel("iteration")
        ax.set_ylabel("|∇Φ(x_t)|")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Figure(path=path, caption="S. Paper's scalar synthetic through the HVP path: "
                  "|∇Φ(x_t)| vs iteration (mean over seeds)")


def _notes(cfg: UniBiOConfig) -> list[str]:
    return [
        "UniBiO's estimator uses (I − η_N D⁻¹∇²g), D = max((p−1)|y|^{p−2}, 1e-6), and keeps the "
        "q = 0 Neumann term; the official code applies the transpose (I − η_N ∇²g D⁻¹), drops "
        "the q = 0 term and has no floor (see optzoo.bilevel.unibio).",
        "Part A is a problem designed for this reproduction (not in the paper): Φ(x) = "
        "½‖Bx − b‖² with 5 of 20 lower coordinates at the degenerate point y = 0 at the "
        "optimum; b and x0 have entries of std 0.5 so that |Bx| ≲ 1 as |sin x| ≤ 1 in the "
        "paper's scalar problem. UniBiO's η_N = 0.5, Q = 5 on the synthetic problems are "
        "INFERRED (the script uses the closed-form ∇Φ); its other constants are the script's.",
        f"Part A tuning disclosed: baselines' upper step picked per (method, p) from "
        f"{list(cfg.a_lrs)} by the mean min ‖∇Φ‖ over the same seeds (favours the baselines); "
        "their lower step 0.1 and Neumann settings (η_N = 0.1; 10 terms) fixed, not tuned; "
        "UniBiO not tuned. MA-SOBA z starts at 0 and is not projected.",
        "The paper's theory parameters (1 − β = Θ(ε²), η = Θ(ε^{3p−3})) are not used; with the "
        "script's β = 0.9 and constant η the normalized iterate keeps moving by η per step, so "
        "under oracle noise it hovers at a noise-dependent ‖∇Φ‖ level.",
        "Part S: noise levels are the script's noise_rate used as a standard deviation; the "
        "paper's figure plots the noisy hyper-gradient estimate, we plot the exact |∇Φ(x_t)|; "
        "Epoch-SGD is warm-started at the current y (the script restarts from N(0, 1)).",
        "Part B: linear soft-max model on scikit-learn digits (paper: 3-layer RNN on SNLI, flip "
        "0.1, p = 3); 40% flips; lower 1e-3·Σ|W|^3 (code: 1e-4); constants of each method from "
        "the official main.py (tuned there for SNLI, not re-tuned here). The cross term is "
        "taken on a training batch (the code uses a validation batch).",
        f"Budgets: A {cfg.a_budget} calls, B {cfg.b_budget} calls, S {cfg.s_steps} outer steps; "
        f"{cfg.seeds} seeds. Trials run on the CPU whatever --device says.",
    ]


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "UniBiO (ICLR 2026) vs StocBiO, TTSA and MA-SOBA at equal oracle budgets on a vector "
        "synthetic bilevel problem with a uniformly convex (order p ∈ {2, 4, 6}) lower level and "
        "closed-form ∇Φ under noisy oracles; the paper's scalar synthetic g = |y|^p/p − y sin x "
        "(p ∈ {2, 4, 6, 8}, four noise levels) through the HVP path; and data hyper-cleaning "
        "of scikit-learn digits with 40% flipped labels and an ℓ_3-regularised lower level "
        "(test accuracy, AUC of the learned sample weights). CPU only."),
)
