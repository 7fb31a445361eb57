"""Reproduction ``resurgence``: Bu, "Globally Aware Optimization with Resurgence" (SURGE; ICLR
2026, OpenReview dhnyoea2Qj, arXiv 2509.01329).  No official code.

The paper's experiments (an FC (12, 10, 8) regression, MNIST MLP, a small Transformer) report
curves only; this reproduction runs the brief's small-scale checks (1), (2) (the 1-D task only)
and (3):

1. **Target recovery, local route** (textbook resurgence, :mod:`optzoo.optim.resurgence`).  For the
   tilted double well ``L(θ) = (θ² − 1)² + cθ`` (``c`` drawn per seed in ``[0.1, 0.5]``) the
   Laplace series around each minimum (``N`` coefficients, mpmath at ``dps`` digits) is Borel–Padé
   transformed ([N/2, N/2]); the nearest real pole on each half-axis estimates ``L_k − L_c``.
   Claims: the barrier ``L_max − L_c`` within 1 % from both minima; a negative singularity at
   ``L_low − L_c`` when expanding at the higher minimum.
2. **Target recovery, the paper's global route** (§3.1 steps 1–3): ``Z(g)`` by quadrature on
   ``g ∈ [0.005, 0.05]`` (``n_g`` points) for the well shifted so that ``L_min = 0``, weighted
   least-squares fit of ``n_coeffs`` coefficients (``w = 1/(g + 1e-3)``), ``b_n = a_n/n!``,
   threshold scan ``|Σ b_n ζⁿ| > τ`` with ``τ = tau_factor·|b_0|`` on ``ζ ∈ (0, 3]``.  Claim:
   every nonzero critical value (barrier, higher minimum) lies within 5 % of a detected ζ.
3. **Separable multi-well optimization**: ``f(θ) = Σ_i (θ_i² − 1)² + c_i θ_i + K`` in ``d = 10``,
   ``|c_i| ∈ [0.2, 0.6]`` with random signs, ``K`` set so that ``f* = 1`` (positive loss, as the
   paper's MSE / cross-entropy); start in the worse well of every coordinate
   (``θ_i = sign(c_i) + 0.05·noise``).  Equal budgets of ``budget`` gradient calls.  Methods: GD,
   Adam, GD with a cosine schedule, SURGE-wrapped GD with targets from the global route
   (``surge``) and with the exact critical values (``surge_exact``, isolating the rule from the
   target estimate), Polyak steps with the true ``f*`` (oracle upper bound), and random restarts
   (``restarts`` runs of GD from ``U[−1.5, 1.5]^d``, best final value kept).  Each method has a
   step grid fixed in the preset -- SURGE's ``lrs × lams``, and for each baseline in a claim a
   *matched* grid of as many values over SURGE's effective lr range (:func:`_matched_grid`);
   the grid point with the best mean success over seeds is reported (the brief's "lr tuned per
   method").  Success: every coordinate ends in its global
   well (``sign θ_i = −sign c_i``) and ``f − f* < 1e-3``.

4. **Paper task replica** (brief step (2), trial kind ``fit1d``): an FC net 1 → 12 → 10 → 8 → 1
   (the paper's hidden widths; tanh, a choice — the activation was not retrieved) regresses
   ``f(x) = sin 2x + 0.5 cos 5x + 0.3 sin 10x + 0.1x²`` on ``fit_n`` equally spaced ``x`` in
   ``[−π, π]`` (the paper's domain was not retrieved) with the MSE, ``fit_steps`` mini-batch
   steps (batch ``fit_batch``, the same batch order and initialisation — PyTorch's ``nn.Linear``
   default — for every method at a seed).  The analysis phase runs once per seed at
   initialisation: :func:`~optzoo.optim.resurgence.variational_log_partition` on ``vi_n_g``
   couplings in ``[0.005, 0.05]`` (mean-field Gaussian sampler, prior
   ``(vi_weight_decay/2)‖θ‖²`` in the analysis only), then
   :func:`~optzoo.optim.resurgence.targets_from_log_partition` (targets ``ζ ∈ (0, L_0)``).
   Methods: SGD, SURGE-SGD, Adam, SURGE-Adam, SURGE-SGD with random targets (as many as the
   analysis found, uniform in ``(0, L_0)``; the paper's App. E ablation) and SURGE-SGD with the
   reviewer's single target ``−g log Z(g_min)``.  SURGE variants are tuned on ``lr × λ``, the
   bare SGD / Adam on a matched lr grid of the same size spanning SURGE's effective lr range
   ``[min lr, max lr·(1 + max λ)]`` (issue 20: the old 3-value grids stopped at the bare
   optimizers' best values, 0.3 and 0.01, while SURGE multiplied them by a_t = 1.13-1.3); the
   grid point with the lowest mean final loss over the same seeds is reported.  Claims,
   fixed before the runs: (2a) SURGE-SGD's final training loss ≥ 15 % below SGD's; (2b) the same
   for Adam; (2c) random targets end higher than the analysis targets.  The digits MLP (the
   brief's MNIST stand-in) is not run (CPU budget).

Deviations.  The paper's targets in high dimension come from a variational estimate of
``log Z``; here the separable objective is analysed per coordinate (1-D, quadrature) and the
target set is every sum of per-coordinate estimates (``f`` is a sum, so its critical values are
sums of per-coordinate critical values); this is exact for the ``surge_exact`` variant.  Claims:
SURGE reaches the global minimum more often than GD, Adam and the cosine schedule, and its final
gap is ≥ 15 % lower than GD's (the paper's headline "15–30 % improvement").

Verdicts (issue 18).  Every claim is decided by a named test of
:mod:`optzoo.experiment.verdicts`; comparisons are paired by seed (the trials of a seed share
the instance, the initialisation and the batch order).  Every grid pick goes through ``tune``
(one record per grid, plus one per axis of a 2-D (lr, λ) grid so that an edge of either axis
is seen) and every tuned comparison through ``guard``: a best value on its grid's edge, or a
method tuned on more grid points than its baseline, makes the comparison *inconclusive*.
Since issue 20 the baselines' grids are matched to SURGE's (the same number of points, over
SURGE's effective lr range), so only a grid edge can still undermine a comparison; the grids
were widened until the picks were interior: one more lr per SURGE grid, and
λ ∈ {0, 0.25, 1, 4, 16} -- a first widening to {0.25, 1, 4} left SURGE-SGD's best λ on the
lower and SURGE-Adam's on the upper end.  λ = 0 (SURGE = its base optimizer, the floor
a_t ≥ 1 of Eq. 34) is a hard limit, not an edge: a best λ of 0 says SURGE adds nothing.  The
edge flag of a 2-D (λ, lr) grid is that of its axes through the best point.  Rules that
changed (old → new):

* (1a), (1a'), (1b): ``max(errors) < tol`` → ``bound_holds`` (deterministic, unchanged).
* (3) success: "mean success of SURGE > each baseline's" (a tie at 0 was not held, but a
  one-run difference passed) → paired ``superior`` with ``min_effect_success`` per baseline,
  ``all_of``, guarded.
* (3) gap and (2a)/(2b): "ratio of means ≤ 0.85" → paired log-ratio ``superior`` with
  ``min_effect = −log(1 − min_rel_gain)``, guarded.  **(2b) is the defect named in issue 18**:
  Adam's best lr sat on its grid's largest value while SURGE multiplies the lr by
  ``a_t ≥ 1``; the ``guard`` now makes that comparison inconclusive (grid edge), and the same
  guard applies to every tuned comparison here.
* a SURGE comparison whose best SURGE point does not amplify (λ = 0, or a mean a_t of exactly
  1 in every seed) is ``not_acting`` (issue 20: after widening, SURGE-SGD's best λ is 0).
* (2c): "mean random > mean analysis" (any difference passed) → paired log-ratio ``superior``
  with the same ``min_rel_gain``, guarded; and ``not_acting`` when the analysis targets equal
  the loss-free control's in every seed (the targets then carry no information from the
  network's loss, so the ablation cannot show that the analysis matters): *inconclusive*
  whatever the losses say.

Verdict margins (preset fields, the same in every preset, fixed before results were seen):

* ``barrier_tol = 0.01``, ``global_tol = 0.05``: the brief's 1 % and 5 % (unchanged).
* ``min_rel_gain = 0.15``: the paper's headline "15–30 % lower loss", its smallest value.
* ``min_effect_success = 0.2``: a success-rate difference counts from 20 points (one run in
  five at the quick preset's seeds).
* ``gap_floor = 1e-9``: gaps are floored there before the log ratio (a run that reached
  ``f*`` to rounding has gap ≈ 0), far below the 1e-3 success level.

Read top to bottom: config and presets, the four trial kinds, summary with claims.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, replace
from pathlib import Path

import mpmath
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
    by_seed,
    guard,
    not_acting,
    superior,
    tune,
)
from optzoo.optim.resurgence import (
    borel_pade_singularities,
    critical_values,
    fit_coefficients,
    laplace_min_estimate,
    local_series,
    partition_function,
    targets_from_log_partition,
    taylor_at,
    threshold_singularities,
    variational_log_partition,
)
from optzoo.optim.surge import SurgeLR
from optzoo.report.figures import category_panel, curves_panel, grid, save

SLUG = "resurgence"
OPT_METHODS = ("gd", "adam", "cosine", "surge", "surge_exact", "polyak_oracle", "restarts")
FIT_METHODS = ("sgd", "surge_sgd", "adam", "surge_adam", "surge_random", "surge_reviewer")
FIT_LABEL = {"sgd": "SGD", "surge_sgd": "SURGE-SGD (analysis targets)", "adam": "Adam",
             "surge_adam": "SURGE-Adam (analysis targets)",
             "surge_random": "SURGE-SGD (random targets, App. E ablation)",
             "surge_reviewer": "SURGE-SGD (reviewer target −g log Z(g_min))"}
FIT_CURVE = 20  # checkpoints of the full training loss per run (plus the start)
LABEL = {"gd": "GD", "adam": "Adam", "cosine": "GD + cosine schedule",
         "surge": "SURGE-GD (global-route targets)", "surge_exact": "SURGE-GD (exact targets)",
         "polyak_oracle": "Polyak, true f* (oracle)", "restarts": "GD, random restarts"}


# -- configuration ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ResurgenceConfig(Preset):
    """Settings of the SURGE reproduction.

    Args:
        seeds: seeds per cell (tilt of the 1-D well / tilts and start of the multi-well).
        n_local: coefficients of the local series (Padé order ``n_local // 2``).
        dps: mpmath digits for the local series.
        n_g: coupling grid points of the global route.
        n_coeffs: fitted coefficients of the global route.
        tau_factor: threshold ``τ = tau_factor·|b_0|``.
        dim: dimension of the multi-well problem.
        budget: gradient calls per optimization run.
        restarts: runs of the random-restart baseline (budget split evenly).
        lrs: SURGE-GD's (and the restarts') step grid; GD's grid is :func:`_matched_grid`
            of it (as many values as SURGE's lr × λ grid, over SURGE's effective lr range).
        adam_lrs: Adam's step range (a matched grid of it, the same size as SURGE's).
        cosine_lrs: peak-step range of the cosine schedule (a matched grid of it).
        lams: SURGE's λ grid (every SURGE variant, both tasks).
        polyak_scales: Polyak step multipliers.
        fit_seeds: seeds of the paper-task replica (network initialisation and batch order).
        fit_n: training points of the 1-D regression.
        fit_batch: mini-batch size (every method).
        fit_steps: optimizer steps per run (every method).
        fit_lrs: step grid of the SGD-based SURGE variants (SGD: its matched grid).
        fit_adam_lrs: step grid of SURGE-Adam (Adam: its matched grid).
        vi_n_g: couplings of the variational analysis, on ``[0.005, 0.05]``.
        vi_steps: ELBO steps per coupling.
        vi_samples: draws per ELBO step.
        vi_eval: draws of the final log-mean-exp.
        vi_weight_decay: prior precision making ``Z`` finite.
        barrier_tol, global_tol, min_rel_gain, min_effect_success, gap_floor: the verdict
            margins (module docstring, "Verdict margins"); not part of any trial.
    """

    seeds: int = 3
    n_local: int = 40
    dps: int = 60
    n_g: int = 12
    n_coeffs: int = 6
    tau_factor: float = 10.0
    dim: int = 10
    budget: int = 300
    restarts: int = 5
    lrs: tuple[float, ...] = (0.01, 0.04, 0.16)
    adam_lrs: tuple[float, ...] = (0.04, 0.16, 0.64)
    cosine_lrs: tuple[float, ...] = (0.04, 0.16, 0.64)
    lams: tuple[float, ...] = (0.0, 0.25, 1.0, 4.0, 16.0)
    polyak_scales: tuple[float, ...] = (0.5, 1.0)
    fit_seeds: int = 3
    fit_n: int = 64
    fit_batch: int = 16
    fit_steps: int = 1200
    fit_lrs: tuple[float, ...] = (0.03, 0.1, 0.3, 1.0)
    fit_adam_lrs: tuple[float, ...] = (0.001, 0.003, 0.01, 0.03)
    vi_n_g: int = 8
    vi_steps: int = 200
    vi_samples: int = 32
    vi_eval: int = 512
    vi_weight_decay: float = 1e-3
    barrier_tol: float = 0.01
    global_tol: float = 0.05
    min_rel_gain: float = 0.15
    min_effect_success: float = 0.2
    gap_floor: float = 1e-9

    def validate(self) -> None:
        super().validate()
        for name in ("n_local", "dps", "n_g", "n_coeffs", "dim", "budget", "restarts", "fit_n",
                     "fit_steps", "vi_n_g", "vi_samples", "vi_eval"):
            if getattr(self, name) < 2:
                raise ConfigError(f"{name}: expected an integer >= 2, got {getattr(self, name)}")
        if self.n_g < self.n_coeffs:
            raise ConfigError(f"n_g: need at least n_coeffs = {self.n_coeffs} couplings")
        if self.vi_n_g < self.n_coeffs:
            raise ConfigError(f"vi_n_g: need at least n_coeffs = {self.n_coeffs} couplings")
        if self.fit_seeds < 1 or self.vi_steps < 0:
            raise ConfigError("fit_seeds / vi_steps: expected >= 1 / >= 0")
        if not 1 <= self.fit_batch <= self.fit_n:
            raise ConfigError(f"fit_batch: expected 1..fit_n = {self.fit_n}, got {self.fit_batch}")
        for name in ("barrier_tol", "global_tol", "min_effect_success", "gap_floor"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name}: expected > 0, got {getattr(self, name)}")
        if not 0 < self.min_rel_gain < 1:
            raise ConfigError(f"min_rel_gain: expected in (0, 1), got {self.min_rel_gain}")
        if not self.vi_weight_decay > 0:
            raise ConfigError(f"vi_weight_decay: expected > 0, got {self.vi_weight_decay}")
        for name in ("lrs", "adam_lrs", "cosine_lrs", "polyak_scales", "fit_lrs",
                     "fit_adam_lrs"):
            if not getattr(self, name) or any(v <= 0 for v in getattr(self, name)):
                raise ConfigError(f"{name}: expected positive values, got {getattr(self, name)}")
        if not self.lams or any(v < 0 for v in self.lams) or len(set(self.lams)) != len(self.lams):
            raise ConfigError(f"lams: expected distinct values >= 0, got {self.lams}")


PRESETS = {
    "smoke": ResurgenceConfig(seeds=1, n_local=24, dps=40, n_g=6, n_coeffs=5, dim=4, budget=100,
                              lrs=(0.05,), adam_lrs=(0.05,), cosine_lrs=(0.2,), lams=(1.0,),
                              polyak_scales=(1.0,), fit_seeds=1, fit_n=16, fit_batch=8,
                              fit_steps=40, fit_lrs=(0.1,), fit_adam_lrs=(0.003,), vi_n_g=6,
                              vi_steps=10, vi_samples=8, vi_eval=32),
    "quick": ResurgenceConfig(seeds=5),
    "full": ResurgenceConfig(seeds=20, n_local=60, dps=90, n_g=20, budget=1000, fit_seeds=10,
                             fit_steps=2000, vi_n_g=12, vi_steps=300),
}


def _matched_grid(lrs: tuple[float, ...], lams: tuple[float, ...]) -> tuple[float, ...]:
    """A bare optimizer's lr grid with SURGE's tuning budget: ``len(lrs)·len(lams)`` values
    (SURGE is tuned on ``lrs × lams``), geometric over SURGE's effective lr range
    ``[min lrs, max lrs·(1 + max lams)]`` (``a_t ∈ [1, 1 + λ]``, Eq. 34), so that neither the
    count of tried settings nor the reachable step size favours SURGE (issue 20)."""
    n = len(lrs) * len(lams)
    if n == 1:
        return (float(lrs[0]),)
    grid = np.geomspace(min(lrs), max(lrs) * (1.0 + max(lams)), n)
    return tuple(float(f"{v:.3g}") for v in grid)


def _fit_grid(cfg: ResurgenceConfig, method: str) -> list[dict]:
    lrs = cfg.fit_adam_lrs if method in ("adam", "surge_adam") else cfg.fit_lrs
    if method in ("sgd", "adam"):
        return [{"lr": v} for v in _matched_grid(lrs, cfg.lams)]
    return [{"lr": v, "lam": lam} for v in lrs for lam in cfg.lams]


def _grid(cfg: ResurgenceConfig, method: str) -> list[dict]:
    if method == "gd":
        return [{"lr": v} for v in _matched_grid(cfg.lrs, cfg.lams)]
    if method == "restarts":  # a reported baseline, in no claim: SURGE's lr grid
        return [{"lr": v} for v in cfg.lrs]
    if method == "adam":
        return [{"lr": v} for v in _matched_grid(cfg.adam_lrs, cfg.lams)]
    if method == "cosine":
        return [{"lr": v} for v in _matched_grid(cfg.cosine_lrs, cfg.lams)]
    if method in ("surge", "surge_exact"):
        return [{"lr": v, "lam": lam} for v in cfg.lrs for lam in cfg.lams]
    return [{"scale": s} for s in cfg.polyak_scales]


def trials(cfg: ResurgenceConfig) -> list[Trial]:
    out = []
    theory = {"n_local": cfg.n_local, "dps": cfg.dps, "n_g": cfg.n_g, "n_coeffs": cfg.n_coeffs,
              "tau_factor": cfg.tau_factor}
    for seed in range(cfg.seeds):
        out.append(Trial(method="local", problem="double_well", seed=seed, params=theory))
        out.append(Trial(method="global", problem="double_well", seed=seed, params=theory))
    shared = {"dim": cfg.dim, "budget": cfg.budget, "restarts": cfg.restarts, **theory}
    for method in OPT_METHODS:
        for point in _grid(cfg, method):
            for seed in range(cfg.seeds):
                out.append(Trial(method=method, problem="multiwell", seed=seed,
                                 params={**shared, **point}))
    fit = {"n": cfg.fit_n, "batch": cfg.fit_batch, "steps": cfg.fit_steps,
           "vi_n_g": cfg.vi_n_g, "vi_steps": cfg.vi_steps, "vi_samples": cfg.vi_samples,
           "vi_eval": cfg.vi_eval, "vi_weight_decay": cfg.vi_weight_decay,
           "n_coeffs": cfg.n_coeffs, "tau_factor": cfg.tau_factor}
    for method in FIT_METHODS:
        for point in _fit_grid(cfg, method):
            for seed in range(cfg.fit_seeds):
                out.append(Trial(method=method, problem="fit1d", seed=seed,
                                 params={**fit, **point}))
    return out


# -- target recovery -------------------------------------------------------------------------
def _tilt(seed: int) -> float:
    return float(np.round(0.1 + 0.4 * np.random.default_rng(1000 + seed).random(), 6))


def _local(c: float, n: int, dps: int) -> dict:
    coeffs = [0.0, c, -2.0, 0.0, 1.0]
    cv = critical_values(coeffs)
    barrier = cv[1][1]
    minima = sorted([cv[0], cv[2]], key=lambda t: t[1])  # (lower, higher) by value
    out = {}
    with mpmath.workdps(dps):
        cm = [mpmath.mpf(str(v)) for v in coeffs]
        for name, (th, val, _) in zip(("low", "high"), minima, strict=True):
            center = mpmath.findroot(lambda x: 4 * x**3 - 4 * x + cm[1], th)
            s = borel_pade_singularities(local_series(taylor_at(cm, center), n))
            pos, neg = s["positive"], s["negative"]
            out[f"barrier_err_{name}"] = (abs(pos - (barrier - val)) / (barrier - val)
                                          if pos is not None else 1.0)
        target = minima[0][1] - minima[1][1]  # L_low − L_c < 0 at the higher minimum
        out["neg_found_at_higher_min"] = float(neg is not None)
        out["neg_err_at_higher_min"] = abs(neg - target) / abs(target) if neg is not None else 1.0
    return out


def _global_detect(coeffs: list[float], n_g: int, n_coeffs: int, tau_factor: float) -> list[float]:
    """The paper's route on a 1-D loss shifted to ``L_min = 0``: detected ζ (ascending)."""
    lmin = min(v for _, v, _ in critical_values(coeffs))
    shifted = [coeffs[0] - lmin, *coeffs[1:]]
    gs = np.linspace(0.005, 0.05, n_g)
    zs = [partition_function(shifted, g) for g in gs]
    a = fit_coefficients(gs, zs, n_coeffs)
    return threshold_singularities(a, np.linspace(0.001, 3.0, 3000),
                                   tau=tau_factor * abs(float(a[0])))


def _global(c: float, p: dict) -> dict:
    coeffs = [0.0, c, -2.0, 0.0, 1.0]
    cv = critical_values(coeffs)
    lmin = min(v for _, v, _ in cv)
    found = _global_detect(coeffs, int(p["n_g"]), int(p["n_coeffs"]), float(p["tau_factor"]))
    out = {"n_detected": float(len(found))}
    for name, value in (("barrier", cv[1][1] - lmin),
                        ("higher_min", max(cv[0][1], cv[2][1]) - lmin)):
        out[f"{name}_err"] = (min(abs(z - value) for z in found) / value) if found else 1.0
    return out


# -- multi-well optimization -----------------------------------------------------------------
def _instance(seed: int, dim: int) -> tuple[np.ndarray, float, np.ndarray]:
    rng = np.random.default_rng(2000 + seed)
    c = (0.2 + 0.4 * rng.random(dim)) * rng.choice([-1.0, 1.0], dim)
    mins = np.array([min(v for _, v, _ in critical_values([0.0, float(ci), -2.0, 0.0, 1.0]))
                     for ci in c])
    shift = 1.0 - mins.sum()  # f* = 1
    x0 = np.sign(c) + 0.05 * rng.standard_normal(dim)
    return c, shift, x0


def _f(x: torch.Tensor, c: torch.Tensor, shift: float) -> torch.Tensor:
    # (θ² − 1)² + cθ − 1, the form whose critical values resurgence.critical_values reports.
    return (x**4 - 2 * x * x + c * x).sum() + shift


@functools.lru_cache(maxsize=64)
def _targets(seed: int, dim: int, exact: bool, n_g: int, n_coeffs: int,
             tau_factor: float) -> tuple[float, ...]:
    """Every sum of per-coordinate critical-value estimates, below the start (Eq. 33's ``T``)."""
    c, shift, _ = _instance(seed, dim)
    per = []
    for ci in c:
        coeffs = [0.0, float(ci), -2.0, 0.0, 1.0]
        cv = critical_values(coeffs)
        lmin = min(v for _, v, _ in cv)
        if exact:
            per.append(sorted({v - lmin for _, v, _ in cv}))
        else:
            # L_min itself is the leading exponential of Z (the reviewer's −g log Z estimate);
            # the detected ζ are the estimated critical values above it.
            per.append([0.0] + _global_detect(coeffs, n_g, n_coeffs, tau_factor)[:2])
    base = shift + float(sum(min(v for _, v, _ in critical_values([0.0, float(ci), -2.0, 0.0,
                                                                   1.0])) for ci in c))
    sums = {round(base + sum(combo), 12) for combo in itertools.product(*per)}
    return tuple(sorted(sums))


def _run_opt(method: str, p: dict, seed: int) -> dict:
    dim, budget = int(p["dim"]), int(p["budget"])
    c_np, shift, x0 = _instance(seed, dim)
    c = torch.tensor(c_np, dtype=torch.float64)
    f_star = 1.0

    def descend(start: np.ndarray, steps: int) -> torch.Tensor:
        x = torch.nn.Parameter(torch.tensor(start, dtype=torch.float64))
        if method == "adam":
            opt = torch.optim.Adam([x], lr=p["lr"])
        else:
            opt = torch.optim.SGD([x], lr=p.get("lr", 1.0))
        sched = None
        if method == "cosine":
            sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
        elif method in ("surge", "surge_exact"):
            targets = _targets(seed, dim, method == "surge_exact", int(p["n_g"]),
                               int(p["n_coeffs"]), float(p["tau_factor"]))
            sched = SurgeLR(opt, targets, lam=p["lam"])
        for _ in range(steps):
            opt.zero_grad()
            loss = _f(x, c, shift)
            loss.backward()
            if not torch.isfinite(loss) or float(loss.detach()) > 1e6:
                break
            if method == "polyak_oracle":
                gn = float((x.grad * x.grad).sum())
                for g in opt.param_groups:
                    g["lr"] = p["scale"] * (float(loss.detach()) - f_star) / max(gn, 1e-12)
            if isinstance(sched, SurgeLR):
                sched.step(loss)
            opt.step()
            if method == "cosine":
                sched.step()
        return x.detach()

    if method == "restarts":
        rng = np.random.default_rng(3000 + seed)
        runs = int(p["restarts"])
        starts = [x0] + [rng.uniform(-1.5, 1.5, dim) for _ in range(runs - 1)]
        finals = [descend(s, budget // runs) for s in starts]
        x = min(finals, key=lambda v: float(_f(v, c, shift)))
    else:
        x = descend(x0, budget)
    fx = float(_f(x, c, shift))
    gap = fx - f_star if math.isfinite(fx) else 1e6
    right = float((torch.sign(x) == -torch.sign(c)).double().mean())
    return {"gap": min(gap, 1e6), "frac_global": right,
            "success": float(right == 1.0 and gap < 1e-3), "diverged": float(gap >= 1e6)}


# -- paper task replica: FC (12, 10, 8) regression of the 1-D target --------------------------
FIT_SIZES = (1, 12, 10, 8, 1)  # input, the paper's hidden widths (12, 10, 8), output
_SHAPES = [(o, i) for i, o in zip(FIT_SIZES[:-1], FIT_SIZES[1:], strict=True)]
FIT_P = sum(o * i + o for o, i in _SHAPES)  # 251 parameters
VI_GS = (0.005, 0.05)  # coupling range of the variational analysis (as the 1-D global route)


def _fit_data(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.linspace(-math.pi, math.pi, n, dtype=torch.float64)
    y = torch.sin(2 * x) + 0.5 * torch.cos(5 * x) + 0.3 * torch.sin(10 * x) + 0.1 * x * x
    return x.unsqueeze(1), y


def _mlp(theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """The FC net as a function of a batch of flat parameter vectors: ``(B, p), (n, 1) → (B, n)``
    (weights row-major ``(out, in)`` then bias, layer by layer; tanh between layers)."""
    batch = theta.shape[0]
    h = x.expand(batch, *x.shape)
    k = 0
    for j, (o, i) in enumerate(_SHAPES):
        w = theta[:, k:k + o * i].reshape(batch, o, i)
        k += o * i
        b = theta[:, k:k + o]
        k += o
        h = torch.baddbmm(b.unsqueeze(1), h, w.transpose(1, 2))
        if j < len(_SHAPES) - 1:
            h = torch.tanh(h)
    return h.squeeze(-1)


def _mse(theta: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return ((_mlp(theta, x) - y) ** 2).mean(1)


def _fit_init(seed: int) -> torch.Tensor:
    """PyTorch's ``nn.Linear`` default, ``U(±1/√fan_in)`` for weights and biases, seeded."""
    gen = torch.Generator().manual_seed(5000 + seed)
    parts = []
    for o, i in _SHAPES:
        bound = 1.0 / math.sqrt(i)
        parts.append((2 * torch.rand(o * i + o, generator=gen, dtype=torch.float64) - 1) * bound)
    return torch.cat(parts)


@functools.lru_cache(maxsize=64)
def _fit_analysis(seed: int, n: int, vi_n_g: int, vi_steps: int, vi_samples: int, vi_eval: int,
                  weight_decay: float, n_coeffs: int, tau_factor: float) -> dict:
    """The analysis phase at this seed's initialisation (run once per seed and process)."""
    x, y = _fit_data(n)
    theta0 = _fit_init(seed)
    l0 = float(_mse(theta0.unsqueeze(0), x, y)[0])
    gs = np.linspace(*VI_GS, vi_n_g)
    log_z = variational_log_partition(
        lambda th: _mse(th, x, y), theta0, gs, weight_decay=weight_decay, samples=vi_samples,
        steps=vi_steps, eval_samples=vi_eval, generator=torch.Generator().manual_seed(6000 + seed))
    targets = targets_from_log_partition(gs, log_z, l0, n_coeffs=n_coeffs, tau_factor=tau_factor)
    # Loss-free control: the Gaussian-volume term (p/2)·log g alone through the same steps 2–4.
    control = targets_from_log_partition(gs, 0.5 * FIT_P * np.log(gs), l0, n_coeffs=n_coeffs,
                                         tau_factor=tau_factor)
    rng = np.random.default_rng(7000 + seed)
    return {"l0": l0, "targets": tuple(targets), "control": tuple(control),
            "random": tuple(sorted(float(v) for v in rng.uniform(0.0, l0, len(targets)))),
            "reviewer": laplace_min_estimate(gs, log_z),
            "log_z_min": float(log_z[0]), "log_z_max": float(log_z[-1])}


def _run_fit(method: str, p: dict, seed: int) -> dict:
    n, batch, steps = int(p["n"]), int(p["batch"]), int(p["steps"])
    x, y = _fit_data(n)
    theta = torch.nn.Parameter(_fit_init(seed).unsqueeze(0))
    base = "adam" if method in ("adam", "surge_adam") else "sgd"
    opt = (torch.optim.Adam([theta], lr=p["lr"]) if base == "adam"
           else torch.optim.SGD([theta], lr=p["lr"]))
    out: dict = {}
    sched = None
    if method.startswith("surge"):
        info = _fit_analysis(seed, n, int(p["vi_n_g"]), int(p["vi_steps"]),
                             int(p["vi_samples"]), int(p["vi_eval"]),
                             float(p["vi_weight_decay"]), int(p["n_coeffs"]),
                             float(p["tau_factor"]))
        targets = {"surge_random": info["random"], "surge_reviewer": (info["reviewer"],)}.get(
            method, info["targets"])
        sched = SurgeLR(opt, targets, lam=p["lam"])
        out.update(n_targets=float(len(info["targets"])), reviewer_target=info["reviewer"],
                   log_z_gmin=info["log_z_min"], log_z_gmax=info["log_z_max"],
                   control_targets=",".join(f"{v:.4g}" for v in info["control"]),
                   targets=",".join(f"{v:.4g}" for v in targets))

    def full_loss() -> float:
        with torch.no_grad():
            return float(_mse(theta, x, y)[0])

    l0 = full_loss()
    gen = torch.Generator().manual_seed(4000 + seed)  # same batch order for every method
    every = max(1, steps // FIT_CURVE)
    curve = [l0]
    diverged = False
    factors = []
    for t in range(steps):
        idx = torch.randperm(n, generator=gen)[:batch]
        loss = _mse(theta, x[idx], y[idx])[0]
        if not torch.isfinite(loss) or float(loss.detach()) > 1e3 * max(l0, 1.0):
            diverged = True
            break
        opt.zero_grad()
        loss.backward()
        if sched is not None:
            factors.append(sched.step(loss))
        opt.step()
        if (t + 1) % every == 0 and len(curve) <= FIT_CURVE:
            curve.append(full_loss())
    final = full_loss()
    if diverged or not math.isfinite(final):
        diverged, final = True, l0  # a diverged run counts as no progress
    curve += [final] * (FIT_CURVE + 1 - len(curve))
    out.update(final_loss=final, initial_loss=l0, diverged=float(diverged),
               mean_factor=float(np.mean(factors)) if factors else 1.0)
    out.update({f"curve_{i:02d}": v for i, v in enumerate(curve)})
    return out


def run_trial(trial: Trial, device: str = "cpu") -> dict:
    torch.set_num_threads(1)
    p = dict(trial.params)
    if trial.problem == "fit1d":
        return _run_fit(trial.method, p, trial.seed)
    if trial.method == "local":
        return _local(_tilt(trial.seed), int(p["n_local"]), int(p["dps"]))
    if trial.method == "global":
        return _global(_tilt(trial.seed), p)
    return _run_opt(trial.method, p, trial.seed)


# -- summary ---------------------------------------------------------------------------------
def _point(params: dict) -> tuple:
    return tuple(sorted((k, params[k]) for k in ("lr", "lam", "scale") if k in params))


@dataclass(frozen=True)
class _Grid:
    """A method's grid pick: the best point, its results, and the ``tune`` records (the whole
    grid, and each axis through the best point when the grid has two axes)."""

    point: tuple
    results: list
    full: Tuned
    axes: tuple[Tuned, ...]


#: grid ends that are hard limits: λ = 0 is the floor of Eq. 34 (a_t ≥ 1; SURGE with λ = 0 is
#: its base optimizer), so a best λ of 0 is no grid edge -- it says SURGE adds nothing.
HARD_LIMITS = {"lam": (0.0,)}


def _tune_grid(name: str, by_point: dict[tuple, list[Result]], score) -> _Grid:
    """Pick the grid point with the lowest mean ``score(result)`` (``tune``; ties: first point
    of the sorted grid).  Grid values are recorded bare (``0.1``, or ``(λ, lr)`` tuples)."""
    keys = [k for k, _ in next(iter(by_point))]

    def bare(pt: tuple):
        return pt[0][1] if len(pt) == 1 else tuple(v for _, v in pt)

    points = {bare(pt): pt for pt in by_point}
    scores = {bare(pt): [float(score(r)) for r in rs] for pt, rs in by_point.items()}
    label = keys[0] if len(keys) == 1 else f"({', '.join(keys)})"
    full = tune(f"{name} {label}", scores, hard_limits=HARD_LIMITS.get(label, ()))
    axes = []
    if len(keys) > 1:
        for i, key in enumerate(keys):
            line = {pt[i]: v for pt, v in scores.items()
                    if all(pt[j] == full.best[j] for j in range(len(keys)) if j != i)}
            at = ", ".join(f"{k} = {full.best[j]:g}" for j, k in enumerate(keys) if j != i)
            if len(line) > 1:
                axes.append(tune(f"{name} {key} (at {at})", line,
                                 hard_limits=HARD_LIMITS.get(key, ())))
        # The ends of a 2-D grid are the ends of its axes through the best point (the sorted
        # list of (λ, lr) pairs has no geometric ends of its own): its edge flag is theirs.
        full = replace(full, on_edge=any(a.on_edge for a in axes))
    best = points[full.best]
    return _Grid(best, by_point[best], full, tuple(axes))


def _guarded(v: Verdict, method: _Grid, base: _Grid) -> Verdict:
    """Grid edges of either side (each axis), then equal budgets (whole grids), then whether
    the method acts at its best point (:func:`_idle`)."""
    if method.axes or base.axes:
        v = guard(v, *method.axes, *base.axes, equal_budget=False)
    v = guard(v, method.full, base.full)
    why = _idle(method)
    return not_acting(v, why) if why else v


def _idle(grid: _Grid) -> str | None:
    """Why SURGE does not act at its best grid point, or ``None``: at λ = 0 Eq. 34 gives
    a_t = 1 at every step (SURGE *is* its base optimizer there); a fit run that recorded a mean
    a_t of exactly 1 in every seed (no step amplified, e.g. no target below the loss) is idle
    too."""
    point = dict(grid.point)
    if "lam" not in point:
        return None
    if float(point["lam"]) == 0.0:
        return (f"its best grid point has λ = 0 (lr {point.get('lr')}): a_t = 1 at every step, "
                "SURGE is its base optimizer there")
    factors = [r.metrics.get("mean_factor") for r in grid.results]
    if factors and all(f is not None and abs(float(f) - 1.0) < 1e-12 for f in factors):
        return "a_t = 1 at every step of every seed at its best grid point (no step amplified)"
    return None


def _lower_by(a: dict, b: dict, gain: float, floor: float = 0.0) -> Verdict:
    """``a`` is at least ``gain`` (relative) below ``b``, paired by seed (log ratio)."""
    fa = {k: max(v, floor) for k, v in a.items()}
    fb = {k: max(v, floor) for k, v in b.items()}
    return superior(fa, fb, min_effect=-math.log(1.0 - gain), direction="less", log_ratio=True)


def summarize(results: list[Result], cfg: ResurgenceConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    local = [r.metrics for r in results if r.trial.method == "local"]
    glob = [r.metrics for r in results if r.trial.method == "global"]

    def ci(vals):
        return fmt_ci(*mean_ci(vals), digits=3)

    t_rows = [["local Borel–Padé", "barrier from lower min (rel. err)",
               ci([m["barrier_err_low"] for m in local])],
              ["local Borel–Padé", "barrier from higher min (rel. err)",
               ci([m["barrier_err_high"] for m in local])],
              ["local Borel–Padé", "negative pole found at higher min (rate)",
               ci([m["neg_found_at_higher_min"] for m in local])],
              ["global fit (paper §3.1)", "barrier (rel. err of nearest ζ)",
               ci([m["barrier_err"] for m in glob])],
              ["global fit (paper §3.1)", "higher minimum (rel. err of nearest ζ)",
               ci([m["higher_min_err"] for m in glob])],
              ["global fit (paper §3.1)", "detected ζ (count)",
               ci([m["n_detected"] for m in glob])]]
    tables = [Table(title="Target recovery on (θ² − 1)² + cθ, c ~ U[0.1, 0.5] per seed "
                          "(mean ± 95% CI over seeds)", columns=["route", "quantity", "value"],
                    rows=t_rows)]

    # Best grid point per method: highest mean success, then lowest mean gap (one score,
    # gap − 1e9·success: gaps are capped at 1e6, so success decides first).
    by: dict[str, dict[tuple, list[Result]]] = {}
    for r in results:
        if r.trial.problem == "multiwell":
            by.setdefault(r.trial.method, {}).setdefault(_point(r.trial.params), []).append(r)
    grids = {method: _tune_grid(LABEL[method], pts,
                                lambda r: r.metrics["gap"] - 1e9 * r.metrics["success"])
             for method, pts in by.items()}
    best = {method: (g, g.point, [r.metrics for r in g.results]) for method, g in grids.items()}
    rows = []
    for method in OPT_METHODS:
        if method not in best:
            continue
        _, point, ms = best[method]
        rows.append([LABEL[method], ", ".join(f"{k}={v}" for k, v in point),
                     ci([m["success"] for m in ms]), ci([m["frac_global"] for m in ms]),
                     ci([m["gap"] for m in ms]), ci([m["diverged"] for m in ms])])
    tables.append(Table(
        title=f"Separable multi-well, d = {cfg.dim}, {cfg.budget} gradient calls, start in the "
              "worse wells (best grid point per method; mean ± 95% CI over seeds)",
        columns=["method", "grid point", "success rate", "fraction of coords in global well",
                 "final f − f*", "diverged"], rows=rows))

    fig, (ax,) = grid(1, panel=(7, 3.5))
    category_panel(ax, {LABEL[k]: [m["frac_global"] for m in best[k][2]]
                        for k in OPT_METHODS if k in best},
                   ylabel="fraction of coords in global well", ylog=False)
    figures = [save(fig, outdir / "multiwell.png",
                    "Fraction of coordinates ending in their global well (best grid point per "
                    "method; mean ± 95 % CI over seeds)")]

    claims = []
    errs = [max(m["barrier_err_low"], m["barrier_err_high"]) for m in local]
    if errs:
        claims.append(Claim(
            text=f"(1a) Local Borel–Padé locates the barrier L_max − L_c within "
                 f"{cfg.barrier_tol:.0%} from both minima (every seed).",
            evidence=f"worst rel. error per seed {[round(e, 5) for e in errs]}",
            verdict=bound_holds(errs, cfg.barrier_tol)))
    negs = [m["neg_err_at_higher_min"] for m in local]
    if negs:
        claims.append(Claim(
            text="(1a) Expanding at the higher minimum, Borel–Padé shows a negative singularity "
                 f"at L_low − L_c within {cfg.barrier_tol:.0%} (a lower minimum exists; every "
                 "seed).",
            evidence=f"rel. error per seed {[round(e, 4) for e in negs]} (1.0 = no negative "
                     "real pole; in 1-D the other minimum is not on the principal Borel sheet)",
            verdict=bound_holds(negs, cfg.barrier_tol)))
    gerr = [max(m["barrier_err"], m["higher_min_err"]) for m in glob]
    if gerr:
        claims.append(Claim(
            text="(1b) The paper's global route (quadrature Z(g), weighted LS fit, threshold "
                 f"scan) finds every nonzero critical value within {cfg.global_tol:.0%} (every "
                 "seed).",
            evidence=f"worst rel. error per seed {[round(e, 3) for e in gerr]}",
            verdict=bound_holds(gerr, cfg.global_tol)))
    if {"surge", "gd", "adam", "cosine"} <= set(best):
        sr = {k: np.mean([m["success"] for m in best[k][2]]) for k in best}
        surge = grids["surge"]
        cells = {k: _guarded(superior(by_seed(surge.results, "success"),
                                      by_seed(grids[k].results, "success"),
                                      min_effect=cfg.min_effect_success), surge, grids[k])
                 for k in ("gd", "adam", "cosine")}
        claims.append(Claim(
            text="(3) SURGE-GD reaches the global minimum more often than GD, Adam and the "
                 f"cosine schedule at equal gradient calls (by ≥ {cfg.min_effect_success:.0%} "
                 "of runs, paired by seed, each at its best grid point).",
            evidence="success rates " + ", ".join(f"{k} {sr[k]:.2f}" for k in sr),
            verdict=all_of(cells)))
        g_s = np.mean([m["gap"] for m in best["surge"][2]])
        g_gd = np.mean([m["gap"] for m in best["gd"][2]])
        claims.append(Claim(
            text=f"(3) SURGE-GD's final gap f − f* is at least {cfg.min_rel_gain:.0%} lower than "
                 "GD's (the paper's 15–30% headline, at this scale; paired log ratio).",
            evidence=f"mean gap SURGE {g_s:.4g} vs GD {g_gd:.4g} "
                     f"(ratio {g_s / max(g_gd, 1e-300):.3f})",
            verdict=_guarded(_lower_by(by_seed(surge.results, "gap"),
                                       by_seed(grids["gd"].results, "gap"), cfg.min_rel_gain,
                                       cfg.gap_floor), surge, grids["gd"])))
    fit_tables, fit_figures, fit_claims, fit_notes = _summarize_fit(results, cfg, outdir)
    tables += fit_tables
    figures += fit_figures
    claims += fit_claims
    route = []
    if gerr:
        route = [f"The paper's global 1-D route (claim 1b) is off by {min(gerr):.0%}–"
                 f"{max(gerr):.0%} (worst relative error of the nearest detected ζ per seed, "
                 f"{len(gerr)} seeds; the brief asks for 5 %): the threshold scan flags where "
                 f"the truncated Borel polynomial of a {cfg.n_coeffs}-term fit of Z(g) crosses "
                 "τ, which need not be where the critical values are. The multi-well's "
                 "'surge' targets come from this route; 'surge_exact' isolates the rule "
                 "from it."]
    notes = [*route,
             "Targets for the multi-well come from per-coordinate 1-D analysis (the objective is "
             "separable); the paper uses a variational estimate of log Z in high dimension.",
             "Grid point per method chosen by mean success over the same seeds (lr tuned per "
             "method, as the brief asks); ties (e.g. no success anywhere and equal gaps) report "
             "the first grid point. The paper's λ was not retrieved.",
             "Verdicts: every comparison of tuned methods is guarded -- a best value on its "
             "grid's edge (for SURGE, of the lr or of the λ axis) or an unequal tuning budget "
             "makes it inconclusive, whatever the comparison says (its outcome is kept in the "
             "guards). The baselines of a claim are tuned on a matched grid: as many lr values "
             "as SURGE's lr × λ grid, geometric over SURGE's effective lr range "
             "[min lr, max lr·(1 + max λ)].",
             "Eq. 33 uses the NEAREST target below the loss; with sums of per-coordinate "
             "critical values the targets are dense, so near a (worse) minimum a_t ≈ 1 and "
             "SURGE-GD reduces to GD.", *fit_notes]
    return Summary(tables=tables, figures=figures, claims=claims, notes=notes)


def _targets_equal_control(results: list[Result]) -> bool:
    """Whether the analysis targets equal the loss-free control's (to 0.1 %) in every seed."""
    seen: dict[int, bool] = {}
    for r in results:
        if r.trial.problem != "fit1d" or r.trial.method != "surge_sgd":
            continue
        t, c = (r.metrics.get("targets"), r.metrics.get("control_targets"))
        if t is None or c is None:
            return False
        ts = [float(v) for v in str(t).split(",") if v]
        cs = [float(v) for v in str(c).split(",") if v]
        seen[r.trial.seed] = len(ts) == len(cs) and bool(np.allclose(ts, cs, rtol=1e-3, atol=0))
    return bool(seen) and all(seen.values())


def _summarize_fit(results: list[Result], cfg: ResurgenceConfig,
                   outdir: Path) -> tuple[list[Table], list[Figure], list[Claim], list[str]]:
    """Step (2): tables, training-curve figure, claims (2a)–(2c) and notes of the replica."""
    by_m: dict[str, dict[tuple, list[Result]]] = {}
    for r in results:
        if r.trial.problem == "fit1d":
            by_m.setdefault(r.trial.method, {}).setdefault(_point(r.trial.params), []).append(r)
    if not by_m:
        return [], [], [], []
    by = {(method, pt): [r.metrics for r in rs] for method, pts in by_m.items()
          for pt, rs in pts.items()}

    def ci(vals, digits=4):
        return fmt_ci(*mean_ci(vals), digits=digits)

    # Best grid point per method: lowest mean final training loss over the (same) seeds.
    grids = {method: _tune_grid(FIT_LABEL[method], pts, lambda r: r.metrics["final_loss"])
             for method, pts in by_m.items()}
    best = {method: (g, g.point, [r.metrics for r in g.results]) for method, g in grids.items()}
    rows = []
    for method in FIT_METHODS:
        if method not in best:
            continue
        _, point, ms = best[method]
        rows.append([FIT_LABEL[method], ", ".join(f"{k}={v}" for k, v in point),
                     ci([m["final_loss"] for m in ms]), ci([m["diverged"] for m in ms], 3),
                     ci([m["mean_factor"] for m in ms], 3),
                     ci([m["n_targets"] for m in ms], 3) if "n_targets" in ms[0] else "—"])
    div_all = {method: float(np.mean([m["diverged"] for (mm, _), ms in by.items()
                                      if mm == method for m in ms])) for method in best}
    tables = [Table(
        title=f"FC (12, 10, 8) tanh regression of sin 2x + 0.5 cos 5x + 0.3 sin 10x + 0.1x², "
              f"n = {cfg.fit_n}, batch {cfg.fit_batch}, {cfg.fit_steps} steps per method (best "
              f"grid point per method by mean final loss; mean ± 95% CI over {cfg.fit_seeds} "
              "seeds)",
        columns=["method", "grid point", "final training MSE", "diverged (best point)",
                 "mean a_t", "analysis targets"], rows=rows)]
    seen: dict[int, dict] = {}
    for r in results:
        if r.trial.problem == "fit1d" and r.trial.method == "surge_sgd":
            seen.setdefault(r.trial.seed, r.metrics)
    per_seed = list(seen.values())
    if per_seed:
        tables.append(Table(
            title="Variational analysis at initialisation (one run per seed; mean ± 95% CI "
                  "over seeds)", columns=["quantity", "value"],
            rows=[["initial training MSE L_0", ci([m["initial_loss"] for m in per_seed])],
                  ["targets found in (0, L_0)", ci([m["n_targets"] for m in per_seed], 3)],
                  ["reviewer target −g log Z(g_min)",
                   ci([m["reviewer_target"] for m in per_seed])],
                  ["log Z(g_min), log Z(g_max)",
                   f"{ci([m['log_z_gmin'] for m in per_seed])}; "
                   f"{ci([m['log_z_gmax'] for m in per_seed])}"],
                  ["targets per seed", "; ".join(f"[{m['targets']}]" for m in per_seed)],
                  ["loss-free control: targets from (p/2)·log g alone",
                   "; ".join(f"[{m['control_targets']}]" for m in per_seed)],
                  ["divergence rate over the whole grid",
                   ", ".join(f"{k} {v:.2f}" for k, v in div_all.items())]]))

    fig, (ax,) = grid(1, panel=(7, 4))
    curves_panel(ax, {FIT_LABEL[method]: [[m[f"curve_{i:02d}"] for i in range(FIT_CURVE + 1)]
                                          for m in best[method][2]]
                      for method in FIT_METHODS if method in best},
                 x=np.linspace(0, cfg.fit_steps, FIT_CURVE + 1), xlabel="optimizer step",
                 ylabel="training MSE (full batch)", ylog=True)
    figures = [save(fig, outdir / "fit1d_curves.png",
                    "1-D regression: training MSE, mean ± 95 % CI over seeds, best grid point "
                    "per method (log scale)")]

    claims = []
    final = {k: [m["final_loss"] for m in v[2]] for k, v in best.items()}
    loss = {k: float(np.mean(v)) for k, v in final.items()}
    gain = cfg.min_rel_gain
    for tag, wrapped, base in (("2a", "surge_sgd", "sgd"), ("2b", "surge_adam", "adam")):
        if {wrapped, base} <= set(best):
            claims.append(Claim(
                text=f"({tag}) {FIT_LABEL[wrapped]}'s final training loss is at least "
                     f"{gain:.0%} lower than {FIT_LABEL[base]}'s on the 1-D regression (paper: "
                     "15–30%), each at its best grid point (paired log ratio; a best lr on its "
                     "grid's edge or a larger grid for SURGE makes it inconclusive).",
                evidence=f"mean final MSE {ci(final[wrapped])} vs {ci(final[base])} (ratio "
                         f"{loss[wrapped] / max(loss[base], 1e-300):.3f})",
                verdict=_guarded(_lower_by(by_seed(grids[wrapped].results, "final_loss"),
                                           by_seed(grids[base].results, "final_loss"), gain),
                                 grids[wrapped], grids[base])))
    if {"surge_random", "surge_sgd"} <= set(best):
        v = _guarded(_lower_by(by_seed(grids["surge_sgd"].results, "final_loss"),
                               by_seed(grids["surge_random"].results, "final_loss"), gain),
                     grids["surge_sgd"], grids["surge_random"])
        same = _targets_equal_control(results)
        if same:
            v = not_acting(v, "the analysis targets equal the loss-free control's in every "
                              "seed: they carry no information from the network's loss")
        claims.append(Claim(
            text="(2c) Random targets (same count, uniform in (0, L_0)) give a higher final "
                 f"training loss than the analysis targets (paper App. E): the analysis "
                 f"targets end at least {gain:.0%} lower (paired log ratio).",
            evidence=f"mean final MSE random {ci(final['surge_random'])} vs analysis "
                     f"{ci(final['surge_sgd'])}; analysis targets "
                     f"{'equal' if same else 'differ from'} the loss-free control's",
            verdict=v))
    notes = [
        "Step (2) differs from the paper in: the data domain (x equally spaced on [−π, π]; the "
        "paper's domain and sample count were not retrieved), the activation (tanh, chosen; "
        "not retrieved), mini-batch SGD/Adam for every method at equal steps (the paper's "
        "batching was not retrieved), the analysis (mean-field Gaussian q per coupling fitted by "
        "the ELBO, log Z = log-mean-exp of the importance ratio; the paper's E_ψ is inferred), "
        "a Gaussian weight-decay prior (vi_weight_decay/2)‖θ‖² added to the loss in the analysis "
        "only (training minimises the plain MSE), the coupling grid (vi_n_g points on "
        "[0.005, 0.05], as the 1-D global route), no Muon/AdamW bases, and no MNIST/Transformer "
        "tasks.",
        "The scikit-learn digits MLP (the brief's MNIST stand-in) is not run: it does not fit the "
        "CPU budget of the quick preset next to the 1-D task; only the 1-D task is replicated.",
        "SURGE sees the mini-batch loss at the current iterate (L(θ_t) of Eq. 34); final and "
        "curve losses are full-batch training MSE. Random and reviewer targets wrap SGD. The "
        "reviewer target −g log Z(g_min) carries the volume term (p/2)·g·log(2πg/wd) in "
        "p = 251 dimensions; when it is negative, a_t = 1 + λ at every step (a constant lr "
        "multiplier), and when it is above the loss, a_t = 1 (plain SGD).",
        "lr (and λ) chosen per method as the grid point with the lowest mean final loss on the "
        "same seeds that are reported (optimistic for every method alike); a diverged run "
        "counts as its initial loss.",
    ]
    for base, lrs in (("sgd", _matched_grid(cfg.fit_lrs, cfg.lams)),
                      ("adam", _matched_grid(cfg.fit_adam_lrs, cfg.lams))):
        if base in best and len(lrs) > 1 and dict(best[base][1])["lr"] == max(lrs):
            notes.append(f"{FIT_LABEL[base]}'s best lr is the largest of its grid {lrs}; SURGE "
                         "multiplies it by a_t ≥ 1, so part of a SURGE gain may be a larger "
                         "effective lr than the grid lets the bare optimizer have.")
    notes.append("The 'loss-free control' row feeds log Z = (p/2)·log g (the Gaussian volume "
                 "term, no loss at all) through the same fit and threshold scan; where it returns "
                 "the same targets as the analysis, the targets are set by the coupling grid, "
                 "n_coeffs and τ, not by the network's critical values, and (2c) then compares "
                 "a fixed target set with random ones.")
    return tables, figures, claims, notes


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "SURGE (ICLR 2026): recovery of critical values of 1-D polynomial losses from asymptotic "
        "series (local Borel–Padé and the paper's global fit), SURGE-wrapped GD on a "
        "separable 10-D tilted multi-well against GD, Adam, a cosine schedule, random restarts "
        "and oracle Polyak, and the paper's FC (12, 10, 8) 1-D regression with SURGE-SGD/Adam "
        "(targets from a variational log Z) against tuned SGD/Adam, random targets and the "
        "reviewer's −g log Z target. Trials are CPU-sized and run on the CPU whatever --device "
        "says."),
)
