"""GTO: the sample-free tree reward against closed forms and Monte-Carlo acceptance lengths,
the group advantages and clipped surrogate against hand computations, and the loss's
properties (no gradient at M = M0, finite under every ablation, acting once M moves)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.specdec import (
    EagleDraft,
    GTOConfig,
    TreeConfig,
    candidate_lengths,
    draft_tree_reward,
    expected_acceptance_length,
    frozen_copy,
    gto_loss,
    gto_objective,
    verify_tree_sample,
)
from optzoo.specdec.gto import _anchors, clipped_surrogate, group_advantages


def _random_tree(g: int, gen: torch.Generator):
    parents = [-1]
    for j in range(1, g):
        parents.append(int(torch.randint(-1, j, (1,), generator=gen)))
    return torch.tensor(parents)


def test_reward_closed_form_uses_cumulative_products():
    probs = torch.tensor([0.5, 0.5, 0.8], dtype=torch.float64)   # chain 0 → 1, and leaf 2
    parents = torch.tensor([-1, 0, -1])
    lengths, leaf = candidate_lengths(probs, parents)
    assert leaf.tolist() == [False, True, True]
    assert lengths[1].item() == pytest.approx(0.5 + 0.25)         # not 0.5 + 0.5
    assert lengths[2].item() == pytest.approx(0.8)
    r = draft_tree_reward(probs, parents)
    assert r.item() == pytest.approx(math.log(math.exp(0.75) + math.exp(0.8)))
    assert draft_tree_reward(probs, parents, aggregation="mean").item() == pytest.approx(0.775)
    assert draft_tree_reward(probs, parents, aggregation="max").item() == pytest.approx(0.8)
    assert expected_acceptance_length(probs, parents).item() == pytest.approx(0.5 + 0.25 + 0.8)


@settings(max_examples=25, deadline=None)
@given(g=st.integers(1, 12), seed=st.integers(0, 10_000), eta=st.floats(0.1, 5.0))
def test_smooth_max_lies_between_max_and_max_plus_log_n(g, seed, eta):
    gen = torch.Generator().manual_seed(seed)
    parents = _random_tree(g, gen)
    probs = torch.rand(g, generator=gen, dtype=torch.float64).requires_grad_(True)
    hard = draft_tree_reward(probs, parents, aggregation="max")
    mean = draft_tree_reward(probs, parents, aggregation="mean")
    smooth = draft_tree_reward(probs, parents, eta=eta)
    n_leaves = int(candidate_lengths(probs, parents)[1].sum())
    assert mean.item() <= hard.item() + 1e-12
    assert hard.item() - 1e-12 <= smooth.item() <= hard.item() + math.log(n_leaves) / eta + 1e-12
    smooth.backward()
    assert torch.isfinite(probs.grad).all() and (probs.grad >= -1e-12).all()   # monotone


def test_candidate_length_matches_monte_carlo_acceptance():
    """L_i is the expected number of a chain's tokens accepted when each is accepted with the
    target's probability (sequential Bernoulli acceptance)."""
    rng = np.random.default_rng(0)
    p = np.array([0.9, 0.7, 0.6, 0.3])
    lengths, _ = candidate_lengths(torch.tensor(p), torch.tensor([-1, 0, 1, 2]))
    n = 200_000
    acc = (rng.random((n, 4)) < p).cumprod(1).sum(1)
    se = acc.std() / math.sqrt(n)
    assert abs(acc.mean() - lengths[3].item()) < 4 * se


def test_expected_length_matches_tree_speculative_sampling():
    """The tree's expected acceptance length equals the mean number of draft tokens accepted by
    tree speculative sampling (Monte Carlo through :func:`verify_tree_sample`)."""
    gen = torch.Generator().manual_seed(3)
    V, T = 6, 1.0
    tokens, parents = [0, 1, 2, 3, 0, 4], [-1, -1, 0, 0, 2, 1]
    root = torch.randn(V, generator=gen) * 2
    nodes = torch.randn(len(tokens), V, generator=gen) * 2
    judge = torch.stack([root if q < 0 else nodes[q] for q in parents])
    probs = torch.softmax(judge.double() / T, -1)[torch.arange(len(tokens)), tokens]
    exact = expected_acceptance_length(probs, torch.tensor(parents)).item()
    n = 6000
    acc = np.array([len(verify_tree_sample(tokens, parents, root, nodes, T, gen)[0])
                    for _ in range(n)])
    assert abs(acc.mean() - exact) < 4 * acc.std() / math.sqrt(n)


def test_group_advantages_are_standardised_per_group():
    R = torch.tensor([[1.0, 2.0, 3.0, 4.0, 10.0, 10.0, 10.0, 12.0]])
    A = group_advantages(R, 4, delta=1e-6)
    for g in (A[0, :4], A[0, 4:]):
        assert g.mean().item() == pytest.approx(0.0, abs=1e-6)
        assert g.std().item() == pytest.approx(1.0, abs=1e-4)
    assert torch.allclose(A[0, :4], group_advantages(R[:, :4] + 100.0, 4))   # shift invariant
    flat = group_advantages(R, None)
    assert flat.mean().item() == pytest.approx(0.0, abs=1e-6)
    assert group_advantages(torch.zeros(1, 4), 4).abs().max().item() == 0.0   # no signal
    with pytest.raises(ValueError, match="group_size"):
        group_advantages(R, 3)


def test_clipped_surrogate_matches_ppo_by_hand():
    lr = torch.log(torch.tensor([0.5, 1.1, 1.5, 1.5], dtype=torch.float64)).requires_grad_(True)
    adv = torch.tensor([1.0, -1.0, 1.0, -2.0], dtype=torch.float64)
    eps = 0.2
    loss = clipped_surrogate(lr, adv, eps)
    # min(s A, clip(s) A): 0.5·1 | min(-1.1, -1.1) | min(1.5, 1.2) | min(-3, -2.4)
    assert loss.item() == pytest.approx(-(0.5 - 1.1 + 1.2 - 3.0) / 4)
    loss.backward()
    # the clipped entry (s = 1.5, A > 0) has no gradient; the others d/dlr = -s A / 4
    assert lr.grad.tolist() == pytest.approx([-0.5 / 4, 1.1 / 4, 0.0, 3.0 / 4])


def test_anchor_groups_are_adjacent_and_disjoint():
    rng = np.random.default_rng(0)
    cfg = GTOConfig(group_size=4, groups=3)
    a = _anchors(5, 30, cfg, rng)
    assert a.shape == (5, 12)
    for row in a:
        groups = row.reshape(3, 4)
        assert (np.diff(groups, axis=1) == 1).all()
        assert len(set(row.tolist())) == 12 and row.min() >= cfg.min_context and row.max() <= 29
    free = _anchors(2, 30, GTOConfig(group_size=4, groups=3, grouping=False), rng)
    assert len(set(free[0].tolist())) == 12
    with pytest.raises(ValueError, match="too short"):
        _anchors(1, 10, cfg, rng)


@pytest.fixture(scope="module")
def setting():
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=10, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, initializer_range=0.3,
                      max_position_embeddings=64)
    torch.manual_seed(0)
    target = LlamaForCausalLM(cfg).eval()
    draft = EagleDraft(target, hidden_size=16, num_heads=2, seed=0)
    ids = torch.randint(1, 10, (2, 16), generator=torch.Generator().manual_seed(1))
    return target, draft, ids


def test_gto_loss_has_no_gradient_when_the_draft_is_its_reference(setting):
    target, draft, ids = setting
    ref = frozen_copy(draft)
    cfg = GTOConfig(tree=TreeConfig(3, 2, 6), groups=2)
    loss, stats = gto_loss(draft, ref, target, ids, cfg, rng=np.random.default_rng(0))
    assert loss.item() == 0.0 and stats["adv_abs"] == 0.0 and stats["log_ratio_abs"] == 0.0
    assert stats["reward"] == pytest.approx(stats["reward_ref"])


@pytest.mark.parametrize("variant", [{}, {"aggregation": "mean"}, {"aggregation": "max"},
                                     {"debias": False}, {"grouping": False},
                                     {"ratio_norm": "sum"}])
def test_gto_acts_once_the_draft_moves(setting, variant):
    target, draft, ids = setting
    ref = frozen_copy(draft)
    moved = frozen_copy(draft)
    moved.requires_grad_(True)
    moved.embed_weight.requires_grad_(False)
    with torch.no_grad():
        for p in moved.head.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=torch.Generator().manual_seed(2)))
    cfg = GTOConfig(tree=TreeConfig(3, 2, 6), groups=2, **variant)
    loss, stats = gto_objective(moved, ref, target, ids, cfg, rng=np.random.default_rng(0))
    loss.backward()
    assert torch.isfinite(loss)
    assert stats["log_ratio_abs"] > 0 and stats["adv_abs"] > 0
    g = moved.head.weight.grad
    assert g is not None and torch.isfinite(g).all() and g.abs().sum() > 0
    assert ref.head.weight.grad is None                      # the reference stays frozen


def test_gto_objective_without_gto_is_the_token_loss(setting):
    from optzoo.specdec import token_loss

    target, draft, ids = setting
    a, _ = gto_objective(draft, None, target, ids, GTOConfig(), use_gto=False)
    b = token_loss(draft, target, ids, ttt_steps=2)
    assert a.item() == pytest.approx(b.item())


def test_token_loss_step_zero_is_the_cross_entropy_to_the_target(setting):
    target, draft, ids = setting
    with torch.no_grad():
        out = target(ids, output_hidden_states=True)
        probs = torch.softmax(out.logits, -1)
        from optzoo.specdec import DraftSession

        s = DraftSession(draft, out.hidden_states[-1][:, :-1], ids[:, 1:])
        by_hand = -(probs[:, 1:] * torch.log_softmax(s.prefix_logits, -1)).sum(-1).mean()
        from optzoo.specdec import token_loss

        assert token_loss(draft, target, ids, ttt_steps=0).item() == pytest.approx(
            by_hand.item(), rel=1e-5)


def test_bad_inputs_name_the_argument(setting):
    with pytest.raises(ValueError, match="aggregation"):
        GTOConfig(aggregation="softmax")
    with pytest.raises(ValueError, match="clip_eps"):
        GTOConfig(clip_eps=1.5)
    with pytest.raises(ValueError, match="ratio_norm"):
        GTOConfig(ratio_norm="mean")
    with pytest.raises(ValueError, match="eta"):
        draft_tree_reward(torch.tensor([0.5]), torch.tensor([-1]), eta=0.0)
    with pytest.raises(ValueError, match="node_probs"):
        draft_tree_reward(torch.tensor([1.5]), torch.tensor([-1]))
    with pytest.raises(ValueError, match="parents"):
        expected_acceptance_length(torch.tensor([0.5, 0.5]), torch.tensor([-1]))
    target, draft, _ = setting
    with pytest.raises(ValueError, match="reference"):
        gto_objective(draft, None, target, torch.ones(1, 20, dtype=torch.long), GTOConfig())


def test_accepted_paths_and_their_log_likelihoods_match_a_slow_reference(setting):
    """The batched greedy acceptance equals :func:`verify_tree_greedy` tree by tree, and the
    batched path log-likelihood equals a fresh chain through the draft."""
    from optzoo.specdec import DraftSession, build_trees, target_tree_logits, verify_tree_greedy
    from optzoo.specdec.gto import _path_logprob
    from optzoo.specdec.tree import greedy_accepted

    target, draft, ids = setting
    B, n = ids.shape
    with torch.no_grad():
        hid = target(ids, output_hidden_states=True).hidden_states[-1]
        anchors = torch.tensor([[2, 5, 9], [3, 4, 12]])
        trees = build_trees(DraftSession(draft, hid[:, :n - 1], ids[:, 1:]), anchors,
                            TreeConfig(3, 2, 6))
        root, nodes = target_tree_logits(target, ids, trees)
        acc, deepest = greedy_accepted(trees, root, nodes)
        D = 3
        path = torch.zeros(B, 3, D, dtype=torch.long)
        length = torch.zeros(B, 3, dtype=torch.long)
        for b in range(B):
            for a in range(3):
                got, _ = verify_tree_greedy(trees.tokens[b, a].tolist(),
                                            trees.parents[b, a].tolist(), root[b, a],
                                            nodes[b, a])
                assert sorted(got) == torch.nonzero(acc[b, a]).flatten().tolist()
                assert (deepest[b, a].item() if got else -1) == (got[-1] if got else -1)
                toks = [int(trees.tokens[b, a, j]) for j in got]
                path[b, a, :len(toks)] = torch.tensor(toks, dtype=torch.long)
                length[b, a] = len(toks)
        lp = _path_logprob(DraftSession(draft, hid[:, :n - 1], ids[:, 1:]), anchors, path,
                           length)
        for b in range(B):
            for a in range(3):
                anchor, ln = int(anchors[b, a]), int(length[b, a])
                s = DraftSession(draft, hid[b:b + 1, :anchor + 1], ids[b:b + 1, 1:anchor + 2])
                logits, par, total = s.prefix_logits[0, anchor], -1, 0.0
                for j in range(ln):
                    t = int(path[b, a, j])
                    total += float(torch.log_softmax(logits.double(), -1)[t])
                    logits = s.extend(torch.tensor([[anchor]]), torch.tensor([[par]]),
                                      torch.tensor([[t]]))[0, 0]
                    par = s.num_nodes - 1
                assert lp[b, a].item() == pytest.approx(total, abs=1e-4)
