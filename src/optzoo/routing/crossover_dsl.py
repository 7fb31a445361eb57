"""A program space of SREX-like crossovers, rendered as Python source — the CPU stand-in for the
LLM of RFTHGS (Zhu, Zhang & Cao, "Refining Hybrid Genetic Search for CVRP via Reinforcement
Learning-Finetuned LLM", ICLR 2026, OpenReview aITKXFeivk, arXiv 2510.11121).

In the paper an LLM rewrites the C++ source of PyVRP's selective route exchange (SREX; Nagata &
Kobayashi) and the rewritten operator is compiled and run inside HGS. No LLM weights can be
loaded here, so — as the brief prescribes for the small-scale reproduction — the generator writes
*Python* crossovers ``crossover(parents, data, cost_evaluator, rng) -> Solution`` from a grammar
of design choices. A program is a dict slot → choice (:data:`SLOTS`); :func:`render` turns it into
self-contained source text that goes through exactly the path an LLM completion would: parse /
compile, the sandbox's AST check, a sandboxed HGS run.

Design slots (the SREX anatomy):

* ``order`` — order of a parent's routes before choosing: by polar angle of the route centroid
  around the data centroid (SREX) or as stored.
* ``choice`` — which routes move: ``consecutive`` (a random window of A's routes and the window
  of B's routes starting at the route nearest in angle, SREX), ``nearest`` (a random window of A
  and, for each, B's nearest route by centroid distance), ``random`` (random subsets of both).
* ``count`` — how many routes move: ``one``, ``quarter``, ``half`` or ``uniform`` (U{1..min}).
* ``merge`` — ``replace``: drop the chosen B routes, drop A-clients from the rest, add the chosen
  A routes (SREX); ``keep``: keep every B route, only strip the moved clients, add A's routes.
* ``repair`` — clients lost by ``replace``: ``none`` (left out; PyVRP's local search inserts
  missing required clients, checked in the tests, so an incomplete child is *valid* here — the
  brief's open point, decided this way), ``append`` (to the least-loaded route), ``cheapest``
  (greedy cheapest insertion by distance), ``nearest_route`` (route with the nearest centroid).
* ``children`` — ``best_of_two`` (both role orders, keep the lower penalised cost, as SREX) or
  ``first``.
* ``window`` — the integer offset of B's window (0 or 1); alone it changes only an integer
  literal, which the duplicate check ignores (as the paper's clang-AST check does).

Defect slots, so that the space contains the failure tiers the RFTHGS reward grades:

* ``syntax`` — ``broken`` drops a colon: the program does not compile (reward tier −1).
* ``indexing`` — ``unchecked`` indexes B's routes without wrapping around: an ``IndexError`` on
  some parent pairs (runtime tier −0.8).
* ``returns`` — ``routes`` returns the list of routes instead of a ``Solution``: PyVRP's GA
  rejects it (runtime tier).
* ``fleet`` — ``unchecked`` skips merging the lightest routes when a child has more routes than
  vehicles; ``Solution`` then raises on some parent pairs (runtime tier). SREX keeps the route
  count by construction; ``keep`` and de-duplicated windows need the merge.

The expert program :data:`EXPERT` is the SREX-like choice of every slot.
"""

from __future__ import annotations

import random as _random
from collections.abc import Mapping

SLOTS: dict[str, tuple[str, ...]] = {
    "order": ("angle", "stored"),
    "choice": ("consecutive", "nearest", "random"),
    "count": ("uniform", "half", "quarter", "one"),
    "merge": ("replace", "keep"),
    "repair": ("none", "append", "cheapest", "nearest_route"),
    "children": ("best_of_two", "first"),
    "window": ("0", "1"),
    "syntax": ("ok", "broken"),
    "indexing": ("wrapped", "unchecked"),
    "returns": ("solution", "routes"),
    "fleet": ("merge_lightest", "unchecked"),
}

EXPERT: dict[str, str] = {"order": "angle", "choice": "consecutive", "count": "uniform",
                          "merge": "replace", "repair": "none", "children": "best_of_two",
                          "window": "0", "syntax": "ok", "indexing": "wrapped",
                          "returns": "solution", "fleet": "merge_lightest"}


def validate(program: Mapping[str, str]) -> dict[str, str]:
    """A complete program dict, or ValueError naming the bad slot."""
    if set(program) != set(SLOTS):
        missing, extra = set(SLOTS) - set(program), set(program) - set(SLOTS)
        raise ValueError(f"program: expected slots {sorted(SLOTS)}; missing {sorted(missing)}, "
                         f"unknown {sorted(extra)}")
    for slot, choice in program.items():
        if choice not in SLOTS[slot]:
            raise ValueError(f"program[{slot!r}]: expected one of {SLOTS[slot]}, got {choice!r}")
    return dict(program)


def random_program(rng: _random.Random) -> dict[str, str]:
    """A uniformly random program (the untrained generator)."""
    return {slot: rng.choice(choices) for slot, choices in SLOTS.items()}


_HEADER = '''\
import math

from pyvrp import Solution


def _angle(point, centre):
    return math.atan2(point[1] - centre[1], point[0] - centre[0])


def _load(route, demand):
    return sum(demand[c] for c in route)
'''

_ORDER = {
    "angle": '''
def _ordered(solution, centre):
    routes = [(r.centroid(), list(r.visits())) for r in solution.routes()]
    routes.sort(key=lambda item: _angle(item[0], centre))
    return [visits for _, visits in routes], [c for c, _ in routes]
''',
    "stored": '''
def _ordered(solution, centre):
    routes = [(r.centroid(), list(r.visits())) for r in solution.routes()]
    return [visits for _, visits in routes], [c for c, _ in routes]
''',
}

_COUNT = {
    "uniform": "1 + rng.randint(max_moved)",
    "half": "max(1, max_moved // 2)",
    "quarter": "max(1, max_moved // 4)",
    "one": "1",
}


def _b_index(start: str, length: str, window: str, indexing: str) -> str:
    expr = f"{start} + {window}"
    return f"({expr}) % {length}" if indexing == "wrapped" else expr


def _choice_src(choice: str, window: str, indexing: str) -> str:
    if choice == "consecutive":
        idx = _b_index("start_b + i", "len(routes_b)", window, indexing)
        return f'''
def _choose(routes_a, cents_a, routes_b, cents_b, moved, rng, centre):
    start_a = rng.randint(len(routes_a))
    target = _angle(cents_a[start_a], centre)
    start_b = min(range(len(routes_b)),
                  key=lambda j: abs(math.remainder(_angle(cents_b[j], centre) - target,
                                                   2 * math.pi)))
    chosen_a = [(start_a + i) % len(routes_a) for i in range(moved)]
    chosen_b = [{idx} for i in range(moved)]
    return chosen_a, chosen_b
'''
    if choice == "nearest":
        idx = _b_index("start_b", "len(ranked)", window, indexing)
        return f'''
def _choose(routes_a, cents_a, routes_b, cents_b, moved, rng, centre):
    start_a = rng.randint(len(routes_a))
    chosen_a = [(start_a + i) % len(routes_a) for i in range(moved)]
    chosen_b = []
    for i in chosen_a:
        ranked = sorted(range(len(routes_b)),
                        key=lambda j: math.dist(cents_a[i], cents_b[j]))
        free = [k for k, j in enumerate(ranked) if j not in chosen_b]
        start_b = free[0] if free else 0
        chosen_b.append(ranked[{idx}])
    return chosen_a, sorted(set(chosen_b))
'''
    idx = _b_index("i", "len(order_b)", window, indexing)
    return f'''
def _choose(routes_a, cents_a, routes_b, cents_b, moved, rng, centre):
    order_a = list(range(len(routes_a)))
    order_b = list(range(len(routes_b)))
    for k in range(len(order_a) - 1, 0, -1):
        j = rng.randint(k + 1)
        order_a[k], order_a[j] = order_a[j], order_a[k]
    for k in range(len(order_b) - 1, 0, -1):
        j = rng.randint(k + 1)
        order_b[k], order_b[j] = order_b[j], order_b[k]
    chosen_b = [order_b[{idx}] for i in range(moved)]
    return order_a[:moved], sorted(set(chosen_b))
'''


_MERGE = {
    "replace": '''
def _merge(routes_a, routes_b, chosen_a, chosen_b):
    moved = [list(routes_a[i]) for i in chosen_a]
    moved_clients = {c for route in moved for c in route}
    dropped = {c for j in chosen_b for c in routes_b[j]}
    kept = [[c for c in routes_b[j] if c not in moved_clients]
            for j in range(len(routes_b)) if j not in chosen_b]
    routes = [r for r in kept + moved if r]
    lost = sorted(dropped - moved_clients - {c for r in kept for c in r})
    return routes, lost
''',
    "keep": '''
def _merge(routes_a, routes_b, chosen_a, chosen_b):
    moved = [list(routes_a[i]) for i in chosen_a]
    moved_clients = {c for route in moved for c in route}
    kept = [[c for c in route if c not in moved_clients] for route in routes_b]
    routes = [r for r in kept + moved if r]
    return routes, []
''',
}

_REPAIR = {
    "none": '''
def _repair(routes, lost, data, demand):
    return routes
''',
    "append": '''
def _repair(routes, lost, data, demand):
    for client in lost:
        if not routes:
            routes.append([])
        target = min(range(len(routes)), key=lambda k: _load(routes[k], demand))
        routes[target].append(client)
    return routes
''',
    "cheapest": '''
def _repair(routes, lost, data, demand):
    dist = data.distance_matrix(0)
    for client in lost:
        best, where = None, None
        for k, route in enumerate(routes):
            path = [0] + route + [0]
            for pos in range(1, len(path)):
                delta = (dist[path[pos - 1], client] + dist[client, path[pos]]
                         - dist[path[pos - 1], path[pos]])
                if best is None or delta < best:
                    best, where = delta, (k, pos - 1)
        if where is None:
            routes.append([client])
        else:
            routes[where[0]].insert(where[1], client)
    return routes
''',
    "nearest_route": '''
def _repair(routes, lost, data, demand):
    for client in lost:
        loc = data.location(client)
        point = (loc.x, loc.y)
        if not routes:
            routes.append([client])
            continue

        def centre(route):
            xs = [data.location(c).x for c in route]
            ys = [data.location(c).y for c in route]
            return (sum(xs) / len(xs), sum(ys) / len(ys))

        target = min(range(len(routes)), key=lambda k: math.dist(point, centre(routes[k])))
        routes[target].append(client)
    return routes
''',
}


_FLEET = {
    "merge_lightest": """\
    while len(routes) > data.num_vehicles:
        routes.sort(key=lambda r: _load(r, demand))
        routes = [routes[0] + routes[1]] + routes[2:]
""",
    "unchecked": "",
}


def render(program: Mapping[str, str]) -> str:
    """The Python source of ``program`` (a module defining ``crossover``)."""
    p = validate(program)
    children = p["children"] == "best_of_two"
    ret = "Solution(data, routes)" if p["returns"] == "solution" else "routes"
    body = f'''

def _child(first, second, data, rng, centre, demand):
    routes_a, cents_a = _ordered(first, centre)
    routes_b, cents_b = _ordered(second, centre)
    if not routes_a or not routes_b:
        return {"Solution(data, routes_a or routes_b)" if ret != "routes" else "routes_a"}
    max_moved = min(len(routes_a), len(routes_b))
    moved = {_COUNT[p["count"]]}
    chosen_a, chosen_b = _choose(routes_a, cents_a, routes_b, cents_b, moved, rng, centre)
    routes, lost = _merge(routes_a, routes_b, chosen_a, chosen_b)
    routes = _repair(routes, lost, data, demand)
    routes = [r for r in routes if r]
{_FLEET[p["fleet"]]}    return {ret}


def crossover(parents, data, cost_evaluator, rng){":" if p["syntax"] == "ok" else ""}
    first, second = parents
    centre = data.centroid()
    demand = [0] * data.num_depots + [c.delivery[0] if c.delivery else 0
                                      for c in data.clients()]
    child = _child(first, second, data, rng, centre, demand)
'''
    if children:
        body += '''    other = _child(second, first, data, rng, centre, demand)
    if cost_evaluator.penalised_cost(other) < cost_evaluator.penalised_cost(child):
        return other
'''
    body += "    return child\n"
    choose = _choice_src(p["choice"], p["window"], p["indexing"])
    return (_HEADER + _ORDER[p["order"]] + choose + _MERGE[p["merge"]] + _REPAIR[p["repair"]]
            + body)
