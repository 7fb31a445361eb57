"""The paper's toy model (§2–§3), V = ½ g(y)|x|² with 50 transverse dimensions and interior
curvature 4× the endpoints, run through the reproduction's own projected dynamics
(:func:`release_dynamics`): the entropic drift must appear with noise and be absent without
(issue 20: the digits drift claims could not show it), the drift predictor that sets the
reproduction's temperatures must match the toy, and the Fisher-trace estimator is checked
against the exact Hessian where the two coincide."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from optzoo.landscape import (
    EntropicToy,
    entropic_drift_rate,
    fisher_trace,
    flat_params,
    functional_loss,
    release_dynamics,
    toy_data,
    toy_loss,
    toy_path,
)

D = 50
TOY = EntropicToy(D, ratio=4.0)
PATH = toy_path(D)


def _runs(y0, data, runs, steps, *, lr=0.02, batch_size=None, temperature=0.0, seed=0):
    return np.array([release_dynamics(TOY, toy_loss, PATH, y0, data, steps=steps, lr=lr,
                                      batch_size=batch_size, temperature=temperature,
                                      generator=torch.Generator().manual_seed(seed + r)).ys
                     for r in range(runs)])


def test_toy_loss_is_zero_on_the_path_and_g_has_the_declared_excess():
    data = toy_data(64, D, noise=1.0)
    f = functional_loss(TOY, toy_loss)
    for t in (0.0, 0.3, 0.5, 1.0):
        assert float(f(PATH(t), *data)) == pytest.approx(0.0, abs=1e-14)
    g = TOY.g(torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64))
    assert g.tolist() == pytest.approx([1.0, 4.0, 1.0])
    # the full-batch loss is exactly V: the noise term averages to zero
    theta = PATH(0.3).clone()
    theta[1:] = 0.1
    v = 0.5 * float(TOY.g(torch.tensor(0.3, dtype=torch.float64))) * 0.01 * D
    assert float(f(theta, *data)) == pytest.approx(v, rel=1e-12)


def test_langevin_drifts_to_the_nearer_endpoint_in_1500_steps_and_gd_stays():
    data = toy_data(64, D, noise=0.0)
    for y0, end in ((0.3, 0.0), (0.7, 1.0)):
        ys = _runs(y0, data, runs=2, steps=1500, temperature=1e-3)
        # every run ends near the endpoint (it starts 0.3 away)
        assert np.all(np.abs(ys[:, -1] - end) < 0.12), ys[:, -1]
        gd = _runs(y0, data, runs=1, steps=1500)
        assert np.abs(gd - y0).max() < 1e-12  # zero loss along the path: GD never moves


def _toy_rate(y: float, lr: float, temp: float, k: int) -> float:
    yt = torch.tensor(y, dtype=torch.float64, requires_grad=True)
    g = TOY.g(yt)
    (dg,) = torch.autograd.grad(g, yt)
    return entropic_drift_rate(lr, temp, k, [float(dg)] * D, [float(g.detach())] * D)


def test_the_drift_predictor_matches_the_toy_and_vanishes_without_a_curvature_gradient():
    lr, temp, k, y0 = 0.02, 1e-3, 15, 0.3
    rate = _toy_rate(y0, lr, temp, k)
    cycles = 3
    pred = y0
    for _ in range(cycles):  # integrate the predicted drift cycle by cycle (g changes with y)
        pred += k * _toy_rate(pred, lr, temp, k)
    ys = _runs(y0, toy_data(8, D, 0.0), runs=80, steps=cycles * k, temperature=temp, seed=100)
    measured = float(ys[:, -1].mean())
    # diffusion along y over 45 steps: sd √(2ηT·45)/√80 ≈ 0.005; the drift ≈ −0.04
    assert measured - y0 == pytest.approx(pred - y0, rel=0.3)
    assert rate < 0  # toward y = 0, where g is smaller
    assert entropic_drift_rate(lr, temp, k, [0.0] * D, [3.0] * D) == 0.0
    # un-equilibrated limit (curvatures=None) = the h → 0 limit of the exact form
    exact0 = entropic_drift_rate(lr, temp, k, [2.0], [0.0])
    assert entropic_drift_rate(lr, temp, k, [2.0]) == pytest.approx(exact0, rel=1e-12)
    assert exact0 == pytest.approx(-lr**2 * temp * 2.0 * (k - 1) / 2, rel=1e-12)
    # equilibration can only weaken the push of a direction with h > 0
    assert abs(entropic_drift_rate(lr, temp, k, [2.0], [3.0])) < abs(exact0)


def test_minibatch_noise_drifts_and_a_larger_batch_drifts_less():
    data = toy_data(4096, D, noise=1.0, seed=1)
    small = _runs(0.3, data, runs=3, steps=300, batch_size=16)
    large = _runs(0.3, data, runs=3, steps=300, batch_size=256)
    full = _runs(0.3, data, runs=1, steps=300, batch_size=None)
    assert np.abs(full - 0.3).max() < 1e-12
    assert small[:, -1].mean() < 0.1  # B = 16 reaches the endpoint
    assert large[:, -1].mean() > small[:, -1].mean() + 0.1  # 16× less noise: slower


@pytest.mark.parametrize("bad", [{"lr": 0.0}, {"temperature": -1.0}, {"project_every": 0}])
def test_drift_predictor_rejects_bad_input(bad):
    args = {"lr": 0.1, "temperature": 1e-3, "project_every": 15, **bad}
    with pytest.raises(ValueError):
        entropic_drift_rate(dcurvatures=[1.0], **args)


def test_toy_rejects_bad_input():
    with pytest.raises(ValueError, match="a"):
        TOY(torch.zeros(3, D + 1, dtype=torch.float64))
    with pytest.raises((ValueError, TypeError)):
        EntropicToy(0)


# -- Fisher trace ------------------------------------------------------------------------------

def _linear_problem():
    torch.manual_seed(0)
    model = nn.Linear(5, 3).double()
    x = torch.randn(40, 5, dtype=torch.float64)
    y = torch.randint(0, 3, (40,))
    return model, flat_params(model), (x, y)


def test_true_fisher_trace_equals_the_exact_hessian_trace_of_a_linear_softmax_model():
    # logits linear in θ: the cross-entropy Hessian IS the Gauss-Newton matrix = true Fisher
    model, theta, data = _linear_problem()
    f = functional_loss(model, nn.functional.cross_entropy)
    hess = torch.autograd.functional.hessian(lambda w: f(w, *data), theta)
    assert fisher_trace(model, theta, data, chunk=7) == pytest.approx(
        float(torch.diagonal(hess).sum()), rel=1e-10)


def test_empirical_fisher_trace_equals_mean_squared_per_sample_gradient():
    model, theta, (x, y) = _linear_problem()
    f = functional_loss(model, nn.functional.cross_entropy)
    ref = 0.0
    for i in range(x.shape[0]):
        w = theta.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(f(w, x[i:i + 1], y[i:i + 1]), w)
        ref += float(g @ g) / x.shape[0]
    assert fisher_trace(model, theta, (x, y), labels="data") == pytest.approx(ref, rel=1e-10)
    assert math.isfinite(ref) and ref > 1e-3  # a random linear model is far from interpolation


def test_fisher_trace_rejects_bad_input():
    model, theta, data = _linear_problem()
    with pytest.raises(ValueError, match="labels"):
        fisher_trace(model, theta, data, labels="true")
    with pytest.raises(ValueError, match="theta"):
        fisher_trace(model, theta[:-1], data)
