"""Reinforcement learning: constrained and robust policy optimisation.

* :func:`run_pdpo`, :class:`PDPOConfig` -- primal-dual policy optimisation for adversarial
  linear CMDPs, on :func:`random_linear_cmdp` with :func:`switching_losses` (NumPy only).
* :class:`DRSAC`, :class:`DRSACConfig`, :func:`kl_dro_dual` -- offline (distributionally
  robust) SAC, with :func:`collect_dataset` and perturbed evaluation (torch, gymnasium).

Example:
    >>> import numpy as np
    >>> from optzoo.rl import PDPOConfig, random_linear_cmdp, run_pdpo, switching_losses
    >>> rng = np.random.default_rng(0)
    >>> cmdp = random_linear_cmdp(S=4, A=2, d=3, H=3, rng=rng)
    >>> losses = switching_losses(K=50, H=3, d=3, rng=rng)  # adversarial θ^k, K x H x d
    >>> out = run_pdpo(cmdp, losses, PDPOConfig(budget=1.0), rng)  # paper's α, η, θ for K
    >>> out["loss_value"].shape, bool((out["dual"] >= 0).all())
    ((50,), True)
"""

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

# DR-SAC needs torch and gymnasium (the ``rl`` extra): imported on first use so that the
# NumPy-only CMDP code above works without them.
_LAZY = {
    "DRSAC": "optzoo.rl.dr_sac", "DRSACConfig": "optzoo.rl.dr_sac",
    "OfflineData": "optzoo.rl.dr_sac", "TransitionVAE": "optzoo.rl.dr_sac",
    "kl_dro_dual": "optzoo.rl.dr_sac", "kl_dro_worst_case": "optzoo.rl.dr_sac",
    "Perturbation": "optzoo.rl.perturbed_control", "collect_dataset": "optzoo.rl.perturbed_control",
    "evaluate_policy": "optzoo.rl.perturbed_control", "make_env": "optzoo.rl.perturbed_control",
    "pendulum_swingup": "optzoo.rl.perturbed_control",
}
__all__ += list(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module = importlib.import_module(_LAZY[name])
        return getattr(module, "evaluate" if name == "evaluate_policy" else name)
    raise AttributeError(f"module 'optzoo.rl' has no attribute {name!r}")
