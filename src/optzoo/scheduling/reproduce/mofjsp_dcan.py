"""Reproduction ``mofjsp-dcan``: Smit, Wu, Troubil, Zhang & Nuijten, "Neural Multi-Objective
Combinatorial Optimization for Flexible Job Shop Scheduling Problems" (ICLR 2026, OpenReview
YAgOaYedLQ).  The official code (github.com/ai-for-decision-making-tue/
Neural_Multi-Objective_CO_for_FJSP) was not available; DAN's (wrqccc/FJSP-DRL) was read.

Setting (the brief's small-scale reproduction, CPU):

* Instances: SD2 (DAN's generator, ops per job = M, U{1..M} eligible machines, p ∈ U{1..99})
  with the brief's inferred costs and due dates (:func:`~optzoo.scheduling.sd2_instance`).
  Training instances are fresh draws; the test instances are fixed (seeds 10⁹ + …, never drawn
  for training): ``test_instances`` per SD2 size (``full``: 10×5, 15×10, 20×5 — the paper's
  sizes but 20×10), plus Brandimarte's mk01–mk05 in ``full`` (with
  costs and due dates attached by the same inferred formulas; skipped when the files are
  absent).
* Objectives: makespan–cost (all presets) and tardiness–cost (``full``), one model per pair.
* Methods: DCAN (:func:`~optzoo.scheduling.dcan.dcan`), WI-DAN (with the same λ-embedding
  input to its actor as DCAN's, issue 22) and the paper's Hyper baseline (DAN with a
  hypernetwork λ → actor parameters), each trained by decomposition PPO
  (:class:`~optzoo.scheduling.decomposition_ppo.DecompositionPPO`, DAN's hyperparameters,
  ``n_instances`` × ``n_preferences`` environments, λ ∼ Dirichlet(1) per episode) for
  ``updates`` updates on the training size, then evaluated greedily on ``preferences`` uniform
  preferences and by sampling ``samples`` solutions per preference on ``sample_preferences``
  uniform preferences.  The single-objective baseline ``first-objective-only`` (the issue's
  "a policy trained on makespan only"): DCAN's network (OUR CHOICE between DCAN's and
  WI-DAN's, so that it differs from DCAN only in its training preferences) trained by the
  same PPO for the same updates with λ fixed to e_1 = (1, 0) — makespan alone for
  makespan–cost, tardiness alone for tardiness–cost (:class:`FixedPreferencePPO`) — and
  decoded exactly like the others (greedy over the preference set, sampling); the λ it is fed
  at evaluation was never seen in training, so its front shows what a single-objective model
  gives.  It enters the tables, figures and a descriptive note, no claim (the brief states
  none).  NSGA-II and MOEA/D (pymoo, random keys decoded to active schedules) with
  a fixed budget of ``ea_evals`` evaluations; the λ-weighted dispatching rule on the same
  preferences as the greedy policies; CP-SAT weighted-sum fronts (``cpsat_preferences``
  solves of ``cpsat_time`` deterministic seconds each) on the ``cpsat_sizes`` instances.
* Metrics per (method, seed, test instance): HV gap to the reference front (the union of every
  method's front, every seed, plus CP-SAT where run — the non-dominated set), normalised by the
  ideal / nadir of that union with reference point 1.1 (:mod:`optzoo.scheduling.metrics`);
  IGD+; |PF| (unique non-dominated points); wall time per instance.  Means ± 95 % CI over
  seeds of the per-seed mean over the instances of a size.

Claims (thresholds fixed before any run; on the first objective pair, makespan–cost, greedy
decoding), each decided by a test of :mod:`optzoo.experiment.verdicts`:
(1) DCAN's HV gap is lower than WI-DAN's on ≥ 2/3 of the test instances: per instance a paired
(by seed) ``superior`` test with ``min_effect_gap_wi``, combined by ``at_least`` (⌈2m/3⌉ of the
m instances);
(2) on the training size DCAN's mean gap is within 5 points of NSGA-II's (``noninferior``, the
per-seed mean over the size's instances, margin ``gap_margin_nsga``) and its time per instance
is < 1 % of NSGA-II's (``ratio_bound_from_metrics`` on the interleaved timing trial); both
needed (``all_of``);
(3) the advantage gap(NSGA-II) − gap(DCAN) is larger on the last SD2 test size (``quick``
10×3, ``full`` 20×5 as in the brief; every size's advantage is reported) than on the training
size: per-seed advantages, paired ``superior`` with ``min_effect_advantage``;
(4) DCAN's greedy fronts have mean |PF| ≥ 3 (``within`` on the per-seed means over instances).

Verdict margins (fixed before results, the same in every preset):

* ``min_effect_gap_wi`` = 0.005 (half an HV-gap point): about half of the paper's DCAN − WI-DAN
  differences (0.8–1.4 points per size); a smaller difference is a tie.
* ``gap_margin_nsga`` = 0.05: the brief's "within a few points" of NSGA-II, i.e. 5 HV-gap points
  (the paper's 10×5 difference is 1.25 points).
* ``time_ratio`` = 0.01: the brief's "< 1 % of its wall time".
* ``min_effect_advantage`` = 0.01 (one HV-gap point): the paper's advantage grows by 5.6 points
  from 10×5 to 20×5; a growth below one point does not count.
* ``min_points`` = 3: the old threshold of claim 4 (a front of 11 preferences with fewer than 3
  distinct points is a collapse).
* ``timing_pairs`` = 5 interleaved (DCAN, NSGA-II) pairs, after one untimed warm-up call each.

Rules changed by the verdict conversion (issue 18), and why:

* (1) was "mean-over-seeds gap ≤ WI-DAN's on ≥ 2/3 of the instances": ties counted as wins and
  seed noise was ignored; now a per-instance superiority test with a minimal effect.
* (2) was "difference of the means ≤ 5 points and ratio of mean wall times < 1 %": the gap part
  ignored the seed spread, and the time part read the wall times that the neural and NSGA-II
  trials recorded while running concurrently (a named defect).  The time is now measured by a
  new trial (``timing``, the only new trial key) that times DCAN's greedy decoding of every
  preference and an NSGA-II run on the training size's test instances as interleaved pairs in
  one process.  It uses an untrained DCAN network: greedy decoding costs the same number of
  forward passes whatever the weights.  The old per-trial wall times stay in the table.
* (3) compared two means (a tie-break decided it); now paired by seed with a minimal effect.
* (4) was "mean |PF| ≥ 3 and larger than the λ-blind ablation's".  The λ-blind model's greedy
  front is one point by construction (it sees a constant λ, so every preference decodes the same
  schedule), so "more than the λ-blind model" held whenever DCAN's front had two points: a
  comparison that could not fail (a named defect).  Restated honestly: the claim is DCAN's
  |PF| ≥ 3 alone; the λ-blind |PF| is still shown in the evidence, not compared.
* Issue 22: (4) is now "|PF| ≥ 3 and more than WI-DAN's" (``superior`` paired by seed,
  ``min_effect_pf`` = 0.5 points: half a distinct point per front on average is a tie), and the
  λ-blind model is no longer run (Hyper takes its trials).  New claim (5): DCAN's gap lower than
  Hyper's on ≥ 2/3 of the instances, the test and margin of claim 1.  WI-DAN's actor now gets
  the same λ-embeddings as DCAN's (before, only DCAN's did: a confound of claim 1).

Read top to bottom: config and presets, instances, trial expansion, one trial, summary.
"""

from __future__ import annotations

import functools
import json
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment import verdicts as vd
from optzoo.experiment.stats import fmt_values
from optzoo.report.figures import color, curves_panel, grid, save
from optzoo.scheduling.cpsat import cpsat_front
from optzoo.scheduling.dcan import DCANPolicy
from optzoo.scheduling.decomposition_ppo import DecompositionPPO, PPOConfig, solve_front
from optzoo.scheduling.dispatching import weighted_rule_front
from optzoo.scheduling.evolutionary import moead, nsga2
from optzoo.scheduling.instance import (
    BRANDIMARTE,
    FJSPInstance,
    fjsp_data_dir,
    load_brandimarte,
    sd2_instance,
)
from optzoo.scheduling.metrics import (
    hv_gap,
    igd_plus,
    non_dominated,
    normalisation_bounds,
)
from optzoo.scheduling.preferences import uniform_preferences

SLUG = "mofjsp-dcan"
OBJECTIVE_SETS = {"makespan-cost": ("makespan", "cost"), "tardiness-cost": ("tardiness", "cost")}
FIRST_ONLY = "first-objective-only"
# the λ-blind ablation ("blind") is no longer run: its greedy front is one point by
# construction (issue 22); the paper's Hyper baseline takes its place
NEURAL = ("dcan", "wi-dan", "hyper", FIRST_ONLY)
# the network of each neural method (a DCANPolicy mode): the single-objective baseline is
# DCAN's network, so that it differs from DCAN only in the preferences it is trained on
NETWORK = {"dcan": "dcan", "wi-dan": "wi-dan", "blind": "blind", "hyper": "hyper",
           FIRST_ONLY: "dcan"}
EAS = ("nsga2", "moead")
TEST_SEED = 10**9  # training instances use seeds < 10⁹
NAMES = {"dcan": "DCAN", "wi-dan": "WI-DAN", "blind": "λ-blind DCAN", "hyper": "Hyper",
         FIRST_ONLY: "first-objective-only DCAN"}
LABELS = {
    **{(m, v): f"{NAMES[m]} ({v})" for m in (*NEURAL, "blind") for v in ("greedy", "sample")},
    ("nsga2", "front"): "NSGA-II", ("moead", "front"): "MOEA/D",
    ("weighted-rule", "front"): "weighted rule", ("cpsat", "front"): "CP-SAT",
}
TIMING = "timing"  # the interleaved DCAN vs NSGA-II timing trial (claim 2)
SHARE = 2 / 3      # claim 1: at least ⌈2m/3⌉ of the m test instances


# -- configuration ---------------------------------------------------------------------------

_SIZE = re.compile(r"^(\d+)x(\d+)$")


def _size(text: str) -> tuple[int, int]:
    m = _SIZE.match(text)
    if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
        raise ConfigError(f"size: expected 'JxM' with positive ints, got {text!r}")
    return int(m.group(1)), int(m.group(2))


@dataclass(frozen=True)
class DCANConfig(Preset):
    """Settings of the reproduction.

    Args:
        seeds: seeds (training runs of each neural method; EA runs).
        objective_sets: objective pairs, keys of ``OBJECTIVE_SETS`` (claims on the first).
        train_size: ``"JxM"`` of the training instances (the "training size").
        test_sizes: SD2 test sizes (must include ``train_size``; the last is the "bigger" of
            claim 3).
        test_instances: held-out instances per SD2 test size.
        brandimarte: Brandimarte instances added to the test set (skipped if absent).
        updates: PPO updates.
        n_instances, n_preferences: training instances per batch × environments per instance.
        reset_every: N_B, updates between new training instances.
        lr: Adam learning rate.
        preferences: uniform preferences of greedy decoding and of the weighted rule.
        sample_preferences: uniform preferences of sampling (0 disables sampling).
        samples: sampled solutions per preference.
        ea_evals, ea_pop: NSGA-II / MOEA/D evaluation budget and population.
        cpsat_sizes: SD2 test sizes given a CP-SAT reference front.
        cpsat_preferences: weighted sums solved per CP-SAT front.
        cpsat_time: CP-SAT deterministic time per weighted sum.
        log_every: updates per point of the training curve.
        min_effect_gap_wi: claim 1's smallest HV-gap difference that counts (fraction).
        gap_margin_nsga: claim 2's non-inferiority margin on the HV gap (fraction).
        time_ratio: claim 2's bound on DCAN's time / NSGA-II's time.
        min_effect_advantage: claim 3's smallest growth of the advantage that counts.
        min_points: claim 4's bound on the mean |PF|.
        min_effect_pf: claim 4's smallest |PF| difference DCAN − WI-DAN that counts.
        timing_pairs: interleaved (DCAN, NSGA-II) pairs of the timing trial.
    """

    seeds: int = 3
    objective_sets: tuple[str, ...] = ("makespan-cost",)
    train_size: str = "5x3"
    test_sizes: tuple[str, ...] = ("5x3", "10x3")
    test_instances: int = 5
    brandimarte: tuple[str, ...] = ()
    updates: int = 30
    n_instances: int = 4
    n_preferences: int = 4
    reset_every: int = 20
    lr: float = 3e-4
    preferences: int = 11
    sample_preferences: int = 11
    samples: int = 4
    ea_evals: int = 5000
    ea_pop: int = 100
    cpsat_sizes: tuple[str, ...] = ("5x3",)
    cpsat_preferences: int = 11
    cpsat_time: float = 0.2
    log_every: int = 5
    min_effect_gap_wi: float = 0.005
    gap_margin_nsga: float = 0.05
    time_ratio: float = 0.01
    min_effect_advantage: float = 0.01
    min_points: float = 3.0
    min_effect_pf: float = 0.5
    timing_pairs: int = 5

    def validate(self) -> None:
        super().validate()
        unknown = [o for o in self.objective_sets if o not in OBJECTIVE_SETS]
        if not self.objective_sets or unknown:
            raise ConfigError(f"objective_sets: expected names from {list(OBJECTIVE_SETS)}, got "
                              f"{self.objective_sets}")
        _size(self.train_size)
        for s in self.test_sizes + self.cpsat_sizes:
            _size(s)
        if self.train_size not in self.test_sizes:
            raise ConfigError(f"test_sizes: must include train_size {self.train_size!r}")
        if len(set(self.test_sizes)) < 2:
            raise ConfigError("test_sizes: expected the training size and a bigger one")
        bad = [s for s in self.cpsat_sizes if s not in self.test_sizes]
        if bad:
            raise ConfigError(f"cpsat_sizes: {bad} are not test sizes")
        bad = [b for b in self.brandimarte if b not in BRANDIMARTE]
        if bad:
            raise ConfigError(f"brandimarte: unknown {bad}, expected names from {BRANDIMARTE}")
        for name in ("test_instances", "updates", "n_instances", "n_preferences", "reset_every",
                     "ea_pop", "log_every"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected >= 1, got {getattr(self, name)}")
        for name in ("preferences", "cpsat_preferences"):
            if getattr(self, name) < 2:
                raise ConfigError(f"{name}: expected >= 2, got {getattr(self, name)}")
        if self.sample_preferences == 1 or self.sample_preferences < 0 or self.samples < 0:
            raise ConfigError("sample_preferences, samples: expected 0 (off) or >= 2, and >= 0")
        if self.ea_evals < self.ea_pop:
            raise ConfigError(f"ea_evals: expected >= ea_pop ({self.ea_pop}), got "
                              f"{self.ea_evals}")
        if not self.lr > 0 or not self.cpsat_time > 0:
            raise ConfigError("lr, cpsat_time: expected > 0")
        if self.timing_pairs < 2:
            raise ConfigError(f"timing_pairs: expected >= 2, got {self.timing_pairs}")
        if (self.min_effect_gap_wi < 0 or self.min_effect_advantage < 0
                or not self.gap_margin_nsga > 0 or not self.time_ratio > 0):
            raise ConfigError("min_effect_gap_wi, min_effect_advantage: expected >= 0; "
                              "gap_margin_nsga, time_ratio: expected > 0")


PRESETS = {
    "smoke": DCANConfig(seeds=1, train_size="3x2", test_sizes=("3x2", "4x2"), test_instances=1,
                        updates=2, n_instances=2, n_preferences=2, preferences=3,
                        sample_preferences=2, samples=2, ea_evals=60, ea_pop=20,
                        cpsat_sizes=("3x2",), cpsat_preferences=2, cpsat_time=0.05,
                        log_every=1),
    # the brief's quick setting: 5×3 training instances, 30 updates, 11 preferences
    "quick": DCANConfig(),
    # the brief's full setting: train 10×5, test 10×5 / 20×5 / mk01–mk05, both pairs, plus the
    # paper's 15×10 as a generalisation size (more machines than in training); 20×5 stays last
    # so claim 3 tests the brief's "the advantage grows on 20×5".  About 17 CPU-hours: 40
    # trainings (4 neural methods × 2 pairs × 5 seeds) of ≈ 12 min at ≈ 3.5 s an update, 40
    # evaluations of ≈ 12 min (per instance, greedy on 101 + sampling 10 on 11 preferences,
    # measured on one thread with an untrained policy: ≈ 5 s on 10×5, ≈ 15 s on 20×5, ≈ 39 s on
    # 15×10), EA runs of 20k evaluations per instance (≈ 5 s NSGA-II, ≈ 16 s MOEA/D on 15×10):
    # run it with many --jobs.  10 held-out instances per size (the brief: 20) and sampling on
    # 11 preferences keep it there.
    "full": DCANConfig(seeds=5, objective_sets=("makespan-cost", "tardiness-cost"),
                       train_size="10x5", test_sizes=("10x5", "15x10", "20x5"),
                       test_instances=10,
                       brandimarte=("mk01", "mk02", "mk03", "mk04", "mk05"), updates=200,
                       preferences=101, sample_preferences=11, samples=10, ea_evals=20_000,
                       cpsat_sizes=("10x5",), cpsat_preferences=21, cpsat_time=0.5,
                       log_every=10),
}


# -- instances -------------------------------------------------------------------------------

def _with_extras(inst: FJSPInstance, seed: int, kappa: float = 1.0,
                 tau: tuple[float, float] = (1.0, 1.5)) -> FJSPInstance:
    """Costs and due dates by the SD2 generator's inferred formulas (for Brandimarte files)."""
    p, elig = inst.processing, inst.eligible
    cost = np.where(elig, np.rint(kappa * (p.max() - p + 1.0)), 0.0)
    mean_p = p.sum(axis=1) / elig.sum(axis=1)
    work = np.bincount(inst.job_of_op, weights=mean_p, minlength=inst.n_jobs)
    rng = np.random.default_rng(seed)
    due = np.rint(rng.uniform(tau[0], tau[1], size=inst.n_jobs) * work)
    return FJSPInstance.from_arrays(inst.job_lengths, p, elig, cost=cost, due_dates=due,
                                    name=inst.name)


@functools.lru_cache(maxsize=256)
def held_out_instance(name: str) -> FJSPInstance:
    """A test instance by name: ``"JxM-i"`` (SD2, fixed seed) or ``"mk01"`` … (Brandimarte)."""
    if name in BRANDIMARTE:
        return _with_extras(load_brandimarte(name), TEST_SEED + BRANDIMARTE.index(name))
    size, _, idx = name.partition("-")
    j, m = _size(size)
    inst = sd2_instance(j, m, TEST_SEED + 10_000 * j + 100 * m + int(idx))
    return FJSPInstance.from_arrays(inst.job_lengths, inst.processing, inst.eligible,
                                    cost=inst.cost, due_dates=inst.due_dates, name=name)


def held_out_names(p) -> list[str]:
    """Names of the test instances of a trial's parameters (Brandimarte only when found)."""
    names = [f"{s}-{i:02d}" for s in p["test_sizes"] for i in range(int(p["test_instances"]))]
    if p.get("brandimarte") and fjsp_data_dir() is not None:
        names += list(p["brandimarte"])
    return names


def size_of(name: str) -> str:
    return "mk" if name in BRANDIMARTE else name.partition("-")[0]


# -- trials ----------------------------------------------------------------------------------

def trials(cfg: DCANConfig) -> list[Trial]:
    tests = {"test_sizes": cfg.test_sizes, "test_instances": cfg.test_instances,
             "brandimarte": cfg.brandimarte}
    neural = {**tests, "train_size": cfg.train_size, "updates": cfg.updates,
              "n_instances": cfg.n_instances, "n_preferences": cfg.n_preferences,
              "reset_every": cfg.reset_every, "lr": cfg.lr, "preferences": cfg.preferences,
              "sample_preferences": cfg.sample_preferences, "samples": cfg.samples,
              "log_every": cfg.log_every}
    ea = {**tests, "ea_evals": cfg.ea_evals, "ea_pop": cfg.ea_pop}
    out = []
    for obj in cfg.objective_sets:
        out += [Trial(m, obj, s, neural) for m in NEURAL for s in range(cfg.seeds)]
        out += [Trial(m, obj, s, ea) for m in EAS for s in range(cfg.seeds)]
        out.append(Trial("weighted-rule", obj, 0, {**tests, "preferences": cfg.preferences}))
        out += [Trial("cpsat", obj, 0, {"instance": f"{size}-{i:02d}",
                                        "cpsat_preferences": cfg.cpsat_preferences,
                                        "cpsat_time": cfg.cpsat_time})
                for size in cfg.cpsat_sizes for i in range(cfg.test_instances)]
    # claim 2's time: DCAN's greedy decoding vs NSGA-II, interleaved in one process (the margin
    # fields never enter a trial's params, so the other trials' keys are unchanged)
    out.append(Trial(TIMING, cfg.objective_sets[0], 0, {
        "train_size": cfg.train_size, "test_instances": cfg.test_instances,
        "preferences": cfg.preferences, "ea_evals": cfg.ea_evals, "ea_pop": cfg.ea_pop,
        "timing_pairs": cfg.timing_pairs}))
    return out


# -- one trial ---------------------------------------------------------------------------------

def _front_metrics(name: str, variant: str, front) -> dict:
    return {f"{name}__{variant}__front": json.dumps(front.points.tolist()),
            f"{name}__{variant}_wall_s": front.wall_time}


class FixedPreferencePPO(DecompositionPPO):
    """Decomposition PPO whose every episode uses the same preference λ (the single-objective
    baseline: λ = e_1 = (1, 0, …) trains on the first objective only).  Everything else —
    rollouts, vector critic, PPO epochs, instance resampling — is :class:`DecompositionPPO`'s,
    so the baseline gets the same training budget as DCAN.

    Args:
        preference: the fixed λ (``n_obj`` non-negative weights summing to 1).
        *args, **kwargs: those of :class:`DecompositionPPO`.
    """

    def __init__(self, *args, preference, **kwargs):
        super().__init__(*args, **kwargs)
        lam = np.asarray(preference, dtype=float)
        if (lam.shape != (len(self.objectives),) or not np.all(np.isfinite(lam))
                or np.any(lam < 0) or not math.isclose(float(lam.sum()), 1.0)):
            raise ValueError(f"preference: expected {len(self.objectives)} non-negative weights "
                             f"summing to 1, got {preference!r}")
        self.preference = lam

    def _preferences(self, n: int) -> np.ndarray:
        # replaces the per-episode λ ∼ Dirichlet draw of DecompositionPPO
        return np.tile(self.preference, (n, 1))


def first_objective(n_obj: int) -> np.ndarray:
    """λ = e_1: all weight on the first objective (makespan, or tardiness for tardiness–cost)."""
    return np.eye(n_obj)[0]


def _run_neural(trial: Trial, objs: tuple[str, ...], device: str) -> dict:
    p = trial.params
    j, m = _size(p["train_size"])
    torch.manual_seed(trial.seed)
    policy = DCANPolicy(len(objs), NETWORK[trial.method])

    def sampler(rng, n):
        return [sd2_instance(j, m, int(rng.integers(TEST_SEED))) for _ in range(n)]

    config = PPOConfig(n_instances=int(p["n_instances"]), n_preferences=int(p["n_preferences"]),
                       reset_every=int(p["reset_every"]), lr=float(p["lr"]))
    if trial.method == FIRST_ONLY:
        trainer = FixedPreferencePPO(policy, sampler, objs, config=config, seed=trial.seed,
                                     device=device, preference=first_objective(len(objs)))
    else:
        trainer = DecompositionPPO(policy, sampler, objs, config=config, seed=trial.seed,
                                   device=device)
    t0 = time.perf_counter()
    hist = trainer.train(int(p["updates"]))
    out: dict = {"train_wall_s": time.perf_counter() - t0}
    every = int(p["log_every"])
    for i in range(0, len(hist), every):
        block = hist[i:i + every]
        out[f"curve_{i // every:03d}"] = float(np.mean([h["weighted_objective"] for h in block]))
    out["final_weighted_objective"] = out[f"curve_{(len(hist) - 1) // every:03d}"]
    prefs = uniform_preferences(len(objs), int(p["preferences"]) - 1)
    n_sample = int(p["sample_preferences"])
    for k, name in enumerate(held_out_names(p)):
        inst = held_out_instance(name)
        out.update(_front_metrics(name, "greedy", solve_front(policy, inst, prefs, objs,
                                                              device=device)))
        if n_sample and int(p["samples"]):
            sp = uniform_preferences(len(objs), n_sample - 1)
            fr = solve_front(policy, inst, sp, objs, samples=int(p["samples"]),
                             seed=1000 * trial.seed + k, device=device)
            out.update(_front_metrics(name, "sample", fr))
    return out


def _run_timing(trial: Trial, objs: tuple[str, ...], device: str) -> dict:
    """DCAN's greedy decoding of every preference vs one NSGA-II run, per test instance of the
    training size, timed as interleaved pairs in this one process (pair i on instance i mod n
    for both).  An untrained network: greedy decoding makes the same forward passes whatever
    the weights, so its cost does not depend on training."""
    p = trial.params
    names = [f"{p['train_size']}-{i:02d}" for i in range(int(p["test_instances"]))]
    insts = [held_out_instance(n) for n in names]
    torch.manual_seed(trial.seed)
    policy = DCANPolicy(len(objs), NETWORK["dcan"])
    prefs = uniform_preferences(len(objs), int(p["preferences"]) - 1)
    calls = {"dcan": 0, "nsga2": 0}

    def dcan_call():
        inst = insts[calls["dcan"] % len(insts)]
        calls["dcan"] += 1
        solve_front(policy, inst, prefs, objs, device=device)

    def nsga_call():
        k = calls["nsga2"] % len(insts)
        calls["nsga2"] += 1
        nsga2(insts[k], objs, n_evals=int(p["ea_evals"]), pop_size=int(p["ea_pop"]),
              seed=1000 * trial.seed + k)

    timed = vd.interleaved(dcan_call, nsga_call, pairs=int(p["timing_pairs"]), warmup=1)
    return timed.metrics("dcan_vs_nsga2")


def run_trial(trial: Trial, device: str) -> dict:
    torch.set_num_threads(1)
    p = trial.params
    objs = OBJECTIVE_SETS[trial.problem]
    if trial.method in NEURAL:
        return _run_neural(trial, objs, device)
    if trial.method == TIMING:
        return _run_timing(trial, objs, device)
    out: dict = {}
    if trial.method == "cpsat":
        # CP-SAT is CPU only; one search worker and a deterministic time limit (reproducible)
        res = cpsat_front(held_out_instance(p["instance"]), uniform_preferences(
            len(objs), int(p["cpsat_preferences"]) - 1), objs,
            deterministic_time=float(p["cpsat_time"]))
        out.update(_front_metrics(p["instance"], "front", res.front))
        out["n_optimal"] = res.n_optimal
        out["n_solves"] = len(res.solutions)
        return out
    for k, name in enumerate(held_out_names(p)):
        inst = held_out_instance(name)
        if trial.method == "weighted-rule":
            prefs = uniform_preferences(len(objs), int(p["preferences"]) - 1)
            fr = weighted_rule_front(inst, prefs, objectives=objs)
        else:
            algo = nsga2 if trial.method == "nsga2" else moead
            fr = algo(inst, objs, n_evals=int(p["ea_evals"]), pop_size=int(p["ea_pop"]),
                      seed=1000 * trial.seed + k)
        out.update(_front_metrics(name, "front", fr))
    return out


# -- summary -----------------------------------------------------------------------------------

@dataclass
class _Eval:
    """Per (objective pair): fronts and wall times keyed by instance, then label, then seed."""

    fronts: dict
    walls: dict
    reference: dict
    bounds: dict


def _collect(results: list[Result], obj: str) -> _Eval:
    fronts: dict = {}
    walls: dict = {}
    for r in results:
        if r.trial.problem != obj:
            continue
        for key, value in r.metrics.items():
            if not key.endswith("__front"):
                continue
            name, variant, _ = key.split("__")
            label = LABELS[(r.trial.method, variant)]
            pts = np.array(json.loads(value), dtype=float).reshape(-1, len(OBJECTIVE_SETS[obj]))
            fronts.setdefault(name, {}).setdefault(label, {})[r.trial.seed] = pts
            walls.setdefault(name, {}).setdefault(label, {})[r.trial.seed] = \
                float(r.metrics[f"{name}__{variant}_wall_s"])
    reference, bounds = {}, {}
    for name, by_label in fronts.items():
        every = [f for seeds in by_label.values() for f in seeds.values() if f.size]
        reference[name] = non_dominated(np.vstack(every))
        bounds[name] = normalisation_bounds(*every)
    return _Eval(fronts, walls, reference, bounds)


def _per_instance(ev: _Eval, label: str, fn) -> dict[str, dict[int, float]]:
    """``fn(front, name)`` for every instance and seed of ``label``."""
    out: dict = {}
    for name, by_label in ev.fronts.items():
        for seed, front in by_label.get(label, {}).items():
            out.setdefault(name, {})[seed] = fn(front, name)
    return out


def _gap(ev: _Eval):
    def fn(front, name):
        ideal, nadir = ev.bounds[name]
        return hv_gap(front, ev.reference[name], ideal, nadir)
    return fn


def _igd(ev: _Eval):
    def fn(front, name):
        ideal, nadir = ev.bounds[name]
        return igd_plus(front, ev.reference[name], ideal, nadir)
    return fn


def _count(front, name) -> int:
    return len(front)


def _seed_means(per_inst: dict[str, dict[int, float]], names: list[str]) -> list[float]:
    """Per seed, the mean over ``names`` (seeds present for every name)."""
    seeds = sorted(set.intersection(*(set(per_inst[n]) for n in names))) if names else []
    return [float(np.mean([per_inst[n][s] for n in names])) for s in seeds]


def _order(name: str) -> tuple:
    """SD2 instances by size (J·M, J) then index, Brandimarte last."""
    if name in BRANDIMARTE:
        return (1, 0, 0, name)
    size, _, idx = name.partition("-")
    j, m = _size(size)
    return (0, j * m, j, idx)


def _sizes(ev: _Eval) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name in sorted(ev.fronts, key=_order):
        out.setdefault(size_of(name), []).append(name)
    return out


def _table(ev: _Eval, obj: str) -> Table:
    rows = []
    gap, igd = _gap(ev), _igd(ev)
    for size, names in _sizes(ev).items():
        for label in LABELS.values():
            have = [n for n in names if label in ev.fronts[n]]
            if len(have) != len(names):
                continue
            g = _seed_means(_per_instance(ev, label, gap), names)
            i = _seed_means(_per_instance(ev, label, igd), names)
            pf = _seed_means(_per_instance(ev, label, _count), names)
            wall = _seed_means({n: ev.walls[n][label] for n in names}, names)
            rows.append([size, label, fmt_values([100 * v for v in g]), fmt_values(i),
                         fmt_values(pf), fmt_values(wall), len(g)])
    return Table(title=f"{obj}: HV gap to the reference front (union of all methods and "
                       "CP-SAT; %), IGD+, |PF| and seconds per instance (mean ± 95% CI over "
                       "seeds of the mean over a size's instances; lower gap is better)",
                 columns=["size", "method", "HV gap %", "IGD+", "|PF|", "s / instance",
                          "seeds"], rows=rows)


def _cpsat_table(results: list[Result]) -> Table | None:
    rs = [r for r in results if r.trial.method == "cpsat"]
    if not rs:
        return None
    rows = []
    for obj in dict.fromkeys(r.trial.problem for r in rs):
        sub = [r for r in rs if r.trial.problem == obj]
        solved = sum(int(r.metrics["n_optimal"]) for r in sub)
        total = sum(int(r.metrics["n_solves"]) for r in sub)
        secs = [float(v) for r in sub for k, v in r.metrics.items() if k.endswith("_wall_s")]
        rows.append([obj, len(sub), f"{solved} / {total}", fmt_values(secs)])
    return Table(title="CP-SAT weighted-sum reference fronts: instances, subproblems proved "
                       "optimal within the deterministic time limit, seconds per instance",
                 columns=["objectives", "instances", "optimal / solves", "s / instance"],
                 rows=rows)


def summarize(results: list[Result], cfg: DCANConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    evals = {obj: _collect(results, obj) for obj in cfg.objective_sets}
    tables = [_table(ev, obj) for obj, ev in evals.items()]
    cp = _cpsat_table(results)
    if cp is not None:
        tables.append(cp)
    tables.append(_train_table(results, cfg))
    first = cfg.objective_sets[0]
    claims = _claims(evals[first], cfg, results)
    figures = [_plot_fronts(evals[first], first, outdir / "fronts.png"),
               _plot_curves(results, cfg, outdir / "training.png")]
    notes = _notes(cfg, results) + _first_only_notes(evals[first], first)
    return Summary(tables=tables, figures=figures, claims=claims, notes=notes)


def _first_only_notes(ev: _Eval, obj: str) -> list[str]:
    """A descriptive comparison (no claim: the brief states none) of the single-objective
    baseline with DCAN, on the instances where both ran."""
    out = []
    gap = _gap(ev)
    for variant in ("greedy", "sample"):
        one, dcan = LABELS[(FIRST_ONLY, variant)], LABELS[("dcan", variant)]
        names = sorted(n for n, by in ev.fronts.items() if one in by and dcan in by)
        if not names:
            continue
        g1, gd = (_seed_means(_per_instance(ev, lb, gap), names) for lb in (one, dcan))
        p1, pd = (_seed_means(_per_instance(ev, lb, _count), names) for lb in (one, dcan))
        out.append(f"{obj}, {variant} (descriptive, no claim): the policy trained on "
                   f"{OBJECTIVE_SETS[obj][0]} alone (λ = e_1, DCAN's network) has HV gap "
                   f"{fmt_values([100 * v for v in g1])} % and |PF| {fmt_values(p1)}; DCAN "
                   f"{fmt_values([100 * v for v in gd])} % and {fmt_values(pd)} "
                   f"({len(names)} instances, ± over seeds).")
    return out


def _train_name(m: str) -> str:
    # the single-objective baseline's training objective is its own λ = e_1, i.e. the
    # normalised first objective, not the Dirichlet-weighted sum of the others
    return f"{NAMES[m]} (λ = e_1)" if m == FIRST_ONLY else NAMES[m]


def _train_table(results: list[Result], cfg: DCANConfig) -> Table:
    rows = []
    for obj in cfg.objective_sets:
        for m in NEURAL:
            rs = [r for r in results if r.trial.method == m and r.trial.problem == obj]
            if not rs:
                continue
            first = [float(r.metrics["curve_000"]) for r in rs]
            last = [float(r.metrics["final_weighted_objective"]) for r in rs]
            secs = [float(r.metrics["train_wall_s"]) for r in rs]
            rows.append([obj, _train_name(m), fmt_values(first),
                         fmt_values(last), fmt_values(secs)])
    return Table(title=f"Training ({cfg.updates} updates on {cfg.train_size}): mean λ-weighted "
                       "normalised objective Σ λ_i f_i / H_i(s_0) of the sampled training "
                       f"episodes over the first and last {cfg.log_every} updates (λ ∼ "
                       "Dirichlet(1); λ = e_1, the first objective alone, for the "
                       "first-objective-only baseline), seconds",
                 columns=["objectives", "method", "first", "last", "train s"], rows=rows)


def _by_seed(per_inst: dict[str, dict[int, float]], names: list[str]) -> dict[int, float]:
    """``{seed: mean over names}`` for the seeds present at every name."""
    if not names:
        return {}
    seeds = sorted(set.intersection(*(set(per_inst.get(n, {})) for n in names)))
    return {s: float(np.mean([per_inst[n][s] for n in names])) for s in seeds}


def _timing_verdict(results: list[Result], obj: str, bound: float) -> tuple[vd.Verdict, str]:
    """Claim 2's time part from the interleaved timing trial (inconclusive when absent)."""
    rows = [r.metrics for r in results if r.trial.method == TIMING and r.trial.problem == obj]
    prefix = "dcan_vs_nsga2"
    if not rows:
        # a run recorded before the timing trial existed: nothing measured interleaved
        return vd.undecided(f"no interleaved timing trial in this run (bound ≤ {bound:g})"), \
            "no interleaved timing trial"
    v = vd.ratio_bound_from_metrics(rows, prefix, at_most=bound)
    m = rows[0]
    return v, (f"interleaved in one process ({int(m[f'{prefix}_pairs'])} pairs): DCAN "
               f"{float(m[f'{prefix}_a_s']):.3g} s vs NSGA-II {float(m[f'{prefix}_b_s']):.3g} s "
               f"(medians), ratio {v.effect:.2%} [{v.ci[0]:.2%}, {v.ci[1]:.2%}]")


def _claims(ev: _Eval, cfg: DCANConfig, results: list[Result] = ()) -> list[Claim]:
    gap = _gap(ev)
    sizes = _sizes(ev)
    names = sorted(ev.fronts, key=_order)
    dcan_g = _per_instance(ev, LABELS[("dcan", "greedy")], gap)
    wi_g = _per_instance(ev, LABELS[("wi-dan", "greedy")], gap)
    nsga_g = _per_instance(ev, LABELS[("nsga2", "front")], gap)

    # (1) per instance: DCAN's gap lower than WI-DAN's (paired by seed), in ⌈2m/3⌉ instances
    cells = {n: vd.superior(dcan_g[n], wi_g[n], min_effect=cfg.min_effect_gap_wi,
                            direction="less") for n in names}
    k = max(1, math.ceil(SHARE * len(cells) - 1e-9))
    v1 = vd.at_least(cells, k)
    claims = [Claim(
        text=f"(1) DCAN's HV gap is lower than WI-DAN's (by more than "
             f"{100 * cfg.min_effect_gap_wi:g} points, paired by seed) on ≥ 2/3 of the test "
             "instances (greedy; paper: DCAN beats WI-DAN everywhere).",
        evidence=f"DCAN better on {int(v1.effect)} of {len(cells)} instances ({k} needed); mean "
                 f"gap DCAN {fmt_values(_seed_means(dcan_g, names))}, WI-DAN "
                 f"{fmt_values(_seed_means(wi_g, names))} (fractions)",
        verdict=v1)]

    # (2) training size: gap non-inferior to NSGA-II's, and time < 1 % (interleaved timing)
    train = sizes[cfg.train_size]
    d_tr, n_tr = _by_seed(dcan_g, train), _by_seed(nsga_g, train)
    v_gap = vd.noninferior(d_tr, n_tr, margin=cfg.gap_margin_nsga, direction="less")
    v_time, time_ev = _timing_verdict(results, cfg.objective_sets[0], cfg.time_ratio)
    claims.append(Claim(
        text=f"(2) On the training size ({cfg.train_size}) DCAN's HV gap is within "
             f"{100 * cfg.gap_margin_nsga:g} points of NSGA-II's at < {cfg.time_ratio:.0%} of "
             "its time per instance (paper, 10×5: 14.55 % vs 13.30 %, seconds vs tens of "
             "minutes).",
        evidence=f"gap DCAN {fmt_values([100 * v for v in d_tr.values()])} %, NSGA-II "
                 f"{fmt_values([100 * v for v in n_tr.values()])} % (DCAN − NSGA-II "
                 f"{-100 * v_gap.effect:+.2f} points, 95% CI [{-100 * v_gap.ci[1]:+.2f}, "
                 f"{-100 * v_gap.ci[0]:+.2f}]; {v_gap.verdict}); time {time_ev} "
                 f"({cfg.ea_evals} evaluations; {v_time.verdict})",
        verdict=vd.all_of({"HV gap within the margin": v_gap,
                           "time ratio below the bound": v_time})))

    # (3) the advantage gap(NSGA-II) − gap(DCAN) grows from the training size to the last one
    big = [s for s in cfg.test_sizes if s != cfg.train_size][-1]
    adv = {}
    # every SD2 size is reported; the claim compares the training size with the last one
    for s in dict.fromkeys((cfg.train_size, *cfg.test_sizes)):
        ns, ds = _by_seed(nsga_g, sizes[s]), _by_seed(dcan_g, sizes[s])
        adv[s] = {seed: ns[seed] - ds[seed] for seed in ns if seed in ds}
    v3 = vd.superior(adv[big], adv[cfg.train_size], min_effect=cfg.min_effect_advantage)
    claims.append(Claim(
        text=f"(3) DCAN's advantage over NSGA-II (gap(NSGA-II) − gap(DCAN)) is larger on the "
             f"bigger size {big} than on the training size {cfg.train_size}, by more than "
             f"{100 * cfg.min_effect_advantage:g} point (paired by seed; paper: −1.25 points on "
             "10×5, +4.39 on 20×5).",
        evidence="advantage " + "; ".join(f"{s}: {100 * float(np.mean(list(a.values()))):+.2f} "
                                          "points" for s, a in adv.items())
                 + f"; growth {100 * v3.effect:+.2f} points, 95% CI [{100 * v3.ci[0]:+.2f}, "
                   f"{100 * v3.ci[1]:+.2f}]",
        verdict=v3))

    # (4) DCAN's greedy fronts have ≥ 3 distinct points and more than WI-DAN's (the λ-blind
    # front is one point by construction, so it is no comparison; issue 22)
    pf_d, pf_w = (_by_seed(_per_instance(ev, LABELS[(m, "greedy")], _count), names)
                  for m in ("dcan", "wi-dan"))
    v_pf = vd.within(list(pf_d.values()), cfg.min_points, math.inf, exact=False)
    v_more = (vd.superior(pf_d, pf_w, min_effect=cfg.min_effect_pf) if pf_w
              else vd.undecided("no WI-DAN fronts in these results"))
    claims.append(Claim(
        text=f"(4) DCAN's greedy fronts have many distinct points: mean |PF| ≥ "
             f"{cfg.min_points:g} over {cfg.preferences} preferences, and more than WI-DAN's "
             f"(by more than {cfg.min_effect_pf:g} points, paired by seed; paper: DCAN gives "
             "the largest Pareto sets).",
        evidence=f"|PF| DCAN {fmt_values(list(pf_d.values()))}, WI-DAN "
                 f"{fmt_values(list(pf_w.values()))} (mean over instances, ± over seeds)",
        verdict=vd.all_of({"|PF| at least the bound": v_pf, "|PF| above WI-DAN's": v_more})))

    # (5) the paper's Hyper baseline: DCAN's gap lower on ≥ 2/3 of the instances (as claim 1)
    hy_g = _per_instance(ev, LABELS[("hyper", "greedy")], gap)
    if hy_g:
        cells5 = {n: vd.superior(dcan_g[n], hy_g[n], min_effect=cfg.min_effect_gap_wi,
                                 direction="less") for n in names if n in hy_g}
        v5 = vd.at_least(cells5, max(1, math.ceil(SHARE * len(cells5) - 1e-9)))
        ev5 = (f"DCAN better on {int(v5.effect)} of {len(cells5)} instances; mean gap DCAN "
               f"{fmt_values(_seed_means(dcan_g, names))}, Hyper "
               f"{fmt_values(_seed_means(hy_g, names))} (fractions)")
    else:
        v5, ev5 = vd.undecided("no Hyper fronts in these results"), "no Hyper trials"
    claims.append(Claim(
        text=f"(5) DCAN's HV gap is lower than the hypernetwork baseline's (Hyper) by more than "
             f"{100 * cfg.min_effect_gap_wi:g} points, paired by seed, on ≥ 2/3 of the test "
             "instances (greedy; paper: 14.55 % vs 27.98 % on 10×5, lower on every size).",
        evidence=ev5, verdict=v5))
    return claims


def _plot_fronts(ev: _Eval, obj: str, path: Path) -> Figure:
    sizes = _sizes(ev)
    shown = [names[0] for names in sizes.values()]
    # one colour per method, dots for greedy decoding and crosses for sampling: every label
    # stays distinguishable without more colours than the default cycle
    methods = list(dict.fromkeys(k[0] for k in LABELS))
    style = {lb: (color(methods.index(m)), "x" if v == "sample" else ".")
             for (m, v), lb in LABELS.items()}
    fig, axes = grid(len(shown), panel=(5.0, 4.0))
    for ax, name in zip(axes, shown, strict=True):
        # a front is a set of objective vectors, not a mean over seeds: a scatter panel, which
        # figures.py does not provide, drawn on the grid's axes
        ref = ev.reference[name]
        ax.plot(ref[:, 0], ref[:, 1], "k-", lw=0.8, label="reference")
        for label, seeds in ev.fronts[name].items():
            f = seeds[min(seeds)]
            c, marker = style.get(label, ("0.3", "."))
            ax.plot(f[:, 0], f[:, 1], marker, ls="none", ms=5, color=c, label=label)
        ax.set_title(f"{name} (first seed)", fontsize=9)
        ax.set_xlabel(OBJECTIVE_SETS[obj][0])
        ax.set_ylabel(OBJECTIVE_SETS[obj][1])
        ax.grid(True, alpha=0.25, lw=0.5)
    axes[0].legend(fontsize=6)
    return save(fig, path, f"{obj}: fronts of every method (first seed) on the first test "
                "instance of each size, with the reference front (single runs: no interval)")


def _plot_curves(results: list[Result], cfg: DCANConfig, path: Path) -> Figure:
    fig, (ax,) = grid(1, panel=(6.0, 4.0))
    obj = cfg.objective_sets[0]
    curves, xs = {}, {}
    for m in NEURAL:
        rs = [r for r in results if r.trial.method == m and r.trial.problem == obj]
        if not rs:
            continue
        n = min(sum(k.startswith("curve_") for k in r.metrics) for r in rs)
        curves[_train_name(m)] = [[float(r.metrics[f"curve_{i:03d}"]) for i in range(n)]
                                  for r in rs]
        xs[_train_name(m)] = (np.arange(n) + 1) * cfg.log_every
    curves_panel(ax, curves, x=xs, xlabel="update", ylabel="λ-weighted normalised objective")
    return save(fig, path, f"Training on {cfg.train_size} ({obj}): mean λ-weighted "
                "normalised objective of the sampled episodes (mean ± 95 % CI over seeds)")


def _notes(cfg: DCANConfig, results: list[Result]) -> list[str]:
    notes = [
        f"Scale: train {cfg.train_size}, {cfg.updates} PPO updates of {cfg.n_instances} "
        f"instances × {cfg.n_preferences} preferences (paper: DAN's 1,000 updates of 20 "
        f"environments); test {', '.join(cfg.test_sizes)} × {cfg.test_instances} instances"
        + (f" + {', '.join(cfg.brandimarte)}" if cfg.brandimarte else "")
        + f"; {cfg.preferences} greedy preferences (paper: 101); sampling {cfg.samples} "
          f"solutions on {cfg.sample_preferences} preferences (paper: 10 on 101); "
          f"{cfg.seeds} seeds.",
        f"Baselines: NSGA-II and MOEA/D with {cfg.ea_evals} evaluations (population "
        f"{cfg.ea_pop}; the paper's budgets were not retrieved; its EAs ran 1,700–2,900 s on "
        "20×10); the λ-weighted dispatching rule; a single-objective policy (DCAN's network "
        "trained by the same PPO for the same updates with λ fixed to e_1: "
        f"{' / '.join(OBJECTIVE_SETS[o][0] for o in cfg.objective_sets)} alone), decoded like "
        "the others; the paper's hypernetwork baseline (Hyper) is not implemented.",
        "Reference front and normalisation per instance: the union of every method's front "
        f"(all seeds) plus CP-SAT weighted-sum fronts on {', '.join(cfg.cpsat_sizes)} "
        f"({cfg.cpsat_preferences} preferences, {cfg.cpsat_time:g} deterministic s each, one "
        "worker); the paper's reference is CP-SAT alone. Larger sizes use the union only "
        "(CP-SAT with a useful time limit per subproblem is too slow there on 2 CPU cores).",
        "Inferred (paper code not available): DCAN's preference-node initialisation and update, "
        "the machine–preference competition (mean of all c), reward scales, cost / due-date "
        "generation and DAN's hyperparameters — see the docstrings of optzoo.scheduling.dcan, "
        "decomposition_ppo and env.",
        "Wall times are per instance on one CPU thread: DCAN's covers all preferences "
        "(batched), NSGA-II's the whole run; the paper's DCAN ran on a GPU. The table's "
        "seconds come from trials that may have run concurrently (descriptive only); claim "
        "(2)'s time ratio comes from the timing trial, which times DCAN's greedy decoding and "
        f"NSGA-II as {cfg.timing_pairs} interleaved pairs in one process.",
    ]
    for obj in cfg.objective_sets:
        for m in NEURAL:
            rs = [r for r in results if r.trial.method == m and r.trial.problem == obj]
            first = [float(r.metrics["curve_000"]) for r in rs]
            last = [float(r.metrics["final_weighted_objective"]) for r in rs]
            if rs and np.mean(last) >= np.mean(first):
                notes.append(f"{obj}, {NAMES[m]}: the training "
                             f"objective did not decrease over {cfg.updates} updates (first "
                             f"{np.mean(first):.3g}, last {np.mean(last):.3g}): the neural "
                             "claims here test barely trained policies (paper: 1,000 updates).")
    if cfg.brandimarte and fjsp_data_dir() is None:
        notes.append("Brandimarte files not found ($OPTZOO_DATA, ../shared/data/fjsp): the mk "
                     "instances were skipped.")
    return notes


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Smit et al. (ICLR 2026) at CPU scale: DCAN (DAN with preference virtual nodes), WI-DAN, "
        "the Hyper baseline and a single-objective policy (DCAN trained on the first objective "
        "only) trained by decomposition PPO on SD2 flexible job shops with costs (makespan–cost; "
        "tardiness–cost in full), evaluated on held-out instances of the training size and "
        "bigger sizes (15×10, 20×5 and mk01–mk05 in full) against NSGA-II, MOEA/D, a "
        "λ-weighted dispatching rule and CP-SAT weighted-sum fronts: HV gap to the union "
        "reference front, |PF| and wall time. The policy runs on --device (cpu or cuda); "
        "environments, EAs and CP-SAT on the CPU."),
)
