"""Checks of the ``adagrad-nesterov`` reproduction's problems and step-size rule: hand-written
gradients against autograd, f* from L-BFGS against a stationary point, R-norms by hand."""

from __future__ import annotations

import math

import torch

from optzoo.optim.reproduce import adagrad_nesterov as rep


def test_logreg_gradient_matches_autograd_and_solution_is_stationary():
    prob = rep._logreg(120, 1e-2, 0)
    g = torch.Generator().manual_seed(0)
    w = torch.randn(prob.x_star.shape, generator=g, dtype=torch.float64).requires_grad_(True)
    auto = torch.autograd.grad(prob.value(w), w)[0]
    torch.testing.assert_close(prob.grad(w.detach()), auto, rtol=1e-10, atol=1e-12)
    assert float(prob.grad(prob.x_star).abs().max()) < 1e-7
    assert float(prob.value(prob.x_star)) >= prob.f_star
    assert float(prob.value(prob.x_star)) - prob.f_star < 1e-12


def test_quadratic_gradient_and_minimiser():
    prob = rep._quadratic(3, 4, 1)
    x = torch.zeros(3, 4, dtype=torch.float64, requires_grad=True)
    auto = torch.autograd.grad(prob.value(x), x)[0]
    torch.testing.assert_close(prob.grad(x.detach()), auto, rtol=1e-12, atol=1e-12)
    assert float(prob.value(prob.x_star)) == 0.0


def test_radius_is_the_distance_in_each_methods_r_norm():
    e = torch.tensor([[3.0, 0.0, 0.0, 0.0], [0.0, 4.0, 0.0, 0.0]], dtype=torch.float64)
    assert rep._radius("adagrad_norm", e) == 5.0 / math.sqrt(8)
    assert rep._radius("diag_adagrad", e) == 4.0
    assert rep._radius("asgo", e) == 4.0 / 2.0  # σ_max / √n, n = 4
    assert rep._radius("asgo_right", e) == 4.0 / math.sqrt(2)  # σ_max / √m
    assert rep._radius("dasgo", e) == 4.0 / 2.0  # max row norm / √n


def test_eta_rule_doubles_for_algorithm_2():
    prob = rep._quadratic(2, 3, 0)
    x0 = torch.zeros(2, 3, dtype=torch.float64)
    for base in ("adagrad_norm", "diag_adagrad", "dasgo"):
        plain = rep._make(base, torch.nn.Parameter(x0.clone()), prob, x0)
        acc = rep._make(f"{base}_nesterov", torch.nn.Parameter(x0.clone()), prob, x0)
        r = rep._radius(base, x0 - prob.x_star)
        assert plain.defaults["lr"] == r and acc.defaults["lr"] == 2 * r
        assert acc.defaults["nesterov"] and not plain.defaults["nesterov"]
