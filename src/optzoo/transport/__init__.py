"""Optimal transport: Neural Characteristic Flow (Hamilton–Jacobi OT), its ICNN min–max
baseline, and the area's benchmark problems.

Example:
    >>> import numpy as np
    >>> from optzoo.transport import HJOptimalTransport, gaussian_pair
    >>> pair = gaussian_pair(2, seed=0)  # N(m1, S1) -> N(m2, S2): T* is known (pair.forward)
    >>> rng = np.random.default_rng(0)
    >>> Xs, Xt = pair.sample_source(128, rng), pair.sample_target(128, rng)
    >>> ncf = HJOptimalTransport(hidden=16, layers=2, steps=20, batch_size=64).fit(Xs, Xt)
    >>> Y = ncf.transform(Xs)  # T(x) = x + t_f ∇H(∇u(x, 0))
    >>> X_back = ncf.inverse_transform(Y)  # T⁻¹ from the same potential u(x, t)
    >>> Y.shape, bool(np.abs(X_back - Xs).max() < 0.01)
    ((128, 2), True)
"""

from optzoo.transport.hj_optimal_transport import (
    HJOptimalTransport,
    PotentialNet,
    characteristic_residual,
    energy_distance,
    forward_map,
    hamiltonian,
    hamiltonian_grad,
    inverse_map,
    is_stable,
    largest_rise,
    pinn_residual,
    window_means,
)
from optzoo.transport.icnn_ot import ICNN, ICNNOptimalTransport
from optzoo.transport.problems import (
    GaussianPair,
    bures_wasserstein_squared,
    colour_clouds,
    energy_distance_np,
    gaussian_map,
    gaussian_pair,
    histogram_intersection,
    image_pixels,
    l2_uvp,
    toy_2d,
)

__all__ = [
    "ICNN", "GaussianPair", "HJOptimalTransport", "ICNNOptimalTransport", "PotentialNet",
    "bures_wasserstein_squared", "characteristic_residual", "colour_clouds", "energy_distance",
    "energy_distance_np", "forward_map", "gaussian_map", "gaussian_pair", "hamiltonian",
    "hamiltonian_grad", "histogram_intersection", "image_pixels", "inverse_map", "is_stable",
    "l2_uvp", "largest_rise", "pinn_residual", "toy_2d", "window_means",
]
