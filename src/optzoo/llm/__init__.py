"""The language-model substrate of optzoo's LLM areas (``policy``, ``preference``, ``specdec``,
``scaling``): tiny models, a character tokenizer, verifiable tasks, cached supervised
pretraining, and batched sampling with per-token log-probs.

Everything takes a Hugging Face causal LM and its tokenizer, so a model on disk replaces the
tiny default without other changes; rewards follow TRL's ``reward(prompts, completions)``
convention, so the tasks plug into TRL trainers too.

Modules:
    tokenizer: :func:`char_tokenizer` (``PreTrainedTokenizerFast``).
    models: :class:`TinyLlama`, :func:`tiny_llama`, :func:`load_causal_lm` (local folders
        only), :func:`save_causal_lm`.
    tasks: :class:`Task` interface, :class:`Problem`, :class:`Mixture`.
    arithmetic: :class:`Addition`, :class:`Multiplication`.
    countdown: :class:`Countdown`.
    pretraining: :func:`pretrain` to partial accuracy, cached on disk.
    sampling: :func:`rollout` (KV cache), :func:`token_logprobs`, :func:`greedy_accuracy`.

Example:
    A task, a tiny randomly initialised model, and a rollout of 4 samples per prompt (a
    pretrained model — :func:`pretrain` — answers some of them correctly):

    >>> from optzoo.llm import Addition, char_tokenizer, rollout, tiny_llama
    >>> task = Addition(digits=2)                    # "46+12=" -> "58", exact-match reward
    >>> train, test = task.split(100, 20, seed=0)    # disjoint prompt sets
    >>> tok = char_tokenizer()
    >>> model = tiny_llama(len(tok), hidden_size=32, intermediate_size=64, num_layers=2,
    ...                    num_heads=2)
    >>> r = rollout(model, tok, [p.prompt for p in train[:2]], num_samples=4, max_new_tokens=4,
    ...             seed=0)
    >>> r.completion_ids.shape, r.group.tolist()     # N = 2 prompts x 4 samples
    (torch.Size([8, 4]), [0, 0, 0, 0, 1, 1, 1, 1])
    >>> len(task.reward(r.prompts, r.completions))   # one reward in {0, 1} per row
    8

A GRPO-style step's data, with a pretrained model::

    import torch
    from optzoo.llm import Addition, PretrainConfig, pretrain, rollout

    task = Addition(digits=2)
    lm = pretrain(PretrainConfig(task=task))         # < 1 min on one core, then loaded from cache
    train, test = task.split(1000, 300, seed=0)      # disjoint prompt sets
    batch = [p.prompt for p in train[:8]]
    r = rollout(lm.model, lm.tokenizer, batch, num_samples=8, seed=0,
                max_new_tokens=lm.metrics["max_new_tokens"])
    rewards = torch.tensor(task.reward(r.prompts, r.completions))     # 64 floats in {0, 1}
    logp = r.logprobs_under(lm.model)        # differentiable, N x C; equals r.logprobs here
    with torch.no_grad():
        ref_logp = r.logprobs_under(reference_model)
    # r.completion_mask, r.group: masks and group index for the loss

Replacing the model: ``model, tok = load_causal_lm("/path/to/local/model", device="cuda")``
and pass ``model, tok`` where ``lm.model, lm.tokenizer`` appear above; or fine-tune it on a
task first with ``pretrain(PretrainConfig(task=task, init="/path/to/local/model"))``.

The task modules import neither torch nor transformers; the rest is imported on first use.
"""

from __future__ import annotations

import importlib

from optzoo.llm.arithmetic import Addition, Multiplication
from optzoo.llm.countdown import Countdown
from optzoo.llm.tasks import Grade, Mixture, Problem, Task
from optzoo.llm.tokenizer import ARITHMETIC_ALPHABET, char_tokenizer

_LAZY = {
    "TinyLlama": "models", "tiny_llama": "models", "load_causal_lm": "models",
    "save_causal_lm": "models", "count_parameters": "models", "prepare_tokenizer": "models",
    "Rollout": "sampling", "rollout": "sampling", "token_logprobs": "sampling",
    "greedy_accuracy": "sampling",
    "PretrainConfig": "pretraining", "PretrainedLM": "pretraining", "pretrain": "pretraining",
    "cache_dir": "pretraining",
}

__all__ = ["ARITHMETIC_ALPHABET", "Addition", "Countdown", "Grade", "Mixture",
           "Multiplication", "Problem", "Task", "char_tokenizer", *sorted(_LAZY)]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"optzoo.llm.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'optzoo.llm' has no attribute {name!r}")
