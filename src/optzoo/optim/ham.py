"""HAM -- Hyperbolic Aware Minimization (Jacobs, Gadhikar, Rubio-Madrigal & Burkholz, ICLR 2026).

"Hyperbolic Aware Minimization: Implicit Bias for Sparsity" (OpenReview XKB5Hu0ACY, arXiv
2506.02630).  HAM alternates a step of any first-order base optimizer with a multiplicative
*hyperbolic mirror step* that reuses the same gradient ``g = ∇f(w_t)``::

    w⁺ = base_step(w_t, g)                                     (SGD, Adam, AdamW, ...)
    w_{t+1} = w⁺ · exp( clamp( lr · (−α · sign(w⁺) · g − β), −5, 5 ) )   (tensors with ndim ≥ 2)

``lr`` is the base optimizer's current learning rate of the parameter's group (so schedulers act
on both steps); ``sign`` is read *after* the base step; exact zeros stay zero (a multiplicative
update), which keeps pruned weights pruned.  Biases, norm gains and other 0/1-d tensors get only
the base step.  For small ``lr`` the pair is the flow ``dx/dt = −(1 + α|x|)∇f − βx``: an inverse
metric that is ≥ 1 at the origin (no slow-down, signs can flip) and grows like the ``m ⊙ w``
reparameterization's away from it, plus a mild decay towards sparsity.

Reading of the official wrapper (``HamOptimizerWrapper`` in github TomJacobs05/HAM, README):
defaults α = 200, β = 1e-3 (tuned for Adam-scale lr ≈ 1e-3), exponent clamp ±5, per-tensor
weight-norm clip at 1000 for every parameter.  Deviations, all at the edges:

* the wrapper holds an already built optimizer: :meth:`HAM.wrap` does the same, and
  ``HAM(params, base=torch.optim.Adam, alpha=..., beta=..., **base_kwargs)`` builds one.
  HAM's ``param_groups``/``state`` *are* the base optimizer's (one dict per group holding
  both the base and the HAM hyperparameters), so ``state_dict`` carries the base state and
  per-group α, β.
* the gradients are collected *before* the base step (by reference, no copy: PyTorch's built-in
  optimizers never write into ``p.grad``); ``maximize`` flips them for the HAM step as the base
  optimizer does for its own.
* the wrapper's NaN checks with revert and its ``clip_grad_norm_(20)`` after the step (which does
  not affect that step) are left out.
* a closure is evaluated once by HAM and the base step is then taken without it (one gradient per
  step; line-search bases such as LBFGS are not supported).
* sparse training: :meth:`HAM.set_mask` stores a 0/1 mask per parameter in ``state`` and
  re-applies it after every step (the base step would otherwise regrow pruned weights through
  momentum or weight decay).  A mask set before the base optimizer has state is held aside until
  the first step (Adam initialises its state only when it is empty); it is in ``state_dict``
  from the first step on.  :meth:`HAM.prune_magnitude` sets layerwise magnitude masks, once
  (one-shot) or at the points of a pruning schedule (gradual).
"""

from __future__ import annotations

from typing import Any

import torch

from optzoo.optim.base import ZooOptimizer, check_group, check_hyper

__all__ = ["HAM"]

_CLAMP = 5.0  # the official exponent clamp
_BASES = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}


class HAM(ZooOptimizer):
    """A base optimizer step followed by HAM's hyperbolic mirror step (see the module docstring).

    Args:
        params: parameters or parameter groups, as for any optimizer.
        base: the base optimizer class (default ``torch.optim.Adam``) or one of the names
            ``"sgd"``, ``"adam"``, ``"adamw"``; it must read ``lr`` from its groups and leave
            ``p.grad`` untouched (all ``torch.optim`` first-order methods do).  Recorded by name
            in ``defaults["base"]``.
        alpha: α, the gradient-sign coupling of the mirror step (default 200, official).
        beta: β, the constant multiplicative decay (default 1e-3, official).
        max_weight_norm: per-tensor Frobenius-norm clip applied to every parameter after the
            step (default 1000, official); ``inf`` switches it off.
        **base_kwargs: passed to ``base`` (``lr``, ``betas``, ``weight_decay``, ``maximize``,
            ``foreach``, ...).  ``foreach`` selects the multi-tensor path of both steps.

    With ``alpha = beta = 0`` the mirror step is the identity and HAM is exactly its base.

    Example:
        >>> import torch
        >>> from optzoo.optim import HAM
        >>> _ = torch.manual_seed(0)
        >>> model = torch.nn.Linear(8, 1)
        >>> x, y = torch.randn(32, 8), torch.randn(32, 1)
        >>> opt = HAM(model.parameters(), base=torch.optim.AdamW, lr=1e-2)  # α=200, β=1e-3
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = torch.nn.functional.mse_loss(model(x), y)
        ...     loss.backward()
        ...     return loss
        >>> first = closure().item()
        >>> for _ in range(20):
        ...     _ = opt.step(closure)
        >>> bool(closure().item() < first), opt.defaults["base"]
        (True, 'AdamW')
        >>> opt = HAM.wrap(torch.optim.SGD(model.parameters(), lr=0.05))  # an optimizer built
        >>> opt.prune_magnitude(0.5)  # layerwise magnitude masks, kept through later steps
        >>> _ = opt.step(closure)
        >>> int((model.weight == 0).sum())
        4
    """

    def __init__(self, params, base: str | type[torch.optim.Optimizer] = torch.optim.Adam, *,
                 alpha: float = 200.0, beta: float = 1e-3, max_weight_norm: float = 1000.0,
                 **base_kwargs: Any):
        if isinstance(base, str):
            if base.lower() not in _BASES:
                raise ValueError(f"base: expected one of {sorted(_BASES)} or a class, got {base!r}")
            base_cls, base_name = _BASES[base.lower()], base
        elif isinstance(base, type) and issubclass(base, torch.optim.Optimizer):
            base_cls, base_name = base, base.__name__
        else:
            raise ValueError(f"base: expected a torch.optim.Optimizer class, got {base!r}")
        base_kwargs.setdefault("maximize", False)
        base_kwargs.setdefault("foreach", None)
        if "lr" in base_kwargs and not isinstance(base_kwargs["lr"], torch.Tensor):
            check_hyper("lr", base_kwargs["lr"])  # before the base's own, unnamed, checks
        self._setup(base_cls(params, **base_kwargs), base_name, alpha, beta, max_weight_norm)

    @classmethod
    def wrap(cls, optimizer: torch.optim.Optimizer, *, alpha: float = 200.0, beta: float = 1e-3,
             max_weight_norm: float = 1000.0) -> HAM:
        """HAM around an optimizer that is already built (the official wrapper's interface).

        The returned object shares ``optimizer``'s parameter groups and state (its groups gain
        ``alpha``, ``beta``, ``max_weight_norm`` and ``base``); step the wrapper, not
        ``optimizer``.  Example::

            base = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
            opt = HAM.wrap(base, alpha=200.0, beta=1e-3)
        """
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise ValueError(f"optimizer: expected a torch.optim.Optimizer instance, "
                             f"got {type(optimizer).__name__}")
        if isinstance(optimizer, HAM):
            raise ValueError("optimizer: already a HAM optimizer; wrap its base instead")
        self = cls.__new__(cls)
        self._setup(optimizer, type(optimizer).__name__, alpha, beta, max_weight_norm)
        return self

    def _setup(self, inner: torch.optim.Optimizer, base_name: str, alpha: float, beta: float,
               max_weight_norm: float) -> None:
        ham = dict(alpha=check_hyper("alpha", alpha), beta=check_hyper("beta", beta),
                   max_weight_norm=check_hyper("max_weight_norm", max_weight_norm,
                                               low_open=True, finite=False))
        for group in inner.param_groups:
            for k, v in ham.items():
                group.setdefault(k, v)
            self._check_group(group)
        # Same group dicts as the base optimizer: one place for every hyperparameter.
        # ``base`` is recorded (as a name) so a state_dict says what it holds.
        for group in inner.param_groups:
            group["base"] = base_name
        super().__init__(inner.param_groups, {**inner.defaults, **ham, "base": base_name})
        self.base = inner
        self._pending_masks: dict[torch.Tensor, torch.Tensor] = {}
        self._alias()

    def _alias(self) -> None:
        self.param_groups = self.base.param_groups
        self.state = self.base.state

    @staticmethod
    def _check_group(group: dict) -> None:
        for k in ("alpha", "beta"):
            check_hyper(k, group[k])
        check_hyper("max_weight_norm", group["max_weight_norm"], low_open=True, finite=False)

    def add_param_group(self, param_group: dict) -> None:
        if not hasattr(self, "base"):  # called from Optimizer.__init__ on the shared groups
            super().add_param_group(param_group)
            return
        self.base.add_param_group(param_group)
        group = self.base.param_groups[-1]
        for k in ("alpha", "beta", "max_weight_norm", "base"):
            group.setdefault(k, self.defaults[k])
        self._check_group(group)
        check_group(type(self).__name__, group)

    def load_state_dict(self, state_dict: dict) -> None:
        self.base.load_state_dict(state_dict)
        self._alias()

    @torch.no_grad()
    def set_mask(self, p: torch.Tensor, mask: torch.Tensor | None) -> None:
        """Fix a sparsity mask for ``p`` (nonzero = kept); ``None`` removes it.  The mask is
        applied now and after every step, and saved in ``state_dict``."""
        self._group_of(p)
        if mask is None:
            self._pending_masks.pop(p, None)
            if p in self.state:
                self.state[p].pop("mask", None)
            return
        if mask.shape != p.shape:
            raise ValueError(f"mask: expected shape {tuple(p.shape)}, got {tuple(mask.shape)}")
        m = (mask != 0).to(dtype=p.dtype, device=p.device)
        if self.state.get(p):
            self.state[p]["mask"] = m
        else:  # bases such as Adam initialise their state when it is empty: wait for it
            self._pending_masks[p] = m
        p.mul_(m)

    @torch.no_grad()
    def prune_magnitude(self, sparsity: float) -> None:
        """Layerwise magnitude pruning: in every weight tensor (``ndim ≥ 2``) keep the
        ``1 − sparsity`` fraction of largest ``|w|`` and fix the rest at zero with
        :meth:`set_mask`.  Called once it is one-shot pruning; called at the points of a
        schedule with growing ``sparsity`` it is gradual magnitude pruning (masks only shrink:
        weights pruned earlier stay zero, so they rank lowest)."""
        if not 0.0 <= sparsity < 1.0:
            raise ValueError(f"sparsity: expected a fraction in [0, 1), got {sparsity}")
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() < 2:
                    continue
                k = int(round(sparsity * p.numel()))
                mask = torch.ones_like(p)
                if k > 0:
                    idx = torch.argsort(p.abs().flatten(), stable=True)[:k]
                    mask.view(-1)[idx] = 0.0
                self.set_mask(p, mask)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        # g = ∇f(w_t), read before the base step (raises on sparse gradients).
        grads = [self._grads(group) for group in self.param_groups]
        self.base.step()
        for group, (params, gs) in zip(self.param_groups, grads, strict=True):
            ws = [p for p in params if p.dim() >= 2]
            gw = [g for p, g in zip(params, gs, strict=True) if p.dim() >= 2]
            foreach = bool(params) and self._use_foreach(group, params)
            if ws:
                lr = float(group["lr"])
                a, b = -group["alpha"] * lr, -group["beta"] * lr
                if foreach:
                    self._mirror_foreach(ws, gw, a, b)
                else:  # the reference loop (foreach=False)
                    for w, g in zip(ws, gw, strict=True):
                        e = torch.sign(w).mul_(g).mul_(a).add_(b).clamp_(-_CLAMP, _CLAMP)
                        w.mul_(e.exp_())
            max_norm = group["max_weight_norm"]
            if max_norm != float("inf") and foreach:
                self._clip_foreach(params, max_norm)
                max_norm = float("inf")  # done: only the masks are left
            if max_norm != float("inf") or self._pending_masks or self._any_mask(params):
                for p in params:
                    self._clip_and_mask(p, max_norm)
        return loss

    def _any_mask(self, params: list[torch.Tensor]) -> bool:
        state = self.state
        return any(p in state and "mask" in state[p] for p in params)

    @staticmethod
    def _clip_foreach(params: list[torch.Tensor], max_norm: float) -> None:
        """The per-tensor norm clip of :meth:`_clip_and_mask` for a whole group at once."""
        low = [p for p in params if p.dtype in (torch.float16, torch.bfloat16)]
        if low:  # norms of half-precision tensors in float32, as the for-loop path does
            norms = [torch.linalg.vector_norm(p, dtype=torch.float32) for p in params]
        else:
            norms = list(torch._foreach_norm(params))
        torch._foreach_clamp_min_(norms, max_norm)
        torch._foreach_reciprocal_(norms)
        torch._foreach_mul_(norms, max_norm)
        torch._foreach_mul_(params, [n if n.dtype == p.dtype else n.to(p.dtype)
                                     for n, p in zip(norms, params, strict=True)])

    @staticmethod
    def _mirror_foreach(ws, gs, a: float, b: float) -> None:
        """``w *= exp(clamp(a·sign(w)·g + b, ±5))`` for a list of tensors, as multi-tensor ops.

        (On CPU a ``_foreach`` op is a loop over the tensors; fused variants tried -- one
        broadcast ``addcmul`` for ``b + a·sign(w)·g``, ``copysign`` instead of ``sign``, a
        per-tensor loop, skipping the clip's multiply below the cap -- were not faster.)"""
        e = torch._foreach_sign(ws)
        torch._foreach_mul_(e, gs)
        torch._foreach_mul_(e, a)
        torch._foreach_add_(e, b)
        torch._foreach_clamp_min_(e, -_CLAMP)
        torch._foreach_clamp_max_(e, _CLAMP)
        torch._foreach_exp_(e)
        torch._foreach_mul_(ws, e)

    def _clip_and_mask(self, p: torch.Tensor, max_norm: float) -> None:
        if max_norm != float("inf"):
            # factor max_norm / max(‖p‖, max_norm): exactly 1 below the cap, and no host sync
            norm = torch.linalg.vector_norm(p, dtype=torch.float32 if p.dtype in (
                torch.float16, torch.bfloat16) else None)
            p.mul_((max_norm / norm.clamp(min=max_norm)).to(p.dtype))
        if p in self._pending_masks:  # the base step has run: its state exists if it keeps any
            self.state[p]["mask"] = self._pending_masks.pop(p)
        mask = self.state[p].get("mask") if p in self.state else None
        if mask is not None:
            p.mul_(mask)
