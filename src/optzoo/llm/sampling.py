"""Batched sampling with a KV cache, per-token log-probs and masks, on CPU or CUDA.

:func:`rollout` samples ``num_samples`` completions per prompt from any Hugging Face causal LM
and returns a :class:`Rollout`: token ids, masks, the per-token log-probs of the sampled tokens
under the sampling policy, and the decoded texts, in the layout TRL's GRPO uses (rows grouped
by prompt: rows ``i*G .. i*G+G-1`` are prompt ``i``'s samples).  :func:`token_logprobs`
recomputes per-token log-probs of given completions under any model (the policy with gradients,
a reference model, an older snapshot).

Conventions (those of TRL 1.16's GRPO):

- prompts are left-padded (``prompt_mask`` 0 on the padding) and start with the tokenizer's
  special tokens (BOS for the character tokenizer);
- a completion ends with its first EOS, which is part of it (mask 1); the positions after it
  hold the PAD id with mask 0; a completion that hits ``max_new_tokens`` without EOS is
  ``truncated`` and fully unmasked;
- position ids are ``cumsum(attention_mask) - 1``, so a padded row computes exactly what it
  would alone;
- log-probs are ``log_softmax(logits / temperature)`` of the sampled token, *before* top-k /
  top-p truncation (TRL's ``old_per_token_logps``); with ``top_k=0, top_p=1`` they are the
  exact log-probs of the sampling distribution, and :func:`token_logprobs` on the same model
  reproduces them;
- randomness comes only from a ``torch.Generator`` (``seed`` or ``generator``), never the
  global RNG: a seed reproduces a batch on the same device and software; CPU and CUDA streams
  differ (bitwise equality across devices is not promised).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

import torch

from optzoo.checks import check_int, check_real


@dataclass
class Rollout:
    """Sampled completions of a batch of prompts (``N = len(prompts) * num_samples`` rows).

    Attributes:
        prompts: the prompt text of each row (repeated per sample).
        completions: decoded completion text per row (up to EOS, special tokens skipped).
        prompt_ids: ``N x P`` long, left-padded.
        prompt_mask: ``N x P`` long, 1 on prompt tokens.
        completion_ids: ``N x C`` long, PAD after EOS.
        completion_mask: ``N x C`` long, 1 up to and including EOS.
        logprobs: ``N x C`` float32, log-prob of each sampled token under the sampling policy
            (0 where masked).
        group: ``N`` long, index of the row's prompt in the input list.
        truncated: ``N`` bool, no EOS within ``max_new_tokens``.
    """

    prompts: list[str]
    completions: list[str]
    prompt_ids: torch.Tensor
    prompt_mask: torch.Tensor
    completion_ids: torch.Tensor
    completion_mask: torch.Tensor
    logprobs: torch.Tensor
    group: torch.Tensor
    truncated: torch.Tensor

    @property
    def input_ids(self) -> torch.Tensor:
        """Prompt and completion, ``N x (P + C)``."""
        return torch.cat([self.prompt_ids, self.completion_ids], 1)

    @property
    def attention_mask(self) -> torch.Tensor:
        return torch.cat([self.prompt_mask, self.completion_mask], 1)

    @property
    def lengths(self) -> torch.Tensor:
        """Completion lengths in tokens (EOS included)."""
        return self.completion_mask.sum(1)

    def to(self, device) -> Rollout:
        """A copy with every tensor on ``device``."""
        return Rollout(**{f.name: (v.to(device) if isinstance(v, torch.Tensor) else v)
                          for f in fields(self) for v in [getattr(self, f.name)]})

    def rows(self, index: Sequence[int] | torch.Tensor) -> Rollout:
        """The rows ``index`` (in that order) as a rollout of their own, e.g. a PPO mini-batch;
        ``group`` keeps the original prompt indices."""
        idx = torch.as_tensor(index, dtype=torch.long).reshape(-1)
        if idx.numel() and (idx.min() < 0 or idx.max() >= len(self.prompts)):
            raise IndexError(f"index: rows must lie in [0, {len(self.prompts)}), got "
                             f"{idx.tolist()}")
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name] = (v[idx.to(v.device)] if isinstance(v, torch.Tensor)
                           else [v[i] for i in idx.tolist()])
        return Rollout(**out)

    def logprobs_under(self, model, temperature: float = 1.0,
                       batch_size: int | None = None,
                       chunk_size: int | None = None) -> torch.Tensor:
        """Per-token log-probs of these completions under ``model`` (:func:`token_logprobs`)."""
        return token_logprobs(model, self.prompt_ids, self.prompt_mask, self.completion_ids,
                              self.completion_mask, temperature=temperature,
                              batch_size=batch_size, chunk_size=chunk_size)


def _device_of(model) -> torch.device:
    return next(model.parameters()).device


def _positions(mask: torch.Tensor) -> torch.Tensor:
    return (mask.cumsum(-1) - 1).clamp(min=0)


def _truncate(logits: torch.Tensor, top_k: int, top_p: float) -> torch.Tensor:
    """Logits with everything outside the top-k / nucleus set to -inf."""
    if 0 < top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, order = torch.sort(logits, descending=True, dim=-1)
        probs = torch.softmax(sorted_logits, -1)
        # drop a token when the tokens ranked above it already hold top_p of the mass
        drop = (probs.cumsum(-1) - probs) >= top_p
        logits = logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
    return logits


def _check_sampling(num_samples, max_new_tokens, temperature, top_k, top_p):
    for name, v in (("num_samples", num_samples), ("max_new_tokens", max_new_tokens)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name}: expected an integer >= 1, got {v!r}")
    check_real("temperature", temperature, low=0, low_open=True)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
        raise ValueError(f"top_k: expected an integer >= 0 (0 = off), got {top_k!r}")
    if not isinstance(top_p, int | float) or not 0 < top_p <= 1:
        raise ValueError(f"top_p: expected a number in (0, 1], got {top_p!r}")


@torch.no_grad()
def rollout(model, tokenizer, prompts: Sequence[str], *, num_samples: int = 1,
            max_new_tokens: int = 32, temperature: float = 1.0, top_k: int = 0,
            top_p: float = 1.0, greedy: bool = False, seed: int | None = None,
            generator: torch.Generator | None = None,
            format_prompt: Callable[[str], str] | None = None) -> Rollout:
    """Sample ``num_samples`` completions for each prompt with a KV cache.

    Runs on the model's device.  Rows finished with EOS keep being fed PAD (masked) until every
    row is done or ``max_new_tokens`` is reached, so the batch is one prefill plus at most
    ``max_new_tokens - 1`` single-token forwards.

    Args:
        model: a Hugging Face causal LM (``model(input_ids, attention_mask, position_ids,
            past_key_values, use_cache, logits_to_keep)``).
        tokenizer: its tokenizer (EOS and PAD ids needed, see
            :func:`optzoo.llm.models.prepare_tokenizer`).
        prompts: prompt strings, tokenized with the tokenizer's special tokens.
        num_samples: completions per prompt (GRPO's G).
        max_new_tokens: completion length cap.
        temperature: softmax temperature of sampling and of the returned log-probs.
        top_k: keep the k most likely tokens (0: off).
        top_p: nucleus sampling mass (1: off).
        greedy: arg-max decoding (deterministic; log-probs still at ``temperature``).
        seed: seed of a fresh ``torch.Generator`` on the model's device.
        generator: a ``torch.Generator`` on the model's device (advanced in place); at most
            one of ``seed`` and ``generator``; neither: a nondeterministic draw.
        format_prompt: maps a task prompt to the text the model reads (e.g. a chat template);
            ``Rollout.prompts`` keeps the task prompts, which the rewards parse.

    Returns:
        A :class:`Rollout` on the model's device.

    Example:
        >>> import torch
        >>> from optzoo.llm import Addition, char_tokenizer, rollout, tiny_llama
        >>> tok = char_tokenizer()
        >>> model = tiny_llama(len(tok), hidden_size=32, intermediate_size=64, num_layers=2,
        ...                    num_heads=2)
        >>> r = rollout(model, tok, ["46+12=", "10+21="], num_samples=4, max_new_tokens=4,
        ...             seed=0)
        >>> r.prompt_ids.shape, r.completion_ids.shape, r.logprobs.shape   # TRL's layout
        (torch.Size([8, 7]), torch.Size([8, 4]), torch.Size([8, 4]))
        >>> r.group.tolist(), r.prompts[4]
        ([0, 0, 0, 0, 1, 1, 1, 1], '10+21=')
        >>> rewards = Addition(digits=2).reward(r.prompts, r.completions)   # 8 floats in {0, 1}
        >>> logp = r.logprobs_under(model)           # differentiable; equals r.logprobs here
        >>> logp.requires_grad, torch.allclose(logp, r.logprobs, atol=1e-5)
        (True, True)
    """
    _check_sampling(num_samples, max_new_tokens, temperature, top_k, top_p)
    if isinstance(prompts, str) or not prompts or not all(isinstance(p, str) for p in prompts):
        raise ValueError("prompts: expected a non-empty sequence of strings")
    if seed is not None and generator is not None:
        raise ValueError("seed, generator: pass at most one")
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id
    if eos is None or pad is None:
        raise ValueError("tokenizer: expected EOS and PAD tokens (see prepare_tokenizer)")
    device = _device_of(model)
    if seed is not None:
        generator = torch.Generator(device=device).manual_seed(int(seed))

    rows = [p for p in prompts for _ in range(num_samples)]
    inputs = rows if format_prompt is None else [format_prompt(p) for p in rows]
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    try:
        enc = tokenizer(inputs, return_tensors="pt", padding=True)
    finally:
        tokenizer.padding_side = side
    prompt_ids = enc["input_ids"].to(device)
    prompt_mask = enc["attention_mask"].to(device)
    n = prompt_ids.shape[0]

    from transformers import DynamicCache

    cache = DynamicCache(config=model.config)
    mask = prompt_mask
    pos = _positions(mask)
    out = model(input_ids=prompt_ids, attention_mask=mask, position_ids=pos,
                past_key_values=cache, use_cache=True, logits_to_keep=1)
    next_pos = pos[:, -1:] + 1
    alive = torch.ones(n, dtype=torch.bool, device=device)
    tokens, logps, masks = [], [], []
    for t in range(max_new_tokens):
        logits = out.logits[:, -1].float() / temperature
        logp = torch.log_softmax(logits, -1)
        if greedy:
            tok = logits.argmax(-1)
        else:
            probs = torch.softmax(_truncate(logits, top_k, top_p), -1)
            tok = torch.multinomial(probs, 1, generator=generator).squeeze(1)
        tok = torch.where(alive, tok, torch.full_like(tok, pad))
        tokens.append(tok)
        logps.append(torch.where(alive, logp.gather(1, tok[:, None]).squeeze(1), 0.0))
        masks.append(alive.long())
        alive = alive & (tok != eos)
        if not alive.any() or t == max_new_tokens - 1:
            break
        mask = torch.cat([mask, masks[-1][:, None]], 1)
        out = model(input_ids=tok[:, None], attention_mask=mask, position_ids=next_pos,
                    past_key_values=out.past_key_values, use_cache=True)
        next_pos = next_pos + 1

    completion_ids = torch.stack(tokens, 1)
    completion_mask = torch.stack(masks, 1)
    texts = tokenizer.batch_decode(
        [row[m.bool() & (row != eos)].tolist() for row, m in zip(completion_ids,
                                                                  completion_mask, strict=True)],
        skip_special_tokens=True)
    group = torch.arange(len(prompts), device=device).repeat_interleave(num_samples)
    return Rollout(prompts=rows, completions=texts, prompt_ids=prompt_ids,
                   prompt_mask=prompt_mask, completion_ids=completion_ids,
                   completion_mask=completion_mask, logprobs=torch.stack(logps, 1),
                   group=group, truncated=alive)


def token_logprobs(model, prompt_ids: torch.Tensor, prompt_mask: torch.Tensor,
                   completion_ids: torch.Tensor, completion_mask: torch.Tensor | None = None,
                   *, temperature: float = 1.0, batch_size: int | None = None,
                   chunk_size: int | None = None) -> torch.Tensor:
    """Per-token log-probs ``log softmax(logits / temperature)[token]`` of completions.

    Differentiable (call under ``torch.no_grad()`` for a reference model).  Only the completion
    positions go through the output head.

    With ``chunk_size`` the full-vocabulary logits are never held for the whole batch: the
    decoder's hidden states of the unmasked completion positions go through the output head
    ``chunk_size`` tokens at a time, each chunk's fp32 ``log_softmax`` + gather computed and
    dropped; under autograd each chunk is recomputed in the backward pass
    (``torch.utils.checkpoint``), so the logits held at any moment are one chunk's,
    ``chunk_size x vocab`` floats, instead of ``N x C x vocab`` (the idea of Liger's and
    Unsloth's chunked cross-entropy).  The values equal the unchunked ones up to float
    rounding of the head's matmul.  The model must expose ``get_decoder()`` and
    ``get_output_embeddings()`` (every Hugging Face causal LM does, PEFT-wrapped ones too);
    Gemma-style ``final_logit_softcapping`` is applied, other logit post-processing is not.

    Args:
        model: a Hugging Face causal LM.
        prompt_ids, prompt_mask: ``N x P``, left-padded (as in :class:`Rollout`).
        completion_ids: ``N x C``.
        completion_mask: ``N x C`` (None: all ones); masked positions get log-prob 0.
        temperature: as in :func:`rollout`.
        batch_size: rows per forward (None: all at once), to bound memory.
        chunk_size: completion tokens per output-head chunk (None: the whole batch's logits
            at once, the original path).

    Returns:
        ``N x C`` float32 on the model's device.
    """
    if prompt_ids.shape != prompt_mask.shape or prompt_ids.dim() != 2:
        raise ValueError(f"prompt_mask: expected the shape of prompt_ids "
                         f"{tuple(prompt_ids.shape)} (N x P), got {tuple(prompt_mask.shape)}")
    if completion_ids.dim() != 2 or completion_ids.shape[0] != prompt_ids.shape[0]:
        raise ValueError(f"completion_ids: expected N x C with N = {prompt_ids.shape[0]}, got "
                         f"{tuple(completion_ids.shape)}")
    if completion_mask is None:
        completion_mask = torch.ones_like(completion_ids)
    if completion_mask.shape != completion_ids.shape:
        raise ValueError(f"completion_mask: expected shape {tuple(completion_ids.shape)}, got "
                         f"{tuple(completion_mask.shape)}")
    check_real("temperature", temperature, low=0, low_open=True)
    if batch_size is not None:
        check_int("batch_size", batch_size, low=1)
    if chunk_size is not None:
        check_int("chunk_size", chunk_size, low=1)
    device = _device_of(model)
    n, c = completion_ids.shape
    step = n if batch_size is None else int(batch_size)
    out = []
    for s in range(0, n, step):
        ids = torch.cat([prompt_ids[s:s + step], completion_ids[s:s + step]], 1).to(device)
        mask = torch.cat([prompt_mask[s:s + step], completion_mask[s:s + step]], 1).to(device)
        if chunk_size is not None:
            out.append(_chunked_logprobs(model, ids, mask, c, temperature, int(chunk_size)))
            continue
        # the last C + 1 positions predict the C completion tokens (the final one predicts none)
        logits = model(input_ids=ids, attention_mask=mask, position_ids=_positions(mask),
                       logits_to_keep=c + 1).logits[:, :-1].float() / temperature
        tok = ids[:, -c:]
        lp = logits.gather(-1, tok[..., None]).squeeze(-1) - torch.logsumexp(logits, -1)
        out.append(lp * mask[:, -c:])
    return torch.cat(out, 0)


def _head_logprobs(head, softcap, temperature, hidden: torch.Tensor,
                   tok: torch.Tensor) -> torch.Tensor:
    """log softmax(head(hidden) / T)[tok] for ``T x H`` hidden states (one chunk)."""
    logits = head(hidden).float()
    if softcap:
        logits = torch.tanh(logits / softcap) * softcap
    logits = logits / temperature
    return logits.gather(-1, tok[:, None]).squeeze(-1) - torch.logsumexp(logits, -1)


def _chunked_logprobs(model, ids: torch.Tensor, mask: torch.Tensor, c: int,
                      temperature: float, chunk_size: int) -> torch.Tensor:
    """:func:`token_logprobs` of one row block through the head ``chunk_size`` tokens at a
    time (only unmasked completion positions; see its docstring)."""
    from torch.utils.checkpoint import checkpoint

    decoder, head = model.get_decoder(), model.get_output_embeddings()
    if head is None:
        raise ValueError("model: chunk_size needs get_output_embeddings() (the LM head)")
    softcap = getattr(getattr(model, "config", None), "final_logit_softcapping", None)
    hidden = decoder(input_ids=ids, attention_mask=mask,
                     position_ids=_positions(mask)).last_hidden_state[:, -c - 1:-1]
    keep = mask[:, -c:].bool()
    h, tok = hidden[keep], ids[:, -c:][keep]  # T x H, T: the unmasked completion tokens
    grad = torch.is_grad_enabled() and h.requires_grad
    parts = []
    for s in range(0, h.shape[0], chunk_size):
        args = (head, softcap, temperature, h[s:s + chunk_size], tok[s:s + chunk_size])
        # under autograd, recompute the chunk's logits in backward instead of keeping them
        parts.append(checkpoint(_head_logprobs, *args, use_reentrant=False) if grad
                     else _head_logprobs(*args))
    lp = torch.zeros(keep.shape, dtype=torch.float32, device=ids.device)
    if parts:
        lp = lp.masked_scatter(keep, torch.cat(parts))
    return lp


@torch.no_grad()
def greedy_accuracy(model, tokenizer, task, prompts: Sequence[str], *, max_new_tokens: int = 32,
                    batch_size: int = 256,
                    format_prompt: Callable[[str], str] | None = None) -> float:
    """Fraction of ``prompts`` whose greedy completion ``task`` grades correct (arguments as
    in :func:`rollout`; ``batch_size`` prompts per call)."""
    if not prompts:
        raise ValueError("prompts: expected at least one prompt")
    correct = 0
    for s in range(0, len(prompts), batch_size):
        r = rollout(model, tokenizer, prompts[s:s + batch_size], greedy=True,
                    max_new_tokens=max_new_tokens, format_prompt=format_prompt)
        correct += sum(task.correct(r.prompts, r.completions))
    return correct / len(prompts)
