"""Speculative decoding: EAGLE-style drafts, EAGLE-2 dynamic trees, and GTO draft training.

* :mod:`.eagle` — :class:`EagleDraft` (target's last hidden state + token embedding → next
  token, one Llama layer) for any ``transformers`` causal target; :class:`DraftSession` (the
  draft over a prefix, extended by tree nodes with a tree attention mask);
  :func:`token_loss` (EAGLE-3 token-level loss with training-time test);
* :mod:`.tree` — :func:`build_trees` (EAGLE-2: layer-wise top-k by global path score, keep
  ``g`` nodes), tree-mask verification (greedy, and tree speculative sampling at T > 0),
  :func:`speculative_generate` and the chain baseline :func:`chain_generate`;
* :mod:`.gto` — GTO (Hu et al., ICLR 2026): :func:`draft_tree_reward` (sample-free expected
  acceptance length, smooth max), :func:`gto_loss` / :func:`gto_objective` (reference-debiased
  group advantages, clipped surrogate along the longest accepted path);
* :mod:`.problems` — the grammar language and the tiny target trained on it (cached).

Example::

    import torch
    from optzoo.llm import tiny_llama
    from optzoo.specdec import EagleDraft, TreeConfig, speculative_generate, target_greedy

    target = tiny_llama(30, hidden_size=64, intermediate_size=128, num_layers=2)
    draft = EagleDraft(target, hidden_size=32, num_heads=4)
    prompt = torch.tensor([1, 7, 8, 9])
    out = speculative_generate(target, draft, prompt, tree=TreeConfig(5, 4, 16),
                               max_new_tokens=20)
    assert out.tokens == target_greedy(target, prompt, 20)    # lossless
    out.tau                                                   # tokens per target forward
"""

from optzoo.specdec.eagle import DraftSession, EagleDraft, target_features, token_loss
from optzoo.specdec.gto import (
    AGGREGATIONS,
    GTOConfig,
    candidate_lengths,
    draft_tree_reward,
    expected_acceptance_length,
    frozen_copy,
    gto_loss,
    gto_objective,
)
from optzoo.specdec.problems import Grammar, TargetConfig, encode, train_target
from optzoo.specdec.tree import (
    DecodeResult,
    TreeConfig,
    Trees,
    build_trees,
    chain_generate,
    speculative_generate,
    target_greedy,
    target_tree_logits,
    verify_tree_greedy,
    verify_tree_sample,
)

__all__ = [
    "AGGREGATIONS", "DecodeResult", "DraftSession", "EagleDraft", "GTOConfig", "Grammar",
    "TargetConfig", "TreeConfig", "Trees", "build_trees", "candidate_lengths", "chain_generate",
    "draft_tree_reward", "encode", "expected_acceptance_length", "frozen_copy", "gto_loss",
    "gto_objective", "speculative_generate", "target_features", "target_greedy",
    "target_tree_logits", "token_loss", "train_target", "verify_tree_greedy",
    "verify_tree_sample",
]
