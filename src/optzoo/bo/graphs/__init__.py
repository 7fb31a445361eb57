"""BoGrape: Bayesian optimisation over graphs with shortest-path kernels and a global MIP
acquisition (Xie, Zhang, Qing, Misener & Tsay, ICLR 2026, OpenReview g0EbJrKFQJ).

Needs the ``bo`` extra (botorch, gpytorch, pyscipopt, networkx; rdkit for molecules).

Example:
    >>> from optzoo.bo.graphs import BoGrape, DegreeBounds, GraphSpace
    >>> space = GraphSpace(3, 4, num_labels=2, constraints=[DegreeBounds(max_degree=3)])
    >>> def objective(graph):                        # any Python function of the graph
    ...     return abs(len(graph.edges) - 4) + float(graph.labels.sum())
    >>> result = BoGrape(space, "SSP", n_init=3, time_limit=2.0, seed=0).run(objective, budget=4)
    >>> all(space.check(g) for g in result.graphs)   # every proposal is feasible
    True
"""

from optzoo.bo.graphs.baselines import SurrogateBO, graph_ga, random_search
from optzoo.bo.graphs.bogrape import BoGrape, GraphSearchResult, pk_miqp_beta
from optzoo.bo.graphs.graph_kernels import GraphKernelBO, WLFeatures, rw_features, wl_counts
from optzoo.bo.graphs.kernels import (
    KINDS,
    GraphPosterior,
    fit_graph_gp,
    graph_features,
    kernel_matrix,
    path_counts,
)
from optzoo.bo.graphs.mip import GraphMIP, build_acquisition, solve_acquisition
from optzoo.bo.graphs.objectives import (
    QEDObjective,
    RandomGCN,
    WienerTriangles,
    molecular_space,
    to_molecule,
)
from optzoo.bo.graphs.space import (
    AttributedGraph,
    CustomConstraint,
    DegreeBounds,
    GraphSpace,
    HydrogenCount,
    LabelCount,
    MaxRings,
    NoTriangles,
    Valence,
    enumerate_graphs,
    isomorphic,
)

__all__ = [
    "KINDS", "AttributedGraph", "BoGrape", "CustomConstraint", "DegreeBounds", "GraphKernelBO",
    "GraphMIP", "GraphPosterior", "GraphSearchResult", "GraphSpace", "HydrogenCount",
    "LabelCount", "MaxRings", "NoTriangles", "QEDObjective", "RandomGCN", "SurrogateBO",
    "Valence", "WLFeatures", "WienerTriangles", "build_acquisition", "enumerate_graphs",
    "fit_graph_gp", "graph_features", "graph_ga", "isomorphic", "kernel_matrix",
    "molecular_space", "path_counts", "pk_miqp_beta", "random_search", "rw_features",
    "solve_acquisition", "to_molecule", "wl_counts",
]


def __getattr__(name: str):
    if name == "ShortestPathKernel":
        from optzoo.bo.graphs import kernels

        return kernels.ShortestPathKernel
    raise AttributeError(name)
