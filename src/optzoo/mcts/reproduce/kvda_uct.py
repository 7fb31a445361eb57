"""Reproduction ``kvda-uct``: Schmöcker, Dockhorn & Rosenhahn, "Grouping Nodes with Known Value
Differences: A Lossless UCT-based Abstraction Algorithm" (ICLR 2026, arXiv 2510.25388,
OpenReview Zk0zZMSAYc; official C++ code ``codebro634/KVDA_UCT``).

Setting (the brief's small-scale reproduction): deterministic domains
(:mod:`optzoo.mcts.domains`: SysAdmin ring of 6, Game of Life 3×3, Sailing Wind 6×6, the official
Saving MDP (p = 4, t = 4) determinised, Connect-4 6×7 against the one-step-lookahead opponent;
horizons 10 / 10 / 15 / 10 / 10), agents KVDA-UCT, OGA-UCT (ASAP, ε = 0), (ε_a, ε_t)-OGA-UCT
(one trial per ε_a of the preset), plain UCT (same dynamic-σ UCB) and a random agent; K = 3; a
grid of iterations × C.  One trial = (agent, domain, iterations, C, seed) playing ``episodes``
episodes; episode e of seed s uses search seed 1000·s + e for every agent (paired), and, in the
determinised domains (Saving, Connect-4: a ``seed`` field), the determinisation / opponent
tie-break seed 1000·s + e too (the official runner draws a new one per episode).  Metrics: mean
undiscounted return, and the trees' compression (ground / abstract Q-nodes, averaged over the
decisions of the episodes).

Claims (thresholds fixed before any run), each decided by a test of
:mod:`optzoo.experiment.verdicts` over the (domain, iterations, C) cells, paired by seed:
(1) KVDA finds more abstractions: in every cell (``all_of``) KVDA's Q compression ratio exceeds
    OGA's by more than ``min_effect_q_log`` in log units (``superior``, log ratio).
(2) KVDA outperforms OGA in return in most cells: at least ⌈2m/3⌉ of the m cells (``at_least``)
    have KVDA − OGA above the cell's minimal effect (``superior``).
(3) KVDA ≥ UCT everywhere: in every cell (``all_of``) KVDA − UCT lies above the declared
    non-inferiority margin −``ni_margin_per_step`` × horizon (``noninferior``), decided only
    on at least ``ni_min_seeds`` seeds (the full preset's 5).
(4) (only when the preset runs (ε_a, ε_t)-OGA) KVDA competes with parameter-tuned ε-OGA: per
    cell ε_a is tuned (:func:`~optzoo.experiment.verdicts.tune`) on {0 (= OGA, which
    (ε_a = 0, ε_t < 2)-OGA is bit for bit), the preset's ε_a} on the same results (which
    favours ε-OGA), KVDA − tuned ε-OGA is ``noninferior`` with the cell's declared margin
    (``ni_margin_per_step`` × horizon; at least ``ni_min_seeds`` seeds), guarded
    (:func:`~optzoo.experiment.verdicts.guard`: a best ε_a on a grid edge that is no hard limit
    makes the cell inconclusive; 0 and 999999, "ignore the reward", are hard limits), in at
    least ⌈2m/3⌉ of the cells.  KVDA has no parameter: the unequal tuning budget favours the
    baseline, so it is recorded, not held against the claim.

Verdict margins (fixed before results, the same in every preset):

* ``min_effect_return_per_step`` = 0.05: claim 2's minimal return effect of a cell is 0.05 ×
  the domain's horizon, i.e. 1/20 of the smallest reward unit per decision (one running
  machine, one live cell, the cheapest sailing step 1.0, the save reward 1, one two-in-a-row
  of Connect-4's heuristic) — a difference below it is a tie.
* ``ni_margin_per_step`` = 0.05: the non-inferiority margin of claims 3 and 4 ("not
  significantly worse"), in return units 0.05 × horizon (SysAdmin, Game of Life, Saving,
  Connect-4: 0.5; Sailing Wind: 0.75): a loss of 1/20 of the smallest reward unit per decision
  is the most that still counts as "no worse".  Declared separately from claim 2's effect so
  that either can be read (and changed, before a run) on its own.
* ``ni_min_seeds`` = 5: a non-inferiority cell is decided only on at least 5 paired seeds (the
  full preset); with fewer (quick: 3, t₀.₉₇₅ = 4.3) the cell is *inconclusive* and records what
  the test alone said.  Issue 22: "not worse" needs the full preset's seeds.
* ``min_effect_q_log`` = 0.05: KVDA's compression must exceed OGA's by ≈ 5 % (log ratio) to
  count as "more abstractions"; a method that finds the same groups cannot pass.

Rules changed by the verdict conversion (issue 18), and why: (1) was "seed-mean ratio larger in
every cell" (any tie-break won); (2) counted cells by their seed-mean difference, 2/3 of the
non-ties, with no per-cell test (a cell won by noise counted); (3) and (4) passed whenever no
cell's CI lay entirely below 0 (large variance passed them); (4) also picked ε_a by hand on the
same results without recording the tuning; it is now routed through ``tune`` on the grid
{0} ∪ ε_a (the paper's ε_a range starts at 0, and the OGA trials are that member, so no trial is
added) with the grid-edge guard.  All four now combine per-cell tests (``all_of`` /
``at_least``).

Every tree agent runs the official search loop (:mod:`optzoo.mcts.uct`: a new Q-node keeps its
own abstract node until its first re-abstraction, an expansion into a known state continues the
descent, σ over the ground Q-nodes' own means); the rules before issue 22
(:data:`optzoo.mcts.uct.EAGER`) are not run.

The stochastic study is not run.  Trials are pure Python on one CPU thread whatever --device
says.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment import verdicts as vd
from optzoo.experiment.stats import fmt_values
from optzoo.mcts import DOMAINS, KVDAUCT, OGAUCT, UCT, EpsOGAUCT, RandomAgent, play_episode
from optzoo.report.figures import category_panel, color, grid, save

SLUG = "kvda-uct"
AGENTS = {"kvda": KVDAUCT, "oga": OGAUCT, "uct": UCT}
EPS = "eps_oga"  # (ε_a, ε_t)-OGA-UCT; one agent per ε_a, told apart by the trial's params
RECENCY = 3
IGNORE_REWARD = 999999.0  # the paper's ε_a that ignores the reward (a hard limit of the grid)
SHARE = 2 / 3             # claims 2 and 4: at least ⌈2m/3⌉ of the m cells


@dataclass(frozen=True)
class KVDAConfig(Preset):
    """Settings of the reproduction.

    Args:
        seeds: seeds per cell (paired across agents).
        episodes: episodes per trial.
        domains: domain names of :data:`optzoo.mcts.DOMAINS` (default sizes).
        iterations: search iterations per decision (grid).
        cs: exploration constants C (grid).
        eps_as: ε_a values of the (ε_a, ε_t)-OGA-UCT baseline, one agent each (empty: not
            run); 999999 is the paper's "ignore the reward".
        eps_t: ε_t of that baseline (deterministic domains: < 2 = same abstract successor).
        min_effect_return_per_step: claim 2's minimal return effect per decision (× horizon).
        ni_margin_per_step: claims 3 and 4's non-inferiority margin per decision (× horizon).
        ni_min_seeds: the fewest paired seeds on which claims 3 and 4 decide a cell.
        min_effect_q_log: claim 1's minimal log ratio of KVDA's to OGA's compression.
    """

    seeds: int = 3
    episodes: int = 20
    domains: tuple[str, ...] = ("sailing_wind",)
    iterations: tuple[int, ...] = (100,)
    cs: tuple[float, ...] = (1.0, 2.0, 4.0)
    eps_as: tuple[float, ...] = ()
    eps_t: float = 0.0
    min_effect_return_per_step: float = 0.05
    ni_margin_per_step: float = 0.05
    ni_min_seeds: int = 5
    min_effect_q_log: float = 0.05

    def validate(self) -> None:
        super().validate()
        if self.episodes < 1:
            raise ConfigError(f"episodes: expected >= 1, got {self.episodes}")
        bad = [d for d in self.domains if d not in DOMAINS]
        if not self.domains or bad:
            raise ConfigError(f"domains: expected names from {sorted(DOMAINS)}, got "
                              f"{self.domains}")
        if not self.iterations or any(i < 1 for i in self.iterations):
            raise ConfigError(f"iterations: expected integers >= 1, got {self.iterations}")
        if not self.cs or any(not c > 0 for c in self.cs):
            raise ConfigError(f"cs: expected positive constants, got {self.cs}")
        if any(not e >= 0 for e in self.eps_as) or len(set(self.eps_as)) != len(self.eps_as):
            raise ConfigError(f"eps_as: expected distinct numbers >= 0, got {self.eps_as}")
        if not self.eps_t >= 0:
            raise ConfigError(f"eps_t: expected a number >= 0, got {self.eps_t}")
        if not self.min_effect_return_per_step > 0:
            raise ConfigError(f"min_effect_return_per_step: expected > 0, got "
                              f"{self.min_effect_return_per_step}")
        if not self.ni_margin_per_step > 0:
            raise ConfigError(f"ni_margin_per_step: expected > 0, got {self.ni_margin_per_step}")
        if not isinstance(self.ni_min_seeds, int) or self.ni_min_seeds < 2:
            raise ConfigError(f"ni_min_seeds: expected an integer >= 2, got {self.ni_min_seeds}")
        if not self.min_effect_q_log >= 0:
            raise ConfigError(f"min_effect_q_log: expected >= 0, got {self.min_effect_q_log}")


PRESETS = {
    "smoke": KVDAConfig(seeds=2, episodes=1,
                        domains=("sailing_wind", "sysadmin", "saving", "connect4"),
                        iterations=(20,), cs=(1.0,), eps_as=(1.0,)),
    "quick": KVDAConfig(),
    # ε_a: the official default grid of the deterministic runs (Eval.yml, deterministic_eps_a)
    "full": KVDAConfig(seeds=5, episodes=40,
                       domains=("sysadmin", "game_of_life", "sailing_wind", "saving", "connect4"),
                       iterations=(50, 100, 200), cs=(1.0, 2.0, 4.0),
                       eps_as=(1.0, 2.0, 999999.0)),
}


def trials(cfg: KVDAConfig) -> list[Trial]:
    out = []
    for dom in cfg.domains:
        for s in range(cfg.seeds):
            out.append(Trial(method="random", problem=dom, seed=s,
                             params={"episodes": cfg.episodes, "iterations": 0, "c": 0.0}))
            for it in cfg.iterations:
                for c in cfg.cs:
                    base = {"episodes": cfg.episodes, "iterations": it, "c": float(c)}
                    for m in AGENTS:
                        out.append(Trial(method=m, problem=dom, seed=s, params=dict(base)))
                    for eps in cfg.eps_as:
                        out.append(Trial(method=EPS, problem=dom, seed=s,
                                         params={**base, "eps_a": float(eps),
                                                 "eps_t": float(cfg.eps_t)}))
    return out


def _env(domain: str, seed: int):
    """The domain at its default size; a determinised one (a ``seed`` field) with ``seed``."""
    cls = DOMAINS[domain]
    if "seed" in {f.name for f in dataclasses.fields(cls)}:
        return cls(seed=seed)
    return cls()


def run_trial(trial: Trial, device: str) -> dict:
    p = trial.params
    rows = []
    for e in range(int(p["episodes"])):
        seed = 1000 * trial.seed + e
        env = _env(trial.problem, seed)
        if trial.method == "random":
            agent = RandomAgent(env, seed=seed)
        elif trial.method == EPS:
            agent = EpsOGAUCT(env, iterations=int(p["iterations"]), c=float(p["c"]),
                              recency=RECENCY, seed=seed, eps_a=float(p["eps_a"]),
                              eps_t=float(p["eps_t"]))
        else:
            agent = AGENTS[trial.method](env, iterations=int(p["iterations"]), c=float(p["c"]),
                                         recency=RECENCY, seed=seed)
        rows.append(play_episode(agent, env))
    return {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}


# -- summary -----------------------------------------------------------------------------------

def _agent(trial: Trial) -> str:
    if trial.method == EPS:
        return f"{EPS}:{float(trial.params['eps_a']):g}"
    return trial.method


def _cells(results: list[Result]) -> dict[tuple, dict[str, dict[int, Result]]]:
    cells: dict[tuple, dict[str, dict[int, Result]]] = {}
    for r in results:
        if r.trial.method == "random":
            continue
        key = (r.trial.problem, int(r.trial.params["iterations"]), float(r.trial.params["c"]))
        cells.setdefault(key, {}).setdefault(_agent(r.trial), {})[r.trial.seed] = r
    return dict(sorted(cells.items()))


def _grid(cell: dict[str, dict[int, Result]], eps_t: float) -> dict[float, str]:
    """``{ε_a: agent}`` of the cell's ε-OGA grid; OGA is its ε_a = 0 member when ε_t < 2 (then
    (ε_a, ε_t)-OGA is OGA bit for bit, see :mod:`optzoo.mcts.eps_oga_uct`)."""
    out = {float(m.split(":")[1]): m for m in cell if m.startswith(EPS + ":")}
    if out and eps_t < 2 and "oga" in cell and 0.0 not in out:
        out[0.0] = "oga"
    return dict(sorted(out.items()))


def _tune(cell: dict[str, dict[int, Result]], eps_t: float, name: str) -> vd.Tuned | None:
    """ε_a tuned on the cell's returns (None if no ε-OGA ran); 0 and 999999 are hard limits."""
    grid = _grid(cell, eps_t)
    if not grid:
        return None
    scores = {e: [float(r.metrics["return"]) for r in cell[m].values()] for e, m in grid.items()}
    return vd.tune(f"ε_a of ε-OGA ({name})", scores, minimize=False,
                   hard_limits=tuple(e for e in (0.0, IGNORE_REWARD) if e in grid))


def _tuned(cell: dict[str, dict[int, Result]], eps_t: float = 0.0) -> str | None:
    """The agent of the cell's tuned ε_a (OGA when ε_a = 0 is best; None if no ε-OGA ran)."""
    t = _tune(cell, eps_t, "")
    return None if t is None else _grid(cell, eps_t)[t.best]


def _seeds(cell: dict[str, dict[int, Result]], m: str, key: str) -> dict[int, float]:
    return {s: float(r.metrics[key]) for s, r in sorted(cell.get(m, {}).items())}


def _horizon(domain: str) -> int:
    return int(DOMAINS[domain]().horizon)


def _effect(domain: str, cfg: KVDAConfig) -> float:
    """Claim 2's minimal return effect of a cell: ``min_effect_return_per_step`` × horizon."""
    return cfg.min_effect_return_per_step * _horizon(domain)


def _margin(domain: str, cfg: KVDAConfig) -> float:
    """Claims 3 and 4's non-inferiority margin: ``ni_margin_per_step`` × horizon."""
    return cfg.ni_margin_per_step * _horizon(domain)


def _noninferior(a: dict[int, float], b: dict[int, float], domain: str,
                 cfg: KVDAConfig) -> vd.Verdict:
    """KVDA − baseline above −margin, paired by seed; fewer than ``ni_min_seeds`` paired seeds
    cannot decide the cell (the test's own answer is kept in the verdict's guards)."""
    a, b = vd.common_seeds(a, b)
    v = vd.noninferior(a, b, margin=_margin(domain, cfg))
    if len(a) < cfg.ni_min_seeds:
        return vd.downgrade(v, f"{len(a)} paired seeds, fewer than the {cfg.ni_min_seeds} "
                               "a non-inferiority cell needs (the full preset)")
    return v


def _margins_text(cells, cfg: KVDAConfig) -> str:
    doms = sorted({k[0] for k in cells})
    return ", ".join(f"{d} {_margin(d, cfg):g}" for d in doms)


def _paired(cell: dict[str, dict[int, Result]], a: str, b: str, key: str) -> list[float]:
    seeds = sorted(set(cell.get(a, {})) & set(cell.get(b, {})))
    return [float(cell[a][s].metrics[key]) - float(cell[b][s].metrics[key]) for s in seeds]


def _mean(cell, m, key) -> float:
    return float(np.mean([float(r.metrics[key]) for r in cell.get(m, {}).values()]))


def summarize(results: list[Result], cfg: KVDAConfig, outdir: Path) -> Summary:
    cells = _cells(results)
    rows = []
    for (dom, it, c), cell in cells.items():
        vals = {m: [float(r.metrics["return"]) for r in cell.get(m, {}).values()] for m in AGENTS}
        ratio = {m: [float(r.metrics["q_ratio"]) for r in cell.get(m, {}).values()]
                 for m in ("kvda", "oga")}
        rows.append([dom, it, c, *(fmt_values(vals[m]) for m in AGENTS),
                     fmt_values(_paired(cell, "kvda", "oga", "return")),
                     *(fmt_values(ratio[m]) for m in ("kvda", "oga")), len(vals["kvda"])])
    table = Table(title="Episode return and Q compression (ground / abstract Q-nodes), mean ± 95% "
                  "CI over seeds", columns=["domain", "iterations", "C", "KVDA return",
                                            "OGA return", "UCT return", "KVDA − OGA (paired)",
                                            "KVDA Q ratio", "OGA Q ratio", "seeds"], rows=rows)
    rnd = [[dom, fmt_values([float(r.metrics["return"]) for r in results
                             if r.trial.method == "random" and r.trial.problem == dom])]
           for dom in cfg.domains]
    tables = [table, Table(title="Random agent return", columns=["domain", "return"], rows=rnd)]
    if cfg.eps_as:
        tables.insert(1, _eps_table(cells, cfg))
    return Summary(tables=tables, figures=[_plot(cells, outdir / "kvda_vs_oga.png", cfg.eps_t)],
                   claims=_claims(cells, cfg), notes=_notes(cfg))


def _eps_table(cells, cfg: KVDAConfig) -> Table:
    names = [f"{EPS}:{float(e):g}" for e in cfg.eps_as]
    rows = []
    for (dom, it, c), cell in cells.items():
        best = _tuned(cell, cfg.eps_t)
        rets = [fmt_values([float(r.metrics["return"]) for r in cell.get(m, {}).values()])
                for m in names]
        ratio = [float(r.metrics["q_ratio"]) for r in cell.get(best, {}).values()]
        rows.append([dom, it, c, *rets, ("0 (OGA)" if best == "oga" else best.split(":")[1])
                     if best else "—",
                     fmt_values(_paired(cell, "kvda", best, "return")) if best else "—",
                     fmt_values(ratio)])
    return Table(title=f"(ε_a, ε_t)-OGA-UCT (ε_t = {cfg.eps_t:g}) return per ε_a, and KVDA − the "
                       "best ε_a of the cell (paired by seed), mean ± 95% CI over seeds",
                 columns=["domain", "iterations", "C",
                          *(f"ε_a={float(e):g} return" for e in cfg.eps_as), "tuned ε_a",
                          "KVDA − tuned ε-OGA", "tuned ε-OGA Q ratio"], rows=rows)


def _sign_p(wins: int, losses: int) -> float:
    n = wins + losses
    if n == 0:
        return 1.0
    return float(sum(math.comb(n, k) for k in range(wins, n + 1)) / 2 ** n)


def _name(k: tuple) -> str:
    return f"{k[0]} it={k[1]} C={k[2]:g}"


def _claims(cells, cfg: KVDAConfig) -> list[Claim]:
    # (1) more abstractions than OGA in every cell (log ratio of the compressions)
    q_cells = {_name(k): vd.superior(_seeds(c, "kvda", "q_ratio"), _seeds(c, "oga", "q_ratio"),
                                     min_effect=cfg.min_effect_q_log, log_ratio=True)
               for k, c in cells.items()}
    more = [(k, _mean(c, "kvda", "q_ratio"), _mean(c, "oga", "q_ratio")) for k, c in cells.items()]
    ev1 = "; ".join(f"{_name(k)}: {a:.2f} vs {b:.2f}" for k, a, b in more)
    claims = [Claim(text="(1) KVDA-UCT detects more abstractions than OGA-UCT: its Q compression "
                         "(ground / abstract Q-nodes) exceeds OGA's by more than "
                         f"{cfg.min_effect_q_log:g} in log ratio (paired by seed) in every cell.",
                    evidence=f"KVDA vs OGA ratio (seed means): {ev1}",
                    verdict=vd.all_of(q_cells))]

    # (2) KVDA's return above OGA's (by the cell's minimal effect) in ⌈2m/3⌉ of the cells
    k_most = max(1, math.ceil(SHARE * len(cells) - 1e-9))
    r_cells = {_name(k): vd.superior(_seeds(c, "kvda", "return"), _seeds(c, "oga", "return"),
                                     min_effect=_effect(k[0], cfg)) for k, c in cells.items()}
    diffs = {k: _mean(c, "kvda", "return") - _mean(c, "oga", "return") for k, c in cells.items()}
    wins = sum(d > 1e-9 for d in diffs.values())
    losses = sum(d < -1e-9 for d in diffs.values())
    v2 = vd.at_least(r_cells, k_most)
    claims.append(Claim(
        text="(2) KVDA-UCT's mean episode return exceeds OGA-UCT's in most (domain, iterations, "
             "C) cells: in at least 2/3 of the cells KVDA − OGA (paired by seed) is above "
             f"{cfg.min_effect_return_per_step:g} × the horizon.",
        evidence=f"{int(v2.effect)} of {len(cells)} cells held ({k_most} needed); by seed-mean "
                 f"difference (descriptive): wins {wins}, losses {losses}, ties "
                 f"{len(diffs) - wins - losses}, one-sided sign test p = "
                 f"{_sign_p(wins, losses):.3g}; mean difference over cells "
                 f"{np.mean(list(diffs.values())):.3g}",
        verdict=v2))

    # (3) KVDA not worse than UCT (fixed margin) in every cell
    u_cells = {_name(k): _noninferior(_seeds(c, "kvda", "return"), _seeds(c, "uct", "return"),
                                      k[0], cfg) for k, c in cells.items()}
    parts3 = [f"{n}: {v.effect:.3g} [{v.ci[0]:.3g}, {v.ci[1]:.3g}]" for n, v in u_cells.items()]
    claims.append(Claim(
        text="(3) KVDA-UCT is not worse than plain UCT at equal iterations: in every cell KVDA − "
             "UCT (paired by seed) lies above the non-inferiority margin −"
             f"{cfg.ni_margin_per_step:g} × the horizon (in return units: "
             f"{_margins_text(cells, cfg)}), on at least {cfg.ni_min_seeds} seeds.",
        evidence="paired KVDA − UCT per cell (mean, 95% CI): " + "; ".join(parts3),
        verdict=vd.all_of(u_cells)))

    # (4) KVDA not worse than ε-OGA with ε_a tuned per cell, in ⌈2m/3⌉ of the cells
    tuned = {k: _tune(c, cfg.eps_t, _name(k)) for k, c in cells.items()}
    if any(t is not None for t in tuned.values()):
        e_cells, parts = {}, []
        for k, c in cells.items():
            t = tuned[k]
            if t is None:
                continue
            best = _grid(c, cfg.eps_t)[t.best]
            v = _noninferior(_seeds(c, "kvda", "return"), _seeds(c, best, "return"), k[0], cfg)
            # KVDA has no parameter: the unequal budget favours the baseline (recorded only)
            e_cells[_name(k)] = vd.guard(v, t, equal_budget=False)
            parts.append(f"{_name(k)}: {v.effect:.3g} [{v.ci[0]:.3g}, {v.ci[1]:.3g}] "
                         f"(ε_a={t.best:g}{' = OGA' if best == 'oga' else ''})")
        k4 = max(1, math.ceil(SHARE * len(e_cells) - 1e-9))
        v4 = vd.at_least(e_cells, k4)
        claims.append(Claim(
            text="(4) KVDA-UCT (no parameter) competes with parameter-tuned (ε_a, ε_t)-OGA-UCT: "
                 "against the best ε_a of each cell (tuned on the same results, ε_a = 0 being "
                 "OGA), KVDA − tuned ε-OGA lies above the non-inferiority margin −"
                 f"{cfg.ni_margin_per_step:g} × the horizon (in return units: "
                 f"{_margins_text(cells, cfg)}), on at least {cfg.ni_min_seeds} seeds, in at "
                 "least 2/3 of the cells.",
            evidence=f"{int(v4.effect)} of {len(e_cells)} cells held ({k4} needed); paired KVDA "
                     "− tuned ε-OGA per cell (mean, 95% CI): " + "; ".join(parts),
            verdict=v4))
    return claims


def _plot(cells, path: Path, eps_t: float = 0.0) -> Figure:
    keys = list(cells)
    domains = list(dict.fromkeys(k[0] for k in keys))
    tuned = {k: _tuned(cells[k], eps_t) for k in keys}
    series = list(AGENTS) + (["tuned ε-OGA"] if any(tuned.values()) else [])
    colors = {m: color(i) for i, m in enumerate(series)}

    def agent(k, label):
        return tuned[k] if label == "tuned ε-OGA" else label

    # one column per domain (returns are on each domain's own scale): returns on top, the
    # Q-node compression below; categories are the (iterations, C) cells of the domain
    fig, axes = grid(2 * len(domains), ncols=len(domains), panel=(4.2, 3.6))
    for d, dom in enumerate(domains):
        mine = [k for k in keys if k[0] == dom]
        for ax, key, labels, ylabel in (
                (axes[d], "return", series, "episode return"),
                (axes[len(domains) + d], "q_ratio",
                 [m for m in series if m != "uct"], "ground / abstract Q-nodes")):
            values = {label: {f"it={k[1]}, C={k[2]:g}": _seeds(cells[k], agent(k, label), key)
                              for k in mine if agent(k, label) in cells[k]}
                      for label in labels}
            category_panel(ax, values, kind="point", ylabel=ylabel, title=dom,
                           colors=colors, xlabel="(iterations, C)", legend=d == 0)
    return save(fig, path, "Top: mean episode return per (domain, iterations, C) cell; bottom: "
                "Q-node compression (ground / abstract Q-nodes) of KVDA vs OGA (and the "
                "best-ε_a ε-OGA when run); mean ± 95 % CI over seeds")


def _notes(cfg: KVDAConfig) -> list[str]:
    hand = [d for d in cfg.domains if d in ("sysadmin", "game_of_life", "sailing_wind")]
    official = [d for d in cfg.domains if d in ("saving", "connect4")]
    missing = [name for name, there in (("Saving", "saving" in cfg.domains),
                                        ("the two-player game (Connect-4)",
                                         "connect4" in cfg.domains),
                                        ("the (ε_a, ε_t)-OGA baseline", bool(cfg.eps_as)))
               if not there]
    notes = []
    if hand:
        notes.append(f"Domains {hand} are small hand-built deterministic versions (our rules, see "
                     "optzoo.mcts.domains), not the paper's determinised IPPC maps.")
    if official:
        notes.append(f"Domains {official} follow the official code's rules (Saving p = 4, t = 4; "
                     "Connect-4 6×7 vs the one-step-lookahead opponent with the heuristic "
                     "reward), determinised by our own hash of (episode seed, state) instead of "
                     "the C++ generator; horizon 10 (paper: 50 / 200 for the games).")
    notes.append("Not run in this preset: " + ", ".join(missing + ["the stochastic study"]) + ".")
    if cfg.eps_as:
        notes.append(f"(ε_a, ε_t)-OGA: ε_a ∈ {list(cfg.eps_as)}, ε_t = {cfg.eps_t:g} for every "
                     "domain (the official deterministic runs: ε_a ∈ {1, 2, 999999} by default, "
                     "other grids for some domains, e.g. Connect-4 {1, 5, 10, 999999}); the "
                     "tuned ε_a is picked per cell on the evaluation results themselves, on the "
                     "grid {0 (= OGA, when ε_t < 2)} ∪ ε_a (0 and 999999 are hard limits of the "
                     "grid; a best ε_a on another edge makes the cell inconclusive); our "
                     "matching keeps each abstract Q-node's founding reward as its reference "
                     "(see optzoo.mcts.eps_oga_uct).")
    notes += [
        f"Grid: domains {list(cfg.domains)}, iterations {list(cfg.iterations)}, C "
        f"{list(cfg.cs)}, K = {RECENCY}, {cfg.episodes} episodes × {cfg.seeds} seeds per cell "
        "(paper: iterations 100–1000, C 0.5–16, 2000 episodes per cell).",
        "Search loop of the official code (issue 22) for every tree agent: a new Q-node keeps "
        "its own abstract node until it is first re-abstracted (K visits or a changed "
        "successor), an expansion into a known state continues the descent, σ is the std of "
        "the ground Q-nodes' own means (0 before any visit); the earlier rules are "
        "optzoo.mcts.uct.EAGER (not run here).",
        "Statistics frame: returns enter an abstract Q-node as G − b(q) with the known offset "
        "b(q) = R(q) + e(s'); equal in every read to the paper's representative frame.",
    ]
    return notes


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Schmöcker, Dockhorn & Rosenhahn (ICLR 2026) at CPU scale: KVDA-UCT vs OGA-UCT (ASAP) "
        "vs (ε_a, ε_t)-OGA-UCT vs plain UCT (dynamic-σ UCB, transposition DAG, K = 3) and a "
        "random agent on small deterministic SysAdmin / Game of Life / Sailing Wind / Saving "
        "domains and Connect-4 against a one-step-lookahead opponent, over an iterations × C "
        "grid with paired seeds: episode return and the number of abstractions found. "
        "Pure Python, single-threaded; runs on the CPU whatever --device says."),
)
