"""Reference tests of the two-layer KAN and its tangent kernel (closed forms, autograd Gram)."""

from __future__ import annotations

import math

import pytest
import torch

from optzoo.kan import (
    TwoLayerKAN,
    gradient_gram,
    infinite_width_kernel,
    kan_tangent_kernel,
    kernel_spectrum,
    predicted_loss_curve,
    rbf,
    rbf_derivative,
)


def test_rbf_matches_closed_form_values():
    centers = torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64)
    out = rbf(torch.tensor([0.25], dtype=torch.float64), centers, 0.5)
    # exp(-(0.25-μ)²/(2·0.25)): μ=0 -> exp(-0.125), μ=0.5 -> exp(-0.125), μ=1 -> exp(-1.125)
    want = torch.tensor([[math.exp(-0.125), math.exp(-0.125), math.exp(-1.125)]],
                        dtype=torch.float64)
    torch.testing.assert_close(out, want, rtol=1e-14, atol=0)


def test_rbf_derivative_matches_closed_form_and_finite_differences():
    centers = torch.tensor([0.0, 0.3], dtype=torch.float64)
    x = torch.tensor([0.1], dtype=torch.float64)
    s = 0.2
    # d/dx exp(-(x-μ)²/(2s²)) = -(x-μ)/s² · exp(...): μ=0 -> -2.5·exp(-0.125)
    got = rbf_derivative(x, centers, s)
    want = torch.tensor([[-2.5 * math.exp(-0.125), 5.0 * math.exp(-0.5)]], dtype=torch.float64)
    torch.testing.assert_close(got, want, rtol=1e-14, atol=0)
    h = 1e-6
    fd = (rbf(x + h, centers, s) - rbf(x - h, centers, s)) / (2 * h)
    torch.testing.assert_close(got, fd, rtol=1e-8, atol=1e-10)


def test_forward_matches_hand_written_sum():
    gen = torch.Generator().manual_seed(0)
    model = TwoLayerKAN(2, 3, 4, generator=gen)
    x = torch.rand(5, 2, generator=gen, dtype=torch.float64)
    s, mu = model.rbf_width, model.centers.tolist()
    a, b = model.alpha.detach(), model.beta
    for i in range(5):
        total = 0.0
        for p in range(3):
            z = sum(a[p, j, k].item() * math.exp(-(x[i, k].item() - mu[j]) ** 2 / (2 * s * s))
                    for j in range(4) for k in range(2))
            total += sum(b[p, l].item() * math.exp(-(z - mu[l]) ** 2 / (2 * s * s))
                         for l in range(4))
        assert model(x)[i].item() == pytest.approx(total / math.sqrt(3), rel=1e-12)


def test_init_distribution_and_frozen_second_layer():
    gen = torch.Generator().manual_seed(1)
    model = TwoLayerKAN(4, 2000, 8, generator=gen)
    assert set(model.beta.unique().tolist()) == {-1.0, 1.0}
    assert [n for n, _ in model.named_parameters()] == ["alpha"]
    assert model.alpha.std().item() == pytest.approx(1 / math.sqrt(32), rel=0.02)


def test_symmetric_init_gives_zero_output():
    model = TwoLayerKAN(3, 10, 5, symmetric_init=True, generator=torch.Generator().manual_seed(2))
    x = torch.rand(7, 3, dtype=torch.float64)
    assert model(x).abs().max().item() < 1e-14


def test_kan_tk_equals_gram_of_per_sample_gradients():
    gen = torch.Generator().manual_seed(3)
    model = TwoLayerKAN(3, 64, 6, generator=gen)
    x = torch.rand(9, 3, generator=gen, dtype=torch.float64)
    torch.testing.assert_close(kan_tangent_kernel(model, x), gradient_gram(model, x),
                               rtol=1e-11, atol=1e-12)


def test_kernel_spectrum_is_descending_and_reconstructs():
    a = torch.randn(6, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    h = a @ a.T
    evals, evecs = kernel_spectrum(h)
    assert torch.all(evals[:-1] >= evals[1:])
    torch.testing.assert_close(evecs @ torch.diag(evals) @ evecs.T, h)


def test_predicted_curve_equals_iterated_linear_map():
    a = torch.randn(5, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    h = a @ a.T
    r = torch.randn(5, dtype=torch.float64)
    lr = 1.0 / torch.linalg.eigvalsh(h).max().item()
    curve = predicted_loss_curve(h, r, lr, 10)
    for t in range(11):
        assert curve[t].item() == pytest.approx(0.5 * r.dot(r).item(), rel=1e-10)
        r = r - lr * h @ r


def test_predicted_loss_tracks_gd_on_a_wide_network_early():
    gen = torch.Generator().manual_seed(6)
    n, d = 12, 2
    model = TwoLayerKAN(d, 4000, 8, generator=gen)
    x = torch.rand(n, d, generator=gen, dtype=torch.float64)
    y = torch.randn(n, generator=gen, dtype=torch.float64)
    h0 = kan_tangent_kernel(model, x)
    lr = 1.0 / torch.linalg.eigvalsh(h0).max().item()
    with torch.no_grad():
        r0 = y - model(x)
    steps = 10  # "early": the loss falls ~500x in these steps
    predicted = predicted_loss_curve(h0, r0, lr, steps)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for t in range(steps + 1):
        loss = 0.5 * ((y - model(x)) ** 2).sum()
        assert loss.item() == pytest.approx(predicted[t].item(), rel=0.05)
        opt.zero_grad()
        loss.backward()
        opt.step()


def test_zero_init_kernel_is_the_scaled_additive_basis_kernel():
    # σ = 0: z_p ≡ 0, ψ_p = Σ_l β_pl φ_l'(0) = Σ_l β_pl μ_l/s² · exp(−μ_l²/(2s²)) for every x
    gen = torch.Generator().manual_seed(7)
    model = TwoLayerKAN(2, 50, 5, sigma=0.0, generator=gen)
    x = torch.rand(6, 2, generator=gen, dtype=torch.float64)
    s, mu = model.rbf_width, model.centers
    dphi0 = mu / s**2 * torch.exp(-(mu**2) / (2 * s**2))
    c = ((model.beta @ dphi0) ** 2).mean()
    phi = torch.exp(-((x.unsqueeze(-1) - mu) ** 2) / (2 * s**2)).reshape(6, -1)
    torch.testing.assert_close(kan_tangent_kernel(model, x), c * phi @ phi.T, rtol=1e-12, atol=0)
    # E over β ∈ {±1}: E[ψ²] = Σ_l φ_l'(0)² (the brief's small-init limit of H^∞)
    assert (dphi0**2).sum().item() == pytest.approx(
        infinite_width_kernel(x, d=2, g=5, width=4000, draws=5, sigma=0.0)[0, 0].item()
        / (phi[0] @ phi[0]).item(), rel=0.05)
