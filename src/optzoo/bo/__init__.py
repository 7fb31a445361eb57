"""Bayesian optimisation (BoTorch / GPyTorch): Local Entropy Search and its local baselines;
BoGrape (graphs) lives in :mod:`optzoo.bo.graphs`.

Example:
    Local Entropy Search minimises a black box from two initial points (here with a GP of
    fixed length-scales; by default they are fitted at every step):

    >>> import torch
    >>> from optzoo.bo import adam_descent, make_gp, run_les
    >>> _ = torch.manual_seed(0)
    >>> box = torch.tensor([[-10.0, -10.0], [10.0, 10.0]], dtype=torch.float64)
    >>> res = run_les(lambda X: (X ** 2).sum(-1), box, budget=3,
    ...               X_init=torch.tensor([[5.0, -4.0], [-3.0, 7.0]], dtype=torch.float64),
    ...               model_fn=lambda X, Y: make_gp(X, Y, lengthscales=torch.full((2,), 0.3)),
    ...               num_samples=4, num_points=3, descent=adam_descent(steps=20), num_features=64)
    >>> res.X.shape                                  # 2 initial points, 1 LES step
    torch.Size([3, 2])
"""

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
