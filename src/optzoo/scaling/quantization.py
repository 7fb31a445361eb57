"""Weight-only post-training quantization of a causal LM and the quantization-error metric of
Catalan-Tatjer, Ajroldi & Geiping, "Training Dynamics Impact Post-Training Quantization
Robustness" (ICLR 2026, OpenReview ``ZXr3Xx7Z1O``, arXiv 2510.06213).

The paper's protocol (read from its official code,
``aldakata/TrainingDynamicsQuantizationRobustness``: ``gptqmodel_quantize.py``,
``config/gptq``): quantize **only the linear layers inside the transformer blocks**
(``model.model.layers``; embeddings and the LM head stay in full precision) with GPTQ at 3
or 4 bits, group size 128, through ``gptqmodel``'s defaults (symmetric grid, act-order,
damping 0.05 · mean diag H), then report the **absolute** cross-entropy gap

    ΔCE = CE(quantized) − CE(full precision)                                    (metric)

on a held-out set; the relative gap CE_q / CE_fp − 1 is reported beside it.

This module holds

* the uniform b-bit grid of GPTQ's reference code (IST-DASLab ``quant.py``): per row of a
  weight block, ``scale = (xmax − xmin) / (2^b − 1)`` over the range ``[min(w, 0), max(w, 0)]``,
  ``zero = round(−xmin / scale)`` (asymmetric) or ``zero = (2^b − 1 + 1) / 2`` with
  ``xmax = max(|xmin|, xmax)``, ``xmin = −xmax`` (symmetric); ``q = clamp(round(w / scale) +
  zero, 0, 2^b − 1)`` and the dequantized value ``scale · (q − zero)`` (:func:`grid_params`,
  :func:`fake_quantize`);
* **RTN** (round-to-nearest) per output channel (``group_size=None``) or per group of
  ``group_size`` consecutive input columns (:func:`rtn_quantize`);
* the model-level driver :func:`quantize_model` (RTN, or GPTQ of :mod:`.gptq` layer by layer,
  "true sequential" like gptqmodel: each block's linears are quantized in the order
  ``[q, k, v] → [o] → [gate, up] → [down]``, the calibration inputs of a sub-group computed
  with everything before it already quantized);
* :func:`cross_entropy` and :func:`quantization_error` (ΔCE and the relative gap).

Weights are *fake-quantized*: the returned model holds the dequantized float weights, which is
what the paper's CE evaluation of a GPTQ checkpoint computes (the packed integer kernels give
the same products up to float rounding).

Example:
    >>> import torch
    >>> from optzoo.llm import tiny_llama
    >>> from optzoo.scaling.quantization import quantization_error, quantize_model
    >>> model = tiny_llama(64, hidden_size=128, intermediate_size=256, num_layers=1)
    >>> g = torch.Generator().manual_seed(0)
    >>> ids = torch.randint(0, 64, (8, 32), generator=g)     # validation token blocks
    >>> calib = torch.randint(0, 64, (8, 32), generator=g)   # calibration blocks (other data)
    >>> q = quantize_model(model, "gptq", bits=3, group_size=128, calibration=calib)
    >>> sorted(quantization_error(model, q, ids))            # ΔCE = ce_q − ce_fp, rel beside
    ['ce_fp', 'ce_q', 'dce', 'rel']
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence

import torch

from optzoo.checks import check_int

__all__ = ["METHODS", "SUBLAYER_ORDER", "block_linears", "cross_entropy", "fake_quantize",
           "grid_params", "quantization_error", "quantize_model", "rtn_quantize"]

METHODS = ("rtn", "gptq")

#: gptqmodel's "true sequential" order of a Llama block's linears (names end with these)
SUBLAYER_ORDER = (("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"),
                  ("self_attn.o_proj",), ("mlp.gate_proj", "mlp.up_proj"), ("mlp.down_proj",))


def _check_bits(bits) -> int:
    check_int("bits", bits, low=1)
    if bits > 16:
        raise ValueError(f"bits: expected an integer in 1..16, got {bits}")
    return int(bits)


def _check_group(group_size, columns: int) -> int:
    """The group width (``None`` → all columns: per output channel)."""
    if group_size is None:
        return columns
    check_int("group_size", group_size, low=1)
    return int(group_size)


def grid_params(w: torch.Tensor, bits: int, *, symmetric: bool = False
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """Scale and zero point of the min-max ``bits``-bit grid of each row of ``w``.

    Args:
        w: ``rows × columns`` block of weights (each row gets its own grid).
        bits: grid bits (``2^bits`` levels).
        symmetric: grid symmetric around 0 (gptqmodel's default) instead of asymmetric.

    Returns:
        ``(scale, zero)``, each of shape ``rows × 1``.
    """
    if w.ndim != 2:
        raise ValueError(f"w: expected a rows × columns matrix, got shape {tuple(w.shape)}")
    maxq = 2 ** _check_bits(bits) - 1
    zero_ = torch.zeros(w.shape[0], dtype=w.dtype, device=w.device)
    xmin = torch.minimum(w.min(1).values, zero_)
    xmax = torch.maximum(w.max(1).values, zero_)
    if symmetric:
        xmax = torch.maximum(xmin.abs(), xmax)
        xmin = torch.where(xmin < 0, -xmax, xmin)
    dead = (xmin == 0) & (xmax == 0)
    xmin = torch.where(dead, -torch.ones_like(xmin), xmin)
    xmax = torch.where(dead, torch.ones_like(xmax), xmax)
    scale = (xmax - xmin) / maxq
    if symmetric:
        zero = torch.full_like(scale, (maxq + 1) / 2)
    else:
        zero = torch.round(-xmin / scale)
    return scale[:, None], zero[:, None]


def fake_quantize(w: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor, bits: int
                  ) -> torch.Tensor:
    """Round ``w`` to the grid ``scale · (q − zero)``, ``q ∈ {0, …, 2^bits − 1}``, and return the
    dequantized values (same shape and dtype as ``w``; ``scale``/``zero`` broadcast)."""
    maxq = 2 ** _check_bits(bits) - 1
    q = torch.clamp(torch.round(w / scale) + zero, 0, maxq)
    return scale * (q - zero)


def rtn_quantize(weight: torch.Tensor, bits: int, group_size: int | None = None, *,
                 symmetric: bool = False) -> torch.Tensor:
    """Round-to-nearest quantization of a linear layer's ``out × in`` weight.

    Args:
        weight: ``out_features × in_features``.
        bits: bits per weight.
        group_size: input columns sharing one grid per output row (``None``: one grid per
            output channel); the last group may be narrower.
        symmetric: symmetric grid (see :func:`grid_params`).

    Returns:
        The dequantized weight (same shape, dtype and device).

    Example:
        >>> import torch
        >>> W = torch.tensor([[0.1, -0.4, 0.9, 0.25]])
        >>> rtn_quantize(W, bits=2)   # scale 1.3 / 3, integer zero point 1: levels −s, 0, s, 2s
        tensor([[ 0.0000, -0.4333,  0.8667,  0.4333]])
    """
    if not isinstance(weight, torch.Tensor) or weight.ndim != 2:
        raise ValueError(f"weight: expected an out × in tensor, got "
                         f"{getattr(weight, 'shape', type(weight).__name__)}")
    if not torch.isfinite(weight).all():
        raise ValueError("weight: contains NaN or inf")
    bits = _check_bits(bits)
    g = _check_group(group_size, weight.shape[1])
    w = weight.detach().to(torch.promote_types(weight.dtype, torch.float32))
    out = torch.empty_like(w)
    for c in range(0, w.shape[1], g):
        block = w[:, c:c + g]
        scale, zero = grid_params(block, bits, symmetric=symmetric)
        out[:, c:c + g] = fake_quantize(block, scale, zero, bits)
    return out.to(weight.dtype)


def block_linears(model) -> list[tuple[str, torch.nn.Linear]]:
    """``(name, module)`` of every ``nn.Linear`` inside the transformer blocks
    (``model.model.layers``): what the paper quantizes (not the embeddings, not the LM head)."""
    layers = getattr(getattr(model, "model", None), "layers", None)
    if layers is None:
        raise ValueError("model: expected a Hugging Face decoder with model.model.layers "
                         "(e.g. LlamaForCausalLM)")
    return [(f"model.layers.{i}.{n}", m) for i, layer in enumerate(layers)
            for n, m in layer.named_modules() if isinstance(m, torch.nn.Linear)]


def _check_ids(name: str, ids, vocab: int) -> torch.Tensor:
    if not isinstance(ids, torch.Tensor) or ids.ndim != 2 or ids.dtype != torch.long:
        raise ValueError(f"{name}: expected a batch × length LongTensor of token ids, got "
                         f"{getattr(ids, 'shape', type(ids).__name__)}")
    if ids.shape[1] < 2:
        raise ValueError(f"{name}: expected sequences of >= 2 tokens, got {ids.shape[1]}")
    if int(ids.min()) < 0 or int(ids.max()) >= vocab:
        raise ValueError(f"{name}: token ids must lie in [0, {vocab})")
    return ids


@torch.no_grad()
def cross_entropy(model, ids: torch.Tensor, *, batch_size: int = 64) -> float:
    """Mean next-token cross-entropy (nats) of ``model`` over the ``batch × length`` blocks
    ``ids`` (every position after the first is predicted)."""
    ids = _check_ids("ids", ids, model.config.vocab_size)
    check_int("batch_size", batch_size, low=1)
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    total, count = 0.0, 0
    for b in range(0, ids.shape[0], batch_size):
        x = ids[b:b + batch_size].to(device)
        logits = model(input_ids=x).logits[:, :-1].float()
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1), reduction="sum")
        total += float(loss)
        count += x[:, 1:].numel()
    model.train(was_training)
    return total / count


def quantization_error(model_fp, model_q, ids: torch.Tensor, *, ce_fp: float | None = None
                       ) -> dict[str, float]:
    """The paper's metric on the blocks ``ids``: ``ce_fp``, ``ce_q``, ``dce`` = ce_q − ce_fp
    (primary) and ``rel`` = ce_q / ce_fp − 1.  Pass ``ce_fp`` to reuse a full-precision CE."""
    fp = cross_entropy(model_fp, ids) if ce_fp is None else float(ce_fp)
    q = cross_entropy(model_q, ids)
    return {"ce_fp": fp, "ce_q": q, "dce": q - fp,
            "rel": q / fp - 1 if fp > 0 else math.nan}


def _groups_of(model, names: Sequence[str]) -> list[list[tuple[str, torch.nn.Linear]]]:
    """The block linears in gptqmodel's sequential order (a block's leftover linears last)."""
    linears = dict(block_linears(model))
    groups, seen = [], set()
    for i in range(len(model.model.layers)):
        prefix = f"model.layers.{i}."
        for sub in SUBLAYER_ORDER:
            g = [(prefix + s, linears[prefix + s]) for s in sub if prefix + s in linears]
            if g:
                groups.append(g)
                seen.update(n for n, _ in g)
        rest = [(n, m) for n, m in linears.items() if n.startswith(prefix) and n not in seen]
        if rest:
            groups.append(rest)
            seen.update(n for n, _ in rest)
    wanted = set(names)
    return [[(n, m) for n, m in g if n in wanted] for g in groups if any(n in wanted for n, _ in g)]


@torch.no_grad()
def _hessians(model, modules: Sequence[tuple[str, torch.nn.Linear]], calibration: torch.Tensor,
              batch_size: int) -> dict[str, torch.Tensor]:
    """H = 2/N · Σ x xᵀ over the N calibration tokens at each module's input (float64)."""
    hs = {n: torch.zeros(m.in_features, m.in_features, dtype=torch.float64)
          for n, m in modules}
    counts = dict.fromkeys(hs, 0)

    def hook(name):
        def f(_module, inputs, _output):
            x = inputs[0].detach().reshape(-1, inputs[0].shape[-1]).double().cpu()
            hs[name] += 2.0 * x.T @ x
            counts[name] += x.shape[0]
        return f

    handles = [m.register_forward_hook(hook(n)) for n, m in modules]
    device = next(model.parameters()).device
    try:
        for b in range(0, calibration.shape[0], batch_size):
            model(input_ids=calibration[b:b + batch_size].to(device))
    finally:
        for h in handles:
            h.remove()
    return {n: hs[n] / max(counts[n], 1) for n in hs}


def quantize_model(model, method: str, bits: int, group_size: int | None = 128, *,
                   calibration: torch.Tensor | None = None, symmetric: bool = True,
                   damp: float = 0.05, act_order: bool = True, block_size: int = 128,
                   batch_size: int = 32, modules: Sequence[str] | None = None):
    """A copy of ``model`` whose transformer-block linears are weight-quantized.

    Args:
        model: a Hugging Face decoder with ``model.model.layers`` (``LlamaForCausalLM``).
        method: ``"rtn"`` (:func:`rtn_quantize`) or ``"gptq"`` (:func:`~.gptq.gptq_quantize`).
        bits: bits per weight.
        group_size: input columns per grid (``None``: per output channel); the paper's 128.
        calibration: ``batch × length`` token ids (GPTQ only; required for it).
        symmetric: symmetric grid (gptqmodel's default, used by the paper).
        damp, act_order, block_size: GPTQ options (gptqmodel defaults 0.05, on, 128).
        batch_size: calibration sequences per forward pass.
        modules: names (from :func:`block_linears`) to quantize; default all block linears.

    Returns:
        The quantized copy (``model`` itself is left unchanged), in eval mode.
    """
    if method not in METHODS:
        raise ValueError(f"method: expected one of {METHODS}, got {method!r}")
    bits = _check_bits(bits)
    check_int("batch_size", batch_size, low=1)
    names = [n for n, _ in block_linears(model)]
    if modules is not None:
        unknown = sorted(set(modules) - set(names))
        if unknown:
            raise ValueError(f"modules: not block linears of this model: {unknown}")
        names = [n for n in names if n in set(modules)]
    if method == "gptq":
        if calibration is None:
            raise ValueError("calibration: GPTQ needs calibration token ids")
        calibration = _check_ids("calibration", calibration, model.config.vocab_size)
    q = copy.deepcopy(model).eval()
    if method == "rtn":
        with torch.no_grad():
            for n, m in block_linears(q):
                if n in names:
                    m.weight.copy_(rtn_quantize(m.weight, bits, group_size,
                                                symmetric=symmetric))
        return q
    from optzoo.scaling.gptq import gptq_quantize

    with torch.no_grad():
        for group in _groups_of(q, names):
            hs = _hessians(q, group, calibration, batch_size)
            for n, m in group:
                m.weight.copy_(gptq_quantize(m.weight, hs[n], bits, group_size,
                                             symmetric=symmetric, damp=damp,
                                             act_order=act_order,
                                             block_size=block_size).weight)
    return q
