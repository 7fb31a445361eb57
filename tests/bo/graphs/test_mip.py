"""The MIP: exact distances (vs networkx), the bijection of Theorem 3.5 (SCIP's solution count),
symmetry breaking that keeps every graph, kernel/posterior encoding, and the acquisition
optimum against brute force over an enumerated space."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from optzoo.bo.graphs import (
    AttributedGraph,
    DegreeBounds,
    GraphMIP,
    GraphSpace,
    LabelCount,
    build_acquisition,
    enumerate_graphs,
    fit_graph_gp,
    graph_features,
    isomorphic,
    solve_acquisition,
)
from optzoo.bo.graphs.kernels import path_dim, scale_targets
from optzoo.bo.graphs.space import atlas_structures


@pytest.mark.parametrize("n", [3, 5, 8])
def test_mip_distances_equal_networkx_shortest_paths(n, rng):
    space = GraphSpace(n, n, 2, symmetry_breaking=False)
    for _ in range(6):
        g = space.random_graph(rng, n=n)
        mip = GraphMIP(space, n)
        mip.distance_indicators()  # the valid inequalities must accept every graph
        mip.fix(g)
        mip.model.optimize()
        assert mip.model.getStatus() == "optimal"
        ref = dict(nx.all_pairs_shortest_path_length(g.to_networkx()))
        d = mip.distances()
        assert all(d[u, v] == ref[u][v] for u in range(n) for v in range(n))
        m = mip.model
        for (u, v, w), var in mip.delta.items():
            on_path = ref[u][w] + ref[w][v] == ref[u][v]
            assert round(m.getVal(var)) == int(on_path)


def test_disconnected_graph_is_infeasible():
    space = GraphSpace(4, 4, 1, symmetry_breaking=False)
    mip = GraphMIP(space, 4)
    mip.fix(AttributedGraph([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]]))
    mip.model.optimize()
    assert mip.model.getStatus() == "infeasible"


@pytest.mark.parametrize("n, labelled_connected", [(3, 4), (4, 38), (5, 728)])
@pytest.mark.parametrize("indicators", [False, True])
def test_theorem_3_5_one_solution_per_labelled_connected_graph(n, labelled_connected,
                                                                indicators):
    # OEIS A001187: connected labelled graphs on n nodes; every (A, d, δ[, d^s]) is counted
    space = GraphSpace(n, n, 1, symmetry_breaking=False)
    mip = GraphMIP(space, n)
    if indicators:
        mip.distance_indicators()
    mip.model.setParamsCountsols()
    mip.model.count()
    assert mip.model.getNCountedSols() == labelled_connected


def test_symmetry_breaking_keeps_every_isomorphism_class():
    for n in (4, 5, 6):
        space = GraphSpace(n, n, 1, symmetry_breaking=True)
        for adj in atlas_structures(n):
            order = list(nx.bfs_tree(nx.from_numpy_array(adj), 0))
            g = AttributedGraph(adj).permuted(order)
            mip = GraphMIP(space, n)
            mip.fix(g)
            mip.model.optimize()
            assert mip.model.getStatus() == "optimal"


def _posterior(space, kind, rng, n_train=10):
    graphs = space.sample_distinct(n_train, rng)
    y = np.array([len(g.edges) / g.n - 0.4 * g.labels.sum() + 0.2 * rng.normal()
                  for g in graphs])
    ys, _, _ = scale_targets(y)
    x = graph_features(graphs, space, kind)
    _, post = fit_graph_gp(x, ys, kind, path_dim(kind, space.n_max, space.num_labels))
    return graphs, post


@pytest.mark.parametrize("kind", ["SSP", "SP", "ESSP", "ESP"])
def test_mip_kernel_encoding_reproduces_the_lcb_of_fixed_graphs(kind, rng):
    space = GraphSpace(3, 5, 2, symmetry_breaking=False)
    _, post = _posterior(space, kind, rng)
    for _ in range(3):
        g = space.random_graph(rng)
        mip = build_acquisition(space, g.n, post, beta=1.5)
        mip.fix(g)
        mip.model.optimize()
        exact = post.lcb(graph_features([g], space, kind), 1.5)[0]
        assert mip.model.getObjVal() == pytest.approx(exact, abs=1e-5)


def _assert_matches_brute_force(space, post, beta, exclude=None, squares="native"):
    graphs = list(enumerate_graphs(space))
    feats = graph_features(graphs, space, post.kind)
    lcb = post.lcb(feats, beta)
    if exclude:
        banned = {tuple(np.round(f, 10)) for f in graph_features(exclude, space, post.kind)}
        lcb = np.where([tuple(np.round(f, 10)) in banned for f in feats], np.inf, lcb)
    res = solve_acquisition(space, post, beta, time_limit=60, exclude=exclude, squares=squares)
    assert res.optimal
    value = post.lcb(graph_features([res.graph], space, post.kind), beta)[0]
    best = lcb.min()
    assert value == pytest.approx(best, abs=1e-6)
    assert res.value == pytest.approx(best, abs=1e-4)  # the solver's own value, its tolerances
    assert space.check(res.graph)
    ties = [graphs[i] for i in np.flatnonzero(lcb <= best + 1e-6)]
    assert any(isomorphic(res.graph, h) for h in ties)


@pytest.mark.parametrize("kind, beta", [("SSP", 0.0), ("SSP", 2.0), ("SP", 0.0), ("SP", 2.0)])
@pytest.mark.parametrize("no_repeats", [False, True])
def test_acquisition_optimum_equals_brute_force(kind, beta, no_repeats, rng):
    space = GraphSpace(3, 5, 2)
    observed, post = _posterior(space, kind, rng)
    _assert_matches_brute_force(space, post, beta, exclude=observed if no_repeats else None)


@pytest.mark.parametrize("kind", ["ESSP", "ESP"])
def test_exponential_acquisition_optimum_equals_brute_force(kind, rng):
    space = GraphSpace(3, 4, 2)
    _, post = _posterior(space, kind, rng, n_train=6)
    _assert_matches_brute_force(space, post, 2.0)


def test_constrained_acquisition_optimum_equals_brute_force(rng):
    space = GraphSpace(3, 5, 2, constraints=(DegreeBounds(max_degree=2), LabelCount(1, hi=1)))
    observed, post = _posterior(space, "SSP", rng)
    _assert_matches_brute_force(space, post, 2.0, exclude=observed)


def test_indicator_layers_give_the_same_optimum(rng):
    space = GraphSpace(3, 4, 2)
    _, post = _posterior(space, "SSP", rng)
    _assert_matches_brute_force(space, post, 2.0, squares="layers")


def test_mip_errors_name_the_argument(rng):
    space = GraphSpace(3, 4, 2)
    _, post = _posterior(space, "SSP", rng, n_train=4)
    with pytest.raises(ValueError, match="n"):
        GraphMIP(space, 7)
    with pytest.raises(ValueError, match="beta"):
        build_acquisition(space, 3, post, beta=-1.0)
    with pytest.raises(ValueError, match="squares"):
        build_acquisition(space, 3, post, beta=1.0, squares="cubes")
    with pytest.raises(ValueError, match="post"):
        build_acquisition(GraphSpace(3, 4, 3), 3, post, beta=1.0)
    with pytest.raises(ValueError, match="time_limit"):
        solve_acquisition(space, post, 1.0, time_limit=0)
    with pytest.raises(ValueError, match="graph"):
        GraphMIP(space, 3).fix(AttributedGraph(np.ones((4, 4)) - np.eye(4)))


def test_gap_brackets_the_brute_force_optimum_even_when_scip_stops_early(rng):
    # the gap must be a valid bound: value − gap ≤ the true (brute-force) optimum ≤ value,
    # for a solve stopped by a tiny time limit as for one proven optimal (gap 0)
    space = GraphSpace(3, 5, 2)
    _, post = _posterior(space, "SP", rng)
    graphs = list(enumerate_graphs(space))
    best = float(post.lcb(graph_features(graphs, space, "SP"), 2.0).min())
    for limit in (0.02, 60.0):
        res = solve_acquisition(space, post, 2.0, time_limit=limit)
        assert res.gap >= 0.0
        if res.optimal:
            assert res.gap == 0.0 and res.value == pytest.approx(best, abs=1e-4)
        if np.isfinite(res.gap):
            # res.value is the solver's own objective: within its tolerances (as above)
            assert res.value - res.gap <= best + 1e-4 and best <= res.value + 1e-4
    assert res.optimal  # the 60 s solve


def test_gap_arithmetic_and_cpu_clock(monkeypatch, rng):
    from optzoo.bo.graphs import mip as mip_mod
    from optzoo.bo.graphs.mip import AcquisitionResult

    sizes = {3: {"status": "optimal", "bound": 0.2}, 4: {"status": "infeasible", "bound": 1e20},
             5: {"status": "timelimit", "bound": -0.3}}
    assert AcquisitionResult(None, 0.1, per_size=sizes).gap == pytest.approx(0.4)
    sizes[5]["bound"] = -1e20  # no finite bound from the stopped size
    assert AcquisitionResult(None, 0.1, per_size=sizes).gap == float("inf")
    assert AcquisitionResult(None, 0.1, per_size={3: sizes[3]}).gap == 0.0
    # SCIP's clock is CPU time, so the proven-optimal share does not depend on machine load
    seen = []
    build = mip_mod.build_acquisition

    def spy(*args, **kwargs):
        out = build(*args, **kwargs)
        seen.append(out.model)
        return out

    monkeypatch.setattr(mip_mod, "build_acquisition", spy)
    space = GraphSpace(3, 3, 2)
    _, post = _posterior(space, "SSP", rng, n_train=4)
    solve_acquisition(space, post, 1.0, time_limit=5.0)
    assert seen and all(m.getParam("timing/clocktype") == 1 for m in seen)
