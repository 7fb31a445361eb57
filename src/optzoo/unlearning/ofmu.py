"""OFMU: penalty-based bi-level unlearning with a similarity-aware inner objective.

Sadia Asif & Mohammad Mohammadi Amiri, "OFMU: Optimization-Driven Framework for Machine
Unlearning", ICLR 2026 (OpenReview ZDuyNJI56H, arXiv 2509.22483).  No official code.

Notation: ``L_f`` the forget loss on D_f (to be *raised*), ``L_r`` the retain loss on D_r,
``g_f = ∇L_f``, ``g_r = ∇L_r``.

* Inner (forgetting) objective, maximised (paper §3)::

      Φ(θ) = L_f(θ) − β · Sim(∇L_f(θ), ∇L_r(θ)),   Sim(a, b) = ⟨a, b⟩ / (‖a‖_ε ‖b‖_ε),

  ``‖a‖_ε = sqrt(‖a‖² + ε²)`` (the brief's "add ε to the norms", smooth so that double backward
  is defined everywhere).  ε must stay well below the gradient norms: for ‖g‖ ≪ ε the
  "cosine" is ⟨g_f, g_r⟩/ε², a scaled inner product (issue 21; a memorised model has
  ‖∇L‖ ≈ 1e-3–1e-2); for ‖g‖ → 0 the cosine's gradient grows as 1/‖g‖ and its curvature, in
  the exact ∇²Φ∇Φ, as 1/‖g‖².  Penalising a positive cosine steers the forget updates towards
  directions orthogonal to the retain gradient.
* Bilevel form ``min_θ L_r(θ)`` s.t. ``∇Φ(θ) = 0``, replaced by the penalty (paper Eq. 7)::

      F_ρ(θ) = L_r(θ) + ρ ‖∇Φ(θ)‖²,   ∇F_ρ = ∇L_r + 2ρ ∇²Φ ∇Φ   (Eq. 9, a Hessian-vector product).

* Two-loop algorithm (paper Alg. 1), round k = 0..K−1: T steps of gradient *ascent* on Φ,
  θ' ← θ' + η_in ∇Φ(θ'); one outer step θ ← θ − η_out ∇F_{ρ_k}; then ρ_{k+1} = min(γ ρ_k, ρ_max).

Readings chosen where the retrieved text (reviews, paper notes; the full text could not be
consulted: the search corpus holds only its abstract and introduction) leaves things open:

* Where the outer step is taken (``outer_at``; the retrieved text does not settle it — the
  OpenReview page, the arXiv HTML and the paper note were searched again for issue 21 and give
  only "inner maximisation step … outer minimisation step" and the update formulas):

  - ``"inner"`` (DEFAULT, "chained"): at the last inner iterate, θ'_0 = θ_k,
    θ_{k+1} = θ'_T − η_out ∇F_{ρ_k}(θ'_T);
  - ``"anchor"`` ("outer step at θ_k"): the step starts from θ_k and uses the gradient at the
    inner solution, θ_{k+1} = θ_k − η_out ∇F_{ρ_k}(θ'_T) (a look-ahead step).  Evaluating ∇F
    at θ_k as well would make the inner loop dead code, so that reading is not offered.
* ρ is capped at ``rho_max`` (the brief's pitfall: an uncapped geometric ρ lets the stationarity
  term dominate the outer step).  ``rho_max = rho`` or ``gamma = 1`` gives a constant penalty.
* ∇Φ always uses the exact gradient of the cosine, by double backward:
  ``∇Sim = H_f a_f + H_r a_r`` with ``a_f = (u_r − Sim·u_f)/‖g_f‖_ε``,
  ``a_r = (u_f − Sim·u_r)/‖g_r‖_ε`` and ``u = g/‖g‖_ε`` (two HVPs; no Hessian is formed).
* ``∇²Φ ∇Φ`` (the paper's Eq. 9 does not say how its third-order part is computed) in two
  variants:

  - ``"exact"``: ∇(ρ‖∇Φ‖²) by triple backward through the graph of ∇Φ, i.e.
    ``∇²Φ ∇Φ = H_f ∇Φ − β ∇²Sim ∇Φ`` with the third derivatives of L_f and L_r in ∇²Sim.  Memory
    and time are several backward passes; for small models.
  - ``"first_order"`` (DEFAULT, scales to LMs): the directions ``a_f, a_r`` inside Sim are held
    fixed (detached), which makes Sim linear in (g_f, g_r), and its curvature, a third-order
    term, is dropped: ``∇²Φ ∇Φ ≈ H_f ∇Φ``, one HVP of L_f.  So
    ``∇F_ρ ≈ g_r + 2ρ H_f (g_f − β ∇Sim)``.

  The library default is ``"first_order"`` because it needs only second derivatives (the
  paper's "scalable two-loop algorithm"); at the digits scale the reproduction uses
  ``"exact"`` (issue 21) and reports the first-order one beside it.

The forget loss should be bounded (e.g. :func:`optzoo.unlearning.losses.capped`): ascent on raw
cross-entropy is unbounded.

Example::

    from optzoo.unlearning import ofmu, capped, classification_ce
    res = ofmu(model, capped(math.log(10)), classification_ce, (xf, yf), (xr, yr),
               rounds=100, inner_steps=1, lr=0.1, beta=1.0, rho=0.1, gamma=1.05)
    res.history[-1]["retain_loss"]

References:
    Asif & Amiri, OFMU, ICLR 2026, OpenReview ZDuyNJI56H.  Penalty-based bilevel gradient
    descent: Shen & Chen, "On Penalty-based Bilevel Gradient Descent Method", ICML 2023.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import nn

from optzoo.checks import check_real
from optzoo.unlearning._loop import (
    Callback,
    Loss,
    Monitor,
    Recorder,
    UnlearningResult,
    batches,
    check_finite,
    check_nonnegative,
    check_positive,
    check_steps,
    grads,
    step,
    trainable,
)

__all__ = ["OUTER_AT", "VARIANTS", "OFMUGradients", "cosine_similarity", "ofmu", "ofmu_gradients"]

Variant = Literal["exact", "first_order"]
VARIANTS: tuple[str, ...] = ("first_order", "exact")
OuterAt = Literal["inner", "anchor"]
OUTER_AT: tuple[str, ...] = ("inner", "anchor")


def _dot(a: Sequence[torch.Tensor], b: Sequence[torch.Tensor]) -> torch.Tensor:
    return sum((x * y).sum() for x, y in zip(a, b, strict=True))


def cosine_similarity(a: Sequence[torch.Tensor], b: Sequence[torch.Tensor],
                      eps: float = 1e-12) -> torch.Tensor:
    """``Sim(a, b) = ⟨a, b⟩ / (‖a‖_ε ‖b‖_ε)`` over lists of tensors, ``‖a‖_ε = sqrt(‖a‖² + ε²)``
    (differentiable; equals the plain cosine when both norms ≫ ε; ``eps`` finite, ``>= 0``).

    Example::

        >>> import torch
        >>> from optzoo.unlearning import cosine_similarity
        >>> float(cosine_similarity([torch.tensor([1.0, 0.0])], [torch.tensor([1.0, 1.0])]))
        0.7071067690849304
    """
    check_real("eps", eps, low=0.0)
    na = torch.sqrt(_dot(a, a) + eps * eps)
    nb = torch.sqrt(_dot(b, b) + eps * eps)
    return _dot(a, b) / (na * nb)


@dataclass
class OFMUGradients:
    """The quantities of one OFMU evaluation at θ (all detached).

    Args:
        forget_loss / retain_loss: L_f(θ), L_r(θ).
        sim: Sim(∇L_f, ∇L_r).
        grad_phi: ∇Φ(θ) (per parameter).
        grad_penalty: ∇F_ρ(θ) = ∇L_r + 2ρ ∇²Φ∇Φ of the variant; None if not asked for.
    """

    forget_loss: float
    retain_loss: float
    sim: float
    grad_phi: list[torch.Tensor]
    grad_penalty: list[torch.Tensor] | None


def ofmu_gradients(model: nn.Module, forget_loss: Loss, retain_loss: Loss, forget_batch: Any,
                   retain_batch: Any, *, beta: float, rho: float | None = None,
                   variant: Variant = "first_order", eps: float = 1e-12) -> OFMUGradients:
    """∇Φ(θ) and, when ``rho`` is given, ∇F_ρ(θ) at the model's current parameters.

    Args:
        model: the model (its trainable parameters are θ).
        forget_loss, retain_loss: ``loss(model, batch) -> scalar``.
        forget_batch, retain_batch: the batches L_f and L_r are evaluated on.
        beta: weight β ≥ 0 of the similarity term in Φ.
        rho: penalty ρ ≥ 0 of F_ρ; None computes only ∇Φ (the inner step).
        variant: ``"first_order"`` or ``"exact"`` second-order term (module docstring).
        eps: ε of the smoothed norms in Sim.

    Example:
        >>> import math
        >>> import torch
        >>> from optzoo.unlearning import capped, classification_ce, ofmu_gradients
        >>> _ = torch.manual_seed(0)
        >>> model = torch.nn.Linear(4, 3)
        >>> forget = (torch.randn(16, 4), torch.full((16,), 2))
        >>> retain = (torch.randn(32, 4), torch.randint(0, 2, (32,)))
        >>> g = ofmu_gradients(model, capped(math.log(3)), classification_ce, forget, retain,
        ...                    beta=1.0, rho=0.1)
        >>> [p.shape for p in g.grad_phi]  # ∇Φ per parameter; g.grad_penalty: ∇F_ρ
        [torch.Size([3, 4]), torch.Size([3])]
        >>> bool(-1.0 <= g.sim <= 1.0), g.grad_penalty is not None
        (True, True)
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant: expected one of {VARIANTS}, got {variant!r}")
    check_nonnegative(beta=beta, eps=eps)
    if rho is not None:
        check_nonnegative(rho=rho)
    params = trainable(model)
    lf = forget_loss(model, forget_batch)
    lr_ = retain_loss(model, retain_batch)
    for v, what in ((lf, "forget_loss"), (lr_, "retain_loss")):
        if v.dim() != 0:
            raise ValueError(f"{what}: expected a scalar loss, got shape {tuple(v.shape)}")
        check_finite(v.detach(), what)
    exact = rho is not None and variant == "exact"
    need_hf = rho is not None  # H_f ∇Φ (first order) or the full graph of ∇Φ (exact)
    gf = grads(lf, params, create_graph=beta > 0 or need_hf, retain_graph=True)
    gr = grads(lr_, params, create_graph=beta > 0, retain_graph=True)
    sim = cosine_similarity(gf, gr, eps)
    if beta > 0:
        gsim = grads(sim, params, create_graph=exact, retain_graph=True)
        gphi = [a - beta * b for a, b in zip(gf, gsim, strict=True)]
    else:
        gphi = list(gf)
    penalty = None
    if exact:
        # ∇(L_r + ρ‖∇Φ‖²) = ∇L_r + 2ρ ∇²Φ ∇Φ, by differentiating through the graph of ∇Φ
        penalty = grads(lr_ + rho * _dot(gphi, gphi), params)
    elif rho is not None:
        # one HVP of L_f along the (detached) ∇Φ: ∇²Φ ∇Φ ≈ H_f ∇Φ
        v = [g.detach() for g in gphi]
        hv = grads(_dot(gf, v), params, retain_graph=True)
        gr_d = [g.detach() for g in gr]
        penalty = [a + 2.0 * rho * b for a, b in zip(gr_d, hv, strict=True)]
    return OFMUGradients(
        forget_loss=float(lf.detach()), retain_loss=float(lr_.detach()),
        sim=float(sim.detach()), grad_phi=[g.detach() for g in gphi],
        grad_penalty=None if penalty is None else [g.detach() for g in penalty])


def ofmu(model: nn.Module, forget_loss: Loss, retain_loss: Loss, forget_data: Any,
         retain_data: Any, *, rounds: int = 100, inner_steps: int = 1, lr: float = 0.1,
         lr_inner: float | None = None, lr_outer: float | None = None, beta: float = 1.0,
         rho: float = 0.1, gamma: float = 1.05, rho_max: float = 10.0,
         variant: Variant = "first_order", eps: float = 1e-12,
         outer_at: OuterAt = "inner", max_grad_norm: float | None = None,
         monitor: Monitor | None = None, monitor_every: int = 1,
         callback: Callback | None = None) -> UnlearningResult:
    """Unlearn ``forget_data`` from ``model`` in place by OFMU (paper Alg. 1).

    Args:
        model: any ``nn.Module`` (classifier, causal LM, …); updated in place.
        forget_loss, retain_loss: ``loss(model, batch) -> scalar``; the forget loss is raised
            and should be bounded (:func:`optzoo.unlearning.losses.capped`).
        forget_data, retain_data: one batch (used every step) or an iterable of batches
            (cycled); each gradient evaluation draws one forget and one retain batch.
        rounds: K, outer iterations.
        inner_steps: T, ascent steps on Φ per round.
        lr: η for both loops unless ``lr_inner`` / ``lr_outer`` are given (the paper reports a
            single learning rate).
        beta: β ≥ 0, weight of the similarity penalty (β = 0: the ablation without
            decorrelation).
        rho, gamma, rho_max: initial penalty ρ_0 > 0, growth γ ≥ 1 (ρ_{k+1} = γρ_k) and cap.
        variant: ``"first_order"`` (default) or ``"exact"`` ∇²Φ∇Φ (module docstring).
        eps: ε of the smoothed gradient norms in Sim.
        outer_at: ``"inner"`` (default: the outer step starts at the last inner iterate) or
            ``"anchor"`` (it starts at θ_k, with the gradient taken at the last inner
            iterate); module docstring.
        max_grad_norm: rescale any update direction longer than this (None: never).
        monitor: ``monitor(model) -> {name: value}``, recorded every ``monitor_every`` updates
            (inner and outer steps both count) and before the first.
        callback: called with each history record as it is made (progress output).

    Returns:
        :class:`UnlearningResult`; each history record has ``phase`` ("inner"/"outer"),
        ``round``, ``forget_loss``, ``retain_loss``, ``sim`` (before the step), ``rho`` and
        ``grad_norm`` (norm of ∇Φ resp. ∇F_ρ).

    Example:
        >>> import math
        >>> import torch
        >>> from optzoo.unlearning import capped, classification_ce, ofmu
        >>> _ = torch.manual_seed(0)
        >>> model = torch.nn.Linear(4, 3)
        >>> forget = (torch.randn(16, 4), torch.full((16,), 2))  # one batch, used every step
        >>> retain = (torch.randn(32, 4), torch.randint(0, 2, (32,)))
        >>> result = ofmu(model, capped(math.log(3)), classification_ce, forget, retain,
        ...               rounds=5, inner_steps=2, lr=0.5, beta=1.0, rho=0.1, gamma=1.05)
        >>> len(result.history), [r["phase"] for r in result.history[:3]]  # T inner, 1 outer
        (15, ['inner', 'inner', 'outer'])
        >>> round(result.history[-1]["rho"], 3)  # ρ_4 = ρ_0 γ^4
        0.122
    """
    check_steps(rounds=rounds, inner_steps=inner_steps)
    check_positive(lr=lr, rho=rho, rho_max=rho_max)
    if not (math.isfinite(gamma) and gamma >= 1):
        raise ValueError(f"gamma: expected a finite number >= 1, got {gamma!r}")
    if rho_max < rho:
        raise ValueError(f"rho_max: expected >= rho = {rho}, got {rho_max}")
    if variant not in VARIANTS:
        raise ValueError(f"variant: expected one of {VARIANTS}, got {variant!r}")
    if outer_at not in OUTER_AT:
        raise ValueError(f"outer_at: expected one of {OUTER_AT}, got {outer_at!r}")
    if max_grad_norm is not None:
        check_positive(max_grad_norm=max_grad_norm)
    eta_in = lr if lr_inner is None else lr_inner
    eta_out = lr if lr_outer is None else lr_outer
    check_positive(lr_inner=eta_in, lr_outer=eta_out)
    fb, rb = batches(forget_data, "forget_data"), batches(retain_data, "retain_data")
    params = trainable(model)
    rec = Recorder(model, monitor, monitor_every, callback)
    rho_k = float(rho)
    for k in range(rounds):
        anchor = ([p.detach().clone() for p in params] if outer_at == "anchor" else None)
        for _ in range(inner_steps):
            g = ofmu_gradients(model, forget_loss, retain_loss, next(fb), next(rb), beta=beta,
                               variant=variant, eps=eps)
            norm = step(params, [-d for d in g.grad_phi], eta_in, max_grad_norm)  # ascent
            rec.update(phase="inner", round=k, forget_loss=g.forget_loss,
                       retain_loss=g.retain_loss, sim=g.sim, rho=rho_k, grad_norm=norm)
        g = ofmu_gradients(model, forget_loss, retain_loss, next(fb), next(rb), beta=beta,
                           rho=rho_k, variant=variant, eps=eps)
        assert g.grad_penalty is not None
        if anchor is not None:  # "outer step at θ_k": go back to θ_k, keep ∇F_ρ(θ'_T)
            with torch.no_grad():
                for p, a in zip(params, anchor, strict=True):
                    p.copy_(a)
        norm = step(params, g.grad_penalty, eta_out, max_grad_norm)
        rec.update(phase="outer", round=k, forget_loss=g.forget_loss, retain_loss=g.retain_loss,
                   sim=g.sim, rho=rho_k, grad_norm=norm)
        rho_k = min(gamma * rho_k, rho_max)
    return rec.result
