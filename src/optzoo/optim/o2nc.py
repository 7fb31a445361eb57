"""Online-to-nonconvex conversion (O2NC) with a projected optimistic online learner: ODOG and the
O2NC baselines it is compared with.

Paper: Patitucci, Jiang & Mokhtari, "Improving Online-to-Nonconvex Conversion for Smooth
Optimization via Double Optimism" (ICLR 2026, OpenReview ZAflv4dxQ9, arXiv 2510.03167).
Framework: Cutkosky, Mehta & Orabona, "Optimal Stochastic Non-smooth Non-convex Optimization
through Online-to-Non-convex Conversion" (ICML 2023, arXiv 2302.03775; "CMO23").

The conversion (paper §2, Prop. 2.1).  An online learner plays directions ``Δ_n`` in the ball
``‖Δ‖ ≤ D``; the optimizer moves ``x_n = x_{n-1} + Δ_n`` and feeds the learner the linear loss
``⟨g_n, ·⟩`` with ``g_n = ∇F(w_n)`` (or a stochastic gradient) queried at the **midpoint**
``w_n = x_{n-1} + Δ_n/2``, so that ``F(x_n) - F(x_{n-1}) = ⟨g_n, Δ_n⟩ + O(L₂‖Δ_n‖³)``.  Iterations
are grouped in episodes of ``T``; low K-shifting regret makes the average gradient of an episode
small, and Hessian-Lipschitzness makes it close to the gradient at the episode average
``w̄ = (1/T) Σ_{n ∈ episode} w_n``.

ODOG, the paper's learner (§3.1, Alg. 1; ``hint="extrapolated"``), is single-projection optimistic
gradient with a *doubly optimistic* hint::

    Δ_{n+1} = Π_D( Δ_n − η·h_{n+1} − η·(g_n − h_n) ),       h_{n+1} = ∇F(z_n),
    z_n = x_n + Δ_n/2  (= x_{n-1} + 1.5·Δ_n, the midpoint of a repeated step).

One iteration ``n``, in this order, costs two gradient queries::

    w_n = x_{n-1} + Δ_n/2;  g_n = ∇F(w_n);  x_n = x_{n-1} + Δ_n;
    z_n = x_n + Δ_n/2;      h_{n+1} = ∇F(z_n);
    Δ_{n+1} = Π_D(Δ_n − η h_{n+1} − η (g_n − h_n)).

Stochastic gradients go through the same code path unchanged (paper Lemma 3.2): whatever the
closure's ``backward`` produces is used at both points.

The baselines the paper contrasts (options of the same class, same skeleton):

* ``hint="previous"`` -- the naive optimistic hint ``h_{n+1} = g_n`` in the same single-projection
  update (paper §3: its hint error does not cancel; ``ε^{-11/6}``).  One query per iteration.
* ``hint="none"`` -- ``h ≡ 0``: plain projected online gradient descent
  ``Δ_{n+1} = Π_D(Δ_n − η g_n)``, CMO23's learner for the stochastic case.  One query.
* ``hint="fixed_point"`` -- CMO23's deterministic double loop: two-projection optimistic OGD
  (optimistic mirror descent) ``Δ_n = Π_D(Δ̂_n − η h_n)``, ``Δ̂_{n+1} = Π_D(Δ̂_n − η g_n)``,
  with the hint solving the fixed point ``h_n = ∇F(x_{n-1} + Π_D(Δ̂_n − η h_n)/2)`` approximately
  by ``inner_steps`` Picard iterations (a contraction for ``η L₁ < 2``) warm-started at
  ``g_{n-1}``.  ``1 + inner_steps`` queries per iteration; CMO23 take ``inner_steps ≈ log(1/ε)``.

Adaptive step (paper §4, Thm 4.2; ``adaptive=True``): within episode ``k``
``η_n = γ·D / sqrt(α + Σ_{i ≤ n, i ∈ episode k} ‖g_i − h_i‖²)``, the sum reset at the start of
every episode.  ``lr`` is then unused.

Readings and choices (the paper's body beyond the introduction could not be retrieved; these are
INFERRED and marked so in the brief):

* Initialisation: ``Δ_0 = 0`` and ``g_0 = h_0 = 0``, and the first update is the general rule
  ``Δ_1 = Π_D(Δ_0 − η h_1 − η(g_0 − h_0)) = Π_D(−η h_1)``.  ODOG's ``h_1 = ∇F(z_0) = ∇F(x_0)``
  costs one extra query in the first ``step`` (``2N + 1`` queries after ``N`` steps); the naive
  and no-hint learners have ``h_1 = 0``, hence ``Δ_1 = 0`` (their first query is at ``x_0``);
  CMO23's fixed point starts from ``h^{(0)} = g_0 = 0`` and ``Δ̂_1 = 0``.
* ``Δ`` is *not* reset at episode boundaries (the K-shifting regret of projected OGD needs no
  restart); only the adaptive accumulator is.
* Adaptive step: ``η_n`` (used for the update that produces ``Δ_{n+1}``) includes the error
  ``‖g_n − h_n‖²`` of the current iteration, which is known at that point; the initial step uses
  the empty sum, ``γD/sqrt(α)``.  Not offered with ``hint="fixed_point"`` (the paper defines it
  for its own learner only).
* Projection onto the ``D``-ball and the adaptive accumulator are taken **per parameter group,
  jointly over all its parameters** (the paper has one vector ``x``; one group = one vector).
* Output (:meth:`O2NC.output`): the **most recent completed episode average** ``w̄``.  CMO23 and
  the paper guarantee the *average over episodes* of ``‖∇F(w̄^k)‖``, so theory returns a uniformly
  random episode; "best episode" would need extra gradient queries at every ``w̄^k``.  The most
  recent one is free and is what a user would keep.  Before the first episode ends, the output is
  the iterate ``x``.  A caller that wants "best" evaluates ``∇F`` at each episode average itself.
* ``step`` returns the closure's loss at the learner's query point ``w_n``.

Gradient queries are counted in state (:attr:`O2NC.grad_calls`), so they survive
``state_dict``.  All groups must share ``hint``, ``inner_steps`` and ``adaptive`` because one
closure call evaluates every group at once.

Reference:
    F. Patitucci, R. Jiang, A. Mokhtari. Improving Online-to-Nonconvex Conversion for Smooth
    Optimization via Double Optimism. ICLR 2026.
    A. Cutkosky, H. Mehta, F. Orabona. Optimal Stochastic Non-smooth Non-convex Optimization
    through Online-to-Non-convex Conversion. ICML 2023.
"""

from __future__ import annotations

import math

import torch

from optzoo.optim.base import ZooOptimizer, check_hyper

__all__ = ["O2NC", "HINTS"]

HINTS = ("extrapolated", "previous", "none", "fixed_point")
# Options that decide how many closure calls a step makes: shared by all groups.
_SHARED = ("hint", "inner_steps", "adaptive")


def _low_precision(t: torch.Tensor) -> bool:
    return t.dtype in (torch.float16, torch.bfloat16)


def _sqnorm(ts: list[torch.Tensor], foreach: bool) -> torch.Tensor:
    """Squared Euclidean norm of the concatenation of ``ts`` (float32 or wider)."""
    ts = [t.float() if _low_precision(t) else t for t in ts]
    norms = torch._foreach_norm(ts) if foreach else [torch.linalg.vector_norm(t) for t in ts]
    return torch.stack(norms).square().sum()


def _project_(ds: list[torch.Tensor], radius: float, foreach: bool) -> None:
    """Π_D: scale the group's direction (all tensors jointly) into the ball of radius D."""
    norm = float(_sqnorm(ds, foreach).sqrt())
    if norm > radius:
        if foreach:
            torch._foreach_mul_(ds, radius / norm)
        else:
            for d in ds:
                d.mul_(radius / norm)


def _combine(a: list[torch.Tensor], b: list[torch.Tensor], alpha: float,
             foreach: bool) -> list[torch.Tensor]:
    """``a + alpha·b`` as new tensors."""
    if foreach:
        return list(torch._foreach_add(a, b, alpha=alpha))
    return [x.add(y, alpha=alpha) for x, y in zip(a, b, strict=True)]


def _add_(a: list[torch.Tensor], b: list[torch.Tensor], alpha: float, foreach: bool) -> None:
    if foreach:
        torch._foreach_add_(a, b, alpha=alpha)
    else:
        for x, y in zip(a, b, strict=True):
            x.add_(y, alpha=alpha)


class O2NC(ZooOptimizer):
    """O2NC with a projected optimistic online learner; ``hint="extrapolated"`` is ODOG.

    ``step(closure)`` needs a closure that zeroes the gradients, evaluates the loss and calls
    ``backward``: the optimizer moves the parameters to each query point (``w_n``, and ``z_n``
    for ODOG), calls the closure, reads ``p.grad``, and leaves the parameters at the iterate
    ``x_n``.  The point to report is :meth:`output` (the last completed episode average).

    Args:
        params: parameters or parameter groups.  Each group is one vector for the projection.
        lr: the online learner's step ``η`` (theory: ``η ≲ 0.63/L₁``; ignored when adaptive).
        D: radius of the ball the directions ``Δ_n`` live in (the largest move per iteration).
        T: episode length (iterations averaged into one output candidate).
        hint: ``"extrapolated"`` (ODOG), ``"previous"`` (naive ``h_{n+1} = g_n``), ``"none"``
            (plain projected OGD) or ``"fixed_point"`` (CMO23 double loop).
        inner_steps: fixed-point iterations per step for ``hint="fixed_point"``.
        adaptive: use the paper's §4 step ``γD/sqrt(α + Σ_episode ‖g_i − h_i‖²)``.
        gamma: ``γ`` of the adaptive step.
        alpha: ``α > 0`` of the adaptive step.
        maximize: maximize the objective instead.
        foreach: use the ``torch._foreach_*`` multi-tensor path (default: on CUDA).

    Example:
        >>> import torch
        >>> from optzoo.optim import O2NC
        >>> w = torch.nn.Parameter(torch.tensor([3.0, -2.0]))
        >>> opt = O2NC([w], lr=0.5, D=0.2, T=10)
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = (w ** 2).sum()
        ...     loss.backward()
        ...     return loss
        >>> for _ in range(200):
        ...     _ = opt.step(closure)
        >>> opt.grad_calls
        401
    """

    def __init__(self, params, lr: float = 0.1, D: float = 0.1, T: int = 10,
                 hint: str = "extrapolated", inner_steps: int = 3, adaptive: bool = False,
                 gamma: float = 1.0, alpha: float = 1e-8, *, maximize: bool = False,
                 foreach: bool | None = None):
        defaults = dict(lr=lr, D=D, T=T, hint=hint, inner_steps=inner_steps, adaptive=adaptive,
                        gamma=gamma, alpha=alpha, maximize=maximize, foreach=foreach)
        super().__init__(params, defaults)

    def add_param_group(self, param_group: dict) -> None:
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        check_hyper("lr", group["lr"], low=0.0, low_open=True)
        check_hyper("D", group["D"], low=0.0, low_open=True)
        check_hyper("gamma", group["gamma"], low=0.0, low_open=True)
        check_hyper("alpha", group["alpha"], low=0.0, low_open=True)
        for name, low in (("T", 1), ("inner_steps", 0)):
            v = group[name]
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise ValueError(f"{name}: expected an integer >= {low}, got {v!r}")
        if group["hint"] not in HINTS:
            raise ValueError(f"hint: expected one of {HINTS}, got {group['hint']!r}")
        if not isinstance(group["adaptive"], bool):
            raise ValueError(f"adaptive: expected a bool, got {group['adaptive']!r}")
        if group["adaptive"] and group["hint"] == "fixed_point":
            raise ValueError("adaptive: the §4 adaptive step is defined for the single-projection "
                             "learner; it is not available with hint='fixed_point'")
        first = self.param_groups[0]
        for name in _SHARED:
            if group[name] != first[name]:
                raise ValueError(f"{name}: all parameter groups must share it (one closure call "
                                 f"serves every group); got {group[name]!r} and {first[name]!r}")

    # -- bookkeeping ----------------------------------------------------------------------
    def _gstate(self, group: dict) -> dict:
        """Per-group scalars live in the state of the group's first parameter (as in LBFGS)."""
        return self.state[group["params"][0]]

    @property
    def grad_calls(self) -> int:
        """Gradient queries (closure calls) made so far; saved in ``state_dict``."""
        if not self.param_groups or not self.param_groups[0]["params"]:
            return 0
        st = self.state.get(self.param_groups[0]["params"][0], {})
        return int(st.get("grad_calls", 0))

    def output(self) -> dict[torch.Tensor, torch.Tensor]:
        """The most recent completed episode average ``w̄`` (the iterate before the first)."""
        out = {}
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state.get(p, {})
                out[p] = st["episode_average"] if "episode_average" in st else p.detach()
        return out

    def _step_size(self, group: dict) -> float:
        if group["adaptive"]:
            return group["gamma"] * group["D"] / math.sqrt(group["alpha"]
                                                           + self._gstate(group)["acc"])
        return float(group["lr"])

    def _read_grads(self, group: dict) -> list[torch.Tensor]:
        """The group's gradients aligned with its parameters (a missing gradient counts as 0),
        copied so that an in-place ``zero_grad`` in the next closure call cannot change them."""
        self._grads(group)  # raises on sparse gradients
        sign = -1.0 if group["maximize"] else 1.0
        return [torch.zeros_like(p) if p.grad is None
                else (p.grad.neg() if sign < 0 else p.grad.clone()) for p in group["params"]]

    def _query(self, closure, points: list[list[torch.Tensor]]):
        """Load ``points`` into the parameters, call the closure, return (loss, gradients)."""
        self._load(self.param_groups, points)
        with torch.enable_grad():
            loss = closure()
        grads = [self._read_grads(group) for group in self.param_groups]
        for group in self.param_groups:
            self._gstate(group)["grad_calls"] += 1
        return loss, grads

    def _init_state(self, group: dict) -> bool:
        """Create the state of a new group; return whether it was new."""
        ps = group["params"]
        if "delta" in self.state[ps[0]]:
            return False
        for p in ps:
            st = self.state[p]
            st["delta"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            st["hint"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            st["episode_sum"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            if group["hint"] == "fixed_point":
                st["delta_hat"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        self._gstate(group).update(step=0, episode_step=0, episodes=0, acc=0.0, grad_calls=0)
        return True

    def _field(self, group: dict, key: str) -> list[torch.Tensor]:
        return [self.state[p][key] for p in group["params"]]

    # -- the iteration --------------------------------------------------------------------
    @torch.no_grad()
    def step(self, closure=None):
        """One O2NC iteration (see the module docstring); returns the loss at ``w_n``."""
        if closure is None:
            raise RuntimeError(
                f"{type(self).__name__}.step requires a closure (zero_grad, loss, backward): "
                "each step queries gradients at points the optimizer moves the parameters to")
        groups = self.param_groups
        fresh = [self._init_state(g) for g in groups]
        fe = [self._use_foreach(g, g["params"]) for g in groups]
        xs = [[p.detach().clone() for p in g["params"]] for g in groups]  # x_{n-1}
        hint = groups[0]["hint"]

        if hint == "extrapolated" and any(fresh):
            # h_1 = ∇F(z_0) with Δ_0 = 0, i.e. the gradient at x_0; then Δ_1 = Π_D(−η h_1).
            _, h1 = self._query(closure, xs)
            for g, new, h, f in zip(groups, fresh, h1, fe, strict=True):
                if new:
                    _add_(self._field(g, "hint"), h, 1.0, f)
                    deltas = self._field(g, "delta")
                    _add_(deltas, h, -self._step_size(g), f)
                    _project_(deltas, g["D"], f)

        if hint == "fixed_point":
            loss, ws, grads = self._fixed_point_iteration(closure, groups, xs, fe)
        else:
            loss, ws, grads = self._optimistic_iteration(closure, groups, xs, fe)

        for g, w, f in zip(groups, ws, fe, strict=True):
            gs = self._gstate(g)
            _add_(self._field(g, "episode_sum"), w, 1.0, f)
            gs["step"] += 1
            gs["episode_step"] += 1
            if gs["episode_step"] == g["T"]:
                for p in g["params"]:
                    st = self.state[p]
                    st["episode_average"] = st["episode_sum"] / g["T"]
                    st["episode_sum"].zero_()
                gs["episode_step"] = 0
                gs["episodes"] += 1
                gs["acc"] = 0.0
        del grads
        return loss

    def _optimistic_iteration(self, closure, groups, xs, fe):
        """Single-projection optimistic gradient (ODOG / naive hint / plain OGD)."""
        hint = groups[0]["hint"]
        deltas = [self._field(g, "delta") for g in groups]
        ws = [_combine(x, d, 0.5, f) for x, d, f in zip(xs, deltas, fe, strict=True)]
        loss, grads = self._query(closure, ws)                         # g_n at w_n
        x_new = [_combine(x, d, 1.0, f) for x, d, f in zip(xs, deltas, fe, strict=True)]
        if hint == "extrapolated":
            zs = [_combine(x, d, 0.5, f) for x, d, f in zip(x_new, deltas, fe, strict=True)]
            _, next_hints = self._query(closure, zs)                   # h_{n+1} at z_n
        elif hint == "previous":
            next_hints = grads
        else:
            next_hints = [[torch.zeros_like(t) for t in gr] for gr in grads]
        for g, d, gr, nh, f in zip(groups, deltas, grads, next_hints, fe, strict=True):
            old = self._field(g, "hint")
            if g["adaptive"]:
                err = _combine(gr, old, -1.0, f)
                self._gstate(g)["acc"] += float(_sqnorm(err, f))
            eta = self._step_size(g)
            _add_(d, nh, -eta, f)
            _add_(d, gr, -eta, f)
            _add_(d, old, eta, f)
            _project_(d, g["D"], f)
            for h, v in zip(old, nh, strict=True):
                h.copy_(v)
        self._load(groups, x_new)
        return loss, ws, grads

    def _fixed_point_iteration(self, closure, groups, xs, fe):
        """CMO23's double loop: optimistic mirror descent whose hint solves a fixed point."""
        hats = [self._field(g, "delta_hat") for g in groups]
        hints = [[h.clone() for h in self._field(g, "hint")] for g in groups]  # h^(0) = g_{n-1}

        def play(hs):
            out = []
            for g, hat, h, f in zip(groups, hats, hs, fe, strict=True):
                d = _combine(hat, h, -self._step_size(g), f)
                _project_(d, g["D"], f)
                out.append(d)
            return out

        for _ in range(groups[0]["inner_steps"]):
            ds = play(hints)
            _, hints = self._query(
                closure, [_combine(x, d, 0.5, f) for x, d, f in zip(xs, ds, fe, strict=True)])
        deltas = play(hints)
        ws = [_combine(x, d, 0.5, f) for x, d, f in zip(xs, deltas, fe, strict=True)]
        loss, grads = self._query(closure, ws)                         # g_n at w_n
        for g, hat, d, gr, f in zip(groups, hats, deltas, grads, fe, strict=True):
            _add_(hat, gr, -self._step_size(g), f)
            _project_(hat, g["D"], f)
            for dst, v in zip(self._field(g, "delta"), d, strict=True):
                dst.copy_(v)
            for dst, v in zip(self._field(g, "hint"), gr, strict=True):
                dst.copy_(v)                                            # warm start h^(0)
        self._load(groups, [_combine(x, d, 1.0, f)
                            for x, d, f in zip(xs, deltas, fe, strict=True)])
        return loss, ws, grads

    @staticmethod
    def _load(groups, points) -> None:
        for g, pts in zip(groups, points, strict=True):
            for p, v in zip(g["params"], pts, strict=True):
                p.copy_(v)
