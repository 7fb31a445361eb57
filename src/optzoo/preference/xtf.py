"""XTF: explainable token-level noise filtering for fine-tuning data (Yang et al., ICLR 2026,
arXiv 2602.14536, OpenReview ``WEEodalWQg``).

Three scores per label token, all from the BASE model before fine-tuning (inference only), a
conservative threshold per score, the union of the three noise sets, and SFT with the noise
tokens' labels set to −100 (their gradients masked):

* **Reasoning importance** (RI, :func:`reasoning_importance`): the attention a label position
  receives.  Reading (the paper's aggregation was not reachable; brief ``xtf.md``): the mean
  over later query positions of the attention weight to the position, averaged over the heads
  of the last layer (``layers="mean"`` averages every layer), then divided by its mean over the
  sequence's label tokens, so that sequences of different lengths pool on one scale.  Noise if
  below Q1 − 1·IQR over all label tokens of the dataset (:func:`iqr_low`).
* **Knowledge novelty** (KN, :func:`knowledge_novelty`): 1 − P_θ(O_k | I, O_<k) under teacher
  forcing.  Noise if below 0.05 (the base model already gives the token > 95 %).
* **Task relevance** (TR, :func:`task_relevance`): 1 − minmax(cosine distance between the
  token's input embedding and the domain centre, the mean embedding over every token of the
  fine-tuning set).  Noise = the cluster with the SECOND-lowest mean of scikit-image's
  Multi-Otsu split (4 classes by default; the lowest cluster, mostly whitespace and
  placeholders, is left alone) (:func:`multiotsu_second_lowest`).
* The noise set is the union (:func:`xtf_noise`); :class:`XTFCollator` applies it to the
  ``labels`` a TRL / transformers collator builds.

Readings marked above are the brief's inferences, kept configurable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from optzoo.checks import check_int, check_real

__all__ = ["XTFCollator", "iqr_low", "knowledge_novelty", "multiotsu_second_lowest",
           "reasoning_importance", "task_relevance", "xtf_noise"]


def _check_batch(input_ids: Tensor, attention_mask: Tensor, label_mask: Tensor) -> None:
    if not isinstance(input_ids, Tensor) or input_ids.dim() != 2:
        raise ValueError(f"input_ids: expected a (B, L) tensor, got "
                         f"{getattr(input_ids, 'shape', type(input_ids).__name__)}")
    for name, t in (("attention_mask", attention_mask), ("label_mask", label_mask)):
        if not isinstance(t, Tensor) or t.shape != input_ids.shape:
            raise ValueError(f"{name}: expected shape {tuple(input_ids.shape)}, got "
                             f"{getattr(t, 'shape', type(t).__name__)}")
    if bool((label_mask.bool() & ~attention_mask.bool()).any()):
        raise ValueError("label_mask: label tokens must be attended (attention_mask 1)")
    if bool(label_mask[:, 0].bool().any()):
        raise ValueError("label_mask: the first position cannot be a label (nothing predicts it)")


@torch.no_grad()
def reasoning_importance(model, input_ids: Tensor, attention_mask: Tensor, label_mask: Tensor,
                         *, layers: str = "last") -> Tensor:
    """RI per position ``(B, L)`` (0 off the labels); see the module docstring.

    Needs attention weights: a Hugging Face model loaded with ``attn_implementation="eager"``.
    """
    _check_batch(input_ids, attention_mask, label_mask)
    if layers not in ("last", "mean"):
        raise ValueError(f"layers: expected 'last' or 'mean', got {layers!r}")
    out = model(input_ids=input_ids, attention_mask=attention_mask, output_attentions=True,
                use_cache=False)
    atts = out.attentions
    if not atts or atts[-1] is None:
        raise ValueError("model: returned no attention weights; load it with "
                         "attn_implementation='eager'")
    stack = atts[-1:] if layers == "last" else atts
    wide = [x.to(torch.promote_types(x.dtype, torch.float32)) for x in stack]
    a = torch.stack(wide).mean(0).mean(1)  # (B, Lq, Lk): mean over layers, then heads
    att = attention_mask.bool()
    n = input_ids.shape[1]
    later = torch.triu(torch.ones(n, n, dtype=torch.bool, device=a.device), 1).T  # q > k
    valid = later.unsqueeze(0) & att.unsqueeze(2) & att.unsqueeze(1)
    received = torch.where(valid, a, torch.zeros_like(a)).sum(1)
    count = valid.sum(1).clamp_min(1)
    ri = received / count
    labels = label_mask.bool()
    # the last label token receives no later attention inside the sequence: give it the
    # sequence's label mean so that it is never flagged merely for being last
    has_later = valid.sum(1) > 0
    mean = (torch.where(labels & has_later, ri, torch.zeros_like(ri)).sum(1, keepdim=True)
            / (labels & has_later).sum(1, keepdim=True).clamp_min(1))
    ri = torch.where(has_later, ri, mean.expand_as(ri))
    ri = ri / mean.clamp_min(torch.finfo(ri.dtype).tiny)
    return torch.where(labels, ri, torch.zeros_like(ri))


@torch.no_grad()
def knowledge_novelty(model, input_ids: Tensor, attention_mask: Tensor,
                      label_mask: Tensor) -> Tensor:
    """KN per position ``(B, L)``: 1 − P(token_j | tokens_<j) under teacher forcing (0 off the
    labels)."""
    _check_batch(input_ids, attention_mask, label_mask)
    logits = model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits
    p = F.softmax(logits[:, :-1].to(torch.promote_types(logits.dtype, torch.float32)), -1)
    correct = p.gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    kn = torch.zeros(input_ids.shape, dtype=correct.dtype, device=correct.device)
    kn[:, 1:] = 1.0 - correct
    return torch.where(label_mask.bool(), kn, torch.zeros_like(kn))


def task_relevance(embeddings: Tensor, token_ids: Tensor, domain_ids: Tensor) -> Tensor:
    """TR of ``token_ids`` (any shape): 1 − minmax over ``token_ids`` of the cosine distance
    between each token's input embedding (``embeddings`` ``(V, E)``) and the domain centre, the
    mean embedding of ``domain_ids`` (every token of the fine-tuning set)."""
    if not isinstance(embeddings, Tensor) or embeddings.dim() != 2:
        raise ValueError(f"embeddings: expected a (V, E) tensor, got "
                         f"{getattr(embeddings, 'shape', type(embeddings).__name__)}")
    for name, t in (("token_ids", token_ids), ("domain_ids", domain_ids)):
        if not isinstance(t, Tensor) or t.is_floating_point() or t.numel() == 0:
            raise ValueError(f"{name}: expected a non-empty integer tensor of token ids")
        if int(t.min()) < 0 or int(t.max()) >= embeddings.shape[0]:
            raise ValueError(f"{name}: ids must lie in [0, {embeddings.shape[0]})")
    emb = embeddings.detach().double()
    centre = emb[domain_ids.reshape(-1)].mean(0)
    dist = 1.0 - F.cosine_similarity(emb[token_ids.reshape(-1)], centre.unsqueeze(0), dim=1)
    lo, hi = dist.min(), dist.max()
    norm = (dist - lo) / (hi - lo) if float(hi - lo) > 0 else torch.zeros_like(dist)
    return (1.0 - norm).reshape(token_ids.shape)


def iqr_low(scores, *, k: float = 1.0) -> np.ndarray:
    """Boolean mask of ``scores`` below Q1 − k·(Q3 − Q1) (RI's rule, k = 1)."""
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1 or s.size == 0 or not np.isfinite(s).all():
        raise ValueError("scores: expected a non-empty finite 1-D array")
    check_real("k", k, low=0)
    q1, q3 = np.percentile(s, [25, 75])
    return s < q1 - k * (q3 - q1)


def multiotsu_second_lowest(scores, *, classes: int = 4) -> np.ndarray:
    """Boolean mask of the scores in the SECOND-lowest of scikit-image's Multi-Otsu classes
    (TR's rule: the lowest class is left alone)."""
    from skimage.filters import threshold_multiotsu

    s = np.asarray(scores, dtype=float)
    if s.ndim != 1 or s.size == 0 or not np.isfinite(s).all():
        raise ValueError("scores: expected a non-empty finite 1-D array")
    check_int("classes", classes, low=3)
    if np.unique(s).size < classes:  # too few distinct values to split: nothing is noise
        return np.zeros(s.shape, dtype=bool)
    thresholds = threshold_multiotsu(s, classes=classes)
    return np.digitize(s, bins=thresholds) == 1


def xtf_noise(ri, kn, tr, *, iqr_k: float = 1.0, kn_threshold: float = 0.05,
              otsu_classes: int = 4, use: Sequence[str] = ("ri", "kn", "tr")) -> dict[str, Any]:
    """The noise sets of the three attributes over the dataset's label tokens (1-D arrays of
    equal length) and their union (restricted to the attributes in ``use``, for ablations)."""
    ri, kn, tr = (np.asarray(x, dtype=float) for x in (ri, kn, tr))
    if not (ri.shape == kn.shape == tr.shape) or ri.ndim != 1:
        raise ValueError(f"ri, kn, tr: expected 1-D arrays of one length, got {ri.shape}, "
                         f"{kn.shape}, {tr.shape}")
    check_real("kn_threshold", kn_threshold, low=0, high=1)
    bad = set(use) - {"ri", "kn", "tr"}
    if bad:
        raise ValueError(f"use: expected a subset of ('ri', 'kn', 'tr'), got {sorted(bad)}")
    sets = {"ri": iqr_low(ri, k=iqr_k), "kn": kn < kn_threshold,
            "tr": multiotsu_second_lowest(tr, classes=otsu_classes)}
    union = np.zeros(ri.shape, dtype=bool)
    for a in use:
        union |= sets[a]
    return {**sets, "union": union, "ratio": float(union.mean())}


class XTFCollator:
    """Wrap a collator that builds ``labels`` (TRL's ``DataCollatorForLanguageModeling``, or
    transformers'): each example's ``xtf_noise`` (0/1 per input position, 1 = noise) sets those
    labels to −100 so that the noise tokens' gradients are masked.

    With TRL's ``SFTTrainer`` pass ``SFTConfig(remove_unused_columns=False)`` so that the
    ``xtf_noise`` column reaches the collator.
    """

    def __init__(self, base, key: str = "xtf_noise") -> None:
        self.base, self.key = base, key

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        noise = [list(e.get(self.key, [])) for e in examples]
        trimmed = [{k: v for k, v in e.items() if k != self.key} for e in examples]
        batch = self.base(trimmed)
        labels = batch["labels"].clone()
        for i, row in enumerate(noise):
            if len(row) > labels.shape[1]:
                raise ValueError(f"{self.key}: example {i} has {len(row)} positions, more than "
                                 f"the batch's {labels.shape[1]}")
            idx = torch.nonzero(torch.tensor(row, dtype=torch.bool), as_tuple=False).flatten()
            labels[i, idx] = -100
        batch["labels"] = labels
        return batch
