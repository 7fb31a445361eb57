"""Graphs: spectral sparsifiers of kernel graphs, static and fully dynamic (DynamicGeoSpar)."""

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
