"""BoGrape's WL and RW baselines against the peer library GraKeL (the library the paper's
baselines use) on identical small labelled graphs.

Conventions matched (read from GraKeL 0.1.11's documentation and source): GraKeL's
``WeisfeilerLehman(n_iter=h)`` sums the vertex-histogram kernels of rounds 0..h (it runs h + 1
labellings), so it is our ``iterations=h``; ``normalize=True`` is the cosine normalisation
K_ij / sqrt(K_ii K_jj) of our unit-norm feature rows.  ``RandomWalkLabeled(lamda=λ, p=p)``
sums λ^k 1ᵀA_×^k 1 for k = 0..p on the label-masked Kronecker product, as our
``rw_features(steps=p, decay=λ)`` do.

Convention differences (written down, tested as such):
* RW, k = 0: GraKeL's product matrix has all n·n' node pairs and its k = 0 term is the
  identity, so it counts n·n' pairs; ours (Gärtner et al. 2003) counts only the label-matching
  pairs, the vertices of the direct product graph.  For k ≥ 1 the two agree exactly.
* WL, edge types: GraKeL's WL ignores edge labels; ours hashes the edge attribute ``type``
  (bond orders).  The graphs compared here have one edge type, where the two agree.
"""

from __future__ import annotations

import grakel
import numpy as np
import pytest
from grakel.kernels import RandomWalkLabeled, VertexHistogram, WeisfeilerLehman

from optzoo.bo.graphs import AttributedGraph, WLFeatures, rw_features, wl_counts

NUM_LABELS = 3


def _graphs(seed: int = 0) -> list[AttributedGraph]:
    """Random labelled graphs of 3-7 nodes, one edge type, some with isolated nodes."""
    rng = np.random.default_rng(seed)
    out = []
    for n in (3, 4, 5, 6, 7, 5, 6):
        a = np.triu((rng.random((n, n)) < 0.45).astype(int), 1)
        out.append(AttributedGraph(a + a.T, rng.integers(0, NUM_LABELS, n)))
    return out


def _to_grakel(g: AttributedGraph):
    return grakel.Graph((g.adjacency > 0).astype(float),
                        node_labels={i: int(lab) for i, lab in enumerate(g.labels)})


def _wl_raw(graphs, iterations: int) -> np.ndarray:
    counts = [wl_counts(g, iterations) for g in graphs]
    return np.array([[sum(c * b.get(k, 0) for k, c in a.items()) for b in counts]
                     for a in counts], dtype=float)


@pytest.mark.parametrize("iterations", [1, 2, 3])
def test_wl_kernel_matches_grakel_raw_and_normalised(iterations):
    gs = _graphs()
    ref = WeisfeilerLehman(n_iter=iterations, base_graph_kernel=VertexHistogram,
                           normalize=False).fit_transform([_to_grakel(g) for g in gs])
    np.testing.assert_allclose(_wl_raw(gs, iterations), ref, rtol=0, atol=1e-9)
    ref_n = WeisfeilerLehman(n_iter=iterations, base_graph_kernel=VertexHistogram,
                             normalize=True).fit_transform([_to_grakel(g) for g in gs])
    x = WLFeatures.fit(gs, iterations).transform(gs)
    np.testing.assert_allclose(x @ x.T, ref_n, rtol=0, atol=1e-10)
    assert not np.allclose(ref_n, 1.0)  # the graphs are not all WL-equivalent


def test_wl_cross_kernel_of_unseen_candidates_matches_grakel_transform():
    """The GP's k(candidate, train) with candidate labels outside the training vocabulary:
    GraKeL's fit/transform normalises by the candidates' full self-kernels, as our "unseen"
    coordinate does."""
    gs = _graphs(1)
    train, cand = gs[:3], gs[3:]
    wl = WeisfeilerLehman(n_iter=3, base_graph_kernel=VertexHistogram, normalize=True)
    wl.fit([_to_grakel(g) for g in train])
    ref = wl.transform([_to_grakel(g) for g in cand])
    feats = WLFeatures.fit(train, 3)
    ours = feats.transform(cand) @ feats.transform(train).T
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-10)
    assert feats.transform(cand)[:, -1].max() > 0  # some candidate labels are unseen


@pytest.mark.parametrize("steps,decay", [(1, 0.1), (2, 0.3), (3, 0.1)])
def test_random_walk_kernel_matches_grakel_up_to_its_k0_convention(steps, decay):
    gs = _graphs(2)
    ref = RandomWalkLabeled(lamda=decay, p=steps, method_type="baseline",
                            normalize=False).fit_transform([_to_grakel(g) for g in gs])
    f = np.array([rw_features(g, NUM_LABELS, steps, decay) for g in gs])
    ours = f @ f.T
    n = np.array([g.n for g in gs], dtype=float)
    matched = f[:, :NUM_LABELS] @ f[:, :NUM_LABELS].T  # k = 0: label-matching node pairs
    # GraKeL's k = 0 term counts every node pair (n·n'); ours counts the matching ones
    np.testing.assert_allclose(ours + np.outer(n, n) - matched, ref, rtol=1e-12, atol=1e-9)
    assert np.abs(np.outer(n, n) - matched).max() >= 1  # the difference is real here
    # with the k = 0 term made equal, the normalised kernels (GraKeL normalize=True) agree
    ref_n = RandomWalkLabeled(lamda=decay, p=steps, method_type="baseline",
                              normalize=True).fit_transform([_to_grakel(g) for g in gs])
    d = np.sqrt(np.diag(ref))
    np.testing.assert_allclose((ours + np.outer(n, n) - matched) / np.outer(d, d), ref_n,
                               rtol=0, atol=1e-12)


def test_wl_uses_edge_types_where_grakel_does_not():
    """Two triangles labelled alike, one with a double bond: GraKeL's WL cannot tell them
    apart (edge labels ignored), ours can (bond orders hashed)."""
    single = AttributedGraph([[0, 1, 1], [1, 0, 1], [1, 1, 0]], [0, 1, 1])
    double = AttributedGraph([[0, 2, 1], [2, 0, 1], [1, 1, 0]], [0, 1, 1])
    ref = WeisfeilerLehman(n_iter=2, base_graph_kernel=VertexHistogram,
                           normalize=True).fit_transform([_to_grakel(single),
                                                          _to_grakel(double)])
    assert ref[0, 1] == pytest.approx(1.0)
    x = WLFeatures.fit([single, double], 2).transform([single, double])
    assert (x @ x.T)[0, 1] < 0.99
