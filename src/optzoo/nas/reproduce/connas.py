"""Reproduction ``connas``: "Constraint-guided Hardware-aware NAS through Gradient Modification"
(ICLR 2026, OpenReview fcKMFIiNFQ; KU Leuven).  No official code inspected.

The brief's offline "mini-201" setting: the NATS-Bench topology cell cut to 3 nodes / 3 edges
with NATS-Bench's 5 ops (125 architectures, :data:`~optzoo.nas.MINI_TOPOLOGY`) on scikit-learn
digits; every architecture is trained by :mod:`optzoo.nas.ground_truth` (cached outside the
repository) and that table plays NATS-Bench's role: a searched architecture is scored by its
table test accuracy, and the reference is the best feasible table entry.

Constraint: exact FLOPs (xautodl's count) of the discrete architecture, c(A) ≤ b.  Budgets are
given as target feasible fractions of the space; b is the smallest FLOPs level at which at least
that fraction is feasible.  DEVIATION: the brief asks for ~50 %, 25 % and 10 %; in this space
pooling, skip and none all cost 0 FLOPs, so 27 architectures (21.6 %) share the minimum and
levels fall at 21.6 / 43.2 / 50.4 / 51.2 % ...; the presets use targets 0.5, 0.4, 0.2, i.e. the
three tightest distinct levels (50.4, 43.2, 21.6 %), the last being the tightest possible.

Methods (one trial = one search, seeds shared across methods):

* ``connas`` -- :func:`~optzoo.nas.connas_search` at each budget (R = 1.2, ε = 1e-6, per-edge
  normalisation), returned architecture: best feasible argmax of the last third of the epochs;
* ``connas_R<r>`` -- the R sweep {1.1, 2, 5} beside 1.2, at the tightest budget (full preset);
* ``darts_penalty`` -- L + λ·E[FLOPs]/FLOPs_max for λ ∈ {1e-3, 1e-2, 1e-1, 1}: one search per λ,
  scored at every budget (the penalty knows no budget; that is the point of the comparison);
* ``darts`` -- unconstrained search: its raw argmax, and a greedy projection per budget;
* ``random`` -- constrained random search on the table's validation accuracy at equal compute
  (the supernet search's FLOPs: forward+backward of the all-op supernet on every w and α image of
  every epoch, vs. each drawn architecture's training FLOPs on the 1,000 training images).

Search schedule (paper's scaled down): Gumbel τ 10 → 0.1 over the first 2/3 of the epochs,
selection in the last 1/3; w: SGD 0.025 cosine, momentum 0.9, wd 3e-4 (*inferred*, DARTS); α:
the plain step of ConNAS's update equation (SGD, no momentum) for every method, η_α = 1.0, set
from the measured per-edge ‖∇_α L‖ (≈ 1e-3 at τ = 10 to ≈ 0.08 at τ = 0.1) so that α moves by
O(1) over the ~80–240 α steps of the mini search; fixed before any claim was evaluated.
(DARTS's Adam, the brief's inferred choice, is rejected: its per-coordinate normalisation can
cancel the constraint push, see tests/nas/test_connas.py.)  Data: the digits
training split (1,000) halved into the w split and the α split.

Claims (thresholds fixed before running), each decided by a test of
:mod:`optzoo.experiment.verdicts` over the per-seed trials:
(1) ConNAS returns a feasible architecture in 100 % of runs (all budgets, all seeds):
    ``bound_holds`` on the runs' feasibility (an exact count: one infeasible run is a failure);
    *inconclusive* (``not_acting``) if the constraint never bound in any ConNAS run (no α step
    was modified, so feasibility says nothing about the method);
(2) its gap to the best feasible table entry is ≤ ``gap_pp`` = 1.0 percentage point at every
    budget: ``within(gaps, −∞, gap_pp)`` per budget (the 95 % CI of the mean gap below the
    threshold), ``all_of`` the budgets (paper: 0.14–5.08 % on NATS-Bench, ≤ ~1 % on the
    brief's scale);
(3) no single λ of the grid "works" at every budget, where working at a budget means feasible
    in every seed and gap ≤ ``gap_pp`` (the regularised objective needs per-budget tuning):
    for each λ, "fails at some budget" = ``any_of`` over (budget × {an infeasible seed
    (exact), ``within(gaps, gap_pp, ∞)``: the CI of the mean gap above the threshold}), and
    ``all_of`` the λ;
(4) (when the R sweep runs) every R ∈ {1.1, 1.2, 2, 5} stays 100 % feasible (``bound_holds``)
    and its gaps are equivalent to R = 1.2's within ±``gap_pp`` (``equivalent``, TOST, paired
    by seed), ``all_of`` (paper App. B: insensitive for R > 1).

Verdict margins (a preset field, the same in every preset, fixed before any run):

* ``gap_pp = 1.0``: the brief's "≤ ~1 %" gap to the best feasible architecture at this scale;
  also the equivalence margin of the R sweep (a change of R that moves the gap by less than the
  gap the claim tolerates is no change).

Rules changed by issue 18 (old → new): (2) the *mean* gap ≤ 1.0 pp with no CI → the CI of the
mean below 1.0 pp; (3) a λ counted as failing at a budget when its mean gap exceeded 1.0 pp by
any amount (a noisy mean of three seeds sufficed) → the CI of its mean gap above 1.0 pp, or an
infeasible seed; (4) the spread of the R's mean gaps ≤ 1.0 pp (point estimates) → TOST
equivalence to R = 1.2, paired by seed; (1) is an exact count as before, now with the check
that the constraint acted.  The trial keys are unchanged (``gap_pp`` is not a trial parameter).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment.stats import fmt_values as _fmt
from optzoo.experiment.stats import metric_values as _vals
from optzoo.experiment.verdicts import (
    Verdict,
    all_of,
    any_of,
    bound_holds,
    by_seed,
    equivalent,
    not_acting,
    within,
)
from optzoo.nas.connas import connas_search
from optzoo.nas.darts import SearchConfig, search, supernet_flops
from optzoo.nas.darts_penalty import darts_penalty_search
from optzoo.nas.darts_projection import greedy_projection
from optzoo.nas.ground_truth import SPLIT, GroundTruth, digits_split, ground_truth_table
from optzoo.nas.random_search import constrained_random_search
from optzoo.nas.search_space import MINI_TOPOLOGY, CellSpace

SLUG = "connas"
W_SPLIT = SPLIT[0] // 2  # first half of the training split for w, second half for α


# -- configuration ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ConNASConfig(Preset):
    """Settings of the reproduction.

    Args:
        seeds: seeds per (method, budget / λ / R).
        cell_nodes: nodes of the mini cell (3 = mini-201's 3 edges; the smoke preset uses 2,
            one edge and 5 architectures, to stay within 10 s).
        search_epochs: supernet search epochs.
        batch_size: search batch size.
        alpha_lr: η_α of the plain SGD step on α.
        table_epochs / table_seeds: ground-truth training epochs / seeds per architecture.
        table_train: training images of the ground truth (1,000 = the whole split; fewer only
            to keep the smoke preset within 10 s).
        cost: the constrained cost, "flops" or "params".
        budget_fracs: target feasible fractions of the space (see the module docstring).
        lambdas: the penalty grid λ.
        rescale: ConNAS's R.
        r_sweep: extra R values run at the tightest budget (empty: no sweep).
        random_search: run the constrained random-search baseline.
        gap_pp: verdict threshold / margin of the claims, in percentage points (module
            docstring, "Verdict margins"); not a trial parameter.
    """

    seeds: int = 3
    cell_nodes: int = 3
    search_epochs: int = 10
    batch_size: int = 64
    alpha_lr: float = 1.0
    table_epochs: int = 10
    table_seeds: int = 1
    table_train: int = SPLIT[0]
    cost: str = "flops"
    budget_fracs: tuple[float, ...] = (0.5, 0.4, 0.2)
    lambdas: tuple[float, ...] = (1e-3, 1e-2, 1e-1, 1.0)
    rescale: float = 1.2
    r_sweep: tuple[float, ...] = ()
    random_search: bool = True
    gap_pp: float = 1.0

    def validate(self) -> None:
        super().validate()
        if not 1 <= self.table_train <= SPLIT[0]:
            raise ConfigError(f"table_train: expected 1..{SPLIT[0]}, got {self.table_train}")
        if not 2 <= self.cell_nodes <= 4:
            raise ConfigError(f"cell_nodes: expected 2..4, got {self.cell_nodes}")
        for name in ("search_epochs", "batch_size", "table_epochs", "table_seeds"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected >= 1, got {getattr(self, name)}")
        if self.cost not in ("flops", "params"):
            raise ConfigError(f"cost: expected 'flops' or 'params', got {self.cost!r}")
        if not self.budget_fracs or any(not 0 < f <= 1 for f in self.budget_fracs):
            raise ConfigError(f"budget_fracs: expected fractions in (0, 1], got "
                              f"{self.budget_fracs}")
        if any(lam < 0 for lam in self.lambdas):
            raise ConfigError(f"lambdas: expected >= 0, got {self.lambdas}")
        if not self.alpha_lr > 0:
            raise ConfigError(f"alpha_lr: expected > 0, got {self.alpha_lr}")
        if not self.gap_pp > 0:
            raise ConfigError(f"gap_pp: expected > 0, got {self.gap_pp}")
        if any(not r > 0 for r in (self.rescale, *self.r_sweep)):
            raise ConfigError(f"rescale, r_sweep: expected > 0, got {self.rescale}, "
                              f"{self.r_sweep}")


PRESETS = {
    "smoke": ConNASConfig(seeds=1, cell_nodes=2, search_epochs=2, table_epochs=1, table_train=128,
                          budget_fracs=(0.5, 0.2), lambdas=(1.0,), r_sweep=(2.0,)),
    "quick": ConNASConfig(),
    "full": ConNASConfig(seeds=5, search_epochs=30, table_epochs=30, table_seeds=2,
                         r_sweep=(1.1, 2.0, 5.0)),
}


def budgets_for(space: CellSpace, cost: str, fracs) -> list[tuple[float, float]]:
    """[(budget, realised feasible fraction)]: the smallest cost level at which at least each
    target fraction of the space is feasible."""
    c = np.sort([space.costs(a)[cost] for a in space.all_archs()])
    out = []
    for f in fracs:
        b = float(c[max(0, math.ceil(f * c.size) - 1)])
        out.append((b, float(np.mean(c <= b))))
    return out


def _table_key(cfg: ConNASConfig) -> dict:
    return {"cell_nodes": cfg.cell_nodes, "table_epochs": cfg.table_epochs,
            "table_seeds": cfg.table_seeds, "table_train": cfg.table_train, "cost": cfg.cost,
            "budget_fracs": list(cfg.budget_fracs)}


def trials(cfg: ConNASConfig) -> list[Trial]:
    search_p = {"search_epochs": cfg.search_epochs, "batch_size": cfg.batch_size,
                "alpha_lr": cfg.alpha_lr, **_table_key(cfg)}
    out = []
    for s in range(cfg.seeds):
        for i in range(len(cfg.budget_fracs)):
            out.append(Trial("connas", f"budget{i}", s,
                             {**search_p, "budget": i, "rescale": cfg.rescale}))
            if cfg.random_search:
                out.append(Trial("random", f"budget{i}", s, {**search_p, "budget": i}))
        tight = int(np.argmin(cfg.budget_fracs))
        for r in cfg.r_sweep:
            if r != cfg.rescale:
                out.append(Trial(f"connas_R{r:g}", f"budget{tight}", s,
                                 {**search_p, "budget": tight, "rescale": r}))
        for lam in cfg.lambdas:
            out.append(Trial("darts_penalty", "all", s, {**search_p, "lam": lam}))
        out.append(Trial("darts", "all", s, search_p))
    return out


# -- one trial ---------------------------------------------------------------------------------

def space_for(cell_nodes: int) -> CellSpace:
    return dataclasses.replace(MINI_TOPOLOGY, n_nodes=cell_nodes)


@functools.lru_cache(maxsize=2)
def _table(cell_nodes: int, epochs: int, seeds: int, n_train: int) -> GroundTruth:
    return ground_truth_table(space_for(cell_nodes), epochs=epochs, seeds=seeds,
                              n_train=n_train)


def _data():
    d = digits_split()
    x, y = d["train"]
    return (x[:W_SPLIT], y[:W_SPLIT]), (x[W_SPLIT:], y[W_SPLIT:])


def _score(gt: GroundTruth, arch, budgets, prefix: str, cost: str) -> dict:
    """Feasibility and gap (pp) of ``arch`` at every budget."""
    row = gt.row(arch)
    acc = float(gt.test_acc[row].mean())
    out = {f"{prefix}acc": 100 * acc}
    for i, (b, _) in enumerate(budgets):
        best = gt.best_feasible({cost: b})[1]
        out[f"{prefix}feasible_b{i}"] = float(gt.cost(cost)[row] <= b)
        out[f"{prefix}gap_b{i}"] = 100 * (best - acc)
    return out


def run_trial(trial: Trial, device: str) -> dict:
    torch.set_num_threads(1)
    p = trial.params
    space = space_for(int(p["cell_nodes"]))
    gt = _table(int(p["cell_nodes"]), int(p["table_epochs"]), int(p["table_seeds"]),
                int(p["table_train"]))
    budgets = budgets_for(space, p["cost"], p["budget_fracs"])
    scfg = SearchConfig(epochs=int(p["search_epochs"]), batch_size=int(p["batch_size"]),
                        alpha_lr=float(p["alpha_lr"]))
    train, valid = _data()
    seed = 100 + trial.seed
    m = trial.method
    if m == "random":
        i = int(p["budget"])
        n_img = 2 * W_SPLIT  # w and α images per search epoch
        budget = 3 * scfg.epochs * n_img * supernet_flops(space)  # fwd + bwd ≈ 3 fwd
        charge = 3 * gt.epochs * int(p["table_train"]) * gt.flops  # one training run
        rng = np.random.default_rng(seed)
        row, drawn = constrained_random_search(gt.feasible_mask({p["cost"]: budgets[i][0]}),
                                               gt.val_acc.mean(1), charge, budget, rng)
        out = _score(gt, gt.archs[row], budgets, "", p["cost"])
        return {"arch": space.to_str(gt.archs[row]), "feasible": out[f"feasible_b{i}"],
                "gap": out[f"gap_b{i}"], "acc": out["acc"], "drawn": drawn}
    if m.startswith("connas"):
        i = int(p["budget"])
        res = connas_search(space, train, valid, {p["cost"]: budgets[i][0]}, scfg, seed,
                            rescale=float(p["rescale"]))
        out = _score(gt, res.arch, budgets, "", p["cost"])
        first = next((e for e, ok in enumerate(res.feasible_history) if ok), -1)
        return {"arch": space.to_str(res.arch), "feasible": out[f"feasible_b{i}"],
                "gap": out[f"gap_b{i}"], "acc": out["acc"],
                "selected_feasible": float(bool(res.selected_feasible)),
                "first_feasible_epoch": first,
                "violated_step_frac": res.info["violated_step_frac"],
                "feasible_epoch_frac": float(np.mean(res.feasible_history)),
                "search_wall_s": res.seconds}
    if m == "darts_penalty":
        res = darts_penalty_search(space, train, valid, p["cost"], float(p["lam"]), scfg, seed)
        return {"arch": space.to_str(res.arch), **_score(gt, res.arch, budgets, "", p["cost"]),
                "search_wall_s": res.seconds}
    if m == "darts":
        res = search(space, train, valid, scfg, seed)
        out = {"arch": space.to_str(res.arch), "search_wall_s": res.seconds,
               **_score(gt, res.arch, budgets, "raw_", p["cost"])}
        for i, (b, _) in enumerate(budgets):
            proj, swaps = greedy_projection(res.arch, res.alpha, space.costs, {p["cost"]: b})
            sc = _score(gt, proj, budgets, "", p["cost"])
            out[f"proj_feasible_b{i}"] = sc[f"feasible_b{i}"]
            out[f"proj_gap_b{i}"] = sc[f"gap_b{i}"]
            out[f"proj_swaps_b{i}"] = swaps
        return out
    raise ConfigError(f"trial.method: unknown {m!r}")


# -- summary -----------------------------------------------------------------------------------

def _feas(v: list[float]) -> str:
    return f"{int(sum(v))}/{len(v)}" if v else "—"


def _rows_by_method(results: list[Result], cfg: ConNASConfig) -> dict[str, list]:
    """{method label: [(feasible list, gap list) per budget]}."""
    nb = len(cfg.budget_fracs)
    by: dict[str, list] = {}

    def add(label, per_budget):
        by[label] = per_budget

    def pick(method, **match):
        return [r for r in results if r.trial.method == method
                and all(r.trial.params.get(k) == v for k, v in match.items())]

    add(f"ConNAS (R={cfg.rescale:g})",
        [(_vals(pick("connas", budget=i), "feasible"), _vals(pick("connas", budget=i), "gap"))
         for i in range(nb)])
    tight = int(np.argmin(cfg.budget_fracs))
    for r in cfg.r_sweep:
        if r != cfg.rescale:
            rs = pick(f"connas_R{r:g}")
            add(f"ConNAS (R={r:g})", [(_vals(rs, "feasible"), _vals(rs, "gap")) if i == tight
                                      else ([], []) for i in range(nb)])
    d = pick("darts")
    add("DARTS (unconstrained)", [(_vals(d, f"raw_feasible_b{i}"), _vals(d, f"raw_gap_b{i}"))
                                  for i in range(nb)])
    add("DARTS + greedy projection", [(_vals(d, f"proj_feasible_b{i}"),
                                       _vals(d, f"proj_gap_b{i}")) for i in range(nb)])
    for lam in cfg.lambdas:
        rs = pick("darts_penalty", lam=lam)
        add(f"DARTS + λ·E[cost], λ={lam:g}",
            [(_vals(rs, f"feasible_b{i}"), _vals(rs, f"gap_b{i}")) for i in range(nb)])
    if cfg.random_search:
        add("random search (feasible, equal compute)",
            [(_vals(pick("random", budget=i), "feasible"), _vals(pick("random", budget=i), "gap"))
             for i in range(nb)])
    return by


def summarize(results: list[Result], cfg: ConNASConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    space = space_for(cfg.cell_nodes)
    budgets = budgets_for(space, cfg.cost, cfg.budget_fracs)
    gt = _table(cfg.cell_nodes, cfg.table_epochs, cfg.table_seeds, cfg.table_train)
    best = [gt.best_feasible({cfg.cost: b}) for b, _ in budgets]
    t_budget = Table(
        title=f"Budgets on {cfg.cost} ({cfg.cell_nodes}-node cell, {space.size} architectures; "
              f"table: "
              f"{cfg.table_epochs} epochs × {cfg.table_seeds} seed(s), test accuracy %)",
        columns=["budget", "target feasible", "realised feasible", cfg.cost,
                 "best feasible entry", "its test acc"],
        rows=[[i, f"{f:.0%}", f"{real:.1%}", f"{b:,.0f}", space.to_str(gt.archs[row]),
               f"{100 * acc:.2f}"]
              for i, (f, (b, real), (row, acc)) in enumerate(
                  zip(cfg.budget_fracs, budgets, best, strict=True))])
    by = _rows_by_method(results, cfg)
    cols = ["method"]
    for i in range(len(budgets)):
        cols += [f"b{i} feasible", f"b{i} gap (pp)"]
    t_main = Table(
        title="Feasible runs and gap to the best feasible table entry (test accuracy, "
              "percentage points; mean ± 95% CI over seeds)",
        columns=cols,
        rows=[[label, *[c for fe, gp in per for c in (_feas(fe), _fmt(gp))]]
              for label, per in by.items()])
    cn = [r for r in results if r.trial.method == "connas"]
    t_diag = Table(
        title="ConNAS search diagnostics (mean ± 95% CI over seeds)",
        columns=["budget", "violated α steps", "epochs with feasible argmax",
                 "first feasible epoch", "search s"],
        rows=[[i, _fmt(_vals(rs, "violated_step_frac")), _fmt(_vals(rs, "feasible_epoch_frac")),
               _fmt(_vals(rs, "first_feasible_epoch")), _fmt(_vals(rs, "search_wall_s"))]
              for i in range(len(budgets))
              for rs in [[r for r in cn if r.trial.params["budget"] == i]]])
    figures = [_plot(by, len(budgets), cfg.gap_pp, outdir / "connas_gap_feasibility.png")]
    return Summary(tables=[t_budget, t_main, t_diag], figures=figures,
                   claims=_claims(results, by, cfg), notes=_notes(cfg, gt))


def _pick(method: str, **match):
    """A ``where`` for :func:`by_seed`: trials of ``method`` whose params match."""
    return lambda r: r.trial.method == method and all(r.trial.params.get(k) == v
                                                      for k, v in match.items())


def _missing(what: str) -> Verdict:
    """An *inconclusive* cell for runs that are not in the store (a partial run)."""
    return not_acting(bound_holds([0.0], 0.0), f"no {what} run is stored")


def _all_feasible(values: dict[int, float] | list[float], what: str = "ConNAS") -> Verdict:
    """Every run feasible: an exact count of the infeasible runs (none allowed)."""
    vals = list(values.values()) if isinstance(values, dict) else list(values)
    return bound_holds(vals, 1.0, side="ge") if vals else _missing(what)


def _claims(results: list[Result], by: dict[str, list], cfg: ConNASConfig) -> list[Claim]:
    claims = []
    nb = len(cfg.budget_fracs)
    cn = by[f"ConNAS (R={cfg.rescale:g})"]
    feas = {i: by_seed(results, "feasible", _pick("connas", budget=i)) for i in range(nb)}
    v1 = _all_feasible([v for i in range(nb) for v in feas[i].values()])
    violated = [float(r.metrics["violated_step_frac"]) for r in results
                if r.trial.method == "connas" and r.metrics.get("violated_step_frac") is not None]
    if violated and max(violated) == 0.0:
        v1 = not_acting(v1, "the constraint never bound: no α step of any ConNAS run was "
                            "modified, so the feasibility is the unconstrained search's")
    claims.append(Claim(
        text="(1) ConNAS returns an architecture that satisfies the budget in 100 % of runs "
             "(every budget, every seed; paper: 5/5 on every NATS-Bench constraint).",
        evidence="feasible runs per budget: " + ", ".join(
            f"b{i} {_feas(f)}" for i, (f, _) in enumerate(cn))
                 + (f"; constraint-violating α steps per run: max {max(violated):.3g}"
                    if violated else ""),
        verdict=v1))
    gaps = {i: by_seed(results, "gap", _pick("connas", budget=i)) for i in range(nb)}
    claims.append(Claim(
        text=f"(2) ConNAS's mean gap to the best feasible table entry is ≤ {cfg.gap_pp:g} pp at "
             "every budget (95 % CI of the mean below it; paper: −0.14 to −5.08 % on "
             "NATS-Bench; brief: ≤ ~1 %).",
        evidence="mean gap per budget: " + ", ".join(
            f"b{i} {_fmt(g)} pp" for i, (_, g) in enumerate(cn)),
        verdict=all_of({f"b{i}": within(list(gaps[i].values()), -math.inf, cfg.gap_pp)
                        if gaps[i] else _missing(f"ConNAS b{i}") for i in range(nb)})))
    fails, works = {}, {}
    for lam in cfg.lambdas:
        cells = {}
        for i in range(nb):
            fe = by_seed(results, f"feasible_b{i}", _pick("darts_penalty", lam=lam))
            gp = by_seed(results, f"gap_b{i}", _pick("darts_penalty", lam=lam))
            if not fe:
                continue
            cells[f"b{i} infeasible seed"] = within(min(fe.values()), -math.inf, 0.0)
            cells[f"b{i} gap > {cfg.gap_pp:g}"] = within(list(gp.values()), cfg.gap_pp,
                                                         math.inf)
        if cells:
            fails[f"λ={lam:g}"] = any_of(cells)
        per = by[f"DARTS + λ·E[cost], λ={lam:g}"]
        works[lam] = [bool(f) and all(v == 1.0 for v in f) and float(np.mean(g)) <= cfg.gap_pp
                      for f, g in per]
    claims.append(Claim(
        text="(3) No single λ of the grid works at every budget (works = feasible in every seed "
             f"and mean gap ≤ {cfg.gap_pp:g} pp; failing = an infeasible seed or a gap whose "
             "95 % CI lies above it): the regularised objective needs per-budget tuning.",
        evidence="; ".join(f"λ={lam:g}: " + "/".join("✓" if w else "✗" for w in ws)
                           + " (b0/b1/…, seed means)" for lam, ws in works.items()),
        verdict=all_of(fails) if fails else _missing("DARTS + λ·E[cost]")))
    sweep = [r for r in cfg.r_sweep if r != cfg.rescale]
    if sweep:
        tight = int(np.argmin(cfg.budget_fracs))
        rows = {cfg.rescale: cn[tight]}
        rows.update({r: by[f"ConNAS (R={r:g})"][tight] for r in sweep})
        ref = gaps[tight]
        cells = {f"R={cfg.rescale:g} feasible": _all_feasible(feas[tight])}
        for r in sweep:
            where = _pick(f"connas_R{r:g}", budget=tight)
            cells[f"R={r:g} feasible"] = _all_feasible(by_seed(results, "feasible", where),
                                                       f"ConNAS R={r:g}")
            g = by_seed(results, "gap", where)
            common = sorted(set(g) & set(ref))
            if common:
                cells[f"R={r:g} gap ≈ R={cfg.rescale:g}"] = equivalent(
                    {s: g[s] for s in common}, {s: ref[s] for s in common}, margin=cfg.gap_pp)
        means = {r: float(np.mean(g)) for r, (_, g) in rows.items() if g}
        spread = max(means.values()) - min(means.values()) if means else math.inf
        claims.append(Claim(
            text=f"(4) R sweep at the tightest budget: every R in {sorted(rows)} stays 100 % "
                 f"feasible and its gaps are equivalent to R = {cfg.rescale:g}'s within "
                 f"±{cfg.gap_pp:g} pp (TOST, paired by seed; paper App. B).",
            evidence="; ".join(f"R={r:g}: {_feas(f)} feasible, gap {_fmt(g)}"
                               for r, (f, g) in sorted(rows.items()))
                     + f"; spread of the means {spread:.3g} pp",
            verdict=all_of(cells)))
    return claims


def _notes(cfg: ConNASConfig, gt: GroundTruth) -> list[str]:
    return [
        f"Setting: mini-201 (3-edge NATS-Bench cell, C = 8, 1 cell per stage, 2 stages) on "
        f"scikit-learn digits; ground truth {cfg.table_epochs} epochs × {cfg.table_seeds} "
        f"seed(s) per architecture (generated in {gt.seconds:.0f} s when first built, cached); "
        f"search {cfg.search_epochs} epochs, {cfg.seeds} seeds.  Paper: NATS-Bench topology "
        "(15,625) with Jetson TX2 latency / energy and the size space with params / FLOPs / "
        "peak memory, 150 search epochs, 5 runs.",
        "Constraint: exact FLOPs of the discrete network (conv + linear MACs, xautodl's count); "
        "the paper's topology constraints are measured latency / energy.  Pooling, skip and "
        "none cost 0 FLOPs here, which is why the brief's 25 % / 10 % budgets are not "
        "attainable (ties) and the three tightest distinct levels are used instead.",
        "Penalty baseline: λ·E[FLOPs]/FLOPs_max with E under softmax(α) (exact for this "
        "additive cost), one search per λ scored at every budget; ProxylessNAS / FBNet / TAS / "
        "HDX / TF-NAS themselves are not run.  Random search charges each drawn architecture "
        "its training FLOPs against the supernet search's FLOPs (deterministic stand-in for "
        "wall-clock).",
        "α is stepped by plain SGD (η_α = 1.0, every method), the literal form of ConNAS's "
        "update equation; the w optimiser and ε = 1e-6 are inferred (not in the sources "
        "read).  Trials are single-threaded CPU runs whatever --device says.",
    ]


def _plot(by: dict[str, list], nb: int, gap_pp: float, path: Path) -> Figure:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(12, 4))
    x = np.arange(nb)
    width = 0.8 / max(1, len(by))
    for k, (label, per) in enumerate(by.items()):
        fe = [np.mean(f) if f else np.nan for f, _ in per]
        gp = [np.mean(g) if g else np.nan for _, g in per]
        ax[0].bar(x + k * width, fe, width, label=label)
        ax[1].bar(x + k * width, gp, width, label=label)
    for a, name in ((ax[0], "feasible fraction of runs"), (ax[1], "gap to best feasible (pp)")):
        a.set_xticks(x + 0.4 - width / 2, [f"b{i}" for i in range(nb)])
        a.set_ylabel(name)
    ax[1].axhline(gap_pp, color="gray", ls="--", lw=0.8)
    ax[1].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Figure(path=path, caption="Per budget (b0 loosest): fraction of feasible runs and "
                  "mean gap to the best feasible table entry, per method")


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "ConNAS (ICLR 2026) at CPU scale: first-order DARTS / Gumbel search on a 3-edge "
        "NATS-Bench-style cell (125 architectures) on scikit-learn digits, with ConNAS's "
        "constraint-guided α-gradient modification under exact FLOPs budgets, against DARTS + "
        "λ·E[FLOPs] over a λ grid, unconstrained DARTS + greedy projection and constrained "
        "random search; architectures are scored on a ground-truth table of every architecture "
        "trained by project code (cached under $OPTZOO_CACHE or ~/.cache/optzoo). "
        "Trials are CPU-sized (single-threaded) and run on the CPU whatever --device says."),
)
