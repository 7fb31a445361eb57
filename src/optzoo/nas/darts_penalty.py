"""Baseline: DARTS / Gumbel search with an expected-cost penalty, L + λ · E[c(A)] / c_ref.

The regularised objective that ConNAS (ICLR 2026, OpenReview fcKMFIiNFQ) argues against, in the
style of FBNet (Wu et al., CVPR 2019) and ProxylessNAS (Cai et al., ICLR 2019): the expected cost
of the architecture under independent per-edge categoricals ``p_l = softmax(α_l)``::

    E[c(A)] = c_0 + Σ_l Σ_j p_{l,j} d_l(j),

exact for costs that are additive over edges, as params and FLOPs of a NATS-style cell network
are (:meth:`~optzoo.nas.search_space.CellSpace.edge_costs`).  A measured cost such as latency is
not exactly additive; FBNet's answer is a per-op lookup table, i.e. the additive model
``c_0 + Σ_l d_l(A_l)`` fitted to the measurements (:func:`additive_fit`, least squares over the
tabulated architectures).  ``c_ref`` makes λ dimensionless; it
is a property of the space (the largest architecture's cost), not of a budget, so one λ is one
search whatever the budget -- which is what a user without per-budget tuning gets.  The
probabilities are softmax(α) (ProxylessNAS); FBNet uses the Gumbel sample instead.  The final
argmax is returned (no feasibility-aware selection: the method knows no budget).
"""

from __future__ import annotations

import numpy as np
import torch

from optzoo.nas.darts import SearchConfig, SearchResult, search
from optzoo.nas.search_space import CellSpace

LAMBDAS = (1e-3, 1e-2, 1e-1, 1.0)


def expected_cost(alpha: torch.Tensor, edge_costs: torch.Tensor, base: float = 0.0
                  ) -> torch.Tensor:
    """E[c] = base + Σ_l softmax(α_l) · d_l, differentiable in ``alpha`` (``n_edges x n_ops``)."""
    if alpha.shape != edge_costs.shape:
        raise ValueError(f"edge_costs: expected shape {tuple(alpha.shape)}, got "
                         f"{tuple(edge_costs.shape)}")
    return base + (alpha.softmax(dim=1) * edge_costs.to(alpha)).sum()


def additive_fit(space: CellSpace, values) -> tuple[float, list[list[float]]]:
    """FBNet-style per-op lookup table: ``(c_0, d)`` with ``d[l][j]`` the cost of op j on edge l,
    the least-squares fit of ``c_0 + Σ_l d_l(A_l)`` to ``values`` (one per architecture, in
    :meth:`CellSpace.all_archs` order; each edge's first op is the reference, d = 0)."""
    y = np.asarray(values, dtype=float)
    if y.shape != (space.size,) or not np.isfinite(y).all():
        raise ValueError(f"values: expected {space.size} finite costs, got shape {y.shape}")
    k = space.n_ops - 1
    design = np.zeros((space.size, 1 + space.n_edges * k))
    design[:, 0] = 1.0
    for r, arch in enumerate(space.all_archs()):
        for e, j in enumerate(arch):
            if j > 0:
                design[r, 1 + e * k + j - 1] = 1.0
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    d = [[0.0, *coef[1 + e * k:1 + (e + 1) * k].tolist()] for e in range(space.n_edges)]
    return float(coef[0]), d


class PenaltyGradient:
    """``alpha_grad`` hook adding λ ∇_α E[c]/c_ref to the task gradient.

    Args:
        space: the cell space (its exact additive costs are used).
        cost: "params" or "flops" (or any name when ``table`` is given).
        lam: λ ≥ 0.
        table: ``(c_0, d)`` of another additive cost model, e.g. :func:`additive_fit` of a
            measured latency.
    """

    def __init__(self, space: CellSpace, cost: str, lam: float,
                 table: tuple[float, list[list[float]]] | None = None):
        if table is None and cost not in ("params", "flops"):
            raise ValueError(f"cost: expected 'params' or 'flops' (or a table), got {cost!r}")
        if not lam >= 0:
            raise ValueError(f"lam: expected >= 0, got {lam}")
        if table is None:
            table = (space.base_costs()[cost], space.edge_costs()[cost])
        base = table[0]
        d = torch.as_tensor(table[1], dtype=torch.float64)
        self.ref = float(base + d.max(dim=1).values.sum())
        self.edge_costs, self.base, self.lam = d, float(base), float(lam)

    def __call__(self, alpha: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        a = alpha.detach().double().requires_grad_()
        (g,) = torch.autograd.grad(expected_cost(a, self.edge_costs, self.base) / self.ref, a)
        return grad + self.lam * g.to(grad)


def darts_penalty_search(space: CellSpace, train, valid, cost: str, lam: float,
                         config: SearchConfig, seed: int,
                         table: tuple[float, list[list[float]]] | None = None) -> SearchResult:
    """DARTS / Gumbel search of ``L + λ E[cost]/c_ref``; returns the final argmax."""
    return search(space, train, valid, config, seed,
                  alpha_grad=PenaltyGradient(space, cost, lam, table))
