"""Learn-to-regularize on scikit-learn digits — the offline stand-in for the 20 Newsgroups
experiment of F²SA-p (Chen, Li, Chayti & Zhang, "Faster Gradient Methods for Highly-Smooth
Stochastic Bilevel Optimization", ICLR 2026, OpenReview XIAta0WOJ6, §5)::

    lower:  θ*(w) = argmin_θ  CE_train(Xθ) + ½ Σ_i exp(w_i) ‖θ_i‖²      (θ ∈ R^{64×10})
    upper:  min_w  CE_val(X θ*(w))

multinomial logistic regression without intercept, one ℓ2 weight ``exp(w_i)`` per input
feature i (row θ_i of θ), mean cross-entropies.  The lower level is strongly convex (the
penalty) and C^∞ in θ, the setting of the paper's Assumption 2.5.  The upper variable x is
``w`` (64 entries), the lower variable y is θ flattened row-major (640 entries).

Differences from the paper: digits (1797 images, pixels / 16) instead of 20 Newsgroups;
``Σ`` instead of the code's ``mean`` over θ's entries in the penalty (the brief's form; a
constant rescaling of exp(w)); the split below instead of the code's halves.

Derivatives are closed forms (softmax P, one-hot Y, minibatch of m rows)::

    ∇_θ CE = Xᵀ(P − Y)/m,   ∇²_θθ CE·V = Xᵀ(P ⊙ XV − P ⊙ rowsum(P ⊙ XV))/m,
    ∇_w g = ½ exp(w) ⊙ ‖θ_i‖²,   ∇²_{wθ} g·V = exp(w) ⊙ Σ_c θ_ic V_ic,   ∇_w f = 0,

and :meth:`lower_solution` / :meth:`hypergradient` use Newton and the implicit formula with
the dense 640×640 Hessian assembled in closed form; the tests compare all of them with the
autograd defaults of :class:`~optzoo.bilevel.BilevelProblem`.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from optzoo.bilevel.problem import BilevelProblem

__all__ = ["LearnToRegularize"]

CLASSES, FEATURES = 10, 64


@functools.lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    d = load_digits()
    return d.data / 16.0, d.target


class LearnToRegularize(BilevelProblem):
    """Digits split into train / validation / test (stratified, fixed by ``split_seed``).

    Args:
        n_train: training images (the lower level's data).
        n_val: validation images (the upper level's data); the rest is the test set.
        w0: initial log-regularisation weight of every feature (x0 = w0·1).
        split_seed: seed of the stratified split.
        dtype: floating dtype.

    ``sample(level, batch_size, generator)`` returns row indices drawn with replacement from
    the training (``"lower"``) or validation (``"upper"``) set; ``None`` (full batch) when
    ``batch_size`` is None.
    """

    name = "learn-to-regularize-digits"

    def __init__(self, n_train: int = 300, n_val: int = 300, *, w0: float = -2.0,
                 split_seed: int = 0, dtype: torch.dtype = torch.float64) -> None:
        from sklearn.model_selection import train_test_split

        X, t = _digits()
        for name, v in (("n_train", n_train), ("n_val", n_val)):
            if not isinstance(v, int) or isinstance(v, bool) or v < CLASSES:
                raise ValueError(f"{name}: expected an integer >= {CLASSES}, got {v!r}")
        if n_train + n_val > len(t) - CLASSES:
            raise ValueError(f"n_train, n_val: expected n_train + n_val <= {len(t) - CLASSES} "
                             f"(the rest is the test set), got {n_train} + {n_val}")
        idx = np.arange(len(t))
        tr, rest = train_test_split(idx, train_size=n_train, stratify=t,
                                    random_state=split_seed)
        va, te = train_test_split(rest, train_size=n_val, stratify=t[rest],
                                  random_state=split_seed)

        def part(ix):
            return (torch.as_tensor(X[ix], dtype=dtype), torch.as_tensor(t[ix]),
                    torch.nn.functional.one_hot(torch.as_tensor(t[ix]), CLASSES).to(dtype))

        self.train, self.val, self.test = part(tr), part(va), part(te)
        self.w0, self.dtype = float(w0), dtype
        self._y0: torch.Tensor | None = None

    # -- data ------------------------------------------------------------------------------------
    def sample(self, level, batch_size, generator):
        if batch_size is None:
            return None
        n = (self.train if level == "lower" else self.val)[0].shape[0]
        return torch.randint(n, (batch_size,), generator=generator)

    @staticmethod
    def _rows(data, batch):
        X, t, Y = data
        return (X, t, Y) if batch is None else (X[batch], t[batch], Y[batch])

    @staticmethod
    def _theta(y: torch.Tensor) -> torch.Tensor:
        return y.reshape(FEATURES, CLASSES)

    # -- objectives ------------------------------------------------------------------------------
    def f(self, x, y, batch=None):
        X, t, _ = self._rows(self.val, batch)
        return torch.nn.functional.cross_entropy(X @ self._theta(y), t)

    def g(self, x, y, batch=None):
        X, t, _ = self._rows(self.train, batch)
        th = self._theta(y)
        return (torch.nn.functional.cross_entropy(X @ th, t)
                + 0.5 * (torch.exp(x) * (th**2).sum(1)).sum())

    def x0(self):
        return torch.full((FEATURES,), self.w0, dtype=self.dtype)

    def y0(self):
        """θ*(w0): every method starts from the exact lower solution at the initial weights
        (the official code starts from a pretrained model)."""
        if self._y0 is None:
            self._y0 = self.lower_solution(self.x0(), torch.zeros(FEATURES * CLASSES,
                                                                  dtype=self.dtype))
        return self._y0.clone()

    # -- closed-form derivatives -----------------------------------------------------------------
    @staticmethod
    def _ce_grad(data, y, batch):
        X, _, Y = LearnToRegularize._rows(data, batch)
        P = torch.softmax(X @ LearnToRegularize._theta(y), dim=1)
        return (X.T @ (P - Y) / X.shape[0]).reshape(-1)

    def grad_f(self, x, y, batch=None):
        return torch.zeros_like(x), self._ce_grad(self.val, y, batch)

    def grad_g_y(self, x, y, batch=None):
        th = self._theta(y)
        return self._ce_grad(self.train, y, batch) + (torch.exp(x)[:, None] * th).reshape(-1)

    def grad_g(self, x, y, batch=None):
        th = self._theta(y)
        return 0.5 * torch.exp(x) * (th**2).sum(1), self.grad_g_y(x, y, batch)

    def hvp_yy(self, x, y, v, batch=None):
        X, _, _ = self._rows(self.train, batch)
        P = torch.softmax(X @ self._theta(y), dim=1)
        V = self._theta(v)
        Z = P * (X @ V)
        ce = X.T @ (Z - P * Z.sum(1, keepdim=True)) / X.shape[0]
        return (ce + torch.exp(x)[:, None] * V).reshape(-1)

    def cross_xy(self, x, y, v, batch=None):
        return torch.exp(x) * (self._theta(y) * self._theta(v)).sum(1)

    def hessian_yy(self, x: torch.Tensor, y: torch.Tensor, batch=None) -> torch.Tensor:
        """Dense ∇²_θθ g (640×640, rows/columns in θ's flat order), assembled in closed form:
        ``Σ_n x_n x_nᵀ ⊗ (diag p_n − p_n p_nᵀ)/m + diag(exp(w) ⊗ 1)``."""
        X, _, _ = self._rows(self.train, batch)
        m = X.shape[0]
        P = torch.softmax(X @ self._theta(y), dim=1)
        Z = (X[:, :, None] * P[:, None, :]).reshape(m, -1)  # rows: x_n ⊗ p_n
        H = -(Z.T @ Z)  # the −p_n p_nᵀ part
        diag = torch.einsum("ni,na,nj->aij", X, P, X)  # the diag(p_n) part, one block per class
        idx = torch.arange(FEATURES) * CLASSES
        for a in range(CLASSES):
            H[(idx + a)[:, None], (idx + a)[None, :]] += diag[a]
        H = H / m
        return H + torch.diag(torch.exp(x).repeat_interleave(CLASSES))

    # -- exact references ------------------------------------------------------------------------
    def lower_solution(self, x, y_init=None, *, tol=1e-12, max_iter=50):
        """θ*(w) by damped Newton (full batch, closed-form Hessian), a step accepted when it
        lowers g or the norm of its gradient."""
        x = x.detach()
        y = (torch.zeros(FEATURES * CLASSES, dtype=self.dtype) if y_init is None
             else y_init.detach().clone())
        gy = self.grad_g_y(x, y)
        for _ in range(max_iter):
            norm = float(gy.norm())
            if norm <= tol:
                break
            step = torch.linalg.solve(self.hessian_yy(x, y), gy)
            value, t = float(self.g(x, y)), 1.0
            while t > 1e-8:
                cand = y - t * step
                g_cand = self.grad_g_y(x, cand)
                # near the solution the decrease of g drops below its round-off: accept a
                # step that shrinks the gradient instead
                if float(self.g(x, cand)) <= value or float(g_cand.norm()) < norm:
                    break
                t *= 0.5
            else:
                break  # no progress possible at this precision
            y, gy = cand, g_cand
            if t * float(step.norm()) <= 1e-15 * (1.0 + float(y.norm())):
                break  # the step is at round-off level
        return y

    def hypergradient(self, x, y=None):
        x = x.detach()
        ys = self.lower_solution(x, self.y0() if y is None else y)
        v = torch.linalg.solve(self.hessian_yy(x, ys), self.grad_f(x, ys)[1])
        return -self.cross_xy(x, ys, v)

    # -- evaluation ------------------------------------------------------------------------------
    def test_metrics(self, y: torch.Tensor) -> tuple[float, float]:
        """(mean cross-entropy, accuracy) of θ = ``y`` on the test set."""
        X, t, _ = self.test
        logits = X @ self._theta(y.detach())
        return (float(torch.nn.functional.cross_entropy(logits, t)),
                float((logits.argmax(1) == t).to(self.dtype).mean()))
