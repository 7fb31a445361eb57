"""XTF: explainable token-level noise filtering for fine-tuning data (Yang et al., ICLR 2026,
arXiv 2602.14536, OpenReview ``WEEodalWQg``; official code ``EonHao/XTF``, ``XTF_script.py`` and
``utils/ScoreR.py``).

Three scores per label token, all from the BASE model before fine-tuning (inference only), a
conservative threshold per score, the union of the three noise sets (Eq. 1), and SFT with the
noise tokens' labels set to −100 (their gradients masked, Eq. 8):

* **Reasoning importance** (RI, :func:`reasoning_importance`, Eq. 2): the attention a label
  position receives.  Reading (the paper's aggregation is not stated): the mean over later query
  positions of the attention weight to the position, averaged over the heads of the last layer
  (``layers="mean"`` averages every layer), then divided by its mean over the sequence's label
  tokens, so that sequences of different lengths pool on one scale.  Noise if below
  Q1 − 1·IQR over all label tokens of the dataset (Eq. 5, :func:`iqr_low`).  (The official code
  averages the FIRST layer's attention over heads and then over key positions — a constant
  1/L per row of a softmax — so it cannot be followed here; we keep the paper's "attention the
  position receives".)
* **Knowledge novelty** (KN, :func:`knowledge_novelty`, Eq. 3): 1 − P_θ(O_k | I, O_<k) under
  teacher forcing.  Noise if below 0.05 (Eq. 6: the base model already gives the token > 95 %).
* **Task relevance** (TR, :func:`task_relevance`, Eq. 4): the cosine similarity between the
  token's context-free representation and the domain centre V(Domain) = (1/n_w) Σ_w E(θ, w),
  the mean representation of a short list of DOMAIN EXAMPLE WORDS w (the official code's
  ``domain_words``; for maths ``"1" … "10", "+", "-", "*", "/", "=", "maths"``) — not the mean
  over every token of the fine-tuning set.  E is the base model's last hidden state for the
  token fed alone (:func:`context_free_states`, the official ``get_word_vector``;
  the reproduction's ``tr_repr="input"`` uses the input-embedding row instead).  The
  paper's 1 − minmax(cosine distance) is an increasing function of the similarity, so the
  clusters and ranks below are the same.  Noise = the Multi-Otsu class with the SECOND-lowest
  mean (Eq. 7; the lowest class, whitespace and placeholders in the paper's tokenizers, is left
  alone; :func:`multiotsu_second_lowest`), 5 classes as in the official code.
* **Per-example caps** (:func:`cap_per_example`): the official code keeps every attribute
  conservative by a second, per-example condition (``percentage_interest``, default
  ``0.05 0.1 0.05`` for RI, KN, TR in ``main.py``): a token is masked only if it also lies in
  the most extreme ``share`` of its own example's label-token scores — strictly beyond the
  example's ⌊share · n⌋-th order statistic over ALL its label tokens (``cap_among="all"``, the
  default).  ``cap_among="flagged"`` is an adaptation that ranks only among the tokens the
  attribute's rule flags (at most ⌊share · n⌋ of them, the most extreme first); measured on the
  xtf reproduction (full, seeds 0 and 3) it still masked one template word of every example
  ("us", "<eos>") because TR is context-free and the answers share one template, while with
  ``"all"`` TR's second-lowest class masked nothing (seed 0: the lowest class holds every
  example's minimum).  The default follows the official code (issue 24).
* The noise set is the union (:func:`xtf_noise`); :class:`XTFCollator` applies it to the
  ``labels`` a TRL / transformers collator builds.

Issue 24 (why the caps and the domain-word centre): with the earlier reading — centre = mean
over every token of the fine-tuning set, one dataset-wide Multi-Otsu class, no cap — TR is a
per-word-TYPE decision, so it removed EVERY occurrence of whole word types.  On the xtf
reproduction's quick data (seed 0) it flagged 47.6 % of the label tokens, all occurrences of
"is", "result", "+", "carry" and "<eos>" among them, and the union 54 %; a model that never sees
"is" or "<eos>" as a target cannot state or end an answer (0 exact match in every arm with TR).
A per-example cap bounds every attribute to a few tokens per example, as the authors' code does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from optzoo.checks import check_int, check_real

__all__ = ["CAPS", "XTFCollator", "cap_per_example", "context_free_states", "iqr_low",
           "knowledge_novelty", "multiotsu_second_lowest", "reasoning_importance",
           "task_relevance", "xtf_noise"]

#: per-example shares of (RI, KN, TR): the official ``main.py`` default ``percentage_interest``
CAPS = (0.05, 0.1, 0.05)


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


@torch.no_grad()
def context_free_states(model, token_ids: Tensor) -> Tensor:
    """``(N, E)``: the last hidden state of each of ``token_ids`` (1-D) fed ALONE, without
    context or BOS (the official ``get_word_vector`` / TR scoring loop)."""
    if not isinstance(token_ids, Tensor) or token_ids.dim() != 1 or token_ids.is_floating_point():
        raise ValueError(f"token_ids: expected a 1-D integer tensor, got "
                         f"{getattr(token_ids, 'shape', type(token_ids).__name__)}")
    out = model(input_ids=token_ids.reshape(-1, 1), output_hidden_states=True, use_cache=False)
    return out.hidden_states[-1][:, 0]


def task_relevance(vectors: Tensor, token_ids: Tensor, domain_ids: Tensor) -> Tensor:
    """TR of ``token_ids`` (any shape): the cosine similarity between each token's context-free
    vector (row of ``vectors`` ``(V, E)``) and the domain centre, the mean vector of the domain
    example words ``domain_ids`` (Eq. 4; higher = more relevant)."""
    if not isinstance(vectors, Tensor) or vectors.dim() != 2:
        raise ValueError(f"vectors: expected a (V, E) tensor, got "
                         f"{getattr(vectors, 'shape', type(vectors).__name__)}")
    for name, t in (("token_ids", token_ids), ("domain_ids", domain_ids)):
        if not isinstance(t, Tensor) or t.is_floating_point() or t.numel() == 0:
            raise ValueError(f"{name}: expected a non-empty integer tensor of token ids")
        if int(t.min()) < 0 or int(t.max()) >= vectors.shape[0]:
            raise ValueError(f"{name}: ids must lie in [0, {vectors.shape[0]})")
    vec = vectors.detach().double()
    centre = vec[domain_ids.reshape(-1)].mean(0)
    sim = F.cosine_similarity(vec[token_ids.reshape(-1)], centre.unsqueeze(0), dim=1)
    return sim.reshape(token_ids.shape)


def cap_per_example(flags, scores, groups, *, share: float, lowest: bool = True,
                    among: str = "all") -> np.ndarray:
    """Of the ``flags`` (bool, 1-D) in each example (``groups``: the example index of each
    token), keep at most ⌊``share`` · n⌋ — n the example's token count — with the most extreme
    ``scores`` (the lowest when ``lowest``, else the highest; ties by position).

    ``among="all"`` is the official code's exact rule instead: keep a flag only if its score is
    strictly below the example's ⌊share · n⌋-th smallest score over ALL its tokens (strictly
    above the ⌊(1 − share) · n⌋-th smallest when not ``lowest``)."""
    f = np.asarray(flags, dtype=bool)
    s = np.asarray(scores, dtype=float)
    g = np.asarray(groups)
    if not (f.shape == s.shape == g.shape) or f.ndim != 1:
        raise ValueError(f"flags, scores, groups: expected 1-D arrays of one length, got "
                         f"{f.shape}, {s.shape}, {g.shape}")
    check_real("share", share, low=0, high=1)
    if among not in ("flagged", "all"):
        raise ValueError(f"among: expected 'flagged' or 'all', got {among!r}")
    if f.size == 0:
        return f.copy()
    _, inv, counts = np.unique(g, return_inverse=True, return_counts=True)
    if among == "all":
        out = np.zeros(f.shape, dtype=bool)
        for k, n in enumerate(counts):
            idx = np.flatnonzero(inv == k)
            ordered = np.sort(s[idx])
            if lowest:
                out[idx] = s[idx] < ordered[min(int(share * n), n - 1)]
            else:
                out[idx] = s[idx] > ordered[min(int((1 - share) * n), n - 1)]
        return f & out
    limit = np.floor(share * counts + 1e-9).astype(int)[inv]
    # within each example, flagged tokens first, most extreme score first, then position
    order = np.lexsort((np.arange(f.size), s if lowest else -s, ~f, inv))
    rank = np.empty(f.size, dtype=int)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    rank[order] = np.arange(f.size) - starts[inv[order]]
    return f & (rank < limit)


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


def xtf_noise(ri, kn, tr, *, groups=None, caps: Sequence[float] | None = CAPS,
              cap_among: str = "all", iqr_k: float = 1.0, kn_threshold: float = 0.05,
              otsu_classes: int = 5,
              use: Sequence[str] = ("ri", "kn", "tr")) -> dict[str, Any]:
    """The noise sets of the three attributes over the dataset's label tokens (1-D arrays of
    equal length) and their union (restricted to the attributes in ``use``, for ablations).

    ``groups`` gives each token's example (default: one example); ``caps`` the per-example
    shares of (RI, KN, TR) (:func:`cap_per_example` with ``among=cap_among``; ``None``: no
    cap, the paper's thresholds alone).  ``tr`` is a similarity (low = irrelevant), ``kn`` is
    1 − probability."""
    ri, kn, tr = (np.asarray(x, dtype=float) for x in (ri, kn, tr))
    if not (ri.shape == kn.shape == tr.shape) or ri.ndim != 1:
        raise ValueError(f"ri, kn, tr: expected 1-D arrays of one length, got {ri.shape}, "
                         f"{kn.shape}, {tr.shape}")
    check_real("kn_threshold", kn_threshold, low=0, high=1)
    bad = set(use) - {"ri", "kn", "tr"}
    if bad:
        raise ValueError(f"use: expected a subset of ('ri', 'kn', 'tr'), got {sorted(bad)}")
    g = np.zeros(ri.shape, dtype=int) if groups is None else np.asarray(groups)
    if g.shape != ri.shape:
        raise ValueError(f"groups: expected shape {ri.shape}, got {g.shape}")
    sets = {"ri": iqr_low(ri, k=iqr_k), "kn": kn < kn_threshold,
            "tr": multiotsu_second_lowest(tr, classes=otsu_classes)}
    if caps is not None:
        caps = tuple(caps)
        if len(caps) != 3:
            raise ValueError(f"caps: expected three shares (RI, KN, TR), got {caps}")
        # KN's extreme is the most predictable token (lowest 1 − p); RI's and TR's the lowest
        # the official KN cap ranks the probabilities p = 1 − kn from the top
        sets = {"ri": cap_per_example(sets["ri"], ri, g, share=caps[0], among=cap_among),
                "kn": cap_per_example(sets["kn"], 1.0 - kn, g, share=caps[1], lowest=False,
                                      among=cap_among),
                "tr": cap_per_example(sets["tr"], tr, g, share=caps[2], among=cap_among)}
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
