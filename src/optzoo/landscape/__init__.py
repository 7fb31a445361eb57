"""Loss landscapes: low-loss paths between minima, curvature along them, and noisy dynamics
released from them (Di Carlo, Goddard & Schwab, ICLR 2026)."""

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
