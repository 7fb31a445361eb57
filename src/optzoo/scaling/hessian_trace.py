"""Hutchinson's estimator of the trace of the loss Hessian — the curvature probe that
Catalan-Tatjer et al., "Training Dynamics Impact Post-Training Quantization Robustness" (ICLR
2026, v2) track along training ("the Hessian trace closely tracks the quantization-error curve;
lr decay moves into sharper minima").  The paper's estimator settings were not found (brief:
*inferred*); this follows Hutchinson (1989) / PyHessian (Yao et al. 2020):

    tr(H) = E_v[vᵀ H v],   v with i.i.d. Rademacher (±1) entries,                 (Hutchinson)

each ``vᵀ H v`` from one Hessian-vector product by double back-propagation
(``torch.autograd.grad`` of ``g · v``), on a fixed batch, averaged over ``probes`` draws; the
standard error of the mean is returned beside it.

Example:
    >>> import torch
    >>> from optzoo.scaling.hessian_trace import hutchinson_trace
    >>> A = torch.diag(torch.tensor([1.0, 2.0, 3.0]))
    >>> x = torch.nn.Parameter(torch.ones(3))
    >>> est = hutchinson_trace(lambda: 0.5 * x @ A @ x, [x], probes=4)
    >>> est.trace, est.stderr            # a diagonal Hessian: every probe gives tr(A) exactly
    (6.0, 0.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from optzoo.checks import check_int

__all__ = ["TraceEstimate", "hutchinson_trace"]


@dataclass(frozen=True)
class TraceEstimate:
    """Hutchinson's estimate: ``trace`` (mean of the probes), ``stderr`` (standard error of
    that mean; 0 with one probe), ``probes``."""

    trace: float
    stderr: float
    probes: int


def hutchinson_trace(loss_fn: Callable[[], torch.Tensor], params: Sequence[torch.Tensor], *,
                     probes: int = 20, seed: int = 0) -> TraceEstimate:
    """Estimate tr(∇²L) over ``params`` with Rademacher probes (Eq. Hutchinson).

    Args:
        loss_fn: returns the scalar loss on a fixed batch (called once).
        params: the tensors (requiring grad) whose Hessian block is traced.
        probes: number of Rademacher vectors.
        seed: seed of the probes (a CPU generator; the probes are moved to each parameter).

    Returns:
        :class:`TraceEstimate`.
    """
    check_int("probes", probes, low=1)
    params = list(params)
    if not params or not all(isinstance(p, torch.Tensor) and p.requires_grad for p in params):
        raise ValueError("params: expected a non-empty sequence of tensors requiring grad")
    loss = loss_fn()
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise ValueError("loss_fn: expected it to return a scalar tensor")
    if not torch.isfinite(loss):
        raise ValueError(f"loss_fn: the loss is not finite ({float(loss.detach())})")
    grads = torch.autograd.grad(loss, params, create_graph=True)
    gen = torch.Generator().manual_seed(seed)
    values = []
    for k in range(probes):
        vs = [(torch.randint(0, 2, p.shape, generator=gen) * 2 - 1).to(p.dtype).to(p.device)
              for p in params]
        dot = sum((g * v).sum() for g, v in zip(grads, vs, strict=True))
        hvs = torch.autograd.grad(dot, params, retain_graph=k < probes - 1, allow_unused=True)
        values.append(float(sum((h * v).sum() for h, v in zip(hvs, vs, strict=True)
                                if h is not None)))
    mean = sum(values) / probes
    if probes == 1:
        return TraceEstimate(mean, 0.0, 1)
    var = sum((x - mean) ** 2 for x in values) / (probes - 1)
    return TraceEstimate(mean, math.sqrt(var / probes), probes)
