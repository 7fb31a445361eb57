"""Reproduction ``offpolicy-grpo``: Mroueh, Dupuis, Belgodere, Nitsure, Rigotti, Greenewald,
Navratil, Ross & Rios, "Revisiting Group Relative Policy Optimization: Insights into On-Policy
and Off-Policy Training" (ICLR 2026 poster, OpenReview ``XXfOf22o3K``, arXiv 2505.22257; no
official code).

Setting (the brief's small-scale reproduction, CPU): a tiny Llama (transformers
``LlamaForCausalLM``, :class:`optzoo.llm.TinyLlama`, ≈ 1 M parameters, random init) is
pretrained per seed on addition demonstrations to ≈ 40 % held-out greedy accuracy
(:func:`optzoo.llm.pretrain`, cached, shared by every method of the seed), then trained by
:class:`optzoo.policy.trainer.OffPolicyGRPO` (Algorithm 1 of the paper: the sampler α is a
frozen copy of the policy re-synced every ``v`` training steps, whitened advantages from α's
group, clip window [max(π_k/α − ε, 0), π_k/α + ε] centred on the detached π_k of the start of
the step, ``i`` optimizer steps per sampled batch, zero-variance mask, k3-KL to a π_ref
refreshed every 50 steps) with a binary exact-match reward.  G = 8 completions for each of 8
prompts per step (one minibatch: the whole batch is one gradient step), ε = 0.2, β = 0.01,
Adam lr 1e-4, gradient-norm clip 1, temperature 1, variance floor 1e-4 in sqrt(σ² + ε),
per-token ratios.  Every method of a seed sees the same pretrained model, the same train /
held-out split and the same prompt sequence (common random numbers).

Methods are named ``v<v>-i<i>-mask`` / ``v<v>-i<i>-nomask`` (:func:`parse_method`):
(v=1, i=1) on-policy GRPO, (v>1, i=1) the paper's off-policy GRPO, (v=1, i>1) sample reuse
(Shao et al.).  ``theorem-1`` trials check Theorem 1 exactly on random discrete instances.

Budget accounting (per trial): T training steps (one sampled batch of 64 completions each);
optimizer steps = i·T; samples = 64·T; weight syncs = ⌈T / v⌉ (the sampler is synced at the
start of steps 0, v, 2v, …; on-policy counts one per step, as the trainer does).

Claims ("acc" = held-out greedy exact-match accuracy on the first ``eval_size`` held-out
prompts; ``on`` = the ``v1-i1-mask`` method; every comparison is paired by seed, since every
method of a seed starts from the same pretrained model; each claim is decided by a named test of
:mod:`optzoo.experiment.verdicts`, with the margins of "Verdict margins" below):

(1) for each off-policy method ``v<v>-i1-mask`` with v > 1, all of: (a) its gain over step 0
    (final acc after the same T optimizer steps as ``on`` minus step-0 acc) is non-inferior to
    on's gain, ``noninferior`` paired by seed with the fixed margin
    ``noninferiority_margin_acc``; (b) it learns: its final acc exceeds its own
    step-0 acc by more than ``min_effect_acc`` (``superior``); (c) its sync count is ⌈T / v⌉
    on every seed while on's is T (v× fewer; ``bound_holds``, exact).  When neither ``on`` nor
    the off-policy run moves acc by more than ``min_effect_acc`` (both changes' CIs inside
    ±``min_effect_acc``), RL does not act in this setup and the claim is *inconclusive*
    (``not_acting``);
(2) the zero-variance mask reduces run-to-run variation / collapses: over the (v, i) configs
    run both with and without the mask, all of: (a) the seed spread of Δ = final acc − step-0
    acc (the change, so that differences between the seeds' pretrained models do not count)
    is lower with the mask by more than ``min_spread_acc``: a Brown–Forsythe comparison, the
    per-seed absolute deviations |Δ − median over seeds of Δ| of each config, pooled over the
    configs, no-mask vs mask (``superior``, unpaired); (b) the number of collapsed runs with
    the mask is ≤ without (``bound_holds`` on the count difference, exact); a run *collapses*
    when its held-out acc at any evaluation after step 0 falls below half of its step-0 acc.
    Inconclusive (``not_acting``) when the mask cannot act: β = 0 or no prompt of the mask
    runs ever had a zero-variance group (then the mask multiplies nothing);
    (1s) the same for ``v<v>-i1-mask-seqsum``, the theorem's sequence-level ratios
    π(y|x)/α(y|x) instead of TRL's per-token ones (full preset);
    (2r) claim (2) for the renormalising mask ``v<v>-i<i>-renorm`` against ``nomask``: masked
    prompts leave the loss's normaliser too (TRL's bnpo / DAPO reading), so the kept prompts'
    gradient is scaled by all / kept and the mask acts even where β = 0;
(3) sample reuse (v=1, i>1, mask) is worse per unit of compute, compute = optimizer steps
    (gradient evaluations of one 64-completion batch): on's acc at T training steps exceeds
    the reuse run's acc after T/i training steps (T optimizer steps) by more than
    ``min_effect_acc`` (``superior``, paired); inconclusive (``not_acting``) when neither run
    moves acc from step 0 by more than ``min_effect_acc``;
(4) Theorem 1 holds exactly: on every one of the random instances of the ``theorem-1`` trials
    (one prompt, M ∈ {2..8} responses, rewards in {0, 1}, random α, π_k, π, variance floor
    ε ∈ [1e-4, 0.75] so that σ_ε ≤ 1), J(π) − J(π_k) ≥ L_α(π) − 2(1 − σ_ε)/σ_ε·TV(π, α) −
    2·TV(π_k, α) up to 1e-12 (:func:`optzoo.policy.offpolicy_grpo.improvement_bound`):
    ``bound_holds`` on every trial's smallest slack, ≥ −1e-12.

Verdict margins (fields of :class:`OffPolicyGRPORepro`, the same for every preset, fixed from
the paper's effect sizes before the verdicts were recomputed, never from the stored results):

* ``noninferiority_margin_acc`` = 0.03 — a loss of 3 accuracy points is the largest that still
  reads as "matches": it is below the paper's 5-point effects (GSM8K: on-policy 45 %, with the
  mask or off-policy 50 %), so a loss the paper would notice fails the claim;
* ``min_effect_acc`` = 0.02 — 2 accuracy points is the smallest change that counts as learning
  or as "worse per compute": below it a difference is within one binomial standard error of a
  300-prompt evaluation (≈ 2.8 points at 40 %);
* ``min_spread_acc`` = 0.01 — 1 accuracy point of seed spread is the smallest reduction that
  counts: the paper's seed stds are 0.003–0.03, so a smaller reduction would not show in them.

Changed rules (issue 18, "verdicts that are evidence"): claim (1) was "mean(off) ≥ mean(on) −
h(on), h the half-width of on's 95 % CI" — with three seeds h is wide, so an off-policy method
that learned nothing passed (the defect the issue names); it is now a non-inferiority test with
a fixed margin, AND a check that the method learns, with ``not_acting`` when RL moves nothing.
Claim (2) compared two seed stds and two counts as plain numbers (any lower std passed, however
small); the spread part is now a test with a minimal effect.  Claim (3) was "mean(reuse at T/i)
< mean(on) − h(on)" (a CI of on alone); it is now a paired superiority test with a minimal
effect.  Claim (4) is unchanged in substance (an exact count of violations).  No preset and no
trial changed.  A claim whose runs are absent (no seed shared with on-policy) is left out of the
claims and named in the report's notes (:class:`NotEvaluated`) instead of "not held".

Issue 22 ("Audit III"): claim (1) is now stated on the gains over step 0 (identical to the
final-accuracy comparison, since a seed's methods share their step-0 model, but the quantity
the claim is about); the paper's mask keeps the masked prompts in the normaliser, which at
this scale only drops their KL terms (claim (2) could not be shown by the mask's gradient), so
the renormalising reading runs beside it (claim (2r)); the sampler's log-probs can be re-scored
by a full forward of the sampler's weights (``OffPolicyGRPO(rescore_sampler=...)``, on by
default off CPU: on CPU in fp32 the KV-cache decode and the full forward agree to ~1e-7, so the
CPU presets keep the recorded ones).

The paper's 1.35× throughput claim is communication time of weight broadcasts on a
tensor-parallel multi-GPU server; a single-process CPU toy has no broadcast to save, so this
reproduction reports sync counts (and the measured training wall time, where v > 1 pays one
extra forward for π_k) instead of a speed-up.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment.core import NotEvaluated, split_claims
from optzoo.experiment.stats import fmt_values, metric_values
from optzoo.experiment.verdicts import (
    Verdict,
    all_of,
    bound_holds,
    by_seed,
    common_seeds,
    noninferior,
    not_acting,
    superior,
)
from optzoo.report.figures import grid, line_panel, save

SLUG = "offpolicy-grpo"
ON_POLICY = "v1-i1-mask"
THEOREM = "theorem-1"
COLLAPSE_FRACTION = 0.5  # claim (2): collapsed when acc < 0.5 × step-0 acc at some evaluation
THEOREM_TOL = 1e-12
_METHOD = re.compile(r"v([0-9]+)-i([0-9]+)-(mask|nomask|renorm)(-seqsum)?")
MASK_MODES = ("mask", "nomask", "renorm")
#: preset fields that only decide verdicts: they stay out of the trials' parameters (and keys)
VERDICT_FIELDS = ("noninferiority_margin_acc", "min_effect_acc", "min_spread_acc")


def _match(name: str) -> re.Match:
    m = _METHOD.fullmatch(name) if isinstance(name, str) else None
    if m is None or int(m.group(1)) < 1 or int(m.group(2)) < 1:
        raise ValueError(f"method: expected 'v<v>-i<i>-<mask|nomask|renorm>' (optionally "
                         f"followed by '-seqsum') with integers v, i >= 1, got {name!r}")
    return m


def parse_method(name: str) -> tuple[int, int, bool]:
    """``"v4-i1-mask"`` → ``(sync_period v, inner_steps i, mask_zero_variance)``; ``renorm``
    is a mask too (:func:`mask_mode` tells the two apart).

    Raises:
        ValueError: a name not of the form ``v<int ≥ 1>-i<int ≥ 1>-(mask|nomask|renorm)``
            with an optional ``-seqsum``.
    """
    m = _match(name)
    return int(m.group(1)), int(m.group(2)), m.group(3) != "nomask"


def mask_mode(name: str) -> str:
    """``"mask"`` (the paper's: masked prompts stay in the normaliser), ``"renorm"`` (they leave
    it) or ``"nomask"``."""
    return _match(name).group(3)


def ratio_level(name: str) -> str:
    """``"sequence_sum"`` for a ``-seqsum`` method (the theorem's π(y|x)/α(y|x)), else
    ``"token"``."""
    return "sequence_sum" if _match(name).group(4) else "token"


def method_name(v: int, i: int, mask: bool | str, level: str = "token") -> str:
    """Inverse of :func:`parse_method` (``mask``: a bool, or a :data:`MASK_MODES` name)."""
    mode = mask if isinstance(mask, str) else ("mask" if mask else "nomask")
    if mode not in MASK_MODES:
        raise ValueError(f"mask: expected a bool or one of {MASK_MODES}, got {mask!r}")
    return f"v{v}-i{i}-{mode}" + ("-seqsum" if level == "sequence_sum" else "")


@dataclass(frozen=True)
class OffPolicyGRPORepro(Preset):
    """Settings of the reproduction.

    Args:
        seeds: seeds (each: one pretrained model, one split, one run per method).
        methods: ``v<v>-i<i>-mask|nomask`` names; must contain ``v1-i1-mask`` (on-policy).
        digits: operand digit range (min, max) of the addition task.
        operands: number-of-operands range (min, max).
        hidden_size, intermediate_size, num_layers, num_heads: the tiny Llama (CPU).
        cuda_hidden_size, cuda_intermediate_size, cuda_num_layers, cuda_num_heads: the larger
            Llama used instead when the trial runs on ``cuda``.
        pretrain_steps: pretraining steps at most.
        pretrain_target: stop pretraining at this held-out accuracy (0: run all steps).
        pretrain_eval_size, pretrain_eval_every: pretraining's held-out evaluation.
        pretrain_batch: demonstrations per pretraining step.
        n_train, n_test: distinct training prompts and held-out prompts of the RL split.
        steps: T, training steps (sampled batches) per run.
        eval_every: training steps between held-out evaluations.
        eval_size: held-out prompts evaluated (greedy).
        group_size: G.
        prompts_per_step: prompts per step.
        lr: Adam learning rate.
        epsilon: clip half-width ε.
        beta: k3-KL coefficient.
        ref_refresh_period: steps between π_ref ← π.
        theorem_draws: random instances per ``theorem-1`` trial (0: no such trials).
        noninferiority_margin_acc: claim (1)'s non-inferiority margin (accuracy units).
        min_effect_acc: the smallest accuracy change that counts (learning, claim (3)).
        min_spread_acc: the smallest reduction of the seed spread that counts (claim (2)).
    """

    seeds: int = 3
    methods: tuple[str, ...] = ("v1-i1-mask", "v1-i1-nomask", "v1-i1-renorm", "v4-i1-mask",
                                "v10-i1-mask", "v1-i4-mask")
    digits: tuple[int, ...] = (2, 2)
    operands: tuple[int, ...] = (2, 2)
    hidden_size: int = 128
    intermediate_size: int = 512
    num_layers: int = 4
    num_heads: int = 4
    cuda_hidden_size: int = 512
    cuda_intermediate_size: int = 1376
    cuda_num_layers: int = 8
    cuda_num_heads: int = 8
    pretrain_steps: int = 3000
    pretrain_target: float = 0.4
    pretrain_eval_size: int = 200
    pretrain_eval_every: int = 50
    pretrain_batch: int = 64
    n_train: int = 2000
    n_test: int = 300
    steps: int = 60
    eval_every: int = 15
    eval_size: int = 300
    group_size: int = 8
    prompts_per_step: int = 8
    lr: float = 1e-4
    epsilon: float = 0.2
    beta: float = 0.01
    ref_refresh_period: int = 50
    theorem_draws: int = 5000
    noninferiority_margin_acc: float = 0.03
    min_effect_acc: float = 0.02
    min_spread_acc: float = 0.01

    def validate(self) -> None:
        super().validate()
        for name in ("hidden_size", "intermediate_size", "num_layers", "num_heads",
                     "cuda_hidden_size", "cuda_intermediate_size", "cuda_num_layers",
                     "cuda_num_heads", "pretrain_steps", "pretrain_eval_size",
                     "pretrain_eval_every", "pretrain_batch", "n_train", "n_test", "steps",
                     "eval_every", "eval_size", "prompts_per_step", "ref_refresh_period"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected an integer >= 1, got {getattr(self, name)}")
        if self.group_size < 2:
            raise ConfigError(f"group_size: expected >= 2 (a group needs a spread), got "
                              f"{self.group_size}")
        if self.theorem_draws < 0:
            raise ConfigError(f"theorem_draws: expected >= 0, got {self.theorem_draws}")
        for name, lo, hi in (("digits", 1, 18), ("operands", 2, 8)):
            r = getattr(self, name)
            if len(r) != 2 or not lo <= r[0] <= r[1] <= hi:
                raise ConfigError(f"{name}: expected (min, max) with {lo} <= min <= max <= {hi}, "
                                  f"got {r}")
        if self.hidden_size % self.num_heads or self.cuda_hidden_size % self.cuda_num_heads:
            raise ConfigError("hidden_size / cuda_hidden_size: expected multiples of num_heads / "
                              "cuda_num_heads")
        if not 0 <= self.pretrain_target <= 1:
            raise ConfigError(f"pretrain_target: expected in [0, 1], got {self.pretrain_target}")
        for name in VERDICT_FIELDS:
            v = getattr(self, name)
            if not math.isfinite(v) or v <= 0 or v >= 1:
                raise ConfigError(f"{name}: expected a number in (0, 1) (accuracy units), got "
                                  f"{v}")
        for name in ("lr", "epsilon", "beta"):
            v = getattr(self, name)
            strict = name == "lr"
            if not math.isfinite(v) or v < 0 or (strict and v == 0):
                raise ConfigError(f"{name}: expected a finite number {'>' if strict else '>='} 0, "
                                  f"got {v}")
        if self.eval_size > self.n_test:
            raise ConfigError(f"eval_size: expected <= n_test = {self.n_test}, got "
                              f"{self.eval_size}")
        if not self.methods or len(set(self.methods)) != len(self.methods):
            raise ConfigError(f"methods: expected distinct method names, got {self.methods}")
        for m in self.methods:
            try:
                v, i, _ = parse_method(m)
            except ValueError as err:
                raise ConfigError(f"methods: {err}") from None
            # claim (3) compares the reuse run after T/i training steps with on-policy at T:
            # that point must be one of the evaluations
            if i > 1 and (self.steps % i or (self.steps // i) % self.eval_every):
                raise ConfigError(f"steps, eval_every: method {m} needs steps divisible by "
                                  f"{i} and steps/{i} divisible by eval_every, got steps = "
                                  f"{self.steps}, eval_every = {self.eval_every}")
        if ON_POLICY not in self.methods:
            raise ConfigError(f"methods: expected the on-policy reference {ON_POLICY!r} among "
                              f"{self.methods}")


PRESETS = {
    # exercises every code path (off-policy lag, sample reuse, both mask settings, a π_ref
    # refresh, the theorem check); 1-digit addition so that 150 pretraining steps of a 12 k
    # parameter model (≈ 3 s) give groups with a reward spread
    "smoke": OffPolicyGRPORepro(
        seeds=2, methods=("v1-i1-mask", "v1-i1-nomask", "v1-i1-renorm", "v2-i1-mask",
                          "v2-i1-mask-seqsum", "v1-i2-mask"),
        digits=(1, 1), hidden_size=32, intermediate_size=64, num_layers=1, num_heads=2,
        pretrain_steps=150,
        pretrain_target=0.0, pretrain_eval_size=20, pretrain_eval_every=10, pretrain_batch=32,
        n_train=64, n_test=20, steps=4, eval_every=2, eval_size=20, prompts_per_step=4,
        ref_refresh_period=3, theorem_draws=200),
    # 2-digit, 2-operand addition (≈ 1 min of pretraining per seed on one core); six configs
    # that evaluate every claim, the mask both ways; T = 60 (steps/4 = 15 is an evaluation for
    # claim 3)
    "quick": OffPolicyGRPORepro(),
    # all eight configs of the brief, each also with the renormalising mask, and the two
    # off-policy ones with sequence-level ratios; 5 seeds × 300 steps; 2-digit sums of 2 or 3
    # operands
    "full": OffPolicyGRPORepro(
        seeds=5,
        methods=tuple(method_name(v, i, mk) for v, i in ((1, 1), (4, 1), (10, 1), (1, 4))
                      for mk in MASK_MODES)
        + tuple(method_name(v, 1, "mask", "sequence_sum") for v in (4, 10)),
        operands=(2, 3), pretrain_steps=6000, n_train=5000, n_test=500, steps=300,
        eval_every=25, eval_size=500, theorem_draws=20000),
}


def trials(cfg: OffPolicyGRPORepro) -> list[Trial]:
    # the verdict margins decide claims only: they are not part of a trial
    params = {k: v for k, v in cfg.to_dict().items()
              if k not in ("seeds", "methods", *VERDICT_FIELDS)}
    problem = _problem(cfg)
    out = [Trial(method=m, problem=problem, seed=s, params=params)
           for m in cfg.methods for s in range(cfg.seeds)]
    if cfg.theorem_draws:
        out += [Trial(method=THEOREM, problem="discrete", seed=s,
                      params={"theorem_draws": cfg.theorem_draws}) for s in range(cfg.seeds)]
    return out


def _problem(cfg: OffPolicyGRPORepro) -> str:
    d, o = cfg.digits, cfg.operands
    return (f"addition-d{d[0]}" + (f"-{d[1]}" if d[1] != d[0] else "")
            + f"-o{o[0]}" + (f"-{o[1]}" if o[1] != o[0] else ""))


def _config(params: dict) -> OffPolicyGRPORepro:
    known = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
    return OffPolicyGRPORepro(**known, methods=(ON_POLICY,), seeds=1)


# -- one trial ---------------------------------------------------------------------------------

def run_trial(trial: Trial, device: str) -> dict:
    import torch

    from optzoo.malloc import retain_freed_memory

    # one thread per trial: small matmuls lose to thread synchronisation, and trials run in
    # parallel workers; freed activations stay in the heap (fewer page faults per step)
    torch.set_num_threads(1)
    retain_freed_memory()
    if trial.method == THEOREM:
        return theorem_check(int(trial.params["theorem_draws"]), trial.seed)

    from optzoo.llm import Addition, PretrainConfig, TinyLlama, count_parameters, pretrain
    from optzoo.policy.trainer import OffPolicyGRPO, PolicyTrainer, TrainerConfig

    cfg = _config(dict(trial.params))
    v, i, mask = parse_method(trial.method)
    cuda = torch.device(device).type == "cuda"
    shape = TinyLlama(
        hidden_size=cfg.cuda_hidden_size if cuda else cfg.hidden_size,
        intermediate_size=cfg.cuda_intermediate_size if cuda else cfg.intermediate_size,
        num_layers=cfg.cuda_num_layers if cuda else cfg.num_layers,
        num_heads=cfg.cuda_num_heads if cuda else cfg.num_heads)
    task = Addition(digits=tuple(cfg.digits), operands=tuple(cfg.operands))
    lm = pretrain(PretrainConfig(
        task=task, model=shape, max_steps=cfg.pretrain_steps,
        target_accuracy=cfg.pretrain_target or None, eval_size=cfg.pretrain_eval_size,
        eval_every=cfg.pretrain_eval_every, batch_size=cfg.pretrain_batch, seed=trial.seed),
        device=device)
    train, test = task.split(cfg.n_train, cfg.n_test, seed=trial.seed)
    algo = OffPolicyGRPO(group_size=cfg.group_size, prompts_per_step=cfg.prompts_per_step,
                         sync_period=v, inner_steps=i, mask_zero_variance=mask,
                         renormalize_mask=mask_mode(trial.method) == "renorm",
                         importance_sampling_level=ratio_level(trial.method),
                         epsilon=cfg.epsilon, beta=cfg.beta,
                         ref_refresh_period=cfg.ref_refresh_period)
    trainer = PolicyTrainer(lm.model, lm.tokenizer, task, train, test, algo,
                            TrainerConfig(steps=cfg.steps, lr=cfg.lr, eval_every=cfg.eval_every,
                                          eval_size=cfg.eval_size, seed=trial.seed))
    history = trainer.fit()
    return _trial_metrics(history, cfg, i) | {
        "num_parameters": count_parameters(lm.model),
        "pretrain_accuracy": float(lm.metrics["accuracy"]),
        "pretrain_steps": int(lm.metrics["steps"]),
    }


def _trial_metrics(history: list[dict], cfg: OffPolicyGRPORepro, inner_steps: int) -> dict:
    """Flat metrics of one run's trainer history: curves as ``key@step`` at every evaluation
    (measured time as ``train@step_wall_s``), windowed means (masked fraction) and maxima
    (|log π_k/α|) of the per-step rows, totals."""
    steps = [r for r in history if r["step"] > 0]
    out: dict = {}
    for row in history:
        if "test_accuracy" not in row:
            continue
        s = int(row["step"])
        window = [r for r in steps if s - cfg.eval_every < r["step"] <= s]
        out[f"test_accuracy@{s}"] = float(row["test_accuracy"])
        out[f"syncs@{s}"] = int(row["syncs"])
        out[f"samples@{s}"] = int(row["samples"])
        out[f"optimizer_steps@{s}"] = s * inner_steps
        # measured time: the key must end in _wall_s (excluded from determinism checks)
        out[f"train@{s}_wall_s"] = float(row["wall_s"])
        if window:
            out[f"masked_frac@{s}"] = float(np.mean([r["degenerate_frac"] for r in window]))
            out[f"max_abs_log_ratio@{s}"] = float(max(r["max_abs_anchor_log_ratio"]
                                                       for r in window))
    last = history[-1]
    out.update({
        "initial_accuracy": float(history[0]["test_accuracy"]),
        "final_accuracy": float(last["test_accuracy"]),
        "steps": int(last["step"]),
        "optimizer_steps": int(last["step"]) * inner_steps,
        "syncs": int(last["syncs"]),
        "samples": int(last["samples"]),
        "tokens": int(sum(r["tokens"] for r in steps)),
        "train_wall_s": float(last["wall_s"]),
        "masked_frac": float(np.mean([r["degenerate_frac"] for r in steps])) if steps else 0.0,
        "max_abs_log_ratio": float(max((r["max_abs_anchor_log_ratio"] for r in steps),
                                       default=0.0)),
        "anchor_shift": float(np.mean([r["anchor_shift"] for r in steps])) if steps else 0.0,
        "clip_frac": float(np.mean([r["clip_ratio/region_mean"] for r in steps]))
        if steps else 0.0,
        "train_reward": float(np.mean([r["reward"] for r in steps])) if steps else 0.0,
    })
    return out


def theorem_check(draws: int, seed: int) -> dict:
    """Theorem 1 on ``draws`` random one-prompt instances (claim (4) of the module docstring).

    Each instance: M ∈ {2..8} responses with rewards in {0, 1} (at least one of each, else
    L_α = 0 and the check is trivial); α from a Dirichlet with a random concentration in
    [0.05, 5] (peaked to flat, so the Bernoulli weight (1 − σ_ε)/σ_ε ranges widely); π_k and π
    mixtures t·α + (1 − t)·Dirichlet with t uniform, so that both near-α (tight) and far
    instances occur; ε uniform in [1e-4, 0.75] (σ_ε² ≤ 0.25 + 0.75 = 1)."""
    from optzoo.policy.offpolicy_grpo import improvement_bound

    if draws < 1:
        raise ValueError(f"draws: expected >= 1, got {draws}")
    rng = np.random.default_rng([seed, 11])
    violations, min_slack, max_weight = 0, math.inf, 0.0
    for _ in range(draws):
        m = int(rng.integers(2, 9))
        r = rng.integers(0, 2, size=m).astype(float)
        r[rng.choice(m, size=2, replace=False)] = (0.0, 1.0)

        def dist(_m=m):
            return rng.dirichlet(np.full(_m, rng.uniform(0.05, 5.0)))

        alpha = np.clip(dist(), 1e-12, None)
        alpha /= alpha.sum()
        t_k, t = rng.uniform(size=2)
        pi_k = t_k * alpha + (1 - t_k) * dist()
        pi = t * alpha + (1 - t) * dist()
        eps = float(rng.uniform(1e-4, 0.75))
        gap, bound = improvement_bound(pi, pi_k, alpha, r, eps=eps)
        slack = gap - bound
        violations += int(slack < -THEOREM_TOL)
        min_slack = min(min_slack, slack)
        sigma = math.sqrt(float(alpha @ (r - alpha @ r) ** 2) + eps)
        max_weight = max(max_weight, (1 - sigma) / sigma)
    return {"theorem_draws": draws, "theorem_violations": violations,
            "theorem_min_slack": float(min_slack), "theorem_max_weight": float(max_weight)}


# -- summary ---------------------------------------------------------------------------------

def _vals(results: list[Result], method: str, key: str) -> list[float]:
    return metric_values([r for r in results if r.trial.method == method], key)


def _by_seed(results: list[Result], method: str, key: str) -> dict[int, float]:
    return {r.trial.seed: float(r.metrics[key]) for r in results
            if r.trial.method == method and r.metrics.get(key) is not None}


def _eval_steps(results: list[Result], method: str) -> list[int]:
    keys = set()
    for r in results:
        if r.trial.method == method:
            keys |= {int(k.split("@")[1]) for k in r.metrics if k.startswith("test_accuracy@")}
    return sorted(keys)


def _collapsed(result: Result) -> bool:
    m = result.metrics
    init = float(m["initial_accuracy"])
    later = [float(v) for k, v in m.items() if k.startswith("test_accuracy@")
             and int(k.split("@")[1]) > 0]
    return bool(later) and min(later) < COLLAPSE_FRACTION * init


def _std(values: list[float]) -> float:
    return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


def summarize(results: list[Result], cfg: OffPolicyGRPORepro, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    ms = [m for m in cfg.methods if any(r.trial.method == m for r in results)]
    tables = [_main_table(results, ms), _curve_table(results, ms)]
    claims, skipped = split_claims(
        _claims_offpolicy(results, cfg, ms) + [_claim_mask(results, ms, cfg)]
        + ([_claim_mask(results, ms, cfg, "renorm")]
           if any(mask_mode(m) == "renorm" for m in ms) else [])
        + _claims_reuse(results, ms, cfg) + _claim_theorem(results))
    figures = [_plot_accuracy(results, ms, outdir / "accuracy.png"),
               _plot_diagnostics(results, ms, outdir / "diagnostics.png")]
    return Summary(tables=tables, figures=figures, claims=claims,
                   notes=_notes(cfg, results) + skipped)


def _main_table(results, ms) -> Table:
    rows = []
    for m in ms:
        v, i, mask = parse_method(m)
        rs = [r for r in results if r.trial.method == m]
        delta = [r.metrics["final_accuracy"] - r.metrics["initial_accuracy"] for r in rs]
        rows.append([
            m, v, i, mask_mode(m), ratio_level(m),
            fmt_values(_vals(results, m, "initial_accuracy"), 3),
            fmt_values(_vals(results, m, "final_accuracy"), 3),
            f"{_std(delta):.3f}", f"{sum(_collapsed(r) for r in rs)}/{len(rs)}",
            fmt_values(_vals(results, m, "optimizer_steps"), 4),
            fmt_values(_vals(results, m, "syncs"), 4),
            fmt_values(_vals(results, m, "samples"), 5),
            fmt_values(_vals(results, m, "train_wall_s"), 3),
            fmt_values(_vals(results, m, "masked_frac"), 2),
            fmt_values(_vals(results, m, "max_abs_log_ratio"), 2),
            fmt_values(_vals(results, m, "clip_frac"), 2)])
    return Table(
        title="Held-out greedy accuracy at step 0 and after T training steps (mean ± 95% CI "
              "over seeds), seed std of the change, collapsed runs, budgets, training wall time "
              "(s, one CPU thread), fraction of zero-variance (masked) prompts, max |log π_k/α| "
              "over the run, fraction of tokens where the clip binds",
        columns=["method", "v", "i", "mask", "ratio", "acc step 0", "acc final", "std Δacc",
                 "collapsed", "optimizer steps", "syncs", "samples", "train s",
                 "masked frac", "max |log π_k/α|", "clip frac"], rows=rows)


def _curve_table(results, ms) -> Table:
    steps = sorted({s for m in ms for s in _eval_steps(results, m)})
    rows = [[s] + [fmt_values(_vals(results, m, f"test_accuracy@{s}"), 3) for m in ms]
            for s in steps]
    return Table(title="Held-out greedy accuracy vs training step (mean ± 95% CI over seeds; "
                       "optimizer steps = i × training step)", columns=["step", *ms], rows=rows)


def _of(method: str):
    return lambda r: r.trial.method == method


def _change(results, method: str, cfg, at: str = "final_accuracy") -> Verdict | None:
    """Does ``method`` move acc from step 0 (``at`` − ``initial_accuracy``, paired by seed)
    by more than ``min_effect_acc``?  ``None`` without data."""
    after, before = common_seeds(by_seed(results, at, where=_of(method)),
                                 by_seed(results, "initial_accuracy", where=_of(method)))
    if not after:
        return None
    return superior(after, before, min_effect=cfg.min_effect_acc)


def _gains(results, method: str) -> dict[int, float]:
    """final − step-0 held-out accuracy of ``method`` per seed."""
    after, before = common_seeds(by_seed(results, "final_accuracy", where=_of(method)),
                                 by_seed(results, "initial_accuracy", where=_of(method)))
    return {s: after[s] - before[s] for s in after}


def _claims_offpolicy(results, cfg, ms) -> list[Claim | NotEvaluated]:
    on = by_seed(results, "final_accuracy", where=_of(ON_POLICY))
    on_gain = _gains(results, ON_POLICY)
    on_syncs = by_seed(results, "syncs", where=_of(ON_POLICY))
    on_steps = by_seed(results, "steps", where=_of(ON_POLICY))
    learn_on = _change(results, ON_POLICY, cfg)
    out = []
    for m in ms:
        v, i, mask = parse_method(m)
        if v == 1 or i != 1 or mask_mode(m) != "mask":
            continue
        seqsum = ratio_level(m) == "sequence_sum"
        level = ", sequence-level ratios π(y|x)/α(y|x)" if seqsum else ""
        text = (f"(1{'s' if seqsum else ''}) Off-policy GRPO with v = {v} (i = 1, mask{level}) "
                f"learns (final held-out accuracy > its step-0 accuracy + "
                f"{cfg.min_effect_acc:g}) and its gain is non-inferior to on-policy GRPO's "
                f"(v = 1, i = 1, mask; margin {cfg.noninferiority_margin_acc:g}) after the same "
                f"{cfg.steps} optimizer steps, with {v}× fewer weight syncs.")
        off_all = by_seed(results, "final_accuracy", where=_of(m))
        off, on_p = common_seeds(_gains(results, m), on_gain)
        if not off:
            out.append(NotEvaluated(text, f"no seed with both {m} and {ON_POLICY}"))
            continue
        syncs = by_seed(results, "syncs", where=_of(m))
        steps = by_seed(results, "steps", where=_of(m))
        dev = ([abs(syncs[s] - math.ceil(steps[s] / v)) for s in syncs if s in steps]
               + [abs(on_syncs[s] - on_steps[s]) for s in on_syncs if s in on_steps])
        learn_off = _change(results, m, cfg)
        cells = {
            # on the gains over step 0, paired by seed (a seed's methods share the pretrained
            # model, so its step-0 accuracy is common and the pairing removes it)
            f"gain non-inferior to on-policy's (margin {cfg.noninferiority_margin_acc:g})":
                noninferior(off, on_p, margin=cfg.noninferiority_margin_acc),
            f"v = {v} learns (final − step 0 > {cfg.min_effect_acc:g})": learn_off,
            # a missing sync count counts as one violation
            f"syncs: ⌈T/{v}⌉ vs T on every seed": bound_holds(dev or [1.0], 0.0),
        }
        verdict = all_of(cells)
        if all(v is not None and v.inside(cfg.min_effect_acc) for v in (learn_on, learn_off)):
            verdict = not_acting(verdict, f"neither on-policy nor v = {v} moves held-out "
                                          f"accuracy from step 0 by more than "
                                          f"{cfg.min_effect_acc:g} (CIs inside the margin)")
        paired = [off[s] - on_p[s] for s in off]
        out.append(Claim(
            text=text,
            evidence=f"final acc v={v}: {fmt_values(list(off_all.values()), 3)} vs on-policy "
                     f"{fmt_values(list(on.values()), 3)}; paired difference of the gains "
                     f"{fmt_values(paired, 3)}; change from step 0: v={v} "
                     f"{_describe(learn_off)}, on-policy {_describe(learn_on)}; syncs "
                     f"{np.mean(list(syncs.values())) if syncs else math.nan:g} vs "
                     f"{np.mean(list(on_syncs.values())) if on_syncs else math.nan:g}",
            verdict=verdict))
    return out


def _describe(v: Verdict | None) -> str:
    if v is None:
        return "—"
    return f"{v.effect:+.3f} [{v.ci[0]:+.3f}, {v.ci[1]:+.3f}]"


def _paired(results, a: str, b: str, key: str) -> list[float]:
    xa, xb = _by_seed(results, a, key), _by_seed(results, b, key)
    return [xa[s] - xb[s] for s in sorted(set(xa) & set(xb))]


def _abs_deviations(values: list[float]) -> list[float]:
    """|x − median(x)|: the per-seed spread of the Brown–Forsythe test of equal variances."""
    med = float(np.median(values))
    return [abs(x - med) for x in values]


def _claim_mask(results, ms, cfg, mode: str = "mask") -> Claim | NotEvaluated:
    how = ("masked prompts kept in the loss's normaliser, the paper's E_x 1[σ≠0](…)"
           if mode == "mask" else "masked prompts removed from the normaliser too, as DAPO / "
           "TRL's token aggregations do")
    text = (f"(2{'' if mode == 'mask' else 'r'}) The zero-variance mask ({how}) reduces "
            "run-to-run variation and collapses: the seed spread of the accuracy change is lower "
            f"by more than {cfg.min_spread_acc:g} (Brown–Forsythe: absolute deviations from the "
            "seed median) and there are no more collapsed runs (accuracy below half its step-0 "
            "value at some evaluation) than without the mask.")
    pairs = []
    for m in ms:
        v, i, _ = parse_method(m)
        if mask_mode(m) != mode or ratio_level(m) != "token":
            continue
        other = method_name(v, i, False)
        if other in ms:
            pairs.append((m, other))
    std = {True: [], False: []}
    dev = {True: [], False: []}
    collapsed = {True: 0, False: 0}
    runs = {True: 0, False: 0}
    masked = []
    for with_mask, without in pairs:
        for flag, m in ((True, with_mask), (False, without)):
            rs = [r for r in results if r.trial.method == m]
            delta = [r.metrics["final_accuracy"] - r.metrics["initial_accuracy"] for r in rs]
            std[flag].append(_std(delta))
            if delta:
                dev[flag] += _abs_deviations(delta)
            collapsed[flag] += sum(_collapsed(r) for r in rs)
            runs[flag] += len(rs)
            if flag:
                masked += [float(r.metrics["masked_frac"]) for r in rs
                           if r.metrics.get("masked_frac") is not None]
    if not (dev[True] and dev[False]):
        return NotEvaluated(text, "no (v, i) config run both with and without the mask")
    s_mask = float(np.nanmean(std[True])) if std[True] else math.nan
    s_none = float(np.nanmean(std[False])) if std[False] else math.nan
    verdict = all_of({
        f"spread lower by > {cfg.min_spread_acc:g}":
            superior(dev[False], dev[True], min_effect=cfg.min_spread_acc, paired=False),
        "collapsed runs with mask ≤ without":
            bound_holds([float(collapsed[True] - collapsed[False])], 0.0),
    })
    # the paper's mask only removes degenerate prompts' KL terms (their advantages are 0);
    # the renormalising one also rescales the kept prompts, so only the first needs β > 0
    if (mode == "mask" and cfg.beta == 0) or (masked and max(masked) == 0.0):
        verdict = not_acting(verdict, "the mask multiplies nothing here (β = 0 or no "
                                      "zero-variance prompt in any mask run)")
    if mode == "renorm" and _same_curves(results, [(m, m.replace("-renorm", "-mask"))
                                                   for m, _ in pairs]):
        # renormalising over the kept prompts multiplies the whole gradient by all / kept; the
        # global-norm clip and Adam's normalisation remove a common scale, so the runs can
        # coincide with the paper's mask runs exactly
        verdict = not_acting(verdict, "every renormalised-mask run has the same held-out curve "
                                      "as the paper's mask run of its seed: the renormalisation "
                                      "only rescales the gradient, which clipping and Adam undo")
    configs = ", ".join(f"(v={parse_method(a)[0]}, i={parse_method(a)[1]})" for a, _ in pairs)
    return Claim(
        text=text,
        evidence=f"configs {configs}: mean seed std of Δacc {s_mask:.3f} (mask) vs "
                 f"{s_none:.3f} (no mask); mean |Δ − median| {np.mean(dev[True]):.3f} vs "
                 f"{np.mean(dev[False]):.3f}; collapsed {collapsed[True]}/{runs[True]} vs "
                 f"{collapsed[False]}/{runs[False]}; masked prompt fraction (mask runs) "
                 f"{fmt_values(masked, 2)}",
        verdict=verdict)


def _same_curves(results, pairs: list[tuple[str, str]]) -> bool:
    """Whether, for every (a, b) pair and every seed both ran, the held-out curves coincide."""
    compared = 0
    for a, b in pairs:
        ra = {r.trial.seed: r.metrics for r in results if r.trial.method == a}
        rb = {r.trial.seed: r.metrics for r in results if r.trial.method == b}
        for seed in set(ra) & set(rb):
            keys = [k for k in ra[seed] if k.startswith("test_accuracy@")]
            if not keys or any(abs(float(ra[seed][k]) - float(rb[seed].get(k, math.nan))) > 1e-12
                               or k not in rb[seed] for k in keys):
                return False
            compared += 1
    return compared > 0


def _claims_reuse(results, ms, cfg) -> list[Claim | NotEvaluated]:
    on = by_seed(results, "final_accuracy", where=_of(ON_POLICY))
    learn_on = _change(results, ON_POLICY, cfg)
    out = []
    for m in ms:
        v, i, mask = parse_method(m)
        if v != 1 or i == 1 or mask_mode(m) != "mask" or ratio_level(m) != "token":
            continue
        steps = _vals(results, m, "steps")
        at = int(steps[0]) // i if steps else 0
        text = (f"(3) Sample reuse (v = 1, i = {i}, mask) is worse per unit of compute: at "
                f"equal optimizer steps on-policy GRPO's held-out accuracy exceeds it by more "
                f"than {cfg.min_effect_acc:g} (paired by seed).")
        reuse_all = by_seed(results, f"test_accuracy@{at}", where=_of(m))
        on_p, reuse = common_seeds(on, reuse_all)
        if not reuse:
            out.append(NotEvaluated(text, f"no seed with both {m} (at step {at}) and {ON_POLICY}"))
            continue
        reuse_end = _vals(results, m, "final_accuracy")
        learn_reuse = _change(results, m, cfg, at=f"test_accuracy@{at}")
        verdict = superior(on_p, reuse, min_effect=cfg.min_effect_acc)
        if all(v is not None and v.inside(cfg.min_effect_acc) for v in (learn_on, learn_reuse)):
            verdict = not_acting(verdict, f"neither on-policy nor the reuse run moves held-out "
                                          f"accuracy from step 0 by more than "
                                          f"{cfg.min_effect_acc:g} (CIs inside the margin)")
        out.append(Claim(
            text=text,
            evidence=f"after {at * i} optimizer steps: reuse (training step {at}) "
                     f"{fmt_values(list(reuse_all.values()), 3)} vs on-policy "
                     f"{fmt_values(list(on.values()), 3)}; paired on − reuse "
                     f"{fmt_values([on_p[s] - reuse[s] for s in reuse], 3)}; change from "
                     f"step 0: reuse {_describe(learn_reuse)}, on-policy {_describe(learn_on)}; "
                     f"reuse after {int(steps[0]) if steps else 0} training steps ({i}× the "
                     f"optimizer steps, equal samples): {fmt_values(reuse_end, 3)}",
            verdict=verdict))
    return out


def _claim_theorem(results) -> list[Claim]:
    rs = [r for r in results if r.trial.method == THEOREM]
    if not rs:
        return []
    draws = int(sum(r.metrics["theorem_draws"] for r in rs))
    bad = int(sum(r.metrics["theorem_violations"] for r in rs))
    slacks = [float(r.metrics["theorem_min_slack"]) for r in rs]
    weight = max(float(r.metrics["theorem_max_weight"]) for r in rs)
    return [Claim(
        text="(4) Theorem 1: J(π) − J(π_k) ≥ L_α(π) − 2(1 − σ_ε)/σ_ε·TV(π, α) − 2·TV(π_k, α) "
             "on every random discrete instance (binary rewards, σ_ε ≤ 1), computed exactly.",
        evidence=f"{bad} violations in {draws} instances; smallest slack {min(slacks):.3g}; "
                 f"largest weight (1 − σ_ε)/σ_ε {weight:.3g}",
        verdict=bound_holds(slacks, 0.0, side="ge", tol=THEOREM_TOL))]


def _seed_cells(results, m, key, steps, x=None) -> dict[float, list[float]]:
    """``{x: per-seed values of key@step}`` of method ``m``; ``x`` the step, or the seeds' mean
    of ``x.format(step)`` (steps that share a mean ``x`` pool their values)."""
    out: dict[float, list[float]] = {}
    for s in steps:
        vals = _vals(results, m, f"{key}@{s}")
        at = _vals(results, m, x.format(s)) if x else [float(s)]
        if vals and at and math.isfinite(float(np.mean(at))):
            out.setdefault(float(np.mean(at)), []).extend(vals)
    return out


def _plot_accuracy(results, ms, path: Path) -> Figure:
    fig, axes = grid(3, panel=(4.8, 3.8))
    for i, (ax, key, label) in enumerate(zip(
            axes, ("optimizer_steps@{}", "syncs@{}", "train@{}_wall_s"),
            ("optimizer steps", "weight syncs", "training wall time (s, mean over seeds)"),
            strict=True)):
        line_panel(ax, {m: _seed_cells(results, m, "test_accuracy", _eval_steps(results, m),
                                       x=key) for m in ms},
                   xlabel=label, ylabel="held-out greedy accuracy", xlog=False, ylog=False,
                   legend=i == 0)
    return save(fig, path, "Held-out greedy accuracy (mean ± 95 % CI over seeds) vs optimizer "
                           "steps, vs weight syncs to the sampler and vs training wall time "
                           "(methods vV-iI: sampler synced every V steps, I optimizer steps per "
                           "batch)")


def _plot_diagnostics(results, ms, path: Path) -> Figure:
    fig, axes = grid(2, panel=(4.8, 3.6))
    for i, (ax, key, label) in enumerate(zip(
            axes, ("masked_frac", "max_abs_log_ratio"),
            ("zero-variance (masked) prompt fraction", "max |log π_k/α| in the window"),
            strict=True)):
        line_panel(ax, {m: _seed_cells(results, m, key,
                                       [t for t in _eval_steps(results, m) if t > 0])
                        for m in ms},
                   xlabel="training step", ylabel=label, xlog=False,
                   ylog="auto" if key == "max_abs_log_ratio" else False, legend=i == 0)
    return save(fig, path, "Per evaluation window (mean ± 95 % CI over seeds): fraction of "
                           "prompts whose group rewards are all equal (masked when the mask is "
                           "on) and the largest |log π_k − log α| over sampled tokens (0 "
                           "on-policy)")


def _notes(cfg: OffPolicyGRPORepro, results) -> list[str]:
    npar = sorted({int(r.metrics["num_parameters"]) for r in results
                   if "num_parameters" in r.metrics})
    pre = [float(r.metrics["pretrain_accuracy"]) for r in results
           if r.trial.method == ON_POLICY and "pretrain_accuracy" in r.metrics]
    return [
        f"Task: addition with {cfg.digits[0]}–{cfg.digits[1]}-digit operands and "
        f"{cfg.operands[0]}–{cfg.operands[1]} operands; binary exact-match reward. The brief "
        "asks for 2–3-digit additions and 3-operand sums: with the 1 M-parameter model that "
        "task (digits 2–3, operands 2–3) was at ≤ 3.5 % held-out accuracy after 2150 "
        "pretraining steps (≈ 15 min on one core), so the presets use 2-digit operands "
        "(quick: 2 operands, ≈ 1 min of pretraining per seed; full: 2–3 operands, measured "
        "48.5 % after 1750 steps); set digits / operands to change it.",
        f"Model: tiny Llama with {npar or '—'} parameters (CUDA runs use the cuda_* shape); "
        f"pretrained per seed to target {cfg.pretrain_target:g} (held-out accuracy at the stop: "
        f"{fmt_values(pre, 3) if pre else '—'}), at most {cfg.pretrain_steps} steps.",
        f"RL: T = {cfg.steps} training steps, G = {cfg.group_size}, {cfg.prompts_per_step} "
        f"prompts per step, ε = {cfg.epsilon:g}, β = {cfg.beta:g} (k3 KL, π_ref refreshed every "
        f"{cfg.ref_refresh_period} steps), Adam lr {cfg.lr:g}, grad-norm clip 1, one minibatch "
        "per step (with i = 1 and v > 1 the clip binds only through its centre π_k/α), "
        f"per-token ratios; held-out greedy accuracy on {cfg.eval_size} prompts every "
        f"{cfg.eval_every} steps. Paper: Qwen2.5-0.5B / R1-Distill-1.5B, GSM8K / DeepScaleR, "
        "lr 5e-6, 3 seeds.",
        "Speed: the paper's ≈ 1.35× throughput comes from fewer weight broadcasts to a vLLM "
        "server on a multi-GPU node; this single-process CPU toy has no broadcast, so it "
        "reports sync counts (v× fewer) and measured training time (v > 1 pays one extra "
        "forward for π_k's log-probs per step) instead of a speed-up.",
        "The zero-variance mask multiplies each prompt's loss (policy term and KL) by "
        "1[σ ≠ 0] and keeps the aggregation's normaliser; since a zero-variance group's "
        "whitened advantages are already 0, at this scale the mask only removes those prompts' "
        "KL term, which is why its effect can be small.",
        "Claims (1)–(3) compare paired by seed (every method of a seed starts from the same "
        "pretrained model), so the spread between the seeds' pretrained models does not "
        "widen their intervals; with three seeds a t interval is still wide (t₀.₉₇₅ = 4.3), "
        "so an undecided comparison reads inconclusive rather than held.",
        "max |log π_k/α| is the trainer's lag diagnostic (the anchor π_k vs the sampler α over "
        "sampled tokens); it is 0 for v = 1, including the reuse runs (whose π/α moves only "
        "inside the i inner steps).",
        "That with v = 1 the loss equals TRL's GRPO loss on identical tensors is checked by the "
        "unit tests (tests/policy/test_offpolicy_grpo.py, tests/policy/test_grpo_trl.py), not "
        "in this run; a non-finite loss stops a trial (PolicyTrainer.optimizer_step).",
    ]


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Mroueh et al. (ICLR 2026) at toy scale: a tiny Llama pretrained to ≈ 40 % on "
        "addition, trained with GRPO where the sampler is synced every v steps and each batch "
        "gets i optimizer steps (on-policy, off-policy v = 4 / 10, sample reuse i = 4), with "
        "and without the zero-variance mask; held-out accuracy vs optimizer steps, syncs and "
        "wall time, and an exact check of Theorem 1's improvement bound."),
)
