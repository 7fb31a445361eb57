"""CVRP instances: X files (paths, BKS, rounding), the X-like generator, specs, references."""

import dataclasses
import math
import pickle

import numpy as np
import pytest
import pyvrp
import vrplib

from optzoo.routing import instances as inst
from optzoo.routing.hgs import run_hgs
from optzoo.routing.instances import (
    DEMAND_RANGES,
    InstanceSpec,
    best_known_cost,
    data_root,
    gap,
    generate_x_like,
    list_x_instances,
    load_x_instance,
    reference_cost,
    x_like_arrays,
)
from tests.conftest import shared_dir

DATA = shared_dir() / "data"
CVRP = DATA / "cvrp"


def _vrplib_text(a: dict) -> str:
    """A generated instance written as a VRPLIB CVRP file, by hand (independent of the code)."""
    lines = ["NAME : t", "TYPE : CVRP", f"DIMENSION : {len(a['coords'])}",
             "EDGE_WEIGHT_TYPE : EUC_2D", f"CAPACITY : {a['capacity']}", "NODE_COORD_SECTION"]
    lines += [f"{i + 1} {x} {y}" for i, (x, y) in enumerate(a["coords"])]
    lines += ["DEMAND_SECTION"] + [f"{i + 1} {q}" for i, q in enumerate(a["demands"])]
    return "\n".join(lines + ["DEPOT_SECTION", "1", "-1", "EOF"]) + "\n"


# ----------------------------------------------------------------------------- X files

def test_data_root_resolution(monkeypatch, tmp_path):
    monkeypatch.delenv("OPTZOO_DATA", raising=False)
    assert data_root() == CVRP or data_root().samefile(CVRP)
    assert data_root(DATA).samefile(CVRP) and data_root(CVRP).samefile(CVRP)
    monkeypatch.setenv("OPTZOO_DATA", str(DATA))
    assert data_root().samefile(CVRP)
    monkeypatch.setenv("OPTZOO_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="OPTZOO_DATA"):
        data_root()
    with pytest.raises(FileNotFoundError, match="path"):
        data_root(tmp_path)
    monkeypatch.delenv("OPTZOO_DATA")
    monkeypatch.setattr(inst, "_REPO", tmp_path / "repo")
    monkeypatch.setattr(inst, "_FALLBACK_DATA", tmp_path / "none")
    with pytest.raises(FileNotFoundError, match="OPTZOO_DATA"):
        data_root()


def test_list_x_instances_sorted_by_size():
    names = list_x_instances()
    assert len(names) == 100 and len(set(names)) == 100
    sizes = [int(n.split("-")[1][1:]) for n in names]
    assert sizes == sorted(sizes)
    assert names[0] == "X-n101-k25" and names[-1] == "X-n1001-k43"


@pytest.mark.parametrize("name", ["X-n101-k25", "X-n148-k46", "X-n200-k36", "X-n237-k14"])
def test_bks_equals_vrplib_and_the_rounded_cost_of_the_bks_routes(name):
    bks = best_known_cost(name)
    assert bks == vrplib.read_solution(str(CVRP / f"{name}.sol"))["cost"]
    # The BKS convention is rounded Euclidean distances: the .sol routes cost exactly the BKS
    # on the instance as we load it, and they are feasible.
    sol = pyvrp.read_solution(CVRP / f"{name}.sol", load_x_instance(name))
    assert sol.is_feasible() and sol.distance() == bks


def test_known_bks_and_instance_fields():
    assert best_known_cost("X-n101-k25") == 27591
    data = load_x_instance("X-n101-k25.vrp")
    assert data.num_clients == 100 and data.num_depots == 1
    assert data.vehicle_type(0).capacity == [206]
    assert data.location(0).x == 365 and data.location(0).y == 689


def test_bad_names_and_malformed_solution(tmp_path):
    for bad in ("X-n999-k1", "n101", "X-n101-k25x"):
        with pytest.raises(ValueError, match="name"):
            load_x_instance(bad)
        with pytest.raises(ValueError, match="name"):
            best_known_cost(bad)
    with pytest.raises(TypeError, match="name"):
        load_x_instance(101)
    (tmp_path / "X-n3-k1.vrp").write_text((CVRP / "X-n101-k25.vrp").read_text())
    (tmp_path / "X-n3-k1.sol").write_text("Route #1: 1 2\nCost twelve\n")
    with pytest.raises(ValueError, match="Cost"):
        best_known_cost("X-n3-k1", root=tmp_path)


def test_gap():
    assert gap(27632, 27591) == pytest.approx(100 * 41 / 27591)
    assert gap(100, 100) == 0.0 and gap(90, 100) == pytest.approx(-10.0)
    for bad_bks in (0, -1, float("nan"), None):
        with pytest.raises((ValueError, TypeError), match="bks"):
            gap(10, bad_bks)
    for bad_cost in (float("inf"), None):
        with pytest.raises((ValueError, TypeError), match="cost"):
            gap(bad_cost, 10)


# ----------------------------------------------------------------------------- generator

CASES = [(60, "central", "clustered", "quadrant", 6.0, 3),
         (80, "random", "random-clustered", "many-small-few-large", None, 1),
         (30, "eccentric", "random", "unitary", 5.5, 0),
         (40, "random", "random", "large-small-var", 3.2, 7)]


@pytest.mark.parametrize("args", CASES, ids=lambda a: f"{a[1]}-{a[2]}-{a[3]}")
def test_generated_instance_equals_its_vrplib_file_read_by_pyvrp(args, tmp_path):
    a = x_like_arrays(*args)
    path = tmp_path / "g.vrp"
    path.write_text(_vrplib_text(a))
    assert generate_x_like(*args) == pyvrp.read(path, round_func="round")


def test_depot_positions_and_distinct_grid_points():
    assert tuple(x_like_arrays(20, depot="central")["coords"][0]) == (500, 500)
    assert tuple(x_like_arrays(20, depot="eccentric")["coords"][0]) == (0, 0)
    depots = {tuple(x_like_arrays(20, depot="random", seed=s)["coords"][0]) for s in range(8)}
    assert len(depots) > 4
    for customers in ("random", "clustered", "random-clustered"):
        xy = x_like_arrays(300, customers=customers, seed=2)["coords"]
        assert xy.min() >= 0 and xy.max() <= 1000 and xy.dtype.kind == "i"
        assert len({tuple(p) for p in xy}) == len(xy)


def _mean_nn(xy):
    d = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1).astype(float))
    np.fill_diagonal(d, np.inf)
    return d.min(1).mean()


def test_clustered_customers_spread_like_the_x_files():
    """Mean nearest-neighbour distance x sqrt(n) / 1000 (0.5 for uniform points): the X files
    show two modes, clustered ~0.26-0.42 and random / half-random ~0.46-0.57; ours fall in
    the same modes."""
    x_stats = []
    for name in list_x_instances()[:30]:
        xy = vrplib.read_instance(str(CVRP / f"{name}.vrp"))["node_coord"][1:]
        x_stats.append(_mean_nn(xy) * np.sqrt(len(xy)) / 1000)
    low = [v for v in x_stats if v < 0.44]
    assert 5 <= len(low) <= 20 and min(x_stats) > 0.2 and max(x_stats) < 0.6

    def stat(customers, s, n):
        return _mean_nn(x_like_arrays(n, customers=customers, seed=s)["coords"][1:]) \
            * np.sqrt(n) / 1000

    ours = {c: [stat(c, s, n) for s, n in enumerate((100, 150, 200, 250))]
            for c in ("random", "clustered", "random-clustered")}
    assert min(x_stats) - 0.03 < min(ours["clustered"]) and max(ours["clustered"]) < 0.46
    assert np.mean(ours["clustered"]) < np.mean(ours["random-clustered"]) \
        < np.mean(ours["random"])
    assert 0.44 < min(ours["random"]) and max(ours["random"]) < max(x_stats) + 0.03


@pytest.mark.parametrize("demand", list(DEMAND_RANGES))
def test_range_demand_classes(demand):
    lo, hi = DEMAND_RANGES[demand]
    d = x_like_arrays(2000, demand=demand, route_size=5.0, seed=4)["demands"]
    assert d[0] == 0
    assert d[1:].min() == lo and d[1:].max() == hi  # 2000 draws hit both ends
    assert abs(d[1:].mean() - (lo + hi) / 2) < 0.05 * (hi - lo) + 1e-9


def test_quadrant_class_and_its_orientation_in_the_x_files():
    a = x_like_arrays(1000, demand="quadrant", route_size=5.0, seed=1)
    xy, d = a["coords"][1:], a["demands"][1:]
    odd = (xy[:, 0] < 500) == (xy[:, 1] < 500)
    assert d[odd].min() == 51 and d[odd].max() == 100
    assert d[~odd].min() == 1 and d[~odd].max() == 50
    for name in ("X-n125-k30", "X-n134-k13", "X-n200-k36"):  # quadrant instances of the X set
        ins = vrplib.read_instance(str(CVRP / f"{name}.vrp"))
        xy, d = ins["node_coord"][1:], ins["demand"][1:]
        odd = (xy[:, 0] < 500) == (xy[:, 1] < 500)
        assert (d[odd] >= 51).all() and (d[~odd] <= 50).all()


def _n_large(n, r):
    return sum(1 for i in range(2, n + 2) if i < 1.5 * n / r)


def test_many_small_few_large_count_matches_the_x_files():
    for n, r in ((100, 6.0), (300, 3.1), (250, 17.5)):
        d = x_like_arrays(n, demand="SL", route_size=r, seed=5)["demands"][1:]
        assert ((d <= 10) | (d >= 50)).all() and d.min() >= 1 and d.max() <= 100
        assert (d >= 50).sum() == _n_large(n, r)
    # The X files of this class: r is only known up to Q = ceil(r * sum(d) / n), i.e.
    # r in ((Q - 1) n / sum(d), Q n / sum(d)]; the rule's count must fall in that range.
    for name in ("X-n115-k10", "X-n153-k22", "X-n176-k26", "X-n228-k23", "X-n247-k50",
                 "X-n280-k17", "X-n308-k13", "X-n367-k17", "X-n411-k19"):
        ins = vrplib.read_instance(str(CVRP / f"{name}.vrp"))
        d, q = ins["demand"][1:], int(ins["capacity"])
        n, total = len(d), int(d.sum())
        large = int((d >= 50).sum())
        assert ((d <= 10) | (d >= 50)).all()
        lo, hi = (q - 1) * n / total, q * n / total
        assert _n_large(n, hi) <= large <= _n_large(n, lo + 1e-9), name


def test_capacity_formula_and_route_size():
    for args in CASES:
        a = x_like_arrays(*args)
        d, n, r = a["demands"][1:], args[0], a["route_size"]
        assert a["capacity"] == max(math.ceil(r * d.sum() / n), d.max())
    assert x_like_arrays(50, demand="unitary", route_size=7.3)["capacity"] == 8
    # r so small that r * mean(d) < max(d): the capacity still fits the largest demand
    a = x_like_arrays(100, demand="large-large-var", route_size=1.0, seed=0)
    assert a["capacity"] == a["demands"].max()
    rs = [x_like_arrays(5, seed=s)["route_size"] for s in range(300)]
    assert 3 <= min(rs) and max(rs) <= 25 and abs(np.mean(rs) - (3 + 6 + 25) / 3) < 1.0
    data = generate_x_like(30, route_size=5.0)
    assert data.num_vehicles == 30 and data.num_clients == 30


def test_generator_is_deterministic_per_seed():
    a = generate_x_like(70, "random", "random-clustered", "small-small-var", None, seed=11)
    assert a == generate_x_like(70, "random", "random-clustered", "small-small-var", None, 11)
    assert a != generate_x_like(70, "random", "random-clustered", "small-small-var", None, 12)


@pytest.mark.parametrize("kwargs,arg", [
    ({"n": 0}, "n"), ({"n": 2.5}, "n"), ({"n": 10, "depot": "north"}, "depot"),
    ({"n": 10, "customers": "grid"}, "customers"), ({"n": 10, "demand": "huge"}, "demand"),
    ({"n": 10, "route_size": 0}, "route_size"), ({"n": 10, "route_size": float("nan")},
                                                 "route_size"),
    ({"n": 10, "seed": -1}, "seed")])
def test_generator_rejects_bad_arguments(kwargs, arg):
    with pytest.raises(ValueError, match=arg):
        generate_x_like(**kwargs)


# ----------------------------------------------------------------------------- specs

def test_instance_spec_pickles_names_and_loads():
    x = InstanceSpec.x("X-n101-k25")
    g = InstanceSpec.generated(40, "central", "clustered", "Q", 6, seed=2)
    assert g.demand == "quadrant"
    assert g == InstanceSpec.generated(40, "central", "clustered", "quadrant", 6.0, seed=2)
    for spec in (x, g):
        back = pickle.loads(pickle.dumps(spec))
        assert back == spec and hash(back) == hash(spec) and back.name == spec.name
        assert back.load() == spec.load()
    assert x.name == "X-n101-k25" and x.load() == load_x_instance("X-n101-k25")
    assert g.name == "G-n41-CC-Q-r6-s2"
    assert g.load() == generate_x_like(40, "central", "clustered", "quadrant", 6, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.n = 3


@pytest.mark.parametrize("kwargs,arg", [
    ({}, "exactly one"), ({"x_name": "X-n101-k25", "n": 5}, "exactly one"),
    ({"x_name": "foo"}, "x_name"), ({"n": 0}, "n"), ({"n": 5, "demand": "x"}, "demand"),
    ({"n": 5, "reference_iterations": 0}, "reference_iterations"),
    ({"n": 5, "reference_seeds": ()}, "reference_seeds")])
def test_instance_spec_rejects_bad_arguments(kwargs, arg):
    with pytest.raises(ValueError, match=arg):
        InstanceSpec(**kwargs)


def test_reference_cost_x_is_bks_and_generated_is_cached_best_of_seeds(monkeypatch, tmp_path):
    monkeypatch.setenv("OPTZOO_CACHE", str(tmp_path))
    assert reference_cost(InstanceSpec.x("X-n148-k46")) == 43448
    spec = InstanceSpec.generated(25, route_size=5, seed=1, reference_iterations=150,
                                  reference_seeds=(0, 1))
    data = spec.load()
    expected = min(run_hgs(data, iterations=150, seed=s).cost() for s in (0, 1))
    assert reference_cost(spec) == expected
    assert len(list((tmp_path / "routing").glob("reference-*.json"))) == 1

    def boom(*a, **k):
        raise AssertionError("cache miss")

    monkeypatch.setattr("optzoo.routing.hgs.run_hgs", boom)
    assert reference_cost(spec) == expected  # served from the cache
    with pytest.raises(AssertionError, match="cache miss"):  # another budget is another key
        reference_cost(spec, iterations=151)
    with pytest.raises(ValueError, match="iterations"):
        reference_cost(spec, iterations=0)
    with pytest.raises(TypeError, match="spec"):
        reference_cost("X-n101-k25")
