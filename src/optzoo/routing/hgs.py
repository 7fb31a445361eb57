"""Hybrid Genetic Search with a pluggable crossover, assembled from PyVRP's parts.

RFTHGS (Zhu, Zhang & Cao, "Refining Hybrid Genetic Search for CVRP via Reinforcement
Learning-Finetuned LLM", ICLR 2026, OpenReview aITKXFeivk, arXiv 2510.11121) scores a crossover
by the gap of ``pyvrp.solve(data, stop=MaxIterations(800))`` once the crossover is compiled into
PyVRP.  ``pyvrp.solve`` hard-wires SREX, so :func:`run_hgs` builds the same genetic algorithm
by hand, line for line as ``pyvrp.solve`` does (pyvrp 0.11.3-0.12.x; 0.13 removed the genetic
algorithm) -- one
``RandomNumberGenerator(seed)``; ``LocalSearch`` over ``compute_neighbours`` with every node and
route operator of ``SolveParams`` that supports the instance; ``PenaltyManager.init_from``;
``Population(broken_pairs_distance, params.population)``; ``min_pop_size`` random initial
solutions drawn from the same ``rng`` after the local search is built; ``GeneticAlgorithm``
stopped by ``MaxIterations`` -- with the crossover as an argument.  With the default crossover
(SREX, or OX when the instance has one vehicle, as ``solve`` chooses) the run is the run of
``pyvrp.solve`` with the same seed, iteration for iteration (tested: equal best solutions).

:func:`evaluate_operator` is the evaluator of the paper's reward: the best feasible cost of one
HGS run per instance at a fixed iteration budget, and its gap to the instance's reference.
"""

from __future__ import annotations

import inspect
import math
import numbers
import os
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

import pyvrp
from pyvrp import (
    GeneticAlgorithm,
    PenaltyManager,
    Population,
    ProblemData,
    RandomNumberGenerator,
    Result,
    Solution,
    SolveParams,
)
from pyvrp.diversity import broken_pairs_distance
from pyvrp.search import LocalSearch, compute_neighbours
from pyvrp.stop import MaxIterations

from optzoo.routing.instances import InstanceSpec, gap, reference_cost
from optzoo.routing.operators import ordered_crossover, srex

CrossoverOp = Callable[[tuple[Solution, Solution], ProblemData, pyvrp.CostEvaluator,
                        RandomNumberGenerator], Solution]


def default_crossover(data: ProblemData) -> CrossoverOp:
    """SREX for a proper VRP, OX for a single vehicle: the choice ``pyvrp.solve`` makes."""
    return srex if data.num_vehicles > 1 else ordered_crossover


def _check_int(value, arg: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{arg}: expected an integer >= {low}, got {value!r}")
    return int(value)


def _supports(op, data: ProblemData) -> bool:
    # pyvrp 0.12 skips operators that do not apply to the instance; 0.11 adds them all.
    supports = getattr(op, "supports", None)
    return True if supports is None else bool(supports(data))


def _check_arity(op) -> None:
    """A crossover PyVRP calls with four positional arguments; a wrong arity would otherwise
    surface as a TypeError from deep inside the genetic algorithm's first offspring."""
    try:
        sig = inspect.signature(op)
    except (TypeError, ValueError):  # a compiled callable without a signature: trust it
        return
    try:
        sig.bind(None, None, None, None)
    except TypeError:
        raise TypeError(f"crossover_op: expected a callable taking (parents, data, "
                        f"cost_evaluator, rng), got one with signature {sig}") from None


def run_hgs(data: ProblemData, crossover_op: CrossoverOp | None = None, iterations: int = 800,
            seed: int = 0, params: SolveParams | None = None,
            initial_solutions: Collection[Solution] | None = None, display: bool = False,
            collect_stats: bool = True) -> Result:
    """HGS as ``pyvrp.solve(data, stop=MaxIterations(iterations), seed=seed)`` runs it, with
    ``crossover_op`` in place of SREX.

    Args:
        data: the instance.
        crossover_op: any callable ``(parents, data, cost_evaluator, rng) -> Solution``; the
            GA calls it once per iteration.  Default: :func:`default_crossover`.  What it
            raises propagates.  Children may be incomplete: the local search repairs them.
        iterations: GA iterations (``MaxIterations``).
        seed: seed of the one random number generator shared by the local search, the initial
            solutions, parent selection and the crossover.
        params: ``SolveParams`` (default ``SolveParams()``, as ``solve``).
        initial_solutions: default ``params.population.min_pop_size`` random solutions.
        display: print PyVRP's progress table.
        collect_stats: keep PyVRP's per-iteration statistics (``solve``'s default; they do not
            change the search, only cost time).

    Returns:
        ``pyvrp.Result``; ``result.best`` is the best feasible solution found, if any
        (``result.is_feasible()``), else the best initial solution.

    Example:
        >>> from optzoo.routing import generate_x_like, python_srex, run_hgs
        >>> data = generate_x_like(20, seed=0)
        >>> result = run_hgs(data, python_srex, iterations=50, seed=1)  # any Python crossover
        >>> result.is_feasible(), result.num_iterations, result.best.num_clients()
        (True, 50, 20)
    """
    if not isinstance(data, ProblemData):
        raise TypeError(f"data: expected a pyvrp.ProblemData, got {type(data).__name__}")
    if crossover_op is not None and not callable(crossover_op):
        raise TypeError(f"crossover_op: expected a callable (parents, data, cost_evaluator, "
                        f"rng) -> Solution, got {type(crossover_op).__name__}")
    if crossover_op is not None:
        _check_arity(crossover_op)
    iterations = _check_int(iterations, "iterations", 0)
    seed = _check_int(seed, "seed", 0)
    if params is None:
        params = SolveParams()
    elif not isinstance(params, SolveParams):
        raise TypeError(f"params: expected a pyvrp.SolveParams, got {type(params).__name__}")

    rng = RandomNumberGenerator(seed=seed)
    neighbours = compute_neighbours(data, params.neighbourhood)
    ls = LocalSearch(data, rng, neighbours)
    for node_op in params.node_ops:
        if _supports(node_op, data):
            ls.add_node_operator(node_op(data))
    for route_op in params.route_ops:
        if _supports(route_op, data):
            ls.add_route_operator(route_op(data))

    pm = PenaltyManager.init_from(data, params.penalty)
    pop = Population(broken_pairs_distance, params.population)
    if initial_solutions is None:
        init = [Solution.make_random(data, rng) for _ in range(params.population.min_pop_size)]
    else:
        init = list(initial_solutions)
        if not init or not all(isinstance(s, Solution) for s in init):
            raise ValueError("initial_solutions: expected a non-empty collection of "
                             "pyvrp.Solution")

    crossover = crossover_op if crossover_op is not None else default_crossover(data)
    algo = GeneticAlgorithm(data, pm, rng, pop, ls, crossover, init, params.genetic)
    run_args = [MaxIterations(iterations), collect_stats, display]
    if hasattr(params, "display_interval"):  # pyvrp >= 0.12
        run_args.append(params.display_interval)
    return algo.run(*run_args)


@dataclass(frozen=True)
class LoadedInstance:
    """An instance as the sandboxed child receives it: loaded by the parent (the jailed child
    reads no files), with its reference cost when the job needs one."""

    name: str
    is_x: bool
    data: ProblemData
    reference: int | None = None

    @classmethod
    def of(cls, spec: InstanceSpec | LoadedInstance, root: str | os.PathLike | None = None,
           with_reference: bool = False) -> LoadedInstance:
        if isinstance(spec, LoadedInstance):
            return spec
        if not isinstance(spec, InstanceSpec):
            raise ValueError(f"specs: expected InstanceSpec or LoadedInstance items, got "
                             f"{type(spec).__name__}")
        ref = int(reference_cost(spec, root=root)) if with_reference else None
        return cls(spec.name, spec.is_x, spec.load(root), ref)


def evaluate_operator(crossover_op: CrossoverOp | None, specs: Sequence[InstanceSpec],
                      iterations: int, seed: int,
                      root: str | os.PathLike | None = None) -> list[dict]:
    """One HGS run per instance with ``crossover_op``; the paper's per-instance gap.

    Args:
        crossover_op: the operator (``None``: the default SREX).
        specs: the instances (:class:`InstanceSpec`, or :class:`LoadedInstance` with its
            reference: what the sandbox passes, see ``sandbox_prepare`` below).
        iterations: HGS iterations per run (the paper: 800).
        seed: the HGS seed, the same for every instance.
        root: where X files are (see :func:`optzoo.routing.instances.data_root`).

    As a sandbox job (``job="optzoo.routing.hgs:evaluate_operator"``) the parent loads every
    instance and its reference (``evaluate_operator.sandbox_prepare``), so the child, which
    reads no files, receives data, not paths.

    Returns:
        one dict per spec, in order: ``name``; ``cost`` (best feasible cost, ``None`` if the run
        found no feasible solution); ``feasible``; ``bks`` (reference cost: BKS for X files,
        :func:`~optzoo.routing.instances.reference_cost` for generated instances);
        ``reference`` (``"bks"`` or ``"hgs"``); ``gap`` (percent, ``None`` when infeasible);
        ``wall_s`` (seconds of the HGS run alone); ``iterations``; ``seed``.  Exceptions of the
        operator propagate.

    Example:
        >>> from optzoo.routing import InstanceSpec, evaluate_operator, python_srex
        >>> spec = InstanceSpec.generated(20, route_size=6, seed=2, reference_iterations=50,
        ...                               reference_seeds=(0,))  # reference: HGS, cached
        >>> (row,) = evaluate_operator(python_srex, [spec], iterations=30, seed=3)
        >>> row["name"], row["feasible"], row["reference"], isinstance(row["gap"], float)
        ('G-n21-RR-1-10-r6-s2', True, 'hgs', True)
    """
    iterations = _check_int(iterations, "iterations", 1)
    seed = _check_int(seed, "seed", 0)
    specs = list(specs)
    if not specs or not all(isinstance(s, InstanceSpec | LoadedInstance) for s in specs):
        raise ValueError("specs: expected a non-empty list of InstanceSpec")
    rows = []
    for item in specs:
        spec = LoadedInstance.of(item, root, with_reference=True)
        data, ref = spec.data, spec.reference
        if ref is None:
            raise ValueError(f"specs: {spec.name} was loaded without its reference cost")
        t0 = time.perf_counter()
        res = run_hgs(data, crossover_op, iterations=iterations, seed=seed, collect_stats=False)
        wall = time.perf_counter() - t0
        feasible = bool(res.best.is_feasible())
        cost = int(res.cost()) if feasible and math.isfinite(res.cost()) else None
        rows.append({"name": spec.name, "cost": cost, "feasible": cost is not None,
                     "bks": int(ref), "reference": "bks" if spec.is_x else "hgs",
                     "gap": gap(cost, ref) if cost is not None else None, "wall_s": wall,
                     "iterations": iterations, "seed": seed})
    return rows


def _load_with_references(specs, iterations, seed, root=None):
    return ([LoadedInstance.of(s, root, with_reference=True) for s in specs], iterations,
            seed), {}


evaluate_operator.sandbox_prepare = _load_with_references


def best_routes(crossover_op: CrossoverOp | None, specs: Sequence[InstanceSpec],
                iterations: int, seed: int,
                root: str | os.PathLike | None = None) -> list[dict]:
    """The sandbox job of RFTHGS: one HGS run per instance, returning only plain data — the best
    solution's routes (lists of location indices) and the run's wall time. Pure computation (no
    reference lookup, no cache I/O), so it runs under the sandbox's limits; the parent rebuilds
    each solution against its own ``ProblemData`` and scores it with :func:`score_routes`, so a
    tampered child cannot forge its cost.  ``specs`` are :class:`InstanceSpec` or
    :class:`LoadedInstance`; as a sandbox job the parent loads them (``sandbox_prepare``)."""
    iterations = _check_int(iterations, "iterations", 1)
    seed = _check_int(seed, "seed", 0)
    rows = []
    for item in specs:
        data = LoadedInstance.of(item, root).data
        t0 = time.perf_counter()
        res = run_hgs(data, crossover_op, iterations=iterations, seed=seed, collect_stats=False)
        rows.append({"routes": [[int(v) for v in r.visits()] for r in res.best.routes()],
                     "wall_s": time.perf_counter() - t0})
    return rows


def _load(specs, iterations, seed, root=None):
    return ([LoadedInstance.of(s, root) for s in specs], iterations, seed), {}


best_routes.sandbox_prepare = _load


def score_routes(data: ProblemData, routes) -> float | None:
    """Cost of the solution made of ``routes`` on ``data``; None if it is not a complete feasible
    solution or the routes are malformed (unknown clients, repeats, too many routes)."""
    try:
        routes = [[int(v) for v in r] for r in routes]
        visits = [v for r in routes for v in r]
        if len(visits) != len(set(visits)) or any(
                not data.num_depots <= v < data.num_locations for v in visits):
            return None
        sol = Solution(data, routes)
    except (TypeError, ValueError, RuntimeError, IndexError):
        return None
    if not (sol.is_complete() and sol.is_feasible()):
        return None
    return float(pyvrp.CostEvaluator([0] * data.num_load_dimensions, 0, 0).cost(sol))
