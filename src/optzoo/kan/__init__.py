"""Kolmogorov-Arnold networks: the two-layer KAN and its tangent kernel.

Example:
    >>> import torch
    >>> from optzoo.kan import TwoLayerKAN, kan_tangent_kernel, predicted_loss_curve
    >>> gen = torch.Generator().manual_seed(0)
    >>> x = torch.rand(16, 2, generator=gen, dtype=torch.float64)   # inputs in [0, 1]^2
    >>> kan = TwoLayerKAN(d=2, width=256, g=8, generator=gen)      # f: (n, d) -> (n,)
    >>> h = kan_tangent_kernel(kan, x)               # the KAN-TK, closed form: (n, n)
    >>> lr = 0.5 / torch.linalg.eigvalsh(h).max().item()
    >>> with torch.no_grad():                        # linearised GD on y = 0 (Thm 4.6)
    ...     curve = predicted_loss_curve(h, kan(x), lr, 50)
    >>> curve.shape, bool(curve[-1] < curve[0])
    (torch.Size([51]), True)
"""

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
