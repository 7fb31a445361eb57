"""The graph search space of BoGrape: attributed graphs, node features and constraints.

Xie, Zhang, Qing, Misener & Tsay, "BoGrape: Bayesian optimization over graphs with
shortest-path encoded graph kernels" (ICLR 2026, OpenReview g0EbJrKFQJ, arXiv 2503.05642), §2–3.

A point of the space is an attributed graph x = (G, F): n nodes (``n_min ≤ n ≤ n_max``),
undirected and connected, an adjacency whose non-zero entries are edge types (1 for a plain
graph; bond orders 1/2/3 for molecules), a label ℓ(u) ∈ {0, …, L−1} per node, and the node
feature matrix F ∈ {0,1}^{n×M} whose first L columns are the one-hot label (the paper's
convention: "label = first active column") followed by the columns of the space's
:class:`FeatureMap` s (e.g. a one-hot hydrogen count for molecules).

Constraints are objects with two faces, so that a user can add their own:

* ``encode(mip)`` adds linear / logical constraints on the variables of the acquisition MIP
  (:class:`optzoo.bo.graphs.mip.GraphMIP`: ``mip.A(u, v)``, ``mip.T[u][v][e]``, ``mip.X[u][a]``,
  ``mip.F[u][m]``, ``mip.d(u, v)``, ``mip.model`` the pyscipopt model), and
* ``check(graph, space)`` says whether a given graph satisfies them — used by the random and
  evolutionary baselines; a constraint that returns ``None`` (e.g. :class:`CustomConstraint`
  without a check) is checked by fixing the graph in the MIP and asking SCIP for feasibility.

Connectivity is not a constraint object: every graph of the space is connected, because the
shortest-path encoding (finite distances) implies it (paper, Theorem 3.5).

Sampling (:meth:`GraphSpace.sample`) draws a random connected graph (a random recursive tree
plus random extra edges, uniform labels and edge types) and keeps it if it is feasible
(rejection); when rejection fails ``max_tries`` times it falls back to a random-objective MIP
solution (the "Limeade-style" random feasible molecule of the brief).  Enumeration
(:func:`enumerate_graphs`) lists every connected graph with n ≤ 7 nodes from networkx's graph
atlas with every label assignment, for brute-force tests and regrets.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

ATLAS_MAX_NODES = 7


# -- graphs ------------------------------------------------------------------------------------

class AttributedGraph:
    """An undirected graph with integer node labels and integer edge types.

    Args:
        adjacency: (n, n) symmetric integer matrix, zero diagonal; entry ``e > 0`` is an edge
            of type ``e`` (bond order for molecules), 0 is no edge.
        labels: (n,) integer node labels in ``[0, L)``.
    """

    __slots__ = ("adjacency", "labels", "_dist")

    def __init__(self, adjacency: Any, labels: Any | None = None) -> None:
        adj = np.asarray(adjacency)
        if adj.ndim != 2 or adj.shape[0] != adj.shape[1] or adj.shape[0] < 1:
            raise ValueError(f"adjacency: expected a square (n, n) matrix with n >= 1, got shape "
                             f"{adj.shape}")
        if not np.all(np.isfinite(adj.astype(float))) or np.any(adj != np.round(adj)):
            raise ValueError("adjacency: expected integer edge types")
        adj = adj.astype(np.int64)
        if np.any(adj < 0):
            raise ValueError("adjacency: expected non-negative edge types (0 = no edge)")
        if not np.array_equal(adj, adj.T):
            raise ValueError("adjacency: expected a symmetric matrix (undirected graph)")
        if np.any(np.diag(adj) != 0):
            raise ValueError("adjacency: expected a zero diagonal (no self-loops)")
        n = adj.shape[0]
        lab = np.zeros(n, dtype=np.int64) if labels is None else np.asarray(labels)
        if lab.shape != (n,):
            raise ValueError(f"labels: expected shape ({n},), got {lab.shape}")
        if np.any(lab != np.round(lab)) or np.any(lab < 0):
            raise ValueError("labels: expected non-negative integers")
        adj.setflags(write=False)
        lab = lab.astype(np.int64)
        lab.setflags(write=False)
        self.adjacency = adj
        self.labels = lab
        self._dist: np.ndarray | None = None

    @property
    def n(self) -> int:
        return int(self.adjacency.shape[0])

    @property
    def edges(self) -> list[tuple[int, int]]:
        """Edges (u, v) with u < v."""
        iu, iv = np.nonzero(np.triu(self.adjacency, 1))
        return [(int(a), int(b)) for a, b in zip(iu, iv, strict=True)]

    def distances(self) -> np.ndarray:
        """All-pairs shortest-path distances (hops; ``inf`` between components)."""
        if self._dist is None:
            from scipy.sparse.csgraph import shortest_path

            self._dist = shortest_path(self.adjacency > 0, directed=False, unweighted=True)
            self._dist.setflags(write=False)
        return self._dist

    def is_connected(self) -> bool:
        return bool(np.all(np.isfinite(self.distances())))

    def to_networkx(self):
        """A ``networkx.Graph`` with node attribute ``label`` and edge attribute ``type``."""
        import networkx as nx

        g = nx.Graph()
        for u in range(self.n):
            g.add_node(u, label=int(self.labels[u]))
        for u, v in self.edges:
            g.add_edge(u, v, type=int(self.adjacency[u, v]))
        return g

    @classmethod
    def from_networkx(cls, g, label: str = "label", edge_type: str = "type") -> AttributedGraph:
        """From a networkx graph (nodes relabelled 0..n−1 in iteration order)."""
        nodes = list(g.nodes)
        index = {v: i for i, v in enumerate(nodes)}
        adj = np.zeros((len(nodes), len(nodes)), dtype=np.int64)
        for a, b, data in g.edges(data=True):
            adj[index[a], index[b]] = adj[index[b], index[a]] = int(data.get(edge_type, 1))
        labels = [int(g.nodes[v].get(label, 0)) for v in nodes]
        return cls(adj, labels)

    def permuted(self, perm: Sequence[int]) -> AttributedGraph:
        """The same graph with its nodes reordered: new node j is old node ``perm[j]``."""
        p = np.asarray(perm, dtype=np.int64)
        return AttributedGraph(self.adjacency[np.ix_(p, p)], self.labels[p])

    def key(self) -> tuple:
        """Exact (labelled, not up to isomorphism) identity of this node ordering."""
        return (self.n, self.adjacency.tobytes(), self.labels.tobytes())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AttributedGraph) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __repr__(self) -> str:
        return f"AttributedGraph(n={self.n}, edges={self.edges}, labels={self.labels.tolist()})"


def isomorphic(g1: AttributedGraph, g2: AttributedGraph) -> bool:
    """Whether two graphs are isomorphic respecting node labels and edge types (networkx VF2)."""
    import networkx as nx

    if g1.n != g2.n or sorted(g1.labels.tolist()) != sorted(g2.labels.tolist()):
        return False
    return nx.is_isomorphic(g1.to_networkx(), g2.to_networkx(),
                            node_match=lambda a, b: a["label"] == b["label"],
                            edge_match=lambda a, b: a["type"] == b["type"])


# -- extension points --------------------------------------------------------------------------

@runtime_checkable
class FeatureMap(Protocol):
    """Extra node-feature columns after the one-hot label.

    ``compute(graph, space)`` gives the (n, size) 0/1 columns of a graph (or raises
    ``ValueError`` if the graph lies outside the map's domain; ``valid`` says so first);
    ``encode(mip)`` returns, per node, ``size`` MIP expressions equal to them, adding whatever
    variables and constraints that takes.
    """

    size: int

    def compute(self, graph: AttributedGraph, space: GraphSpace) -> np.ndarray: ...

    def valid(self, graph: AttributedGraph, space: GraphSpace) -> bool: ...

    def encode(self, mip) -> list[list[Any]]: ...


@runtime_checkable
class GraphConstraint(Protocol):
    """A constraint of the space: ``encode(mip)`` adds it to the MIP; ``check(graph, space)``
    says whether a graph satisfies it (``None``: unknown, check by MIP)."""

    def encode(self, mip) -> None: ...

    def check(self, graph: AttributedGraph, space: GraphSpace) -> bool | None: ...


def _degrees(graph: AttributedGraph) -> np.ndarray:
    return (graph.adjacency > 0).sum(1)


def _bond_sums(graph: AttributedGraph) -> np.ndarray:
    return graph.adjacency.sum(1)


@dataclass(frozen=True)
class DegreeBounds:
    """min_degree ≤ deg(u) ≤ max_degree for every node (linear in A)."""

    min_degree: int = 0
    max_degree: int | None = None

    def __post_init__(self) -> None:
        if self.min_degree < 0:
            raise ValueError(f"min_degree: expected >= 0, got {self.min_degree}")
        if self.max_degree is not None and self.max_degree < max(1, self.min_degree):
            raise ValueError(f"max_degree: expected >= max(1, min_degree), got "
                             f"{self.max_degree}")

    def encode(self, mip) -> None:
        for u in range(mip.n):
            deg = mip.degree(u)
            if self.min_degree > 0:
                mip.model.addCons(deg >= self.min_degree, name=f"mindeg_{u}")
            if self.max_degree is not None:
                mip.model.addCons(deg <= self.max_degree, name=f"maxdeg_{u}")

    def check(self, graph: AttributedGraph, space: GraphSpace) -> bool:
        deg = _degrees(graph)
        ok = bool(np.all(deg >= self.min_degree))
        return ok and (self.max_degree is None or bool(np.all(deg <= self.max_degree)))


@dataclass(frozen=True)
class MaxRings:
    """At most ``rings`` independent cycles: |E| ≤ n − 1 + rings (a ring rule; 0 = trees)."""

    rings: int

    def __post_init__(self) -> None:
        if self.rings < 0:
            raise ValueError(f"rings: expected >= 0, got {self.rings}")

    def encode(self, mip) -> None:
        mip.model.addCons(mip.num_edges() <= mip.n - 1 + self.rings, name="max_rings")

    def check(self, graph: AttributedGraph, space: GraphSpace) -> bool:
        return len(graph.edges) <= graph.n - 1 + self.rings


@dataclass(frozen=True)
class NoTriangles:
    """No 3-membered ring: A_uv + A_vw + A_uw ≤ 2 for every triple (a ring rule)."""

    def encode(self, mip) -> None:
        for u, v, w in itertools.combinations(range(mip.n), 3):
            mip.model.addCons(mip.A(u, v) + mip.A(v, w) + mip.A(u, w) <= 2,
                              name=f"notri_{u}_{v}_{w}")

    def check(self, graph: AttributedGraph, space: GraphSpace) -> bool:
        a = (graph.adjacency > 0).astype(np.int64)
        return int(np.trace(a @ a @ a)) == 0


@dataclass(frozen=True)
class LabelCount:
    """lo ≤ #nodes with ``label`` ≤ hi (linear in the label one-hots)."""

    label: int
    lo: int = 0
    hi: int | None = None

    def __post_init__(self) -> None:
        if self.label < 0 or self.lo < 0 or (self.hi is not None and self.hi < self.lo):
            raise ValueError(f"LabelCount: expected label >= 0 and 0 <= lo <= hi, got "
                             f"label={self.label}, lo={self.lo}, hi={self.hi}")

    def encode(self, mip) -> None:
        from pyscipopt import quicksum

        count = quicksum(mip.X[u][self.label] for u in range(mip.n))
        if self.lo > 0:
            mip.model.addCons(count >= self.lo, name=f"labelcount_lo_{self.label}")
        if self.hi is not None:
            mip.model.addCons(count <= self.hi, name=f"labelcount_hi_{self.label}")

    def check(self, graph: AttributedGraph, space: GraphSpace) -> bool:
        c = int(np.sum(graph.labels == self.label))
        return c >= self.lo and (self.hi is None or c <= self.hi)


@dataclass(frozen=True)
class Valence:
    """Σ_v bond order(u, v) ≤ valence(ℓ(u)) for every node (edge type = bond order; the rest
    of the valence is filled by implicit hydrogens).

    Args:
        valences: the valence of each label (e.g. C, N, O → (4, 3, 2)).
    """

    valences: tuple[int, ...]

    def __post_init__(self) -> None:
        if not self.valences or any(v < 1 for v in self.valences):
            raise ValueError(f"valences: expected positive integers, got {self.valences}")

    def encode(self, mip) -> None:
        if mip.space.num_labels != len(self.valences):
            raise ValueError(f"valences: expected {mip.space.num_labels} values (one per "
                             f"label), got {len(self.valences)}")
        for u in range(mip.n):
            cap = sum(self.valences[a] * mip.X[u][a] for a in range(mip.space.num_labels))
            mip.model.addCons(mip.bond_sum(u) <= cap, name=f"valence_{u}")

    def check(self, graph: AttributedGraph, space: GraphSpace) -> bool:
        if space.num_labels != len(self.valences):
            raise ValueError(f"valences: expected {space.num_labels} values (one per label), "
                             f"got {len(self.valences)}")
        cap = np.asarray(self.valences)[graph.labels]
        return bool(np.all(_bond_sums(graph) <= cap))


class CustomConstraint:
    """A user constraint: ``encode(mip)`` adds linear/logical constraints to the MIP;
    ``check(graph, space) -> bool`` (optional) says whether a graph satisfies them — without
    it, graphs are checked by fixing them in the MIP (slower, exact).

    Example:
        "Node 0 is a leaf", written on the MIP's degree expression; without ``check``, a
        graph is checked by fixing it in the MIP:

        >>> import numpy as np
        >>> from optzoo.bo.graphs import CustomConstraint, GraphSpace
        >>> leaf0 = CustomConstraint(lambda mip: mip.model.addCons(mip.degree(0) == 1),
        ...                          name="leaf0")
        >>> space = GraphSpace(3, 5, num_labels=1, constraints=[leaf0])
        >>> graph = space.sample(np.random.default_rng(0))   # a random feasible graph
        >>> space.check(graph), int((graph.adjacency[0] > 0).sum())
        (True, 1)
        >>> space.constraints
        (CustomConstraint(leaf0),)
    """

    def __init__(self, encode: Callable[[Any], None],
                 check: Callable[[AttributedGraph, GraphSpace], bool] | None = None,
                 name: str = "custom") -> None:
        if not callable(encode):
            raise ValueError("encode: expected a callable taking the GraphMIP")
        if check is not None and not callable(check):
            raise ValueError("check: expected a callable (graph, space) -> bool or None")
        self._encode, self._check, self.name = encode, check, name

    def encode(self, mip) -> None:
        self._encode(mip)

    def check(self, graph: AttributedGraph, space: GraphSpace) -> bool | None:
        return None if self._check is None else bool(self._check(graph, space))

    def __repr__(self) -> str:
        return f"CustomConstraint({self.name})"


@dataclass(frozen=True)
class HydrogenCount:
    """One-hot implicit-hydrogen count h(u) = valence(ℓ(u)) − Σ_v bond order(u, v) ∈
    {0, …, max_h}: the molecular node feature (implies the valence rule h ≥ 0).

    Args:
        valences: valence of each label.
        max_h: largest hydrogen count (columns 0..max_h).
    """

    valences: tuple[int, ...]
    max_h: int = 3

    def __post_init__(self) -> None:
        if not self.valences or any(v < 1 for v in self.valences):
            raise ValueError(f"valences: expected positive integers, got {self.valences}")
        if self.max_h < 0:
            raise ValueError(f"max_h: expected >= 0, got {self.max_h}")

    @property
    def size(self) -> int:
        return self.max_h + 1

    def hydrogens(self, graph: AttributedGraph) -> np.ndarray:
        return np.asarray(self.valences)[graph.labels] - _bond_sums(graph)

    def valid(self, graph: AttributedGraph, space: GraphSpace) -> bool:
        if space.num_labels != len(self.valences):
            raise ValueError(f"valences: expected {space.num_labels} values (one per label), "
                             f"got {len(self.valences)}")
        h = self.hydrogens(graph)
        return bool(np.all((h >= 0) & (h <= self.max_h)))

    def compute(self, graph: AttributedGraph, space: GraphSpace) -> np.ndarray:
        if not self.valid(graph, space):
            raise ValueError("graph: hydrogen count outside [0, max_h] (valence violated)")
        return np.eye(self.size, dtype=float)[self.hydrogens(graph)]

    def encode(self, mip) -> list[list[Any]]:
        from pyscipopt import quicksum

        cols = []
        for u in range(mip.n):
            h = [mip.model.addVar(vtype="B", name=f"H_{u}_{k}") for k in range(self.size)]
            mip.model.addCons(quicksum(h) == 1, name=f"H_onehot_{u}")
            val = quicksum(self.valences[a] * mip.X[u][a] for a in range(mip.space.num_labels))
            mip.model.addCons(quicksum(k * h[k] for k in range(self.size))
                              == val - mip.bond_sum(u), name=f"H_count_{u}")
            cols.append(h)
        return cols


# -- the space ---------------------------------------------------------------------------------

class GraphSpace:
    """Connected attributed graphs with ``n_min ≤ n ≤ n_max`` nodes under constraints.

    Args:
        n_min, n_max: node-count range (2 ≤ n_min ≤ n_max).
        num_labels: L, the number of node labels (one-hot, first L feature columns).
        edge_types: number of edge types (1: plain graphs; 3: bond orders 1–3).
        features: extra :class:`FeatureMap` s appended after the label one-hot.
        constraints: :class:`GraphConstraint` s (built-in or :class:`CustomConstraint`).
        symmetry_breaking: add to the MIP the constraint "every node v ≥ 1 has a neighbour
            u < v" (true of any breadth-first node order, so it removes orderings, never
            graphs).
        label_names: optional names of the labels (e.g. atoms), for display and decoding.
    """

    def __init__(self, n_min: int, n_max: int, num_labels: int = 1, *, edge_types: int = 1,
                 features: Sequence[FeatureMap] = (), constraints: Sequence[Any] = (),
                 symmetry_breaking: bool = True,
                 label_names: Sequence[str] | None = None) -> None:
        for name, value in (("n_min", n_min), ("n_max", n_max), ("num_labels", num_labels),
                            ("edge_types", edge_types)):
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
                raise ValueError(f"{name}: expected an integer, got {value!r}")
        if n_min < 2:
            raise ValueError(f"n_min: expected >= 2, got {n_min}")
        if n_max < n_min:
            raise ValueError(f"n_max: expected >= n_min = {n_min}, got {n_max}")
        if num_labels < 1:
            raise ValueError(f"num_labels: expected >= 1, got {num_labels}")
        if edge_types < 1:
            raise ValueError(f"edge_types: expected >= 1, got {edge_types}")
        for f in features:
            if not isinstance(f, FeatureMap):
                raise ValueError(f"features: {f!r} is not a FeatureMap (size, compute, valid, "
                                 "encode)")
        for c in constraints:
            if not isinstance(c, GraphConstraint):
                raise ValueError(f"constraints: {c!r} has no encode(mip) and check(graph, "
                                 "space)")
        if label_names is not None and len(label_names) != num_labels:
            raise ValueError(f"label_names: expected {num_labels} names, got "
                             f"{len(label_names)}")
        self.n_min, self.n_max = int(n_min), int(n_max)
        self.num_labels, self.edge_types = int(num_labels), int(edge_types)
        self.features = tuple(features)
        self.constraints = tuple(constraints)
        self.symmetry_breaking = bool(symmetry_breaking)
        self.label_names = tuple(label_names) if label_names is not None else None

    @property
    def num_features(self) -> int:
        """M: label one-hot columns plus the feature maps' columns."""
        return self.num_labels + sum(f.size for f in self.features)

    @property
    def sizes(self) -> range:
        return range(self.n_min, self.n_max + 1)

    def __repr__(self) -> str:
        return (f"GraphSpace(n={self.n_min}..{self.n_max}, L={self.num_labels}, "
                f"edge_types={self.edge_types}, M={self.num_features}, "
                f"constraints={list(self.constraints)})")

    # features and feasibility

    def node_features(self, graph: AttributedGraph) -> np.ndarray:
        """F ∈ {0,1}^{n×M}: one-hot label, then each feature map's columns."""
        cols = [np.eye(self.num_labels, dtype=float)[graph.labels]]
        cols += [f.compute(graph, self) for f in self.features]
        return np.concatenate(cols, axis=1)

    def in_domain(self, graph: AttributedGraph) -> bool:
        """Size, label range, edge-type range, connectivity and feature-map domains."""
        return (self.n_min <= graph.n <= self.n_max
                and int(graph.labels.max()) < self.num_labels
                and int(graph.adjacency.max()) <= self.edge_types
                and graph.is_connected()
                and all(f.valid(graph, self) for f in self.features))

    def check(self, graph: AttributedGraph) -> bool:
        """Whether ``graph`` lies in the space and satisfies every constraint."""
        if not isinstance(graph, AttributedGraph):
            raise ValueError(f"graph: expected an AttributedGraph, got {type(graph).__name__}")
        if not self.in_domain(graph):
            return False
        unknown = False
        for c in self.constraints:
            ok = c.check(graph, self)
            if ok is None:
                unknown = True
            elif not ok:
                return False
        if unknown:
            from optzoo.bo.graphs.mip import mip_feasible

            return mip_feasible(self, graph)
        return True

    # sampling

    def random_graph(self, rng: np.random.Generator, n: int | None = None) -> AttributedGraph:
        """A random connected graph of the domain, constraints not enforced: a random
        recursive tree plus each other pair with probability p ~ U(0, 0.5), uniform labels
        and edge types, nodes shuffled."""
        n = int(rng.integers(self.n_min, self.n_max + 1)) if n is None else int(n)
        adj = np.zeros((n, n), dtype=np.int64)
        for v in range(1, n):
            u = int(rng.integers(0, v))
            adj[u, v] = adj[v, u] = 1
        p = rng.uniform(0.0, 0.5)
        iu, iv = np.triu_indices(n, 1)
        extra = (rng.random(iu.size) < p) & (adj[iu, iv] == 0)
        adj[iu[extra], iv[extra]] = adj[iv[extra], iu[extra]] = 1
        if self.edge_types > 1:
            types = rng.integers(1, self.edge_types + 1, size=(n, n))
            types = np.triu(types, 1)
            adj = adj * (types + types.T)
        labels = rng.integers(0, self.num_labels, size=n)
        perm = rng.permutation(n)
        return AttributedGraph(adj, labels).permuted(perm)

    def sample(self, rng: np.random.Generator, max_tries: int = 2000) -> AttributedGraph:
        """A random feasible graph: rejection from :meth:`random_graph`, then (if every try
        failed) a random-objective MIP solution."""
        for _ in range(max_tries):
            g = self.random_graph(rng)
            if self.check(g):
                return g
        from optzoo.bo.graphs.mip import random_feasible_graph

        return random_feasible_graph(self, rng)

    def sample_distinct(self, k: int, rng: np.random.Generator,
                        max_tries: int = 100) -> list[AttributedGraph]:
        """``k`` feasible graphs, pairwise non-isomorphic when the space allows it."""
        out: list[AttributedGraph] = []
        tries = 0
        while len(out) < k:
            g = self.sample(rng)
            tries += 1
            if tries > max_tries * k or not any(isomorphic(g, h) for h in out):
                out.append(g)
        return out


# -- neighbourhood -------------------------------------------------------------------------------

def mutate(graph: AttributedGraph, space: GraphSpace, rng: np.random.Generator
           ) -> AttributedGraph | None:
    """One random mutation (domain not checked): toggle an edge, relabel a node, retype an
    edge, add a node (joined to a random node) or delete a node; ``None`` if it does not
    apply."""
    adj, lab = graph.adjacency.copy(), graph.labels.copy()
    n = graph.n
    ops = ["edge", "label", "add", "delete"] + (["type"] if space.edge_types > 1 else [])
    op = ops[int(rng.integers(len(ops)))]
    if op == "edge":
        u, v = rng.choice(n, size=2, replace=False)
        adj[u, v] = adj[v, u] = 0 if adj[u, v] else int(rng.integers(1, space.edge_types + 1))
    elif op == "label":
        if space.num_labels == 1:
            return None
        u = int(rng.integers(n))
        lab[u] = (lab[u] + int(rng.integers(1, space.num_labels))) % space.num_labels
    elif op == "type":
        iu, iv = np.nonzero(np.triu(adj, 1))
        if iu.size == 0:
            return None
        k = int(rng.integers(iu.size))
        new = int(rng.integers(1, space.edge_types + 1))
        adj[iu[k], iv[k]] = adj[iv[k], iu[k]] = new
    elif op == "add":
        if n >= space.n_max:
            return None
        big = np.zeros((n + 1, n + 1), dtype=np.int64)
        big[:n, :n] = adj
        u = int(rng.integers(n))
        big[u, n] = big[n, u] = int(rng.integers(1, space.edge_types + 1))
        return AttributedGraph(big, np.append(lab, rng.integers(space.num_labels)))
    else:
        if n <= space.n_min:
            return None
        keep = np.delete(np.arange(n), int(rng.integers(n)))
        return AttributedGraph(adj[np.ix_(keep, keep)], lab[keep])
    return AttributedGraph(adj, lab)


def mutant(graph: AttributedGraph, space: GraphSpace, rng: np.random.Generator,
           accept: Callable[[AttributedGraph], bool] = lambda g: True,
           max_tries: int = 200) -> AttributedGraph | None:
    """A feasible child of ``graph`` after 1 + Geometric(1/2) − 1 mutations that ``accept``
    takes, or ``None`` after ``max_tries`` attempts."""
    for _ in range(max_tries):
        child: AttributedGraph | None = graph
        for _ in range(int(rng.geometric(0.5))):
            child = mutate(child, space, rng) if child is not None else None
        if child is not None and space.check(child) and accept(child):
            return child
    return None


# -- enumeration -------------------------------------------------------------------------------

def atlas_structures(n: int) -> list[np.ndarray]:
    """Adjacency matrices of every connected graph with ``n ≤ 7`` nodes, one per isomorphism
    class (networkx graph atlas)."""
    import networkx as nx

    if not 1 <= n <= ATLAS_MAX_NODES:
        raise ValueError(f"n: the graph atlas covers 1..{ATLAS_MAX_NODES} nodes, got {n}")
    out = []
    for g in nx.graph_atlas_g():
        if g.number_of_nodes() == n and nx.is_connected(g):
            out.append(nx.to_numpy_array(g, nodelist=sorted(g.nodes), dtype=np.int64))
    return out


def enumerate_graphs(space: GraphSpace, check: bool = True) -> Iterator[AttributedGraph]:
    """Every graph of a small space: each connected structure of the atlas with every label
    assignment (labelled copies that are isomorphic are all listed), filtered by
    :meth:`GraphSpace.check` when ``check``.  Needs ``n_max ≤ 7`` and ``edge_types == 1``."""
    if space.n_max > ATLAS_MAX_NODES:
        raise ValueError(f"space: enumeration needs n_max <= {ATLAS_MAX_NODES}, got "
                         f"{space.n_max}")
    if space.edge_types != 1:
        raise ValueError(f"space: enumeration needs edge_types == 1, got {space.edge_types}")
    for n in space.sizes:
        for adj in atlas_structures(n):
            for labels in itertools.product(range(space.num_labels), repeat=n):
                g = AttributedGraph(adj, labels)
                if not check or space.check(g):
                    yield g
