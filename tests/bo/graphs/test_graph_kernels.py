"""The WL and RW baselines of BoGrape: the random-walk feature map against the direct-product
graph's closed form, the WL map against a slow relabelling by hand and against isomorphism,
the linear-kernel GP against BoTorch on the same inputs, and the BO loop's contract."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from optzoo.bo.graphs import (
    AttributedGraph,
    GraphKernelBO,
    GraphSpace,
    WLFeatures,
    rw_features,
    wl_counts,
)
from optzoo.bo.graphs.graph_kernels import fit_linear_gp


def _graph(edges, labels):
    n = len(labels)
    adj = np.zeros((n, n), dtype=int)
    for u, v in edges:
        adj[u, v] = adj[v, u] = 1
    return AttributedGraph(adj, labels)


G1 = _graph([(0, 1), (1, 2), (2, 0), (2, 3)], [0, 1, 1, 0])
G2 = _graph([(0, 1), (1, 2), (2, 3), (3, 4)], [1, 0, 0, 1, 1])


def _direct_product_rw(g, h, steps, decay):
    """Σ_k λ^k 1ᵀ A_×^k 1 on the direct product graph of label-matching node pairs."""
    match = np.equal.outer(g.labels, h.labels).ravel().astype(float)
    ax = np.kron((g.adjacency > 0).astype(float), (h.adjacency > 0).astype(float))
    ax = ax * match[:, None] * match[None, :]
    v, total = match.copy(), 0.0
    for k in range(steps + 1):
        total += decay ** k * v.sum()
        v = ax @ v
    return total


@pytest.mark.parametrize("steps,decay", [(0, 0.1), (2, 0.3), (3, 0.1)])
def test_random_walk_features_reproduce_the_direct_product_kernel(steps, decay):
    for g, h in [(G1, G2), (G1, G1), (G2, G2)]:
        got = rw_features(g, 2, steps, decay) @ rw_features(h, 2, steps, decay)
        assert got == pytest.approx(_direct_product_rw(g, h, steps, decay), rel=1e-12)


def _slow_wl(g, iterations):
    """WL relabelling by hand: a node's new label is (its label, sorted (edge type, neighbour
    label) multiset); counts of every (round, label), with labels compared across graphs by
    their full nested signature rather than a hash."""
    labels = [str(int(x)) for x in g.labels]
    counts = {}
    for lab in labels:
        counts[(0, lab)] = counts.get((0, lab), 0) + 1
    for h in range(1, iterations + 1):
        labels = [repr((labels[u], sorted((int(g.adjacency[u, v]), labels[v])
                                          for v in range(g.n) if g.adjacency[u, v])))
                  for u in range(g.n)]
        for lab in labels:
            counts[(h, lab)] = counts.get((h, lab), 0) + 1
    return counts


def test_wl_kernel_equals_a_slow_relabelling_and_is_permutation_invariant():
    graphs = [G1, G2, G1.permuted([3, 1, 0, 2]), _graph([(0, 1), (1, 2), (2, 3)], [0, 1, 1, 0])]
    for a, b in itertools.product(graphs, repeat=2):
        fast_a, fast_b = wl_counts(a, 2), wl_counts(b, 2)
        slow_a, slow_b = _slow_wl(a, 2), _slow_wl(b, 2)
        fast = sum(c * fast_b.get(k, 0) for k, c in fast_a.items())
        slow = sum(c * slow_b.get(k, 0) for k, c in slow_a.items())
        assert fast == slow
    feats = WLFeatures.fit([G1, G2]).transform(graphs)
    np.testing.assert_allclose(np.linalg.norm(feats, axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(feats[0], feats[2], atol=1e-14)  # isomorphic copy
    assert feats[0, -1] == 0 and feats[3, -1] > 0  # unseen labels only off the training set
    assert feats[0] @ feats[3] < 0.999  # a triangle is not a path


def test_unseen_coordinate_keeps_the_candidates_self_kernel_and_cross_kernel_exact():
    train = [G1, G2]
    cand = _graph([(0, 1), (1, 2), (2, 3), (3, 0)], [0, 0, 1, 1])
    full = WLFeatures.fit([*train, cand]).transform([*train, cand])  # vocabulary of all three
    part = WLFeatures.fit(train).transform([*train, cand])  # the GP's: training vocabulary
    np.testing.assert_allclose(part[:2] @ part[2], full[:2] @ full[2], atol=1e-14)
    assert part[2] @ part[2] == pytest.approx(1.0)


def test_linear_gp_posterior_matches_botorch_on_the_same_features():
    import torch
    from botorch.models import SingleTaskGP
    from gpytorch.kernels import LinearKernel
    from gpytorch.likelihoods import GaussianLikelihood
    from gpytorch.means import ZeroMean

    rng = np.random.default_rng(0)
    x = rng.random((8, 5))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = rng.random(8)
    post = fit_linear_gp(x, y)
    kernel = LinearKernel()
    kernel.variance = post.variance
    lik = GaussianLikelihood()
    lik.noise = post.noise
    model = SingleTaskGP(torch.as_tensor(x), torch.as_tensor(y).unsqueeze(-1), likelihood=lik,
                         covar_module=kernel, mean_module=ZeroMean(),
                         outcome_transform=None).eval()
    xt = rng.random((6, 5))
    xt /= np.linalg.norm(xt, axis=1, keepdims=True)
    mean, var = post.mean_var(xt)
    with torch.no_grad():
        p = model.posterior(torch.as_tensor(xt))
    np.testing.assert_allclose(mean, p.mean.squeeze(-1).numpy(), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(var, p.variance.squeeze(-1).numpy(), rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("kernel,optimizer", [("WL", "random"), ("RW", "random"), ("WL", "ga")])
def test_graph_kernel_bo_respects_the_budget_and_never_repeats_a_feature_vector(kernel,
                                                                             optimizer):
    space = GraphSpace(3, 5, num_labels=2)
    rng = np.random.default_rng(0)
    initial = space.sample_distinct(5, rng)

    def objective(g):
        return -float(len(g.edges)) + 0.3 * float(g.labels.sum())

    bo = GraphKernelBO(space, kernel, optimizer=optimizer, n_candidates=15, seed=1)
    res = bo.run(objective, 10, initial=initial)
    assert len(res.graphs) == 10 and all(res.feasible)
    assert bo.name == f"{kernel.lower()}-{optimizer}"
    post = bo.fit(res.graphs[:9], res.values[:9])
    keys = bo.graph_keys(res.graphs[:9], post)
    assert bo.graph_keys([res.graphs[9]], post)[0] not in keys[:9]
    assert all(np.isfinite(r["acq_exact"]) for r in res.records)


def test_graph_kernel_bo_rejects_bad_arguments():
    space = GraphSpace(3, 4, num_labels=2)
    with pytest.raises(ValueError, match="graph_kernel"):
        GraphKernelBO(space, "SP")
    with pytest.raises(ValueError, match="optimizer"):
        GraphKernelBO(space, "WL", optimizer="enumerate")
    with pytest.raises(ValueError, match="decay"):
        GraphKernelBO(space, "RW", rw_decay=1.5)
    with pytest.raises(ValueError, match="iterations"):
        wl_counts(G1, -1)
