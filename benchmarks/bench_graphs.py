"""Graphs (dynamic-spectral-sparsifier): one dynamic update vs a static rebuild, and L·v through
the sparsifier vs the dense kernel Laplacian.

* update: ``DynamicSpectralSparsifier.move`` (mean over ``MOVES`` mixed moves) vs building
  ``SpectralSparsifier`` from scratch on the same points (what a user without the dynamic
  structure pays per move); n = ``N_UPDATE`` blobs in d = 2, kernel (1 + t/4)^-2, s = 2, ε = 0.5,
  c = 0.05 (the reproduction's setting).
* matvec: L_H v with the CSR sparsifier Laplacian vs L_G v with the dense kernel Laplacian
  (NumPy, formed once: the peer at a size where dense is still feasible), n = ``N_MATVEC``.
"""

from __future__ import annotations

import time

import numpy as np

N_UPDATE, N_MATVEC, MOVES, REPEATS = 2000, 3000, 20, 5
SETTING = {"eps": 0.5, "separation": 2.0, "oversample": 0.05}


def _setup(n):
    from optzoo.graphs import InversePolynomialKernel, gaussian_mixture, padded_bounds

    x = gaussian_mixture(n, 2, seed=0)
    return x, InversePolynomialKernel(sigma=2.0), padded_bounds(x)


def bench_update_vs_rebuild() -> dict:
    from optzoo.graphs import DynamicSpectralSparsifier, SpectralSparsifier, move_stream

    x, kernel, bounds = _setup(N_UPDATE)
    h = DynamicSpectralSparsifier(x, kernel, bounds=bounds, seed=0, **SETTING)
    moves = list(move_stream(x, MOVES, "mixed", seed=1, bounds=bounds))
    t0 = time.perf_counter()
    for i, new in moves:
        h.move(i, new)
    t_update = (time.perf_counter() - t0) / len(moves)
    t_build = float("inf")
    for _ in range(max(1, REPEATS // 2)):
        t0 = time.perf_counter()
        SpectralSparsifier(h.x, kernel, bounds=bounds, seed=0, **SETTING)
        t_build = min(t_build, time.perf_counter() - t0)
    return {"name": f"graphs.update_vs_rebuild.n{N_UPDATE}", "method": "DynamicGeoSpar.move",
            "peer": "static WSPD rebuild", "method_s": t_update, "peer_s": t_build}


def bench_laplacian_matvec() -> dict:
    from optzoo.graphs import SpectralSparsifier, kernel_laplacian

    x, kernel, bounds = _setup(N_MATVEC)
    lap_h = SpectralSparsifier(x, kernel, bounds=bounds, seed=0, **SETTING).laplacian()
    lap_g = kernel_laplacian(x, kernel)
    v = np.random.default_rng(0).standard_normal(N_MATVEC)

    def best(fn):
        out = float("inf")
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            for _ in range(10):
                fn(v)
            out = min(out, (time.perf_counter() - t0) / 10)
        return out

    return {"name": f"graphs.laplacian_matvec.n{N_MATVEC}", "method": "L_H v (CSR sparsifier)",
            "peer": "L_G v (dense NumPy)", "method_s": best(lambda u: lap_h @ u),
            "peer_s": best(lambda u: lap_g @ u)}


BENCHMARKS = [bench_update_vs_rebuild, bench_laplacian_matvec]
