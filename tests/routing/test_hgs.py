"""HGS with a pluggable crossover: equal to ``pyvrp.solve`` run for run; SREX ports; evaluator."""

import math

import pytest
import pyvrp
from pyvrp import CostEvaluator, RandomNumberGenerator, Route, Solution
from pyvrp.stop import MaxIterations

from optzoo.routing.hgs import default_crossover, evaluate_operator, run_hgs
from optzoo.routing.instances import (
    InstanceSpec,
    generate_x_like,
    load_x_instance,
    reference_cost,
)
from optzoo.routing.operators import ordered_crossover, python_srex, srex


@pytest.fixture(scope="module")
def small():
    return generate_x_like(40, "random", "random-clustered", "large-large-var", 5, seed=0)


def _same_run(a: pyvrp.Result, b: pyvrp.Result):
    assert a.best == b.best and a.cost() == b.cost() and a.num_iterations == b.num_iterations


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_default_run_equals_pyvrp_solve(small, seed):
    ref = pyvrp.solve(small, stop=MaxIterations(150), seed=seed)
    _same_run(run_hgs(small, iterations=150, seed=seed), ref)
    _same_run(run_hgs(small, srex, iterations=150, seed=seed, collect_stats=False), ref)


def test_srex_callable_equals_pyvrp_solve_on_an_x_instance():
    data = load_x_instance("X-n101-k25")
    for seed in (0, 3):
        ref = pyvrp.solve(data, stop=MaxIterations(60), seed=seed)
        _same_run(run_hgs(data, srex, iterations=60, seed=seed), ref)
        # the statistics are those of solve too (the same population, iteration by iteration)
        got = run_hgs(data, srex, iterations=60, seed=seed).stats
        assert [d.best_cost for d in got.feas_stats] == [d.best_cost for d in ref.stats.feas_stats]


def test_single_vehicle_uses_ordered_crossover_like_solve(small):
    vt = small.vehicle_type(0)
    tsp = small.replace(vehicle_types=[vt.replace(num_available=1, capacity=[10**6])])
    assert default_crossover(tsp) is ordered_crossover and default_crossover(small) is srex
    ref = pyvrp.solve(tsp, stop=MaxIterations(80), seed=4)
    _same_run(run_hgs(tsp, iterations=80, seed=4), ref)


def _parent_pairs(data, count, seed):
    """Random and locally improved solutions, paired at random."""
    rng = RandomNumberGenerator(seed=seed)
    res = run_hgs(data, iterations=20, seed=seed, collect_stats=False)
    pool = [Solution.make_random(data, rng) for _ in range(6)] + [res.best]
    for _ in range(count):
        yield pool[rng.randint(len(pool))], pool[rng.randint(len(pool))]


@pytest.mark.parametrize("name", ["X-n101-k25", "X-n148-k46"])
def test_python_srex_gives_the_child_of_pyvrps_cpp_srex(name):
    data = load_x_instance(name)
    ce = CostEvaluator([20], 6, 6)
    rng = RandomNumberGenerator(seed=9)
    for parents in _parent_pairs(data, 60, seed=1):
        state = rng.state()
        ours = python_srex(parents, data, ce, RandomNumberGenerator(state))
        theirs = srex(parents, data, ce, rng)
        assert ours == theirs
        rng = RandomNumberGenerator(rng.state())


def test_run_with_python_srex_equals_pyvrp_solve(small):
    for seed in (0, 1):
        ref = pyvrp.solve(small, stop=MaxIterations(100), seed=seed)
        _same_run(run_hgs(small, python_srex, iterations=100, seed=seed), ref)


def _first_half_of_each_parent(parents, data, cost_evaluator, rng):
    """A pure-Python crossover returning an incomplete child built from client lists."""
    a, b = parents
    routes = [r.visits() for r in a.routes()]
    keep = routes[: max(1, len(routes) // 2)]
    used = {c for r in keep for c in r}
    extra = [c for r in b.routes() for c in r.visits() if c not in used][: data.num_clients // 4]
    return Solution(data, [*keep, extra] if extra else keep)


def test_pure_python_operator_runs_and_ends_feasible(small):
    calls = []

    def op(parents, data, ce, rng):
        calls.append(1)
        child = _first_half_of_each_parent(parents, data, ce, rng)
        assert not child.is_complete() or child.num_clients() == data.num_clients
        return child

    res = run_hgs(small, op, iterations=60, seed=0)
    assert len(calls) == 60 and res.num_iterations == 60
    assert res.is_feasible() and res.best.is_complete()
    assert math.isfinite(res.cost())
    # the solution is a valid CVRP solution under our own check of the routes
    cap = small.vehicle_type(0).capacity[0]
    visits = [c for r in res.best.routes() for c in r.visits()]
    assert sorted(visits) == list(range(1, small.num_locations))
    for r in res.best.routes():
        assert sum(small.location(c).delivery[0] for c in r.visits()) <= cap


def test_initial_solutions_are_used(small):
    rng = RandomNumberGenerator(seed=5)
    init = [Solution.make_random(small, rng) for _ in range(25)]
    res = run_hgs(small, iterations=0, seed=5, initial_solutions=init)
    feas = [s for s in init if s.is_feasible()]
    assert res.num_iterations == 0
    if feas:
        assert res.cost() == min(s.distance() for s in feas)
    else:
        assert res.best in init


def test_numpy_integers_are_accepted(small):
    import numpy as np

    a = run_hgs(small, iterations=np.int64(20), seed=np.int32(1), collect_stats=False)
    _same_run(a, run_hgs(small, iterations=20, seed=1, collect_stats=False))


def test_run_hgs_rejects_bad_arguments(small):
    with pytest.raises(TypeError, match="crossover_op"):
        run_hgs(small, crossover_op="srex")
    with pytest.raises(TypeError, match="data"):
        run_hgs("X-n101-k25")
    with pytest.raises(TypeError, match="params"):
        run_hgs(small, params={})
    for kwargs, arg in (({"iterations": -1}, "iterations"), ({"iterations": 1.5}, "iterations"),
                        ({"seed": -2}, "seed"), ({"initial_solutions": []}, "initial_solutions")):
        with pytest.raises(ValueError, match=arg):
            run_hgs(small, **kwargs)


def test_evaluate_operator_rows(monkeypatch, tmp_path):
    monkeypatch.setenv("OPTZOO_CACHE", str(tmp_path))
    specs = [InstanceSpec.x("X-n101-k25"),
             InstanceSpec.generated(30, route_size=6, seed=2, reference_iterations=100,
                                    reference_seeds=(0,))]
    rows = evaluate_operator(python_srex, specs, iterations=50, seed=3)
    assert [r["name"] for r in rows] == ["X-n101-k25", specs[1].name]
    x, g = rows
    assert x["bks"] == 27591 and x["reference"] == "bks" and g["reference"] == "hgs"
    assert g["bks"] == run_hgs(specs[1].load(), iterations=100, seed=0).cost()
    for row, spec in zip(rows, specs, strict=True):
        expected = run_hgs(spec.load(), python_srex, iterations=50, seed=3).cost()
        assert row["feasible"] and row["cost"] == expected
        assert row["gap"] == pytest.approx(100 * (expected - row["bks"]) / row["bks"])
        assert row["wall_s"] > 0 and row["iterations"] == 50 and row["seed"] == 3


def test_evaluate_operator_propagates_errors_and_checks_arguments(monkeypatch, tmp_path):
    monkeypatch.setenv("OPTZOO_CACHE", str(tmp_path))
    spec = InstanceSpec.x("X-n101-k25")

    def broken(parents, data, ce, rng):
        raise ZeroDivisionError("operator bug")

    with pytest.raises(ZeroDivisionError, match="operator bug"):
        evaluate_operator(broken, [spec], iterations=5, seed=0)
    with pytest.raises(ValueError, match="specs"):
        evaluate_operator(srex, ["X-n101-k25"], iterations=5, seed=0)
    with pytest.raises(ValueError, match="iterations"):
        evaluate_operator(srex, [spec], iterations=0, seed=0)


def test_infeasible_only_runs_report_none(monkeypatch, tmp_path):
    monkeypatch.setenv("OPTZOO_CACHE", str(tmp_path))
    spec = InstanceSpec.generated(20, route_size=4, seed=0, reference_iterations=30,
                                  reference_seeds=(0,))
    data = spec.load()
    # The local search repairs what operators return, so an all-infeasible run is made by
    # hand: zero iterations from one overloaded single-route solution.
    overloaded = Solution(data, [list(range(1, data.num_locations))])
    res = run_hgs(data, iterations=0, seed=0, initial_solutions=[overloaded])
    assert not res.is_feasible()
    reference_cost(spec)  # cached before run_hgs is replaced
    monkeypatch.setattr("optzoo.routing.hgs.run_hgs", lambda *a, **k: res)
    row = evaluate_operator(srex, [spec], iterations=1, seed=0)[0]
    assert row["cost"] is None and row["gap"] is None and row["feasible"] is False


def test_route_objects_and_client_lists_give_the_same_solution(small):
    sol = run_hgs(small, iterations=10, seed=0, collect_stats=False).best
    lists = [r.visits() for r in sol.routes()]
    assert Solution(small, lists) == Solution(small, [Route(small, v, 0) for v in lists])


def test_crossover_of_the_wrong_arity_is_refused_before_the_search():
    from optzoo.routing import generate_x_like, python_srex, run_hgs

    data = generate_x_like(8, seed=0)
    for bad in (lambda parents: parents, lambda a, b, c, d, e: a):
        with pytest.raises(TypeError, match=r"crossover_op: expected a callable taking "
                                            r"\(parents, data, cost_evaluator, rng\)"):
            run_hgs(data, crossover_op=bad, iterations=3)
    # the four-argument forms (a Python function, *args, a compiled PyVRP operator) still run
    assert run_hgs(data, crossover_op=python_srex, iterations=3).is_feasible()
    assert run_hgs(data, crossover_op=lambda *a: python_srex(*a), iterations=3).is_feasible()
