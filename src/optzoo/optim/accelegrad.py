"""AcceleGrad: accelerated AdaGrad-Norm-type method with importance weights.

Reference: Kfir Y. Levy, Alp Yurtsever and Volkan Cevher, "Online Adaptive Methods,
Universality and Acceleration" (NeurIPS 2018, arXiv 1809.02864), Algorithm 1 (AcceleGrad) with
its adaptive learning rate η_t and the weights α_t of its smooth-case theorem.  It is a
baseline of the ``adagrad-nesterov`` reproduction (Kovalev, ICLR 2026): a prior accelerated
*scalar* adaptive method, next to Kovalev's accelerated AdaGrad-Norm (his Algorithm 2).

Algorithm 1, with ``y_0 = z_0 = x_0`` and, for t = 0, 1, …:

    α_t = 1 (t ≤ 2),  α_t = (t + 1)/4 (t ≥ 3);        τ_t = 1/α_t  (so τ_t ∈ (0, 1])
    x_{t+1} = τ_t z_t + (1 − τ_t) y_t,                 g_t = ∇f(x_{t+1})
    η_t = 2D / sqrt(G² + Σ_{s≤t} α_s² ‖g_s‖²)          (current gradient included)
    z_{t+1} = Π_K(z_t − α_t η_t g_t)
    y_{t+1} = x_{t+1} − η_t g_t
    output  ȳ_T = Σ_{t<T} α_t y_{t+1} / Σ_{t<T} α_t.

Guarantees (abstract; x* ∈ K, K of diameter D), with no change to the method: the accelerated
O(1/T²) rate (up to a log factor) for smooth convex f, the standard O(1/√T) for non-smooth f
and for noisy gradients — the three regimes Kovalev's Thm 2 gives his accelerated scalar
AdaGrad.  Sources: the paper's
abstract and introduction (read through the search index; the full text was not available
here), and two public implementations that agree with the scheme above term by term — a
sample optimizer of the ``deep500`` benchmark (η_t, z and y updates, per tensor) and a Julia
SDP solver (α_t schedule, α-weighted accumulator, α-weighted output average, projection of z
onto a ball; it writes η = 4R/sqrt(·) with R a radius, i.e. D = 2R).

Choices of this implementation (documented deviations or readings):

* ``lr`` is D, a DISTANCE (the diameter of K), not a step size.  With no constraint set, the
  natural K is the Euclidean ball around x_0 that holds x*, so D = 2‖x_0 − x*‖₂ (what the
  reproduction uses, with x* known).
* ``G`` is the paper's constant under the square root of η_t (a gradient-norm scale); it must
  be > 0 so that a zero first gradient gives a finite η.  Default 1e-8 (tiny, like AdaGrad's
  δ = G²; the reproduction uses G = 1e-6, i.e. G² = its δ = 1e-12).
* Unconstrained by default (Π_K = identity): the paper presents the method for unconstrained
  convex problems, K being the set the analysis keeps x* and the z_t in.
  ``project=True`` takes K = the Euclidean ball of diameter D (radius D/2) centred at the
  group's initial point, the K for which ``lr = D`` is exact; the initial point is then kept in
  ``state["x0"]``.
* The paper has one vector: here each PARAMETER GROUP is that vector.  ‖g‖ (and the projection
  norm) is taken jointly over the group's parameters that have a gradient, and the weights /
  counter are per group (kept in the state of the group's first parameter, as LBFGS keeps its
  scalars).  Parameters without a gradient in a step are left out of that step.
* The parameters hold the next gradient query point x_{t+1} between steps, so the usual
  ``loss.backward(); opt.step()`` loop works; y, z and the α-weighted average ȳ live in
  ``self.state[p]``; :meth:`output` returns ȳ (the paper's output; x_0 before any step).
* Arithmetic in float32 for float16/bfloat16 parameters, state stored in the parameter dtype.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from optzoo.optim.adaptive_preconditioning import compute_dtype
from optzoo.optim.base import ZooOptimizer, check_hyper

__all__ = ["AcceleGrad"]


def _alpha(t: int) -> float:
    """Importance weight α_t of Theorem 1.2 (α_t ≥ 1, so τ_t = 1/α_t ∈ (0, 1])."""
    return 1.0 if t <= 2 else (t + 1) / 4.0


def _alpha_sum(t: int) -> float:
    """Σ_{s=0..t} α_s in closed form (0 for t < 0); exact in binary floating point."""
    if t < 0:
        return 0.0
    if t <= 2:
        return float(t + 1)
    return 3.0 + ((t + 1) * (t + 2) / 2 - 6) / 4.0


class AcceleGrad(ZooOptimizer):
    """AcceleGrad (Levy, Yurtsever & Cevher 2018, Algorithm 1), one vector per parameter group.

    Args:
        params: parameters or parameter groups.
        lr: D > 0, the diameter of the set K, a distance (e.g. 2‖x_0 − x*‖₂).
        G: the constant G > 0 under the square root of η_t.
        project: project z onto the ball of diameter D around the group's initial point.
        maximize: maximize the objective.
        foreach: multi-tensor path (default: on CUDA).

    Example:
        >>> import torch
        >>> from optzoo.optim import AcceleGrad
        >>> w = torch.nn.Parameter(torch.zeros(10))
        >>> opt = AcceleGrad([w], lr=2.0 * 3.2)  # D = 2‖x_0 − x*‖₂ = 2√10
        >>> for _ in range(50):
        ...     opt.zero_grad()
        ...     ((w - 1) ** 2).sum().backward()
        ...     _ = opt.step()
        >>> ybar = opt.output()[w]  # the weighted average ȳ, the method's output
        >>> bool((ybar - 1).abs().max() < 0.05)
        True
    """

    def __init__(self, params: Iterable[Any], lr: float = 1.0, G: float = 1e-8, *,
                 project: bool = False, maximize: bool = False,
                 foreach: bool | None = None) -> None:
        check_hyper("lr", lr, low=0.0, low_open=True)
        check_hyper("G", G, low=0.0, low_open=True)
        for name, flag in (("project", project), ("maximize", maximize)):
            if not isinstance(flag, bool):
                raise ValueError(f"{name}: expected a bool, got {flag!r}")
        if foreach is not None and not isinstance(foreach, bool):
            raise ValueError(f"foreach: expected a bool or None, got {foreach!r}")
        super().__init__(params, dict(lr=lr, G=G, project=project, maximize=maximize,
                                      foreach=foreach))

    def _group_state(self, group: dict) -> dict:
        """Per-group scalars (step t, Σ α_s² ‖g_s‖²) in the state of the group's first param."""
        first = group["params"][0]
        st = self.state[first]
        if "step" not in st:
            # float32 scalar step (kept as is by load_state_dict): exact round trips
            st["step"] = torch.tensor(0.0)
            st["sum_sq"] = torch.zeros((), dtype=first.dtype, device=first.device)
        return st

    def _init_state(self, p: torch.Tensor, group: dict) -> dict:
        st = self.state[p]
        if "y" not in st:
            for key in ("y", "z", "avg") + (("x0",) if group["project"] else ()):
                st[key] = p.detach().clone(memory_format=torch.preserve_format)
        return st

    def _step_group(self, group: dict, params: list, grads: list) -> None:
        gst = self._group_state(group)
        states = [self._init_state(p, group) for p in params]
        t = int(gst["step"].item())
        alpha = _alpha(t)
        weight = alpha / _alpha_sum(t)  # ȳ ← ȳ + weight (y_{t+1} − ȳ)
        tau_next = 1.0 / _alpha(t + 1)  # coupling of the NEXT query point x_{t+2}
        gs = [g.to(compute_dtype(p)) for g, p in zip(grads, params, strict=True)]
        foreach = self._use_foreach(group, params)
        acc_dtype = compute_dtype(gst["sum_sq"])
        norms = torch._foreach_norm(gs) if foreach else \
            [torch.linalg.vector_norm(g) for g in gs]
        sq = torch.stack([n.to(acc_dtype) for n in norms]).square().sum()
        acc = gst["sum_sq"].to(acc_dtype) + alpha * alpha * sq
        gst["sum_sq"].copy_(acc)
        eta = 2.0 * group["lr"] / (group["G"] ** 2 + acc).sqrt()
        if foreach:
            self._update_foreach(group, params, gs, states, eta, alpha, weight, tau_next)
        else:
            self._update_loop(group, params, gs, states, eta, alpha, weight, tau_next)
        gst["step"] += 1

    def _project(self, group, zs, x0s, foreach=False):
        """Π_K for K = ball(x_0, D/2), jointly over the group: returns the projected ``zs``."""
        diffs = torch._foreach_sub(zs, x0s) if foreach else \
            [z - x0 for z, x0 in zip(zs, x0s, strict=True)]
        norms = torch._foreach_norm(diffs) if foreach else \
            [torch.linalg.vector_norm(d) for d in diffs]
        norm = torch.linalg.vector_norm(torch.stack([n.to(torch.float64) for n in norms]))
        # z − (1 − f)(z − x_0) = x_0 + f (z − x_0), f = min(1, (D/2)/‖z − x_0‖)
        shrink = (1.0 - 0.5 * group["lr"] / norm).clamp(min=0.0)
        dtypes = {d.dtype for d in diffs}
        if foreach and len(dtypes) == 1:
            return torch._foreach_sub(zs, torch._foreach_mul(diffs, shrink.to(dtypes.pop())))
        return [z - d * shrink.to(d.dtype) for z, d in zip(zs, diffs, strict=True)]

    def _update_loop(self, group, params, gs, states, eta, alpha, weight, tau_next):
        zs, ys = [], []
        for p, g, st in zip(params, gs, states, strict=True):
            cdt = compute_dtype(p)
            e = eta.to(cdt)
            zs.append(st["z"].to(cdt) - (alpha * e) * g)
            ys.append(p.to(cdt) - e * g)  # p holds x_{t+1}
        if group["project"]:
            zs = self._project(group, zs, [st["x0"].to(z.dtype) for st, z in
                                           zip(states, zs, strict=True)])
        for p, st, z, y in zip(params, states, zs, ys, strict=True):
            st["z"].copy_(z)
            st["y"].copy_(y)
            st["avg"].copy_(st["avg"].to(y.dtype).lerp(y, weight))
            p.copy_(y.lerp(z, tau_next))

    def _update_foreach(self, group, params, gs, states, eta, alpha, weight, tau_next):
        cdts = [compute_dtype(p) for p in params]
        if len(set(cdts)) == 1 and all(c == p.dtype for c, p in zip(cdts, params, strict=True)):
            # one native dtype: update the state and the parameters in place
            e = eta.to(cdts[0])
            zst = [st["z"] for st in states]
            torch._foreach_sub_(zst, torch._foreach_mul(gs, alpha * e))
            if group["project"]:
                zs = self._project(group, zst, [st["x0"] for st in states], foreach=True)
                torch._foreach_copy_(zst, zs)
            torch._foreach_sub_(params, torch._foreach_mul(gs, e))  # params now hold y_{t+1}
            torch._foreach_copy_([st["y"] for st in states], params)
            torch._foreach_lerp_([st["avg"] for st in states], params, weight)
            torch._foreach_lerp_(params, zst, tau_next)
            return
        e = eta.to(cdts[0]) if len(set(cdts)) == 1 else None
        if e is None:  # mixed dtypes in one group: per-tensor scalars
            ag = [g * (alpha * eta.to(g.dtype)) for g in gs]
            eg = [g * eta.to(g.dtype) for g in gs]
        else:
            ag = torch._foreach_mul(gs, alpha * e)
            eg = torch._foreach_mul(gs, e)
        zs = torch._foreach_sub([st["z"].to(c) for st, c in zip(states, cdts, strict=True)], ag)
        ys = torch._foreach_sub([p.to(c) for p, c in zip(params, cdts, strict=True)], eg)
        if group["project"]:
            zs = self._project(group, zs, [st["x0"].to(c) for st, c in
                                           zip(states, cdts, strict=True)], foreach=True)
        torch._foreach_copy_([st["z"] for st in states], zs)
        torch._foreach_copy_([st["y"] for st in states], ys)
        avgs = [st["avg"].to(c) for st, c in zip(states, cdts, strict=True)]
        torch._foreach_lerp_(avgs, ys, weight)
        torch._foreach_copy_([st["avg"] for st in states], avgs)
        torch._foreach_lerp_(ys, zs, tau_next)
        torch._foreach_copy_(params, ys)

    def output(self) -> dict[torch.Tensor, torch.Tensor]:
        """ȳ, the α-weighted average of y_1, …, y_T (x_0 for a parameter not yet stepped)."""
        out = {}
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state.get(p, {})
                out[p] = st["avg"] if "avg" in st else p.detach()
        return out
