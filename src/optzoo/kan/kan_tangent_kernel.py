"""The KAN tangent kernel (KAN-TK) of a two-layer KAN with first-layer training, after
Eshtehardian, Yassaee & Khalaj, "On the Convergence of Two-Layer Kolmogorov-Arnold Networks with
First-Layer Training" (ICLR 2026, OpenReview buuwRBYfrP), §3 and Thm 4.6.

Closed form (from the model, paper §3): ∂f/∂α_{pjk} = ψ_p(x) φ_j(x_k)/√m with
ψ_p(x) = Σ_l β_{pl} φ_l'(z_p(x)), so

    H_{ij} = (1/m) Σ_p ψ_p(x_i) ψ_p(x_j) · K_Φ(x_i, x_j),   K_Φ(x, x') = Σ_k Σ_j φ_j(x_k) φ_j(x'_k).

H^∞ = E over the init of H (m → ∞) is estimated by Monte Carlo over independent initialisations
(the paper's 1-D closed form, Prop. 3.1 / App. A.2, is not transcribed here).

Dynamics (loss ½‖y − u‖², full-batch GD with step η on α, no 1/n): linearised,
r(t) = y − u(t) = (I − ηH) r(t−1), so with H = Σ λ_i v_i v_iᵀ,
‖r(t)‖² = Σ_i (1 − ηλ_i)^{2t} (v_iᵀ r(0))²  (Thm 4.6 with r(0) = y when u(0) = 0).
"""

from __future__ import annotations

import torch
from torch.func import functional_call, jacrev, vmap

from optzoo.checks import check_int, check_real, check_tensor
from optzoo.kan.two_layer_kan import TwoLayerKAN


def basis_kernel(model: TwoLayerKAN, x: torch.Tensor) -> torch.Tensor:
    """K_Φ(x_i, x_j) = Σ_k Σ_j φ_j(x_ik) φ_j(x_jk): shape (n, n)."""
    phi = model.basis(x).reshape(x.shape[0], -1)
    return phi @ phi.T


@torch.no_grad()
def kan_tangent_kernel(model: TwoLayerKAN, x: torch.Tensor) -> torch.Tensor:
    """KAN-TK H(α) at the model's current α, closed form: shape (n, n).

    Example:
        The closed form equals the autograd tangent kernel, and its spectrum predicts the
        gradient-descent loss curve (Thm 4.6):

        >>> import torch
        >>> from optzoo.kan import (TwoLayerKAN, gradient_gram, kan_tangent_kernel,
        ...                         predicted_loss_curve)
        >>> gen = torch.Generator().manual_seed(0)
        >>> x = torch.rand(16, 2, generator=gen, dtype=torch.float64)
        >>> y = torch.sin(3 * x[:, 0]) * x[:, 1]
        >>> kan = TwoLayerKAN(d=2, width=256, g=8, generator=gen)
        >>> h = kan_tangent_kernel(kan, x)
        >>> h.shape, torch.allclose(h, gradient_gram(kan, x))
        (torch.Size([16, 16]), True)
        >>> lr, steps = 0.5 / torch.linalg.eigvalsh(h).max().item(), 20
        >>> with torch.no_grad():
        ...     predicted = predicted_loss_curve(h, kan(x) - y, lr, steps)
        >>> opt = torch.optim.SGD(kan.parameters(), lr=lr)
        >>> for _ in range(steps):
        ...     opt.zero_grad()
        ...     (0.5 * ((kan(x) - y) ** 2).sum()).backward()
        ...     opt.step()
        >>> with torch.no_grad():
        ...     loss = 0.5 * ((kan(x) - y) ** 2).sum().item()
        >>> round(loss / predicted[-1].item(), 1)   # GD's loss after 20 steps / KAN-TK's
        1.1
    """
    psi = model.psi(x)
    return (psi @ psi.T) / model.m * basis_kernel(model, x)


def gradient_gram(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Generic tangent kernel ⟨∂f(x_i)/∂θ, ∂f(x_j)/∂θ⟩ over the trainable parameters θ, from
    per-sample gradients (torch.func.vmap of jacrev); works for any scalar-output model."""
    params = {k: v.detach() for k, v in model.named_parameters() if v.requires_grad}
    buffers = dict(model.named_buffers())

    def f(p, xi):
        return functional_call(model, (p, buffers), (xi.unsqueeze(0),)).squeeze(0)

    jac = vmap(jacrev(f), in_dims=(None, 0))(params, x)
    flat = torch.cat([j.reshape(x.shape[0], -1) for j in jac.values()], dim=1)
    return flat @ flat.T


def infinite_width_kernel(x: torch.Tensor, *, d: int, g: int, width: int, draws: int,
                          seed: int = 0, **model_kwargs) -> torch.Tensor:
    """Monte Carlo estimate of H^∞: the mean of H(0) over ``draws`` independent initialisations
    of width ``width`` (an average over draws·width hidden nodes)."""
    gen = torch.Generator().manual_seed(seed)
    total = torch.zeros(x.shape[0], x.shape[0], dtype=x.dtype)
    for _ in range(draws):
        model = TwoLayerKAN(d, width, g, generator=gen, dtype=x.dtype, **model_kwargs)
        total += kan_tangent_kernel(model, x)
    return total / draws


def kernel_spectrum(h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Eigenvalues (descending) and eigenvectors (columns) of a symmetric kernel, in float64."""
    evals, evecs = torch.linalg.eigh(h.double())
    return evals.flip(0), evecs.flip(1)


def predicted_loss_curve(h: torch.Tensor, r0: torch.Tensor, lr: float,
                         steps: int) -> torch.Tensor:
    """Linearised GD loss ½‖(I − ηH)^t r(0)‖² for t = 0..steps (Thm 4.6): shape (steps + 1,).

    ``h`` is a symmetric ``(n, n)`` kernel matrix, ``r0`` the ``(n,)`` initial residual.

    Example:
        With H = I every step multiplies the residual by 1 − η, the loss by (1 − η)²:

        >>> import torch
        >>> from optzoo.kan import predicted_loss_curve
        >>> predicted_loss_curve(torch.eye(2, dtype=torch.float64), torch.ones(2), 0.5, 2)
        tensor([1.0000, 0.2500, 0.0625], dtype=torch.float64)
    """
    check_tensor("h", h, ndim=2)
    check_tensor("r0", r0, ndim=1)
    if h.shape != (r0.shape[0], r0.shape[0]):
        raise ValueError(f"h: expected shape ({r0.shape[0]}, {r0.shape[0]}) to match r0, got "
                         f"{tuple(h.shape)}")
    check_real("lr", lr, low=0.0, low_open=True)
    check_int("steps", steps, low=1)
    evals, evecs = kernel_spectrum(h)
    proj2 = (evecs.T @ r0.double()) ** 2
    t = torch.arange(steps + 1, dtype=torch.float64).unsqueeze(1)
    return 0.5 * ((1 - lr * evals) ** (2 * t) * proj2).sum(dim=1)
