"""Loss landscapes: low-loss paths between minima, curvature along them, and noisy dynamics
released from them (Di Carlo, Goddard & Schwab, ICLR 2026).

Example:
    On the paper's toy landscape the loss is zero along the whole path, yet Langevin noise
    drifts from y = 0.3 toward the flatter endpoint y = 0 while gradient descent stays put:

    >>> import torch
    >>> from optzoo.landscape import EntropicToy, release_dynamics, toy_data, toy_loss, toy_path
    >>> toy, path, data = EntropicToy(dims=50), toy_path(50), toy_data(64, 50, noise=0.0)
    >>> langevin = release_dynamics(toy, toy_loss, path, 0.3, data, steps=300,
    ...                             temperature=1e-3, generator=torch.Generator().manual_seed(0))
    >>> gd = release_dynamics(toy, toy_loss, path, 0.3, data, steps=300)
    >>> bool(langevin.ys[-1] < 0.2), gd.ys[-1]        # path coordinate after 300 steps
    (True, 0.3)
"""

from optzoo.landscape.curvature import (
    curvature_profile,
    fisher_trace,
    flat_params,
    functional_loss,
    hutchinson_trace,
    hvp,
    lanczos_eigenvalues,
)
from optzoo.landscape.mode_connectivity import LowLossPath, find_path, linear_path, path_losses
from optzoo.landscape.problems import EntropicToy, toy_data, toy_loss, toy_path
from optzoo.landscape.release import Release, entropic_drift_rate, project, release_dynamics

__all__ = [
    "EntropicToy",
    "LowLossPath",
    "Release",
    "curvature_profile",
    "entropic_drift_rate",
    "fisher_trace",
    "find_path",
    "flat_params",
    "functional_loss",
    "hutchinson_trace",
    "hvp",
    "lanczos_eigenvalues",
    "linear_path",
    "path_losses",
    "project",
    "release_dynamics",
    "toy_data",
    "toy_loss",
    "toy_path",
]
