"""Flat-MLP metanetwork: the non-invariant baseline of Tran et al., "Quasi-Equivariant
Metanetworks" (ICLR 2026, OpenReview XMiDpi2mWY), as in Zhou et al. (2023) and Unterthiner et
al. (2020): every weight and bias is flattened into one vector, standardised per coordinate
with statistics of the training zoo, and fed to an MLP.  It sees neither permutations nor
scalings, so its predictions change under the symmetry group (the rescaled-test baseline).
"""

from __future__ import annotations

import torch
from torch import nn


class FlatMLP(nn.Module):
    """MLP on the flattened, standardised parameter vector.

    Args:
        widths: (n_0, ..., n_L) of the networks read.
        out_dim: outputs (1 for accuracy prediction, #classes for INR classification).
        hidden: width of the two hidden layers.
    """

    def __init__(self, widths, out_dim: int = 1, hidden: int = 256) -> None:
        super().__init__()
        if len(widths) < 2 or out_dim < 1 or hidden < 1:
            raise ValueError(f"widths, out_dim, hidden: expected >= 2 widths and positive "
                             f"sizes, got {widths}, {out_dim}, {hidden}")
        d = sum(b * a + b for a, b in zip(widths[:-1], widths[1:], strict=True))
        self.register_buffer("mean", torch.zeros(d, dtype=torch.float64))
        self.register_buffer("std", torch.ones(d, dtype=torch.float64))
        self.net = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                 nn.ReLU(), nn.Linear(hidden, out_dim)).double()

    @staticmethod
    def flatten(weights, biases) -> torch.Tensor:
        """``B x d`` parameter vectors (layer by layer: W_l row-major, then b_l)."""
        parts = []
        for w, b in zip(weights, biases, strict=True):
            parts += [w.flatten(1), b]
        return torch.cat(parts, dim=1)

    def fit_normalizer(self, weights, biases) -> FlatMLP:
        """Set the per-coordinate standardisation from a training zoo."""
        x = self.flatten(weights, biases)
        self.mean.copy_(x.mean(0))
        self.std.copy_(x.std(0).clamp_min(1e-8))
        return self

    def forward(self, weights, biases) -> torch.Tensor:
        return self.net((self.flatten(weights, biases) - self.mean) / self.std)
