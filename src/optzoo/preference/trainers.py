"""TRL trainers for the preference methods: thin ``DPOTrainer`` subclasses around the pure losses.

Everything TRL does — tokenisation, the ``[chosen; rejected]`` collation with a
``completion_mask``, the reference model (or a PEFT adapter switched off), accelerate, logging,
checkpoints — stays TRL's; a subclass only

* keeps its extra per-pair dataset columns through TRL's column filter and collator
  (``pair_index`` for AuxDPO, ``weight`` for W-DPO), and
* replaces ``_compute_loss`` by: per-token log-probs of the policy and the reference from a
  plain forward (``model(input_ids, attention_mask).logits``), summed over the completion as TRL
  does, fed to the pure loss of :mod:`optzoo.preference`.

The TRL version the equivalence tests run against is pinned (``trl==1.16.0``): ``_compute_loss``
and ``_set_signature_columns_if_needed`` are private.

* :class:`WDPOTrainer` — StepORLM's weighted DPO (:func:`~optzoo.preference.wdpo_loss`); the
  dataset has a ``weight`` column.
* :class:`TIDPOTrainer` — TI-DPO (:func:`~optzoo.preference.ti_dpo_loss`): per batch, the
  gradient attribution of every response token under the current policy, the Gaussian prior,
  the hybrid weights, the sequential KL, and an anchor sampled from the policy for each
  prompt (top-k 50, top-p 0.95, temperature 0.8, ≤ 64 new tokens: the official code's
  settings) and re-scored with gradients.  ``weighting="uniform"`` is the uniform-weight
  ablation; with it, ``alpha=0`` and ``gamma=0`` the loss is TRL's sigmoid DPO.
* :class:`AuxDPOTrainer` — AuxDPO (:func:`~optzoo.preference.auxdpo_loss`) as the official code
  (``Debangshu93/AuxDPO``) trains it: one δ per response of the training set (the pair index
  is collated with the batch), its own parameter group (``aux_lr``, no weight decay), the
  null-space penalty from the reference's per-sample score vectors over the policy's trainable
  parameters.  Deviation: δ's group lives in the trainer's optimizer, so the trainer's
  learning-rate schedule also scales ``aux_lr`` (the official notebook steps δ with a separate
  constant-rate optimizer).
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch
import torch.nn.functional as F
from trl import DPOConfig, DPOTrainer

from optzoo.checks import check_real
from optzoo.preference.auxdpo import AuxDelta, auxdpo_loss, reference_score_vectors
from optzoo.preference.dpo import sequence_logps
from optzoo.preference.tdpo import _wide
from optzoo.preference.ti_dpo import (
    DISTANCES,
    WEIGHT_NORMS,
    align_completions,
    response_terms,
    response_weights,
    ti_dpo_loss,
)
from optzoo.preference.wdpo import NORMALIZATIONS, wdpo_loss

__all__ = ["AuxDPOTrainer", "TIDPOTrainer", "WDPOTrainer"]


class _WithColumns:
    """A collator that lets ``columns`` of the examples through as ``(B,)`` tensors."""

    def __init__(self, base, columns: dict[str, torch.dtype]) -> None:
        self.base, self.columns = base, columns

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        extra = {c: torch.tensor([e[c] for e in examples], dtype=dt)
                 for c, dt in self.columns.items()}
        trimmed = [{k: v for k, v in e.items() if k not in self.columns} for e in examples]
        return {**self.base(trimmed), **extra}


def _per_token_logps(model, inputs) -> tuple[torch.Tensor, torch.Tensor]:
    """log π(token_t | ·) at every shifted position ``(2B, L − 1)`` and the shifted completion
    mask, from a plain forward in at least float32."""
    logits = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"],
                   use_cache=False).logits[:, :-1]
    logp = F.log_softmax(_wide(logits), -1).gather(
        -1, inputs["input_ids"][:, 1:].unsqueeze(-1)).squeeze(-1)
    return logp, inputs["completion_mask"][:, 1:]


class _PairColumnsDPOTrainer(DPOTrainer):
    """Shared plumbing: extra per-pair columns, and the policy / reference sequence log-probs."""

    _columns: dict[str, torch.dtype] = {}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.data_collator = _WithColumns(self.data_collator, self._columns)

    def _set_signature_columns_if_needed(self) -> None:
        super()._set_signature_columns_if_needed()
        self._signature_columns = [*self._signature_columns,
                                   *(c for c in self._columns if c not in
                                     self._signature_columns)]

    def _sequence_logps(self, model, inputs) -> tuple[torch.Tensor, ...]:
        """``(chosen, rejected, ref_chosen, ref_rejected)`` sequence log-probs, each ``(B,)``."""
        logp, mask = _per_token_logps(model, inputs)
        chosen, rejected = sequence_logps(logp, mask).chunk(2)
        if self.precompute_ref_logps:
            return chosen, rejected, inputs["ref_chosen_logps"], inputs["ref_rejected_logps"]
        with torch.no_grad(), self._reference():
            ref_model = self.model if self.ref_model is None else self.ref_model
            ref_logp, _ = _per_token_logps(ref_model, inputs)
        ref_chosen, ref_rejected = sequence_logps(ref_logp, mask).chunk(2)
        return chosen, rejected, ref_chosen, ref_rejected

    def _reference(self):
        """The PEFT case of TRL (``ref_model=None``): the policy with its adapter switched off."""
        if self.ref_model is not None:
            return contextlib.nullcontext()
        from trl.trainer.utils import use_adapter

        unwrapped = self.accelerator.unwrap_model(self.model)
        return use_adapter(unwrapped, adapter_name="ref" if "ref" in getattr(
            unwrapped, "peft_config", {}) else None)

    def _log_metrics(self, metrics: dict[str, torch.Tensor]) -> None:
        mode = "train" if self.model.training else "eval"
        for k, v in metrics.items():
            self._metrics[mode][k].append(
                self.accelerator.gather_for_metrics(v.detach().reshape(1)).mean().item())


class WDPOTrainer(_PairColumnsDPOTrainer):
    """StepORLM's W-DPO: a ``DPOTrainer`` whose dataset carries one ``weight`` ≥ 0 per pair.

    Args (beyond ``DPOTrainer``'s):
        normalize: ``"mean"`` (Σ w·ℓ / n, the printed expectation) or ``"weight_sum"``
            (Σ w·ℓ / Σ w).
        reference_free: drop π_ref (the printed form without a reference; an ablation).
    """

    _columns = {"weight": torch.float32}

    def __init__(self, model, ref_model=None, *, normalize: str = "mean",
                 reference_free: bool = False, **kwargs) -> None:
        if normalize not in NORMALIZATIONS:
            raise ValueError(f"normalize: expected one of {NORMALIZATIONS}, got {normalize!r}")
        train = kwargs.get("train_dataset")
        if train is not None and "weight" not in train.column_names:
            raise ValueError("train_dataset: W-DPO needs a 'weight' column (one weight >= 0 "
                             "per pair)")
        self.normalize, self.reference_free = normalize, bool(reference_free)
        super().__init__(model, ref_model, **kwargs)

    def _compute_loss(self, model, inputs, return_outputs):
        chosen, rejected, ref_c, ref_r = self._sequence_logps(model, inputs)
        if self.reference_free:
            ref_c = ref_r = None
        loss, metrics = wdpo_loss(chosen, rejected, inputs["weight"].to(chosen.dtype), ref_c,
                                  ref_r, beta=self.beta, normalize=self.normalize)
        self._log_metrics(metrics)
        return (loss, None) if return_outputs else loss


class AuxDPOTrainer(_PairColumnsDPOTrainer):
    """AuxDPO on TRL's ``DPOTrainer`` (see the module docstring).

    Args (beyond ``DPOTrainer``'s):
        lambda_null: weight of the null-space penalty (default 1e-4, the released run's).
        lambda_amp: weight of the anti-collapse term (default 1.0, the released run's).
        delta_cap: c of δ = c·tanh(δ_raw).
        aux_lr: learning rate of δ.
    """

    _columns = {"pair_index": torch.long}

    def __init__(self, model, ref_model=None, *, lambda_null: float = 1e-4,
                 lambda_amp: float = 1.0, delta_cap: float = 1.0, aux_lr: float = 5e-3,
                 **kwargs) -> None:
        check_real("lambda_null", lambda_null, low=0)
        check_real("lambda_amp", lambda_amp, low=0)
        check_real("aux_lr", aux_lr, low=0, low_open=True)
        train = kwargs.get("train_dataset")
        if train is None:
            raise ValueError("train_dataset: AuxDPO keeps one δ per training pair; give it")
        if "pair_index" not in train.column_names:
            kwargs["train_dataset"] = train.add_column("pair_index", list(range(len(train))))
        self.lambda_null, self.lambda_amp, self.aux_lr = lambda_null, lambda_amp, aux_lr
        config = kwargs.get("args")
        seed = config.seed if isinstance(config, DPOConfig) else 0
        self.aux = AuxDelta(len(kwargs["train_dataset"]), cap=delta_cap,
                            generator=torch.Generator().manual_seed(seed))
        if lambda_null > 0 and ref_model is None:
            raise ValueError("ref_model: the null-space penalty (lambda_null > 0) takes score "
                             "vectors of a separate frozen reference over the policy's "
                             "trainable parameters; pass ref_model (a copy of the initial "
                             "model) or lambda_null=0")
        super().__init__(model, ref_model, **kwargs)
        self.aux.to(self.accelerator.device)
        # the reference's copies of exactly the policy's trainable parameters, named once
        if self.ref_model is not None:
            ref_names = dict(self.accelerator.unwrap_model(self.ref_model).named_parameters())
            self._score_params = [n for n, p in self.model.named_parameters()
                                  if p.requires_grad and n in ref_names]

    def create_optimizer(self, model=None):
        optimizer = super().create_optimizer(model)
        if not any(p is self.aux.raw for g in optimizer.param_groups for p in g["params"]):
            optimizer.add_param_group({"params": [self.aux.raw], "lr": self.aux_lr,
                                       "weight_decay": 0.0})
        return optimizer

    def _compute_loss(self, model, inputs, return_outputs):
        chosen, rejected, ref_c, ref_r = self._sequence_logps(model, inputs)
        delta_c, delta_r = self.aux(inputs["pair_index"])
        grads_c = grads_r = None
        if self.lambda_null > 0:
            g = reference_score_vectors(self.accelerator.unwrap_model(self.ref_model),
                                        inputs["input_ids"], inputs["attention_mask"],
                                        inputs["completion_mask"], params=self._score_params)
            grads_c, grads_r = g.chunk(2)
        loss, metrics = auxdpo_loss(chosen - ref_c, rejected - ref_r, delta_c, delta_r,
                                    grads_chosen=grads_c, grads_rejected=grads_r, beta=self.beta,
                                    lambda_null=self.lambda_null, lambda_amp=self.lambda_amp)
        self._log_metrics(metrics)
        return (loss, None) if return_outputs else loss



class TIDPOTrainer(_PairColumnsDPOTrainer):
    """TI-DPO on TRL's ``DPOTrainer`` (module docstring; :mod:`optzoo.preference.ti_dpo`).

    Args (beyond ``DPOTrainer``'s; defaults are the paper's Table B12):
        alpha: TDPO2's KL weight α (0.5).
        gamma: the triplet weight γ (0.1; 0 drops the anchor sampling).
        lam: λ of the hybrid weight (0.7).
        sigma_div: σ = T/``sigma_div`` of the prior (4, the paper's; the code uses 8).
        weight_norm: ``"sum_to_T"`` (the fork's), ``"sum_to_1"`` or ``"minmax"``.
        weighting: ``"hybrid"`` or ``"uniform"`` (w ≡ 1, the ablation).
        triplet_margin: α_trp (0.01, the run script's).
        distance: the triplet distance (``"logratio_seq_sq"``, the paper's).
        anchor_max_new_tokens, anchor_top_k, anchor_top_p, anchor_temperature: the anchor
            sampler (the official code's 64 / 50 / 0.95 / 0.8).
    """

    def __init__(self, model, ref_model=None, *, alpha: float = 0.5, gamma: float = 0.1,
                 lam: float = 0.7, sigma_div: float = 4.0, weight_norm: str = "sum_to_T",
                 weighting: str = "hybrid", triplet_margin: float = 0.01,
                 distance: str = "logratio_seq_sq", anchor_max_new_tokens: int = 64,
                 anchor_top_k: int = 50, anchor_top_p: float = 0.95,
                 anchor_temperature: float = 0.8, **kwargs) -> None:
        for name, v in (("alpha", alpha), ("gamma", gamma), ("triplet_margin", triplet_margin)):
            check_real(name, v, low=0)
        check_real("lam", lam, low=0, high=1)
        check_real("sigma_div", sigma_div, low=0, low_open=True)
        if weight_norm not in WEIGHT_NORMS:
            raise ValueError(f"weight_norm: expected one of {WEIGHT_NORMS}, got {weight_norm!r}")
        if weighting not in ("hybrid", "uniform"):
            raise ValueError(f"weighting: expected 'hybrid' or 'uniform', got {weighting!r}")
        if distance not in DISTANCES:
            raise ValueError(f"distance: expected one of {DISTANCES}, got {distance!r}")
        self.alpha, self.gamma, self.lam, self.sigma_div = alpha, gamma, lam, sigma_div
        self.weight_norm, self.weighting, self.triplet_margin = weight_norm, weighting, \
            triplet_margin
        self.distance = distance
        self.anchor = {"max_new_tokens": int(anchor_max_new_tokens), "top_k": int(anchor_top_k),
                       "top_p": float(anchor_top_p), "temperature": float(anchor_temperature)}
        super().__init__(model, ref_model, **kwargs)

    def _ref(self):
        return self.model if self.ref_model is None else self.ref_model

    def _logratios_and_kl(self, model, input_ids, attention_mask, completion_mask):
        """Response-aligned ρ_t, their mask and SeqKL per row."""
        logits = model(input_ids=input_ids, attention_mask=attention_mask,
                       use_cache=False).logits
        with torch.no_grad(), self._reference():
            ref_logits = self._ref()(input_ids=input_ids, attention_mask=attention_mask,
                                     use_cache=False).logits
        return response_terms(logits, ref_logits, input_ids, completion_mask)

    def _weights(self, model, inputs, mask: torch.Tensor) -> torch.Tensor:
        if self.weighting == "uniform":
            return mask.to(torch.float32)
        return response_weights(model, inputs["input_ids"], inputs["attention_mask"],
                                inputs["completion_mask"], lam=self.lam,
                                sigma_div=self.sigma_div, weight_norm=self.weight_norm)

    def _anchors(self, model, inputs) -> tuple[torch.Tensor, torch.Tensor]:
        """Sample y ~ π_θ(· | x) for each pair's prompt and return its ρ_t (with gradients)."""
        ids, att, comp = inputs["input_ids"], inputs["attention_mask"], inputs["completion_mask"]
        b = ids.shape[0] // 2
        prompt_mask = (att.bool() & ~comp.bool())[:b]
        pad = self.processing_class.pad_token_id if hasattr(self.processing_class,
                                                            "pad_token_id") else 0
        prompts, _ = align_completions(ids[:b], prompt_mask.long())
        plen = prompt_mask.sum(1)
        width = prompts.shape[1]
        # left-pad the prompts for generation
        left = torch.full_like(prompts, pad)
        left_mask = torch.zeros_like(prompts)
        for i in range(b):
            n = int(plen[i])
            left[i, width - n:] = prompts[i, :n]
            left_mask[i, width - n:] = 1
        unwrapped = self.accelerator.unwrap_model(model)
        with torch.no_grad():
            out = unwrapped.generate(input_ids=left, attention_mask=left_mask, do_sample=True,
                                     pad_token_id=pad, **self.anchor)
        new = out[:, width:]
        eos = getattr(self.processing_class, "eos_token_id", None)
        keep = torch.ones_like(new, dtype=torch.bool)
        if eos is not None:  # stop each anchor after its first EOS (kept, as TRL keeps it)
            after = (new == eos).long().cumsum(1) - (new == eos).long()
            keep = after == 0
        full = torch.cat([left, new], 1)
        full_att = torch.cat([left_mask, keep.long()], 1)
        full_comp = torch.cat([torch.zeros_like(left_mask), keep.long()], 1)
        return self._logratios_and_kl(model, full, full_att, full_comp)[:2]

    def _compute_loss(self, model, inputs, return_outputs):
        rho, mask, kl = self._logratios_and_kl(model, inputs["input_ids"],
                                               inputs["attention_mask"],
                                               inputs["completion_mask"])
        weights = self._weights(model, inputs, mask).to(rho.dtype)
        (rc, rr), (mc, mr), (wc, wr), (kc, kr) = (x.chunk(2) for x in (rho, mask, weights, kl))
        anchor = anchor_mask = None
        if self.gamma > 0:
            anchor, anchor_mask = self._anchors(model, inputs)
        loss, metrics = ti_dpo_loss(rc, rr, mc, mr, wc, wr, kc, kr, anchor_logratios=anchor,
                                    anchor_mask=anchor_mask, beta=self.beta, alpha=self.alpha,
                                    gamma=self.gamma, triplet_margin=self.triplet_margin,
                                    distance=self.distance)
        self._log_metrics(metrics)
        return (loss, None) if return_outputs else loss
