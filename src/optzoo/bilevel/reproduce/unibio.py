"""Reproduction ``unibio``: Wu, Gong, Hao & Liu, "Bilevel Optimization with Lower-Level Uniform
Convexity: Theory and Algorithm" (ICLR 2026, OpenReview dJgb3ngAvT, arXiv 2603.00027).
Official code: ``MingruiLiu-ML-Lab/bilevel-optimization-lower-level-uniform-convexity`` (its
readings are in :mod:`optzoo.bilevel.unibio`).

Three parts, all on CPU, float64, every oracle call counted (∇f, ∇g, HVP, cross product):

A. Vector synthetic (:class:`~optzoo.bilevel.problems.uniformly_convex.UniformlyConvexSynthetic`,
   d = 20, 5 lower coordinates degenerate at the optimum), p ∈ {2, 4, 6}, Gaussian oracle
   noise σ = 0.1 on every call, equal oracle budgets.  UniBiO with the synthetic script's
   constants (β = 0.9, I = 2, Epoch-SGD K = 100, T1 = 5, D1 = 1, γ1 = 1) and η_N = 0.5, Q = 5,
   floor 1e-6 (INFERRED: the script plugs in the closed-form ∇Φ; the generalized Hessian of
   this lower level is I, so η_N = 0.5 contracts the series by 1/2 per term), in two arms:
   the paper's constant η, and a decaying η_t = η_0/√(1 + t) (issue 21: not in the paper; a
   constant normalized step moves by η every step, so under noise it hovers at a ‖∇Φ‖ floor
   of order η — at p = 2 without noise η = 0.05 stops at 0.059, η = 0.005 reaches 0.0019).
   Baselines StocBiO (3 lower steps, Neumann η_N = 0.1, 10 terms), TTSA (1 lower step,
   Q = 10, η_N = 0.1), MA-SOBA (ν = 0.1, β = 0.9), lower step 0.1 for all.  *Every* method's
   upper step (UniBiO's η, the decaying arm's η_0, the baselines' α) is chosen per (method,
   p) by :func:`tune` on the same grid ``a_lrs`` (7 values, 0.003 … 3: 0.003 … 1 after a first
   look at one seed; 3 added when the decaying arm's pick at p = 4 sat on 1, the edge), by the
   mean min‖∇Φ‖ over the seeds.
   Metric: exact ‖∇Φ(x_t)‖ = ‖Bᵀ(Bx_t − b)‖ every ``a_every`` outer steps; we report its
   minimum over the run (normalized steps never shrink, so the last iterate oscillates).
S. The paper's scalar synthetic (g = |y|^p/p − y sin x, f = sin(y^{p−1}) clipped, x0 = y0 = 1,
   T = 500, p ∈ {2, 4, 6, 8}, η = 0.05/0.03/0.02/0.01) through the HVP path: lower-gradient
   noise std ∈ ``s_noises`` (the script's ``noise_rate``, passed to ``np.random.normal`` as a
   standard deviation; the paper writes N(0, 0.01), N(0, 1), N(0, 10)) and noise of std 0.01
   on ∇f, HVPs and cross products (the script's hyper-gradient noise), ``s_seeds`` seeds.
   The script (``synthetic_exp.py``, read again for issue 21) plots ``‖hypergrad‖`` where
   ``hypergrad`` is its *noisy estimate* (closed-form ∇Φ plus N(0, 0.01²)), not the exact
   ∇Φ: we record both, the estimate |ĝ_t| of our HVP path and the exact |∇Φ(x_t)|, and the
   claim uses the estimate, the paper's quantity.
B. Digits hyper-cleaning (:class:`~optzoo.bilevel.problems.hyper_cleaning.DigitsHyperCleaning`:
   40 % flipped training labels, linear soft-max model, lower regulariser 1e-3 Σ|W|^3, clean
   validation upper level), batch 128, equal oracle budget ``b_budget``; every method with its
   constants in the official ``main.py`` (UniBiO: η = 5e-2, 3 SGD steps every I = 2, η_N =
   1e-2, Q = 3, β = 0.9; StocBiO: α = 1e-2, 3 steps, η_N = 1e-2, Q = 3; TTSA: α = 1e-3, 1 step;
   MA-SOBA: α = 1e-2, γ = ν = 1e-2, β = 0.9) except the lower SGD step, which issue 21 found
   crippling StocBiO (its official 2e-3 leaves the classifier at 0.32 test accuracy here):
   every method's lower step is picked by :func:`tune` on the same grid ``b_inner_lrs`` by
   the *final validation loss* (the upper objective, so no test data enter the pick).
   Metrics: test accuracy of the method's own classifier, of the classifier refitted (L-BFGS)
   at its learned weights, and the AUC of −λ as a detector of flipped labels.  UniBiO's D
   floor δ is a parameter (``b_floor``, absolute, 1e-6 for the claims: the paper's code has
   no floor, the brief's 1e-6 is the smallest that keeps D⁻¹ finite); a sensitivity table
   reruns UniBiO at the official lower step with δ ∈ ``b_floors`` (absolute) and
   ``b_rel_floors`` (fractions of max_i D_i), because D⁻¹ multiplies the noise of ∇_y f and of
   the HVPs by up to 1/δ (issue 21: AUC 0.57 ± 0.34 at 1e-6, 0.76 at 0.1 on two seeds).

Claims (thresholds fixed before any run; each is decided by a named test of
:mod:`optzoo.experiment.verdicts`, paired by seed where trials share seeds):

(A1)  UniBiO at a constant η reaches min ‖∇Φ‖ ≤ 1e-2 at every p: ``all_of`` over p of
      ``within(−∞, 1e-2)`` on the per-seed minima, guarded by its tuning.  (A1′) the same for
      the decaying arm.
(A2)  StocBiO (best α of the grid) stalls for p ≥ 4: ``all_of`` over p ≥ 4 and over both
      UniBiO arms of [``within(1e-2, ∞)`` on StocBiO's minima, ``superior`` (StocBiO above
      the arm by more than ``min_effect_grad``, paired by seed)], each cell guarded by both
      methods' tuning (same grid, so the budgets are equal; an edge makes it inconclusive).
(A3)  UniBiO's calls to ‖∇Φ‖ ≤ 1e-2 grow with p: per arm a ``trend`` (Spearman ρ beyond
      ``min_rho``; an unreached seed counts at the budget, and an arm no seed of which
      reaches the target is *inconclusive*), ``all_of`` over the arms.
(S)   At every noise level the mean over t ≤ T of the estimate |ĝ_t| grows with p: for every
      pair of consecutive p, ``superior`` on the log ratio (unpaired: the p's noise streams
      are independent) by more than log ``min_ratio_s``; ``all_of`` over noise levels and
      pairs.  (Was one Spearman trend per noise level over 3 seeds, which a swap of two p's
      could pass.)
(B1)  UniBiO's test accuracy beats StocBiO's, TTSA's and MA-SOBA's at equal oracle budget
      (each at its tuned lower step): ``all_of`` of paired ``superior`` tests by more than
      ``min_effect_acc``, each guarded by the two methods' tuning.
(B2)  UniBiO's AUC > 0.9: ``within(0.9, ∞)`` on the per-seed AUCs at δ = ``b_floor``; the
      evidence lists the AUC at every δ of the sensitivity runs.

Verdict margins (preset fields, the same for every preset, not trial parameters):

- ``min_effect_grad = 1e-2``: a gap in ‖∇Φ‖ smaller than the claims' own 1e-2 target is below the
  accuracy they care about.
- ``min_effect_acc = 0.01``: one accuracy point (≈ 5 of the ~500 test digits) is the smallest
  gain reported as "beats".
- ``min_rho = 0.3``: a rank correlation below the conventional "moderate" 0.3 shows no growth
  with p.
- ``min_ratio_s = 1.1``: a mean |ĝ_t| 10 % above the next smaller p's is the smallest gap that
  separates two curves on the paper's figure (fixed in issue 21 before the part-S re-run).

Issue 21 changed the trials (keys changed: the runs are new): the shared grid ``a_lrs``
(0.1, 0.03, 0.01 → 0.003 … 3), UniBiO's decaying arm, ``s_seeds`` (3 → 5 quick, 10 full),
the part-B lower-step grid and the floor runs.  Trials are single-threaded CPU work;
``--device`` is ignored.
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
    common_seeds,
    downgrade,
    guard,
    superior,
    trend,
    tune,
    undecided,
    within,
)
from optzoo.report import figures as fg

SLUG = "unibio"
METHODS = ("unibio", "stocbio", "ttsa", "masoba")
# part A also runs UniBiO with a decaying step η_t = η/√(1 + t) (not in the paper; issue 21)
A_METHODS = ("unibio", "unibio-dec", "stocbio", "ttsa", "masoba")
UNIBIO_ARMS = ("unibio", "unibio-dec")
LABELS = {"unibio": "UniBiO", "unibio-dec": "UniBiO (η/√(1+t))", "stocbio": "StocBiO",
          "ttsa": "TTSA", "masoba": "MA-SOBA"}
B_INNER_LR = {"unibio": 2e-2, "stocbio": 2e-3, "ttsa": 2e-2, "masoba": 1e-2}  # official main.py
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
        a_lrs: grid of every method's upper step in part A (UniBiO's η, its decaying arm's
            η_0, the baselines' α): one grid, the same budget for all.
        a_every: outer steps between evaluations of ‖∇Φ‖ in part A.
        s_ps: orders p of the scalar synthetic.
        s_noises: lower-gradient noise stds of the scalar synthetic.
        s_steps: outer steps T of the scalar synthetic.
        s_seeds: seeds of the scalar synthetic (its trials are cheap and its orderings need
            power).
        b_budget: oracle calls per hyper-cleaning run.
        b_n_train, b_n_val: hyper-cleaning split sizes.
        b_refit_iters: L-BFGS iterations of the refitted classifier.
        b_inner_lrs: grid of every method's lower SGD step in part B (picked per method by
            the final validation loss, the upper objective: no test data in the pick).
        b_floors, b_rel_floors: UniBiO's D floors of the part-B sensitivity runs (absolute
            values; fractions of max D), at the official inner step 2e-2.
        b_floor: UniBiO's D floor of the part-B claims (absolute).
        min_effect_grad, min_effect_acc, min_rho, min_ratio_s: verdict margins (module
            docstring, "Verdict margins"); not trial parameters.
    """

    seeds: int = 3
    a_ps: tuple[int, ...] = (2, 4, 6)
    a_noise: float = 0.1
    a_budget: int = 20_000
    a_lrs: tuple[float, ...] = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
    a_every: int = 5
    s_ps: tuple[int, ...] = (2, 4, 6, 8)
    s_noises: tuple[float, ...] = (0.0, 0.01, 1.0, 10.0)
    s_steps: int = 500
    s_seeds: int = 5
    b_budget: int = 3_000
    b_n_train: int = 1000
    b_n_val: int = 300
    b_refit_iters: int = 100
    b_inner_lrs: tuple[float, ...] = (0.01, 0.05, 0.25, 1.0, 4.0)
    b_floors: tuple[float, ...] = (1e-6, 1e-3, 1e-1)
    b_rel_floors: tuple[float, ...] = (1e-1,)
    b_floor: float = 1e-6
    min_effect_grad: float = 1e-2
    min_effect_acc: float = 0.01
    min_rho: float = 0.3
    min_ratio_s: float = 1.1

    def validate(self) -> None:
        super().validate()
        for name in ("a_ps", "s_ps"):
            ps = getattr(self, name)
            if not ps or any(p not in SCRIPT_LR for p in ps):
                raise ConfigError(f"{name}: expected orders among {sorted(SCRIPT_LR)}, got {ps}")
        for name in ("a_lrs", "b_inner_lrs", "b_floors"):
            v = getattr(self, name)
            if not v or any(not 0 < x < math.inf for x in v):
                raise ConfigError(f"{name}: expected positive values, got {v}")
        if any(not 0 < x <= 1 for x in self.b_rel_floors):
            raise ConfigError(f"b_rel_floors: expected fractions in (0, 1], got "
                              f"{self.b_rel_floors}")
        if not 0 < self.b_floor < math.inf:
            raise ConfigError(f"b_floor: expected > 0, got {self.b_floor}")
        if self.s_seeds < 1:
            raise ConfigError(f"s_seeds: expected >= 1, got {self.s_seeds}")
        if not self.min_ratio_s >= 1:
            raise ConfigError(f"min_ratio_s: expected >= 1, got {self.min_ratio_s}")
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
                          s_noises=(0.0, 1.0), s_steps=40, s_seeds=2, b_budget=200,
                          b_n_train=300, b_n_val=100, b_refit_iters=10, b_inner_lrs=(0.05,),
                          b_floors=(1e-6,), b_rel_floors=(0.1,)),
    # quick: a_budget 20000 -> 10000 and b_refit_iters 100 -> 50 after a first timing (257 s of
    # CPU, over the ~120 s on 2 cores); the class defaults stay the documented setting
    "quick": UniBiOConfig(a_budget=10_000, b_refit_iters=50),
    "full": UniBiOConfig(seeds=5, s_seeds=10, a_budget=200_000, b_budget=10_000),
}


def trials(cfg: UniBiOConfig) -> list[Trial]:
    out = []
    for p in cfg.a_ps:
        common = {"part": "A", "p": p, "noise": cfg.a_noise, "budget": cfg.a_budget,
                  "every": cfg.a_every}
        for s in range(cfg.seeds):
            out += [Trial(m, f"A-p{p}", s, {**common, "lr": lr})
                    for m in A_METHODS for lr in cfg.a_lrs]
    out += [Trial("unibio", f"S-p{p}-n{noise:g}", s,
                  {"part": "S", "p": p, "noise": noise, "steps": cfg.s_steps})
            for p in cfg.s_ps for noise in cfg.s_noises for s in range(cfg.s_seeds)]
    b = {"part": "B", "budget": cfg.b_budget, "n_train": cfg.b_n_train, "n_val": cfg.b_n_val,
         "refit_iters": cfg.b_refit_iters}
    out += [Trial(m, "digits", s, {**b, "inner_lr": lr, "floor": cfg.b_floor,
                                   "relative_floor": False})
            for m in METHODS for lr in cfg.b_inner_lrs for s in range(cfg.seeds)]
    floors = [(f, False) for f in cfg.b_floors] + [(f, True) for f in cfg.b_rel_floors]
    out += [Trial("unibio", "digits-floor", s, {**b, "inner_lr": B_INNER_LR["unibio"],
                                                "floor": f, "relative_floor": rel})
            for f, rel in floors for s in range(cfg.seeds)]
    return out


# -- one trial ---------------------------------------------------------------------------------

def _solver_a(method: str, oracle: Oracle, p: int, lr: float):
    if method in UNIBIO_ARMS:
        return UniBiO(oracle, p=p, lr=lr, beta=0.9, refresh_every=2, lower_budget=100,
                      first_epoch=5, radius=1.0, inner_lr=1.0, neumann_eta=0.5, terms=5,
                      schedule="constant" if method == "unibio" else "inv_sqrt")
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
    def record(s) -> dict:
        # the exact |∇Φ(x_t)| and the estimate |ĝ_t| of the step that led to x_t (what the
        # script plots: its "hypergradient norm" is the norm of the noisy estimate)
        row = {"grad": float(problem.hypergradient(s.x).abs())}
        if s.estimate is not None:
            row["est"] = float(s.estimate.abs().sum())
        return row

    hist = solver.run(steps=steps, every=1, callback=record)
    grads = np.array([r["grad"] for r in hist if "grad" in r])
    ests = np.array([r["est"] for r in hist if "est" in r])
    out = {"mean_grad": float(grads[1:].mean()), "final_grad": float(grads[-1]),
           "min_grad": float(grads.min()), "mean_est": float(ests.mean()),
           "final_est": float(ests[-1]), "calls": oracle.total,
           "diverged": bool(hist[-1].get("diverged", False))}
    for j, t in enumerate(np.linspace(0, len(grads) - 1, CHECKPOINTS + 1).round().astype(int)):
        out[f"curve_{j:02d}"] = float(grads[t])
    for j, t in enumerate(np.linspace(0, len(ests) - 1, CHECKPOINTS + 1).round().astype(int)):
        out[f"est_curve_{j:02d}"] = float(ests[t])
    return out


def _solver_b(method: str, oracle: Oracle, inner_lr: float, floor: float = 1e-6,
              relative_floor: bool = False):
    """Part B solvers: the official main.py constants except the lower step ``inner_lr``
    (tuned on ``b_inner_lrs`` for every method alike) and UniBiO's D floor."""
    if method == "unibio":
        return UniBiO(oracle, p=3.0, lr=5e-2, beta=0.9, refresh_every=2, lower="sgd",
                      inner_lr=inner_lr, lower_steps=3, neumann_eta=1e-2, terms=3, floor=floor,
                      relative_floor=relative_floor)
    if method == "stocbio":  # terms = 4: three HVPs as in the code's Q = 3
        return StocBiO(oracle, lr=1e-2, inner_lr=inner_lr, inner_steps=3, neumann_eta=1e-2,
                       terms=4)
    if method == "ttsa":
        return TTSA(oracle, lr=1e-3, inner_lr=inner_lr, neumann_eta=1e-2, terms=3)
    return MASOBA(oracle, lr=1e-2, inner_lr=inner_lr, z_lr=1e-2, beta=0.9)


def _run_b(trial: Trial) -> dict:
    q = trial.params
    problem = DigitsHyperCleaning(n_train=int(q["n_train"]), n_val=int(q["n_val"]), flip=0.4,
                                  p=3.0, reg=1e-3, seed=trial.seed)
    oracle = Oracle(problem, batch_size=128,
                    generator=torch.Generator().manual_seed(3000 + trial.seed))
    solver = _solver_b(trial.method, oracle, float(q["inner_lr"]), float(q["floor"]),
                       bool(q["relative_floor"]))
    hist = solver.run(budget=int(q["budget"]))
    diverged = bool(hist[-1].get("diverged", False))
    refit = problem.refit(solver.x, iters=int(q["refit_iters"])) if not diverged else None
    val = float(problem.f(solver.x, solver.y)) if not diverged else math.inf
    return {"val_loss": val if math.isfinite(val) else None,
            "test_acc": problem.test_accuracy(solver.y) if not diverged else None,
            "refit_test_acc": problem.test_accuracy(refit) if refit is not None else None,
            "auc": problem.cleaning_auc(solver.x) if not diverged else None,
            "steps": solver.steps, "calls": oracle.total, "diverged": diverged}


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
    ∞) picked by :func:`tune` on ``a_lrs`` — the same grid for every method, UniBiO's two arms
    included — its results, and the :class:`Tuned` record."""
    grids: dict[tuple[str, int], dict[float, list[Result]]] = {}
    for (m, p, lr, _), rs in _cells(results, "A").items():
        grids.setdefault((m, p), {})[lr] = rs
    best, tuned = {}, {}
    for (m, p), grid in grids.items():
        name = f"{LABELS[m]} {'η' if m in UNIBIO_ARMS else 'α'} (p={p})"
        t = tune(name, {lr: [_score(r) for r in rs] for lr, rs in grid.items()})
        best[(m, p)], tuned[(m, p)] = (t.best, grid[t.best]), t
    return best, tuned


def _b_cells(results: list[Result]) -> dict[tuple[str, float], list[Result]]:
    """Part-B claim runs by (method, inner lr), seeds sorted."""
    out: dict[tuple[str, float], list[Result]] = {}
    for r in sorted(results, key=lambda r: r.trial.seed):
        if r.trial.params["part"] == "B" and r.trial.problem == "digits":
            out.setdefault((r.trial.method, float(r.trial.params["inner_lr"])), []).append(r)
    return out


def _best_b(results: list[Result]) -> tuple[dict[str, tuple[float, list[Result]]],
                                            dict[str, Tuned]]:
    """Per method: the lower step of ``b_inner_lrs`` with the lowest mean final validation
    loss (the upper objective; a diverged run counts as ∞), by :func:`tune`."""
    grids: dict[str, dict[float, list[Result]]] = {}
    for (m, lr), rs in _b_cells(results).items():
        grids.setdefault(m, {})[lr] = rs
    best, tuned = {}, {}
    for m, grid in grids.items():
        t = tune(f"{LABELS[m]} lower step (B)", {
            lr: [math.inf if r.metrics["val_loss"] is None else float(r.metrics["val_loss"])
                 for r in rs] for lr, rs in grid.items()})
        best[m], tuned[m] = (t.best, grid[t.best]), t
    return best, tuned


def _floor_cells(results: list[Result]) -> dict[tuple[float, bool], list[Result]]:
    out: dict[tuple[float, bool], list[Result]] = {}
    for r in sorted(results, key=lambda r: r.trial.seed):
        if r.trial.problem == "digits-floor":
            q = r.trial.params
            out.setdefault((float(q["floor"]), bool(q["relative_floor"])), []).append(r)
    return out


def _floor_name(floor: float, relative: bool) -> str:
    return f"{floor:g}·max D" if relative else f"{floor:g}"


def summarize(results: list[Result], cfg: UniBiOConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    tables, figures, claims = [], [], []
    best, tuned = _best_a(results)
    ps = sorted({p for _, p in best})
    rows = []
    for p in ps:
        for m in A_METHODS:
            if (m, p) not in best:
                continue
            lr, rs = best[(m, p)]
            reached = sum(r.metrics["calls_to_target"] is not None for r in rs)
            rows.append([p, LABELS[m], f"{lr:g}" + (" (edge)" if tuned[(m, p)].on_edge else ""),
                         _fmt(_vals(rs, "min_grad")), _fmt(_vals(rs, "mean_grad_last_half")),
                         _fmt(_vals(rs, "calls_to_target")), f"{reached}/{len(rs)}",
                         sum(bool(r.metrics["diverged"]) for r in rs), len(rs)])
    tables.append(Table(
        title=f"A. Vector synthetic, noise σ = {cfg.a_noise:g}, {cfg.a_budget} oracle calls: "
              "‖∇Φ‖ (mean ± 95% CI over seeds; every method at its best step of the grid "
              f"{list(cfg.a_lrs)})",
        columns=["p", "method", "step", "min ‖∇Φ‖", "mean ‖∇Φ‖ (last half)",
                 f"calls to ‖∇Φ‖ ≤ {TARGET:g}", "reached", "diverged", "n"], rows=rows))
    grid_rows = [[p, LABELS[m], f"{lr:g}", _fmt(_vals(rs, "min_grad")),
                  sum(bool(r.metrics["diverged"]) for r in rs)]
                 for (m, p, lr, _), rs in sorted(_cells(results, "A").items(), key=lambda kv: (
                     kv[0][1], A_METHODS.index(kv[0][0]), kv[0][2]))]
    tables.append(Table(title="A. The whole step-size grid (min ‖∇Φ‖, mean ± 95% CI)",
                        columns=["p", "method", "step", "min ‖∇Φ‖", "diverged"],
                        rows=grid_rows))
    scal = _cells(results, "S")
    tables.append(Table(
        title=f"S. Scalar synthetic (paper §6), UniBiO, T = {cfg.s_steps}: mean over t of the "
              "estimate |ĝ_t| (the paper's plotted quantity) and of the exact |∇Φ(x_t)| (mean ± "
              "95% CI over seeds)",
        columns=["p", "lower noise std", "η", "mean |ĝ_t|", "mean |∇Φ(x_t)|", "final |∇Φ|",
                 "min |∇Φ|", "oracle calls", "n"],
        rows=[[p, f"{noise:g}", f"{SCRIPT_LR[p]:g}", _fmt(_vals(rs, "mean_est")),
               _fmt(_vals(rs, "mean_grad")), _fmt(_vals(rs, "final_grad")),
               _fmt(_vals(rs, "min_grad")), _fmt(_vals(rs, "calls"), 5), len(rs)]
              for (_, p, _, noise), rs in sorted(scal.items(), key=lambda kv: (kv[0][3],
                                                                              kv[0][1]))]))
    best_b, tuned_b = _best_b(results)
    if best_b:
        tables.append(Table(
            title=f"B. Digits hyper-cleaning (40% flipped labels, ℓ_3 lower regulariser), "
                  f"{cfg.b_budget} oracle calls, each method at its best lower step of "
                  f"{list(cfg.b_inner_lrs)} by validation loss; UniBiO's D floor "
                  f"{cfg.b_floor:g} (mean ± 95% CI over seeds)",
            columns=["method", "lower step", "val loss", "test acc (own y)",
                     "test acc (refitted at λ)", "AUC noisy/clean", "outer steps", "n"],
            rows=[[LABELS[m], f"{lr:g}" + (" (edge)" if tuned_b[m].on_edge else ""),
                   _fmt(_vals(rs, "val_loss")), _fmt(_vals(rs, "test_acc")),
                   _fmt(_vals(rs, "refit_test_acc")), _fmt(_vals(rs, "auc")),
                   _fmt(_vals(rs, "steps"), 5), len(rs)]
                  for m, (lr, rs) in best_b.items()]))
        tables.append(Table(
            title="B. The whole lower-step grid (mean ± 95% CI over seeds)",
            columns=["method", "lower step", "val loss", "test acc (own y)", "AUC", "diverged"],
            rows=[[LABELS[m], f"{lr:g}", _fmt(_vals(rs, "val_loss")),
                   _fmt(_vals(rs, "test_acc")), _fmt(_vals(rs, "auc")),
                   sum(bool(r.metrics["diverged"]) for r in rs)]
                  for (m, lr), rs in sorted(_b_cells(results).items(), key=lambda kv: (
                      METHODS.index(kv[0][0]), kv[0][1]))]))
    floors = _floor_cells(results)
    if floors:
        tables.append(Table(
            title=f"B. Sensitivity of UniBiO to the floor δ of D = max((p−1)|y|^(p−2), δ) at "
                  f"the official lower step {B_INNER_LR['unibio']:g} (mean ± 95% CI over seeds)",
            columns=["δ", "val loss", "test acc (own y)", "AUC noisy/clean", "n"],
            rows=[[_floor_name(f, rel), _fmt(_vals(rs, "val_loss")),
                   _fmt(_vals(rs, "test_acc")), _fmt(_vals(rs, "auc")), len(rs)]
                  for (f, rel), rs in sorted(floors.items(), key=lambda kv: (kv[0][1],
                                                                             kv[0][0]))]))
    if best:
        figures.append(_plot_a(best, ps, cfg, outdir / "synthetic_vector.png"))
        claims += _claims_a(best, tuned, ps, cfg)
    if scal:
        figures.append(_plot_scalar(scal, cfg, outdir / "synthetic_scalar.png"))
        claims.append(_claim_scalar(scal, cfg))
    if best_b:
        claims += _claims_b(best_b, tuned_b, floors, cfg)
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
    """(A1) per UniBiO arm, (A2) StocBiO above both arms, (A3) calls growing with p per arm;
    every comparison guarded by the tuning of every method in it (one grid for all)."""
    arms = [a for a in UNIBIO_ARMS if any((a, p) in best for p in ps)]
    mins = {a: {p: by_seed(best[(a, p)][1], "min_grad") for p in ps if (a, p) in best}
            for a in arms}
    claims = []
    for a in arms:
        cells = {f"p={p}": within(list(v.values()), -math.inf, TARGET)
                 for p, v in mins[a].items()}
        tag = "(A1)" if a == "unibio" else "(A1′)"
        how = ("at a constant η (the paper's)" if a == "unibio"
               else "with the decaying step η_t = η/√(1 + t) (not in the paper)")
        claims.append(Claim(
            text=f"{tag} UniBiO {how}, η tuned on the grid every method gets, reaches ‖∇Φ‖ ≤ "
                 f"{TARGET:g} for every p (minimum over the run; CI of the seeds' mean) under "
                 "noisy oracles.",
            evidence="; ".join(f"p={p}: η = {best[(a, p)][0]:g}, min ‖∇Φ‖ "
                               f"{_fmt(list(v.values()))} (max over seeds {max(v.values()):.3g})"
                               for p, v in mins[a].items()),
            verdict=guard(all_of(cells), *(tuned[(a, p)] for p in mins[a]))))
    high = [p for p in ps if p >= 4 and ("stocbio", p) in best]
    parts, cells = [], {}
    for p in high:
        lr, rs = best[("stocbio", p)]
        div = sum(bool(r.metrics["diverged"]) for r in rs)
        s_min = by_seed(rs, "min_grad")
        stall = within(list(s_min.values()), TARGET, math.inf)
        parts.append(f"p={p}: StocBiO (α={lr:g}) min ‖∇Φ‖ {_fmt(list(s_min.values()))}, "
                     f"{div} diverged")
        for a in arms:
            if p not in mins[a]:
                continue
            worse = superior(s_min, mins[a][p], min_effect=cfg.min_effect_grad,
                             direction="greater")
            cells[f"p={p} vs {LABELS[a]}"] = guard(
                all_of({"stalls": stall, "above UniBiO": worse}), tuned[("stocbio", p)],
                tuned[(a, p)])
            parts.append(f"{LABELS[a]} (η={best[(a, p)][0]:g}) {_fmt(list(mins[a][p].values()))};"
                         f" StocBiO − {LABELS[a]} {worse.describe()}")
    a2v = all_of(cells) if cells else undecided("no p ≥ 4 in this preset")
    claims.append(Claim(
        text="(A2) StocBiO (plain Neumann series, unnormalised SGD step; best α of the grid) "
             f"stalls for p ≥ 4: its min ‖∇Φ‖ stays above {TARGET:g} and above each UniBiO "
             f"arm's by more than {cfg.min_effect_grad:g} (paired by seed).",
        evidence="; ".join(parts) if parts else "no p ≥ 4 in this preset", verdict=a2v))
    cells, parts = {}, []
    for a in arms:
        uni = {p: best[(a, p)][1] for p in ps if (a, p) in best}
        budget = {p: float(rs[0].trial.params["budget"]) for p, rs in uni.items()}
        calls = {p: {r.trial.seed: (float(r.metrics["calls_to_target"])
                                    if r.metrics["calls_to_target"] is not None else budget[p])
                     for r in rs} for p, rs in uni.items()}
        reached = {p: sum(r.metrics["calls_to_target"] is not None for r in rs)
                   for p, rs in uni.items()}
        v = guard(_increasing(calls, cfg.min_rho), *(tuned[(a, p)] for p in uni))
        if not any(reached.values()):
            v = downgrade(v, f"no seed reaches ‖∇Φ‖ ≤ {TARGET:g} at any p within the budget: "
                             "the calls to the target are not observed")
        cells[LABELS[a]] = v
        parts.append(f"{LABELS[a]}: " + ", ".join(
            f"p={p}: {_fmt(list(c.values()))} calls, {reached[p]}/{len(c)} reached"
            for p, c in calls.items()))
    claims.append(Claim(
        text=f"(A3) UniBiO's oracle calls to reach ‖∇Φ‖ ≤ {TARGET:g} grow with p, for each arm "
             f"(Spearman ρ over seeds beyond {cfg.min_rho:g}; a seed that never reaches it "
             "counts at the budget).",
        evidence="; ".join(parts), verdict=all_of(cells)))
    return claims


def _claim_scalar(scal, cfg: UniBiOConfig) -> Claim:
    """(S) at every noise level and for every pair of consecutive p, the mean estimate |ĝ_t| of
    the larger p exceeds the smaller's by more than the factor ``min_ratio_s`` (unpaired:
    the noise streams of different p are independent)."""
    by_noise: dict[float, dict[int, list[Result]]] = {}
    for (_, p, _, noise), rs in scal.items():
        by_noise.setdefault(noise, {})[p] = rs
    cells, parts = {}, []
    for noise, d in sorted(by_noise.items()):
        order = sorted(d)
        for lo, hi in zip(order, order[1:], strict=False):
            v = superior(_vals(d[hi], "mean_est"), _vals(d[lo], "mean_est"),
                         min_effect=math.log(cfg.min_ratio_s), direction="greater",
                         paired=False, log_ratio=True)
            cells[f"std {noise:g}: p={hi} > p={lo}"] = v
        parts.append(f"std {noise:g}: " + ", ".join(
            f"p={p}: {_fmt(_vals(d[p], 'mean_est'))}" for p in order))
    return Claim(
        text="(S) Paper's scalar synthetic: the hypergradient norm decreases more slowly for "
             "larger p at every noise level — the mean over t ≤ T of the estimate |ĝ_t| (the "
             f"quantity the paper plots) of each p exceeds that of the next smaller p by more "
             f"than a factor {cfg.min_ratio_s:g} (95% CI of the log ratio, unpaired).",
        evidence="; ".join(parts), verdict=all_of(cells) if cells else undecided(
            "fewer than two p in this preset"))


def _claims_b(best_b, tuned_b, floors, cfg: UniBiOConfig) -> list[Claim]:
    if "unibio" not in best_b:
        return []
    acc = {m: by_seed(rs, "test_acc") for m, (_, rs) in best_b.items()}
    auc = {m: by_seed(rs, "auc") for m, (_, rs) in best_b.items()}
    others = [m for m in acc if m != "unibio"]
    cells = {}
    for m in others:
        a, b = common_seeds(acc["unibio"], acc[m])
        v = (superior(a, b, min_effect=cfg.min_effect_acc, direction="greater") if a
             else undecided("no seed with a finite accuracy on both sides"))
        cells[f"vs {LABELS[m]}"] = guard(v, tuned_b["unibio"], tuned_b[m])
    b1 = Claim(
        text="(B1) Hyper-cleaning: UniBiO's test accuracy beats StocBiO's, TTSA's and MA-SOBA's "
             f"at equal oracle budget by more than {cfg.min_effect_acc * 100:g} points (paired "
             "by seed; every method's lower step tuned on the same grid by validation loss).",
        evidence=", ".join(f"{LABELS[m]} (lower step {best_b[m][0]:g}) "
                           f"{_fmt(list(v.values()))}" for m, v in acc.items())
        + "; " + "; ".join(f"UniBiO − {c[3:]}: {v.describe()}" for c, v in cells.items()),
        verdict=all_of(cells) if cells else undecided("no baseline in part B"))
    vals = list(auc["unibio"].values())
    b2v = guard(within(vals, 0.9, math.inf) if vals else undecided("no finite AUC"),
                tuned_b["unibio"])
    sens = "; ".join(f"δ = {_floor_name(f, rel)}: AUC {_fmt(_vals(rs, 'auc'))}"
                     for (f, rel), rs in sorted(floors.items(), key=lambda kv: (kv[0][1],
                                                                                kv[0][0])))
    b2 = Claim(
        text="(B2) UniBiO's learned weights separate flipped from clean samples: AUC > 0.9 (CI "
             f"of the seeds' mean; D floor δ = {cfg.b_floor:g}).",
        evidence=", ".join(f"{LABELS[m]} AUC {_fmt(list(v.values()))}" for m, v in auc.items())
        + f"; UniBiO {b2v.describe()}"
        + (f". Sensitivity to δ (lower step {B_INNER_LR['unibio']:g}): {sens}" if sens else ""),
        verdict=b2v)
    return [b1, b2]


def _curves(rs: list[Result], prefix: str = "curve_") -> list[list[float]]:
    """One curve per seed (the figure takes the mean and its 95 % CI over seeds)."""
    return [[float(r.metrics[f"{prefix}{j:02d}"]) for j in range(CHECKPOINTS + 1)] for r in rs]


def _plot_a(best, ps, cfg, path: Path) -> Figure:
    fig, axes = fg.grid(len(ps), panel=(4.6, 3.8))
    budgets = np.linspace(0, cfg.a_budget, CHECKPOINTS + 1)
    for ax, p in zip(axes, ps, strict=True):
        curves = {f"{LABELS[m]} (η={best[(m, p)][0]:g})": _curves(best[(m, p)][1])
                  for m in A_METHODS if (m, p) in best}
        fg.curves_panel(ax, curves, x=budgets, ylog=True, title=f"p = {p}",
                        xlabel="oracle calls", ylabel="min ‖∇Φ‖ so far")
        ax.axhline(TARGET, color="0.4", ls="--", lw=0.8)  # the target
    return fg.save(fig, path, "A. Vector synthetic: running minimum of ‖∇Φ‖ vs oracle calls "
                   f"(mean ± 95 % CI over seeds; dashed: the {TARGET:g} target)")


def _plot_scalar(scal, cfg, path: Path) -> Figure:
    noises = sorted({k[3] for k in scal})
    fig, axes = fg.grid(2 * len(noises), ncols=len(noises), panel=(4.6, 3.5))
    ts = np.linspace(0, cfg.s_steps, CHECKPOINTS + 1)
    for col, noise in enumerate(noises):
        rows = [(p, rs) for (_, p, _, nz), rs in sorted(scal.items()) if nz == noise]
        # log scale: D⁻¹ (floor 1e-6) turns noise into spikes of 10³–10⁴
        fg.curves_panel(axes[col], {f"p = {p}": _curves(rs, "est_curve_") for p, rs in rows},
                        x=ts, ylog=True, title=f"lower noise std {noise:g}",
                        xlabel="iteration", ylabel="estimate |ĝ_t| (paper's axis)")
        fg.curves_panel(axes[len(noises) + col], {f"p = {p}": _curves(rs) for p, rs in rows},
                        x=ts, title=f"lower noise std {noise:g}", xlabel="iteration",
                        ylabel="exact |∇Φ(x_t)|")
    return fg.save(fig, path, "S. Paper's scalar synthetic through the HVP path: the "
                   "hyper-gradient estimate |ĝ_t| the paper plots (top) and the exact |∇Φ(x_t)| "
                   "(bottom) vs iteration (mean ± 95 % CI over seeds)")


def _notes(cfg: UniBiOConfig) -> list[str]:
    return [
        "UniBiO's estimator uses (I − η_N D⁻¹∇²g), D = max((p−1)|y|^{p−2}, δ), and keeps the "
        "q = 0 Neumann term; the official code applies the transpose (I − η_N ∇²g D⁻¹), drops "
        f"the q = 0 term and has no floor (see optzoo.bilevel.unibio). δ = 1e-6 in A and S, "
        f"{cfg.b_floor:g} in B's claims; B's sensitivity table reruns UniBiO at δ ∈ "
        f"{list(cfg.b_floors)} and {list(cfg.b_rel_floors)}·max D.",
        "Part A is a problem designed for this reproduction (not in the paper): Φ(x) = "
        "½‖Bx − b‖² with 5 of 20 lower coordinates at the degenerate point y = 0 at the "
        "optimum; b and x0 have entries of std 0.5 so that |Bx| ≲ 1 as |sin x| ≤ 1 in the "
        "paper's scalar problem. UniBiO's η_N = 0.5, Q = 5 on the synthetic problems are "
        "INFERRED (the script uses the closed-form ∇Φ); its other constants are the script's.",
        f"Part A tuning disclosed: every method's upper step (UniBiO's η and its decaying arm's "
        f"η_0 included) picked per (method, p) from {list(cfg.a_lrs)} by the mean min ‖∇Φ‖ "
        "over the same seeds that are reported; lower steps (0.1) and Neumann settings "
        "(η_N = 0.1, 10 terms; UniBiO's 0.5, 5) fixed for all. The decaying arm η_t = "
        "η_0/√(1 + t) is not in the paper. MA-SOBA z starts at 0 and is not projected.",
        "The paper's theory parameters (1 − β = Θ(ε²), η = Θ(ε^{3p−3})) are not used; with the "
        "script's β = 0.9 and constant η the normalized iterate keeps moving by η per step, so "
        "under oracle noise it hovers at a noise-dependent ‖∇Φ‖ level.",
        "Part S: noise levels are the script's noise_rate used as a standard deviation; the "
        "claim and the top figure use the estimate |ĝ_t| the script plots (there the closed-"
        "form ∇Φ plus N(0, 0.01²); here the HVP-path estimate), the exact |∇Φ(x_t)| is shown "
        f"beside it; {cfg.s_seeds} seeds; Epoch-SGD is warm-started at the current y (the "
        "script restarts from N(0, 1)). With lower noise the HVP-path estimate has spikes of "
        "10³–10⁴ where y passes near 0 (D⁻¹ at the 1e-6 floor): its mean over t mostly counts "
        "those spikes, which grow with p.",
        "Part B: linear soft-max model on scikit-learn digits (paper: 3-layer RNN on SNLI, flip "
        "0.1, p = 3); 40% flips; lower 1e-3·Σ|W|^3 (code: 1e-4); constants of each method from "
        "the official main.py (tuned there for SNLI) except the lower SGD step, tuned for "
        f"every method on {list(cfg.b_inner_lrs)} by the final validation loss (StocBiO's "
        "official 2e-3 leaves its classifier near chance at this budget). The cross term is "
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
