"""The GRPO-family methods of :mod:`optzoo.policy` inside TRL's ``GRPOTrainer`` (TRL 1.16.0).

Three ``GRPOTrainer`` subclasses with their ``GRPOConfig`` subclasses.  Everything TRL does —
prompts and chat templates, generation (Hugging Face ``generate`` or vLLM), reward functions,
the reference model (or the PEFT adapter switched off), accelerate / DeepSpeed / FSDP,
gradient accumulation, logging and checkpoints — stays TRL's; a subclass adds only the
method's algorithmic part and calls the pure loss of :mod:`optzoo.policy`:

* :class:`OffPolicyGRPOTrainer` — off-policy GRPO (Mroueh et al., ICLR 2026, Algorithm 1,
  :func:`~optzoo.policy.offpolicy_grpo_loss`).  A *training step* k of the paper is one TRL
  generation round (``steps_per_generation`` × ``num_iterations`` micro-steps); its i inner
  steps are TRL's ``num_iterations``.  The sampler α is refreshed at the start of rounds
  0, v, 2v, … (``sync_period`` = v): with vLLM, TRL's own weight sync runs only then (the
  engine keeps α in between); without vLLM, a copy of the *trainable* parameters (a LoRA
  adapter's only, with PEFT) is taken then and swapped into the model for generation (a
  pointer swap, no weight copy).  α's log-probs: the engine's (vLLM's ``logprobs``) or a
  no-grad forward with α's weights; the anchor π_k: TRL's ``old_per_token_logps`` (the policy
  at the start of the round).  Advantages are the paper's whitened ones with α's group
  statistics (:func:`~optzoo.policy.whitened_advantages`) and its zero-variance mask.
* :class:`SPOTrainer` — SPO (Xu & Ding, ICLR 2026): one response per prompt
  (``num_generations=1``), the per-prompt Beta tracker (:class:`~optzoo.policy.SPOValueTracker`),
  prompts drawn ∝ the tracker's priorities (:func:`~optzoo.policy.sample_prompts`), advantage
  A = r − v̂ globally normalised (:func:`~optzoo.policy.spo_advantages`), the PPO-clip loss
  (TRL's own ``_compute_loss``, which equals :func:`~optzoo.policy.grpo_loss`), then, after the
  round's optimizer steps, D and ρ from each prompt's stored response and the a, b update
  (the official ``verl-recipe`` order).  The priors come from ``n0`` samples per training
  prompt of the initial policy.
* :class:`GNIVOTrainer` — GN-IVO (Choi et al., ICLR 2026, Eq. 9,
  :func:`~optzoo.policy.gn_ivo_loss`): groups of K = ``num_generations``; π_old is the policy
  at generation (TRL's ``old_per_token_logps``); steps from the decoded text
  (``steps="line"``), per token or one per response; one prefix length t per group drawn
  once per round and kept over the ``num_iterations`` inner steps.

Method state (the sync counter and α's weights; the tracker, its pending round and the prompt
generator; the prefix generator) is written as ``optzoo_state.pt`` into every TRL checkpoint
and read back by ``trainer.train(resume_from_checkpoint=...)`` (TRL's own pattern for its
adaptive-entropy state).  Metrics go to TRL's logger (``self._metrics``) under ``offpolicy/``,
``spo/`` and ``gn_ivo/``.

Readings and limits (each deliberate):

* The off-policy loss is the package's pure loss; its TRL options are TRL's config fields
  (``epsilon``, ``epsilon_high``, ``beta``, ``loss_type``, ``importance_sampling_level``,
  ``use_bias_correction_kl``).  Defaults that differ from GRPOConfig's, as the paper: ``loss_type=
  "grpo"`` and ``use_bias_correction_kl=False``.  TRL's vLLM importance-sampling correction,
  entropy mask, off-policy sequence mask and entropy bonus are not part of these losses and are
  rejected in the config (:class:`OffPolicyGRPOConfig`, :class:`GNIVOConfig`); SPO keeps TRL's
  loss and so all of TRL's options.  The paper's reference refresh π_ref ← π is TRL's
  ``sync_ref_model=True, ref_model_mixup_alpha=1.0, ref_model_sync_steps=…`` (counted in
  optimizer steps).
* α's log-probs with vLLM are the engine's: even at lag 0 they differ from the trainer's
  forward by precision (bf16 kernels), and that difference enters the loss as the paper's
  window centre c = π_k/α (TRL's truncated importance sampling, ``importance_sampling_ratio``,
  is not applied on top).  In-process, α's log-probs come from the trainer's own forward, so
  c = 1 exactly at lag 0.
* The in-process α swaps the storage of the trainable parameters: it needs them unsharded on
  each process (one device, DDP, or a PEFT adapter); with DeepSpeed ZeRO-3 / FSDP use vLLM.
* With vLLM the engine cannot be checkpointed: after a resume the first round syncs the
  engine and the sync period restarts there.  In-process (no vLLM), α's weights are saved and
  the resumed run continues the schedule exactly.
* A round's rewards and group statistics are TRL's gathered ones (every process sees the
  global batch); SPO's tracker is replicated (keys, rewards, D and stored responses are
  gathered).  The tests run one process.
* SPO: GRPOConfig refuses ``num_generations < 2`` (GRPO needs a group); SPOConfig passes 1
  through that check only (``_OneResponse``).  Prompts are drawn by the trainer at the start of
  each round from the tracker as it is then (the rows of TRL's dataloader, which reads one batch
  ahead, are not used: they only count epochs); the dataset must be map-style.
* GN-IVO needs whole groups in a micro-batch (the softmax is over a group): TRL shuffles and
  splits the generation batch by rows, so the round's tensors are laid out as (groups, K, …)
  while buffered and flattened again in the loss; ``per_device_train_batch_size`` must be a
  multiple of K.  Text prompts only.  GN-IVO's aggregation is its own (mean over groups);
  TRL's ``loss_type`` is not used.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import trl
from accelerate.utils import gather_object
from datasets import IterableDataset
from torch import Tensor
from transformers import TrainerCallback
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR
from trl import GRPOConfig, GRPOTrainer
from trl.trainer.utils import pad

from optzoo.policy.gn_ivo import (
    KL_REDUCTIONS,
    gn_ivo_loss,
    response_step_counts,
    sample_prefix_steps,
    step_ends_from_text,
    step_ids_from_boundaries,
)
from optzoo.policy.grpo import LOSS_TYPES
from optzoo.policy.offpolicy_grpo import (
    offpolicy_grpo_loss,
    whitened_advantages,
    zero_variance_mask,
)
from optzoo.policy.spo import (
    RHO_MODES,
    SPOValueTracker,
    kl_divergence_proxy,
    sample_prompts,
    spo_advantages,
)

STATE_FILE = "optzoo_state.pt"
TRL_PIN = "1.16.0"
STEP_MODES = ("line", "token", "one")

if trl.__version__ != TRL_PIN:  # the hooks below are private methods of GRPOTrainer
    warnings.warn(f"optzoo.policy.trl was written against trl {TRL_PIN} (private GRPOTrainer "
                  f"hooks); found trl {trl.__version__}", stacklevel=2)

__all__ = [
    "GNIVOConfig", "GNIVOTrainer", "OffPolicyGRPOConfig", "OffPolicyGRPOTrainer", "SPOConfig",
    "SPOTrainer", "STATE_FILE",
]


def _reject_trl_loss_options(config: GRPOConfig, method: str) -> None:
    """The options of TRL's ``_compute_loss`` that a replaced loss does not implement."""
    if config.top_entropy_quantile != 1.0:
        raise ValueError(f"top_entropy_quantile: {method}'s loss has no entropy mask; expected "
                         f"1.0, got {config.top_entropy_quantile}")
    if config.off_policy_mask_threshold is not None:
        raise ValueError(f"off_policy_mask_threshold: {method}'s loss has no off-policy sequence "
                         f"mask; expected None, got {config.off_policy_mask_threshold}")
    if config.entropy_coef != 0.0 or config.use_adaptive_entropy:
        raise ValueError(f"entropy_coef / use_adaptive_entropy: {method}'s loss has no entropy "
                         "bonus; expected 0.0 / False")


def _positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}: expected an int >= 1, got {value!r}")


class _MethodTrainer(GRPOTrainer):
    """What the three adapters share: rewards kept from TRL's scoring, a forward that returns
    per-token log-probs, metrics to TRL's logger, and method state in TRL's checkpoints."""

    # ---- method state in checkpoints (TRL's pattern for entropy_ctrl_state.json) ----
    def _method_state(self) -> dict[str, Any]:
        raise NotImplementedError

    def _load_method_state(self, state: dict[str, Any]) -> None:
        raise NotImplementedError

    def _save_checkpoint(self, model, trial):
        super()._save_checkpoint(model, trial)
        if self.args.should_save:
            folder = os.path.join(self._get_output_dir(trial=trial),
                                  f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}")
            torch.save(self._method_state(), os.path.join(folder, STATE_FILE))

    def _load_optimizer_and_scheduler(self, checkpoint):
        super()._load_optimizer_and_scheduler(checkpoint)
        if checkpoint is None:
            return
        path = os.path.join(checkpoint, STATE_FILE)
        if not os.path.exists(path):
            raise FileNotFoundError(f"resume_from_checkpoint: {checkpoint} has no {STATE_FILE} "
                                    f"(not written by {type(self).__name__})")
        self._load_method_state(torch.load(path, map_location="cpu", weights_only=True))

    # ---- rewards: TRL's gathered scores, kept for the method's own advantages ----
    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        self._rewards_per_func = super()._calculate_rewards(inputs, prompts, completions,
                                                            completion_ids_list)
        return self._rewards_per_func

    def _round_rewards(self) -> Tensor:
        """``(B_global,)`` weighted sum of the reward functions of the last scored round (TRL's
        ``rewards``); every completion must have a score."""
        per_func = self._rewards_per_func
        unscorable = torch.isnan(per_func).all(dim=1)
        if bool(unscorable.any()):
            raise ValueError(f"reward_funcs: {int(unscorable.sum())} completions got no score "
                             f"(every reward function returned None); {type(self).__name__} "
                             "needs a reward for every completion")
        weights = self.reward_weights.to(per_func.device).unsqueeze(0)
        return (per_func * weights).nansum(dim=1)

    def _local(self, n_local: int) -> slice:
        """This process's rows of a gathered batch (TRL's ``process_slice``)."""
        i = self.accelerator.process_index
        return slice(i * n_local, (i + 1) * n_local)

    # ---- forwards ----
    def _logps(self, model, prompt_ids, prompt_mask, completion_ids, completion_mask,
               batch_size: int | None = None) -> Tensor:
        """``(B, T)`` per-token log-probs of the completion tokens (TRL's forward)."""
        ids = torch.cat([prompt_ids, completion_ids], dim=1)
        attention = torch.cat([prompt_mask, completion_mask], dim=1)
        logps, _, _ = self._get_per_token_logps_and_entropies(
            model, ids, attention, completion_ids.size(1), batch_size=batch_size)
        return logps

    @staticmethod
    def _loss_mask(inputs) -> Tensor:
        mask = inputs["completion_mask"]
        return mask if "tool_mask" not in inputs else mask * inputs["tool_mask"]

    def _accumulation(self) -> float:
        """TRL's divisor of a per-micro-batch mean in training (none in evaluation)."""
        return float(self.current_gradient_accumulation_steps) if self.model.training else 1.0

    def _log_metrics(self, prefix: str, metrics: dict[str, Tensor | float]) -> None:
        mode = "train" if self.model.training else "eval"
        device = self.accelerator.device
        for key, value in metrics.items():
            t = torch.as_tensor(value, dtype=torch.float32).reshape(1).to(device)
            self._metrics[mode][f"{prefix}/{key}"].append(self.accelerator.gather(t).mean().item())


# ================================================================================================
# Off-policy GRPO
# ================================================================================================


@dataclass
class OffPolicyGRPOConfig(GRPOConfig):
    """``GRPOConfig`` with Algorithm 1's knobs (Mroueh et al., ICLR 2026).

    Args:
        sync_period: v, generation rounds (the paper's training steps) between refreshes of the
            sampler α; 1 is on-policy GRPO with whitened advantages.  The i inner steps per
            round are TRL's ``num_iterations``.
        variance_eps: ε in σ_ε = sqrt(σ² + ε) of the whitened advantages.
        mask_zero_variance: multiply each prompt's loss by 1[σ(x) ≠ 0] (the paper's mask).
        renormalize_mask: masked prompts also leave the loss's normaliser
            (:func:`~optzoo.policy.offpolicy_grpo_loss`).
        loss_type: aggregation, one of ``grpo`` (default here: E_x E_y of the objective),
            ``bnpo``, ``dr_grpo``, ``dapo``.
        use_bias_correction_kl: multiply the k3 KL by ρ (default here ``False``: the TRL code
            the paper modified had no correction).
    """

    sync_period: int = field(default=1, metadata={"help": "v: rounds between sampler syncs."})
    variance_eps: float = field(default=1e-4, metadata={"help": "ε of sqrt(σ² + ε)."})
    mask_zero_variance: bool = field(default=True, metadata={"help": "the 1[σ≠0] mask."})
    renormalize_mask: bool = field(default=False, metadata={"help": "masked prompts leave the "
                                                                     "normaliser."})
    loss_type: str = field(default="grpo", metadata={"help": "grpo, bnpo, dr_grpo or dapo."})
    use_bias_correction_kl: bool = field(default=False, metadata={"help": "KL times ρ."})

    def __post_init__(self):
        super().__post_init__()
        _positive_int("sync_period", self.sync_period)
        if not self.variance_eps > 0.0:
            raise ValueError(f"variance_eps: expected > 0, got {self.variance_eps}")
        if self.loss_type not in LOSS_TYPES:
            raise ValueError(f"loss_type: expected one of {LOSS_TYPES}, got {self.loss_type!r}")
        if self.importance_sampling_level not in ("token", "sequence"):
            raise ValueError(f"importance_sampling_level: expected 'token' or 'sequence', got "
                             f"{self.importance_sampling_level!r}")
        _reject_trl_loss_options(self, "off-policy GRPO")
        if self.sync_period > 1 and self.use_vllm and self.vllm_enable_sleep_mode:
            # a sleeping colocated engine drops its weights after each generation and TRL
            # reloads the current ones before the next: it cannot keep a lagged α
            raise ValueError("vllm_enable_sleep_mode: the engine cannot hold the lagged sampler "
                             f"(sync_period = {self.sync_period}); expected False")


class OffPolicyGRPOTrainer(_MethodTrainer):
    """``GRPOTrainer`` running off-policy GRPO (see the module docstring).

    Same arguments as ``trl.GRPOTrainer``; ``args`` is an :class:`OffPolicyGRPOConfig`.

    Attributes:
        rounds: generation rounds done (the paper's k).
        last_sync: round of the last sampler refresh; the lag of round k is k − last_sync.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not isinstance(self.args, OffPolicyGRPOConfig):
            raise ValueError(f"args: expected an OffPolicyGRPOConfig, got "
                             f"{type(self.args).__name__}")
        self.rounds = 0
        self.last_sync: int | None = None
        self._sampler: list[Tensor] | None = None  # α's trainable weights (in-process, v > 1)
        self._engine_synced = False  # vLLM holds this process's weights since start?
        self._lag = 0

    def _trainable(self) -> list[Tensor]:
        model = self.accelerator.unwrap_model(self.model)
        return [p for p in model.parameters() if p.requires_grad]

    @contextlib.contextmanager
    def _sampler_weights(self) -> Iterator[None]:
        """The model holds α's weights inside the block (a swap of the parameters' storage)."""
        params = self._trainable()
        if self._sampler is None or len(self._sampler) != len(params):
            raise RuntimeError("the sampler snapshot does not match the trainable parameters")

        def swap():
            for j, p in enumerate(params):
                p.data, self._sampler[j] = self._sampler[j], p.data

        swap()
        try:
            yield
        finally:
            swap()

    def _generate(self, prompts):
        if self.model.training and self._lag > 0 and not self.use_vllm:
            with self._sampler_weights():
                return super()._generate(prompts)
        return super()._generate(prompts)

    def _generate_and_score_completions(self, inputs):
        if not self.model.training:
            return super()._generate_and_score_completions(inputs)  # evaluation: TRL's GRPO
        v = self.args.sync_period
        k = self.rounds
        sync = (self.last_sync is None or k - self.last_sync >= v
                or (self.use_vllm and not self._engine_synced))
        if sync:
            self.last_sync = k
            self._engine_synced = True
            if not self.use_vllm and v > 1:
                self._sampler = [p.detach().clone() for p in self._trainable()]
        elif self.use_vllm:
            # TRL syncs vLLM whenever the optimizer step changed; between syncs the engine
            # must keep α, so mark this step as loaded
            self._last_loaded_step = self.state.global_step
        self._lag = k - self.last_sync
        output = super()._generate_and_score_completions(inputs)
        self.rounds += 1

        group = self.num_generations
        rewards = self._round_rewards()
        local = self._local(len(inputs))
        adv = whitened_advantages(rewards, group, eps=self.args.variance_eps)[local]
        keep = zero_variance_mask(rewards, group)
        output["advantages"] = adv.to(output["advantages"])
        output["group_mask"] = keep[local].to(adv)
        if self._lag > 0 and not self.use_vllm:
            with torch.no_grad(), self._sampler_weights():
                output["sampler_per_token_logps"] = self._logps(
                    self.model, output["prompt_ids"], output["prompt_mask"],
                    output["completion_ids"], output["completion_mask"],
                    batch_size=self.args.per_device_train_batch_size)
        self._log_metrics("offpolicy", {
            "lag": float(self._lag),
            "degenerate_frac": 1.0 - keep.view(-1, group)[:, 0].mean().item(),
        })
        return output

    def _compute_loss(self, model, inputs):
        mask = self._loss_mask(inputs)
        logp = self._logps(model, inputs["prompt_ids"], inputs["prompt_mask"],
                           inputs["completion_ids"], inputs["completion_mask"])
        anchor = inputs.get("old_per_token_logps")
        anchor = logp.detach() if anchor is None else anchor  # the round is one optimizer step
        sampler = inputs.get("sampler_per_token_logps")
        if sampler is None:
            sampler = inputs.get("sampling_per_token_logps")  # the engine's (vLLM) log-probs
        if sampler is None:
            sampler = anchor  # lag 0 in-process: α = π_k
        else:
            sampler = torch.where(torch.isnan(sampler), anchor, sampler)  # unscored by vLLM
        items = None
        if self.loss_type == "dapo":  # TRL's normaliser: the tokens of one accumulation window
            items = inputs["num_items_in_batch"].clamp(min=1.0) / self.accelerator.num_processes
            if self.model.training:
                items = items * self.current_gradient_accumulation_steps
                items = items / self.args.steps_per_generation
        args = self.args
        loss, metrics = offpolicy_grpo_loss(
            logp, sampler, anchor, inputs["advantages"], mask,
            group_mask=inputs["group_mask"] if args.mask_zero_variance else None,
            ref_logp=inputs.get("ref_per_token_logps"), beta=self.beta,
            epsilon=self.epsilon_low, epsilon_high=self.epsilon_high, loss_type=self.loss_type,
            importance_sampling_level=self.importance_sampling_level,
            use_bias_correction_kl=args.use_bias_correction_kl,
            max_completion_length=self.max_completion_length, num_items_in_batch=items,
            renormalize_mask=args.renormalize_mask)
        self._log_metrics("offpolicy", {"loss": loss.detach(), **metrics})
        return loss if self.loss_type == "dapo" else loss / self._accumulation()

    def _method_state(self):
        sampler = None if self._sampler is None else [t.detach().cpu() for t in self._sampler]
        return {"rounds": self.rounds, "last_sync": self.last_sync, "sampler": sampler,
                "sync_period": self.args.sync_period}

    def _load_method_state(self, state):
        if state["sync_period"] != self.args.sync_period:
            raise ValueError(f"resume_from_checkpoint: the checkpoint's sync_period is "
                             f"{state['sync_period']}, the config's {self.args.sync_period}")
        self.rounds, self.last_sync = state["rounds"], state["last_sync"]
        if state["sampler"] is not None:
            params = self._trainable()
            self._sampler = [t.to(device=p.device, dtype=p.dtype)
                             for t, p in zip(state["sampler"], params, strict=True)]


# ================================================================================================
# SPO
# ================================================================================================


class _OneResponse(int):
    """The integer 1 that passes GRPOConfig's ``num_generations < 2`` check (GRPO's group
    baseline needs two; SPO's baseline is the tracker, so one response per prompt is the
    method).  Used only while ``GRPOConfig.__post_init__`` runs."""

    def __lt__(self, other):
        return False if other == 2 else int(self) < other


@dataclass
class SPOConfig(GRPOConfig):
    """``GRPOConfig`` with SPO's knobs (Xu & Ding, ICLR 2026; the ``verl-recipe`` constants).

    Args:
        num_generations: must be 1 (one response per prompt; the default here).
        n0: offline samples per training prompt for the priors (0: a = b = ½; the recipe's 8).
        rho_min, rho_max, d_half: the tracker's KL-adaptive forgetting (the code: ρ_max 0.96,
            D_half 0.06; ρ_min its ``clip_lower``).
        rho_mode: ``"kl"`` or ``"constant"`` (ρ = ``rho_constant``).
        sampling: ``"prioritised"`` (w ∝ sqrt(v̂(1 − v̂))/N_eff^γ + ``weight_eps``) or
            ``"uniform"``.
        gamma, weight_eps: the priority's exponent γ (the code: 0) and floor (0.05).
        baseline: ``"tracker"`` (A = r − v̂) or ``"none"`` (REINFORCE with normalisation).
        normalize_advantages: global normalisation (A − mean)/(std + 1e-8) over the round.
        loss_type: default here ``"bnpo"``, verl's token mean.

    The recipe's PPO mini-batches are TRL's ``steps_per_generation`` / ``gradient_accumulation
    _steps`` optimizer steps per round; its dual clip is ``delta``; its clip-higher
    ``epsilon_high``.
    """

    num_generations: int | None = field(default=1, metadata={"help": "1: SPO is single-stream."})
    n0: int = field(default=8, metadata={"help": "offline samples per prompt for the priors."})
    rho_min: float = field(default=0.875, metadata={"help": "lower clip of ρ."})
    rho_max: float = field(default=0.96, metadata={"help": "upper clip of ρ."})
    d_half: float = field(default=0.06, metadata={"help": "divergence halving the evidence."})
    rho_mode: str = field(default="kl", metadata={"help": "'kl' or 'constant'."})
    rho_constant: float = field(default=0.9, metadata={"help": "ρ of the constant mode."})
    sampling: str = field(default="prioritised", metadata={"help": "'prioritised' or 'uniform'."})
    gamma: float = field(default=0.0, metadata={"help": "N_eff exponent of the priority."})
    weight_eps: float = field(default=0.05, metadata={"help": "priority floor."})
    baseline: str = field(default="tracker", metadata={"help": "'tracker' or 'none'."})
    normalize_advantages: bool = field(default=True, metadata={"help": "global normalisation."})
    loss_type: str = field(default="bnpo", metadata={"help": "TRL's aggregation."})

    def __post_init__(self):
        if self.num_generations != 1:
            raise ValueError(f"num_generations: SPO draws one response per prompt; expected 1, "
                             f"got {self.num_generations!r}")
        if self.num_generations_eval not in (None, 1):
            raise ValueError(f"num_generations_eval: expected None or 1, got "
                             f"{self.num_generations_eval!r}")
        self.num_generations = _OneResponse(1)
        try:
            super().__post_init__()
        finally:
            self.num_generations = 1
        if isinstance(self.n0, bool) or not isinstance(self.n0, int) or self.n0 < 0:
            raise ValueError(f"n0: expected an int >= 0, got {self.n0!r}")
        if self.rho_mode not in RHO_MODES:
            raise ValueError(f"rho_mode: expected one of {RHO_MODES}, got {self.rho_mode!r}")
        if self.sampling not in ("prioritised", "uniform"):
            raise ValueError(f"sampling: expected 'prioritised' or 'uniform', got "
                             f"{self.sampling!r}")
        if self.baseline not in ("tracker", "none"):
            raise ValueError(f"baseline: expected 'tracker' or 'none', got {self.baseline!r}")
        if self.gamma < 0.0 or self.weight_eps < 0.0:
            raise ValueError(f"gamma and weight_eps: expected >= 0, got {self.gamma}, "
                             f"{self.weight_eps}")
        SPOValueTracker(rho_min=self.rho_min, rho_max=self.rho_max, d_half=self.d_half,
                        rho_mode=self.rho_mode, rho_constant=self.rho_constant)  # validates


class _FinishRound(TrainerCallback):
    """After the optimizer step that ends a round, update the tracker (D is measured on the
    policy after the round's update, before any checkpoint is written)."""

    def __init__(self, trainer: SPOTrainer) -> None:
        self.trainer = trainer

    def on_step_end(self, args, state, control, **kwargs):
        t = self.trainer
        if t._pending is not None and t._step % t._generate_every == 0:
            t._finish_round()
        return control


class SPOTrainer(_MethodTrainer):
    """``GRPOTrainer`` running SPO (see the module docstring).

    Same arguments as ``trl.GRPOTrainer``; ``args`` is an :class:`SPOConfig`; the tracker's
    keys are the row indices of ``train_dataset`` (map-style).

    Attributes:
        tracker: the :class:`~optzoo.policy.SPOValueTracker` (saved in checkpoints).
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        cfg = self.args
        if not isinstance(cfg, SPOConfig):
            raise ValueError(f"args: expected an SPOConfig, got {type(cfg).__name__}")
        data = self.train_dataset
        if isinstance(data, (IterableDataset, torch.utils.data.IterableDataset)) or \
                not hasattr(data, "__getitem__") or not hasattr(data, "__len__"):
            raise ValueError("train_dataset: SPO draws prompts by row index; expected a map-style "
                             "Dataset")
        self.tracker = SPOValueTracker(rho_min=cfg.rho_min, rho_max=cfg.rho_max,
                                       d_half=cfg.d_half, rho_mode=cfg.rho_mode,
                                       rho_constant=cfg.rho_constant)
        self.prompt_generator = torch.Generator().manual_seed(cfg.seed)
        self._pending: dict[str, Any] | None = None
        self._generate_every = cfg.steps_per_generation * self.num_iterations
        self.add_callback(_FinishRound(self))

    # ---- the priors: n0 samples per training prompt from the initial policy ----
    def _initialise_tracker(self) -> None:
        n, n0 = len(self.train_dataset), self.args.n0
        if n0 == 0:
            for key in range(n):
                self.tracker.initialize(key)
            return
        world, rank = self.accelerator.num_processes, self.accelerator.process_index
        keys = list(range(n)) + [0] * (-n % world)  # equal shares; the padding is dropped
        share = len(keys) // world
        mine = keys[rank * share:(rank + 1) * share]
        per_call = max(1, self.args.per_device_train_batch_size * self.args.steps_per_generation
                       // n0)
        wins: dict[int, float] = {}
        for start in range(0, share, per_call):
            chunk = mine[start:start + per_call]
            rows = [self.train_dataset[k] for k in chunk for _ in range(n0)]
            prompts = [row["prompt"] for row in rows]
            _, completion_ids, _, completions, *_ = self._generate(prompts)
            self._calculate_rewards(rows, prompts, completions, completion_ids)
            rewards = self._round_rewards().cpu().double()
            if bool(((rewards < 0) | (rewards > 1)).any()):
                raise ValueError("reward_funcs: SPO's Beta tracker needs rewards in [0, 1] "
                                 f"(successes), got values in [{rewards.min()}, {rewards.max()}]")
            every = gather_object(chunk)  # rank order, as the gathered rewards
            for key, r in zip(every, rewards.view(len(every), n0).sum(1).tolist(), strict=True):
                wins.setdefault(key, r)
        for key in range(n):
            self.tracker.initialize(key, wins[key], n0)

    def _draw(self) -> list[int]:
        """The round's prompts (all processes draw the same ones: same generator, same tracker)."""
        keys = list(range(len(self.train_dataset)))
        if self.args.sampling == "uniform":
            weights = torch.ones(len(keys), dtype=torch.float64)
        else:
            weights = self.tracker.sampling_weights(keys, gamma=self.args.gamma,
                                                    eps=self.args.weight_eps)
        return sample_prompts(weights, self.args.generation_batch_size,
                              generator=self.prompt_generator).tolist()

    def _generate_and_score_completions(self, inputs):
        if not self.model.training:
            return super()._generate_and_score_completions(inputs)
        if self._pending is not None:  # a round that did not end on an optimizer step
            self._finish_round()
        if len(self.tracker) == 0:
            self._initialise_tracker()
        keys = self._draw()
        local = self._local(len(inputs))
        inputs = [self.train_dataset[k] for k in keys[local]]
        output = super()._generate_and_score_completions(inputs)
        rewards = self._round_rewards().cpu().double()
        if bool(((rewards < 0) | (rewards > 1)).any()):
            raise ValueError("reward_funcs: SPO's Beta tracker needs rewards in [0, 1], got "
                             f"values in [{rewards.min()}, {rewards.max()}]")
        values = (self.tracker.values(keys) if self.args.baseline == "tracker"
                  else torch.zeros(len(keys), dtype=torch.float64))
        raw = rewards - values
        adv = spo_advantages(rewards, values) if self.args.normalize_advantages else raw
        output["advantages"] = adv[local].to(output["advantages"])
        self._pending = {
            "keys": keys, "rewards": rewards,
            **{name: output[name].detach().cpu() for name in
               ("prompt_ids", "prompt_mask", "completion_ids", "completion_mask")},
        }
        self._log_metrics("spo", {
            "value_mean": values.mean().item(),
            "advantage_var": raw.var().item() if len(keys) > 1 else 0.0,
            "degenerate_frac": (adv.abs() < 1e-6).double().mean().item(),
        })
        return output

    def _score_rows(self, rows: Sequence[tuple[Tensor, Tensor]]) -> list[Tensor]:
        """Per-token log-probs under the current policy of (prompt ids, completion ids) rows."""
        if not rows:
            return []
        device = self.accelerator.device
        pad_id = self._tokenizer.pad_token_id
        prompt_ids = pad([p for p, _ in rows], padding_value=pad_id, padding_side="left")
        prompt_mask = pad([torch.ones_like(p) for p, _ in rows], padding_value=0,
                          padding_side="left")
        completion_ids = pad([c for _, c in rows], padding_value=pad_id, padding_side="right")
        completion_mask = pad([torch.ones_like(c) for _, c in rows], padding_value=0,
                              padding_side="right")
        with torch.no_grad():
            logps = self._logps(self.model, prompt_ids.to(device), prompt_mask.to(device),
                                completion_ids.to(device), completion_mask.to(device),
                                batch_size=self.args.per_device_train_batch_size).cpu()
        return [logps[j, :c.numel()] for j, (_, c) in enumerate(rows)]

    def _finish_round(self) -> None:
        """D from each prompt's stored response under the updated policy, ρ, the a, b update,
        then this round's responses stored with their log-probs under the updated policy."""
        p, self._pending = self._pending, None
        keys = p["keys"]
        n_local = p["completion_ids"].shape[0]
        local_keys = keys[self._local(n_local)]
        pm, cm = p["prompt_mask"].bool(), p["completion_mask"].bool()
        fresh = [(p["prompt_ids"][j][pm[j]], p["completion_ids"][j][cm[j]])
                 for j in range(n_local)]
        stored = [self.tracker.stored_response(k) for k in local_keys]
        old_rows = [(s[0], s[1]) for s in stored if s is not None]
        now = self._score_rows(old_rows + fresh)
        d_local = torch.zeros(n_local, dtype=torch.float64)
        it = iter(now[:len(old_rows)])
        for j, s in enumerate(stored):
            if s is not None:
                lp = next(it)
                d_local[j] = kl_divergence_proxy(s[2].unsqueeze(0), lp.unsqueeze(0),
                                                 torch.ones(1, lp.numel())).double().item()
        d = self.accelerator.gather(d_local.to(self.accelerator.device)).cpu()
        rho = self.tracker.rho(d)
        self.tracker.update(keys, p["rewards"], rho)
        responses = gather_object([(k, prompt, comp, lp) for k, (prompt, comp), lp in
                                   zip(local_keys, fresh, now[len(old_rows):], strict=True)])
        for key, prompt, comp, lp in responses:  # batch order: a repeated prompt keeps its last
            self.tracker.store_response(key, (prompt, comp, lp))
        self._log_metrics("spo", {"rho_mean": rho.mean().item(),
                                  "divergence_mean": d.mean().item()})

    def _method_state(self):
        return {"tracker": self.tracker.state_dict(), "pending": self._pending,
                "generator": self.prompt_generator.get_state()}

    def _load_method_state(self, state):
        self.tracker.load_state_dict(state["tracker"])
        self._pending = state["pending"]
        self.prompt_generator.set_state(state["generator"])


# ================================================================================================
# GN-IVO
# ================================================================================================


@dataclass
class GNIVOConfig(GRPOConfig):
    """``GRPOConfig`` with GN-IVO's knobs (Choi et al., ICLR 2026, Eq. 9).

    Args:
        alpha: temperature α of the target softmax(R/α) (the paper's 0.2).
        steps: ``"line"`` (a step ends where the decoded text completes ``step_separator``, and
            at the end), ``"token"`` (a step per token) or ``"one"`` (the whole response).
        step_separator: the text that ends a reasoning step (default a newline).
        num_t: prefix lengths drawn per group and round (Eq. 9: 1); ``None``: every t.
        normalize_weights: w = softmax(R/α) (the experiments) or exp(R/α) (the theory).
        kl_reduction: ``"token_mean"`` or ``"response_sum"`` of β·k3-KL.
        beta: KL coefficient to the initial model (default here 0.04, the brief's).
        num_iterations: inner steps per round (default here 2: at θ = θ_old the first step is
            REINFORCE-like, prefix credit needs a second).
    """

    alpha: float = field(default=0.2, metadata={"help": "temperature of exp(R/α)."})
    steps: str = field(default="line", metadata={"help": "'line', 'token' or 'one'."})
    step_separator: str = field(default="\n", metadata={"help": "text ending a step."})
    num_t: int | None = field(default=1, metadata={"help": "prefix lengths per group; None: all."})
    normalize_weights: bool = field(default=True, metadata={"help": "softmax(R/α) weights."})
    kl_reduction: str = field(default="token_mean", metadata={"help": "KL aggregation."})
    beta: float = field(default=0.04, metadata={"help": "KL coefficient."})
    num_iterations: int = field(default=2, metadata={"help": "inner steps per round."})

    def __post_init__(self):
        super().__post_init__()
        if not self.alpha > 0.0:
            raise ValueError(f"alpha: expected > 0, got {self.alpha}")
        if self.steps not in STEP_MODES:
            raise ValueError(f"steps: expected one of {STEP_MODES}, got {self.steps!r}")
        if not isinstance(self.step_separator, str) or not self.step_separator:
            raise ValueError(f"step_separator: expected a non-empty string, got "
                             f"{self.step_separator!r}")
        if self.num_t is not None:
            _positive_int("num_t", self.num_t)
        if self.kl_reduction not in KL_REDUCTIONS:
            raise ValueError(f"kl_reduction: expected one of {KL_REDUCTIONS}, got "
                             f"{self.kl_reduction!r}")
        if self.per_device_train_batch_size % self.num_generations:
            raise ValueError(f"per_device_train_batch_size: GN-IVO's softmax is over a group, so a "
                             f"micro-batch must hold whole groups; expected a multiple of "
                             f"num_generations = {self.num_generations}, got "
                             f"{self.per_device_train_batch_size}")
        _reject_trl_loss_options(self, "GN-IVO")


class GNIVOTrainer(_MethodTrainer):
    """``GRPOTrainer`` running GN-IVO (see the module docstring).

    Same arguments as ``trl.GRPOTrainer``; ``args`` is a :class:`GNIVOConfig`.

    Attributes:
        prefix_generator: the generator of the prefix lengths t (saved in checkpoints).
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not isinstance(self.args, GNIVOConfig):
            raise ValueError(f"args: expected a GNIVOConfig, got {type(self.args).__name__}")
        self.prefix_generator = torch.Generator().manual_seed(self.args.seed)

    def _step_ids(self, completion_ids: Tensor, mask: Tensor) -> Tensor | None:
        if self.args.steps == "token":
            return None
        if self.args.steps == "one":
            return torch.zeros_like(mask)
        ends = step_ends_from_text(self.processing_class, completion_ids, mask,
                                   self.args.step_separator)
        return step_ids_from_boundaries(ends, mask)

    def _generate_and_score_completions(self, inputs):
        output = super()._generate_and_score_completions(inputs)
        group = self.num_generations if self.model.training else self.num_generations_eval
        rewards = self._round_rewards()[self._local(len(inputs))]
        mask = self._loss_mask(output)
        step_ids = self._step_ids(output["completion_ids"], mask)
        output["rewards"] = rewards.to(output["advantages"])
        if step_ids is not None:
            output["step_ids"] = step_ids
        if self.args.num_t is not None:
            counts = response_step_counts(step_ids, mask).cpu()
            output["prefix_steps"] = sample_prefix_steps(
                counts, group, self.args.num_t, generator=self.prefix_generator).to(mask.device)
        if self.model.training:
            # (groups, K, ...) so that TRL's row shuffle and split keep whole groups together
            rows = output["completion_ids"].shape[0]
            for key, value in output.items():
                if isinstance(value, Tensor) and value.dim() >= 1 and value.shape[0] == rows \
                        and key != "prefix_steps":
                    output[key] = value.view(rows // group, group, *value.shape[1:])
        return output

    def _compute_loss(self, model, inputs):
        if inputs["completion_ids"].dim() == 3:  # flatten the buffered (groups, K, ...) layout
            inputs = {k: v.flatten(0, 1) if isinstance(v, Tensor) and v.dim() >= 2
                      and k != "prefix_steps" else v for k, v in inputs.items()}
        group = self.num_generations if self.model.training else self.num_generations_eval
        mask = self._loss_mask(inputs)
        logp = self._logps(model, inputs["prompt_ids"], inputs["prompt_mask"],
                           inputs["completion_ids"], inputs["completion_mask"])
        old = inputs.get("old_per_token_logps")
        old = logp.detach() if old is None else old  # one optimizer step per round: θ_old = θ
        args = self.args
        loss, metrics = gn_ivo_loss(
            logp, old, inputs["rewards"], mask, group, alpha=args.alpha,
            step_ids=inputs.get("step_ids"), prefix_steps=inputs.get("prefix_steps"),
            normalize_weights=args.normalize_weights, ref_logp=inputs.get("ref_per_token_logps"),
            beta=self.beta, kl_reduction=args.kl_reduction)
        self._log_metrics("gn_ivo", {"loss": loss.detach(), **metrics})
        return loss / self._accumulation()

    def _method_state(self):
        return {"generator": self.prefix_generator.get_state()}

    def _load_method_state(self, state):
        self.prefix_generator.set_state(state["generator"])
