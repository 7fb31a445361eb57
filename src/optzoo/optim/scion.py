"""Scion: stochastic conditional gradient with norm-constrained linear minimization oracles.

Reference: Pethick, Xie, Erdogan, Antonakopoulos, Silveti-Falls, Cevher, "Training Deep Learning
Models with Norm-Constrained LMOs" (ICML 2025); update as in the authors' reference code
(github.com/LIONS-EPFL/scion, ``scion.py``).  With ``α`` = ``momentum`` (the weight of the NEW
gradient, i.e. one minus the usual momentum factor), radius ρ = ``scale`` and step γ = ``lr``:

    d_k = (1 − α) d_{k-1} + α g_k                    (d_{-1} = 0)
    x_{k+1} = x_k − γ ρ · lmo(d_k)                    (unconstrained, "uScion")
    x_{k+1} = (1 − γ) x_k − γ ρ · lmo(d_k)            (constrained, Scion; the default)

where ``−lmo(d)`` is the maximiser of ⟨d, s⟩ over the unit ball of the layer's norm (returned
here with the sign that makes it a descent direction).  Norms (``norm``), following the
reference code's "normalized" scalings for an m×n matrix (m = fan-out rows, n = fan-in):

* ``"row"``: ‖·‖_{2→∞}-type ball, ``lmo(D)[i] = D[i] / (√n ‖D[i]‖₂)`` (``RowNorm``);
* ``"sign"``: ‖·‖_{1→∞}-type ball, ``lmo(D) = sign(D) / n`` (``Sign``);
* ``"spectral"``: ``lmo(D) = √(m/n) U Vᵀ`` with D = U Σ Vᵀ, computed by an exact SVD (the
  reference code uses 5 Newton–Schulz steps in bfloat16, which only approximates U Vᵀ).

A row with zero norm gives a zero row (the LMO is set-valued there).  Parameters with
``dim >= 2`` are viewed as ``(shape[0], -1)``; vectors and scalars as 1×d rows (so ``"row"``
and ``"spectral"`` both give ``v / (√d ‖v‖₂)`` on a vector v, the reference ``Spectral`` of a
1×d matrix).  Kovalev (ICLR 2026) links the ``"row"`` step to DASGO
with a one-step accumulator: DASGO's first step ``η √n G[i]/‖G[i]‖`` is this step with
``lr·scale = η n``, ``momentum = 1``, unconstrained.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from optzoo.optim.adaptive_preconditioning import compute_dtype
from optzoo.optim.base import ZooOptimizer, check_hyper
from optzoo.optim.dasgo import as_matrix

__all__ = ["Scion", "lmo"]

_NORMS = ("row", "sign", "spectral")


def lmo(d: torch.Tensor, norm: str) -> torch.Tensor:
    """The (descent-signed) unit-ball LMO of ``norm`` at ``d``, shaped like ``d``."""
    d2 = as_matrix(d)
    m, n = d2.shape
    if norm == "row":
        rn = torch.linalg.vector_norm(d2, dim=1, keepdim=True)
        safe = torch.where(rn > 0, rn, torch.ones_like(rn))
        out = torch.where(rn > 0, d2 / (safe * n ** 0.5), torch.zeros_like(d2))
    elif norm == "sign":
        out = torch.sign(d2) / n
    elif norm == "spectral":
        u, s, vh = torch.linalg.svd(d2, full_matrices=False)
        # drop null directions (U Vᵀ of the range only)
        keep = (s > s.max() * max(m, n) * torch.finfo(s.dtype).eps).to(d2.dtype)
        out = (u * keep.unsqueeze(-2)) @ vh * (m / n) ** 0.5
    else:
        raise ValueError(f"norm: expected one of {_NORMS}, got {norm!r}")
    return out.reshape(d.shape)


class Scion(ZooOptimizer):
    """Scion / uScion (Pethick et al. 2025) with per-group norm choice.

    Args:
        params: parameters or parameter groups (give each layer type its own group and norm).
        lr: γ ∈ (0, 1] for the constrained form (any γ > 0 when ``unconstrained``).
        momentum: α ∈ (0, 1], weight of the new gradient in ``d`` (1 = no momentum, the
            reference code's default; its usage example and our default use 0.1).
        norm: ``"row"``, ``"sign"`` or ``"spectral"``.
        scale: the radius ρ > 0 of the norm ball.
        unconstrained: uScion (no ``(1 − γ)`` shrinkage) when True.
        maximize: maximize the objective.
        foreach: multi-tensor path for the momentum and the update (default: on CUDA).
    """

    def __init__(self, params: Iterable[Any], lr: float = 0.01, momentum: float = 0.1, *,
                 norm: str = "row", scale: float = 1.0, unconstrained: bool = False,
                 maximize: bool = False, foreach: bool | None = None) -> None:
        check_hyper("lr", lr, low=0.0, low_open=True)
        check_hyper("momentum", momentum, low=0.0, high=1.0, low_open=True)
        check_hyper("scale", scale, low=0.0, low_open=True)
        if norm not in _NORMS:
            raise ValueError(f"norm: expected one of {_NORMS}, got {norm!r}")
        if not isinstance(unconstrained, bool):
            raise ValueError(f"unconstrained: expected a bool, got {unconstrained!r}")
        if not unconstrained and lr > 1:
            raise ValueError(f"lr: the constrained form needs lr <= 1, got {lr!r}")
        defaults = dict(lr=lr, momentum=momentum, norm=norm, scale=scale,
                        unconstrained=unconstrained, maximize=maximize, foreach=foreach)
        super().__init__(params, defaults)

    def _step_group(self, group: dict, params: list, grads: list) -> None:
        if group["norm"] == "sign":  # sign(NaN) = 0 would silently skip the coordinate
            self._check_no_nan(grads)
        for p in params:
            if not self.state[p]:
                self.state[p]["momentum_buffer"] = torch.zeros_like(
                    p, memory_format=torch.preserve_format)
        bufs = [self.state[p]["momentum_buffer"] for p in params]
        lr, alpha, rho = group["lr"], group["momentum"], group["scale"]
        shrink = 1.0 if group["unconstrained"] else 1.0 - lr
        if self._use_foreach(group, params):
            cdts = [compute_dtype(p) for p in params]
            ds = [b.to(c) for b, c in zip(bufs, cdts, strict=True)]
            ds = torch._foreach_add(torch._foreach_mul(ds, 1.0 - alpha),
                                    torch._foreach_mul([g.to(c) for g, c in
                                                        zip(grads, cdts, strict=True)], alpha))
            torch._foreach_copy_(bufs, ds)
            dirs = [lmo(d, group["norm"]) for d in ds]
            xs = torch._foreach_mul([p.to(c) for p, c in zip(params, cdts, strict=True)],
                                    shrink)
            torch._foreach_sub_(xs, torch._foreach_mul(dirs, lr * rho))
            torch._foreach_copy_(params, xs)
        else:
            for p, g, b in zip(params, grads, bufs, strict=True):
                c = compute_dtype(p)
                d = b.to(c) * (1.0 - alpha) + g.to(c) * alpha
                b.copy_(d)
                p.copy_(p.to(c) * shrink - lmo(d, group["norm"]) * (lr * rho))
