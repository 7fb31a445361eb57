"""Reproduction ``hj-optimal-transport``: Park, Liu, Zhou & Osher, "Neural Hamilton–Jacobi
Characteristic Flows for Optimal Transport" (ICLR 2026, OpenReview YbQxus1KEa, arXiv
2510.01153).  Method: :class:`optzoo.transport.HJOptimalTransport` (NCF).

Tasks of the brief at CPU scale (quadratic cost, t_f = 1):

A. Gaussian → Gaussian with the closed-form map (stand-in for the Korotin et al. 2021 W2
   benchmark): d ∈ ``dims``, random means, SPD covariances with condition number ≤ 10.
   Metrics: L²-UVP (%) forward on fresh source samples and backward on fresh target samples,
   inverse consistency E‖T̂⁻¹(T̂(x)) − x‖, relative transport-cost error against the closed-form
   W₂², fit wall time.  Methods: NCF; the ICNN min–max baseline MM-v1; at ``ablation_dims`` the
   paper's ablations HJ-PINN (PDE residual u_t + H(∇u) instead of the implicit formula) and
   MMD-only (no HJ term); POT exact OT (``ot.emd``) and Sinkhorn (``ot.sinkhorn``) with the
   barycentric projection, evaluated in-sample on the ``n_train`` training points (they have no
   out-of-sample map).
B. 2-D toys, 8 Gaussians → each of ``toys``: energy distance of the transported held-out
   source to held-out target samples, against the sampling floor (energy distance between the
   training and held-out target samples — what POT's exact assignment, which maps the training
   source onto the training target, achieves); transport cost against ``ot.emd2``; the
   distance of NCF's map to the exact discrete OT assignment on the training points
   (100·mean‖T̂(x_i) − y_σ(i)‖²/Var(ν), a UVP against ``ot.emd``).
C. Colour transfer ``astronaut`` → ``coffee`` (scikit-image photos, RGB in [0, 1]³), trained on
   ``colour_n`` random pixels of each; every method maps ``colour_eval`` other source pixels.
   Metrics: colour-histogram intersection (16³ bins) with the target photo and energy distance
   to target pixels.  Methods: NCF, the ICNN baseline, POT ``ot.da.EMDTransport`` and
   ``ot.da.SinkhornTransport`` (out-of-sample by their nearest-neighbour rule).

Budget: the ICNN baseline gets ``icnn_steps`` outer steps of ``icnn_inner`` critic steps,
chosen by a per-step timing (not by results) so that its wall time is about NCF's; claim (3)
compares the wall times measured interleaved in one process (the ``timing`` trials below).
Every preset keeps that ratio (5 NCF steps per ICNN outer step).

Issue 23: claim (1) failed on budget, not on the method (forward UVP 13 % at d = 4 after
quick's 500 steps, 2.9 % after the old full's 2000).  Seed-0 probes of NCF alone (full's
network and batch, lr 3e-3 decayed ×0.1 over the run), measured before the full preset was
re-set and not on its trials: d = 4, a 2000-step run, forward UVP 12.2 / 5.1 / 3.7 / 3.0 % after
250 / 500 / 1000 / 1750 steps; d = 16, a 6000-step run, 12.6 / 9.7 / 6.4 / 4.9 / 4.3 % after
750 / 1500 / 3000 / 4500 / 6000 steps with 4096 training points, within 0.15 of that with
65536, so the sample size is not the limit.  The UVP falls roughly as steps^(−1/2).  Full's
Task A now gets ``FULL_STEPS`` = 10 000 NCF steps (the brief's inferred range is 5–20k) and
2000 ICNN outer steps; Tasks B and C keep their 2000 (``toy_colour_steps``), and the timed fits
of claim (3) keep their 400 steps (``timing_fraction`` = 25).  That is about 4–5 core-hours
on CPU (≈ 24 ms per NCF step): more than the hour a CPU full is meant to take, or minutes on a
GPU (``--device cuda``).  At the rate above it leaves d = 16 near 3 % (1 % would take ~200k
steps of this recipe, out of CPU reach); claim (1) is reported as it comes, the budget was not
chosen from its verdict.

Claims (thresholds of the brief fixed before any run; margins added in issue 18, see "Verdict
margins"), each decided by a named test of :mod:`optzoo.experiment.verdicts`:

(1) Low L²-UVP in both directions from one network: at every d, ``within(−∞, uvp_level)`` on
    NCF's per-seed forward and backward L²-UVP (the brief's 1 %; the paper reports 0.01–0.09 %
    at d ≤ 8); ``all_of`` the 2·|dims| cells.
(2) Stable training: in every NCF trial (all tasks) the loss is finite and none of its 10
    window means rises above the lowest earlier one by more than 0.1 × the first window's mean
    (the initial loss level): ``bound_holds`` on each trial's largest rise
    max_i (c_i − min_{j<i} c_j)/|c_0| ≤ 0.1 (a non-finite loss is a violation).  Measured
    against the initial loss, not the running minimum (issue 23): at its noise floor the loss
    (the unbiased energy distance fluctuates around 0) made a relative tolerance on the
    running minimum flag flat curves as unstable.  Guard: a loss that does not move is stable
    trivially — if some NCF trial's last window mean is not at least ``min_loss_drop`` below
    its first, a held verdict becomes *inconclusive* (``not_acting``).
(3) Competitive with the ICNN min–max baseline at equal or lower time: at every d,
    ``noninferior`` on the per-seed log forward-UVP ratio NCF / ICNN (paired by seed: same data)
    with margin log(1 + ``uvp_rel_margin``), and ``ratio_bound`` (at most ``time_slack``) on the
    ``timing`` trial of that d, which fits NCF and the ICNN alternately in one process
    (:func:`~optzoo.experiment.verdicts.interleaved`, ``timing_pairs`` pairs after one warm-up
    each).  To fit in the quick budget the timed fits run 1/``timing_fraction`` of each
    method's steps (NCF ``steps``, ICNN ``icnn_steps`` outer steps, the same fraction for both):
    each step costs the same throughout training, so the ratio of the shortened fits is that of
    the full ones up to the fixed set-up cost, which is alike for both.  ``all_of`` the cells.
(4) Colour transfer: NCF beats the ICNN baseline on both colour metrics (the paper: NCF beats
    NOT and MM-v1): ``superior`` of the per-seed histogram intersection by ``min_effect_hist``
    and ``superior`` (lower) of the per-seed log energy distance by ``min_effect_log_ed``,
    paired by seed (same pixels); ``all_of`` the two.
(5) Ablation (only when ``ablation_dims`` is not empty): at every ablation d the implicit
    formula beats the HJ-PINN residual: ``superior`` (lower) on the per-seed log of the mean
    (forward + backward)/2 UVP by log(1 + ``uvp_rel_margin``); ``all_of`` over d.
(6) 2-D toys: per toy, ``within(−∞, 3)`` on NCF's per-seed energy distance / sampling floor and
    ``within(0.9, 1.1)`` on its per-seed transport cost / ``ot.emd2`` cost; ``all_of``.

Rules changed in issue 18 (all the old ones compared means without a CI): (1), (6) now need the
CI of the mean inside the threshold; (2) gained the flat-loss guard; (3) counted a tie in UVP as
competitive with no CI, and took the fit times from trials that ran concurrently on a loaded
machine — now a fixed non-inferiority margin and interleaved timings (new ``timing`` trials, one
per d; every other trial key is unchanged); (4) counted ties (≥ / ≤ of means) as wins — now
superiority by a minimal effect; (5) compared means — now superiority with a minimal effect.

Verdict margins (preset fields, the same for every preset; none is a trial parameter):

* ``uvp_level = 1``: the brief's "< 1 %" L²-UVP.
* ``uvp_rel_margin = 0.1``: a UVP 10 % above the baseline's is still "competitive", more is
  not; relative because UVPs span orders of magnitude across d.  Also the minimal gain of (5).
* ``time_slack = 1.1``: "equal or lower time", with 10 % for timer and scheduling noise.
* ``min_effect_hist = 0.01``: one point of histogram intersection (a fraction in [0, 1]).
* ``min_effect_log_ed = 0.05``: a 5 % lower energy distance.
* ``min_loss_drop = 0.1``: a loss that falls by less than 10 % over training has not trained.
* ``toy_floor_factor = 3``, ``toy_cost_tol = 0.1``: the thresholds of (6), fixed before any run.

Trials are single-threaded; the neural methods run on ``device`` (``--device``), POT on the CPU.
"""

from __future__ import annotations

import math
import resource
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment.stats import fmt_values as _fmt
from optzoo.experiment.stats import metric_values as _vals
from optzoo.experiment.verdicts import (
    all_of,
    bound_holds,
    by_seed,
    interleaved,
    noninferior,
    not_acting,
    ratio_bound_from_metrics,
    superior,
    undecided,
    within,
)
from optzoo.report.figures import category_panel, curves_panel, grid, save
from optzoo.transport.hj_optimal_transport import (
    HJOptimalTransport,
    is_stable,
    largest_rise,
    window_means,
)
from optzoo.transport.icnn_ot import ICNNOptimalTransport
from optzoo.transport.problems import (
    colour_clouds,
    energy_distance_np,
    gaussian_pair,
    histogram_intersection,
    image_pixels,
    l2_uvp,
    toy_2d,
)

SLUG = "hj-optimal-transport"
WINDOWS = 10
COLOUR_PAIR = ("astronaut", "coffee")
STABLE_TOL = 0.1  # used inside the trials (the stored ``stable`` flag) and by claim (2)
SINKHORN_ITERS = 1000  # POT's default; a capped budget, reported as such
FULL_STEPS = 10_000  # NCF steps of the full preset's Task A (module docstring, "Budget")


# -- configuration ---------------------------------------------------------------------------

@dataclass(frozen=True)
class HJOTConfig(Preset):
    """Settings of the reproduction.

    Args:
        seeds: seeds per (method, problem).
        dims: Task A dimensions.
        ablation_dims: Task A dimensions where HJ-PINN and MMD-only are also run.
        n_train: training samples per side (Tasks A, B); also the POT problem size.
        n_test: held-out samples per side for the metrics.
        steps: NCF Adam steps (also HJ-PINN, MMD-only).
        hidden / layers: NCF MLP; the ICNNs use the same width and depth.
        batch_size: NCF and ICNN minibatch per side.
        lr: NCF learning rate (decayed ×0.1 over training); the ICNN uses ``icnn_lr``.
        icnn_steps / icnn_inner: ICNN outer steps and critic steps per outer step.
        icnn_lr: ICNN learning rate.
        toys: Task B targets (source: 8 Gaussians); empty skips Task B.
        toy_icnn: also run the ICNN on Task B.
        toy_colour_steps: NCF steps of Tasks B and C (0: ``steps``); their ICNN outer steps
            scale with it (``icnn_steps · toy_colour_steps / steps``, the same time ratio).
        colour_n: Task C training pixels per photo (0 skips Task C).
        colour_eval: Task C source pixels transported for the metrics.
        sinkhorn_reg: entropic regularisation of the Sinkhorn baselines (relative to the
            median squared distance of the training clouds).
        timing_pairs / timing_fraction: interleaved (NCF, ICNN) fit pairs of each ``timing``
            trial, which fits 1/timing_fraction of each method's steps.
        uvp_level, uvp_rel_margin, time_slack, min_effect_hist, min_effect_log_ed,
            min_loss_drop, toy_floor_factor, toy_cost_tol: the claims' thresholds, margins
            and guard ("Verdict margins" in the module docstring); not trial parameters.
    """

    seeds: int = 3
    dims: tuple[int, ...] = (2, 4)
    ablation_dims: tuple[int, ...] = ()
    n_train: int = 2048
    n_test: int = 4096
    steps: int = 500
    hidden: int = 64
    layers: int = 3
    batch_size: int = 256
    lr: float = 3e-3
    icnn_steps: int = 100
    icnn_inner: int = 10
    icnn_lr: float = 1e-3
    toys: tuple[str, ...] = ("moons",)
    toy_icnn: bool = False
    toy_colour_steps: int = 0
    colour_n: int = 1000
    colour_eval: int = 4000
    sinkhorn_reg: float = 0.05
    timing_pairs: int = 6
    timing_fraction: int = 5
    uvp_level: float = 1.0
    uvp_rel_margin: float = 0.1
    time_slack: float = 1.1
    min_effect_hist: float = 0.01
    min_effect_log_ed: float = 0.05
    min_loss_drop: float = 0.1
    toy_floor_factor: float = 3.0
    toy_cost_tol: float = 0.1

    def validate(self) -> None:
        super().validate()
        if not self.dims or any(d < 1 for d in self.dims):
            raise ConfigError(f"dims: expected positive dimensions, got {self.dims}")
        if any(d not in self.dims for d in self.ablation_dims):
            raise ConfigError(f"ablation_dims: expected a subset of dims {self.dims}, "
                              f"got {self.ablation_dims}")
        for t in self.toys:
            if t not in ("moons", "checkerboard"):
                raise ConfigError(f"toys: expected 'moons' / 'checkerboard', got {t!r}")
        for name in ("n_train", "n_test", "steps", "hidden", "layers", "batch_size",
                     "icnn_steps", "icnn_inner", "colour_eval"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected >= 1, got {getattr(self, name)}")
        if self.n_train < 16:
            raise ConfigError(f"n_train: expected >= 16, got {self.n_train}")
        if self.toy_colour_steps < 0:
            raise ConfigError(f"toy_colour_steps: expected >= 0 (0: steps), got "
                              f"{self.toy_colour_steps}")
        if self.colour_n < 0:
            raise ConfigError(f"colour_n: expected >= 0, got {self.colour_n}")
        if self.timing_pairs < 2 or self.timing_fraction < 1:
            raise ConfigError(f"timing_pairs, timing_fraction: expected >= 2 and >= 1, got "
                              f"{self.timing_pairs}, {self.timing_fraction}")
        for name in ("lr", "icnn_lr", "sinkhorn_reg", "uvp_level", "uvp_rel_margin",
                     "time_slack", "min_effect_hist", "min_effect_log_ed", "min_loss_drop",
                     "toy_floor_factor", "toy_cost_tol"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name}: expected > 0, got {getattr(self, name)}")


PRESETS = {
    "smoke": HJOTConfig(seeds=1, dims=(2,), ablation_dims=(2,), n_train=128, n_test=256,
                        steps=20, hidden=16, layers=2, batch_size=64, icnn_steps=4,
                        icnn_inner=2, toy_icnn=True, colour_n=128, colour_eval=256),
    "quick": HJOTConfig(),
    # full: Task A gets FULL_STEPS (issue 23, "Budget" in the module docstring); Tasks B and C
    # keep the 2000 steps they had (their trial keys are unchanged)
    "full": HJOTConfig(seeds=5, dims=(2, 4, 8, 16), ablation_dims=(2, 8), n_train=4096,
                       n_test=8192, steps=FULL_STEPS, batch_size=512,
                       icnn_steps=FULL_STEPS // 5, toys=("moons", "checkerboard"),
                       toy_icnn=True, toy_colour_steps=2000, colour_n=3000,
                       colour_eval=10000, timing_fraction=FULL_STEPS // 400),
}


#: configuration fields that are not trial parameters (so adding one keeps every trial key)
NOT_PARAMS = ("seeds", "dims", "ablation_dims", "toys", "toy_icnn", "toy_colour_steps",
              "colour_n", "colour_eval",
              "timing_pairs", "timing_fraction", "uvp_level", "uvp_rel_margin", "time_slack",
              "min_effect_hist", "min_effect_log_ed", "min_loss_drop", "toy_floor_factor",
              "toy_cost_tol")


def trials(cfg: HJOTConfig) -> list[Trial]:
    common = {k: v for k, v in cfg.to_dict().items() if k not in NOT_PARAMS}
    bc = dict(common)  # Tasks B and C
    if cfg.toy_colour_steps:
        bc["steps"] = cfg.toy_colour_steps
        bc["icnn_steps"] = max(1, round(cfg.icnn_steps * cfg.toy_colour_steps / cfg.steps))
    out: list[Trial] = []
    for d in cfg.dims:
        methods = ["ncf", "icnn", "pot_emd", "pot_sinkhorn"]
        if d in cfg.ablation_dims:
            methods += ["hj_pinn", "mmd_only"]
        out += [Trial(method=m, problem=f"gaussian_d{d}", seed=s, params={**common, "dim": d})
                for m in methods for s in range(cfg.seeds)]
    for toy in cfg.toys:
        methods = ["ncf", "pot_emd", "pot_sinkhorn"] + (["icnn"] if cfg.toy_icnn else [])
        out += [Trial(method=m, problem=f"toy_8gaussians_{toy}", seed=s,
                      params={**bc, "toy": toy})
                for m in methods for s in range(cfg.seeds)]
    if cfg.colour_n:
        out += [Trial(method=m, problem="colour_" + "_".join(COLOUR_PAIR), seed=s,
                      params={**bc, "colour_n": cfg.colour_n,
                              "colour_eval": cfg.colour_eval})
                for m in ("ncf", "icnn", "pot_emd", "pot_sinkhorn") for s in range(cfg.seeds)]
    # claim (3)'s wall-time half: NCF and ICNN fits timed interleaved in one process, per d
    out += [Trial(method="timing", problem=f"gaussian_d{d}", seed=0,
                  params={**common, "dim": d, "pairs": cfg.timing_pairs,
                          "fraction": cfg.timing_fraction}) for d in cfg.dims]
    return out


# -- one trial ---------------------------------------------------------------------------------

def _neural(method: str, p: dict, seed: int, device: str):
    if method == "icnn":
        return ICNNOptimalTransport(hidden=int(p["hidden"]), layers=int(p["layers"]),
                                    steps=int(p["icnn_steps"]), inner_steps=int(p["icnn_inner"]),
                                    batch_size=int(p["batch_size"]), lr=float(p["icnn_lr"]),
                                    device=device, seed=seed)
    extra = {"hj_pinn": {"residual": "pinn"}, "mmd_only": {"hj_weight": 0.0}}.get(method, {})
    return HJOptimalTransport(hidden=int(p["hidden"]), layers=int(p["layers"]),
                              steps=int(p["steps"]), batch_size=int(p["batch_size"]),
                              lr=float(p["lr"]), device=device, seed=seed, **extra)


def _curve(model) -> dict:
    if not isinstance(model, HJOptimalTransport):
        return {}
    curve = window_means(model.history_["loss"], WINDOWS)
    out = {f"curve_{i:02d}": v for i, v in enumerate(curve)}
    out["stable"] = is_stable(curve, STABLE_TOL)
    out["final_hj"] = float(np.mean(model.history_["hj"][-max(1, len(curve)):]))
    return out


def _barycentric(xs: np.ndarray, xt: np.ndarray, method: str, reg: float) -> tuple:
    import ot

    a = np.full(len(xs), 1.0 / len(xs))
    b = np.full(len(xt), 1.0 / len(xt))
    M = ot.dist(xs, xt)
    t0 = time.perf_counter()
    if method == "pot_emd":
        plan = ot.emd(a, b, M, numItermax=10_000_000)
    else:
        plan = ot.sinkhorn(a, b, M / np.median(M), reg, numItermax=SINKHORN_ITERS)
    seconds = time.perf_counter() - t0
    mapped = plan @ xt / plan.sum(1, keepdims=True)
    return mapped, seconds, float((plan * M).sum())


def _run_gaussian(trial: Trial, device: str) -> dict:
    p, seed, m = trial.params, trial.seed, trial.method
    d = int(p["dim"])
    prob = gaussian_pair(d, 10_000 + seed)
    rng = np.random.default_rng(20_000 + seed)
    n, n_test = int(p["n_train"]), int(p["n_test"])
    xs, xt = prob.sample_source(n, rng), prob.sample_target(n, rng)
    w2 = prob.w2_squared()
    if m.startswith("pot_"):
        mapped, seconds, _ = _barycentric(xs, xt, m, float(p["sinkhorn_reg"]))
        cost = float(np.mean(np.sum((mapped - xs) ** 2, 1)))
        return {"uvp_fwd": l2_uvp(mapped, prob.forward(xs), prob.target_variance()),
                "cost_err": abs(cost - w2) / w2, "fit_wall_s": seconds, "w2": w2}
    model = _neural(m, p, seed, device).fit(xs, xt)
    xe, ye = prob.sample_source(n_test, rng), prob.sample_target(n_test, rng)
    tx = model.transform(xe)
    back = model.inverse_transform(ye)
    cost = float(np.mean(np.sum((tx - xe) ** 2, 1)))
    out = {"uvp_fwd": l2_uvp(tx, prob.forward(xe), prob.target_variance()),
           "uvp_bwd": l2_uvp(back, prob.inverse(ye), prob.source_variance()),
           "inv_consistency": float(np.mean(np.linalg.norm(model.inverse_transform(tx) - xe,
                                                           axis=1))),
           "cost_err": abs(cost - w2) / w2, "fit_wall_s": model.fit_seconds_, "w2": w2,
           "peak_mem_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    return {**out, **_curve(model)}


def _run_toy(trial: Trial, device: str) -> dict:
    import ot

    p, seed, m = trial.params, trial.seed, trial.method
    rng = np.random.default_rng(30_000 + seed)
    n = int(p["n_train"])
    xs, xt = toy_2d("8gaussians", n, rng), toy_2d(p["toy"], n, rng)
    xe, ye = toy_2d("8gaussians", n, rng), toy_2d(p["toy"], n, rng)
    var_t = float(xt.var(0).sum())
    floor = energy_distance_np(xt, ye)
    emd_plan = ot.emd(np.full(n, 1 / n), np.full(n, 1 / n), ot.dist(xs, xt))
    emd_map = n * emd_plan @ xt
    emd_cost = float(ot.emd2(np.full(n, 1 / n), np.full(n, 1 / n), ot.dist(xs, xt)))
    out = {"ed_floor": floor, "emd_cost": emd_cost}
    if m.startswith("pot_"):
        mapped, seconds, cost = _barycentric(xs, xt, m, float(p["sinkhorn_reg"]))
        out.update({"ed": energy_distance_np(mapped, ye), "cost": cost, "fit_wall_s": seconds,
                    "uvp_vs_emd": l2_uvp(mapped, emd_map, var_t)})
        return out
    model = _neural(m, p, seed, device).fit(xs, xt)
    tx = model.transform(xs)
    out.update({"ed": energy_distance_np(model.transform(xe), ye),
                "cost": float(np.mean(np.sum((tx - xs) ** 2, 1))),
                "fit_wall_s": model.fit_seconds_, "uvp_vs_emd": l2_uvp(tx, emd_map, var_t)})
    te = model.transform(xe[:64])
    for i in range(64):  # a few transported points for the figure
        out[f"pt_{i:02d}_x"], out[f"pt_{i:02d}_y"] = float(te[i, 0]), float(te[i, 1])
    return {**out, **_curve(model)}


def _run_colour(trial: Trial, device: str) -> dict:
    import ot

    p, seed, m = trial.params, trial.seed, trial.method
    rng = np.random.default_rng(40_000 + seed)
    xs, xt = colour_clouds(*COLOUR_PAIR, int(p["colour_n"]), rng)
    src_all, tgt_all = image_pixels(COLOUR_PAIR[0]), image_pixels(COLOUR_PAIR[1])
    xe = src_all[rng.choice(len(src_all), int(p["colour_eval"]), replace=False)]
    ye = tgt_all[rng.choice(len(tgt_all), min(4000, int(p["colour_eval"])), replace=False)]
    t0 = time.perf_counter()
    if m == "pot_emd":
        model = ot.da.EMDTransport().fit(Xs=xs, Xt=xt)
    elif m == "pot_sinkhorn":
        model = ot.da.SinkhornTransport(reg_e=float(p["sinkhorn_reg"]), norm="median",
                                        max_iter=SINKHORN_ITERS).fit(Xs=xs, Xt=xt)
    else:
        model = _neural(m, p, seed, device).fit(xs, xt)
    fit_s = time.perf_counter() - t0
    mapped = model.transform(Xs=xe) if m.startswith("pot_") else model.transform(xe)
    sub = mapped[:min(len(mapped), 4000)]
    out = {"hist_intersection": histogram_intersection(mapped, tgt_all),
           "hist_intersection_identity": histogram_intersection(xe, tgt_all),
           "ed": energy_distance_np(sub, ye), "ed_identity": energy_distance_np(xe[:len(sub)], ye),
           "fit_wall_s": fit_s}
    return {**out, **_curve(model)}


def _run_timing(trial: Trial, device: str) -> dict:
    """NCF and ICNN fits on the Task A data of this d, timed as interleaved pairs (A B, B A, …)
    in this process; each fit runs 1/fraction of its method's steps (module docstring)."""
    p, seed = trial.params, trial.seed
    d, frac = int(p["dim"]), int(p["fraction"])
    prob = gaussian_pair(d, 10_000 + seed)
    rng = np.random.default_rng(20_000 + seed)
    n = int(p["n_train"])
    xs, xt = prob.sample_source(n, rng), prob.sample_target(n, rng)
    q = {**p, "steps": max(1, int(p["steps"]) // frac),
         "icnn_steps": max(1, int(p["icnn_steps"]) // frac)}

    def sync():
        if str(device).startswith("cuda"):
            torch.cuda.synchronize()

    def ncf():
        _neural("ncf", q, seed, device).fit(xs, xt)
        sync()

    def icnn():
        _neural("icnn", q, seed, device).fit(xs, xt)
        sync()

    out = interleaved(ncf, icnn, pairs=int(p["pairs"]), warmup=1).metrics("fit")
    return {**out, "timed_steps": q["steps"], "timed_icnn_steps": q["icnn_steps"]}


def run_trial(trial: Trial, device: str) -> dict:
    torch.set_num_threads(1)
    if trial.method == "timing":
        return _run_timing(trial, device)
    if trial.problem.startswith("gaussian"):
        return _run_gaussian(trial, device)
    if trial.problem.startswith("toy"):
        return _run_toy(trial, device)
    return _run_colour(trial, device)


# -- summary -----------------------------------------------------------------------------------

def _mean(vals: list[float]) -> float:
    return float(np.mean(vals)) if vals else math.nan


def _by(results: list[Result], problem: str, method: str) -> list[Result]:
    return [r for r in results if r.trial.problem == problem and r.trial.method == method]


def summarize(results: list[Result], cfg: HJOTConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    tables, claims, figures = [], [], []
    a_methods = ("ncf", "icnn", "hj_pinn", "mmd_only", "pot_emd", "pot_sinkhorn")
    rows = []
    for d in cfg.dims:
        for m in a_methods:
            rs = _by(results, f"gaussian_d{d}", m)
            if rs:
                rows.append([d, m, _fmt(_vals(rs, "uvp_fwd")), _fmt(_vals(rs, "uvp_bwd")),
                             _fmt(_vals(rs, "inv_consistency")), _fmt(_vals(rs, "cost_err")),
                             _fmt(_vals(rs, "fit_wall_s")), len(rs)])
    tables.append(Table(
        title="Task A, Gaussians (mean ± 95% CI over seeds): L²-UVP % forward on held-out "
              "source / backward on held-out target (POT rows: in-sample barycentric map, "
              "forward only), inverse consistency E‖T̂⁻¹(T̂(x)) − x‖, relative error of the "
              "transport cost vs the closed-form W₂², fit seconds",
        columns=["d", "method", "UVP fwd %", "UVP bwd %", "inv. consistency", "cost error",
                 "fit s", "n"], rows=rows))
    claims += [_claim_uvp(results, cfg), _claim_stable(results, cfg),
               _claim_icnn(results, cfg)]
    timing = sorted((r for r in results if r.trial.method == "timing"),
                    key=lambda r: int(r.trial.params["dim"]))
    if timing:
        tables.append(Table(
            title="Fit wall time NCF vs ICNN, timed as interleaved pairs in one process (each "
                  f"fit runs 1/{cfg.timing_fraction} of its steps; module docstring)",
            columns=["d", "pairs", "NCF steps", "ICNN outer steps", "NCF median s",
                     "ICNN median s", "geometric-mean ratio NCF / ICNN"],
            rows=[[int(r.trial.params["dim"]), int(r.metrics["fit_pairs"]),
                   int(r.metrics["timed_steps"]), int(r.metrics["timed_icnn_steps"]),
                   f"{r.metrics['fit_a_s']:.3g}", f"{r.metrics['fit_b_s']:.3g}",
                   f"{r.metrics['fit_ratio']:.3g}"] for r in timing]))

    colour = "colour_" + "_".join(COLOUR_PAIR)
    crows = []
    for m in ("ncf", "icnn", "pot_emd", "pot_sinkhorn"):
        rs = _by(results, colour, m)
        if rs:
            crows.append([m, _fmt(_vals(rs, "hist_intersection")), _fmt(_vals(rs, "ed"), 3),
                          _fmt(_vals(rs, "fit_wall_s")), len(rs)])
    if crows:
        ident = [r for r in results if r.trial.problem == colour]
        crows.append(["identity (no transport)",
                      _fmt(_vals(ident, "hist_intersection_identity")),
                      _fmt(_vals(ident, "ed_identity")), "—", len(ident)])
        tables.append(Table(
            title=f"Task C, colour transfer {COLOUR_PAIR[0]} → {COLOUR_PAIR[1]}: histogram "
                  "intersection with the target photo (16³ bins, ↑) and energy distance to "
                  "target pixels (↓) of transported held-out source pixels",
            columns=["method", "hist. intersection", "energy distance", "fit s", "n"],
            rows=crows))
        claims.append(_claim_colour(results, cfg))

    if cfg.ablation_dims:
        claims.append(_claim_ablation(results, cfg))

    if cfg.toys:
        trows = []
        for toy in cfg.toys:
            prob = f"toy_8gaussians_{toy}"
            for m in ("ncf", "icnn", "pot_emd", "pot_sinkhorn"):
                rs = _by(results, prob, m)
                if rs:
                    trows.append([toy, m, _fmt(_vals(rs, "ed"), 3), _fmt(_vals(rs, "cost")),
                                  _fmt(_vals(rs, "uvp_vs_emd")), _fmt(_vals(rs, "fit_wall_s")),
                                  len(rs)])
            allr = [r for r in results if r.trial.problem == prob]
            floor, emd_cost = _mean(_vals(allr, "ed_floor")), _mean(_vals(allr, "emd_cost"))
            trows.append([toy, "sampling floor / ot.emd2", f"{floor:.3g}", f"{emd_cost:.4g}",
                          "0", "—", len(allr)])
        tables.append(Table(
            title="Task B, 2-D toys from 8 Gaussians: energy distance to held-out target "
                  "samples (POT rows: in-sample barycentric map), transport cost, UVP % "
                  "against the exact discrete OT assignment on the training points",
            columns=["toy", "method", "energy distance", "cost", "UVP vs emd %", "fit s", "n"],
            rows=trows))
        claims.append(_claim_toys(results, cfg))
        figures.append(_plot_toys(results, cfg, outdir / "toys.png"))
    figures.append(_plot_curves(results, cfg, outdir / "gaussians.png"))
    return Summary(tables=tables, figures=figures, claims=claims, notes=_notes(cfg))


def _undecided(why: str):
    """An inconclusive verdict for a run that lacks the trials a claim needs (a partial
    configuration): nothing was measured to decide it."""
    return undecided(why)


def _ncf(r: Result) -> bool:
    return r.trial.method == "ncf"


def _claim_uvp(results: list[Result], cfg: HJOTConfig) -> Claim:
    cells, parts = {}, []
    for d in cfg.dims:
        rs = _by(results, f"gaussian_d{d}", "ncf")
        fwd, bwd = _vals(rs, "uvp_fwd"), _vals(rs, "uvp_bwd")
        if fwd and bwd:
            cells[f"d={d} forward"] = within(fwd, -math.inf, cfg.uvp_level)
            cells[f"d={d} backward"] = within(bwd, -math.inf, cfg.uvp_level)
        parts.append(f"d={d}: fwd {_fmt(fwd)} %, bwd {_fmt(bwd)} %")
    return Claim(
        text=f"(1) One NCF network gives low L²-UVP in both directions: the 95% CI of the mean "
             f"forward and of the mean backward UVP lie below {cfg.uvp_level:g} % at every d "
             "(paper: 0.01–0.09 % at d ≤ 8).",
        evidence="; ".join(parts),
        verdict=all_of(cells) if cells else _undecided("no Task A NCF trials"))


def _rise(r: Result) -> tuple[float, float]:
    """(largest rise of a window mean over the lowest earlier one, in units of the first
    window mean — :func:`~optzoo.transport.hj_optimal_transport.largest_rise` —, relative drop
    from the first window to the last) of one trial's stored training curve."""
    c = np.asarray([float(r.metrics[f"curve_{i:02d}"]) for i in range(WINDOWS)
                    if r.metrics.get(f"curve_{i:02d}") is not None])
    if c.size < 2 or not np.isfinite(c).all():
        return 1e300, 0.0  # a non-finite loss is a violation of "finite and stable"
    return largest_rise(c), float((c[0] - c[-1]) / max(abs(c[0]), 1e-300))


def _claim_stable(results: list[Result], cfg: HJOTConfig) -> Claim:
    ncf = [r for r in results if _ncf(r)]
    text = (f"(2) NCF trains stably: in every NCF trial the loss is finite and no window mean "
            f"({WINDOWS} windows) rises above the lowest earlier one by more than "
            f"{STABLE_TOL:.0%} of the first window's mean (the initial loss level), while the "
            f"loss falls by at least {cfg.min_loss_drop:.0%} from the first window to the last.")
    if not ncf:
        return Claim(text=text, evidence="no NCF trials",
                     verdict=_undecided("no NCF trials"))
    rises, drops = zip(*(_rise(r) for r in ncf), strict=True)
    verdict = bound_holds(rises, STABLE_TOL)
    flat = [f"{r.trial.problem} s{r.trial.seed}" for r, dr in zip(ncf, drops, strict=True)
            if dr < cfg.min_loss_drop]
    if verdict.held and flat:
        verdict = not_acting(verdict, f"the loss falls by less than {cfg.min_loss_drop:.0%} in "
                             f"{', '.join(flat)}: a curve that does not move is stable "
                             "trivially")
    return Claim(
        text=text,
        evidence=f"{sum(x <= STABLE_TOL for x in rises)}/{len(rises)} NCF trials stable; "
                 f"largest rise {max(rises):.3g} × initial loss; loss drop first → last window "
                 f"{_fmt(list(drops))}",
        verdict=verdict)


def _claim_icnn(results: list[Result], cfg: HJOTConfig) -> Claim:
    cells, parts = {}, []
    timing = {int(r.trial.params["dim"]): r.metrics for r in results
              if r.trial.method == "timing"}
    margin = math.log1p(cfg.uvp_rel_margin)
    for d in cfg.dims:
        prob = f"gaussian_d{d}"
        nc = by_seed(results, "uvp_fwd", where=lambda r, p=prob: _ncf(r) and r.trial.problem == p)
        ic = by_seed(results, "uvp_fwd",
                     where=lambda r, p=prob: r.trial.method == "icnn" and r.trial.problem == p)
        if nc and ic:
            cells[f"d={d} UVP"] = noninferior(nc, ic, margin=margin, direction="less",
                                              log_ratio=True)
        note = "no interleaved timing"
        if d in timing:
            m = timing[d]
            cells[f"d={d} time"] = ratio_bound_from_metrics([m], "fit", at_most=cfg.time_slack)
            note = (f"interleaved fit time {m['fit_a_s']:.3g} vs {m['fit_b_s']:.3g} s, ratio "
                    f"{m['fit_ratio']:.3g} ({int(m['fit_pairs'])} pairs)")
        parts.append(f"d={d}: UVP {_mean(list(nc.values())):.3g} vs "
                     f"{_mean(list(ic.values())):.3g} %, {note}")
    if not cells:
        verdict = _undecided("no Task A NCF and ICNN trials")
    else:
        verdict = all_of(cells)
        missing = [d for d in cfg.dims if d not in timing]
        if missing:
            verdict = not_acting(verdict, f"no interleaved timing trial at d = {missing}: the "
                                 "wall-time half cannot be decided")
    return Claim(
        text=f"(3) NCF is competitive with the ICNN min–max baseline (MM-v1) at equal or lower "
             f"time: at every d its forward UVP is at most {1 + cfg.uvp_rel_margin:g} × ICNN's "
             f"(non-inferiority, paired by seed) and its fit time, measured interleaved with "
             f"ICNN's in one process, at most {cfg.time_slack:g} × ICNN's.",
        evidence="NCF vs ICNN — " + "; ".join(parts), verdict=verdict)


def _claim_colour(results: list[Result], cfg: HJOTConfig) -> Claim:
    colour = "colour_" + "_".join(COLOUR_PAIR)

    def vals(method, key):
        return by_seed(results, key, where=lambda r: r.trial.problem == colour
                       and r.trial.method == method)

    hn, hi = vals("ncf", "hist_intersection"), vals("icnn", "hist_intersection")
    en, ei = vals("ncf", "ed"), vals("icnn", "ed")
    if hn and hi:
        verdict = all_of({
            "histogram intersection": superior(hn, hi, min_effect=cfg.min_effect_hist,
                                               direction="greater"),
            "energy distance": superior(en, ei, min_effect=cfg.min_effect_log_ed,
                                        direction="less", log_ratio=True)})
    else:
        verdict = _undecided("no colour-transfer NCF and ICNN trials")
    return Claim(
        text=f"(4) Colour transfer: NCF beats the ICNN baseline on both colour metrics "
             f"(paper: NCF beats NOT and MM-v1): histogram intersection higher by more than "
             f"{cfg.min_effect_hist:g} and energy distance lower by more than "
             f"{cfg.min_effect_log_ed:g} in log, paired by seed.",
        evidence=f"HI {_mean(list(hn.values())):.3f} vs {_mean(list(hi.values())):.3f}; ED "
                 f"{_mean(list(en.values())):.4f} vs {_mean(list(ei.values())):.4f}",
        verdict=verdict)


def _both(r: Result) -> float:
    return (float(r.metrics["uvp_fwd"]) + float(r.metrics["uvp_bwd"])) / 2


def _claim_ablation(results: list[Result], cfg: HJOTConfig) -> Claim:
    cells, parts = {}, []
    for d in cfg.ablation_dims:
        prob = f"gaussian_d{d}"
        per = {m: {r.trial.seed: _both(r) for r in _by(results, prob, m)}
               for m in ("ncf", "hj_pinn", "mmd_only")}
        if per["ncf"] and per["hj_pinn"]:
            cells[f"d={d}"] = superior(per["ncf"], per["hj_pinn"],
                                       min_effect=math.log1p(cfg.uvp_rel_margin),
                                       direction="less", log_ratio=True)
        parts.append(f"d={d}: implicit {_mean(list(per['ncf'].values())):.3g}, PINN "
                     f"{_mean(list(per['hj_pinn'].values())):.3g}, MMD-only "
                     f"{_mean(list(per['mmd_only'].values())):.3g} %")
    return Claim(
        text="(5) The implicit-formula loss beats the HJ-PINN residual (same network and "
             "MMD term): lower (forward + backward)/2 UVP at every ablation d, by more than "
             f"{cfg.uvp_rel_margin:.0%} (paired by seed).",
        evidence="; ".join(parts),
        verdict=all_of(cells) if cells else _undecided("no ablation trials"))


def _claim_toys(results: list[Result], cfg: HJOTConfig) -> Claim:
    cells, parts = {}, []
    for toy in cfg.toys:
        nc = _by(results, f"toy_8gaussians_{toy}", "ncf")
        if not nc:
            continue
        ed = [float(r.metrics["ed"]) / float(r.metrics["ed_floor"]) for r in nc]
        cost = [float(r.metrics["cost"]) / float(r.metrics["emd_cost"]) for r in nc]
        cells[f"{toy} energy distance / floor"] = within(ed, -math.inf, cfg.toy_floor_factor)
        cells[f"{toy} cost / emd2"] = within(cost, 1 - cfg.toy_cost_tol, 1 + cfg.toy_cost_tol)
        parts.append(f"{toy}: ED / floor {_fmt(ed)}; cost / emd2 {_fmt(cost)}")
    return Claim(
        text=f"(6) 2-D toys: NCF's transported held-out samples are within "
             f"{cfg.toy_floor_factor:g} × the sampling floor in energy distance and its "
             f"transport cost within {cfg.toy_cost_tol:.0%} of the exact OT cost (ot.emd2): "
             "95% CIs of the per-seed ratios inside those bounds.",
        evidence="; ".join(parts) or "no toy NCF trials",
        verdict=all_of(cells) if cells else _undecided("no toy NCF trials"))


def _notes(cfg: HJOTConfig) -> list[str]:
    return [
        "NCF settings not given in the material read (network, λ, ϱ, optimiser) are the "
        "brief's inferred ones at CPU size: MLP on (x, t) "
        f"{cfg.layers}×{cfg.hidden} softplus, λ = 1, ϱ = ½ uniform on the 10 %-enlarged "
        "bounding box + ½ samples with jitter 0.05, Adam "
        f"{cfg.lr:g} decayed ×0.1, {cfg.steps} steps, batch {cfg.batch_size}, unbiased energy "
        "distance; data standardised by a common centre and scalar scale (map-preserving).",
        "Paper setting differs: the Korotin et al. W2 benchmark pairs (pretrained-network "
        "distributions, d up to 64) are replaced by Gaussians with the closed-form map; "
        "colour transfer uses scikit-image photos instead of Winter/Summer, Monet/Photo and "
        "Gogh/Photo; the paper trains far longer (its UVPs are 0.01–0.09 % at d ≤ 8).",
        f"ICNN baseline (MM-v1): {cfg.icnn_steps} outer × {cfg.icnn_inner} critic steps, "
        f"lr {cfg.icnn_lr:g}, same width/depth, weight clamping for convexity, a trained "
        "quadratic ½‖Lx‖² (L = I at start, so the maps start at the identity); its budget "
        "was set from a per-step timing so that its wall time is close to NCF's, not from "
        "results.",
        "POT ot.emd / ot.sinkhorn maps are in-sample barycentric projections (no out-of-sample "
        "map); their Gaussian UVP is measured on the training points and includes the "
        "discrete-sample error of the plan. Sinkhorn's reg is relative to the median squared "
        "distance; its iterations are capped at POT's default 1000.",
        "Peak memory: peak_mem_mb is the process high-water mark (an upper bound; CPU tensors "
        "are not tracked per trial). Wall times are single-threaded CPU.",
    ]


A_LABELS = {"ncf": "NCF", "icnn": "ICNN (MM-v1)", "hj_pinn": "HJ-PINN ablation",
            "mmd_only": "MMD-only ablation", "pot_emd": "POT exact (in-sample)",
            "pot_sinkhorn": "POT Sinkhorn (in-sample)"}


def _plot_curves(results: list[Result], cfg: HJOTConfig, path: Path) -> Figure:
    fig, ax = grid(2, panel=(6.0, 4.0))
    uvp = {A_LABELS[m]: {f"d = {d}": _vals(_by(results, f"gaussian_d{d}", m), "uvp_fwd")
                         for d in cfg.dims if _by(results, f"gaussian_d{d}", m)}
           for m in A_LABELS}
    category_panel(ax[0], {k: v for k, v in uvp.items() if v}, ylabel="forward L²-UVP (%)",
                   xlabel="dimension", title="Task A: forward L²-UVP")
    curves = {f"d = {d}": [[float(r.metrics[f"curve_{i:02d}"]) for i in range(WINDOWS)
                            if r.metrics.get(f"curve_{i:02d}") is not None]
                           for r in _by(results, f"gaussian_d{d}", "ncf")] for d in cfg.dims}
    curves_panel(ax[1], {k: v for k, v in curves.items() if v},
                 x=list(range(1, WINDOWS + 1)), xlabel="training window (tenths of the steps)",
                 ylabel="NCF loss (window mean)", title="NCF training loss")
    return save(fig, path, "Task A: forward L²-UVP per method and d (mean ± 95 % CI over "
                "seeds; log scale when the values span more than two decades; non-finite "
                "values left out); NCF training loss by window (mean ± 95 % CI over seeds)")


def _plot_toys(results: list[Result], cfg: HJOTConfig, path: Path) -> Figure:
    # sample clouds, not means: plain scatter on the grid()'s axes
    fig, axes = grid(len(cfg.toys), panel=(4.5, 4.0))
    for ax, toy in zip(axes, cfg.toys, strict=True):
        rng = np.random.default_rng(30_000)
        ref = toy_2d(toy, 1000, rng)
        ax.scatter(ref[:, 0], ref[:, 1], s=2, c="lightgray", label=f"{toy} samples")
        rs = _by(results, f"toy_8gaussians_{toy}", "ncf")
        if rs:
            m = rs[0].metrics
            pts = np.array([[m[f"pt_{i:02d}_x"], m[f"pt_{i:02d}_y"]] for i in range(64)])
            ax.scatter(pts[:, 0], pts[:, 1], s=8, c="C3", label="NCF T(x), held-out x")
        ax.set_title(f"8 Gaussians → {toy}", fontsize=9)
        ax.legend(fontsize=7)
    return save(fig, path, "Task B: NCF-transported held-out 8-Gaussian samples (seed 0) over "
                "target samples")


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Park, Liu, Zhou & Osher (ICLR 2026) at CPU scale: Neural Characteristic Flow (one "
        "HJ potential, implicit-formula residual + energy-distance MMD, closed-form forward "
        "and inverse maps) on Gaussians with the closed-form OT map (L²-UVP both directions), "
        "2-D toys and astronaut → coffee colour transfer, against the ICNN min–max baseline "
        "(MM-v1), POT exact OT and Sinkhorn, and the HJ-PINN / MMD-only ablations. "
        "Trials are single-threaded; the neural methods run on --device."),
)
