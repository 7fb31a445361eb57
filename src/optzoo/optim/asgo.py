"""ASGO / one-sided Shampoo as an instance of SGD with adaptive preconditioning.

References: Dmitry Kovalev, "SGD with Adaptive Preconditioning: Unified Analysis and Momentum
Acceleration" (ICLR 2026, arXiv 2506.23803), §3 table, row "one-sided"; ASGO is An et al. 2025,
"ASGO: Adaptive Structured Gradient Optimization" (Algorithm 1 there: ``V_t = V_{t-1} + G_t
G_tᵀ``, ``W_{t+1} = W_t − η V_t^{-1/2} G_t``, the LEFT side).  For X ∈ R^{m×n},
𝓗 = {G ↦ B G : B ∈ S^m}, ``proj_𝓗(S) = (1/n) Σ G_i G_iᵀ`` (left side), and Algorithm 1 reads

    L_k = L_{k-1} + G_k G_kᵀ,        X_{k+1} = X_k − η (δI + L_k / n)^{-1/2} G_k,

with R-norm ``σ_max(·)/√n`` (η = R = σ_max(X_0 − X*)/√n).  With a one-step accumulator and
δ → 0 the step is ``η √n U Vᵀ`` (G = U Σ Vᵀ, m ≤ n): Muon's polar-factor step.
``side="right"`` is the same method on Xᵀ: ``R_k = Σ G_iᵀ G_i``, step
``η G (δI + R_k/m)^{-1/2}`` (R-norm σ_max/√m); ``side="smaller"`` picks the smaller of m, n per
tensor (the cheaper root).  Default ``"left"``, as written in both papers' algorithm.

The inverse square root is an ``eigh`` of ``δI + L_k/n`` in float64 (``precision="float32"`` to
trade accuracy for speed); eigenvalues are clamped at the smallest positive normal number before
the root.  ``foreach=True`` batches tensors whose preconditioners have the same size into one
batched ``eigh``.

Cost: one ``eigh`` of a k×k matrix per step and matrix parameter (k the preconditioned side).
On a CPU that dominates: for an MLP 64-256-256-10 the two 256×256 roots of ``side="left"`` cost
several Adam steps (``make bench``); ``side="smaller"`` with ``precision="float32"`` is the
cheapest setting the paper allows.  Reusing a root across steps (Shampoo's amortisation) is not
offered: the current gradient must be in the accumulator (the paper's Lemma 2), and a stale,
nearly singular early root amplifies new gradient directions until the iterates diverge.

Acceleration: the paper proves Algorithm 2 only when 𝓗 commutes with the smoothness and noise
operators (Assumption 4), which one-sided 𝓗 does not in general; ``nesterov=True`` is accepted
but is an extrapolation beyond the paper and emits a ``UserWarning``.

Shapes: ``dim >= 2`` parameters are viewed as ``(shape[0], -1)``; vectors and scalars are 1×d
rows, preconditioned on the 1-dimensional left side whatever ``side`` says, i.e. AdaGrad-Norm
(1/d factor) on them.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import torch

from optzoo.optim.adaptive_preconditioning import AdaptivePreconditionedSGD
from optzoo.optim.dasgo import as_matrix

__all__ = ["ASGO", "inverse_sqrt"]

_SIDES = ("left", "right", "smaller")
_PRECISIONS = {"float64": torch.float64, "float32": torch.float32}


def inverse_sqrt(m: torch.Tensor) -> torch.Tensor:
    """``M^{-1/2}`` of a (batch of) symmetric positive definite matrix by ``eigh``."""
    w, v = torch.linalg.eigh(m)
    w = w.clamp_min(torch.finfo(w.dtype).tiny)
    return (v * w.rsqrt().unsqueeze(-2)) @ v.transpose(-2, -1)


class ASGO(AdaptivePreconditionedSGD):
    """ASGO / one-sided Shampoo (full-matrix AdaGrad on one side of each matrix parameter).

    Args:
        params: parameters or parameter groups.
        lr: η, a distance: σ_max(X_0 − X*)/√n (side left; √m for right) (Alg. 1).
        eps: δ > 0, added to the preconditioned side's matrix before the root.
        side: ``"left"`` (m×m, default), ``"right"`` (n×n) or ``"smaller"``.
        precision: ``"float64"`` (default) or ``"float32"`` for the eigendecomposition.
        nesterov: Algorithm 2 (beyond the paper's theory for this 𝓗; warns).
        average: Algorithm 1's :meth:`output` is the iterate average (paper) or the last iterate.
        maximize: maximize the objective.
        foreach: batch same-sized preconditioner roots into one ``eigh`` (default: on CUDA).
    """

    def __init__(self, params: Iterable[Any], lr: float = 1.0, eps: float = 1e-8, *,
                 side: str = "left", precision: str = "float64", nesterov: bool = False,
                 average: bool = True, maximize: bool = False,
                 foreach: bool | None = None) -> None:
        if side not in _SIDES:
            raise ValueError(f"side: expected one of {_SIDES}, got {side!r}")
        if precision not in _PRECISIONS:
            raise ValueError(f"precision: expected one of {tuple(_PRECISIONS)}, got {precision!r}")
        if nesterov is True:
            warnings.warn("ASGO(nesterov=True): the paper proves acceleration only for commuting "
                          "(scalar/diagonal) preconditioners; accelerated one-sided Shampoo is an "
                          "extrapolation beyond it", UserWarning, stacklevel=2)
        super().__init__(params, lr=lr, eps=eps, nesterov=nesterov, average=average,
                         maximize=maximize, foreach=foreach, side=side, precision=precision)

    def _step_group(self, group: dict, params: list, grads: list) -> None:
        # before the accumulator is touched: a non-finite G would poison S_k for good and make
        # the eigendecomposition fail with an unnamed LinAlgError
        self._check_no_nan(grads, "the preconditioner's eigendecomposition needs finite ones",
                           inf=True)
        super()._step_group(group, params, grads)

    @staticmethod
    def _left(shape: tuple[int, int], side: str) -> bool:
        m, n = shape
        return m == 1 or side == "left" or (side == "smaller" and m <= n)

    def _init_accumulator(self, p, group):
        shape = tuple(as_matrix(p).shape)
        k = shape[0] if self._left(shape, group["side"]) else shape[1]
        return {"precond_sum": torch.zeros((k, k), dtype=p.dtype, device=p.device)}

    def _root_input(self, state, g, group):
        """Accumulate; return (G in precision dtype, left?, δI + proj(S))."""
        pdt = _PRECISIONS[group["precision"]]
        g2 = as_matrix(g).to(pdt)
        left = self._left(tuple(g2.shape), group["side"])
        outer = g2 @ g2.T if left else g2.T @ g2
        acc = state["precond_sum"].to(pdt) + outer
        state["precond_sum"].copy_(acc)
        other = g2.shape[1] if left else g2.shape[0]
        eye = torch.eye(acc.shape[0], dtype=pdt, device=acc.device)
        return g2, left, acc / max(other, 1) + group["eps"] * eye

    @staticmethod
    def _apply(root, g2, left, group, like):
        u = root @ g2 if left else g2 @ root
        return (u * group["lr"]).to(like.dtype).reshape(like.shape)

    def _precondition(self, state, g, group):
        g2, left, mat = self._root_input(state, g, group)
        return self._apply(inverse_sqrt(mat), g2, left, group, g)

    def _precondition_foreach(self, states, gs, group):
        inputs = [self._root_input(s, g, group) for s, g in zip(states, gs, strict=True)]
        buckets: dict[int, list[int]] = defaultdict(list)
        for i, (_, _, mat) in enumerate(inputs):
            buckets[mat.shape[0]].append(i)
        roots: list[torch.Tensor | None] = [None] * len(inputs)
        for idx in buckets.values():
            batch = inverse_sqrt(torch.stack([inputs[i][2] for i in idx]))
            for j, i in enumerate(idx):
                roots[i] = batch[j]
        return [self._apply(r, g2, left, group, g)
                for r, (g2, left, _), g in zip(roots, inputs, gs, strict=True)]

    def preconditioner(self, p: torch.Tensor) -> torch.Tensor:
        """The matrix B_k (k×k, k the preconditioned side) with ``H_k G = B_k G`` (left) or
        ``G B_k`` (right): ``η (δI + S_k / other side)^{-1/2}``."""
        group = self._group_of(p)
        acc = self.state[p]["precond_sum"].to(_PRECISIONS[group["precision"]])
        m, n = as_matrix(p).shape
        other = n if self._left((m, n), group["side"]) else m
        eye = torch.eye(acc.shape[0], dtype=acc.dtype, device=acc.device)
        return group["lr"] * inverse_sqrt(acc / max(other, 1) + group["eps"] * eye)
