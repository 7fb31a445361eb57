"""Hutchinson's trace against the exact Hessian trace (torch.autograd.functional.hessian) of a
tiny MLP, and the exact cases of the estimator."""

from __future__ import annotations

import pytest
import torch

from optzoo.scaling.hessian_trace import hutchinson_trace


def test_diagonal_hessian_is_exact_with_any_probe():
    A = torch.diag(torch.tensor([0.5, -1.0, 4.0], dtype=torch.float64))
    x = torch.nn.Parameter(torch.randn(3, dtype=torch.float64))
    est = hutchinson_trace(lambda: 0.5 * x @ A @ x, [x], probes=3, seed=1)
    assert est.trace == pytest.approx(3.5) and est.stderr == 0.0


def test_matches_the_exact_trace_of_a_tiny_mlp():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    net = net.double()
    X, y = torch.randn(16, 3, dtype=torch.float64), torch.randint(0, 2, (16,))
    params = list(net.parameters())
    shapes = [p.shape for p in params]
    sizes = [p.numel() for p in params]
    flat0 = torch.cat([p.detach().reshape(-1) for p in params])

    def loss_of(flat):
        chunks = torch.split(flat, sizes)
        ws = [c.reshape(s) for c, s in zip(chunks, shapes, strict=True)]
        h = torch.tanh(X @ ws[0].T + ws[1])
        return torch.nn.functional.cross_entropy(h @ ws[2].T + ws[3], y)

    exact = float(torch.trace(torch.autograd.functional.hessian(loss_of, flat0)))
    est = hutchinson_trace(lambda: torch.nn.functional.cross_entropy(net(X), y), params,
                           probes=200, seed=0)
    assert abs(est.trace - exact) < 4 * est.stderr + 1e-9
    assert est.stderr < 0.25 * abs(exact)
    again = hutchinson_trace(lambda: torch.nn.functional.cross_entropy(net(X), y), params,
                             probes=200, seed=0)
    assert again == est  # seeded


def test_bad_input():
    x = torch.nn.Parameter(torch.ones(2))
    with pytest.raises(ValueError, match="params"):
        hutchinson_trace(lambda: x.sum(), [])
    with pytest.raises(ValueError, match="params"):
        hutchinson_trace(lambda: x.sum(), [torch.ones(2)])
    with pytest.raises(ValueError, match="loss_fn"):
        hutchinson_trace(lambda: x * 2, [x])
    with pytest.raises(ValueError, match="loss_fn"):
        hutchinson_trace(lambda: x.sum() * float("nan"), [x])
    with pytest.raises(ValueError, match="probes"):
        hutchinson_trace(lambda: x.sum(), [x], probes=0)
