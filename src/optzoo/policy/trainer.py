"""``PolicyTrainer``: one lean RL loop for language models — rollout → reward → advantage →
update — that runs any of :mod:`optzoo.policy`'s losses through an :class:`Algorithm`.

The trainer owns what every method shares: the policy and its optimizer, the task and its
train / held-out prompts, sampling (:func:`optzoo.llm.rollout`, KV cache, exact sampler
log-probs), a frozen reference model for KL penalties, held-out greedy evaluation, logging, and
checkpoints.  An :class:`Algorithm` owns what differs: which prompts to sample and how many
completions each (:meth:`Algorithm.select`), which model samples them (a lagged snapshot for
off-policy GRPO), and the update (advantages, loss, inner steps, trackers).

Algorithms here:

* :class:`GRPO` — TRL 1.16's GRPO (:func:`~optzoo.policy.grpo_loss`, group advantages), with
  TRL's ``num_iterations`` as ``inner_steps``;
* :class:`OffPolicyGRPO` — Mroueh et al. (ICLR 2026), Algorithm 1: sampler synced every ``v``
  steps, ``i`` inner steps, clip window centred on π_k/α, whitened advantages, zero-variance
  mask, π_ref refreshed periodically (:func:`~optzoo.policy.offpolicy_grpo_loss`);
* :class:`SPO` — Xu & Ding (ICLR 2026): one response per prompt, KL-adaptive Beta value tracker,
  global advantage normalisation, prioritised prompt sampling (:class:`SPOValueTracker`);
* :class:`GNIVO` — Choi et al. (ICLR 2026): group-normalised implicit value loss on sampled
  prefix steps (:func:`~optzoo.policy.gn_ivo_loss`), one-step variant by ``steps="one"``;
* :class:`Reinforce` — REINFORCE with a batch-mean, group-mean or leave-one-out (RLOO) baseline.

Logged per step (``trainer.history``, one dict per step): ``reward`` and ``accuracy`` (training
samples), ``kl`` (to the reference, when the loss reports it), ``degenerate_frac`` (prompts
whose samples all got the same reward; SPO: samples with a zero raw advantage), ``tokens`` and
``tokens_per_s`` (completion tokens generated / wall time of rollout + update), ``samples``,
``syncs`` (sampler weight copies so far), ``wall_s`` (training wall time so far, evaluation
excluded) and, every ``eval_every`` steps, ``test_accuracy`` (held-out greedy accuracy).

Scale (issue 27): ``TrainerConfig.per_device_train_batch_size`` splits a step's batch into
micro-batches whose gradients accumulate into one optimizer step equal to the full-batch step
(:meth:`PolicyTrainer.policy_step`); ``logprob_chunk_size`` computes per-token log-probs
without the batch's full-vocabulary logits (:func:`optzoo.llm.sampling.token_logprobs`);
``bf16`` runs every forward under bf16 autocast, and ``rescore_logprobs`` (on by default off
CPU and in bf16) replaces the log-probs recorded while decoding by a no-grad full forward,
so that a ratio π/π_old is 1 at the first inner step whatever the kernels; ``peft_config``
(or a ``peft`` model) trains a LoRA adapter, with the reference model being the base with the
adapter disabled and snapshots (lagged samplers, refreshed references) copies of the adapter
weights only; ``optimizer=`` and ``lr_scheduler=`` replace AdamW and the constant rate.

Checkpoints (:meth:`PolicyTrainer.save`, :meth:`PolicyTrainer.load`, or ``fit(checkpoint=...)``)
hold the trainable state (the whole model, or only the adapter with LoRA), the optimizer and
learning-rate scheduler, the algorithm's state (snapshots, trackers), a reference model only
when it is a separate copy (never with LoRA before a refresh), the RNG states (the sampling
``torch.Generator`` and the prompt ``numpy`` generator) and the history; they are written
atomically, and a resumed run continues exactly as an uninterrupted one would on the same
device and thread count.

Example::

    from optzoo.llm import Addition, PretrainConfig, pretrain
    from optzoo.policy.trainer import GRPO, PolicyTrainer, TrainerConfig

    task = Addition(digits=2)
    lm = pretrain(PretrainConfig(task=task))
    train, test = task.split(1000, 300, seed=1)
    trainer = PolicyTrainer(lm.model, lm.tokenizer, task, train, test, GRPO(group_size=8),
                            TrainerConfig(steps=100, lr=1e-4))
    history = trainer.fit(checkpoint="runs/grpo.pt")   # resumes if the file exists
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import inspect
import math
import os
import time
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from optzoo.llm.sampling import Rollout, greedy_accuracy, rollout, token_logprobs
from optzoo.llm.tasks import Problem, Task
from optzoo.policy.advantages import degenerate_group_fraction, grpo_advantages
from optzoo.policy.gn_ivo import (
    KL_REDUCTIONS,
    gn_ivo_loss,
    response_step_counts,
    sample_prefix_steps,
    step_ends_from_text,
    step_ids_from_boundaries,
)
from optzoo.policy.grpo import LOSS_TYPES, grpo_loss
from optzoo.policy.offpolicy_grpo import (
    OffPolicySchedule,
    offpolicy_grpo_loss,
    whitened_advantages,
    zero_variance_mask,
)
from optzoo.policy.reinforce import BASELINES, reinforce_advantages, reinforce_loss
from optzoo.policy.spo import SPOValueTracker, kl_divergence_proxy, sample_prompts

CHECKPOINT_VERSION = 1


def _positive_int(name: str, value, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {value!r}")


def _number(name: str, value, lo: float = 0.0, *, strict: bool = False) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < lo or (strict and value == lo):
        raise ValueError(f"{name}: expected a finite number {'>' if strict else '>='} {lo}, "
                         f"got {value!r}")


@dataclass(frozen=True)
class TrainerConfig:
    """Settings shared by every algorithm.

    Args:
        steps: training steps (one sampled batch each) of :meth:`PolicyTrainer.fit`.
        lr: Adam learning rate.
        weight_decay: AdamW weight decay.
        grad_clip: max global gradient norm (None: no clipping).
        max_new_tokens: completion length cap (None: the longest demonstration among the training
            problems, in tokens, + 2).
        temperature: sampling temperature (log-probs use the same temperature).
        eval_every: steps between held-out greedy evaluations (0: only at the start and end).
        eval_size: held-out prompts evaluated (the first ``eval_size`` of ``test``).
        checkpoint_every: steps between checkpoints when ``fit`` gets a path.
        seed: seed of the sampling generator and of the prompt draws.
        per_device_train_batch_size: completions per forward/backward (TRL's name): a batch of
            N completions is processed in ceil(N / this) micro-batches whose gradients are
            accumulated into one optimizer step equal to the full-batch step (TRL's
            ``gradient_accumulation_steps`` is implied; see :meth:`PolicyTrainer.policy_step`).
            None: the whole batch in one forward.
        logprob_chunk_size: completion tokens per output-head chunk when computing per-token
            log-probs (full-vocabulary logits never exist for the whole batch); None: unchunked.
        bf16: run every forward (sampling, policy, reference, evaluation) under bf16 autocast
            on the model's device (CUDA; CPU autocast too when set there); the optimizer step
            and the losses stay fp32.  Default off: the fp32 path, unchanged.
        rescore_logprobs: take the sampler's log-probs (GRPO's π_old with ``inner_steps`` > 1,
            off-policy GRPO's α, GN-IVO's π_old) from a no-grad full forward instead of those
            recorded while decoding; None: on in bf16 or off CPU (the two agree to ~1e-7 in fp32
            on CPU only).  An algorithm's own ``rescore_*`` option, when set, wins.
    """

    steps: int = 100
    lr: float = 1e-4
    weight_decay: float = 0.0
    grad_clip: float | None = 1.0
    max_new_tokens: int | None = None
    temperature: float = 1.0
    eval_every: int = 10
    eval_size: int = 300
    checkpoint_every: int = 10
    seed: int = 0
    per_device_train_batch_size: int | None = None
    logprob_chunk_size: int | None = None
    bf16: bool = False
    rescore_logprobs: bool | None = None

    def __post_init__(self):
        _positive_int("steps", self.steps, 0)
        _number("lr", self.lr, strict=True)
        _number("weight_decay", self.weight_decay)
        if self.grad_clip is not None:
            _number("grad_clip", self.grad_clip, strict=True)
        if self.max_new_tokens is not None:
            _positive_int("max_new_tokens", self.max_new_tokens)
        _number("temperature", self.temperature, strict=True)
        _positive_int("eval_every", self.eval_every, 0)
        _positive_int("eval_size", self.eval_size)
        _positive_int("checkpoint_every", self.checkpoint_every)
        _positive_int("seed", self.seed, 0)
        for name in ("per_device_train_batch_size", "logprob_chunk_size"):
            if getattr(self, name) is not None:
                _positive_int(name, getattr(self, name))
        for name in ("bf16", "rescore_logprobs"):
            v = getattr(self, name)
            if not isinstance(v, bool) and not (v is None and name == "rescore_logprobs"):
                raise ValueError(f"{name}: expected a bool, got {v!r}")


@dataclass
class Batch:
    """One step's samples.

    Attributes:
        rollout: the sampled completions (rows grouped by prompt).
        rewards: ``(N,)`` float32 rewards on the model's device.
        correct: ``(N,)`` bool, the task's exact-match verdict (None without a task).
        index: ``(N,)`` long, index into the trainer's training problems of each row's prompt.
        num_samples: completions per prompt (the group size).
    """

    rollout: Rollout
    rewards: Tensor
    correct: Tensor | None
    index: Tensor
    num_samples: int


class Algorithm(ABC):
    """What a policy-optimisation method decides; the :class:`PolicyTrainer` does the rest.

    Subclasses implement :meth:`select` and :meth:`update`; they may override :meth:`setup`
    (called once before the first step), :meth:`sampler` (the model that samples step ``step``;
    default the policy itself), :meth:`syncs` (weight copies to the sampler so far) and
    :meth:`state_dict` / :meth:`load_state_dict` (anything beyond the policy and optimizer that a
    resumed run needs).
    """

    name: str = "algorithm"

    def setup(self, trainer: PolicyTrainer) -> None:
        """Prepare before the first step (e.g. snapshots, tracker priors)."""
        return None

    @abstractmethod
    def select(self, trainer: PolicyTrainer, step: int) -> tuple[list[int], int]:
        """``(indices into trainer.train, completions per prompt)`` of step ``step``."""

    def sampler(self, trainer: PolicyTrainer, step: int):
        """The model that samples step ``step``'s completions."""
        return trainer.model

    @abstractmethod
    def update(self, trainer: PolicyTrainer, batch: Batch, step: int) -> dict[str, float]:
        """Optimise on ``batch`` (through :meth:`PolicyTrainer.optimizer_step`); return metrics."""

    @property
    def needs_reference(self) -> bool:
        """Whether the trainer keeps a frozen copy of the initial policy (a KL penalty, ``beta``
        > 0, needs one; without it no second copy of the model is held)."""
        return bool(getattr(self, "beta", 0.0))

    def syncs(self, steps_done: int) -> int:
        """Weight copies to the sampler after ``steps_done`` steps (on-policy: one per step)."""
        return steps_done

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any], trainer: PolicyTrainer) -> None:
        """Restore :meth:`state_dict` in place of :meth:`setup` (a resumed run)."""
        if state:
            raise ValueError(f"{self.name}: unexpected algorithm state {sorted(state)}")


def _uniform_prompts(trainer: PolicyTrainer, n: int) -> list[int]:
    """``n`` distinct training prompts drawn uniformly (with replacement only when ``n`` exceeds
    the number of prompts)."""
    m = len(trainer.train)
    return trainer.rng.choice(m, size=n, replace=n > m).tolist()


def _check_group(group_size: int, prompts_per_step: int, minimum: int = 1) -> None:
    _positive_int("group_size", group_size, minimum)
    _positive_int("prompts_per_step", prompts_per_step)


@dataclass
class GRPO(Algorithm):
    """GRPO as TRL 1.16's ``GRPOTrainer`` computes it (:func:`~optzoo.policy.grpo_loss`).

    Args:
        group_size: G, completions per prompt (TRL's ``num_generations``).
        prompts_per_step: prompts per step.
        epsilon, epsilon_high: clip range [1 − ε, 1 + ε_high] (``None``: ε).
        beta: k3 KL coefficient to the trainer's reference model (the initial policy).
        loss_type: TRL's aggregation (``"grpo"``, ``"bnpo"``, ``"dr_grpo"``, ``"dapo"``).
        scale_rewards: TRL's ``scale_rewards`` (``"group"``, ``"batch"``, ``"none"``).
        inner_steps: optimizer steps per sampled batch (TRL's ``num_iterations``).
    """

    group_size: int = 8
    prompts_per_step: int = 8
    epsilon: float = 0.2
    epsilon_high: float | None = None
    beta: float = 0.0
    loss_type: str = "grpo"
    scale_rewards: str = "group"
    inner_steps: int = 1
    name: str = "grpo"

    def __post_init__(self):
        _check_group(self.group_size, self.prompts_per_step, 2)
        _positive_int("inner_steps", self.inner_steps)
        _number("epsilon", self.epsilon)
        _number("beta", self.beta)

    def select(self, trainer, step):
        return _uniform_prompts(trainer, self.prompts_per_step), self.group_size

    def update(self, trainer, batch, step):
        r = batch.rollout
        adv = grpo_advantages(batch.rewards, self.group_size, scale=self.scale_rewards)
        ref = trainer.reference_logprobs(r) if self.beta else None
        # TRL: old log-probs are only needed when a batch is reused (num_iterations > 1)
        old = None
        if self.inner_steps > 1:
            old = trainer.sampler_logprobs(trainer.model, r) if trainer.rescore else r.logprobs
        metrics = {}
        for _ in range(self.inner_steps):
            loss, m = trainer.policy_step(r, lambda logp: grpo_loss(
                logp, old, adv, r.completion_mask, ref_logp=ref, beta=self.beta,
                epsilon_low=self.epsilon, epsilon_high=self.epsilon_high,
                loss_type=self.loss_type, max_completion_length=trainer.max_new_tokens))
            metrics = {"loss": loss.item(), **{k: v.item() for k, v in m.items()}}
        metrics["degenerate_frac"] = degenerate_group_fraction(batch.rewards,
                                                               self.group_size).item()
        return metrics


@dataclass
class OffPolicyGRPO(Algorithm):
    """Off-policy GRPO (Mroueh et al., ICLR 2026, Algorithm 1).

    Step k: the sampler α (a copy of the policy synced every ``sync_period`` = v steps, so it
    lags by 0..v−1 steps) draws G completions for each prompt; advantages are whitened with
    α's group statistics (A = (r − μ)/sqrt(σ² + ``variance_eps``)); the anchor π_k (the policy
    at the start of step k, detached) fixes the clip window [max(π_k/α − ε, 0), π_k/α + ε];
    ``inner_steps`` = i optimizer steps follow, each on
    ``offpolicy_grpo_loss(π, α, π_k) + β·KL(π ‖ π_ref)`` with zero-variance groups masked out;
    π_ref ← π every ``ref_refresh_period`` steps.  (v = 1, i = 1) is on-policy GRPO; with
    v = 1 the anchor is the sampler's own log-probs (the same weights), so no extra forward.
    The mask follows the objective E_x 1[σ(x) ≠ 0]·(…): masked prompts stay in the average's
    normaliser (no renormalisation over the kept prompts, unlike DAPO's dynamic sampling); since
    a zero-variance group's whitened advantages are already 0, the mask removes its KL term.

    Args:
        group_size: G.
        prompts_per_step: prompts per step.
        sync_period: v.
        inner_steps: i.
        mask_zero_variance: multiply each prompt's loss by 1[σ ≠ 0] (the paper's mask).
        epsilon: half-width ε of the clip window.
        beta: k3 KL coefficient.
        ref_refresh_period: steps between π_ref ← π (None: fixed initial reference).
        variance_eps: ε inside sqrt(σ² + ε) of the whitened advantage.
        importance_sampling_level: ``"token"`` (default, TRL's) or ``"sequence_sum"`` (the
            theorem's π(y|x)/α(y|x)) or ``"sequence"``.
        loss_type: aggregation (default ``"grpo"``).
        renormalize_mask: masked prompts also leave the loss's normaliser
            (:func:`~optzoo.policy.offpolicy_grpo_loss`'s ``renormalize_mask``).
        rescore_sampler: α's log-probs from a no-grad full forward of the sampler's weights
            instead of the log-probs recorded while decoding (KV-cache path): the two agree to
            ~1e-7 in fp32 on CPU but not in bf16 / fused GPU kernels, where the difference would
            read as off-policyness.  ``None`` (default): the trainer's
            ``TrainerConfig.rescore_logprobs`` (on off CPU or in bf16).
    """

    group_size: int = 8
    prompts_per_step: int = 8
    sync_period: int = 1
    inner_steps: int = 1
    mask_zero_variance: bool = True
    epsilon: float = 0.2
    beta: float = 0.01
    ref_refresh_period: int | None = 50
    variance_eps: float = 1e-4
    importance_sampling_level: str = "token"
    loss_type: str = "grpo"
    renormalize_mask: bool = False
    rescore_sampler: bool | None = None
    name: str = "offpolicy-grpo"
    _sampler: Any = field(default=None, init=False, repr=False)

    def __post_init__(self):
        _check_group(self.group_size, self.prompts_per_step, 2)
        _number("epsilon", self.epsilon)
        _number("beta", self.beta)
        _number("variance_eps", self.variance_eps)
        self.schedule = OffPolicySchedule(sync_period=self.sync_period,
                                          inner_steps=self.inner_steps,
                                          ref_refresh_period=self.ref_refresh_period)

    def setup(self, trainer):
        if self.sync_period > 1 and self._sampler is None:
            self._sampler = trainer.snapshot()

    def select(self, trainer, step):
        return _uniform_prompts(trainer, self.prompts_per_step), self.group_size

    def sampler(self, trainer, step):
        if self.sync_period == 1:
            return trainer.model
        if self.schedule.syncs_sampler(step):
            self._sampler.load_state_dict(trainer.model.state_dict())
        return self._sampler

    def syncs(self, steps_done):
        return self.schedule.syncs_until(steps_done)

    def update(self, trainer, batch, step):
        r = batch.rollout
        if (self.beta and self.ref_refresh_period is not None
                and self.schedule.refreshes_reference(step)):
            trainer.refresh_reference()
        adv = whitened_advantages(batch.rewards, self.group_size, eps=self.variance_eps)
        gmask = zero_variance_mask(batch.rewards, self.group_size)
        rescore = (self.rescore_sampler if self.rescore_sampler is not None
                   else trainer.rescore)
        sampler_logp = r.logprobs
        if rescore:
            alpha = self._sampler if self.sync_period > 1 else trainer.model
            sampler_logp = trainer.sampler_logprobs(alpha, r)
        if self.sync_period == 1:
            anchor = sampler_logp
        else:
            anchor = trainer.sampler_logprobs(trainer.model, r)
        ref = trainer.reference_logprobs(r) if self.beta else None
        metrics = {}
        for _ in range(self.inner_steps):
            loss, m = trainer.policy_step(r, lambda logp: offpolicy_grpo_loss(
                logp, sampler_logp, anchor, adv, r.completion_mask,
                group_mask=gmask if self.mask_zero_variance else None, ref_logp=ref,
                beta=self.beta, epsilon=self.epsilon, loss_type=self.loss_type,
                importance_sampling_level=self.importance_sampling_level,
                max_completion_length=trainer.max_new_tokens,
                renormalize_mask=self.renormalize_mask))
            metrics = {"loss": loss.item(), **{k: v.item() for k, v in m.items()}}
        # the lag: how far π_k already is from the sampler (the loss's own max_abs_log_ratio is
        # |log π/α| at the last inner step)
        lag = (anchor - sampler_logp).abs() * r.completion_mask
        metrics["max_abs_anchor_log_ratio"] = lag.max().item()
        metrics["lag"] = self.schedule.lag(step)
        metrics["degenerate_frac"] = 1.0 - gmask.view(-1, self.group_size)[:, 0].mean().item()
        return metrics

    def state_dict(self):
        return {} if self._sampler is None else {"sampler": self._sampler.state_dict()}

    def load_state_dict(self, state, trainer):
        if ("sampler" in state) != (self.sync_period > 1):
            raise ValueError(f"checkpoint: sampler snapshot present = {'sampler' in state}, "
                             f"but sync_period = {self.sync_period}")
        if "sampler" in state:
            self.setup(trainer)
            self._sampler.load_state_dict(state["sampler"])


@dataclass
class SPO(Algorithm):
    """Single-stream Policy Optimization (Xu & Ding, ICLR 2026; the ``verl`` recipe's order).

    Per step: priorities w(x) = sqrt(v̂(1 − v̂)) + 0.05 → ``prompts_per_step`` prompts drawn
    ∝ w (``sampling="uniform"``: uniformly) → one completion each → A = r − v̂_prev(x) (the
    tracker before this reward; ``baseline="none"``: v̂ = 0) → global normalisation
    (A − mean)/(std + 1e-8) (``normalize=False``: raw A) → one PPO-clip step (on-policy, ratio 1
    at the step: TRL's GRPO loss with these advantages) → D(x) = mean |log π_then − log π_now|
    over the tokens of the response stored at x's last visit, ρ = clip(2^(−D/D_half), ρ_min,
    ρ_max) → a ← ρa + r, b ← ρb + (1 − r) → store this response with its log-probs under the
    updated policy.  Setup draws ``n0`` completions per training prompt from the initial policy
    for the tracker priors (counted in ``trainer.setup_samples``).

    The policy update is verl's PPO actor update on the batch: ``mini_batches`` consecutive
    slices of the batch, one optimizer step each (verl's ``ppo_mini_batch_size`` = batch /
    ``mini_batches``, one PPO epoch); with more than one, the old log-probs are re-scored by a
    no-grad full forward of the policy before the first step (verl's ``compute_log_prob``), so
    later slices see ratios ≠ 1.  The loss is :func:`~optzoo.policy.grpo_loss` with clip range
    [1 − ``epsilon``, 1 + ``epsilon_high``], aggregation ``loss_type`` (``"bnpo"`` = verl's
    ``token-mean`` over the mini-batch, ``"grpo"`` = ``seq-mean-token-mean``) and ``delta``:
    TRL's cap of the unclipped ratio, which equals verl's dual clip ``clip_ratio_c`` (for A < 0:
    min(−A·c, max(−Aρ, −A·clip(ρ)))) whenever c ≥ 1 + ε_high, and changes nothing for A > 0.
    :meth:`verl_recipe` gives the recipe's settings (``spo/train.sh``, ``spo_trainer.yaml``).

    Args:
        prompts_per_step: prompts (= completions) per step.
        n0: offline samples per prompt for the priors (0: a = b = 0.5); 8 is the recipe's
            ``offline_N``.
        rho_min, rho_max, d_half: the tracker's forgetting (the code: ρ_max 0.96, D_half 0.06).
        rho_mode: ``"kl"`` or ``"constant"`` (ρ = ``rho_constant``).
        rho_constant: ρ of the constant mode.
        sampling: ``"prioritised"`` or ``"uniform"``.
        baseline: ``"tracker"`` or ``"none"`` (REINFORCE with global normalisation).
        normalize: global advantage normalisation.
        epsilon, epsilon_high: clip range [1 − ε, 1 + ε_high] (``None``: ε; the recipe's
            clip-higher is 0.2 / 0.28).
        beta: k3 KL coefficient to the reference model.
        loss_type: aggregation of :func:`~optzoo.policy.grpo_loss` (``"grpo"``, ``"bnpo"``,
            ``"dr_grpo"``, ``"dapo"``).
        mini_batches: PPO mini-batches (optimizer steps) per sampled batch.
        delta: cap of the unclipped ratio (verl's dual clip ``clip_ratio_c``; None: none).
    """

    prompts_per_step: int = 64
    n0: int = 8
    rho_min: float = 0.875
    rho_max: float = 0.96
    d_half: float = 0.06
    rho_mode: str = "kl"
    rho_constant: float = 0.9
    sampling: str = "prioritised"
    baseline: str = "tracker"
    normalize: bool = True
    epsilon: float = 0.2
    beta: float = 0.0
    epsilon_high: float | None = None
    loss_type: str = "grpo"
    mini_batches: int = 1
    delta: float | None = None
    name: str = "spo"

    @classmethod
    def verl_recipe(cls, **overrides) -> SPO:
        """The ``verl-recipe`` SPO settings: 1024 prompts per step in 8 PPO mini-batches of
        128, token-mean loss, clip-higher 0.2 / 0.28, dual clip 10, no KL, n0 = 8 offline
        samples, ρ_min = 0.875 (``rho.clip_lower``), prioritised sampling.  The recipe's
        learning rate (1e-6, Adam) and temperature belong to :class:`TrainerConfig`.
        ``overrides`` replace any field (e.g. a smaller ``prompts_per_step``)."""
        settings = dict(prompts_per_step=1024, mini_batches=8, n0=8, rho_min=0.875,
                        rho_max=0.96, d_half=0.06, rho_mode="kl", sampling="prioritised",
                        baseline="tracker", normalize=True, epsilon=0.2, epsilon_high=0.28,
                        delta=10.0, beta=0.0, loss_type="bnpo")
        unknown = set(overrides) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ValueError(f"verl_recipe: unknown SPO fields {sorted(unknown)}")
        return cls(**{**settings, **overrides})

    def __post_init__(self):
        _positive_int("prompts_per_step", self.prompts_per_step)
        _positive_int("n0", self.n0, 0)
        _number("epsilon", self.epsilon)
        if self.epsilon_high is not None:
            _number("epsilon_high", self.epsilon_high)
        _number("beta", self.beta)
        if self.loss_type not in LOSS_TYPES:
            raise ValueError(f"loss_type: expected one of {LOSS_TYPES}, got {self.loss_type!r}")
        _positive_int("mini_batches", self.mini_batches)
        if self.mini_batches > self.prompts_per_step:
            raise ValueError(f"mini_batches: expected at most prompts_per_step = "
                             f"{self.prompts_per_step}, got {self.mini_batches}")
        if self.delta is not None:
            _number("delta", self.delta, 1.0)
        if self.sampling not in ("prioritised", "uniform"):
            raise ValueError(f"sampling: expected 'prioritised' or 'uniform', got "
                             f"{self.sampling!r}")
        if self.baseline not in ("tracker", "none"):
            raise ValueError(f"baseline: expected 'tracker' or 'none', got {self.baseline!r}")
        self.tracker = SPOValueTracker(rho_min=self.rho_min, rho_max=self.rho_max,
                                       d_half=self.d_half, rho_mode=self.rho_mode,
                                       rho_constant=self.rho_constant)

    def setup(self, trainer):
        if len(self.tracker):
            return  # restored from a checkpoint
        keys = list(range(len(trainer.train)))
        if self.n0 == 0:
            for k in keys:
                self.tracker.initialize(k)
            return
        prompts = [p.prompt for p in trainer.train]
        correct = []
        for s in range(0, len(prompts), 256):
            r = trainer.sample(trainer.model, prompts[s:s + 256], self.n0)
            correct += trainer.successes(r, trainer.train[s:s + 256], self.n0)
        trainer.setup_samples += len(correct)
        if not all(0.0 <= c <= 1.0 for c in correct):
            raise ValueError("reward: SPO's Beta tracker needs rewards in [0, 1] (successes), "
                             f"got values in [{min(correct)}, {max(correct)}]")
        wins = np.asarray(correct, dtype=float).reshape(len(prompts), self.n0).sum(1)
        for k, w in zip(keys, wins, strict=True):
            self.tracker.initialize(k, float(w), self.n0)

    def select(self, trainer, step):
        n = self.prompts_per_step
        if self.sampling == "uniform":
            return _uniform_prompts(trainer, n), 1
        w = self.tracker.sampling_weights(list(range(len(trainer.train))))
        return sample_prompts(w, n, generator=trainer.prompt_generator).tolist(), 1

    def _divergence(self, trainer, keys: list[int]) -> Tensor:
        """D per key from the stored responses (0 where none is stored yet)."""
        d = torch.zeros(len(keys), dtype=torch.float64)
        have = [(j, self.tracker.stored_response(k)) for j, k in enumerate(keys)]
        have = [(j, s) for j, s in have if s is not None]
        if not have:
            return d
        width = max(s[0].numel() for _, s in have)
        ids = torch.full((len(have), width), trainer.tokenizer.pad_token_id, dtype=torch.long)
        mask = torch.zeros(len(have), width, dtype=torch.long)
        stored = torch.zeros(len(have), width)
        for row, (_, (c, lp)) in enumerate(have):
            ids[row, :c.numel()], mask[row, :c.numel()], stored[row, :c.numel()] = c, 1, lp
        prompts = [trainer.train[keys[j]].prompt for j, _ in have]
        with torch.no_grad():
            now = trainer.score(prompts, ids, mask).cpu()
        div = kl_divergence_proxy(stored, now, mask)
        d[[j for j, _ in have]] = div.double()
        return d

    def update(self, trainer, batch, step):
        r = batch.rollout
        keys = batch.index.tolist()
        values = (self.tracker.values(keys) if self.baseline == "tracker"
                  else torch.zeros(len(keys), dtype=torch.float64))
        raw = batch.rewards.double().cpu() - values
        if self.normalize and len(keys) > 1:
            adv = (raw - raw.mean()) / (raw.std() + 1e-8)
        else:
            adv = raw
        adv = adv.to(batch.rewards)
        ref = trainer.reference_logprobs(r) if self.beta else None
        old = None
        if self.mini_batches > 1:
            old = trainer.sampler_logprobs(trainer.model, r)
        losses, metrics = [], {}
        for rows in torch.arange(len(keys)).tensor_split(self.mini_batches):
            sub = r.rows(rows)
            loss, m = trainer.policy_step(sub, lambda logp, rows=rows, sub=sub: grpo_loss(
                logp, None if old is None else old[rows], adv[rows.to(adv.device)],
                sub.completion_mask, ref_logp=None if ref is None else ref[rows],
                beta=self.beta, epsilon_low=self.epsilon, epsilon_high=self.epsilon_high,
                loss_type=self.loss_type, delta=self.delta,
                max_completion_length=trainer.max_new_tokens))
            losses.append(loss.item())
            for k, v in m.items():
                metrics.setdefault(k, []).append(v.item())
        # a prompt drawn twice in a step: its later copy sees the earlier one's update
        uniq = list(dict.fromkeys(keys))
        rho = self.tracker.rho(self._divergence(trainer, uniq))
        rho_of = dict(zip(uniq, rho.tolist(), strict=True))
        self.tracker.update(keys, batch.rewards.cpu(), torch.tensor([rho_of[k] for k in keys]))
        after = trainer.sampler_logprobs(trainer.model, r).cpu()
        mask = r.completion_mask.cpu().bool()
        for row, k in enumerate(keys):
            self.tracker.store_response(k, (r.completion_ids[row].cpu()[mask[row]].clone(),
                                            after[row][mask[row]].clone()))
        # means over the mini-batches
        return {"loss": float(np.mean(losses)), **{k: float(np.mean(v)) for k, v in
                                                   metrics.items()},
                # samples the loss gives no gradient: zero advantage after normalisation
                "degenerate_frac": (adv.abs() < 1e-6).double().mean().item(),
                "advantage_var": raw.var().item() if len(keys) > 1 else 0.0,
                "rho_mean": rho.mean().item()}

    def state_dict(self):
        return {"tracker": self.tracker.state_dict()}

    def load_state_dict(self, state, trainer):
        self.tracker.load_state_dict(state["tracker"])


@dataclass
class GNIVO(Algorithm):
    """Group-Normalized Implicit Value Optimization (Choi et al., ICLR 2026, Eq. 9).

    π_old ← π at each step; K completions per prompt; one prefix length t per group drawn
    uniformly from {1..max_i T_i} (``num_t`` per group; ``"all"``: every t) — responses shorter
    than t use their whole response; loss
    −Σ_i softmax(R/α)_i · log softmax_j(g_j(t))_i with g_j(t) = log π_θ(y^(j)_<t) −
    log π_old(y^(j)_<t), plus β·k3-KL to the initial model; ``inner_steps`` optimizer steps on
    the batch (the first is REINFORCE-like since q is uniform at θ = θ_old).

    Args:
        group_size: K.
        prompts_per_step: prompts per step.
        alpha: target temperature α.
        steps: ``"line"`` (a step ends at each ``step_separator`` token and at the EOS),
            ``"token"`` (a step per token) or ``"one"`` (the whole response: one-step GN-IVO).
        step_separator: the character that ends a reasoning step (``;`` in the chain tasks).
        num_t: prefix lengths per group (int) or ``"all"``.
        inner_steps: optimizer steps per batch.
        normalize_weights: w = softmax(R/α) (the experiments) or exp(R/α) (the theory).
        beta: KL coefficient.
        kl_reduction: ``"token_mean"`` or ``"response_sum"`` (the scale of g; see
            :func:`~optzoo.policy.gn_ivo_loss`).
        rescore_old: π_old's log-probs from a no-grad full forward of the policy before the
            first inner step instead of the ones recorded while decoding (equal to ~1e-7 in fp32
            on CPU, not in bf16 / fused kernels); ``None`` (default): the trainer's
            ``TrainerConfig.rescore_logprobs`` (on off CPU or in bf16).
    """

    group_size: int = 4
    prompts_per_step: int = 16
    alpha: float = 0.2
    steps: str = "line"
    step_separator: str = ";"
    num_t: int | str = 1
    inner_steps: int = 2
    normalize_weights: bool = True
    beta: float = 0.04
    kl_reduction: str = "token_mean"
    rescore_old: bool | None = None
    name: str = "gn-ivo"

    def __post_init__(self):
        _check_group(self.group_size, self.prompts_per_step, 2)
        _positive_int("inner_steps", self.inner_steps)
        _number("alpha", self.alpha, strict=True)
        _number("beta", self.beta)
        if self.steps not in ("line", "token", "one"):
            raise ValueError(f"steps: expected 'line', 'token' or 'one', got {self.steps!r}")
        if self.num_t != "all":
            _positive_int("num_t", self.num_t)
        if self.kl_reduction not in KL_REDUCTIONS:
            raise ValueError(f"kl_reduction: expected one of {KL_REDUCTIONS}, got "
                             f"{self.kl_reduction!r}")

    def select(self, trainer, step):
        return _uniform_prompts(trainer, self.prompts_per_step), self.group_size

    def step_ids(self, trainer, r: Rollout) -> Tensor | None:
        mask = r.completion_mask
        if self.steps == "token":
            return None
        if self.steps == "one":
            return torch.zeros_like(mask)
        if not isinstance(self.step_separator, str) or not self.step_separator:
            raise ValueError(f"step_separator: expected a non-empty string, got "
                             f"{self.step_separator!r}")
        # the token completing a separator in the decoded text ends its step (the separator
        # need not be one token); the EOS ends the last step
        ends = step_ends_from_text(trainer.tokenizer, r.completion_ids, mask,
                                   self.step_separator)
        return step_ids_from_boundaries(ends, mask)

    def update(self, trainer, batch, step):
        r = batch.rollout
        sids = self.step_ids(trainer, r)
        if self.num_t == "all":
            prefix = None
        else:
            counts = response_step_counts(sids, r.completion_mask)
            prefix = sample_prefix_steps(counts, self.group_size, self.num_t,
                                         generator=trainer.prompt_generator)
        ref = trainer.reference_logprobs(r) if self.beta else None
        old = r.logprobs
        if self.rescore_old if self.rescore_old is not None else trainer.rescore:
            old = trainer.sampler_logprobs(trainer.model, r)
        metrics = {}
        for _ in range(self.inner_steps):
            loss, m = trainer.policy_step(r, lambda logp: gn_ivo_loss(
                logp, old, batch.rewards, r.completion_mask, self.group_size, alpha=self.alpha,
                step_ids=sids, prefix_steps=prefix, normalize_weights=self.normalize_weights,
                ref_logp=ref, beta=self.beta, kl_reduction=self.kl_reduction))
            metrics = {"loss": loss.item(), **{k: v.item() for k, v in m.items()}}
        metrics["degenerate_frac"] = degenerate_group_fraction(batch.rewards,
                                                               self.group_size).item()
        return metrics


@dataclass
class Reinforce(Algorithm):
    """REINFORCE with a baseline (:func:`~optzoo.policy.reinforce_loss`); ``baseline="rloo"``
    is RLOO.

    Args:
        group_size: completions per prompt (≥ 2 for the group baselines).
        prompts_per_step: prompts per step.
        baseline: one of :data:`~optzoo.policy.reinforce.BASELINES`.
        loss_type: ``"sum"`` (−A·Σ_t log π) or a GRPO aggregation.
        beta: k3 KL coefficient.
    """

    group_size: int = 4
    prompts_per_step: int = 16
    baseline: str = "batch_mean"
    loss_type: str = "sum"
    beta: float = 0.0
    name: str = "reinforce"

    def __post_init__(self):
        _check_group(self.group_size, self.prompts_per_step)
        if self.baseline not in BASELINES:
            raise ValueError(f"baseline: expected one of {BASELINES}, got {self.baseline!r}")
        _number("beta", self.beta)

    def select(self, trainer, step):
        return _uniform_prompts(trainer, self.prompts_per_step), self.group_size

    def update(self, trainer, batch, step):
        r = batch.rollout
        adv = reinforce_advantages(batch.rewards, self.baseline, self.group_size)
        ref = trainer.reference_logprobs(r) if self.beta else None
        loss, m = trainer.policy_step(r, lambda logp: reinforce_loss(
            logp, adv, r.completion_mask, loss_type=self.loss_type, ref_logp=ref,
            beta=self.beta, max_completion_length=trainer.max_new_tokens))
        out = {"loss": loss.item(), **{k: v.item() for k, v in m.items()}}
        if self.group_size > 1:
            out["degenerate_frac"] = degenerate_group_fraction(batch.rewards,
                                                               self.group_size).item()
        return out


# -- reward functions: optzoo's and TRL's conventions ----------------------------------------

#: keyword arguments a reward function may take besides the dataset columns (TRL's names)
_TRL_EXTRAS = ("completion_ids", "trainer_state", "log_metric", "log_extra")


class _RewardCall:
    """Calls one reward function in whichever convention its signature follows.

    * TRL's (``GRPOTrainer(reward_funcs=...)``): parameters named ``prompts`` and/or
      ``completions`` are passed by keyword, with the dataset columns (here the fields of
      :class:`~optzoo.llm.tasks.Problem` other than ``prompt``, e.g. ``answer``, one value per
      completion), ``completion_ids``, ``trainer_state``, ``log_metric`` and ``log_extra`` to
      every parameter that names them, or all of them when it takes ``**kwargs``.
    * optzoo's original one: any other ``f(prompts, completions)`` gets the two positionally
      (plus the named extras it asks for).
    """

    def __init__(self, fn: Callable, available: Sequence[str], name: str):
        if not callable(fn):
            raise TypeError(f"{name}: expected a callable reward(prompts, completions, **kwargs) "
                            f"-> list[float], got {type(fn).__name__}")
        self.fn, self.name = fn, name
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):  # builtins, some C callables: the plain convention
            self.keyword, self.var_kw, self.wanted = False, False, set()
            return
        kinds = inspect.Parameter
        self.var_kw = any(p.kind is kinds.VAR_KEYWORD for p in params.values())
        self.keyword = "prompts" in params or "completions" in params
        self.takes_prompts = "prompts" in params or self.var_kw
        named = [n for n, p in params.items()
                 if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)]
        if not self.keyword:
            positional = [n for n, p in params.items() if p.kind in (
                kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
            named = [n for n in named if n not in positional[:2]]
        self.wanted = {n for n in named if n not in ("prompts", "completions")}
        missing = [n for n in self.wanted if params[n].default is kinds.empty
                   and n not in available]
        if missing:
            raise TypeError(f"{name}: parameter(s) {sorted(missing)} match no dataset column or "
                            f"trainer keyword; available: {sorted(available)}")

    def __call__(self, prompts: list[str], completions: list[str],
                 extras: Callable[[], dict[str, Any]]) -> list:
        kwargs = {}
        if self.var_kw or self.wanted:
            every = extras()
            kwargs = every if self.var_kw else {k: every[k] for k in self.wanted if k in every}
        if self.keyword:
            if self.takes_prompts:
                kwargs["prompts"] = prompts
            return self.fn(completions=completions, **kwargs)
        return self.fn(prompts, completions, **kwargs)


@dataclass(frozen=True)
class Prompt:
    """A training or held-out row without a task: the prompt and nothing to grade it with
    (``PolicyTrainer(task=None, ...)`` given prompt strings)."""

    prompt: str


def _as_rows(name: str, rows, task) -> list:
    """``rows`` as objects with a ``prompt`` attribute: :class:`Problem`s (or any dataclass with
    a ``prompt`` field) kept, strings wrapped in :class:`Prompt`, mappings with a ``"prompt"``
    key turned into a dataclass of their columns (the dataset columns of TRL's reward kwargs)."""
    if rows is None or isinstance(rows, str | Mapping):
        raise ValueError(f"{name}: expected a sequence of Problem, prompt strings or dicts with "
                         f"a 'prompt' key, got {rows!r}")
    rows = list(rows)
    out = []
    kinds = {}
    for row in rows:
        if isinstance(row, str):
            row = Prompt(row)
        elif isinstance(row, Mapping):
            if not isinstance(row.get("prompt"), str):
                raise ValueError(f"{name}: a dict row needs a string 'prompt', got {row!r}")
            keys = tuple(row)
            if keys not in kinds:
                kinds[keys] = dataclasses.make_dataclass(
                    "Row", [(k, Any) for k in keys], frozen=True)
            row = kinds[keys](**row)
        elif not (dataclasses.is_dataclass(row) and isinstance(getattr(row, "prompt", None),
                                                                 str)):
            raise ValueError(f"{name}: expected Problem, a prompt string or a dict with a "
                             f"'prompt' key, got {row!r}")
        if task is not None and not isinstance(row, Problem):
            raise ValueError(f"{name}: with a task, expected Problem rows, got {row!r}")
        out.append(row)
    return out


def _is_peft(model) -> bool:
    return hasattr(model, "disable_adapter") and hasattr(model, "peft_config")


class _AdapterSnapshot:
    """A frozen copy of a PEFT model's trainable (adapter) weights, evaluated on the live model.

    No second copy of the base model: :meth:`active` swaps the copied adapter tensors into the
    model for the duration of a rollout or a scoring forward and puts the policy's back.
    ``state_dict`` / ``load_state_dict`` hold and accept the adapter tensors only (a full state
    dict of the policy is accepted too: its adapter entries are taken).  The swap is in place,
    so no autograd graph through the policy may be alive across it: the algorithms compute a
    snapshot's log-probs (no-grad) before the policy's differentiable forward.
    """

    def __init__(self, model):
        self.model = model
        self._live = {n: p for n, p in model.named_parameters() if p.requires_grad}
        self.tensors = {n: p.detach().clone() for n, p in self._live.items()}

    @property
    def config(self):
        return self.model.config

    @property
    def training(self) -> bool:
        return False

    def eval(self):
        return self

    def train(self, mode: bool = True):
        return self

    def parameters(self) -> Iterator[Tensor]:
        return iter(self.tensors.values())

    def state_dict(self) -> dict[str, Tensor]:
        return dict(self.tensors)

    def load_state_dict(self, state: Mapping[str, Tensor]) -> None:
        missing = [n for n in self.tensors if n not in state]
        if missing:
            raise ValueError(f"snapshot: state lacks adapter weights {missing[:3]}...")
        with torch.no_grad():
            for n, t in self.tensors.items():
                t.copy_(state[n])

    @contextlib.contextmanager
    def active(self) -> Iterator[Any]:
        """The live model carrying this snapshot's adapter weights (restored on exit)."""
        with torch.no_grad():
            policy = {n: p.detach().clone() for n, p in self._live.items()}
            for n, p in self._live.items():
                p.copy_(self.tensors[n])
        try:
            yield self.model
        finally:
            with torch.no_grad():
                for n, p in self._live.items():
                    p.copy_(policy[n])


class PolicyTrainer:
    """Rollout → reward → advantage → update, for any :class:`Algorithm` (module docstring).

    Rewards follow TRL's ``reward_funcs`` convention as well as the plain one: ``reward`` may be
    ``f(prompts, completions) -> list[float]``, or TRL-style ``f(prompts, completions,
    answer, **kwargs)`` / ``f(completions, **kwargs)`` receiving the problems' columns by
    keyword (``answer``: one per completion), ``completion_ids`` (token ids up to EOS),
    ``trainer_state`` (a ``transformers.TrainerState`` with ``global_step`` and ``max_steps``),
    ``log_metric(name, value)`` (averaged into the step's history row) and
    ``log_extra(column, values)`` (kept in :attr:`completion_extras`).  A list of functions is
    summed (TRL's default weights); ``None`` entries are skipped as in TRL (``nansum``).

    Without a task (``task=None``), ``reward`` is required and ``train`` / ``test`` may be
    prompt strings or dicts with a ``"prompt"`` key (their other keys are the dataset columns
    the reward functions receive); the history then has no ``accuracy``, evaluation logs
    ``test_reward`` (mean reward of greedy completions) instead of ``test_accuracy``, and
    ``config.max_new_tokens`` must be set (there are no demonstrations to size it from).

    Example::

        def exact(prompts, completions, answer, **kwargs):        # a TRL reward function
            return [float(c.strip() == a) for c, a in zip(completions, answer)]

        trainer = PolicyTrainer(lm.model, lm.tokenizer, task, train, test, GRPO(group_size=8),
                                TrainerConfig(steps=100), reward=exact)
        trainer.fit()

    Args:
        model: a Hugging Face causal LM (trained in place), on the device to train on; a
            ``peft`` model trains its adapter only.
        tokenizer: its tokenizer (EOS and PAD ids; :func:`optzoo.llm.models.prepare_tokenizer`).
        task: the :class:`~optzoo.llm.tasks.Task` whose ``reward`` scores completions, or None
            (then ``reward`` is required).
        train: training problems (prompts are drawn from these).
        test: held-out problems (greedy accuracy on the first ``config.eval_size``); may be
            empty without a task (no evaluation).
        algorithm: the method.
        config: :class:`TrainerConfig`.
        reward: optional reward function, or list of them, replacing ``task.reward``: the plain
            ``reward(prompts, completions) -> list[float]`` or TRL's keyword convention (above).
        log: called with a progress line at every evaluation.
        optimizer: a ``torch.optim.Optimizer`` over the model's trainable parameters, or a
            callable ``params -> Optimizer`` (default: AdamW with ``config.lr`` and
            ``config.weight_decay``).
        lr_scheduler: a ``torch.optim.lr_scheduler.LRScheduler`` of that optimizer, or a
            callable ``optimizer -> LRScheduler``; stepped after every optimizer step (as in
            Hugging Face's Trainer).  Default: none (constant rate).
        peft_config: a ``peft`` config (e.g. ``LoraConfig``): the model is wrapped with
            ``peft.get_peft_model`` and only the adapter trains; the reference model is the
            base with the adapter disabled.
    """

    def __init__(self, model, tokenizer, task: Task | None, train: Sequence,
                 test: Sequence, algorithm: Algorithm,
                 config: TrainerConfig | None = None, *,
                 reward: Callable[..., list] | Sequence[Callable[..., list]] | None = None,
                 log: Callable[[str], None] | None = None,
                 optimizer: torch.optim.Optimizer | Callable | None = None,
                 lr_scheduler: Any = None, peft_config: Any = None):
        if task is None:
            if reward is None:
                raise ValueError("task: None needs a reward function (reward=...) to score "
                                 "completions")
        elif not isinstance(task, Task):
            raise ValueError(f"task: expected an optzoo.llm Task or None, got {task!r}")
        self.train = _as_rows("train", train, task)
        if not self.train:
            raise ValueError("train: expected a non-empty sequence of problems or prompts")
        self.test = _as_rows("test", [] if test is None else test, task)
        if task is not None and not self.test:
            raise ValueError("test: expected a non-empty sequence of Problem")
        if not isinstance(algorithm, Algorithm):
            raise ValueError(f"algorithm: expected an optzoo.policy.trainer.Algorithm, got "
                             f"{algorithm!r}")
        config = TrainerConfig() if config is None else config
        if not isinstance(config, TrainerConfig):
            raise ValueError(f"config: expected a TrainerConfig, got {type(config).__name__}")
        if tokenizer.eos_token_id is None or tokenizer.pad_token_id is None:
            raise ValueError("tokenizer: expected EOS and PAD tokens (see prepare_tokenizer)")
        if peft_config is not None:
            if _is_peft(model):
                raise ValueError("peft_config: the model is already a peft model")
            from peft import get_peft_model

            model = get_peft_model(model, peft_config)
        self.peft = _is_peft(model)
        self.model, self.tokenizer, self.task = model, tokenizer, task
        self.algorithm, self.config, self.log = algorithm, config, log
        self.reward_fn = task.reward if reward is None else reward
        columns = sorted({f.name for p in self.train for f in dataclasses.fields(p)} - {"prompt"})
        available = [*columns, *_TRL_EXTRAS]
        if reward is None:
            self._reward_calls = None  # task.reward(prompts, completions), as always
        elif callable(reward):
            self._reward_calls = [_RewardCall(reward, available, "reward")]
        elif isinstance(reward, Sequence) and not isinstance(reward, str) and reward:
            self._reward_calls = [_RewardCall(f, available, f"reward[{i}]")
                                  for i, f in enumerate(reward)]
        else:
            raise TypeError(f"reward: expected a callable, a non-empty list of callables or "
                            f"None, got {reward!r}")
        self.completion_extras: dict[str, list] = {}
        self.device = next(model.parameters()).device
        if config.max_new_tokens is None and not all(hasattr(p, "answer") for p in self.train):
            raise ValueError("max_new_tokens: required in the config when the training rows "
                             "carry no 'answer' demonstration to size completions from")
        self.max_new_tokens = config.max_new_tokens or 2 + max(
            len(tokenizer(p.answer, add_special_tokens=False)["input_ids"]) for p in self.train)
        self.optimizer = self._optimizer(optimizer)
        self.lr_scheduler = self._scheduler(lr_scheduler)
        self.generator = torch.Generator(device=self.device).manual_seed(config.seed)
        self.prompt_generator = torch.Generator().manual_seed(config.seed + 1)
        self.rng = np.random.default_rng(config.seed)
        self.reference = None
        self.step = 0
        self.history: list[dict[str, float]] = []
        self.wall_s = 0.0
        self.samples = 0
        self.setup_samples = 0
        self._setup_done = False
        self._final_step = config.steps  # evaluated even off the eval_every grid

    def _trainable(self) -> list[Tensor]:
        return [p for p in self.model.parameters() if p.requires_grad]

    def _optimizer(self, optimizer) -> torch.optim.Optimizer:
        params = self._trainable()
        if not params:
            raise ValueError("model: no trainable parameters (requires_grad)")
        if optimizer is None:
            return torch.optim.AdamW(params, lr=self.config.lr,
                                     weight_decay=self.config.weight_decay)
        if not isinstance(optimizer, torch.optim.Optimizer):
            if not callable(optimizer):
                raise ValueError(f"optimizer: expected a torch.optim.Optimizer or a callable "
                                 f"params -> Optimizer, got {optimizer!r}")
            optimizer = optimizer(params)
            if not isinstance(optimizer, torch.optim.Optimizer):
                raise ValueError(f"optimizer: the factory returned {optimizer!r}, not a "
                                 "torch.optim.Optimizer")
        held = {id(p) for g in optimizer.param_groups for p in g["params"]}
        if held != {id(p) for p in params}:
            raise ValueError("optimizer: its parameters must be exactly the model's trainable "
                             f"parameters ({len(params)} tensors; it holds {len(held)})")
        return optimizer

    def _scheduler(self, scheduler):
        if scheduler is None:
            return None
        base = torch.optim.lr_scheduler.LRScheduler
        if not isinstance(scheduler, base):
            if not callable(scheduler):
                raise ValueError(f"lr_scheduler: expected an LRScheduler or a callable "
                                 f"optimizer -> LRScheduler, got {scheduler!r}")
            scheduler = scheduler(self.optimizer)
        if not isinstance(scheduler, base) or scheduler.optimizer is not self.optimizer:
            raise ValueError("lr_scheduler: expected an LRScheduler of the trainer's optimizer")
        if isinstance(scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
            raise ValueError("lr_scheduler: ReduceLROnPlateau needs a metric at each step; "
                             "expected a schedule stepped once per optimizer step")
        return scheduler

    # -- helpers the algorithms call ----------------------------------------------------------

    @property
    def rescore(self) -> bool:
        """Whether sampler log-probs are re-scored by a full forward (``rescore_logprobs``)."""
        if self.config.rescore_logprobs is not None:
            return self.config.rescore_logprobs
        return self.config.bf16 or self.device.type != "cpu"

    def autocast(self):
        """bf16 autocast on the model's device when ``config.bf16`` (else a no-op)."""
        if not self.config.bf16:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=torch.bfloat16)

    @contextlib.contextmanager
    def _weights(self, model) -> Iterator[Any]:
        """The module to run for ``model`` (an adapter snapshot runs on the live model)."""
        if isinstance(model, _AdapterSnapshot):
            with model.active() as live:
                yield live
        else:
            yield model

    def snapshot(self):
        """A frozen copy of the current policy (eval mode, no gradients); with LoRA a copy of
        the adapter weights only (:class:`_AdapterSnapshot`)."""
        if self.peft:
            return _AdapterSnapshot(self.model)
        copy_ = copy.deepcopy(self.model)
        copy_.eval()
        for p in copy_.parameters():
            p.grad = None  # deepcopy copies gradients too
            p.requires_grad_(False)
        return copy_

    def refresh_reference(self) -> None:
        """π_ref ← the current policy."""
        if self.reference is None:
            self.reference = self.snapshot()
        else:
            self.reference.load_state_dict(self.model.state_dict())

    def sample(self, model, prompts: Sequence[str], num_samples: int) -> Rollout:
        """Completions of ``prompts`` from ``model`` with the trainer's generator."""
        with self._weights(model) as live, self.autocast():
            was = live.training
            live.eval()
            try:
                return rollout(live, self.tokenizer, list(prompts), num_samples=num_samples,
                               max_new_tokens=self.max_new_tokens,
                               temperature=self.config.temperature, generator=self.generator)
            finally:
                live.train(was)

    def logprobs(self, model, r: Rollout) -> Tensor:
        """Per-token log-probs of ``r``'s completions under ``model`` (differentiable unless
        called under ``no_grad``), with the trainer's temperature, chunking and autocast."""
        with self._weights(model) as live, self.autocast():
            return r.logprobs_under(live, temperature=self.config.temperature,
                                    chunk_size=self.config.logprob_chunk_size)

    @torch.no_grad()
    def sampler_logprobs(self, model, r: Rollout) -> Tensor:
        """No-grad full-forward log-probs of ``r`` under ``model`` (re-scored sampler / old
        log-probs), in micro-batches of ``per_device_train_batch_size`` rows."""
        mb = self.config.per_device_train_batch_size
        n = len(r.prompts)
        if mb is None or mb >= n:
            return self.logprobs(model, r)
        return torch.cat([self.logprobs(model, r.rows(s)) for s in torch.arange(n).split(mb)])

    def policy_logprobs(self, r: Rollout) -> Tensor:
        """Per-token log-probs of ``r``'s completions under the policy (differentiable)."""
        return self.logprobs(self.model, r)

    @torch.no_grad()
    def reference_logprobs(self, r: Rollout) -> Tensor:
        """Per-token log-probs under the reference model (the initial policy unless refreshed;
        with LoRA and no refresh, the base model with the adapter disabled)."""
        if self.reference is not None:
            return self.sampler_logprobs(self.reference, r)
        if self.peft and self.algorithm.needs_reference:
            with self.model.disable_adapter():
                return self.sampler_logprobs(self.model, r)
        raise RuntimeError(f"{self.algorithm.name}: no reference model is kept because "
                           "algorithm.needs_reference is False")

    def score(self, prompts: Sequence[str], completion_ids: Tensor,
              completion_mask: Tensor) -> Tensor:
        """Per-token log-probs under the policy of completions given as right-padded ids."""
        side = self.tokenizer.padding_side
        self.tokenizer.padding_side = "left"
        try:
            enc = self.tokenizer(list(prompts), return_tensors="pt", padding=True)
        finally:
            self.tokenizer.padding_side = side
        with self.autocast():
            return token_logprobs(self.model, enc["input_ids"].to(self.device),
                                  enc["attention_mask"].to(self.device),
                                  completion_ids.to(self.device),
                                  completion_mask.to(self.device),
                                  temperature=self.config.temperature,
                                  batch_size=self.config.per_device_train_batch_size,
                                  chunk_size=self.config.logprob_chunk_size)

    def _check_loss(self, loss: Tensor) -> None:
        if not torch.isfinite(loss):
            raise FloatingPointError(f"{self.algorithm.name}: non-finite loss {loss.item()} at "
                                     f"step {self.step}")

    def _clip_and_step(self) -> None:
        if self.config.grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(self._trainable(), self.config.grad_clip)
        self.optimizer.step()
        if self.lr_scheduler is not None:
            self.lr_scheduler.step()

    def optimizer_step(self, loss: Tensor) -> None:
        """Backward, clip, step, zero the gradients; a non-finite loss raises instead."""
        self._check_loss(loss)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self._clip_and_step()

    def policy_step(self, r: Rollout,
                    loss_fn: Callable[[Tensor], tuple[Tensor, dict[str, Tensor]]],
                    ) -> tuple[Tensor, dict[str, Tensor]]:
        """One optimizer step on ``loss_fn(policy log-probs of r)``; returns its output.

        Without micro-batching (``per_device_train_batch_size`` None or ≥ the batch) this is
        ``optimizer_step(loss_fn(policy_logprobs(r))[0])``.  With it, the step equals the
        full-batch step for any loss of the log-probs (token-mean, sequence-mean, group-coupled
        ones such as GN-IVO's softmax over a group): (1) the ``N x C`` log-probs are computed
        under ``no_grad`` micro-batch by micro-batch; (2) the loss is evaluated on them as one
        leaf tensor and back-propagated to its ``N x C`` gradient g = ∂L/∂log π; (3) each
        micro-batch is forwarded again with autograd and back-propagated with its rows of g, so
        the accumulated parameter gradient is Σ_b J_bᵀ g_b = ∇L exactly (up to summation
        order).  The price is one extra no-grad forward per micro-batch; the gain, that the
        loss's normalisers (token counts, group statistics) are the full batch's, where
        TRL's gradient accumulation normalises by each micro-batch's own token count for
        ``"bnpo"``.  The model must be deterministic in train mode (no dropout), as the small
        models here are.
        """
        mb = self.config.per_device_train_batch_size
        n = len(r.prompts)
        if mb is None or mb >= n:
            loss, m = loss_fn(self.policy_logprobs(r))
            self.optimizer_step(loss)
            return loss, m
        slices = torch.arange(n).split(mb)
        leaf = self.sampler_logprobs(self.model, r).detach().requires_grad_(True)
        loss, m = loss_fn(leaf)
        self._check_loss(loss)
        self.optimizer.zero_grad(set_to_none=True)
        (grad,) = torch.autograd.grad(loss, leaf)
        for s in slices:
            self.policy_logprobs(r.rows(s)).backward(grad[s.to(grad.device)])
        self._clip_and_step()
        return loss.detach(), {k: v.detach() for k, v in m.items()}

    # -- the loop ---------------------------------------------------------------------------

    def evaluate(self) -> float | None:
        """Held-out greedy accuracy on the first ``eval_size`` test prompts (without a task:
        their mean reward; None without test prompts)."""
        rows = self.test[:self.config.eval_size]
        if not rows:
            return None
        prompts = [p.prompt for p in rows]
        was = self.model.training
        self.model.eval()
        try:
            with self.autocast():
                if self.task is not None:
                    return greedy_accuracy(self.model, self.tokenizer, self.task, prompts,
                                           max_new_tokens=self.max_new_tokens)
                total = 0.0
                for s in range(0, len(rows), 256):
                    r = rollout(self.model, self.tokenizer, prompts[s:s + 256], greedy=True,
                                max_new_tokens=self.max_new_tokens)
                    total += self._rewards(r, rows[s:s + 256], 1, {}).sum().item()
                return total / len(rows)
        finally:
            self.model.train(was)

    @property
    def _eval_key(self) -> str:
        return "test_accuracy" if self.task is not None else "test_reward"

    def _setup(self) -> None:
        if not self._setup_done:
            # with LoRA the reference is the base with the adapter disabled: no copy
            if self.reference is None and self.algorithm.needs_reference and not self.peft:
                self.refresh_reference()
            self.algorithm.setup(self)
            self._setup_done = True

    def successes(self, r: Rollout, rows: Sequence, k: int) -> list[float]:
        """Per completion: the task's exact-match verdict (1/0), or without a task the reward
        (used where a method counts successes, e.g. SPO's tracker priors)."""
        if self.task is not None:
            return [float(c) for c in self.task.correct(r.prompts, r.completions)]
        return self._rewards(r, rows, k, {}).cpu().tolist()

    def _rewards(self, r: Rollout, rows: Sequence, k: int,
                 logged: dict[str, list[float]]) -> Tensor:
        """``(N,)`` float32 rewards of the rollout's completions (class docstring); ``rows``:
        the problem of each prompt, ``k`` completions each."""
        if self._reward_calls is None:
            return torch.tensor(self.reward_fn(r.prompts, r.completions), dtype=torch.float32,
                                device=self.device)
        n = len(r.completions)
        cache: dict[str, Any] = {}

        def extras() -> dict[str, Any]:
            if not cache:
                per = [p for p in rows for _ in range(k)]
                for name in sorted({f.name for p in per for f in dataclasses.fields(p)}
                                   - {"prompt"}):
                    cache[name] = [getattr(p, name, None) for p in per]
                mask = r.completion_mask.bool().cpu()
                ids = r.completion_ids.cpu()
                cache["completion_ids"] = [row[m].tolist() for row, m in zip(ids, mask,
                                                                             strict=True)]
                from transformers import TrainerState

                cache["trainer_state"] = TrainerState(global_step=self.step,
                                                      max_steps=self.config.steps)
                cache["log_metric"] = lambda name, value: logged.setdefault(
                    str(name), []).append(float(value))
                cache["log_extra"] = lambda column, values: self.completion_extras.__setitem__(
                    str(column), list(values))
            return dict(cache)

        columns = []
        for call in self._reward_calls:
            out = call(r.prompts, r.completions, extras)
            out = list(out) if out is not None else out
            if out is None or len(out) != n:
                got = "None" if out is None else f"{len(out)} values"
                raise ValueError(f"{call.name}: expected {n} rewards (one per completion), got "
                                 f"{got}")
            columns.append([math.nan if v is None else float(v) for v in out])
        if len(columns) == 1 and not any(math.isnan(v) for v in columns[0]):
            return torch.tensor(columns[0], dtype=torch.float32, device=self.device)
        table = torch.tensor(columns, dtype=torch.float32, device=self.device)  # F x N
        if bool(table.isnan().all(0).any()):
            warnings.warn("reward: every reward function returned None for some completions; "
                          "their reward is 0 (TRL's nansum)", stacklevel=3)
        return table.nansum(0)

    def train_step(self) -> dict[str, float]:
        """One step: select prompts, sample, reward, update; returns (and logs) its metrics."""
        self._setup()
        t0 = time.perf_counter()
        step = self.step
        index, k = self.algorithm.select(self, step)
        sampler = self.algorithm.sampler(self, step)
        rows = [self.train[i] for i in index]
        r = self.sample(sampler, [p.prompt for p in rows], k)
        logged: dict[str, list[float]] = {}
        rewards = self._rewards(r, rows, k, logged)
        correct = (None if self.task is None else
                   torch.tensor(self.task.correct(r.prompts, r.completions), device=self.device))
        batch = Batch(r, rewards, correct,
                      torch.tensor(index, device=self.device).repeat_interleave(k), k)
        self.model.train()
        metrics = self.algorithm.update(self, batch, step)
        dt = time.perf_counter() - t0
        tokens = int(r.completion_mask.sum())
        self.wall_s += dt
        self.samples += len(r.completions)
        self.step += 1
        row = {"step": self.step, "reward": rewards.mean().item()}
        if correct is not None:
            row["accuracy"] = correct.float().mean().item()
        row.update({"tokens": tokens, "tokens_per_s": tokens / dt, "samples": self.samples,
                    "syncs": self.algorithm.syncs(self.step), "wall_s": self.wall_s, **metrics,
                    **{name: float(np.mean(v)) for name, v in logged.items()}})
        ev = self.config.eval_every
        if self.test and ((ev and self.step % ev == 0) or self.step == self._final_step):
            key = self._eval_key
            row[key] = self.evaluate()
            if self.log:
                self.log(f"[{self.algorithm.name}] step {self.step}: reward "
                         f"{row['reward']:.3f}, {key.replace('_', ' ')} {row[key]:.3f}, "
                         f"{row['tokens_per_s']:.0f} tok/s")
        self.history.append(row)
        return row

    def fit(self, steps: int | None = None, *, checkpoint: str | os.PathLike | None = None,
            ) -> list[dict[str, float]]:
        """Train until ``steps`` (default ``config.steps``) steps are done in total.

        With ``checkpoint``, an existing file there is loaded first (so a killed run resumes) and
        the state is saved every ``config.checkpoint_every`` steps and at the end.  A step-0
        held-out evaluation opens a fresh history.

        Returns:
            ``history`` (one dict per step; the step-0 row has ``step = 0``).
        """
        steps = self.config.steps if steps is None else steps
        _positive_int("steps", steps, 0)
        self._final_step = steps
        if checkpoint is not None and Path(checkpoint).is_file():
            self.load(checkpoint)
        self._setup()
        if not self.history:
            first = {"step": 0, "samples": 0, "syncs": 0, "wall_s": 0.0}
            if self.test:
                first[self._eval_key] = self.evaluate()
            self.history.append(first)
        while self.step < steps:
            self.train_step()
            if checkpoint is not None and (self.step % self.config.checkpoint_every == 0
                                           or self.step == steps):
                self.save(checkpoint)
        return self.history

    # -- checkpoints --------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything a resumed run needs (``torch.save``-able)."""
        return {"version": CHECKPOINT_VERSION, "algorithm": self.algorithm.name,
                "step": self.step, "model": self.trainable_state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "lr_scheduler": (None if self.lr_scheduler is None
                                 else self.lr_scheduler.state_dict()),
                "reference": None if self.reference is None else self.reference.state_dict(),
                "algorithm_state": self.algorithm.state_dict(),
                "generator": self.generator.get_state(),
                "prompt_generator": self.prompt_generator.get_state(),
                "rng": self.rng.bit_generator.state, "history": self.history,
                "wall_s": self.wall_s, "samples": self.samples,
                "setup_samples": self.setup_samples, "setup_done": self._setup_done}

    def trainable_state_dict(self) -> dict[str, Tensor]:
        """The model's trainable state: its whole ``state_dict``, or with LoRA the adapter's
        trainable tensors only (the frozen base is the user's model, not a training result)."""
        if not self.peft:
            return self.model.state_dict()
        return {n: p.detach() for n, p in self.model.named_parameters() if p.requires_grad}

    def _load_trainable(self, state: dict[str, Tensor]) -> None:
        if not self.peft:
            self.model.load_state_dict(state)
            return
        want = {n for n, p in self.model.named_parameters() if p.requires_grad}
        if set(state) != want:
            raise ValueError(f"checkpoint: adapter weights {sorted(set(state) ^ want)[:3]} "
                             "differ from this model's trainable parameters")
        self.model.load_state_dict(state, strict=False)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("version") != CHECKPOINT_VERSION:
            raise ValueError(f"checkpoint: version {state.get('version')!r}, expected "
                             f"{CHECKPOINT_VERSION}")
        if state["algorithm"] != self.algorithm.name:
            raise ValueError(f"checkpoint: written by algorithm {state['algorithm']!r}, this "
                             f"trainer runs {self.algorithm.name!r}")
        self._load_trainable(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        if (state.get("lr_scheduler") is None) != (self.lr_scheduler is None):
            raise ValueError(f"checkpoint: lr_scheduler state present = "
                             f"{state.get('lr_scheduler') is not None}, but this trainer has "
                             f"{'no' if self.lr_scheduler is None else 'a'} scheduler")
        if self.lr_scheduler is not None:
            self.lr_scheduler.load_state_dict(state["lr_scheduler"])
        if state["reference"] is not None:
            self.refresh_reference()
            self.reference.load_state_dict(state["reference"])
        if state["setup_done"]:
            self.algorithm.load_state_dict(state["algorithm_state"], self)
        self.generator.set_state(state["generator"])
        self.prompt_generator.set_state(state["prompt_generator"])
        self.rng.bit_generator.state = state["rng"]
        self.step, self.history = state["step"], list(state["history"])
        self.wall_s, self.samples = state["wall_s"], state["samples"]
        self.setup_samples, self._setup_done = state["setup_samples"], state["setup_done"]

    def save(self, path: str | os.PathLike) -> Path:
        """Write :meth:`state_dict` to ``path`` atomically."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        torch.save(self.state_dict(), tmp)
        os.replace(tmp, path)
        return path

    def load(self, path: str | os.PathLike) -> None:
        """Restore a checkpoint written by :meth:`save` (same algorithm and model shape)."""
        self.load_state_dict(torch.load(path, map_location=self.device, weights_only=False))
