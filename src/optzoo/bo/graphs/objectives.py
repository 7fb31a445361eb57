"""Black boxes for BoGrape's reproduction: synthetic graph objectives and RDKit molecules.

Xie, Zhang, Qing, Misener & Tsay, "BoGrape: Bayesian optimization over graphs with
shortest-path encoded graph kernels" (ICLR 2026, OpenReview g0EbJrKFQJ, arXiv 2503.05642),
§5.  The paper's synthetic black boxes are GNNs (GAT / GCN / GraphSAGE) on graphs of up to 10
or 20 nodes, and its molecular tasks score QM7 / QM9-like molecules with GNN property
predictors under chemistry constraints; neither the trained networks nor the data are
available offline, so (as the brief's small-scale reproduction says):

* :class:`RandomGCN` — a randomly initialised two-layer GCN (Kipf & Welling propagation
  D̂^{-1/2}(A + I)D̂^{-1/2}, tanh) on one-hot labels with a sum-and-mean readout: a GNN black
  box of the paper's kind, fixed by its seed;
* :class:`WienerTriangles` — the brief's structural objective, read as "minimise
  −(mean hop distance) + #triangles" (the brief gives the expression, not the sense), plus
  0.5·|n₁ − n₀|/n so that labels matter;
* :func:`molecular_space` / :class:`QEDObjective` — heavy atoms C, N, O with bond orders 1–3,
  implicit hydrogens as node features (:class:`HydrogenCount`, which also enforces valences),
  at most ``rings`` rings and no 3-membered ring; the objective is RDKit's QED of the decoded,
  sanitised molecule (to be maximised).

Every objective has ``value(graph)`` (noise-free) and ``__call__`` (with optional Gaussian
noise of standard deviation ``noise`` from its own generator).
"""

from __future__ import annotations

import math

import numpy as np

from optzoo.bo.graphs.space import (
    AttributedGraph,
    GraphSpace,
    HydrogenCount,
    MaxRings,
    NoTriangles,
)

ATOMS = ("C", "N", "O")
VALENCES = {"C": 4, "N": 3, "O": 2}


class _Noisy:
    noise: float
    _rng: np.random.Generator

    def value(self, graph: AttributedGraph) -> float:
        raise NotImplementedError

    def __call__(self, graph: AttributedGraph) -> float:
        v = self.value(graph)
        return v + self.noise * float(self._rng.normal()) if self.noise > 0 else v


class RandomGCN(_Noisy):
    """f(G) = w_outᵀ [Σ_u h_u / n_max, mean_u h_u] with h = tanh(Â tanh(Â X W₁) W₂), Â the
    symmetric-normalised adjacency with self-loops, X the one-hot labels plus a constant
    column; weights N(0, 1/fan_in) from ``seed``.

    Args:
        num_labels: L.
        n_max: the space's largest size (scales the sum readout).
        hidden: width of the two layers.
        seed: fixes the weights.
        noise: standard deviation of observation noise (0: deterministic).
    """

    def __init__(self, num_labels: int, n_max: int, hidden: int = 16, seed: int = 0,
                 noise: float = 0.0) -> None:
        if num_labels < 1 or n_max < 1 or hidden < 1 or noise < 0:
            raise ValueError(f"RandomGCN: expected num_labels, n_max, hidden >= 1 and noise >= "
                             f"0, got {num_labels}, {n_max}, {hidden}, {noise}")
        rng = np.random.default_rng(seed)
        d_in = num_labels + 1
        self.w1 = rng.normal(0, 1 / math.sqrt(d_in), (d_in, hidden))
        self.w2 = rng.normal(0, 1 / math.sqrt(hidden), (hidden, hidden))
        self.w_out = rng.normal(0, 1 / math.sqrt(2 * hidden), 2 * hidden)
        self.num_labels, self.n_max, self.noise = num_labels, n_max, float(noise)
        self._rng = np.random.default_rng(seed + 1)

    def value(self, graph: AttributedGraph) -> float:
        a = (graph.adjacency > 0).astype(float) + np.eye(graph.n)
        dinv = 1.0 / np.sqrt(a.sum(1))
        a_hat = dinv[:, None] * a * dinv[None, :]
        x = np.concatenate([np.eye(self.num_labels)[graph.labels], np.ones((graph.n, 1))], 1)
        h = np.tanh(a_hat @ np.tanh(a_hat @ x @ self.w1) @ self.w2)
        readout = np.concatenate([h.sum(0) / self.n_max, h.mean(0)])
        return float(readout @ self.w_out)


class WienerTriangles(_Noisy):
    """f(G) = −W̄(G) + T(G) + 0.5·|n₁ − n₀|/n (minimise): W̄ the mean hop distance over
    unordered pairs, T the number of triangles, n_a the number of nodes labelled a."""

    def __init__(self, noise: float = 0.0, seed: int = 0) -> None:
        if noise < 0:
            raise ValueError(f"noise: expected >= 0, got {noise}")
        self.noise = float(noise)
        self._rng = np.random.default_rng(seed)

    def value(self, graph: AttributedGraph) -> float:
        d = graph.distances()
        n = graph.n
        mean_dist = float(d[np.triu_indices(n, 1)].mean())
        a = (graph.adjacency > 0).astype(np.int64)
        triangles = int(np.trace(a @ a @ a)) // 6
        balance = abs(int(np.sum(graph.labels == 1)) - int(np.sum(graph.labels == 0))) / n
        return -mean_dist + triangles + 0.5 * balance


def molecular_space(n_min: int = 4, n_max: int = 8, rings: int = 2,
                    atoms: tuple[str, ...] = ATOMS) -> GraphSpace:
    """Molecules with ``n_min..n_max`` heavy atoms from ``atoms`` (labels in that order), bond
    orders 1–3 (edge types), one-hot implicit-hydrogen counts 0–3 as node features (valence
    rule: h = valence − Σ bond orders ≥ 0), at most ``rings`` rings, no 3-membered ring.

    Example:
        >>> import numpy as np
        >>> from optzoo.bo.graphs import QEDObjective, molecular_space
        >>> space = molecular_space(4, 6)            # 4-6 heavy atoms of C, N, O
        >>> space
        GraphSpace(n=4..6, L=3, edge_types=3, M=7, constraints=[MaxRings(rings=2), NoTriangles()])
        >>> graph = space.sample(np.random.default_rng(0))
        >>> qed = QEDObjective(space)                # RDKit's QED of the decoded molecule
        >>> qed.smiles(graph), 0.0 < qed(graph) < 1.0
        ('C=NON=N', True)
    """
    unknown = [a for a in atoms if a not in VALENCES]
    if unknown or not atoms:
        raise ValueError(f"atoms: expected a non-empty subset of {tuple(VALENCES)}, got {atoms}")
    vals = tuple(VALENCES[a] for a in atoms)
    return GraphSpace(n_min, n_max, len(atoms), edge_types=3,
                      features=(HydrogenCount(vals, max_h=3),),
                      constraints=(MaxRings(rings), NoTriangles()), label_names=atoms)


def to_molecule(graph: AttributedGraph, space: GraphSpace):
    """The RDKit molecule of a graph of :func:`molecular_space` (sanitised), or ``None`` if
    RDKit rejects it."""
    from rdkit import Chem, RDLogger

    if space.label_names is None:
        raise ValueError("space: expected label_names (atom symbols), e.g. molecular_space()")
    RDLogger.DisableLog("rdApp.*")
    mol = Chem.RWMol()
    bonds = {1: Chem.BondType.SINGLE, 2: Chem.BondType.DOUBLE, 3: Chem.BondType.TRIPLE}
    hmap = next((f for f in space.features if isinstance(f, HydrogenCount)), None)
    hs = hmap.hydrogens(graph) if hmap is not None else None
    for u in range(graph.n):
        atom = Chem.Atom(space.label_names[int(graph.labels[u])])
        if hs is not None:
            atom.SetNoImplicit(True)
            atom.SetNumExplicitHs(int(max(hs[u], 0)))
        mol.AddAtom(atom)
    for u, v in graph.edges:
        order = int(graph.adjacency[u, v])
        if order not in bonds:
            return None
        mol.AddBond(u, v, bonds[order])
    try:
        out = mol.GetMol()
        Chem.SanitizeMol(out)
    except Exception:  # noqa: BLE001 -- RDKit raises several types for invalid valences
        return None
    return out


class QEDObjective(_Noisy):
    """RDKit QED of the decoded molecule (maximise); an invalid molecule scores 0.

    Args:
        space: a :func:`molecular_space`.
        noise: observation noise (0: deterministic).
    """

    def __init__(self, space: GraphSpace, noise: float = 0.0, seed: int = 0) -> None:
        if noise < 0:
            raise ValueError(f"noise: expected >= 0, got {noise}")
        self.space, self.noise = space, float(noise)
        self._rng = np.random.default_rng(seed)

    def value(self, graph: AttributedGraph) -> float:
        from rdkit.Chem import QED

        mol = to_molecule(graph, self.space)
        return 0.0 if mol is None else float(QED.qed(mol))

    def valid(self, graph: AttributedGraph) -> bool:
        return to_molecule(graph, self.space) is not None

    def smiles(self, graph: AttributedGraph) -> str | None:
        from rdkit import Chem

        mol = to_molecule(graph, self.space)
        return None if mol is None else Chem.MolToSmiles(mol)
