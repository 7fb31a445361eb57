"""Generic tests every optimizer in ``optzoo.optim.registry.CASES`` must pass.

PyTorch's ``optim_db`` contract (STYLE.md): convergence on a quadratic and on Rosenbrock,
foreach == for-loop in float64, bit-identical continuation after a ``state_dict`` round trip,
closure, per-group hyperparameters, ``maximize``, float32/bfloat16 parameters, clear errors for
sparse gradients and bad hyperparameters, state following the parameters' dtype on load, and
CUDA parity (collected only where a GPU exists, so nothing is skipped on CPU CI).
"""

from __future__ import annotations

import copy

import pytest
import torch

from optzoo.optim.base import ZooOptimizer
from optzoo.optim.registry import CASES, OptimizerCase

IDS = [c.name for c in CASES]
FOREACH = [c for c in CASES if c.foreach]
DEVICES = ["cuda"] if torch.cuda.is_available() else []


def _quadratic(dtype=torch.float64, device="cpu", seed=0):
    """f(X, v) = 1/2 sum L_X (X - X*)^2 + 1/2 sum L_v (v - v*)^2, curvatures in [0.5, 2]."""
    g = torch.Generator().manual_seed(seed)
    shapes = [(3, 4), (5,)]
    curv = [0.5 + 1.5 * torch.rand(s, generator=g, dtype=torch.float64) for s in shapes]
    opt = [torch.randn(s, generator=g, dtype=torch.float64) for s in shapes]
    x0 = [o + torch.randn(s, generator=g, dtype=torch.float64)
          for o, s in zip(opt, shapes, strict=True)]
    params = [torch.nn.Parameter(x.to(dtype=dtype, device=device)) for x in x0]
    curv = [c.to(dtype=dtype, device=device) for c in curv]
    opt = [o.to(dtype=dtype, device=device) for o in opt]

    def f(ps):
        return sum(0.5 * (c * (p - o) ** 2).sum() for p, c, o in zip(ps, curv, opt, strict=True))

    return params, f


def _rosenbrock(dtype=torch.float64):
    p = torch.nn.Parameter(torch.tensor([-1.5, 2.0], dtype=dtype))

    def f(ps):
        x, y = ps[0][0], ps[0][1]
        return (1 - x) ** 2 + 100 * (y - x**2) ** 2

    return [p], f


def _closure(opt, params, f):
    def closure():
        opt.zero_grad()
        loss = f(params)
        loss.backward()
        return loss

    return closure


def _run(opt, params, f, steps):
    closure = _closure(opt, params, f)
    for _ in range(steps):
        opt.step(closure)


def _at_output(opt, params, f):
    with torch.no_grad():
        if isinstance(opt, ZooOptimizer):
            with opt.swap_output():
                return float(f(params))
        return float(f(params))


def test_registry_names_unique():
    assert len(IDS) == len(set(IDS))
    assert len(CASES) >= 1


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_quadratic_converges(c: OptimizerCase):
    params, f = _quadratic()
    opt = c.make(params)
    f0 = float(f(params).detach())
    _run(opt, params, f, c.quadratic_steps)
    assert _at_output(opt, params, f) <= c.quadratic_tol * f0


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_rosenbrock_converges(c: OptimizerCase):
    params, f = _rosenbrock()
    opt = c.make(params, "rosenbrock")
    _run(opt, params, f, c.rosenbrock_steps)
    out = opt.output()[params[0]] if isinstance(opt, ZooOptimizer) else params[0].detach()
    dist = float(torch.linalg.vector_norm(out - torch.ones(2, dtype=out.dtype)))
    assert dist <= c.rosenbrock_tol, f"ended at {out.tolist()}"


@pytest.mark.parametrize("c", FOREACH, ids=[c.name for c in FOREACH])
def test_foreach_equals_for_loop(c: OptimizerCase):
    results = []
    for foreach in (False, True):
        params, f = _quadratic()
        opt = c.make(params, foreach=foreach)
        _run(opt, params, f, 25)
        results.append([p.detach().clone() for p in params])
    for a, b in zip(*results, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_state_dict_round_trip_continues_bit_identically(c: OptimizerCase):
    params, f = _quadratic()
    opt = c.make(params)
    _run(opt, params, f, 7)
    saved_state = copy.deepcopy(opt.state_dict())
    saved_params = [p.detach().clone() for p in params]
    _run(opt, params, f, 9)

    params2, f2 = _quadratic()
    with torch.no_grad():
        for p, s in zip(params2, saved_params, strict=True):
            p.copy_(s)
    opt2 = c.make(params2)
    opt2.load_state_dict(saved_state)
    _run(opt2, params2, f2, 9)
    for a, b in zip(params, params2, strict=True):
        assert torch.equal(a, b)
    if isinstance(opt, ZooOptimizer):
        for a, b in zip(opt.output().values(), opt2.output().values(), strict=True):
            assert torch.equal(a, b)


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_load_state_dict_casts_state_to_parameter_dtype(c: OptimizerCase):
    params, f = _quadratic(torch.float64)
    opt = c.make(params)
    _run(opt, params, f, 3)
    sd = copy.deepcopy(opt.state_dict())
    params32, f32 = _quadratic(torch.float32)
    opt32 = c.make(params32)
    opt32.load_state_dict(sd)
    for p in params32:
        for k, v in opt32.state[p].items():
            if torch.is_tensor(v) and v.is_floating_point() and k != "step":
                assert v.dtype == torch.float32, k
    _run(opt32, params32, f32, 2)


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_step_returns_closure_loss(c: OptimizerCase):
    params, f = _quadratic()
    opt = c.make(params)
    closure = _closure(opt, params, f)
    before = float(f(params).detach())
    loss = opt.step(closure)
    assert loss is not None and torch.is_tensor(loss)
    if not c.needs_closure:
        assert float(loss.detach()) == pytest.approx(before)


@pytest.mark.parametrize("c", [c for c in CASES if not c.needs_closure],
                         ids=[c.name for c in CASES if not c.needs_closure])
def test_step_without_closure_equals_with_closure(c: OptimizerCase):
    out = []
    for use_closure in (True, False):
        params, f = _quadratic()
        opt = c.make(params)
        for _ in range(5):
            if use_closure:
                opt.step(_closure(opt, params, f))
            else:
                opt.zero_grad()
                f(params).backward()
                opt.step()
        out.append([p.detach().clone() for p in params])
    for a, b in zip(*out, strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("c", [c for c in CASES if c.needs_closure] or CASES[:1],
                         ids=[c.name for c in CASES if c.needs_closure] or IDS[:1])
def test_missing_closure_is_a_clear_error(c: OptimizerCase):
    if not c.needs_closure:  # no such optimizer registered: check the flag is honest instead
        params, f = _quadratic()
        opt = c.make(params)
        f(params).backward()
        opt.step()
        return
    params, f = _quadratic()
    opt = c.make(params)
    f(params).backward()
    with pytest.raises(RuntimeError, match="closure"):
        opt.step()


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_per_group_hyperparameters(c: OptimizerCase):
    """Two groups with different ``group_key`` values behave as two separate optimizers."""
    base = c.kwargs[c.group_key]
    values = (base, base * 0.5)
    params, f = _quadratic()
    opt = c.make([{"params": [params[0]], c.group_key: values[0]},
                  {"params": [params[1]], c.group_key: values[1]}])
    assert [g[c.group_key] for g in opt.param_groups] == list(values)
    _run(opt, params, f, 10)

    for i, v in enumerate(values):
        solo, fs = _quadratic()
        o = c.make([solo[i]], **{c.group_key: v})
        closure = _closure(o, solo, fs)
        for _ in range(10):
            o.step(closure)
        torch.testing.assert_close(params[i].detach(), solo[i].detach(), rtol=0, atol=0)


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_hyperparameters_live_in_defaults(c: OptimizerCase):
    params, _ = _quadratic()
    opt = c.make(params)
    for k, v in c.kwargs.items():
        assert k in opt.defaults, f"{k} is not in defaults"
        assert opt.param_groups[0][k] == v
    assert "maximize" in opt.defaults


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_maximize_equals_minimizing_the_negation(c: OptimizerCase):
    out = []
    for maximize in (False, True):
        params, f = _quadratic()
        opt = c.make(params, maximize=maximize)
        g = (lambda ps, f=f: -f(ps)) if maximize else f
        _run(opt, params, g, 10)
        out.append([p.detach().clone() for p in params])
    for a, b in zip(*out, strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_low_precision_parameters(c: OptimizerCase, dtype):
    params, f = _quadratic(dtype)
    opt = c.make(params)
    f0 = float(f(params).detach())
    _run(opt, params, f, 20)
    for p in params:
        assert p.dtype == dtype and torch.isfinite(p).all()
        for v in opt.state[p].values():
            if torch.is_tensor(v) and v.is_floating_point() and v.dim() > 0:
                assert v.device == p.device
    assert float(f(params).detach()) < f0


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_sparse_gradient_is_a_clear_error(c: OptimizerCase):
    emb = torch.nn.Embedding(6, 3, sparse=True).double()
    opt = c.make(emb.parameters())

    def closure():
        opt.zero_grad()
        loss = emb(torch.tensor([1, 2])).pow(2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="sparse"):
        opt.step(closure)


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_invalid_hyperparameter_names_it(c: OptimizerCase):
    assert c.invalid, "register at least one invalid hyperparameter"
    for name, value in c.invalid:
        params, _ = _quadratic()
        with pytest.raises(ValueError, match=name):
            c.make(params, **{name: value})


if DEVICES:  # defined only where a GPU exists: an empty parametrisation would be a skip

    @pytest.mark.parametrize("device", DEVICES)
    @pytest.mark.parametrize("c", CASES, ids=IDS)
    def test_cuda_matches_cpu(c: OptimizerCase, device):
        out = []
        for dev in ("cpu", device):
            params, f = _quadratic(torch.float64, dev)
            opt = c.make(params)
            _run(opt, params, f, 20)
            out.append([p.detach().cpu() for p in params])
        for a, b in zip(*out, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-10)
