"""Loss landscapes: low-loss paths between minima, curvature along them, and noisy dynamics
released from them (Di Carlo, Goddard & Schwab, ICLR 2026)."""

from optzoo.landscape.curvature import (
    curvature_profile,
    flat_params,
    functional_loss,
    hutchinson_trace,
    hvp,
    lanczos_eigenvalues,
)
from optzoo.landscape.mode_connectivity import LowLossPath, find_path, linear_path, path_losses
from optzoo.landscape.release import Release, project, release_dynamics

__all__ = [
    "LowLossPath",
    "Release",
    "curvature_profile",
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
]
