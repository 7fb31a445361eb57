r"""Local Entropy Search (LES), minimising by default (``maximize=True`` for BoTorch's maximisation
convention), as a BoTorch acquisition function, and the LES loop.

Paper: D. Stenger, A. Lindicke, A. von Rohr, S. Trimpe, "Local Entropy Search over Descent
Sequences for Bayesian Optimization", ICLR 2026 (poster), OpenReview ``cPxmLZmFa7``,
arXiv 2511.19241.  Official code (GPflow/TensorFlow prototype):
github.com/Data-Science-in-Mechanical-Engineering/local-entropy-search, files
``local_bo/local_bo/optimization/local_bo.py`` (class ``Local_bo``) and
``benchmarking/benchmarking.py``.

Method (minimisation of f on a box scaled to [0, 1]^d).  Let D be the data, x̂ the incumbent.

1. Draw S pathwise posterior samples f_s ~ p(f | D) (Matheron's rule: random-Fourier-feature prior
   with 1,024 features plus the data update) -- here BoTorch's :func:`draw_matheron_paths`.
2. Run an iterative optimiser on every f_s from x̂ (the official code: Adam, lr 0.002, 500 steps,
   iterates clipped to the box): the descent sequence τ_s = (z_{s,0} = x̂, z_{s,1}, ..., z_{s,T}).
3. Discretise τ_s into M points x_{s,1..M} at the fractions m/M of its arc length.
4. Conditioning on the sequence = conditioning the GP on D ∪ {(x_{s,m}, f_s(x_{s,m}))}_m with the
   same kernel and likelihood (the virtual points carry the observation noise σ_n²).  The posterior
   variance does not depend on the virtual values, so with Σ the posterior covariance given D,

       σ_s²(x) = σ²(x) − Σ(x, V_s) [Σ(V_s, V_s) + σ_n² I]⁻¹ Σ(V_s, x)      (Schur complement).

5. Acquisition = Monte-Carlo estimate of the mutual information between f(x) and the descent
   sequence, Gaussian entropies of the *latent* f (the 2πe constants cancel):

       α(x) = ½ log σ²(x) − (1/S) Σ_s ½ log σ_s²(x) = −(1/S) Σ_s ½ log(1 − q_s(x) / σ²(x)),

   with q_s(x) = ‖L_s⁻¹ Σ(V_s, x)‖², L_s the Cholesky factor of Σ(V_s, V_s) + σ_n² I.
6. Maximise α over the finite set of the S·M trace points (the code's ``best_entropy_pt``); this
   module exposes them as :attr:`LocalEntropySearch.candidates` for
   :func:`botorch.optim.optimize_acqf_discrete`.

Readings of points the brief marks as inferred (checked against the official code; the paper's
full text beyond its abstract and introduction could not be retrieved here):

* Trace points: the code records the iterates of all 500 Adam steps, takes the cumulative sum of
  step lengths and, for each threshold m/M · L_s (m = 1..M), the first iterate whose arc length
  reaches it; so the last point is the end of the trace and x̂ itself is not a virtual point.  We do
  the same; the code's indexing takes the iterate one step earlier and measures arc length from
  the first iterate after x̂ -- a shift of at most one Adam step (≈ lr·√d), not reproduced.
* Virtual observations: values f_s(x_{s,m}) (they do not enter the variance, hence not α; the code
  stores the value of the preceding iterate, irrelevant for the same reason).  Noise σ_n² = the
  model's likelihood noise at the point (observation-noise posterior minus latent posterior, so
  outcome transforms are respected); a floor of 1e-10 and BoTorch's jittered Cholesky guard
  noise-free models (the brief's pitfall: trace points are nearly collinear).
* Entropies use the latent variance in both terms (as the code's ``predict_f``).
* Incumbent x̂ = the evaluated point with the lowest *observed* value (the code's
  ``find_current_best``), not the best posterior mean.
* Adam: torch.optim.Adam with Keras' defaults (β = (0.9, 0.999), ε = 1e-7), clip to the box after
  every step (the code's variable constraint); the objective of the joint run is Σ_s f_s(x_s),
  whose gradient w.r.t. x_s is ∇f_s(x_s) (samples are independent, Adam is elementwise).
* Optional stopping rule (paper, App. E.1 per the brief): model-based local regret
  r_s = f_s(x̂) − f_s(z_{s,T}); the loop may stop once the fraction of samples with r_s < ε
  reaches ``stop_fraction`` (off by default: the code computes r_s but its benchmark loop never
  stops early; "most samples" is not quantified in what we could read).
* q = 1 only, as in the paper.  Any iterative optimiser can be plugged in through the
  :class:`DescentOptimizer` protocol (the code's variants: Adam, plain GD, CMA-ES).

Cost per acquisition: S optimiser runs batched as one (T steps over an S × d tensor), one S-batched
M × M Cholesky, and per candidate chunk one joint posterior covariance of (chunk + S·M) points.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import gpytorch
import torch
from botorch.acquisition import AcquisitionFunction
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.model import Model
from botorch.optim import optimize_acqf_discrete
from botorch.sampling.pathwise import draw_kernel_feature_paths, draw_matheron_paths
from botorch.utils.transforms import normalize, t_batch_mode_transform, unnormalize
from gpytorch.constraints import GreaterThan, Interval
from gpytorch.kernels import RBFKernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.means import ZeroMean
from gpytorch.mlls import ExactMarginalLogLikelihood
from gpytorch.priors import UniformPrior
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

__all__ = [
    "BOResult",
    "DescentOptimizer",
    "DescentSequences",
    "LocalEntropySearch",
    "TorchOptimizerDescent",
    "adam_descent",
    "arc_length_indices",
    "draw_descent_sequences",
    "make_gp",
    "run_les",
    "standardize_observations",
]

_MIN_NOISE = 1e-10  # floor of the virtual-observation noise variance (noise-free models)
_MIN_VAR = 1e-30  # floor of σ²(x) before dividing by it


# -- pluggable descent optimisers -----------------------------------------------------------------

class DescentOptimizer(Protocol):
    """An iterative optimiser run jointly on S sample paths.

    Called as ``descent(fn, x0, bounds)`` with ``fn`` mapping an ``S x d`` tensor to the ``S``
    values f_s(x_s) (row s on sample s; differentiable), ``x0`` the ``S x d`` start points and
    ``bounds`` the ``2 x d`` box.  Returns the ``(T + 1) x S x d`` iterates, ``x0`` first.
    Derivative-free optimisers (CMA-ES) simply ignore the gradient.

    :func:`draw_descent_sequences` always calls it in unit-cube coordinates (``bounds`` =
    [0, 1]^d, ``fn`` composed with the affine map onto the model's box), so step sizes such as
    Adam's ``lr`` are fractions of the box's side, whatever the box.
    """

    def __call__(self, fn: Callable[[Tensor], Tensor], x0: Tensor, bounds: Tensor) -> Tensor:
        ...


@dataclass(frozen=True, eq=False)
class TorchOptimizerDescent:
    """Any ``torch.optim`` optimiser as a :class:`DescentOptimizer`: ``steps`` calls of
    ``optimizer.step(closure)`` on Σ_s f_s(x_s), iterates clipped to the box after each step.

    Args:
        optimizer: a ``torch.optim.Optimizer`` class (Adam, SGD, LBFGS, ...).
        steps: number of optimiser steps T (>= 1).
        lr: learning rate (> 0).
        options: further keyword arguments of the optimiser.
    """

    optimizer: type[torch.optim.Optimizer] = torch.optim.Adam
    steps: int = 500
    lr: float = 0.002
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not (isinstance(self.steps, int) and self.steps >= 1):
            raise ValueError(f"steps: expected an integer >= 1, got {self.steps!r}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"lr: expected a finite number > 0, got {self.lr!r}")

    def __call__(self, fn: Callable[[Tensor], Tensor], x0: Tensor, bounds: Tensor) -> Tensor:
        lower, upper = bounds[0], bounds[1]
        x = x0.detach().clone().requires_grad_(True)
        opt = self.optimizer([x], lr=self.lr, **dict(self.options))
        iterates = [x0.detach().clone()]

        def closure() -> Tensor:
            opt.zero_grad()
            loss = fn(x).sum()
            loss.backward()
            return loss

        with torch.enable_grad():
            for _ in range(self.steps):
                opt.step(closure)
                with torch.no_grad():
                    x.copy_(torch.minimum(torch.maximum(x, lower), upper))
                iterates.append(x.detach().clone())
        return torch.stack(iterates)


def adam_descent(lr: float = 0.002, steps: int = 500) -> TorchOptimizerDescent:
    """The official code's inner optimiser: Adam (Keras defaults, ε = 1e-7), lr 0.002, 500 steps."""
    return TorchOptimizerDescent(torch.optim.Adam, steps=steps, lr=lr, options={"eps": 1e-7})


# -- descent sequences ----------------------------------------------------------------------------

def arc_length_indices(trajectory: Tensor, num_points: int) -> Tensor:
    """Indices of the iterates at the fractions m / M (m = 1..M) of each trajectory's arc length.

    Args:
        trajectory: ``(T + 1) x S x d`` iterates (start first).
        num_points: M >= 1.

    Returns:
        ``S x M`` long tensor: for each m the first t with arc length(z_0..z_t) >= m/M · L_s.
        A trajectory that never moves gives index 0 (the start) for all m.
    """
    if trajectory.ndim != 3 or trajectory.shape[0] < 1:
        raise ValueError(f"trajectory: expected a (T+1) x S x d tensor, got shape "
                         f"{tuple(trajectory.shape)}")
    if not (isinstance(num_points, int) and num_points >= 1):
        raise ValueError(f"num_points: expected an integer >= 1, got {num_points!r}")
    steps = (trajectory[1:] - trajectory[:-1]).norm(dim=-1)  # T x S
    zero = steps.new_zeros(1, trajectory.shape[1])
    cum = torch.cat([zero, steps.cumsum(0)]).transpose(0, 1).contiguous()  # S x (T+1)
    frac = torch.arange(1, num_points + 1, dtype=cum.dtype, device=cum.device) / num_points
    thresholds = cum[:, -1:] * frac  # S x M; the last one equals the total length exactly
    return torch.searchsorted(cum, thresholds).clamp_max(trajectory.shape[0] - 1)


@dataclass(frozen=True)
class DescentSequences:
    """Discretised descent sequences of S posterior samples.

    Attributes:
        points: ``S x M x d`` trace points x_{s,m}.
        values: ``S x M`` sample values f_s(x_{s,m}).
        start_values: ``S`` values f_s(x̂) at the common start.
        end_values: ``S`` values f_s(z_{s,T}) at the last iterate.
        maximize: whether the optimiser ascended (then regret signs flip).
    """

    points: Tensor
    values: Tensor
    start_values: Tensor
    end_values: Tensor
    maximize: bool = False

    def __post_init__(self) -> None:
        if self.points.ndim != 3:
            raise ValueError(f"points: expected an S x M x d tensor, got shape "
                             f"{tuple(self.points.shape)}")
        if self.values.shape != self.points.shape[:-1]:
            raise ValueError(f"values: expected shape {tuple(self.points.shape[:-1])}, got "
                             f"{tuple(self.values.shape)}")
        s = self.points.shape[0]
        for name in ("start_values", "end_values"):
            if getattr(self, name).shape != (s,):
                raise ValueError(f"{name}: expected shape ({s},), got "
                                 f"{tuple(getattr(self, name).shape)}")

    @property
    def local_regret(self) -> Tensor:
        """Model-based local regret r_s = f_s(x̂) − f_s(z_{s,T}) (≥ 0 if the optimiser improved)."""
        diff = self.start_values - self.end_values
        return -diff if self.maximize else diff

    def converged_fraction(self, epsilon: float) -> float:
        """Fraction of samples whose local regret is below ``epsilon`` (the stopping rule)."""
        return float((self.local_regret < epsilon).double().mean())


@contextlib.contextmanager
def _frozen(model: Model) -> Iterator[None]:
    """Stop autograd from tracking the model's hyperparameters while the optimiser runs on the
    sample paths (their gradients are not wanted and would accumulate in ``.grad``)."""
    flags = [(p, p.requires_grad) for p in model.parameters()]
    for p, _ in flags:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p, flag in flags:
            p.requires_grad_(flag)


def _check_model(model: Model) -> None:
    if getattr(model, "num_outputs", 1) != 1:
        raise ValueError(f"model: expected a single-output model, got num_outputs="
                         f"{model.num_outputs}")
    if len(getattr(model, "batch_shape", torch.Size())) != 0:
        raise ValueError(f"model: expected a model without batch dimensions, got batch_shape "
                         f"{tuple(model.batch_shape)}")


def _check_bounds(bounds: Tensor, d: int | None = None) -> None:
    if bounds.ndim != 2 or bounds.shape[0] != 2 or (d is not None and bounds.shape[1] != d):
        want = "2 x d" if d is None else f"2 x {d}"
        raise ValueError(f"bounds: expected a {want} tensor, got shape {tuple(bounds.shape)}")
    if not bool(torch.all(bounds[0] < bounds[1])):
        raise ValueError("bounds: expected lower < upper in every dimension")


def draw_descent_sequences(
    model: Model,
    x_start: Tensor,
    bounds: Tensor,
    num_samples: int = 250,
    num_points: int = 8,
    descent: DescentOptimizer | None = None,
    num_features: int = 1024,
    maximize: bool = False,
) -> DescentSequences:
    """Steps 1-3 of LES: pathwise posterior samples, one descent run per sample from
    ``x_start``, arc-length discretisation.

    The descent runs in the unit cube: x = lower + (upper − lower) · u, the optimiser steps in u
    (so Adam's lr 0.002 is 0.2 % of each side of the box, as in the paper, which scales every
    problem to [0, 1]^d) and the arc length is measured in u.  On the unit cube the map is the
    identity.  The returned points are in the model's input coordinates.  The step is scaled to
    the box, but the samples are only as smooth as the GP: on raw inputs give the model
    ``input_transform=Normalize(d, bounds=bounds)`` (BoTorch's own advice), or a length-scale
    fitted in raw units can keep the descents short.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> X = 20 * torch.rand(8, 2, dtype=torch.float64) - 10     # a raw box [-10, 10]^2
        >>> gp = SingleTaskGP(X, (X ** 2).sum(-1, keepdim=True))
        >>> box = torch.tensor([[-10.0, -10.0], [10.0, 10.0]], dtype=torch.float64)
        >>> seq = draw_descent_sequences(gp, X[0], box, num_samples=4, num_points=3,
        ...                              descent=adam_descent(steps=20), num_features=64)
        >>> seq.points.shape
        torch.Size([4, 3, 2])

    Args:
        model: a fitted single-output GP (any model :func:`draw_matheron_paths` supports).
        x_start: ``d`` (or ``1 x d``) start point, inside ``bounds``.
        bounds: ``2 x d`` box of the model's inputs; the iterates are clipped to it.
        num_samples: S, number of sample paths.
        num_points: M, trace points per sequence.
        descent: the optimiser (default :func:`adam_descent`, the paper's setting).
        num_features: random Fourier features of the prior sample paths.
        maximize: ascend instead of descend (BoTorch's default orientation is maximisation; the
            paper minimises).
    """
    _check_model(model)
    x_start = x_start.reshape(-1)
    d = x_start.shape[0]
    _check_bounds(bounds, d)
    if not (isinstance(num_samples, int) and num_samples >= 1):
        raise ValueError(f"num_samples: expected an integer >= 1, got {num_samples!r}")
    if not (isinstance(num_points, int) and num_points >= 1):
        raise ValueError(f"num_points: expected an integer >= 1, got {num_points!r}")
    if not (isinstance(num_features, int) and num_features >= 1):
        raise ValueError(f"num_features: expected an integer >= 1, got {num_features!r}")
    if bool(torch.any(x_start < bounds[0])) or bool(torch.any(x_start > bounds[1])):
        raise ValueError("x_start: expected a point inside bounds")
    descent = adam_descent() if descent is None else descent
    with torch.no_grad():
        paths = draw_matheron_paths(
            model, torch.Size([num_samples]),
            prior_sampler=partial(draw_kernel_feature_paths, num_features=num_features))
    sign = -1.0 if maximize else 1.0

    # the descent works in the unit cube u ∈ [0, 1]^d, x = lower + width · u (the identity,
    # bit for bit, when bounds is the unit cube)
    lower, width = bounds[0], bounds[1] - bounds[0]
    unit = torch.stack([torch.zeros_like(lower), torch.ones_like(lower)])

    def fn(u: Tensor) -> Tensor:  # S x d -> S, row s evaluated on sample s
        return sign * paths((lower + width * u).unsqueeze(-2)).squeeze(-1)

    x0 = x_start.detach().expand(num_samples, d).clone()
    u0 = ((x0 - lower) / width).clamp(0.0, 1.0)
    # eager kernel evaluation: the T sequential path evaluations are dominated by per-call overhead
    with _frozen(model), gpytorch.settings.lazily_evaluate_kernels(False):
        unit_trajectory = descent(fn, u0, unit)
    if unit_trajectory.ndim != 3 or unit_trajectory.shape[1:] != (num_samples, d):
        raise ValueError(f"descent: expected (T+1) x {num_samples} x {d} iterates, got shape "
                         f"{tuple(unit_trajectory.shape)}")
    if not bool(torch.isfinite(unit_trajectory).all()):
        raise ValueError("descent: the optimiser returned non-finite iterates")
    trajectory = lower + width * unit_trajectory.detach()
    idx = arc_length_indices(unit_trajectory, num_points)  # S x M
    s_index = torch.arange(num_samples, device=idx.device).unsqueeze(-1)
    points = trajectory[idx, s_index]  # S x M x d
    with torch.no_grad():
        values = paths(points)
        start = paths(x0.unsqueeze(-2)).squeeze(-1)
        end = paths(trajectory[-1].unsqueeze(-2)).squeeze(-1)
    return DescentSequences(points=points.detach(), values=values, start_values=start,
                            end_values=end, maximize=maximize)


# -- the acquisition function ---------------------------------------------------------------------

class LocalEntropySearch(AcquisitionFunction):
    r"""LES for minimisation by default (the paper's): information about where descent sequences
    from ``x_start`` go; ``maximize=True`` for BoTorch's maximisation convention.

    ``α(x) = ½ log σ²(x) − (1/S) Σ_s ½ log σ_s²(x)`` (module docstring, step 5): σ² the latent
    posterior variance given the data, σ_s² the same after also conditioning on the M noisy
    virtual observations along sample s's descent sequence.  Always ≥ 0; ≈ 0 far from every trace.
    The descent runs in the unit cube mapped onto ``bounds``, so a raw box (say [−10, 10]^d) is
    explored as far, relative to its size, as [0, 1]^d.  q = 1 only (as in the paper): a
    ``batch x q x d`` input with q > 1, or pending points, raise ``ValueError``.

    Example (minimisation, the default: start from the lowest observation):
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch.optim import optimize_acqf_discrete
        >>> from optzoo.bo import LocalEntropySearch, adam_descent
        >>> _ = torch.manual_seed(0)
        >>> X = torch.rand(6, 2, dtype=torch.float64)
        >>> Y = ((X - 0.3) ** 2).sum(-1, keepdim=True)
        >>> gp = SingleTaskGP(X, Y).eval()
        >>> bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
        >>> fast = adam_descent(steps=50)
        >>> acqf = LocalEntropySearch(gp, x_start=X[Y.argmin()], bounds=bounds, num_samples=8,
        ...                           num_points=4, descent=fast, num_features=64)
        >>> acqf.candidates.shape                    # S x M trace points of the descents
        torch.Size([32, 2])
        >>> x_next, value = optimize_acqf_discrete(acqf, q=1, choices=acqf.candidates)
        >>> x_next.shape, bool(value.item() > 0)     # α ≥ 0, the most informative trace point
        (torch.Size([1, 2]), True)

    Example (maximisation, BoTorch's convention: start from the highest observation and ascend):
        >>> acqf = LocalEntropySearch(gp, x_start=X[Y.argmax()], bounds=bounds, maximize=True,
        ...                           num_samples=8, num_points=4, descent=fast, num_features=64)
        >>> x_next, _ = optimize_acqf_discrete(acqf, q=1, choices=acqf.candidates)

    Args:
        model: a fitted single-output GP (no batch dimensions).
        x_start: ``d`` incumbent the descent sequences start from (needed unless ``sequences``).
        bounds: ``2 x d`` box (needed unless ``sequences``).
        num_samples: S, posterior sample paths (paper: 250).
        num_points: M, trace points per sequence (paper: 8).
        descent: the iterative optimiser (default: Adam, lr 0.002, 500 steps).
        num_features: random Fourier features per prior sample path (paper: 1,024).
        maximize: run an ascent instead of a descent (default False: the paper minimises;
            set True when the objective is maximised, as BoTorch's other acquisitions assume,
            and start from the best i.e. highest observation).
        sequences: precomputed :class:`DescentSequences` (skips sampling and optimisation).
        noise_variance: variance of the virtual observations; default: the model's observation
            noise at each trace point.
        chunk_size: candidates per joint posterior evaluation (memory ~ (chunk + S·M)²).
    """

    def __init__(
        self,
        model: Model,
        x_start: Tensor | None = None,
        bounds: Tensor | None = None,
        num_samples: int = 250,
        num_points: int = 8,
        descent: DescentOptimizer | None = None,
        num_features: int = 1024,
        maximize: bool = False,
        sequences: DescentSequences | None = None,
        noise_variance: float | None = None,
        chunk_size: int = 512,
    ) -> None:
        super().__init__(model=model)
        _check_model(model)
        if not (isinstance(chunk_size, int) and chunk_size >= 1):
            raise ValueError(f"chunk_size: expected an integer >= 1, got {chunk_size!r}")
        if sequences is None:
            if x_start is None or bounds is None:
                raise ValueError("x_start, bounds: both are required unless sequences is given")
            sequences = draw_descent_sequences(model, x_start, bounds, num_samples, num_points,
                                               descent, num_features, maximize)
        self.sequences = sequences
        self.chunk_size = chunk_size
        self.X_pending = None  # read by optimize_acqf_discrete; never set (q = 1 only)
        points = sequences.points  # S x M x d
        with torch.no_grad():
            latent = model.posterior(points)
            cov = latent.distribution.covariance_matrix  # S x M x M
            if noise_variance is None:
                noisy = model.posterior(points, observation_noise=True).variance.squeeze(-1)
                noise = (noisy - latent.variance.squeeze(-1)).clamp_min(_MIN_NOISE)
            else:
                if not (noise_variance > 0 and math.isfinite(noise_variance)):
                    raise ValueError(f"noise_variance: expected a finite number > 0, got "
                                     f"{noise_variance!r}")
                noise = torch.full(points.shape[:-1], float(noise_variance), dtype=cov.dtype,
                                   device=cov.device)
            chol = psd_safe_cholesky(cov + torch.diag_embed(noise))
        self.register_buffer("trace_points", points)
        self.register_buffer("_chol", chol)

    @property
    def candidates(self) -> Tensor:
        """The ``(S·M) x d`` trace points: the paper's finite candidate set."""
        return self.trace_points.reshape(-1, self.trace_points.shape[-1])

    def variances(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """Latent posterior variance σ²(x) (``n``) and conditional variances σ_s²(x)
        (``S x n``) at the ``n x d`` points ``X``; σ_s² ≤ σ² by construction."""
        var, reduction = self._reduction(X)
        return var, (var - reduction).clamp_min(0.0)

    def _reduction(self, X: Tensor) -> tuple[Tensor, Tensor]:
        s, m, d = self.trace_points.shape
        virtual = self.candidates
        vars_, reds = [], []
        for chunk in X.split(self.chunk_size):
            b = chunk.shape[0]
            joint = self.model.posterior(torch.cat([chunk, virtual])).distribution
            cov = joint.covariance_matrix  # (b + SM) x (b + SM)
            vars_.append(cov[:b, :b].diagonal())
            cross = cov[:b, b:].reshape(b, s, m).permute(1, 2, 0)  # S x M x b
            half = torch.linalg.solve_triangular(self._chol, cross, upper=False)
            reds.append(half.square().sum(-2))  # S x b
        return torch.cat(vars_), torch.cat(reds, dim=-1)

    def set_X_pending(self, X_pending: Tensor | None = None) -> None:
        """Pending points are not supported (LES is a q = 1 acquisition, as in the paper);
        ``None`` or an empty tensor is accepted and clears them."""
        if X_pending is not None and X_pending.numel() > 0:
            raise ValueError(
                "X_pending: LocalEntropySearch is a q = 1 acquisition function (the paper's) and "
                "cannot account for pending points; use q=1 (e.g. optimize_acqf_discrete(acqf, "
                "q=1, choices=acqf.candidates))")
        super().set_X_pending(None)

    def forward(self, X: Tensor) -> Tensor:
        """α at ``batch_shape x 1 x d`` points (or ``1 x d``); returns ``batch_shape``."""
        if isinstance(X, Tensor) and X.dim() >= 2 and X.shape[-2] != 1:
            raise ValueError(
                f"X: LocalEntropySearch is a q = 1 acquisition function (the paper's); expected "
                f"batch_shape x 1 x d, got shape {tuple(X.shape)} (q = {X.shape[-2]}); call "
                f"optimize_acqf / optimize_acqf_discrete with q=1")
        return self._forward(X)

    @t_batch_mode_transform(expected_q=1)
    def _forward(self, X: Tensor) -> Tensor:
        batch = X.shape[:-2]
        flat = X.reshape(-1, X.shape[-1])
        var, reduction = self._reduction(flat)
        eps = torch.finfo(var.dtype).eps
        # ½ log σ² − ½ log σ_s² = −½ log(1 − q_s/σ²): the ratio form keeps α ≥ 0 exactly and
        # bounded by ½ log(1/eps) when a candidate sits on a virtual point
        ratio = (reduction / var.clamp_min(_MIN_VAR)).clamp(0.0, 1.0 - eps)
        alpha = -0.5 * torch.log1p(-ratio).mean(0)
        return alpha.reshape(batch)


# -- the model and the loop -----------------------------------------------------------------------

def make_gp(
    train_X: Tensor,
    train_Y: Tensor,
    noise_std: float = 1.42e-3,
    lengthscales: Tensor | None = None,
    lengthscale_bounds: tuple[float, float] | None = None,
    outputscale: float = 1.0,
) -> SingleTaskGP:
    """The paper's surrogate: zero-mean GP, SE-ARD kernel with an output scale, fixed Gaussian
    noise (σ_n = 1.42e-3 in standardised units, the official benchmarks' setting).

    With ``lengthscales`` given, hyperparameters are fixed (the paper's within-model comparison:
    true length-scales, output scale ``outputscale``).  Otherwise length-scales and output scale
    are fitted by marginal likelihood under a uniform box prior on the length-scales (official
    benchmarks: init 0.2·√d, box [0.05, √d]).

    Args:
        train_X: ``n x d`` inputs in [0, 1]^d.
        train_Y: ``n x 1`` targets (standardised unless hyperparameters are fixed).
    """
    if train_X.ndim != 2 or train_Y.shape != (train_X.shape[0], 1):
        raise ValueError(f"train_X, train_Y: expected n x d and n x 1, got "
                         f"{tuple(train_X.shape)} and {tuple(train_Y.shape)}")
    if not noise_std > 0:
        raise ValueError(f"noise_std: expected > 0, got {noise_std!r}")
    d = train_X.shape[-1]
    likelihood = GaussianLikelihood(noise_constraint=GreaterThan(1e-12))
    likelihood.noise = noise_std ** 2
    likelihood.noise_covar.raw_noise.requires_grad_(False)
    if lengthscales is not None:
        ls = torch.as_tensor(lengthscales, dtype=train_X.dtype, device=train_X.device)
        if ls.numel() not in (1, d) or not bool(torch.all(ls > 0)):
            raise ValueError(f"lengthscales: expected 1 or {d} positive values, got {ls}")
        base = RBFKernel(ard_num_dims=d)
        base.lengthscale = ls.expand(d).reshape(1, d)
        kernel = ScaleKernel(base)
        kernel.outputscale = outputscale
        model = SingleTaskGP(train_X, train_Y, likelihood=likelihood, covar_module=kernel,
                             mean_module=ZeroMean(), outcome_transform=None)
        for p in model.parameters():
            p.requires_grad_(False)
        return model.eval()
    lo, hi = lengthscale_bounds if lengthscale_bounds is not None else (0.05, math.sqrt(d))
    if not 0 < lo < hi:
        raise ValueError(f"lengthscale_bounds: expected 0 < lower < upper, got {(lo, hi)}")
    base = RBFKernel(ard_num_dims=d, lengthscale_constraint=Interval(lo, hi),
                     lengthscale_prior=UniformPrior(lo, hi))
    base.lengthscale = min(max(0.2 * math.sqrt(d), lo * 1.01), hi * 0.99)
    kernel = ScaleKernel(base)
    kernel.outputscale = outputscale
    model = SingleTaskGP(train_X, train_Y, likelihood=likelihood, covar_module=kernel,
                         mean_module=ZeroMean(), outcome_transform=None)
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    return model.eval()


def standardize_observations(y: Tensor) -> Tensor:
    """(y − mean)/std with the population std (scikit-learn's StandardScaler, as the official
    code); a single observation or zero spread is only centred."""
    std = y.std(unbiased=False) if y.numel() > 1 else y.new_tensor(0.0)
    return (y - y.mean()) / (std if float(std) > 0 else 1.0)


@dataclass
class BOResult:
    """A finished BO run (minimisation).

    Attributes:
        method: name of the method.
        X: ``n x d`` evaluated points (in the objective's bounds), initial points first.
        Y: ``n`` observed values.
        n_init: number of initial points.
        seconds: wall seconds of model fitting + acquisition per iteration.
        cpu_seconds: the same in CPU (process) seconds, insensitive to other jobs' load.
        info: method-specific records (e.g. LES's converged fraction per iteration).
    """

    method: str
    X: Tensor
    Y: Tensor
    n_init: int
    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def best_index(self) -> int:
        return int(self.Y.argmin())

    @property
    def best_x(self) -> Tensor:
        return self.X[self.best_index]

    @property
    def best_y(self) -> float:
        return float(self.Y.min())


ModelFn = Callable[[Tensor, Tensor], Model]


class _Clock:
    """Wall and CPU seconds of one BO iteration, appended to a :class:`BOResult`."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def stop(self, result: BOResult) -> None:
        result.seconds.append(time.perf_counter() - self.wall)
        result.cpu_seconds.append(time.process_time() - self.cpu)


def _initial(objective: Callable[[Tensor], Tensor], X_init: Tensor, bounds: Tensor,
             budget: int) -> tuple[Tensor, Tensor]:
    if X_init.ndim != 2 or X_init.shape[-1] != bounds.shape[-1] or X_init.shape[0] < 1:
        raise ValueError(f"X_init: expected an n x {bounds.shape[-1]} tensor with n >= 1, got "
                         f"shape {tuple(X_init.shape)}")
    if not (isinstance(budget, int) and budget >= X_init.shape[0]):
        raise ValueError(f"budget: expected an integer >= len(X_init) = {X_init.shape[0]}, "
                         f"got {budget!r}")
    Y = _evaluate(objective, X_init)
    return normalize(X_init, bounds), Y


def _evaluate(objective: Callable[[Tensor], Tensor], X: Tensor) -> Tensor:
    y = torch.as_tensor(objective(X)).reshape(-1).to(X)
    if y.shape[0] != X.shape[0] or not bool(torch.isfinite(y).all()):
        raise ValueError(f"objective: expected {X.shape[0]} finite values, got {y}")
    return y


def run_les(
    objective: Callable[[Tensor], Tensor],
    bounds: Tensor,
    budget: int,
    X_init: Tensor,
    model_fn: ModelFn | None = None,
    standardize: bool = True,
    num_samples: int = 250,
    num_points: int = 8,
    descent: DescentOptimizer | None = None,
    num_features: int = 1024,
    stop_epsilon: float = 0.02,
    stop_fraction: float | None = None,
    callback: Callable[[int, LocalEntropySearch, Tensor], None] | None = None,
) -> BOResult:
    """The LES loop: fit, draw descent sequences from the best observed point, evaluate the
    trace point of maximal α, repeat until ``budget`` evaluations (minimisation).

    Args:
        objective: maps ``n x d`` points (in ``bounds``) to ``n`` noisy values to minimise.
        bounds: ``2 x d`` box; the model and the optimiser work in [0, 1]^d.
        budget: total evaluations, initial points included.
        X_init: ``n0 x d`` initial points (paper: 2).
        model_fn: ``(X in [0,1]^d, Y n x 1) -> fitted model``; default :func:`make_gp`.
        standardize: standardise Y before ``model_fn`` (off for the within-model comparison).
        num_samples, num_points, descent, num_features: see :class:`LocalEntropySearch`.
        stop_epsilon: ε of the stopping rule (scaled units; paper 0.02).
        stop_fraction: stop once this fraction of samples has local regret < ε (None: never).
        callback: called as ``callback(iteration, acqf, x_next_unit)`` before each evaluation.

    Example:
        Two LES steps on a 2-D sphere in [−10, 10]², with a GP of fixed length-scales (the
        default ``make_gp`` fits them by marginal likelihood, a second per step):

        >>> import torch
        >>> from optzoo.bo import adam_descent, make_gp, run_les
        >>> _ = torch.manual_seed(0)
        >>> box = torch.tensor([[-10.0, -10.0], [10.0, 10.0]], dtype=torch.float64)
        >>> def gp(X, Y):                            # X in [0, 1]^d, Y standardised
        ...     return make_gp(X, Y, lengthscales=torch.tensor([0.3, 0.3], dtype=torch.float64))
        >>> res = run_les(lambda X: (X ** 2).sum(-1), box, budget=4,
        ...               X_init=torch.tensor([[5.0, -4.0], [-3.0, 7.0]], dtype=torch.float64),
        ...               model_fn=gp, num_samples=4, num_points=3,
        ...               descent=adam_descent(steps=20), num_features=64)
        >>> res.X.shape, res.n_init, bool(res.Y[2:].min() < res.Y[:2].min())   # it descended
        (torch.Size([4, 2]), 2, True)
    """
    _check_bounds(bounds)
    if stop_fraction is not None and not 0 < stop_fraction <= 1:
        raise ValueError(f"stop_fraction: expected a number in (0, 1] or None, got "
                         f"{stop_fraction!r}")
    model_fn = make_gp if model_fn is None else model_fn
    X, Y = _initial(objective, X_init, bounds, budget)
    unit = torch.stack([torch.zeros_like(bounds[0]), torch.ones_like(bounds[1])])
    result = BOResult("les", X_init.clone(), Y, X_init.shape[0])
    converged: list[float] = []
    it = 0
    while X.shape[0] < budget:
        clock = _Clock()
        targets = standardize_observations(Y) if standardize else Y
        model = model_fn(X, targets.unsqueeze(-1))
        acqf = LocalEntropySearch(model, x_start=X[Y.argmin()], bounds=unit,
                                  num_samples=num_samples, num_points=num_points,
                                  descent=descent, num_features=num_features)
        x_next, _ = optimize_acqf_discrete(acqf, q=1, choices=acqf.candidates)
        clock.stop(result)
        converged.append(acqf.sequences.converged_fraction(stop_epsilon))
        if stop_fraction is not None and converged[-1] >= stop_fraction:
            result.info["stopped_early"] = True
            break
        if callback is not None:
            callback(it, acqf, x_next)
        x_new = unnormalize(x_next.detach(), bounds)
        y_new = _evaluate(objective, x_new)
        X = torch.cat([X, x_next.detach()])
        Y = torch.cat([Y, y_new])
        result.X = torch.cat([result.X, x_new])
        it += 1
    result.Y = Y
    result.info["converged_fraction"] = converged
    return result
