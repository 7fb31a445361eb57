"""Graphs: spectral sparsifiers of kernel graphs, static and fully dynamic (DynamicGeoSpar).

Example:
    Sparsify the kernel graph of 600 points, move some of them, and compare quadratic forms:

    >>> from optzoo.graphs import (DynamicSpectralSparsifier, InversePolynomialKernel,
    ...                            gaussian_mixture, move_stream, probe_vectors,
    ...                            quadratic_form_ratios)
    >>> x = gaussian_mixture(600, 2, centers=4, seed=0)
    >>> kernel = InversePolynomialKernel(1.0)        # K(x, y) = 1 / (1 + ‖x − y‖²)²
    >>> h = DynamicSpectralSparsifier(x, kernel, eps=0.5, separation=2.0, oversample=0.02, seed=0)
    >>> h.num_edges() < 600 * 599 // 2
    True
    >>> for i, x_new in move_stream(x, 20, "mixed", seed=1):   # H is repaired locally
    ...     stats = h.move(i, x_new)
    >>> ratios = quadratic_form_ratios(h.laplacian(), h.x, kernel, probe_vectors(h.x, 12, seed=2))
    >>> bool(0.5 < ratios.min() <= ratios.max() < 1.5)       # vᵀL_H v / vᵀL_G v
    True
"""

from optzoo.graphs.dynamic_spectral_sparsifier import DynamicSpectralSparsifier, UpdateStats
from optzoo.graphs.problems import (
    GaussianKernel,
    InversePolynomialKernel,
    check_kernel,
    gaussian_mixture,
    kernel_laplacian,
    kernel_laplacian_matvec,
    kernel_matrix,
    make_kernel,
    make_points,
    move_stream,
    padded_bounds,
    swiss_roll,
)
from optzoo.graphs.spectral_sparsifier import (
    DENSE_FRACTION,
    DenseSparsifierWarning,
    SpectralSparsifier,
    pcg_iterations,
    probe_vectors,
    quadratic_form_ratios,
    relative_spectral_error,
    uniform_edge_sample,
)

__all__ = [
    "DENSE_FRACTION",
    "DenseSparsifierWarning",
    "DynamicSpectralSparsifier",
    "GaussianKernel",
    "InversePolynomialKernel",
    "SpectralSparsifier",
    "UpdateStats",
    "check_kernel",
    "gaussian_mixture",
    "kernel_laplacian",
    "kernel_laplacian_matvec",
    "kernel_matrix",
    "make_kernel",
    "make_points",
    "move_stream",
    "padded_bounds",
    "pcg_iterations",
    "probe_vectors",
    "quadratic_form_ratios",
    "relative_spectral_error",
    "swiss_roll",
    "uniform_edge_sample",
]
