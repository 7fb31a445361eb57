"""Forget and retain losses ``loss(model, batch) -> scalar`` for the unlearning methods of this
area, for classifiers (batch ``(x, y)``, logits ``(B, C)``) and causal language models (batch
``tokens`` of shape ``(B, T)`` or ``(tokens, mask)``, logits ``(B, T, V)``: token ``t + 1`` is
predicted from position ``t``).

The capped cross-entropy is the bounded forget loss the OFMU brief asks for (raw ascent on CE is
unbounded and blows the weights up): per example ``min(CE_i, cap)``, so that an example whose loss
has reached the cap stops pulling.  With ``cap = log C`` a capped example is misclassified (its
label's probability is below ``1/C``, so another class has more).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["capped", "classification_ce", "example_losses", "sequence_logprob",
           "token_cross_entropy"]


def _xy(batch: Any) -> tuple[torch.Tensor, torch.Tensor]:
    if not (isinstance(batch, (tuple, list)) and len(batch) == 2):
        raise ValueError("batch: expected a pair (inputs, labels) for a classifier, got "
                         f"{type(batch).__name__}")
    return batch[0], batch[1]


def _tokens(batch: Any) -> tuple[torch.Tensor, torch.Tensor | None]:
    if isinstance(batch, torch.Tensor):
        tokens, mask = batch, None
    elif isinstance(batch, (tuple, list)) and len(batch) == 2:
        tokens, mask = batch
    else:
        raise ValueError("batch: expected a (B, T) token tensor or a pair (tokens, mask), got "
                         f"{type(batch).__name__}")
    if tokens.dim() != 2 or tokens.shape[1] < 2:
        raise ValueError(f"batch: expected tokens of shape (B, T) with T >= 2, got "
                         f"{tuple(tokens.shape)}")
    return tokens, mask


def _is_lm(batch: Any) -> bool:
    """A token tensor, or a (tokens, mask) pair of equal-shaped 2-D tensors with integer tokens."""
    if isinstance(batch, torch.Tensor):
        return not batch.is_floating_point()
    return (isinstance(batch, (tuple, list)) and len(batch) == 2
            and isinstance(batch[0], torch.Tensor) and isinstance(batch[1], torch.Tensor)
            and not batch[0].is_floating_point() and batch[0].dim() == 2
            and batch[1].shape == batch[0].shape)


def example_losses(model: nn.Module, batch: Any) -> torch.Tensor:
    """Per-example negative log-likelihood, shape ``(B,)``.

    Classifier: ``CE(model(x)_i, y_i)``.  Causal LM (the model returns ``(B, T, V)``): the sum of
    the token NLLs of positions ``1..T−1`` (under ``mask[:, 1:]`` when given), i.e.
    ``−log π(sequence)`` as NPO uses it.
    """
    if _is_lm(batch):
        tokens, mask = _tokens(batch)
        logits = model(tokens)
        if logits.dim() != 3 or logits.shape[:2] != tokens.shape:
            raise ValueError(f"model: expected logits of shape (B, T, V) = "
                             f"{tuple(tokens.shape)} + (V,), got {tuple(logits.shape)}")
        nll = F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:], reduction="none")
        if mask is not None:
            nll = nll * mask[:, 1:].to(nll.dtype)
        return nll.sum(1)
    x, y = _xy(batch)
    logits = model(x)
    if logits.dim() != 2 or logits.shape[0] != y.shape[0]:
        raise ValueError(f"model: expected logits of shape (B, C) with B = {y.shape[0]}, got "
                         f"{tuple(logits.shape)}")
    return F.cross_entropy(logits, y, reduction="none")


def classification_ce(model: nn.Module, batch: Any) -> torch.Tensor:
    """Mean cross-entropy of a classifier on ``(x, y)``."""
    return example_losses(model, batch).mean()


def token_cross_entropy(model: nn.Module, batch: Any) -> torch.Tensor:
    """Mean next-token cross-entropy of a causal LM (mean over the counted tokens)."""
    tokens, mask = _tokens(batch)
    total = example_losses(model, batch).sum()
    count = (tokens.shape[1] - 1) * tokens.shape[0] if mask is None else mask[:, 1:].sum()
    return total / count


def sequence_logprob(model: nn.Module, batch: Any) -> torch.Tensor:
    """``log π_θ(y | x)`` per example, shape ``(B,)`` (class label or whole sequence)."""
    return -example_losses(model, batch)


def capped(cap: float) -> Callable[[nn.Module, Any], torch.Tensor]:
    """The bounded forget loss ``mean_i min(ℓ_i, cap)`` over :func:`example_losses` (for an LM
    ``ℓ_i`` is the sequence NLL divided by its token count, so ``cap = log V`` is uniform)."""
    if not (math.isfinite(cap) and cap > 0):
        raise ValueError(f"cap: expected a finite number > 0, got {cap!r}")

    def loss(model: nn.Module, batch: Any) -> torch.Tensor:
        ell = example_losses(model, batch)
        if _is_lm(batch):
            tokens, mask = _tokens(batch)
            count = (torch.full_like(ell, tokens.shape[1] - 1) if mask is None
                     else mask[:, 1:].sum(1).clamp_min(1).to(ell.dtype))
            ell = ell / count
        return ell.clamp(max=cap).mean()

    return loss
