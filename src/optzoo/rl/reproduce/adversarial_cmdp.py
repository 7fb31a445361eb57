"""Reproduction ``adversarial-cmdp``: Yu, Bae & Lee, "Primal-Dual Policy Optimization for
Adversarial Linear CMDPs" (ICLR 2026, OpenReview baP3Dw7bWO, arXiv 2605.11535).  No official
code.

Setting (the brief's small-scale reproduction): an exactly linear CMDP from the low-rank
construction (:func:`optzoo.rl.random_linear_cmdp`, one instance per seed), adversarial losses
alternating between two random vectors on a doubling schedule (full information), Bernoulli cost
observations (bandit).  Budget b = midpoint between the minimum achievable cost and the cost of
the loss-optimal policy for Σ_k f^k.  Comparator: the best fixed feasible policy in hindsight by
LP over occupancy measures (HiGHS).  For each K of the grid, one run of K episodes (step sizes
depend on K); measured exactly with the true model:
    Regret(K) = Σ_k V^{π_k}_{f^k,1}(s_1) − min_{π feasible} Σ_k V^π_{f^k,1}(s_1),
    Violation(K) = Σ_k (V^{π_k}_{g,1}(s_1) − b)   (signed, as in the paper; the positive part
    Σ_k (·)₊ is reported too).

Methods: ``pdpo`` — the paper's algorithm with its step sizes (α = H⁻¹K^{−3/4}, η = H⁻²K^{−3/4},
θ = 1/K, period ⌈K^{3/4}⌉, c₁, c₂ of the paper); ``pdpo-plain`` — the same without periodic
mixing and without the dual regulariser (θ = 0, c₁ = c₂ = 0: a plain softmax primal-dual);
``pdpo-x0.3`` / ``pdpo-x3`` — the paper's algorithm with α and η scaled by 0.3 / 3 (the brief's
sensitivity sweep).

Claims (thresholds fixed before any run), each decided by a test of
:mod:`optzoo.experiment.verdicts` over the ``pdpo`` trials (one point per (seed, K)):
(1) the regret of ``pdpo`` grows sublinearly, near K^{3/4}: the log-log slope of regret on K lies
    in (−∞, ``slope_level``] (``slope``, bootstrap CI over the points; with fewer than three K,
    ``within`` on the per-seed two-point slopes); if every regret is ≤ 0, ``all_of`` over K of
    ``within(·, −∞, 0)``; with mixed signs, ``trend`` of regret / K decreasing in K;
(2) the same for the signed constraint violation.

Whether the method acts here (checked from the stored metrics before either claim is decided):
the played policies' exact loss and cost values are compared with those of the uniform policy
on the same instance (recomputed from the trial's parameters and seed; the stored ``regret``,
``violation``, ``comparator`` and ``budget`` give the played ones).  If at some K of the grid
the median seed's per-episode difference max(|ΔRegret|, |ΔViolation|) / K is below
``min_policy_move``, the policy never left uniform there, and both claims are *inconclusive*
(:func:`~optzoo.experiment.verdicts.not_acting`); if the dual Y stayed exactly 0 in every
``pdpo`` trial (stored ``dual_max``), claim (2) is inconclusive too: the violation was never
controlled by the dual the claim is about.

Verdict margins (fixed before results, the same in every preset):

* ``slope_level`` = 0.8: the old threshold, K^{3/4} with 0.05 of slack for the log factors.
* ``min_policy_move`` = 0.01: per-episode value difference from the uniform policy below which
  the policy counts as not moving (losses and costs per step lie in [0, 1]: 1 % of one step's
  range).

Rules changed by the verdict conversion (issue 18), and why: the claims were "slope of the seed
means ≤ 0.8, or the mean ≤ 0 at every K" with no confidence interval; now a bootstrap CI over
the points.  The named defect: in ``quick`` the policy stays within ≈ 0.1 % of uniform and the
dual Y is exactly 0 in every run (the step sizes are derived for K ≫ H⁴, see the notes), so the
regret grows like the uniform policy's, linearly, and a "not held" would report the setup, not
the algorithm; the not-acting check above makes both claims inconclusive there.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment import verdicts as vd
from optzoo.experiment.stats import fmt_values, metric_values
from optzoo.report.figures import color, grid, line_panel, save
from optzoo.rl import (
    PDPOConfig,
    best_fixed_policy,
    occupancy,
    random_linear_cmdp,
    run_pdpo,
    switching_losses,
)

SLUG = "adversarial-cmdp"
METHODS = {
    "pdpo": {"mixing": True, "regularised_dual": True, "step_scale": 1.0},
    "pdpo-plain": {"mixing": False, "regularised_dual": False, "step_scale": 1.0},
    "pdpo-x0.3": {"mixing": True, "regularised_dual": True, "step_scale": 0.3},
    "pdpo-x3": {"mixing": True, "regularised_dual": True, "step_scale": 3.0},
    # OPDOP (Ding et al. 2021): optimistic primal-dual for stochastic losses, no epochs, no
    # mixing, no dual regulariser, Q̂ truncated to [0, H − h], Y projected onto [0, 2H/γ],
    # α = sqrt(2 log A / (H² K)), η = 1 / sqrt(K)
    "opdop": {"baseline": "opdop"},
    # OPPO (Cai et al. 2020; Zhong & Zhang 2023): the same optimistic policy optimisation
    # without a constraint (Y ≡ 0)
    "oppo": {"baseline": "oppo"},
    # exact, no learning: the uniform policy and the comparator (best fixed feasible policy in
    # hindsight, LP on the true model) played in every episode
    "uniform": {"baseline": "uniform"},
    "oracle": {"baseline": "oracle"},
}
#: the paper's algorithm and its variants (these get the calibrated bonus and epochs)
PDPO_FAMILY = ("pdpo", "pdpo-plain", "pdpo-x0.3", "pdpo-x3")


# -- configuration ---------------------------------------------------------------------------

@dataclass(frozen=True)
class CMDPConfig(Preset):
    """Settings of the reproduction.

    Args:
        seeds: seeds (each: one CMDP instance, one loss sequence, one run per (method, K)).
        ks: the episode counts K of the grid (one independent run each).
        states, actions, dim, horizon: S, A, d, H of the linear CMDP.
        bonus_scales: the calibration grid of β_b = bonus_scale · K^{1/4} d H (= β_w), the
            paper's Õ constant.
        epoch_factors: the calibration grid of the epoch rule: a new epoch when det Λ_h grew by
            this factor (paper: 2); 0 means no epochs.
        calib_seeds, calib_k: the calibration instances (seeds 1000, 1001, …, disjoint from
            the evaluation seeds; the shape below, K = ``calib_k``).
        calib_shape: S, A, d, H of the calibration instances (a small instance whose optimum
            is known by the LP).
        methods: methods run (keys of ``METHODS``).
        slope_level: the claims' bound on the log-log slope.
        min_policy_move: per-episode value difference from the uniform policy below which the
            method counts as not acting.
    """

    seeds: int = 3
    ks: tuple[int, ...] = (300, 1000, 3000)
    states: int = 8
    actions: int = 3
    dim: int = 4
    horizon: int = 5
    bonus_scales: tuple[float, ...] = (0.0, 0.001, 0.01, 0.1)
    epoch_factors: tuple[float, ...] = (2.0, 16.0, 0.0)
    calib_seeds: int = 2
    calib_k: int = 300
    calib_shape: tuple[int, int, int, int] = (4, 2, 3, 3)
    methods: tuple[str, ...] = ("pdpo", "pdpo-plain", "opdop", "oppo", "uniform", "oracle")
    slope_level: float = 0.8
    min_policy_move: float = 0.01

    def validate(self) -> None:
        super().validate()
        if len(self.ks) < 2 or any(k < 2 for k in self.ks) or len(set(self.ks)) != len(self.ks):
            raise ConfigError(f"ks: expected >= 2 distinct values >= 2, got {self.ks}")
        for name in ("states", "actions", "dim", "horizon"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected >= 1, got {getattr(self, name)}")
        if self.actions < 2:
            raise ConfigError(f"actions: expected >= 2, got {self.actions}")
        if not self.bonus_scales or any(not b >= 0 for b in self.bonus_scales):
            raise ConfigError(f"bonus_scales: expected values >= 0, got {self.bonus_scales}")
        if not self.epoch_factors or any(not (f == 0 or f > 1) for f in self.epoch_factors):
            raise ConfigError(f"epoch_factors: expected 0 (off) or values > 1, got "
                              f"{self.epoch_factors}")
        if self.calib_seeds < 1 or self.calib_k < 2:
            raise ConfigError(f"calib_seeds, calib_k: expected >= 1 and >= 2, got "
                              f"{self.calib_seeds}, {self.calib_k}")
        if len(self.calib_shape) != 4 or min(self.calib_shape) < 1 or self.calib_shape[1] < 2:
            raise ConfigError(f"calib_shape: expected (S, A >= 2, d, H) >= 1, got "
                              f"{self.calib_shape}")
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown or "pdpo" not in self.methods:
            raise ConfigError(f"methods: expected a subset of {list(METHODS)} containing 'pdpo', "
                              f"got {self.methods}")
        if not self.slope_level > 0 or not self.min_policy_move > 0:
            raise ConfigError("slope_level, min_policy_move: expected > 0")


PRESETS = {
    "smoke": CMDPConfig(seeds=2, ks=(20, 60), states=4, actions=2, dim=3, horizon=3,
                        bonus_scales=(0.0, 0.01), epoch_factors=(2.0, 0.0), calib_seeds=1,
                        calib_k=30),
    "quick": CMDPConfig(),
    "full": CMDPConfig(seeds=10, ks=(1000, 3000, 10000), states=20, actions=4, dim=8,
                       calib_seeds=3, calib_k=1000, methods=tuple(METHODS)),
}


# -- calibration of the bonus scale and the epoch rule ------------------------------------------

@functools.lru_cache(maxsize=16)
def calibration(bonus_scales: tuple, epoch_factors: tuple, calib_seeds: int, calib_k: int,
                calib_shape: tuple) -> dict:
    """Pick β_b's constant and the epoch factor for ``pdpo`` on held-out small instances.

    Criterion (declared before any run): the mean over the calibration seeds of
    (Regret(K) + Σ_k (V_g^{π_k} − b)₊) / K at K = ``calib_k``, exact on the true model — the
    per-episode loss above the known optimum plus the per-episode constraint excess, both in
    value units.  The whole grid (bonus × epoch factor) is run; the choice is then fixed for
    every evaluation trial (its values go into the trial parameters).
    """
    S, A, d, H = calib_shape
    shape = {"states": S, "actions": A, "dim": d, "horizon": H, "K": calib_k}
    scores = {}
    for bs in bonus_scales:
        for ef in epoch_factors:
            per_seed = []
            for seed in range(1000, 1000 + calib_seeds):
                m = _run(dict(shape, bonus_scale=bs, epoch_factor=ef), seed, "pdpo")
                per_seed.append((m["regret"] + m["violation_pos"]) / calib_k)
            scores[(bs, ef)] = per_seed
    best = min(scores, key=lambda key: float(np.mean(scores[key])))
    # edges per axis, the other axis at its chosen value; bonus 0 and "no epochs" are hard ends
    tb = vd.tune("pdpo bonus_scale", {b: scores[(b, best[1])] for b in bonus_scales},
                 hard_limits=(0.0,))
    te = vd.tune("pdpo epoch factor (0 = off)",
                 {(math.inf if f == 0 else f): scores[(best[0], f)] for f in epoch_factors},
                 hard_limits=(math.inf,))
    return {"bonus_scale": best[0], "epoch_factor": best[1], "scores": scores,
            "tuned": (tb, te)}


def _calibrated(cfg: CMDPConfig) -> dict:
    return calibration(tuple(cfg.bonus_scales), tuple(cfg.epoch_factors), cfg.calib_seeds,
                       cfg.calib_k, tuple(cfg.calib_shape))


def trials(cfg: CMDPConfig) -> list[Trial]:
    cal = _calibrated(cfg)
    shape = {"states": cfg.states, "actions": cfg.actions, "dim": cfg.dim,
             "horizon": cfg.horizon, "bonus_scale": float(cal["bonus_scale"]),
             "epoch_factor": float(cal["epoch_factor"])}
    return [Trial(method=m, problem="linear-cmdp", seed=s, params={**shape, "K": int(k)})
            for m in cfg.methods for k in cfg.ks for s in range(cfg.seeds)]


# -- one trial ---------------------------------------------------------------------------------

def instance(p, seed: int):
    """The seed's CMDP, its K losses, the budget and the comparator's value."""
    H, d, K = int(p["horizon"]), int(p["dim"]), int(p["K"])
    rng = np.random.default_rng(10_000 + seed)
    cmdp = random_linear_cmdp(int(p["states"]), int(p["actions"]), d, H, rng)
    # the loss vectors of a seed do not depend on K: a run of K episodes sees the prefix
    losses = switching_losses(K, H, d, rng)
    P = cmdp.transitions
    total = cmdp.reward(losses.sum(0))
    v_min, _ = best_fixed_policy(P, cmdp.s1, cmdp.cost)
    _, pi_free = best_fixed_policy(P, cmdp.s1, total)
    c_free = float((occupancy(P, pi_free, cmdp.s1) * cmdp.cost).sum())
    budget = 0.5 * (v_min + c_free)
    opt, _ = best_fixed_policy(P, cmdp.s1, total, cmdp.cost, budget)
    return cmdp, losses, budget, opt


def _exact_run(cmdp, losses, pi) -> dict[str, np.ndarray]:
    """The per-episode values of a fixed policy ``pi`` played in every episode (exact)."""
    K = len(losses)
    q = occupancy(cmdp.transitions, pi, cmdp.s1)
    tv = 0.5 * np.abs(pi - 1.0 / cmdp.A).sum(-1)
    return {"loss_value": np.einsum("hsa,khsa->k", q, np.einsum("sad,khd->khsa", cmdp.phi,
                                                                   losses)),
            "cost_value": np.full(K, float((q * cmdp.cost).sum())), "dual": np.zeros(K),
            "epoch": np.zeros(K), "terms": np.ones(K),
            "policy_tv": np.full(K, float((q.sum(-1) * tv).sum() / cmdp.H))}


def _run(p, seed: int, method: str) -> dict:
    """One run of ``method`` on the seed's instance with parameters ``p``; flat metrics."""
    cmdp, losses, budget, opt = instance(p, seed)
    K, H = int(p["K"]), cmdp.H
    spec = METHODS[method]
    kind = spec.get("baseline")
    if kind == "uniform":
        out = _exact_run(cmdp, losses, np.full((H, cmdp.S, cmdp.A), 1.0 / cmdp.A))
    elif kind == "oracle":
        _, pi = best_fixed_policy(cmdp.transitions, cmdp.s1, cmdp.reward(losses.sum(0)),
                                  cmdp.cost, budget)
        out = _exact_run(cmdp, losses, pi)
    else:
        ef = float(p.get("epoch_factor", 2.0))
        if kind is None:
            base = PDPOConfig(budget=budget).resolved(K, H, cmdp.d)
            cfg = PDPOConfig(budget=budget, alpha=spec["step_scale"] * base["alpha"],
                             eta=spec["step_scale"] * base["eta"],
                             bonus_scale=float(p["bonus_scale"]), mixing=spec["mixing"],
                             regularised_dual=spec["regularised_dual"], epochs=ef > 0,
                             epoch_factor=ef if ef > 0 else 2.0)
        else:
            # OPDOP's Slater slack γ = b − min_π V_g^π and dual bound χ = 2H/γ use the true
            # model (OPDOP assumes γ known; the paper's algorithm does not need it)
            v_min, _ = best_fixed_policy(cmdp.transitions, cmdp.s1, cmdp.cost)
            cfg = PDPOConfig(budget=budget, alpha=math.sqrt(2 * math.log(cmdp.A) / (H ** 2 * K)),
                             eta=K ** -0.5 if kind == "opdop" else 0.0,
                             bonus_scale=float(p["bonus_scale"]), mixing=False,
                             regularised_dual=False, epochs=False, clip_q=True,
                             dual_cap=2 * H / max(budget - v_min, 1e-9))
        out = run_pdpo(cmdp, losses, cfg, np.random.default_rng(20_000 + seed))
    gap = out["cost_value"] - budget
    viol = np.cumsum(gap)
    res = {"K": K, "regret": float(out["loss_value"].sum() - opt),
           "violation": float(viol[-1]), "violation_pos": float(np.maximum(gap, 0).sum()),
           "dual_max": float(out["dual"].max()), "dual_min": float(out["dual"].min()),
           "dual_final": float(out["dual"][-1]),
           "dual_positive_frac": float(np.mean(out["dual"] > 0)),
           "policy_tv_mean": float(out["policy_tv"].mean()),
           "policy_tv_final": float(out["policy_tv"][-1]),
           "epochs": int(out["epoch"].max()) + 1, "terms_max": int(out["terms"].max()),
           "budget": budget, "comparator": opt, "violation_peak": float(viol.max())}
    if "cost_estimate" in out:
        # optimism: how far the estimate V̂_g,1(s_1) sits below the true V_g^{π_k}
        res["cost_estimate_gap"] = float(np.mean(out["cost_estimate"] - out["cost_value"]))
    # violation path at 10 equally spaced fractions of K (rise-then-fall shape)
    for i, j in enumerate(np.linspace(K / 10, K, 10).round().astype(int) - 1):
        res[f"viol_path_{i}"] = float(viol[j])
    return res


def run_trial(trial: Trial, device: str) -> dict:
    # NumPy only: runs on the CPU whatever --device says (no torch work here)
    return _run(trial.params, trial.seed, trial.method)


# -- summary ---------------------------------------------------------------------------------

def _cell(results: list[Result], method: str, K: int) -> list[Result]:
    return [r for r in results if r.trial.method == method and int(r.trial.params["K"]) == K]


def slope(ks, values) -> float:
    """Least-squares slope of log(value) on log(K); nan unless every value is positive."""
    v = np.asarray(values, dtype=float)
    if np.any(v <= 0):
        return math.nan
    return float(np.polyfit(np.log(np.asarray(ks, dtype=float)), np.log(v), 1)[0])


@functools.lru_cache(maxsize=512)
def _uniform_values(items: tuple, seed: int) -> tuple[float, float]:
    """(regret, signed violation) of the uniform policy played for all K episodes of the
    trial's instance (exact, true model)."""
    p = dict(items)
    cmdp, losses, budget, opt = instance(p, seed)
    pi = np.full((cmdp.H, cmdp.S, cmdp.A), 1.0 / cmdp.A)
    q = occupancy(cmdp.transitions, pi, cmdp.s1)
    regret = float((q * cmdp.reward(losses.sum(0))).sum()) - opt
    violation = len(losses) * (float((q * cmdp.cost).sum()) - budget)
    return regret, violation


def policy_move(r: Result) -> float:
    """Per-episode difference of the played policies from the uniform policy: max(|ΔRegret|,
    |ΔViolation|) / K, from the stored metrics and the recomputed uniform values."""
    reg_u, viol_u = _uniform_values(tuple(sorted(r.trial.params.items())), r.trial.seed)
    K = int(r.trial.params["K"])
    return max(abs(float(r.metrics["regret"]) - reg_u),
               abs(float(r.metrics["violation"]) - viol_u)) / K


def _acting(results, cfg) -> tuple[str | None, str | None, str]:
    """(why the policy does not act or None, why the dual does not act or None, evidence)."""
    ks = sorted(cfg.ks)
    moves = {k: float(np.median([policy_move(r) for r in _cell(results, "pdpo", k)]))
             for k in ks if _cell(results, "pdpo", k)}
    still = [k for k, m in moves.items() if m < cfg.min_policy_move]
    pd = [r for r in results if r.trial.method == "pdpo"]
    duals = [float(r.metrics["dual_max"]) for r in pd]
    tvs = {k: float(np.median(metric_values(_cell(results, "pdpo", k), "policy_tv_final")))
           for k in ks if _cell(results, "pdpo", k)
           and "policy_tv_final" in _cell(results, "pdpo", k)[0].metrics}
    ev = ("median per-episode value distance from the uniform policy "
          + ", ".join(f"K={k}: {m:.2g}" for k, m in moves.items())
          + f" (acting from {cfg.min_policy_move:g}); median TV distance of the last played "
          "policy from uniform " + ", ".join(f"K={k}: {t:.3f}" for k, t in tvs.items())
          + "; dual Y over the pdpo runs in "
          f"[{min(float(r.metrics.get('dual_min', 0.0)) for r in pd) if pd else math.nan:.3g}, "
          f"{max(duals) if duals else math.nan:.3g}]")
    policy = (f"the played policies stay within {cfg.min_policy_move:g} per episode of the "
              f"uniform policy at K = {still}" if still else None)
    dual = "the dual Y stays exactly 0 in every pdpo run" if duals and max(duals) == 0 else None
    return policy, dual, ev


def _growth_verdict(results, cfg, key: str) -> vd.Verdict:
    pts = [(int(r.trial.params["K"]), r.trial.seed, float(r.metrics[key]))
           for r in results if r.trial.method == "pdpo"]
    xs = [k for k, _, _ in pts]
    ys = [v for _, _, v in pts]
    band = (-math.inf, cfg.slope_level)
    if all(v > 0 for v in ys):
        if len(set(xs)) >= 3:
            return vd.slope(xs, ys, band=band, log=True)
        # two K: each seed's two-point log-log slope, then the CI of their mean
        by_seed: dict[int, dict[int, float]] = {}
        for k, s, v in pts:
            by_seed.setdefault(s, {})[k] = v
        lo, hi = sorted(set(xs))
        per_seed = [math.log(d[hi] / d[lo]) / math.log(hi / lo) for d in by_seed.values()
                    if lo in d and hi in d]
        return vd.within(per_seed, *band, exact=False)
    if all(v <= 0 for v in ys):
        return vd.all_of({f"K={k}": vd.within([v for kk, _, v in pts if kk == k], -math.inf,
                                              0.0, exact=False) for k in sorted(set(xs))})
    # mixed signs: no power law to fit; sublinear growth means value / K falls with K
    return vd.trend(xs, [v / k for k, v in zip(xs, ys, strict=True)], direction="decreasing")


def _growth_claim(results, cfg, key: str, name: str, idx: int, acting) -> Claim:
    ks = sorted(cfg.ks)
    means = [float(np.mean(metric_values(_cell(results, "pdpo", k), key))) for k in ks]
    s = slope(ks, means)
    v = _growth_verdict(results, cfg, key)
    policy, dual, ev = acting
    if policy is not None:
        v = vd.not_acting(v, policy + (f"; {dual}" if dual else ""))
    elif dual is not None and key == "violation":
        v = vd.not_acting(v, dual)
    grid = ", ".join(f"K={k}: {m:.4g}" for k, m in zip(ks, means, strict=True))
    return Claim(
        text=f"({idx}) The {name} of the paper's algorithm grows sublinearly, near K^(3/4): "
             f"log-log slope over K ∈ {ks} ≤ {cfg.slope_level:g} (CI over the (seed, K) "
             "points; or ≤ 0 at every K).",
        evidence=f"slope of the seed means {s:.3f}; mean {name} {grid}; {ev}",
        verdict=v)


def summarize(results: list[Result], cfg: CMDPConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    ks = sorted(cfg.ks)
    methods = [m for m in METHODS if any(r.trial.method == m for r in results)]
    rows = []
    for m in methods:
        for k in ks:
            rs = _cell(results, m, k)
            if rs:
                rows.append([m, k] + [fmt_values(metric_values(rs, key)) for key in (
                    "regret", "violation", "violation_pos", "dual_max", "dual_positive_frac",
                    "policy_tv_final", "epochs")] + [len(rs)])
    t1 = Table(title="Regret and constraint violation after K episodes (mean ± 95% CI over "
                     "seeds; violation signed, and its positive part), the dual's maximum and "
                     "the fraction of episodes with Y > 0, the last played policy's TV distance "
                     "from uniform (occupancy-weighted)",
               columns=["method", "K", "regret", "violation", "violation₊", "max Y",
                        "frac Y>0", "TV(π_K, unif)", "epochs", "n"], rows=rows)
    cal = _calibrated(cfg)
    cal_rows = [[f"{bs:g}", "off" if ef == 0 else f"{ef:g}", f"{np.mean(v):.4f}",
                 "← chosen" if (bs, ef) == (cal["bonus_scale"], cal["epoch_factor"]) else ""]
                for (bs, ef), v in cal["scores"].items()]
    t3 = Table(title=f"Calibration of pdpo on {cfg.calib_seeds} held-out instance(s) (seeds "
                     f"1000…, S, A, d, H = {tuple(cfg.calib_shape)}, K = {cfg.calib_k}): "
                     "(regret + violation₊) / K, exact; "
                     + "; ".join(f"{t.name}: {t.best:g}{' (grid edge)' if t.on_edge else ''}"
                                 for t in cal["tuned"]),
               columns=["bonus_scale", "epoch factor", "score", ""], rows=cal_rows)
    slope_rows = []
    for m in methods:
        cells = []
        for key in ("regret", "violation", "violation_pos"):
            means = [float(np.mean(metric_values(_cell(results, m, k), key))) for k in ks]
            cells.append(f"{slope(ks, means):.3f}")
        slope_rows.append([m, *cells])
    t2 = Table(title=f"Log-log slopes over K ∈ {ks} of the seed means (nan: a mean ≤ 0); "
                     "paper's bound: 0.75", columns=["method", "regret", "violation",
                                                     "violation₊"], rows=slope_rows)
    acting = _acting(results, cfg)
    claims = [_growth_claim(results, cfg, "regret", "regret", 1, acting),
              _growth_claim(results, cfg, "violation", "signed violation", 2, acting)]
    figures = [_plot(results, methods, ks, outdir / "regret_violation.png")]
    return Summary(tables=[t1, t2, t3], figures=figures, claims=claims, notes=_notes(cfg))


def _plot(results, methods, ks, path: Path) -> Figure:
    fig, axes = grid(3, panel=(4.7, 4.0))
    colors = {m: color(i) for i, m in enumerate(methods)}
    ref = np.asarray(ks, dtype=float)
    for ax, key in ((axes[0], "regret"), (axes[1], "violation")):
        series = {m: {k: metric_values(_cell(results, m, k), key) for k in ks} for m in methods}
        line_panel(ax, series, xlabel="K", ylabel=key, xlog=True, ylog=False, colors=colors,
                   reference={"K^(3/4)": (ref, ref ** 0.75)} if key == "regret" else None)
        # signed values (violation < 0, the oracle's regret 0) spanning orders of magnitude:
        # a symmetric log axis, which figures.py's log="auto" cannot give
        ax.set_yscale("symlog")
    fracs = [(i + 1) / 10 for i in range(10)]
    series = {m: {f: metric_values(_cell(results, m, ks[-1]), f"viol_path_{i}")
                  for i, f in enumerate(fracs)} for m in methods}
    line_panel(axes[2], series, xlabel=f"fraction of K = {ks[-1]}",
               ylabel="cumulative signed violation", xlog=False, ylog=False, colors=colors)
    axes[2].axhline(0.0, color="gray", lw=0.8)
    return save(fig, path, "Regret and signed violation vs K (mean ± 95 % CI over seeds, log "
                "x, symlog y) and the cumulative violation along the largest-K run (mean ± "
                "95 % CI over seeds)")


def _notes(cfg: CMDPConfig) -> list[str]:
    ks = sorted(cfg.ks)
    return [
        f"Setting: S = {cfg.states}, A = {cfg.actions}, d = {cfg.dim}, H = {cfg.horizon}, "
        f"K ∈ {list(cfg.ks)}, {cfg.seeds} seeds (paper: a job-scheduling CMDP, K = 10⁵, 10 "
        "seeds; its specification was not available, so a random low-rank linear CMDP is used).",
        "β_b = β_w = c · K^(1/4) d H: the paper states β_b = Õ(K^(1/4) d H) without the "
        f"constant; c ∈ {list(cfg.bonus_scales)} and the epoch factor ∈ "
        f"{['off' if f == 0 else f for f in cfg.epoch_factors]} (paper: 2, det doubling) are "
        "calibrated on held-out small instances by (regret + violation₊)/K (table 3), before "
        "the evaluation runs; the same c is used by OPDOP and OPPO.",
        "Baselines: OPDOP (Ding et al. 2021: no epochs / mixing / regulariser, Q̂ truncated, "
        "Y ≤ 2H/γ with the true γ, α = sqrt(2 log A/(H²K)), η = K^(−1/2)); OPPO (the same with "
        "Y ≡ 0: unconstrained); the uniform policy; the oracle (the comparator played every "
        "episode: regret 0 by definition).  Both OPDOP and OPPO here see the revealed loss, "
        "not a regressed one.",
        "Epochs (det Λ doubling), reset of π to uniform and Y to 0 at an epoch start, LS "
        "evaluation on contracted features with the bonus subtracted for both f and g: "
        "readings of the brief's inferred points, see optzoo.rl.adversarial_cmdp.",
        "Regret and violation are exact (true model, occupancy measures), not sampled; the "
        "comparator is the best fixed feasible policy for Σ_k f^k (LP, HiGHS).",
        "Trials are NumPy only and run on the CPU whatever --device says.",
        "Why small K is hard for the paper's step sizes (derived, not fitted): the total "
        "primal step over K episodes is αK = K^(1/4)/H "
        f"({', '.join(f'{k ** 0.25 / cfg.horizon:.2f}' for k in ks)} on this grid), "
        "so the policy stays close to uniform, and each epoch restarts it; the dual moves only "
        "when V̂_g − b exceeds c₂/η = 4H²K^(−3/4) + 4H²/K "
        f"({', '.join(f'{4 * cfg.horizon ** 2 * (k ** -0.75 + 1 / k):.2f}' for k in ks)}), "
        "so Y can stay at 0. The K^(3/4) regime of the bounds needs K^(1/4) ≫ H "
        "(the paper runs K = 10⁵). θ = 1/K makes mixing nearly invisible, as the brief warns, "
        "so pdpo and pdpo-plain can coincide when Y stays 0.",
    ]


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Yu, Bae & Lee (ICLR 2026) on a synthetic exactly-linear CMDP: primal-dual policy "
        "optimisation with weighted LogSumExp softmax policies, periodic mixing and the "
        "regularised dual update against adversarial switching losses (full information) and "
        "Bernoulli costs (bandit); exact regret against the best fixed feasible policy (LP over "
        "occupancy measures) and signed constraint violation for a grid of K, with log-log "
        "slopes; ablation without mixing / dual regulariser and a ×{0.3, 3} step-size sweep. "
        "NumPy only; runs on the CPU whatever --device says."),
)
