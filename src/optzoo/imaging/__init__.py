"""Imaging: sparse kernel decomposition (DISK, Wu, Cao & Huo, ICLR 2026) and its baselines —
dense FFT convolution, low-rank separable filters and a PST-style annealing search.

Example:
    Fit a sparse kernel complex to a defocus disc and blur an image with it:

    >>> import torch
    >>> from optzoo.imaging import fit_sparse_kernel
    >>> from optzoo.imaging.problems import disc_kernel
    >>> target = disc_kernel(5.0)                    # a 13 x 13 defocus (bokeh) disc
    >>> disk = fit_sparse_kernel(target, n_taps=8, n_layers=3, steps=20, seed=0).complex
    >>> disk.taps, target.size                       # taps per pixel instead of 169
    (24, 169)
    >>> disk(torch.rand(64, 64, dtype=torch.float64)).shape   # (H, W) -> (H, W), differentiable
    torch.Size([64, 64])
"""

from optzoo.imaging.dense_convolution import dense_filter
from optzoo.imaging.low_rank import LowRankFilter, apply_low_rank, low_rank_decomposition
from optzoo.imaging.simulated_annealing import AnnealResult, anneal_sparse_kernel
from optzoo.imaging.sparse_kernel_decomposition import (
    FitResult,
    SparseKernelComplex,
    apply_sparse,
    apply_spatially_varying,
    charbonnier,
    fit_sparse_kernel,
    grid_weights,
    initial_complex,
    interpolate_complex,
    interpolation_weights,
    kernel_errors,
    poisson_disk_samples,
    radial_init,
    random_init,
    sparse_sampling_init,
    splat,
)

__all__ = [
    "AnnealResult",
    "FitResult",
    "LowRankFilter",
    "SparseKernelComplex",
    "anneal_sparse_kernel",
    "apply_low_rank",
    "apply_sparse",
    "apply_spatially_varying",
    "charbonnier",
    "dense_filter",
    "fit_sparse_kernel",
    "grid_weights",
    "initial_complex",
    "interpolate_complex",
    "interpolation_weights",
    "kernel_errors",
    "low_rank_decomposition",
    "poisson_disk_samples",
    "radial_init",
    "random_init",
    "sparse_sampling_init",
    "splat",
]
