"""Problems of the ``graphs`` area: kernels, point clouds, move streams and the exact kernel graph.

The kernel graph of points x_1..x_n ⊂ R^d and a kernel K(x, y) = f(‖x − y‖²) is the complete graph
with w_ij = K(x_i, x_j); its Laplacian is L_G = D − W (Cao, Jin, Li, Song, Sun & Weinstein,
"Dynamic Kernel Graph Sparsifiers", ICLR 2026, arXiv 2211.14825, OpenReview DjtJV3ke1j, §1–2).
The exact Laplacian is O(n²): :func:`kernel_laplacian` forms it densely (n ≤ a few thousand),
:func:`kernel_laplacian_matvec` applies it in row blocks without storing it (n up to ~32k).

Kernels are (C, L)-multiplicatively Lipschitz in the paper's sense when f(c·t) ∈ [c^{-L}, c^L]·f(t)
for c ∈ [1/C, C]: :class:`InversePolynomialKernel` f(t) = (1 + t/σ²)^{-q} is (any C, q)-Lipschitz;
:class:`GaussianKernel` f(t) = exp(−t/σ²) is not (its weight ratio over a distance range
[a, b] is exp((b² − a²)/σ²)), which the sparsifier handles by taking that ratio into its sample
sizes — far pairs of a Gaussian graph are then kept exactly.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from optzoo.checks import check_int, check_real

MOVE_KINDS = ("jitter", "teleport", "densest", "mixed")


# -- kernels -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class InversePolynomialKernel:
    """K(x, y) = (1 + ‖x − y‖²/σ²)^{-q}: heavy-tailed, multiplicatively Lipschitz with L = q.

    Args:
        sigma: length scale σ > 0.
        q: decay power q > 0 (the brief's default is 2).
    """

    sigma: float = 1.0
    q: float = 2.0

    def __post_init__(self) -> None:
        check_real("sigma", self.sigma, low=0.0, low_open=True)
        check_real("q", self.q, low=0.0, low_open=True)
        if not self.sigma > 0:
            raise ValueError(f"sigma: expected > 0, got {self.sigma}")
        if not self.q > 0:
            raise ValueError(f"q: expected > 0, got {self.q}")

    def profile(self, sqdist: np.ndarray) -> np.ndarray:
        """f(t) at squared distances t."""
        return (1.0 + np.asarray(sqdist, dtype=float) / self.sigma**2) ** (-self.q)

    def ratio(self, dmin: float, dmax: float) -> float:
        """max/min of the weight over distances in [dmin, dmax]: f(dmin²)/f(dmax²) ≥ 1."""
        return float(((1.0 + dmax**2 / self.sigma**2) / (1.0 + dmin**2 / self.sigma**2))
                     ** self.q)

    def __call__(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Row-wise K(x_r, y_r) of two (m, d) arrays."""
        diff = np.asarray(x, dtype=float) - np.asarray(y, dtype=float)
        return self.profile(np.einsum("ij,ij->i", diff, diff))


@dataclass(frozen=True)
class GaussianKernel:
    """K(x, y) = exp(−‖x − y‖²/σ²).  Not multiplicatively Lipschitz for far pairs (see module).

    Args:
        sigma: length scale σ > 0.
    """

    sigma: float = 1.0

    def __post_init__(self) -> None:
        check_real("sigma", self.sigma, low=0.0, low_open=True)
        if not self.sigma > 0:
            raise ValueError(f"sigma: expected > 0, got {self.sigma}")

    def profile(self, sqdist: np.ndarray) -> np.ndarray:
        return np.exp(-np.asarray(sqdist, dtype=float) / self.sigma**2)

    def ratio(self, dmin: float, dmax: float) -> float:
        # capped so that an astronomically large ratio stays a finite float (it only ever
        # makes the pair exact)
        return float(math.exp(min((dmax**2 - dmin**2) / self.sigma**2, 700.0)))

    def __call__(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        diff = np.asarray(x, dtype=float) - np.asarray(y, dtype=float)
        return self.profile(np.einsum("ij,ij->i", diff, diff))


Kernel = InversePolynomialKernel | GaussianKernel


def check_kernel(kernel: object) -> object:
    """``kernel`` must be a kernel object of this module's kind: callable row-wise on two (m, d)
    arrays, with ``profile(sqdist)`` (f at squared distances) and ``ratio(dmin, dmax)`` (the
    max/min weight over a distance range).  A plain function, a string or a dense matrix is
    rejected with a :class:`TypeError` naming ``kernel``."""
    missing = [a for a in ("profile", "ratio") if not callable(getattr(kernel, a, None))]
    if missing or not callable(kernel):
        raise TypeError(
            f"kernel: expected a kernel object with row-wise __call__(x, y), profile(sqdist) "
            f"and ratio(dmin, dmax) (e.g. InversePolynomialKernel or GaussianKernel), got "
            f"{type(kernel).__name__}" + (f" without {', '.join(missing)}" if missing else ""))
    return kernel


def make_kernel(name: str, sigma: float) -> Kernel:
    """``"invpoly"`` (q = 2) or ``"gaussian"`` with length scale ``sigma``.

    Example:
        The reproduction's kernels by name; a kernel is row-wise on two ``(m, d)`` arrays:

        >>> import numpy as np
        >>> from optzoo.graphs import SpectralSparsifier, gaussian_mixture, make_kernel
        >>> make_kernel("gaussian", 0.5)
        GaussianKernel(sigma=0.5)
        >>> kernel = make_kernel("invpoly", 1.0)
        >>> kernel(np.zeros((2, 2)), np.array([[1.0, 0.0], [1.0, 1.0]]))   # (1 + ‖x − y‖²)^-2
        array([0.25      , 0.11111111])
        >>> x = gaussian_mixture(400, 2, centers=4, seed=0)
        >>> h = SpectralSparsifier(x, kernel, eps=0.5, separation=2.0, oversample=0.02, seed=0)
        >>> h.laplacian().shape, h.num_edges() < 400 * 399 // 2
        ((400, 400), True)
    """
    if name == "invpoly":
        return InversePolynomialKernel(sigma=sigma, q=2.0)
    if name == "gaussian":
        return GaussianKernel(sigma=sigma)
    raise ValueError(f"kernel: expected 'invpoly' or 'gaussian', got {name!r}")


# -- the exact kernel graph --------------------------------------------------------------------

def _check_points(points: np.ndarray) -> np.ndarray:
    x = np.asarray(points, dtype=float)
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError(f"points: expected an (n, d) array with n >= 2, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("points: expected finite coordinates, got NaN or Inf")
    return x


def kernel_matrix(points: np.ndarray, kernel: Kernel) -> np.ndarray:
    """Dense W with W_ij = K(x_i, x_j) for i ≠ j and zero diagonal (O(n²) memory)."""
    x = _check_points(points)
    sq = np.einsum("ij,ij->i", x, x)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * x @ x.T, 0.0)
    w = kernel.profile(d2)
    np.fill_diagonal(w, 0.0)
    return w


def kernel_laplacian(points: np.ndarray, kernel: Kernel) -> np.ndarray:
    """Dense L_G = D − W of the complete kernel graph."""
    w = kernel_matrix(points, kernel)
    return np.diag(w.sum(axis=1)) - w


def kernel_laplacian_matvec(points: np.ndarray, kernel: Kernel, v: np.ndarray,
                            block: int = 1024) -> np.ndarray:
    """L_G v (v of shape (n,) or (n, k)) in row blocks: O(n²) time, O(block·n) memory."""
    x = _check_points(points)
    v = np.asarray(v, dtype=float)
    if v.shape[0] != x.shape[0]:
        raise ValueError(f"v: expected leading dimension {x.shape[0]}, got {v.shape}")
    sq = np.einsum("ij,ij->i", x, x)
    out = np.empty_like(v)
    for s in range(0, x.shape[0], block):
        e = min(s + block, x.shape[0])
        d2 = np.maximum(sq[s:e, None] + sq[None, :] - 2.0 * x[s:e] @ x.T, 0.0)
        w = kernel.profile(d2)
        w[np.arange(e - s), np.arange(s, e)] = 0.0
        deg = w.sum(axis=1)
        out[s:e] = (deg[:, None] * v[s:e] if v.ndim == 2 else deg * v[s:e]) - w @ v
    return out


# -- point clouds ------------------------------------------------------------------------------

def gaussian_mixture(n: int, d: int, centers: int = 5, spread: float = 1.0,
                     seed: int = 0) -> np.ndarray:
    """Points of ``centers`` isotropic Gaussian blobs with standard deviation ``spread``, centres
    uniform in [−10, 10]^d, sizes as equal as possible (the model of scikit-learn's
    ``make_blobs``, drawn with NumPy so that no scikit-learn import is paid per trial)."""
    check_int("n", n)
    check_int("d", d)
    check_int("centers", centers, low=1)
    check_real("spread", spread, low=0.0, low_open=True)
    if n < 2 or d < 1:
        raise ValueError(f"n, d: expected n >= 2 and d >= 1, got n={n}, d={d}")
    rng = np.random.default_rng(seed)
    c = rng.uniform(-10.0, 10.0, size=(centers, d))
    label = np.arange(n) % centers
    return c[label] + spread * rng.standard_normal((n, d))


def swiss_roll(n: int, seed: int = 0, noise: float = 0.05) -> np.ndarray:
    """Points of the 3-D swiss roll (scikit-learn's ``make_swiss_roll`` model:
    t = 1.5π(1 + 2u), (t cos t, 21 v, t sin t) + noise, u, v ~ U[0, 1])."""
    check_int("n", n, low=2)
    check_real("noise", noise, low=0.0)
    rng = np.random.default_rng(seed)
    t = 1.5 * np.pi * (1.0 + 2.0 * rng.random(n))
    x = np.stack([t * np.cos(t), 21.0 * rng.random(n), t * np.sin(t)], axis=1)
    return x + noise * rng.standard_normal((n, 3))


def make_points(name: str, n: int, d: int, seed: int) -> np.ndarray:
    """``"blobs"`` (d-dimensional mixture of 5 blobs) or ``"swissroll"`` (d must be 3)."""
    if name == "blobs":
        return gaussian_mixture(n, d, seed=seed)
    if name == "swissroll":
        if d != 3:
            raise ValueError(f"d: the swiss roll is 3-dimensional, got d={d}")
        return swiss_roll(n, seed=seed)
    raise ValueError(f"points: expected 'blobs' or 'swissroll', got {name!r}")


def padded_bounds(points: np.ndarray, pad: float = 0.25) -> tuple[np.ndarray, np.ndarray]:
    """The bounding box of ``points`` widened by ``pad`` times its extent on every side."""
    x = _check_points(points)
    check_real("pad", pad, low=0.0)
    lo, hi = x.min(axis=0), x.max(axis=0)
    ext = np.maximum(hi - lo, 1e-12)
    return lo - pad * ext, hi + pad * ext


# -- move streams ------------------------------------------------------------------------------

def move_stream(points: np.ndarray, moves: int, kind: str, seed: int,
                bounds: tuple[np.ndarray, np.ndarray] | None = None,
                jitter: float = 0.5, grid: int = 8) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``moves`` point moves (i, x_new) and apply them to a private copy of ``points``.

    Kinds (the brief's three, and their mix):
      * ``jitter``: a random point moves by N(0, jitter²·I);
      * ``teleport``: a random point jumps onto another random point's position (+ small noise),
        i.e. across clusters;
      * ``densest``: a random point jumps into the currently densest cell of a ``grid``^d
        histogram (adversarial-ish: it grows the largest pairs).  It looks at the points only,
        never at the sparsifier's random samples, so the stream stays oblivious;
      * ``mixed``: each move picks one of the three uniformly.

    New positions are clipped into ``bounds`` (default: :func:`padded_bounds` of ``points``) so
    that they stay inside a split tree's root box.
    """
    if kind not in MOVE_KINDS:
        raise ValueError(f"kind: expected one of {MOVE_KINDS}, got {kind!r}")
    if moves < 0:
        raise ValueError(f"moves: expected >= 0, got {moves}")
    x = _check_points(points).copy()
    n, d = x.shape
    lo, hi = padded_bounds(x) if bounds is None else (np.asarray(bounds[0], dtype=float),
                                                      np.asarray(bounds[1], dtype=float))
    rng = np.random.default_rng(seed)
    kinds = ("jitter", "teleport", "densest")
    for _ in range(moves):
        k = kinds[rng.integers(3)] if kind == "mixed" else kind
        i = int(rng.integers(n))
        if k == "jitter":
            new = x[i] + jitter * rng.standard_normal(d)
        elif k == "teleport":
            j = int(rng.integers(n))
            new = x[j] + 0.05 * jitter * rng.standard_normal(d)
        else:
            plo, phi = x.min(axis=0), x.max(axis=0)
            cells = np.clip(((x - plo) / np.maximum(phi - plo, 1e-12) * grid).astype(int), 0,
                            grid - 1)
            codes = np.ravel_multi_index(cells.T, (grid,) * d)
            best = np.bincount(codes).argmax()
            cell = np.array(np.unravel_index(best, (grid,) * d), dtype=float)
            width = (phi - plo) / grid
            new = plo + (cell + rng.random(d)) * width
        new = np.clip(new, lo, hi)
        x[i] = new
        yield i, new.copy()
