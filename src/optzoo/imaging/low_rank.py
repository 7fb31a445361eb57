"""Low-rank separable filtering (McGraw 2015), the LowRank baseline of the DISK paper (Wu, Cao &
Huo, "DISK: Differentiable Sparse Kernel Complex for Efficient Spatially-Variant Convolution",
ICLR 2026, OpenReview ``bbuxDoRD2D``, §5.1: ranks 1–3, "49×2/4/6").

The SVD ``K = Σ_k s_k u_k v_kᵀ`` truncated to rank ``r`` is the best rank-``r`` approximation in
the Frobenius norm (Eckart–Young); filtering with it is ``r`` pairs of 1-D convolutions (a column
pass with ``√s_k u_k`` then a row pass with ``√s_k v_k``), i.e. ``2·r·M`` taps per pixel for an
``M x M`` kernel.  Same convention and reflect borders as
:func:`optzoo.imaging.dense_convolution.dense_filter`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import convolve1d

from optzoo.imaging.dense_convolution import check_image, check_kernel, reflect_pad


@dataclass(frozen=True)
class LowRankFilter:
    """Rank-``r`` separable filter: ``cols`` and ``rows`` are ``(r, M)``; the kernel is
    ``Σ_k cols[k] ⊗ rows[k]``."""

    cols: np.ndarray
    rows: np.ndarray

    @property
    def rank(self) -> int:
        return int(self.cols.shape[0])

    @property
    def taps(self) -> int:
        """Multiply-adds per pixel: ``2·r·M``."""
        return int(2 * self.cols.shape[0] * self.cols.shape[1])

    def kernel(self) -> np.ndarray:
        return np.einsum("ka,kb->ab", self.cols, self.rows)

    def __call__(self, image: np.ndarray) -> np.ndarray:
        return apply_low_rank(image, self)


def low_rank_decomposition(kernel: np.ndarray, rank: int) -> LowRankFilter:
    """Best rank-``rank`` separable approximation of ``kernel`` (truncated SVD)."""
    k = check_kernel(kernel)
    if not isinstance(rank, (int, np.integer)) or not 1 <= rank <= k.shape[0]:
        raise ValueError(f"rank: expected an integer in 1..{k.shape[0]}, got {rank!r}")
    u, s, vt = np.linalg.svd(k)
    root = np.sqrt(s[:rank])
    return LowRankFilter(cols=(u[:, :rank] * root).T.copy(), rows=(vt[:rank] * root[:, None]))


def apply_low_rank(image: np.ndarray, filt: LowRankFilter) -> np.ndarray:
    """Filter ``image`` ((H, W) or (H, W, C)) with the separable passes, reflect borders."""
    img = check_image(image)
    m = filt.cols.shape[1]
    r = m // 2
    padded = reflect_pad(img, r)
    out = np.zeros_like(padded)
    for c, w in zip(filt.cols, filt.rows, strict=True):
        # direct 1-D convolutions (what a GPU pass does); zeros beyond the pad are cropped away
        out += convolve1d(convolve1d(padded, c, axis=0, mode="constant"), w, axis=1,
                          mode="constant")
    return out[r:-r, r:-r]
