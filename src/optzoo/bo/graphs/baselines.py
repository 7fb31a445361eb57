"""Baselines of BoGrape: random feasible search, a graph GA, and GP-BO with heuristic or
brute-force acquisition optimisation.

Xie, Zhang, Qing, Misener & Tsay, "BoGrape: Bayesian optimization over graphs with
shortest-path encoded graph kernels" (ICLR 2026, OpenReview g0EbJrKFQJ, arXiv 2503.05642),
§5.  The paper compares with Random, RW-rand / WL-rand (a GP with another graph kernel whose
acquisition is maximised over 20 random graphs per iteration) and WL-evol (evolutionary
acquisition search).  Here the GP is BoGrape's own (same kernel, same β_t, same scaling), so
the comparison isolates what the paper claims: the value of optimising the acquisition exactly.

* :func:`random_search` — independent feasible graphs from :meth:`GraphSpace.sample`.
* :func:`graph_ga` — a steady-state, mutation-based genetic algorithm without a surrogate:
  tournament selection (size 3) from the best ``population`` graphs evaluated so far, 1 + a
  geometric number of mutations (toggle an edge, relabel a node, retype an edge, add or delete
  a node), a child kept only if feasible and not isomorphic to an evaluated graph.
* :class:`SurrogateBO` — BoGrape's GP and LCB with the acquisition minimised over
  ``"random"`` feasible candidates (the paper's 20 per iteration), by a GA on the acquisition
  (``"ga"``, WL-evol's search with BoGrape's kernel), or over the whole enumerated space
  (``"enumerate"``, small spaces: the brute-force optimum the MIP must match).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from optzoo.bo.graphs.bogrape import (
    BoGrape,
    GraphSearchResult,
    _check_value,
    evaluate_initial,
)
from optzoo.bo.graphs.kernels import GraphPosterior, graph_features
from optzoo.bo.graphs.space import (
    AttributedGraph,
    GraphSpace,
    enumerate_graphs,
    isomorphic,
    mutant,
)

OPTIMIZERS = ("random", "ga", "enumerate")


class SeenGraphs:
    """A set of graphs up to isomorphism (WL hash buckets, exact check inside a bucket)."""

    def __init__(self) -> None:
        self._buckets: dict[str, list[AttributedGraph]] = {}

    @staticmethod
    def _hash(g: AttributedGraph) -> str:
        import networkx as nx

        return nx.weisfeiler_lehman_graph_hash(g.to_networkx(), node_attr="label",
                                               edge_attr="type")

    def add(self, g: AttributedGraph) -> None:
        self._buckets.setdefault(self._hash(g), []).append(g)

    def __contains__(self, g: AttributedGraph) -> bool:
        return any(isomorphic(g, h) for h in self._buckets.get(self._hash(g), ()))


def _run_checks(space: GraphSpace, objective, budget: int, initial) -> None:
    if not isinstance(space, GraphSpace):
        raise ValueError(f"space: expected a GraphSpace, got {type(space).__name__}")
    if not callable(objective):
        raise ValueError("objective: expected a callable graph -> float")
    if not isinstance(budget, int) or budget < len(initial):
        raise ValueError(f"budget: expected an integer >= the initial design's size "
                         f"{len(initial)}, got {budget!r}")


def random_search(space: GraphSpace, objective: Callable[[AttributedGraph], float],
                  budget: int, rng: np.random.Generator, *, maximize: bool = False,
                  initial: Sequence[AttributedGraph] = ()) -> GraphSearchResult:
    """``budget`` evaluations: the ``initial`` graphs, then random feasible graphs."""
    _run_checks(space, objective, budget, initial)
    graphs, values, feasible = evaluate_initial(space, objective, initial)
    for t in range(len(initial), budget):
        g = space.sample(rng)
        graphs.append(g)
        feasible.append(space.check(g))
        values.append(_check_value(objective(g), f"sample {t}"))
    return GraphSearchResult(graphs, np.asarray(values, dtype=float), feasible, maximize,
                             len(initial))


def _tournament(values: np.ndarray, pool: np.ndarray, rng: np.random.Generator,
                size: int = 3) -> int:
    picks = rng.choice(pool, size=min(size, pool.size), replace=False)
    return int(picks[np.argmin(values[picks])])


def graph_ga(space: GraphSpace, objective: Callable[[AttributedGraph], float], budget: int,
             rng: np.random.Generator, *, maximize: bool = False,
             initial: Sequence[AttributedGraph] = (), population: int = 10
             ) -> GraphSearchResult:
    """Steady-state mutation GA (see module); ``initial`` seeds the population (random
    feasible graphs fill it up to ``population`` first)."""
    _run_checks(space, objective, budget, initial)
    if population < 2:
        raise ValueError(f"population: expected >= 2, got {population}")
    graphs, values, feasible = evaluate_initial(space, objective, initial)
    seen = SeenGraphs()
    for g in graphs:
        seen.add(g)
    sign = -1.0 if maximize else 1.0
    t = len(graphs)
    while t < budget:
        if len(graphs) < population:
            child = space.sample(rng)
        else:
            v = sign * np.asarray(values)
            pool = np.argsort(v, kind="stable")[:population]
            parent = graphs[_tournament(v, pool, rng)]
            child = mutant(parent, space, rng, accept=lambda g: g not in seen)
            if child is None:
                child = space.sample(rng)
        seen.add(child)
        graphs.append(child)
        feasible.append(space.check(child))
        values.append(_check_value(objective(child), f"child {t}"))
        t += 1
    return GraphSearchResult(graphs, np.asarray(values, dtype=float), feasible, maximize,
                             len(initial))


class SurrogateBO(BoGrape):
    """BoGrape's GP and LCB with a heuristic or brute-force acquisition optimiser.

    Args:
        space, kernel, n_init, beta, maximize, avoid_repeats, seed: as :class:`BoGrape`.
        optimizer: ``"random"``, ``"ga"`` or ``"enumerate"`` (see module).
        n_candidates: random candidates per iteration (``"random"``); the GA's evaluation
            budget of the acquisition per iteration (``"ga"``).
    """

    def __init__(self, space: GraphSpace, kernel: str = "SSP", *, optimizer: str = "random",
                 n_candidates: int = 20, **kwargs: Any) -> None:
        super().__init__(space, kernel, **kwargs)
        if optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer: expected one of {OPTIMIZERS}, got {optimizer!r}")
        if not isinstance(n_candidates, int) or n_candidates < 1:
            raise ValueError(f"n_candidates: expected an integer >= 1, got {n_candidates!r}")
        self.optimizer, self.n_candidates = optimizer, n_candidates
        self.name = f"gp-{optimizer}"
        self._enumerated: tuple[list[AttributedGraph], np.ndarray] | None = None

    def enumerated(self) -> tuple[list[AttributedGraph], np.ndarray]:
        """Every graph of the (small) space and its kernel features (cached)."""
        if self._enumerated is None:
            graphs = list(enumerate_graphs(self.space))
            self._enumerated = (graphs, graph_features(graphs, self.space, self.kernel))
        return self._enumerated

    def graph_keys(self, graphs: Sequence[AttributedGraph], post: Any) -> list:
        """Keys that are equal exactly for graphs the surrogate cannot tell apart."""
        return [_feature_key(f) for f in graph_features(list(graphs), self.space, self.kernel)]

    def lcb_graphs(self, post: Any, beta: float, graphs: Sequence[AttributedGraph]
                   ) -> np.ndarray:
        """μ − βσ of each graph under the fitted surrogate."""
        return post.lcb(graph_features(list(graphs), self.space, self.kernel), beta)

    def _observed_keys(self, observed: Sequence[AttributedGraph], post: Any) -> set:
        if not self.avoid_repeats or not observed:
            return set()
        return set(self.graph_keys(observed, post))

    def optimize_acquisition(self, post: GraphPosterior, beta: float,
                             observed: Sequence[AttributedGraph]
                             ) -> tuple[AttributedGraph | None, dict[str, Any]]:
        """Minimise the LCB with the configured optimiser (see module)."""
        banned = self._observed_keys(observed, post)
        if self.optimizer == "enumerate":
            graphs, feats = self.enumerated()
            lcb = post.lcb(feats, beta)
            if banned:
                lcb = np.where([_feature_key(f) in banned for f in feats], np.inf, lcb)
            i = int(np.argmin(lcb))
            return (graphs[i] if math.isfinite(lcb[i]) else None), {
                "acq_value": float(lcb[i]), "candidates": len(graphs)}
        if self.optimizer == "random":
            cands = []
            for _ in range(50 * self.n_candidates):
                g = self.space.sample(self.rng)
                if self.graph_keys([g], post)[0] not in banned:
                    cands.append(g)
                if len(cands) == self.n_candidates:
                    break
            if not cands:
                return None, {"acq_value": math.inf, "candidates": 0}
            lcb = self.lcb_graphs(post, beta, cands)
            i = int(np.argmin(lcb))
            return cands[i], {"acq_value": float(lcb[i]), "candidates": len(cands)}
        return self._ga_acquisition(post, beta, observed, banned)

    def _ga_acquisition(self, post: GraphPosterior, beta: float,
                        observed: Sequence[AttributedGraph], banned: set
                        ) -> tuple[AttributedGraph | None, dict[str, Any]]:
        """Mutation GA on the LCB: population = the 5 best observed graphs (by LCB) plus
        random feasible graphs; ``n_candidates`` acquisition evaluations."""

        def score(gs: list[AttributedGraph]) -> np.ndarray:
            val = self.lcb_graphs(post, beta, gs)
            return np.where([k in banned for k in self.graph_keys(gs, post)], np.inf, val)

        pop = list(observed)
        pop_val = list(score(pop)) if pop else []
        order = np.argsort(pop_val, kind="stable")[:5]
        pop = [pop[i] for i in order]
        pop_val = [pop_val[i] for i in order]
        extra = [self.space.sample(self.rng) for _ in range(5)]
        pop += extra
        pop_val += list(score(extra))
        evals = len(extra)
        while evals < self.n_candidates:
            v = np.asarray(pop_val)
            parent = pop[_tournament(v, np.arange(len(pop)), self.rng)]
            child = mutant(parent, self.space, self.rng, max_tries=50)
            if child is None:
                child = self.space.sample(self.rng)
            pop.append(child)
            pop_val.append(float(score([child])[0]))
            evals += 1
        i = int(np.argmin(pop_val))
        if not math.isfinite(pop_val[i]):
            return None, {"acq_value": math.inf, "candidates": evals}
        return pop[i], {"acq_value": float(pop_val[i]), "candidates": evals}


def _feature_key(f: np.ndarray) -> tuple:
    return tuple(np.round(f, 10).tolist())
