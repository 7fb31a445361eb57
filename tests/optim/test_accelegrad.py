"""Reference tests for :class:`optzoo.optim.AcceleGrad` (Levy, Yurtsever & Cevher 2018, Alg. 1).

The generic contract (foreach, state_dict, maximize, dtypes, ...) is in ``test_contract.py``;
here: two steps computed by hand, and 20 steps against a literal NumPy transcription of
Algorithm 1 (one vector, split over two parameters to check the group-joint norm).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from optzoo.optim import AcceleGrad


def test_two_steps_on_a_1d_quadratic_by_hand():
    # f(x) = x²/2 from x0 = 4, D = 10, G = 3 (α_0 = α_1 = 1, so τ = 1: x_{t+1} = z_t).
    # t=0: g=4, S=16, η=20/√25=4, z1=y1=4−16=−12, ȳ=−12, next query x2=z1=−12.
    # t=1: g=−12, S=160, η=20/√169=20/13, z2=y2=−12+240/13=84/13, ȳ=(−12+84/13)/2=−36/13.
    p = torch.nn.Parameter(torch.tensor([4.0], dtype=torch.float64))
    opt = AcceleGrad([p], lr=10.0, G=3.0)
    expected = [(-12.0, -12.0), (84 / 13, -36 / 13)]
    for x_next, ybar in expected:
        opt.zero_grad()
        (0.5 * p**2).sum().backward()
        opt.step()
        assert p.item() == pytest.approx(x_next, rel=1e-15)
        assert opt.output()[p].item() == pytest.approx(ybar, rel=1e-15)
    assert opt.state[p]["sum_sq"].item() == pytest.approx(160.0, rel=1e-15)


def _numpy_accelegrad(grad, x0, D, G, T, project=False):
    """Algorithm 1 as printed: returns the query points x_1..x_T+1 and the outputs ȳ_1..ȳ_T."""
    alpha = [1.0 if t <= 2 else (t + 1) / 4 for t in range(T + 1)]
    y, z = x0.copy(), x0.copy()
    s, num, den = 0.0, np.zeros_like(x0), 0.0
    xs, ybars = [], []
    for t in range(T):
        tau = 1.0 / alpha[t]
        x = tau * z + (1 - tau) * y
        g = grad(x)
        s += alpha[t] ** 2 * float(g @ g)
        eta = 2 * D / np.sqrt(G**2 + s)
        z = z - alpha[t] * eta * g
        if project:  # K = ball(x0, D/2)
            r = np.linalg.norm(z - x0)
            if r > D / 2:
                z = x0 + (z - x0) * (D / 2) / r
        y = x - eta * g
        num, den = num + alpha[t] * y, den + alpha[t]
        xs.append(x)
        ybars.append(num / den)
    tau = 1.0 / alpha[T]
    xs.append(tau * z + (1 - tau) * y)
    return xs, ybars


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("project", [False, True])
def test_matches_numpy_algorithm_1_on_a_2d_quadratic(foreach, project):
    rng = np.random.default_rng(7)
    m = rng.standard_normal((2, 2))
    a = m @ m.T + 0.3 * np.eye(2)
    b = rng.standard_normal(2)
    x0 = rng.standard_normal(2) * 3
    D, G, T = 2 * float(np.linalg.norm(x0 - b)), 0.1, 20
    if project:
        D *= 0.4  # small ball, so the projection is active
    xs, ybars = _numpy_accelegrad(lambda x: a @ (x - b), x0, D, G, T, project)

    # the 2-vector as two 1-element parameters in one group: norms are joint over the group
    ps = [torch.nn.Parameter(torch.tensor([v], dtype=torch.float64)) for v in x0]
    at, bt = torch.as_tensor(a), torch.as_tensor(b)
    opt = AcceleGrad(ps, lr=D, G=G, project=project, foreach=foreach)
    for t in range(T):
        x = torch.cat(ps)
        np.testing.assert_allclose(x.detach().numpy(), xs[t], rtol=0, atol=1e-12)
        opt.zero_grad()
        (0.5 * (x - bt) @ at @ (x - bt)).backward()
        opt.step()
        ybar = torch.cat([opt.output()[p] for p in ps]).numpy()
        np.testing.assert_allclose(ybar, ybars[t], rtol=0, atol=1e-12)
    np.testing.assert_allclose(torch.cat(ps).detach().numpy(), xs[T], rtol=0, atol=1e-12)


def test_output_before_any_step_is_the_initial_point():
    p = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    opt = AcceleGrad([p], lr=1.0)
    assert torch.equal(opt.output()[p], p.detach())


def test_accelerates_on_a_smooth_quadratic():
    """Thm 1.2: O(1/T²) on a smooth problem; the gap of ȳ falls ≥ 20x from T = 100 to 400."""
    rng = np.random.default_rng(0)
    curv = torch.as_tensor(10.0 ** rng.uniform(-2, 0, size=50))
    xstar = torch.as_tensor(rng.standard_normal(50))
    p = torch.nn.Parameter(torch.zeros(50, dtype=torch.float64))
    opt = AcceleGrad([p], lr=2 * float(xstar.norm()))
    gaps = {}
    for t in range(1, 401):
        opt.zero_grad()
        (0.5 * (curv * (p - xstar) ** 2).sum()).backward()
        opt.step()
        if t in (100, 400):
            gaps[t] = float(0.5 * (curv * (opt.output()[p] - xstar) ** 2).sum())
    assert gaps[400] <= gaps[100] / 20  # 1/T would give 4x, 1/T² 16x (plus the log term)


@pytest.mark.parametrize("project", [False, True])
def test_foreach_equals_loop_for_bfloat16_and_mixed_groups(project):
    """The non-native foreach branch: bf16 (float32 arithmetic), float32 and float64 in a group."""
    out = []
    for foreach in (False, True):
        g = torch.Generator().manual_seed(3)
        ps = [torch.nn.Parameter(torch.randn(4, 3, generator=g).to(torch.bfloat16)),
              torch.nn.Parameter(torch.randn(5, generator=g)),
              torch.nn.Parameter(torch.randn(2, generator=g, dtype=torch.float64))]
        opt = AcceleGrad(ps, lr=3.0, project=project, foreach=foreach)
        for _ in range(12):
            opt.zero_grad()
            sum(((p.float() - 1) ** 2).sum() for p in ps).backward()
            opt.step()
        out.append([p.detach().float().clone() for p in ps] +
                   [v.float() for v in opt.output().values()])
    for a, b in zip(*out, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
