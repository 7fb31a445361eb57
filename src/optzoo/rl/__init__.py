"""Reinforcement learning: constrained and robust policy optimisation."""

from optzoo.rl.adversarial_cmdp import (
    PDPOConfig,
    WeightedLSEPolicy,
    run_pdpo,
    weighted_lse_policy,
)
from optzoo.rl.linear_cmdp import (
    LinearCMDP,
    best_fixed_policy,
    evaluate,
    occupancy,
    random_linear_cmdp,
    sample_episode,
    switching_losses,
)

__all__ = [
    "LinearCMDP", "PDPOConfig", "WeightedLSEPolicy", "best_fixed_policy", "evaluate",
    "occupancy", "random_linear_cmdp", "run_pdpo", "sample_episode", "switching_losses",
    "weighted_lse_policy",
]
