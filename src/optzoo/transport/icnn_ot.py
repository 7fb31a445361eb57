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
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted
from torch import nn

from optzoo.checks import check_real
from optzoo.transport.hj_optimal_transport import _as_points, _as_weights


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


class ICNNOptimalTransport(TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
    """MM-v1 (Makkuva et al. 2020) min–max ICNN OT for the quadratic cost.

    A scikit-learn estimator with the conventions of :class:`~optzoo.transport.
    HJOptimalTransport` (and POT's ``ot.da`` keyword names): ``get_params`` / ``set_params``,
    :func:`sklearn.base.clone`, ``NotFittedError`` before ``fit``; ``fit(Xs=..., Xt=...)``, then
    ``transform(Xs=...)`` (∇f: source → target) and ``inverse_transform(Xt=...)`` (∇g: target →
    source); ``fit_transform(Xs, Xt)`` maps the training source points.  Sample weights ``a``
    (source) and ``b`` (target) make μ̂ = Σ a_i δ_{x_i} and ν̂ = Σ b_j δ_{y_j}: every minibatch
    is drawn with these probabilities, an unbiased estimate of V(f, g) under the weighted
    measures.  Class labels (POT's ``ys``, ``yt``) are not part of MM-v1 and are refused.

    Example:
        >>> import numpy as np
        >>> from sklearn.base import clone
        >>> from optzoo.transport import ICNNOptimalTransport
        >>> rng = np.random.default_rng(0)
        >>> Xs = rng.standard_normal((64, 2))
        >>> Xt = 2.0 * rng.standard_normal((64, 2)) + 3.0
        >>> icnn = ICNNOptimalTransport(hidden=8, layers=2, steps=5, inner_steps=2,
        ...                             batch_size=16)
        >>> icnn.fit(Xs=Xs, Xt=Xt).transform(Xs=Xs).shape
        (64, 2)
        >>> icnn.inverse_transform(Xt=Xt).shape
        (64, 2)
        >>> clone(icnn).set_params(steps=3).get_params()["steps"]
        3

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
        self.hidden, self.layers, self.steps, self.inner_steps = hidden, layers, steps, inner_steps
        self.batch_size, self.lr, self.lr_final = batch_size, lr, lr_final
        self.standardize, self.device, self.dtype, self.seed = standardize, device, dtype, seed
        self._check_params()

    def _check_params(self) -> None:
        # checked at construction (a clear error where the user typed it) and again in fit,
        # because set_params bypasses __init__
        for name in ("hidden", "layers", "steps", "inner_steps", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected an integer >= 1, got {v!r}")
        check_real("lr", self.lr, low=0, low_open=True)
        check_real("lr_final", self.lr_final, low=0, low_open=True)

    def _to_z(self, X: np.ndarray) -> torch.Tensor:
        return torch.as_tensor((X - self.center_) / self.scale_, dtype=self.dtype,
                               device=self.device)

    def _from_z(self, Z: torch.Tensor) -> np.ndarray:
        return Z.detach().to("cpu", torch.float64).numpy() * self.scale_ + self.center_

    def fit(self, Xs=None, Xt=None, ys=None, yt=None, *, a=None, b=None
            ) -> ICNNOptimalTransport:
        """Train f, g on samples of μ (``Xs``, shape (n, d)) and ν (``Xt``, (m, d)), with
        optional non-negative sample weights ``a`` (n,) and ``b`` (m,).

        Raises:
            ValueError: missing or badly shaped inputs, non-finite values, bad weights, or
                labels (``ys``/``yt``: MM-v1 has no class-conditional form).
            FloatingPointError: the objective became non-finite during training.
        """
        self._check_params()
        if Xs is None or Xt is None:
            raise ValueError("Xs, Xt: both the source and the target samples are required")
        if ys is not None or yt is not None:
            raise ValueError("ys, yt: ICNNOptimalTransport (MM-v1) has no class-conditional "
                             "form; use HJOptimalTransport for labelled OT")
        xs = _as_points("Xs", Xs)
        xt = _as_points("Xt", Xt, dim=xs.shape[1])
        wa, wb = _as_weights("a", a, xs.shape[0]), _as_weights("b", b, xt.shape[0])
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

        pa = None if wa is None else torch.as_tensor(wa)
        pb = None if wb is None else torch.as_tensor(wb)

        def batch(z: torch.Tensor, p: torch.Tensor | None) -> torch.Tensor:
            if p is None:  # uniform: the unweighted draw (kept so unweighted fits reproduce)
                idx = torch.randint(0, z.shape[0], (self.batch_size,), generator=gen)
            else:
                idx = torch.multinomial(p, self.batch_size, replacement=True, generator=gen)
            return z[idx.to(self.device)]

        for step in range(self.steps):
            for _ in range(self.inner_steps):
                y = batch(zt, pb)
                gy = _grad(self.g_, y, create_graph=True)
                # g maximises E[<∇g(Y), Y> − f(∇g(Y))]
                loss_g = -((gy * y).sum(-1) - self.f_(gy)).mean()
                opt_g.zero_grad(set_to_none=True)
                loss_g.backward()
                opt_g.step()
                sched_g.step()
                self.g_.clamp_()
            x, y = batch(zs, pa), batch(zt, pb)
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

    def _apply(self, name: str, net_name: str, X, batch: int) -> np.ndarray:
        check_is_fitted(self, "f_")  # sklearn's NotFittedError
        if X is None:
            raise ValueError(f"{name}: expected the points to map, got None")
        net = getattr(self, net_name)
        arr = np.asarray(X, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] != self.dim_ or not np.isfinite(arr).all():
            raise ValueError(f"{name}: expected a finite array of shape (n, {self.dim_}), "
                             f"got shape {arr.shape}")
        out = [self._from_z(_grad(net, self._to_z(arr[i:i + batch]), False))
               for i in range(0, arr.shape[0], batch)]
        return np.concatenate(out) if out else arr.copy()

    def transform(self, Xs=None, batch_size: int = 65536) -> np.ndarray:
        """∇f(x) for source points ``Xs``: source → target, (n, d) → (n, d)."""
        return self._apply("Xs", "f_", Xs, batch_size)

    def inverse_transform(self, Xt=None, batch_size: int = 65536) -> np.ndarray:
        """∇g(y) for target points ``Xt``: target → source, (m, d) → (m, d)."""
        return self._apply("Xt", "g_", Xt, batch_size)
