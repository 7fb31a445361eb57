"""Dense convolution, the exact reference of the DISK reproduction (Wu, Cao & Huo, ICLR 2026,
OpenReview ``bbuxDoRD2D``): ``scipy.signal.fftconvolve`` of the reflect-padded image.

Convention used everywhere in :mod:`optzoo.imaging`: *convolution* (not correlation),
``out(y, x) = Σ_{a,b} K(a, b) · I(y − a, x − b)`` with the kernel's centre pixel at offset 0
(odd grids), and the image reflect-padded (``numpy.pad(mode="reflect")``) by the kernel's
half-width, so the output has the input's shape.
"""

from __future__ import annotations

import numpy as np
from scipy.signal import fftconvolve


def check_kernel(kernel: np.ndarray, name: str = "kernel") -> np.ndarray:
    k = np.asarray(kernel, dtype=float)
    if k.ndim != 2 or k.shape[0] != k.shape[1] or k.shape[0] % 2 == 0:
        raise ValueError(f"{name}: expected a square 2-D array of odd size, got shape {k.shape}")
    if not np.all(np.isfinite(k)):
        raise ValueError(f"{name}: contains non-finite values")
    return k


def check_image(image: np.ndarray, name: str = "image") -> np.ndarray:
    img = np.asarray(image, dtype=float)
    if img.ndim not in (2, 3):
        raise ValueError(f"{name}: expected (H, W) or (H, W, C), got shape {img.shape}")
    if not np.all(np.isfinite(img)):
        raise ValueError(f"{name}: contains non-finite values")
    return img


def reflect_pad(image: np.ndarray, pad: int) -> np.ndarray:
    """Reflect-pad the two spatial axes by ``pad`` (must be smaller than both sides)."""
    if pad >= min(image.shape[:2]):
        raise ValueError(f"image: the kernel half-width {pad} needs an image larger than it "
                         f"on both sides, got shape {image.shape}")
    widths = [(pad, pad), (pad, pad)] + [(0, 0)] * (image.ndim - 2)
    return np.pad(image, widths, mode="reflect")


def dense_filter(image: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Convolve ``image`` ((H, W) or (H, W, C)) with ``kernel`` (odd square) by FFT, reflect
    borders; same shape as ``image``.  Cost: M² multiply-adds per pixel (M the kernel side)."""
    img, k = check_image(image), check_kernel(kernel)
    r = k.shape[0] // 2
    padded = reflect_pad(img, r)
    if img.ndim == 3:
        k = k[:, :, None]
    return fftconvolve(padded, k, mode="valid", axes=(0, 1))
