"""The two-layer Kolmogorov-Arnold network of Eshtehardian, Yassaee & Khalaj, "On the Convergence
of Two-Layer Kolmogorov-Arnold Networks with First-Layer Training" (ICLR 2026, OpenReview
buuwRBYfrP), paper §2 (Fig. 1) and §3.

Model, for inputs x ∈ [0, 1]^d, width m and g univariate basis functions shared by both layers::

    z_p(x) = Σ_{k≤d} Σ_{j≤g} α_{pjk} φ_j(x_k),     f(x) = (1/√m) Σ_{p≤m} Σ_{l≤g} β_{pl} φ_l(z_p(x)).

Basis (paper §3, FastKAN-style RBF-KAN): Gaussian RBFs φ_j(x) = exp(−(x − μ_j)²/(2s²)) on a grid
of centres μ_j, by default g points evenly spaced on [0, 1] with s the grid spacing.

Initialisation (paper §2/Thm 4.2): α_{pjk} ~ N(0, σ²), trained; β_{pl} ~ Uniform{−1, +1}, frozen
(a buffer, not a parameter).  The theorem's σ = O(δ/√(m n g³ d)) is tiny; the default here is
σ = sigma_scale/√(d·g), which keeps z_p(x) = O(1) over the RBF grid (the brief's pitfall: with
σ → 0 the kernel collapses to the rank-≤ d·g additive kernel) -- an explicit choice, not the
paper's.

Second-layer basis: the paper shares one basis between the layers.  With the default σ the
hidden values are z_p(x) ~ N(0, ≈0.5²), centred on 0, while a grid on [0, 1] covers only the
upper half of that law (the lower half sees the tails of a single RBF, so φ_l(z) and ψ_p are
almost flat there).  ``hidden_centers`` / ``hidden_rbf_width`` give the second layer its own
grid (same g functions, e.g. on [−1.5, 1.5] = ±3 sd of z); by default it is the first layer's.

Deviation (optional, off by default): ``symmetric_init=True`` pairs neuron p with neuron p + m/2
(same α, opposite β) so that f ≡ 0 at initialisation (the "doubling trick"); the paper's analysis
then applies with r(0) = y exactly.  The tangent kernel's law is unchanged.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from optzoo.checks import check_int, check_real


def rbf(x: torch.Tensor, centers: torch.Tensor, width: float) -> torch.Tensor:
    """Gaussian RBF basis φ_j(x) = exp(−(x − μ_j)²/(2s²)); returns shape ``x.shape + (g,)``.

    Example::

        >>> import torch
        >>> rbf(torch.zeros(2), torch.tensor([0.0, 1.0]), 1.0).shape
        torch.Size([2, 2])
    """
    check_real("width", width, low=0.0, low_open=True)
    return torch.exp(-((x.unsqueeze(-1) - centers) ** 2) / (2 * width**2))


def rbf_derivative(x: torch.Tensor, centers: torch.Tensor, width: float) -> torch.Tensor:
    """φ_j'(x) = −(x − μ_j)/s² · φ_j(x); shape ``x.shape + (g,)``."""
    check_real("width", width, low=0.0, low_open=True)
    diff = x.unsqueeze(-1) - centers
    return -diff / width**2 * torch.exp(-(diff**2) / (2 * width**2))


class TwoLayerKAN(nn.Module):
    """Two-layer RBF-KAN with trained first layer α (m, g, d) and frozen signs β (m, g).

    Args:
        d: input dimension.
        width: m, the number of hidden nodes.
        g: number of basis functions per edge.
        sigma: std of α at init; default ``sigma_scale / sqrt(d * g)``.
        sigma_scale: see ``sigma``.
        centers: RBF centres (length g); default ``linspace(0, 1, g)``.
        rbf_width: s; default the grid spacing ``1/(g − 1)``.
        hidden_centers: RBF centres of the second layer φ_l(z) (length g); default ``centers``.
        hidden_rbf_width: s of the second layer; default the spacing of ``hidden_centers``
            (``rbf_width`` when those are the first layer's).
        symmetric_init: pair neurons so that f ≡ 0 at init (deviation, see module docstring).
        generator: torch.Generator for a deterministic init.
        dtype: parameter dtype (float64 recommended for kernel work).

    Example:
        An ``nn.Module`` from ``(n, d)`` inputs in [0, 1]^d to ``(n,)`` outputs; only α trains:

        >>> import torch
        >>> from optzoo.kan import TwoLayerKAN
        >>> gen = torch.Generator().manual_seed(0)
        >>> x = torch.rand(16, 2, generator=gen, dtype=torch.float64)
        >>> y = torch.sin(3 * x[:, 0]) * x[:, 1]
        >>> kan = TwoLayerKAN(d=2, width=256, g=8, generator=gen)
        >>> kan(x).shape, [tuple(p.shape) for p in kan.parameters()]   # α: (m, g, d)
        (torch.Size([16]), [(256, 8, 2)])
        >>> opt = torch.optim.SGD(kan.parameters(), lr=0.01)
        >>> for _ in range(20):                     # full-batch gradient descent
        ...     opt.zero_grad()
        ...     loss = 0.5 * ((kan(x) - y) ** 2).sum()
        ...     loss.backward()
        ...     opt.step()
        >>> bool(loss < 0.5 * ((TwoLayerKAN(2, 256, 8, generator=gen)(x) - y) ** 2).sum())
        True
    """

    def __init__(self, d: int, width: int, g: int = 8, *, sigma: float | None = None,
                 sigma_scale: float = 1.0, centers: torch.Tensor | None = None,
                 rbf_width: float | None = None,
                 hidden_centers: torch.Tensor | None = None,
                 hidden_rbf_width: float | None = None, symmetric_init: bool = False,
                 generator: torch.Generator | None = None,
                 dtype: torch.dtype = torch.float64) -> None:
        super().__init__()
        check_int("d", d)
        check_int("width", width)
        check_int("g", g)
        check_real("sigma_scale", sigma_scale, low=0.0, low_open=True)
        if sigma is not None:
            check_real("sigma", sigma, low=0.0)
        if rbf_width is not None:
            check_real("rbf_width", rbf_width, low=0.0, low_open=True)
        if d < 1 or width < 1 or g < 2:
            raise ValueError(
                f"d, width, g: expected d, width >= 1 and g >= 2, got {d}, {width}, {g}")
        if symmetric_init and width % 2:
            raise ValueError(f"width: symmetric_init needs an even width, got {width}")
        self.d, self.m, self.g = d, width, g
        if centers is None:
            centers = torch.linspace(0.0, 1.0, g, dtype=dtype)
        centers = torch.as_tensor(centers, dtype=dtype)
        if centers.shape != (g,):
            raise ValueError(f"centers: expected shape ({g},), got {tuple(centers.shape)}")
        self.register_buffer("centers", centers)
        self.rbf_width = float(rbf_width) if rbf_width is not None else 1.0 / (g - 1)
        if hidden_rbf_width is not None:
            check_real("hidden_rbf_width", hidden_rbf_width, low=0.0, low_open=True)
        if hidden_centers is None:
            hidden = centers.clone()
            hidden_width = self.rbf_width
        else:
            hidden = torch.as_tensor(hidden_centers, dtype=dtype)
            if hidden.shape != (g,):
                raise ValueError(f"hidden_centers: expected shape ({g},), got "
                                 f"{tuple(hidden.shape)}")
            hidden_width = float((hidden.max() - hidden.min()) / (g - 1))
            if not hidden_width > 0:
                raise ValueError("hidden_centers: expected distinct centres")
        self.register_buffer("hidden_centers", hidden)
        self.hidden_rbf_width = (float(hidden_rbf_width) if hidden_rbf_width is not None
                                 else hidden_width)
        self.sigma = float(sigma) if sigma is not None else sigma_scale / math.sqrt(d * g)
        half = width // 2 if symmetric_init else width
        alpha = self.sigma * torch.randn(half, g, d, generator=generator, dtype=dtype)
        beta = torch.randint(0, 2, (half, g), generator=generator).to(dtype) * 2 - 1
        if symmetric_init:
            alpha, beta = torch.cat([alpha, alpha]), torch.cat([beta, -beta])
        self.alpha = nn.Parameter(alpha)
        self.register_buffer("beta", beta)

    def basis(self, x: torch.Tensor) -> torch.Tensor:
        """φ_j(x_k) for a batch x (n, d): shape (n, d, g).  Fixed during training."""
        return rbf(x, self.centers, self.rbf_width)

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """z_p(x_i): shape (n, m)."""
        return torch.einsum("nkj,pjk->np", self.basis(x), self.alpha)

    def psi(self, x: torch.Tensor) -> torch.Tensor:
        """ψ_p(x) = Σ_l β_{pl} φ_l'(z_p(x)): shape (n, m); ∂f/∂α_{pjk} = ψ_p(x) φ_j(x_k)/√m."""
        dphi = rbf_derivative(self.hidden(x), self.hidden_centers, self.hidden_rbf_width)
        return torch.einsum("npl,pl->np", dphi, self.beta)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """f(x) for x of shape (n, d); returns shape (n,)."""
        phi = rbf(self.hidden(x), self.hidden_centers, self.hidden_rbf_width)
        return torch.einsum("npl,pl->n", phi, self.beta) / math.sqrt(self.m)
