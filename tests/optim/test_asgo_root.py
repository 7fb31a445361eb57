"""ASGO's inverse root: the warm-started, certified Newton iteration (``root="newton"``, the
default) against ``eigh`` -- the certified residual, the relative error it bounds, the ``eigh``
fallback, ill-conditioned (rank-deficient) accumulators, foreach batching, float32 state and a
bit-identical ``state_dict`` continuation."""

from __future__ import annotations

import copy

import pytest
import torch

from optzoo.optim.asgo import ASGO, default_root_tol, inverse_sqrt, newton_inverse_sqrt

DT = torch.float64
K = 40  # above the size where ASGO uses eigh directly


def _spd(k, seed, rank=None, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    f = torch.randn(k, rank or k, generator=g, dtype=DT)
    return scale * f @ f.T / f.shape[1] + 1e-8 * torch.eye(k, dtype=DT)


def _weighted_error(a, x):
    """‖A^{1/4}(X − A^{-1/2})A^{1/4}‖₂: the relative error ‖I − XAX‖/2 bounds."""
    w, v = torch.linalg.eigh(a)
    a4 = (v * w.clamp_min(0) ** 0.25) @ v.T
    return float(torch.linalg.matrix_norm(a4 @ (x - inverse_sqrt(a)) @ a4, ord=2))


def _warm(a_prev):
    w, v = torch.linalg.eigh(a_prev)
    y = torch.diag_embed(w.rsqrt())
    return v @ y @ v.mT, v, y


@pytest.mark.parametrize("rel_change", [1e-4, 1e-2, 0.1])
def test_newton_root_is_certified_and_matches_eigh(rel_change):
    a_prev = torch.stack([_spd(K, 0), _spd(K, 1, rank=K // 2)])
    g = torch.Generator().manual_seed(2)
    d = torch.randn(2, K, 8, generator=g, dtype=DT)
    a = a_prev + rel_change * d @ d.mT / 8
    x0, v, y = _warm(a_prev)
    tol = 1e-9
    x, changed, iters, resid = newton_inverse_sqrt(a, x0.clone(), lambda idx: (v[idx], y[idx]),
                                                   [tol, tol], 8)
    for i in range(2):
        eye = torch.eye(K, dtype=DT)
        r = float(torch.linalg.matrix_norm(eye - x[i] @ a[i] @ x[i]))
        assert r <= tol * (1 + 1e-6) or changed[i][0] is not None  # certified, or eigh
        assert _weighted_error(a[i], x[i]) <= tol
        assert resid[i] <= tol
    assert max(iters) <= 8


def test_unchanged_accumulator_keeps_the_root_with_zero_iterations():
    a = _spd(K, 3).unsqueeze(0)
    x0, v, y = _warm(a)
    x, changed, iters, resid = newton_inverse_sqrt(a, x0.clone(), lambda idx: (v[idx], y[idx]),
                                                   [1e-8], 8)
    assert iters == [0] and not changed and resid[0] <= 1e-8
    assert torch.equal(x, x0)


def test_no_iterations_allowed_falls_back_to_eigh():
    a_prev = _spd(K, 4).unsqueeze(0)
    a = a_prev + 0.5 * _spd(K, 5).unsqueeze(0)
    x0, v, y = _warm(a_prev)
    x, changed, iters, _ = newton_inverse_sqrt(a, x0.clone(), lambda idx: (v[idx], y[idx]),
                                               [1e-8], 0)
    assert changed[0][0] is not None  # a fresh basis: eigh ran
    torch.testing.assert_close(x[0], inverse_sqrt(a[0]), rtol=0, atol=1e-10)


def _problem(shape, seed, dtype=DT, rank=None):
    g = torch.Generator().manual_seed(seed)
    x0 = torch.randn(*shape, generator=g, dtype=dtype)
    grads = []
    for _ in range(40):
        gr = torch.randn(*shape, generator=g, dtype=dtype)
        if rank is not None:  # rank-deficient gradients: an eps-dominated, singular accumulator
            gr = gr[:, :rank] @ torch.randn(rank, shape[1], generator=g, dtype=dtype) / rank
        grads.append(gr)
    return x0, grads


def _run(opt, p, grads):
    steps = []
    for gr in grads:
        before = p.detach().clone()
        p.grad = gr.clone()
        opt.step()
        steps.append(before - p.detach())
    return steps


@pytest.mark.parametrize("rank", [None, 3])
@pytest.mark.parametrize("side", ["left", "right"])
def test_asgo_newton_steps_equal_eigh_steps_within_the_tolerance(side, rank):
    x0, grads = _problem((K, K + 8) if side == "left" else (K + 8, K), seed=6, rank=rank)
    out = {}
    for root in ("eigh", "newton"):
        p = torch.nn.Parameter(x0.clone())
        opt = ASGO([p], lr=0.5, eps=1e-8, side=side, root=root, root_tol=1e-9)
        out[root] = (_run(opt, p, grads), opt)
    stats = out["newton"][1].root_stats
    assert stats["eigh"] >= 1  # the cold start
    if rank is None:
        assert stats["newton"] > 0  # warm roots accepted
    # (rank 3: new directions of a nearly singular accumulator every step; the iteration is
    # not accepted and eigh takes over, which is what makes the answer right there)
    assert all(t[4] == 1e-9 for t in stats["last"])
    # the iterates drift apart by the accepted error; compare the preconditioner on one path
    p = torch.nn.Parameter(x0.clone())
    opt = ASGO([p], lr=0.5, eps=1e-8, side=side, root_tol=1e-9)
    for gr in grads:
        before = p.detach().clone()
        p.grad = gr.clone()
        opt.step()
        exact = opt.preconditioner(p)  # eigh of the same accumulator
        ref = exact @ gr if side == "left" else gr @ exact
        torch.testing.assert_close(before - p.detach(), ref, rtol=1e-7, atol=1e-9)
    assert torch.isfinite(p).all()


def test_asgo_foreach_batches_same_sized_roots_like_the_loop():
    x0, grads = _problem((K, K + 4), seed=7)
    x1, grads1 = _problem((K, K + 9), seed=8)
    res = []
    for foreach in (False, True):
        ps = [torch.nn.Parameter(x0.clone()), torch.nn.Parameter(x1.clone())]
        opt = ASGO(ps, lr=0.5, foreach=foreach)
        for g0, g1 in zip(grads, grads1, strict=True):
            ps[0].grad, ps[1].grad = g0.clone(), g1.clone()
            opt.step()
        res.append([p.detach().clone() for p in ps])
    for a, b in zip(*res, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


def test_asgo_newton_state_dict_round_trip_continues_bit_identically():
    x0, grads = _problem((K, K + 4), seed=9)
    p = torch.nn.Parameter(x0.clone())
    opt = ASGO([p], lr=0.5)
    _run(opt, p, grads[:15])
    assert {"inv_root", "root_basis", "root_in_basis"} <= set(opt.state[p])
    saved, saved_p = copy.deepcopy(opt.state_dict()), p.detach().clone()
    _run(opt, p, grads[15:])
    q = torch.nn.Parameter(saved_p)
    opt2 = ASGO([q], lr=0.5)
    opt2.load_state_dict(saved)
    _run(opt2, q, grads[15:])
    assert torch.equal(p, q)


def test_asgo_float32_state_raises_the_default_tolerance_and_stays_close_to_eigh():
    x0, grads = _problem((K, K + 4), seed=10, dtype=torch.float32)
    tol = default_root_tol(torch.float64, torch.float32, K)
    assert tol == pytest.approx(16 * K**0.5 * torch.finfo(torch.float32).eps)
    assert default_root_tol(torch.float64, torch.float64, K) == 1e-6
    assert default_root_tol(torch.float32, torch.float32, K) == 1e-3
    out = []
    for root in ("eigh", "newton"):
        p = torch.nn.Parameter(x0.clone())
        opt = ASGO([p], lr=0.5, root=root)
        _run(opt, p, grads)
        out.append(p.detach())
        if root == "newton":
            assert all(v.dtype == torch.float32 for v in opt.state[p].values()
                       if v.is_floating_point())
            assert opt.root_stats["last"][0][4] == pytest.approx(tol)
    torch.testing.assert_close(out[0], out[1], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("kw", "name"), [(dict(root="cholesky"), "root"),
                                          (dict(root_tol=0.0), "root_tol"),
                                          (dict(root_iters=-1), "root_iters")])
def test_asgo_rejects_bad_root_arguments_by_name(kw, name):
    with pytest.raises(ValueError, match=name):
        ASGO([torch.nn.Parameter(torch.zeros(2, 2))], **kw)
