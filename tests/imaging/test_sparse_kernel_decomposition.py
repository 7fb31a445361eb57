"""Reference tests of DISK (sparse kernel complexes) and its baselines: exact equality with dense
FFT convolution, impulse responses, offset gradients vs finite differences, the convolution
convention, low-rank closed forms, the annealing loss, interpolation, and the reproduction."""

from __future__ import annotations

import dataclasses
import importlib.util
import math

import numpy as np
import pytest
import scipy.ndimage
import scipy.signal
import torch

from optzoo.errors import ConfigError
from optzoo.experiment import Result, Trial
from optzoo.imaging import (
    SparseKernelComplex,
    anneal_sparse_kernel,
    apply_low_rank,
    apply_sparse,
    apply_spatially_varying,
    charbonnier,
    dense_filter,
    fit_sparse_kernel,
    grid_weights,
    interpolate_complex,
    interpolation_weights,
    kernel_errors,
    low_rank_decomposition,
    poisson_disk_samples,
    radial_init,
    random_init,
    splat,
)
from optzoo.imaging import sparse_kernel_decomposition as skd
from optzoo.imaging.problems import (
    disc_kernel,
    gaussian_kernel,
    motion_kernel,
    motorcycle_defocus,
    photo,
    shape_kernel,
    support_mask,
    target_kernel,
)
from tests.conftest import REPO


@pytest.fixture(autouse=True)
def _one_thread():
    # tiny FFTs: threads only add contention on the shared CI cores
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _dense_as_taps(kernel: np.ndarray) -> SparseKernelComplex:
    r = kernel.shape[0] // 2
    ys, xs = np.mgrid[-r:r + 1, -r:r + 1]
    return SparseKernelComplex([np.stack([ys.ravel(), xs.ravel()], 1).astype(float)],
                               [kernel.ravel()])


# -- exactness against dense convolution -------------------------------------------------------

@pytest.mark.parametrize("channels", [None, 3])
def test_one_tap_per_kernel_pixel_reproduces_fftconvolve(channels):
    rng = np.random.default_rng(0)
    kernel = rng.random((9, 9)) - 0.3  # asymmetric, signed: a flip or shift would show
    shape = (23, 31) if channels is None else (23, 31, channels)
    img = rng.random(shape)
    c = _dense_as_taps(kernel)
    got = apply_sparse(img, c.layers())
    r = 4
    pad = [(r, r), (r, r)] + ([(0, 0)] if channels else [])
    k = kernel if channels is None else kernel[:, :, None]
    want = scipy.signal.fftconvolve(np.pad(img, pad, mode="reflect"), k, mode="valid",
                                    axes=(0, 1))
    np.testing.assert_allclose(got, want, atol=1e-12)
    np.testing.assert_allclose(c.kernel(r).detach().numpy(), kernel, atol=1e-14)


def test_dense_filter_matches_scipy_ndimage_mirror_convolution():
    rng = np.random.default_rng(1)
    img, kernel = rng.random((20, 17)), rng.random((7, 7))
    # numpy's "reflect" padding is scipy.ndimage's "mirror" mode
    want = scipy.ndimage.convolve(img, kernel, mode="mirror")
    np.testing.assert_allclose(dense_filter(img, kernel), want, atol=1e-12)


def test_multilayer_subpixel_complex_equals_dense_filter_with_its_impulse_response():
    rng = np.random.default_rng(2)
    offs = [rng.uniform(-3.7, 3.7, (5, 2)) for _ in range(3)]
    wts = [rng.uniform(-0.2, 0.6, 5) for _ in range(3)]
    c = SparseKernelComplex(offs, wts)
    img = rng.random((40, 45, 3))
    k = c.kernel().detach().numpy()
    np.testing.assert_allclose(apply_sparse(img, c.layers()), dense_filter(img, k), atol=1e-12)


def test_impulse_response_is_the_filter_run_on_a_dirac_image():
    rng = np.random.default_rng(3)
    c = SparseKernelComplex([rng.uniform(-2.5, 2.5, (4, 2)) for _ in range(3)],
                            [rng.uniform(0.1, 0.4, 4) for _ in range(3)])
    reach = c.reach()
    n = 4 * reach + 1
    delta = np.zeros((n, n))
    delta[n // 2, n // 2] = 1.0
    out = apply_sparse(delta, c.layers())
    # interior of the canvas only: reflect padding must not reach the response
    k = out[n // 2 - reach:n // 2 + reach + 1, n // 2 - reach:n // 2 + reach + 1]
    np.testing.assert_allclose(k, c.kernel().detach().numpy(), atol=1e-14)
    # mass of a cascade = product of the layers' weight sums
    assert out.sum() == pytest.approx(math.prod(float(w.detach().sum()) for w in c.w), rel=1e-12)


def test_compose_equals_scipy_full_convolution_and_its_gradient_checks():
    rng = np.random.default_rng(4)
    ks = [rng.random((n, n)) for n in (3, 1, 5)]
    got = skd.compose([torch.tensor(k) for k in ks]).numpy()
    want = scipy.signal.convolve(scipy.signal.convolve(ks[0], ks[1]), ks[2])
    np.testing.assert_allclose(got, want, atol=1e-13)
    ts = [torch.tensor(k, requires_grad=True) for k in ks]
    assert torch.autograd.gradcheck(lambda *k: skd.compose(list(k)), ts)


# -- convention and bilinear taps --------------------------------------------------------------

def test_convolution_convention_a_tap_at_plus_one_column_shifts_the_image_right():
    img = np.arange(60, dtype=float).reshape(6, 10)
    out = apply_sparse(img, [(np.array([[0.0, 1.0]]), np.array([1.0]))])
    np.testing.assert_allclose(out[:, 1:], img[:, :-1])
    np.testing.assert_allclose(out[:, 0], img[:, 1])  # reflect border: I(-1) = I(1)


def test_splat_of_a_half_pixel_tap_is_the_bilinear_closed_form():
    k = splat(torch.tensor([[0.5, -0.25]], dtype=torch.float64), torch.tensor([2.0],
                                                                            dtype=torch.float64), 2)
    want = np.zeros((5, 5))
    # (dy, dx) = (0.5, -0.25): rows 2, 3 with 0.5 each; columns 1, 2 with 0.25, 0.75
    for r, wr in ((2, 0.5), (3, 0.5)):
        for col, wc in ((1, 0.25), (2, 0.75)):
            want[r, col] = 2.0 * wr * wc
    np.testing.assert_allclose(k.numpy(), want, atol=1e-15)
    with pytest.raises(ValueError, match="offsets"):
        splat(torch.tensor([[3.0, 0.0]], dtype=torch.float64), torch.ones(1, dtype=torch.float64),
              2)


def test_offset_gradients_of_the_image_filter_match_finite_differences():
    rng = np.random.default_rng(5)
    img = torch.tensor(rng.random((14, 16)))
    weights = [torch.tensor(rng.uniform(0.2, 0.5, 3)) for _ in range(2)]
    offs0 = [rng.uniform(-2.4, 2.4, (3, 2)) for _ in range(2)]
    probe = torch.tensor(rng.standard_normal((14, 16)))

    def f(o1, o2):
        return (apply_sparse(img, [(o1, weights[0]), (o2, weights[1])]) * probe).sum()

    args = [torch.tensor(o, requires_grad=True) for o in offs0]
    assert torch.autograd.gradcheck(f, args, eps=1e-7, atol=1e-6)


def test_offset_gradients_of_the_charbonnier_loss_match_finite_differences():
    rng = np.random.default_rng(6)
    target = torch.tensor(disc_kernel(3.0, 5))
    w = [torch.tensor(rng.uniform(0.1, 0.3, 4)) for _ in range(2)]

    def loss(o1, o2):
        k = skd.compose([splat(o1, w[0], 3), splat(o2, w[1], 3)])
        return charbonnier(k, target, 1e-3)

    args = [torch.tensor(rng.uniform(-1.8, 1.8, (4, 2)), requires_grad=True) for _ in range(2)]
    assert torch.autograd.gradcheck(loss, args, eps=1e-7, atol=1e-6)


def test_float32_torch_input_keeps_dtype_and_type():
    x = torch.rand(12, 12, 3)
    out = apply_sparse(x, [(np.array([[0.3, -0.6]]), np.array([1.0]))])
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32 and out.shape == x.shape


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="offsets"):
        SparseKernelComplex([np.zeros((3, 3))], [np.zeros(3)])
    with pytest.raises(ValueError, match="image"):
        apply_sparse(np.zeros(5), [(np.zeros((1, 2)), np.ones(1))])
    with pytest.raises(ValueError, match="image"):  # reach larger than the image
        apply_sparse(np.zeros((4, 4)), [(np.array([[6.0, 0.0]]), np.ones(1))])
    with pytest.raises(ValueError, match="target"):
        fit_sparse_kernel(np.ones((4, 4)), 2, 2)
    with pytest.raises(ValueError, match="init"):
        fit_sparse_kernel(disc_kernel(3.0), 2, 2, init="zeros")
    with pytest.raises(ValueError, match="rank"):
        low_rank_decomposition(np.ones((5, 5)), 6)
    with pytest.raises(ValueError, match="anchors"):
        interpolation_weights([1.0], [2.0, 1.0])


# -- initialisations and fitting ---------------------------------------------------------------

def test_radial_init_matches_eq6_and_its_composite_radius_is_r():
    offs, wts = radial_init(8, 4, 20.0)
    radii = [float(np.hypot(*o.T).mean()) for o in offs]
    np.testing.assert_allclose(radii, [2.0, 4.0, 6.0, 8.0])  # Δr = 2·20/(4·5)
    assert sum(radii) == pytest.approx(20.0)
    np.testing.assert_allclose(offs[0][2], [2.0, 0.0], atol=1e-12)  # θ = π/2 → (dy, dx)=(r, 0)
    assert all(np.allclose(w, 1 / 8) for w in wts)


def test_poisson_disk_samples_lie_in_the_support_and_keep_their_spacing():
    mask = support_mask(shape_kernel("ring", 20))
    pts, r = poisson_disk_samples(mask, 12, np.random.default_rng(0))
    assert r == pytest.approx(math.sqrt(mask.sum() / (12 * math.pi)))
    idx = np.rint(pts + 20).astype(int)
    assert mask[idx[:, 0], idx[:, 1]].all()
    d = np.hypot(*(pts[:, None] - pts[None]).transpose(2, 0, 1))
    assert d[~np.eye(12, dtype=bool)].min() >= r * 0.9 ** 3  # at most a few 10 % shrinks


def test_fit_reduces_the_loss_and_is_deterministic():
    target = shape_kernel("heart", 6)
    a = fit_sparse_kernel(target, 6, 2, init="ss", steps=40, seed=3)
    b = fit_sparse_kernel(target, 6, 2, init="ss", steps=40, seed=3)
    assert a.losses[-1] < 0.8 * a.losses[0]
    assert a.losses == b.losses
    err = kernel_errors(a.complex.kernel(), target)
    assert 0 < err["rel_l2"] < 1 and math.isfinite(err["psnr"])


def test_fit_keeps_the_targets_mass_and_only_rescales_the_raw_fit():
    target = shape_kernel("ring", 6)
    kept = fit_sparse_kernel(target, 6, 3, init="ss", steps=40, seed=2)
    raw = fit_sparse_kernel(target, 6, 3, init="ss", steps=40, seed=2, keep_mass=False)
    k_kept, k_raw = (r.complex.kernel().detach().numpy() for r in (kept, raw))
    assert raw.raw_mass == pytest.approx(k_raw.sum(), rel=1e-12)
    assert abs(raw.raw_mass - 1.0) > 1e-3  # the unconstrained fit does not keep the mass
    assert k_kept.sum() == pytest.approx(target.sum(), abs=1e-12)
    # the same optimisation, its impulse response multiplied by one scalar
    assert kept.losses == raw.losses
    np.testing.assert_allclose(k_kept, k_raw / raw.raw_mass, atol=1e-14)
    # every layer sums to m^(1/L) = 1, so convex combinations of such bases keep the mass too
    for w in kept.complex.w:
        assert float(w.detach().sum()) == pytest.approx(1.0, abs=1e-12)


def test_with_mass_scales_positive_layers_evenly_and_signed_ones_through_the_last():
    c = SparseKernelComplex([np.zeros((2, 2)), np.ones((2, 2))], [np.array([0.5, 1.5]),
                                                                 np.array([1.0, 3.0])])
    assert c.mass() == pytest.approx(8.0)
    d = c.with_mass(2.0)
    assert d.mass() == pytest.approx(2.0)
    np.testing.assert_allclose(d.w[0].detach().numpy(), [0.5 * math.sqrt(2) / 2,
                                                        1.5 * math.sqrt(2) / 2])
    signed = SparseKernelComplex([np.zeros((2, 2))] * 2, [np.array([1.0, -2.0]),
                                                          np.array([0.5, 1.5])])
    e = signed.with_mass(1.0)
    np.testing.assert_allclose(e.w[0].detach().numpy(), [1.0, -2.0])
    np.testing.assert_allclose(e.kernel().detach().numpy(),
                               signed.kernel().detach().numpy() / signed.mass(), atol=1e-15)
    with pytest.raises(ValueError, match="mass"):
        SparseKernelComplex([np.zeros((2, 2))], [np.array([1.0, -1.0])]).with_mass(1.0)


def test_random_init_draws_every_layer_over_the_targets_support():
    target = shape_kernel("ring", 12)
    mask = support_mask(target)
    offs, wts = random_init(16, 4, 12.0, np.random.default_rng(0), mask)
    for o in offs:
        idx = np.rint(o + 12).astype(int)
        assert mask[idx[:, 0], idx[:, 1]].all()  # on the ring, never in its hole
        # the whole support, not the small IR squares (layer l's was r_l = l·1.2 px here)
        assert np.hypot(*o.T).max() > 6.0
    assert all(np.allclose(w, 1 / 16) for w in wts)
    # no mask: uniform on the disc of the radius
    disc, _ = random_init(400, 1, 5.0, np.random.default_rng(1))
    rho = np.hypot(*disc[0].T)
    assert rho.max() <= 5.0 and np.mean(rho < 5.0 / math.sqrt(2)) == pytest.approx(0.5, abs=0.08)
    with pytest.raises(ValueError, match="support"):
        random_init(4, 2, 3.0, np.random.default_rng(0), np.zeros((4, 4), bool))


def test_kernel_errors_closed_form():
    t = np.zeros((3, 3))
    t[1, 1] = 1.0
    a = np.zeros((5, 5))
    a[2, 2], a[0, 0] = 0.5, 0.5  # half the mass moved outside the target grid
    e = kernel_errors(a, t)
    assert e["rel_l2"] == pytest.approx(math.sqrt(0.5))
    assert e["psnr"] == pytest.approx(10 * math.log10(1 / (0.5 / 9)))


# -- annealing baseline ------------------------------------------------------------------------

def test_annealing_loss_is_the_charbonnier_of_its_returned_complex():
    target = shape_kernel("star4", 6)
    eta = 1e-2 * target.max()
    res = anneal_sparse_kernel(target, 5, 2, "ir", steps=60, chains=3, seed=1, keep_mass=False)
    direct = charbonnier(res.complex.kernel(), torch.tensor(target), eta).item()
    # the circular grid holds extra zero pixels: each adds exactly η to the sum
    size_floor = res.loss - direct
    assert size_floor >= 0 and (size_floor / eta) == pytest.approx(round(size_floor / eta),
                                                                   abs=1e-6)
    assert res.best_losses[-1] <= res.best_losses[0]
    again = anneal_sparse_kernel(target, 5, 2, "ir", steps=60, chains=3, seed=1)
    assert again.loss == res.loss and res.evaluations == 180
    # the default keeps the mass: the same search, its best complex rescaled to unit sum
    assert again.complex.mass() == pytest.approx(1.0, abs=1e-12)
    assert res.raw_mass == again.raw_mass and abs(res.raw_mass - 1.0) > 1e-4
    np.testing.assert_allclose(again.complex.kernel().detach().numpy(),
                               res.complex.kernel().detach().numpy() / res.raw_mass, atol=1e-14)


# -- low rank ----------------------------------------------------------------------------------

def test_low_rank_closed_forms():
    g = gaussian_kernel(2.0, 6)
    one = low_rank_decomposition(g, 1)
    np.testing.assert_allclose(one.kernel(), g, atol=1e-15)  # a Gaussian is separable
    assert one.taps == 2 * 13
    k = shape_kernel("heart", 6)
    s = np.linalg.svd(k, compute_uv=False)
    two = low_rank_decomposition(k, 2)
    assert np.linalg.norm(two.kernel() - k) == pytest.approx(np.sqrt((s[2:] ** 2).sum()))
    img = np.random.default_rng(0).random((30, 26, 3))
    np.testing.assert_allclose(apply_low_rank(img, two), dense_filter(img, two.kernel()),
                               atol=1e-12)


# -- interpolation / spatially varying ---------------------------------------------------------

def test_interpolation_weights_closed_form():
    k, t = interpolation_weights(np.array([0.5, 1.0, 2.5, 3.0, 9.0]), [1.0, 2.0, 3.0])
    assert k.tolist() == [0, 0, 1, 1, 1]
    np.testing.assert_allclose(t.numpy(), [0.0, 0.0, 0.5, 1.0, 1.0])


def test_grid_weights_reproduce_a_bilinear_function_exactly():
    axes = ([1.0, 2.0, 4.0], [0.0, 0.5, 1.0, 2.0])
    f = lambda p, q: 3.0 - 2.0 * p + 0.7 * q + 1.3 * p * q  # noqa: E731
    grid = np.array([[f(p, q) for q in axes[1]] for p in axes[0]]).ravel()
    rng = np.random.default_rng(0)
    vals = np.stack([rng.uniform(1.0, 4.0, 50), rng.uniform(0.0, 2.0, 50)])
    idx, alpha = grid_weights(vals, axes)
    assert idx.shape == (4, 50) and torch.all(alpha >= 0)
    np.testing.assert_allclose(alpha.sum(0).numpy(), 1.0, atol=1e-15)
    np.testing.assert_allclose((alpha * torch.tensor(grid)[idx]).sum(0).numpy(), f(*vals),
                               atol=1e-12)
    # 1-D anchors give the two-corner linear weights of interpolation_weights
    k, t = interpolation_weights([2.5], [1.0, 2.0, 3.0])
    i1, a1 = grid_weights([2.5], [1.0, 2.0, 3.0])
    assert i1[:, 0].tolist() == [int(k[0]), int(k[0]) + 1]
    np.testing.assert_allclose(a1[:, 0].numpy(), [1 - float(t[0]), float(t[0])])
    with pytest.raises(ValueError, match="values"):
        grid_weights(np.zeros((3, 5)), axes)


def _grid_bases():
    rng = np.random.default_rng(11)
    mk = lambda s: SparseKernelComplex(  # noqa: E731
        [rng.uniform(-s, s, (3, 2)) for _ in range(2)], [rng.uniform(0.2, 0.4, 3)
                                                         for _ in range(2)])
    return [[mk(1.0 + i + 0.3 * j) for j in range(3)] for i in range(2)]


def test_2d_interpolated_complex_is_the_bilinear_blend_of_the_cell_corners():
    bases, axes = _grid_bases(), ([1.0, 3.0], [0.0, 1.0, 2.0])
    at = interpolate_complex(bases, axes, (3.0, 1.0))  # an anchor: that basis itself
    np.testing.assert_allclose(at.kernel().detach(), bases[1][1].kernel().detach(), atol=1e-14)
    mid = interpolate_complex(bases, axes, (1.5, 1.75))  # α: p 3/4 low, q 1/4 low
    want = (0.75 * 0.25 * bases[0][1].layers()[0][0] + 0.75 * 0.75 * bases[0][2].layers()[0][0]
            + 0.25 * 0.25 * bases[1][1].layers()[0][0] + 0.25 * 0.75 * bases[1][2].layers()[0][0])
    np.testing.assert_allclose(mid.layers()[0][0].detach(), want.detach(), atol=1e-12)
    with pytest.raises(ValueError, match="complexes"):
        interpolate_complex(bases[0], axes, (1.5, 1.0))


def test_2d_spatially_varying_filter_with_a_constant_map_equals_the_interpolated_complex():
    bases, axes = _grid_bases(), ([1.0, 3.0], [0.0, 1.0, 2.0])
    img = np.random.default_rng(12).random((18, 21, 3))
    pmap = np.stack([np.full((18, 21), 2.2), np.full((18, 21), 0.4)])
    want = apply_sparse(img, interpolate_complex(bases, axes, (2.2, 0.4)).layers())
    np.testing.assert_allclose(apply_spatially_varying(img, bases, axes, pmap), want, atol=1e-12)
    with pytest.raises(ValueError, match="param_map"):
        apply_spatially_varying(img, bases, axes, pmap[0])


def _two_bases():
    rng = np.random.default_rng(7)
    mk = lambda s: SparseKernelComplex(  # noqa: E731
        [rng.uniform(-s, s, (3, 2)) for _ in range(2)], [rng.uniform(0.2, 0.4, 3)
                                                         for _ in range(2)])
    return [mk(1.5), mk(3.0)]


def test_spatially_varying_filter_with_a_constant_map_equals_the_interpolated_complex():
    bases = _two_bases()
    img = np.random.default_rng(8).random((20, 24, 3))
    pmap = np.full((20, 24), 2.75)  # α = (0.25, 0.75) between anchors 2 and 3
    mid = interpolate_complex(bases, [2.0, 3.0], 2.75)
    np.testing.assert_allclose(apply_spatially_varying(img, bases, [2.0, 3.0], pmap),
                               apply_sparse(img, mid.layers()), atol=1e-12)
    o0, o1 = bases[0].layers()[1][0], bases[1].layers()[1][0]
    np.testing.assert_allclose(mid.layers()[1][0].detach(), 0.25 * o0.detach()
                               + 0.75 * o1.detach(), atol=1e-12)


def test_spatially_varying_filter_is_per_pixel_one_basis_or_the_other():
    bases = _two_bases()
    img = np.random.default_rng(9).random((22, 60))
    pmap = np.full((22, 60), 2.0)
    pmap[:, 30:] = 3.0
    out = apply_spatially_varying(img, bases, [2.0, 3.0], pmap)
    left, right = (apply_sparse(img, b.layers()) for b in bases)
    m = bases[0].reach() + bases[1].reach()
    # away from the seam (a pass reads neighbours filtered with the other basis) it is exact
    assert 30 - m > 0
    np.testing.assert_allclose(out[:, :30 - m], left[:, :30 - m], atol=1e-12)
    np.testing.assert_allclose(out[:, 30 + m:], right[:, 30 + m:], atol=1e-12)
    assert not np.allclose(out[:, 30 - m:30 + m], left[:, 30 - m:30 + m])


# -- problems ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["gauss5", "disc", "ring", "square", "hexagon", "heart",
                                  "star4", "coma", "motion"])
def test_targets_are_unit_sum_nonnegative_and_odd(name):
    k = target_kernel(name, 12)
    assert k.shape[0] % 2 == 1 and k.shape[0] == k.shape[1]
    assert k.min() >= 0 and k.sum() == pytest.approx(1.0)


def test_rotated_shapes_and_motion_lines():
    star = shape_kernel("star4", 8)
    np.testing.assert_allclose(shape_kernel("star4", 8, angle=math.pi / 2), star, atol=1e-15)
    assert np.abs(shape_kernel("star4", 8, angle=math.pi / 4) - star).max() > 0.1 * star.max()
    heart = shape_kernel("heart", 8)
    np.testing.assert_allclose(shape_kernel("heart", 8, angle=math.pi), heart[::-1, ::-1],
                               atol=1e-15)
    small = shape_kernel("disc", 8, size=4.0)
    assert small.shape == (17, 17) and small[:, :4].sum() == 0 and small.sum() == pytest.approx(1)
    line = motion_kernel(9.0, 0.0)
    assert line.sum() == pytest.approx(1.0) and line.shape == (13, 13)
    assert (line > 0).sum(axis=1).tolist() == [0] * 6 + [9] + [0] * 6  # 9 px on the centre row
    np.testing.assert_allclose(motion_kernel(9.0, math.pi / 2), line.T, atol=1e-15)
    with pytest.raises(ValueError, match="size"):
        shape_kernel("disc", 8, size=9.0)
    with pytest.raises(ValueError, match="grid"):
        motion_kernel(9.0, 0.0, grid=3)


def test_disc_area_and_symmetries():
    k = shape_kernel("disc", 20)
    peak = k.max()
    assert (k / peak).sum() == pytest.approx(math.pi * 19.5 ** 2, rel=2e-3)
    np.testing.assert_allclose(k, k.T, atol=1e-15)
    heart = shape_kernel("heart", 20)
    np.testing.assert_allclose(heart, heart[:, ::-1], atol=1e-15)  # mirror symmetric
    assert heart[:20].sum() > heart[21:].sum()  # lobes on top (y down)


def test_photos_and_motorcycle_load_offline():
    cam = photo("camera", 64)
    assert cam.shape == (64, 64) and 0 <= cam.min() and cam.max() <= 1
    img, rmap = motorcycle_defocus(2.0, 10.0, 0.5, downscale=8)
    assert img.shape[:2] == rmap.shape and img.shape[2] == 3
    assert rmap.min() == pytest.approx(2.0, abs=0.5) and rmap.max() == pytest.approx(10.0)
    assert np.isfinite(rmap).all()


# -- reproduction ------------------------------------------------------------------------------

def test_presets_follow_the_contract_and_validate():
    from optzoo.imaging.reproduce.sparse_kernel_decomposition import REPRODUCTION, DiskConfig

    assert REPRODUCTION.slug == "sparse-kernel-decomposition"
    assert REPRODUCTION.presets["quick"].seeds >= 3 and REPRODUCTION.presets["full"].seeds >= 5
    for cfg in REPRODUCTION.presets.values():
        ts = REPRODUCTION.trials(cfg)
        assert len({t.key(REPRODUCTION.slug) for t in ts}) == len(ts)
    with pytest.raises(ConfigError, match="targets"):
        DiskConfig(targets=("blob",))
    with pytest.raises(ConfigError, match="budgets"):
        DiskConfig(budgets=("12by4",))
    with pytest.raises(ConfigError, match="sv_anchor_every"):
        dataclasses.replace(DiskConfig(), sv_anchor_every=4)
    # claim (a) compares at equal loss evaluations: the config refuses anything else
    for cfg in REPRODUCTION.presets.values():
        assert cfg.sa_chains * cfg.sa_steps == cfg.steps
    with pytest.raises(ConfigError, match="equal loss evaluations"):
        dataclasses.replace(DiskConfig(), sa_steps=1000)
    with pytest.raises(ConfigError, match="sv2d_anchor_every"):
        dataclasses.replace(DiskConfig(), sv2d_angles=4)
    with pytest.raises(ConfigError, match="sv2d_effects"):
        dataclasses.replace(DiskConfig(), sv2d_effects=("swirl",))
    full = {t.problem for t in REPRODUCTION.trials(REPRODUCTION.presets["full"])
            if t.method == "sv2d_independent"}
    assert full == {"rotational_bokeh", "radial_blur"}


def test_smoke_preset_runs_trials_and_reports_five_claims(tmp_path):
    from optzoo.imaging.reproduce.sparse_kernel_decomposition import REPRODUCTION

    cfg = REPRODUCTION.presets["smoke"]
    trials = REPRODUCTION.trials(cfg)
    results = [Result(trial=t, metrics=REPRODUCTION.run_trial(t, "cpu")) for t in trials]
    assert REPRODUCTION.run_trial(trials[0], "cpu") == results[0].metrics
    summary = REPRODUCTION.summarize(results, cfg, tmp_path)
    assert [c.text[:3] for c in summary.claims] == ["(a)", "(b)", "(c)", "(d)", "(e)"]
    assert all(c.evidence for c in summary.claims)
    assert all(c.verdict.test in ("all_of", "at_least") for c in summary.claims)
    # one seed: no statistical cell can be held (smoke is not evidence); (e) is exact
    assert not any(c.held for c in summary.claims[:4])
    timing = [r for r in results if r.trial.method == "timing"]
    assert len(timing) == 1 and timing[0].metrics["fit_pairs"] == cfg.timing_pairs
    assert timing[0].metrics["fit_a_s"] > 0 and timing[0].metrics["fit_b_s"] > 0
    assert all(f.path.read_bytes()[:4] == b"\x89PNG" for f in summary.figures)
    by = {(r.trial.method, r.trial.problem): r.metrics for r in results}
    assert by[("disk_ss", "disc")]["taps"] == 48
    # every fit comes back with the target's mass, whatever it lost in the search
    for m in ("disk_ss", "disk_ir", "disk_random", "sa_ss"):
        assert by[(m, "heart")]["evaluations"] == cfg.steps
    sv2d = by[("sv2d_independent", "rotational_bokeh")]
    assert sv2d["grid_points"] == 9 and sv2d["anchor_points"] == 4
    # low rank at full rank is the kernel itself: its image PSNR is the largest
    lr = by[("lowrank", "disc")]
    assert lr["image_psnr_r3"] >= lr["image_psnr_r1"]


# -- claim rules (synthetic results: the verdicts must be able to fail) -----------------------

def _fit(method, target, seed, rel_l2, image_psnr=40.0, budget="12x4"):
    return Result(trial=Trial(method, target, seed, {"target": target, "budget": budget}),
                  metrics={"rel_l2": rel_l2, "kernel_psnr": 30.0, "image_psnr": image_psnr,
                           "taps": 48})


def _timing_result(ratio, pairs=6):
    lr = math.log(ratio)
    return Result(trial=Trial("timing", "ring", 0, {}),
                  metrics={"fit_ratio": ratio, "fit_log_ratio_mean": lr,
                           "fit_log_ratio_sd": 0.05, "fit_pairs": pairs, "fit_a_s": ratio,
                           "fit_b_s": 1.0})


_CFG = dict(seeds=4, targets=("ring", "heart"))


def _claim_a_results(disk_err, sa_err, ratio):
    rs = [_timing_result(ratio)]
    for t in ("ring", "heart"):
        for s in range(4):
            rs += [_fit("disk_ss", t, s, disk_err + 0.01 * s),
                   _fit("sa_ss", t, s, sa_err + 0.01 * s)]
    return rs


def test_claim_a_needs_a_clear_error_gain_and_the_interleaved_time():
    from optzoo.imaging.reproduce.sparse_kernel_decomposition import DiskConfig, _claim_a

    cfg = DiskConfig(**_CFG)
    assert _claim_a(_claim_a_results(0.10, 0.20, 0.5), cfg, "12x4").status == "held"
    # a tie in the error never passes
    tie = _claim_a(_claim_a_results(0.20, 0.20, 0.5), cfg, "12x4")
    assert tie.status == "not held"
    # a gain below the minimal effect (2 % lower error) does not count
    small = _claim_a(_claim_a_results(0.196, 0.20, 0.5), cfg, "12x4")
    assert small.status == "not held"
    # better errors but twice the wall time measured interleaved: not held
    slow = _claim_a(_claim_a_results(0.10, 0.20, 2.0), cfg, "12x4")
    assert slow.status == "not held"
    assert dict(slow.verdict.cells)["wall time"].test == "ratio_bound"
    # without the timing trial the claim cannot be decided
    no_time = [r for r in _claim_a_results(0.10, 0.20, 0.5) if r.trial.method != "timing"]
    assert _claim_a(no_time, cfg, "12x4").status == "inconclusive"


def test_claim_e_decides_the_2d_gaps_exactly_against_one_db():
    from optzoo.imaging.reproduce.sparse_kernel_decomposition import DiskConfig, _claim_e

    cfg = DiskConfig(**_CFG)

    def results(kg, ig):
        return [Result(trial=Trial("sv2d_independent", "rotational_bokeh", 0, {}),
                       metrics={"kernel_gap": kg, "image_gap": ig, "grid_points": 15,
                                "anchor_points": 6, "image_psnr_fitted": 40.0,
                                "image_psnr_interp": 40.0 - ig})]

    assert _claim_e(results(0.4, 0.2), cfg).status == "held"
    assert _claim_e(results(1.4, 0.2), cfg).status == "not held"
    assert _claim_e([], cfg).status == "inconclusive"


def _lowrank(target, psnrs, side=33):
    return Result(trial=Trial("lowrank", target, 0, {"target": target}),
                  metrics={"kernel_side": side, **{f"image_psnr_r{r}": v
                                                   for r, v in enumerate(psnrs, start=1)}})


def test_claim_b_tests_the_rank_below_the_cost_level_with_a_minimal_effect():
    from optzoo.imaging.reproduce.sparse_kernel_decomposition import (
        DiskConfig,
        _claim_b,
        _rank_below,
    )

    cfg = DiskConfig(**_CFG, max_rank=4)
    # M = 33, 12x4 = 48 taps: rank 2 costs 2.75×, rank 3 4.1× DISK's taps
    assert _rank_below(cfg, 33, "12x4") == 2

    def results(disk):
        rs = [_lowrank(t, [30.0, 38.0, 45.0, 50.0]) for t in ("ring", "heart")]
        rs += [_fit("disk_ss", t, s, 0.1, image_psnr=disk + 0.05 * s)
               for t in ("ring", "heart") for s in range(4)]
        return rs

    assert _claim_b(results(40.0), cfg, "12x4").status == "held"
    # DISK only 0.1 dB above rank 2 (the old rule counted it): inside the 0.5 dB minimal effect
    assert _claim_b(results(37.95), cfg, "12x4").status == "not held"
    assert _claim_b(results(36.0), cfg, "12x4").status == "not held"


def test_claim_c_a_no_op_initialisation_order_is_not_held():
    from optzoo.imaging.reproduce.sparse_kernel_decomposition import DiskConfig, _claim_c

    cfg = DiskConfig(**_CFG)

    def results(ss, ir, rnd):
        rs = []
        for t in ("ring", "heart"):
            rs.append(_fit("disk_ir", t, 0, ir))
            for s in range(4):
                rs += [_fit("disk_ss", t, s, ss * (1 + 0.01 * s)),
                       _fit("disk_random", t, s, rnd * (1 + 0.01 * s))]
        return rs

    assert _claim_c(results(0.10, 0.15, 0.25), cfg, "12x4").status == "held"
    assert _claim_c(results(0.15, 0.15, 0.15), cfg, "12x4").status == "not held"
    assert _claim_c(results(0.10, 0.15, 0.10), cfg, "12x4").status == "not held"


def test_claim_d_needs_the_ci_of_the_gap_below_one_db():
    from optzoo.imaging.reproduce.sparse_kernel_decomposition import DiskConfig, _claim_d

    cfg = DiskConfig(**_CFG)

    def results(gaps):
        return [Result(trial=Trial("sv_independent", "motorcycle", s, {}),
                       metrics={"kernel_gap": g, "image_gap": 0.2}) for s, g in enumerate(gaps)]

    assert _claim_d(results([0.2, 0.3, 0.25, 0.35]), cfg).status == "held"
    # mean 0.9 dB passed the old rule; with this spread its CI reaches past 1 dB
    assert _claim_d(results([0.1, 1.7, 0.2, 1.6]), cfg).status == "inconclusive"
    assert _claim_d(results([1.5, 1.6, 1.7, 1.55]), cfg).status == "not held"


# -- benchmark ---------------------------------------------------------------------------------

def test_benchmark_rows_run_at_tiny_size(monkeypatch):
    path = REPO / "benchmarks" / "bench_imaging.py"
    spec = importlib.util.spec_from_file_location("_bench_imaging_tiny", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, value in (("RADIUS", 4), ("SIZE", 48), ("STEPS", 5), ("MAX_RANK", 3),
                        ("BLOCKS", 1), ("REPEATS", 1), ("WARMUP", 0)):
        monkeypatch.setattr(module, name, value)
    for fn in module.BENCHMARKS:
        row = fn()
        assert {"name", "method", "peer", "method_s", "peer_s"} <= set(row)
        assert row["method_s"] > 0 and row["peer_s"] > 0
