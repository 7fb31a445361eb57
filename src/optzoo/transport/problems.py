"""Benchmark problems and metrics of the ``transport`` area (brief of ``hj-optimal-transport``).

* Gaussians with the closed-form OT map (the stand-in for the Korotin et al. 2021 W2 benchmark):
  random means and SPD covariances of condition number ≤ ``cond_max``;
  T*(x) = m₂ + A(x − m₁), A = Σ₁^{-½}(Σ₁^{½} Σ₂ Σ₁^{½})^{½} Σ₁^{-½}, and the Bures–Wasserstein
  distance W₂² = ‖m₁ − m₂‖² + tr Σ₁ + tr Σ₂ − 2 tr (Σ₁^{½} Σ₂ Σ₁^{½})^{½}.
* 2-D toys: 8 Gaussians on a circle, two moons (scikit-learn's generator), checkerboard.
* Colour transfer: RGB pixels in [0, 1]³ of the scikit-image photos (shipped with the package,
  no download), e.g. ``astronaut`` → ``coffee``.
* Metrics: L²-UVP (Korotin et al., "Do Neural Optimal Transport Solvers Work? A Continuous
  Wasserstein-2 Benchmark", NeurIPS 2021, Eq. 13):
  L²-UVP(T̂) = 100 · ‖T̂ − T*‖²_{L²(μ)} / Var(ν) %, with Var(ν) = E‖Y − EY‖²; colour-histogram
  intersection; the squared energy distance (as in the method's loss, NumPy here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import sqrtm
from scipy.spatial.distance import cdist

from optzoo.checks import check_finite_array, check_generator, check_int, check_real

# -- Gaussians --------------------------------------------------------------------------------


def _sqrtm_spd(S: np.ndarray) -> np.ndarray:
    w, V = np.linalg.eigh((S + S.T) / 2)
    return (V * np.sqrt(np.clip(w, 0, None))) @ V.T


@dataclass(frozen=True)
class GaussianPair:
    """Source N(m1, S1) and target N(m2, S2) with the OT map T*(x) = A x + b."""

    m1: np.ndarray
    S1: np.ndarray
    m2: np.ndarray
    S2: np.ndarray

    @property
    def dim(self) -> int:
        return self.m1.shape[0]

    def sample_source(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.multivariate_normal(self.m1, self.S1, size=n, method="cholesky")

    def sample_target(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.multivariate_normal(self.m2, self.S2, size=n, method="cholesky")

    def map_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        return gaussian_map(self.m1, self.S1, self.m2, self.S2)

    def forward(self, X: np.ndarray) -> np.ndarray:
        """T*(x) = m₂ + A(x − m₁), rows of ``X``."""
        A, b = self.map_matrix()
        return X @ A.T + b

    def inverse(self, Y: np.ndarray) -> np.ndarray:
        """T*⁻¹(y) = A⁻¹(y − b), the OT map ν → μ."""
        A, b = self.map_matrix()
        return np.linalg.solve(A, (Y - b).T).T

    def w2_squared(self) -> float:
        return bures_wasserstein_squared(self.m1, self.S1, self.m2, self.S2)

    def target_variance(self) -> float:
        return float(np.trace(self.S2))

    def source_variance(self) -> float:
        return float(np.trace(self.S1))


def random_spd(d: int, cond_max: float, rng: np.random.Generator) -> np.ndarray:
    """Q diag(λ) Qᵀ with Q Haar-orthogonal and log λ uniform on [0, log cond_max] (so the
    condition number is ≤ cond_max)."""
    check_int("d", d, low=1)
    check_real("cond_max", cond_max, low=1.0)
    check_generator("rng", rng)
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    Q = Q * np.sign(np.diag(R))
    lam = np.exp(rng.uniform(0.0, np.log(cond_max), size=d))
    return (Q * lam) @ Q.T


def gaussian_pair(d: int, seed: int, cond_max: float = 10.0,
                  mean_scale: float = 1.0) -> GaussianPair:
    """A random pair: means N(0, mean_scale² I), covariances :func:`random_spd`."""
    rng = np.random.default_rng(seed)
    return GaussianPair(m1=mean_scale * rng.standard_normal(d), S1=random_spd(d, cond_max, rng),
                        m2=mean_scale * rng.standard_normal(d), S2=random_spd(d, cond_max, rng))


def gaussian_map(m1, S1, m2, S2) -> tuple[np.ndarray, np.ndarray]:
    """(A, b) of the OT map x ↦ A x + b from N(m1, S1) to N(m2, S2):
    A = Σ₁^{-½}(Σ₁^{½} Σ₂ Σ₁^{½})^{½} Σ₁^{-½}, b = m₂ − A m₁ (``S1`` positive definite,
    ``S2`` positive semi-definite).

    Example::

        >>> import numpy as np
        >>> from optzoo.transport import gaussian_map
        >>> A, b = gaussian_map(np.zeros(2), np.eye(2), np.ones(2), 4 * np.eye(2))
        >>> np.diag(A), b
        (array([2., 2.]), array([1., 1.]))
    """
    d = _check_gaussian(m1, S1, "m1", "S1", definite=True)
    _check_gaussian(m2, S2, "m2", "S2", d)
    S1, S2 = np.asarray(S1, float), np.asarray(S2, float)
    r = _sqrtm_spd(S1)
    ri = np.linalg.inv(r)
    A = ri @ _sqrtm_spd(r @ S2 @ r) @ ri
    A = (A + A.T) / 2
    return A, np.asarray(m2, float) - A @ np.asarray(m1, float)


def _check_gaussian(m, S, mname: str, sname: str, d: int | None = None,
                    definite: bool = False) -> int:
    """A mean (d,) and a symmetric positive semi-definite (definite: positive definite)
    covariance (d, d), finite; returns d."""
    m = check_finite_array(mname, m, ndim=1)
    S = check_finite_array(sname, S, ndim=2)
    d = m.shape[0] if d is None else d
    if m.shape != (d,):
        raise ValueError(f"{mname}: expected shape ({d},), got {m.shape}")
    if S.shape != (d, d):
        raise ValueError(f"{sname}: expected shape ({d}, {d}), got {S.shape}")
    scale = max(1.0, float(np.abs(S).max(initial=0.0)))
    if not np.allclose(S, S.T, rtol=1e-8, atol=1e-10 * scale):
        raise ValueError(f"{sname}: expected a symmetric covariance matrix")
    lam_min = float(np.linalg.eigvalsh((S + S.T) / 2).min(initial=np.inf))
    if lam_min < -1e-10 * scale or (definite and lam_min <= 0):
        kind = "positive definite" if definite else "positive semi-definite"
        raise ValueError(f"{sname}: expected a {kind} covariance, got smallest eigenvalue "
                         f"{lam_min:.3g}")
    return d


def bures_wasserstein_squared(m1, S1, m2, S2) -> float:
    """W₂²(N(m1, S1), N(m2, S2)) in closed form.

    ``m1``, ``m2`` are means ``(d,)``; ``S1``, ``S2`` symmetric positive semi-definite
    covariances ``(d, d)`` (``ValueError`` naming the argument otherwise).

    Example::

        >>> import numpy as np
        >>> from optzoo.transport import bures_wasserstein_squared
        >>> bures_wasserstein_squared(np.zeros(2), np.eye(2), np.ones(2), 4 * np.eye(2))
        4.0
    """
    d = _check_gaussian(m1, S1, "m1", "S1")
    _check_gaussian(m2, S2, "m2", "S2", d)
    r = _sqrtm_spd(np.asarray(S1, float))
    cross = np.real(sqrtm(r @ np.asarray(S2, float) @ r))
    return float(np.sum((np.asarray(m1) - np.asarray(m2)) ** 2) + np.trace(S1) + np.trace(S2)
                 - 2 * np.trace(cross))


# -- 2-D toys ----------------------------------------------------------------------------------

TOYS = ("8gaussians", "moons", "checkerboard")


def toy_2d(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` points of a 2-D toy distribution, shape (n, 2), roughly within [−2.5, 2.5]²."""
    if name == "8gaussians":
        centers = 2.0 * np.stack([np.cos(np.arange(8) * np.pi / 4),
                                  np.sin(np.arange(8) * np.pi / 4)], 1)
        return centers[rng.integers(0, 8, n)] + 0.2 * rng.standard_normal((n, 2))
    if name == "moons":
        from sklearn.datasets import make_moons

        x, _ = make_moons(n, noise=0.05, random_state=int(rng.integers(2**31 - 1)))
        return 1.5 * (x - np.array([0.5, 0.25]))
    if name == "checkerboard":
        x1 = rng.uniform(-2, 2, n)
        x2 = rng.uniform(0, 1, n) - 2 * rng.integers(0, 2, n) + np.floor(x1) % 2
        return np.stack([x1, x2], 1)  # FFJORD's board, not doubled: [−2, 2]²
    raise ValueError(f"name: expected one of {TOYS}, got {name!r}")


# -- colour transfer ------------------------------------------------------------------------

IMAGES = ("astronaut", "coffee", "chelsea", "rocket", "hubble_deep_field", "immunohistochemistry")


def image_pixels(name: str) -> np.ndarray:
    """All RGB pixels of the scikit-image photo ``name`` as floats in [0, 1], shape (h·w, 3)."""
    if name not in IMAGES:
        raise ValueError(f"name: expected one of {IMAGES}, got {name!r}")
    from skimage import data

    img = getattr(data, name)()
    return img[..., :3].reshape(-1, 3).astype(np.float64) / 255.0


def colour_clouds(source: str, target: str, n: int, rng: np.random.Generator,
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random pixels (without replacement) of each photo: the colour point clouds."""
    xs, xt = image_pixels(source), image_pixels(target)
    if not 1 <= n <= min(len(xs), len(xt)):
        raise ValueError(f"n: expected 1..{min(len(xs), len(xt))}, got {n}")
    return (xs[rng.choice(len(xs), n, replace=False)],
            xt[rng.choice(len(xt), n, replace=False)])


def colour_histogram(pixels: np.ndarray, bins: int = 16) -> np.ndarray:
    """Normalised 3-D histogram of RGB values in [0, 1] (values outside are clipped)."""
    h, _ = np.histogramdd(np.clip(pixels, 0.0, 1.0), bins=bins, range=[(0.0, 1.0)] * 3)
    return h / h.sum()


def histogram_intersection(a: np.ndarray, b: np.ndarray, bins: int = 16) -> float:
    """Σ min(h_a, h_b) of the normalised colour histograms of two pixel sets (1 = identical)."""
    return float(np.minimum(colour_histogram(a, bins), colour_histogram(b, bins)).sum())


# -- metrics ------------------------------------------------------------------------------------

def l2_uvp(predicted: np.ndarray, reference: np.ndarray, target_variance: float) -> float:
    """L²-UVP in % (Korotin et al. 2021): 100 · mean_i ‖T̂(x_i) − T*(x_i)‖² / Var(ν).

    Args:
        predicted: T̂(x_i), shape (n, d).
        reference: T*(x_i) at the same points, shape (n, d).
        target_variance: Var(ν) = E‖Y − EY‖² = tr Σ_ν of the target measure.
    """
    predicted = check_finite_array("predicted", predicted)
    reference = check_finite_array("reference", reference)
    check_real("target_variance", target_variance, low=0.0, low_open=True)
    if predicted.shape != reference.shape or predicted.ndim != 2:
        raise ValueError(f"predicted, reference: expected equal shapes (n, d), got "
                         f"{predicted.shape} and {reference.shape}")
    if not target_variance > 0:
        raise ValueError(f"target_variance: expected > 0, got {target_variance}")
    return float(100.0 * np.mean(np.sum((predicted - reference) ** 2, 1)) / target_variance)


def energy_distance_np(x: np.ndarray, y: np.ndarray) -> float:
    """Squared energy distance 2E‖X − Y‖ − E‖X − X'‖ − E‖Y − Y'‖ (V-statistic) of point
    clouds ``x (n, d)`` and ``y (m, d)``.

    Example::

        >>> import numpy as np
        >>> from optzoo.transport import energy_distance_np
        >>> energy_distance_np(np.zeros((3, 2)), np.zeros((4, 2)))
        0.0
    """
    x, y = check_finite_array("x", x, ndim=2), check_finite_array("y", y, ndim=2)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"x, y: expected the same dimension d, got x (n, {x.shape[1]}) and "
                         f"y (m, {y.shape[1]})")
    if x.shape[0] < 1 or y.shape[0] < 1:
        raise ValueError(f"x, y: expected at least one point each, got {x.shape[0]}, "
                         f"{y.shape[0]}")
    return float(2 * cdist(x, y).mean() - cdist(x, x).mean() - cdist(y, y).mean())
