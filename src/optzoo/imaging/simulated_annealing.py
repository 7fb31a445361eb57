"""Sparse-kernel search by parallel tempering with annealing, the PST/SA baseline of the DISK paper
(Wu, Cao & Huo, "DISK: Differentiable Sparse Kernel Complex for Efficient Spatially-Variant
Convolution", ICLR 2026, OpenReview ``bbuxDoRD2D``; PST = Schuster, Trettner & Kobbelt,
"High-Performance Image Filters via Sparse Approximations", 2020).

Same representation and loss as :mod:`optzoo.imaging.sparse_kernel_decomposition`: L layers of N
bilinear taps with sub-pixel offsets and weights, Charbonnier loss on the impulse response.
``chains`` candidates run in parallel at a geometric temperature ladder; each step every chain
proposes one move (one tap's offset by a Gaussian step, or its weight), accepted by Metropolis;
every ``swap_every`` steps neighbouring chains try to swap states (parallel tempering); the whole
ladder cools geometrically by ``cooling`` over the run (annealing) and the offset/weight step
sizes shrink with it.  The best state ever seen is returned, rescaled to the target's mass
(``keep_mass``, the same post-fit step as DISK's, so that both are compared alike).  The paper
gives PST 10 chains × 10,000 iterations; the budget here is ``chains × steps`` loss evaluations
(each a loss without a gradient).

Offsets of layer ``l`` are confined to a box of half-width ``b_l`` = the initial layer extent plus
``R/4`` (at most the target's grid), so all chains share one FFT grid that holds the full
composite support (evaluations are batched over chains: two real FFTs per step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import fft as sfft

from optzoo.imaging.dense_convolution import check_kernel
from optzoo.imaging.problems import support_radius
from optzoo.imaging.sparse_kernel_decomposition import (
    ETA_REL,
    SparseKernelComplex,
    initial_complex,
)


@dataclass
class AnnealResult:
    """Best complex found, its loss, the best loss after each step, the acceptance rate, the
    number of loss evaluations and the best complex's mass before renormalisation."""

    complex: SparseKernelComplex
    loss: float
    best_losses: list[float] = field(default_factory=list)
    acceptance: float = 0.0
    evaluations: int = 0
    raw_mass: float = math.nan


def _splat_circular(offsets: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """Bilinear splats of ``(C, N, 2)`` taps on ``(C, size, size)`` grids, origin at index 0."""
    c = offsets.shape[0]
    i0 = np.floor(offsets)
    f = offsets - i0
    i0 = i0.astype(np.int64)
    out = np.zeros((c, size * size))
    rows = np.arange(c)[:, None] * (size * size)
    fy, fx = f[..., 0], f[..., 1]
    for dy, dx, wgt in ((0, 0, (1 - fy) * (1 - fx)), (0, 1, (1 - fy) * fx),
                        (1, 0, fy * (1 - fx)), (1, 1, fy * fx)):
        idx = rows + ((i0[..., 0] + dy) % size) * size + (i0[..., 1] + dx) % size
        out += np.bincount(idx.ravel(), (weights * wgt).ravel(),
                           minlength=c * size * size).reshape(c, -1)
    return out.reshape(c, size, size)


def anneal_sparse_kernel(target: np.ndarray, n_taps: int = 12, n_layers: int = 4,
                         init: str | SparseKernelComplex = "ss", steps: int = 1000,
                         chains: int = 10, swap_every: int = 10, t_high: float = 3e-2,
                         t_low: float = 1e-4, cooling: float = 1e-2, eta: float | None = None,
                         seed: int = 0, keep_mass: bool = True) -> AnnealResult:
    """Search a complex for ``target`` by parallel tempering + annealing (module docstring).

    Args:
        target: odd square dense kernel.
        n_taps, n_layers: N taps in each of L layers.
        init: ``"ss"``, ``"ir"``, ``"random"`` (as DISK's) or a complex; all chains start there.
        steps: proposals per chain.
        chains: parallel chains (PST: 10).
        swap_every: steps between neighbour swap attempts.
        t_high, t_low: hottest / coldest temperature as fractions of the initial loss excess
            over the Charbonnier floor.
        cooling: factor the ladder is multiplied by at the end of the run (geometric schedule).
        eta: Charbonnier η (default as DISK's).
        seed: seeds the initialisation and the moves.
        keep_mass: renormalise the best complex to the target's mass, as DISK's fit does
            (:meth:`SparseKernelComplex.with_mass`); ``loss`` and ``best_losses`` stay those of
            the search.
    """
    tgt = check_kernel(target, "target")
    for name, v, lo in (("steps", steps, 0), ("chains", chains, 1), ("swap_every", swap_every, 1)):
        if not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name}: expected an integer >= {lo}, got {v!r}")
    if not 0 < t_low <= t_high or not 0 < cooling <= 1:
        raise ValueError(f"t_low, t_high, cooling: expected 0 < t_low <= t_high and "
                         f"0 < cooling <= 1, got {t_low}, {t_high}, {cooling}")
    rng = np.random.default_rng(seed)
    start = init.copy() if isinstance(init, SparseKernelComplex) else \
        initial_complex(tgt, n_taps, n_layers, init, rng)
    layers = start.numpy_layers()
    n_layers, n_taps = len(layers), layers[0][0].shape[0]
    if any(o.shape[0] != n_taps for o, _ in layers):
        raise ValueError("init: annealing needs the same number of taps in every layer")
    radius = support_radius(tgt)
    rt = tgt.shape[0] // 2
    bounds = np.array([min(rt - 1.0, float(np.abs(o).max()) + radius / 4) for o, _ in layers])
    size = sfft.next_fast_len(max(2 * int(np.sum(np.ceil(bounds) + 1)) + 1, 2 * rt + 1),
                              real=True)
    eta = ETA_REL * float(np.abs(tgt).max()) if eta is None else float(eta)
    tc = np.zeros((size, size))
    tc[:2 * rt + 1, :2 * rt + 1] = tgt
    tc = np.roll(tc, (-rt, -rt), axis=(0, 1))  # target centred at index 0 (circular frame)

    offs = np.broadcast_to(np.stack([o for o, _ in layers]), (chains, n_layers, n_taps, 2)).copy()
    wts = np.broadcast_to(np.stack([w for _, w in layers]), (chains, n_layers, n_taps)).copy()
    specs = np.stack([sfft.rfft2(_splat_circular(offs[:, li], wts[:, li], size))
                      for li in range(n_layers)], axis=1)  # (C, L, size, size//2+1)

    def loss_of(spec_prod):
        k = sfft.irfft2(spec_prod, s=(size, size))
        return np.sqrt((k - tc) ** 2 + eta * eta).sum(axis=(1, 2))

    cur = loss_of(np.prod(specs, axis=1))
    floor = eta * size * size
    excess0 = max(float(cur[0]) - floor, 1e-30)
    ladder = excess0 * np.geomspace(t_low, t_high, chains)
    best_i = int(np.argmin(cur))
    best = (float(cur[best_i]), offs[best_i].copy(), wts[best_i].copy())
    history, accepted = [], 0
    ar = np.arange(chains)
    w_scale = float(np.abs(wts).mean())
    for step in range(steps):
        progress = step / max(1, steps - 1)
        temps = ladder * cooling ** progress
        li = rng.integers(n_layers, size=chains)
        ti = rng.integers(n_taps, size=chains)
        move_offset = rng.random(chains) < 0.5
        new_o = offs[ar, li].copy()  # (C, N, 2)
        new_w = wts[ar, li].copy()
        o_step = max(0.25, 0.15 * radius * (1 - progress))
        new_o[ar, ti] += np.where(move_offset[:, None],
                                  rng.normal(0.0, o_step, size=(chains, 2)), 0.0)
        new_o = np.clip(new_o, -bounds[li][:, None, None], bounds[li][:, None, None])
        new_w[ar, ti] += np.where(move_offset, 0.0,
                                  rng.normal(0.0, 0.3 * w_scale * (1 - 0.9 * progress), chains))
        new_spec = sfft.rfft2(_splat_circular(new_o, new_w, size))
        prod = new_spec.copy()
        for c in range(chains):
            for k in range(n_layers):
                if k != li[c]:
                    prod[c] *= specs[c, k]
        cand = loss_of(prod)
        uphill = np.maximum(cand - cur, 0.0)
        accept = (cand <= cur) | (rng.random(chains) < np.exp(-uphill / temps))
        for c in np.nonzero(accept)[0]:
            offs[c, li[c]] = new_o[c]
            wts[c, li[c]] = new_w[c]
            specs[c, li[c]] = new_spec[c]
        cur = np.where(accept, cand, cur)
        accepted += int(accept.sum())
        i = int(np.argmin(cur))
        if cur[i] < best[0]:
            best = (float(cur[i]), offs[i].copy(), wts[i].copy())
        if (step + 1) % swap_every == 0:
            for c in range((step // swap_every) % 2, chains - 1, 2):
                a = (1 / temps[c] - 1 / temps[c + 1]) * (cur[c] - cur[c + 1])
                if a >= 0 or rng.random() < math.exp(a):
                    for arr in (offs, wts, specs, cur):
                        arr[[c, c + 1]] = arr[[c + 1, c]]
        history.append(best[0])
    cplx = SparseKernelComplex(list(best[1]), list(best[2]), scale=start.scale)
    raw_mass = cplx.mass()
    if keep_mass and float(tgt.sum()) > 0 and cplx.mass() != 0.0:
        cplx = cplx.with_mass(float(tgt.sum()))
    return AnnealResult(complex=cplx, loss=best[0], best_losses=history,
                        acceptance=accepted / max(1, steps * chains),
                        evaluations=steps * chains, raw_mass=raw_mass)
