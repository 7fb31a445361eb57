"""Reproduction ``rfthgs``: Zhu, Zhang & Cao, "Refining Hybrid Genetic Search for CVRP via
Reinforcement Learning-Finetuned LLM" (ICLR 2026, OpenReview aITKXFeivk, arXiv 2510.11121;
official code ``zaodushi/RFTHGS``).

Setting (the brief's small-scale reproduction, CPU and offline): the generator is the slot
policy over SREX-like Python crossovers (:mod:`optzoo.routing.crossover_dsl`), trained by the
RFTHGS loop (:func:`optzoo.routing.rfthgs.train`: tiered reward, operator cache, GRPO with
clip-higher). Every generated operator runs sandboxed inside PyVRP's genetic algorithm
(:func:`optzoo.routing.hgs.run_hgs`). The baseline table is one SREX run per training instance
at the training budget (seed 0), for every instance source. Held-out test: larger instances,
each solved with HGS seeds 0..``test_seeds``−1 by SREX (PyVRP's C++ operator, as in the paper)
and by the method's test operator, paired by instance and seed. As in the paper's test time,
``test_operators`` operators are sampled from the trained generator on the expert's prompt; the
one with the lowest mean gap on the training instances is tested (the paper samples 64; whether
it reports their best or mean was not confirmed). For ``evolution`` the incumbent is tested.

Instances (``instance_source``):

* ``"generated"`` (``smoke``, ``quick``): ``train_instances`` X-like instances (Uchoa et al.'s
  generator, n drawn in ``train_n``), fixed across seeds like the paper's 30 X instances; their
  references are best costs of a longer SREX run (cached); held-out: ``test_instances`` larger
  X-like instances (``test_n``).
* ``"x"`` (``full``): the real CVRPLIB X files under
  :func:`optzoo.routing.instances.data_root` (``$OPTZOO_DATA`` or ``../shared/data``; never
  downloaded). n counts customers (the file name's ``n`` minus the depot). Training: the
  ``train_instances`` files with n in ``train_n``, spread evenly by size when the folder holds
  more; held-out: ``test_instances`` files with n in ``test_n``, spread evenly by size (first
  and last included). Too few files in a range is a :class:`~optzoo.errors.ConfigError`: no
  instance is skipped silently. Gaps are measured against the best-known cost of each ``.sol``
  file, on distances rounded to the nearest integer (the VRPLIB convention of the BKS). The
  resolved names are part of every trial's params, so its key says which instances it used.

The ``full`` preset on the X set shipped in ``../shared/data/cvrp`` (100 instances, n = 100 to
1000): training = all 30 X instances with 100 <= n <= 240, i.e. X-n101-k25 ... X-n237-k14, the
paper's training set exactly; held-out = 5 of the 25 instances with 300 <= n <= 500, evenly
spread by size: X-n303-k21, X-n331-k15, X-n376-k94, X-n429-k61, X-n491-k59 (n = 302 to 490,
k = 15 to 94 routes); 5 instances × 3 HGS seeds give 15 pairs per training seed, 75 pooled.
The paper tests up to n = 1000. We stop at 500: one 800-iteration run
costs about n^1.4 (below), so at n = 1000 the C++ SREX run alone takes about 2 CPU-minutes and
a slower Python operator (e.g. greedy cheapest-insertion repair) comes near the sandbox's 360 s
per instance, where a timeout would count as "no feasible solution" in claim (b) for a reason
that is not solution quality; at n <= 490 the headroom is about 8x. The test set is a small part
of the cost either way: ``--set test_n=300,1000`` gives X-n303-k21, X-n393-k38, X-n536-k96,
X-n733-k159, X-n1001-k43 for about 0.25 CPU-hours more per trial. 800 HGS iterations in
training, selection and test (the paper's budget), 5 instances per reward (paper), 5 seeds.

Cost of ``full`` (measured here on one core, pyvrp 0.11.3, while the 2-core machine was shared,
so CPU seconds rather than wall time): one 800-iteration SREX run takes 8.2 s on X-n148-k46
(n = 147) and 33.3 s on X-n401-k29 (n = 400), about n^1.4; the expert program as a sandboxed
Python crossover took 7.3 s on X-n148-k46 (no slower than the C++ SREX run). Per trial,
counting every generated operator as a full run: training 15 steps × 4 prompts × 8 completions
× 5 instances = 2400 runs of mean n ≈ 168 (about 10 s each) ≈ 6.7 h; test-time selection 8
operators × 30 instances ≈ 0.7 h; baseline table and held-out test (operator and SREX, 5
instances × 3 seeds) ≈ 0.35 h: about 7.7 CPU-hours per trial, about 230 CPU-hours for the 30
trials (6 methods × 5 seeds; code-lm adds its pretraining once, about 0.4 CPU-hours at
4 000 steps, and its sampling and scoring of completions per step). Operators that fail to
compile cost nothing and runtime failures stop early, so the real cost is lower, mostly in the
first steps. The 30 trials are
independent: ``full`` is meant for a machine with many cores (``--jobs``) or a Ray cluster
(``--backend ray``); each worker needs its own copy of the X files (``OPTZOO_DATA`` or
``../shared/data``), and even with 30 cores a run takes about 8 hours.

Methods: ``rfthgs`` (the paper's loop with the grammar policy), ablations ``no-cache`` (prompts
always the expert), ``no-duplicate`` (no AST-duplicate tier), ``binary`` (binary reward), in
``full`` the ``evolution`` baseline (EoH/ReEvo analogue: (1+1) search over the same space with
the same number of evaluations), and ``code-lm``: the same loop (tiered reward through the jail,
operator cache, verl's per-token loss with clip-higher) with a code-writing LM as the generator
— :mod:`optzoo.routing.code_lm`'s small Llama, pretrained here on the operator corpus (cached,
shared by the trials), which writes whole operator files token by token from the paper's prompt
with the verified SREX port as the expert, sampled at the paper's T = 1, top-p 0.95, top-k 200.
The untrained generator's statistics are the first step of each run.

``local-lm`` (issue 25, "any local code model"): the same loop with a Hugging Face causal LM
from a local folder (a user's Qwen2.5-Coder, for example) as the generator, through
:class:`~optzoo.routing.lm_generator.LMGenerator` (loaded with ``local_files_only``: nothing
is downloaded).  No preset runs it by default, as no model can be shipped;
the paper-sized run is ``full`` with it added, on a GPU::

    optzoo reproduce rfthgs --preset full --device cuda \
        --set methods=rfthgs,code-lm,local-lm --set local_lm_path=/models/Qwen2.5-Coder-7B

Its lr (``local_lm_lr`` = 1e-6, the order verl's GRPO recipes use for 7B-14B actors) and
completion cap (``local_lm_max_new_tokens`` = 8192, the paper's) are its own fields, so adding
it changes no other method's trial keys.  Each trial fine-tunes its own copy in float32: a
bfloat16 weight keeps about 3 significant digits, so Adam's steps of ~1e-6 on weights of ~1e-2
would round away and the model would not move (verl keeps float32 master weights for the same
reason).  Weights, gradients and Adam's two moments take 16 bytes per parameter on the device:
a 7B model needs about 112 GB before activations, a 1.5B-3B model fits a 40-80 GB GPU.  It
gets the code LM's claims (g)-(i), the counterparts of (d)-(f).

Claims (thresholds fixed before any run), each decided by a test of
:mod:`optzoo.experiment.verdicts` with the training seed (one trial, one trained operator) as
the unit, paired by seed across methods:
(a) in ``rfthgs``, the compile + runtime failure fraction falls by more than
    ``min_failure_drop`` from the first 3 steps to the last 3 (``superior``, paired by seed) and
    the mean reward of the last 3 steps is above ``min_reward`` (``within``: the 95 % CI of
    the mean above it), ``all_of``;
(b) the best trained operator's held-out mean gap is below SREX's by more than ``min_gap_pp``
    (``superior``, direction less, on the per-seed mean gaps over instance × HGS seed, paired
    by training seed) and it finds a feasible solution in every held-out run (``bound_holds``),
    ``all_of``;
(c) each ablation ends worse than ``rfthgs``: its best operator's held-out mean gap is higher
    by more than ``min_gap_pp`` (``superior`` per ablation, paired by seed; one sub-claim per
    ablation).
(d) in ``code-lm``, RL raises the share of written operators that compile and run: the compile +
    runtime failure fraction falls by more than ``min_failure_drop`` from the first 3 steps to
    the last 3 (``superior``, paired by seed; the evidence gives the share at the first and the
    last step, before and after RL);
(e) the code LM's tested operator beats SREX on the held-out instances: claim (b)'s rule;
(f) at equal evaluations (the same steps × prompts × group), the code LM's tested operator has
    a held-out gap below the grammar policy's (``rfthgs``) by more than ``min_gap_pp``
    (``superior``, paired by seed).
(b), (c) are *inconclusive* (``not_acting``) when ``rfthgs``'s tested operator is the expert
program itself in every seed, and (e), (f) when ``code-lm``'s is the SREX port in every seed:
training then changed nothing that the test could measure. The report lists the operator each
``code-lm`` seed tested, with its source.

Verdict margins (preset fields, the same in every preset, fixed before any quick result was seen):

* ``min_failure_drop = 0.2``: the old rule's "at least 0.2 below the first 3 steps" (a fifth of
  the completions moving from failing to running is a clear learning signal).
* ``min_reward = 0.01``: the reward is the relative gap improvement over SREX, so a mean of 0.01
  is 1 % of SREX's gap: the smallest "positive" reward that is more than a tie.
* ``min_gap_pp = 0.05``: gaps are in percent of the reference cost; 0.05 percentage points is the
  second decimal the CVRP literature reports gaps to, rounded up: a smaller difference between
  two crossovers is no gain a CVRP reader would count.

Claims (d)-(f) (issue 25) use the same two margins, fixed before any ``code-lm`` trial ran.

Rules changed by issue 18 (old → new): (a) seed means compared with 0.2 and 0 (no CI) →
``superior`` with ``min_failure_drop`` and ``within`` above ``min_reward``; (b) a CI below 0 of
the instance × HGS-seed differences pooled over the training seeds (pseudo-replication: the
pairs of one training seed share one operator, so the pooled CI ignored the training-seed
spread, and any gain however small passed) → the per-training-seed mean difference with
``min_gap_pp``; (c) the seed mean of the ablation's gap above rfthgs's by any amount (no CI) →
``superior`` with ``min_gap_pp``.  Trial keys are unchanged (the margin fields are left out of
the trial parameters).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment.stats import fmt_values, mean_ci, metric_values
from optzoo.experiment.verdicts import (
    Verdict,
    all_of,
    bound_holds,
    by_seed,
    not_acting,
    superior,
    within,
)
from optzoo.report.figures import color, grid, line_panel, save

SLUG = "rfthgs"
ABLATIONS = ("no-cache", "no-duplicate", "binary")
# "code-lm": the same loop with the pretrained code-writing LM (optzoo.routing.code_lm) as the
# generator, writing whole operator files token by token from the SREX port's prompt
# "local-lm": the same loop with a user's local Hugging Face code model (never in a preset's
# default methods: there is no model to ship)
METHODS = ("rfthgs", *ABLATIONS, "evolution", "code-lm", "local-lm")
LM_METHODS = ("code-lm", "local-lm")
INSTANCE_SOURCES = ("generated", "x")
# Sandbox time of one instance in one call on X files: the paper's evaluation timeout (360 s,
# its 5 instances run in parallel, so each had 360 s). Our instances of a call run one after
# another in one sandbox, so a call gets 360 s per instance. The default 60 s of
# SandboxEvaluator (sized for the small generated instances) would time out at n >= 100 with
# 800 iterations and grade every operator as a runtime failure.
X_SECONDS_PER_INSTANCE = 360.0
_X_NAME = re.compile(r"^X-n(\d+)-k\d+$")
# verdict margins: preset fields, but not trial parameters (the trial keys must not change)
MARGINS = ("min_failure_drop", "min_reward", "min_gap_pp")
# the code LM's settings: parameters of code-lm trials only, so the other methods keep the trial
# keys they had before code-lm was added
LM_FIELDS = ("lm_steps", "lm_documents", "lm_lr", "lm_max_new_tokens")
# the local model's settings: parameters of local-lm trials only
LOCAL_LM_FIELDS = ("local_lm_path", "local_lm_lr", "local_lm_max_new_tokens")


@dataclass(frozen=True)
class RFTHGSRepro(Preset):
    """Settings of the reproduction.

    Args:
        seeds: training seeds (prompts, instance draws, HGS seeds, sampling).
        methods: methods run (``rfthgs`` required).
        instance_source: ``"generated"`` (X-like instances of Uchoa et al.'s generator) or
            ``"x"`` (the real CVRPLIB X files; see the module docstring).
        train_instances: number of training instances.
        train_n: (low, high) customers of training instances.
        test_instances: number of held-out instances.
        test_n: (low, high) customers of held-out instances.
        test_seeds: HGS seeds per held-out instance.
        iterations: HGS iterations per run (training and test; paper 800).
        reference_iterations: SREX iterations of the reference cost of generated instances
            (unused for X files, whose reference is the best-known cost).
        steps, prompts, group, instances_per_reward: GRPO loop sizes (paper: –, 16, 8, 5).
        lr: generator learning rate.
        test_operators: operators sampled from the trained generator at test time (paper 64);
            the best on the training instances is tested.
        lm_steps, lm_documents: pretraining steps and corpus documents of the code LM
            (``code-lm``; :class:`optzoo.routing.code_lm.CodeLMConfig`, its other fields at
            their defaults); the pretrained model is cached and shared by the trials.
        lm_lr: Adam learning rate of the code LM in the RL loop.
        lm_max_new_tokens: completion cap of the code LM (its corpus completions are at
            most about 600 tokens).
        local_lm_path: folder of a local Hugging Face causal LM (config, weights, tokenizer)
            for ``local-lm``; required when ``local-lm`` is in ``methods``.
        local_lm_lr: Adam learning rate of the local model in the RL loop.
        local_lm_max_new_tokens: completion cap of the local model (paper 8192).
        min_failure_drop, min_reward, min_gap_pp: verdict margins (module docstring,
            "Verdict margins"); not trial parameters.
    """

    seeds: int = 3
    methods: tuple[str, ...] = ("rfthgs", "no-cache", "no-duplicate", "binary", "code-lm")
    instance_source: str = "generated"
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
    lm_steps: int = 1500
    lm_documents: int = 600
    lm_lr: float = 1e-4
    lm_max_new_tokens: int = 768
    local_lm_path: str = ""
    local_lm_lr: float = 1e-6
    local_lm_max_new_tokens: int = 8192
    min_failure_drop: float = 0.2
    min_reward: float = 0.01
    min_gap_pp: float = 0.05

    def validate(self) -> None:
        super().validate()
        bad = [m for m in self.methods if m not in METHODS]
        if bad or "rfthgs" not in self.methods:
            raise ConfigError(f"methods: expected a subset of {METHODS} containing 'rfthgs', "
                              f"got {self.methods}")
        for name in ("train_instances", "test_instances", "test_seeds", "iterations",
                     "reference_iterations", "steps", "prompts", "instances_per_reward",
                     "test_operators", "lm_steps", "lm_documents", "lm_max_new_tokens",
                     "local_lm_max_new_tokens"):
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
        if self.instance_source not in INSTANCE_SOURCES:
            raise ConfigError(f"instance_source: expected one of {INSTANCE_SOURCES}, got "
                              f"{self.instance_source!r}")
        if self.instance_source == "x" and self.test_n[0] <= self.train_n[1]:
            # generated sets are disjoint by their seeds; X files only by their size ranges
            raise ConfigError(f"test_n: with instance_source='x' the held-out sizes must lie "
                              f"above train_n (held-out = larger, disjoint instances), got "
                              f"train_n={self.train_n}, test_n={self.test_n}")
        if "local-lm" in self.methods:
            folder = Path(self.local_lm_path).expanduser() if self.local_lm_path else None
            if folder is None or not (folder / "config.json").is_file():
                raise ConfigError(
                    "local_lm_path: method 'local-lm' needs the folder of a local Hugging Face "
                    "causal LM (config.json, weights and tokenizer; nothing is downloaded), "
                    f"e.g. --set local_lm_path=/models/Qwen2.5-Coder-7B; got "
                    f"{self.local_lm_path!r}"
                    + ("" if folder is None else " (no config.json there)"))
        for name in ("lr", "lm_lr", "local_lm_lr"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name}: expected > 0, got {getattr(self, name)}")
        for name in MARGINS:
            if not getattr(self, name) >= 0:
                raise ConfigError(f"{name}: expected >= 0, got {getattr(self, name)}")


PRESETS = {
    "smoke": RFTHGSRepro(seeds=2, methods=("rfthgs", "binary", "code-lm"), train_instances=2,
                         train_n=(10, 12), test_instances=1, test_n=(14, 14), test_seeds=1,
                         iterations=10, reference_iterations=50, steps=2, prompts=1, group=2,
                         instances_per_reward=1, test_operators=2, lm_steps=4,
                         lm_documents=8, lm_max_new_tokens=48),
    "quick": RFTHGSRepro(),
    # the brief's full setting on the real X files: the paper's 30 training instances, 5
    # held-out ones with n = 300-500, 800 iterations, 5 instances per reward, 5 seeds; about
    # 230 CPU-hours in all (module docstring): for many cores or a Ray cluster
    "full": RFTHGSRepro(seeds=5, methods=tuple(m for m in METHODS if m != "local-lm"),
                        instance_source="x", train_instances=30,
                        train_n=(100, 240), test_instances=5, test_n=(300, 500),
                        test_seeds=3, iterations=800, reference_iterations=5000, steps=15,
                        prompts=4, group=8, instances_per_reward=5, lm_steps=4000,
                        lm_documents=2000),
}


def _customers(name: str) -> int:
    # X-n<nodes>-k<routes>: the nodes include the depot
    return int(_X_NAME.match(name).group(1)) - 1


def _spread(names: list[str], n_range, count: int, field: str, folder) -> tuple[str, ...]:
    """``count`` of the X ``names`` with n in ``n_range``, evenly spread by size (ends included);
    all of them when exactly ``count`` qualify."""
    lo, hi = n_range
    inside = sorted((nm for nm in names if lo <= _customers(nm) <= hi),
                    key=lambda nm: (_customers(nm), nm))
    if len(inside) < count:
        raise ConfigError(
            f"{field}: expected {count} X instances with {lo} <= n <= {hi} customers in "
            f"{folder}, found {len(inside)}{': ' + ', '.join(inside) if inside else ''}; "
            "point OPTZOO_DATA at a complete copy of the X set (X-n*-k*.vrp with .sol)")
    # spacing >= 1 before rounding, so the rounded indices are distinct
    idx = np.linspace(0, len(inside) - 1, count).round().astype(int) if count > 1 else [0]
    return tuple(inside[int(i)] for i in idx)


def x_instance_names(cfg: RFTHGSRepro) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The (training, held-out) X instance names of an ``instance_source="x"`` preset.

    Raises:
        ConfigError: no X files where :func:`optzoo.routing.instances.data_root` looks, or
            fewer files in a size range than the preset needs.
    """
    from optzoo.routing.instances import data_root, list_x_instances

    try:
        folder = data_root()
        names = list_x_instances()
    except FileNotFoundError as exc:
        raise ConfigError(f"instance_source='x' needs the CVRPLIB X files: {exc}") from exc
    train = _spread(names, cfg.train_n, cfg.train_instances, "train_instances", folder)
    test = _spread(names, cfg.test_n, cfg.test_instances, "test_instances", folder)
    return train, test


def trials(cfg: RFTHGSRepro) -> list[Trial]:
    params = {k: v for k, v in cfg.to_dict().items()
              if k not in ("seeds", "methods", "instance_source", *MARGINS, *LM_FIELDS,
                           *LOCAL_LM_FIELDS)}
    extra = {"code-lm": {k: getattr(cfg, k) for k in LM_FIELDS},
             "local-lm": {k: getattr(cfg, k) for k in LOCAL_LM_FIELDS}}
    problem = "x-like-cvrp"
    if cfg.instance_source != "generated":
        # Only trials on another source carry it (and the resolved instance names, so a key
        # says which files it ran on): Trial.key hashes params, and the generated-instance
        # presets (quick, already run) must keep their keys and stored results.
        train, test = x_instance_names(cfg)
        params.update(instance_source=cfg.instance_source, train_names=list(train),
                      test_names=list(test))
        problem = "cvrplib-x"
    out = [Trial(method=m, problem=problem, seed=s, params={**params, **extra.get(m, {})})
           for m in cfg.methods for s in range(cfg.seeds)]
    # The first code-lm trial pretrains the cached code LM (about 8 minutes at quick) and the
    # other code-lm trials wait on its lock: run it first, so that the other workers run the
    # grammar trials meanwhile instead of idling (the pools take trials in this order).
    first_lm = next((t for t in out if t.method == "code-lm"), None)
    return out if first_lm is None else [first_lm, *(t for t in out if t is not first_lm)]


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


class _XEvaluator:
    """:class:`optzoo.routing.rfthgs.SandboxEvaluator` on X files, with sandbox limits of
    :data:`X_SECONDS_PER_INSTANCE` per instance of each call (training calls score
    ``instances_per_reward`` instances, test-time selection all training instances)."""

    def __init__(self, specs, refs, iterations: int):
        from optzoo.routing.rfthgs import SandboxEvaluator

        self._inner = SandboxEvaluator(specs, refs, iterations)

    def __call__(self, source: str, instances, seed: int) -> dict:
        from optzoo.routing.sandbox import Limits

        seconds = X_SECONDS_PER_INSTANCE * len(instances)
        self._inner.limits = Limits(wall_s=seconds, cpu_s=seconds)
        return self._inner(source, instances, seed)


def _evaluator(specs, refs, iterations: int, instance_source: str):
    from optzoo.routing.rfthgs import SandboxEvaluator

    if instance_source == "generated":
        return SandboxEvaluator(specs, refs, iterations)  # the limits quick ran with
    return _XEvaluator(specs, refs, iterations)


def _x_specs(names, field: str) -> list:
    """InstanceSpecs of X files, each checked to load here (a Ray worker may lack the files)."""
    from optzoo.routing.instances import InstanceSpec, load_x_instance

    specs = []
    for name in names:
        try:
            load_x_instance(name)
        except (FileNotFoundError, ValueError) as exc:
            raise ConfigError(f"{field}: X instance {name!r} is not readable on this worker: "
                              f"{exc}") from exc
        specs.append(InstanceSpec.x(name))
    return specs


def _check_sandbox_reads(specs) -> None:
    """The sandboxed child gets the data folder from the parent (it sees no environment
    variable) and, under root, runs as nobody, so the files must be readable by all. Check that
    it loads every instance (one HGS iteration each) before hours of training would grade every
    operator as a runtime failure."""
    from optzoo.routing.crossover_dsl import EXPERT, render
    from optzoo.routing.instances import data_root
    from optzoo.routing.sandbox import Limits, run_untrusted

    seconds = 60.0 + 10.0 * len(specs)
    try:
        out = run_untrusted(render(EXPERT), job="optzoo.routing.hgs:best_routes",
                            args=(list(specs), 1, 0, str(data_root())),
                            limits=Limits(wall_s=seconds, cpu_s=seconds))
    except (FileNotFoundError, ValueError) as exc:
        # the sandbox's parent loads the instances before the child starts
        raise ConfigError(f"instance_source='x': the sandboxed evaluator cannot load the X "
                          f"files: {exc}") from exc
    if not out.ok:
        raise ConfigError(
            "instance_source='x': the sandboxed evaluator cannot load the X files "
            f"({out.status}: {out.reason}). It reads them from {data_root()}; under root it "
            "runs as nobody, so the files and their folders must be readable by every user.")


def _operator_gaps(source: str, specs, refs, iterations: int, seeds,
                   instance_source: str = "generated") -> np.ndarray:
    ev = _evaluator(specs, refs, iterations, instance_source)
    out = np.empty((len(specs), len(seeds)))
    for j, s in enumerate(seeds):
        res = ev(source, list(range(len(specs))), int(s))
        out[:, j] = res["gaps"] if res["status"] == "ok" else math.inf
    return out


def run_trial(trial: Trial, device: str) -> dict:
    # pyvrp and small torch models: CPU whatever --device says, but for local-lm's model
    import torch

    from optzoo.routing.crossover_dsl import EXPERT, render
    from optzoo.routing.instances import reference_cost
    from optzoo.routing.rfthgs import (
        RewardConfig,
        RFTConfig,
        evolutionary_search,
        is_duplicate,
        train,
    )

    torch.set_num_threads(1)
    p = {k: tuple(v) if isinstance(v, list) else v for k, v in trial.params.items()}
    names = {k: p.pop(k, None) for k in ("train_names", "test_names")}
    cfg = RFTHGSRepro(**p, seeds=1, methods=("rfthgs",))
    if cfg.instance_source == "generated":
        train_specs = instance_specs(cfg.train_instances, cfg.train_n, 100,
                                     cfg.reference_iterations)
        test_specs = instance_specs(cfg.test_instances, cfg.test_n, 900,
                                    cfg.reference_iterations)
    else:
        if names["train_names"] is None or names["test_names"] is None:
            names["train_names"], names["test_names"] = x_instance_names(cfg)
        train_specs = _x_specs(names["train_names"], "train_names")
        test_specs = _x_specs(names["test_names"], "test_names")
        _check_sandbox_reads(train_specs + test_specs)
    # X files: the best-known cost of the .sol file; generated: a long SREX run (cached)
    train_refs = [reference_cost(s) for s in train_specs]
    test_refs = [reference_cost(s) for s in test_specs]
    base = _srex_gaps(train_specs, train_refs, cfg.iterations, [0])[:, 0]
    evaluator = _evaluator(train_specs, train_refs, cfg.iterations, cfg.instance_source)
    res: dict = {"base_gap_mean": float(base.mean())}
    expert_source = render(EXPERT)  # the grammar's SREX-like program: SlotPolicy's expert
    if trial.method == "evolution":
        budget = cfg.steps * cfg.prompts * cfg.group
        out = evolutionary_search(evaluator, base, budget, seed=trial.seed,
                                  instances_per_reward=cfg.instances_per_reward)
        best_source = out["source"]
        res["evo_failures"] = out["failures"]
    else:
        reward = RewardConfig(binary=trial.method == "binary",
                              use_duplicate=trial.method != "no-duplicate")
        lr = {"code-lm": cfg.lm_lr, "local-lm": cfg.local_lm_lr}.get(trial.method, cfg.lr)
        rcfg = RFTConfig(steps=cfg.steps, prompts=cfg.prompts, group=cfg.group,
                         instances_per_reward=cfg.instances_per_reward, lr=lr,
                         use_cache=trial.method != "no-cache", reward=reward)
        policy = (_code_lm_policy(cfg, res) if trial.method == "code-lm"
                  else _local_lm_policy(cfg, res, device) if trial.method == "local-lm"
                  else None)
        out = train(evaluator, base, rcfg, seed=trial.seed, policy=policy)
        for m in out["history"]:
            t = m["step"]
            for key in ("reward", "failure_frac", "compile_frac", "duplicate_frac",
                        "positive_frac"):
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
        expert = out["cache"].entries[0]  # the generator's expert (rfthgs.default_expert)
        expert_source = expert.source
        draws = out["policy"].propose(expert, cfg.test_operators,
                                      torch.Generator().manual_seed(50_000 + trial.seed))
        all_train = list(range(len(train_specs)))
        scored = []
        for _, src in draws:
            if src is None:  # an LM completion without a code block: nothing to run
                continue
            r = evaluator(src, all_train, 0)
            if r["status"] == "ok" and np.all(np.isfinite(r["gaps"])):
                scored.append((float(np.mean(r["gaps"])), src))
        res["sampled_valid_frac"] = len(scored) / len(draws)
        best_source = min(scored)[1] if scored else expert_source
    seeds = list(range(cfg.test_seeds))
    srex = _srex_gaps(test_specs, test_refs, cfg.iterations, seeds)
    mine = _operator_gaps(best_source, test_specs, test_refs, cfg.iterations, seeds,
                          cfg.instance_source)
    finite = np.isfinite(mine)
    res["test_gap"] = float(mine[finite].mean()) if finite.any() else math.inf
    res["test_infeasible"] = int((~finite).sum())
    res["srex_test_gap"] = float(srex.mean())
    for k, d in enumerate((mine - srex).ravel()):
        res[f"diff_{k}"] = float(d) if math.isfinite(d) else None
    res["best_is_expert"] = bool(is_duplicate(best_source, expert_source))
    if trial.method in LM_METHODS:
        res["best_source"] = best_source  # the report shows the operators that won
    return res


def _code_lm_policy(cfg: RFTHGSRepro, res: dict):
    """The pretrained code LM (cached: the first trial trains it, the others load it) as the
    loop's generator; its size and pretraining loss go into ``res``."""
    from optzoo.routing.code_lm import CodeLMConfig, code_generator, pretrain_code_lm

    lm = pretrain_code_lm(CodeLMConfig(steps=cfg.lm_steps, documents=cfg.lm_documents))
    res["lm_pretrain_loss"] = float(lm.metrics["final_loss"])
    res["lm_parameters"] = int(lm.metrics["num_parameters"])
    return code_generator(lm, max_new_tokens=cfg.lm_max_new_tokens)


def _local_lm_policy(cfg: RFTHGSRepro, res: dict, device: str):
    """The user's local Hugging Face causal LM (``local_lm_path``) as the loop's generator, in
    float32 (module docstring: bfloat16 weights would not move at lr 1e-6); its size goes into
    ``res``."""
    import torch

    from optzoo.routing.lm_generator import LMGenerator

    gen = LMGenerator.from_pretrained(
        str(Path(cfg.local_lm_path).expanduser()), device=device, dtype=torch.float32,
        max_new_tokens=cfg.local_lm_max_new_tokens)
    res["lm_parameters"] = int(sum(p.numel() for p in gen.model.parameters()))
    return gen


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
    claims = _claims(results, cfg)
    figures = [_plot(results, methods, cfg, outdir / "training.png")]
    return Summary(tables=[t1, t2], figures=figures, claims=claims,
                   notes=_notes(cfg, results))


def _is(method: str):
    return lambda r: r.trial.method == method


def _mean_diffs(results, method: str) -> dict[int, float]:
    """``{training seed: mean over instance × HGS seed of (operator − SREX) gap}`` over the
    runs where the operator found a feasible solution."""
    out = {}
    for r in results:
        if r.trial.method != method:
            continue
        d = [v for k, v in r.metrics.items() if k.startswith("diff_") and v is not None]
        if d:
            out[r.trial.seed] = float(np.mean(d))
    return out


def _finite_by_seed(results, key: str, method: str) -> dict[int, float]:
    """:func:`by_seed` without the seeds whose value is not finite (no feasible held-out run:
    the feasibility cell of claim (b) reports those)."""
    return {s: v for s, v in by_seed(results, key, _is(method)).items() if math.isfinite(v)}


def _no_op(verdict: Verdict, results, method: str = "rfthgs") -> Verdict:
    """``not_acting`` when ``method``'s tested operator is the expert in every seed."""
    flags = [bool(r.metrics.get("best_is_expert")) for r in _of(results, method)]
    if flags and all(flags):
        return not_acting(verdict, f"the tested {method} operator is the expert itself in "
                                   f"all {len(flags)} seeds: training changed nothing that the "
                                   "held-out test measures")
    return verdict


def _versus_srex(results, method: str, min_gap_pp: float) -> Verdict:
    """Claim (b)'s rule for ``method``: feasible in every held-out run, and its per-seed mean
    gap below SREX's by more than ``min_gap_pp`` (paired by training seed)."""
    rs = _of(results, method)
    if not rs:
        return not_acting(bound_holds([0.0], 0.0), f"no {method} trial is stored")
    inf = [int(r.metrics.get("test_infeasible", 0)) for r in rs]
    mine = _finite_by_seed(results, "test_gap", method)
    srex = _finite_by_seed(results, "srex_test_gap", method)
    cells = {"feasible in every held-out run": bound_holds(inf, 0.0)}
    common = sorted(set(mine) & set(srex))
    if common:
        cells[f"gap below SREX's by > {min_gap_pp:g} pp"] = superior(
            {s: mine[s] for s in common}, {s: srex[s] for s in common},
            min_effect=min_gap_pp, direction="less")
    return _no_op(all_of(cells), results, method)


def _gap_below(results, method: str, other: str, min_gap_pp: float) -> Verdict:
    """``method``'s held-out gap below ``other``'s by more than ``min_gap_pp`` (``superior``,
    paired by training seed); ``not_acting`` when ``method`` tested the expert in every seed."""
    mine = _finite_by_seed(results, "test_gap", method)
    theirs = _finite_by_seed(results, "test_gap", other)
    common = sorted(set(mine) & set(theirs))
    if not common:
        return not_acting(bound_holds([0.0], 0.0), f"no seed has both {method} and {other}")
    return _no_op(superior({s: mine[s] for s in common}, {s: theirs[s] for s in common},
                           min_effect=min_gap_pp, direction="less"), results, method)


def _claims(results, cfg: RFTHGSRepro) -> list[Claim]:
    claims = []
    rs = _of(results, "rfthgs")
    f0, f1 = metric_values(rs, "failure_first"), metric_values(rs, "failure_last")
    rl = metric_values(rs, "reward_last")
    fa, fb = by_seed(rs, "failure_first"), by_seed(rs, "failure_last")
    claims.append(Claim(
        text=f"(a) Failures (compile + runtime) fall first — the last-3-step fraction is more "
             f"than {cfg.min_failure_drop:g} below the first 3 steps' (paired by seed) — and "
             f"the mean reward of the last 3 steps is positive (above {cfg.min_reward:g}).",
        evidence=f"failure {np.mean(f0):.2f} → {np.mean(f1):.2f}; final reward "
                 f"{fmt_values(rl, 3)}" if rs else "no rfthgs trial",
        verdict=all_of({f"failure drop > {cfg.min_failure_drop:g}": superior(
            fa, fb, min_effect=cfg.min_failure_drop),
            f"final reward > {cfg.min_reward:g}": within(rl, cfg.min_reward, math.inf)})
        if rs else not_acting(bound_holds([0.0], 0.0), "no rfthgs trial is stored")))
    diffs = [d for r in rs for k, d in r.metrics.items()
             if k.startswith("diff_") and d is not None]
    inf = [int(r.metrics.get("test_infeasible", 0)) for r in rs]
    per_seed = _mean_diffs(results, "rfthgs")
    m, h = mean_ci(diffs) if len(diffs) > 1 else (math.nan, math.nan)
    v_b = _versus_srex(results, "rfthgs", cfg.min_gap_pp)
    claims.append(Claim(
        text=f"(b) The best trained operator beats SREX on held-out larger instances: its mean "
             f"gap is below SREX's by more than {cfg.min_gap_pp:g} percentage points (per "
             "training seed, over instance × HGS seed; paired by seed) and every held-out run "
             "finds a feasible solution.",
        evidence=f"per-seed mean difference (operator − SREX) "
                 f"{fmt_values(list(per_seed.values()), 3)} pp over {len(per_seed)} training "
                 f"seeds; pooled {m:.3f} ± {h:.3f} pp over {len(diffs)} pairs; {sum(inf)} runs "
                 f"without a feasible solution; tested operator = expert in "
                 f"{sum(bool(r.metrics.get('best_is_expert')) for r in rs)} of {len(rs)} seeds",
        verdict=v_b))
    main_gap = metric_values(rs, "test_gap")
    for i, ab in enumerate(a for a in ABLATIONS if _of(results, a)):
        g = metric_values(_of(results, ab), "test_gap")
        v = _gap_below(results, "rfthgs", ab, cfg.min_gap_pp)
        claims.append(Claim(
            text=f"(c{i + 1}) The {ab} ablation ends worse: its best operator's held-out gap is "
                 f"higher than rfthgs's by more than {cfg.min_gap_pp:g} percentage points "
                 "(paired by seed).",
            evidence=f"{ab} {fmt_values(g, 3)} vs rfthgs {fmt_values(main_gap, 3)}",
            verdict=v))
    if _of(results, "code-lm"):
        claims += _code_lm_claims(results, cfg)
    if _of(results, "local-lm"):
        claims += _code_lm_claims(results, cfg, "local-lm")
    return claims


# the letters and the name of the LM methods' claims: (d)-(f) the code LM, (g)-(i) a local model
_LM_CLAIMS = {"code-lm": ("def", "the code LM"), "local-lm": ("ghi", "the local model")}


def _code_lm_claims(results, cfg: RFTHGSRepro, method: str = "code-lm") -> list[Claim]:
    """(d)-(f): the loop with the code-writing LM as its generator (issue 25); (g)-(i): the
    same three claims for a user's local model (``local-lm``)."""
    (ld, le, lf), who = _LM_CLAIMS[method]
    rs = _of(results, method)
    steps = range(1, cfg.steps + 1)

    def share(t):  # operators that compile and run, per seed, at step t
        return [1.0 - v for v in metric_values(rs, f"failure_frac@{t}")]
    fa, fb = by_seed(rs, "failure_first"), by_seed(rs, "failure_last")
    first, last = share(steps[0]), share(steps[-1])
    d = Claim(
        text=f"({ld}) RL raises the share of {who}'s operators that compile and run: its "
             f"compile + runtime failure fraction falls by more than {cfg.min_failure_drop:g} "
             "from the first 3 steps to the last 3 (paired by seed).",
        evidence=f"compiling and running at step 1: {fmt_values(first, 2)}, at step "
                 f"{steps[-1]}: {fmt_values(last, 2)}; failure first 3 steps "
                 f"{fmt_values(list(fa.values()), 2)} → last 3 {fmt_values(list(fb.values()), 2)}",
        verdict=superior(fa, fb, min_effect=cfg.min_failure_drop))
    per_seed = _mean_diffs(results, method)
    inf = [int(r.metrics.get("test_infeasible", 0)) for r in rs]
    e = Claim(
        text=f"({le}) {who[0].upper() + who[1:]}'s best operator beats SREX on the held-out "
             f"instances: its mean gap is below SREX's by more than {cfg.min_gap_pp:g} "
             "percentage points (per training seed; paired by seed) and every held-out run "
             "finds a feasible solution.",
        evidence=f"per-seed mean difference (operator − SREX) "
                 f"{fmt_values(list(per_seed.values()), 3)} pp; {sum(inf)} runs without a "
                 f"feasible solution; tested operator = the SREX port in "
                 f"{sum(bool(r.metrics.get('best_is_expert')) for r in rs)} of {len(rs)} seeds",
        verdict=_versus_srex(results, method, cfg.min_gap_pp))
    f = Claim(
        text=f"({lf}) At equal evaluations ({cfg.steps} steps × {cfg.prompts} prompts × "
             f"{cfg.group} completions each) {who}'s best operator has a held-out gap "
             f"lower than the grammar policy's (rfthgs) by more than {cfg.min_gap_pp:g} "
             "percentage points (paired by seed).",
        evidence=f"{method} {fmt_values(metric_values(rs, 'test_gap'), 3)} vs rfthgs "
                 f"{fmt_values(metric_values(_of(results, 'rfthgs'), 'test_gap'), 3)}",
        verdict=_gap_below(results, method, "rfthgs", cfg.min_gap_pp))
    return [d, e, f]


def _plot(results, methods, cfg, path: Path) -> Figure:
    fig, axes = grid(2, panel=(5.0, 3.6))
    steps = range(1, cfg.steps + 1)
    shown = [m for m in methods if m != "evolution"]
    colors = {m: color(i) for i, m in enumerate(shown)}
    for ax, key, ylabel, ylog in (
            (axes[0], "reward", "mean reward", "auto"),
            (axes[1], "failure_frac", "compile + runtime failure fraction", False)):
        series = {m: {t: metric_values(_of(results, m), f"{key}@{t}") for t in steps}
                  for m in shown}
        line_panel(ax, series, xlabel="GRPO step", ylabel=ylabel, xlog=False, ylog=ylog,
                   colors=colors)
    axes[0].axhline(0, color="gray", lw=0.8)
    return save(fig, path, "RFTHGS loop: mean reward and failure fraction per step (mean ± "
                "95 % CI over seeds)")


def _notes(cfg: RFTHGSRepro, results: list[Result]) -> list[str]:
    if cfg.instance_source == "generated":
        instances = (
            f"Instances: X-like (Uchoa et al. generator), training n ∈ {list(cfg.train_n)}, "
            f"held-out n ∈ {list(cfg.test_n)} (paper: 30 X instances n = 100–236; tests to "
            f"1000); {cfg.iterations} HGS iterations (paper 800); references = best SREX cost "
            f"over {cfg.reference_iterations} iterations.")
    else:
        # the names the trials ran on (stored in their params), not a fresh look at the folder
        ran = [r.trial.params for r in results if "train_names" in r.trial.params]
        train, test = ((ran[0]["train_names"], ran[0]["test_names"]) if ran
                       else x_instance_names(cfg))
        instances = (
            f"Instances: real CVRPLIB X files; training: {len(train)} with n ∈ "
            f"{list(cfg.train_n)} ({train[0]} … {train[-1]}; paper: the 30 X instances "
            f"n = 100–236); held-out: {', '.join(test)} (n ∈ {list(cfg.test_n)}; the paper "
            f"tests up to n = 1000); {cfg.iterations} HGS iterations (paper 800); gaps against "
            "the best-known costs of the .sol files, distances rounded to integers (VRPLIB).")
    return [
        "Generators: (1) rfthgs and its ablations: a slot policy over a grammar of SREX-like "
        "Python crossovers (with defect slots that yield syntax, runtime and duplicate "
        "failures); (2) code-lm: a small Llama pretrained here "
        f"({cfg.lm_steps} steps on {cfg.lm_documents} corpus documents of "
        "optzoo.routing.code_corpus; "
        f"{_lm_size(results)}) that writes whole operator files token by token from the "
        "paper's prompt with the SREX port as the parent, fine-tuned by the same loop (Adam "
        f"lr {cfg.lm_lr:g}). Neither is the paper's 14B code LLM: no weights can be loaded "
        "offline. Operators are Python callables inside PyVRP's GA, not patched C++; SREX "
        "itself is PyVRP's C++ operator.",
        instances,
        f"Loop: {cfg.steps} steps × {cfg.prompts} prompts × group {cfg.group}, "
        f"{cfg.instances_per_reward} instances per reward (paper: 16 prompts × 8, 5 "
        "instances); clip 0.2 / 0.28, no KL, no entropy; rewards memoised per (operator, "
        "instances, seed).",
        "Every generated operator runs in optzoo.routing.sandbox (AST allowlist, separate "
        "process with CPU / memory / wall limits); the parent re-scores the returned routes.",
        *_local_lm_note(results),
        *_winning_sources(results),
    ]


def _lm_size(results) -> str:
    rs = [r for r in _of(results, "code-lm") if "lm_parameters" in r.metrics]
    if not rs:
        return "not run"
    return (f"{rs[0].metrics['lm_parameters']:,} parameters, final pretraining loss "
            f"{rs[0].metrics['lm_pretrain_loss']:.3f}")


def _local_lm_note(results) -> list[str]:
    rs = _of(results, "local-lm")
    if not rs:
        return []
    p = rs[0].trial.params
    return [f"Generator (3) local-lm: the local Hugging Face model at {p['local_lm_path']} "
            f"({rs[0].metrics.get('lm_parameters', 0):,} parameters), fine-tuned by the same "
            f"loop (Adam lr {p['local_lm_lr']:g}, completions up to "
            f"{p['local_lm_max_new_tokens']} tokens); claims (g)-(i)."]


def _winning_sources(results) -> list[str]:
    """The operator each code-lm / local-lm seed tested on the held-out instances, with its
    source."""
    out = []
    for r in sorted((r for m in LM_METHODS for r in _of(results, m)),
                    key=lambda r: (LM_METHODS.index(r.trial.method), r.trial.seed)):
        src = r.metrics.get("best_source")
        if not src:
            continue
        which = ("the SREX port itself (no sampled operator beat it on the training "
                 "instances)" if r.metrics.get("best_is_expert") else "written by the model")
        out.append(f"{r.trial.method} operator tested for training seed {r.trial.seed}, {which}: "
                   f"held-out gap {r.metrics.get('test_gap', math.nan):.3f} % (SREX "
                   f"{r.metrics.get('srex_test_gap', math.nan):.3f} %)\n\n```python\n"
                   f"{src.rstrip()}\n```")
    return out


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
