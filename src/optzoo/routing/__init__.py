"""Routing: CVRP instances (X files and an X-like generator), Hybrid Genetic Search with a
pluggable crossover on PyVRP, a sandbox for generated operators, and RFTHGS.

Kept free of torch on import: the sandbox's child process imports this package under a memory
limit. The RFTHGS learning loop lives in :mod:`optzoo.routing.rfthgs` (torch).

Example:
    >>> from optzoo.routing import generate_x_like, python_srex, run_hgs, srex
    >>> data = generate_x_like(20, depot="central", customers="clustered", seed=0)
    >>> expert = run_hgs(data, srex, iterations=50, seed=1)  # = pyvrp.solve(..., seed=1)
    >>> def my_crossover(parents, data, cost_evaluator, rng):  # what PyVRP's GA calls
    ...     return python_srex(parents, data, cost_evaluator, rng)  # SREX in plain Python
    >>> mine = run_hgs(data, my_crossover, iterations=50, seed=1)
    >>> mine.is_feasible(), mine.cost() == expert.cost()
    (True, True)
"""

from optzoo.routing.hgs import (
    best_routes,
    default_crossover,
    evaluate_operator,
    run_hgs,
    score_routes,
)
from optzoo.routing.instances import (
    InstanceSpec,
    best_known_cost,
    data_root,
    gap,
    generate_x_like,
    list_x_instances,
    load_x_instance,
    reference_cost,
)
from optzoo.routing.operators import ordered_crossover, python_srex, srex

__all__ = [
    "InstanceSpec", "best_known_cost", "best_routes", "data_root", "default_crossover",
    "evaluate_operator", "gap", "generate_x_like", "list_x_instances", "load_x_instance",
    "ordered_crossover", "python_srex", "reference_cost", "run_hgs", "score_routes", "srex",
]
