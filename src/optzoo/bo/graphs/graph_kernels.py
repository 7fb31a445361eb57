r"""The random-walk and Weisfeiler–Lehman graph-kernel baselines of BoGrape (Xie et al., ICLR 2026,
OpenReview g0EbJrKFQJ, §5: RW-rand, WL-rand, WL-evol), as explicit feature maps with a
GPyTorch :class:`~gpytorch.kernels.LinearKernel` on them.

The paper runs these baselines with GraKeL's kernels; GraKeL is no runtime dependency here, so
both kernels are written as the feature maps whose dot products they are (read from GraKeL's
documentation and the kernels' papers, not copied).  GraKeL 0.1.11 (a dev extra) is their
reference in ``tests/bo/graphs/test_graph_kernels_grakel.py``: WL raw and normalised kernels
agree to 1e-10 (GraKeL ``n_iter = h`` is our ``iterations = h``); RW agrees except at k = 0,
where GraKeL counts all n·n' node pairs and we count the label-matching ones (Gärtner et al.'s
direct product graph); GraKeL's WL ignores edge types, ours hashes them.  The GP is BoTorch's
``SingleTaskGP`` with ``LinearKernel`` (k(x, x') = v · xᵀx') on the feature vectors, zero
mean, targets min-max scaled to [0, 1] and the same β_t LCB as BoGrape -- so only the kernel
differs from :class:`optzoo.bo.graphs.SurrogateBO`:

* **Weisfeiler–Lehman subtree kernel** (Shervashidze et al., JMLR 2011): h rounds of label
  refinement; φ(G) counts every (round, refined label) -- round 0 the node labels, rounds
  1..h networkx's :func:`~networkx.weisfeiler_lehman_subgraph_hashes` with node attribute
  ``label`` and edge attribute ``type`` (bond orders).  k(G, G') = Σ_h Σ_ℓ c_h,ℓ(G) c_h,ℓ(G').
* **Random-walk kernel** (Gärtner et al., COLT 2003; GraKeL's ``RandomWalkLabeled`` truncated
  at p steps): k(G, G') = Σ_{k=0}^{p} λ^k 1ᵀ A_×^k 1 with A_× the adjacency of the direct
  product graph on label-matching node pairs.  Since 1ᵀA_×^k 1 = Σ_seq W_k,seq(G) W_k,seq(G')
  (W_k,seq the number of walks of length k whose node labels read seq), φ(G) =
  (λ^{k/2} W_k,seq(G))_{k ≤ p, seq ∈ L^{k+1}}, a finite map.
* Both are cosine-normalised (GraKeL's ``normalize=True``): x(G) = φ(G)/‖φ(G)‖, so k(G, G) = v.

WL labels form an open vocabulary.  The GP needs k(x, x) and k(x, train) for a candidate x:
features are the counts on the training graphs' vocabulary plus one "unseen" coordinate holding
the norm of the rest (zero for training graphs), which keeps both exact
(:meth:`WLFeatures.transform`).

Settings (GraKeL's defaults where they exist): WL h = 3 rounds (GraKeL: 5; graphs here have
≤ 10 nodes, so deeper rounds only relabel every node uniquely), RW p = 3 steps, λ = 0.1
(geometric decay below 1 / max degree for convergence of the untruncated series).
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from optzoo.bo.graphs.baselines import SurrogateBO
from optzoo.bo.graphs.kernels import scale_targets
from optzoo.bo.graphs.space import AttributedGraph, GraphSpace

GRAPH_KERNELS = ("WL", "RW")


def wl_counts(graph: AttributedGraph, iterations: int = 3) -> Counter:
    """WL subtree feature counts of ``graph``: (round, label) → number of nodes."""
    import networkx as nx

    if not (isinstance(iterations, int) and iterations >= 0):
        raise ValueError(f"iterations: expected an integer >= 0, got {iterations!r}")
    out = Counter((0, str(int(lab))) for lab in graph.labels)
    if iterations:
        hashes = nx.weisfeiler_lehman_subgraph_hashes(
            graph.to_networkx(), node_attr="label", edge_attr="type", iterations=iterations)
        for per_node in hashes.values():
            out.update((h + 1, lab) for h, lab in enumerate(per_node))
    return out


def rw_features(graph: AttributedGraph, num_labels: int, steps: int = 3,
                decay: float = 0.1) -> np.ndarray:
    """Unnormalised random-walk features (λ^{k/2} W_k,seq(G)) for k = 0..steps, label
    sequences in lexicographic order within each k; length Σ_k L^{k+1}."""
    if not (isinstance(steps, int) and steps >= 0):
        raise ValueError(f"steps: expected an integer >= 0, got {steps!r}")
    if not 0 < decay < 1:
        raise ValueError(f"decay: expected a number in (0, 1), got {decay!r}")
    lab = np.asarray(graph.labels, dtype=int)
    if lab.size and int(lab.max()) >= num_labels:
        raise ValueError(f"graph: label {int(lab.max())} >= num_labels = {num_labels}")
    adj = (np.asarray(graph.adjacency) > 0).astype(float)
    onehot = np.eye(num_labels)[lab]  # n x L
    # walks[seq] = vector over end nodes of the number of walks with that label sequence
    walks = onehot.T.copy()  # L x n: sequences of length 1 (k = 0)
    parts = [walks.sum(1)]
    for k in range(1, steps + 1):
        step = walks @ adj  # (L^k) x n: extend every walk by one edge
        walks = (step[:, None, :] * onehot.T[None, :, :]).reshape(-1, graph.n)
        parts.append(decay ** (k / 2) * walks.sum(1))
    return np.concatenate(parts)


@dataclass(frozen=True)
class WLFeatures:
    """The WL feature map on a fixed vocabulary (the training graphs' labels) plus one
    "unseen" coordinate; rows have unit norm (cosine normalisation)."""

    vocabulary: dict
    iterations: int = 3

    @classmethod
    def fit(cls, graphs: Sequence[AttributedGraph], iterations: int = 3) -> WLFeatures:
        vocab: dict = {}
        for g in graphs:
            for key in wl_counts(g, iterations):
                vocab.setdefault(key, len(vocab))
        return cls(vocab, iterations)

    def transform(self, graphs: Sequence[AttributedGraph]) -> np.ndarray:
        out = np.zeros((len(graphs), len(self.vocabulary) + 1))
        for i, g in enumerate(graphs):
            counts = wl_counts(g, self.iterations)
            norm = math.sqrt(sum(c * c for c in counts.values()))
            unseen = 0.0
            for key, c in counts.items():
                j = self.vocabulary.get(key)
                if j is None:
                    unseen += c * c
                else:
                    out[i, j] = c / norm
            out[i, -1] = math.sqrt(unseen) / norm
        return out


@dataclass(frozen=True, eq=False)
class LinearGraphPosterior:
    """GP posterior of k(x, x') = v · xᵀx' on unit-norm graph features, NumPy float64.

    Args:
        train: (N, p) training features.  y: (N,) scaled targets.
        variance: v.  noise: σ_n².
    """

    train: np.ndarray
    y: np.ndarray
    variance: float
    noise: float

    def __post_init__(self) -> None:
        from scipy.linalg import cho_factor, cho_solve

        k = self.variance * self.train @ self.train.T + self.noise * np.eye(len(self.y))
        chol = cho_factor(k + 1e-10 * np.eye(len(self.y)), lower=True)
        object.__setattr__(self, "chol", chol)
        object.__setattr__(self, "weights", cho_solve(chol, self.y))

    def mean_var(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        from scipy.linalg import solve_triangular

        kx = self.variance * np.atleast_2d(x) @ self.train.T
        z = solve_triangular(self.chol[0], kx.T, lower=True)
        var = self.variance * np.einsum("ij,ij->i", x, x) - np.einsum("ij,ij->j", z, z)
        return kx @ self.weights, np.maximum(var, 0.0)

    def lcb(self, x: np.ndarray, beta: float) -> np.ndarray:
        mean, var = self.mean_var(x)
        return mean - beta * np.sqrt(var)


@dataclass(frozen=True, eq=False)
class _FittedKernelGP:
    """A fitted WL / RW GP and the feature map of its candidates."""

    posterior: LinearGraphPosterior
    featurize: Any  # list of graphs -> (m, p) features

    def lcb_graphs(self, graphs: Sequence[AttributedGraph], beta: float) -> np.ndarray:
        return self.posterior.lcb(self.featurize(list(graphs)), beta)


def fit_linear_gp(x: np.ndarray, y: np.ndarray, min_noise: float = 1e-6
                  ) -> LinearGraphPosterior:
    """BoTorch ``SingleTaskGP`` (zero mean, GPyTorch ``LinearKernel``) fitted by marginal
    likelihood on features ``x`` and scaled targets ``y``; returned as NumPy posterior."""
    import torch
    from botorch.exceptions import InputDataWarning, ModelFittingError
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.constraints import GreaterThan
    from gpytorch.kernels import LinearKernel
    from gpytorch.likelihoods import GaussianLikelihood
    from gpytorch.means import ZeroMean
    from gpytorch.mlls import ExactMarginalLogLikelihood

    tx = torch.as_tensor(x, dtype=torch.float64)
    ty = torch.as_tensor(y, dtype=torch.float64).unsqueeze(-1)
    kernel = LinearKernel()
    likelihood = GaussianLikelihood(noise_constraint=GreaterThan(min_noise))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputDataWarning)
        model = SingleTaskGP(tx, ty, likelihood=likelihood, covar_module=kernel,
                             mean_module=ZeroMean(), outcome_transform=None)
        try:
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        except ModelFittingError as err:
            warnings.warn(f"GP fit failed ({err}); keeping initial hyperparameters",
                          RuntimeWarning, stacklevel=2)
    return LinearGraphPosterior(train=np.asarray(x, dtype=float), y=np.asarray(y, dtype=float),
                                variance=float(kernel.variance.item()),
                                noise=float(model.likelihood.noise.item()))


class GraphKernelBO(SurrogateBO):
    """GP-BO with a WL or RW graph kernel (the paper's WL-rand, RW-rand, WL-evol): BoGrape's
    loop, β_t and target scaling; the acquisition minimised over ``n_candidates`` random
    feasible graphs (``optimizer="random"``) or by the acquisition GA (``"ga"``).

    Args:
        space: the :class:`GraphSpace`.
        graph_kernel: ``"WL"`` or ``"RW"``.
        optimizer: ``"random"`` or ``"ga"`` (``"enumerate"`` too, on small spaces).
        wl_iterations: WL rounds h.  rw_steps, rw_decay: RW's p and λ.
        kwargs: as :class:`SurrogateBO` (n_candidates, n_init, beta, maximize, seed, ...).
    """

    def __init__(self, space: GraphSpace, graph_kernel: str = "WL", *,
                 optimizer: str = "random", wl_iterations: int = 3, rw_steps: int = 3,
                 rw_decay: float = 0.1, **kwargs: Any) -> None:
        if optimizer == "enumerate":
            raise ValueError("optimizer: 'enumerate' is SurrogateBO's brute-force check; "
                             "expected 'random' or 'ga'")
        if graph_kernel not in GRAPH_KERNELS:
            raise ValueError(f"graph_kernel: expected one of {GRAPH_KERNELS}, got "
                             f"{graph_kernel!r}")
        # the SP kernel of the parent only keys the no-good test of repeats (kernel-identical
        # graphs); here a repeat is a graph with the same WL / RW features
        super().__init__(space, "SSP", optimizer=optimizer, **kwargs)
        self.graph_kernel = graph_kernel
        self.wl_iterations, self.rw_steps, self.rw_decay = wl_iterations, rw_steps, rw_decay
        self.name = f"{graph_kernel.lower()}-{optimizer}"
        rw_features(space.sample(np.random.default_rng(0)), space.num_labels, rw_steps,
                    rw_decay)  # validates steps and decay now

    def _featurizer(self, train: Sequence[AttributedGraph]):
        if self.graph_kernel == "WL":
            return WLFeatures.fit(train, self.wl_iterations).transform

        def rw(graphs: Sequence[AttributedGraph]) -> np.ndarray:
            f = np.array([rw_features(g, self.space.num_labels, self.rw_steps, self.rw_decay)
                          for g in graphs])
            return f / np.linalg.norm(f, axis=1, keepdims=True)

        return rw

    def fit(self, graphs: Sequence[AttributedGraph], values: Sequence[float]
            ) -> _FittedKernelGP:
        y = np.asarray(values, dtype=float)
        ys, _, _ = scale_targets(-y if self.maximize else y)
        featurize = self._featurizer(graphs)
        return _FittedKernelGP(fit_linear_gp(featurize(list(graphs)), ys), featurize)

    def graph_keys(self, graphs: Sequence[AttributedGraph], post: _FittedKernelGP) -> list:
        return [tuple(np.round(f, 10).tolist()) for f in post.featurize(list(graphs))]

    def lcb_graphs(self, post: _FittedKernelGP, beta: float,
                   graphs: Sequence[AttributedGraph]) -> np.ndarray:
        return post.lcb_graphs(graphs, beta)

    def acquisition_value(self, post: _FittedKernelGP, beta: float,
                          graph: AttributedGraph) -> float:
        return float(post.lcb_graphs([graph], beta)[0])
