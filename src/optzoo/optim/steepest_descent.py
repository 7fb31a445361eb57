"""Steepest descent w.r.t. an L_p norm (sign descent ... gradient descent), with coupled or
decoupled weight decay.

Paper: Jacobs, Zhou & Burkholz, "Never Saddle for Reparameterized Steepest Descent as Mirror
Flow" (ICLR 2026, OpenReview YgudIlQ9nC, arXiv 2603.02064), Sec. 3.  The paper studies the
*steepest flow* family

    dw/dt = -sign(∇f(w)) ⊙ |∇f(w)|^{q-1},      q ∈ [1, 2],

the L_p steepest flow with 1/p + 1/q = 1: ``q = 1`` (p = ∞) is sign gradient flow, the paper's
proxy for Adam; ``q = 2`` (p = 2) is gradient flow.  :class:`SteepestDescent` is its explicit
Euler discretisation

    w ← w - lr · sign(g) ⊙ |g|^{q-1}

with two weight decays, which the paper contrasts (its Lemma on λ-L_p balance and its Table 1):

* ``weight_decay`` α -- **decoupled** (AdamW-like, the paper's choice): ``w ← w - lr·α·w``
  applied beside the steepest step.  It turns the conserved balance ``|w_i|^q - |w_j|^q`` of a
  product ``x = Π w_i`` into ``(|w_{i,0}|^q - |w_{j,0}|^q)·exp(-q α t)``
  (:mod:`optzoo.optim.mirror_flow`).
* ``coupled_weight_decay`` -- **coupled** (Adam + L2-like): ``g ← g + α_c·w`` before the steepest
  map.  For ``q = 2`` the two coincide (SGD + L2 = SGD + decoupled WD); for ``q < 2`` they differ.

How ``norm`` / ``p`` / ``q`` map (our choice; the paper parameterises by ``q``):

=============  ============  =================================  ===========================
``norm``       primal ‖·‖_p  update exponent ``q`` (dual norm)  direction
=============  ============  =================================  ===========================
``"linf"``     p = ∞         q = 1 (fixed)                      ``sign(g)``  (sign descent)
``"l2"``       p = 2         q = 2 (fixed)                      ``g``        (gradient descent)
``"lp"``       p = q/(q-1)   ``q`` given, 1 ≤ q ≤ 2              ``sign(g)|g|^{q-1}``
=============  ============  =================================  ===========================

``q`` is stored in ``defaults`` (resolved), so ``SteepestDescent(params, norm="linf")`` and
``SteepestDescent(params, norm="lp", q=1.0)`` are the same optimizer; giving ``norm="linf"``
with ``q != 1`` (or ``"l2"`` with ``q != 2``) is a ``ValueError``.  Without ``norm`` the norm
follows ``q``: ``SteepestDescent(params, q=1.5)`` is ``norm="lp"``, and with neither
``SteepestDescent(params)`` is sign descent (``norm="linf"``, q = 1, the paper's Adam proxy and
the end of the family its default ``lr = 1e-3`` suits); a parameter group that sets only ``q``
is an ``"lp"`` group.

``normalized=True`` (off by default; not the paper's flow) gives the *true* steepest-descent step
w.r.t. ‖·‖_p, ``d = argmin_d <g, d> + ½‖d‖_p²``, i.e. the elementwise direction times
``‖g‖_q^{2-q}``, the dual norm taken **per tensor** (each parameter tensor is its own ‖·‖_p
block).  For ``q = 1`` this is ``‖g‖_1·sign(g)``; for ``q = 2`` nothing changes.

``momentum`` β (Signum-style, Bernstein et al. 2018) replaces ``g`` by the buffer
``m ← β m + (1-β) g`` (initialised to ``g`` at the first step, as ``torch.optim.SGD`` does), so
``q = 2`` with momentum β equals ``torch.optim.SGD(momentum=β, dampening=β)``.  The coupled
decay enters ``g`` before the buffer; the decoupled decay acts on ``w`` only.

Relation to Adam (tested): ``torch.optim.Adam(betas=(0, 0), eps→0)`` has bias corrections
``1 - 0^t = 1`` and steps ``lr·g/(|g| + eps)``, i.e. :class:`SignSGD`; its ``weight_decay`` is the
coupled decay here, ``torch.optim.AdamW``'s the decoupled one.

Reference:
    T. Jacobs, C. Zhou, R. Burkholz. Never Saddle for Reparameterized Steepest Descent as Mirror
    Flow. ICLR 2026.
"""

from __future__ import annotations

import torch

from optzoo.optim.base import ZooOptimizer, check_hyper

__all__ = ["SteepestDescent", "SignSGD"]

_NORM_Q = {"linf": 1.0, "l2": 2.0}


def _resolve_norm(norm: object, q: float | None) -> object:
    """``norm=None`` (the default): ``"lp"`` when ``q`` is given, else ``"linf"``."""
    if norm is None:
        return "linf" if q is None else "lp"
    return norm


def _resolve_q(norm: object, q: float | None) -> float:
    if norm not in ("linf", "l2", "lp"):
        raise ValueError(f"norm: expected 'linf', 'l2' or 'lp', got {norm!r}")
    if norm == "lp":
        if q is None:
            raise ValueError("q: norm='lp' needs the dual exponent q in [1, 2]")
        return check_hyper("q", q, low=1.0, high=2.0)
    fixed = _NORM_Q[norm]
    if q is not None and check_hyper("q", q, low=1.0, high=2.0) != fixed:
        raise ValueError(f"q: norm={norm!r} fixes q = {fixed:g}, got q = {q!r}")
    return fixed


def _direction(g: torch.Tensor, q: float) -> torch.Tensor:
    """``sign(g) ⊙ |g|^{q-1}``; exact ``sign`` / identity at the ends (``0^0`` stays 0)."""
    if q == 1.0:
        return torch.sign(g)
    if q == 2.0:
        return g.clone()
    return torch.sign(g).mul_(g.abs().pow_(q - 1.0))


def _low_precision(t: torch.Tensor) -> bool:
    return t.dtype in (torch.float16, torch.bfloat16)


class SteepestDescent(ZooOptimizer):
    """Elementwise L_p steepest descent ``w ← w - lr·sign(g)|g|^{q-1}`` (see module docstring).

    Args:
        params: parameters or parameter groups.
        lr: step size (≥ 0; a fine-tuning "small lr" is 1e-4 ... 1e-3).
        norm: ``"linf"`` (sign descent), ``"l2"`` (gradient descent) or ``"lp"`` (give ``q``);
            default ``None``: ``"lp"`` if ``q`` is given, else ``"linf"``.
        q: dual exponent in [1, 2] (``1/p + 1/q = 1``); required for ``norm="lp"``.
        momentum: EMA coefficient β in [0, 1) of the gradient buffer (Signum-style).
        weight_decay: decoupled weight decay α (``w ← w - lr·α·w``, AdamW-like).
        coupled_weight_decay: coupled weight decay (``g ← g + α_c·w``, Adam + L2-like).
        normalized: scale each tensor's direction by ``‖g‖_q^{2-q}`` (true steepest descent
            w.r.t. that tensor's ‖·‖_p); off by default, which is the paper's flow.
        maximize: ascend instead of descend.
        foreach: use the ``torch._foreach_*`` multi-tensor path (default: on CUDA).

    Example::

        >>> import torch
        >>> from optzoo.optim import SteepestDescent
        >>> model = torch.nn.Linear(3, 1)
        >>> opt = SteepestDescent(model.parameters(), lr=0.01, q=1.5)  # L_3 steepest descent
        >>> model(torch.randn(4, 3)).pow(2).mean().backward()
        >>> opt.step()
        >>> SteepestDescent(model.parameters()).defaults["norm"]  # sign descent by default
        'linf'
    """

    def __init__(self, params, lr: float = 1e-3, norm: str | None = None,
                 q: float | None = None,
                 momentum: float = 0.0, weight_decay: float = 0.0,
                 coupled_weight_decay: float = 0.0, normalized: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None):
        check_hyper("lr", lr, low=0.0)
        norm = _resolve_norm(norm, q)
        q_ = _resolve_q(norm, q)
        check_hyper("momentum", momentum, low=0.0, high=1.0, high_open=True)
        check_hyper("weight_decay", weight_decay, low=0.0)
        check_hyper("coupled_weight_decay", coupled_weight_decay, low=0.0)
        if not isinstance(normalized, bool):
            raise ValueError(f"normalized: expected a bool, got {normalized!r}")
        defaults = dict(lr=lr, norm=norm, q=q_, momentum=momentum, weight_decay=weight_decay,
                        coupled_weight_decay=coupled_weight_decay, normalized=normalized,
                        maximize=maximize, foreach=foreach)
        super().__init__(params, defaults)

    def add_param_group(self, param_group: dict) -> None:
        """Resolve the group's ``q`` from its ``norm`` (a group may set either; one that sets
        only ``q`` is an ``"lp"`` group)."""
        if "norm" not in param_group and "q" in param_group:
            param_group["norm"] = "lp"
        norm = param_group.get("norm", self.defaults["norm"])
        q = param_group.get("q", self.defaults["q"] if norm == "lp" else None)
        param_group["q"] = _resolve_q(norm, q)
        super().add_param_group(param_group)

    def _step_group(self, group: dict, params: list, grads: list) -> None:
        q = float(group["q"])
        if q == 1.0:  # sign(NaN) = 0 would silently skip the coordinate
            self._check_no_nan(grads)
        if self._use_foreach(group, params):
            self._step_foreach(group, params, grads, q)
        else:
            self._step_loop(group, params, grads, q)

    def _step_loop(self, group, params, grads, q):
        lr, beta = group["lr"], group["momentum"]
        wd, cwd = group["weight_decay"], group["coupled_weight_decay"]
        for p, g in zip(params, grads, strict=True):
            if _low_precision(p):
                g = g.float()
            if cwd != 0.0:
                g = g.add(p, alpha=cwd)
            if beta != 0.0:
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = g.detach().to(p.dtype, copy=True)
                else:
                    state["momentum_buffer"].mul_(beta).add_(g, alpha=1.0 - beta)
                g = state["momentum_buffer"]
                if _low_precision(p):
                    g = g.float()
            d = _direction(g, q)
            if group["normalized"] and q != 2.0:
                d.mul_(torch.linalg.vector_norm(g, ord=q).pow(2.0 - q))
            if wd != 0.0:
                p.mul_(1.0 - lr * wd)
            p.add_(d, alpha=-lr)

    def _step_foreach(self, group, params, grads, q):
        lr, beta = group["lr"], group["momentum"]
        wd, cwd = group["weight_decay"], group["coupled_weight_decay"]
        low = [_low_precision(p) for p in params]
        g = [gi.float() if lo else gi for gi, lo in zip(grads, low, strict=True)]
        if cwd != 0.0:
            g = torch._foreach_add(g, params, alpha=cwd)
        if beta != 0.0:
            bufs, fresh = [], []
            for p, gi in zip(params, g, strict=True):
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = gi.detach().to(p.dtype, copy=True)
                    fresh.append(True)
                else:
                    fresh.append(False)
                bufs.append(state["momentum_buffer"])
            old = [b for b, f in zip(bufs, fresh, strict=True) if not f]
            if old:
                torch._foreach_mul_(old, beta)
                torch._foreach_add_(old, [gi for gi, f in zip(g, fresh, strict=True) if not f],
                                    alpha=1.0 - beta)
            g = [b.float() if lo else b for b, lo in zip(bufs, low, strict=True)]
        if q == 1.0:
            d = torch._foreach_sign(g)
        elif q == 2.0:
            d = [gi.clone() for gi in g]
        else:
            absg = torch._foreach_abs(g)
            d = torch._foreach_pow(absg, q - 1.0)
            if group["normalized"]:
                # ‖g‖_q^q = Σ |g|·|g|^{q-1}: reuses the one elementwise power (a general-order
                # foreach_norm would compute a second one).
                sums = torch.stack([torch.dot(a.reshape(-1), b.reshape(-1))
                                    for a, b in zip(absg, d, strict=True)])
                scales = sums.pow((2.0 - q) / q).unbind()
            torch._foreach_mul_(d, torch._foreach_sign(g))
            if group["normalized"]:
                torch._foreach_mul_(d, scales)
        if group["normalized"] and q == 1.0:
            torch._foreach_mul_(d, torch._foreach_norm(g, 1))
        if wd != 0.0:
            torch._foreach_mul_(params, 1.0 - lr * wd)
        torch._foreach_add_(params, d, alpha=-lr)


class SignSGD(SteepestDescent):
    """Sign descent ``w ← w - lr·sign(g)`` (L_∞ steepest descent, the paper's SignGF / Adam
    proxy): :class:`SteepestDescent` with ``norm="linf"``.  With ``momentum`` it is Signum.

    Args:
        params: as in :class:`SteepestDescent`, and so are ``lr``, ``momentum``,
            ``weight_decay``, ``coupled_weight_decay``, ``normalized``, ``maximize`` and
            ``foreach``.
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0,
                 weight_decay: float = 0.0, coupled_weight_decay: float = 0.0,
                 normalized: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None):
        super().__init__(params, lr=lr, norm="linf", momentum=momentum,
                         weight_decay=weight_decay, coupled_weight_decay=coupled_weight_decay,
                         normalized=normalized, maximize=maximize, foreach=foreach)
