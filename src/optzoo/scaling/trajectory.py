"""Checkpointed pre-training of a tiny Llama under a learning-rate schedule, with branching: the
controlled runs of Catalan-Tatjer et al., "Training Dynamics Impact Post-Training Quantization
Robustness" (ICLR 2026, Sec. "controlled pre-training"; plainLM / Pythia models there, a
``transformers.LlamaForCausalLM`` from a config here).

:class:`Trainer` holds a model, its AdamW state and the step count.  Batches are a function of
``(seed, step)`` only (fresh :class:`~optzoo.scaling.zipf_ngram.ZipfNGram` samples drawn from
``np.random.default_rng([seed, 1, step])``), so

* :meth:`Trainer.fork` + a WSD schedule from step ``s`` reproduces, bit for bit on one device, an
  uninterrupted WSD run whose cooldown starts at ``s`` (its stable phase *is* the constant-lr
  trunk) — cooldowns of several token budgets branch off one trunk, as in the paper's
  "cooldown started at different points";
* two runs with the same seed and different schedules see the same data in the same order.

The lr of step ``t`` is ``peak_lr · schedule(t)`` (set on every parameter group before the
update); AdamW with β = (0.9, 0.95), decoupled weight decay, gradient clipping at norm 1
(plainLM's defaults).  A run stops with ``ValueError`` on a non-finite loss.

Example:
    >>> from optzoo.llm import TinyLlama
    >>> from optzoo.scaling.lr_schedules import Schedule
    >>> from optzoo.scaling.trajectory import Trainer
    >>> from optzoo.scaling.zipf_ngram import ZipfNGram
    >>> lang = ZipfNGram(vocab_size=16, seq_len=16)
    >>> trunk = Schedule("constant", total_steps=10, warmup_steps=1)
    >>> tr = Trainer(lang, TinyLlama(hidden_size=32, intermediate_size=64, num_layers=1,
    ...                              num_heads=2), peak_lr=3e-3, seed=0, batch_size=4)
    >>> sorted(tr.run(trunk, until=8, checkpoints=[4, 8]))   # {step: state_dict}
    [4, 8]
    >>> cool = tr.fork()                                      # WSD cooldown off the trunk
    >>> _ = cool.run(Schedule.wsd_from(trunk, 8, 2), until=10)
    >>> tr.step, cool.step
    (8, 10)
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterable

import numpy as np
import torch

from optzoo.checks import check_int, check_real
from optzoo.llm.models import TinyLlama, tiny_llama
from optzoo.scaling.lr_schedules import Schedule
from optzoo.scaling.zipf_ngram import ZipfNGram

__all__ = ["Trainer"]

_CHUNK = 256  # training steps whose batches are drawn in one pass


class Trainer:
    """A resumable, forkable language-model training run.

    Args:
        corpus: the synthetic language (its ``vocab_size`` and ``seq_len`` shape the model).
        model: shape of the fresh tiny Llama (``max_position_embeddings`` is set to
            ``corpus.seq_len``), or an existing ``LlamaForCausalLM`` to continue training.
        peak_lr: the lr the schedule multiplies.
        seed: seed of the initialisation and of the batches.
        batch_size: sequences per step.
        weight_decay: AdamW's decoupled weight decay.
        betas: AdamW's β.
        grad_clip: max global gradient norm (None: no clipping).
    """

    def __init__(self, corpus: ZipfNGram, model: TinyLlama | torch.nn.Module, *, peak_lr: float,
                 seed: int = 0, batch_size: int = 32, weight_decay: float = 0.1,
                 betas: tuple[float, float] = (0.9, 0.95), grad_clip: float | None = 1.0):
        if not isinstance(corpus, ZipfNGram):
            raise ValueError(f"corpus: expected a ZipfNGram, got {type(corpus).__name__}")
        check_real("peak_lr", peak_lr, low=0.0, low_open=True)
        check_int("seed", seed, low=0)
        check_int("batch_size", batch_size, low=1)
        check_real("weight_decay", weight_decay, low=0.0)
        if grad_clip is not None:
            check_real("grad_clip", grad_clip, low=0.0, low_open=True)
        self.corpus, self.peak_lr, self.seed = corpus, float(peak_lr), int(seed)
        self.batch_size, self.grad_clip = int(batch_size), grad_clip
        if isinstance(model, TinyLlama):
            shape = {**dataclasses.asdict(model), "max_position_embeddings": corpus.seq_len}
            self.model = tiny_llama(corpus.vocab_size, seed=self.seed, pad_token_id=None,
                                    bos_token_id=None, eos_token_id=0, **shape)
        elif isinstance(model, torch.nn.Module):
            self.model = model
        else:
            raise ValueError(f"model: expected a TinyLlama or a module, got "
                             f"{type(model).__name__}")
        # foreach: one fused update over all tensors (the per-tensor loop dominates at this size)
        self._adamw = {"lr": self.peak_lr, "betas": tuple(betas), "weight_decay": weight_decay,
                       "foreach": True}
        self.optimizer = torch.optim.AdamW(self.model.parameters(), **self._adamw)
        self.step = 0
        self.losses: list[float] = []

    def batch(self, step: int) -> torch.Tensor:
        """The training batch of ``step`` (a function of the seed and the step only)."""
        return self.batches(step, step + 1)[0]

    def batches(self, start: int, stop: int) -> list[torch.Tensor]:
        """The training batches of steps ``start … stop − 1`` (drawn together, equal to
        ``[batch(s) for s in range(start, stop)]``)."""
        return self.corpus.sample_each(self.batch_size, [
            np.random.default_rng([self.seed, 1, s]) for s in range(start, stop)])

    def fork(self) -> Trainer:
        """An independent copy (model, AdamW state, step): train it under another schedule."""
        new = copy.copy(self)
        new.model = copy.deepcopy(self.model)
        new.optimizer = torch.optim.AdamW(new.model.parameters(), **self._adamw)
        new.optimizer.load_state_dict(copy.deepcopy(self.optimizer.state_dict()))
        new.losses = list(self.losses)
        return new

    def run(self, schedule: Schedule, until: int, *, checkpoints: Iterable[int] = (),
            callback: Callable[[int, torch.nn.Module], None] | None = None
            ) -> dict[int, dict[str, torch.Tensor]]:
        """Train from the current step up to step ``until`` under ``schedule``.

        Args:
            schedule: the lr multiplier (:class:`~optzoo.scaling.lr_schedules.Schedule`).
            until: the step count to stop at (<= ``schedule.total_steps``).
            checkpoints: step counts (after that many updates) whose weights are saved; the
                current step counts too if listed.
            callback: called as ``callback(step, model)`` at every checkpoint.

        Returns:
            ``{step: state_dict copy}`` of the checkpoints reached.
        """
        if not isinstance(schedule, Schedule):
            raise ValueError(f"schedule: expected a Schedule, got {type(schedule).__name__}")
        check_int("until", until, low=self.step)
        if until > schedule.total_steps:
            raise ValueError(f"until: expected <= schedule.total_steps="
                             f"{schedule.total_steps}, got {until}")
        wanted = set(int(c) for c in checkpoints)
        saved: dict[int, dict[str, torch.Tensor]] = {}

        def save():
            if self.step in wanted:
                saved[self.step] = {k: v.detach().clone()
                                    for k, v in self.model.state_dict().items()}
                if callback is not None:
                    callback(self.step, self.model)

        save()
        self.model.train()
        ahead: list[torch.Tensor] = []
        while self.step < until:
            lr = self.peak_lr * schedule(self.step)
            for g in self.optimizer.param_groups:
                g["lr"] = lr
            if not ahead:  # batches drawn in chunks: one NumPy pass per chunk, not per step
                ahead = self.batches(self.step, min(until, self.step + _CHUNK))[::-1]
            ids = ahead.pop()
            loss = self.model(input_ids=ids, labels=ids, use_cache=False).loss
            if not torch.isfinite(loss):
                raise ValueError(f"peak_lr: training diverged at step {self.step} "
                                 f"(loss {float(loss)})")
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if self.grad_clip is not None:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip,
                                               foreach=True)
            self.optimizer.step()
            self.losses.append(float(loss.detach()))
            self.step += 1
            save()
        self.model.eval()
        return saved
