"""Transport (hj-optimal-transport): NCF's out-of-sample map vs POT's exact assignment.

Once fitted, :class:`optzoo.transport.HJOptimalTransport` transports any number of points by one
gradient evaluation of its potential, T(x) = x + ∇u(x, 0).  The peer is what a user of POT runs
to transport a sample: the exact OT plan ``ot.emd`` between n source and n target points (the
assignment; the squared-Euclidean cost matrix is built outside the timer).  Rows: time of
``transform`` on N = 10⁴ points (after a short fit, which is not timed: the map's cost does not
depend on how well it was trained) vs ``ot.emd`` at n = 2 000 and 4 000, 2-D Gaussians, float64
for POT, float32 network (the library's default), torch's default thread count.
"""

from __future__ import annotations

import time

import numpy as np

N_TRANSPORT, EMD_SIZES, DIM = 10_000, (2_000, 4_000), 2
FIT_STEPS, HIDDEN, LAYERS = 50, 128, 4
BLOCKS = 3


def _samples(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, DIM)), 0.5 * rng.standard_normal((n, DIM)) + 2.0


def _ncf_transform_seconds() -> float:
    from optzoo.transport import HJOptimalTransport

    xs, xt = _samples(2_000, 0)
    model = HJOptimalTransport(hidden=HIDDEN, layers=LAYERS, steps=FIT_STEPS, batch_size=256,
                               seed=0).fit(xs, xt)
    x = _samples(N_TRANSPORT, 1)[0]
    model.transform(x[:10])  # warm-up
    best = float("inf")
    for _ in range(BLOCKS):
        t0 = time.perf_counter()
        model.transform(x)
        best = min(best, time.perf_counter() - t0)
    return best


def _emd_seconds(n: int) -> float:
    import ot

    xs, xt = _samples(n, 2)
    a = b = np.full(n, 1.0 / n)
    M = ot.dist(xs, xt)
    best = float("inf")
    for _ in range(BLOCKS):
        t0 = time.perf_counter()
        ot.emd(a, b, M, numItermax=10_000_000)
        best = min(best, time.perf_counter() - t0)
    return best


def _row(n: int) -> dict:
    return {"name": f"transport.ncf_transform_n{N_TRANSPORT}_vs_emd_n{n}_d{DIM}",
            "method": f"HJOptimalTransport.transform ({LAYERS}x{HIDDEN} MLP)",
            "peer": f"POT ot.emd (n={n})", "method_s": _ncf_transform_seconds(),
            "peer_s": _emd_seconds(n)}


def bench_transform_vs_emd_small() -> dict:
    return _row(EMD_SIZES[0])


def bench_transform_vs_emd_large() -> dict:
    return _row(EMD_SIZES[1])


BENCHMARKS = [bench_transform_vs_emd_small, bench_transform_vs_emd_large]
