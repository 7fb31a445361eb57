"""Policy optimisation for language models: GRPO-family losses as pure tensor functions.

Every loss takes TRL's tensors — per-token log-probs ``(B, T)`` of the sampled completion tokens,
a completion mask ``(B, T)``, rewards ``(B,)`` in groups of consecutive completions — and returns
``(loss, metrics)``: a scalar to minimise and a dict of detached scalar tensors.

* :func:`grpo_loss`, :func:`grpo_advantages` — GRPO as TRL 1.16.0 computes it (tested against
  TRL's own ``_compute_loss``).
* :func:`offpolicy_grpo_loss`, :func:`whitened_advantages`, :func:`zero_variance_mask`,
  :class:`OffPolicySchedule`, :func:`improvement_bound` — off-policy GRPO (Mroueh et al.,
  ICLR 2026).
* :class:`SPOValueTracker`, :func:`spo_advantages`, :func:`spo_sampling_weights`,
  :func:`sample_prompts`, :func:`kl_divergence_proxy`, :func:`kl_adaptive_rho` — SPO
  (Xu & Ding, ICLR 2026).
* :func:`gn_ivo_loss` and its step helpers — GN-IVO (Choi et al., ICLR 2026).
* :func:`reinforce_loss`, :func:`reinforce_advantages`, :func:`rloo_advantages` — REINFORCE with
  a baseline.

The losses need only ``torch``; TRL is the reference of the tests, not a dependency.
:mod:`optzoo.policy.trainer` (``PolicyTrainer`` and the algorithms ``GRPO``, ``OffPolicyGRPO``,
``SPO``, ``GNIVO``, ``Reinforce``) runs them on a Hugging Face causal LM with the
:mod:`optzoo.llm` substrate (``optzoo[llm]``).  :mod:`optzoo.policy.trl` puts off-policy GRPO,
SPO and GN-IVO inside TRL's ``GRPOTrainer`` (``OffPolicyGRPOTrainer``, ``SPOTrainer``,
``GNIVOTrainer`` and their configs, also importable from here; TRL is imported on first use).

Example:
    >>> import torch
    >>> from optzoo.policy import grpo_advantages, grpo_loss
    >>> logp = (-torch.rand(4, 5, generator=torch.Generator().manual_seed(0))).requires_grad_()
    >>> rewards = torch.tensor([1.0, 0.0, 1.0, 1.0])  # 2 prompts x 2 completions
    >>> adv = grpo_advantages(rewards, group_size=2)
    >>> loss, metrics = grpo_loss(logp, None, adv, torch.ones(4, 5))  # on-policy, TRL's "dapo"
    >>> loss.backward()
    >>> logp.grad[:2, 0]  # push up the better completion's tokens, down the worse one's
    tensor([-0.0354,  0.0354])
    >>> bool(logp.grad[2:].abs().max() == 0)  # an all-correct group carries no signal
    True
"""

from optzoo.policy.advantages import (
    degenerate_group_fraction,
    grpo_advantages,
    rloo_advantages,
)
from optzoo.policy.gn_ivo import (
    gn_ivo_loss,
    response_step_counts,
    sample_prefix_steps,
    step_ends_from_text,
    step_ids_from_boundaries,
)
from optzoo.policy.grpo import aggregate_token_loss, grpo_loss, k3_kl
from optzoo.policy.offpolicy_grpo import (
    OffPolicySchedule,
    improvement_bound,
    offpolicy_grpo_loss,
    whitened_advantages,
    zero_variance_mask,
)
from optzoo.policy.reinforce import reinforce_advantages, reinforce_loss
from optzoo.policy.spo import (
    SPOValueTracker,
    kl_adaptive_rho,
    kl_divergence_proxy,
    sample_prompts,
    spo_advantages,
    spo_sampling_weights,
)

# importing TRL takes seconds: the TRL adapters load on first access
_LAZY = {name: "optzoo.policy.trl" for name in (
    "GNIVOConfig", "GNIVOTrainer", "OffPolicyGRPOConfig", "OffPolicyGRPOTrainer", "SPOConfig",
    "SPOTrainer")}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'optzoo.policy' has no attribute {name!r}")


__all__ = [
    "OffPolicySchedule", "SPOValueTracker", "aggregate_token_loss", "degenerate_group_fraction",
    "gn_ivo_loss", "grpo_advantages", "grpo_loss", "improvement_bound", "k3_kl",
    "kl_adaptive_rho", "kl_divergence_proxy", "offpolicy_grpo_loss", "reinforce_advantages",
    "reinforce_loss", "response_step_counts", "rloo_advantages", "sample_prefix_steps",
    "sample_prompts", "spo_advantages", "spo_sampling_weights", "step_ends_from_text",
    "step_ids_from_boundaries",
    "whitened_advantages", "zero_variance_mask",
]
