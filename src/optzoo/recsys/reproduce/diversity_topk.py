"""Reproduction ``diversity-topk``: Zhou, Dalleiger, Calikus & Gionis, "Gradient-Based Diversity
Optimization with Differentiable Top-k Objective" (ICLR 2026, OpenReview cuzWopwoZG).  No
official code.

Setting (the brief's small-scale protocol): MovieLens-100K read from the ``recbole`` wheel's
data files (``data="auto"`` falls back to the synthetic genre-structured set when they are
absent; the smoke preset always uses the synthetic set), per-user temporal 80/20 split, item
affinity S = genre Jaccard, backbone MF (d = 32; NeuMF-lite in ``full``), relevance-only
training by Adam 1e-3 for ``epochs`` epochs of 1,024 ratings (+1 sampled zero each), k = 10,
every unseen item of the catalogue ranked for NDCG@10 / Recall@10.  Per seed and backbone:

* ``finetune`` trial: (a) the relevance-only model; (c) DDT fine-tuning of it (MGDA β*, fresh
  Adam 1e-3) evaluated after each of ``ft_steps``; (g) fixed-β fine-tuning for ``claim_steps``
  steps per β in ``fixed_betas``; the straight-through (hard top-k) ablation for
  ``claim_steps`` steps; (d) MDR fine-tuning for ``mdr_steps`` steps; (e) MMR re-ranking per λ;
  (f) DPP greedy MAP per θ; the ε-mixing floor.
* ``scratch`` trial: (b) DDT from the same initialisation for the same number of steps as (a).

Claims (thresholds fixed before any run; "clear margin" = +10 % relative ILD@10, "few steps" =
``claim_steps`` = 50, as the brief proposes).  Every claim is decided by a test of
:mod:`optzoo.experiment.verdicts` on per-seed relative changes, paired by seed against (a) (the
``finetune`` and ``scratch`` trials of a seed share its data split and initialisation):
(1) DDT fine-tuning for ``claim_steps`` steps raises ILD@10 by more than 10 % relative
(``superior``, the CI of the relative gain above ``min_ild_gain``) while NDCG@10 is
non-inferior within 2 % relative (``noninferior``, margin ``ndcg_margin``), ``all_of`` both;
(2) the same for DDT from scratch; (3) MDR raises ILD@10 by more than ``min_gain`` relative
(``superior``) with NDCG@10 non-inferior within ``ndcg_margin``; (4) at DDT-FT's ILD, DDT's
NDCG@10 is higher than MMR's and DPP's by more than ``min_gain`` relative (``superior`` per
baseline, ``all_of``), the baseline's NDCG interpolated linearly along its sweep in ILD, the
sweep including the base model as its relevance end (MMR λ = 1 and DPP θ → 1 re-rank
nothing); a baseline cell is *inconclusive* when DDT's ILD lies outside that sweep (below the
base model's or above the most diverse point) in some seed: no matched-ILD point there;
(5) fine-tuning reaches the from-scratch trade-off (ILD@10 and NDCG@10 both non-inferior to
scratch's within ``reach_margin`` / ``ndcg_margin`` relative, ``all_of``) after at most 5 % of
the from-scratch steps, tested at a checkpoint taken at floor(5 % of the scratch steps) in
every trial (``reach_steps``; one pre-declared test, no pick among checkpoints); (6) the
diversity gain spills over to positions 11–20: the relative ILD@11–20 gain of DDT-FT exceeds
``min_gain`` (``superior``).  Claims use the MF backbone.

Verdict margins (preset fields, the same in every preset, fixed before any quick result was seen):

* ``min_ild_gain = 0.10``: the brief's "clear margin" of diversity gain (≥ 10 % relative ILD@10).
* ``ndcg_margin = 0.02``: the brief's "NDCG@10 drops ≤ 2 % relative" (negligible accuracy loss).
* ``min_gain = 0.02``: the smallest relative change that counts as a gain (MDR's "positive"
  ILD gain, the 11–20 spillover, DDT's NDCG advantage at matched ILD): the same 2 % that the
  brief treats as a negligible change of NDCG.
* ``reach_margin = 0.02``: "reaches the from-scratch trade-off" tolerates an ILD@10 shortfall of
  2 % relative, the tolerance the claim already grants NDCG@10.

Is the diversity term acting?  DDT steps on w_rel·g_rel + w_div·g_div with MGDA's β*.  On the
raw gradients (``normalize="none"``), ‖g_div‖ ≈ 200 ‖g_rel‖ and ρ ≈ 0 give β* = 0.99995 and the
step is relevance-only training (issue 23: ΔILD +0.09 %, ΔNDCG +3.3 % at quick); with the
default unit-normalised gradients (:mod:`optzoo.recsys.diversity_topk`, "Gradient scale") β* =
1/2 and both parts have equal norm.  Each DDT / MDR run records per step the applied β, the
raw-gradient β*, ‖g_div‖/‖g_rel‖, cos(g_rel, g_div) and the diversity share of the step,
‖w_div g_div‖ / ‖w_rel g_rel‖ (MDR: of the two terms' gradients with respect to the pair
weights); a table gives β* over training (per window between checkpoints, or per quarter).
The claims on a run (1)–(6) are *inconclusive* (``not_acting``) when that run's median
diversity share, averaged over seeds, is below ``min_div_share = 0.05`` (5 % of the relevance
part).  This guard was added after the first quick run under issue 18 (1 − β* ≈ 5e-5, a share
of ≈ 1 %); it can only turn a verdict inconclusive.

Changed by issue 23 (old → new): MGDA on raw → unit-normalised gradients (``normalize``, a
trial parameter: new trial keys); the acting guard reads the measured share of each step
instead of (1 − β̄)/β̄ · median ratio; claim (4)'s sweeps include the base model (λ = 1), so a
DDT less diverse than the base model is outside the sweep (before, the least diverse re-ranked
point was the sweep's end and ``np.interp`` clipped to it); claim (5) is tested at its own
checkpoint floor(5 % of the scratch steps) (before: the last of ``ft_steps`` within 5 %, 10
steps at quick, as 50 > 47.4).

Rules changed by issue 18 (old → new): (1)/(2) mean gain ≥ 10 % with a CI above 0 and a *mean*
NDCG drop ≤ 2 % → the CI of the gain above 10 % and a non-inferiority test of NDCG (the old
mean-only accuracy check had no CI); (3) a CI above 0 (any gain, however small) and a mean
NDCG check → ``min_gain`` and ``noninferior``; (4) a CI above 0 (any advantage, however
small) → ``min_gain``, and the baseline read at its sweep's end (clipped interpolation, not at
matched ILD) no longer decides the cell; (5) seed means compared without CIs at the first
checkpoint that "reached" (a pick among checkpoints; "ILD ≥ scratch's" passed on a tie) →
non-inferiority tests with fixed margins at one pre-declared checkpoint; (6) a CI above 0 →
``min_gain``.
Trial keys are unchanged (the margin fields are left out of the trial parameters).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment.stats import fmt_ci, mean_ci
from optzoo.experiment.verdicts import (
    INCONCLUSIVE,
    Verdict,
    all_of,
    noninferior,
    not_acting,
    superior,
    undecided,
)
from optzoo.recsys import (
    DiversitySettings,
    TrainSet,
    dpp_rerank,
    epsilon_mix,
    evaluate,
    genre_jaccard,
    load_ratings,
    make_backbone,
    mmr_rerank,
    score_all,
    temporal_split,
    topk_lists,
    train,
)
from optzoo.report.figures import color, grid, save

SLUG = "diversity-topk"
METRICS = ("ndcg", "recall", "ild", "ild_next", "genre_cov", "cat_cov", "gini", "rel_share")
LIST_LEN = 20  # 2k: positions 11..20 give the spillover diversity
RERANK_POOL = 100
REACH_SHARE = 0.05  # claim (5): "at most 5 % of the from-scratch gradient steps"
# verdict margins: preset fields, but not trial parameters (the trial keys must not change)
MARGINS = ("min_ild_gain", "ndcg_margin", "min_gain", "reach_margin", "min_div_share")


# -- configuration ---------------------------------------------------------------------------

@dataclass(frozen=True)
class DiversityTopkConfig(Preset):
    """Settings of the reproduction.

    Args:
        seeds: seeds (one ``finetune`` and one ``scratch`` trial per seed and backbone).
        data: ``"auto"`` (MovieLens-100K if its files are found, else synthetic), ``"ml-100k"``
            or ``"synthetic"``.
        synth_users, synth_items: size of the synthetic set.
        backbones: ``"mf"`` and / or ``"neumf"``.
        dim: MF dimension (NeuMF: dim/2 per branch, MLP width dim).
        epochs: relevance-only epochs (the scratch DDT runs the same number of steps).
        lr: Adam learning rate of every run.
        ft_steps: DDT fine-tuning steps at which the model is evaluated.
        claim_steps: the "few steps" of claims 1, 4, 6 (one of ``ft_steps``).
        fixed_betas: β of the fixed-β fine-tuning ablation.
        mdr_steps: MDR fine-tuning steps.
        mmr_lambdas: MMR λ sweep; dpp_thetas: DPP θ sweep.
        explore_eps: rate of the ε-mixing floor.
        pool, eps_times_n, tau, div_users, normalize: diversity term and MGDA's gradient
            normalisation (see DiversitySettings).
        min_ild_gain, ndcg_margin, min_gain, reach_margin: verdict margins (relative; see the
            module docstring, "Verdict margins"); not part of the trial parameters.
        min_div_share: the smallest diversity share of a DDT / MDR step for the method to act
            (module docstring, "Is the diversity term acting?"); not a trial parameter.
    """

    seeds: int = 3
    data: str = "auto"
    synth_users: int = 300
    synth_items: int = 400
    backbones: tuple[str, ...] = ("mf",)
    dim: int = 32
    epochs: int = 20
    lr: float = 1e-3
    ft_steps: tuple[int, ...] = (10, 50, 200)
    claim_steps: int = 50
    fixed_betas: tuple[float, ...] = (0.9, 0.5, 0.1)
    mdr_steps: int = 200
    mmr_lambdas: tuple[float, ...] = (0.9, 0.8, 0.7, 0.5, 0.3)
    dpp_thetas: tuple[float, ...] = (0.95, 0.9, 0.7, 0.5)
    explore_eps: float = 0.2
    pool: int = 50
    eps_times_n: float = 1.0
    tau: float = 0.5
    div_users: int = 64
    normalize: str = "l2"
    min_ild_gain: float = 0.10
    ndcg_margin: float = 0.02
    min_gain: float = 0.02
    reach_margin: float = 0.02
    min_div_share: float = 0.05

    def validate(self) -> None:
        super().validate()
        if self.data not in ("auto", "ml-100k", "synthetic"):
            raise ConfigError(f"data: expected auto, ml-100k or synthetic, got {self.data!r}")
        bad = [b for b in self.backbones if b not in ("mf", "neumf")]
        if not self.backbones or bad:
            raise ConfigError(f"backbones: expected a non-empty subset of (mf, neumf), "
                              f"got {self.backbones}")
        if self.claim_steps not in self.ft_steps:
            raise ConfigError(f"claim_steps: expected one of ft_steps {self.ft_steps}, "
                              f"got {self.claim_steps}")
        if any(s < 1 for s in self.ft_steps) or list(self.ft_steps) != sorted(self.ft_steps):
            raise ConfigError(f"ft_steps: expected increasing positive steps, got "
                              f"{self.ft_steps}")
        if any(not 0 <= b <= 1 for b in self.fixed_betas):
            raise ConfigError(f"fixed_betas: expected values in [0, 1], got {self.fixed_betas}")
        if len(self.mmr_lambdas) < 2 or any(not 0 <= v <= 1 for v in self.mmr_lambdas):
            raise ConfigError(f"mmr_lambdas: expected >= 2 values in [0, 1], got "
                              f"{self.mmr_lambdas}")
        if len(self.dpp_thetas) < 2 or any(not 0 < v < 1 for v in self.dpp_thetas):
            raise ConfigError(f"dpp_thetas: expected >= 2 values in (0, 1), got "
                              f"{self.dpp_thetas}")
        for name in ("dim", "epochs", "mdr_steps", "synth_users", "div_users"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected >= 1, got {getattr(self, name)}")
        if self.synth_items < RERANK_POOL + 20:
            raise ConfigError(f"synth_items: expected >= {RERANK_POOL + 20}, "
                              f"got {self.synth_items}")
        for name in MARGINS:
            if not 0 < getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected a relative margin in (0, 1), got "
                                  f"{getattr(self, name)}")
        if not 0 <= self.explore_eps <= 1:
            raise ConfigError(f"explore_eps: expected a number in [0, 1], got {self.explore_eps}")
        try:
            self.settings()
        except ValueError as e:
            raise ConfigError(str(e)) from None

    def settings(self) -> DiversitySettings:
        return DiversitySettings(k=10, pool=self.pool, eps_times_n=self.eps_times_n,
                                 tau=self.tau, div_users=self.div_users,
                                 normalize=self.normalize)


PRESETS = {
    "smoke": DiversityTopkConfig(seeds=1, data="synthetic", synth_users=120, synth_items=150,
                                 dim=8, epochs=2, ft_steps=(2, 4), claim_steps=4,
                                 fixed_betas=(0.5,), mdr_steps=2, mmr_lambdas=(0.9, 0.5),
                                 dpp_thetas=(0.9, 0.5), pool=20, div_users=8),
    "quick": DiversityTopkConfig(epochs=12, mdr_steps=100),
    "full": DiversityTopkConfig(seeds=5, backbones=("mf", "neumf"),
                                mmr_lambdas=(0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.3),
                                dpp_thetas=(0.99, 0.95, 0.9, 0.8, 0.7, 0.5)),
}


def trials(cfg: DiversityTopkConfig) -> list[Trial]:
    params = {k: v for k, v in cfg.to_dict().items()
              if k not in ("seeds", "backbones", *MARGINS)}
    return [Trial(method=kind, problem=f"{cfg.data}-{bb}", seed=s,
                  params={**params, "backbone": bb})
            for bb in cfg.backbones for s in range(cfg.seeds) for kind in ("finetune", "scratch")]


# -- one trial ---------------------------------------------------------------------------------

@functools.lru_cache(maxsize=2)
def _problem(data: str, synth_users: int, synth_items: int):
    d = load_ratings(data, seed=0, n_users=synth_users, n_items=synth_items)
    test = temporal_split(d, 0.2)
    tr = TrainSet.from_ratings(d, ~test)
    sim = genre_jaccard(d.item_genres)
    test_sets: list[set[int]] = [set() for _ in range(d.n_users)]
    for u, i in zip(d.users[test], d.items[test], strict=True):
        test_sets[int(u)].add(int(i))
    return d, tr, sim, test_sets


def _eval(prefix: str, lists, problem, scores) -> dict:
    d, _, sim, test_sets = problem
    return {f"{prefix}__{k}": v for k, v in
            evaluate(lists, test_sets, sim, d.item_genres, scores).items()}


def _model_eval(prefix: str, model, problem) -> dict:
    d, tr, _, _ = problem
    sc = score_all(model, d.n_users).numpy()
    return _eval(prefix, topk_lists(sc, tr.seen.numpy(), LIST_LEN), problem, sc)


def _quarters(steps: int) -> list[int]:
    """Window ends that split ``steps`` into four (fewer when steps < 4)."""
    return sorted({max(1, round(steps * q / 4)) for q in range(1, 5)})


def _trace(run: str, h: dict[str, list[float]], ends: list[int]) -> dict:
    """The step balance of a DDT / MDR run: over all steps, mean β (applied) and β* on the raw
    gradients, medians of ‖g_div‖/‖g_rel‖, cos(g_rel, g_div) and the diversity share of the
    step; and per window of steps ending at each of ``ends`` the mean β, mean raw β* and median
    diversity share (β* over training)."""
    arr = {k: np.asarray(h[k], dtype=float) for k in ("beta", "beta_raw", "grad_ratio", "cos",
                                                       "div_share")}

    def med(x: np.ndarray) -> float:
        x = x[~np.isnan(x)]  # NaN: a step with a zero gradient has no cosine
        return float(np.median(np.minimum(x, 1e12))) if len(x) else None

    out = {f"{run}__beta": float(np.mean(arr["beta"])),
           f"{run}__beta_raw": float(np.mean(arr["beta_raw"])),
           f"{run}__grad_ratio": med(arr["grad_ratio"]), f"{run}__cos": med(arr["cos"]),
           f"{run}__div_share": med(arr["div_share"])}
    start = 0
    for end in ends:
        w = slice(start, end)
        if end > start:
            out[f"{run}__beta@{end}"] = float(np.mean(arr["beta"][w]))
            out[f"{run}__beta_raw@{end}"] = float(np.mean(arr["beta_raw"][w]))
            out[f"{run}__div_share@{end}"] = med(arr["div_share"][w])
        start = end
    return out


def run_trial(trial: Trial, device: str) -> dict:
    torch.set_num_threads(1)
    p = trial.params
    problem = _problem(p["data"], int(p["synth_users"]), int(p["synth_items"]))
    d, tr, sim, _ = problem
    sim_t = torch.as_tensor(sim, dtype=torch.float32)
    st = DiversityTopkConfig(**{k: (tuple(v) if isinstance(v, list) else v)
                                for k, v in p.items() if k != "backbone"}).settings()
    seed, lr = trial.seed, float(p["lr"])
    steps = int(p["epochs"]) * math.ceil(tr.users.numel() / st.batch_size)
    torch.manual_seed(1000 + seed)
    model = make_backbone(p["backbone"], d.n_users, d.n_items, int(p["dim"]))
    out: dict = {"data": d.source, "steps_scratch": steps}

    def gen(k: int) -> torch.Generator:
        return torch.Generator().manual_seed(10_000 * (seed + 1) + k)

    if trial.method == "scratch":
        h = train(model, tr, sim_t, steps, method="ddt", settings=st, lr=lr, generator=gen(0))
        out.update(_model_eval("ddt_scratch", model, problem))
        out.update(_trace("ddt_scratch", h, _quarters(steps)))
        return out

    train(model, tr, sim_t, steps, method="relevance", settings=st, lr=lr, generator=gen(0))
    base = copy.deepcopy(model)
    out.update(_model_eval("base", base, problem))
    base_scores = score_all(base, d.n_users).numpy()
    seen = tr.seen.numpy()

    # claim (5)'s checkpoint: the largest step count within 5 % of the from-scratch steps
    reach = max(1, math.floor(REACH_SHARE * steps))
    out["reach_steps"] = reach
    checkpoints = {int(s) for s in p["ft_steps"]} | {reach}

    def at(step: int, m) -> None:
        if step in checkpoints:
            out.update(_model_eval(f"ddt_ft{step}", m, problem))
        if step == reach:
            out.update(_model_eval("ddt_ft_reach", m, problem))

    ft = copy.deepcopy(base)
    h = train(ft, tr, sim_t, max(checkpoints), method="ddt", settings=st, lr=lr,
              generator=gen(1), callback=at)
    out.update(_trace("ddt_ft", h, sorted(checkpoints)))
    cs = int(p["claim_steps"])
    for b in p["fixed_betas"]:
        m = copy.deepcopy(base)
        train(m, tr, sim_t, cs, method="ddt", beta=float(b), settings=st, lr=lr, generator=gen(1))
        out.update(_model_eval(f"fixed{float(b):g}", m, problem))
    m = copy.deepcopy(base)
    st_straight = dataclasses.replace(st, straight_through=True)
    train(m, tr, sim_t, cs, method="ddt", settings=st_straight, lr=lr, generator=gen(1))
    out.update(_model_eval("ddt_st", m, problem))
    m = copy.deepcopy(base)
    h = train(m, tr, sim_t, int(p["mdr_steps"]), method="mdr", settings=st, lr=lr,
              generator=gen(1))
    out.update(_model_eval("mdr", m, problem))
    out.update(_trace("mdr", h, _quarters(int(p["mdr_steps"]))))
    # the base ranking is the relevance end of both sweeps (MMR λ = 1, DPP θ → 1): stored as
    # base__*, read by claim (4) as a sweep point
    for lam in p["mmr_lambdas"]:
        lists = mmr_rerank(base_scores, seen, sim, float(lam), LIST_LEN, RERANK_POOL)
        out.update(_eval(f"mmr{float(lam):g}", lists, problem, base_scores))
    for th in p["dpp_thetas"]:
        lists = dpp_rerank(base_scores, seen, sim, float(th), LIST_LEN, RERANK_POOL)
        out.update(_eval(f"dpp{float(th):g}", lists, problem, base_scores))
    lists = epsilon_mix(topk_lists(base_scores, seen, LIST_LEN), seen, float(p["explore_eps"]),
                        np.random.default_rng(seed))
    out.update(_eval("explore", lists, problem, base_scores))
    return out


# -- summary -----------------------------------------------------------------------------------

def _fmt(vals, digits: int = 4) -> str:
    return fmt_ci(*mean_ci(vals), digits=digits) if len(vals) else "—"


def _methods(cfg: DiversityTopkConfig) -> list[tuple[str, str]]:
    rows = [("base", "(a) relevance-only")]
    rows += [("ddt_scratch", "(b) DDT from scratch (MGDA β*)")]
    rows += [(f"ddt_ft{s}", f"(c) DDT fine-tune {s} steps") for s in cfg.ft_steps]
    rows += [(f"fixed{b:g}", f"(g) fixed β = {b:g}, {cfg.claim_steps} steps")
             for b in cfg.fixed_betas]
    rows += [("ddt_st", f"DDT straight-through top-k, {cfg.claim_steps} steps"),
             ("mdr", f"(d) MDR fine-tune {cfg.mdr_steps} steps")]
    rows += [(f"mmr{v:g}", f"(e) MMR λ = {v:g}") for v in cfg.mmr_lambdas]
    rows += [(f"dpp{v:g}", f"(f) DPP θ = {v:g}") for v in cfg.dpp_thetas]
    rows += [("explore", f"ε-mixing floor ε = {cfg.explore_eps:g}")]
    return rows


def _by_seed(results: list[Result], backbone: str) -> dict[int, dict]:
    """Per seed, the union of the finetune and scratch trials' metrics of a backbone."""
    out: dict[int, dict] = {}
    for r in results:
        if r.trial.params.get("backbone") == backbone:
            out.setdefault(r.trial.seed, {}).update(r.metrics)
    return dict(sorted(out.items()))


def _col(seeds: dict[int, dict], key: str) -> np.ndarray:
    return np.array([float(m[key]) for m in seeds.values() if m.get(key) is not None])


def _rel(seeds, method: str, metric: str) -> np.ndarray:
    """Paired relative change of a metric against relevance-only, per seed."""
    return np.array([float(m[f"{method}__{metric}"]) / float(m[f"base__{metric}"]) - 1.0
                     for m in seeds.values()
                     if m.get(f"{method}__{metric}") is not None and m[f"base__{metric}"]])


def _sweep(m: dict, prefix: str, values) -> list[tuple[float, float]]:
    """(ILD@10, NDCG@10) of a re-ranker's sweep sorted by ILD, with the base ranking as its
    relevance end (MMR λ = 1, DPP θ → 1 re-rank nothing) when it is stored."""
    pts = [(float(m[f"{prefix}{v:g}__ild"]), float(m[f"{prefix}{v:g}__ndcg"])) for v in values]
    if m.get("base__ild") is not None and m.get("base__ndcg") is not None:
        pts.append((float(m["base__ild"]), float(m["base__ndcg"])))
    return sorted(pts)


def _frontier_ndcg(m: dict, prefix: str, values, target_ild: float) -> float:
    """The sweep's NDCG@10 interpolated linearly in ILD@10 at ``target_ild`` (clipped to the
    sweep's ends outside it: the caller makes such a cell inconclusive)."""
    pts = _sweep(m, prefix, values)
    return float(np.interp(target_ild, [a for a, _ in pts], [b for _, b in pts]))


def summarize(results: list[Result], cfg: DiversityTopkConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    tables, figures, claims = [], [], []
    backbones = [b for b in cfg.backbones if _by_seed(results, b)]
    for bb in backbones:
        seeds = _by_seed(results, bb)
        rows = []
        for key, name in _methods(cfg):
            if f"{key}__ndcg" not in next(iter(seeds.values())):
                continue
            rows.append([name] + [_fmt(_col(seeds, f"{key}__{mt}")) for mt in METRICS]
                        + [_fmt(100 * _rel(seeds, key, "ild"), 3),
                           _fmt(100 * _rel(seeds, key, "ndcg"), 3)])
        src = next(iter(seeds.values())).get("data", cfg.data)
        tables.append(Table(
            title=f"{bb.upper()} on {src}: top-10 accuracy and diversity (mean ± 95% CI over "
                  f"{len(seeds)} seed(s); Δ = paired relative change vs relevance-only, %)",
            columns=["method", "NDCG@10", "Recall@10", "ILD@10", "ILD@11-20", "genre cov@10",
                     "catalogue cov@10", "Gini@10", "rel. share@10", "ΔILD %", "ΔNDCG %"],
            rows=rows))
        runs = (("ddt_ft", "DDT fine-tune"), ("ddt_scratch", "DDT scratch"),
                ("mdr", "MDR (meta objective)"))
        diag = [[name] + [_fmt(_col(seeds, f"{key}__{c}")) for c in
                          ("beta", "beta_raw", "grad_ratio", "cos", "div_share")]
                for key, name in runs if len(_col(seeds, f"{key}__beta"))]
        tables.append(Table(
            title=f"{bb.upper()}: the MGDA step (gradients normalised: {cfg.normalize}); mean β "
                  "applied and mean β* of the raw-gradient formula over steps; medians of "
                  "‖g_div‖/‖g_rel‖, cos(g_rel, g_div) and the diversity share ‖(1−β)·div part‖ "
                  "/ ‖β·rel part‖ of the step (MDR: of the gradients w.r.t. the pair weights)",
            columns=["run", "mean β", "mean raw β*", "‖g_div‖/‖g_rel‖", "cos", "div. share"],
            rows=diag))
        trace = []
        for key, name in runs:
            ends = sorted({int(k.split("@")[1]) for k in next(iter(seeds.values()))
                           if k.startswith(f"{key}__beta@")})
            start = 0
            for end in ends:
                trace.append([name, f"{start + 1}–{end}",
                              _fmt(_col(seeds, f"{key}__beta@{end}")),
                              _fmt(_col(seeds, f"{key}__beta_raw@{end}")),
                              _fmt(_col(seeds, f"{key}__div_share@{end}"))])
                start = end
        if trace:
            tables.append(Table(
                title=f"{bb.upper()}: β* over training (mean over the steps of each window; "
                      "median diversity share)",
                columns=["run", "steps", "β applied", "raw β*", "div. share"], rows=trace))
        figures.append(_plot(seeds, cfg, bb, outdir / f"tradeoff_{bb}.png"))
    if "mf" in backbones:
        claims = _claims(_by_seed(results, "mf"), cfg)
    elif backbones:
        claims = _claims(_by_seed(results, backbones[0]), cfg)
    return Summary(tables=tables, figures=figures, claims=claims, notes=_notes(cfg))


def _rel_by_seed(seeds: dict[int, dict], num: str, den: str) -> dict[int, float]:
    """``{seed: num / den − 1}``: the paired relative change of metric ``num`` against ``den``."""
    return {s: float(m[num]) / float(m[den]) - 1.0 for s, m in seeds.items()
            if m.get(num) is not None and m.get(den) is not None and float(m[den]) != 0.0}


def _zero(values: dict[int, float]) -> dict[int, float]:
    """The no-change reference ``{seed: 0}`` a relative change is compared with."""
    return {s: 0.0 for s in values}


def _gain(values: dict[int, float], min_effect: float) -> Verdict:
    """A relative change that must exceed ``min_effect`` (``superior`` against no change)."""
    return superior(values, _zero(values), min_effect=min_effect)


def _no_loss(values: dict[int, float], margin: float) -> Verdict:
    """A relative change no worse than ``−margin`` (``noninferior`` against no change)."""
    return noninferior(values, _zero(values), margin=margin)


def _unmatched(verdict: Verdict, why: str) -> Verdict:
    """The comparison is not at matched ILD in some seed: *inconclusive*, whatever it says.
    (The verdict module's guards name tuning and acting, not a reference read outside its
    sweep; this keeps the verdict's numbers and records why.)"""
    if verdict.verdict == INCONCLUSIVE:
        return dataclasses.replace(verdict, guards=(*verdict.guards, why))
    return dataclasses.replace(
        verdict, verdict=INCONCLUSIVE, reason=f"{verdict.reason}; inconclusive ({why})",
        guards=(*verdict.guards, f"would be {verdict.verdict}: {why}"))


def _div_share(seeds: dict[int, dict], run: str) -> float:
    """Mean over seeds of the diversity part's norm relative to the relevance part's in a step
    of ``run``: the stored median over steps of ‖w_div g_div‖ / ‖w_rel g_rel‖ (the step's
    actual weights); for runs stored before it was recorded, (1 − β*) / β* · ‖g_div‖ / ‖g_rel‖
    from the mean β* and median norm ratio (MDR: the DDT fine-tune's norm ratio of the same
    seed).  NaN if not stored."""
    stored = _col(seeds, f"{run}__div_share")
    if len(stored):  # measured on every step (median over the run's steps)
        return float(np.mean(stored))
    vals = []
    for m in seeds.values():
        b = m.get(f"{run}__beta")
        r = m.get(f"{run}__grad_ratio", m.get("ddt_ft__grad_ratio"))
        if b is None or r is None:
            continue
        vals.append(math.inf if float(b) <= 0 else (1.0 - float(b)) / float(b) * float(r))
    return float(np.mean(vals)) if vals else math.nan


def _acting(verdict: Verdict, seeds: dict[int, dict], cfg: DiversityTopkConfig,
            *runs: str) -> Verdict:
    """``not_acting`` when the diversity term of any of ``runs`` carries less than
    ``min_div_share`` of the step (MGDA's β* stays at 1)."""
    for run in runs:
        share = _div_share(seeds, run)
        if math.isfinite(share) and share < cfg.min_div_share:
            beta = np.mean(_col(seeds, f"{run}__beta"))
            return not_acting(verdict, f"MGDA's β* of {run} averages {beta:.5f}: the diversity "
                                       f"part of its step is {100 * share:.2g} % of the "
                                       f"relevance part (< {100 * cfg.min_div_share:g} %)")
    return verdict


def _claims(seeds: dict[int, dict], cfg: DiversityTopkConfig) -> list[Claim]:
    cs = cfg.claim_steps
    out = []
    for key, label, num in ((f"ddt_ft{cs}", f"DDT fine-tuning for {cs} steps", "(1)"),
                            ("ddt_scratch", "DDT from scratch", "(2)")):
        gi = _rel_by_seed(seeds, f"{key}__ild", "base__ild")
        gn = _rel_by_seed(seeds, f"{key}__ndcg", "base__ndcg")
        out.append(Claim(
            text=f"{num} {label} raises ILD@10 by a clear margin (relative gain > "
                 f"{cfg.min_ild_gain:.0%}, paired by seed) while NDCG@10 is non-inferior "
                 f"within {cfg.ndcg_margin:.0%} relative (paper: DDT raises diversity with "
                 "negligible accuracy loss).",
            evidence=f"ΔILD@10 {_fmt(100 * np.array(list(gi.values())), 3)} %, ΔNDCG@10 "
                     f"{_fmt(100 * np.array(list(gn.values())), 3)} % (n = {len(gi)} seeds)",
            verdict=_acting(all_of({
                f"ILD@10 gain > {cfg.min_ild_gain:g}": _gain(gi, cfg.min_ild_gain),
                f"NDCG@10 loss < {cfg.ndcg_margin:g}": _no_loss(gn, cfg.ndcg_margin)}),
                seeds, cfg, "ddt_scratch" if key == "ddt_scratch" else "ddt_ft")))
    gi = _rel_by_seed(seeds, "mdr__ild", "base__ild")
    gn = _rel_by_seed(seeds, "mdr__ndcg", "base__ndcg")
    gd = _rel(seeds, f"ddt_ft{cs}", "ild")
    out.append(Claim(
        text=f"(3) MDR reweighting ({cfg.mdr_steps} fine-tuning steps) raises ILD@10 (relative "
             f"gain > {cfg.min_gain:.0%}) with NDCG@10 non-inferior within "
             f"{cfg.ndcg_margin:.0%} relative (brief: a smaller gain than DDT's).",
        evidence=f"ΔILD@10 {_fmt(100 * np.array(list(gi.values())), 3)} % (DDT-FT{cs}: "
                 f"{_fmt(100 * gd, 3)} %), ΔNDCG@10 "
                 f"{_fmt(100 * np.array(list(gn.values())), 3)} %",
        verdict=_acting(all_of({f"ILD@10 gain > {cfg.min_gain:g}": _gain(gi, cfg.min_gain),
                                f"NDCG@10 loss < {cfg.ndcg_margin:g}": _no_loss(gn,
                                                                               cfg.ndcg_margin)}),
                        seeds, cfg, "mdr")))
    cells, texts = {}, []
    for prefix, name, values in (("mmr", "MMR", cfg.mmr_lambdas), ("dpp", "DPP", cfg.dpp_thetas)):
        rel, outside = {}, 0
        for s, m in seeds.items():
            ild = float(m[f"ddt_ft{cs}__ild"])
            sweep = [ild_ for ild_, _ in _sweep(m, prefix, values)]
            outside += not min(sweep) <= ild <= max(sweep)
            rel[s] = float(m[f"ddt_ft{cs}__ndcg"]) / _frontier_ndcg(m, prefix, values, ild) - 1.0
        v = _gain(rel, cfg.min_gain)
        if outside:
            v = _unmatched(v, f"DDT's ILD@10 lies outside the {name} sweep in {outside} of "
                              f"{len(seeds)} seeds: its NDCG is read at the sweep's end, not "
                              "at matched ILD")
        cells[f"vs {name}"] = v
        texts.append(f"DDT / {name} − 1 {_fmt(100 * np.array(list(rel.values())), 3)} % "
                     f"(DDT's ILD outside the sweep in {outside} of {len(seeds)} seeds)")
    out.append(Claim(
        text=f"(4) At matched ILD@10, DDT (fine-tuned {cs} steps) has a higher NDCG@10 than MMR "
             f"and DPP re-ranking by more than {cfg.min_gain:.0%} relative (baseline NDCG "
             "interpolated along its λ / θ sweep at DDT's ILD; paired by seed).",
        evidence="NDCG@10 " + "; ".join(texts),
        verdict=_acting(all_of(cells), seeds, cfg, "ddt_ft")))
    steps = float(np.mean(_col(seeds, "steps_scratch")))

    def reaches(key: str) -> Verdict:
        ri = _rel_by_seed(seeds, f"{key}__ild", "ddt_scratch__ild")
        rn = _rel_by_seed(seeds, f"{key}__ndcg", "ddt_scratch__ndcg")
        return all_of({f"ILD@10 loss < {cfg.reach_margin:g}": _no_loss(ri, cfg.reach_margin),
                       f"NDCG@10 loss < {cfg.ndcg_margin:g}": _no_loss(rn, cfg.ndcg_margin)})

    reach = {s: reaches(f"ddt_ft{s}") for s in cfg.ft_steps}
    at = _col(seeds, "reach_steps")
    if len(at) == len(seeds) and all(m.get("ddt_ft_reach__ild") is not None
                                     for m in seeds.values()):
        # one pre-declared test at the checkpoint floor(5 % of the scratch steps), taken in
        # every trial (no choice among checkpoints)
        verdict = reaches("ddt_ft_reach")
        tested = (f"the 5 % checkpoint, {int(at.min())}–{int(at.max())} steps: ILD "
                  f"{np.mean(_col(seeds, 'ddt_ft_reach__ild')):.4f} / NDCG "
                  f"{np.mean(_col(seeds, 'ddt_ft_reach__ndcg')):.4f}")
    else:  # trials stored before the 5 % checkpoint was recorded
        early = [s for s in cfg.ft_steps if s <= REACH_SHARE * steps]
        verdict = reach[early[-1]] if early else undecided(
            f"no fine-tuning checkpoint {list(cfg.ft_steps)} lies within 5 % of the "
            f"{steps:.0f} from-scratch steps", n=len(seeds))
        tested = f"the last checkpoint within 5 %: {early[-1] if early else 'none'}"
    ild_s = np.mean(_col(seeds, "ddt_scratch__ild"))
    ndcg_s = np.mean(_col(seeds, "ddt_scratch__ndcg"))
    per = ", ".join(f"{s}: ILD {np.mean(_col(seeds, f'ddt_ft{s}__ild')):.4f} / NDCG "
                    f"{np.mean(_col(seeds, f'ddt_ft{s}__ndcg')):.4f} ({reach[s].verdict})"
                    for s in cfg.ft_steps)
    out.append(Claim(
        text="(5) Fine-tuning reaches the from-scratch trade-off (ILD@10 non-inferior within "
             f"{cfg.reach_margin:.0%} and NDCG@10 within {cfg.ndcg_margin:.0%} relative, paired "
             "by seed) after at most 5 % of the from-scratch gradient steps (tested at the "
             "fine-tuning checkpoint floor(5 % of the scratch steps)).",
        evidence=f"scratch ({steps:.0f} steps): ILD {ild_s:.4f} / NDCG {ndcg_s:.4f}; "
                 f"fine-tuning steps {per}; tested: {tested}",
        verdict=_acting(verdict, seeds, cfg, "ddt_ft", "ddt_scratch")))
    gnext = _rel_by_seed(seeds, f"ddt_ft{cs}__ild_next", "base__ild_next")
    out.append(Claim(
        text=f"(6) The diversity gain spills over to positions 11–20: the relative ILD@11–20 "
             f"gain of DDT fine-tuned {cs} steps exceeds {cfg.min_gain:.0%} (paired by seed).",
        evidence=f"ΔILD@11–20 {_fmt(100 * np.array(list(gnext.values())), 3)} %",
        verdict=_acting(_gain(gnext, cfg.min_gain), seeds, cfg, "ddt_ft")))
    return out


def _plot(seeds: dict[int, dict], cfg: DiversityTopkConfig, bb: str, path: Path) -> Figure:
    # a trade-off plane (ILD@10 vs NDCG@10, both with their CI across seeds): figures.py has
    # no panel with error bars on both axes, so this one is drawn on the grid()'s axes

    def pt(key: str) -> tuple[float, float, float, float] | None:
        xs, ys = _col(seeds, f"{key}__ild"), _col(seeds, f"{key}__ndcg")
        if not len(xs) or not len(ys):
            return None
        (mx, hx), (my, hy) = mean_ci(xs), mean_ci(ys)
        return mx, 0.0 if math.isnan(hx) else hx, my, 0.0 if math.isnan(hy) else hy

    def draw(ax, keys: list[str], label: str | None, c: str, marker: str, line: bool,
             by_ild: bool = False) -> None:
        pts = [q for q in (pt(k) for k in keys) if q is not None]
        pts = sorted(pts) if by_ild else pts
        if not pts:
            return
        mx, hx, my, hy = (list(v) for v in zip(*pts, strict=True))
        ax.errorbar(mx, my, xerr=hx, yerr=hy, fmt="none", ecolor=c, elinewidth=0.8, capsize=2,
                    alpha=0.8)
        ax.plot(mx, my, marker=marker, ls="-" if line else "none", color=c, ms=6, label=label)

    fig, (ax,) = grid(1, panel=(7.0, 4.8))
    draw(ax, [f"mmr{v:g}" for v in cfg.mmr_lambdas] + ["base"], "MMR (λ sweep; λ = 1 = base)",
         color(0), "s", True, by_ild=True)
    draw(ax, [f"dpp{v:g}" for v in cfg.dpp_thetas] + ["base"], "DPP (θ sweep; θ → 1 = base)",
         color(1), "^", True, by_ild=True)
    draw(ax, [f"ddt_ft{s}" for s in cfg.ft_steps],
         "DDT fine-tune " + "/".join(str(s) for s in cfg.ft_steps) + " steps", color(2), "o",
         True)
    for i, (key, name, mk) in zip((3, 4, 5, 6, 9), (("base", "relevance-only", "*"),
                                                   ("ddt_scratch", "DDT from scratch", "D"),
                                                   ("mdr", "MDR", "P"),
                                                   ("ddt_st", "straight-through", "X"),
                                                   ("explore", "ε-mixing", "h")), strict=True):
        draw(ax, [key], name, color(i), mk, False)
    for b in cfg.fixed_betas:
        q = pt(f"fixed{b:g}")
        if q is not None:
            draw(ax, [f"fixed{b:g}"], "fixed β" if b == cfg.fixed_betas[0] else None, "0.5",
                 "v", False)
            ax.annotate(f"β={b:g}", (q[0], q[2]), fontsize=7, xytext=(3, 3),
                        textcoords="offset points")
    ax.set_xlabel("ILD@10 (genre 1 − Jaccard)")
    ax.set_ylabel("NDCG@10")
    ax.set_title(f"{bb.upper()}: accuracy–diversity trade-off", fontsize=9)
    ax.grid(True, alpha=0.25, lw=0.5)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save(fig, path, f"{bb.upper()}: NDCG@10 against ILD@10 for every method (mean ± 95 % "
                "CI over seeds on both axes; re-ranker sweeps joined in order of ILD, "
                "fine-tuning in order of steps); gray triangles: fixed-β fine-tuning")


def _notes(cfg: DiversityTopkConfig) -> list[str]:
    return [
        "Data: MovieLens-100K from the recbole 1.2.1 wheel's data files when installed (never "
        "imported), else a synthetic genre-structured set (the 'data' field of each trial says "
        "which); per-user temporal 80/20 split; all unseen catalogue items ranked; relevant = "
        "the user's test items. Paper: five datasets, normalised main-table metrics.",
        "Relevance loss: MSE on ratings/5 plus one sampled unobserved pair (target 0) per rating "
        "— DEVIATION from the paper's MSE on observed ratings only, which ranks rarely-rated "
        "items first on the full catalogue.",
        f"Diversity term: candidate pool of the {cfg.pool} best unseen items per user (detached "
        f"selection), entropic soft rank with ε = {cfg.eps_times_n:g}/n_items (paper: ε = 1/n), "
        f"τ = {cfg.tau:g} (not in the material read), {cfg.div_users} users per step; β* on "
        f"the full flattened gradient, clipped to [0, 1], gradients normalised: "
        f"{cfg.normalize} (the material read does not say how the paper balances the two "
        "gradients' scales; 'l2' is MGDA's standard unit normalisation, which makes β* = 1/2).",
        "MDR: learning-to-reweight with free per-pair weights (the paper's weight "
        "parameterisation is not in the material read); MMR / DPP re-rank a pool of the "
        f"{RERANK_POOL} best unseen items with relevance min-max normalised per user.",
        f"Backbone(s) {', '.join(cfg.backbones)}, d = {cfg.dim}, Adam {cfg.lr:g}, "
        f"{cfg.epochs} epochs (paper: MF fine-tuned for 100 epochs); DGRec is not run. "
        "Trials run on the CPU (single-threaded) whatever --device says.",
    ]


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Zhou et al. (ICLR 2026) at CPU scale on MovieLens-100K (shipped in the recbole wheel; "
        "synthetic genre-structured fallback): MF relevance model, DDT (soft-rank top-10 genre "
        "diversity with MGDA-balanced β*) from scratch and as 10/50/200-step fine-tuning, MDR "
        "meta-reweighting, fixed-β and straight-through ablations, MMR and DPP re-ranking "
        "sweeps and an ε-mixing floor, compared on NDCG@10, Recall@10, ILD@10 (and 11–20), "
        "genre / catalogue coverage and exposure Gini. Trials run on the CPU whatever "
        "--device says."),
)
