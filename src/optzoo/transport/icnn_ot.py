"""ICNN min–max neural OT baseline: Makkuva, Taghvaei, Oh & Lee, "Optimal transport mapping via
input convex neural networks" (ICML 2020; "MM-v1" in Korotin et al. 2021's W2 benchmark), the
adversarial two-network baseline of the NCF paper (Park et al., ICLR 2026, OpenReview
YbQxus1KEa).

Quadratic cost.  With const = ½E‖X‖² + ½E‖Y‖², ½W₂²(μ, ν) = const − min_f max_g V(f, g),

    V(f, g) = E_μ f(X) + E_ν [⟨∇g(Y), Y⟩ − f(∇g(Y))],

over convex f, g (Makkuva et al. Eq. 5).  At the saddle point ∇f pushes μ to ν (forward map)
and ∇g = ∇f* pushes ν to μ (inverse map).  Training (their Algorithm 1): per outer step,
``inner_steps`` Adam steps of g maximising V, then one Adam step of f minimising it.

Readings and deviations (documented, fixed before any comparison):
* ICNN (Amos et al. 2017): z₁ = σ(W₀x + b₀), z_{l+1} = σ(U_l z_l + W_l x + b_l), output
  a·z_L + wᵀx + ½‖Lx‖² with U_l, a ≥ 0 and σ = softplus (convex, non-decreasing); L is a
  trained matrix (a convex quadratic for every L, as in the quadratic layers of Korotin et al.'s
  DenseICNN).  L = I and a = 0 at initialisation make both maps start at the identity,
  as NCF's zero-initialised last layer does (Korotin et al. instead
  pretrain the potentials to the identity).
* Non-negativity is kept by clamping U_l, a to ≥ 0 after every step for both networks
  (Makkuva et al. clamp f and penalise g's negative weights).
* Data are standardised by one common centre and one common scalar scale (as in
  :class:`~optzoo.transport.HJOptimalTransport`), which leaves the quadratic-cost map unchanged.
* ``inner_steps`` defaults to 10, the generator-to-critic ratio of Makkuva et al.'s code.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

from optzoo.transport.hj_optimal_transport import _as_points


class ICNN(nn.Module):
    """Input-convex potential x ↦ f(x) (scalar) plus a convex quadratic ½‖Lx‖² (L trained,
    L = I at initialisation, so ∇f starts at the identity and can still contract).

    Args:
        dim: input dimension.
        hidden: width of the hidden layers.
        layers: number of hidden layers (≥ 1).
    """

    def __init__(self, dim: int, hidden: int = 64, layers: int = 3) -> None:
        super().__init__()
        self.wx = nn.ModuleList([nn.Linear(dim, hidden) for _ in range(layers)])
        self.uz = nn.ModuleList([nn.Linear(hidden, hidden, bias=False)
                                 for _ in range(layers - 1)])
        self.out_z = nn.Linear(hidden, 1, bias=False)
        self.out_x = nn.Linear(dim, 1)
        self.quad = nn.Linear(dim, dim, bias=False)
        self.act = nn.Softplus()
        with torch.no_grad():
            self.quad.weight.copy_(torch.eye(dim))
            for u in self.uz:
                u.weight.abs_().mul_(0.5)
            self.out_z.weight.zero_()
            self.out_x.weight.zero_()
            self.out_x.bias.zero_()

    def clamp_(self) -> None:
        """Project the z-path weights onto ≥ 0 (the convexity constraint)."""
        with torch.no_grad():
            for u in self.uz:
                u.weight.clamp_(min=0.0)
            self.out_z.weight.clamp_(min=0.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.act(self.wx[0](x))
        for u, w in zip(self.uz, self.wx[1:], strict=True):
            z = self.act(u(z) + w(x))
        q = self.quad(x)
        return (self.out_z(z) + self.out_x(x)).squeeze(-1) + 0.5 * (q * q).sum(-1)


def _grad(f: nn.Module, x: torch.Tensor, create_graph: bool) -> torch.Tensor:
    x = x.detach().requires_grad_(True)
    (g,) = torch.autograd.grad(f(x).sum(), x, create_graph=create_graph)
    return g


class ICNNOptimalTransport:
    """MM-v1 (Makkuva et al. 2020) min–max ICNN OT for the quadratic cost, scikit-learn style.

    Args:
        hidden: width of both ICNNs.
        layers: hidden layers of both ICNNs.
        steps: outer (f) steps.
        inner_steps: g steps per outer step.
        batch_size: source and target points per step.
        lr: Adam learning rate of both networks (decayed exponentially to ``lr * lr_final``).
        lr_final: final learning-rate factor.
        standardize: common centre / scalar scale (see module docstring).
        device: torch device (``"cpu"`` default).
        dtype: torch dtype.
        seed: seeds the initialisation and the minibatches.

    Attributes (after ``fit``): ``f_``, ``g_`` (the ICNNs), ``history_`` (per outer step:
    ``objective`` V(f, g) on the f step's batch), ``fit_seconds_``.
    """

    def __init__(self, hidden: int = 64, layers: int = 3, steps: int = 1000,
                 inner_steps: int = 10, batch_size: int = 256, lr: float = 1e-3,
                 lr_final: float = 0.1, standardize: bool = True,
                 device: str | torch.device = "cpu", dtype: torch.dtype = torch.float32,
                 seed: int = 0) -> None:
        for name, v in (("hidden", hidden), ("layers", layers), ("steps", steps),
                        ("inner_steps", inner_steps), ("batch_size", batch_size)):
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected an integer >= 1, got {v!r}")
        if not lr > 0 or not lr_final > 0:
            raise ValueError(f"lr, lr_final: expected > 0, got {lr}, {lr_final}")
        self.hidden, self.layers, self.steps, self.inner_steps = hidden, layers, steps, inner_steps
        self.batch_size, self.lr, self.lr_final = batch_size, lr, lr_final
        self.standardize, self.device, self.dtype, self.seed = standardize, device, dtype, seed

    def _to_z(self, X: np.ndarray) -> torch.Tensor:
        return torch.as_tensor((X - self.center_) / self.scale_, dtype=self.dtype,
                               device=self.device)

    def _from_z(self, Z: torch.Tensor) -> np.ndarray:
        return Z.detach().to("cpu", torch.float64).numpy() * self.scale_ + self.center_

    def fit(self, X_source, X_target) -> ICNNOptimalTransport:
        """Train f, g on samples of μ (``X_source`` (n, d)) and ν (``X_target`` (m, d))."""
        xs = _as_points("X_source", X_source)
        xt = _as_points("X_target", X_target, dim=xs.shape[1])
        t0 = time.perf_counter()
        self.dim_ = xs.shape[1]
        pooled = np.concatenate([xs, xt])
        if self.standardize:
            self.center_ = pooled.mean(0)
            self.scale_ = float(np.sqrt(pooled.var(0).mean())) or 1.0
        else:
            self.center_, self.scale_ = np.zeros(self.dim_), 1.0
        gen = torch.Generator().manual_seed(int(self.seed))
        torch.manual_seed(int(self.seed))
        self.f_ = ICNN(self.dim_, self.hidden, self.layers).to(self.device, self.dtype)
        self.g_ = ICNN(self.dim_, self.hidden, self.layers).to(self.device, self.dtype)
        zs, zt = self._to_z(xs), self._to_z(xt)
        opt_f = torch.optim.Adam(self.f_.parameters(), lr=self.lr)
        opt_g = torch.optim.Adam(self.g_.parameters(), lr=self.lr)
        gamma_f = self.lr_final ** (1.0 / self.steps)
        gamma_g = self.lr_final ** (1.0 / (self.steps * self.inner_steps))
        sched_f = torch.optim.lr_scheduler.ExponentialLR(opt_f, gamma_f)
        sched_g = torch.optim.lr_scheduler.ExponentialLR(opt_g, gamma_g)
        self.history_ = {"objective": []}

        def batch(z: torch.Tensor) -> torch.Tensor:
            return z[torch.randint(0, z.shape[0], (self.batch_size,), generator=gen).to(
                self.device)]

        for step in range(self.steps):
            for _ in range(self.inner_steps):
                y = batch(zt)
                gy = _grad(self.g_, y, create_graph=True)
                # g maximises E[<∇g(Y), Y> − f(∇g(Y))]
                loss_g = -((gy * y).sum(-1) - self.f_(gy)).mean()
                opt_g.zero_grad(set_to_none=True)
                loss_g.backward()
                opt_g.step()
                sched_g.step()
                self.g_.clamp_()
            x, y = batch(zs), batch(zt)
            gy = _grad(self.g_, y, create_graph=False).detach()
            obj = self.f_(x).mean() + ((gy * y).sum(-1) - self.f_(gy)).mean()
            if not torch.isfinite(obj):
                raise FloatingPointError(f"fit: the objective became non-finite at step {step}; "
                                         f"lower lr (now {self.lr})")
            opt_f.zero_grad(set_to_none=True)
            obj.backward()
            opt_f.step()
            sched_f.step()
            self.f_.clamp_()
            self.history_["objective"].append(float(obj.detach()))
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _apply(self, name: str, net: nn.Module, X, batch: int) -> np.ndarray:
        if not hasattr(self, "f_"):
            raise RuntimeError("ICNNOptimalTransport: call fit before transform")
        arr = np.asarray(X, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] != self.dim_ or not np.isfinite(arr).all():
            raise ValueError(f"{name}: expected a finite array of shape (n, {self.dim_}), "
                             f"got shape {arr.shape}")
        out = [self._from_z(_grad(net, self._to_z(arr[i:i + batch]), False))
               for i in range(0, arr.shape[0], batch)]
        return np.concatenate(out) if out else arr.copy()

    def transform(self, X, batch_size: int = 65536) -> np.ndarray:
        """∇f(x): source → target, (n, d) → (n, d)."""
        return self._apply("X", self.f_, X, batch_size)

    def inverse_transform(self, Y, batch_size: int = 65536) -> np.ndarray:
        """∇g(y): target → source, (m, d) → (m, d)."""
        return self._apply("Y", self.g_, Y, batch_size)
