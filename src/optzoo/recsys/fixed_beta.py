"""Fixed-β scalarisation, the ablation of MGDA's adaptive β* in Zhou et al. (ICLR 2026,
OpenReview cuzWopwoZG, §4.1): minimise L_JOINT(β) = β L_rel + (1 − β) L_div with β held fixed
(the paper reports results stable over a wide β range, degrading as β → 0).  β weights the
unit-normalised gradients by default (``DiversitySettings.normalize = "l2"``, as MGDA's β* in
DDT; ``"none"`` weights the raw ones), so β = 1/2 is the DDT step exactly."""

from __future__ import annotations

import torch
from torch import nn

from optzoo.recsys.diversity_topk import DiversitySettings, TrainSet, train


def fixed_beta_train(model: nn.Module, data: TrainSet, similarity: torch.Tensor, steps: int,
                     beta: float, settings: DiversitySettings | None = None, **kwargs):
    """:func:`optzoo.recsys.diversity_topk.train` with ``method="ddt"`` and a fixed ``beta``."""
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta: expected a number in [0, 1], got {beta}")
    return train(model, data, similarity, steps, method="ddt", beta=beta, settings=settings,
                 **kwargs)
