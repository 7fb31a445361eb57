"""Reproduction ``kvda-uct``: Schmöcker, Dockhorn & Rosenhahn, "Grouping Nodes with Known Value
Differences: A Lossless UCT-based Abstraction Algorithm" (ICLR 2026, arXiv 2510.25388,
OpenReview Zk0zZMSAYc; official C++ code ``codebro634/KVDA_UCT``).

Setting (the brief's small-scale reproduction): hand-built deterministic domains
(:mod:`optzoo.mcts.domains`: SysAdmin ring of 6, Game of Life 3×3, Sailing Wind 6×6; horizons
10 / 10 / 15), agents KVDA-UCT, OGA-UCT (ASAP, ε = 0), plain UCT (same dynamic-σ UCB) and a
random agent; K = 3; a grid of iterations × C.  One trial = (agent, domain, iterations, C, seed)
playing ``episodes`` episodes; episode e of seed s uses search seed 1000·s + e for every agent
(paired).  Metrics: mean undiscounted return, and the trees' compression (ground / abstract
Q-nodes, averaged over the decisions of the episodes).

Claims (thresholds fixed before any run):
(1) KVDA finds more abstractions: its mean Q compression ratio exceeds OGA's in every
    (domain, iterations, C) cell.
(2) KVDA ≥ OGA in return in most cells: among cells where the seed-mean returns differ, KVDA wins
    at least 2/3 (one-sided sign test p reported).
(3) KVDA ≥ UCT everywhere: in no cell is the paired (by seed) difference KVDA − UCT significantly
    negative (95 % CI entirely below 0), and the mean difference over cells is ≥ 0.
The (ε_a, ε_t)-OGA baseline, the Saving domain, the two-player games and the stochastic study are
not run.  Trials are pure Python on one CPU thread whatever --device says.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment.stats import fmt_values, mean_ci
from optzoo.mcts import DOMAINS, KVDAUCT, OGAUCT, UCT, RandomAgent, play_episode

SLUG = "kvda-uct"
AGENTS = {"kvda": KVDAUCT, "oga": OGAUCT, "uct": UCT}
RECENCY = 3


@dataclass(frozen=True)
class KVDAConfig(Preset):
    """Settings of the reproduction.

    Args:
        seeds: seeds per cell (paired across agents).
        episodes: episodes per trial.
        domains: domain names of :data:`optzoo.mcts.DOMAINS` (default sizes).
        iterations: search iterations per decision (grid).
        cs: exploration constants C (grid).
    """

    seeds: int = 3
    episodes: int = 20
    domains: tuple[str, ...] = ("sailing_wind",)
    iterations: tuple[int, ...] = (100,)
    cs: tuple[float, ...] = (1.0, 2.0, 4.0)

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


PRESETS = {
    "smoke": KVDAConfig(seeds=2, episodes=1, domains=("sailing_wind", "sysadmin"),
                        iterations=(20,), cs=(1.0, 2.0)),
    "quick": KVDAConfig(),
    "full": KVDAConfig(seeds=5, episodes=40,
                       domains=("sysadmin", "game_of_life", "sailing_wind"),
                       iterations=(50, 100, 200), cs=(1.0, 2.0, 4.0)),
}


def trials(cfg: KVDAConfig) -> list[Trial]:
    out = []
    for dom in cfg.domains:
        for s in range(cfg.seeds):
            out.append(Trial(method="random", problem=dom, seed=s,
                             params={"episodes": cfg.episodes, "iterations": 0, "c": 0.0}))
            for it in cfg.iterations:
                for c in cfg.cs:
                    for m in AGENTS:
                        out.append(Trial(method=m, problem=dom, seed=s,
                                         params={"episodes": cfg.episodes, "iterations": it,
                                                 "c": float(c)}))
    return out


def run_trial(trial: Trial, device: str) -> dict:
    env = DOMAINS[trial.problem]()
    p = trial.params
    rows = []
    for e in range(int(p["episodes"])):
        seed = 1000 * trial.seed + e
        if trial.method == "random":
            agent = RandomAgent(env, seed=seed)
        else:
            agent = AGENTS[trial.method](env, iterations=int(p["iterations"]), c=float(p["c"]),
                                         recency=RECENCY, seed=seed)
        rows.append(play_episode(agent, env))
    return {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}


# -- summary -----------------------------------------------------------------------------------

def _cells(results: list[Result]) -> dict[tuple, dict[str, dict[int, Result]]]:
    cells: dict[tuple, dict[str, dict[int, Result]]] = {}
    for r in results:
        if r.trial.method == "random":
            continue
        key = (r.trial.problem, int(r.trial.params["iterations"]), float(r.trial.params["c"]))
        cells.setdefault(key, {}).setdefault(r.trial.method, {})[r.trial.seed] = r
    return dict(sorted(cells.items()))


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
    return Summary(tables=tables, figures=[_plot(cells, outdir / "kvda_vs_oga.png")],
                   claims=_claims(cells), notes=_notes(cfg))


def _sign_p(wins: int, losses: int) -> float:
    n = wins + losses
    if n == 0:
        return 1.0
    return float(sum(math.comb(n, k) for k in range(wins, n + 1)) / 2 ** n)


def _claims(cells) -> list[Claim]:
    more = [(k, _mean(c, "kvda", "q_ratio"), _mean(c, "oga", "q_ratio")) for k, c in cells.items()]
    ev1 = "; ".join(f"{k[0]} it={k[1]} C={k[2]:g}: {a:.2f} vs {b:.2f}" for k, a, b in more)
    claims = [Claim(text="(1) KVDA-UCT detects more abstractions than OGA-UCT: its mean Q "
                         "compression (ground / abstract Q-nodes) exceeds OGA's in every cell.",
                    evidence=f"KVDA vs OGA ratio: {ev1}",
                    held=bool(more) and all(a > b for _, a, b in more))]
    diffs = {k: _mean(c, "kvda", "return") - _mean(c, "oga", "return") for k, c in cells.items()}
    wins = sum(d > 1e-9 for d in diffs.values())
    losses = sum(d < -1e-9 for d in diffs.values())
    claims.append(Claim(
        text="(2) KVDA-UCT's mean episode return is ≥ OGA-UCT's in most (domain, iterations, C) "
             "cells: at least 2/3 of the cells where they differ are KVDA wins.",
        evidence=f"wins {wins}, losses {losses}, ties {len(diffs) - wins - losses} of "
                 f"{len(diffs)} cells; one-sided sign test p = {_sign_p(wins, losses):.3g}; "
                 f"mean difference over cells {np.mean(list(diffs.values())):.3g}",
        held=wins + losses > 0 and wins >= 2 * (wins + losses) / 3))
    worse, means = [], []
    for k, c in cells.items():
        d = _paired(c, "kvda", "uct", "return")
        m, h = mean_ci(d)
        means.append(m)
        if math.isfinite(h) and m + h < 0:
            worse.append(k)
    claims.append(Claim(
        text="(3) KVDA-UCT ≥ plain UCT at equal iterations: no cell where the paired difference "
             "KVDA − UCT has its 95% CI below 0, and mean difference over cells ≥ 0.",
        evidence=f"significantly worse cells: {worse or 'none'}; mean paired difference over "
                 f"cells {np.mean(means):.3g} (per cell: "
                 + ", ".join(f"{m:.3g}" for m in means) + ")",
        held=not worse and float(np.mean(means)) >= 0))
    return claims


def _plot(cells, path: Path) -> Figure:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = list(cells)
    x = np.arange(len(keys))
    fig, ax = plt.subplots(1, 2, figsize=(max(8, 0.6 * len(keys) + 4), 3.8))
    for i, m in enumerate(AGENTS):
        stats = [mean_ci([float(r.metrics["return"]) for r in cells[k].get(m, {}).values()])
                 for k in keys]
        ax[0].errorbar(x + 0.1 * (i - 1), [s[0] for s in stats],
                       yerr=[s[1] if math.isfinite(s[1]) else 0.0 for s in stats],
                       fmt="o", label=m)
    for m in ("kvda", "oga"):
        ax[1].plot(x, [_mean(cells[k], m, "q_ratio") for k in keys], marker="o", label=m)
    labels = [f"{k[0][:6]}\n{k[1]},{k[2]:g}" for k in keys]
    for a, name in ((ax[0], "episode return"), (ax[1], "ground / abstract Q-nodes")):
        a.set_xticks(x, labels, fontsize=6)
        a.set_ylabel(name)
        a.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Figure(path=path, caption="Left: mean return (± 95% CI over seeds) per (domain, "
                  "iterations, C) cell; right: Q-node compression of KVDA vs OGA")


def _notes(cfg: KVDAConfig) -> list[str]:
    return [
        "Domains are small hand-built deterministic versions (our rules, see "
        "optzoo.mcts.domains), not the paper's determinised IPPC maps; Saving, the games and "
        "the stochastic study are not run, nor the (ε_a, ε_t)-OGA baseline.",
        f"Grid: domains {list(cfg.domains)}, iterations {list(cfg.iterations)}, C "
        f"{list(cfg.cs)}, K = {RECENCY}, {cfg.episodes} episodes × {cfg.seeds} seeds per cell "
        "(paper: iterations 100–1000, C 0.5–16, 2000 episodes per cell).",
        "Statistics frame: returns enter an abstract Q-node as G − b(q) with the known offset "
        "b(q) = R(q) + e(s'); equal in every read to the paper's representative frame.",
    ]


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Schmöcker, Dockhorn & Rosenhahn (ICLR 2026) at CPU scale: KVDA-UCT vs OGA-UCT (ASAP) "
        "vs plain UCT (dynamic-σ UCB, transposition DAG, K = 3) and a random agent on small "
        "deterministic SysAdmin / Game of Life / Sailing Wind domains over an iterations × C "
        "grid with paired seeds: episode return and the number of abstractions found. "
        "Pure Python, single-threaded; runs on the CPU whatever --device says."),
)
