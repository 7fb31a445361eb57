"""GN-IVO: the vectorised loss against a slow per-sample implementation, the first-step
REINFORCE identity, and Theorem 3.2 on an exhaustively enumerated tabular tree."""

from __future__ import annotations

import itertools

import pytest
import torch

from optzoo.policy import (
    gn_ivo_loss,
    response_step_counts,
    sample_prefix_steps,
    step_ends_from_text,
    step_ids_from_boundaries,
)

K = 3


def _batch(seed=0, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    b, t = 6, 7
    lengths = torch.tensor([7, 4, 6, 2, 7, 0])  # the second group has an empty response
    mask = (torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)).to(dtype)
    logp = -torch.rand(b, t, generator=gen, dtype=dtype) * 2 - 0.1
    old = logp + 0.3 * torch.randn(b, t, generator=gen, dtype=dtype)
    ref = logp + 0.3 * torch.randn(b, t, generator=gen, dtype=dtype)
    rewards = torch.tensor([1.0, 0.0, 1.0, 0.0, 0.5, 1.0], dtype=dtype)
    # Steps as "lines": ends after tokens 1, 3 and 6 of each row.
    ends = torch.zeros(b, t, dtype=torch.bool)
    ends[:, [1, 3, 6]] = True
    return logp, old, ref, rewards, mask, step_ids_from_boundaries(ends, mask)


def _slow_gn_ivo(logp, old, rewards, mask, step_ids, prefix_steps, alpha, normalize):
    """Per-group, per-t, per-member loops over the tokens of Eq. 9."""
    b = logp.shape[0]
    groups = b // K
    totals, used = [], 0
    for g in range(groups):
        members = range(g * K, (g + 1) * K)
        steps = {i: [int(step_ids[i, k]) for k in range(logp.shape[1]) if mask[i, k] > 0]
                 for i in members}
        t_max = max((max(s) + 1 if s else 0) for s in steps.values())
        ts = list(range(1, t_max + 1)) if prefix_steps is None else [
            int(t) for t in prefix_steps[g] if t >= 1 and t_max >= 1]
        if not ts:
            continue
        raw = [float(rewards[i]) / alpha for i in members]
        if normalize:
            m = max(raw)
            z = sum(torch.exp(torch.tensor(x - m, dtype=logp.dtype)) for x in raw)
            w = [torch.exp(torch.tensor(x - m, dtype=logp.dtype)) / z for x in raw]
        else:
            w = [torch.exp(torch.tensor(x, dtype=logp.dtype)) for x in raw]
        per_t = []
        for t in ts:
            values = []
            for i in members:
                total = torch.zeros((), dtype=logp.dtype)
                for k in range(logp.shape[1]):
                    if mask[i, k] > 0 and int(step_ids[i, k]) < t:
                        total = total + (logp[i, k] - old[i, k])
                values.append(total)
            lse = torch.logsumexp(torch.stack(values), 0)
            per_t.append(-sum(wi * (v - lse) for wi, v in zip(w, values, strict=True)))
        totals.append(sum(per_t) / len(per_t))
        used += 1
    return sum(totals) / max(used, 1)


CASES = list(itertools.product(("tokens", "lines", "one_step"), ("all", "sampled"),
                               (True, False)))


@pytest.mark.parametrize("steps,ts,normalize", CASES)
def test_gn_ivo_equals_slow_per_sample_loss(steps, ts, normalize):
    logp, old, _, rewards, mask, line_ids = _batch(seed=1)
    b, t = logp.shape
    step_ids = {"tokens": None, "lines": line_ids,
                "one_step": torch.zeros(b, t, dtype=torch.long)}[steps]
    ids_for_slow = torch.arange(t).expand(b, t) if step_ids is None else step_ids
    prefix = None
    if ts == "sampled":
        counts = response_step_counts(step_ids, mask)
        prefix = sample_prefix_steps(counts, K, num_t=3, generator=torch.Generator().manual_seed(4))
        assert torch.all((prefix >= 1) & (prefix <= counts.view(-1, K).amax(1, keepdim=True)))
    leaf = logp.clone().requires_grad_(True)
    loss, metrics = gn_ivo_loss(leaf, old, rewards, mask, K, alpha=0.2, step_ids=step_ids,
                                prefix_steps=prefix, normalize_weights=normalize)
    loss.backward()
    slow_leaf = logp.clone().requires_grad_(True)
    slow = _slow_gn_ivo(slow_leaf, old, rewards, mask, ids_for_slow, prefix, 0.2, normalize)
    slow.backward()
    torch.testing.assert_close(loss.detach(), slow.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(leaf.grad, slow_leaf.grad, rtol=1e-12, atol=1e-12)
    assert float(metrics["groups_used"]) == 2


def test_kl_penalty_is_beta_times_token_mean_k3():
    logp, old, ref, rewards, mask, ids = _batch(seed=2)
    base, _ = gn_ivo_loss(logp, old, rewards, mask, K, step_ids=ids)
    with_kl, metrics = gn_ivo_loss(logp, old, rewards, mask, K, step_ids=ids, ref_logp=ref,
                                   beta=0.04)
    d = (ref - logp)[mask > 0]
    k3 = (torch.exp(d) - d - 1).mean()
    torch.testing.assert_close(with_kl, base + 0.04 * k3)
    torch.testing.assert_close(metrics["kl"], k3)


def test_kl_on_the_scale_of_g_is_beta_times_the_mean_per_response_sum():
    logp, old, ref, rewards, mask, ids = _batch(seed=2)
    base, _ = gn_ivo_loss(logp, old, rewards, mask, K, step_ids=ids)
    summed, metrics = gn_ivo_loss(logp, old, rewards, mask, K, step_ids=ids, ref_logp=ref,
                                  beta=0.04, kl_reduction="response_sum")
    per_response = []
    for b in range(mask.shape[0]):
        d = (ref[b] - logp[b])[mask[b] > 0]
        per_response.append((torch.exp(d) - d - 1).sum())
    expected = torch.stack(per_response).mean()
    torch.testing.assert_close(summed, base + 0.04 * expected)
    torch.testing.assert_close(metrics["kl_response_sum"], expected)
    with pytest.raises(ValueError, match="kl_reduction"):
        gn_ivo_loss(logp, old, rewards, mask, K, ref_logp=ref, beta=0.04, kl_reduction="sum")


class _MergingTokenizer:
    """A stand-in whose vocabulary merges the separator into larger tokens ("=3;", "7;") and
    splits a two-character separator ("||") over two tokens."""

    pieces = {0: "1+2", 1: "=3;", 2: "3+4=", 3: "7;", 4: ";", 5: "", 6: "|", 7: "9"}

    def decode(self, ids, skip_special_tokens=True):
        return "".join(self.pieces[i] for i in ids)


def test_step_ends_found_in_the_decoded_text_when_the_separator_is_not_a_token():
    ids = torch.tensor([[0, 1, 2, 3, 5, 5], [2, 4, 4, 7, 5, 5]])
    mask = torch.tensor([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 0]])
    ends = step_ends_from_text(_MergingTokenizer(), ids, mask, ";")
    assert ends.tolist() == [[False, True, False, True, False, False],
                             [False, True, True, False, False, False]]
    # a token-id comparison finds no ';' token in row 0 at all
    assert not (ids[0] == 4).any()
    assert step_ids_from_boundaries(ends, mask)[0].tolist() == [0, 0, 1, 1, 2, 2]
    split = torch.tensor([[7, 6, 6, 7, 5]])
    two = step_ends_from_text(_MergingTokenizer(), split, torch.ones(1, 5), "||")
    assert two.tolist() == [[False, False, True, False, False]]  # the token completing "||"
    with pytest.raises(ValueError, match="separator"):
        step_ends_from_text(_MergingTokenizer(), ids, mask, "")


def test_first_step_is_reinforce_with_advantage_w_minus_one_over_k():
    # At π_θ = π_old all implicit values are 0, softmax(g) is uniform and ∂L/∂g_i = 1/K − w_i:
    # every token of member i's prefix gets (1/K − w_i)/groups, tokens after it get 0.
    _, old, _, rewards, mask, ids = _batch(seed=3)
    leaf = old.clone().requires_grad_(True)
    prefix = torch.tensor([[2], [1]])
    gn_ivo_loss(leaf, old, rewards, mask, K, step_ids=ids, prefix_steps=prefix)[0].backward()
    w = torch.softmax(rewards.view(-1, K) / 0.2, dim=1).reshape(-1)
    expected = torch.zeros_like(old)
    for i in range(old.shape[0]):
        t = int(prefix[i // K, 0])
        inside = (mask[i] > 0) & (ids[i] < t)
        expected[i, inside] = (1.0 / K - w[i]) / 2
    torch.testing.assert_close(leaf.grad, expected, rtol=1e-12, atol=1e-14)


def test_theorem_3_2_exact_on_a_tabular_tree():
    # Vocabulary 2, length 3: 8 responses, a tabular policy (one softmax per prefix node).
    # π_old is uniform, so the expected loss over groups of K = 3 is the mean over all 8³
    # ordered triples, every t ∈ {1, 2, 3}.  With unnormalised weights exp(R/α) its minimiser
    # is π*(y) ∝ π_old(y)·exp(R(y)/α) (Theorems 3.1-3.2): the gradient vanishes there and every
    # perturbation raises the loss.  The paper's normalised weights are biased at finite K: their
    # gradient at π* does not vanish.
    alpha, vocab, k = 0.5, 2, 3
    seqs = torch.tensor(list(itertools.product(range(vocab), repeat=3)))
    n = seqs.shape[0]
    gen = torch.Generator().manual_seed(1)
    reward = torch.rand(n, dtype=torch.float64, generator=gen)
    groups = torch.tensor(list(itertools.product(range(n), repeat=k))).reshape(-1)
    tokens, rewards = seqs[groups], reward[groups]
    mask = torch.ones(tokens.shape, dtype=torch.float64)
    old = torch.full(tokens.shape, -torch.log(torch.tensor(float(vocab), dtype=torch.float64)))
    node1, node2 = tokens[:, 0], tokens[:, 0] * vocab + tokens[:, 1]

    # π*'s node logits: log-marginals of exp(R/α) below each prefix.
    log_star = (reward / alpha).view(vocab, vocab, vocab)
    star = [torch.logsumexp(log_star, (1, 2)).view(1, vocab),
            torch.logsumexp(log_star, 2).view(vocab, vocab),
            log_star.reshape(vocab * vocab, vocab)]

    def loss_at(theta, normalize):
        rows = [theta[0][torch.zeros_like(node1)], theta[1][node1], theta[2][node2]]
        logp = torch.stack([torch.log_softmax(r, -1).gather(1, tokens[:, j:j + 1]).squeeze(1)
                            for j, r in enumerate(rows)], dim=1)
        return gn_ivo_loss(logp, old, rewards, mask, k, alpha=alpha,
                           normalize_weights=normalize)[0]

    theta = [p.clone().requires_grad_(True) for p in star]
    best = loss_at(theta, False)
    grads = torch.autograd.grad(best, theta)
    assert max(float(g.abs().max()) for g in grads) < 1e-12
    for _ in range(20):
        moved = [p + 0.05 * torch.randn(p.shape, generator=gen, dtype=p.dtype) for p in star]
        assert float(loss_at(moved, False).detach()) > float(best.detach())
    grads = torch.autograd.grad(loss_at(theta, True), theta)
    assert max(float(g.abs().max()) for g in grads) > 1e-3


def test_step_helpers():
    mask = torch.tensor([[1, 1, 1, 1, 1, 0], [1, 1, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]])
    ends = torch.tensor([[0, 1, 0, 0, 1, 1], [1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0]])
    ids = step_ids_from_boundaries(ends, mask)
    assert ids[0].tolist()[:5] == [0, 0, 1, 1, 1] and ids[1].tolist()[:2] == [0, 1]
    assert response_step_counts(ids, mask).tolist() == [2, 2, 0]
    assert response_step_counts(None, mask).tolist() == [5, 2, 0]
    counts = torch.tensor([3, 1, 0, 0, 5, 2])
    draws = sample_prefix_steps(counts, 2, num_t=4000, generator=torch.Generator().manual_seed(0))
    assert draws[1].eq(0).all() and set(draws[0].tolist()) == {1, 2, 3}
    assert set(draws[2].tolist()) == {1, 2, 3, 4, 5}
    assert abs(float(draws[2].double().mean()) - 3.0) < 0.1


def test_degenerate_inputs_and_errors():
    logp, old, _, rewards, mask, _ = _batch()
    empty = torch.zeros_like(mask)
    leaf = logp.clone().requires_grad_(True)
    loss, _ = gn_ivo_loss(leaf, old, rewards, empty, K)
    loss.backward()
    assert float(loss.detach()) == 0.0 and torch.all(leaf.grad == 0)
    with pytest.raises(ValueError, match="rewards"):
        gn_ivo_loss(logp, old, rewards[:5], mask, K)
    with pytest.raises(ValueError, match="rewards"):
        gn_ivo_loss(logp, old, rewards * 1e3, mask, K, normalize_weights=False)
    with pytest.raises(ValueError, match="prefix_steps"):
        gn_ivo_loss(logp, old, rewards, mask, K, prefix_steps=torch.ones(3, 1, dtype=torch.long))
    with pytest.raises(ValueError, match="step_ids"):
        gn_ivo_loss(logp, old, rewards, mask, K, step_ids=torch.zeros_like(mask))
    with pytest.raises(ValueError, match="alpha"):
        gn_ivo_loss(logp, old, rewards, mask, K, alpha=0.0)
