"""GPTQ (Frantar, Ashkboos, Hoefler & Alistarh, "GPTQ: Accurate Post-Training Quantization for
Generative Pre-trained Transformers", ICLR 2023): the post-training quantizer that
Catalan-Tatjer et al., "Training Dynamics Impact Post-Training Quantization Robustness" (ICLR
2026) apply to every checkpoint, here on CPU in float64.

Problem (layer-wise, per linear layer with weight ``W`` (out × in) and calibration inputs ``X``
(in × N)): minimise ``‖W X − Ŵ X‖²_F`` over ``Ŵ`` on the quantization grid.  With
``H = 2 X Xᵀ / N`` the error of a row ``δ = w − ŵ`` is ``δ H δᵀ / 2`` (up to the 1/N).

Algorithm (GPTQ paper, Alg. 1; reference code IST-DASLab ``gptq.py`` ``fasterquant``):

1. dead inputs (``H_ii = 0``) get ``H_ii = 1`` and ``W[:, i] = 0``;
2. act-order (``desc_act``): columns are processed by decreasing ``diag H``;
3. damping: ``H ← H + λ · mean(diag H) · I`` with gptqmodel's ``λ = 0.05``, raised by 0.01
   until the Cholesky factorisation succeeds (gptqmodel's auto-increment);
4. ``U = chol(H⁻¹)ᵀ`` (upper Cholesky factor of the damped inverse Hessian): row ``j`` of
   ``U`` divided by ``U_jj`` is the OBS update direction of column ``j`` with the columns before
   it already removed, so one factorisation replaces OBQ's per-step inverse downdates
   (paper, Eq. (3) and "Cholesky reformulation");
5. columns in blocks of ``block_size`` (lazy batch updates): inside a block, quantize column
   ``j``, ``e = (w_j − q_j) / U_jj``, ``W[:, j:b₂] −= e · U[j, j:b₂]``; after the block,
   ``W[:, b₂:] −= E · U[b₁:b₂, b₂:]`` in one matrix product (paper, "Lazy batch-updates");
6. groups: every ``group_size`` columns in processing order a fresh min-max grid is fitted to
   the group's *current* (error-compensated) weights (gptqmodel with ``desc_act``: groups are
   contiguous in the permuted order); ``static_groups`` fits every grid on the original weights
   by original column index first instead.

Choice recorded: IST's code fits a group's grid on the outer weight matrix, which inside a lazy
block lacks the block's pending updates; here the pending updates are applied before the fit, so
the result does not depend on ``block_size`` (identical to IST's whenever groups start at block
boundaries, e.g. the default 128 / 128).

Example:
    >>> import torch
    >>> from optzoo.scaling.gptq import gptq_quantize, layer_error
    >>> from optzoo.scaling.quantization import rtn_quantize
    >>> g = torch.Generator().manual_seed(0)
    >>> W = torch.randn(64, 128, generator=g)
    >>> X = torch.randn(128, 512, generator=g).cumsum(0) / 8     # correlated inputs
    >>> H = 2 * X @ X.T / 512
    >>> res = gptq_quantize(W, H, bits=3, group_size=32)
    >>> layer_error(W, res.weight, H) < layer_error(W, rtn_quantize(W, 3, 32, symmetric=True), H)
    True
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from optzoo.checks import check_int, check_real
from optzoo.scaling.quantization import _check_bits, _check_group, fake_quantize, grid_params

__all__ = ["GPTQResult", "gptq_quantize", "layer_error"]


@dataclass
class GPTQResult:
    """Output of :func:`gptq_quantize`.

    Attributes:
        weight: the dequantized ``out × in`` weight (input order of the original, its dtype).
        loss: GPTQ's own running loss ``Σ_j ‖w_j − q_j‖² / (2 U_jj²)`` (the OBS saliencies).
        damp: the damping ratio that made the Cholesky factorisation succeed.
        perm: the processing order of the input columns (``None`` without act-order).
    """

    weight: torch.Tensor
    loss: float
    damp: float
    perm: torch.Tensor | None


def layer_error(weight: torch.Tensor, quantized: torch.Tensor, hessian: torch.Tensor) -> float:
    """The layer-reconstruction error ``tr((W − Ŵ) H (W − Ŵ)ᵀ)`` (``= 2/N ‖(W − Ŵ) X‖²`` for
    ``H = 2 X Xᵀ / N``), in float64."""
    d = (weight.double() - quantized.double())
    return float(torch.einsum("ij,jk,ik->", d, hessian.double(), d))


def _check_inputs(weight, hessian) -> None:
    if not isinstance(weight, torch.Tensor) or weight.ndim != 2:
        raise ValueError(f"weight: expected an out × in tensor, got "
                         f"{getattr(weight, 'shape', type(weight).__name__)}")
    cols = weight.shape[1]
    if not isinstance(hessian, torch.Tensor) or tuple(hessian.shape) != (cols, cols):
        raise ValueError(f"hessian: expected a {cols} × {cols} tensor (in × in), got "
                         f"{getattr(hessian, 'shape', type(hessian).__name__)}")
    if not torch.isfinite(weight).all():
        raise ValueError("weight: contains NaN or inf")
    if not torch.isfinite(hessian).all():
        raise ValueError("hessian: contains NaN or inf")
    if not torch.allclose(hessian, hessian.T, rtol=1e-5, atol=1e-8 * float(hessian.abs().max())
                          + 1e-12):
        raise ValueError("hessian: expected a symmetric matrix")


def _inverse_cholesky(H: torch.Tensor, damp: float, max_damp: float = 1.0
                      ) -> tuple[torch.Tensor, float]:
    """Upper Cholesky factor of (H + damp · mean diag H · I)⁻¹, raising ``damp`` by 0.01 on
    failure (gptqmodel)."""
    mean = float(torch.diag(H).mean())
    eye = torch.eye(H.shape[0], dtype=H.dtype)
    d = damp
    while True:
        Hd = H + d * mean * eye
        L, info = torch.linalg.cholesky_ex(Hd)
        if int(info) == 0:
            Hinv = torch.cholesky_inverse(L)
            U, info = torch.linalg.cholesky_ex(Hinv, upper=True)
            if int(info) == 0:
                return U, d
        d = round(d + 0.01, 10)
        if d > max_damp:
            raise ValueError(f"hessian: not positive definite even with damping {max_damp}")


def gptq_quantize(weight: torch.Tensor, hessian: torch.Tensor, bits: int,
                  group_size: int | None = 128, *, symmetric: bool = True, damp: float = 0.05,
                  act_order: bool = True, block_size: int = 128,
                  static_groups: bool = False) -> GPTQResult:
    """GPTQ-quantize one linear layer (see the module docstring for the algorithm).

    Args:
        weight: ``out_features × in_features``.
        hessian: ``in × in`` proxy Hessian ``2 X Xᵀ / N`` of the layer's calibration inputs.
        bits: bits per weight.
        group_size: input columns per grid (``None``: one grid per output channel).
        symmetric: symmetric grid (gptqmodel's default) or asymmetric min-max.
        damp: relative damping λ (× mean diag H), raised by 0.01 until H is factorisable.
        act_order: process columns by decreasing ``diag H`` (gptqmodel ``desc_act``).
        block_size: columns per lazy batch update (changes speed, not the result).
        static_groups: fit every group's grid on the original weights first.

    Returns:
        :class:`GPTQResult` with the dequantized weight.

    Example:
        >>> import torch
        >>> W, H = torch.randn(8, 16), torch.eye(16)
        >>> res = gptq_quantize(W, H, bits=4, group_size=None)
        >>> res.weight.shape, res.damp
        (torch.Size([8, 16]), 0.05)
    """
    _check_inputs(weight, hessian)
    bits = _check_bits(bits)
    cols = weight.shape[1]
    g = _check_group(group_size, cols)
    check_real("damp", damp, low=0.0)
    check_int("block_size", block_size, low=1)
    W = weight.detach().double().clone()
    H = hessian.detach().double().clone()
    dead = torch.diag(H) == 0
    H[dead, dead] = 1.0
    W[:, dead] = 0.0
    static = None
    if static_groups:
        static = [grid_params(W[:, c:c + g], bits, symmetric=symmetric)
                  for c in range(0, cols, g)]
    perm = None
    if act_order:
        perm = torch.argsort(torch.diag(H), descending=True, stable=True)
        W, H = W[:, perm], H[perm][:, perm]
    U, used = _inverse_cholesky(H, float(damp))
    Q = torch.zeros_like(W)
    loss = 0.0
    scale = zero = None
    for i1 in range(0, cols, block_size):
        i2 = min(i1 + block_size, cols)
        W1 = W[:, i1:i2].clone()
        E1 = torch.zeros_like(W1)
        U1 = U[i1:i2, i1:i2]
        for i in range(i2 - i1):
            j = i1 + i
            if static is not None:
                orig = int(perm[j]) if perm is not None else j
                scale, zero = static[orig // g]
            elif j % g == 0:
                scale, zero = grid_params(_current(W, W1, E1, U, i1, i, i2, j + g), bits,
                                          symmetric=symmetric)
            w = W1[:, i]
            q = fake_quantize(w[:, None], scale, zero, bits)[:, 0]
            e = (w - q) / U1[i, i]
            loss += float((e ** 2).sum()) / 2
            W1[:, i:] -= e[:, None] * U1[i, i:][None, :]
            Q[:, j] = q
            E1[:, i] = e
        W[:, i2:] -= E1 @ U[i1:i2, i2:]
    if perm is not None:
        Q = Q[:, torch.argsort(perm)]
    return GPTQResult(Q.to(weight.dtype), loss, used, perm)


def _current(W, W1, E1, U, i1: int, i: int, i2: int, end: int) -> torch.Tensor:
    """Current values of processing-order columns ``i1 + i … end − 1``: those inside the block
    from ``W1``, those after it from ``W`` with the block's pending updates applied."""
    inside = W1[:, i:min(end, i2) - i1]
    if end <= i2:
        return inside
    after = W[:, i2:end] - E1[:, :i] @ U[i1:i1 + i, i2:end]
    return torch.cat([inside, after], dim=1)
