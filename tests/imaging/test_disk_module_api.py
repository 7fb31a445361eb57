"""DISK's ``SparseKernelComplex`` as an ``nn.Module`` (issue 26): ``forward`` takes a batch
``(N, C, H, W)`` like ``nn.Conv2d`` — equal to filtering each image and channel on its own and to
a depthwise ``conv2d`` with the complex's impulse response — and keeps the (H, W) and (H, W, C)
shapes."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from optzoo.imaging import SparseKernelComplex, apply_sparse, apply_spatially_varying
from optzoo.imaging import sparse_kernel_decomposition as disk


def _complex(dtype=torch.float64) -> SparseKernelComplex:
    rng = np.random.default_rng(0)
    offs = [rng.uniform(-2.5, 2.5, (5, 2)), rng.uniform(-1.5, 1.5, (4, 2))]
    wts = [rng.uniform(0.1, 0.4, 5), rng.uniform(0.1, 0.4, 4)]
    return SparseKernelComplex(offs, wts, scale=2.0, dtype=dtype)


def _batch(n=2, c=3, h=17, w=19, dtype=torch.float64) -> torch.Tensor:
    return torch.rand(n, c, h, w, generator=torch.Generator().manual_seed(1), dtype=dtype)


def test_nchw_forward_equals_filtering_each_image_and_channel():
    kc, x = _complex(), _batch()
    with torch.no_grad():
        y = kc(x)
        assert y.shape == x.shape and y.dtype == x.dtype
        for i in range(x.shape[0]):
            for c in range(x.shape[1]):
                assert torch.equal(y[i, c], kc(x[i, c]))  # (H, W), the old shape
            # (H, W, C), the old channels-last shape, gives the same image
            assert torch.equal(y[i], kc(x[i].permute(1, 2, 0)).permute(2, 0, 1))


def test_nchw_forward_equals_a_depthwise_conv2d_with_the_impulse_response():
    kc, x = _complex(), _batch()
    with torch.no_grad():
        k = kc.kernel()
        r = k.shape[0] // 2
        c = x.shape[1]
        # convolution = cross-correlation with the flipped kernel; reflect borders as DISK's
        weight = torch.flip(k, (0, 1)).expand(c, 1, *k.shape)
        ref = F.conv2d(F.pad(x, (r, r, r, r), mode="reflect"), weight, groups=c)
        assert torch.allclose(kc(x), ref, atol=1e-12, rtol=0)


def test_nchw_forward_is_differentiable_like_per_channel_calls():
    x = _batch(n=2, c=2, h=13, w=13).requires_grad_(True)
    kc = _complex()
    (kc(x) ** 2).sum().backward()
    g_batch = [p.grad.clone() for p in kc.parameters()]
    gx = x.grad.clone()
    kc.zero_grad()
    x.grad = None
    sum((kc(x[i, c]) ** 2).sum() for i in range(2) for c in range(2)).backward()
    for a, b in zip(g_batch, [p.grad for p in kc.parameters()], strict=True):
        assert torch.allclose(a, b, atol=1e-10, rtol=1e-10)
    assert torch.allclose(gx, x.grad, atol=1e-12, rtol=0)
    assert all(torch.isfinite(g).all() and g.abs().sum() > 0 for g in g_batch)


def test_inside_nn_sequential_with_conv2d_in_float32():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(1, 3, kernel_size=1), _complex())
    x = torch.rand(4, 1, 16, 16)
    y = net(x)
    assert y.shape == (4, 3, 16, 16) and y.dtype == torch.float32
    y.mean().backward()
    assert net[0].weight.grad is not None and torch.isfinite(net[0].weight.grad).all()


def test_numpy_batches_and_the_old_shapes_round_trip():
    kc = _complex()
    x = _batch(n=1, c=2).numpy()
    y = kc(x)
    assert isinstance(y, np.ndarray) and y.shape == x.shape
    assert np.array_equal(y[0, 1], apply_sparse(x[0, 1], kc.layers()))
    assert kc(x[0, 0]).shape == x.shape[2:]
    assert kc(np.moveaxis(x[0], 0, -1)).shape == (17, 19, 2)


def test_spatially_varying_filtering_takes_batches_too():
    kcs = [_complex(), _complex().copy(scale=1.0)]
    x = _batch(n=2, c=2, h=15, w=15)
    pmap = torch.linspace(0, 1, 15).expand(15, 15)
    y = apply_spatially_varying(x, kcs, [0.0, 1.0], pmap)
    assert y.shape == x.shape
    assert torch.allclose(y[1, 0], apply_spatially_varying(x[1, 0], kcs, [0.0, 1.0], pmap),
                          atol=1e-14, rtol=0)


@pytest.mark.parametrize("shape", [(7,), (1, 2, 3, 8, 8), (0, 3, 8, 8), (2, 0, 8, 8)])
def test_bad_shapes_name_the_image(shape):
    with pytest.raises(ValueError, match="image"):
        _complex()(torch.zeros(shape, dtype=torch.float64))


def test_docstring_example_runs():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in finder.find(disk) if t.name.endswith("SparseKernelComplex")]
    assert tests and tests[0].examples
    for t in tests:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0
