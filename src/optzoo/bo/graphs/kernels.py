"""Shortest-path graph kernels SP, SSP, ESP, ESSP of BoGrape as GPyTorch kernels, and the GP.

Xie, Zhang, Qing, Misener & Tsay, "BoGrape: Bayesian optimization over graphs with
shortest-path encoded graph kernels" (ICLR 2026, OpenReview g0EbJrKFQJ, arXiv 2503.05642),
Eq. 3.  The exact forms are read from the authors' public gpflow implementation
(``jpfolch/catechol_solvent_selection``, ``Graph_GP/graph_kernels.py`` and ``graph.py``, kernel
names ``BoGrape_SP`` / ``BoGrape_ESP``): d_uv is the hop distance, pairs are *ordered* and
include u = v (distance 0), ℓ(u) is the node label, F the node-feature matrix (M columns):

* D_s(G) = #{(u, v): d_uv = s},  P_{s,a,b}(G) = #{(u, v): d_uv = s, ℓ(u) = a, ℓ(v) = b};
* SSP: k_P = Σ_s D_s(G₁) D_s(G₂) / (n₁² n₂²);  SP: k_P = Σ_{s,a,b} P_{s,a,b}(G₁) P_{s,a,b}(G₂)
  / (n₁² n₂²);
* node features: k_X = Σ_m S_m(G₁) S_m(G₂) / (n₁ n₂ M), S_m = Σ_u F_um (column sums);
* SP / SSP: k = α k_P + β k_X;  ESP / ESSP ("E" = exponential): k = σ² exp(α k_P + β k_X).

Feature-map implementation: a graph is the vector x(G) = [φ_P(G)/n², S(G)/(n√M)] with
φ_P = (D_s)_{s<N} (SSP/ESSP) or (P_{s,a,b})_{s<N,a,b} (SP/ESP), N = the space's n_max, so that
k_P and k_X are plain dot products of the two blocks (:func:`graph_features`); the GPyTorch
kernel :class:`ShortestPathKernel` takes these vectors, which keeps it a standard
``gpytorch.kernels.Kernel`` usable in any BoTorch model.  α, β ∈ [0.01, 100] and σ² ∈ [0.01, 1]
are box-constrained as the reference code soft-clips them (α, β > 0 keeps SP/SSP PSD).

The GP (:func:`fit_graph_gp`) is BoTorch's ``SingleTaskGP`` with a zero mean on targets
min-max scaled to [0, 1] (the authors' PK-MIQP code scales the same way and uses gpflow's zero
mean; an inferred choice for BoGrape), hyperparameters by maximum marginal likelihood
(``fit_gpytorch_mll``).  :class:`GraphPosterior` carries the fitted quantities in NumPy
float64 — μ(x) = k_xᵀ(K + σ_n²I)⁻¹y, σ²(x) = k(x,x) − k_xᵀ(K + σ_n²I)⁻¹k_x — shared by the MIP,
the brute-force check and the baselines, so all of them optimise the same acquisition.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from optzoo.bo.graphs.space import AttributedGraph, GraphSpace

KINDS = ("SP", "SSP", "ESP", "ESSP")
ALPHA_BOUNDS = (0.01, 100.0)
VARIANCE_BOUNDS = (0.01, 1.0)


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {KINDS}, got {kind!r}")
    return kind


def labelled(kind: str) -> bool:
    """SP and ESP use node labels in the path part; SSP and ESSP do not."""
    return check_kind(kind) in ("SP", "ESP")


def exponential(kind: str) -> bool:
    return check_kind(kind) in ("ESP", "ESSP")


def path_dim(kind: str, n_max: int, num_labels: int) -> int:
    """Length of φ_P: N for SSP/ESSP, N·L² for SP/ESP (s ranges over 0..N−1)."""
    return n_max * num_labels * num_labels if labelled(kind) else n_max


def path_counts(graph: AttributedGraph, kind: str, n_max: int, num_labels: int) -> np.ndarray:
    """Raw φ_P(G): D_s (SSP/ESSP) or P_{s,a,b} flattened in (s, a, b) order (SP/ESP)."""
    dist = graph.distances()
    if not np.all(np.isfinite(dist)):
        raise ValueError("graph: expected a connected graph (infinite distances)")
    if graph.n > n_max:
        raise ValueError(f"graph: has {graph.n} nodes, more than n_max = {n_max}")
    d = dist.astype(np.int64).ravel()
    if not labelled(kind):
        return np.bincount(d, minlength=n_max).astype(float)
    if int(graph.labels.max()) >= num_labels:
        raise ValueError(f"graph: label {int(graph.labels.max())} >= num_labels = {num_labels}")
    lab = graph.labels
    a = np.repeat(lab, graph.n)
    b = np.tile(lab, graph.n)
    idx = (d * num_labels + a) * num_labels + b
    return np.bincount(idx, minlength=n_max * num_labels * num_labels).astype(float)


def graph_features(graphs: list[AttributedGraph], space: GraphSpace, kind: str) -> np.ndarray:
    """The kernel's feature vectors x(G) = [φ_P(G)/n², S(G)/(n√M)], shape (len(graphs), p + M).

    Raises:
        ValueError: a graph outside the space's domain (disconnected, too large, bad label).
    """
    check_kind(kind)
    p = path_dim(kind, space.n_max, space.num_labels)
    m = space.num_features
    out = np.zeros((len(graphs), p + m))
    for i, g in enumerate(graphs):
        if not space.in_domain(g):
            raise ValueError(f"graphs[{i}]: not in the space's domain ({space})")
        out[i, :p] = path_counts(g, kind, space.n_max, space.num_labels) / g.n**2
        out[i, p:] = space.node_features(g).sum(0) / (g.n * math.sqrt(m))
    return out


def kernel_matrix(x1: np.ndarray, x2: np.ndarray, kind: str, path_dim_: int, alpha: float,
                  beta: float, variance: float = 1.0) -> np.ndarray:
    """k(x1_i, x2_j) in NumPy float64 (the same formula as :class:`ShortestPathKernel`)."""
    x1, x2 = np.atleast_2d(x1), np.atleast_2d(x2)
    lin = alpha * x1[:, :path_dim_] @ x2[:, :path_dim_].T + beta * x1[:, path_dim_:] @ \
        x2[:, path_dim_:].T
    return variance * np.exp(lin) if exponential(kind) else lin


def _shortest_path_kernel_class():
    import gpytorch
    import torch
    from gpytorch.constraints import Interval

    class ShortestPathKernel(gpytorch.kernels.Kernel):
        """BoGrape's SP / SSP / ESP / ESSP kernel on feature vectors x(G) (see module).

        Inputs are ``batch_shape x n x (p + M)`` tensors from :func:`graph_features`: the first
        ``path_dim`` columns are φ_P/n², the rest S/(n√M).

        Args:
            kind: ``"SP"``, ``"SSP"``, ``"ESP"`` or ``"ESSP"``.
            path_dim: p, the length of the path block (:func:`path_dim`).
            alpha, beta: initial weights of k_P and k_X (in [0.01, 100]).
            variance: initial σ² of the exponential kinds (in [0.01, 1]).
        """

        has_lengthscale = False

        def __init__(self, kind: str, path_dim: int, alpha: float = 1.0, beta: float = 1.0,
                     variance: float = 0.9, **kwargs) -> None:
            super().__init__(**kwargs)
            self.kind = check_kind(kind)
            if not isinstance(path_dim, int) or path_dim < 1:
                raise ValueError(f"path_dim: expected a positive integer, got {path_dim!r}")
            self.path_dim = path_dim
            for name, value, bounds in (("alpha", alpha, ALPHA_BOUNDS),
                                        ("beta", beta, ALPHA_BOUNDS),
                                        ("variance", variance, VARIANCE_BOUNDS)):
                if not bounds[0] < value < bounds[1]:
                    raise ValueError(f"{name}: expected a value in {bounds}, got {value}")
                self.register_parameter(f"raw_{name}", torch.nn.Parameter(
                    torch.zeros(*self.batch_shape, 1, dtype=torch.float64)))
                self.register_constraint(f"raw_{name}", Interval(*bounds))
                self._set(name, value)

        def _get(self, name: str):
            return getattr(self, f"raw_{name}_constraint").transform(
                getattr(self, f"raw_{name}"))

        def _set(self, name: str, value) -> None:
            raw = getattr(self, f"raw_{name}")
            value = torch.as_tensor(value, dtype=raw.dtype).expand_as(raw)
            self.initialize(**{f"raw_{name}": getattr(
                self, f"raw_{name}_constraint").inverse_transform(value)})

        @property
        def alpha(self):
            return self._get("alpha")

        @property
        def beta(self):
            return self._get("beta")

        @property
        def variance(self):
            return self._get("variance")

        def forward(self, x1, x2, diag: bool = False, last_dim_is_batch: bool = False,
                    **params):
            if last_dim_is_batch:
                raise ValueError("last_dim_is_batch: not supported by ShortestPathKernel")
            if x1.shape[-1] <= self.path_dim or x2.shape[-1] != x1.shape[-1]:
                raise ValueError(f"x1, x2: expected {self.path_dim} path columns plus node-"
                                 f"feature columns, got {x1.shape[-1]} and {x2.shape[-1]}")
            p = self.path_dim
            a, b = self.alpha, self.beta
            if diag:
                kp = (x1[..., :p] * x2[..., :p]).sum(-1)
                kx = (x1[..., p:] * x2[..., p:]).sum(-1)
            else:
                kp = x1[..., :p] @ x2[..., :p].transpose(-1, -2)
                kx = x1[..., p:] @ x2[..., p:].transpose(-1, -2)
                a, b = a.unsqueeze(-1), b.unsqueeze(-1)
            lin = a * kp + b * kx
            if exponential(self.kind):
                var = self.variance if diag else self.variance.unsqueeze(-1)
                return var * torch.exp(lin)
            return lin

    return ShortestPathKernel


_KERNEL_CLASS = None


def __getattr__(name: str):
    # the GPyTorch class is built on first use so that the NumPy parts of this module import
    # without torch
    global _KERNEL_CLASS
    if name == "ShortestPathKernel":
        if _KERNEL_CLASS is None:
            _KERNEL_CLASS = _shortest_path_kernel_class()
        return _KERNEL_CLASS
    raise AttributeError(name)


# -- the GP and its posterior ---------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class GraphPosterior:
    """The fitted GP in NumPy float64 (targets in the scaled units the GP was fitted on).

    Args:
        kind: kernel kind.
        path_dim: length p of the path block of the features.
        train: (N, p + M) training features.
        y: (N,) scaled training targets.
        alpha, beta, variance: kernel hyperparameters (variance unused by SP/SSP).
        noise: Gaussian noise variance σ_n².
    """

    kind: str
    path_dim: int
    train: np.ndarray
    y: np.ndarray
    alpha: float
    beta: float
    variance: float
    noise: float

    def __post_init__(self) -> None:
        k = self.kernel(self.train, self.train) + self.noise * np.eye(len(self.y))
        jitter = 0.0
        for _ in range(8):
            try:
                chol = np.linalg.cholesky(k + jitter * np.eye(len(self.y)))
                break
            except np.linalg.LinAlgError:
                jitter = max(1e-10, 10 * jitter)
        else:
            raise ValueError("train: kernel matrix is not positive definite even with jitter")
        object.__setattr__(self, "chol", chol)
        object.__setattr__(self, "weights", _cho_solve(chol, self.y))

    def kernel(self, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
        return kernel_matrix(x1, x2, self.kind, self.path_dim, self.alpha, self.beta,
                             self.variance)

    def kernel_diag(self, x: np.ndarray) -> np.ndarray:
        x = np.atleast_2d(x)
        p = self.path_dim
        lin = self.alpha * np.einsum("ij,ij->i", x[:, :p], x[:, :p]) + \
            self.beta * np.einsum("ij,ij->i", x[:, p:], x[:, p:])
        return self.variance * np.exp(lin) if exponential(self.kind) else lin

    def mean_var(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and (latent, noise-free) variance at features ``x`` (m, p + M)."""
        kx = self.kernel(x, self.train)
        mean = kx @ self.weights
        z = _solve_lower(self.chol, kx.T)
        var = self.kernel_diag(x) - np.einsum("ij,ij->j", z, z)
        return mean, np.maximum(var, 0.0)

    def lcb(self, x: np.ndarray, beta: float) -> np.ndarray:
        """μ(x) − β σ(x) (minimisation)."""
        mean, var = self.mean_var(x)
        return mean - beta * np.sqrt(var)


def _solve_lower(chol: np.ndarray, b: np.ndarray) -> np.ndarray:
    from scipy.linalg import solve_triangular

    return solve_triangular(chol, b, lower=True)


def _cho_solve(chol: np.ndarray, b: np.ndarray) -> np.ndarray:
    from scipy.linalg import cho_solve

    return cho_solve((chol, True), b)


def scale_targets(y: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Min-max scaling to [0, 1] (PK-MIQP's convention); returns (scaled, low, range)."""
    y = np.asarray(y, dtype=float)
    if y.ndim != 1 or y.size == 0 or not np.all(np.isfinite(y)):
        raise ValueError("y: expected a non-empty 1-D array of finite values")
    lo, span = float(y.min()), float(np.ptp(y))
    span = span if span > 0 else 1.0
    return (y - lo) / span, lo, span


def fit_graph_gp(x: np.ndarray, y: np.ndarray, kind: str, path_dim_: int,
                 min_noise: float = 1e-6):
    """Fit BoTorch's ``SingleTaskGP`` (zero mean, :class:`ShortestPathKernel`) by marginal
    likelihood on features ``x`` and already-scaled targets ``y``.

    Returns:
        (model, posterior): the BoTorch model and its :class:`GraphPosterior`.
    """
    import torch
    from botorch.exceptions import InputDataWarning, ModelFittingError
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.constraints import GreaterThan
    from gpytorch.likelihoods import GaussianLikelihood
    from gpytorch.means import ZeroMean
    from gpytorch.mlls import ExactMarginalLogLikelihood

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.ndim != 2 or x.shape[0] != y.shape[0] or y.ndim != 1 or x.shape[0] < 1:
        raise ValueError(f"x, y: expected shapes (N, d) and (N,), got {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x, y: expected finite values")
    tx = torch.as_tensor(x, dtype=torch.float64)
    ty = torch.as_tensor(y, dtype=torch.float64).unsqueeze(-1)
    kernel = __getattr__("ShortestPathKernel")(kind, path_dim_)
    likelihood = GaussianLikelihood(noise_constraint=GreaterThan(min_noise))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputDataWarning)
        model = SingleTaskGP(tx, ty, likelihood=likelihood, covar_module=kernel,
                             mean_module=ZeroMean(), outcome_transform=None)
        mll = ExactMarginalLogLikelihood(model.likelihood, model)
        try:
            fit_gpytorch_mll(mll)
        except ModelFittingError as err:
            # BoTorch retried and rolled the model back to its initial hyperparameters (a
            # valid, if uninformed, GP): go on with them and say so
            warnings.warn(f"GP fit failed ({err}); keeping initial hyperparameters",
                          RuntimeWarning, stacklevel=2)
    model.eval()
    post = GraphPosterior(kind=kind, path_dim=path_dim_, train=x, y=y,
                          alpha=float(kernel.alpha.item()), beta=float(kernel.beta.item()),
                          variance=float(kernel.variance.item()) if exponential(kind) else 1.0,
                          noise=float(model.likelihood.noise.item()))
    return model, post
