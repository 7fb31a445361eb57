"""Data hyper-cleaning on scikit-learn digits with an ℓ_p-regularised lower level — the offline
stand-in for the SNLI experiment of UniBiO (Wu, Gong, Hao & Liu, "Bilevel Optimization with
Lower-Level Uniform Convexity: Theory and Algorithm", ICLR 2026, OpenReview dJgb3ngAvT; the
paper's motivating example §3.2 and its hyper-cleaning experiment).

A fraction ``flip`` of the training labels is replaced by a uniformly drawn *other* class; the
upper variable x = λ ∈ R^n holds one weight logit per training sample, the lower variable
y = vec(W) the weights of a linear soft-max classifier (64 pixels / 16 plus a bias → 10
classes)::

    g(λ, W) = (1/|S|) Σ_{i∈S} σ(λ_i) CE(W; x_i, ỹ_i) + c Σ|W_jk|^p     (noisy training batch S)
    f(λ, W) = (1/|V|) Σ_{j∈V} CE(W; x_j, y_j)                          (clean validation batch V)

The weighted cross-entropy is convex and c Σ|W|^p uniformly convex of order p, so the lower
level is uniformly convex, strongly convex only for p = 2 (c = 1e-3, p = 3 as in the paper;
the official script's lower level is ``mean(σ(λ_i) CE_i) + 1e-4 Σ‖w‖_p^p``).  λ starts at 1
(the script's ``torch.ones``), W at the ``nn.Linear`` initialisation U(±1/√65).

Derivatives are closed forms of the soft-max model (tested against the autograd defaults);
``sample("lower")`` draws a training minibatch, ``sample("upper")`` a validation minibatch
(without replacement).  :meth:`test_accuracy` and :meth:`cleaning_auc` are the reproduction's
metrics: the AUC of ``−λ`` as a score for "this label was flipped".
"""

from __future__ import annotations

import functools
import math

import torch

from optzoo.bilevel.problem import BilevelProblem

__all__ = ["DigitsHyperCleaning"]

FEATURES, CLASSES = 65, 10  # 64 pixels + bias, 10 digits


@functools.lru_cache(maxsize=1)
def _digits() -> tuple[torch.Tensor, torch.Tensor]:
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.as_tensor(d.data, dtype=torch.float64) / 16.0
    x = torch.cat([x, torch.ones(x.shape[0], 1, dtype=torch.float64)], dim=1)
    return x, torch.as_tensor(d.target, dtype=torch.long)


class DigitsHyperCleaning(BilevelProblem):
    """Hyper-cleaning of digits with flipped training labels.

    Args:
        n_train, n_val: sizes of the (noisy) training and (clean) validation splits; the rest
            of the 1797 images is the test split.
        flip: fraction of training labels replaced by another class.
        p: order of the lower regulariser c Σ|W|^p (≥ 2).
        reg: c.
        seed: split, label-flip and initialisation seed.
    """

    name = "digits-hyper-cleaning"

    def __init__(self, *, n_train: int = 1000, n_val: int = 300, flip: float = 0.4,
                 p: float = 3.0, reg: float = 1e-3, seed: int = 0) -> None:
        x, t = _digits()
        if not isinstance(n_train, int) or not isinstance(n_val, int) or n_train < 10 \
                or n_val < 10 or n_train + n_val > x.shape[0] - 10:
            raise ValueError(f"n_train, n_val: expected integers >= 10 leaving >= 10 test "
                             f"images of {x.shape[0]}, got {n_train}, {n_val}")
        if not 0.0 <= flip < 1.0:
            raise ValueError(f"flip: expected a fraction in [0, 1), got {flip!r}")
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 2 <= p < math.inf:
            raise ValueError(f"p: expected an order >= 2, got {p!r}")
        if not reg > 0:
            raise ValueError(f"reg: expected > 0, got {reg!r}")
        g = torch.Generator().manual_seed(seed)
        perm = torch.randperm(x.shape[0], generator=g)
        tr, va, te = perm[:n_train], perm[n_train:n_train + n_val], perm[n_train + n_val:]
        self.X, self.Xv, self.Xt = x[tr], x[va], x[te]
        self.t_clean, self.tv, self.tt = t[tr], t[va], t[te]
        n_flip = round(flip * n_train)
        flipped = torch.randperm(n_train, generator=g)[:n_flip]
        shift = torch.randint(1, CLASSES, (n_flip,), generator=g)  # a uniformly drawn other class
        self.t = self.t_clean.clone()
        self.t[flipped] = (self.t[flipped] + shift) % CLASSES
        self.noisy = torch.zeros(n_train, dtype=torch.bool)
        self.noisy[flipped] = True
        bound = 1.0 / math.sqrt(FEATURES)
        self._y0 = (torch.rand(FEATURES * CLASSES, generator=g, dtype=torch.float64) * 2 - 1) \
            * bound
        self.p, self.reg = float(p), float(reg)
        self.n_train, self.n_val = n_train, n_val

    # -- data --------------------------------------------------------------------------------
    def sample(self, level, batch_size, generator):
        n = self.n_train if level == "lower" else self.n_val
        if batch_size is None or batch_size >= n:
            return None
        return torch.randperm(n, generator=generator)[:batch_size]

    def _lower_data(self, batch):
        if batch is None:
            return self.X, self.t, slice(None)
        return self.X[batch], self.t[batch], batch

    def _upper_data(self, batch):
        if batch is None:
            return self.Xv, self.tv
        return self.Xv[batch], self.tv[batch]

    @staticmethod
    def _W(y: torch.Tensor) -> torch.Tensor:
        return y.reshape(FEATURES, CLASSES)

    # -- objectives ----------------------------------------------------------------------------
    def f(self, x, y, batch=None):
        X, t = self._upper_data(batch)
        return torch.nn.functional.cross_entropy(X @ self._W(y), t)

    def g(self, x, y, batch=None):
        X, t, idx = self._lower_data(batch)
        ce = torch.nn.functional.cross_entropy(X @ self._W(y), t, reduction="none")
        return (torch.sigmoid(x[idx]) * ce).mean() + self.reg * (y.abs() ** self.p).sum()

    def x0(self):
        return torch.ones(self.n_train, dtype=torch.float64)

    def y0(self):
        return self._y0.clone()

    # -- closed-form derivatives of the soft-max model -----------------------------------------
    def _softmax(self, X, y):
        return torch.softmax(X @ self._W(y), dim=1)

    def grad_f(self, x, y, batch=None):
        X, t = self._upper_data(batch)
        r = self._softmax(X, y)
        r[torch.arange(len(t)), t] -= 1.0
        return torch.zeros_like(x), (X.T @ r / len(t)).reshape(-1)

    def _reg_grad(self, y):
        return self.reg * self.p * torch.sign(y) * y.abs() ** (self.p - 1.0)

    def grad_g_y(self, x, y, batch=None):
        X, t, idx = self._lower_data(batch)
        r = self._softmax(X, y)
        r[torch.arange(len(t)), t] -= 1.0
        s = torch.sigmoid(x[idx])
        return (X.T @ (s[:, None] * r) / len(t)).reshape(-1) + self._reg_grad(y)

    def grad_g(self, x, y, batch=None):
        X, t, idx = self._lower_data(batch)
        logp = torch.log_softmax(X @ self._W(y), dim=1)
        ce = -logp[torch.arange(len(t)), t]
        s = torch.sigmoid(x[idx])
        gx = torch.zeros_like(x)
        gx[idx] = s * (1 - s) * ce / len(t)
        return gx, self.grad_g_y(x, y, batch)

    def hvp_yy(self, x, y, v, batch=None):
        X, t, idx = self._lower_data(batch)
        P = self._softmax(X, y)
        U = X @ self._W(v)
        PU = P * U
        M = PU - P * PU.sum(1, keepdim=True)  # the soft-max Jacobian (diag P − PPᵀ) applied to U
        s = torch.sigmoid(x[idx])
        curv = self.reg * self.p * (self.p - 1.0) * y.abs() ** (self.p - 2.0)
        return (X.T @ (s[:, None] * M) / len(t)).reshape(-1) + curv * v

    def cross_xy(self, x, y, v, batch=None):
        X, t, idx = self._lower_data(batch)
        r = self._softmax(X, y)
        r[torch.arange(len(t)), t] -= 1.0
        s = torch.sigmoid(x[idx])
        out = torch.zeros_like(x)
        out[idx] = s * (1 - s) * (r * (X @ self._W(v))).sum(1) / len(t)
        return out

    # -- metrics -----------------------------------------------------------------------------
    def test_accuracy(self, y: torch.Tensor) -> float:
        """Accuracy of the classifier ``y`` on the test split."""
        pred = (self.Xt @ self._W(y.detach())).argmax(1)
        return float((pred == self.tt).double().mean())

    def cleaning_auc(self, x: torch.Tensor) -> float:
        """ROC AUC of ``−λ`` as a detector of flipped labels (1 = all flipped samples weighted
        below all clean ones, 0.5 = no separation)."""
        from sklearn.metrics import roc_auc_score

        if not 0 < int(self.noisy.sum()) < self.n_train:
            raise ValueError("flip: the AUC needs both flipped and clean training samples")
        return float(roc_auc_score(self.noisy.numpy(), (-x.detach()).numpy()))

    def refit(self, x: torch.Tensor, *, iters: int = 200) -> torch.Tensor:
        """The lower solution at ``x`` by full-batch L-BFGS (the classifier the learned weights
        give when trained to convergence)."""
        x = x.detach()
        y = self.y0().requires_grad_()
        opt = torch.optim.LBFGS([y], lr=1.0, max_iter=iters, tolerance_grad=1e-10,
                                tolerance_change=1e-14, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = self.g(x, y)
            loss.backward()
            return loss

        opt.step(closure)
        return y.detach()
