"""Scaling: hyperparameter transfer across width, depth, batch size and duration.

* :mod:`.complete_p` — Complete(d)P (Mlodozeniec et al., ICLR 2026): the SP / μP / Depth-μP /
  CompleteP parameterisations as AdamW parameter groups, per-module multipliers, the (inferred)
  batch-size and duration rules, and the coordinate check;
* :mod:`.problems` — the pre-LN residual MLP and the Gaussian-mixture task of the reproduction.

Example::

    import torch
    from optzoo.scaling import AdamWHyperparameters, Parameterisation, ResidualMLP, param_groups

    param = Parameterisation("completep", width=256, depth=8, base_width=32, base_depth=2)
    model = ResidualMLP(d_in=32, d_out=20, param=param)
    hp = AdamWHyperparameters(lr=2 ** -7, weight_decay=0.1)  # tuned at width 32, depth 2
    opt = torch.optim.AdamW(param_groups(model.named_parameters(), model.kind_of, param, hp))
"""

from optzoo.scaling.complete_p import (
    BATCH_RULES,
    DURATION_RULES,
    KINDS,
    PARAMETERISATIONS,
    AdamWHyperparameters,
    Parameterisation,
    coordinate_check,
    param_groups,
    scale_batch,
    scale_duration,
)
from optzoo.scaling.problems import GaussianMixture, ResidualMLP

__all__ = [
    "BATCH_RULES", "DURATION_RULES", "KINDS", "PARAMETERISATIONS", "AdamWHyperparameters",
    "GaussianMixture", "Parameterisation", "ResidualMLP", "coordinate_check", "param_groups",
    "scale_batch", "scale_duration",
]
