"""The graph space: validation, constraints (Python check vs the MIP), sampling, enumeration."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from optzoo.bo.graphs import (
    AttributedGraph,
    CustomConstraint,
    DegreeBounds,
    GraphSpace,
    LabelCount,
    MaxRings,
    NoTriangles,
    Valence,
    enumerate_graphs,
    isomorphic,
)
from optzoo.bo.graphs.mip import mip_feasible
from optzoo.bo.graphs.space import atlas_structures


def test_graph_validation_names_the_argument():
    with pytest.raises(ValueError, match="adjacency"):
        AttributedGraph(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="symmetric"):
        AttributedGraph([[0, 1], [0, 0]])
    with pytest.raises(ValueError, match="diagonal"):
        AttributedGraph([[1, 0], [0, 0]])
    with pytest.raises(ValueError, match="non-negative"):
        AttributedGraph([[0, -1], [-1, 0]])
    with pytest.raises(ValueError, match="labels"):
        AttributedGraph([[0, 1], [1, 0]], [0, 1, 2])
    with pytest.raises(ValueError, match="labels"):
        AttributedGraph([[0, 1], [1, 0]], [0, -1])


def test_space_validation_names_the_argument():
    with pytest.raises(ValueError, match="n_min"):
        GraphSpace(1, 4)
    with pytest.raises(ValueError, match="n_max"):
        GraphSpace(5, 4)
    with pytest.raises(ValueError, match="num_labels"):
        GraphSpace(2, 4, 0)
    with pytest.raises(ValueError, match="constraints"):
        GraphSpace(2, 4, constraints=[object()])
    with pytest.raises(ValueError, match="label_names"):
        GraphSpace(2, 4, 2, label_names=["a"])
    with pytest.raises(ValueError, match="max_degree"):
        DegreeBounds(max_degree=0)
    with pytest.raises(ValueError, match="encode"):
        CustomConstraint(encode=None)
    with pytest.raises(ValueError, match="graph"):
        GraphSpace(2, 4).check("not a graph")


def test_networkx_round_trip_and_isomorphism(rng):
    space = GraphSpace(3, 7, 3, edge_types=2)
    for _ in range(20):
        g = space.random_graph(rng)
        h = AttributedGraph.from_networkx(g.to_networkx())
        assert h == g
        perm = rng.permutation(g.n)
        assert isomorphic(g, g.permuted(perm))
        assert np.array_equal(g.permuted(perm).distances(), g.distances()[np.ix_(perm, perm)])


def test_enumeration_counts_connected_graphs_oeis_a001349():
    # numbers of connected unlabelled graphs on 1..7 nodes (OEIS A001349)
    assert [len(atlas_structures(n)) for n in range(1, 8)] == [1, 1, 2, 6, 21, 112, 853]
    space = GraphSpace(3, 4, 2)
    graphs = list(enumerate_graphs(space))
    assert len(graphs) == 2 * 2**3 + 6 * 2**4
    with pytest.raises(ValueError, match="n_max"):
        list(enumerate_graphs(GraphSpace(3, 8)))


CONSTRAINTS = [DegreeBounds(min_degree=2), DegreeBounds(max_degree=2), MaxRings(0),
               MaxRings(1), NoTriangles(), LabelCount(1, lo=1, hi=2), Valence((2, 3))]


@pytest.mark.parametrize("constraint", CONSTRAINTS, ids=lambda c: type(c).__name__)
def test_python_check_agrees_with_the_mip_encoding(constraint, rng):
    space = GraphSpace(3, 6, 2, edge_types=2 if isinstance(constraint, Valence) else 1,
                       constraints=(constraint,))
    outcomes = []
    for _ in range(16):
        g = space.random_graph(rng)
        outcomes.append(constraint.check(g, space))
        assert outcomes[-1] == mip_feasible(space, g)
    assert set(outcomes) == {True, False}  # both sides of the constraint were exercised


def test_custom_constraint_without_check_is_checked_by_the_mip(rng):
    # "node 0 is a leaf": a user constraint written only on MIP variables
    leaf0 = CustomConstraint(lambda mip: mip.model.addCons(mip.degree(0) == 1))
    space = GraphSpace(3, 5, 1, constraints=(leaf0,))
    for _ in range(15):
        g = space.random_graph(rng)
        assert space.check(g) == (int((g.adjacency[0] > 0).sum()) == 1)


def test_samples_are_feasible_and_distinct(rng):
    space = GraphSpace(4, 6, 2, constraints=(DegreeBounds(max_degree=3), NoTriangles()))
    graphs = space.sample_distinct(8, rng)
    assert all(space.check(g) for g in graphs)
    assert all(g.is_connected() for g in graphs)
    for i in range(len(graphs)):
        for j in range(i):
            assert not isomorphic(graphs[i], graphs[j])


def test_sampler_falls_back_to_the_mip_when_rejection_fails(rng):
    # a 6-node graph with all degrees exactly 3 is rare under the random-graph proposal
    space = GraphSpace(6, 6, 1, constraints=(DegreeBounds(min_degree=3, max_degree=3),))
    g = space.sample(rng, max_tries=1)
    assert space.check(g)
    assert set(dict(nx.degree(g.to_networkx())).values()) == {3}
