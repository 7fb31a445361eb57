"""Reproduction ``rfthgs``: Zhu, Zhang & Cao, "Refining Hybrid Genetic Search for CVRP via
Reinforcement Learning-Finetuned LLM" (ICLR 2026, OpenReview aITKXFeivk, arXiv 2510.11121;
official code ``zaodushi/RFTHGS``).

Setting (the brief's small-scale reproduction, CPU and offline): the generator is the slot
policy over SREX-like Python crossovers (:mod:`optzoo.routing.crossover_dsl`), trained by the
RFTHGS loop (:func:`optzoo.routing.rfthgs.train`: tiered reward, operator cache, GRPO with
clip-higher). Every generated operator runs sandboxed inside PyVRP's genetic algorithm
(:func:`optzoo.routing.hgs.run_hgs`). Training instances: ``train_instances`` X-like instances
(Uchoa et al.'s generator, n drawn in ``train_n``), fixed across seeds like the paper's 30 X
instances; their references are best costs of a longer SREX run (cached); the baseline table is
one SREX run per instance at the training budget (seed 0). Held-out test: larger X-like
instances (``test_n``), each solved with HGS seeds 0..``test_seeds``−1 by SREX (PyVRP's C++
operator, as in the paper) and by the method's test operator, paired by instance and seed. As
in the paper's test time, ``test_operators`` operators are sampled from the trained generator
on the expert's prompt; the one with the lowest mean gap on the training instances is tested
(the paper samples 64; whether it reports their best or mean was not confirmed). For
``evolution`` the incumbent is tested.

Methods: ``rfthgs`` (the paper's loop), ablations ``no-cache`` (prompts always the expert),
``no-duplicate`` (no AST-duplicate tier), ``binary`` (binary reward), and in ``full`` the
``evolution`` baseline (EoH/ReEvo analogue: (1+1) search over the same space with the same
number of evaluations). The untrained generator's statistics are the first step of each run.

Claims (thresholds fixed before any run):
(a) in ``rfthgs``, the compile + runtime failure fraction falls (mean of the last 3 steps at
    least 0.2 below the first 3) and the mean reward of the last 3 steps is positive;
(b) the best trained operator's held-out mean gap is below SREX's: the paired (instance × seed)
    difference has a 95% CI entirely below 0, pooled over the training seeds;
(c) each ablation ends worse than ``rfthgs`` on the common scale: higher mean held-out gap of
    its best operator (one sub-claim per ablation).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment.stats import fmt_values, mean_ci, metric_values

SLUG = "rfthgs"
ABLATIONS = ("no-cache", "no-duplicate", "binary")
METHODS = ("rfthgs", *ABLATIONS, "evolution")


@dataclass(frozen=True)
class RFTHGSRepro(Preset):
    """Settings of the reproduction.

    Args:
        seeds: training seeds (prompts, instance draws, HGS seeds, sampling).
        methods: methods run (``rfthgs`` required).
        train_instances: number of generated training instances.
        train_n: (low, high) customers of training instances.
        test_instances: number of held-out instances.
        test_n: (low, high) customers of held-out instances.
        test_seeds: HGS seeds per held-out instance.
        iterations: HGS iterations per run (training and test; paper 800).
        reference_iterations: SREX iterations of the reference cost of generated instances.
        steps, prompts, group, instances_per_reward: GRPO loop sizes (paper: –, 16, 8, 5).
        lr: generator learning rate.
        test_operators: operators sampled from the trained generator at test time (paper 64);
            the best on the training instances is tested.
    """

    seeds: int = 3
    methods: tuple[str, ...] = ("rfthgs", "no-cache", "no-duplicate", "binary")
    train_instances: int = 6
    train_n: tuple[int, int] = (30, 50)
    test_instances: int = 3
    test_n: tuple[int, int] = (80, 100)
    test_seeds: int = 3
    iterations: int = 100
    reference_iterations: int = 2000
    steps: int = 10
    prompts: int = 3
    group: int = 8
    instances_per_reward: int = 3
    lr: float = 0.1
    test_operators: int = 8

    def validate(self) -> None:
        super().validate()
        bad = [m for m in self.methods if m not in METHODS]
        if bad or "rfthgs" not in self.methods:
            raise ConfigError(f"methods: expected a subset of {METHODS} containing 'rfthgs', "
                              f"got {self.methods}")
        for name in ("train_instances", "test_instances", "test_seeds", "iterations",
                     "reference_iterations", "steps", "prompts", "instances_per_reward",
                     "test_operators"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected >= 1, got {getattr(self, name)}")
        if self.group < 2:
            raise ConfigError(f"group: expected >= 2, got {self.group}")
        for name in ("train_n", "test_n"):
            lo, hi = getattr(self, name)
            if not 2 <= lo <= hi:
                raise ConfigError(f"{name}: expected 2 <= low <= high, got {(lo, hi)}")
        if self.instances_per_reward > self.train_instances:
            raise ConfigError("instances_per_reward: expected <= train_instances")
        if not self.lr > 0:
            raise ConfigError(f"lr: expected > 0, got {self.lr}")


PRESETS = {
    "smoke": RFTHGSRepro(seeds=2, methods=("rfthgs", "binary"), train_instances=2,
                         train_n=(10, 12), test_instances=1, test_n=(14, 14), test_seeds=1,
                         iterations=10, reference_iterations=50, steps=2, prompts=1, group=2,
                         instances_per_reward=1, test_operators=2),
    "quick": RFTHGSRepro(),
    # sized for about two hours on 2 CPU cores (25 trials of ~480 sandboxed HGS evaluations)
    "full": RFTHGSRepro(seeds=5, methods=METHODS, train_instances=10, train_n=(40, 80),
                        test_instances=4, test_n=(120, 200), iterations=150,
                        reference_iterations=5000, steps=15, prompts=4, group=8,
                        instances_per_reward=3),
}


def trials(cfg: RFTHGSRepro) -> list[Trial]:
    params = {k: v for k, v in cfg.to_dict().items() if k not in ("seeds", "methods")}
    return [Trial(method=m, problem="x-like-cvrp", seed=s, params=params)
            for m in cfg.methods for s in range(cfg.seeds)]


# -- one trial ---------------------------------------------------------------------------------

_CLASSES = [("random", "random"), ("central", "clustered"), ("eccentric", "random-clustered")]
_DEMANDS = ["unitary", "small-large-var", "large-small-var", "quadrant", "many-small-few-large"]


def instance_specs(count: int, n_range, base_seed: int, reference_iterations: int):
    """Fixed X-like instances: classes and demand types cycled, n spread over ``n_range``."""
    from optzoo.routing.instances import InstanceSpec

    lo, hi = n_range
    ns = np.linspace(lo, hi, count).round().astype(int) if count > 1 else [lo]
    specs = []
    for i, n in enumerate(ns):
        depot, customers = _CLASSES[i % len(_CLASSES)]
        specs.append(InstanceSpec.generated(
            int(n), depot=depot, customers=customers, demand=_DEMANDS[i % len(_DEMANDS)],
            seed=base_seed + i, reference_iterations=reference_iterations,
            reference_seeds=(0,)))
    return specs


def _srex_gaps(specs, refs, iterations: int, seeds) -> np.ndarray:
    """Gap of PyVRP's SREX (trusted, in process) per (instance, seed)."""
    return _srex_gaps_cached(tuple(specs), tuple(refs), int(iterations), tuple(seeds)).copy()


@functools.lru_cache(maxsize=8)
def _srex_gaps_cached(specs, refs, iterations: int, seeds) -> np.ndarray:
    # the baseline table and the held-out SREX runs are the same for every trial of a preset:
    # run them once per process
    from optzoo.routing.hgs import run_hgs

    out = np.empty((len(specs), len(seeds)))
    for i, spec in enumerate(specs):
        data = spec.load()
        for j, s in enumerate(seeds):
            res = run_hgs(data, None, iterations=iterations, seed=int(s), collect_stats=False)
            cost = res.cost() if res.best.is_feasible() else math.inf
            out[i, j] = 100.0 * (cost - refs[i]) / refs[i]
    return out


def _operator_gaps(source: str, specs, refs, iterations: int, seeds) -> np.ndarray:
    from optzoo.routing.rfthgs import SandboxEvaluator

    ev = SandboxEvaluator(specs, refs, iterations)
    out = np.empty((len(specs), len(seeds)))
    for j, s in enumerate(seeds):
        res = ev(source, list(range(len(specs))), int(s))
        out[:, j] = res["gaps"] if res["status"] == "ok" else math.inf
    return out


def run_trial(trial: Trial, device: str) -> dict:
    # pyvrp and a tiny torch table: CPU whatever --device says
    import torch

    from optzoo.routing.crossover_dsl import EXPERT, render
    from optzoo.routing.instances import reference_cost
    from optzoo.routing.rfthgs import (
        RewardConfig,
        RFTConfig,
        SandboxEvaluator,
        evolutionary_search,
        is_duplicate,
        train,
    )

    torch.set_num_threads(1)
    p = {k: tuple(v) if isinstance(v, list) else v for k, v in trial.params.items()}
    cfg = RFTHGSRepro(**p, seeds=1, methods=("rfthgs",))
    train_specs = instance_specs(cfg.train_instances, cfg.train_n, 100, cfg.reference_iterations)
    test_specs = instance_specs(cfg.test_instances, cfg.test_n, 900, cfg.reference_iterations)
    train_refs = [reference_cost(s) for s in train_specs]
    test_refs = [reference_cost(s) for s in test_specs]
    base = _srex_gaps(train_specs, train_refs, cfg.iterations, [0])[:, 0]
    evaluator = SandboxEvaluator(train_specs, train_refs, cfg.iterations)
    res: dict = {"base_gap_mean": float(base.mean())}
    if trial.method == "evolution":
        budget = cfg.steps * cfg.prompts * cfg.group
        out = evolutionary_search(evaluator, base, budget, seed=trial.seed,
                                  instances_per_reward=cfg.instances_per_reward)
        best_source = out["source"]
        res["evo_failures"] = out["failures"]
    else:
        reward = RewardConfig(binary=trial.method == "binary",
                              use_duplicate=trial.method != "no-duplicate")
        rcfg = RFTConfig(steps=cfg.steps, prompts=cfg.prompts, group=cfg.group,
                         instances_per_reward=cfg.instances_per_reward, lr=cfg.lr,
                         use_cache=trial.method != "no-cache", reward=reward)
        out = train(evaluator, base, rcfg, seed=trial.seed)
        for m in out["history"]:
            t = m["step"]
            for key in ("reward", "failure_frac", "duplicate_frac", "positive_frac"):
                res[f"{key}@{t}"] = m[key]
        h = out["history"]
        res["failure_first"] = float(np.mean([m["failure_frac"] for m in h[:3]]))
        res["failure_last"] = float(np.mean([m["failure_frac"] for m in h[-3:]]))
        res["reward_last"] = float(np.mean([m["reward"] for m in h[-3:]]))
        res["duplicate_last"] = float(np.mean([m["duplicate_frac"] for m in h[-3:]]))
        res["cache_size"] = len(out["cache"])
        res["evaluations"] = h[-1]["evaluations"]
        # test time as in the paper: operators sampled from the trained generator on the
        # expert's prompt (the paper samples 64); the one with the lowest mean gap on all
        # training instances (seed 0) goes to the held-out test, so selection never sees it
        expert = out["cache"].entries[0]
        draws = out["policy"].propose(expert, cfg.test_operators,
                                      torch.Generator().manual_seed(50_000 + trial.seed))
        all_train = list(range(len(train_specs)))
        scored = []
        for _, src in draws:
            r = evaluator(src, all_train, 0)
            if r["status"] == "ok" and np.all(np.isfinite(r["gaps"])):
                scored.append((float(np.mean(r["gaps"])), src))
        res["sampled_valid_frac"] = len(scored) / len(draws)
        best_source = min(scored)[1] if scored else render(EXPERT)
    seeds = list(range(cfg.test_seeds))
    srex = _srex_gaps(test_specs, test_refs, cfg.iterations, seeds)
    mine = _operator_gaps(best_source, test_specs, test_refs, cfg.iterations, seeds)
    finite = np.isfinite(mine)
    res["test_gap"] = float(mine[finite].mean()) if finite.any() else math.inf
    res["test_infeasible"] = int((~finite).sum())
    res["srex_test_gap"] = float(srex.mean())
    for k, d in enumerate((mine - srex).ravel()):
        res[f"diff_{k}"] = float(d) if math.isfinite(d) else None
    res["best_is_expert"] = bool(is_duplicate(best_source, render(EXPERT)))
    return res


# -- summary ---------------------------------------------------------------------------------

def _of(results, method):
    return [r for r in results if r.trial.method == method]


def summarize(results: list[Result], cfg: RFTHGSRepro, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    methods = [m for m in METHODS if _of(results, m)]
    rows = []
    for m in methods:
        rs = _of(results, m)
        rows.append([m] + [fmt_values(metric_values(rs, k), 3) for k in (
            "failure_first", "failure_last", "reward_last", "duplicate_last", "test_gap",
            "srex_test_gap")] + [len(rs)])
    t1 = Table(title="Training statistics (first / last 3 steps) and held-out gaps (%) of the "
                     "best operator vs SREX (mean ± 95% CI over seeds)",
               columns=["method", "failure first", "failure last", "reward last",
                        "duplicate last", "test gap", "SREX test gap", "n"], rows=rows)
    curve = [[t] + [fmt_values(metric_values(_of(results, m), f"{key}@{t}"), 2)
                    for m in methods if m != "evolution" for key in ("reward", "failure_frac")]
             for t in range(1, cfg.steps + 1)]
    t2 = Table(title="Per-step mean reward and failure fraction",
               columns=["step"] + [f"{m} {k}" for m in methods if m != "evolution"
                                   for k in ("reward", "failure")], rows=curve)
    claims = []
    rs = _of(results, "rfthgs")
    f0, f1 = metric_values(rs, "failure_first"), metric_values(rs, "failure_last")
    rl = metric_values(rs, "reward_last")
    held_a = bool(rs and np.mean(f0) - np.mean(f1) >= 0.2 and np.mean(rl) > 0)
    claims.append(Claim(
        text="(a) Failures (compile + runtime) fall first — last-3-step fraction ≥ 0.2 below "
             "the first 3 — and the mean reward of the last 3 steps is positive.",
        evidence=f"failure {np.mean(f0):.2f} → {np.mean(f1):.2f}; final reward "
                 f"{fmt_values(rl, 3)}", held=held_a))
    diffs = [d for r in rs for k, d in r.metrics.items()
             if k.startswith("diff_") and d is not None]
    inf = sum(int(r.metrics.get("test_infeasible", 0)) for r in rs)
    m, h = mean_ci(diffs) if len(diffs) > 1 else (math.nan, math.nan)
    claims.append(Claim(
        text="(b) The best trained operator beats SREX on held-out larger instances: paired "
             "gap difference (operator − SREX, instance × HGS seed, pooled over seeds) with a "
             "95% CI below 0.",
        evidence=f"difference {m:.3f} ± {h:.3f} percentage points over {len(diffs)} pairs "
                 f"({inf} runs without a feasible solution)",
        held=bool(inf == 0 and math.isfinite(m) and m + h < 0)))
    main_gap = metric_values(rs, "test_gap")
    for i, ab in enumerate(a for a in ABLATIONS if _of(results, a)):
        g = metric_values(_of(results, ab), "test_gap")
        held = bool(g and main_gap and np.mean(main_gap) < np.mean(g))
        claims.append(Claim(
            text=f"(c{i + 1}) The {ab} ablation ends worse: its best operator's held-out gap is "
                 "higher than rfthgs's.",
            evidence=f"{ab} {fmt_values(g, 3)} vs rfthgs {fmt_values(main_gap, 3)}",
            held=held))
    figures = [_plot(results, methods, cfg, outdir / "training.png")]
    return Summary(tables=[t1, t2], figures=figures, claims=claims, notes=_notes(cfg))


def _plot(results, methods, cfg, path: Path) -> Figure:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    steps = np.arange(1, cfg.steps + 1)
    for m in methods:
        if m == "evolution":
            continue
        rs = _of(results, m)
        for a, key in ((ax[0], "reward"), (ax[1], "failure_frac")):
            a.plot(steps, [np.mean(metric_values(rs, f"{key}@{t}")) for t in steps],
                   marker=".", label=m)
    ax[0].axhline(0, color="gray", lw=0.8)
    ax[0].set_ylabel("mean reward")
    ax[1].set_ylabel("compile + runtime failure fraction")
    for a in ax:
        a.set_xlabel("GRPO step")
        a.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Figure(path=path, caption="RFTHGS loop: mean reward and failure fraction per step "
                  "(seed means)")


def _notes(cfg: RFTHGSRepro) -> list[str]:
    return [
        "Generator: a slot policy over a grammar of SREX-like Python crossovers (with defect "
        "slots that yield syntax, runtime and duplicate failures), not an RL-fine-tuned LLM: "
        "no weights can be loaded offline. Operators are Python callables inside PyVRP's GA, "
        "not patched C++; SREX itself is PyVRP's C++ operator.",
        f"Instances: X-like (Uchoa et al. generator), training n ∈ {list(cfg.train_n)}, "
        f"held-out n ∈ {list(cfg.test_n)} (paper: 30 X instances n = 100–236; tests to 1000); "
        f"{cfg.iterations} HGS iterations (paper 800); references = best SREX cost over "
        f"{cfg.reference_iterations} iterations.",
        f"Loop: {cfg.steps} steps × {cfg.prompts} prompts × group {cfg.group}, "
        f"{cfg.instances_per_reward} instances per reward (paper: 16 prompts × 8, 5 "
        "instances); clip 0.2 / 0.28, no KL, no entropy; rewards memoised per (operator, "
        "instances, seed).",
        "Every generated operator runs in optzoo.routing.sandbox (AST allowlist, separate "
        "process with CPU / memory / wall limits); the parent re-scores the returned routes.",
    ]


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Zhu, Zhang & Cao (ICLR 2026) at CPU scale: the RFTHGS loop (multi-tier reward with an "
        "AST-duplicate tier, operator cache, GRPO with clip-higher) trains a generator of "
        "SREX-like Python crossovers that run sandboxed inside PyVRP's hybrid genetic search "
        "on X-like CVRP instances; held-out larger instances against PyVRP's SREX, paired by "
        "seed; ablations without cache, without the duplicate tier, with a binary reward."),
)
