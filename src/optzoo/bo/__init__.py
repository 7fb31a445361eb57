"""Bayesian optimisation (BoTorch / GPyTorch): Local Entropy Search and its local baselines;
BoGrape (graphs) lives in :mod:`optzoo.bo.graphs`."""

from optzoo.bo.les import (
    BOResult,
    DescentOptimizer,
    DescentSequences,
    LocalEntropySearch,
    TorchOptimizerDescent,
    adam_descent,
    arc_length_indices,
    draw_descent_sequences,
    make_gp,
    run_les,
    standardize_observations,
)
from optzoo.bo.local_baselines import (
    GradientInformation,
    TurboState,
    run_gibo,
    run_local_ts,
    run_logei,
    run_mes,
    run_sobol,
    run_turbo,
)

__all__ = [
    "BOResult", "DescentOptimizer", "DescentSequences", "GradientInformation",
    "LocalEntropySearch", "TorchOptimizerDescent", "TurboState", "adam_descent",
    "arc_length_indices", "draw_descent_sequences", "make_gp", "run_gibo", "run_les",
    "run_local_ts", "run_logei", "run_mes", "run_sobol", "run_turbo",
    "standardize_observations",
]
