"""Neural Characteristic Flow (NCF) of Park, Liu, Zhou & Osher, "Neural Hamilton–Jacobi
Characteristic Flows for Optimal Transport" (ICLR 2026, OpenReview YbQxus1KEa, arXiv 2510.01153;
official code github.com/Yebbi/NCF, not readable here).

Optimal transport for the cost c(x, y) = L(y − x), L convex, through the Hamilton–Jacobi equation
u_t + H(∇u) = 0 on [0, t_f] with H = L* (paper §2–3).  Characteristics are straight lines along
which p = ∇u is constant, which gives closed-form maps in both directions from one potential
u_θ(x, t) (one network taking (x, t), smooth activations):

    forward   T(x)   = x + t_f ∇H(∇u_θ(x, 0)),
    backward  T⁻¹(y) = y − t_f ∇H(∇u_θ(y, t_f)).

Loss (paper Eqs. 13–14), L(θ) = L_HJ(θ) + λ L_MMD(θ):

* L_HJ = E_{x∼ϱ, t∼U[0,t_f]} r_θ(x, t)² with the residual of the implicit solution formula
  (Park & Osher 2025, paper Eq. 9), all derivatives at (x, t),

      r_θ = u_θ(x, t) + t H(∇u_θ) − t ∇u_θ·∇H(∇u_θ) − u_θ(x − t∇H(∇u_θ), 0);

  quadratic cost: r_θ = u_θ(x, t) − (t/2)|∇u_θ|² − u_θ(x − t∇u_θ, 0).
* L_MMD = E(T#μ̂, ν̂), the squared energy distance = MMD² with the negative-distance kernel
  k(x, y) = −‖x − y‖ (no bandwidth), forward direction only.  Class-conditional OT replaces it by
  the class average (1/K) Σ_k E(T#μ̂_k, ν̂_k) with the HJ term and the network unchanged.

Readings of what the material available (abstract, a section-by-section note and the public
reviews; the full text and the code could not be read) leaves open; the brief marks them
INFERRED, and a search of the stored pages found nothing more specific:

* ϱ (paper: "uniform on a bounded domain or concentrated on the sample regions"): a mixture,
  weight ``box_fraction`` uniform on the bounding box of source ∪ target enlarged by
  ``box_margin`` of its range on each side, the rest source/target samples plus Gaussian jitter
  of std ``jitter``; t ∼ U[0, t_f] independently.
* Network: MLP on (x, t), ``layers`` hidden layers of width ``hidden``, softplus (or tanh); the
  last layer starts at zero, so T starts at the identity (for the costs |v|^p/p with p < 2
  it keeps PyTorch's random initialisation: there ∇H has a zero Jacobian at 0, which makes
  u ≡ 0 a stationary point of the whole loss).  Adam with the learning rate decayed
  exponentially to ``lr · lr_final`` over ``steps``; λ = 1.  Gradients of L_HJ flow through
  ∇u_θ inside both terms of r_θ (the residual is minimised as a function of θ).
* Data are standardised by one common centre and one common scalar scale before training and
  mapped back afterwards: for the costs |v|^p/p this leaves the optimal map unchanged (the cost
  is translation invariant and positively homogeneous), and it puts ϱ, t_f and the network's
  input scale on a common footing.  ``potential`` returns u in standardised coordinates.
* Optional extras that are not in the paper, off by default: ``backward_mmd`` weights a
  backward term E(T⁻¹#ν̂, μ̂); ``residual="pinn"`` replaces r_θ by the PDE residual
  u_t + H(∇u) (the paper's HJ-PINN ablation); ``hj_weight=0`` is the MMD-only ablation.
* Other costs (paper §3): L(v) = |v|^p/p gives H(q) = |q|^{p*}/p*, 1/p + 1/p* = 1; ∇H is not
  smooth at 0 for p ≠ 2, so H and ∇H use (|q|² + ``grad_eps``)^{1/2} in place of |q| there.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import numpy as np
import torch
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted
from torch import nn

from optzoo.checks import check_real

Potential = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

ACTIVATIONS = {"softplus": nn.Softplus, "tanh": nn.Tanh}
RESIDUALS = ("implicit", "pinn")


# -- the Hamiltonian of the cost |v|^p / p -------------------------------------------------------

def _dual_power(cost_power: float) -> float:
    check_real("cost_power", cost_power, low=1.0, low_open=True)
    return cost_power / (cost_power - 1.0)


def hamiltonian(p: torch.Tensor, cost_power: float = 2.0, eps: float = 1e-6) -> torch.Tensor:
    """H(p) = |p|^q / q, q = p*/(p* − 1) the dual exponent of the cost |v|^{p*}/p*; shape
    ``(..., d) -> (...)``.  Quadratic cost (2): exactly ½|p|²; otherwise |p| is smoothed to
    (|p|² + eps)^{1/2}."""
    sq = (p * p).sum(-1)
    if cost_power == 2.0:
        return 0.5 * sq
    q = _dual_power(cost_power)
    return (sq + eps) ** (q / 2) / q


def hamiltonian_grad(p: torch.Tensor, cost_power: float = 2.0,
                     eps: float = 1e-6) -> torch.Tensor:
    """∇H(p) = |p|^{q−2} p (the velocity of a characteristic); shape ``(..., d)``."""
    if cost_power == 2.0:
        return p
    q = _dual_power(cost_power)
    return ((p * p).sum(-1, keepdim=True) + eps) ** ((q - 2) / 2) * p


# -- residuals and maps of a potential u(x, t) ------------------------------------------------

def _time(t: torch.Tensor | float, x: torch.Tensor) -> torch.Tensor:
    t = torch.as_tensor(t, dtype=x.dtype, device=x.device)
    return t.expand(x.shape[0]) if t.dim() == 0 else t.reshape(x.shape[0])


def _grad_x(u: Potential, x: torch.Tensor, t: torch.Tensor,
            create_graph: bool) -> tuple[torch.Tensor, torch.Tensor]:
    if not x.requires_grad:
        x = x.detach().requires_grad_(True)
    val = u(x, t)
    (g,) = torch.autograd.grad(val.sum(), x, create_graph=create_graph)
    return val, g


def characteristic_residual(u: Potential, x: torch.Tensor, t: torch.Tensor | float,
                            cost_power: float = 2.0, eps: float = 1e-6) -> torch.Tensor:
    """Residual r(x, t) of the implicit solution formula (paper Eq. 9), shape ``(n,)``:

        r = u(x, t) + t H(∇u) − t ∇u·∇H(∇u) − u(x − t ∇H(∇u), 0),   ∇u = ∇_x u(x, t).

    ``u`` maps ``x (n, d), t (n,)`` to ``(n,)``; the graph is kept, so ``r`` can be trained."""
    t = _time(t, x)
    val, p = _grad_x(u, x, t, create_graph=True)
    v = hamiltonian_grad(p, cost_power, eps)
    foot = x - t[:, None] * v  # the characteristic's starting point
    return (val + t * hamiltonian(p, cost_power, eps) - t * (p * v).sum(-1)
            - u(foot, torch.zeros_like(t)))


def pinn_residual(u: Potential, x: torch.Tensor, t: torch.Tensor | float,
                  cost_power: float = 2.0, eps: float = 1e-6) -> torch.Tensor:
    """PDE residual u_t + H(∇_x u) at (x, t), shape ``(n,)`` (the paper's HJ-PINN ablation)."""
    t = _time(t, x).detach().requires_grad_(True)
    x = x.detach().requires_grad_(True)
    val = u(x, t)
    gx, gt = torch.autograd.grad(val.sum(), (x, t), create_graph=True)
    return gt + hamiltonian(gx, cost_power, eps)


def forward_map(u: Potential, x: torch.Tensor, t_final: float = 1.0, cost_power: float = 2.0,
                eps: float = 1e-6, create_graph: bool = False) -> torch.Tensor:
    """T(x) = x + t_f ∇H(∇u(x, 0)), shape ``(n, d)``."""
    _, p = _grad_x(u, x, _time(0.0, x), create_graph)
    return x + t_final * hamiltonian_grad(p, cost_power, eps)


def inverse_map(u: Potential, y: torch.Tensor, t_final: float = 1.0, cost_power: float = 2.0,
                eps: float = 1e-6, create_graph: bool = False) -> torch.Tensor:
    """T⁻¹(y) = y − t_f ∇H(∇u(y, t_f)), shape ``(n, d)``."""
    _, p = _grad_x(u, y, _time(t_final, y), create_graph)
    return y - t_final * hamiltonian_grad(p, cost_power, eps)


def energy_distance(x: torch.Tensor, y: torch.Tensor, unbiased: bool = True) -> torch.Tensor:
    """Squared energy distance 2E‖X − Y‖ − E‖X − X'‖ − E‖Y − Y'‖ between the empirical measures
    of ``x (n, d)`` and ``y (m, d)``: MMD² with the kernel −‖x − y‖.

    ``unbiased`` (default) leaves the zero diagonal out of the within-sample means (U-statistic);
    the V-statistic keeps it, which biases the minimiser toward contracting T#μ by O(1/n).

    Example::

        >>> import torch
        >>> from optzoo.transport import energy_distance
        >>> x = torch.tensor([[0.0], [1.0]])
        >>> float(energy_distance(x, x, unbiased=False))  # the V-statistic of equal samples
        0.0
        >>> x = torch.randn(100, 2, generator=torch.Generator().manual_seed(0))
        >>> bool(energy_distance(x, x + 2.0) > energy_distance(x, x + 0.5) > 0)  # a loss for T
        True
    """
    for name, t in (("x", x), ("y", y)):
        if not isinstance(t, torch.Tensor) or not t.is_floating_point():
            raise TypeError(f"{name}: expected a floating-point torch.Tensor (n, d), got "
                            f"{getattr(t, 'dtype', type(t).__name__)}")
        if t.dim() != 2:
            raise ValueError(f"{name}: expected a 2-D tensor (n, d), got shape {tuple(t.shape)}")
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"x, y: expected the same dimension d, got x (n, {x.shape[1]}) and "
                         f"y (m, {y.shape[1]})")
    dxy = torch.cdist(x, y).mean()
    dxx, dyy = torch.cdist(x, x).sum(), torch.cdist(y, y).sum()
    n, m = x.shape[0], y.shape[0]
    if unbiased:
        if n < 2 or m < 2:
            raise ValueError(f"x, y: the unbiased estimate needs >= 2 points each, got {n}, {m}")
        return 2 * dxy - dxx / (n * (n - 1)) - dyy / (m * (m - 1))
    return 2 * dxy - dxx / n**2 - dyy / m**2


# -- the network ---------------------------------------------------------------------------

class PotentialNet(nn.Module):
    """u_θ(x, t): an MLP on the concatenation (x, t) with smooth activations; scalar output.

    Args:
        dim: d, the dimension of x.
        hidden: width of the hidden layers.
        layers: number of hidden layers.
        activation: ``"softplus"`` or ``"tanh"`` (ReLU has no second derivative).
        zero_head: start the last layer at zero, so u ≡ 0 and both maps start at the identity;
            ``False`` keeps PyTorch's default initialisation of the last layer.
    """

    def __init__(self, dim: int, hidden: int = 128, layers: int = 4,
                 activation: str = "softplus", zero_head: bool = True) -> None:
        super().__init__()
        act = ACTIVATIONS[activation]
        mods: list[nn.Module] = []
        width = dim + 1
        for _ in range(layers):
            mods += [nn.Linear(width, hidden), act()]
            width = hidden
        self.body = nn.Sequential(*mods)
        self.head = nn.Linear(width, 1)
        if zero_head:  # u ≡ 0 at initialisation: both maps start at the identity
            nn.init.zeros_(self.head.weight)
            nn.init.zeros_(self.head.bias)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(torch.cat([x, t[:, None]], dim=1))).squeeze(-1)


# -- the estimator -------------------------------------------------------------------------

def _as_points(name: str, X, dim: int | None = None) -> np.ndarray:
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] < 2:
        raise ValueError(f"{name}: expected an array of shape (n >= 2, d), got shape {arr.shape}")
    if dim is not None and arr.shape[1] != dim:
        raise ValueError(f"{name}: expected {dim} columns (the fitted dimension), "
                         f"got {arr.shape[1]}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: contains NaN or infinite values")
    return arr


def _as_labels(name: str, y, n: int) -> np.ndarray:
    arr = np.asarray(y)
    if arr.shape != (n,):
        raise ValueError(f"{name}: expected shape ({n},) (one label per point), got {arr.shape}")
    return arr


def _as_weights(name: str, w, n: int) -> np.ndarray | None:
    """Sample weights of an empirical measure, normalised to sum 1 (None: uniform)."""
    if w is None:
        return None
    arr = np.asarray(w, dtype=np.float64)
    if arr.shape != (n,):
        raise ValueError(f"{name}: expected shape ({n},) (one weight per point), got {arr.shape}")
    if not np.isfinite(arr).all() or (arr < 0).any() or not arr.sum() > 0:
        raise ValueError(f"{name}: expected finite non-negative weights with a positive sum")
    return arr / arr.sum()


class HJOptimalTransport(TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
    """Neural Characteristic Flow: an OT map and its inverse from one HJ potential u_θ(x, t).

    A scikit-learn estimator (``get_params`` / ``set_params``, :func:`sklearn.base.clone`,
    ``NotFittedError`` before ``fit``) with POT's ``ot.da`` keyword names:
    ``fit(Xs=..., Xt=...)`` then ``transform(Xs=...)`` (source → target) and
    ``inverse_transform(Xt=...)`` (target → source); ``fit_transform(Xs, Xt)`` maps the
    training source points.  Positionally ``fit(Xs, Xt, ys, yt)`` (POT's positional order is
    ``Xs, ys, Xt, yt``: pass keywords when porting POT code).  Sample weights ``a`` (source) and
    ``b`` (target) make μ̂ = Σ a_i δ_{x_i} and ν̂ = Σ b_j δ_{y_j}: the MMD term's minibatches
    are drawn with these probabilities (an unbiased estimate of E(T#μ̂, ν̂)); the HJ term's
    collocation measure ϱ does not depend on them.  See the module docstring for the loss and
    the readings of the paper.

    Example:
        >>> import numpy as np
        >>> from sklearn.base import clone
        >>> from optzoo.transport import HJOptimalTransport
        >>> rng = np.random.default_rng(0)
        >>> Xs = rng.standard_normal((64, 2))
        >>> Xt = 2.0 * rng.standard_normal((64, 2)) + 3.0
        >>> ot_map = HJOptimalTransport(hidden=16, layers=2, steps=20, batch_size=32)
        >>> ot_map.fit(Xs=Xs, Xt=Xt).transform(Xs=Xs).shape
        (64, 2)
        >>> ot_map.inverse_transform(Xt=Xt).shape
        (64, 2)
        >>> clone(ot_map).set_params(steps=10).get_params()["steps"]
        10

    Args:
        hidden: width of the MLP u_θ(x, t).
        layers: hidden layers of the MLP.
        activation: ``"softplus"`` or ``"tanh"``.
        steps: Adam steps.
        batch_size: source and target points per step in the MMD term (per class when labels
            are given, at least 8 each).
        collocation_size: (x, t) points per step in L_HJ; default ``batch_size``.
        lr: initial Adam learning rate.
        lr_final: the learning rate decays exponentially to ``lr * lr_final``.
        lam: λ, weight of the MMD term.
        hj_weight: weight of L_HJ (0 gives the MMD-only ablation).
        residual: ``"implicit"`` (paper Eq. 9) or ``"pinn"`` (u_t + H(∇u), the ablation).
        t_final: the horizon t_f.
        cost_power: p of the cost |y − x|^p / p (2: squared Euclidean / 2).
        grad_eps: smoothing of |∇u| in H for p ≠ 2.
        box_fraction: share of collocation points drawn uniformly on the enlarged bounding box.
        box_margin: enlargement of the box on each side, as a fraction of its range.
        jitter: std of the Gaussian jitter of sample-based collocation points (standardised
            units).
        backward_mmd: weight of E(T⁻¹#ν̂, μ̂) (not in the paper; 0 = off).
        standardize: fit in coordinates centred and scaled by one common scalar (see module
            docstring).
        device: torch device (``"cpu"`` default, ``"cuda"``).
        dtype: torch dtype of the network.
        seed: seeds the initialisation and every sample drawn during ``fit``.
        verbose: print the loss every ``steps // 10`` steps.

    Attributes (after ``fit``):
        model_: the :class:`PotentialNet`.
        history_: dict of per-step lists ``loss``, ``hj``, ``mmd``.
        fit_seconds_: wall time of ``fit``.
    """

    def __init__(self, hidden: int = 128, layers: int = 4, activation: str = "softplus",
                 steps: int = 2000, batch_size: int = 512, collocation_size: int | None = None,
                 lr: float = 1e-3, lr_final: float = 0.1, lam: float = 1.0,
                 hj_weight: float = 1.0, residual: str = "implicit", t_final: float = 1.0,
                 cost_power: float = 2.0, grad_eps: float = 1e-6, box_fraction: float = 0.5,
                 box_margin: float = 0.1, jitter: float = 0.05, backward_mmd: float = 0.0,
                 standardize: bool = True, device: str | torch.device = "cpu",
                 dtype: torch.dtype = torch.float32, seed: int = 0,
                 verbose: bool = False) -> None:
        self.hidden, self.layers, self.activation = hidden, layers, activation
        self.steps, self.batch_size, self.collocation_size = steps, batch_size, collocation_size
        self.lr, self.lr_final, self.lam, self.hj_weight = lr, lr_final, lam, hj_weight
        self.residual, self.t_final, self.cost_power = residual, t_final, cost_power
        self.grad_eps, self.box_fraction, self.box_margin = grad_eps, box_fraction, box_margin
        self.jitter, self.backward_mmd, self.standardize = jitter, backward_mmd, standardize
        self.device, self.dtype, self.seed, self.verbose = device, dtype, seed, verbose
        self._check_params()

    def _check_params(self) -> None:
        for name in ("hidden", "layers", "steps", "batch_size"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected an integer >= 1, got {v!r}")
        if self.collocation_size is not None and self.collocation_size < 1:
            raise ValueError(f"collocation_size: expected >= 1 or None, "
                             f"got {self.collocation_size}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation: expected one of {sorted(ACTIVATIONS)}, "
                             f"got {self.activation!r}")
        if self.residual not in RESIDUALS:
            raise ValueError(f"residual: expected one of {RESIDUALS}, got {self.residual!r}")
        for name in ("lr", "t_final", "lr_final"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: expected > 0, got {getattr(self, name)}")
        for name in ("lam", "hj_weight", "backward_mmd", "jitter", "box_margin", "grad_eps"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name}: expected >= 0, got {getattr(self, name)}")
        if self.lam == 0 and self.backward_mmd == 0:
            raise ValueError("lam: the MMD term is needed to match the marginals; got lam=0 "
                             "and backward_mmd=0")
        if not 0 <= self.box_fraction <= 1:
            raise ValueError(f"box_fraction: expected in [0, 1], got {self.box_fraction}")
        if not self.cost_power > 1:
            raise ValueError(f"cost_power: expected p > 1 (strictly convex cost), "
                             f"got {self.cost_power}")

    # -- coordinates ---------------------------------------------------------------------

    def _to_z(self, X: np.ndarray) -> torch.Tensor:
        return torch.as_tensor((X - self.center_) / self.scale_, dtype=self.dtype,
                               device=self.device)

    def _from_z(self, Z: torch.Tensor) -> np.ndarray:
        return Z.detach().to("cpu", torch.float64).numpy() * self.scale_ + self.center_

    def _u(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.model_(x, t)

    # -- training -------------------------------------------------------------------------

    def fit(self, Xs=None, Xt=None, ys=None, yt=None, *, a=None, b=None) -> HJOptimalTransport:
        """Train u_θ on samples of μ (``Xs``, shape (n, d)) and ν (``Xt``, (m, d)).

        With ``ys`` and ``yt`` (one label per point, the same label set), the MMD term is the
        class-wise average (class-conditional OT, one shared network).  ``a`` (n,) and ``b``
        (m,) are optional non-negative sample weights of the source and target points
        (normalised to sum 1; within a class when labels are given).

        Raises:
            ValueError: missing or badly shaped inputs, non-finite values, bad weights, or
                mismatched label sets.
            FloatingPointError: the loss became non-finite during training.
        """
        self._check_params()
        if Xs is None or Xt is None:
            raise ValueError("Xs, Xt: both the source and the target samples are required")
        xs = _as_points("Xs", Xs)
        xt = _as_points("Xt", Xt, dim=xs.shape[1])
        wa, wb = _as_weights("a", a, xs.shape[0]), _as_weights("b", b, xt.shape[0])
        if (ys is None) != (yt is None):
            raise ValueError("ys, yt: give both labels or neither")
        t0 = time.perf_counter()
        self.dim_ = xs.shape[1]
        pooled = np.concatenate([xs, xt])
        if self.standardize:
            self.center_ = pooled.mean(0)
            self.scale_ = float(np.sqrt(pooled.var(0).mean())) or 1.0
        else:
            self.center_, self.scale_ = np.zeros(self.dim_), 1.0
        g = torch.Generator(device="cpu").manual_seed(int(self.seed))
        torch.manual_seed(int(self.seed))
        # for p < 2 the dual exponent is > 2 and ∇H(q) = |q|^{p*−2} q has a zero Jacobian at
        # q = 0: u ≡ 0 is then a stationary point of the whole loss (an exact HJ solution with
        # a vanishing MMD gradient), so the last layer keeps its random initialisation there
        self.model_ = PotentialNet(self.dim_, self.hidden, self.layers, self.activation,
                                   zero_head=self.cost_power >= 2).to(
            device=self.device, dtype=self.dtype)
        zs, zt = self._to_z(xs), self._to_z(xt)
        groups = self._groups(zs, zt, ys, yt, wa, wb)
        zpool = torch.cat([zs, zt])
        lo, hi = zpool.min(0).values, zpool.max(0).values
        pad = self.box_margin * (hi - lo)
        lo, hi = lo - pad, hi + pad
        n_col = self.collocation_size or self.batch_size
        n_box = int(round(self.box_fraction * n_col))
        per = max(8, self.batch_size // len(groups)) if len(groups) > 1 else self.batch_size

        opt = torch.optim.Adam(self.model_.parameters(), lr=self.lr)
        gamma = self.lr_final ** (1.0 / max(1, self.steps))
        sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=gamma)
        resid = characteristic_residual if self.residual == "implicit" else pinn_residual
        self.history_ = {"loss": [], "hj": [], "mmd": []}
        kw = {"cost_power": self.cost_power, "eps": self.grad_eps}

        def draw(n: int, upto: int, weights: torch.Tensor | None = None) -> torch.Tensor:
            if weights is None:
                return torch.randint(0, upto, (n,), generator=g).to(self.device)
            return torch.multinomial(weights, n, replacement=True, generator=g).to(self.device)

        for step in range(self.steps):
            # collocation (x, t) ~ ϱ × U[0, t_f]
            box = lo + (hi - lo) * torch.rand(n_box, self.dim_, generator=g).to(
                self.device, self.dtype)
            near = zpool[draw(n_col - n_box, zpool.shape[0])]
            near = near + self.jitter * torch.randn(near.shape, generator=g).to(
                self.device, self.dtype)
            xc = torch.cat([box, near])
            tc = self.t_final * torch.rand(n_col, generator=g).to(self.device, self.dtype)
            l_hj = (resid(self._u, xc, tc, **kw) ** 2).mean() if self.hj_weight > 0 else \
                torch.zeros((), device=self.device, dtype=self.dtype)
            l_mmd = torch.zeros((), device=self.device, dtype=self.dtype)
            for gs, gt, ws, wt in groups:
                bs, bt = gs[draw(per, gs.shape[0], ws)], gt[draw(per, gt.shape[0], wt)]
                if self.lam > 0:
                    ts = forward_map(self._u, bs, self.t_final, create_graph=True, **kw)
                    l_mmd = l_mmd + self.lam * energy_distance(ts, bt) / len(groups)
                if self.backward_mmd > 0:
                    tb = inverse_map(self._u, bt, self.t_final, create_graph=True, **kw)
                    l_mmd = l_mmd + self.backward_mmd * energy_distance(tb, bs) / len(groups)
            loss = self.hj_weight * l_hj + l_mmd
            if not torch.isfinite(loss):
                raise FloatingPointError(
                    f"fit: the loss became non-finite at step {step}; lower lr (now {self.lr})")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            self.history_["loss"].append(float(loss.detach()))
            self.history_["hj"].append(float(l_hj.detach()))
            self.history_["mmd"].append(float(l_mmd.detach()))
            if self.verbose and step % max(1, self.steps // 10) == 0:
                print(f"step {step:6d}  loss {float(loss):.4g}  hj {float(l_hj):.3g}  "
                      f"mmd {float(l_mmd):.3g}")
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _groups(self, zs, zt, y_source, y_target, wa=None, wb=None) -> list[tuple]:
        """(source, target, source weights, target weights) per class; weights are float64 CPU
        tensors summing to 1 within the class, or None (uniform)."""

        def weights(w: np.ndarray | None, mask: np.ndarray | None, name: str):
            if w is None:
                return None
            w = w if mask is None else w[mask]
            if not w.sum() > 0:
                raise ValueError(f"{name}: every class needs a positive total weight")
            return torch.as_tensor(w / w.sum())

        if y_source is None:
            return [(zs, zt, weights(wa, None, "a"), weights(wb, None, "b"))]
        ys = _as_labels("ys", y_source, zs.shape[0])
        yt = _as_labels("yt", y_target, zt.shape[0])
        classes = np.unique(ys)
        if not np.array_equal(classes, np.unique(yt)):
            raise ValueError(f"ys, yt: expected the same label set, got "
                             f"{classes.tolist()} and {np.unique(yt).tolist()}")
        out = []
        for c in classes:
            out.append((zs[torch.as_tensor(ys == c, device=self.device)],
                        zt[torch.as_tensor(yt == c, device=self.device)],
                        weights(wa, ys == c, "a"), weights(wb, yt == c, "b")))
        return out

    # -- maps -----------------------------------------------------------------------------

    def _check_fitted(self) -> None:
        check_is_fitted(self, "model_")  # sklearn's NotFittedError

    def _apply(self, name: str, X, fn, batch: int) -> np.ndarray:
        self._check_fitted()
        arr = np.asarray(X, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] != self.dim_ or not np.isfinite(arr).all():
            raise ValueError(f"{name}: expected a finite array of shape (n, {self.dim_}), "
                             f"got shape {arr.shape}")
        outs = []
        for i in range(0, arr.shape[0], batch):
            z = self._to_z(arr[i:i + batch])
            outs.append(self._from_z(fn(self._u, z, self.t_final, self.cost_power,
                                        self.grad_eps)))
        return np.concatenate(outs) if outs else arr.copy()

    def transform(self, Xs=None, batch_size: int = 65536) -> np.ndarray:
        """T(x) = x + t_f ∇H(∇u(x, 0)) for source points ``Xs`` (n, d) → (n, d)."""
        if Xs is None:
            raise ValueError("Xs: expected the source points to map, got None")
        return self._apply("Xs", Xs, forward_map, batch_size)

    def inverse_transform(self, Xt=None, batch_size: int = 65536) -> np.ndarray:
        """T⁻¹(y) = y − t_f ∇H(∇u(y, t_f)) for target points ``Xt`` (m, d) → (m, d)."""
        if Xt is None:
            raise ValueError("Xt: expected the target points to map back, got None")
        return self._apply("Xt", Xt, inverse_map, batch_size)

    def potential(self, X, t: float = 0.0) -> np.ndarray:
        """u_θ(z, t) at the standardised points z of ``X`` (n, d) → (n,)."""
        self._check_fitted()
        arr = _as_points("X", X, dim=self.dim_)
        z = self._to_z(arr)
        with torch.no_grad():
            return self.model_(z, _time(float(t), z)).to("cpu", torch.float64).numpy()


def window_means(values: Sequence[float], windows: int = 10) -> list[float]:
    """Means of ``values`` over ``windows`` equal consecutive stretches (training curves)."""
    h = np.asarray(values, dtype=float)
    if h.size == 0:
        raise ValueError("values: expected at least one loss value")
    return [float(c.mean()) for c in np.array_split(h, min(windows, h.size))]


def largest_rise(curve: Sequence[float]) -> float:
    """Largest rise of a training curve (window means c_0, c_1, …) above its lowest earlier
    value, in units of the initial loss level |c_0|: max_i (c_i − min_{j<i} c_j) / |c_0|
    (≤ 0 for a non-increasing curve; inf when a value is not finite).

    Measured against the initial loss, not against the running minimum: once the loss sits at
    its noise floor (the unbiased energy distance fluctuates around 0), a relative tolerance on
    the running minimum flags every flat curve as unstable; a rise that matters is one that
    gives back a share of what training had gained."""
    c = np.asarray(curve, dtype=float)
    if c.ndim != 1 or c.size == 0:
        raise ValueError(f"curve: expected a non-empty 1-D sequence, got shape {c.shape}")
    if not np.isfinite(c).all():
        return math.inf
    if c.size == 1:
        return 0.0
    running = np.minimum.accumulate(c)[:-1]
    return float(np.max(c[1:] - running) / max(abs(float(c[0])), 1e-300))


def is_stable(curve: Sequence[float], tolerance: float = 0.1) -> bool:
    """A training curve (window means) is stable when every value is finite and none exceeds
    the lowest value before it by more than ``tolerance`` times the initial loss level |c_0|
    (:func:`largest_rise`)."""
    check_real("tolerance", tolerance, low=0.0)
    return largest_rise(curve) <= tolerance
