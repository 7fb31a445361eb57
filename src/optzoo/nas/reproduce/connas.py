"""Reproduction ``connas``: "Constraint-guided Hardware-aware NAS through Gradient Modification"
(ICLR 2026, OpenReview fcKMFIiNFQ; KU Leuven).  No official code inspected.

The brief's offline "mini-201" setting: the NATS-Bench topology cell cut to 3 nodes / 3 edges
with NATS-Bench's 5 ops (125 architectures, :data:`~optzoo.nas.MINI_TOPOLOGY`) on deformed
scikit-learn digits; every architecture is trained by :mod:`optzoo.nas.ground_truth` with
``table_seeds`` seeds (quick 3, full 5) and tested on 4,000 images (cached outside the
repository), and that table plays NATS-Bench's role: a searched architecture is scored by its
table test accuracy (mean over the seeds), and the reference is the best feasible table entry.

Constraints (``costs``; each cost is its own set of budgets): the paper's hardware metrics as
this machine has them -- ``latency``, the measured inference time of the discrete network
(a lookup table built with the ground truth, as the paper's Jetson TX2 latencies are a lookup in
NATS-Bench), and exact ``flops`` / ``params`` (xautodl's counts).  Budgets are given as target
feasible fractions of the space; b is the smallest cost level at which at least that fraction
is feasible (the paper: ~50 %).  DEVIATION: the brief asks for ~50 %, 25 % and 10 %; pooling,
skip and none all cost 0 FLOPs/params, so 27 architectures (21.6 %) share the minimum and the
FLOPs levels fall at 21.6 / 43.2 / 50.4 %; the presets use targets 0.5, 0.4, 0.2 (for latency,
which has no ties, they are met).  Quick constrains latency; full constrains latency and FLOPs
(params orders this space exactly as FLOPs does, so it adds nothing; ``--set`` it if wanted).

Methods (one trial = one search, seeds shared across methods):

* ``connas`` -- :func:`~optzoo.nas.connas_search` at each budget (R = 1.2, ε = 1e-6, per-edge
  normalisation, the table as ``cost_fn``), returned architecture: the paper's selection, the
  feasible argmax with the lowest validation loss among the checkpoints of the last third of
  the search (``select_points`` = 50, the paper's 50 epoch ends; here within epochs, at most one
  per α step, see :class:`~optzoo.nas.darts.SearchConfig`);
* ``connas_R<r>`` -- the R sweep {1.1, 2, 5} beside 1.2, at the tightest budget (full preset);
* ``darts_penalty`` -- L + λ·E[cost]/cost_max for λ ∈ {1e-3, 1e-2, 1e-1, 1}: one search per λ,
  scored at every budget (the penalty knows no budget; that is the point of the comparison);
  E[latency] uses FBNet's additive per-op lookup table fitted to the measured latencies;
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
cancel the constraint push, see tests/nas/test_connas.py.)  Data: the table's 1,000 deformed
training images halved into the w split and the α split.

Claims (thresholds fixed before running), each decided by a test of
:mod:`optzoo.experiment.verdicts` over the per-seed trials, ``all_of`` the costs:
(1) ConNAS returns a feasible architecture in 100 % of runs (all budgets, all seeds):
    ``bound_holds`` on the runs' feasibility (an exact count: one infeasible run is a failure);
    *inconclusive* (``not_acting``) if the constraint never bound in any ConNAS run;
(2) the paper's headline, gap ≤ 0.14 pp to the best feasible entry at every budget:
    ``within(gaps, −∞, 0.14)`` per budget, ``all_of`` -- but only if the table resolves
    0.14 pp (:meth:`~optzoo.nas.ground_truth.GroundTruth.resolution_pp`: 1.96·√2 times the
    entries' standard error over their seeds, or the test set's step); otherwise
    ``undecided`` (*inconclusive*), with the resolution recorded;
(3) the same restated at ``gap_pp`` (quick 3.0, full 2.0 pp; decided under the same rule);
(4) no single λ of the grid "works" at every budget, where working at a budget means feasible
    in every seed and gap ≤ ``gap_pp``: for each λ, "fails at some budget" = ``any_of`` over
    (budget × {an infeasible seed (exact), ``within(gaps, gap_pp, ∞)``}), ``all_of`` the λ;
(5) (when the R sweep runs) every R ∈ {1.1, 1.2, 2, 5} stays 100 % feasible (``bound_holds``)
    and its gaps are equivalent to R = 1.2's within ±``gap_pp`` (``equivalent``, TOST, paired
    by seed), ``all_of`` (paper App. B: insensitive for R > 1).

Verdict margins (preset fields / constants, fixed before any run):

* 0.14 pp: the paper's abstract ("within 0.14 % of the optimal feasible architecture"; its
  size-space / peak-memory CIFAR-10 row); tested only where the table resolves it.
* ``gap_pp``: the restated margin, the smallest round number above what the preset's table
  resolves (1.96·√2 × its entry SE), set from the table alone before any search result was
  read: quick 3.0 pp (its 5-epoch × 3-seed table: entry SE 0.95 pp, resolution 2.63 pp), full
  2.0 pp (predicted for 10 epochs × 5 seeds); smoke 1.0 (not evidence).  The brief's "≤ ~1 %"
  is not resolvable by a table that 2 CPU cores can train: the seeds of one entry differ by
  ~1.1 pp (median SD), so 0.14 pp would need ~500 seeds per entry.  ``gap_pp`` is also the
  "works" threshold of claim (4) and the equivalence margin of the R sweep (5).

Changed by issue 23 (old → new): the table had one seed, 400 clean test images (saturated at
98.75 %, 0.25 pp steps) and FLOPs as the only constraint; now ≥ 3 seeds, 4,000 deformed test
images, a measured latency lookup and params/FLOPs, a resolution check before the 0.14 pp claim,
and the paper's 50-checkpoint selection in place of 3 epoch ends.  Claim numbers shift by one
after (1): the old (2) gap ≤ 1 pp is now (3).
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
    undecided,
    within,
)
from optzoo.nas.connas import connas_search
from optzoo.nas.darts import SearchConfig, search, supernet_flops
from optzoo.nas.darts_penalty import additive_fit, darts_penalty_search
from optzoo.nas.darts_projection import greedy_projection
from optzoo.nas.ground_truth import (
    SPLIT,
    TABLE_COSTS,
    GroundTruth,
    augmented_digits,
    ground_truth_table,
)
from optzoo.nas.random_search import constrained_random_search
from optzoo.nas.search_space import MINI_TOPOLOGY, CellSpace
from optzoo.report.figures import category_panel, grid, save

SLUG = "connas"
W_SPLIT = SPLIT[0] // 2  # first half of the training split for w, second half for α


# -- configuration ---------------------------------------------------------------------------

PAPER_GAP_PP = 0.14  # the abstract's headline: "within 0.14 % of the optimal feasible"


@dataclass(frozen=True)
class ConNASConfig(Preset):
    """Settings of the reproduction.

    Args:
        seeds: seeds per (method, cost, budget / λ / R).
        cell_nodes: nodes of the mini cell (3 = mini-201's 3 edges; the smoke preset uses 2,
            one edge and 5 architectures, to stay within 10 s).
        search_epochs: supernet search epochs.
        batch_size: search batch size.
        alpha_lr: η_α of the plain SGD step on α.
        select_points: checkpoints of the selection window (paper: 50 epoch ends).
        table_epochs / table_seeds: ground-truth training epochs / seeds per architecture.
        table_train: training images of the ground truth (1,000 = the whole split; fewer only
            to keep the smoke preset within 10 s).
        costs: the constrained hardware metrics, each run as its own set of budgets:
            "latency" (measured, the paper's topology-space metric), "params", "flops".
        budget_fracs: target feasible fractions of the space (see the module docstring).
        lambdas: the penalty grid λ.
        rescale: ConNAS's R.
        r_sweep: extra R values run at the tightest budget (empty: no sweep).
        random_search: run the constrained random-search baseline.
        gap_pp: verdict threshold / margin of the restated gap claim, in percentage points
            (module docstring, "Verdict margins"); not a trial parameter.
    """

    seeds: int = 3
    cell_nodes: int = 3
    search_epochs: int = 10
    batch_size: int = 64
    alpha_lr: float = 1.0
    select_points: int = 50
    table_epochs: int = 5
    table_seeds: int = 3
    table_train: int = SPLIT[0]
    costs: tuple[str, ...] = ("latency",)
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
        for name in ("search_epochs", "batch_size", "table_epochs", "table_seeds",
                     "select_points"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected >= 1, got {getattr(self, name)}")
        if not self.costs or any(c not in TABLE_COSTS for c in self.costs) \
                or len(set(self.costs)) != len(self.costs):
            raise ConfigError(f"costs: expected distinct names from {TABLE_COSTS}, got "
                              f"{self.costs!r}")
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
    "smoke": ConNASConfig(seeds=1, cell_nodes=2, search_epochs=2, table_epochs=1, table_seeds=2,
                          table_train=128, budget_fracs=(0.5, 0.2), lambdas=(1.0,),
                          r_sweep=(2.0,)),
    # gap_pp: just above the table's resolution (set from the table alone, before any search
    # result was read): quick's 5-epoch × 3-seed table resolves 2.63 pp (entry SE 0.95 pp)
    "quick": ConNASConfig(gap_pp=3.0),
    # full's 10-epoch × 5-seed table: predicted ~1.2-1.6 pp from quick's per-seed SD (1.6 pp)
    # over √5; if it resolves less, claims (2)-(3) are undecided by the rule
    "full": ConNASConfig(seeds=5, search_epochs=30, table_epochs=10, table_seeds=5,
                         costs=("latency", "flops"), r_sweep=(1.1, 2.0, 5.0), gap_pp=2.0),
}


def budgets_for(values, fracs) -> list[tuple[float, float]]:
    """[(budget, realised feasible fraction)]: the smallest cost level at which at least each
    target fraction of the architectures (``values``: one cost per architecture) is
    feasible."""
    c = np.sort(np.asarray(values, dtype=float))
    out = []
    for f in fracs:
        b = float(c[max(0, math.ceil(f * c.size) - 1)])
        out.append((b, float(np.mean(c <= b))))
    return out


def _table_key(cfg: ConNASConfig) -> dict:
    return {"cell_nodes": cfg.cell_nodes, "table_epochs": cfg.table_epochs,
            "table_seeds": cfg.table_seeds, "table_train": cfg.table_train,
            "budget_fracs": list(cfg.budget_fracs)}


def trials(cfg: ConNASConfig) -> list[Trial]:
    search_p = {"search_epochs": cfg.search_epochs, "batch_size": cfg.batch_size,
                "alpha_lr": cfg.alpha_lr, "select_points": cfg.select_points, **_table_key(cfg)}
    out = []
    tight = int(np.argmin(cfg.budget_fracs))
    for s in range(cfg.seeds):
        for c in cfg.costs:
            p = {**search_p, "cost": c}
            for i in range(len(cfg.budget_fracs)):
                out.append(Trial("connas", f"{c}_b{i}", s,
                                 {**p, "budget": i, "rescale": cfg.rescale}))
                if cfg.random_search:
                    out.append(Trial("random", f"{c}_b{i}", s, {**p, "budget": i}))
            for r in cfg.r_sweep:
                if r != cfg.rescale:
                    out.append(Trial(f"connas_R{r:g}", f"{c}_b{tight}", s,
                                     {**p, "budget": tight, "rescale": r}))
            for lam in cfg.lambdas:
                out.append(Trial("darts_penalty", c, s, {**p, "lam": lam}))
            out.append(Trial("darts", c, s, p))
    return out


# -- one trial ---------------------------------------------------------------------------------

def space_for(cell_nodes: int) -> CellSpace:
    return dataclasses.replace(MINI_TOPOLOGY, n_nodes=cell_nodes)


@functools.lru_cache(maxsize=2)
def _table(cell_nodes: int, epochs: int, seeds: int, n_train: int) -> GroundTruth:
    return ground_truth_table(space_for(cell_nodes), epochs=epochs, seeds=seeds,
                              n_train=n_train)


def _data():
    x, y = augmented_digits()["train"]
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
    cost = p["cost"]
    budgets = budgets_for(gt.cost(cost), p["budget_fracs"])
    scfg = SearchConfig(epochs=int(p["search_epochs"]), batch_size=int(p["batch_size"]),
                        alpha_lr=float(p["alpha_lr"]), select_points=int(p["select_points"]))
    train, valid = _data()
    seed = 100 + trial.seed
    m = trial.method
    if m == "random":
        i = int(p["budget"])
        n_img = 2 * W_SPLIT  # w and α images per search epoch
        budget = 3 * scfg.epochs * n_img * supernet_flops(space)  # fwd + bwd ≈ 3 fwd
        charge = 3 * gt.epochs * int(p["table_train"]) * gt.flops  # one training run
        rng = np.random.default_rng(seed)
        row, drawn = constrained_random_search(gt.feasible_mask({cost: budgets[i][0]}),
                                               gt.val_acc.mean(1), charge, budget, rng)
        out = _score(gt, gt.archs[row], budgets, "", cost)
        return {"arch": space.to_str(gt.archs[row]), "feasible": out[f"feasible_b{i}"],
                "gap": out[f"gap_b{i}"], "acc": out["acc"], "drawn": drawn}
    if m.startswith("connas"):
        i = int(p["budget"])
        res = connas_search(space, train, valid, {cost: budgets[i][0]}, scfg, seed,
                            cost_fn=gt.costs, rescale=float(p["rescale"]))
        out = _score(gt, res.arch, budgets, "", cost)
        first = next((e for e, ok in enumerate(res.feasible_history) if ok), -1)
        return {"arch": space.to_str(res.arch), "feasible": out[f"feasible_b{i}"],
                "gap": out[f"gap_b{i}"], "acc": out["acc"],
                "selected_feasible": float(bool(res.selected_feasible)),
                "first_feasible_epoch": first,
                "violated_step_frac": res.info["violated_step_frac"],
                "checkpoints": res.info["checkpoints"],
                "feasible_checkpoints": res.info["feasible_checkpoints"],
                "feasible_epoch_frac": float(np.mean(res.feasible_history)),
                "search_wall_s": res.seconds}
    if m == "darts_penalty":
        table = None if cost in ("params", "flops") else additive_fit(space, gt.cost(cost))
        res = darts_penalty_search(space, train, valid, cost, float(p["lam"]), scfg, seed,
                                   table=table)
        return {"arch": space.to_str(res.arch), **_score(gt, res.arch, budgets, "", cost),
                "search_wall_s": res.seconds}
    if m == "darts":
        res = search(space, train, valid, scfg, seed)
        out = {"arch": space.to_str(res.arch), "search_wall_s": res.seconds,
               **_score(gt, res.arch, budgets, "raw_", cost)}
        for i, (b, _) in enumerate(budgets):
            proj, swaps = greedy_projection(res.arch, res.alpha, gt.costs, {cost: b})
            sc = _score(gt, proj, budgets, "", cost)
            out[f"proj_feasible_b{i}"] = sc[f"feasible_b{i}"]
            out[f"proj_gap_b{i}"] = sc[f"gap_b{i}"]
            out[f"proj_swaps_b{i}"] = swaps
        return out
    raise ConfigError(f"trial.method: unknown {m!r}")


# -- summary -----------------------------------------------------------------------------------

def _feas(v: list[float]) -> str:
    return f"{int(sum(v))}/{len(v)}" if v else "—"


def _of_cost(results: list[Result], cost: str) -> list[Result]:
    return [r for r in results if r.trial.params.get("cost") == cost]


def _rows_by_method(results: list[Result], cfg: ConNASConfig) -> dict[str, list]:
    """{method label: [(feasible list, gap list) per budget]} of one cost's results."""
    nb = len(cfg.budget_fracs)
    by: dict[str, list] = {}

    def pick(method, **match):
        return [r for r in results if r.trial.method == method
                and all(r.trial.params.get(k) == v for k, v in match.items())]

    by[f"ConNAS (R={cfg.rescale:g})"] = [
        (_vals(pick("connas", budget=i), "feasible"), _vals(pick("connas", budget=i), "gap"))
        for i in range(nb)]
    tight = int(np.argmin(cfg.budget_fracs))
    for r in cfg.r_sweep:
        if r != cfg.rescale:
            rs = pick(f"connas_R{r:g}")
            by[f"ConNAS (R={r:g})"] = [(_vals(rs, "feasible"), _vals(rs, "gap")) if i == tight
                                       else ([], []) for i in range(nb)]
    d = pick("darts")
    by["DARTS (unconstrained)"] = [(_vals(d, f"raw_feasible_b{i}"), _vals(d, f"raw_gap_b{i}"))
                                   for i in range(nb)]
    by["DARTS + greedy projection"] = [(_vals(d, f"proj_feasible_b{i}"),
                                        _vals(d, f"proj_gap_b{i}")) for i in range(nb)]
    for lam in cfg.lambdas:
        rs = pick("darts_penalty", lam=lam)
        by[f"DARTS + λ·E[cost], λ={lam:g}"] = [
            (_vals(rs, f"feasible_b{i}"), _vals(rs, f"gap_b{i}")) for i in range(nb)]
    if cfg.random_search:
        by["random search (feasible, equal compute)"] = [
            (_vals(pick("random", budget=i), "feasible"), _vals(pick("random", budget=i), "gap"))
            for i in range(nb)]
    return by


def summarize(results: list[Result], cfg: ConNASConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    space = space_for(cfg.cell_nodes)
    gt = _table(cfg.cell_nodes, cfg.table_epochs, cfg.table_seeds, cfg.table_train)
    t_budget = Table(
        title=f"Budgets ({cfg.cell_nodes}-node cell, {space.size} architectures; table: "
              f"{cfg.table_epochs} epochs × {cfg.table_seeds} seeds, {gt.n_test:,} test "
              f"images, entry SE {gt.entry_se_pp():.3g} pp, resolves gaps ≥ "
              f"{gt.resolution_pp():.3g} pp)",
        columns=["cost", "budget", "target feasible", "realised feasible", "bound",
                 "best feasible entry", "its test acc (%)"],
        rows=[[c, i, f"{f:.0%}", f"{real:.1%}", f"{b:,.4g}", space.to_str(gt.archs[row]),
               f"{100 * acc:.2f}"]
              for c in cfg.costs
              for i, (f, (b, real)) in enumerate(zip(cfg.budget_fracs,
                                                     budgets_for(gt.cost(c), cfg.budget_fracs),
                                                     strict=True))
              for row, acc in [gt.best_feasible({c: b})]])
    tables, figures = [t_budget], []
    for c in cfg.costs:
        by = _rows_by_method(_of_cost(results, c), cfg)
        cols = ["method"]
        for i in range(len(cfg.budget_fracs)):
            cols += [f"b{i} feasible", f"b{i} gap (pp)"]
        tables.append(Table(
            title=f"{c}: feasible runs and gap to the best feasible table entry (test "
                  "accuracy, percentage points; mean ± 95% CI over seeds)",
            columns=cols,
            rows=[[label, *[x for fe, gp in per for x in (_feas(fe), _fmt(gp))]]
                  for label, per in by.items()]))
        cn = [r for r in _of_cost(results, c) if r.trial.method == "connas"]
        tables.append(Table(
            title=f"{c}: ConNAS search diagnostics (mean ± 95% CI over seeds)",
            columns=["budget", "violated α steps", "epochs with feasible argmax",
                     "first feasible epoch", "feasible / all checkpoints", "search s"],
            rows=[[i, _fmt(_vals(rs, "violated_step_frac")),
                   _fmt(_vals(rs, "feasible_epoch_frac")),
                   _fmt(_vals(rs, "first_feasible_epoch")),
                   f"{_fmt(_vals(rs, 'feasible_checkpoints'))} / "
                   f"{_fmt(_vals(rs, 'checkpoints'))}",
                   _fmt(_vals(rs, "search_wall_s"))]
                  for i in range(len(cfg.budget_fracs))
                  for rs in [[r for r in cn if r.trial.params["budget"] == i]]]))
        figures.append(_plot(by, cfg.budget_fracs, cfg.gap_pp,
                             outdir / f"connas_gap_feasibility_{c}.png", c))
    return Summary(tables=tables, figures=figures, claims=_claims(results, cfg, gt),
                   notes=_notes(cfg, gt))


def _pick(method: str, **match):
    """A ``where`` for :func:`by_seed`: trials of ``method`` whose params match."""
    return lambda r: r.trial.method == method and all(r.trial.params.get(k) == v
                                                      for k, v in match.items())


def _missing(what: str) -> Verdict:
    """An *inconclusive* cell for runs that are not in the store (a partial run)."""
    return undecided(f"no {what} run is stored")


def _all_feasible(values: dict[int, float] | list[float], what: str = "ConNAS") -> Verdict:
    """Every run feasible: an exact count of the infeasible runs (none allowed)."""
    vals = list(values.values()) if isinstance(values, dict) else list(values)
    return bound_holds(vals, 1.0, side="ge") if vals else _missing(what)


def _over_costs(cells: dict[str, Verdict]) -> Verdict:
    return next(iter(cells.values())) if len(cells) == 1 else all_of(cells)


def _claims(results: list[Result], cfg: ConNASConfig, gt: GroundTruth | None = None
            ) -> list[Claim]:
    """The claims over every cost (``all_of`` the costs where there are several).  ``gt`` is
    the table (for its resolution); None in unit tests, where the resolution is taken as 0."""
    per = {c: _claims_one(_of_cost(results, c), cfg, c, gt) for c in cfg.costs}
    out = []
    for k, first in enumerate(per[cfg.costs[0]]):
        items = {c: cl[k] for c, cl in per.items()}
        ev = first.evidence if len(items) == 1 else "; ".join(
            f"[{c}] {cl.evidence}" for c, cl in items.items())
        out.append(Claim(text=first.text, evidence=ev,
                         verdict=_over_costs({c: cl.verdict for c, cl in items.items()})))
    return out


def _claims_one(results: list[Result], cfg: ConNASConfig, cost: str,
                gt: GroundTruth | None) -> list[Claim]:
    claims = []
    nb = len(cfg.budget_fracs)
    by = _rows_by_method(results, cfg)
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
             "(every cost, budget and seed; paper: 5/5 on every NATS-Bench constraint).",
        evidence="feasible runs per budget: " + ", ".join(
            f"b{i} {_feas(f)}" for i, (f, _) in enumerate(cn))
                 + (f"; constraint-violating α steps per run: max {max(violated):.3g}"
                    if violated else ""),
        verdict=v1))
    gaps = {i: by_seed(results, "gap", _pick("connas", budget=i)) for i in range(nb)}
    resolution = gt.resolution_pp() if gt is not None else 0.0
    for label, margin in (("2", PAPER_GAP_PP), ("3", cfg.gap_pp)):
        if not resolution <= margin:
            v = undecided(f"the table resolves gaps of {resolution:.3g} pp or more (entry SE "
                          f"{gt.entry_se_pp():.3g} pp over {gt.seeds} seeds, {gt.n_test} test "
                          f"images); a {margin:g} pp gap is below it")
        else:
            v = all_of({f"b{i}": within(list(gaps[i].values()), -math.inf, margin)
                        if gaps[i] else _missing(f"ConNAS b{i}") for i in range(nb)})
        claims.append(Claim(
            text=(f"(2) ConNAS's mean gap to the best feasible table entry is ≤ "
                  f"{PAPER_GAP_PP:g} pp at every budget (the paper's headline: within 0.14 % "
                  "of the optimal feasible architecture; decided only where the table resolves "
                  "it)." if label == "2" else
                  f"(3) Restated at a margin this table resolves: the mean gap is ≤ "
                  f"{cfg.gap_pp:g} pp at every budget (95 % CI of the mean below it; paper: "
                  "−0.14 to −5.08 % on NATS-Bench; brief: ≤ ~1 %)."),
            evidence="mean gap per budget: " + ", ".join(
                f"b{i} {_fmt(g)} pp" for i, (_, g) in enumerate(cn))
                     + f"; table resolution {resolution:.3g} pp",
            verdict=v))
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
        text="(4) No single λ of the grid works at every budget (works = feasible in every seed "
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
            text=f"(5) R sweep at the tightest budget: every R in {sorted(rows)} stays 100 % "
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
        f"deformed scikit-learn digits (1,000 training / 1,588 validation / {gt.n_test:,} test "
        f"images from 1,000 / 397 / 400 source digits); ground truth {cfg.table_epochs} epochs "
        f"× {cfg.table_seeds} seeds per architecture (generated in {gt.seconds:.0f} s when "
        f"first built, cached); search {cfg.search_epochs} epochs, {cfg.seeds} seeds.  Paper: "
        "NATS-Bench topology (15,625) with Jetson TX2 latency / energy and the size space with "
        "params / FLOPs / peak memory, 150 search epochs, 5 runs.",
        f"Table resolution: entry SE {gt.entry_se_pp():.3g} pp (pooled seed SD / √"
        f"{gt.seeds}); two entries differ resolvably when they differ by ≥ "
        f"{gt.resolution_pp():.3g} pp (1.96·√2·SE).  Claim (2), the paper's 0.14 pp, is "
        "decided only if the table resolves it; claim (3) restates it at "
        f"{cfg.gap_pp:g} pp.",
        "Constraints: measured latency (CPU thread time of a batch-1 inference pass, a lookup "
        "table built with the ground truth; the paper's topology metric, there on a Jetson "
        "TX2), exact params and exact FLOPs (xautodl's count).  In this space params and "
        "FLOPs order the architectures identically (both count only the 1×1 and 3×3 convs), "
        "so one of them suffices; energy and peak memory are not modelled.  Pooling, skip "
        "and none cost 0 params/FLOPs, so their budgets tie at 21.6 % of the space.",
        "Penalty baseline: λ·E[cost]/cost_max with E under softmax(α), exact for params and "
        "FLOPs, and FBNet's additive per-op lookup table fitted by least squares for latency; "
        "one search per λ scored at every budget; ProxylessNAS / FBNet / TAS / HDX / TF-NAS "
        "themselves are not run.  Random search charges each drawn architecture its training "
        "FLOPs against the supernet search's FLOPs (deterministic stand-in for wall-clock).",
        "α is stepped by plain SGD (η_α = 1.0, every method), the literal form of ConNAS's "
        f"update equation; the w optimiser and ε = 1e-6 are inferred.  Selection: "
        f"{cfg.select_points} checkpoints (at most one per α step) in the last third of the "
        "search, the paper's 50 epoch ends of its last 50 epochs.  Trials are single-threaded "
        "CPU runs whatever --device says.",
    ]


def _plot(by: dict[str, list], fracs: tuple[float, ...], gap_pp: float, path: Path,
          cost: str) -> Figure:
    cats = [f"b{i} ({f:.0%} feasible)" for i, f in enumerate(fracs)]
    fig, ax = grid(2, ncols=1, panel=(10.0, 3.6))
    for a, j, name in ((ax[0], 0, "feasible fraction of runs"),
                       (ax[1], 1, "gap to best feasible (pp)")):
        category_panel(a, {label: {c: cell[j] for c, cell in zip(cats, per, strict=True)
                                   if cell[j]}
                           for label, per in by.items()},
                       ylabel=name, xlabel=f"{cost} budget", ylog=False if j == 0 else "auto",
                       hline=gap_pp if j == 1 else None, legend=j == 0)
    ax[0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save(fig, path, f"{cost} budgets (b0 loosest; share of the space that is feasible in "
                "brackets): fraction of feasible runs and gap to the best feasible table entry "
                f"(dashed: {gap_pp:g} pp), per method; mean ± 95 % CI over seeds")


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "ConNAS (ICLR 2026) at CPU scale: first-order DARTS / Gumbel search on a 3-edge "
        "NATS-Bench-style cell (125 architectures) on deformed scikit-learn digits, with "
        "ConNAS's constraint-guided α-gradient modification under latency (measured lookup "
        "table) and FLOPs/params budgets, against DARTS + λ·E[cost] over a λ grid, "
        "unconstrained DARTS + greedy projection and constrained random search; architectures "
        "are scored on a ground-truth table of every architecture trained by project code "
        "with 3+ seeds on a 4,000-image test set (cached under $OPTZOO_CACHE or "
        "~/.cache/optzoo). "
        "Trials are CPU-sized (single-threaded) and run on the CPU whatever --device says."),
)
