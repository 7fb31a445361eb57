"""Supervised pretraining of a policy on task demonstrations, to a *partial* accuracy, cached.

RL from a verifiable reward needs a policy that is sometimes right: a random model never is
(all groups degenerate), a perfect one always is.  :func:`pretrain` trains a model on the
demonstrations of a :class:`~optzoo.llm.tasks.Task` (cross-entropy on the completion tokens and
the EOS; the prompt is context only) and stops at the first evaluation where greedy accuracy on
a held-out set reaches ``target_accuracy`` (or after ``max_steps``).  The result is cached:

- under :func:`cache_dir` ``/llm/pretrain-<hash>/`` (``$OPTZOO_CACHE``, else
  ``$XDG_CACHE_HOME/optzoo``, else ``~/.cache/optzoo``), as a ``save_pretrained`` folder (model,
  tokenizer) plus ``metrics.json`` and ``key.json``;
- keyed by a hash of the config, the device type and the torch / transformers versions, so a
  cached model is what a fresh run on that software would train;
- written atomically (a per-process temporary folder renamed into place) under a file lock, so
  concurrent workers asking for the same model train it once and the others load it.

A second call with the same config loads instead of training.  Training is deterministic for a
seed on one device and thread count (the model's initialisation, the batches and the held-out
set all derive from ``seed``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from optzoo.cache import cache_dir, locked
from optzoo.checks import check_real
from optzoo.llm.arithmetic import Addition
from optzoo.llm.models import TinyLlama, count_parameters, load_causal_lm, save_causal_lm
from optzoo.llm.sampling import greedy_accuracy
from optzoo.llm.tasks import Task
from optzoo.llm.tokenizer import char_tokenizer

PRETRAIN_VERSION = 1  # bump when training changes, so stale cached models are not reused


@dataclass(frozen=True)
class PretrainConfig:
    """What to pretrain and how (every field enters the cache key).

    Args:
        task: the task whose demonstrations are the training data (default: 2-digit
            addition).
        model: shape of the fresh tiny Llama (ignored when ``init`` is given).
        init: a local Hugging Face model folder to fine-tune instead of a fresh tiny model
            (its own tokenizer is used).
        max_steps: optimizer steps at most.
        batch_size: demonstrations per step (fresh ones every step).
        lr: AdamW learning rate after a linear warm-up (then constant).
        warmup_steps: length of the warm-up.
        weight_decay: AdamW weight decay.
        grad_clip: max global gradient norm.
        eval_every: steps between held-out evaluations (greedy decoding).
        eval_size: held-out prompts.
        target_accuracy: stop at the first evaluation whose accuracy is >= this (None: train
            ``max_steps``).
        holdout: never train on a held-out prompt (turn off for tasks with so few distinct
            prompts that the held-out set covers most of them, e.g. 1-digit addition).
        seed: seed of the initialisation, the batches and the held-out set.
    """

    task: Task = field(default_factory=lambda: Addition(digits=2))
    model: TinyLlama = field(default_factory=TinyLlama)
    init: str | None = None
    max_steps: int = 3000
    batch_size: int = 64
    lr: float = 1e-3
    warmup_steps: int = 50
    weight_decay: float = 0.0
    grad_clip: float = 1.0
    eval_every: int = 50
    eval_size: int = 200
    target_accuracy: float | None = 0.4
    holdout: bool = True
    seed: int = 0

    def __post_init__(self):
        if not isinstance(self.task, Task):
            raise ValueError(f"task: expected an optzoo.llm Task, got {self.task!r}")
        if not isinstance(self.model, TinyLlama):
            raise ValueError(f"model: expected a TinyLlama, got {self.model!r}")
        if self.init is not None and not isinstance(self.init, str | os.PathLike):
            raise ValueError(f"init: expected a model folder path or None, got {self.init!r}")
        for name in ("max_steps", "batch_size", "eval_every", "eval_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected an integer >= 1, got {v!r}")
        for name in ("warmup_steps", "seed"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name}: expected an integer >= 0, got {v!r}")
        check_real("lr", self.lr, low=0, low_open=True)
        check_real("grad_clip", self.grad_clip, low=0, low_open=True)
        check_real("weight_decay", self.weight_decay, low=0)
        if self.target_accuracy is not None and not 0 < self.target_accuracy <= 1:
            raise ValueError(f"target_accuracy: expected a number in (0, 1] or None, got "
                             f"{self.target_accuracy!r}")

    def spec(self) -> dict:
        """JSON-able description (the task through :meth:`Task.spec`)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["task"] = self.task.spec()
        d["model"] = dataclasses.asdict(self.model)
        d["init"] = None if self.init is None else str(Path(self.init).resolve())
        return d


@dataclass
class PretrainedLM:
    """A pretrained model, its tokenizer and how it was obtained.

    Attributes:
        model: the causal LM (eval mode) on the requested device.
        tokenizer: its tokenizer.
        metrics: ``steps``, ``accuracy`` (greedy, held-out, at the last evaluation),
            ``history`` (list of ``{step, loss, accuracy}``), ``seconds`` (training wall time),
            ``num_parameters``, ``max_new_tokens`` (longest held-out demonstration + 2),
            ``torch_threads``, ``from_cache``.
        path: the cache folder (None when not cached).
    """

    model: object
    tokenizer: object
    metrics: dict
    path: Path | None = None




def cache_key(config: PretrainConfig, device: str | torch.device = "cpu") -> str:
    """The hash naming the cache folder of ``config`` trained on ``device``."""
    import transformers

    key = {"kind": "pretrain", "version": PRETRAIN_VERSION, "config": config.spec(),
           "device": torch.device(device).type, "torch": torch.__version__,
           "transformers": transformers.__version__}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]


def _batch(tokenizer, problems, device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded prompt+answer+EOS ids, attention mask, and labels (-100 off the answer)."""
    p_ids = tokenizer([p.prompt for p in problems]).input_ids
    a_ids = tokenizer([p.answer for p in problems], add_special_tokens=False).input_ids
    seqs = [p + a + [tokenizer.eos_token_id] for p, a in zip(p_ids, a_ids, strict=True)]
    width = max(map(len, seqs))
    ids = torch.full((len(seqs), width), tokenizer.pad_token_id, dtype=torch.long)
    labels = torch.full_like(ids, -100)
    mask = torch.zeros_like(ids)
    for i, (p, s) in enumerate(zip(p_ids, seqs, strict=True)):
        ids[i, :len(s)] = torch.tensor(s)
        mask[i, :len(s)] = 1
        labels[i, len(p):len(s)] = ids[i, len(p):len(s)]
    return ids.to(device), mask.to(device), labels.to(device)


def supervised_step(model, optimizer, scheduler, ids, mask, labels, grad_clip: float,
                    where: str) -> float:
    """One step of next-token cross-entropy on the ``labels`` positions (−100: context only,
    e.g. the prompt), gradient-norm clipped; returns the loss.  ``where`` names the step in
    the error raised on a non-finite loss."""
    logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                             labels[:, 1:].reshape(-1), ignore_index=-100)
    if not torch.isfinite(loss):
        raise FloatingPointError(f"{where}: non-finite loss (lower lr)")
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    scheduler.step()
    return float(loss.detach())


def _train(config: PretrainConfig, device: torch.device,
           log: Callable[[str], None] | None) -> PretrainedLM:
    if config.init is not None:
        model, tokenizer = load_causal_lm(config.init, device=device)
    else:
        tokenizer = char_tokenizer()
        model = config.model.build(tokenizer, seed=config.seed).to(device)
    task = config.task
    eval_set = task.sample(config.eval_size, np.random.default_rng([config.seed, 2]))
    eval_prompts = [p.prompt for p in eval_set]
    max_new = 2 + max(len(tokenizer(p.answer, add_special_tokens=False).input_ids)
                      for p in eval_set)
    train_rng = np.random.default_rng([config.seed, 1])
    exclude = set(eval_prompts) if config.holdout else set()
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    warm = max(config.warmup_steps, 1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm))
    history, acc, step, losses = [], 0.0, 0, []
    start = time.perf_counter()
    for step in range(1, config.max_steps + 1):
        model.train()
        ids, mask, labels = _batch(tokenizer, task.sample(config.batch_size, train_rng,
                                                          exclude=exclude), device)
        losses.append(supervised_step(model, opt, sched, ids, mask, labels, config.grad_clip,
                                      f"pretrain: step {step}"))
        if step % config.eval_every == 0 or step == config.max_steps:
            model.eval()
            acc = greedy_accuracy(model, tokenizer, task, eval_prompts, max_new_tokens=max_new)
            history.append({"step": step, "loss": float(np.mean(losses)), "accuracy": acc})
            losses = []
            if log is not None:
                log(f"pretrain step {step}: loss {history[-1]['loss']:.3f}, "
                    f"held-out accuracy {acc:.3f}")
            if config.target_accuracy is not None and acc >= config.target_accuracy:
                break
    model.eval()
    metrics = {"steps": step, "accuracy": acc, "history": history,
               "seconds": time.perf_counter() - start,
               "num_parameters": count_parameters(model), "max_new_tokens": max_new,
               "torch_threads": torch.get_num_threads(), "from_cache": False}
    return PretrainedLM(model, tokenizer, metrics)


def pretrain(config: PretrainConfig | None = None, *, device: str | torch.device = "cpu",
             cache: bool = True, cache_root: str | os.PathLike | None = None,
             log: Callable[[str], None] | None = None) -> PretrainedLM:
    """A model pretrained on ``config.task``'s demonstrations to partial accuracy (cached).

    Args:
        config: what to train (default :class:`PretrainConfig`: the 1 M-parameter Llama on
            2-digit addition, stopping at 40 % held-out greedy accuracy).
        device: where to train and where the returned model lives.
        cache: load from / save to the cache (False: always train, write nothing).
        cache_root: cache folder (default :func:`cache_dir`).
        log: called with a progress line at every evaluation.

    Returns:
        A :class:`PretrainedLM`; ``metrics["from_cache"]`` says whether it was loaded.

    Example::

        from optzoo.llm import Addition, PretrainConfig, pretrain

        lm = pretrain(PretrainConfig(task=Addition(digits=2)))  # < 1 min once, then cached
        lm.metrics["accuracy"]    # held-out greedy accuracy at the stop, >= 0.4 by default
        lm.model, lm.tokenizer    # a LlamaForCausalLM and its character tokenizer
    """
    config = PretrainConfig() if config is None else config
    if not isinstance(config, PretrainConfig):
        raise ValueError(f"config: expected a PretrainConfig, got {type(config).__name__}")
    device = torch.device(device)
    if not cache:
        return _train(config, device, log)
    root = Path(cache_root) if cache_root is not None else cache_dir()
    folder = root / "llm" / f"pretrain-{cache_key(config, device)}"
    with locked(folder.with_name(folder.name + ".lock")):
        if not (folder / "metrics.json").is_file():
            # a folder without metrics.json was not written by us (the rename is atomic)
            shutil.rmtree(folder, ignore_errors=True)
            lm = _train(config, device, log)
            tmp = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            save_causal_lm(lm.model, lm.tokenizer, tmp)
            (tmp / "key.json").write_text(json.dumps(
                {"config": config.spec(), "device": device.type}, indent=1, sort_keys=True))
            (tmp / "metrics.json").write_text(json.dumps(lm.metrics, indent=1))
            os.replace(tmp, folder)  # atomic: a killed run never leaves a half-written model
            lm.path = folder
            return lm
    metrics = json.loads((folder / "metrics.json").read_text())
    metrics["from_cache"] = True
    model, tokenizer = load_causal_lm(folder, device=device)
    return PretrainedLM(model, tokenizer, metrics, folder)
