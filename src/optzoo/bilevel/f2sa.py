"""F²SA-p: Chen, Li, Chayti & Zhang, "Faster Gradient Methods for Highly-Smooth Stochastic
Bilevel Optimization" (ICLR 2026, OpenReview XIAta0WOJ6, arXiv 2509.02937), Algorithm 1 —
and F²SA (Kwon et al., "A Fully First-Order Method for Stochastic Bilevel Optimization",
ICML 2023), which is its p = 1 member.

Reformulation (paper §3.1, Eqs. 8–9).  For a scalar ν let ``ℓ(x, ν) = min_y νf(x, y) + g(x, y)``
with minimiser ``y_ν(x)`` (strongly convex for |ν| < μ/L_f, negative ν allowed).  By Danskin,
``∇_x ℓ(x, ν) = ν∇_x f(x, y_ν) + ∇_x g(x, y_ν)`` and ``∂_ν ∇_x ℓ(x, 0) = ∇Φ(x)``.  F²SA-p
estimates that ν-derivative with a p-th order finite difference (Lemma 3.1)::

    ĝ_p(x) = (1/ν) Σ_j a_j [ jν ∇_x f(x, y_j) + ∇_x g(x, y_j) ],   y_j = argmin_y jν f + g,

whose error is O(ν^p) when the y-derivatives of f and g are Lipschitz up to order p + 1
(Assumption 2.5).  The weights solve ``Σ_j a_j j^k = δ_{k1}``, k = 0 … #nodes − 1, exactly
(rational arithmetic, :func:`finite_difference_stencil`) on the node sets of the official code:

* even p: j = ±1, …, ±p/2 (node 0 would get weight 0, so p lower problems; a_{−j} = −a_j);
* odd p: j = −(p−1)/2, …, (p+1)/2, node 0 included (p + 1 lower problems).

p = 1 gives a_0 = −1, a_1 = 1, i.e. ``∇_x f(x, y_λ) + λ(∇_x g(x, y_λ) − ∇_x g(x, y*))`` with
λ = 1/ν — Kwon et al.'s F²SA estimator.

One outer iteration of :class:`F2SA` (Alg. 1):

1. every node's y_j takes K SGD steps on ``jν∇_y F(x, y_j; ξ) + ∇_y G(x, y_j; ζ)``,
   warm-started from its previous value (option ``average_warm_start``: the official code's
   "useful trick" — all positive nodes restart from their common average, and likewise the
   non-positive ones);
2. ``Φ_t = Σ_j a_j [ j∇_x F(x, y_j; ξ) + ∇_x G(x, y_j; ζ)/ν ]``;
3. ``x ← x − η Φ_t/‖Φ_t‖`` (Alg. 1 line 14; ``normalized=False`` gives the plain step the
   paper's Remark 3.1 says also works).

Readings and choices (checked against ``TrueNobility303/F2BA``, ``medium_sized/l2reg.py``,
functions ``F2SA_p`` and ``compute_high_order_diff``):

* Node sets and weights are the code's: p = 2: a_{±1} = ±½; p = 3: a_{−1..2} = (−⅓, −½, 1, −⅙);
  p = 5: a_{−2..3} = (1/20, −½, −⅓, 1, −¼, 1/30); p = 8, 10 the central stencils.  The paper
  writes the range as j = −p/2 … p/2; for odd p we follow the code (one more node on the
  positive side).  p = 4 (not in the code's list) is the 4-node central stencil (⅔, −1/12).
  Any p ≥ 1 is accepted.
* Hyper-gradient minibatches: ``shared_batches=True`` (default) draws one upper and one lower
  minibatch and uses them at every node, as Alg. 1 line 13 is written (common random numbers:
  the differences cancel sampling noise); ``False`` draws an independent pair per node, as
  the code does.  With a problem whose oracle noise is the Oracle's additive Gaussian noise
  (no data), every call gets fresh noise either way, so the flag matters only for data
  problems (:class:`~optzoo.bilevel.problems.smooth_strongly_convex.FiniteSumSmoothStronglyConvex`
  is the finite-sum problem on which the tests and the reproduction measure it).
  Inner SGD minibatches are independent per node and per step in both modes (the
  code does this; Alg. 1 does not ask for sharing there).
* The code's F2SA_p computes only the ``∇_x g`` terms because its upper objective does not
  depend on the hyper-parameters; ``upper_x_grad=False`` does the same and skips those oracle
  calls (the brief's pitfall "only the ∇_x g terms remain").  With the default ``True`` the
  ``j∇_x F`` terms are queried at every node j ≠ 0.
* ``∇_y F`` is not queried at node 0 (its factor jν is 0), so a node-0 SGD step costs one
  oracle call and any other node's step two — every call goes through the counted
  :class:`~optzoo.bilevel.Oracle`.
* The normalised step divides by ‖Φ_t‖ exactly (no ε: a zero estimate leaves x unchanged);
  the code adds 1e-6 to the norm.
* The reported lower iterate (``self.y``) is the one of the largest positive node, where the
  code evaluates its test metrics.
* The official F2SA baseline in the same file evaluates ``g_x`` of the penalised iterate at
  the other iterate (``g_x(xhat, ...)``); our F²SA is F²SA-p with p = 1, which evaluates every
  node's terms at its own y_j (the brief's pitfall).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import torch

from optzoo.bilevel.base import BilevelSolver, check_positive
from optzoo.bilevel.problem import BilevelProblem, Oracle

__all__ = ["F2SA", "f2sa_nodes", "finite_difference_stencil", "f2sa_estimate",
           "penalized_solution", "exact_f2sa_estimate"]


def f2sa_nodes(p: int) -> tuple[int, ...]:
    """The nodes j of F²SA-p: ±1 … ±p/2 for even p, −(p−1)/2 … (p+1)/2 for odd p (sorted)."""
    check_positive("p", p, integer=True)
    if p % 2 == 0:
        return tuple(range(-(p // 2), 0)) + tuple(range(1, p // 2 + 1))
    return tuple(range(-(p - 1) // 2, (p + 1) // 2 + 1))


def finite_difference_stencil(p: int) -> tuple[tuple[int, ...], tuple[Fraction, ...]]:
    """Nodes and exact weights a_j with ``Σ_j a_j j^k = δ_{k1}`` for k = 0 … #nodes − 1.

    Solved by Gauss–Jordan elimination over the rationals (the Vandermonde system is
    ill-conditioned in floating point for p ≳ 8).  The first derivative of a smooth h is then
    ``Σ_j a_j h(jν)/ν + O(ν^p)``: for odd p the p + 1 moments fix the order; for even p the
    antisymmetric solution also cancels the k = p moment.
    """
    nodes = f2sa_nodes(p)
    n = len(nodes)
    rows = [[Fraction(j) ** k for j in nodes] + [Fraction(int(k == 1))] for k in range(n)]
    for col in range(n):
        pivot = next(r for r in range(col, n) if rows[r][col] != 0)
        rows[col], rows[pivot] = rows[pivot], rows[col]
        piv = rows[col][col]
        rows[col] = [v / piv for v in rows[col]]
        for r in range(n):
            if r != col and rows[r][col] != 0:
                factor = rows[r][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col], strict=True)]
    return nodes, tuple(rows[k][n] for k in range(n))


def f2sa_estimate(nu: float, nodes: Sequence[int], coefs: Sequence[float],
                  grads_x_f: Sequence[torch.Tensor | None],
                  grads_x_g: Sequence[torch.Tensor]) -> torch.Tensor:
    """The F²SA-p hyper-gradient ``Σ_j a_j [ j ∇_x f_j + ∇_x g_j / ν ]`` from per-node
    gradients taken at the node solutions y_j (Alg. 1 line 13).

    Args:
        nu: ν (> 0).
        nodes, coefs: the stencil (:func:`finite_difference_stencil`).
        grads_x_f: ``∇_x f(x, y_j)`` per node (``None`` = zero, e.g. at node 0 or when f does
            not depend on x).
        grads_x_g: ``∇_x g(x, y_j)`` per node.
    """
    check_positive("nu", nu)
    if not len(nodes) == len(coefs) == len(grads_x_f) == len(grads_x_g):
        raise ValueError(f"nodes, coefs, grads_x_f, grads_x_g: expected equal lengths, got "
                         f"{len(nodes)}, {len(coefs)}, {len(grads_x_f)}, {len(grads_x_g)}")
    out = torch.zeros_like(grads_x_g[0])
    for j, a, fx, gx in zip(nodes, coefs, grads_x_f, grads_x_g, strict=True):
        term = gx / nu
        if fx is not None and j != 0:
            term = term + j * fx
        out = out + float(a) * term
    return out


def penalized_solution(problem: BilevelProblem, x: torch.Tensor, weight: float,
                       y_init: torch.Tensor | None = None, *, max_iter: int = 60
                       ) -> torch.Tensor:
    """``argmin_y weight·f(x, y) + g(x, y)`` (full batch) by damped Newton with the dense
    Hessian, iterated to machine precision (the bias test divides its error by ν).

    The generic reference for F²SA-p's node problems (``weight = jν``); for ``weight = 0`` it
    is the problem's own ``lower_solution``.  :func:`exact_f2sa_estimate` prefers a problem's
    closed-form ``penalized_solution(x, weight)`` method when it has one.
    """
    x = x.detach()
    if weight == 0.0:
        return problem.lower_solution(x, y_init)

    def h(yy):
        return weight * problem.f(x, yy) + problem.g(x, yy)

    grad_h = torch.func.grad(h)
    y = (problem.lower_solution(x) if y_init is None else y_init).detach().clone()
    grad = grad_h(y)
    for _ in range(max_iter):
        norm = float(grad.norm())
        if norm == 0.0:
            break
        step = torch.linalg.solve(torch.func.hessian(h)(y), grad)
        value, t = float(h(y)), 1.0
        while t > 1e-8:
            cand = (y - t * step).detach()
            g_cand = grad_h(cand)
            # backtracking (weight < 0 makes h less convex than g); near the solution the
            # decrease of h drops below round-off, so a smaller gradient also counts
            if float(h(cand)) <= value or float(g_cand.norm()) < norm:
                break
            t *= 0.5
        else:
            break  # machine precision reached: no step improves
        y, grad = cand, g_cand
        if t * float(step.norm()) <= 1e-15 * (1.0 + float(y.norm())):
            break  # the step is at round-off level
    return y


def exact_f2sa_estimate(problem: BilevelProblem, x: torch.Tensor, p: int, nu: float
                        ) -> torch.Tensor:
    """ĝ_p(x) with exact node solutions and full-batch gradients: the deterministic estimator
    whose distance to ∇Φ(x) is the finite-difference bias O(ν^p) of Lemma 3.1."""
    check_positive("nu", nu)
    nodes, coefs = finite_difference_stencil(p)
    y_star = problem.lower_solution(x.detach())
    fxs, gxs = [], []
    closed_form = getattr(problem, "penalized_solution", None)
    for j in nodes:
        if closed_form is not None:
            y = y_star if j == 0 else closed_form(x.detach(), j * nu)
        else:
            y = penalized_solution(problem, x, j * nu, y_star)
        fxs.append(problem.grad_f(x, y)[0])
        gxs.append(problem.grad_g(x, y)[0])
    return f2sa_estimate(nu, nodes, [float(a) for a in coefs], fxs, gxs)


class F2SA(BilevelSolver):
    """F²SA-p (Alg. 1 of Chen et al., ICLR 2026); ``p=1`` is F²SA (Kwon et al., 2023).

    Args:
        oracle: the problem's counted oracle (its ``batch_size`` sets the minibatches).
        p: order of the finite difference (1 = F²SA; the paper runs 2, 3, 5, 8, 10).
        nu: ν = 1/λ, the finite-difference step in the penalty (negative nodes need
            |j|ν L_f < μ).
        lr: η_x, the outer step (the length of the step when ``normalized``).
        inner_lr: the SGD step on every node's problem ``jν f + g``.
        inner_steps: K, SGD steps per node and outer iteration.
        normalized: Alg. 1's normalised step ``Φ/‖Φ‖`` (default) or the plain step.
        shared_batches: one minibatch pair for the hyper-gradient at all nodes (Alg. 1
            line 13, default) or an independent pair per node (official code).
        average_warm_start: restart the positive / the non-positive nodes from their group
            averages before the inner steps (the official code's trick).
        upper_x_grad: query ``∇_x F`` for the ``j∇_x F`` terms; ``False`` when f does not
            depend on x (hyper-parameter tuning), which saves those calls.
        x0, y0: starting points (default: the problem's; every node starts at ``y0``).

    Example:
        F²SA-2 on a quadratic problem whose hyper-gradient ∇Φ is known in closed form:

        >>> from optzoo.bilevel import F2SA, Oracle
        >>> from optzoo.bilevel.problems.quadratic import QuadraticBilevel
        >>> problem = QuadraticBilevel(dim_x=5, dim_y=8, rho=1.0, seed=0)
        >>> solver = F2SA(Oracle(problem), p=2, nu=0.05, lr=0.1, inner_lr=0.4, normalized=False)
        >>> history = solver.run(budget=1_000, every=10,
        ...     callback=lambda s: {"grad": float(problem.hypergradient(s.x).norm())})
        >>> round(history[0]["grad"], 2), bool(history[-1]["grad"] < 0.2)
        (4.1, True)
        >>> sorted(history[-1])                      # one record every 10 outer steps
        ['calls', 'grad', 'step']
    """

    def __init__(self, oracle: Oracle, *, p: int = 1, nu: float = 0.1, lr: float = 0.01,
                 inner_lr: float = 0.1, inner_steps: int = 10, normalized: bool = True,
                 shared_batches: bool = True, average_warm_start: bool = False,
                 upper_x_grad: bool = True, x0: torch.Tensor | None = None,
                 y0: torch.Tensor | None = None) -> None:
        super().__init__(oracle, x0, y0)
        self.p = check_positive("p", p, integer=True)
        self.nu = float(check_positive("nu", nu))
        self.lr = float(check_positive("lr", lr))
        self.inner_lr = float(check_positive("inner_lr", inner_lr))
        self.inner_steps = check_positive("inner_steps", inner_steps, integer=True,
                                          allow_zero=True)
        for name, v in (("normalized", normalized), ("shared_batches", shared_batches),
                        ("average_warm_start", average_warm_start),
                        ("upper_x_grad", upper_x_grad)):
            if not isinstance(v, bool):
                raise ValueError(f"{name}: expected a bool, got {v!r}")
        self.normalized, self.shared_batches = normalized, shared_batches
        self.average_warm_start, self.upper_x_grad = average_warm_start, upper_x_grad
        self.nodes, exact = finite_difference_stencil(p)
        self.coefs = tuple(float(a) for a in exact)
        self.ys = {j: self.y.clone() for j in self.nodes}
        self.estimate: torch.Tensor | None = None

    def _warm_start(self) -> None:
        for group in ([j for j in self.nodes if j > 0], [j for j in self.nodes if j <= 0]):
            if len(group) > 1:
                avg = torch.stack([self.ys[j] for j in group]).mean(0)
                for j in group:
                    self.ys[j] = avg.clone()

    def _inner(self, j: int) -> None:
        o, x, y = self.oracle, self.x, self.ys[j]
        weight = j * self.nu
        for _ in range(self.inner_steps):
            d = o.grad_g_y(x, y, o.sample("lower"))
            if j != 0:
                d = d + weight * o.grad_f(x, y, o.sample("upper"))[1]
            y = y - self.inner_lr * d
        self.ys[j] = y

    def hypergradient(self) -> torch.Tensor:
        """The stochastic estimate Φ_t at the current x and node iterates (Alg. 1 line 13)."""
        o = self.oracle
        if self.shared_batches:
            upper, lower = o.sample("upper"), o.sample("lower")
        fxs, gxs = [], []
        for j in self.nodes:
            if not self.shared_batches:
                upper, lower = o.sample("upper"), o.sample("lower")
            gxs.append(o.grad_g(self.x, self.ys[j], lower)[0])
            use_f = self.upper_x_grad and j != 0
            fxs.append(o.grad_f(self.x, self.ys[j], upper)[0] if use_f else None)
        return f2sa_estimate(self.nu, self.nodes, self.coefs, fxs, gxs)

    def step(self) -> None:
        if self.average_warm_start:
            self._warm_start()
        for j in self.nodes:
            self._inner(j)
        est = self.hypergradient()
        self.estimate = est
        if self.normalized:
            norm = float(est.norm())
            if norm > 0.0:
                self.x = self.x - self.lr * est / norm
        else:
            self.x = self.x - self.lr * est
        self.y = self.ys[max(self.nodes)]
