"""Preference optimisation for language models: DPO-family losses as pure tensor functions.

Every loss takes TRL's tensors — sequence log-probs ``(B,)`` of the chosen and rejected
completions of ``B`` pairs (sums of per-token log-probs over the completion), or response-aligned
per-token tensors ``(B, T)`` with their masks for the token-level methods — and returns
``(loss, metrics)``: a scalar to minimise and a dict of detached diagnostics.

* :func:`dpo_loss` and :func:`ipo_loss` (TRL's ``loss_type="sigmoid"`` / ``"ipo"``, tested
  against TRL's own ``DPOTrainer``), :func:`dpop_loss`, :func:`simpo_loss`,
  :func:`sequence_logps`.
* :func:`tdpo_loss`, :func:`sequential_kl`, :func:`per_token_logratios` — TDPO1/2
  (Zeng et al. 2024), TI-DPO's base.
* :func:`ti_dpo_loss`, :func:`token_importance`, :func:`gaussian_prior`,
  :func:`hybrid_weights`, :func:`logratio_distance`, :func:`align_completions` — TI-DPO
  (Yang et al., ICLR 2026).
* :func:`auxdpo_loss`, :class:`AuxDelta`, :func:`null_space_penalty`,
  :func:`reference_score_vectors` — AuxDPO (Gopalan et al., ICLR 2026).
* :func:`wdpo_loss` — StepORLM's weighted DPO (Zhou et al., ICLR 2026).

The losses need only ``torch``; TRL is the reference of the tests, not a dependency of the
losses.  :mod:`optzoo.preference.trainers` (``WDPOTrainer``, ``AuxDPOTrainer``: thin
``trl.DPOTrainer`` subclasses around these losses) is the path at scale (``optzoo[llm]``).

Example:
    >>> import torch
    >>> from optzoo.preference import dpo_loss, sequence_logps
    >>> logp = torch.tensor([[-1.0, -2.0], [-1.5, -0.5], [-3.0, -1.0], [-2.0, -2.0]])
    >>> mask = torch.tensor([[1, 1], [1, 0], [1, 1], [1, 1]])  # TRL: [chosen; rejected] rows
    >>> chosen, rejected = sequence_logps(logp, mask).chunk(2)
    >>> ref_chosen, ref_rejected = chosen - 0.5, rejected  # log-probs under π_ref
    >>> loss, metrics = dpo_loss(chosen, rejected, ref_chosen, ref_rejected, beta=0.1)
    >>> round(float(loss), 3), float(metrics["rewards/accuracies"])
    (0.668, 1.0)
"""

from optzoo.preference.auxdpo import (
    AuxDelta,
    auxdpo_loss,
    null_space_penalty,
    reference_score_vectors,
)
from optzoo.preference.dpo import (
    dpo_loss,
    dpop_loss,
    ipo_loss,
    pair_metrics,
    sequence_logps,
    simpo_loss,
)
from optzoo.preference.tdpo import TDPO_VARIANTS, per_token_logratios, sequential_kl, tdpo_loss
from optzoo.preference.ti_dpo import (
    DISTANCES,
    WEIGHT_NORMS,
    align_completions,
    gaussian_prior,
    hybrid_weights,
    logratio_distance,
    response_terms,
    response_weights,
    ti_dpo_loss,
    token_importance,
)
from optzoo.preference.wdpo import NORMALIZATIONS, wdpo_loss

__all__ = [
    "DISTANCES", "NORMALIZATIONS", "TDPO_VARIANTS", "WEIGHT_NORMS", "AuxDelta",
    "auxdpo_loss", "dpop_loss", "ipo_loss", "null_space_penalty", "reference_score_vectors",
    "wdpo_loss", "align_completions", "dpo_loss",
    "gaussian_prior", "hybrid_weights", "logratio_distance", "pair_metrics",
    "per_token_logratios", "response_terms", "response_weights", "sequence_logps",
    "sequential_kl", "simpo_loss", "tdpo_loss",
    "ti_dpo_loss", "token_importance",
]
