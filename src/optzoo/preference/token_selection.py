"""Token- and sample-selection baselines of XTF's comparison (brief ``xtf.md``): masks over a
fine-tuning set's label tokens (or its samples) built from per-token losses.

* **Token Cleaning** (Pang et al. 2025, "Token Cleaning: Fine-Grained Data Selection for LLM
  Supervised Fine-Tuning", arXiv 2502.01968; code ``UCSC-REAL/TokenCleaning``),
  :func:`token_cleaning`: the *fixed-model cleaning* pipeline.  Each label token's influence is
  ``loss(base) − loss(reference)`` (the reference is the base model fine-tuned on a small
  clean "warm-up" subset); the ``keep`` share of all label tokens of the dataset with the
  largest influence is trained on, the rest masked (the repository's
  ``generate_token_label.py``, ``select_token_level="global"``: ``int(n · data_prop)`` tokens by
  a stable descending sort; ``data_prop = 0.6`` in its ``fixed_model_cleaning.sh``).
* **Rho-1 / Selective Language Modeling** (Lin et al. 2024, "Rho-1: Not All Tokens Are What You
  Need", NeurIPS 2024, arXiv 2404.07965), :func:`rho1_select`: at every training step the
  excess loss ``loss(current model) − loss(reference)`` of each label token of the BATCH is
  computed and only the top ``keep`` share of the batch's label tokens contributes to the loss
  (an online selection, unlike Token Cleaning's one offline pass with the base model).
* **DF** (sample-level data filtering, the XTF paper's baseline as its brief describes it),
  :func:`perplexity_filter`: drop the ``drop`` share of samples with the highest perplexity
  ``exp(mean label-token NLL)``; which model scores the samples is the caller's choice (the
  reproduction uses the base model, like XTF's scores).

:func:`token_losses` gives the per-position negative log-likelihoods these rules need.

Every mask here is a KEEP mask (``True`` = the token or sample is trained on), the
complement of XTF's noise masks.  Counts are floors (``int(n · share)``, as the Token Cleaning
code does), ties are broken by position (earlier first), so the masks are deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from optzoo.checks import check_real

__all__ = ["perplexity_filter", "rho1_select", "shifted_nll", "token_cleaning", "token_losses",
           "top_share"]


def _scores(name: str, x) -> np.ndarray:
    s = np.asarray(x, dtype=float)
    if s.ndim != 1 or s.size == 0 or not np.isfinite(s).all():
        raise ValueError(f"{name}: expected a non-empty finite 1-D array, got shape {s.shape}")
    return s


def top_share(scores, keep: float) -> np.ndarray:
    """Boolean mask of the ``int(n · keep)`` largest ``scores`` (stable: among equal scores the
    earlier positions are kept first)."""
    s = _scores("scores", scores)
    check_real("keep", keep, low=0, high=1)
    k = int(s.size * keep)
    out = np.zeros(s.size, dtype=bool)
    out[np.argsort(-s, kind="stable")[:k]] = True
    return out


def token_cleaning(base_loss, ref_loss, *, keep: float = 0.6) -> np.ndarray:
    """Token Cleaning's fixed-model keep mask over the dataset's label tokens (1-D arrays of
    the per-token NLL under the base and the reference model): the ``keep`` share with the
    largest influence ``base_loss − ref_loss`` (global top-k over the whole dataset)."""
    b, r = _scores("base_loss", base_loss), _scores("ref_loss", ref_loss)
    if b.shape != r.shape:
        raise ValueError(f"base_loss, ref_loss: expected one length, got {b.size} and {r.size}")
    return top_share(b - r, keep)


def rho1_select(train_loss: Tensor, ref_loss: Tensor, valid: Tensor, *,
                keep: float = 0.6) -> Tensor:
    """Rho-1's per-batch keep mask ``(B, L)``: among the ``valid`` (label) positions of the
    batch, the ``max(1, int(n_valid · keep))`` with the largest excess loss
    ``train_loss − ref_loss`` (ties: earlier flat positions first); never an invalid one.

    ``train_loss`` may carry gradients; the selection uses detached values."""
    for name, t in (("train_loss", train_loss), ("ref_loss", ref_loss), ("valid", valid)):
        if not isinstance(t, Tensor) or t.dim() != 2:
            raise ValueError(f"{name}: expected a (B, L) tensor, got "
                             f"{getattr(t, 'shape', type(t).__name__)}")
    if train_loss.shape != ref_loss.shape or valid.shape != train_loss.shape:
        raise ValueError(f"train_loss, ref_loss, valid: expected one shape, got "
                         f"{tuple(train_loss.shape)}, {tuple(ref_loss.shape)}, "
                         f"{tuple(valid.shape)}")
    check_real("keep", keep, low=0, high=1)
    v = valid.bool().reshape(-1)
    excess = (train_loss.detach() - ref_loss.detach()).reshape(-1).double()
    if not bool(torch.isfinite(excess[v]).all()):
        raise ValueError("train_loss, ref_loss: non-finite losses at valid positions")
    out = torch.zeros_like(v)
    n = int(v.sum())
    if n == 0:
        return out.reshape(valid.shape)
    k = max(1, int(n * keep))
    pos = torch.nonzero(v, as_tuple=False).flatten()
    order = torch.from_numpy(np.argsort(-excess[pos].cpu().numpy(), kind="stable"))
    out[pos[order[:k].to(pos.device)]] = True
    return out.reshape(valid.shape)


def perplexity_filter(sample_losses: Sequence, *, drop: float = 0.2) -> np.ndarray:
    """DF's keep mask over samples: each sample's perplexity is ``exp(mean NLL)`` of its label
    tokens (``sample_losses[i]``: the per-token NLLs of sample ``i``); the ``int(n · drop)``
    samples with the highest perplexity are dropped (ties: earlier samples dropped first)."""
    check_real("drop", drop, low=0, high=1)
    if len(sample_losses) == 0:
        raise ValueError("sample_losses: expected at least one sample")
    ppl = np.array([float(np.exp(_scores(f"sample_losses[{i}]", x).mean()))
                    for i, x in enumerate(sample_losses)])
    return ~top_share(ppl, drop)


@torch.no_grad()
def token_losses(model, input_ids: Tensor, attention_mask: Tensor, label_mask: Tensor
                 ) -> Tensor:
    """Per-position NLL ``(B, L)``: ``−log P(token_j | tokens_<j)`` at the label positions
    (``label_mask``), 0 elsewhere (the first position is never a label)."""
    for name, t in (("attention_mask", attention_mask), ("label_mask", label_mask)):
        if not isinstance(t, Tensor) or t.shape != input_ids.shape or input_ids.dim() != 2:
            raise ValueError(f"{name}: expected the (B, L) shape of input_ids, got "
                             f"{getattr(t, 'shape', type(t).__name__)}")
    if bool(label_mask[:, 0].bool().any()):
        raise ValueError("label_mask: the first position cannot be a label (nothing predicts it)")
    logits = model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits
    return shifted_nll(logits, input_ids, label_mask)


def shifted_nll(logits: Tensor, input_ids: Tensor, label_mask: Tensor) -> Tensor:
    """Per-position NLL ``(B, L)`` from causal-LM ``logits`` ``(B, L, V)`` (position ``j`` is
    predicted by the logits at ``j − 1``), 0 off ``label_mask``; keeps gradients."""
    lp = F.log_softmax(logits[:, :-1].to(torch.promote_types(logits.dtype, torch.float32)), -1)
    nll = -lp.gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    out = torch.cat([torch.zeros_like(nll[:, :1]), nll], 1)
    return torch.where(label_mask.bool(), out, torch.zeros_like(out))
