"""Normalized SGD with momentum, and its implicit-gradient-transport variant (NIGT).

Paper: Cutkosky & Mehta, "Momentum Improves Normalized SGD" (ICML 2020, arXiv 2002.03305).  A
baseline of the ODOG reproduction (:mod:`optzoo.optim.o2nc`), whose complexity table lists it as
``ε^{-2}`` deterministic and ``σ²ε^{-3.5}`` stochastic (the latter under second-order smoothness,
with the transport variant).

Algorithm 1 (normalized SGD with momentum)::

    m_t = β m_{t-1} + (1 − β) g_t,      g_t = ∇f(x_t; ξ_t),      m_0 = 0,
    x_{t+1} = x_t − η · m_t / ‖m_t‖.

Algorithm 2 (NIGT, ``transport=True``) queries the gradient at the extrapolated point
``y_t = x_t + β/(1 − β) · (x_t − x_{t-1})`` (``x_0 = x_{-1}``), which cancels the second-order
bias of the momentum average when the Hessian is Lipschitz.  It needs a closure: the optimizer
moves the parameters to ``y_t``, calls the closure, and moves them back to ``x_t``.

The norm ``‖m_t‖`` is taken **per parameter group, jointly over its parameters** (the paper has one
vector).  A zero momentum (a zero gradient at the first step) gives no move.

Reference:
    A. Cutkosky, H. Mehta. Momentum Improves Normalized SGD. ICML 2020.
"""

from __future__ import annotations

import torch

from optzoo.optim.base import ZooOptimizer, check_hyper

__all__ = ["NormalizedSGD"]


def _joint_norm(ts: list[torch.Tensor], foreach: bool) -> float:
    ts = [t.float() if t.dtype in (torch.float16, torch.bfloat16) else t for t in ts]
    norms = torch._foreach_norm(ts) if foreach else [torch.linalg.vector_norm(t) for t in ts]
    return float(torch.stack(norms).square().sum().sqrt())


class NormalizedSGD(ZooOptimizer):
    """Normalized SGD with momentum (Cutkosky & Mehta 2020, Alg. 1; Alg. 2 with ``transport``).

    Args:
        params: parameters or parameter groups (each group is normalized as one vector).
        lr: step length ``η`` (every step moves exactly ``η``).
        momentum: ``β ∈ [0, 1)``.
        transport: query gradients at ``x_t + β/(1-β)(x_t - x_{t-1})`` (NIGT; needs a closure).
        maximize: maximize instead.
        foreach: use the ``torch._foreach_*`` multi-tensor path (default: on CUDA).
    """

    def __init__(self, params, lr: float = 1e-2, momentum: float = 0.9,
                 transport: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None):
        check_hyper("lr", lr, low=0.0)
        check_hyper("momentum", momentum, low=0.0, high=1.0, high_open=True)
        if not isinstance(transport, bool):
            raise ValueError(f"transport: expected a bool, got {transport!r}")
        defaults = dict(lr=lr, momentum=momentum, transport=transport, maximize=maximize,
                        foreach=foreach)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        transport = any(g["transport"] for g in self.param_groups)
        if transport:
            if closure is None:
                raise RuntimeError("NormalizedSGD(transport=True).step requires a closure: the "
                                   "gradient is queried at an extrapolated point")
            saved = self._move_to_query_points()
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        if transport:
            for p, x in saved.items():
                p.copy_(x)
        for group in self.param_groups:
            params, grads = self._grads(group)
            if not params:
                continue
            foreach = self._use_foreach(group, params)
            beta = group["momentum"]
            bufs = []
            for p in params:
                st = self.state[p]
                if "momentum_buffer" not in st:
                    st["momentum_buffer"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                bufs.append(st["momentum_buffer"])
            if group["transport"]:
                for p in params:
                    self.state[p]["previous"] = p.detach().clone()
            if foreach:
                torch._foreach_mul_(bufs, beta)
                torch._foreach_add_(bufs, grads, alpha=1.0 - beta)
            else:
                for b, g in zip(bufs, grads, strict=True):
                    b.mul_(beta).add_(g, alpha=1.0 - beta)
            norm = _joint_norm(bufs, foreach)
            if norm == 0.0:
                continue
            if foreach:
                torch._foreach_add_(params, bufs, alpha=-group["lr"] / norm)
            else:
                for p, b in zip(params, bufs, strict=True):
                    p.add_(b, alpha=-group["lr"] / norm)
        return loss

    def _move_to_query_points(self) -> dict[torch.Tensor, torch.Tensor]:
        """Load ``y_t = x_t + β/(1-β)(x_t − x_{t-1})`` into the parameters; return the ``x_t``."""
        saved = {}
        for group in self.param_groups:
            if not group["transport"]:
                continue
            c = group["momentum"] / (1.0 - group["momentum"])
            for p in group["params"]:
                prev = self.state[p].get("previous")
                saved[p] = p.detach().clone()
                if prev is not None:
                    p.add_(p.detach() - prev, alpha=c)
        return saved
