"""Shared pieces of the preference area's small-scale reproductions: a tiny word-level Llama
and TRL's right-padded batch layout."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch.nn.utils.rnn import pad_sequence

__all__ = ["pad_right", "trl_layout", "word_llama"]


def word_llama(vocab_size: int, *, hidden: int, layers: int, max_positions: int, seed: int,
               eager: bool = False, pad: int = 0, bos: int = 1, eos: int = 2):
    """A randomly initialised ``LlamaForCausalLM`` over a word-level vocabulary (2 heads, MLP
    width 4·``hidden``), seeded; ``eager`` attention when the attention weights are needed."""
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=vocab_size, hidden_size=hidden, intermediate_size=4 * hidden,
                      num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=2,
                      max_position_embeddings=max_positions, pad_token_id=pad,
                      bos_token_id=bos, eos_token_id=eos)
    if eager:
        cfg._attn_implementation = "eager"
    torch.manual_seed(seed)
    return LlamaForCausalLM(cfg)


def pad_right(rows: Sequence[Sequence[int]], value: int) -> torch.Tensor:
    """Integer rows right-padded with ``value`` into one ``(N, L)`` tensor."""
    return pad_sequence([torch.tensor(r, dtype=torch.long) for r in rows], batch_first=True,
                        padding_value=value)


def trl_layout(prompts: Sequence[Sequence[int]], completions: Sequence[Sequence[int]],
               pad: int) -> dict[str, torch.Tensor]:
    """``input_ids``, ``attention_mask`` and ``completion_mask`` of prompt + completion rows,
    right-padded, as TRL's preference collator lays them out."""
    rows = [list(p) + list(c) for p, c in zip(prompts, completions, strict=True)]
    return {"input_ids": pad_right(rows, pad),
            "attention_mask": pad_right([[1] * len(r) for r in rows], 0),
            "completion_mask": pad_right([[0] * len(p) + [1] * len(c)
                                          for p, c in zip(prompts, completions, strict=True)],
                                         0)}
