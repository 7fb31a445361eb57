"""DASGO (diagonal one-sided AdaGrad) as an instance of SGD with adaptive preconditioning.

References: Dmitry Kovalev, "SGD with Adaptive Preconditioning: Unified Analysis and Momentum
Acceleration" (ICLR 2026, arXiv 2506.23803), §3 table, row "DASGO"; DASGO itself is from An et
al. 2025, "ASGO: Adaptive Structured Gradient Optimization".  For X ∈ R^{m×n},
𝓗 = {G ↦ diag(b) G : b ∈ R^m}, ``proj_𝓗(S)`` keeps the row-wise means of the diagonal of S, and
Algorithm 1 reads, row by row,

    r_k[i] = r_{k-1}[i] + ‖G_k[i, :]‖² / n,      X[i, :] −= η G_k[i, :] / sqrt(δ + r_k[i]),

with R-norm ``‖·‖_{2→∞}/√n`` (η = R = max_i ‖X_0[i] − X*[i]‖₂/√n, the largest row RMS distance;
2R for ``nesterov``).  With a one-step accumulator (first step) and δ → 0 the step is
``η √n G[i]/‖G[i]‖``, Scion's row-normalized (‖·‖_{2→∞} LMO) step.  ``nesterov=True`` is
Algorithm 2, covered by the paper's acceleration theorem (diagonal 𝓗).

Shapes: a parameter with ``dim >= 2`` is viewed as ``(shape[0], -1)``; a vector or scalar is a
1×d row vector, so DASGO reduces to AdaGrad-Norm on it (one row, 1/d factor).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from optzoo.optim.adaptive_preconditioning import AdaptivePreconditionedSGD

__all__ = ["DASGO", "as_matrix"]


def as_matrix(t: torch.Tensor) -> torch.Tensor:
    """``t`` viewed as a matrix: ``(shape[0], -1)`` for ``dim >= 2``, a 1×d row otherwise."""
    return t.reshape(t.shape[0], -1) if t.dim() >= 2 else t.reshape(1, -1)


class DASGO(AdaptivePreconditionedSGD):
    """DASGO: row-wise AdaGrad-Norm of matrix parameters, with optional Algorithm 2.

    Args:
        params: parameters or parameter groups.
        lr: η, a distance: max row RMS distance ‖X_0 − X*‖_{2→∞}/√n (Alg. 1), twice it (Alg. 2).
        eps: δ > 0, inside the square root.
        nesterov: Algorithm 2 (accelerated; parameters hold the query point y_k).
        average: Algorithm 1's :meth:`output` is the iterate average (paper) or the last iterate.
        maximize: maximize the objective.
        foreach: multi-tensor path (default: on CUDA).

    Example:
        >>> import torch
        >>> from optzoo.optim import DASGO
        >>> _ = torch.manual_seed(0)
        >>> W = torch.nn.Parameter(torch.zeros(4, 6))
        >>> target = torch.randn(4, 6)
        >>> opt = DASGO([W], lr=1.0, nesterov=True)  # Algorithm 2: W holds the query point y_k
        >>> for _ in range(30):
        ...     opt.zero_grad()
        ...     loss = ((W - target) ** 2).sum()
        ...     loss.backward()
        ...     _ = opt.step()
        >>> with opt.swap_output(), torch.no_grad():  # the method's output x̄
        ...     print(bool(((W - target) ** 2).sum() < 1e-3))
        True
    """

    def __init__(self, params: Iterable[Any], lr: float = 1.0, eps: float = 1e-8, *,
                 nesterov: bool = False, average: bool = True, maximize: bool = False,
                 foreach: bool | None = None) -> None:
        super().__init__(params, lr=lr, eps=eps, nesterov=nesterov, average=average,
                         maximize=maximize, foreach=foreach)

    def _init_accumulator(self, p, group):
        m = as_matrix(p).shape[0]
        return {"row_sum_sq": torch.zeros((m, 1), dtype=p.dtype, device=p.device)}

    def _precondition(self, state, g, group):
        g2 = as_matrix(g)
        n = max(g2.shape[1], 1)
        acc = state["row_sum_sq"].to(g.dtype) + (g2 * g2).sum(dim=1, keepdim=True) / n
        state["row_sum_sq"].copy_(acc)
        return (g2 / (acc + group["eps"]).sqrt() * group["lr"]).reshape(g.shape)

    def _precondition_foreach(self, states, gs, group):
        g2s = [as_matrix(g) for g in gs]
        sq = torch._foreach_mul(g2s, g2s)
        rows = [s.sum(dim=1, keepdim=True) for s in sq]  # row reductions have no foreach op
        torch._foreach_div_(rows, [float(max(g.shape[1], 1)) for g in g2s])
        accs = torch._foreach_add([s["row_sum_sq"].to(g.dtype) for s, g in
                                   zip(states, gs, strict=True)], rows)
        torch._foreach_copy_([s["row_sum_sq"] for s in states], accs)
        den = torch._foreach_add(accs, group["eps"])
        torch._foreach_sqrt_(den)
        us = torch._foreach_div(g2s, [d.expand_as(g) for d, g in zip(den, g2s, strict=True)])
        torch._foreach_mul_(us, group["lr"])
        return [u.reshape(g.shape) for u, g in zip(us, gs, strict=True)]

    def preconditioner(self, p: torch.Tensor) -> torch.Tensor:
        """The row scales b_k (shape ``(m, 1)``) with ``H_k G = diag(b_k) G``."""
        group = self._group_of(p)
        return group["lr"] / (self.state[p]["row_sum_sq"] + group["eps"]).sqrt()
