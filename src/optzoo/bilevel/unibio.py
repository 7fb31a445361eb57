"""UniBiO — Wu, Gong, Hao & Liu, "Bilevel Optimization with Lower-Level Uniform Convexity: Theory
and Algorithm", ICLR 2026 (OpenReview dJgb3ngAvT, arXiv 2603.00027).

Setting: ``min_x Φ(x) = f(x, y*(x))`` with a lower level g(x, ·) *uniformly convex of order p*
(``g(y') ≥ g(y) + ⟨∇g(y), y'−y⟩ + (μ/p)‖y'−y‖^p``; p = 2 is strong convexity), whose Hessian may
be singular at y*.  The paper's Theorem 4.1 writes the hyper-gradient with the *generalized
Hessian* — the derivative of ∇_y g with respect to the elementwise power [y]^{∘(p−1)}::

    ∇Φ = ∇_x f − ∇²_xy g · (D⁻¹∇²_yy g)⁻¹ · D⁻¹∇_y f,     D = diag((p−1)|y|^{p−2}),

(D⁻¹∇²_yy g is the transpose of d∇_y g/d[y]^{∘(p−1)}; the expression equals the usual implicit
formula whenever the Hessian is invertible, and D = I at p = 2).

Algorithm (paper Alg. 2, BO-REP skeleton; :class:`UniBiO`)::

    every I outer steps (t = 0 included: the warm start)   y ← EpochSGD(g(x_t, ·), from y)
    ĝ_t = ∇_x f − ∇²_xy g · v,   v = η_N Σ_{q=0}^{Q} (I − η_N D⁻¹∇²_yy g)^q D⁻¹∇_y f    (Q HVPs)
    m_t = β m_{t−1} + (1 − β) ĝ_t,      x_{t+1} = x_t − η m_t / ‖m_t‖

Epoch-SGD with shrinking ball (paper Alg. 1; :func:`epoch_sgd`): epoch k runs T_k projected SGD
steps with step γ_k inside the ball of radius D_k around the epoch's start and restarts from the
epoch's average; T_{k+1} = 2^{2(p−1)/p} T_k, D_{k+1} = D_k / 2^{1/p}, γ_{k+1} = γ_k / 2, while the
cumulative steps stay within the budget K; the output is the last epoch's average.

Reading of the official code (``MingruiLiu-ML-Lab/bilevel-optimization-lower-level-uniform-
convexity``: ``synthetic_exp.py``, ``methods/unibio.py``, ``main.py``; read, not copied):

* Defaults.  Synthetic script: K = 100, T1 = 5, D1 = 1, γ1 = 1, I = 2, β = 0.9, η per p
  {2: 0.05, 4: 0.03, 6: 0.02, 8: 0.01}, T = 500; hyper-cleaning: η = 5e-2, lower SGD step 2e-2,
  β = 0.9, I = 2, η_N = 1e-2, Q = 3, 3 plain SGD steps per refresh.  These are our defaults
  (η_N = 1e-2, Q = 3 and the Epoch-SGD constants).
* Epoch-SGD schedule: T_k = int(T1·2^{τ(k−1)}), D_k = D1/2^{(k−1)/p}, γ_k = γ1/2^{k−1}, epochs run
  while Σ_{i<k} T1·2^{τi} ≤ K (and k < 50): with K = 100, T1 = 5, p = 2 that is 5+10+20+40 = 75
  steps.  The script restarts every refresh from a fresh N(0, 1) point; we warm-start at the
  current y as the paper's Alg. 2 (and the brief) describe.
* Estimator: the code forms ``v_q = ∇_y⟨y − η_N ∇_y g / D, v_{q−1}⟩`` with D detached, i.e.
  ``v_q = (I − η_N ∇²g D⁻¹) v_{q−1}`` — the transpose of the generalized Hessian, which equals
  ours only when D and ∇²g commute (diagonal Hessians: both synthetic problems).  We apply
  ``(I − η_N D⁻¹∇²g)``, the operator whose inverse gives ∇Φ exactly (the reference test checks
  it on a non-diagonal problem).  The code sums v_1..v_Q, dropping the identity term (a bias
  of −η_N D⁻¹∇_y f); we keep it, as stocBiO's Neumann series does, with the same Q HVPs.
  D = (p−1)|y|^{p−2} has no floor in the code (it divides by zero at y = 0, and uses
  ``param.pow(p−2)`` without |·|): we use |y| and floor D at δ = ``floor`` (1e-6 by default,
  the brief), absolute or, with ``relative_floor``, a fraction of max_i D_i.  δ is a real
  choice, not a technicality: D⁻¹ multiplies the noise of ∇_y f and of every HVP by up to 1/δ
  (the reproduction reports the sensitivity).
  Each HVP uses a fresh lower minibatch (as in stocBiO; the code reuses one), the cross term a
  training minibatch (the code takes it on a validation batch indexed by validation indices —
  the brief's suspected bug).
* Normalization: ``x −= η m/(‖m‖ + ε)`` with ε = 1e-8 (script; the network code uses 1e-10).
  η is constant in the paper and its code; ``schedule="inv_sqrt"`` (η_t = η/√(1 + t)) is an
  addition of ours for noisy oracles, off by default.
  The synthetic script plugs in the *closed-form* ∇Φ plus N(0, 0.01²); here every estimate goes
  through the oracle (∇f, HVPs, cross product).
"""

from __future__ import annotations

import math

import torch

from optzoo.bilevel.base import BilevelSolver, check_positive
from optzoo.bilevel.problem import Oracle

__all__ = ["UniBiO", "epoch_sgd", "epoch_sgd_schedule", "generalized_hypergradient",
           "project_ball"]


def project_ball(w: torch.Tensor, center: torch.Tensor, radius: float) -> torch.Tensor:
    """Euclidean projection of ``w`` onto the ball of ``radius`` around ``center``."""
    diff = w - center
    # torch.linalg.vector_norm is what Tensor.norm() calls, without its Python dispatch (this
    # runs once per Epoch-SGD step)
    norm = float(torch.linalg.vector_norm(diff))
    return w if norm <= radius else center + diff * (radius / norm)


def epoch_sgd_schedule(budget: int, *, first_epoch: int = 5, radius: float = 1.0,
                       lr: float = 1.0, p: float = 2.0,
                       max_epochs: int = 50) -> list[tuple[int, float, float]]:
    """``[(T_k, D_k, γ_k), ...]`` of Epoch-SGD (paper Alg. 1, the code's loop condition):
    epochs run while their cumulative nominal length ``Σ_{i<k} T1·2^{τi}`` (τ = 2(p−1)/p) is
    ≤ ``budget``."""
    check_positive("budget", budget, integer=True, allow_zero=True)
    check_positive("first_epoch", first_epoch, integer=True)
    check_positive("radius", radius)
    check_positive("lr", lr)
    _check_order(p)
    tau = 2.0 * (p - 1.0) / p
    out: list[tuple[int, float, float]] = []
    spent = 0.0
    for k in range(max_epochs):
        nominal = first_epoch * 2.0 ** (tau * k)
        if spent + nominal > budget:
            break
        spent += nominal
        out.append((int(nominal), radius / 2.0 ** (k / p), lr / 2.0 ** k))
    return out


def epoch_sgd(oracle: Oracle, x: torch.Tensor, y: torch.Tensor, *, budget: int = 100,
              first_epoch: int = 5, radius: float = 1.0, lr: float = 1.0,
              p: float = 2.0) -> torch.Tensor:
    """Epoch-SGD with shrinking ball on ``g(x, ·)`` from ``y`` (paper Alg. 1): projected SGD in
    each epoch's ball, restart from the epoch average; returns the last average (``y`` itself
    when the budget holds no epoch)."""
    start = y.detach().clone()
    for steps, rad, step in epoch_sgd_schedule(budget, first_epoch=first_epoch, radius=radius,
                                               lr=lr, p=p):
        w, total = start.clone(), torch.zeros_like(start)
        for _ in range(steps):
            grad = oracle.grad_g_y(x, w, oracle.sample("lower"))
            w = project_ball(w - step * grad, start, rad)
            total += w
        start = total / steps
    return start


def _check_order(p) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 2 <= p < math.inf:
        raise ValueError(f"p: expected a uniform-convexity order >= 2, got {p!r}")
    return float(p)


def generalized_preconditioner(y: torch.Tensor, p: float, floor: float,
                               relative: bool = False) -> torch.Tensor:
    """``D = max((p−1)|y|^{p−2}, δ)`` = d[y]^{∘(p−1)}/dy, floored so that D⁻¹ stays finite at
    y = 0 (ones at p = 2).

    ``δ = floor`` (absolute) or, with ``relative``, ``δ = floor · max_i (p−1)|y_i|^{p−2}`` (a
    fraction of the largest entry, so the floor scales with y; an all-zero y gets D = floor).
    The floor bounds how much D⁻¹ amplifies the oracle noise of ∇_y f and of the HVPs: at
    δ = 1e-6 a coordinate near y = 0 multiplies its noise by up to 10⁶.
    """
    if p == 2.0:
        return torch.ones_like(y)
    d = (p - 1.0) * y.abs() ** (p - 2.0)
    if relative:
        top = float(d.max()) if d.numel() else 0.0
        return d.clamp_min(floor * top if top > 0.0 else floor)
    return d.clamp_min(floor)


def generalized_hypergradient(oracle: Oracle, x: torch.Tensor, y: torch.Tensor, *, p: float,
                              neumann_eta: float = 1e-2, terms: int = 3,
                              floor: float = 1e-6, relative_floor: bool = False
                              ) -> torch.Tensor:
    """UniBiO's hyper-gradient estimate ``∇_x f − ∇²_xy g · v`` with
    ``v = η_N Σ_{q=0}^{Q} (I − η_N D⁻¹∇²_yy g)^q D⁻¹∇_y f`` (Q = ``terms`` HVPs, each on a fresh
    lower minibatch; one ∇f call, one cross product); ``floor`` and ``relative_floor`` as in
    :func:`generalized_preconditioner`."""
    o = oracle
    fx, fy = o.grad_f(x, y, o.sample("upper"))
    d = generalized_preconditioner(y, p, floor, relative_floor)
    term = fy / d
    total = term.clone()
    for _ in range(terms):
        term = term - neumann_eta * o.hvp(x, y, term, o.sample("lower")) / d
        total = total + term
    return fx - o.cross(x, y, neumann_eta * total, o.sample("lower"))


class UniBiO(BilevelSolver):
    """UniBiO (paper Alg. 2): periodic lower refresh, generalized-Hessian Neumann estimator,
    normalized momentum.

    Args:
        oracle: the problem's counted oracle.
        p: uniform-convexity order of the lower level (sets D and the Epoch-SGD schedule).
        lr: η, the length of every upper step.
        beta: β, momentum of the hyper-gradient estimates.
        refresh_every: I, outer steps between lower refreshes (a refresh at step 0 too).
        lower: ``"epoch_sgd"`` (paper Alg. 1) or ``"sgd"`` (``lower_steps`` plain SGD steps
            with ``inner_lr``: the hyper-cleaning script).
        lower_budget: K, Epoch-SGD steps budget per refresh.
        first_epoch: T1, length of the first Epoch-SGD epoch.
        radius: D1, radius of the first Epoch-SGD ball.
        inner_lr: γ1 of Epoch-SGD, or the plain SGD step.
        lower_steps: plain SGD steps per refresh (``lower="sgd"``).
        neumann_eta: η_N of the Neumann series.
        terms: Q, HVPs of the Neumann series.
        floor: lower bound δ of the preconditioner D (absolute, or relative to D's largest
            entry with ``relative_floor``); the paper and its code have none (the code divides
            by zero at y = 0), 1e-6 is the brief's.
        relative_floor: read ``floor`` as a fraction of max_i D_i.
        schedule: ``"constant"`` (the paper's fixed η) or ``"inv_sqrt"`` (η_t = η/√(1 + t),
            t the outer step: not in the paper, an arm for noisy oracles where a constant
            normalized step hovers at a floor of order η).
        eps: ε of the normalization ``m/(‖m‖ + ε)``.
        x0, y0: starting points (default: the problem's).

    Example:
        A lower level that is uniformly convex of order p = 4 (not strongly convex):

        >>> from optzoo.bilevel import Oracle, UniBiO
        >>> from optzoo.bilevel.problems.uniformly_convex import UniformlyConvexSynthetic
        >>> problem = UniformlyConvexSynthetic(4.0, dim=6, zeros=1, seed=0)
        >>> solver = UniBiO(Oracle(problem), p=4.0, lr=0.05, neumann_eta=0.5, terms=5,
        ...                 lower_budget=50)
        >>> history = solver.run(steps=50, every=10,
        ...     callback=lambda s: {"grad": float(problem.hypergradient(s.x).norm())})
        >>> [round(r["grad"], 1) for r in history]  # ‖∇Φ(x_t)‖ every 10 outer steps
        [1.2, 0.8, 0.5, 0.2, 0.2, 0.2]
    """

    def __init__(self, oracle: Oracle, *, p: float = 2.0, lr: float = 0.05, beta: float = 0.9,
                 refresh_every: int = 2, lower: str = "epoch_sgd", lower_budget: int = 100,
                 first_epoch: int = 5, radius: float = 1.0, inner_lr: float = 1.0,
                 lower_steps: int = 3, neumann_eta: float = 1e-2, terms: int = 3,
                 floor: float = 1e-6, relative_floor: bool = False,
                 schedule: str = "constant", eps: float = 1e-8, x0: torch.Tensor | None = None,
                 y0: torch.Tensor | None = None) -> None:
        super().__init__(oracle, x0, y0)
        self.p = _check_order(p)
        self.lr = check_positive("lr", lr)
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not 0 <= beta < 1:
            raise ValueError(f"beta: expected a momentum in [0, 1), got {beta!r}")
        self.beta = float(beta)
        self.refresh_every = check_positive("refresh_every", refresh_every, integer=True)
        if lower not in ("epoch_sgd", "sgd"):
            raise ValueError(f"lower: expected 'epoch_sgd' or 'sgd', got {lower!r}")
        self.lower = lower
        self.lower_budget = check_positive("lower_budget", lower_budget, integer=True)
        self.first_epoch = check_positive("first_epoch", first_epoch, integer=True)
        self.radius = check_positive("radius", radius)
        self.inner_lr = check_positive("inner_lr", inner_lr)
        self.lower_steps = check_positive("lower_steps", lower_steps, integer=True)
        self.neumann_eta = check_positive("neumann_eta", neumann_eta)
        self.terms = check_positive("terms", terms, integer=True, allow_zero=True)
        self.floor = check_positive("floor", floor)
        if not isinstance(relative_floor, bool):
            raise ValueError(f"relative_floor: expected a bool, got {relative_floor!r}")
        if relative_floor and not self.floor <= 1.0:
            raise ValueError(f"floor: expected a fraction <= 1 with relative_floor, got {floor!r}")
        self.relative_floor = relative_floor
        if schedule not in ("constant", "inv_sqrt"):
            raise ValueError(f"schedule: expected 'constant' or 'inv_sqrt', got {schedule!r}")
        self.schedule = schedule
        self.eps = check_positive("eps", eps, allow_zero=True)
        self.m = torch.zeros_like(self.x)
        self.estimate: torch.Tensor | None = None  # ĝ_t of the last step (the script plots it)

    def refresh(self) -> None:
        """Re-solve the lower problem at the current x, warm-started at the current y."""
        o = self.oracle
        if self.lower == "epoch_sgd":
            self.y = epoch_sgd(o, self.x, self.y, budget=self.lower_budget,
                               first_epoch=self.first_epoch, radius=self.radius,
                               lr=self.inner_lr, p=self.p)
        else:
            for _ in range(self.lower_steps):
                self.y = self.y - self.inner_lr * o.grad_g_y(self.x, self.y, o.sample("lower"))

    def hypergradient(self) -> torch.Tensor:
        """The stochastic hyper-gradient estimate at the current (x, y)."""
        return generalized_hypergradient(self.oracle, self.x, self.y, p=self.p,
                                         neumann_eta=self.neumann_eta, terms=self.terms,
                                         floor=self.floor, relative_floor=self.relative_floor)

    def step(self) -> None:
        if self.steps % self.refresh_every == 0:
            self.refresh()
        self.estimate = self.hypergradient()
        self.m = self.beta * self.m + (1.0 - self.beta) * self.estimate
        norm = float(torch.linalg.vector_norm(self.m))  # Tensor.norm() minus its dispatch
        self.x = self.x - self.step_length() * self.m / (norm + self.eps)

    def step_length(self) -> float:
        """η_t of the current outer step t (``self.steps``): η, or η/√(1 + t)."""
        if self.schedule == "constant":
            return self.lr
        return self.lr / math.sqrt(1.0 + self.steps)
