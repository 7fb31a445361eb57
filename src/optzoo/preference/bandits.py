"""Contextual bandits with a linear-softmax policy: AuxDPO's didactic setting, computed exactly.

AuxDPO (Gopalan, Ray Chowdhury & Banerjee, ICLR 2026, arXiv 2510.20413) argues about POPULATION
optima: with infinitely many preference labels the DPO loss of a pair (a, a') in state s is the
Bradley–Terry–Luce expectation p*·ℓ(h) + (1 − p*)·ℓ(−h), p* = σ(r*(s, a) − r*(s, a')), weighted
by the pair's count n_{s,a,a'} (paper Prop. 1).  This module evaluates those losses and their
minimisers exactly (no sampling): SciPy's L-BFGS (and least squares for IPO) on analytic
gradients in float64.

Model: π_θ(a | s) ∝ exp(θᵀφ(s, a)), θ ∈ R^d, base θ₀ = 0 (so π₀ is uniform when φ is free);
state weights ρ(s).  The implicit reward of DPO is r_θ(s, a) = β·log(π_θ(a|s)/π₀(a|s)).

* :meth:`LinearSoftmaxBandit.fit_dpo`, ``fit_ipo``, ``fit_dpop`` — the population optima of DPO
  (sigmoid), IPO (squared loss on the log-ratio margin, target 1/(2τ), τ = β) and DPO-Positive.
* :meth:`fit_auxdpo` — AuxDPO in its exact form (the brief: "enforce δ = Γc with an orthonormal
  basis Γ of N(A)"): the margin is β·(log-ratio margin) + δ(s, a) − δ(s, a') with δ ∈ N(A), where
  A (d × m) has the column ρ(s)π₀(a|s)∇_θ log π₀(a|s) for each (s, a) (paper Sec. 4.1; the column
  form is the brief's inference from the gradient of the expected reward).
* :meth:`fit_rlhf` — the exact KL-regularised RLHF optimum, argmax_θ Σ_s ρ(s)(E_{π_θ}[r*] −
  β·KL(π_θ(·|s) ‖ π₀(·|s))); :meth:`local_rlhf` — its natural-gradient approximation
  θ₀ + (1/β)·F⁺ A r* (F: the Fisher matrix of π₀ under ρ).
* :func:`paper_bandit` — Prop. 3's example: one state, three actions, logits [θ, −θ, 0],
  r* = [1, 2, 0]; the base policy's expected reward is 1.0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.special

from optzoo.checks import check_int, check_real

__all__ = ["LinearSoftmaxBandit", "paper_bandit", "random_bandit"]


@dataclass(frozen=True)
class LinearSoftmaxBandit:
    """A linear-softmax contextual bandit with pair counts and a true reward.

    Args:
        features: φ, shape (S, A, d).
        reward: r*, shape (S, A).
        counts: n_{s,a,a'} ≥ 0, shape (S, A, A); only a < a' is read (a pair is unordered, its
            label is drawn from BTL(r*)).
        rho: state weights ρ(s) ≥ 0 summing to 1 (default uniform); they weight the RLHF
            objective and the A matrix.
    """

    features: np.ndarray
    reward: np.ndarray
    counts: np.ndarray
    rho: np.ndarray | None = None

    def __post_init__(self) -> None:
        phi = np.asarray(self.features, dtype=np.float64)
        if phi.ndim != 3 or min(phi.shape) < 1 or phi.shape[1] < 2:
            raise ValueError(f"features: expected shape (S, A >= 2, d), got {phi.shape}")
        s, a, _ = phi.shape
        r = np.asarray(self.reward, dtype=np.float64)
        n = np.asarray(self.counts, dtype=np.float64)
        if r.shape != (s, a):
            raise ValueError(f"reward: expected shape {(s, a)}, got {r.shape}")
        if n.shape != (s, a, a):
            raise ValueError(f"counts: expected shape {(s, a, a)}, got {n.shape}")
        rho = np.full(s, 1.0 / s) if self.rho is None else np.asarray(self.rho, np.float64)
        if rho.shape != (s,) or (rho < 0).any() or not np.isclose(rho.sum(), 1.0):
            raise ValueError(f"rho: expected {s} non-negative state weights summing to 1")
        for name, v in (("features", phi), ("reward", r), ("counts", n)):
            if not np.isfinite(v).all():
                raise ValueError(f"{name}: contains NaN or infinite values")
        if (n < 0).any() or not np.triu(n.sum(0), 1).sum() > 0:
            raise ValueError("counts: expected non-negative pair counts with a positive total "
                             "over pairs a < a'")
        object.__setattr__(self, "features", phi)
        object.__setattr__(self, "reward", r)
        object.__setattr__(self, "counts", n)
        object.__setattr__(self, "rho", rho)

    # -- the policy ---------------------------------------------------------------------------

    @property
    def dim(self) -> int:
        return self.features.shape[2]

    def _theta(self, theta) -> np.ndarray:
        th = np.asarray(theta, dtype=np.float64)
        if th.shape != (self.dim,) or not np.isfinite(th).all():
            raise ValueError(f"theta: expected a finite vector of shape ({self.dim},), got "
                             f"{th.shape}")
        return th

    def log_policy(self, theta) -> np.ndarray:
        """log π_θ(a | s), shape (S, A)."""
        z = self.features @ self._theta(theta)
        return z - scipy.special.logsumexp(z, axis=1, keepdims=True)

    def policy(self, theta) -> np.ndarray:
        return np.exp(self.log_policy(theta))

    def expected_reward(self, theta) -> float:
        """J(θ) = Σ_s ρ(s) Σ_a π_θ(a|s) r*(s, a)."""
        return float((self.rho[:, None] * self.policy(theta) * self.reward).sum())

    def _centred(self, pi: np.ndarray) -> np.ndarray:
        """φ(s, a) − E_{π(·|s)}φ(s, ·) = ∇_θ log π_θ(a | s), shape (S, A, d)."""
        return self.features - np.einsum("sa,sad->sd", pi, self.features)[:, None, :]

    # -- population losses --------------------------------------------------------------------
    # With θ₀ = 0 the log-partition cancels inside a state, so the log-ratio margin of a pair is
    # LINEAR in θ: h = θᵀ(φ(s, a) − φ(s, a')).  DPO and AuxDPO are then weighted logistic
    # regressions and IPO a weighted least-squares problem; only DPOP and RLHF see log Z.

    def _pairs(self):
        upper = np.triu(np.ones(self.counts.shape[1:], dtype=bool), 1)[None] & (self.counts > 0)
        s, a, b = np.nonzero(upper)
        w = self.counts[s, a, b]
        p = scipy.special.expit(self.reward[s, a] - self.reward[s, b])
        diff = self.features[s, a] - self.features[s, b]  # (P, d)
        return s, a, b, w, p, diff

    @staticmethod
    def _minimise(fun, size: int) -> np.ndarray:
        res = scipy.optimize.minimize(fun, np.zeros(size), jac=True, method="L-BFGS-B",
                                      options={"maxiter": 10_000, "gtol": 1e-10,
                                               "ftol": 1e-14})
        return res.x

    @classmethod
    def _logistic(cls, design: np.ndarray, w: np.ndarray, p: np.ndarray) -> np.ndarray:
        """argmin_x Σ_i w_i·(p_i·softplus(−h_i) + (1 − p_i)·softplus(h_i)), h = design·x: the
        population BTL cross-entropy."""

        def fun(x):
            h = design @ x
            val = (w * (p * np.logaddexp(0, -h) + (1 - p) * np.logaddexp(0, h))).sum()
            return val, design.T @ (w * (scipy.special.expit(h) - p))

        return cls._minimise(fun, design.shape[1])

    def fit_dpo(self, beta: float = 1.0) -> np.ndarray:
        """argmin_θ of the population DPO loss (Prop. 1)."""
        check_real("beta", beta, low=0, low_open=True)
        _, _, _, w, p, diff = self._pairs()
        return self._logistic(beta * diff, w, p)

    def fit_ipo(self, beta: float = 1.0) -> np.ndarray:
        """argmin_θ of the population IPO loss, p(h − t)² + (1 − p)(−h − t)², t = 1/(2τ), τ = β:
        a weighted least-squares fit of h to (2p − 1)·t."""
        check_real("beta", beta, low=0, low_open=True)
        _, _, _, w, p, diff = self._pairs()
        target = (2 * p - 1) / (2.0 * beta)
        sw = np.sqrt(w)
        return np.linalg.lstsq(sw[:, None] * diff, sw * target, rcond=None)[0]

    def fit_dpop(self, beta: float = 1.0, lam: float = 50.0) -> np.ndarray:
        """argmin_θ of the population DPO-Positive loss: the winner's log-ratio is penalised by
        λ·max(0, −log-ratio) inside the sigmoid (L-BFGS with the kink's subgradient)."""
        check_real("beta", beta, low=0, low_open=True)
        check_real("lam", lam, low=0)
        s, a, b, w, p, _ = self._pairs()
        logp0 = self.log_policy(np.zeros(self.dim))

        def fun(th):
            logp = self.log_policy(th)
            lr = logp - logp0
            pi = np.exp(logp)
            dlr = self._centred(pi)  # ∂ log π / ∂θ
            val, grad = 0.0, np.zeros(self.dim)
            for win, lose, prob in ((a, b, p), (b, a, 1 - p)):
                pen = np.maximum(0.0, -lr[s, win])
                h = beta * (lr[s, win] - lr[s, lose] - lam * pen)
                val += (w * prob * np.logaddexp(0, -h)).sum()
                dh = beta * (dlr[s, win] - dlr[s, lose]
                             + lam * (lr[s, win] < 0)[:, None] * dlr[s, win])
                grad += ((w * prob * -scipy.special.expit(-h))[:, None] * dh).sum(0)
            return val, grad

        return self._minimise(fun, self.dim)

    def null_space(self) -> np.ndarray:
        """An orthonormal basis Γ (m × (m − rank A)) of N(A), m = S·A, A as in the module
        docstring (evaluated at θ₀ = 0)."""
        pi0 = self.policy(np.zeros(self.dim))
        columns = self.rho[:, None, None] * pi0[:, :, None] * self._centred(pi0)
        a_mat = columns.reshape(-1, self.dim).T
        return scipy.linalg.null_space(a_mat)

    def fit_auxdpo(self, beta: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        """Population AuxDPO with δ = Γc ∈ N(A) exactly: ``(θ, δ)`` (δ of shape (S, A)).  The
        margin β·θᵀΔφ + δ(s, a) − δ(s, a') is linear in (θ, c): a logistic regression."""
        check_real("beta", beta, low=0, low_open=True)
        s, a, b, w, p, diff = self._pairs()
        gamma = self.null_space()
        n_act = self.counts.shape[1]
        design = np.hstack([beta * diff, gamma[s * n_act + a] - gamma[s * n_act + b]])
        x = self._logistic(design, w, p)
        return x[:self.dim], (gamma @ x[self.dim:]).reshape(-1, n_act)

    def fit_rlhf(self, beta: float = 1.0) -> np.ndarray:
        """argmax_θ Σ_s ρ(s)(E_{π_θ}[r*] − β·KL(π_θ(·|s) ‖ π₀(·|s)))."""
        check_real("beta", beta, low=0, low_open=True)
        logp0 = self.log_policy(np.zeros(self.dim))
        rho, r = self.rho, self.reward

        def fun(th):
            logp = self.log_policy(th)
            pi = np.exp(logp)
            adv = r - beta * (logp - logp0)
            # E_π[r* − β(log π − log π₀)] is the objective, and its gradient the
            # advantage-weighted score
            obj = (rho * (pi * adv).sum(1)).sum()
            grad = np.einsum("s,sa,sad->d", rho, pi * adv, self._centred(pi))
            return -obj, -grad

        return self._minimise(fun, self.dim)

    def local_rlhf(self, beta: float = 1.0) -> np.ndarray:
        """θ₀ + (1/β)·F⁺ A r* (paper Sec. 4.1)."""
        check_real("beta", beta, low=0, low_open=True)
        pi0 = self.policy(np.zeros(self.dim))
        g = self._centred(pi0)
        weight = self.rho[:, None] * pi0
        fisher = np.einsum("sa,sad,sae->de", weight, g, g)
        ar = np.einsum("sa,sad,sa->d", weight, g, self.reward)
        return np.linalg.pinv(fisher) @ ar / beta


def paper_bandit(ratio: float = 20.0) -> LinearSoftmaxBandit:
    """AuxDPO's Prop. 3 example: logits [θ, −θ, 0], r* = [1, 2, 0], pair counts n₁₂ = n₂₃ = 1
    and n₃₁ = ``ratio`` (the imbalance that makes DPO promote a₁ over a₂)."""
    check_real("ratio", ratio, low=0, low_open=True)
    counts = np.zeros((1, 3, 3))
    counts[0, 0, 1] = counts[0, 1, 2] = 1.0
    counts[0, 0, 2] = ratio  # the pair {a1, a3}
    return LinearSoftmaxBandit(features=np.array([[[1.0], [-1.0], [0.0]]]),
                               reward=np.array([[1.0, 2.0, 0.0]]), counts=counts)


def random_bandit(seed: int, *, states: int = 20, actions: int = 10, dim: int = 8,
                  skew: float = 0.3) -> LinearSoftmaxBandit:
    """A random instance of the brief's Bandit B: φ ~ N(0, 1/d) per (s, a), r* ~ N(0, 1) (not in
    the features' span), pair counts ~ Gamma(``skew``) per (s, a < a') — small shapes give the
    skewed pair distributions the paper's failures need (our choice; the paper's generator
    was not recovered)."""
    check_int("seed", seed, low=0)
    check_int("states", states, low=1)
    check_int("actions", actions, low=2)
    check_int("dim", dim, low=1)
    check_real("skew", skew, low=0, low_open=True)
    rng = np.random.default_rng(seed)
    phi = rng.normal(0.0, 1.0 / np.sqrt(dim), (states, actions, dim))
    reward = rng.normal(0.0, 1.0, (states, actions))
    counts = np.triu(rng.gamma(skew, 1.0, (states, actions, actions)), 1)
    return LinearSoftmaxBandit(features=phi, reward=reward, counts=counts)
