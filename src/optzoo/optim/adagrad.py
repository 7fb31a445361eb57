"""Diagonal AdaGrad as an instance of SGD with adaptive preconditioning (Kovalev, ICLR 2026).

Reference: Dmitry Kovalev, "SGD with Adaptive Preconditioning: Unified Analysis and Momentum
Acceleration" (arXiv 2506.23803), §3 table, row "diagonal": 𝓗 = diagonal operators,
``proj_𝓗(S) = diag(S)``, and Algorithm 1 is AdaGrad (Duchi et al. 2011):

    s_k = s_{k-1} + g_k ⊙ g_k,        x_{k+1} = x_k − η g_k / sqrt(δ + s_k),

with R-norm ``‖·‖_∞`` (η = R = ‖x_0 − x*‖_∞; 2R for ``nesterov``).  ``nesterov=True`` is
Algorithm 2, covered by the paper's acceleration theorem (diagonal 𝓗, Assumption 4 automatic).

Difference from ``torch.optim.Adagrad`` (same method otherwise, with ``lr_decay = 0``):
torch computes ``x −= lr·g / (sqrt(s) + eps)`` (eps OUTSIDE the root) and starts from
``initial_accumulator_value``; here δ is INSIDE the root and the accumulator starts at 0, i.e.
torch's ``initial_accumulator_value = δ, eps = 0`` is exactly this class with ``eps = δ``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from optzoo.optim.adaptive_preconditioning import AdaptivePreconditionedSGD

__all__ = ["DiagAdaGrad"]


class DiagAdaGrad(AdaptivePreconditionedSGD):
    """Diagonal AdaGrad with the paper's optional Nesterov acceleration (Algorithm 2).

    Args:
        params: parameters or parameter groups.
        lr: η, a distance: ‖x_0 − x*‖_∞ (Alg. 1) or twice it (Alg. 2).
        eps: δ > 0, inside the square root.
        nesterov: Algorithm 2 (accelerated; parameters hold the query point y_k).
        average: Algorithm 1's :meth:`output` is the iterate average (paper) or the last iterate.
        maximize: maximize the objective.
        foreach: multi-tensor path (default: on CUDA).
    """

    def __init__(self, params: Iterable[Any], lr: float = 1.0, eps: float = 1e-8, *,
                 nesterov: bool = False, average: bool = True, maximize: bool = False,
                 foreach: bool | None = None) -> None:
        super().__init__(params, lr=lr, eps=eps, nesterov=nesterov, average=average,
                         maximize=maximize, foreach=foreach)

    def _init_accumulator(self, p, group):
        return {"sum_sq": torch.zeros_like(p, memory_format=torch.preserve_format)}

    def _precondition(self, state, g, group):
        acc = state["sum_sq"].to(g.dtype) + g * g
        state["sum_sq"].copy_(acc)
        return g / (acc + group["eps"]).sqrt() * group["lr"]

    def _precondition_foreach(self, states, gs, group):
        sums = [s["sum_sq"] for s in states]
        if all(a.dtype == g.dtype for a, g in zip(sums, gs, strict=True)):
            torch._foreach_addcmul_(sums, gs, gs)  # in place: the common, native-dtype case
            den = torch._foreach_add(sums, group["eps"])
            torch._foreach_sqrt_(den)
            us = torch._foreach_div(gs, den)
            torch._foreach_mul_(us, group["lr"])
            return us
        accs = torch._foreach_add([s["sum_sq"].to(g.dtype) for s, g in
                                   zip(states, gs, strict=True)], torch._foreach_mul(gs, gs))
        torch._foreach_copy_([s["sum_sq"] for s in states], accs)
        den = torch._foreach_add(accs, group["eps"])
        torch._foreach_sqrt_(den)
        us = torch._foreach_div(gs, den)
        torch._foreach_mul_(us, group["lr"])
        return us

    def preconditioner(self, p: torch.Tensor) -> torch.Tensor:
        """The diagonal of ``H_k``: ``η / sqrt(δ + Σ g_i²)``, shaped like ``p``."""
        group = self._group_of(p)
        return group["lr"] / (self.state[p]["sum_sq"] + group["eps"]).sqrt()
