"""Scaling: hyperparameter transfer across width, depth, batch size and duration.

* :mod:`.complete_p` — Complete(d)P (Mlodozeniec et al., ICLR 2026): the SP / μP / Depth-μP /
  CompleteP parameterisations as AdamW parameter groups, per-module multipliers, the (inferred)
  batch-size and duration rules, and the coordinate check;
* :mod:`.problems` — the pre-LN residual MLP and the Gaussian-mixture task of the reproduction.
* :mod:`.quantization`, :mod:`.gptq` — weight-only post-training quantization (RTN per channel /
  per group, GPTQ) of a causal LM's block linears and the ΔCE metric of quant-robustness
  (Catalan-Tatjer et al., ICLR 2026); :mod:`.lr_schedules` (constant, cosine, WSD),
  :mod:`.lawa` (latest-weight averaging), :mod:`.zipf_ngram` (synthetic language) and
  :mod:`.trajectory` (checkpointed, forkable tiny-LM training).

Example:
    >>> import torch
    >>> from optzoo.scaling import (AdamWHyperparameters, Parameterisation, ResidualMLP,
    ...                             param_groups)
    >>> param = Parameterisation("completep", width=256, depth=8, base_width=32, base_depth=2)
    >>> model = ResidualMLP(d_in=32, d_out=20, param=param)
    >>> hp = AdamWHyperparameters(lr=2 ** -7, weight_decay=0.1)  # tuned at width 32, depth 2
    >>> opt = torch.optim.AdamW(param_groups(model.named_parameters(), model.kind_of, param, hp))
    >>> lr = {g["kind"]: g["lr"] for g in opt.param_groups}
    >>> lr["hidden"] == 2 ** -7 * 32 / 256, lr["input"] == 2 ** -7  # hidden: η / m_N
    (True, True)
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
from optzoo.scaling.gptq import gptq_quantize
from optzoo.scaling.lawa import LAWA
from optzoo.scaling.lr_schedules import Schedule
from optzoo.scaling.problems import GaussianMixture, ResidualMLP
from optzoo.scaling.quantization import quantization_error, quantize_model, rtn_quantize
from optzoo.scaling.trajectory import Trainer
from optzoo.scaling.zipf_ngram import ZipfNGram

__all__ = [
    "BATCH_RULES", "DURATION_RULES", "KINDS", "PARAMETERISATIONS", "AdamWHyperparameters",
    "GaussianMixture", "Parameterisation", "ResidualMLP", "coordinate_check", "param_groups",
    "scale_batch", "scale_duration",
    "LAWA", "Schedule", "Trainer", "ZipfNGram", "gptq_quantize", "quantization_error",
    "quantize_model", "rtn_quantize",
]
