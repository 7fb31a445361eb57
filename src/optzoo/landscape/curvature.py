"""Curvature along a low-loss path: Hutchinson Hessian trace and top Hessian eigenvalues.

Di Carlo, Goddard & Schwab, "Entropic Confinement and Mode Connectivity in Overparameterized
Neural Networks" (ICLR 2026, arXiv 2512.06297), §4 step 3: the curvature of the loss at points
of a path joining two minima, here with two of the paper's estimators built on exact
Hessian-vector products (double backward through ``torch.func.functional_call``):

* ``tr H`` by Hutchinson's estimator ``E_z[zᵀ H z]`` with Rademacher probes ``z``;
* the top eigenvalues of ``H`` by Lanczos with full reorthogonalisation (the paper uses power
  iteration for ``λ_max``; Lanczos on the same HVPs converges faster and gives several).

* ``tr F``, the trace of the Fisher information ``F = E[s sᵀ]`` of the per-sample score
  ``s = ∇_θ log p(y | x)`` (the paper's Hessian proxy at minima), by :func:`fisher_trace`:
  exact per-sample gradients (``torch.func.vmap`` of ``jacrev``) of every class's log-probability.
  Reading: with ``labels="model"`` (default) ``y`` is drawn from the model's own softmax, summed
  exactly over the classes -- the "true" Fisher, equal to the Gauss-Newton matrix of the
  cross-entropy, which is what makes it a Hessian proxy; ``labels="data"`` uses the training
  labels (the "empirical" Fisher, which vanishes with the loss at an interpolating minimum).

The score-SVD estimator of the paper is not implemented.  Everything works on any
``torch.nn.Module`` and loss ``loss_fn(outputs, targets)``, with the parameters given as one flat
vector (the model's own parameters are left untouched).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch
from torch import nn

FlatLoss = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def flat_params(model: nn.Module) -> torch.Tensor:
    """The model's parameters as one detached flat vector (``named_parameters`` order)."""
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).clone()


def functional_loss(model: nn.Module, loss_fn: Callable) -> FlatLoss:
    """``f(theta, inputs, targets)``: the loss of ``model`` with flat parameters ``theta``.

    Buffers are the model's own; ``theta`` may require grad (double backward works through it).
    """
    named = [(n, p.shape, p.numel()) for n, p in model.named_parameters()]
    numels = [k for _, _, k in named]
    buffers = dict(model.named_buffers())

    def f(theta: torch.Tensor, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        parts = theta.split(numels)
        params = {n: t.view(s) for (n, s, _), t in zip(named, parts, strict=True)}
        out = torch.func.functional_call(model, (params, buffers), (inputs,))
        return loss_fn(out, targets)

    return f


def hvp(f: FlatLoss, theta: torch.Tensor, data: tuple[torch.Tensor, torch.Tensor],
        v: torch.Tensor) -> torch.Tensor:
    """Exact Hessian-vector product ``∇²f(theta) v`` on the batch ``data`` (double backward)."""
    w = theta.detach().requires_grad_(True)
    (g,) = torch.autograd.grad(f(w, *data), w, create_graph=True)
    (hv,) = torch.autograd.grad(g @ v, w)
    return hv.detach()


def hutchinson_trace(f: FlatLoss, theta: torch.Tensor, data: tuple[torch.Tensor, torch.Tensor],
                     probes: int = 50, generator: torch.Generator | None = None
                     ) -> tuple[float, float]:
    """Hutchinson's ``tr H ≈ mean_i z_iᵀ H z_i`` (Rademacher ``z_i``); returns (mean, std. err.)."""
    if probes < 1:
        raise ValueError(f"probes: expected >= 1, got {probes}")
    vals = []
    for _ in range(probes):
        z = torch.randint(0, 2, theta.shape, generator=generator).to(theta.dtype) * 2 - 1
        vals.append(float(z @ hvp(f, theta, data, z)))
    t = torch.tensor(vals, dtype=torch.float64)
    se = float(t.std() / math.sqrt(probes)) if probes > 1 else math.nan
    return float(t.mean()), se


def lanczos_eigenvalues(f: FlatLoss, theta: torch.Tensor,
                        data: tuple[torch.Tensor, torch.Tensor], k: int = 1, iters: int = 20,
                        generator: torch.Generator | None = None) -> list[float]:
    """The ``k`` largest (algebraic) Ritz values of ``H`` after ``iters`` Lanczos steps.

    Full reorthogonalisation keeps the Krylov basis orthonormal, so with ``iters ≥ dim`` the
    Ritz values are the exact eigenvalues (up to round-off).
    """
    if k < 1 or iters < 1:
        raise ValueError(f"k, iters: expected >= 1, got k={k}, iters={iters}")
    dim = theta.numel()
    m = min(iters, dim)
    v = torch.randn(dim, generator=generator, dtype=torch.float64).to(theta.dtype)
    v = v / v.norm()
    basis, alphas, betas = [v], [], []
    for j in range(m):
        w = hvp(f, theta, data, basis[-1])
        alphas.append(float(w @ basis[-1]))
        q = torch.stack(basis)
        for _ in range(2):  # twice is enough (Kahan-Parlett)
            w = w - q.T @ (q @ w)
        beta = float(w.norm())
        if j == m - 1 or beta <= 1e-10 * max(1.0, abs(alphas[-1])):
            break  # invariant subspace found, or budget spent
        betas.append(beta)
        basis.append(w / beta)
    tri = torch.diag(torch.tensor(alphas, dtype=torch.float64))
    if betas:
        off = torch.tensor(betas[: len(alphas) - 1], dtype=torch.float64)
        tri = tri + torch.diag(off, 1) + torch.diag(off, -1)
    ev = torch.linalg.eigvalsh(tri).flip(0)
    return [float(x) for x in ev[:k]]


def fisher_trace(model: nn.Module, theta: torch.Tensor,
                 data: tuple[torch.Tensor, torch.Tensor], labels: str = "model",
                 chunk: int = 128) -> float:
    """Trace of the Fisher information of a softmax classifier at flat parameters ``theta``:
    ``(1/n) Σ_i Σ_c p_ic ‖∇_θ log p_ic‖²`` (``labels="model"``) or ``(1/n) Σ_i ‖∇_θ log
    p_{i,y_i}‖²`` (``labels="data"``); ``model(inputs)`` must return logits ``(n, classes)``.

    Per-sample gradients come in chunks of ``chunk`` samples (memory ``chunk·classes·dim``).
    """
    if labels not in ("model", "data"):
        raise ValueError(f"labels: expected 'model' or 'data', got {labels!r}")
    if chunk < 1:
        raise ValueError(f"chunk: expected >= 1, got {chunk}")
    named = [(n, p.shape, p.numel()) for n, p in model.named_parameters()]
    numels = [k for _, _, k in named]
    buffers = dict(model.named_buffers())
    if theta.ndim != 1 or theta.numel() != sum(numels):
        raise ValueError(f"theta: expected a flat vector of {sum(numels)} parameters, got shape "
                         f"{tuple(theta.shape)}")

    def logp(w: torch.Tensor, xi: torch.Tensor) -> torch.Tensor:
        params = {n: t.view(s) for (n, s, _), t in zip(named, w.split(numels), strict=True)}
        out = torch.func.functional_call(model, (params, buffers), (xi.unsqueeze(0),))
        return torch.log_softmax(out.squeeze(0), dim=-1)

    jac = torch.func.vmap(torch.func.jacrev(logp), in_dims=(None, 0))
    x, y = data
    total, w = 0.0, theta.detach()
    for i in range(0, x.shape[0], chunk):
        xb, yb = x[i:i + chunk], y[i:i + chunk]
        g = jac(w, xb)  # (b, classes, dim): ∇ log p_c for every sample and class
        sq = (g**2).sum(-1)  # (b, classes)
        if labels == "model":
            with torch.no_grad():
                p = torch.vmap(logp, in_dims=(None, 0))(w, xb).exp()
            total += float((p * sq).sum())
        else:
            total += float(sq.gather(1, yb.long().view(-1, 1)).sum())
    return total / x.shape[0]


def curvature_profile(model: nn.Module, loss_fn: Callable, path, ts: Sequence[float],
                      data: tuple[torch.Tensor, torch.Tensor], probes: int = 50, top_k: int = 1,
                      lanczos_iters: int = 20, generator: torch.Generator | None = None
                      ) -> list[dict[str, float]]:
    """Loss, Hutchinson ``tr H`` (and its standard error) and the ``top_k`` Lanczos eigenvalues
    at ``path(t)`` for each ``t`` in ``ts``, on the batch ``data`` (use the full training set).

    ``path`` is anything callable ``t -> flat parameters`` (e.g. a
    :class:`~optzoo.landscape.mode_connectivity.LowLossPath`).
    """
    f = functional_loss(model, loss_fn)
    rows = []
    for t in ts:
        theta = path(float(t)).detach()
        with torch.no_grad():
            loss = float(f(theta, *data))
        tr, se = hutchinson_trace(f, theta, data, probes=probes, generator=generator)
        eig = lanczos_eigenvalues(f, theta, data, k=top_k, iters=lanczos_iters,
                                  generator=generator)
        row = {"t": float(t), "loss": loss, "trace": tr, "trace_se": se}
        row.update({f"lambda_{i + 1}": e for i, e in enumerate(eig)})
        rows.append(row)
    return rows
