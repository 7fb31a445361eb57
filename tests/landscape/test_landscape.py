"""Reference tests for optzoo.landscape: curvature against the exact autograd Hessian, path
endpoints, trained path vs straight line, projection onto a polyline."""

from __future__ import annotations

import torch
from torch import nn

from optzoo.landscape import (
    curvature_profile,
    find_path,
    flat_params,
    functional_loss,
    hutchinson_trace,
    hvp,
    lanczos_eigenvalues,
    linear_path,
    path_losses,
    project,
    release_dynamics,
)


def _small_problem(seed=0, n=40, hidden=4):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, hidden), nn.Tanh(), nn.Linear(hidden, 2)).double()
    x = torch.randn(n, 3, generator=g, dtype=torch.float64)
    y = torch.randint(0, 2, (n,), generator=g)
    return model, nn.functional.cross_entropy, (x, y)


def _exact_hessian(model, loss_fn, data):
    f = functional_loss(model, loss_fn)
    theta = flat_params(model)
    return torch.autograd.functional.hessian(lambda w: f(w, *data), theta), f, theta


def test_hvp_matches_the_autograd_hessian():
    model, loss_fn, data = _small_problem()
    h, f, theta = _exact_hessian(model, loss_fn, data)
    v = torch.randn(theta.numel(), generator=torch.Generator().manual_seed(1), dtype=theta.dtype)
    torch.testing.assert_close(hvp(f, theta, data, v), h @ v, rtol=1e-10, atol=1e-12)


def test_hutchinson_single_probe_is_the_exact_quadratic_form():
    model, loss_fn, data = _small_problem()
    h, f, theta = _exact_hessian(model, loss_fn, data)
    z = torch.randint(0, 2, theta.shape, generator=torch.Generator().manual_seed(5))
    z = z.to(theta.dtype) * 2 - 1  # the same draw hutchinson_trace makes with this seed
    est, _ = hutchinson_trace(f, theta, data, probes=1, generator=torch.Generator().manual_seed(5))
    assert abs(est - float(z @ h @ z)) < 1e-10


def test_hutchinson_converges_to_the_exact_trace():
    model, loss_fn, data = _small_problem()
    h, f, theta = _exact_hessian(model, loss_fn, data)
    est, se = hutchinson_trace(f, theta, data, probes=2000,
                               generator=torch.Generator().manual_seed(0))
    exact = float(torch.trace(h))
    # Rademacher variance is 2 Σ_{i≠j} H_ij², its closed form bounds the error scale
    off = h - torch.diag(torch.diag(h))
    sd = float(torch.sqrt(2 * (off**2).sum() / 2000))
    assert abs(est - exact) < 4 * sd
    assert abs(se - sd) < 0.2 * sd


def test_lanczos_with_full_dimension_gives_the_exact_spectrum():
    model, loss_fn, data = _small_problem()
    h, f, theta = _exact_hessian(model, loss_fn, data)
    exact = torch.linalg.eigvalsh(h).flip(0)
    top = lanczos_eigenvalues(f, theta, data, k=3, iters=theta.numel(),
                              generator=torch.Generator().manual_seed(2))
    torch.testing.assert_close(torch.tensor(top, dtype=torch.float64), exact[:3],
                               rtol=1e-8, atol=1e-9)


def test_lanczos_few_iterations_finds_the_top_eigenvalue():
    model, loss_fn, data = _small_problem()
    h, f, theta = _exact_hessian(model, loss_fn, data)
    lam = float(torch.linalg.eigvalsh(h)[-1])
    top = lanczos_eigenvalues(f, theta, data, k=1, iters=15,
                              generator=torch.Generator().manual_seed(3))[0]
    assert top <= lam + 1e-9 and abs(top - lam) < 1e-3 * abs(lam)


def test_curvature_profile_rows_match_the_estimators():
    model, loss_fn, data = _small_problem()
    h, f, theta = _exact_hessian(model, loss_fn, data)
    rows = curvature_profile(model, loss_fn, lambda t: theta, [0.0, 1.0], data, probes=3,
                             top_k=2, lanczos_iters=theta.numel())
    assert [r["t"] for r in rows] == [0.0, 1.0]
    ev = torch.linalg.eigvalsh(h).flip(0)
    for r in rows:
        assert abs(r["loss"] - float(f(theta, *data))) < 1e-12
        assert abs(r["lambda_1"] - float(ev[0])) < 1e-8 and abs(r["lambda_2"] - float(ev[1])) < 1e-8


def _two_minima():
    """Two XOR-like solutions of a small MLP from different inits (different basins)."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 2, generator=g, dtype=torch.float64)
    y = ((x[:, 0] * x[:, 1]) > 0).long()
    thetas = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2)).double()
        opt = torch.optim.Adam(model.parameters(), lr=0.03)
        for _ in range(250):
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        thetas.append(flat_params(model))
    return model, nn.functional.cross_entropy, (x, y), thetas


def test_path_endpoints_are_the_minima_and_beat_the_straight_line():
    model, loss_fn, data, (a, b) = _two_minima()
    for kind in ("bezier", "polychain"):
        path = find_path(model, loss_fn, a, b, data, kind=kind, steps=300, lr=0.05,
                         batch_size=200, generator=torch.Generator().manual_seed(0))
        assert torch.equal(path(0.0), a) and torch.equal(path(1.0), b)
        ts = torch.linspace(0, 1, 21)
        curve = max(path_losses(model, loss_fn, path, ts, data))
        line = max(path_losses(model, loss_fn, linear_path(a, b), ts, data))
        assert curve < line, (kind, curve, line)


def test_projection_onto_a_polyline():
    ts = torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64)
    pts = torch.tensor([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    foot, y = project(torch.tensor([0.25, 0.3], dtype=torch.float64), ts, pts)
    torch.testing.assert_close(foot, torch.tensor([0.25, 0.0], dtype=torch.float64))
    assert abs(y - 0.125) < 1e-12
    foot, y = project(torch.tensor([1.4, 0.8], dtype=torch.float64), ts, pts)
    torch.testing.assert_close(foot, torch.tensor([1.0, 0.8], dtype=torch.float64))
    assert abs(y - 0.9) < 1e-12


def test_noise_free_release_on_a_flat_valley_stays_put():
    # L = ½ Σ_i g x_i² with the path the y-axis (zero loss along it): GD never moves y
    model = nn.Linear(3, 1, bias=False).double()
    with torch.no_grad():
        model.weight.zero_()
    x = torch.eye(3, dtype=torch.float64)[1:]  # inputs see only the two transverse coordinates
    data = (x, torch.zeros(2, 1, dtype=torch.float64))

    def path(t):
        return torch.tensor([float(t), 0.0, 0.0], dtype=torch.float64)

    rel = release_dynamics(model, nn.functional.mse_loss, path, 0.4, data, steps=60, lr=0.1,
                           batch_size=None, project_every=15)
    assert rel.steps == [0, 15, 30, 45, 60] and all(abs(y - 0.4) < 1e-12 for y in rel.ys)
