r"""Baselines of Local Entropy Search (Stenger et al., ICLR 2026, OpenReview ``cPxmLZmFa7``):
LogEI, TuRBO-1, a GIBO-style local BO and Sobol search, as fixed-budget minimisation loops with
the same surrogate and result type as :func:`optzoo.bo.les.run_les`.

Each follows the LES authors' benchmark script (``benchmarking/benchmarking.py`` of
github.com/Data-Science-in-Mechanical-Engineering/local-entropy-search), read, not copied:

* ``run_logei`` -- BoTorch's analytic :class:`LogExpectedImprovement` (Ament et al., NeurIPS 2023)
  on the standardised data, best_f = best standardised observation, maximised with
  :func:`optimize_acqf` (official: 10 restarts, 512 raw samples).
* ``run_turbo`` -- TuRBO-1 (Eriksson et al., NeurIPS 2019) as in BoTorch's TuRBO tutorial with the
  authors' settings: trust region side 0.8 (min 0.5⁷, max 1.6), success tolerance 10, failure
  tolerance ⌈max(4, d)⌉, Thompson sampling on min(5000, max(2000, 200 d)) Sobol candidates with
  the perturbation mask (probability min(20/d, 1)), region stretched by the normalised
  length-scales.  Like the authors' script (and unlike the TuRBO paper) the region is never
  restarted once it falls below its minimum size.
* ``run_gibo`` -- GIBO (Müller et al., NeurIPS 2021) with the authors' "high-confidence" variant
  (``hci_gibo``, α = 0.9): at the current iterate θ, add up to d points maximising the gradient
  information GI(x) = Tr Σ_∇(θ|D) − Tr Σ_∇(θ|D ∪ {x}) = ‖∂_θ k_D(θ, x)‖² / (k_D(x, x) + σ_n²)
  (the closed form of the trace reduction for one point), stopping early once
  P(the gradient step improves) > α; then one SGD step θ ← θ − η · ℓ ⊙ ∇μ(θ)/‖∇μ(θ)‖ (η = 0.25,
  normalised gradient scaled by the length-scales), clipped to the box; θ is evaluated at the
  start of each outer iteration; the GP sees the last 5·d points.  The trust test follows the
  GIBO code's formula P = 1 − Φ((L η ‖m‖ / 2 − ‖m‖) / s) with m = ∇μ(θ),
  s² = m̂ᵀ Σ_∇ m̂ and L = outputscale / mean length-scale, with s the standard deviation (the code
  passes the variance as scale).  Derivatives of the posterior come from autograd.
* ``run_mes`` -- max-value entropy search (Wang & Jegelka, ICML 2017) as BoTorch's
  :class:`qMaxValueEntropy` with ``maximize=False`` (q = 1; Gumbel max-value samples on a Sobol
  candidate set of ``n_candidates`` points, BoTorch's defaults of 10 max-value samples and 16
  fantasies), maximised with :func:`optimize_acqf` on the same restarts / raw samples as LogEI.
  The paper lists MES among the global baselines; its settings were not retrieved, so BoTorch's
  defaults are used.
* ``run_local_ts`` -- the LES authors' "local Thompson sampling" ablation (the brief, from the
  official code): draw *one* pathwise posterior sample, run LES's inner optimiser (Adam) on it
  from the incumbent and evaluate the end point of that descent.  It is LES without the
  entropy: the same sample paths (:func:`optzoo.bo.les.draw_descent_sequences` with S = M = 1),
  so the comparison isolates what the mutual information adds.
* ``run_sobol`` -- scrambled Sobol points after the shared initial points (the authors' script
  draws all points from Sobol; sharing the initial points keeps the comparison paired).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch
from botorch.acquisition import AcquisitionFunction
from botorch.acquisition.analytic import LogExpectedImprovement
from botorch.acquisition.max_value_entropy_search import qMaxValueEntropy
from botorch.generation import MaxPosteriorSampling
from botorch.models.model import Model
from botorch.optim import optimize_acqf
from botorch.utils.transforms import t_batch_mode_transform, unnormalize
from linear_operator.utils.warnings import NumericalWarning
from torch import Tensor
from torch.quasirandom import SobolEngine

from optzoo.bo.les import (
    BOResult,
    DescentOptimizer,
    ModelFn,
    _check_bounds,
    _Clock,
    _evaluate,
    _initial,
    adam_descent,
    draw_descent_sequences,
    make_gp,
    standardize_observations,
)
from optzoo.checks import check_int, check_real

__all__ = ["GradientInformation", "TurboState", "run_gibo", "run_local_ts", "run_logei",
           "run_mes", "run_sobol", "run_turbo"]


def _unit(bounds: Tensor) -> Tensor:
    return torch.stack([torch.zeros_like(bounds[0]), torch.ones_like(bounds[1])])


def _targets(Y: Tensor, standardize: bool) -> Tensor:
    return (standardize_observations(Y) if standardize else Y).unsqueeze(-1)


# -- Sobol -----------------------------------------------------------------------------------------

def run_sobol(objective: Callable[[Tensor], Tensor], bounds: Tensor, budget: int,
              X_init: Tensor, seed: int = 0) -> BOResult:
    """Scrambled Sobol points (seeded) after ``X_init``, up to ``budget`` evaluations."""
    _check_bounds(bounds)
    X, Y = _initial(objective, X_init, bounds, budget)
    n_new = budget - X.shape[0]
    result = BOResult("sobol", X_init.clone(), Y, X_init.shape[0])
    if n_new > 0:
        draws = SobolEngine(X.shape[-1], scramble=True, seed=seed).draw(n_new).to(X)
        x_new = unnormalize(draws, bounds)
        result.X = torch.cat([result.X, x_new])
        result.Y = torch.cat([Y, _evaluate(objective, x_new)])
        result.seconds = [0.0] * n_new
        result.cpu_seconds = [0.0] * n_new
    return result


# -- LogEI and MES --------------------------------------------------------------------------------

def _global_bo(name: str, objective: Callable[[Tensor], Tensor], bounds: Tensor, budget: int,
               X_init: Tensor, model_fn: ModelFn | None, standardize: bool,
               acquisition: Callable[[Model, Tensor, Tensor], AcquisitionFunction],
               num_restarts: int,
               raw_samples: int) -> BOResult:
    """One point per iteration: fit ``model_fn`` to the (standardised) targets, maximise
    ``acquisition(model, X, targets)`` over the unit cube with BoTorch's ``optimize_acqf``,
    evaluate it (the acquisition's own cost is what the clock times)."""
    _check_bounds(bounds)
    model_fn = make_gp if model_fn is None else model_fn
    X, Y = _initial(objective, X_init, bounds, budget)
    result = BOResult(name, X_init.clone(), Y, X_init.shape[0])
    unit = _unit(bounds)
    while X.shape[0] < budget:
        clock = _Clock()
        targets = _targets(Y, standardize)
        acqf = acquisition(model_fn(X, targets), X, targets)
        x_next, _ = optimize_acqf(acqf, bounds=unit, q=1, num_restarts=num_restarts,
                                  raw_samples=raw_samples)
        clock.stop(result)
        x_new = unnormalize(x_next.detach(), bounds)
        X = torch.cat([X, x_next.detach()])
        Y = torch.cat([Y, _evaluate(objective, x_new)])
        result.X = torch.cat([result.X, x_new])
    result.Y = Y
    return result


def run_logei(objective: Callable[[Tensor], Tensor], bounds: Tensor, budget: int,
              X_init: Tensor, model_fn: ModelFn | None = None, standardize: bool = True,
              num_restarts: int = 10, raw_samples: int = 512) -> BOResult:
    """Global BO with analytic LogEI (minimisation), one point per iteration.

    Example:
        The LES paper's global baseline, two steps on a 2-D sphere (the default GP fits its
        hyper-parameters; a fixed one is faster):

        >>> import torch
        >>> from optzoo.bo import make_gp, run_logei
        >>> _ = torch.manual_seed(0)
        >>> box = torch.tensor([[-10.0, -10.0], [10.0, 10.0]], dtype=torch.float64)
        >>> def gp(X, Y):
        ...     return make_gp(X, Y, lengthscales=torch.tensor([0.3, 0.3], dtype=torch.float64))
        >>> res = run_logei(lambda X: (X ** 2).sum(-1), box, budget=4,
        ...                 X_init=torch.tensor([[5.0, -4.0], [-3.0, 7.0]], dtype=torch.float64),
        ...                 model_fn=gp, num_restarts=2, raw_samples=32)
        >>> res.method, res.X.shape, res.Y.shape     # X in the box, Y the objective's values
        ('logei', torch.Size([4, 2]), torch.Size([4]))
    """
    return _global_bo(
        "logei", objective, bounds, budget, X_init, model_fn, standardize,
        lambda model, X, targets: LogExpectedImprovement(model, best_f=targets.min(),
                                                         maximize=False),
        num_restarts, raw_samples)


def run_mes(objective: Callable[[Tensor], Tensor], bounds: Tensor, budget: int,
            X_init: Tensor, model_fn: ModelFn | None = None, standardize: bool = True,
            num_restarts: int = 10, raw_samples: int = 512, n_candidates: int = 1000,
            seed: int = 0) -> BOResult:
    """Global BO with max-value entropy search (BoTorch's :class:`qMaxValueEntropy`,
    ``maximize=False``), one point per iteration.

    Args:
        n_candidates: Sobol points (fresh each iteration, seeded) on which the max values are
            sampled (Gumbel approximation).
    """
    _check_bounds(bounds)
    if not (isinstance(n_candidates, int) and n_candidates >= 1):
        raise ValueError(f"n_candidates: expected an integer >= 1, got {n_candidates!r}")
    sobol = SobolEngine(bounds.shape[-1], scramble=True, seed=seed)

    def acquisition(model, X, targets):
        cands = sobol.draw(n_candidates).to(X)
        return qMaxValueEntropy(model, candidate_set=cands, maximize=False)

    return _global_bo("mes", objective, bounds, budget, X_init, model_fn, standardize,
                      acquisition, num_restarts, raw_samples)


# -- local Thompson sampling -----------------------------------------------------------------------

def run_local_ts(objective: Callable[[Tensor], Tensor], bounds: Tensor, budget: int,
                 X_init: Tensor, model_fn: ModelFn | None = None, standardize: bool = True,
                 descent: DescentOptimizer | None = None, num_features: int = 1024
                 ) -> BOResult:
    """Local Thompson sampling (the LES paper's ablation): per iteration one pathwise posterior
    sample, descended by ``descent`` (default :func:`adam_descent`, LES's) from the best observed
    point; the descent's last iterate is evaluated.  Minimisation.

    Args:
        descent, num_features: LES's inner optimiser and random features per sample path.
    """
    _check_bounds(bounds)
    model_fn = make_gp if model_fn is None else model_fn
    descent = adam_descent() if descent is None else descent
    X, Y = _initial(objective, X_init, bounds, budget)
    result = BOResult("lts", X_init.clone(), Y, X_init.shape[0])
    unit = _unit(bounds)
    moved = []
    while X.shape[0] < budget:
        clock = _Clock()
        model = model_fn(X, _targets(Y, standardize))
        start = X[Y.argmin()]
        # M = 1: the only trace point is the end of the descent (arc-length fraction 1)
        seq = draw_descent_sequences(model, start, unit, num_samples=1, num_points=1,
                                     descent=descent, num_features=num_features)
        x_next = seq.points.reshape(1, -1)
        clock.stop(result)
        moved.append(float((x_next[0] - start).norm()))
        x_new = unnormalize(x_next, bounds)
        X = torch.cat([X, x_next])
        Y = torch.cat([Y, _evaluate(objective, x_new)])
        result.X = torch.cat([result.X, x_new])
    result.Y = Y
    result.info["step_lengths"] = moved
    return result


# -- TuRBO-1 ---------------------------------------------------------------------------------------

@dataclass
class TurboState:
    """TuRBO-1 trust-region state (BoTorch tutorial; LES authors' values).  ``best_value`` is
    the best value of the maximised quantity (here −y)."""

    dim: int
    length: float = 0.8
    length_min: float = 0.5 ** 7
    length_max: float = 1.6
    failure_counter: int = 0
    failure_tolerance: int = 0
    success_counter: int = 0
    success_tolerance: int = 10
    best_value: float = -math.inf
    restart_triggered: bool = False

    def __post_init__(self) -> None:
        check_int("dim", self.dim, low=1)
        check_real("length_min", self.length_min, low=0.0, low_open=True)
        check_real("length_max", self.length_max, low=self.length_min)
        check_real("length", self.length, low=self.length_min, high=self.length_max)
        check_int("success_tolerance", self.success_tolerance, low=1)
        self.failure_tolerance = math.ceil(max(4.0, float(self.dim)))

    def update(self, value: float) -> None:
        """Success/failure bookkeeping after observing the maximised value ``value``."""
        if value > self.best_value + 1e-3 * math.fabs(self.best_value):
            self.success_counter += 1
            self.failure_counter = 0
        else:
            self.success_counter = 0
            self.failure_counter += 1
        if self.success_counter == self.success_tolerance:
            self.length = min(2.0 * self.length, self.length_max)
            self.success_counter = 0
        elif self.failure_counter == self.failure_tolerance:
            self.length /= 2.0
            self.failure_counter = 0
        self.best_value = max(self.best_value, value)
        if self.length < self.length_min:
            self.restart_triggered = True


def run_turbo(objective: Callable[[Tensor], Tensor], bounds: Tensor, budget: int,
              X_init: Tensor, model_fn: ModelFn | None = None, standardize: bool = True,
              n_candidates: int | None = None, seed: int = 0) -> BOResult:
    """TuRBO-1 with Thompson sampling (minimisation: the tutorial's maximisation of −y)."""
    _check_bounds(bounds)
    model_fn = make_gp if model_fn is None else model_fn
    X, Y = _initial(objective, X_init, bounds, budget)
    d = X.shape[-1]
    n_cand = min(5000, max(2000, 200 * d)) if n_candidates is None else n_candidates
    if n_cand < 1:
        raise ValueError(f"n_candidates: expected >= 1, got {n_cand}")
    state = TurboState(d, best_value=float(-Y.min()))
    sobol = SobolEngine(d, scramble=True, seed=seed)
    gen = torch.Generator().manual_seed(seed)
    result = BOResult("turbo", X_init.clone(), Y, X_init.shape[0])
    lengths = []
    while X.shape[0] < budget:
        clock = _Clock()
        model = model_fn(X, -_targets(Y, standardize))
        center = X[Y.argmin()]
        weights = model.covar_module.base_kernel.lengthscale.detach().reshape(-1)
        weights = weights / weights.mean()
        weights = weights / torch.prod(weights.pow(1.0 / len(weights)))
        lb = (center - weights * state.length / 2.0).clamp(0.0, 1.0)
        ub = (center + weights * state.length / 2.0).clamp(0.0, 1.0)
        pert = lb + (ub - lb) * sobol.draw(n_cand).to(X)
        prob = min(20.0 / d, 1.0)
        mask = torch.rand(n_cand, d, generator=gen).to(X.device) <= prob
        empty = torch.where(mask.sum(dim=1) == 0)[0]
        mask[empty, torch.randint(0, d, (len(empty),), generator=gen).to(X.device)] = True
        cand = center.expand(n_cand, d).clone()
        cand[mask] = pert[mask]
        # candidates that differ from the centre in one coordinate make the joint posterior
        # nearly singular; the jitter BoTorch then adds is expected, not worth a warning each time
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore", NumericalWarning)
            x_next = MaxPosteriorSampling(model=model, replacement=False)(cand, num_samples=1)
        clock.stop(result)
        x_new = unnormalize(x_next, bounds)
        y_new = _evaluate(objective, x_new)
        state.update(float(-y_new.min()))
        lengths.append(state.length)
        X = torch.cat([X, x_next])
        Y = torch.cat([Y, y_new])
        result.X = torch.cat([result.X, x_new])
    result.Y = Y
    result.info.update(lengths=lengths, restart_triggered=state.restart_triggered)
    return result


# -- GIBO ------------------------------------------------------------------------------------------

class GradientInformation(AcquisitionFunction):
    r"""GIBO's gradient information at θ for one new point x (Müller et al., NeurIPS 2021):
    the trace reduction of the gradient posterior covariance,
    ``GI(x) = ‖∂_θ k_D(θ, x)‖² / (k_D(x, x) + σ_n²)``.

    Args:
        model: a fitted single-output GP.
        theta: ``d`` current iterate.
    """

    def __init__(self, model: Model, theta: Tensor) -> None:
        super().__init__(model=model)
        self.register_buffer("theta", theta.detach().reshape(1, -1))
        with torch.no_grad():
            noisy = model.posterior(self.theta, observation_noise=True).variance
            self.noise = float((noisy - model.posterior(self.theta).variance).clamp_min(1e-12))

    @t_batch_mode_transform(expected_q=1)
    def forward(self, X: Tensor) -> Tensor:
        with torch.enable_grad():
            theta = self.theta.expand(*X.shape[:-2], 1, X.shape[-1]).clone().requires_grad_()
            cov = self.model.posterior(torch.cat([theta, X], dim=-2)).distribution
            cov = cov.covariance_matrix
            grad = torch.autograd.grad(cov[..., 0, 1].sum(), theta, create_graph=True)[0]
        return grad.square().sum(dim=(-2, -1)) / (cov[..., 1, 1] + self.noise)


def _gradient_posterior(model: Model, theta: Tensor) -> tuple[Tensor, Tensor]:
    """∇μ(θ) (``d``) and the posterior variance of the directional derivative along ∇μ/‖∇μ‖."""
    with torch.enable_grad():
        x = theta.detach().reshape(1, -1).clone().requires_grad_()
        mean = model.posterior(x).mean.sum()
        grad = torch.autograd.grad(mean, x)[0].reshape(-1)
        norm = grad.norm()
        if float(norm) == 0.0:
            return grad, grad.new_tensor(0.0)
        u = (grad / norm).detach()
        s = torch.zeros((), dtype=x.dtype, device=x.device, requires_grad=True)
        t = torch.zeros((), dtype=x.dtype, device=x.device, requires_grad=True)
        pair = torch.stack([x.detach()[0] + s * u, x.detach()[0] + t * u])
        k = model.posterior(pair).distribution.covariance_matrix[0, 1]
        (ks,) = torch.autograd.grad(k, s, create_graph=True)
        (kst,) = torch.autograd.grad(ks, t)
    return grad.detach(), kst.detach().clamp_min(0.0)


def run_gibo(objective: Callable[[Tensor], Tensor], bounds: Tensor, budget: int,
             X_init: Tensor, model_fn: ModelFn | None = None, standardize: bool = True,
             lr: float = 0.25, alpha: float = 0.9, window_factor: int = 5,
             max_samples_per_iteration: int | None = None, num_restarts: int = 5,
             raw_samples: int = 64) -> BOResult:
    """GIBO with the high-confidence step rule (minimisation), started at the best initial
    point; the initial points stay in the data.

    Args:
        lr: SGD step size η on the normalised, length-scale-scaled gradient (GIBO: 0.25).
        alpha: confidence level of the early-step rule (the LES authors' ``hci_gibo``: 0.9).
        window_factor: the GP sees the last ``window_factor · d`` points (GIBO's N_max).
        max_samples_per_iteration: GI points per step (GIBO: d).
    """
    _check_bounds(bounds)
    if not lr > 0:
        raise ValueError(f"lr: expected > 0, got {lr!r}")
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha: expected a number in (0, 1], got {alpha!r}")
    model_fn = make_gp if model_fn is None else model_fn
    X, Y = _initial(objective, X_init, bounds, budget)
    d = X.shape[-1]
    per_step = d if max_samples_per_iteration is None else max_samples_per_iteration
    window = window_factor * d
    unit = _unit(bounds)
    result = BOResult("gibo", X_init.clone(), Y, X_init.shape[0])
    theta = X[Y.argmin()].clone()
    normal = torch.distributions.Normal(0.0, 1.0)
    steps, early = 0, 0

    def add(x_unit: Tensor) -> None:
        nonlocal X, Y
        x_new = unnormalize(x_unit.reshape(1, d), bounds)
        X = torch.cat([X, x_unit.reshape(1, d)])
        Y = torch.cat([Y, _evaluate(objective, x_new)])
        result.X = torch.cat([result.X, x_new])

    evaluated = True  # θ0 is an initial point
    while X.shape[0] < budget:
        clock = _Clock()
        if not evaluated:
            add(theta)
            if X.shape[0] >= budget:
                break
        for _ in range(per_step):
            model = model_fn(X[-window:], _targets(Y[-window:], standardize))
            grad, var_dir = _gradient_posterior(model, theta)
            norm = grad.norm()
            if float(norm) > 0 and float(var_dir) > 0:
                base = model.covar_module
                lip = float(base.outputscale.detach()) / float(
                    base.base_kernel.lengthscale.detach().mean())
                z = (lip * lr * norm / 2 - norm) / var_dir.sqrt()
                if 1.0 - float(normal.cdf(z.cpu())) > alpha:
                    early += 1
                    break
            x_next, _ = optimize_acqf(GradientInformation(model, theta), bounds=unit, q=1,
                                      num_restarts=num_restarts, raw_samples=raw_samples)
            add(x_next.detach())
            if X.shape[0] >= budget:
                break
        if X.shape[0] >= budget:
            clock.stop(result)
            break
        model = model_fn(X[-window:], _targets(Y[-window:], standardize))
        grad, _ = _gradient_posterior(model, theta)
        if float(grad.norm()) > 0:
            ls = model.covar_module.base_kernel.lengthscale.detach().reshape(-1)
            theta = (theta - lr * ls * grad / grad.norm()).clamp(0.0, 1.0)
        steps += 1
        evaluated = False
        clock.stop(result)
    result.Y = Y
    result.info.update(steps=steps, early_steps=early, theta=unnormalize(theta, bounds))
    return result
