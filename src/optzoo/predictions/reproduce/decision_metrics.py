"""Reproduction ``decision-metrics``: Angelopoulos, Dürr & Melidi, *Decision-Theoretic Approaches
for Improved Learning-Augmented Algorithms* (ICLR 2026, arXiv 2501.17701).

Setting (brief's small-scale reproduction; the paper's distributions of true values and
predictions were not retrieved, so two prediction models run side by side, see "Prediction
models" below):

* problems: ski rental ``b = 10, r = 5``; one-max search ``M = 1000, r = 100``; contract
  scheduling ``r = 4`` (doubling schedules);
* predictions ``y`` on a log-spaced grid (ski rental ``[b/(r-1), b(r-1)]``, one-max ``[1, M]``,
  contract ``[1, 16)``); a test instance draws ``y`` uniformly from the grid and the true value
  from the prediction model (clipped to ``[1, M]`` for one-max; worst-case price path given the
  maximum price);
* methods: the prediction-free optimum; Pareto choices (follow the prediction within the ideal,
  BP_ρ / PO1 / PO2, robust-interval endpoints); δ-TOL (δ = 0.2); MAX and AVG with the linear
  (triangular) weight on ``[y/2, 2y]`` ("half") and ``[0, 2y]`` ("zero"); CVaR_α for
  ``α ∈ {0, 0.1, 0.5, 0.9}``.  CVaR choices are fitted to a separate *training* draw of
  ``n_train`` residuals ``exp(σ Z')`` (the distribution the paper's prediction carries);
* held-out: every policy (fitted at σ where it uses σ) is also tested at ``2σ``.

Prediction models (issue 21: "the misses come from the inferred prediction distribution"):

* ``lognormal`` (ours, the earlier runs): ``x = y·exp(σZ)``, ``Z ~ N(0, 1)``, σ in ``sigmas``;
* ``triangular`` (our reading of the paper's): ``x = y(1 + sV)``, ``V ~ Tri(-1, 0, 1)``, i.e.
  ``x`` drawn from the density proportional to the paper's "linear, symmetric" weight ``w_y``
  on ``R_y = [y(1-s), y(1+s)]``, ``s`` in ``spreads``.  Why this reading: the paper's MAX/AVG
  weigh the error over ``R_y`` with ``w_y`` (non-decreasing up to ``y``, non-increasing after),
  its risk measure takes the prediction as a (per the reviews, unimodal) distribution, its
  default range is ``[0, ∞)`` and its experiments use simple linear symmetric weights and
  report gains as the range narrows; drawing ``x`` from the normalised weight makes all three
  measures judge the distribution the test uses.  ``s = 1`` (``R_y = [0, 2y]``) is the paper's
  level as we read it, ``s = 0.5`` a narrower range.  Held out: ``2s`` (values ≤ 0 clipped to
  the problem's domain).  What the search found (issue 21, about 15 queries over the pages,
  docs and code corpora and the index: arXiv 2501.17701 v1/v2 HTML, OpenReview XGEZ9q02Ys, the
  papernotes summary): only the abstract, the definitions and the two result tables -- no
  experimental distribution, no noise level, no code.  So the ``triangular`` arm is a reading,
  not the paper's setting; the summary's notes put the BP_ρ baselines' ratios under both models
  beside the paper's 1.677 / 2.219 to show whether the noise model explains the gap.

Claims 4-8 are reported once per prediction model (the paper-reading claims carry a prefix);
claims 1-3 pool both.

A trial is (method, problem, seed, noise model, σ or s): the seed fixes the training and the
test draws, which are shared by every method (paired comparisons).  Metrics are exact per
instance (closed forms).

Claims, each decided by a test of :mod:`optzoo.experiment.verdicts` (per-seed values paired by
seed; "at every σ / for every method" combine with ``all_of``):

1. every selected algorithm is r-robust: ``bound_holds`` on the exact worst-case ratios
   (≤ r, relative slack 1e-9), per problem;
2. each measure's optimal choice minimises its own measure among all candidates:
   ``bound_holds`` on its excess over the best other candidate, per (problem, measure), over
   every (σ, seed) cell (≤ 0 up to the optimiser's relative 1e-6 and absolute 1e-9; a tie with
   another candidate is still a minimiser, so ties are allowed here by the claim's wording);
3. Pareto choices are brittle and MAX/AVG are not: ``bound_holds`` that the follow-the-
   prediction choice's mean jump is ≥ ``jump_brittle`` and that every MAX/AVG choice's is ≤
   ``jump_smooth`` (σ-free policies: the values are deterministic);
4. (ski rental) MAX/AVG/CVaR have a lower average ratio than BP_(ρ=b) and BP_(ρ=b(r−1)) at every
   σ: one ``superior`` test (lower is better, ``min_effect_ratio``) per (σ, method, BP);
5. (ski rental) their average ratio lies within ±``near_tol`` of the paper's 1.34: ``within``
   on the per-seed values (the CI of their mean must lie inside), per (σ, method);
6. as 4, tested at 2σ (held out);
7. (one-max) MAX has a lower average ratio than PO1 and δ-TOL and CVaR_0.1 a higher expected
   profit than MAX, AVG, PO1 and δ-TOL: ``superior`` tests on log ratios
   (``min_rel_effect``), per σ;
8. as 7, tested at 2σ (held out).

Verdict margins (preset fields, the same in every preset, fixed before results were seen; not
trial parameters, so the trial keys do not change):

* ``min_effect_ratio = 0.01`` -- 1 % of the optimal cost in ski rental's average ratio: the
  paper's MAX/AVG/CVaR rows differ from each other by 0.003-0.03 and from BP by 0.3-0.9, so a
  smaller gap is no ranking;
* ``min_rel_effect = 0.01`` (one-max, on ``log a − log b``; ≈ 1 % relative) -- one-max ratios
  and profits spread over [1, 100], so the smallest gap that counts is relative;
* ``near_tol = 0.10`` -- "near the paper's 1.34", unchanged (fixed before any run);
* ``jump_brittle = 0.5``, ``jump_smooth = 0.1`` -- "a jump of order one" vs "none", unchanged
  (the former module constants ``JUMP_BRITTLE``, ``JUMP_SMOOTH``).

Rules changed by issue 18 (verdicts that are evidence): claims 4, 6 and 7/8 compared means with
no smallest effect (CVaR_0.1's "highest profit" even passed on a tie, ``>=``): they are now
seed-paired superiority tests with a declared minimal effect; claim 5 compared the mean alone
with ±0.1: it is now ``within`` on the CI of the mean.  Claims 1-3 are exact checks and keep
their rules (now ``bound_holds``).  The MAX/AVG/CVaR choices are the argmin of their own
measure over the parameter (an optimiser, not a hyperparameter picked on test results), and
δ = 0.2 and the α grid are fixed, so nothing is routed through ``tune``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

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
from optzoo.experiment.verdicts import all_of, bound_holds, by_seed, superior, within
from optzoo.predictions.contract_scheduling import ContractScheduling
from optzoo.predictions.decision_metrics import RobustFamily, window_weight
from optzoo.predictions.one_max import OneMaxSearch
from optzoo.predictions.ski_rental import SkiRental
from optzoo.report import figures as fg

PROBLEMS = ("ski_rental", "one_max", "contract")
WINDOWS = {"half": (0.5, 2.0), "zero": (0.0, 2.0)}
#: prediction models: ours (``x = y exp(σZ)``) and our reading of the paper's (module docstring)
NOISES = ("lognormal", "triangular")
NOISE_LABEL = {"lognormal": "ours, x = y·exp(σZ)",
               "triangular": "paper reading, x ~ linear symmetric weight on [y(1-s), y(1+s)]"}
#: the paper's ski-rental average ratios (MAX 1.344, AVG 1.337, CVaR 1.340/1.349/1.367) are all
#: within 0.03 of this value
PAPER_SKI_RATIO = 1.34
#: Pareto choices that follow the prediction (expected to be brittle)
BRITTLE = {"ski_rental": "pareto_follow", "one_max": "po1", "contract": "follow"}
#: thresholds of the brittleness claim, fixed before any run: "a jump of order one" vs "none"
#: (the defaults of the preset fields ``jump_brittle``, ``jump_smooth``)
JUMP_BRITTLE, JUMP_SMOOTH = 0.5, 0.1


@dataclass(frozen=True)
class DecisionMetricsConfig(Preset):
    """Configuration of the ``decision-metrics`` reproduction.

    Args:
        seeds: seeds per (method, problem, σ).
        problems: subset of ``ski_rental``, ``one_max``, ``contract``.
        sigmas: noise levels σ of our prediction model ``x = y exp(σZ)`` ("lognormal").
        spreads: half-widths ``s`` of the paper-reading model ("triangular", module
            docstring): ``x`` drawn from the linear symmetric weight on
            ``R_y = [y(1-s), y(1+s)]``; ``s = 1`` is ``R_y = [0, 2y]``.  Empty: skip the arm.
        alphas: CVaR levels (each gives a method ``cvar@α``).
        windows: prediction ranges of the MAX/AVG weights: ``half`` = ``[y/2, 2y]``,
            ``zero`` = ``[0, 2y]`` (linear, peaked at y).
        delta: tolerance of the δ-TOL baseline.
        n_test: test instances per trial.
        n_train: training residuals the CVaR choices are fitted to.
        n_pred: size of the prediction grid.
        n_param: grid size of the 1-D search over the robust interval.
        n_x: grid size of the prediction range for d_max / d_avg.
        eta: relative error at which the brittle jump is measured.
        near_tol: tolerance of "near the paper's 1.34" (fixed before any run).
        min_effect_ratio: smallest gap in ski rental's average ratio that counts (claims 4, 6).
        min_rel_effect: smallest relative (log) gap of one-max ratios / profits (claims 7, 8).
        jump_brittle, jump_smooth: the brittleness claim's thresholds (claim 3).
    """

    seeds: int = 5
    problems: tuple[str, ...] = PROBLEMS
    sigmas: tuple[float, ...] = (0.05, 0.1, 0.2, 0.4)
    spreads: tuple[float, ...] = (0.5, 1.0)
    alphas: tuple[float, ...] = (0.0, 0.1, 0.5, 0.9)
    windows: tuple[str, ...] = ("half", "zero")
    delta: float = 0.2
    n_test: int = 10_000
    n_train: int = 256
    n_pred: int = 32
    n_param: int = 257
    n_x: int = 1025
    eta: float = 1e-3
    near_tol: float = 0.10
    min_effect_ratio: float = 0.01
    min_rel_effect: float = 0.01
    jump_brittle: float = JUMP_BRITTLE
    jump_smooth: float = JUMP_SMOOTH

    def validate(self) -> None:
        super().validate()
        if not self.problems or any(p not in PROBLEMS for p in self.problems):
            raise ConfigError(f"problems: expected a non-empty subset of {PROBLEMS}, "
                              f"got {self.problems!r}")
        if not self.sigmas or any(not (0 < s < 5) for s in self.sigmas):
            raise ConfigError(f"sigmas: expected noise levels in (0, 5), got {self.sigmas!r}")
        if any(not (0 < s <= 1) for s in self.spreads):
            raise ConfigError(f"spreads: expected half-widths in (0, 1], got {self.spreads!r}")
        if any(not (0 <= a < 1) for a in self.alphas):
            raise ConfigError(f"alphas: expected CVaR levels in [0, 1), got {self.alphas!r}")
        if any(w not in WINDOWS for w in self.windows):
            raise ConfigError(f"windows: expected names in {tuple(WINDOWS)}, got {self.windows!r}")
        if not 0 < self.delta < 1:
            raise ConfigError(f"delta: expected a tolerance in (0, 1), got {self.delta!r}")
        for name, least in (("n_test", 10), ("n_train", 4), ("n_pred", 2), ("n_param", 5),
                            ("n_x", 9)):
            if getattr(self, name) < least:
                raise ConfigError(f"{name}: expected an integer >= {least}, "
                                  f"got {getattr(self, name)}")
        if not 0 < self.eta < 0.1:
            raise ConfigError(f"eta: expected a relative error in (0, 0.1), got {self.eta!r}")
        for name in ("near_tol", "min_effect_ratio", "min_rel_effect", "jump_brittle",
                     "jump_smooth"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v > 0):
                raise ConfigError(f"{name}: expected a finite number > 0, got {v!r}")
        if not self.jump_smooth < self.jump_brittle:
            raise ConfigError(f"jump_smooth: expected < jump_brittle = {self.jump_brittle}, "
                              f"got {self.jump_smooth!r}")


# ----------------------------------------------------------------------------------------------
# problems, methods, policies
# ----------------------------------------------------------------------------------------------
def make_problem(name: str) -> RobustFamily:
    """The paper's instance of each problem."""
    if name == "ski_rental":
        return SkiRental(b=10.0, r=5.0)
    if name == "one_max":
        return OneMaxSearch(M=1000.0, r=100.0)
    if name == "contract":
        return ContractScheduling(r=4.0)
    raise ValueError(f"problem: expected one of {PROBLEMS}, got {name!r}")


def prediction_grid(name: str, n: int) -> np.ndarray:
    """Log-spaced grid of predictions ``y`` of each problem."""
    if name == "ski_rental":
        return np.geomspace(10.0 / 4, 10.0 * 4, n)
    if name == "one_max":
        return np.geomspace(1.0, 1000.0, n)
    if name == "contract":
        return np.geomspace(1.0, 16.0, n + 1)[:-1]
    raise ValueError(f"problem: expected one of {PROBLEMS}, got {name!r}")


def method_names(problem: str, windows: tuple[str, ...], alphas: tuple[float, ...]) -> list[str]:
    """The methods compared on ``problem``."""
    base = {"ski_rental": ["prediction_free", "pareto_follow", "bp_rho=b", "bp_rho=b(r-1)",
                           "endpoint_lo", "endpoint_hi"],
            "one_max": ["prediction_free", "po1", "po2", "endpoint_lo", "endpoint_hi"],
            "contract": ["prediction_free", "follow"]}[problem]
    return [*base, "delta_tol", *[f"{m}@{w}" for w in windows for m in ("max", "avg")],
            *[f"cvar@{a:g}" for a in alphas]]


def _true_values(problem: RobustFamily, y: np.ndarray, factor: np.ndarray) -> np.ndarray:
    lo, hi = problem.domain
    return np.clip(y * factor, max(lo, np.finfo(float).tiny), hi)


def choose(problem_name: str, method: str, y: float, *, delta: float, n_param: int,
           n_x: int) -> float:
    """The parameter a σ-free method picks for the prediction ``y``."""
    prob: Any = make_problem(problem_name)
    lo, hi = prob.robust_interval
    if method == "prediction_free":
        return {"ski_rental": 10.0, "one_max": math.sqrt(1000.0), "contract": 1.0}[problem_name]
    if method in ("endpoint_lo", "endpoint_hi"):
        return float(lo if method == "endpoint_lo" else hi)
    if method == "pareto_follow":
        return float(prob.pareto_follow(y))
    if method == "bp_rho=b":
        return float(prob.bp(y, 10.0))
    if method == "bp_rho=b(r-1)":
        return float(prob.bp(y, hi))
    if method in ("po1", "po2"):
        return float(getattr(prob, method)(y))
    if method == "follow":
        return float(prob.follow(y))
    if method == "delta_tol":
        return prob.delta_tolerant(y, delta, n_grid=n_param, n_x=n_x).x
    kind, _, wname = method.partition("@")
    if kind in ("max", "avg") and wname in WINDOWS:
        w = window_weight(y, *WINDOWS[wname], "triangular", prob.domain)
        best = prob.max_optimal if kind == "max" else prob.avg_optimal
        return best(y, w, n_grid=n_param, n_x=n_x).x
    raise ValueError(f"method: unknown method {method!r} for problem {problem_name!r}")


@lru_cache(maxsize=512)
def _fixed_policy(problem_name: str, method: str, n_pred: int, delta: float, n_param: int,
                  n_x: int) -> tuple[float, ...]:
    """Parameters of a policy that does not depend on σ or the seed, one per grid prediction
    (cached per process: MAX/AVG searches are shared by every seed and σ)."""
    return tuple(choose(problem_name, method, float(y), delta=delta, n_param=n_param, n_x=n_x)
                 for y in prediction_grid(problem_name, n_pred))


def _draw(rng: np.random.Generator, noise: str, n: int) -> np.ndarray:
    """Standardised noise: ``Z ~ N(0, 1)`` (lognormal model) or ``V ~ Tri(-1, 0, 1)``."""
    if noise == "lognormal":
        return rng.standard_normal(n)
    if noise == "triangular":
        return rng.triangular(-1.0, 0.0, 1.0, n)
    raise ValueError(f"noise: expected one of {NOISES}, got {noise!r}")


def noise_factors(noise: str, level: float, z: np.ndarray) -> np.ndarray:
    """``x / y`` of each model: ``exp(σZ)`` (ours) or ``1 + sV`` (paper reading; values ≤ 0,
    possible only at a held-out spread ``2s > 1``, are clipped to the problem's domain by
    :func:`_true_values`)."""
    if noise == "lognormal":
        return np.exp(level * z)
    if noise == "triangular":
        return 1.0 + level * z
    raise ValueError(f"noise: expected one of {NOISES}, got {noise!r}")


def _train_factors(seed: int, sigma: float, n_train: int,
                   noise: str = "lognormal") -> np.ndarray:
    z = _draw(np.random.default_rng([seed, 1]), noise, n_train)
    return noise_factors(noise, sigma, z)


@lru_cache(maxsize=512)
def _cvar_policy(problem_name: str, alpha: float, n_pred: int, sigma: float, seed: int,
                 n_train: int, n_param: int, noise: str = "lognormal") -> tuple[float, ...]:
    prob = make_problem(problem_name)
    ys = prediction_grid(problem_name, n_pred)
    fac = _train_factors(seed, sigma, n_train, noise)
    return tuple(prob.cvar_optimal(float(y), _true_values(prob, y, fac), alpha,
                                   n_grid=n_param).x for y in ys)


def policy(problem_name: str, method: str, p: dict[str, Any], seed: int) -> np.ndarray:
    """The parameter each method picks for every grid prediction (``n_pred``)."""
    if method.startswith("cvar@"):
        alpha = float(method.partition("@")[2])
        return np.array(_cvar_policy(problem_name, alpha, p["n_pred"], p["sigma"], seed,
                                     p["n_train"], p["n_param"],
                                     p.get("noise", "lognormal")))
    return np.array(_fixed_policy(problem_name, method, p["n_pred"], p["delta"], p["n_param"],
                                  p["n_x"]))


# ----------------------------------------------------------------------------------------------
# the contract
# ----------------------------------------------------------------------------------------------
def trials(cfg: DecisionMetricsConfig) -> list[Trial]:
    """One trial per (problem, noise model, σ or s, method, seed)."""
    out = []
    levels = [("lognormal", s) for s in cfg.sigmas] + [("triangular", s) for s in cfg.spreads]
    for prob in cfg.problems:
        for noise, sigma in levels:
            for method in method_names(prob, cfg.windows, cfg.alphas):
                for seed in range(cfg.seeds):
                    out.append(Trial(method=method, problem=prob, seed=seed, params={
                        "noise": noise, "sigma": float(sigma), "alphas": list(cfg.alphas),
                        "windows": list(cfg.windows), "delta": cfg.delta,
                        "n_test": cfg.n_test, "n_train": cfg.n_train, "n_pred": cfg.n_pred,
                        "n_param": cfg.n_param, "n_x": cfg.n_x, "eta": cfg.eta}))
    return out


def _evaluate(prob: RobustFamily, T: np.ndarray, x: np.ndarray) -> tuple[float, float, float]:
    ratio = prob.ratio(T, x)
    value = prob.alg_value(T, x)
    return float(ratio.mean()), float(value.mean()), float(prob.opt(x).mean())


def run_trial(trial: Trial, device: str = "cpu") -> dict[str, Any]:
    """Fit the method's policy, then measure it exactly on the seed's test draws."""
    p = dict(trial.params)
    prob = make_problem(trial.problem)
    ys = prediction_grid(trial.problem, p["n_pred"])
    T = policy(trial.problem, trial.method, p, trial.seed)
    sigma = float(p["sigma"])
    noise = str(p.get("noise", "lognormal"))

    # robustness by the exact worst case
    rob = prob.robustness(T)
    r = float(prob.r)  # type: ignore[attr-defined]
    out: dict[str, Any] = {"r": r, "max_robustness": float(rob.max()),
                           "robust": bool(np.all(rob <= r * (1 + 1e-9)))}

    # test draws (shared by every method of this seed), at σ and at 2σ (held out)
    rng = np.random.default_rng([trial.seed, 2])
    idx = rng.integers(0, ys.size, size=p["n_test"])
    z = _draw(rng, noise, p["n_test"])
    for tag, s in (("", sigma), ("heldout_", 2 * sigma)):
        x = _true_values(prob, ys[idx], noise_factors(noise, s, z))
        avg, val, opt = _evaluate(prob, T[idx], x)
        out[f"{tag}avg_ratio"] = avg
        out[f"{tag}mean_value"] = val
        out[f"{tag}mean_opt"] = opt
        out[f"{tag}ideal_avg_ratio"] = float(prob.ideal_ratio(x).mean())
        if not tag:
            alg = prob.alg_value(T[idx], x)
            for a in p["alphas"]:
                out[f"test_acons_{a:g}"] = _acons(prob, alg, x, a)

    # the measures each choice is judged by, averaged over the prediction grid
    fac = _train_factors(trial.seed, sigma, p["n_train"], noise)
    dm = {w: [] for w in p["windows"]}
    da = {w: [] for w in p["windows"]}
    ac = {a: [] for a in p["alphas"]}
    jumps, cgap = [], []
    for k, y in enumerate(ys):
        y = float(y)
        t = T[k:k + 1]
        for w in p["windows"]:
            wt = window_weight(y, *WINDOWS[w], "triangular", prob.domain)
            dm[w].append(float(prob.d_max(t, y, wt, p["n_x"])[0]))
            da[w].append(float(prob.d_avg(t, y, wt, p["n_x"])[0]))
        atoms = _true_values(prob, np.float64(y), fac)
        for a in p["alphas"]:
            ac[a].append(float(prob.alpha_consistency(t, atoms, a)[0]))
        jumps.append(float(prob.brittleness(t, y, p["eta"])[0]))
        cgap.append(float(prob.gap(t, np.array([y]))[0]))
    for w in p["windows"]:
        out[f"dmax_{w}"] = float(np.mean(dm[w]))
        out[f"davg_{w}"] = float(np.mean(da[w]))
    for a in p["alphas"]:
        out[f"acons_{a:g}"] = float(np.mean(ac[a]))
    out["jump_mean"] = float(np.mean(jumps))
    out["jump_max"] = float(np.max(jumps))
    out["consistency_gap"] = float(np.mean(cgap))
    out["param_mean"] = float(T.mean())
    return out


def _acons(prob: RobustFamily, alg: np.ndarray, x: np.ndarray, alpha: float) -> float:
    from optzoo.predictions.decision_metrics import alpha_consistency

    return float(alpha_consistency(alg, prob.opt(x), alpha, kind=prob.kind))


# ----------------------------------------------------------------------------------------------
# summary: tables, figures, claims
# ----------------------------------------------------------------------------------------------
def _cell(results: list[Result], metric: str) -> tuple[float, float]:
    vals = [float(r.metrics[metric]) for r in results if r.metrics.get(metric) is not None]
    return mean_ci(vals) if vals else (math.nan, math.nan)


def _noise(r: Result) -> str:
    return str(r.trial.params.get("noise", "lognormal"))


def _by(results: list[Result], **match: Any) -> list[Result]:
    out = []
    for r in results:
        ok = True
        for k, v in match.items():
            got = (getattr(r.trial, k) if k in ("method", "problem", "seed")
                   else _noise(r) if k == "noise" else r.trial.params[k])
            if got != v:
                ok = False
                break
        if ok:
            out.append(r)
    return out


def _fmt(results: list[Result], metric: str) -> str:
    m, h = _cell(results, metric)
    return fmt_ci(m, h) if not math.isnan(m) else "—"


def _seeds(results: list[Result], metric: str, **match: Any) -> dict[int, float]:
    """``{seed: metric}`` of the results matching ``match`` (one per seed)."""
    return by_seed(_by(results, **match), metric)


def _claim_robust(results: list[Result]) -> Claim:
    parts, cells = [], {}
    for prob in dict.fromkeys(r.trial.problem for r in results):
        rs = _by(results, problem=prob)
        r_ = float(rs[0].metrics["r"])
        rob = [float(r.metrics["max_robustness"]) for r in rs]
        cells[prob] = bound_holds(rob, r_, tol=1e-9 * r_)
        bad = sorted({r.trial.method for r in rs
                      if float(r.metrics["max_robustness"]) > r_ * (1 + 1e-9)})
        parts.append(f"{prob}: worst exact robustness {max(rob):.6g} <= r = {r_:g} over "
                     f"{len(rs)} trials" + (f"; NOT robust: {bad}" if bad else ""))
    return Claim(text="Every selected algorithm (prediction-free, Pareto, δ-TOL, MAX, AVG, CVaR) "
                      "is r-robust, checked by its exact worst-case ratio.",
                 evidence="; ".join(parts), verdict=all_of(cells))


def _claim_own_measure(results: list[Result], cfg: DecisionMetricsConfig) -> Claim:
    parts, cells = [], {}
    for prob in dict.fromkeys(r.trial.problem for r in results):
        rs = _by(results, problem=prob)
        measures = [(f"dmax_{w}", f"max@{w}") for w in cfg.windows]
        measures += [(f"davg_{w}", f"avg@{w}") for w in cfg.windows]
        measures += [(f"acons_{a:g}", f"cvar@{a:g}") for a in cfg.alphas]
        for metric, own in measures:
            excess, own_v, best_v = [], [], []
            cell_of = [(_noise(r), r.trial.params["sigma"], r.trial.seed) for r in rs]
            for key in sorted(set(cell_of)):
                grp = [r for r, c in zip(rs, cell_of, strict=True) if c == key]
                mine = [float(r.metrics[metric]) for r in grp if r.trial.method == own]
                other = [float(r.metrics[metric]) for r in grp if r.trial.method != own]
                if not mine or not other:
                    continue
                own_v.append(mine[0])
                best_v.append(min(other))
                # the optimiser's slack: relative 1e-6 (grid + Brent) and absolute 1e-9
                excess.append(mine[0] - min(other) - 1e-6 * abs(min(other)))
            if excess:
                v = bound_holds(excess, 0.0, tol=1e-9)
                cells[f"{prob} {metric}"] = v
                mo, ho = mean_ci(own_v)
                mb, hb = mean_ci(best_v)
                parts.append(f"{prob} {metric}: {own} {fmt_ci(mo, ho)} vs best other "
                             f"{fmt_ci(mb, hb)} ({int(v.effect)}/{v.n} cells violated)")
    return Claim(text="Each measure's optimal choice (MAX for d_max, AVG for d_avg, CVaR_α for "
                      "α-consistency) minimises its own measure among all candidate algorithms.",
                 evidence="; ".join(parts), verdict=all_of(cells))


def _claim_brittle(results: list[Result], cfg: DecisionMetricsConfig) -> Claim:
    parts, cells = [], {}
    for prob in dict.fromkeys(r.trial.problem for r in results):
        rs = _by(results, problem=prob)
        pareto_rs = _by(rs, method=BRITTLE[prob])
        pareto = _cell(pareto_rs, "jump_mean")
        cells[f"{prob} {BRITTLE[prob]} jumps"] = bound_holds(
            [float(r.metrics["jump_mean"]) for r in pareto_rs], cfg.jump_brittle, side="ge")
        smooth_methods = [m for m in dict.fromkeys(r.trial.method for r in rs)
                          if m.startswith(("max@", "avg@"))]
        smooth = {m: _cell(_by(rs, method=m), "jump_mean") for m in smooth_methods}
        if smooth_methods:
            cells[f"{prob} MAX/AVG do not jump"] = bound_holds(
                [float(r.metrics["jump_mean"]) for r in rs if r.trial.method in smooth_methods],
                cfg.jump_smooth)
        parts.append(f"{prob}: {BRITTLE[prob]} jump {fmt_ci(*pareto)}; "
                     + ", ".join(f"{m} {fmt_ci(*v)}" for m, v in smooth.items()))
    return Claim(text=f"Pareto choices that follow the prediction are brittle: the distance to "
                      f"the ideal jumps as the error η → 0⁺ (mean jump over the prediction grid "
                      f">= {cfg.jump_brittle:g}), while MAX/AVG choices do not (mean jump <= "
                      f"{cfg.jump_smooth:g}); jump = sup_(|x-y|<=ηy) g(x) - g(y), "
                      f"g = pr(A) - pr(I_r), η = {cfg.eta:g}.",
                 evidence="; ".join(parts), verdict=all_of(cells))


def _ours(methods: list[str]) -> list[str]:
    return [m for m in methods if m.startswith(("max@", "avg@"))
            or (m.startswith("cvar@") and m != "cvar@0")]


def _claim_ski_vs_bp(results: list[Result], cfg: DecisionMetricsConfig,
                     tag: str = "") -> Claim | None:
    rs = _by(results, problem="ski_rental")
    if not rs:
        return None
    methods = list(dict.fromkeys(r.trial.method for r in rs))
    parts, cells = [], {}
    metric = f"{tag}avg_ratio"
    for sigma in dict.fromkeys(r.trial.params["sigma"] for r in rs):
        rss = _by(rs, sigma=sigma)
        bp = {m: _cell(_by(rss, method=m), metric) for m in ("bp_rho=b", "bp_rho=b(r-1)")}
        ours = {m: _cell(_by(rss, method=m), metric) for m in _ours(methods)}
        for m in ours:
            for b in bp:
                cells[f"σ={sigma:g} {m} vs {b}"] = superior(
                    _seeds(rss, metric, method=m), _seeds(rss, metric, method=b),
                    min_effect=cfg.min_effect_ratio, direction="less")
        s_test = 2 * sigma if tag else sigma
        parts.append(f"σ_fit={sigma:g}, σ_test={s_test:g}: "
                     + ", ".join(f"{m} {fmt_ci(*v)}" for m, v in ours.items())
                     + " | " + ", ".join(f"{m} {fmt_ci(*v)}" for m, v in bp.items()))
    verdict = all_of(cells)
    bad = [k for k, v in cells.items() if not v.held]
    parts.append(f"{len(cells) - len(bad)}/{len(cells)} seed-paired comparisons held (smallest "
                 f"gap that counts {cfg.min_effect_ratio:g})"
                 + (f"; not held: {', '.join(bad[:6])}{' …' if len(bad) > 6 else ''}"
                    if bad else ""))
    if tag:
        text = ("Held-out: MAX/AVG/CVaR choices fitted at σ still have a lower average ratio "
                "than both BP_ρ baselines when the true noise is 2σ (ski rental).")
    else:
        text = ("Ski rental (b=10, r=5): the average performance ratio of MAX, AVG and CVaR_α "
                "(α=0.1, 0.5, 0.9) is below that of the Pareto baselines BP_(ρ=b) and "
                "BP_(ρ=b(r-1)) (paper: 1.337-1.367 vs 1.677-2.219), at every σ.")
    return Claim(text=text, evidence="; ".join(parts), verdict=verdict)


def _claim_ski_near(results: list[Result], cfg: DecisionMetricsConfig,
                    noise: str = "lognormal") -> Claim | None:
    rs = _by(results, problem="ski_rental")
    if not rs:
        return None
    methods = list(dict.fromkeys(r.trial.method for r in rs))
    parts, cells = [], {}
    lo, hi = PAPER_SKI_RATIO - cfg.near_tol, PAPER_SKI_RATIO + cfg.near_tol
    for sigma in dict.fromkeys(r.trial.params["sigma"] for r in rs):
        rss = _by(rs, sigma=sigma)
        vals = {m: _cell(_by(rss, method=m), "avg_ratio") for m in _ours(methods)}
        for m in vals:
            cells[f"σ={sigma:g} {m}"] = within(
                list(_seeds(rss, "avg_ratio", method=m).values()), lo, hi)
        parts.append(f"σ={sigma:g}: " + ", ".join(f"{m} {fmt_ci(*v)}" for m, v in vals.items()))
    return Claim(text=f"Ski rental: the average ratio of MAX/AVG/CVaR lands near the paper's "
                      f"1.34 (tolerance ±{cfg.near_tol:g}, fixed beforehand; the CI of the mean "
                      f"over seeds must lie inside) at every σ.  The paper's prediction "
                      f"distribution was not retrieved; this arm's is {NOISE_LABEL[noise]}, so "
                      f"this comparison is only indicative.",
                 evidence="; ".join(parts), verdict=all_of(cells))


def _claim_one_max(results: list[Result], cfg: DecisionMetricsConfig,
                   tag: str = "") -> Claim | None:
    rs = _by(results, problem="one_max")
    if not rs:
        return None
    parts, cells = [], {}
    ratio_m, profit_m = f"{tag}avg_ratio", f"{tag}mean_value"
    for sigma in dict.fromkeys(r.trial.params["sigma"] for r in rs):
        rss = _by(rs, sigma=sigma)
        ratio = {m: _cell(_by(rss, method=m), ratio_m) for m in ("max@half", "po1", "delta_tol")}
        profit = {m: _cell(_by(rss, method=m), profit_m)
                  for m in ("cvar@0.1", "max@half", "avg@half", "po1", "delta_tol")}
        if any(math.isnan(v[0]) for v in (*ratio.values(), *profit.values())):
            continue
        for b in ("po1", "delta_tol"):
            cells[f"σ={sigma:g} ratio max@half vs {b}"] = superior(
                _seeds(rss, ratio_m, method="max@half"), _seeds(rss, ratio_m, method=b),
                min_effect=cfg.min_rel_effect, direction="less", log_ratio=True)
        for b in ("max@half", "avg@half", "po1", "delta_tol"):
            cells[f"σ={sigma:g} profit cvar@0.1 vs {b}"] = superior(
                _seeds(rss, profit_m, method="cvar@0.1"), _seeds(rss, profit_m, method=b),
                min_effect=cfg.min_rel_effect, direction="greater", log_ratio=True)
        parts.append(f"σ={sigma:g}{' (tested at 2σ)' if tag else ''}: avg ratio "
                     + ", ".join(f"{m} {fmt_ci(*v)}" for m, v in ratio.items())
                     + "; expected profit " + ", ".join(f"{m} {fmt_ci(*v)}"
                                                        for m, v in profit.items()))
    if not parts:
        return None
    bad = [k for k, v in cells.items() if not v.held]
    parts.append(f"{len(cells) - len(bad)}/{len(cells)} seed-paired comparisons held (log "
                 f"ratios, smallest gap that counts {cfg.min_rel_effect:g})"
                 + (f"; not held: {', '.join(bad[:6])}{' …' if len(bad) > 6 else ''}"
                    if bad else ""))
    pre = "Held-out (fitted at σ, tested at 2σ): " if tag else ""
    return Claim(text=pre + "One-max (M=1000, r=100): MAX has a lower average ratio than PO1 and "
                            "δ-TOL (paper 4.394 vs 4.630 / 10.009) and CVaR_0.1 the highest "
                            "expected profit among CVaR_0.1, MAX, AVG, PO1, δ-TOL (paper 35.8).",
                 evidence="; ".join(parts), verdict=all_of(cells))


def _figures(results: list[Result], outdir: Path, p0: dict[str, Any]) -> list[Figure]:
    figs = []
    problems = list(dict.fromkeys(r.trial.problem for r in results))
    fig, axes = fg.grid(len(problems), ncols=min(len(problems), 3), panel=(6.5, 4.4))
    for ax, prob in zip(axes, problems, strict=True):
        rs = _by(results, problem=prob)
        methods = list(dict.fromkeys(r.trial.method for r in rs))
        levels = list(dict.fromkeys((_noise(r), r.trial.params["sigma"]) for r in rs))
        series: dict[str, dict[str, list[float]]] = {}
        for nz, s in levels:
            sym = "σ" if nz == "lognormal" else "s"
            for tag in ("", "heldout_"):
                label = f"{nz} {sym}={s:g}" + (f" test@2{sym}" if tag else "")
                series[label] = {m: list(_seeds(rs, f"{tag}avg_ratio", method=m, noise=nz,
                                                sigma=s).values()) for m in methods}
        fg.category_panel(ax, series, kind="point", title=prob,
                          ylabel="average performance ratio")
    path = outdir / "decision_metrics_avg_ratio.png"
    figs.append(fg.save(fig, path, "Average performance ratio (mean ± 95% CI over seeds) per "
                                   "method and prediction model; 'test@2σ' / 'test@2s': the same "
                                   "policies tested at 2σ / 2s (held out)."))

    # error-vs-performance curves for one prediction per problem (the paper's pictures): exact
    # closed forms, no seeds, so no interval; line_panel would put a marker on each of the 1500
    # points, so these deterministic curves are drawn as plain lines on the grid's axes
    fig, axes = fg.grid(len(problems), ncols=min(len(problems), 3), panel=(6.5, 4.2))
    show = {"ski_rental": (8.0, ["pareto_follow", "bp_rho=b", "prediction_free"]),
            "one_max": (30.0, ["po1", "po2", "delta_tol"]),
            "contract": (1.5, ["follow", "prediction_free", "delta_tol"])}
    for ax, prob in zip(axes, problems, strict=True):
        pr = make_problem(prob)
        y, base = show[prob]
        lo_x, hi_x = max(y / 4, pr.domain[0] + 1e-9), min(4 * y, pr.domain[1])
        xs = np.linspace(lo_x, hi_x, 1500)
        kw = {"delta": p0["delta"], "n_param": p0["n_param"], "n_x": p0["n_x"]}
        curves = {m: choose(prob, m, y, **kw) for m in (*base, "max@half", "avg@half")}
        values = []
        for i, (m, t) in enumerate(curves.items()):
            ratio = pr.ratio(t, xs)
            values += list(np.ravel(ratio))
            ax.plot(xs, ratio, lw=1.2, color=fg.color(i), label=f"{m} (param {t:.3g})")
        ax.plot(xs, pr.ideal_ratio(xs), "k--", lw=1, label="ideal I_r")
        ax.axvline(y, color="grey", lw=0.8)
        ax.set_xlabel("true value x (prediction y at the grey line)")
        ax.set_ylabel("pr(A, x)")
        ax.set_title(f"{prob}, y = {y:g}", fontsize=9)
        if prob == "one_max" or fg.span_is_wide(values):
            ax.set_yscale("log")
        ax.grid(True, alpha=0.25, lw=0.5)
        ax.legend(fontsize=7)
    path = outdir / "decision_metrics_curves.png"
    figs.append(fg.save(fig, path, "Performance ratio against the true value for one "
                                   "prediction (exact, no seeds): Pareto choices jump right next "
                                   "to y, MAX/AVG (window [y/2, 2y]) stay close to the ideal I_r "
                                   "over the window."))
    return figs


def _model_claims(results: list[Result], cfg: DecisionMetricsConfig) -> list[Claim]:
    """Claims 4-8 once per prediction model, each from that model's trials only: ours, then our
    reading of the paper's (prefixed) -- so the report shows which claims change (issue 21)."""
    out = []
    for noise in [n for n in NOISES if any(_noise(r) == n for r in results)]:
        part = _by(results, noise=noise)
        prefix = "" if noise == "lognormal" else (
            "[paper's prediction model, our reading: x drawn from the linear symmetric weight "
            "on R_y = [y(1-s), y(1+s)]; σ below is the half-width s] ")
        for c in (_claim_ski_vs_bp(part, cfg), _claim_ski_near(part, cfg, noise),
                  _claim_ski_vs_bp(part, cfg, "heldout_"), _claim_one_max(part, cfg),
                  _claim_one_max(part, cfg, "heldout_")):
            if c is not None:
                out.append(replace(c, text=prefix + c.text))
    return out


def _bp_notes(results: list[Result]) -> list[str]:
    """Where each prediction model puts the ski-rental baselines, beside the paper's numbers:
    the test of whether the noise model explains the gap to the paper (issue 21)."""
    rs = _by(results, problem="ski_rental")
    out = []
    for noise in [n for n in NOISES if any(_noise(r) == n for r in rs)]:
        cells = []
        for sigma in dict.fromkeys(r.trial.params["sigma"] for r in _by(rs, noise=noise)):
            vals = {m: _cell(_by(rs, noise=noise, sigma=sigma, method=m), "avg_ratio")[0]
                    for m in ("bp_rho=b", "bp_rho=b(r-1)", "avg@zero", "max@zero")}
            cells.append(f"{'σ' if noise == 'lognormal' else 's'}={sigma:g}: "
                         + ", ".join(f"{m} {v:.3f}" for m, v in vals.items()))
        out.append(f"Ski-rental average ratios under {NOISE_LABEL[noise]}: " + "; ".join(cells)
                   + " (paper: BP_(ρ=b) 1.677, BP_(ρ=b(r-1)) 2.219, AVG 1.337, MAX 1.344).")
    return out


def summarize(results: list[Result], cfg: DecisionMetricsConfig, outdir: Path) -> Summary:
    """Tables (mean ± 95% CI across seeds), two figures and the claims."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    tables: list[Table] = []
    for prob in dict.fromkeys(r.trial.problem for r in results):
        rs = _by(results, problem=prob)
        tables.append(aggregate(rs, by=["noise", "sigma", "method"],
                                metrics=["avg_ratio", "mean_value", "heldout_avg_ratio",
                                         "heldout_mean_value", "max_robustness", "jump_mean"],
                                title=f"{prob}: test performance (noise model, σ or s; held "
                                      f"out at 2σ / 2s)"))
        own = [f"dmax_{w}" for w in cfg.windows] + [f"davg_{w}" for w in cfg.windows]
        own += [f"acons_{a:g}" for a in cfg.alphas]
        tables.append(aggregate(rs, by=["noise", "sigma", "method"], metrics=own,
                                title=f"{prob}: the paper's measures (mean over the prediction "
                                      f"grid; CVaR on the training draw)"))
    claims = [_claim_robust(results), _claim_own_measure(results, cfg),
              _claim_brittle(results, cfg)]
    claims += _model_claims(results, cfg)
    p0 = dict(results[0].trial.params) if results else {"delta": cfg.delta, "n_param": cfg.n_param,
                                                         "n_x": cfg.n_x}
    figures = _figures(results, outdir, p0) if results else []
    notes = [
        "The paper's distributions of true values and predictions were not retrieved (searched "
        "again for issue 21: arXiv 2501.17701 v1/v2, OpenReview XGEZ9q02Ys, paper summaries; "
        "none gives the experimental distribution). Two models run side by side, the "
        "prediction y uniform on a log-spaced grid in both: ours, x = y·exp(σZ); and our "
        "reading of the paper's, x drawn from the linear symmetric (triangular) weight the "
        "paper's MAX/AVG use, on R_y = [y(1-s), y(1+s)] (s = 1: R_y = [0, 2y], the paper's "
        "default range [0, ∞) cut symmetrically around y; held out at 2s, clipped to the "
        "domain). One-max: clipped to [1, M], adversarial price path given the maximum.",
        *_bp_notes(results),
        "BP_ρ (Benomar & Perchet 2025) is our reconstruction: buy at b/(r-1) if y >= b, else at "
        "ρ; PO1/PO2 (Sun et al. 2021) are our readings (clip(y, M/r, r) and max(M/r, ry/M)); "
        "δ-TOL is the best worst case over [(1-δ)y, (1+δ)y] with δ = "
        f"{cfg.delta:g}.  The paper's exact rules may differ.",
        "Contract scheduling: the candidate family is the doubling schedules λ2^i, λ ∈ [1, 2] "
        "(inferred), with the ideal I_4 = 2 over that family; the CVaR choice uses the lost "
        "contract length T - ℓ.",
        "MAX/AVG/CVaR optima come from a grid + bounded-Brent search over the robust interval "
        "(CVaR also over its exact candidate points), not the paper's closed forms "
        "(not retrieved).  CVaR choices are fitted on a training draw separate from the test "
        "draw; the set 𝓕 of distributions is the single fitted distribution.",
        "One-max and contract: inputs are identified with their scalar x by the worst case over "
        "inputs with that x; I_r is the lower envelope of the r-robust family.",
    ]
    return Summary(tables=tables, figures=figures, claims=claims, notes=notes)


PRESETS = {
    "smoke": DecisionMetricsConfig(seeds=2, problems=PROBLEMS, sigmas=(0.2,), spreads=(1.0,),
                                   windows=("half",), n_test=300, n_train=32, n_pred=4,
                                   n_param=33, n_x=129),
    "quick": DecisionMetricsConfig(seeds=3, problems=("ski_rental",), sigmas=(0.1, 0.4),
                                   spreads=(0.5, 1.0),
                                   windows=("half", "zero"), n_test=2000, n_train=128,
                                   n_pred=24, n_param=129, n_x=513),
    "full": DecisionMetricsConfig(seeds=5, problems=PROBLEMS, sigmas=(0.05, 0.1, 0.2, 0.4),
                                  spreads=(0.5, 1.0),
                                  windows=("half", "zero"), n_test=10_000, n_train=256,
                                  n_pred=32, n_param=257, n_x=1025),
}

REPRODUCTION = Reproduction(
    slug="decision-metrics",
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Ski rental (b=10, r=5), one-max search (M=1000, r=100) and contract scheduling (r=4) "
        "with a noisy prediction (ours: x = y·exp(σZ); our reading of the paper's: x drawn "
        "from the linear symmetric weight on [y(1-s), y(1+s)]): the r-robust choices that "
        "minimise the paper's distance measures (MAX, AVG, linear weight on [y/2, 2y] and "
        "[0, 2y]) and CVaR_α risk, against the prediction-free optimum, Pareto choices (BP_ρ, "
        "PO1/PO2, follow the prediction) and δ-TOL; exact ratios per instance, test at σ "
        "and held out at 2σ."),
)
