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

The inverse square root of ``A = δI + L_k/n`` is computed in float64 (``precision="float32"`` to
trade accuracy for speed) by one of two methods (``root=``):

* ``"eigh"``: an ``eigh`` of A each step; eigenvalues clamped at the smallest positive normal
  number before the root.
* ``"newton"`` (default): exact up to a certified tolerance and warm-started.  The state keeps the
  eigenbasis V of the last ``eigh`` and the last root in that basis, Y ≈ (VᵀAV)^{-1/2}.  Each step
  forms B = VᵀAV (nearly diagonal while V is fresh) and runs Newton's method on the Riccati
  equation ``Y B Y = I``: residual ``R = I − Y B Y``, correction ``Y += R ⊘ (s_i + s_j)`` with
  ``s = sqrt(diag B)``, i.e. the Newton step with its Lyapunov Jacobian ``Δ ↦ ΔB^{1/2} + B^{1/2}Δ``
  solved in the basis V (exact Newton, quadratic, when V diagonalises A; linear with the
  staleness of V otherwise; unlike Newton–Schulz ``X(3I − X²A)/2`` it stays stable for any
  condition number and for clusters).  The root ``V Y Vᵀ`` is accepted when ``‖R‖_F ≤ root_tol``
  (then ``‖A^{1/4}(X − A^{-1/2})A^{1/4}‖₂ ≲ ‖R‖_F/2``: a relative error); a matrix whose residual
  would not reach the tolerance within ``root_iters`` iterations (by its observed rate), or is
  not finite, falls back to ``eigh``, which also refreshes V.  ``root_tol`` defaults to 1e-6
  (float64) / 1e-3 (float32), raised to ``16·√k·eps`` of the state's dtype (the resolution of a
  float32 state).  Where a warm start does not pay (an attempt failed or needed more than one
  iteration: the accumulator moves too fast, early in training) Newton is skipped for 1, 2,
  4, ... 64 steps, ``eigh`` meanwhile; preconditioners smaller than 32 always use ``eigh``.
  The state holds X, V, Y and these counters (``state_dict`` round trips continue
  bit-identically).  :attr:`ASGO.root_stats` records, for the last step and in total, the
  iterations, residuals, tolerances, ``eigh`` fallbacks and skips.  Everything is matmuls and
  elementwise ops, batched over same-sized preconditioners (``foreach``): GPU-friendly.

Cost per step and k×k preconditioner: ``"eigh"`` one ``eigh`` (≈ 20 k×k×k matmuls on a CPU
at k = 256); ``"newton"`` 2 k³ when the stored root is certified as it is, else about
4 k³ + 2 k³ per iteration, and an ``eigh`` where the basis has gone stale.  On a CPU this wins
where the accumulator changes slowly (late in training, converged problems: about half the
time of a ``make bench`` train step) and loses a little where it changes by percents per step
(the bench's repeated-gradient step row, ~15 %).  The remaining floor is the algorithm itself:
the accumulation ``G Gᵀ`` and the preconditioned step are k×k×n products that already cost
several Adam steps for an MLP 64-256-256-10 (``make bench``); ``side="smaller"`` with
``precision="float32"`` is the cheapest setting the paper allows.  A root from an earlier step
is reused only when it is certified for the current accumulator (the current gradient must be
in it, the paper's Lemma 2: an uncertified stale, nearly singular early root amplifies new
gradient directions until the iterates diverge).

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
from collections.abc import Callable, Iterable
from typing import Any

import torch

from optzoo.optim.adaptive_preconditioning import AdaptivePreconditionedSGD
from optzoo.optim.base import check_hyper
from optzoo.optim.dasgo import as_matrix

__all__ = ["ASGO", "default_root_tol", "inverse_sqrt", "newton_inverse_sqrt"]

_SIDES = ("left", "right", "smaller")
_PRECISIONS = {"float64": torch.float64, "float32": torch.float32}
_ROOTS = ("newton", "eigh")
_BASE_TOL = {torch.float64: 1e-6, torch.float32: 1e-3}
_WARM = ("inv_root", "root_basis", "root_in_basis")  # state keys of root="newton": X, V, Y
_MAX_BACKOFF = 64
_FAST_ITERS = 1  # a Newton root in at most this many iterations is cheaper than an eigh (CPU)
_MIN_NEWTON = 32  # below this size an eigh costs less than the iteration's overhead


def inverse_sqrt(m: torch.Tensor) -> torch.Tensor:
    """``M^{-1/2}`` of a (batch of) symmetric positive definite matrix by ``eigh``."""
    w, v = torch.linalg.eigh(m)
    w = w.clamp_min(torch.finfo(w.dtype).tiny)
    return (v * w.rsqrt().unsqueeze(-2)) @ v.transpose(-2, -1)


def default_root_tol(precision: torch.dtype, state_dtype: torch.dtype, k: int) -> float:
    """The default ``root_tol``: 1e-6 (float64) / 1e-3 (float32), at least ``16·√k·eps`` of the
    dtype the warm start is stored in (a float32 state cannot hold a root more exactly)."""
    res = 16.0 * k ** 0.5 * torch.finfo(state_dtype).eps
    return max(_BASE_TOL[precision], res if torch.finfo(state_dtype).eps > torch.finfo(
        precision).eps else 0.0)


def newton_inverse_sqrt(mats: torch.Tensor, full: torch.Tensor | None,
                        load: Callable[[list[int]], tuple[torch.Tensor, torch.Tensor]] | None,
                        tol: list[float], max_iter: int, *, orthonormal: bool = True,
                        skip: list[bool] | None = None, precheck: list[bool] | None = None,
                        ) -> tuple[torch.Tensor, dict, list, list]:
    """Warm-started, certified ``A^{-1/2}`` for a batch ``mats`` (b×k×k, SPD) of matrices.

    The warm start is ``full`` (X, b×k×k: the last roots; modified in place) and ``load(idx)``,
    which returns, for the matrices ``idx``, the eigenbases V of their last ``eigh``
    (orthonormal up to rounding) and their last roots in those bases, Y ≈ VᵀXV; ``full=None``
    is a cold start (``eigh``).  Matrix ``i`` keeps X when ``‖I − X A X‖_F ≤ tol[i]``;
    otherwise Newton's method runs on ``Y (VᵀAV) Y = N⁻¹`` (N = VᵀV, = I unless
    ``orthonormal=False``: a basis rounded to a lower precision) with the Jacobian solved in the
    basis V (module docstring) until ``‖R‖_F ≤ tol[i]``, and X = V Y Vᵀ; a matrix that would
    not get there within ``max_iter`` iterations at its observed rate falls back to ``eigh``,
    and so does every ``skip[i]``.  ``precheck[i] = False`` leaves out the check of X (2 k³) for
    a matrix that is expected to need iterations: the residual of the first iteration is the
    same check in the basis V (certified there, Y unchanged, X stays).  Each matrix is iterated
    on its own (the batch does not change its result).

    Returns ``(X, changed, iterations, residuals)``: ``changed`` maps the index of every matrix
    whose root moved to ``(V or None, Y)`` (V new only after an ``eigh``: those are the
    matrices that fell back).
    """
    b, k = mats.shape[0], mats.shape[-1]
    iters, resid = [0] * b, [0.0] * b
    fell = [full is None or bool(skip and skip[i]) for i in range(b)]
    dev, tiny = mats.device, torch.finfo(mats.dtype).tiny
    eye = torch.eye(k, dtype=mats.dtype, device=dev)
    changed: dict[int, tuple[torch.Tensor | None, torch.Tensor]] = {}
    if full is not None and not all(fell):
        check = [i for i in range(b) if not fell[i] and (precheck is None or precheck[i])]
        todo = [i for i in range(b) if not fell[i] and not (precheck is None or precheck[i])]
        if check:
            if len(check) < b:
                cidx = torch.tensor(check, device=dev)
                x, a0 = full.index_select(0, cidx), mats.index_select(0, cidx)
            else:
                x, a0 = full, mats
            r0 = torch.baddbmm(eye.expand_as(x), x @ a0, x, alpha=-1.0)
            res0 = torch.linalg.matrix_norm(r0).tolist()  # Frobenius
            for i, ri in zip(check, res0, strict=True):
                resid[i] = ri
                if not ri <= tol[i]:
                    todo.append(i)
        todo.sort()
        if todo and max_iter == 0:
            for i in todo:
                fell[i] = True
        elif todo:
            idx = torch.tensor(todo, device=dev)
            basis, y = load(todo)
            bm = basis.mT @ mats.index_select(0, idx) @ basis
            bm = (bm + bm.mT) * 0.5
            if orthonormal:
                target = eye.expand_as(bm)
            else:
                gram = basis.mT @ basis
                target = 2.0 * eye - (gram + gram.mT) * 0.5  # N⁻¹ to second order in N − I
            s = torch.diagonal(bm, dim1=-2, dim2=-1).clamp_min(tiny).sqrt()
            den = (s.unsqueeze(-1) + s.unsqueeze(-2)).reciprocal_()  # 1/(s_i + s_j)
            pos = list(range(len(todo)))  # rows of basis (fixed) for the active matrices
            act, prev = list(todo), [float("inf")] * b
            for j in range(max_iter + 1):
                r = torch.baddbmm(target, y @ bm, y, alpha=-1.0)  # symmetric up to rounding
                res = torch.linalg.matrix_norm(r).tolist()  # Frobenius; one sync per iteration
                go = []
                for a, (i, ri) in enumerate(zip(act, res, strict=True)):
                    iters[i], resid[i] = j, ri
                    if ri <= tol[i] and j == 0:
                        continue  # the stored root is certified in the basis V: keep X
                    if ri <= tol[i]:  # certified: X = V Y Vᵀ (Y symmetrised: a rounding-level move)
                        v, ya = basis[pos[a]], (y[a] + y[a].mT) * 0.5
                        full[i] = v @ ya @ v.mT
                        changed[i] = (None, ya)
                        continue
                    left = max_iter - j
                    rate = ri / prev[i] if prev[i] != float("inf") else 0.0
                    if (not ri < float("inf")) or left == 0 or rate >= 1.0 or (
                            rate > 0.0 and rate ** left > tol[i] / ri):
                        fell[i] = True  # not finite, out of iterations, or too slow: eigh
                        continue
                    prev[i] = ri
                    go.append(a)
                if not go:
                    break
                if len(go) < len(act):
                    sel = torch.tensor(go, device=dev)
                    y, r, bm, target, den = (t.index_select(0, sel)
                                             for t in (y, r, bm, target, den))
                    act, pos = [act[a] for a in go], [pos[a] for a in go]
                y = torch.addcmul(y, r, den)
    bad = [i for i in range(b) if fell[i]]
    if bad:
        idx = torch.tensor(bad, device=dev)
        w, v = torch.linalg.eigh(mats.index_select(0, idx))
        w = w.clamp_min(tiny).rsqrt()
        x = (v * w.unsqueeze(-2)) @ v.mT
        if full is None:
            full = x
        else:
            full.index_copy_(0, idx, x)
        y = torch.diag_embed(w)
        for a, i in enumerate(bad):
            resid[i] = 0.0
            changed[i] = (v[a], y[a])
    return full, changed, iters, resid


class ASGO(AdaptivePreconditionedSGD):
    """ASGO / one-sided Shampoo (full-matrix AdaGrad on one side of each matrix parameter).

    Args:
        params: parameters or parameter groups.
        lr: η, a distance: σ_max(X_0 − X*)/√n (side left; √m for right) (Alg. 1).
        eps: δ > 0, added to the preconditioned side's matrix before the root.
        side: ``"left"`` (m×m, default), ``"right"`` (n×n) or ``"smaller"``.
        precision: ``"float64"`` (default) or ``"float32"`` for the inverse square root.
        root: ``"newton"`` (default; warm-started, certified to ``root_tol``, ``eigh``
            fallback) or ``"eigh"`` (an eigendecomposition every step); module docstring.
        root_tol: bound on ``‖I − X A X‖_F`` of the accepted root (``None``: 1e-6 for float64,
            1e-3 for float32, at least the resolution of the state's dtype).
        root_iters: most Newton iterations per step before falling back to ``eigh``.
        nesterov: Algorithm 2 (beyond the paper's theory for this 𝓗; warns).
        average: Algorithm 1's :meth:`output` is the iterate average (paper) or the last iterate.
        maximize: maximize the objective.
        foreach: batch same-sized preconditioner roots (default: on CUDA).

    Attributes:
        root_stats: ``{"last": [...], "newton": n, "eigh": n, "iterations": n, "skipped": n}``
            -- for each preconditioner of the last step ``(k, method, iterations, residual,
            tol)`` (residual ``‖I − XAX‖_F`` of the accepted root, 0 after an ``eigh``), and
            totals over all steps (roots accepted from Newton, ``eigh`` calls, iterations,
            Newton attempts skipped by the back-off).

    Example:
        >>> import torch
        >>> from optzoo.optim import ASGO
        >>> _ = torch.manual_seed(0)
        >>> W = torch.nn.Parameter(torch.zeros(4, 6))
        >>> target = torch.randn(4, 6)
        >>> opt = ASGO([W], lr=0.5)  # lr: η, a distance (σ_max(W_0 − W*)/√6 here)
        >>> for _ in range(30):
        ...     opt.zero_grad()
        ...     loss = ((W - target) ** 2).sum()
        ...     loss.backward()
        ...     _ = opt.step()
        >>> bool(loss < 1.0), opt.output()[W].shape  # output(): the iterate average
        (True, torch.Size([4, 6]))
    """

    def __init__(self, params: Iterable[Any], lr: float = 1.0, eps: float = 1e-8, *,
                 side: str = "left", precision: str = "float64", root: str = "newton",
                 root_tol: float | None = None, root_iters: int = 8, nesterov: bool = False,
                 average: bool = True, maximize: bool = False,
                 foreach: bool | None = None) -> None:
        if side not in _SIDES:
            raise ValueError(f"side: expected one of {_SIDES}, got {side!r}")
        if precision not in _PRECISIONS:
            raise ValueError(f"precision: expected one of {tuple(_PRECISIONS)}, got {precision!r}")
        if root not in _ROOTS:
            raise ValueError(f"root: expected one of {_ROOTS}, got {root!r}")
        if root_tol is not None:
            check_hyper("root_tol", root_tol, low=0.0, low_open=True)
        if isinstance(root_iters, bool) or not isinstance(root_iters, int) or root_iters < 0:
            raise ValueError(f"root_iters: expected an int >= 0, got {root_iters!r}")
        if nesterov is True:
            warnings.warn("ASGO(nesterov=True): the paper proves acceleration only for commuting "
                          "(scalar/diagonal) preconditioners; accelerated one-sided Shampoo is an "
                          "extrapolation beyond it", UserWarning, stacklevel=2)
        super().__init__(params, lr=lr, eps=eps, nesterov=nesterov, average=average,
                         maximize=maximize, foreach=foreach, side=side, precision=precision,
                         root=root, root_tol=root_tol, root_iters=root_iters)
        self.root_stats: dict[str, Any] = {"last": [], "newton": 0, "eigh": 0, "iterations": 0,
                                           "skipped": 0}

    def _step_group(self, group: dict, params: list, grads: list) -> None:
        # before the accumulator is touched: a non-finite G would poison S_k for good and make
        # the eigendecomposition fail with an unnamed LinAlgError
        self._check_no_nan(grads, "the preconditioner's eigendecomposition needs finite ones",
                           inf=True)
        super()._step_group(group, params, grads)

    def step(self, closure=None):
        self.root_stats["last"] = []
        return super().step(closure)

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

    def _roots(self, states: list[dict], mats: list[torch.Tensor], group: dict) -> list:
        """Inverse square roots of same-sized ``mats`` (one batch) by ``group["root"]``."""
        if group["root"] == "eigh" or mats[0].shape[0] < _MIN_NEWTON:
            batch = inverse_sqrt(torch.stack(mats))
            self.root_stats["eigh"] += len(mats)
            self.root_stats["last"] += [(m.shape[0], "eigh", 0, 0.0, 0.0) for m in mats]
            return list(batch)
        pdt, k = mats[0].dtype, mats[0].shape[0]
        sdt = states[0]["precond_sum"].dtype
        tol = group["root_tol"] or default_root_tol(pdt, sdt, k)
        full = None
        cold = not all(_WARM[0] in s for s in states)
        # a cold start (first step, or a state saved with root="eigh") is an eigh; so is a
        # batch whose Newton attempts are all being skipped (then the warm start is not read)
        if not cold and not all(s.get("root_skip", 0) > 0 for s in states):
            full = torch.stack([s[_WARM[0]] for s in states]).to(pdt)

        def load(idx: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
            return tuple(torch.stack([states[i][key] for i in idx]).to(pdt)
                         for key in _WARM[1:])

        # back-off: after a Newton attempt that failed or needed more than _FAST_ITERS
        # iterations, skip Newton for 1, 2, 4, ... 64 steps (the root changes too fast for a
        # warm start to pay; eigh each step meanwhile)
        skip = [bool(s.get("root_skip", 0) > 0) for s in states]
        # the 2 k³ check of the stored root pays only where the last step accepted it as is
        precheck = [bool(s.get("root_iters_last", 0) == 0) for s in states]
        full, changed, iters, resid = newton_inverse_sqrt(
            torch.stack(mats), full, load, [tol] * len(mats), group["root_iters"],
            orthonormal=torch.finfo(sdt).eps <= torch.finfo(pdt).eps, skip=skip,
            precheck=precheck)
        fell = [i in changed and changed[i][0] is not None for i in range(len(mats))]
        for i, s in enumerate(states):
            if cold:
                v, y = changed[i]
                s.update({_WARM[0]: full[i].to(sdt), _WARM[1]: v.to(sdt), _WARM[2]: y.to(sdt)})
                s["root_skip"] = torch.zeros((), dtype=sdt, device=v.device)
                s["root_backoff"] = torch.zeros((), dtype=sdt, device=v.device)
                s["root_iters_last"] = torch.zeros((), dtype=sdt, device=v.device)
                continue
            if "root_iters_last" not in s:
                s["root_iters_last"] = torch.zeros((), dtype=sdt, device=s[_WARM[0]].device)
            s["root_iters_last"].fill_(min(iters[i], 1) if not fell[i] else 1)
            if i in changed:
                v, y = changed[i]
                s[_WARM[0]].copy_(full[i])
                s[_WARM[2]].copy_(y)
                if v is not None:
                    s[_WARM[1]].copy_(v)
            if skip[i]:
                s["root_skip"] -= 1
            elif fell[i] or iters[i] > _FAST_ITERS:  # the attempt did not pay
                s["root_backoff"].copy_((2 * s["root_backoff"]).clamp(1, _MAX_BACKOFF))
                s["root_skip"].copy_(s["root_backoff"])
            else:
                s["root_backoff"].zero_()
        out = list(full)
        n_eigh = sum(fell)
        self.root_stats["eigh"] += n_eigh
        self.root_stats["newton"] += len(mats) - n_eigh
        self.root_stats["iterations"] += sum(iters)
        self.root_stats["last"] += [(k, "eigh" if f else "newton", it, r, tol)
                                    for f, it, r in zip(fell, iters, resid, strict=True)]
        self.root_stats["skipped"] += sum(skip)
        return out

    def _precondition(self, state, g, group):
        g2, left, mat = self._root_input(state, g, group)
        return self._apply(self._roots([state], [mat], group)[0], g2, left, group, g)

    def _precondition_foreach(self, states, gs, group):
        inputs = [self._root_input(s, g, group) for s, g in zip(states, gs, strict=True)]
        buckets: dict[int, list[int]] = defaultdict(list)
        for i, (_, _, mat) in enumerate(inputs):
            buckets[mat.shape[0]].append(i)
        roots: list = [None] * len(inputs)
        for idx in buckets.values():
            batch = self._roots([states[i] for i in idx], [inputs[i][2] for i in idx], group)
            for j, i in enumerate(idx):
                roots[i] = batch[j]
        return [self._apply(r, g2, left, group, g)
                for r, (g2, left, _), g in zip(roots, inputs, gs, strict=True)]

    def preconditioner(self, p: torch.Tensor) -> torch.Tensor:
        """The matrix B_k (k×k, k the preconditioned side) with ``H_k G = B_k G`` (left) or
        ``G B_k`` (right): ``η (δI + S_k / other side)^{-1/2}``, by ``eigh`` (exact)."""
        group = self._group_of(p)
        acc = self.state[p]["precond_sum"].to(_PRECISIONS[group["precision"]])
        m, n = as_matrix(p).shape
        other = n if self._left((m, n), group["side"]) else m
        eye = torch.eye(acc.shape[0], dtype=acc.dtype, device=acc.device)
        return group["lr"] * inverse_sqrt(acc / max(other, 1) + group["eps"] * eye)
