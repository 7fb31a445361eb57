"""AdaGrad-Norm as an instance of SGD with adaptive preconditioning (Kovalev, ICLR 2026).

Reference: Dmitry Kovalev, "SGD with Adaptive Preconditioning: Unified Analysis and Momentum
Acceleration" (arXiv 2506.23803), §3 table, row "scalars": 𝓗 = {β·I}, so
``proj_𝓗(S) = (tr S / d)·I`` and Algorithm 1 reads

    s_k = s_{k-1} + ‖g_k‖² / d,        x_{k+1} = x_k − η g_k / sqrt(δ + s_k),

with R-norm ``‖·‖₂/√d`` (so η = R = ‖x_0 − x*‖₂/√d, the RMS distance; 2R for ``nesterov``).
The 1/d factor comes from the projection; it is what makes η an RMS distance.  ``nesterov=True``
is the paper's Algorithm 2, covered by its acceleration theorem (scalar 𝓗 commutes with
everything).  One scalar accumulator per parameter tensor (see
:mod:`optzoo.optim.adaptive_preconditioning` for this and the other shared choices).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from optzoo.optim.adaptive_preconditioning import AdaptivePreconditionedSGD

__all__ = ["AdaGradNorm"]


class AdaGradNorm(AdaptivePreconditionedSGD):
    """AdaGrad-Norm (scalar 𝓗) with the paper's optional Nesterov acceleration.

    Args:
        params: parameters or parameter groups.
        lr: η, a distance: the RMS distance ‖x_0 − x*‖₂/√d (Alg. 1) or twice it (Alg. 2).
        eps: δ > 0, inside the square root.
        nesterov: Algorithm 2 (accelerated; parameters hold the query point y_k).
        average: Algorithm 1's :meth:`output` is the iterate average (paper) or the last iterate.
        maximize: maximize the objective.
        foreach: multi-tensor path (default: on CUDA).

    Example:
        >>> import torch
        >>> from optzoo.optim import AdaGradNorm
        >>> w = torch.nn.Parameter(torch.zeros(10))
        >>> opt = AdaGradNorm([w], lr=1.0)  # lr = ‖x_0 − x*‖₂/√d = 1 here
        >>> for _ in range(50):
        ...     opt.zero_grad()
        ...     ((w - 1) ** 2).sum().backward()
        ...     _ = opt.step()
        >>> round(opt.output()[w].mean().item(), 2)  # Algorithm 1's output: the iterate average
        0.98
    """

    def __init__(self, params: Iterable[Any], lr: float = 1.0, eps: float = 1e-8, *,
                 nesterov: bool = False, average: bool = True, maximize: bool = False,
                 foreach: bool | None = None) -> None:
        super().__init__(params, lr=lr, eps=eps, nesterov=nesterov, average=average,
                         maximize=maximize, foreach=foreach)

    def _init_accumulator(self, p, group):
        return {"sum_sq": torch.zeros((), dtype=p.dtype, device=p.device)}

    def _precondition(self, state, g, group):
        norm = torch.linalg.vector_norm(g)
        acc = state["sum_sq"].to(g.dtype) + norm * norm / max(g.numel(), 1)
        state["sum_sq"].copy_(acc)
        return g / (acc + group["eps"]).sqrt() * group["lr"]

    def _precondition_foreach(self, states, gs, group):
        norms = torch._foreach_norm(gs)
        sq = torch._foreach_mul(norms, norms)
        torch._foreach_div_(sq, [float(max(g.numel(), 1)) for g in gs])
        accs = torch._foreach_add([s["sum_sq"].to(g.dtype) for s, g in
                                   zip(states, gs, strict=True)], sq)
        torch._foreach_copy_([s["sum_sq"] for s in states], accs)
        den = torch._foreach_add(accs, group["eps"])
        torch._foreach_sqrt_(den)
        us = torch._foreach_div(gs, den)
        torch._foreach_mul_(us, group["lr"])
        return us

    def preconditioner(self, p: torch.Tensor) -> torch.Tensor:
        """The scalar β_k with ``H_k = β_k I``: ``η / sqrt(δ + Σ‖g_i‖²/d)``."""
        group = self._group_of(p)
        return group["lr"] / (self.state[p]["sum_sq"] + group["eps"]).sqrt()
