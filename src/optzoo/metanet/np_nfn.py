"""Permutation-equivariant neural functional network (NFN, Zhou et al. 2023, "Permutation
Equivariant Neural Functionals"; the NP layer, DWS-style), the permutation-only baseline of
Tran et al., "Quasi-Equivariant Metanetworks" (ICLR 2026, OpenReview XMiDpi2mWY).

Weight-space features: per layer l, W_l of shape ``B x C x n_l x n_{l-1}`` and b_l of shape
``B x C x n_l``.  The NP layer treats every neuron (input and output ones too) as exchangeable,
so each output is a channel-mixing of the terms that commute with neuron permutations:
W'_l = A W_l + B rowmean(W_l) + C colmean(W_l) + D mean(W_l) + E b_l 1ᵀ + F 1 b_{l-1}ᵀ + c,
b'_l = A' b_l + B' mean(b_l) + C' rowmean(W_l) + D' colmean(W_{l+1}) + c'.
The invariant head is NFN's HNP pooling (first layer averaged over its rows, last layer over
its columns, hidden layers over both, the output bias kept), then a batch norm of the pooled
features and an MLP (:func:`mlp_head`).  It is invariant to
hidden-neuron permutations but not to ReLU rescalings or sin sign flips.
"""

from __future__ import annotations

import torch
from torch import nn


def _mix(c_in: int, c_out: int) -> nn.Parameter:
    return nn.Parameter(torch.randn(c_out, c_in, dtype=torch.float64) / c_in ** 0.5)


def _apply(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Channel mixing ``out[b, o, ...] = Σ_c a[o, c] x[b, c, ...]``."""
    return torch.einsum("oc,bc...->bo...", a, x)


class NPLinear(nn.Module):
    """One NP layer (module docstring) from ``c_in`` to ``c_out`` channels."""

    TERMS_W, TERMS_B = 6, 4

    def __init__(self, n_layers: int, c_in: int, c_out: int) -> None:
        super().__init__()
        self.n_layers = n_layers
        self.w_mix = nn.ParameterList(
            [_mix(c_in * self.TERMS_W, c_out) for _ in range(n_layers)])
        self.b_mix = nn.ParameterList(
            [_mix(c_in * self.TERMS_B, c_out) for _ in range(n_layers)])
        self.w_bias = nn.Parameter(torch.zeros(n_layers, c_out, dtype=torch.float64))
        self.b_bias = nn.Parameter(torch.zeros(n_layers, c_out, dtype=torch.float64))

    def forward(self, weights, biases):
        out_w, out_b = [], []
        L = self.n_layers
        for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
            rows, cols = w.shape[-2:]
            prev = biases[i - 1] if i > 0 else torch.zeros_like(w[..., 0, :])
            terms = [w, w.mean(-1, keepdim=True).expand_as(w),
                     w.mean(-2, keepdim=True).expand_as(w),
                     w.mean((-2, -1), keepdim=True).expand_as(w),
                     b.unsqueeze(-1).expand(-1, -1, rows, cols),
                     prev.unsqueeze(-2).expand(-1, -1, rows, cols)]
            out_w.append(_apply(self.w_mix[i], torch.cat(terms, 1))
                         + self.w_bias[i][None, :, None, None])
            nxt = (weights[i + 1].mean(-2) if i < L - 1 else torch.zeros_like(b))
            terms_b = [b, b.mean(-1, keepdim=True).expand_as(b), w.mean(-1), nxt]
            out_b.append(_apply(self.b_mix[i], torch.cat(terms_b, 1))
                         + self.b_bias[i][None, :, None])
        return out_w, out_b


def hnp_pool(weights, biases) -> torch.Tensor:
    """NFN's HNP pooling: invariant to hidden-neuron permutations, ``B x features``."""
    out, L = [], len(weights)
    for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
        if i == 0 and L > 1:
            out.append(w.mean(-2).flatten(1))  # keeps the (fixed) input neurons
        elif i == L - 1 and L > 1:
            out.append(w.mean(-1).flatten(1))  # keeps the (fixed) output neurons
        else:
            out.append(w.mean((-2, -1)))
        out.append(b.flatten(1) if i == L - 1 else b.mean(-1))
    return torch.cat(out, 1)


def pooled_size(widths, channels: int) -> int:
    L = len(widths) - 1
    if L == 1:
        return channels * (1 + widths[-1])
    return channels * (widths[0] + (L - 2) + widths[-1] + (L - 1) + widths[-1])


def mlp_head(d: int, hidden: int, out_dim: int) -> nn.Sequential:
    """The invariant head: BatchNorm1d over the ``d`` pooled (invariant) features, then an MLP.

    The batch norm standardises each pooled feature, as the flat MLP standardises its input:
    without it, zoos whose nets differ little from a shared init give pooled features that are
    nearly constant across nets, and the Monomial-NFN stayed at chance on the SIREN zoo
    (train accuracy 0.12; 0.85 with it).  It acts on invariant features, so every invariance
    is kept (the official NFN / Monomial-NFN heads have no such layer).
    """
    return nn.Sequential(nn.BatchNorm1d(d), nn.Linear(d, hidden), nn.ReLU(),
                         nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, out_dim)).double()


class NPNFN(nn.Module):
    """NP layers with ReLU, HNP pooling and an MLP head.

    Args:
        widths: (n_0, ..., n_L) of the networks read.
        out_dim: outputs.
        channels: hidden channels of the equivariant layers (one entry per layer).
        head_hidden: width of the head's hidden layers.
    """

    def __init__(self, widths, out_dim: int = 1, channels=(16, 16), head_hidden: int = 128):
        super().__init__()
        if len(widths) < 2 or not channels or min(channels) < 1:
            raise ValueError(f"widths, channels: expected >= 2 widths and positive channels, "
                             f"got {widths}, {channels}")
        L = len(widths) - 1
        dims = (1, *channels)
        self.layers = nn.ModuleList(NPLinear(L, a, b) for a, b in zip(dims[:-1], dims[1:],
                                                                      strict=True))
        self.head = mlp_head(pooled_size(widths, channels[-1]), head_hidden, out_dim)

    def forward(self, weights, biases) -> torch.Tensor:
        w = [x.unsqueeze(1) for x in weights]
        b = [x.unsqueeze(1) for x in biases]
        for layer in self.layers:
            w, b = layer(w, b)
            w, b = [torch.relu(x) for x in w], [torch.relu(x) for x in b]
        return self.head(hnp_pool(w, b))
