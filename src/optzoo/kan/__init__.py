"""Kolmogorov-Arnold networks: the two-layer KAN and its tangent kernel."""

from optzoo.kan.kan_tangent_kernel import (
    basis_kernel,
    gradient_gram,
    infinite_width_kernel,
    kan_tangent_kernel,
    kernel_spectrum,
    predicted_loss_curve,
)
from optzoo.kan.two_layer_kan import TwoLayerKAN, rbf, rbf_derivative

__all__ = [
    "TwoLayerKAN",
    "basis_kernel",
    "gradient_gram",
    "infinite_width_kernel",
    "kan_tangent_kernel",
    "kernel_spectrum",
    "predicted_loss_curve",
    "rbf",
    "rbf_derivative",
]
