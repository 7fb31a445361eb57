"""DISK (imaging area): time to filter an image with a fitted sparse kernel complex vs dense FFT
convolution and vs the low-rank separable filter of equal PSNR.

Wu, Cao & Huo, "DISK: Differentiable Sparse Kernel Complex for Efficient Spatially-Variant
Convolution" (ICLR 2026, OpenReview bbuxDoRD2D).  One complex is fitted once (12×4 taps,
``STEPS`` Adam steps, SS init) to a disc of radius ``RADIUS`` (bokeh, the paper's Fig. 4 kind
of kernel) and applied to scikit-image's ``camera`` at ``SIZE``² px, reflect borders everywhere:

* ``bench_sparse_vs_fftconvolve``: :func:`optzoo.imaging.apply_sparse` (torch, CPU, no grad,
  one thread count as torch's default) vs ``scipy.signal.fftconvolve`` of the padded image (the
  exact reference);
* ``bench_sparse_vs_low_rank``: the same sparse filter vs the SVD low-rank filter
  (``scipy.ndimage.convolve1d`` passes) of *equal PSNR*: the smallest rank whose PSNR against the
  dense reference on this image is at least the sparse filter's (ranks 1..``MAX_RANK``; if none
  reaches it, ``MAX_RANK``, and the row's name says so).

Times are seconds per megapixel (best of ``BLOCKS`` blocks of ``REPEATS`` runs after
``WARMUP``).  The paper counts a bilinear fetch as one tap (GPU texture units); on a CPU each tap
costs four shifted multiply-adds, so CPU ratios understate the paper's GPU/phone setting.
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np

RADIUS, SIZE, STEPS, N_TAPS, N_LAYERS, MAX_RANK = 24, 512, 1000, 12, 4, 8
BLOCKS, REPEATS, WARMUP = 3, 3, 1


@functools.lru_cache(maxsize=4)
def _setup(radius: int, size: int, steps: int):
    import torch

    from optzoo.imaging import dense_filter, fit_sparse_kernel
    from optzoo.imaging.problems import photo, shape_kernel

    torch.manual_seed(0)
    kernel = shape_kernel("disc", radius)
    cplx = fit_sparse_kernel(kernel, N_TAPS, N_LAYERS, init="ss", steps=steps, seed=0).complex
    img = photo("camera", min(size, 512))
    return kernel, cplx.numpy_layers(), img, dense_filter(img, kernel)


def _psnr(a, b) -> float:
    return 10 * math.log10(1.0 / max(float(np.mean((a - b) ** 2)), 1e-300))


def _per_megapixel(fn, pixels: int) -> float:
    for _ in range(WARMUP):
        fn()
    best = math.inf
    for _ in range(BLOCKS):
        t0 = time.perf_counter()
        for _ in range(REPEATS):
            fn()
        best = min(best, (time.perf_counter() - t0) / REPEATS)
    return best / (pixels / 1e6)


def _sparse(layers, img):
    import torch

    from optzoo.imaging import apply_sparse

    x = torch.as_tensor(img)

    def run():
        with torch.no_grad():
            return apply_sparse(x, layers)

    return run


def bench_sparse_vs_fftconvolve() -> dict:
    from optzoo.imaging import dense_filter

    kernel, layers, img, _ = _setup(RADIUS, SIZE, STEPS)
    ours = _per_megapixel(_sparse(layers, img), img.size)
    peer = _per_megapixel(lambda: dense_filter(img, kernel), img.size)
    return {"name": f"imaging.disc_r{RADIUS}.{N_TAPS}x{N_LAYERS}_vs_fft.s{img.shape[0]}",
            "method": "DISK apply_sparse (torch CPU)", "peer": "scipy.signal.fftconvolve",
            "method_s": ours, "peer_s": peer}


def bench_sparse_vs_low_rank() -> dict:
    import torch

    from optzoo.imaging import apply_low_rank, apply_sparse, low_rank_decomposition

    kernel, layers, img, ref = _setup(RADIUS, SIZE, STEPS)
    with torch.no_grad():
        level = _psnr(apply_sparse(img, layers), ref)
    rank, tag = MAX_RANK, f"r{MAX_RANK}_below"
    for r in range(1, min(MAX_RANK, kernel.shape[0]) + 1):
        if _psnr(apply_low_rank(img, low_rank_decomposition(kernel, r)), ref) >= level:
            rank, tag = r, f"r{r}"
            break
    lr = low_rank_decomposition(kernel, min(rank, kernel.shape[0]))
    ours = _per_megapixel(_sparse(layers, img), img.size)
    peer = _per_megapixel(lambda: apply_low_rank(img, lr), img.size)
    return {"name": f"imaging.disc_r{RADIUS}.{N_TAPS}x{N_LAYERS}_vs_lowrank_{tag}."
                    f"s{img.shape[0]}",
            "method": "DISK apply_sparse (torch CPU)",
            "peer": f"low-rank separable, rank {lr.rank} (equal PSNR)",
            "method_s": ours, "peer_s": peer}


BENCHMARKS = [bench_sparse_vs_fftconvolve, bench_sparse_vs_low_rank]
