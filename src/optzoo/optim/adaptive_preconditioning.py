"""SGD with adaptive preconditioning (Algorithm 1) and its accelerated form (Algorithm 2).

Reference: Dmitry Kovalev, "SGD with Adaptive Preconditioning: Unified Analysis and Momentum
Acceleration", ICLR 2026 (arXiv 2506.23803, OpenReview XhXMzPJJ7J).  The paper is theory only
(convex stochastic optimization, no experiments, no official code).

This module holds the engine shared by :class:`~optzoo.optim.adagrad_norm.AdaGradNorm`,
:class:`~optzoo.optim.adagrad.DiagAdaGrad`, :class:`~optzoo.optim.asgo.ASGO` and
:class:`~optzoo.optim.dasgo.DASGO`.  Each of those only says what the preconditioner space 𝓗 is,
i.e. how the accumulator ``proj_𝓗(S_k)`` is stored and how ``H_k g`` is applied.

Algorithm 1 (paper §3, Lemma 2 closed form)::

    S_k = S_{k-1} + g_k⟨g_k, ·⟩                  (current gradient included, AdaGrad convention)
    H_k = η (δI + proj_𝓗(S_k))^{-1/2}             (so H_{k+1} ⪯ H_k)
    x_{k+1} = x_k − H_k g_k
    output x̄_K = (1/(K+1)) Σ_{k=0..K} x_k          (uniform iterate average, :meth:`output`)

Algorithm 2 (paper §4): Algorithm 1 run on the time-varying functions
``f_k(x) = α_k^{-2} f(α_k x + (1 − α_k) x̄_k)`` with ``α_k = 2/(k+2)``, coupled by
``x̄_{k+1} = α_k x_{k+1} + (1 − α_k) x̄_k``.  Differentiating ``f_k`` gives the written-out form
implemented here (the ``1/α_k`` scaling is derived, ``x̄_0 = x_0`` is our reading)::

    y_k = α_k x_k + (1 − α_k) x̄_k                 (gradient query point = the parameters)
    g_k = α_k^{-1} ∇f(y_k; ξ_k)                    (enters both the accumulator and the step)
    S_k = S_{k-1} + g_k⟨g_k, ·⟩,  H_k = η(δI + proj_𝓗(S_k))^{-1/2},  x_{k+1} = x_k − H_k g_k
    x̄_{k+1} = α_k x_{k+1} + (1 − α_k) x̄_k         (output, :meth:`output`)

Between steps the parameters hold the next query point ``y_{k+1}``, so the usual
``loss.backward(); opt.step()`` loop works; ``x_k`` and ``x̄_k`` live in ``self.state[p]``.
The paper proves acceleration (Thm 2, smooth term Õ(1/K²) for ν = 1) only when 𝓗 commutes with
the smoothness and noise operators (Assumption 4): automatic for scalar and diagonal 𝓗
(AdaGrad-Norm, AdaGrad, DASGO), open for one-sided Shampoo / ASGO.

Hyperparameters (per parameter group):

* ``lr`` is η, a DISTANCE, not a step size: the theory sets η = R (Alg. 1) or η = 2R (Alg. 2)
  with R a bound on the distance of the iterates to x* in the method's R-norm
  (AdaGrad-Norm: ‖·‖₂/√d, AdaGrad: ‖·‖_∞, ASGO: σ_max/√n, DASGO: ‖·‖_{2→∞}/√n).
* ``eps`` is δ > 0, added INSIDE the square root (δ + accumulated squares), unlike
  ``torch.optim.Adagrad`` which adds its ``eps`` outside.
* ``nesterov`` selects Algorithm 2; ``average`` (Algorithm 1 only) makes :meth:`output` the
  paper's iterate average x̄_K (default) instead of the last iterate.

Deviations and choices (the paper is stated for one variable x):

* A list of parameter tensors is treated block-diagonally: each tensor has its own accumulator
  (𝓗 = product of the per-tensor spaces; Assumption 1 still holds for such products).  For one
  tensor this is exactly the paper's method; for a global AdaGrad-Norm over a whole model,
  flatten the model into one tensor.
* The projection onto a radius-R ball that the paper adds in the stochastic case (App. D) is not
  part of the optimizer.
* Arithmetic is done in float32 for float16/bfloat16 parameters and in the parameter's dtype
  otherwise; state is stored in the parameter's dtype (as ``torch.optim`` does).
"""

from __future__ import annotations

import abc
from collections.abc import Iterable
from typing import Any

import torch

from optzoo.optim.base import ZooOptimizer, check_hyper

__all__ = ["AdaptivePreconditionedSGD", "compute_dtype"]


def compute_dtype(t: torch.Tensor) -> torch.dtype:
    """float32 for half/bfloat16 tensors, the tensor's own dtype otherwise."""
    return torch.float32 if t.dtype in (torch.float16, torch.bfloat16) else t.dtype


class AdaptivePreconditionedSGD(ZooOptimizer, metaclass=abc.ABCMeta):
    """Algorithm 1 / Algorithm 2 of Kovalev (2026) for a preconditioner space 𝓗 given by a
    subclass.

    Subclasses implement :meth:`_init_accumulator` (zero accumulator tensors for one parameter),
    :meth:`_precondition` (add the current gradient to the accumulator, return ``H_k g``) and
    :meth:`preconditioner` (``H_k`` in its natural shape); diagonal families may override
    :meth:`_precondition_foreach` with a multi-tensor path.

    Args:
        params: parameters or parameter groups.
        lr: η > 0, a distance (R for Algorithm 1, 2R for Algorithm 2; see the module docstring).
        eps: δ > 0 added inside the inverse square root.
        nesterov: use Algorithm 2 (accelerated); parameters then hold the query point y_k.
        average: Algorithm 1 only: :meth:`output` returns the iterate average x̄_K (the paper's
            output) when True, the last iterate when False.
        maximize: maximize the objective.
        foreach: use the multi-tensor path (default: on CUDA).
        **extra: subclass hyperparameters, stored in ``defaults``.
    """

    def __init__(self, params: Iterable[Any], *, lr: float, eps: float, nesterov: bool,
                 average: bool, maximize: bool, foreach: bool | None, **extra: Any) -> None:
        check_hyper("lr", lr, low=0.0, low_open=True)
        check_hyper("eps", eps, low=0.0, low_open=True)
        for name, flag in (("nesterov", nesterov), ("average", average),
                           ("maximize", maximize)):
            if not isinstance(flag, bool):
                raise ValueError(f"{name}: expected a bool, got {flag!r}")
        if foreach is not None and not isinstance(foreach, bool):
            raise ValueError(f"foreach: expected a bool or None, got {foreach!r}")
        defaults = dict(lr=lr, eps=eps, nesterov=nesterov, average=average, maximize=maximize,
                        foreach=foreach, **extra)
        super().__init__(params, defaults)

    # -- what a subclass provides ---------------------------------------------------------
    @abc.abstractmethod
    def _init_accumulator(self, p: torch.Tensor, group: dict) -> dict[str, torch.Tensor]:
        """Zero accumulator tensors for parameter ``p``."""

    @abc.abstractmethod
    def _precondition(self, state: dict, g: torch.Tensor, group: dict) -> torch.Tensor:
        """Add ``g`` (compute dtype) to the accumulator in ``state``; return ``H_k g``."""

    def _precondition_foreach(self, states: list[dict], gs: list[torch.Tensor],
                              group: dict) -> list[torch.Tensor]:
        return [self._precondition(s, g, group) for s, g in zip(states, gs, strict=True)]

    @abc.abstractmethod
    def preconditioner(self, p: torch.Tensor) -> torch.Tensor:
        """``H_k`` of parameter ``p`` after its last step, in the family's natural shape."""

    # -- the engine ------------------------------------------------------------------------
    def _init_state(self, p: torch.Tensor, group: dict) -> dict:
        state = self.state[p]
        if not state:
            # torch.optim convention: a float32 scalar tensor step (kept as is by
            # load_state_dict), so state_dict round trips are exact.
            state["step"] = torch.tensor(0.0)
            state.update(self._init_accumulator(p, group))
            if group["nesterov"]:
                state["x"] = p.detach().clone(memory_format=torch.preserve_format)
                state["xbar"] = p.detach().clone(memory_format=torch.preserve_format)
            elif group["average"]:
                state["avg"] = p.detach().clone(memory_format=torch.preserve_format)
        return state

    def _step_group(self, group: dict, params: list, grads: list) -> None:
        states = [self._init_state(p, group) for p in params]
        if self._use_foreach(group, params):
            self._step_foreach(group, params, grads, states)
        else:
            for p, g, s in zip(params, grads, states, strict=True):
                self._step_one(group, p, g, s)

    def _step_one(self, group: dict, p: torch.Tensor, grad: torch.Tensor, state: dict) -> None:
        cdt = compute_dtype(p)
        k = int(state["step"].item())
        g = grad.to(cdt)
        if group["nesterov"]:
            alpha, alpha_next = 2.0 / (k + 2), 2.0 / (k + 3)
            g = g / alpha  # gradient of f_k at x: α_k^{-1} ∇f(y_k)
            u = self._precondition(state, g, group)
            x = state["x"].to(cdt) - u
            xbar = state["xbar"].to(cdt)
            xbar = xbar.lerp(x, alpha)
            state["x"].copy_(x)
            state["xbar"].copy_(xbar)
            p.copy_(xbar.lerp(x, alpha_next))  # next query point y_{k+1}
        else:
            u = self._precondition(state, g, group)
            new = p.to(cdt) - u
            p.copy_(new)
            if group["average"]:
                # running mean of x_0..x_{k+1}
                avg = state["avg"].to(cdt)
                state["avg"].copy_(avg.lerp(new, 1.0 / (k + 2)))
        state["step"] += 1

    def _step_foreach(self, group: dict, params: list[torch.Tensor],
                      grads: list[torch.Tensor], states: list[dict]) -> None:
        ks = [int(s["step"].item()) for s in states]
        native = all(compute_dtype(p) == p.dtype for p in params)
        gs = [g.to(compute_dtype(p)) for g, p in zip(grads, params, strict=True)]
        if group["nesterov"]:
            alphas = [2.0 / (k + 2) for k in ks]
            alphas_next = [2.0 / (k + 3) for k in ks]
            gs = torch._foreach_div(gs, alphas)
            us = self._precondition_foreach(states, gs, group)
            if native:  # update the state in place: no temporaries beyond the step itself
                xs, xbars = [s["x"] for s in states], [s["xbar"] for s in states]
                torch._foreach_sub_(xs, us)
                torch._foreach_lerp_(xbars, xs, alphas)
                torch._foreach_copy_(params, xbars)
                torch._foreach_lerp_(params, xs, alphas_next)
            else:
                xs = torch._foreach_sub([s["x"].to(compute_dtype(p)) for s, p in
                                         zip(states, params, strict=True)], us)
                xbars = [s["xbar"].to(compute_dtype(p))
                         for s, p in zip(states, params, strict=True)]
                xbars = [xb.lerp(x, a) for xb, x, a in zip(xbars, xs, alphas, strict=True)]
                torch._foreach_copy_([s["x"] for s in states], xs)
                torch._foreach_copy_([s["xbar"] for s in states], xbars)
                torch._foreach_copy_(params, [xb.lerp(x, a) for xb, x, a in
                                              zip(xbars, xs, alphas_next, strict=True)])
        else:
            us = self._precondition_foreach(states, gs, group)
            weights = [1.0 / (k + 2) for k in ks]  # running mean of x_0..x_{k+1}
            if native:
                torch._foreach_sub_(params, us)
                if group["average"]:
                    torch._foreach_lerp_([s["avg"] for s in states], params, weights)
            else:
                new = torch._foreach_sub([p.to(compute_dtype(p)) for p in params], us)
                torch._foreach_copy_(params, new)
                if group["average"]:
                    avgs = [s["avg"].to(compute_dtype(p)).lerp(n, w)
                            for s, p, n, w in zip(states, params, new, weights, strict=True)]
                    torch._foreach_copy_([s["avg"] for s in states], avgs)
        torch._foreach_add_([s["step"] for s in states], 1.0)

    # -- the output point -------------------------------------------------------------------
    def output(self) -> dict[torch.Tensor, torch.Tensor]:
        """x̄ of Algorithm 2, the iterate average x̄_K of Algorithm 1 (``average=True``), else
        the parameters.  Parameters not yet stepped are returned as they are."""
        out = {}
        for group in self.param_groups:
            key = "xbar" if group["nesterov"] else ("avg" if group["average"] else None)
            for p in group["params"]:
                state = self.state.get(p, {})
                out[p] = state[key].detach() if key is not None and key in state else p.detach()
        return out
