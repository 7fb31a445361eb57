"""Language models: a tiny Llama built from ``transformers`` and a loader for any local causal LM.

The default policy of the LLM reproductions is a randomly initialised
``transformers.LlamaForCausalLM`` of about 1 M parameters over the character tokenizer of
:mod:`optzoo.llm.tokenizer` (:class:`TinyLlama`, :func:`tiny_llama`).  Every function of
:mod:`optzoo.llm` takes a Hugging Face causal LM and its tokenizer, so a model on disk
(:func:`load_causal_lm`, ``local_files_only=True``: nothing is ever downloaded) replaces the
tiny one without other changes.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from pathlib import Path

import torch


@dataclass(frozen=True)
class TinyLlama:
    """Shape of a small Llama (a ``LlamaConfig`` minus the vocabulary and special ids).

    The default (hidden 128, 4 layers, 4 heads, MLP 512) has 1 055 872 parameters over the
    24-token character vocabulary.

    Args:
        hidden_size: model width (divisible by ``num_heads``).
        intermediate_size: SwiGLU MLP width.
        num_layers: decoder layers.
        num_heads: attention heads.
        num_kv_heads: key/value heads (grouped-query attention); None = ``num_heads``.
        max_position_embeddings: longest sequence (prompt + completion).
        tie_word_embeddings: share the input embedding and the output head.
    """

    hidden_size: int = 128
    intermediate_size: int = 512
    num_layers: int = 4
    num_heads: int = 4
    num_kv_heads: int | None = None
    max_position_embeddings: int = 256
    tie_word_embeddings: bool = False

    def __post_init__(self):
        for f in ("hidden_size", "intermediate_size", "num_layers", "num_heads",
                  "max_position_embeddings"):
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{f}: expected an integer >= 1, got {v!r}")
        if self.hidden_size % self.num_heads:
            raise ValueError(f"hidden_size: expected a multiple of num_heads={self.num_heads}, "
                             f"got {self.hidden_size}")
        kv = self.num_heads if self.num_kv_heads is None else self.num_kv_heads
        if isinstance(kv, bool) or not isinstance(kv, int) or kv < 1 or self.num_heads % kv:
            raise ValueError(f"num_kv_heads: expected a divisor of num_heads={self.num_heads}, "
                             f"got {self.num_kv_heads!r}")

    def build(self, tokenizer, seed: int = 0):
        """A freshly initialised ``LlamaForCausalLM`` for ``tokenizer`` (see :func:`tiny_llama`)."""
        if tokenizer.eos_token_id is None:
            raise ValueError("tokenizer: expected an EOS token")
        pad = tokenizer.pad_token_id
        bos = tokenizer.bos_token_id
        return tiny_llama(len(tokenizer), seed=seed, pad_token_id=pad,
                          bos_token_id=bos, eos_token_id=tokenizer.eos_token_id,
                          **dataclasses.asdict(self))


def tiny_llama(vocab_size: int, *, hidden_size: int = 128, intermediate_size: int = 512,
               num_layers: int = 4, num_heads: int = 4, num_kv_heads: int | None = None,
               max_position_embeddings: int = 256, tie_word_embeddings: bool = False,
               pad_token_id: int | None = 0, bos_token_id: int | None = 1,
               eos_token_id: int = 2, seed: int = 0):
    """A randomly initialised ``transformers.LlamaForCausalLM`` (eval mode, float32, CPU).

    Initialisation is transformers' own (normal, std 0.02) drawn under ``torch.manual_seed(seed)``
    inside a forked RNG, so the global RNG is untouched and equal seeds give equal weights.
    Defaults match :class:`TinyLlama` and the ids of
    :func:`optzoo.llm.tokenizer.char_tokenizer` (pad 0, bos 1, eos 2).

    Example:
        >>> import torch
        >>> from optzoo.llm import char_tokenizer, count_parameters, tiny_llama
        >>> tok = char_tokenizer()
        >>> model = tiny_llama(len(tok))                 # the default shape, ~1 M parameters
        >>> count_parameters(model)
        1055872
        >>> small = tiny_llama(len(tok), hidden_size=32, intermediate_size=64, num_layers=2,
        ...                    num_heads=2, seed=0)
        >>> batch = tok(["12+3=", "4+5="], return_tensors="pt", padding=True)
        >>> with torch.no_grad():
        ...     logits = small(**batch).logits             # (batch, tokens, vocabulary)
        >>> logits.shape
        torch.Size([2, 6, 24])
    """
    from transformers import LlamaConfig, LlamaForCausalLM

    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 2:
        raise ValueError(f"vocab_size: expected an integer >= 2, got {vocab_size!r}")
    if not 0 <= eos_token_id < vocab_size:
        raise ValueError(f"eos_token_id: expected an id in [0, {vocab_size}), got {eos_token_id}")
    spec = TinyLlama(hidden_size, intermediate_size, num_layers, num_heads, num_kv_heads,
                     max_position_embeddings, tie_word_embeddings)  # validates the shape
    cfg = LlamaConfig(vocab_size=vocab_size, hidden_size=spec.hidden_size,
                      intermediate_size=spec.intermediate_size,
                      num_hidden_layers=spec.num_layers, num_attention_heads=spec.num_heads,
                      num_key_value_heads=spec.num_kv_heads or spec.num_heads,
                      max_position_embeddings=spec.max_position_embeddings,
                      tie_word_embeddings=spec.tie_word_embeddings,
                      pad_token_id=pad_token_id, bos_token_id=bos_token_id,
                      eos_token_id=eos_token_id)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        model = LlamaForCausalLM(cfg)
    return model.eval()


def count_parameters(model) -> int:
    """Number of distinct parameters (tied weights counted once)."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def prepare_tokenizer(tokenizer):
    """Make a tokenizer ready for batched generation: left padding, and PAD = EOS when the
    tokenizer has no PAD token (as for many released models).  Returns the same object."""
    if tokenizer.eos_token_id is None:
        raise ValueError("tokenizer: expected an EOS token")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    return tokenizer


@contextlib.contextmanager
def _quiet():
    """No transformers progress bars (one per load / save: noise in a run of many trials)."""
    from transformers.utils import logging

    was = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            logging.enable_progress_bar()


def load_causal_lm(path, *, device: str | torch.device = "cpu", dtype=None, **kwargs):
    """Load a causal LM and its tokenizer from a local folder; never downloads.

    Works for any ``AutoModelForCausalLM`` folder (``config.json``, weights, tokenizer files),
    including those written by :func:`save_causal_lm` or by :func:`optzoo.llm.pretrain`.

    Args:
        path: the folder.
        device: where to put the model.
        dtype: torch dtype of the weights (None: as saved).
        kwargs: passed to ``AutoModelForCausalLM.from_pretrained``.

    Returns:
        ``(model, tokenizer)``: the model in eval mode, the tokenizer through
        :func:`prepare_tokenizer`.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(path)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"path: {str(path)!r} is not a model folder (no config.json)")
    tokenizer = prepare_tokenizer(AutoTokenizer.from_pretrained(path, local_files_only=True))
    with _quiet():
        model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=dtype,
                                                     **kwargs)
    return model.to(device).eval(), tokenizer


def save_causal_lm(model, tokenizer, path) -> Path:
    """Write a model and its tokenizer to ``path`` (``save_pretrained`` of both, safetensors)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    with _quiet():
        model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
