"""Target kernels and test images of the DISK reproduction (Wu, Cao & Huo, "DISK: Differentiable
Sparse Kernel Complex for Efficient Spatially-Variant Convolution", ICLR 2026, OpenReview
``bbuxDoRD2D``).

Kernels are generated analytically in NumPy on an odd ``(2R+1) x (2R+1)`` grid whose centre pixel
is the origin; they are non-negative and sum to one (the brief's normalisation pitfall).  Binary
shapes are anti-aliased by ``SUPERSAMPLE x SUPERSAMPLE`` sub-pixel coverage, so a shape's
discretisation error does not dominate the approximation errors being compared.  Rows are ``y``
pointing *down*, columns ``x`` pointing right (image convention); asymmetric shapes (heart, coma,
motion) are defined in that frame.

Images come from the scikit-image wheel (no download): ``camera``, ``astronaut``, ``chelsea``,
``coffee`` and the ``stereo_motorcycle`` pair with its disparity map.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

SUPERSAMPLE = 8
SUPPORT_LEVEL = 1e-2  # a pixel is in a kernel's support when it exceeds this fraction of the peak

PHOTOS = ("camera", "astronaut", "chelsea", "coffee")
GAUSSIAN_SIGMAS = (5.0, 7.0, 9.0, 11.0)
SHAPES = ("disc", "ring", "square", "hexagon", "heart", "star4", "coma", "motion")
NON_CONVEX = ("ring", "heart", "star4")


def _check_radius(radius: int) -> None:
    if not isinstance(radius, (int, np.integer)) or radius < 2:
        raise ValueError(f"radius: expected an integer >= 2, got {radius!r}")


def _coverage(radius: int, inside: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Fraction of each pixel of the ``(2R+1)^2`` grid covered by ``inside(x, y)``; ``x``, ``y``
    are in units of ``radius`` (the shape's circumradius is 1)."""
    n, s = 2 * radius + 1, SUPERSAMPLE
    sub = (np.arange(n * s) + 0.5) / s - 0.5 - radius  # pixel-centre coordinates of sub-samples
    x, y = np.meshgrid(sub / radius, sub / radius)
    mask = inside(x, y).astype(float)
    return mask.reshape(n, s, n, s).mean(axis=(1, 3))


def _normalised(k: np.ndarray) -> np.ndarray:
    total = k.sum()
    if not total > 0:
        raise ValueError("kernel is empty on its grid")
    return k / total


def gaussian_kernel(sigma: float, radius: int | None = None) -> np.ndarray:
    """Isotropic Gaussian of standard deviation ``sigma`` px, sampled at pixel centres on a grid of
    half-width ``radius`` (default ``max(24, ceil(4 sigma))``, i.e. the brief's 49–97 px grids)."""
    if not sigma > 0:
        raise ValueError(f"sigma: expected > 0, got {sigma!r}")
    radius = max(24, math.ceil(4 * sigma)) if radius is None else radius
    _check_radius(radius)
    t = np.arange(-radius, radius + 1, dtype=float)
    g = np.exp(-(t ** 2) / (2 * sigma ** 2))
    return _normalised(np.outer(g, g))


def disc_kernel(radius: float, grid: int | None = None) -> np.ndarray:
    """Uniform (bokeh) disc of radius ``radius`` px (real, >= 0.5), anti-aliased, on a grid of
    half-width ``grid`` (default ``ceil(radius) + 1``)."""
    if not radius >= 0.5:
        raise ValueError(f"radius: expected >= 0.5, got {radius!r}")
    grid = math.ceil(radius) + 1 if grid is None else grid
    _check_radius(max(grid, 2))
    scale = radius / grid
    return _normalised(_coverage(grid, lambda x, y: (x * x + y * y) <= scale * scale))


def _polygon(n: int, rotation: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def inside(x, y):
        ok = np.ones_like(x, dtype=bool)
        apothem = math.cos(math.pi / n)
        for k in range(n):
            a = rotation + 2 * math.pi * (k + 0.5) / n
            ok &= x * math.cos(a) + y * math.sin(a) <= apothem
        return ok
    return inside


def _heart(x, y):
    # the classical implicit heart, y up; scaled so that it fits the unit box
    u, v = 1.15 * x, -1.15 * y + 0.15
    return (u * u + v * v - 1) ** 3 - u * u * v ** 3 <= 0


def _coma(radius: int) -> np.ndarray:
    """Seidel coma spot diagram: pupil (ρ, θ) maps to x = Bρ²(2 + cos 2θ), y = Bρ² sin 2θ; the
    pupil is sampled on a regular polar grid (uniform area weight), splatted bilinearly and then
    smoothed by a 1-px Gaussian (diffraction stand-in)."""
    n = 2 * radius + 1
    b = (2 * radius - 2) / 3.0  # x spans [0, 3B]: centre the flare on the grid
    rho = np.sqrt((np.arange(400) + 0.5) / 400)
    theta = 2 * np.pi * (np.arange(720) + 0.5) / 720
    r2 = (rho ** 2)[:, None]
    x = b * r2 * (2 + np.cos(2 * theta))[None, :] - 1.5 * b + radius
    y = b * r2 * np.sin(2 * theta)[None, :] + radius
    k = np.zeros((n, n))
    x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
    fx, fy = x - x0, y - y0
    for dy, dx, w in ((0, 0, (1 - fy) * (1 - fx)), (0, 1, (1 - fy) * fx), (1, 0, fy * (1 - fx)),
                      (1, 1, fy * fx)):
        np.add.at(k, (np.clip(y0 + dy, 0, n - 1), np.clip(x0 + dx, 0, n - 1)), w)
    from scipy.ndimage import gaussian_filter

    return _normalised(gaussian_filter(k, 1.0, mode="constant"))


def shape_kernel(name: str, radius: int, angle: float = 0.0, size: float | None = None
                 ) -> np.ndarray:
    """One of :data:`SHAPES` with circumradius ``radius`` px on a ``(2R+1)^2`` grid.

    ``disc``, ``ring`` (inner radius 0.6 R), ``square`` (axis-aligned), ``hexagon``, ``heart``,
    ``star4`` (four-pointed star |x|^½ + |y|^½ ≤ 1), ``coma`` (Seidel coma PSF) and ``motion``
    (a 1-px wide linear-motion segment of length 2R at 30°).  ``angle`` (rad) rotates the shape
    about the centre (from +x towards +y, i.e. clockwise on screen with y down) — the kernels of
    rotational bokeh; ``size`` (px, at most ``radius``) draws the shape with that circumradius on
    the same grid (a family of sizes on one grid).  ``coma`` takes neither.
    """
    _check_radius(radius)
    if name == "coma" and (angle != 0.0 or size is not None):
        raise ValueError("angle, size: the coma PSF is drawn at its own size and orientation")
    if size is not None and not 1.0 <= size <= radius:
        raise ValueError(f"size: expected 1 <= size <= radius = {radius}, got {size!r}")
    scale = 1.0 if size is None else size / radius
    ca, sa = math.cos(angle), math.sin(angle)
    r = (radius - 0.5) / radius  # keep the anti-aliased edge inside the grid
    inside = {
        "disc": lambda x, y: x * x + y * y <= r * r,
        "ring": lambda x, y: (x * x + y * y <= r * r) & (x * x + y * y >= (0.6 * r) ** 2),
        "square": lambda x, y: (np.abs(x) <= r / math.sqrt(2)) & (np.abs(y) <= r / math.sqrt(2)),
        "hexagon": lambda x, y: _polygon(6, 0.0)(x / r, y / r),
        "heart": lambda x, y: _heart(x / r, y / r),
        "star4": lambda x, y: np.sqrt(np.abs(x / r)) + np.sqrt(np.abs(y / r)) <= 1.0,
        "motion": lambda x, y: (np.abs(-x * math.sin(math.pi / 6) + y * math.cos(math.pi / 6))
                                <= 0.5 / radius)
                               & (np.abs(x * math.cos(math.pi / 6) + y * math.sin(math.pi / 6))
                                  <= r),
    }
    if name == "coma":
        return _coma(radius)
    if name not in inside:
        raise ValueError(f"name: expected one of {SHAPES}, got {name!r}")
    f = inside[name]
    # the shape rotated by +angle and scaled: test the inverse-transformed point
    return _normalised(_coverage(radius, lambda x, y: f((ca * x + sa * y) / scale,
                                                        (-sa * x + ca * y) / scale)))


def motion_kernel(length: float, angle: float, grid: int | None = None) -> np.ndarray:
    """Linear motion blur: a 1-px wide segment of ``length`` px through the centre at ``angle``
    rad (from +x towards +y, y down), anti-aliased, unit sum, on a grid of half-width ``grid``
    (default ``ceil(length / 2) + 1``) — the kernels of radial blur, whose angle is the pixel's
    direction from the centre and whose length grows with the distance."""
    if not length >= 1.0:
        raise ValueError(f"length: expected >= 1, got {length!r}")
    grid = math.ceil(length / 2) + 1 if grid is None else grid
    _check_radius(grid)
    if length / 2 > grid - 0.5:
        raise ValueError(f"grid: expected >= {math.ceil(length / 2 + 0.5)} for length {length}, "
                         f"got {grid}")
    ca, sa = math.cos(angle), math.sin(angle)
    half, width = length / 2 / grid, 0.5 / grid
    return _normalised(_coverage(grid, lambda x, y: (np.abs(-sa * x + ca * y) <= width)
                                 & (np.abs(ca * x + sa * y) <= half)))


def target_names(radius: int) -> tuple[str, ...]:
    """Names accepted by :func:`target_kernel`: ``gauss{σ}`` for the paper's σ and the shapes."""
    del radius
    return tuple(f"gauss{int(s)}" for s in GAUSSIAN_SIGMAS) + SHAPES


def target_kernel(name: str, radius: int) -> np.ndarray:
    """A target by name: ``gauss5`` … ``gauss11`` (σ in px, grid half-width max(radius, ⌈4σ⌉))
    or a shape of :data:`SHAPES` with circumradius ``radius``."""
    if name.startswith("gauss"):
        try:
            sigma = float(name[5:])
        except ValueError:
            raise ValueError(f"name: expected gauss<sigma>, got {name!r}") from None
        return gaussian_kernel(sigma, max(radius, math.ceil(4 * sigma)))
    return shape_kernel(name, radius)


def support_mask(kernel: np.ndarray, level: float = SUPPORT_LEVEL) -> np.ndarray:
    """Pixels above ``level`` times the kernel's peak."""
    return np.asarray(kernel) > level * float(np.max(kernel))


def support_radius(kernel: np.ndarray, level: float = SUPPORT_LEVEL) -> float:
    """Largest Euclidean distance from the grid centre of a support pixel (>= 1)."""
    k = np.asarray(kernel)
    c = (np.array(k.shape) - 1) / 2
    ys, xs = np.nonzero(support_mask(k, level))
    return max(1.0, float(np.sqrt((ys - c[0]) ** 2 + (xs - c[1]) ** 2).max()))


# -- images ------------------------------------------------------------------------------------

def photo(name: str, size: int | None = None) -> np.ndarray:
    """A scikit-image photo as float64 in [0, 1], ``(H, W)`` (camera) or ``(H, W, 3)``; with
    ``size``, the central ``size x size`` crop."""
    import skimage.data

    if name not in PHOTOS + ("rocket",):
        raise ValueError(f"name: expected one of {PHOTOS + ('rocket',)}, got {name!r}")
    img = np.asarray(getattr(skimage.data, name)(), dtype=float) / 255.0
    if size is not None:
        if size < 8 or size > min(img.shape[:2]):
            raise ValueError(f"size: expected 8..{min(img.shape[:2])}, got {size}")
        y0, x0 = (img.shape[0] - size) // 2, (img.shape[1] - size) // 2
        img = img[y0:y0 + size, x0:x0 + size]
    return np.ascontiguousarray(img)


def motorcycle_defocus(r_min: float, r_max: float, focus_quantile: float = 0.5,
                       downscale: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``motorcycle_left`` (float RGB in [0, 1]) and a per-pixel defocus radius map from the
    shipped disparity: ``r = r_min + (r_max − r_min)·min(1, |d − d_f| / D)`` with ``d_f`` the
    ``focus_quantile`` of the valid disparities and ``D`` the 99th percentile of ``|d − d_f|``
    (thin-lens blur grows linearly with |disparity − disparity of the focal plane|).  Invalid
    (infinite) disparities take the value of the nearest valid pixel.  ``downscale`` > 1 averages
    ``downscale x downscale`` blocks of both."""
    import skimage.data
    from scipy.ndimage import distance_transform_edt

    if not 0 < r_min < r_max:
        raise ValueError(f"r_min, r_max: expected 0 < r_min < r_max, got {r_min}, {r_max}")
    if not 0.0 <= focus_quantile <= 1.0:
        raise ValueError(f"focus_quantile: expected in [0, 1], got {focus_quantile}")
    if downscale < 1:
        raise ValueError(f"downscale: expected >= 1, got {downscale}")
    left, _, disp = skimage.data.stereo_motorcycle()
    img = np.asarray(left, dtype=float) / 255.0
    disp = np.asarray(disp, dtype=float)
    bad = ~np.isfinite(disp)
    if bad.any():
        idx = distance_transform_edt(bad, return_distances=False, return_indices=True)
        disp = disp[tuple(idx)]
    if downscale > 1:
        h, w = (s // downscale * downscale for s in disp.shape)
        img = img[:h, :w].reshape(h // downscale, downscale, w // downscale, downscale, 3)
        img = img.mean(axis=(1, 3))
        disp = disp[:h, :w].reshape(h // downscale, downscale, w // downscale, downscale)
        disp = disp.mean(axis=(1, 3))
    d_f = float(np.quantile(disp, focus_quantile))
    dev = np.abs(disp - d_f)
    spread = max(float(np.percentile(dev, 99)), 1e-9)
    radius = r_min + (r_max - r_min) * np.minimum(1.0, dev / spread)
    return np.ascontiguousarray(img), radius
