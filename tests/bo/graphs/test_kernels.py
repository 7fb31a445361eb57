"""Shortest-path kernels: against a slow pairs-of-pairs reference, PSD, GPyTorch = NumPy, and the
posterior against BoTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.bo.graphs import (
    KINDS,
    AttributedGraph,
    GraphSpace,
    HydrogenCount,
    fit_graph_gp,
    graph_features,
    kernel_matrix,
    path_counts,
)
from optzoo.bo.graphs.kernels import ShortestPathKernel, path_dim, scale_targets


def _reference_path_kernel(g1: AttributedGraph, g2: AttributedGraph, use_labels: bool) -> float:
    """Σ over ordered pairs (u,v) of G1 and (u',v') of G2 of 1[d = d'] (and equal end labels
    for SP), over n1² n2²: the definition, with no count features."""
    d1, d2 = g1.distances().ravel(), g2.distances().ravel()
    match = d1[:, None] == d2[None, :]
    if use_labels:
        a1, b1 = np.repeat(g1.labels, g1.n), np.tile(g1.labels, g1.n)
        a2, b2 = np.repeat(g2.labels, g2.n), np.tile(g2.labels, g2.n)
        match &= (a1[:, None] == a2[None, :]) & (b1[:, None] == b2[None, :])
    return match.sum() / (g1.n**2 * g2.n**2)


def _reference_feature_kernel(f1: np.ndarray, f2: np.ndarray) -> float:
    return float((f1 @ f2.T).sum() / (len(f1) * len(f2) * f1.shape[1]))


@pytest.mark.parametrize("kind", KINDS)
def test_kernel_matches_the_pairs_of_pairs_definition(kind, rng):
    space = GraphSpace(2, 7, 3, edge_types=2, features=(HydrogenCount((4, 3, 2), max_h=4),))
    graphs = [space.random_graph(rng) for _ in range(40)]
    graphs = [g for g in graphs if space.in_domain(g)][:12]
    assert len(graphs) >= 8
    alpha, beta, var = 0.7, 1.9, 0.4
    x = graph_features(graphs, space, kind)
    k = kernel_matrix(x, x, kind, path_dim(kind, space.n_max, 3), alpha, beta, var)
    feats = [space.node_features(g) for g in graphs]
    for i, gi in enumerate(graphs):
        for j, gj in enumerate(graphs):
            lin = alpha * _reference_path_kernel(gi, gj, kind in ("SP", "ESP")) + \
                beta * _reference_feature_kernel(feats[i], feats[j])
            ref = var * np.exp(lin) if kind.startswith("E") else lin
            assert k[i, j] == pytest.approx(ref, rel=1e-12, abs=1e-14)


def test_count_features_are_the_catechol_counts(rng):
    # D_s and P_{s,a,b}: ordered pairs, self-pairs at s = 0, Floyd–Warshall distances
    g = AttributedGraph([[0, 1, 0, 0], [1, 0, 1, 1], [0, 1, 0, 0], [0, 1, 0, 0]], [0, 1, 0, 0])
    d = path_counts(g, "SSP", 5, 2)
    assert d.tolist() == [4, 6, 6, 0, 0]  # star K_{1,3}: 3 edges, 3 pairs at distance 2
    p = path_counts(g, "SP", 5, 2).reshape(5, 2, 2)
    assert p[0].tolist() == [[3, 0], [0, 1]]
    assert p[1].tolist() == [[0, 3], [3, 0]]
    assert p[2].tolist() == [[6, 0], [0, 0]]


@pytest.mark.parametrize("kind", KINDS)
def test_kernel_is_psd_on_random_graph_sets(kind, rng):
    space = GraphSpace(2, 8, 2)
    for _ in range(5):
        graphs = [space.random_graph(rng) for _ in range(30)]
        x = graph_features(graphs, space, kind)
        for alpha, beta in ((0.01, 100.0), (100.0, 0.01), (1.0, 1.0)):
            k = kernel_matrix(x, x, kind, path_dim(kind, 8, 2), alpha, beta, 1.0)
            assert np.allclose(k, k.T)
            assert np.linalg.eigvalsh(k).min() >= -1e-9 * np.abs(k).max()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_gpytorch_kernel_equals_numpy(kind, dtype, rng):
    space = GraphSpace(2, 6, 2)
    graphs = [space.random_graph(rng) for _ in range(7)]
    x = graph_features(graphs, space, kind)
    p = path_dim(kind, 6, 2)
    kern = ShortestPathKernel(kind, p, alpha=0.3, beta=2.5, variance=0.6).to(dtype)
    tx = torch.as_tensor(x, dtype=dtype)
    with torch.no_grad():
        full = kern(tx, tx).to_dense()
        diag = kern(tx, tx, diag=True)
    # the constrained parameters round-trip through a sigmoid: compare with their values
    ref = kernel_matrix(x, x, kind, p, kern.alpha.item(), kern.beta.item(), kern.variance.item())
    assert kern.alpha.item() == pytest.approx(0.3, rel=1e-6)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    assert full.dtype == dtype
    assert np.allclose(full.double().numpy(), ref, rtol=tol, atol=tol)
    assert np.allclose(diag.double().numpy(), np.diag(ref), rtol=tol, atol=tol)
    # batched inputs broadcast like any GPyTorch kernel
    with torch.no_grad():
        batched = kern(tx.expand(3, *tx.shape), tx.expand(3, *tx.shape)).to_dense()
    assert batched.shape == (3, 7, 7)


@pytest.mark.parametrize("kind", ["SSP", "ESP"])
def test_numpy_posterior_equals_botorch_posterior(kind, rng):
    space = GraphSpace(3, 6, 2)
    graphs = space.sample_distinct(12, rng)
    y, _, _ = scale_targets(np.array([len(g.edges) + g.labels.sum() for g in graphs], float))
    x = graph_features(graphs, space, kind)
    model, post = fit_graph_gp(x, y, kind, path_dim(kind, 6, 2))
    test = graph_features([space.random_graph(rng) for _ in range(9)], space, kind)
    with torch.no_grad():
        p = model.posterior(torch.as_tensor(test))
    mean, var = post.mean_var(test)
    assert np.allclose(mean, p.mean.squeeze(-1).numpy(), atol=1e-8)
    assert np.allclose(var, p.variance.squeeze(-1).numpy(), atol=1e-8)
    assert 0.01 <= post.alpha <= 100 and 0.01 <= post.beta <= 100


def test_kernel_errors_name_the_argument(rng):
    space = GraphSpace(2, 4, 2)
    with pytest.raises(ValueError, match="kind"):
        graph_features([space.random_graph(rng)], space, "WL")
    disconnected = AttributedGraph(np.zeros((3, 3), dtype=int), [0, 0, 0])
    with pytest.raises(ValueError, match="graphs\\[0\\]"):
        graph_features([disconnected], space, "SSP")
    with pytest.raises(ValueError, match="connected"):
        path_counts(disconnected, "SSP", 4, 1)
    with pytest.raises(ValueError, match="alpha"):
        ShortestPathKernel("SSP", 4, alpha=1000.0)
    with pytest.raises(ValueError, match="path_dim"):
        ShortestPathKernel("SSP", 0)
    with pytest.raises(ValueError, match="y"):
        scale_targets(np.array([1.0, np.nan]))


@st.composite
def _graphs(draw):
    n = draw(st.integers(2, 7))
    parents = [draw(st.integers(0, v - 1)) for v in range(1, n)]
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=8))
    adj = np.zeros((n, n), dtype=int)
    for v, u in enumerate(parents, start=1):
        adj[u, v] = adj[v, u] = 1
    for u, v in extra:
        if u != v:
            adj[u, v] = adj[v, u] = 1
    labels = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    perm = draw(st.permutations(range(n)))
    return AttributedGraph(adj, labels), perm


@settings(max_examples=60)
@given(_graphs())
def test_features_are_invariant_under_node_relabelling(graph_perm):
    g, perm = graph_perm
    space = GraphSpace(2, 7, 3)
    for kind in KINDS:
        a, b = graph_features([g, g.permuted(perm)], space, kind)
        assert np.array_equal(a, b)
    # D_s sums to n² (every ordered pair has one distance) and D_0 = n
    d = path_counts(g, "SSP", 7, 3)
    assert d.sum() == g.n**2 and d[0] == g.n
