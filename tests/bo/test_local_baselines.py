"""Baselines of the LES reproduction: GIBO's gradient information and gradient posterior against
the closed-form SE-kernel formulas (NumPy), TuRBO's trust-region rule worked out by hand, Sobol
against SobolEngine, and every loop's contract (budget, bounds, observed values, determinism)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import torch
from torch.quasirandom import SobolEngine

from optzoo.bo.les import adam_descent, draw_descent_sequences, make_gp
from optzoo.bo.local_baselines import (
    GradientInformation,
    TurboState,
    _gradient_posterior,
    run_gibo,
    run_local_ts,
    run_logei,
    run_mes,
    run_sobol,
    run_turbo,
)

LS = np.array([0.3, 0.5])
SCALE = 1.7
NOISE = 1e-2


def _model():
    g = torch.Generator().manual_seed(0)
    X = torch.rand(7, 2, generator=g, dtype=torch.float64)
    Y = torch.randn(7, 1, generator=g, dtype=torch.float64)
    model = make_gp(X, Y, noise_std=NOISE, lengthscales=torch.tensor(LS), outputscale=SCALE)
    return model, X.numpy(), Y.numpy()[:, 0]


def _k(a, b):
    diff = (a[:, None, :] - b[None, :, :]) / LS
    return SCALE * np.exp(-0.5 * (diff ** 2).sum(-1))


def _grad_cov(theta, X):
    """Closed-form posterior covariance of ∇f(θ) for the SE-ARD kernel."""
    K = _k(X, X) + NOISE ** 2 * np.eye(len(X))
    G = -((theta[None, :] - X) / LS ** 2).T * _k(theta[None, :], X)  # d x n: ∂_θ k(θ, x_j)
    return SCALE * np.diag(1 / LS ** 2) - G @ np.linalg.solve(K, G.T), G, K


def test_gradient_information_equals_trace_reduction_of_the_gradient_covariance():
    model, X, _ = _model()
    theta = np.array([0.4, 0.6])
    acqf = GradientInformation(model, torch.tensor(theta))
    cands = np.random.default_rng(0).random((6, 2))
    with torch.no_grad():
        got = acqf(torch.tensor(cands).unsqueeze(-2)).numpy()
    before = np.trace(_grad_cov(theta, X)[0])
    expect = [before - np.trace(_grad_cov(theta, np.vstack([X, c]))[0]) for c in cands]
    np.testing.assert_allclose(got, expect, rtol=1e-6, atol=1e-10)
    assert (got >= 0).all()


def test_gradient_posterior_mean_and_directional_variance_match_closed_form():
    model, X, y = _model()
    theta = np.array([0.35, 0.55])
    grad, var_dir = _gradient_posterior(model, torch.tensor(theta))
    cov, G, K = _grad_cov(theta, X)
    mean = G @ np.linalg.solve(K, y)  # zero prior mean
    np.testing.assert_allclose(grad.numpy(), mean, rtol=1e-6)
    u = mean / np.linalg.norm(mean)
    assert float(var_dir) == pytest.approx(u @ cov @ u, rel=1e-5)


def test_turbo_trust_region_follows_the_success_failure_rule():
    state = TurboState(dim=5, best_value=0.0)
    assert state.failure_tolerance == 5  # ⌈max(4, d)⌉
    for _ in range(5):  # five failures halve the side
        state.update(-1.0)
    assert state.length == pytest.approx(0.4) and state.failure_counter == 0
    for i in range(10):  # ten successes (each beats the best by > 1e-3 relative) double it
        state.update(1.0 + i)
    assert state.length == pytest.approx(0.8) and state.best_value == 10.0
    small = TurboState(dim=2, best_value=0.0)
    for _ in range(4 * 8):
        small.update(-1.0)
    assert small.length == pytest.approx(0.8 / 2 ** 8) and small.restart_triggered


def _problem():
    bounds = torch.tensor([[-1.0, 0.0], [1.0, 2.0]], dtype=torch.float64)

    def objective(X):
        return ((X - torch.tensor([0.3, 1.2], dtype=X.dtype)) ** 2).sum(-1)

    X0 = torch.tensor([[0.9, 0.2], [-0.8, 1.9]], dtype=torch.float64)
    fixed = partial(make_gp, lengthscales=torch.tensor([0.4, 0.4]))
    return bounds, objective, X0, fixed


@pytest.mark.parametrize("method", ["logei", "mes", "turbo", "gibo", "lts", "sobol"])
def test_loops_respect_budget_bounds_and_are_deterministic(method):
    bounds, objective, X0, fixed = _problem()
    runs = {
        "logei": lambda: run_logei(objective, bounds, 6, X0, model_fn=fixed, num_restarts=2,
                                   raw_samples=16),
        "turbo": lambda: run_turbo(objective, bounds, 6, X0, model_fn=fixed, n_candidates=64,
                                   seed=3),
        "gibo": lambda: run_gibo(objective, bounds, 6, X0, model_fn=fixed, num_restarts=2,
                                 raw_samples=16),
        "sobol": lambda: run_sobol(objective, bounds, 6, X0, seed=3),
        "mes": lambda: run_mes(objective, bounds, 6, X0, model_fn=fixed, num_restarts=2,
                               raw_samples=16, n_candidates=64, seed=3),
        "lts": lambda: run_local_ts(objective, bounds, 6, X0, model_fn=fixed,
                                    descent=adam_descent(0.05, 20), num_features=128),
    }
    torch.manual_seed(0)
    first = runs[method]()
    torch.manual_seed(0)
    second = runs[method]()
    assert first.X.shape == (6, 2) and first.method == method
    torch.testing.assert_close(first.X[:2], X0)
    assert bool((first.X >= bounds[0]).all()) and bool((first.X <= bounds[1]).all())
    torch.testing.assert_close(first.Y, objective(first.X))
    torch.testing.assert_close(first.X, second.X)
    assert first.best_y <= float(objective(X0).min())


def test_sobol_points_are_the_seeded_scrambled_sequence():
    bounds, objective, X0, _ = _problem()
    res = run_sobol(objective, bounds, 6, X0, seed=5)
    draws = SobolEngine(2, scramble=True, seed=5).draw(4).to(torch.float64)
    torch.testing.assert_close(res.X[2:], bounds[0] + (bounds[1] - bounds[0]) * draws)


def test_gibo_moves_its_iterate_downhill():
    bounds, objective, X0, fixed = _problem()
    torch.manual_seed(0)
    res = run_gibo(objective, bounds, 14, X0, model_fn=fixed, num_restarts=2, raw_samples=16)
    assert res.info["steps"] >= 1
    assert float(objective(res.info["theta"].reshape(1, -1))) < float(objective(X0).min())


def test_baselines_reject_bad_arguments():
    bounds, objective, X0, fixed = _problem()
    with pytest.raises(ValueError, match="budget"):
        run_logei(objective, bounds, 1, X0)
    with pytest.raises(ValueError, match="bounds"):
        run_turbo(objective, bounds[:1], 4, X0)
    with pytest.raises(ValueError, match="alpha"):
        run_gibo(objective, bounds, 4, X0, alpha=0.0)
    with pytest.raises(ValueError, match="X_init"):
        run_sobol(objective, bounds, 4, X0[:, :1])
    with pytest.raises(ValueError, match="n_candidates"):
        run_mes(objective, bounds, 4, X0, n_candidates=0)


def test_local_ts_evaluates_the_end_of_one_sample_paths_descent_from_the_incumbent():
    # the same torch seed: the point local TS evaluates must be the last Adam iterate on the
    # single posterior sample path started at the best observation (not the start, not a
    # mid-trace point), mapped back from the unit cube
    bounds, objective, X0, fixed = _problem()
    descent = adam_descent(0.05, 20)
    torch.manual_seed(3)
    res = run_local_ts(objective, bounds, 3, X0, model_fn=fixed, descent=descent,
                       num_features=128)
    unit = torch.stack([torch.zeros(2), torch.ones(2)]).to(torch.float64)
    X_unit = (X0 - bounds[0]) / (bounds[1] - bounds[0])
    model = fixed(X_unit, _standardized(objective(X0)))
    torch.manual_seed(3)
    seq = draw_descent_sequences(model, X_unit[objective(X0).argmin()], unit, num_samples=1,
                                 num_points=1, descent=descent, num_features=128)
    expected = bounds[0] + (bounds[1] - bounds[0]) * seq.points.reshape(1, 2)
    torch.testing.assert_close(res.X[2:], expected)
    assert res.info["step_lengths"][0] > 0.05  # the descent moved: not the incumbent again


def _standardized(y: torch.Tensor) -> torch.Tensor:
    from optzoo.bo.les import standardize_observations

    return standardize_observations(y).unsqueeze(-1)


def test_mes_is_botorchs_max_value_entropy_minimised():
    # minimisation through BoTorch's maximize=False: on a 1-D model whose posterior mean has a
    # clear minimum the chosen point is where BoTorch's qMaxValueEntropy is largest on a grid
    from botorch.acquisition.max_value_entropy_search import qMaxValueEntropy

    bounds = torch.tensor([[0.0], [1.0]], dtype=torch.float64)

    def objective(X):
        return ((X[:, 0] - 0.7) ** 2)

    X0 = torch.tensor([[0.1], [0.5], [0.9]], dtype=torch.float64)
    fixed = partial(make_gp, lengthscales=torch.tensor([0.2]))
    torch.manual_seed(0)
    res = run_mes(objective, bounds, 4, X0, model_fn=fixed, num_restarts=4, raw_samples=64,
                  n_candidates=256, seed=1)
    model = fixed(X0, _standardized(objective(X0)))
    cands = SobolEngine(1, scramble=True, seed=1).draw(256).to(torch.float64)
    torch.manual_seed(0)
    acqf = qMaxValueEntropy(model, candidate_set=cands, maximize=False)
    grid = torch.linspace(0, 1, 401, dtype=torch.float64).reshape(-1, 1, 1)
    with torch.no_grad():
        values = acqf(grid)
    best = float(grid[values.argmax()].squeeze())
    assert float(res.X[3, 0]) == pytest.approx(best, abs=0.02)
    assert 0.5 < float(res.X[3, 0]) < 0.9  # between the two lowest observations
