"""Reproduction ``resurgence``: Bu, "Globally Aware Optimization with Resurgence" (SURGE; ICLR
2026, OpenReview dhnyoea2Qj, arXiv 2509.01329).  No official code.

The paper's experiments (an FC (12, 10, 8) regression, MNIST MLP, a small Transformer) report
curves only; this reproduction runs the brief's small-scale checks (1) and (3):

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
   small step grid fixed in the preset; the grid point with the best mean success over seeds is
   reported (the brief's "lr tuned per method").  Success: every coordinate ends in its global
   well (``sign θ_i = −sign c_i``) and ``f − f* < 1e-3``.

Deviations.  The paper's targets in high dimension come from a variational estimate of
``log Z``; here the separable objective is analysed per coordinate (1-D, quadrature) and the
target set is every sum of per-coordinate estimates (``f`` is a sum, so its critical values are
sums of per-coordinate critical values); this is exact for the ``surge_exact`` variant.  Claims:
SURGE reaches the global minimum more often than GD, Adam and the cosine schedule, and its final
gap is ≥ 15 % lower than GD's (the paper's headline "15–30 % improvement").

Read top to bottom: config and presets, the three trial kinds, summary with claims.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import mpmath
import numpy as np
import torch

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment.stats import fmt_ci, mean_ci
from optzoo.optim.resurgence import (
    borel_pade_singularities,
    critical_values,
    fit_coefficients,
    local_series,
    partition_function,
    taylor_at,
    threshold_singularities,
)
from optzoo.optim.surge import SurgeLR

SLUG = "resurgence"
OPT_METHODS = ("gd", "adam", "cosine", "surge", "surge_exact", "polyak_oracle", "restarts")
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
        lrs: GD / SURGE / restart step grid.
        adam_lrs: Adam step grid.
        cosine_lrs: peak steps of the cosine schedule.
        lams: SURGE's λ grid.
        polyak_scales: Polyak step multipliers.
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
    lrs: tuple[float, ...] = (0.02, 0.05, 0.1)
    adam_lrs: tuple[float, ...] = (0.02, 0.05, 0.1)
    cosine_lrs: tuple[float, ...] = (0.1, 0.2, 0.3)
    lams: tuple[float, ...] = (0.5, 1.0, 2.0)
    polyak_scales: tuple[float, ...] = (0.5, 1.0)

    def validate(self) -> None:
        super().validate()
        for name in ("n_local", "dps", "n_g", "n_coeffs", "dim", "budget", "restarts"):
            if getattr(self, name) < 2:
                raise ConfigError(f"{name}: expected an integer >= 2, got {getattr(self, name)}")
        if self.n_g < self.n_coeffs:
            raise ConfigError(f"n_g: need at least n_coeffs = {self.n_coeffs} couplings")
        for name in ("lrs", "adam_lrs", "cosine_lrs", "lams", "polyak_scales"):
            if not getattr(self, name) or any(v <= 0 for v in getattr(self, name)):
                raise ConfigError(f"{name}: expected positive values, got {getattr(self, name)}")


PRESETS = {
    "smoke": ResurgenceConfig(seeds=1, n_local=24, dps=40, n_g=6, n_coeffs=5, dim=4, budget=100,
                              lrs=(0.05,), adam_lrs=(0.05,), cosine_lrs=(0.2,), lams=(1.0,),
                              polyak_scales=(1.0,)),
    "quick": ResurgenceConfig(seeds=5),
    "full": ResurgenceConfig(seeds=20, n_local=60, dps=90, n_g=20, budget=1000),
}


def _grid(cfg: ResurgenceConfig, method: str) -> list[dict]:
    if method in ("gd", "restarts"):
        return [{"lr": v} for v in cfg.lrs]
    if method == "adam":
        return [{"lr": v} for v in cfg.adam_lrs]
    if method == "cosine":
        return [{"lr": v} for v in cfg.cosine_lrs]
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


def run_trial(trial: Trial, device: str = "cpu") -> dict:
    torch.set_num_threads(1)
    p = dict(trial.params)
    if trial.method == "local":
        return _local(_tilt(trial.seed), int(p["n_local"]), int(p["dps"]))
    if trial.method == "global":
        return _global(_tilt(trial.seed), p)
    return _run_opt(trial.method, p, trial.seed)


# -- summary ---------------------------------------------------------------------------------
def _point(params: dict) -> tuple:
    return tuple(sorted((k, params[k]) for k in ("lr", "lam", "scale") if k in params))


def summarize(results: list[Result], cfg: ResurgenceConfig, outdir: Path) -> Summary:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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

    # Best grid point per method: highest mean success, then lowest mean gap.
    best: dict[str, tuple] = {}
    by: dict[tuple, list] = {}
    for r in results:
        if r.trial.problem == "multiwell":
            by.setdefault((r.trial.method, _point(r.trial.params)), []).append(r.metrics)
    for (method, point), ms in by.items():
        score = (np.mean([m["success"] for m in ms]), -np.mean([m["gap"] for m in ms]))
        if method not in best or score > best[method][0]:
            best[method] = (score, point, ms)
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

    fig, ax = plt.subplots(figsize=(7, 3.5))
    names = [m for m in OPT_METHODS if m in best]
    ax.bar(range(len(names)), [np.mean([m["frac_global"] for m in best[k][2]]) for k in names])
    ax.set_xticks(range(len(names)), [LABEL[k] for k in names], rotation=30, ha="right",
                  fontsize=7)
    ax.set_ylabel("coords in global well")
    fig.tight_layout()
    path = outdir / "multiwell.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    figures = [Figure(path=path, caption="Fraction of coordinates ending in their global well "
                                         "(best grid point per method)")]

    claims = []
    errs = [max(m["barrier_err_low"], m["barrier_err_high"]) for m in local]
    claims.append(Claim(
        text="(1a) Local Borel–Padé locates the barrier L_max − L_c within 1% from both minima.",
        evidence=f"worst rel. error per seed {[round(e, 5) for e in errs]}",
        held=bool(errs) and max(errs) < 0.01))
    negs = [m["neg_err_at_higher_min"] for m in local]
    claims.append(Claim(
        text="(1a) Expanding at the higher minimum, Borel–Padé shows a negative singularity at "
             "L_low − L_c within 1% (a lower minimum exists).",
        evidence=f"rel. error per seed {[round(e, 4) for e in negs]} (1.0 = no negative real "
                 "pole; in 1-D the other minimum is not on the principal Borel sheet)",
        held=bool(negs) and max(negs) < 0.01))
    gerr = [max(m["barrier_err"], m["higher_min_err"]) for m in glob]
    claims.append(Claim(
        text="(1b) The paper's global route (quadrature Z(g), weighted LS fit, threshold scan) "
             "finds every nonzero critical value within 5%.",
        evidence=f"worst rel. error per seed {[round(e, 3) for e in gerr]}",
        held=bool(gerr) and max(gerr) < 0.05))
    if {"surge", "gd", "adam", "cosine"} <= set(best):
        sr = {k: np.mean([m["success"] for m in best[k][2]]) for k in best}
        ok = all(sr["surge"] > sr[k] for k in ("gd", "adam", "cosine"))
        claims.append(Claim(
            text="(3) SURGE-GD reaches the global minimum more often than GD, Adam and the "
                 "cosine schedule at equal gradient calls.",
            evidence="success rates " + ", ".join(f"{k} {sr[k]:.2f}" for k in sr),
            held=bool(ok)))
        g_s = np.mean([m["gap"] for m in best["surge"][2]])
        g_gd = np.mean([m["gap"] for m in best["gd"][2]])
        claims.append(Claim(
            text="(3) SURGE-GD's final gap f − f* is at least 15% lower than GD's "
                 "(the paper's 15–30% headline, at this scale).",
            evidence=f"mean gap SURGE {g_s:.4g} vs GD {g_gd:.4g} "
                     f"(ratio {g_s / max(g_gd, 1e-300):.3f})",
            held=bool(g_s <= 0.85 * g_gd)))
    notes = ["Targets for the multi-well come from per-coordinate 1-D analysis (the objective is "
             "separable); the paper uses a variational estimate of log Z in high dimension.",
             "Grid point per method chosen by mean success over the same seeds (lr tuned per "
             "method, as the brief asks); ties (e.g. no success anywhere and equal gaps) report "
             "the first grid point. The paper's λ was not retrieved.",
             "Eq. 33 uses the NEAREST target below the loss; with sums of per-coordinate "
             "critical values the targets are dense, so near a (worse) minimum a_t ≈ 1 and "
             "SURGE-GD reduces to GD."]
    return Summary(tables=tables, figures=figures, claims=claims, notes=notes)


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "SURGE (ICLR 2026): recovery of critical values of 1-D polynomial losses from asymptotic "
        "series (local Borel–Padé and the paper's global fit), and SURGE-wrapped GD on a "
        "separable 10-D tilted multi-well against GD, Adam, a cosine schedule, random restarts "
        "and oracle Polyak. Trials are CPU-sized and run on the CPU whatever --device says."),
)
