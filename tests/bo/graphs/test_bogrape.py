"""The BO loop and the baselines: feasibility of every proposal, the acquisition the MIP reports
against the exact posterior, agreement with the brute-force acquisition, and input errors."""

from __future__ import annotations

import math

import pytest

from optzoo.bo.graphs import (
    BoGrape,
    DegreeBounds,
    GraphSpace,
    LabelCount,
    NoTriangles,
    QEDObjective,
    RandomGCN,
    SurrogateBO,
    graph_ga,
    isomorphic,
    molecular_space,
    pk_miqp_beta,
    random_search,
    to_molecule,
)
from optzoo.bo.graphs.baselines import SeenGraphs, mutant


def _space():
    return GraphSpace(3, 5, 2, constraints=(DegreeBounds(max_degree=3), NoTriangles(),
                                            LabelCount(1, lo=1)))


def test_bogrape_proposals_are_feasible_and_reported_exactly(rng):
    space = _space()
    f = RandomGCN(2, 5, seed=3)
    bo = BoGrape(space, "SSP", n_init=4, time_limit=30, seed=1)
    res = bo.run(f.value, budget=7)
    assert len(res.graphs) == 7 and all(res.feasible)
    assert len(res.records) == 3
    for rec in res.records:
        assert rec["acq_optimal"] and not rec["fallback"]
        assert rec["acq_value"] == pytest.approx(rec["acq_exact"], abs=1e-4)
        assert rec["beta"] == pytest.approx(pk_miqp_beta(rec["t"], 5))
    # no graph the kernel cannot tell from an evaluated one is proposed again
    for i in range(4, 7):
        assert not any(isomorphic(res.graphs[i], h) for h in res.graphs[:i])
    assert res.best_so_far()[-1] == res.values.min() == res.best_value


def test_mip_acquisition_equals_enumeration_along_a_run(rng):
    space = GraphSpace(3, 4, 2)
    f = RandomGCN(2, 4, seed=0)
    init = space.sample_distinct(4, rng)
    enum = SurrogateBO(space, "SP", optimizer="enumerate")
    bo = BoGrape(space, "SP", time_limit=30)
    checks = []

    def compare(t, posterior, beta, graph, info, observed):
        _, rec = enum.optimize_acquisition(posterior, beta, observed)
        checks.append((info["acq_exact"], rec["acq_value"]))

    bo.on_iteration = compare
    bo.run(f.value, budget=8, initial=init)
    assert len(checks) == 4
    for mip_value, brute in checks:
        assert mip_value == pytest.approx(brute, abs=1e-6)


def test_maximize_runs_ucb_on_the_objective(rng):
    space = GraphSpace(3, 4, 1)
    bo = BoGrape(space, "SSP", n_init=3, maximize=True, time_limit=30, seed=0)
    res = bo.run(lambda g: float(len(g.edges)), budget=5)
    assert res.maximize and res.best_value == max(res.values)
    assert res.best_value == 6.0  # K_4 has the most edges and is found quickly


def test_bogrape_input_errors_name_the_argument():
    space = GraphSpace(3, 4, 1)
    with pytest.raises(ValueError, match="kind"):
        BoGrape(space, "WL")
    with pytest.raises(ValueError, match="n_init"):
        BoGrape(space, n_init=0)
    with pytest.raises(ValueError, match="time_limit"):
        BoGrape(space, time_limit=-1)
    with pytest.raises(ValueError, match="beta"):
        BoGrape(space, beta=-2.0)
    with pytest.raises(ValueError, match="space"):
        BoGrape("space")
    bo = BoGrape(space, n_init=2)
    with pytest.raises(ValueError, match="budget"):
        bo.run(lambda g: 0.0, budget=1)
    with pytest.raises(ValueError, match="objective"):
        bo.run(lambda g: math.nan, budget=3)
    with pytest.raises(ValueError, match="objective"):
        bo.run("f", budget=3)
    with pytest.raises(ValueError, match="beta"):
        BoGrape(space, beta=lambda t: -1.0).beta_at(1)
    with pytest.raises(ValueError, match="optimizer"):
        SurrogateBO(space, optimizer="bfgs")


@pytest.mark.parametrize("optimizer", ["random", "ga", "enumerate"])
def test_surrogate_baselines_stay_feasible(optimizer, rng):
    space = _space()
    f = RandomGCN(2, 5, seed=1)
    res = SurrogateBO(space, "SSP", optimizer=optimizer, n_init=4, seed=2).run(f.value, 9)
    assert all(res.feasible) and len(res.values) == 9


def test_random_and_ga_baselines_stay_feasible(rng):
    space = _space()
    f = RandomGCN(2, 5, seed=1)
    init = space.sample_distinct(4, rng)
    for res in (random_search(space, f.value, 20, rng, initial=init),
                graph_ga(space, f.value, 20, rng, initial=init, population=4)):
        assert all(res.feasible) and len(res.values) == 20
        assert res.graphs[:4] == init
    ga = graph_ga(space, f.value, 20, rng, initial=init, population=4)
    seen = SeenGraphs()
    for g in ga.graphs:  # the GA never evaluates a graph isomorphic to an earlier one
        assert g not in seen
        seen.add(g)


def test_ga_mutants_respect_constraints(rng):
    space = molecular_space(3, 6)
    parent = space.sample(rng)
    for _ in range(10):
        child = mutant(parent, space, rng)
        assert child is not None and space.check(child)
        assert to_molecule(child, space) is not None


def test_molecular_bogrape_proposals_are_valid_molecules(rng):
    space = molecular_space(3, 4)
    qed = QEDObjective(space)
    res = BoGrape(space, "SSP", n_init=3, maximize=True, time_limit=30).run(qed, budget=5)
    assert all(res.feasible)
    for g in res.graphs:
        mol = to_molecule(g, space)
        assert mol is not None
        # RDKit's own hydrogen count equals the MIP's feature
        assert [a.GetTotalNumHs() for a in mol.GetAtoms()] == \
            space.features[0].hydrogens(g).tolist()
    assert 0 < res.best_value <= 1
