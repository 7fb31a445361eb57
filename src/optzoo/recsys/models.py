"""Relevance backbones F_Θ of Zhou et al. (ICLR 2026, OpenReview cuzWopwoZG): matrix
factorisation and a small NeuMF (He et al., "Neural Collaborative Filtering", WWW 2017), the
paper's MF and NCF, in PyTorch.

Both map ``(users, items)`` to a score on the [0, 1] target scale (ratings / 5 here) and, with
``items=None``, score the whole catalogue: ``users x n_items`` — the r̃_u of the paper.
"""

from __future__ import annotations

import torch
from torch import nn


def _check_sizes(n_users: int, n_items: int, dim: int) -> None:
    for name, v in (("n_users", n_users), ("n_items", n_items), ("dim", dim)):
        if v < 1:
            raise ValueError(f"{name}: expected an integer >= 1, got {v}")


class MatrixFactorization(nn.Module):
    """r̃_ui = μ + b_u + b_i + ⟨p_u, q_i⟩.

    Args:
        n_users, n_items: sizes of the embedding tables.
        dim: latent dimension d.
        init_std: standard deviation of the factors' normal initialisation.
    """

    def __init__(self, n_users: int, n_items: int, dim: int = 32, init_std: float = 0.1):
        super().__init__()
        _check_sizes(n_users, n_items, dim)
        self.user = nn.Embedding(n_users, dim)
        self.item = nn.Embedding(n_items, dim)
        self.user_bias = nn.Embedding(n_users, 1)
        self.item_bias = nn.Embedding(n_items, 1)
        self.mu = nn.Parameter(torch.zeros(()))
        for emb in (self.user, self.item):
            nn.init.normal_(emb.weight, std=init_std)
        for emb in (self.user_bias, self.item_bias):
            nn.init.zeros_(emb.weight)

    def forward(self, users: torch.Tensor, items: torch.Tensor | None = None) -> torch.Tensor:
        p, bu = self.user(users), self.user_bias(users).squeeze(-1)
        if items is None:
            return self.mu + bu[:, None] + self.item_bias.weight.squeeze(-1)[None, :] + \
                p @ self.item.weight.T
        return self.mu + bu + self.item_bias(items).squeeze(-1) + (p * self.item(items)).sum(-1)


class NeuMF(nn.Module):
    """NeuMF-lite: a GMF branch p_u ⊙ q_i and a two-layer MLP on [p'_u, q'_i], concatenated
    and mapped to one score.

    Args:
        n_users, n_items: sizes of the embedding tables.
        dim: embedding dimension of each branch.
        hidden: width of the MLP's two hidden layers.
    """

    def __init__(self, n_users: int, n_items: int, dim: int = 16, hidden: int = 32,
                 init_std: float = 0.1):
        super().__init__()
        _check_sizes(n_users, n_items, dim)
        if hidden < 1:
            raise ValueError(f"hidden: expected an integer >= 1, got {hidden}")
        self.user_gmf, self.item_gmf = nn.Embedding(n_users, dim), nn.Embedding(n_items, dim)
        self.user_mlp, self.item_mlp = nn.Embedding(n_users, dim), nn.Embedding(n_items, dim)
        for emb in (self.user_gmf, self.item_gmf, self.user_mlp, self.item_mlp):
            nn.init.normal_(emb.weight, std=init_std)
        self.mlp = nn.Sequential(nn.Linear(2 * dim, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU())
        self.out = nn.Linear(dim + hidden, 1)

    def forward(self, users: torch.Tensor, items: torch.Tensor | None = None) -> torch.Tensor:
        if items is None:
            n_items = self.item_gmf.num_embeddings
            uu = users[:, None].expand(-1, n_items)
            ii = torch.arange(n_items, device=users.device)[None, :].expand(users.shape[0], -1)
            return self.forward(uu.reshape(-1), ii.reshape(-1)).reshape(users.shape[0], n_items)
        gmf = self.user_gmf(users) * self.item_gmf(items)
        mlp = self.mlp(torch.cat([self.user_mlp(users), self.item_mlp(items)], -1))
        return self.out(torch.cat([gmf, mlp], -1)).squeeze(-1)


BACKBONES = {"mf": MatrixFactorization, "neumf": NeuMF}


def make_backbone(name: str, n_users: int, n_items: int, dim: int) -> nn.Module:
    """``"mf"`` (d = dim) or ``"neumf"`` (dim // 2 per branch, MLP width dim)."""
    if name == "mf":
        return MatrixFactorization(n_users, n_items, dim)
    if name == "neumf":
        return NeuMF(n_users, n_items, max(1, dim // 2), dim)
    raise ValueError(f"backbone: expected one of {sorted(BACKBONES)}, got {name!r}")
