"""Asymptotic series of ``Z(g) = ∫ exp(−L(θ)/g) dθ`` and their Borel singularities: the analysis
phase of SURGE, Bu, "Globally Aware Optimization with Resurgence" (ICLR 2026, OpenReview
dhnyoea2Qj, arXiv 2509.01329).  The optimization phase (the learning-rate rule) is
:mod:`optzoo.optim.surge`.

The paper (§2.3, "critical point correspondence") states that the critical values ``L(θ*)`` of
the loss are singularities of the Borel transform ``B[Z](ζ) = Σ a_n ζⁿ/Γ(n+1)`` of the
small-coupling expansion ``Z(g) ~ Σ a_n gⁿ``.  Two routes are implemented for one-dimensional
polynomial losses (the brief's theory check):

* **Local (textbook) route** — :func:`local_series`, :func:`borel_pade_singularities`.  Around a
  minimum ``θ_c`` (value ``L_c``, curvature ``h``), ``Z_c(g) = e^{−L_c/g} √(2πg/h) Σ c_n gⁿ``;
  the ``c_n`` come from substituting ``θ = θ_c + √g s`` and integrating Gaussian moments term by
  term.  Their Borel transform ``Σ c_n tⁿ/n!`` has branch points at ``t = L_k − L_c`` for the
  other critical values ``L_k`` (a *negative* ``t`` reveals a lower minimum).  The singularities
  are located as the real poles of the ``[M/M]`` Padé approximant nearest to the origin on each
  half-axis (a branch cut shows as a line of poles starting at the branch point).  The
  arithmetic is generic: with :class:`sympy.Rational` Taylor data the ``c_n`` are exact
  rationals, with :class:`mpmath.mpf` they are high-precision floats (the critical points of a
  tilted double well are irrational, so the reproduction uses ``mp.dps = 60``).
* **Paper's global route** — :func:`partition_function`, :func:`fit_coefficients`,
  :func:`ratio_singularity`, :func:`threshold_singularities` (§3.1 steps 1–3).  ``Z(g_s)`` on a
  grid of small couplings by quadrature (the paper uses a learned variational sampler in
  high dimension; in 1-D quadrature is exact), weighted least squares
  ``min Σ w_s (Z(g_s) − Σ_{j≤N} a_j g_sʲ)²`` with ``w_s = 1/(g_s + ε)``, ``b_n = a_n/n!``, then
  the ratio rule ``ζ ≈ b_n/b_{n+1}`` or a threshold scan ``|Σ b_n ζⁿ| > τ``.  Caveat (brief,
  pitfalls): ``Z(g)`` is ``O(e^{−L_min/g})`` with no power series at ``g = 0`` unless
  ``L_min = 0`` is attained, so the fitted ``a_n`` are properties of the fit window, not of the
  loss; the reproduction measures how well this route recovers critical values.

:func:`critical_values` gives the exact reference (real roots of ``L'``).

Networks (§3.1 step 1 in high dimension) — :func:`variational_log_partition`,
:func:`targets_from_log_partition`, :func:`laplace_min_estimate`; for an ``nn.Module``,
:func:`module_targets` runs the whole analysis phase (:func:`module_flat_loss` turns the module
into a loss over flat parameter vectors).  ``log Z(g)`` of a loss over flat parameter vectors
is estimated with a mean-field Gaussian sampler fitted per coupling and
an importance-sampling evaluation of the paper's bound; the targets then follow the same steps
2–4 as in 1-D.  What is the paper's and what is a reading is listed in each docstring.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import mpmath
import numpy as np
import sympy
import torch

__all__ = ["borel_pade_singularities", "critical_values", "fit_coefficients",
           "laplace_min_estimate", "local_series", "module_flat_loss", "module_targets",
           "partition_function", "ratio_singularity",
           "targets_from_log_partition", "taylor_at", "threshold_singularities",
           "variational_log_partition"]


def _poly(coeffs: Sequence) -> sympy.Poly:
    """``coeffs`` lowest degree first → a sympy polynomial in ``x``."""
    x = sympy.Symbol("x")
    # A float is taken as the exact decimal it prints as (so the roots are over ℚ).
    exact = [sympy.Rational(repr(c)) if isinstance(c, float) else sympy.Rational(c)
             for c in coeffs]
    return sympy.Poly(sum(c * x**k for k, c in enumerate(exact)), x)


def critical_values(coeffs: Sequence, dps: int = 50) -> list[tuple[float, float, float]]:
    """Exact reference: the real critical points of the polynomial ``Σ coeffs[k] xᵏ``.

    Returns ``(θ*, L(θ*), L''(θ*))`` per real root of ``L'``, sorted by ``θ*``.
    """
    return list(_critical_values(tuple(coeffs), dps))


@functools.lru_cache(maxsize=256)
def _critical_values(coeffs: tuple, dps: int) -> tuple[tuple[float, float, float], ...]:
    # Roots of L' (exact rational coefficients) to ``dps`` digits; a real root has |Im| ~ 0.
    p = _poly(coeffs)
    dp, d2 = p.diff(), p.diff().diff()
    out = []
    with mpmath.workdps(dps):
        num = [mpmath.mpf(c.p) / c.q for c in dp.all_coeffs()]
        for r in mpmath.polyroots(num, maxsteps=200, extraprec=2 * mpmath.mp.prec):
            if abs(mpmath.im(r)) > mpmath.mpf(10) ** (-dps // 2):
                continue
            v = mpmath.re(r)
            val = mpmath.polyval([mpmath.mpf(c.p) / c.q for c in p.all_coeffs()], v)
            cur = mpmath.polyval([mpmath.mpf(c.p) / c.q for c in d2.all_coeffs()], v)
            out.append((float(v), float(val), float(cur)))
    return tuple(sorted(out))


def taylor_at(coeffs: Sequence, center) -> list:
    """Taylor coefficients ``l_k = L⁽ᵏ⁾(center)/k!`` of the polynomial, in ``center``'s arithmetic
    (sympy ``Rational`` → exact; ``mpmath.mpf`` → high precision)."""
    c = list(coeffs)
    n = len(c)
    out = []
    for k in range(n):
        # Σ_j binom(j, k) c_j center^{j−k}: exact shift of the polynomial to the new origin.
        out.append(sum(math.comb(j, k) * c[j] * center ** (j - k) for j in range(k, n)))
    return out


def local_series(taylor: Sequence, order: int) -> list:
    """Coefficients ``c_0 … c_order`` of ``Z_c(g) = e^{−L_c/g} √(2πg/h) Σ c_n gⁿ`` (``c_0 = 1``).

    Args:
        taylor: ``[L_c, 0, h/2, l_3, l_4, …]`` — Taylor data at a non-degenerate minimum
            (``taylor[1]`` must be 0 and ``h = 2·taylor[2] > 0``).
        order: highest power of ``g``.

    With ``θ = θ_c + √g s`` and ``ε = √g``, ``(L − L_c)/g = h s²/2 + Σ_{k≥3} l_k ε^{k−2} sᵏ``;
    ``exp(−Σ …) = Σ_j E_j(s) εʲ`` by the recursion ``j E_j = −Σ_i i P_i E_{j−i}``
    (``P_i = l_{i+2} s^{i+2}``), and ``c_n = ⟨E_{2n}⟩`` under ``N(0, 1/h)`` (odd ``j`` vanish).
    """
    half_h = taylor[2]
    if not half_h > 0:
        raise ValueError("taylor: the expansion point must be a non-degenerate minimum")
    zero = half_h * 0
    h = 2 * half_h
    P = {i: taylor[i + 2] for i in range(1, len(taylor) - 2) if taylor[i + 2] != 0}
    jmax = 2 * order
    E = [{0: zero + 1}]  # E_j as {power of s: coefficient}
    for j in range(1, jmax + 1):
        acc: dict[int, object] = {}
        for i, li in P.items():
            if i > j:
                continue
            for m, e in E[j - i].items():
                acc[m + i + 2] = acc.get(m + i + 2, zero) - i * li * e
        E.append({m: v / j for m, v in acc.items()})
    out = []
    for n in range(order + 1):
        # ⟨s^m⟩ = (m−1)!! / h^{m/2} for even m.
        total = zero
        for m, v in E[2 * n].items():
            if m % 2 == 0:
                total = total + v * _double_factorial(m - 1) / h ** (m // 2)
        out.append(total)
    return out


def _double_factorial(k: int) -> int:
    return math.prod(range(k, 0, -2)) if k > 0 else 1


def borel_pade_singularities(coeffs: Sequence, m: int | None = None,
                             imag_tol: float = 1e-6) -> dict[str, float | None]:
    """Nearest real singularities of ``B(t) = Σ c_n tⁿ/n!`` from its ``[m/m]`` Padé approximant.

    Returns ``{"positive": t₊, "negative": t₋}`` — the real denominator roots closest to the
    origin on each half-axis (``None`` if none), computed with ``mpmath`` at its current
    precision.
    """
    b = [mpmath.mpf(c) / mpmath.factorial(n) for n, c in enumerate(coeffs)]
    if m is None:
        m = (len(b) - 1) // 2
    if 2 * m > len(b) - 1:
        raise ValueError(f"m: [m/m] Padé needs {2 * m + 1} coefficients, got {len(b)}")
    _, q = mpmath.pade(b[: 2 * m + 1], m, m)
    roots = mpmath.polyroots(q[::-1], maxsteps=400, extraprec=4 * mpmath.mp.prec)
    real = [float(mpmath.re(r)) for r in roots
            if abs(mpmath.im(r)) < imag_tol * max(1.0, abs(r))]
    pos = [r for r in real if r > 0]
    neg = [r for r in real if r < 0]
    return {"positive": min(pos) if pos else None, "negative": max(neg) if neg else None}


# -- the paper's global route (§3.1) ------------------------------------------------------------
def partition_function(coeffs: Sequence, g: float, lo: float = -4.0, hi: float = 4.0) -> float:
    """``Z(g) = ∫ exp(−L(θ)/g) dθ`` by adaptive quadrature (``scipy.integrate.quad``) over
    ``[lo, hi]``, split at the real critical points where the integrand peaks; the global
    minimum's ``exp(−L_min/g)`` is factored out so the integrand stays O(1)."""
    from scipy.integrate import quad

    c = np.asarray([float(v) for v in coeffs])
    crit = critical_values(coeffs)
    lmin = min(v for _, v, _ in crit)
    pts = [lo] + [p for p, _, _ in crit if lo < p < hi] + [hi]
    f = lambda x: math.exp(-(np.polynomial.polynomial.polyval(x, c) - lmin) / g)  # noqa: E731
    total = sum(quad(f, a, b, epsabs=0.0, epsrel=1e-12, limit=200)[0]
                for a, b in zip(pts[:-1], pts[1:], strict=True))
    return total * math.exp(-lmin / g)


def fit_coefficients(gs: Sequence[float], zs: Sequence[float], n_coeffs: int,
                     eps: float = 1e-3) -> np.ndarray:
    """Weighted least squares ``min Σ_s w_s (Z_s − Σ_{j<n_coeffs} a_j g_sʲ)²``, ``w_s = 1/(g_s+ε)``
    (paper §3.1 step 2).  Returns ``a_0 … a_{n_coeffs−1}``."""
    g = np.asarray(gs, dtype=float)
    z = np.asarray(zs, dtype=float)
    w = np.sqrt(1.0 / (g + eps))
    V = np.vander(g, n_coeffs, increasing=True)
    a, *_ = np.linalg.lstsq(V * w[:, None], z * w, rcond=None)
    return a


def ratio_singularity(a: Sequence[float]) -> float:
    """Ratio rule ``ζ ≈ b_n/b_{n+1}`` at the last available ``n`` (``b_n = a_n/n!``)."""
    b = [float(v) / math.factorial(n) for n, v in enumerate(a)]
    return b[-2] / b[-1]


def threshold_singularities(a: Sequence[float], zetas: Sequence[float],
                            tau: float) -> list[float]:
    """Left ends of the runs of ``ζ`` where ``|Σ b_n ζⁿ| > τ`` (paper §3.1 step 3)."""
    b = np.array([float(v) / math.factorial(n) for n, v in enumerate(a)])
    z = np.asarray(zetas, dtype=float)
    vals = np.abs(np.polynomial.polynomial.polyval(z, b))
    flag = vals > tau
    return [float(z[i]) for i in range(len(z)) if flag[i] and (i == 0 or not flag[i - 1])]


# -- networks: variational log Z (§3.1 step 1) and targets (steps 2–4) --------------------------
def variational_log_partition(loss_fn: Callable[[torch.Tensor], torch.Tensor],
                              theta0: torch.Tensor, gs: Sequence[float], *,
                              weight_decay: float, samples: int = 32, steps: int = 200,
                              lr: float = 0.02, eval_samples: int = 512,
                              init_scale: float = 1.0,
                              generator: torch.Generator | None = None) -> np.ndarray:
    """``log Z(g) = log ∫ exp(−L̃(θ)/g) dθ`` for each coupling in ``gs`` (paper §3.1 step 1).

    ``L̃(θ) = L(θ) + (weight_decay/2)‖θ‖²``: the Gaussian prior term makes ``Z`` finite (the
    brief's pitfall — an MSE of a tanh network is bounded along many directions, so
    ``∫ exp(−L/g)`` over ``R^p`` diverges); the factor ``1/g`` applies to it as well, so for a
    quadratic ``L = ½θᵀAθ`` the exact value is ``(p/2) log(2πg) − ½ log det(A + weight_decay·I)``.

    Per coupling ``g``:

    1. *Sampler* ``q_ψ(θ | g) = N(μ, diag σ²)``, ``μ`` initialised at ``theta0`` and
       ``σ = init_scale·√g`` (the width of a unit-curvature well at coupling ``g``), fitted by
       maximising the reparameterised ELBO ``E_q[−L̃(θ)/g] + H(q)`` (``= E_q[−L̃/g − log q]``, the
       entropy in closed form) with Adam, ``steps`` steps of ``samples`` draws, step ``lr``.
    2. *Estimate* ``log Z(g) = c*``, the maximiser over ``c`` of the paper's concave bound
       ``J(ψ, c, g) = −c − E_q[exp(−E_ψ − c)] + 1``: ``∂J/∂c = 0`` gives
       ``c* = log E_q[exp(−E_ψ)]``, evaluated as the log-mean-exp of ``−L̃/g − log q`` over
       ``eval_samples`` fresh draws (an importance-sampling estimate, computed in log space).

    Paper's: the coupling grid, a learned sampler ``q_ψ(θ | g)``, the bound ``J`` and
    ``c* = log Z``.  Readings (not retrieved from the paper): the form
    ``E_ψ(θ) = L̃(θ)/g + log q_ψ(θ)`` is INFERRED in the brief (the log importance ratio, up to sign
    convention) — with it ``E_q[exp(−E_ψ)] = Z(g)`` for every ``ψ``, so ``J`` fixes ``c`` but does
    not constrain ``ψ`` in expectation; ``ψ`` is therefore fitted by the ELBO (which minimises
    ``KL(q ‖ e^{−L̃/g}/Z)`` and so the variance of the importance weights).  The sampler family
    (mean-field Gaussian, one independent ``ψ`` per coupling, not an amortised ``q_ψ(θ | g)``
    or a flow), the weight-decay prior and the optimiser settings are choices of this library.
    Finite ``eval_samples`` bias ``c*`` downwards (Jensen) when ``q`` is narrower than the
    target.

    Args:
        loss_fn: maps a batch of flat parameter vectors ``(B, p)`` to losses ``(B,)``
            (differentiable; e.g. a network written with batched matmuls).
        theta0: ``(p,)`` starting mean (the network's initialisation); its dtype and device are
            used throughout.
        gs: couplings ``g > 0``.
        weight_decay: ``> 0``, the prior precision per coupling unit (see above).
        samples: draws per ELBO step.
        steps: Adam steps per coupling (0 evaluates the initial sampler).
        lr: Adam step on ``(μ, log σ)``.
        eval_samples: draws of the final log-mean-exp.
        init_scale: initial ``σ`` in units of ``√g``.
        generator: a seeded ``torch.Generator`` for reproducible draws.

    Returns:
        ``log Z(g_s)`` per coupling, float64 array of shape ``(len(gs),)``.
    """
    theta0 = torch.as_tensor(theta0)
    if theta0.ndim != 1 or theta0.numel() < 1:
        raise ValueError(f"theta0: expected a flat (p,) vector, got shape {tuple(theta0.shape)}")
    if not weight_decay > 0:
        raise ValueError(f"weight_decay: expected > 0 (Z diverges without it), got {weight_decay}")
    if any(not g > 0 for g in gs):
        raise ValueError(f"gs: expected positive couplings, got {list(gs)}")
    for name, v in (("samples", samples), ("eval_samples", eval_samples)):
        if v < 1:
            raise ValueError(f"{name}: expected an integer >= 1, got {v}")
    if steps < 0:
        raise ValueError(f"steps: expected an integer >= 0, got {steps}")
    p = theta0.numel()
    kw = {"dtype": theta0.dtype, "device": theta0.device}
    half_log_2pi = 0.5 * math.log(2 * math.pi)

    def reg_loss(theta: torch.Tensor) -> torch.Tensor:
        out = loss_fn(theta)
        if out.shape != theta.shape[:1]:
            raise ValueError(f"loss_fn: expected losses of shape ({theta.shape[0]},) for a "
                             f"batch {tuple(theta.shape)}, got {tuple(out.shape)}")
        return out + 0.5 * weight_decay * (theta * theta).sum(1)

    out = []
    for g in gs:
        g = float(g)
        mu = theta0.detach().clone().requires_grad_(True)
        log_sigma = torch.full((p,), math.log(init_scale * math.sqrt(g)), **kw)
        log_sigma.requires_grad_(True)
        opt = torch.optim.Adam([mu, log_sigma], lr=lr)
        for _ in range(steps):
            eps = torch.randn(samples, p, generator=generator, **kw)
            theta = mu + log_sigma.exp() * eps
            elbo = (-reg_loss(theta) / g).mean() + log_sigma.sum()  # + const. entropy
            opt.zero_grad()
            (-elbo).backward()
            opt.step()
        with torch.no_grad():
            eps = torch.randn(eval_samples, p, generator=generator, **kw)
            theta = mu + log_sigma.exp() * eps
            log_q = (-0.5 * eps * eps - log_sigma - half_log_2pi).sum(1)
            log_w = -reg_loss(theta) / g - log_q
            c_star = torch.logsumexp(log_w, 0) - math.log(eval_samples)
        out.append(float(c_star))
    return np.asarray(out, dtype=float)


def targets_from_log_partition(gs: Sequence[float], log_z: Sequence[float], l0: float, *,
                               n_coeffs: int = 6, tau_factor: float = 10.0, n_scan: int = 2000,
                               eps: float = 1e-3) -> list[float]:
    """SURGE's target set from ``log Z`` on a coupling grid (paper §3.1 steps 2–4).

    Args:
        gs: couplings ``g_s > 0`` (at least ``n_coeffs`` of them).
        log_z: ``log Z(g_s)`` per coupling (e.g. :func:`variational_log_partition`); only
            differences matter (an additive constant cancels).
        l0: the loss at initialisation (``> 0``); targets lie in ``(0, l0)``.
        n_coeffs: fitted coefficients ``a_0 … a_{n_coeffs−1}`` (default 6, the reproduction's).
        tau_factor: the threshold ``τ = tau_factor·|b_0|`` (default 10, the reproduction's).
        n_scan: grid points of the threshold scan on ``(0, l0)``.
        eps: the weight offset of ``w_s = 1/(g_s + eps)``.

    ``Z_s`` is first divided by ``max_s Z_s`` (a constant; ``Z`` of a network spans hundreds of
    orders of magnitude over the grid).  A common factor scales every ``a_n`` and ``b_n``
    alike, so it cancels in the ratios ``b_n/b_{n+1}`` and in the threshold
    ``τ = tau_factor·|b_0|``.  Then :func:`fit_coefficients` (``w = 1/(g + eps)``),
    :func:`threshold_singularities` on ``n_scan`` points of ``ζ ∈ (0, l0)``, and the targets are
    the detected ``ζ`` strictly inside ``(0, l0)`` (``l0``: the loss at initialisation), ascending.

    Example::

        >>> import math, numpy as np
        >>> from optzoo.optim.resurgence import targets_from_log_partition
        >>> gs = np.linspace(0.005, 0.05, 8)
        >>> z = sum(math.factorial(n) * 2.0**n * gs**n for n in range(6))  # bₙ = 2ⁿ: ζ ≈ 1/2
        >>> [round(t, 3) for t in targets_from_log_partition(gs, np.log(z), l0=1.0)]
        [0.602]
    """
    g = np.asarray(gs, dtype=float)
    lz = np.asarray(log_z, dtype=float)
    if g.shape != lz.shape or g.ndim != 1:
        raise ValueError(f"log_z: expected one value per coupling ({g.shape}), got {lz.shape}")
    if isinstance(n_coeffs, bool) or not isinstance(n_coeffs, int | np.integer) or n_coeffs < 2:
        raise ValueError(f"n_coeffs: expected an integer >= 2, got {n_coeffs!r}")
    if g.size < n_coeffs:
        raise ValueError(f"gs: expected at least n_coeffs = {n_coeffs} couplings, got {g.size}")
    if not tau_factor > 0:
        raise ValueError(f"tau_factor: expected > 0, got {tau_factor!r}")
    if not np.all(np.isfinite(lz)):
        raise ValueError("log_z: expected finite values")
    if not l0 > 0:
        raise ValueError(f"l0: expected a positive initial loss, got {l0}")
    z = np.exp(lz - lz.max())
    a = fit_coefficients(g, z, n_coeffs, eps)
    zetas = l0 * np.arange(1, n_scan + 1) / (n_scan + 1)
    found = threshold_singularities(a, zetas, tau=tau_factor * abs(float(a[0])))
    return sorted(v for v in found if 0.0 < v < l0)


# -- nn.Module front end ------------------------------------------------------------------------
DEFAULT_GS = tuple(float(g) for g in np.linspace(0.005, 0.05, 8))  # the reproduction's grid


def module_flat_loss(model: torch.nn.Module, loss_fn: Callable[[torch.Tensor], torch.Tensor],
                     inputs: torch.Tensor | tuple, *, vectorize: bool = True
                     ) -> tuple[Callable[[torch.Tensor], torch.Tensor], torch.Tensor]:
    """The loss of ``model`` as a function of flat parameter vectors, as
    :func:`variational_log_partition` takes it.

    Args:
        model: the network; its trainable parameters (``requires_grad``), in
            ``named_parameters`` order, make the flat vector; frozen parameters and buffers are
            held at their values.  The model is not modified.
        loss_fn: maps the model's output ``model(*inputs)`` to a scalar loss, e.g.
            ``lambda out: F.mse_loss(out, y)``.
        inputs: the model's input, or a tuple of positional inputs.
        vectorize: evaluate a batch with ``torch.func.vmap`` (the model must be vmap-able:
            no dropout in training mode, no in-place buffer updates such as batch-norm
            statistics in training mode — use ``model.eval()``); ``False`` loops over the batch.

    Returns:
        ``(loss, theta0)``: ``loss`` maps ``(B, p)`` to ``(B,)`` (differentiable), ``theta0`` is
        the model's current flat ``(p,)`` parameter vector (detached).

    Example::

        >>> import torch
        >>> from optzoo.optim.resurgence import module_flat_loss
        >>> model = torch.nn.Sequential(torch.nn.Linear(1, 4), torch.nn.Tanh(),
        ...                             torch.nn.Linear(4, 1))
        >>> x, y = torch.randn(16, 1), torch.randn(16, 1)
        >>> loss, theta0 = module_flat_loss(model, lambda out: ((out - y) ** 2).mean(), x)
        >>> loss(torch.stack([theta0, theta0])).shape, theta0.shape
        (torch.Size([2]), torch.Size([13]))
    """
    from torch.func import functional_call, vmap

    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    if not callable(loss_fn):
        raise TypeError(f"loss_fn: expected a callable (model output -> scalar loss), got "
                        f"{type(loss_fn).__name__}")
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    if not trainable:
        raise ValueError("model: has no trainable parameters (requires_grad=True)")
    dtypes = {p.dtype for _, p in trainable}
    if len(dtypes) != 1 or not next(iter(dtypes)).is_floating_point:
        raise ValueError(f"model: expected trainable parameters of one floating dtype, got "
                         f"{sorted(str(d) for d in dtypes)}")
    names = [n for n, _ in trainable]
    shapes = [p.shape for _, p in trainable]
    sizes = [p.numel() for _, p in trainable]
    fixed = {n: p.detach() for n, p in model.named_parameters() if not p.requires_grad}
    fixed.update(dict(model.named_buffers()))
    args = inputs if isinstance(inputs, tuple) else (inputs,)
    theta0 = torch.cat([p.detach().reshape(-1) for _, p in trainable])

    def single(theta: torch.Tensor) -> torch.Tensor:
        params, k = dict(fixed), 0
        for name, shape, size in zip(names, shapes, sizes, strict=True):
            params[name] = theta[k:k + size].reshape(shape)
            k += size
        out = loss_fn(functional_call(model, params, args))
        if not isinstance(out, torch.Tensor) or out.numel() != 1:
            raise ValueError(f"loss_fn: expected a scalar loss tensor, got "
                             f"{getattr(out, 'shape', type(out).__name__)}")
        return out.reshape(())

    if vectorize:
        batched = vmap(single)
    else:
        def batched(theta: torch.Tensor) -> torch.Tensor:
            return torch.stack([single(t) for t in theta])

    def loss(theta: torch.Tensor) -> torch.Tensor:
        if theta.ndim != 2 or theta.shape[1] != theta0.numel():
            raise ValueError(f"theta: expected a batch (B, {theta0.numel()}), got "
                             f"{tuple(theta.shape)}")
        return batched(theta)

    return loss, theta0


def module_targets(model: torch.nn.Module, loss_fn: Callable[[torch.Tensor], torch.Tensor],
                   inputs: torch.Tensor | tuple, *, gs: Sequence[float] = DEFAULT_GS,
                   weight_decay: float = 1e-3, n_coeffs: int = 6, tau_factor: float = 10.0,
                   samples: int = 32, steps: int = 200, lr: float = 0.02,
                   eval_samples: int = 512, init_scale: float = 1.0,
                   generator: torch.Generator | None = None,
                   vectorize: bool = True) -> list[float]:
    """SURGE's target set for a network at its current parameters (the analysis phase, paper
    §3.1 steps 1–4): :func:`module_flat_loss`, :func:`variational_log_partition` on ``gs``,
    then :func:`targets_from_log_partition` with ``l0`` the current loss.  Pass the result to
    :class:`~optzoo.optim.surge.SurgeLR`.

    Args:
        model, loss_fn, inputs, vectorize: as in :func:`module_flat_loss`.
        gs: couplings (default: 8 points on ``[0.005, 0.05]``, the reproduction's grid).
        weight_decay: the prior precision that makes ``Z`` finite (default 1e-3, the
            reproduction's).
        n_coeffs, tau_factor: as in :func:`targets_from_log_partition`.
        samples, steps, lr, eval_samples, init_scale, generator: as in
            :func:`variational_log_partition`.

    Returns:
        the targets, ascending, inside ``(0, L_0)`` (possibly empty: SURGE then leaves the rate
        alone).

    Example::

        >>> import torch
        >>> from optzoo.optim import SurgeLR, module_targets
        >>> _ = torch.manual_seed(0)
        >>> model = torch.nn.Sequential(torch.nn.Linear(1, 8), torch.nn.Tanh(),
        ...                             torch.nn.Linear(8, 1))
        >>> x = torch.linspace(-3, 3, 32).unsqueeze(1)
        >>> y = torch.sin(2 * x)
        >>> mse = lambda out: torch.nn.functional.mse_loss(out, y)
        >>> targets = module_targets(model, mse, x, steps=20, eval_samples=64,
        ...                          generator=torch.Generator().manual_seed(0))
        >>> sched = SurgeLR(torch.optim.SGD(model.parameters(), lr=0.1), targets)
    """
    loss, theta0 = module_flat_loss(model, loss_fn, inputs, vectorize=vectorize)
    with torch.no_grad():
        l0 = float(loss(theta0.unsqueeze(0))[0])
    log_z = variational_log_partition(loss, theta0, gs, weight_decay=weight_decay,
                                      samples=samples, steps=steps, lr=lr,
                                      eval_samples=eval_samples, init_scale=init_scale,
                                      generator=generator)
    return targets_from_log_partition(gs, log_z, l0, n_coeffs=n_coeffs, tau_factor=tau_factor)


def laplace_min_estimate(gs: Sequence[float], log_z: Sequence[float]) -> float:
    """The reviewer's global-minimum estimate ``−g·log Z(g)`` at the smallest coupling
    (``Z ≈ e^{−L_min/g}·(…)`` as ``g → 0``; in ``p`` dimensions it carries an
    ``O(g·p·log g)`` volume term).  Needs the absolute ``log Z``, not a normalised one."""
    i = int(np.argmin(np.asarray(gs, dtype=float)))
    return -float(gs[i]) * float(log_z[i])
