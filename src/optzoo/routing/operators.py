"""Crossover operators for HGS, as Python callables ``(parents, data, cost_evaluator, rng)``.

The RFTHGS paper (Zhu, Zhang & Cao, "Refining Hybrid Genetic Search for CVRP via Reinforcement
Learning-Finetuned LLM", ICLR 2026, OpenReview aITKXFeivk) fine-tunes an LLM to rewrite the
crossover of PyVRP's HGS, whose expert operator is SREX (selective route exchange, Nagata &
Kobayashi 2010).  Every operator here has the signature ``pyvrp.GeneticAlgorithm`` calls once
per iteration::

    op(parents: tuple[Solution, Solution], data: ProblemData,
       cost_evaluator: CostEvaluator, rng: RandomNumberGenerator) -> Solution

* :func:`srex` -- PyVRP's SREX exactly as ``pyvrp.solve`` passes it (its Python wrapper draws
  the start route and the number of moved routes from ``rng``, the C++ core does the rest);
* :func:`ordered_crossover` -- PyVRP's OX, the operator ``solve`` uses for one vehicle (TSP);
* :func:`python_srex` -- SREX written in plain Python: a line-by-line port of PyVRP 0.12's
  ``selective_route_exchange.cpp`` that builds its two candidate children as lists of client
  indices and returns ``Solution(data, routes)``, the form generated operators take.  On the
  same parents and ``rng`` state it returns the same child as :func:`srex` (tested), up to the
  order of routes with exactly equal polar angles, which ``std::sort`` (not stable beyond 16
  routes) may order differently from Python's stable sort;
* :func:`compile_operator` -- turns a program of :mod:`optzoo.routing.crossover_dsl` or a
  source text into such a callable, checking its entry point and arity first (trusted code
  only: generated code goes through :mod:`optzoo.routing.sandbox`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from pyvrp import CostEvaluator, ProblemData, RandomNumberGenerator, Route, Solution
from pyvrp.crossover import ordered_crossover as _pyvrp_ox
from pyvrp.crossover import selective_route_exchange as _pyvrp_srex

Parents = tuple[Solution, Solution]


def srex(parents: Parents, data: ProblemData, cost_evaluator: CostEvaluator,
         rng: RandomNumberGenerator) -> Solution:
    """PyVRP's selective route exchange, called as ``pyvrp.solve``'s GA calls it.

    Example:
        >>> import pyvrp
        >>> from pyvrp.stop import MaxIterations
        >>> from optzoo.routing import generate_x_like, run_hgs, srex
        >>> data = generate_x_like(20, seed=0)
        >>> ours = run_hgs(data, srex, iterations=50, seed=1)
        >>> ours.cost() == pyvrp.solve(data, stop=MaxIterations(50), seed=1).cost()
        True
    """
    return _pyvrp_srex(parents, data, cost_evaluator, rng)


def ordered_crossover(parents: Parents, data: ProblemData, cost_evaluator: CostEvaluator,
                      rng: RandomNumberGenerator) -> Solution:
    """PyVRP's ordered crossover (OX); only for single-vehicle (TSP) instances."""
    return _pyvrp_ox(parents, data, cost_evaluator, rng)


def _sorted_by_angle(data: ProblemData, routes: list[Route]) -> list[Route]:
    # Routes ordered by the polar angle of their centroid around the centroid of all clients,
    # so that "adjacent" routes of the two parents cover similar sectors.
    cx, cy = data.centroid()

    def angle(route: Route) -> float:
        rx, ry = route.centroid()
        return math.atan2(ry - cy, rx - cx)

    return sorted(routes, key=angle)


def python_srex(parents: Parents, data: ProblemData, cost_evaluator: CostEvaluator,
                rng: RandomNumberGenerator) -> Solution:
    """SREX in plain Python (a port of PyVRP's C++; see the module docstring).

    Draws, like PyVRP's wrapper, a start route ``a`` of parent A (``b = a`` if B has that many
    routes, else 0) and a number ``m`` of routes in [1, min(routes of A, routes of B)].  Routes
    of each parent are sorted by polar angle; the windows of ``m`` consecutive routes starting
    at ``a`` in A and ``b`` in B are shifted left/right while that lowers the number of clients
    of A's window not in B's window.  Two children, both keeping A's other routes:
    child 1 = B's window + the rest of A without the clients of B's window; child 2 = B's
    window without the clients not in A's window + the rest of A.  Clients left out are
    re-inserted later by the local search.  Returns the child of lower penalised cost.
    """
    first, second = parents
    if first.num_clients() == 0:
        return second
    if second.num_clients() == 0:
        return first

    n_a, n_b = first.num_routes(), second.num_routes()
    start_a = rng.randint(n_a)
    start_b = start_a if start_a < n_b else 0
    moved = rng.randint(min(n_a, n_b)) + 1

    sorted_a = _sorted_by_angle(data, first.routes())
    routes_a = [r.visits() for r in sorted_a]
    types_a = [r.vehicle_type() for r in sorted_a]
    routes_b = [r.visits() for r in _sorted_by_angle(data, second.routes())]

    in_a = [False] * data.num_locations
    in_b = [False] * data.num_locations
    for r in range(moved):
        for c in routes_a[(start_a + r) % n_a]:
            in_a[c] = True
        for c in routes_b[(start_b + r) % n_b]:
            in_b[c] = True

    def not_in_b(route):
        return sum(not in_b[c] for c in route)

    def in_a_count(route):
        return sum(in_a[c] for c in route)

    # Shift the windows while that lowers |A \ B| (the clients that must be re-planned).
    while True:
        a_left = not_in_b(routes_a[(start_a - 1) % n_a]) \
            - not_in_b(routes_a[(start_a + moved - 1) % n_a])
        a_right = not_in_b(routes_a[(start_a + moved) % n_a]) - not_in_b(routes_a[start_a])
        b_left = in_a_count(routes_b[(start_b - 1 + moved) % n_b]) \
            - in_a_count(routes_b[(start_b - 1) % n_b])
        b_right = in_a_count(routes_b[start_b]) - in_a_count(routes_b[(start_b + moved) % n_b])
        best = min(a_left, a_right, b_left, b_right)
        if best >= 0:
            break
        if best == a_left:
            for c in routes_a[(start_a + moved - 1) % n_a]:
                in_a[c] = False
            start_a = (start_a - 1) % n_a
            for c in routes_a[start_a]:
                in_a[c] = True
        elif best == a_right:
            for c in routes_a[start_a]:
                in_a[c] = False
            start_a = (start_a + 1) % n_a
            for c in routes_a[(start_a + moved - 1) % n_a]:
                in_a[c] = True
        elif best == b_left:
            for c in routes_b[(start_b + moved - 1) % n_b]:
                in_b[c] = False
            start_b = (start_b - 1) % n_b
            for c in routes_b[start_b]:
                in_b[c] = True
        else:
            for c in routes_b[start_b]:
                in_b[c] = False
            start_b = (start_b + 1) % n_b
            for c in routes_b[(start_b + moved - 1) % n_b]:
                in_b[c] = True

    b_not_a = [b and not a for a, b in zip(in_a, in_b, strict=True)]
    visits1: list[list[int]] = [[] for _ in range(n_a)]
    visits2: list[list[int]] = [[] for _ in range(n_a)]
    for r in range(moved):
        index_a = (start_a + r) % n_a
        for c in routes_b[(start_b + r) % n_b]:
            visits1[index_a].append(c)
            if not b_not_a[c]:
                visits2[index_a].append(c)
    for r in range(moved, n_a):
        index_a = (start_a + r) % n_a
        for c in routes_a[index_a]:
            if not b_not_a[c]:
                visits1[index_a].append(c)
            visits2[index_a].append(c)

    child1 = Solution(data, [Route(data, v, t) for v, t in zip(visits1, types_a, strict=True)
                             if v])
    child2 = Solution(data, [Route(data, v, t) for v, t in zip(visits2, types_a, strict=True)
                             if v])
    cost1 = cost_evaluator.penalised_cost(child1)
    cost2 = cost_evaluator.penalised_cost(child2)
    return child1 if cost1 < cost2 else child2


def compile_operator(operator: Mapping[str, str] | str, entry: str = "crossover"
                     ) -> Callable[[Parents, ProblemData, CostEvaluator, RandomNumberGenerator],
                                   Solution]:
    r"""Compile a crossover for in-process use with :func:`optzoo.routing.hgs.run_hgs`.

    **Trusted code only** -- the project's own programs (a grammar program, the SREX port of
    :func:`optzoo.routing.code_corpus.srex_source`, an operator the user wrote).  The source
    runs in this process with the real builtins; the static check below is a filter for
    mistakes, not a security boundary.  Code a model generated goes through
    :func:`optzoo.routing.sandbox.run_untrusted` (e.g.
    :class:`optzoo.routing.rfthgs.SandboxEvaluator`) instead.

    The source is checked up front with :func:`optzoo.routing.sandbox.check_source` (parses,
    compiles, only the sandbox's allowed imports and names, and a module-level ``def entry``
    with exactly four positional arguments), so a wrong signature fails here with its reason
    and line instead of as a ``TypeError`` deep inside PyVRP's genetic algorithm.

    Args:
        operator: a program of :mod:`optzoo.routing.crossover_dsl` (a slot -> choice mapping,
            validated and rendered with :func:`~optzoo.routing.crossover_dsl.render`) or the
            text of a Python module.
        entry: the function to return (default ``crossover``).

    Returns:
        ``entry`` from the executed module: ``(parents, data, cost_evaluator, rng) ->
        Solution``.

    Raises:
        ValueError: ``operator`` is neither a mapping nor a string, the program is not in the
            grammar, or the source fails the check (the message names the problem and line).

    Example:
        >>> from optzoo.routing import generate_x_like, run_hgs
        >>> from optzoo.routing.crossover_dsl import EXPERT
        >>> op = compile_operator(EXPERT)
        >>> run_hgs(generate_x_like(20, seed=0), op, iterations=20, seed=1).is_feasible()
        True
        >>> compile_operator("def crossover(parents, data):\n    return parents[0]\n")
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: operator: forbidden (line 1): ...
    """
    from optzoo.routing.crossover_dsl import render, validate
    from optzoo.routing.sandbox import check_source

    if isinstance(operator, Mapping):
        source = render(validate(dict(operator)))
    elif isinstance(operator, str):
        source = operator
    else:
        raise ValueError(f"operator: expected a crossover_dsl program (a mapping) or source "
                         f"text, got {type(operator).__name__}")
    verdict = check_source(source, entry=entry, arity=4)
    if not verdict.ok:
        where = f" (line {verdict.lineno})" if verdict.lineno is not None else ""
        raise ValueError(f"operator: {verdict.status}{where}: {verdict.reason}")
    namespace: dict = {"__name__": f"optzoo_operator_{entry}"}
    exec(compile(source, f"<operator {entry}>", "exec"), namespace)  # trusted, see above
    return namespace[entry]
