"""Synthetic finite-horizon linear CMDPs with adversarial losses and stochastic costs.

The problem class of Yu, Bae & Lee, "Primal-Dual Policy Optimization for Adversarial Linear
CMDPs" (ICLR 2026, OpenReview baP3Dw7bWO, arXiv 2605.11535): horizon ``H``, finite states and
actions, features φ(s, a) ∈ ℝ^d, transitions P_h(s' | s, a) = ⟨φ(s, a), μ_h(s')⟩, losses
f^k_h(s, a) = ⟨φ(s, a), θ^k_h⟩ chosen by an adversary each episode (revealed in full after it),
costs g_h(s, a) = ⟨φ(s, a), ϑ_h⟩ ∈ [0, 1] fixed and observed along the trajectory only, with
Bernoulli noise (bandit feedback).  The constraint is V^π_{g,1}(s_1) ≤ b.

The low-rank construction makes the CMDP *exactly* linear: φ(s, a) lies in the simplex Δ_d
(Dirichlet) and each μ_h(·)_i is a distribution over S, so P_h(·|s, a) = Σ_i φ_i μ_{h,i} is a
distribution.  Values are computed exactly by backward dynamic programming; the best fixed
feasible policy is the linear programme over occupancy measures q_h(s, a) (Altman 1999), solved
with HiGHS through :func:`scipy.optimize.linprog`.

Arrays: a policy is ``H x S x A``, a reward-like function (loss, cost) is ``H x S x A``,
transitions are ``H x S x A x S``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from optzoo.checks import check_finite_array, check_generator, check_int


@dataclass(frozen=True)
class LinearCMDP:
    """An episodic linear CMDP with a fixed initial state.

    Args:
        phi: features, ``S x A x d``.
        mu: next-state measures, ``H x d x S`` (each row a distribution over S).
        cost_vec: cost parameters ϑ, ``H x d``, so that g_h(s, a) = ⟨φ(s, a), ϑ_h⟩ ∈ [0, 1].
        s1: initial state.
    """

    phi: np.ndarray
    mu: np.ndarray
    cost_vec: np.ndarray
    s1: int = 0

    def __post_init__(self) -> None:
        for name in ("phi", "mu", "cost_vec"):
            a = getattr(self, name)
            if not isinstance(a, np.ndarray):
                raise TypeError(f"{name}: expected a numpy array, got {type(a).__name__}")
            check_finite_array(name, a)
        check_int("s1", self.s1)
        if self.phi.ndim != 3:
            raise ValueError(f"phi: expected S x A x d, got shape {self.phi.shape}")
        S, _, d = self.phi.shape
        if self.mu.ndim != 3 or self.mu.shape[1:] != (d, S):
            raise ValueError(f"mu: expected H x {d} x {S}, got shape {self.mu.shape}")
        if self.cost_vec.shape != (self.mu.shape[0], d):
            raise ValueError(f"cost_vec: expected {(self.mu.shape[0], d)}, "
                             f"got {self.cost_vec.shape}")
        if not 0 <= self.s1 < S:
            raise ValueError(f"s1: expected a state in 0..{S - 1}, got {self.s1}")
        P = self.transitions
        if np.any(P < -1e-12) or not np.allclose(P.sum(-1), 1.0):
            raise ValueError("phi, mu: P_h(.|s,a) = <phi(s,a), mu_h> is not a distribution")

    @property
    def S(self) -> int:
        return self.phi.shape[0]

    @property
    def A(self) -> int:
        return self.phi.shape[1]

    @property
    def d(self) -> int:
        return self.phi.shape[2]

    @property
    def H(self) -> int:
        return self.mu.shape[0]

    @property
    def transitions(self) -> np.ndarray:
        """P, ``H x S x A x S``."""
        return np.einsum("sad,hdt->hsat", self.phi, self.mu)

    def reward(self, vec: np.ndarray) -> np.ndarray:
        """The linear function ⟨φ(s, a), vec_h⟩, ``H x S x A``, of parameters ``H x d``."""
        return np.einsum("sad,hd->hsa", self.phi, vec)

    @property
    def cost(self) -> np.ndarray:
        """Mean cost g, ``H x S x A``."""
        return self.reward(self.cost_vec)


def random_linear_cmdp(S: int, A: int, d: int, H: int, rng: np.random.Generator) -> LinearCMDP:
    """The low-rank construction of the brief: φ(s, a) ~ Dirichlet(1_d), μ_{h,i} ~ Dirichlet(1_S),
    ϑ_h ~ U[0, 1]^d (so g ∈ [0, 1]); state 0 is the initial state.

    Example::

        >>> import numpy as np
        >>> from optzoo.rl import random_linear_cmdp
        >>> random_linear_cmdp(S=4, A=2, d=3, H=5, rng=np.random.default_rng(0)).transitions.shape
        (5, 4, 2, 4)
    """
    for name, v in (("S", S), ("A", A), ("d", d), ("H", H)):
        check_int(name, v, low=1)
    check_generator("rng", rng)
    phi = rng.dirichlet(np.ones(d), size=(S, A))
    mu = rng.dirichlet(np.ones(S), size=(H, d))
    return LinearCMDP(phi=phi, mu=mu, cost_vec=rng.uniform(0.0, 1.0, size=(H, d)))


def switching_losses(K: int, H: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Adversarial loss parameters θ^k, ``K x H x d`` in [0, 1]: two random vectors that alternate
    on a doubling schedule (episodes [0, 1), [1, 3), [3, 7), [7, 15), … use vector 0, 1, 0, 1, …),
    so no fixed policy is good on every segment and segments get longer as K grows."""
    check_int("K", K, low=1)
    check_int("H", H, low=1)
    check_int("d", d, low=1)
    check_generator("rng", rng)
    vecs = rng.uniform(0.0, 1.0, size=(2, H, d))
    k = np.arange(K)
    segment = np.floor(np.log2(k + 1)).astype(int)
    return vecs[segment % 2]


def evaluate(P: np.ndarray, pi: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact values of policy ``pi`` for per-step function ``r`` by backward DP.

    Returns:
        ``(V, Q)``: V is ``(H + 1) x S`` (V_{H+1} = 0), Q is ``H x S x A``.
    """
    H, S, A, _ = P.shape
    if pi.shape != (H, S, A) or r.shape != (H, S, A):
        raise ValueError(f"pi, r: expected shape {(H, S, A)}, got {pi.shape}, {r.shape}")
    V = np.zeros((H + 1, S))
    Q = np.zeros((H, S, A))
    for h in range(H - 1, -1, -1):
        Q[h] = r[h] + P[h] @ V[h + 1]
        V[h] = (pi[h] * Q[h]).sum(-1)
    return V, Q


def occupancy(P: np.ndarray, pi: np.ndarray, s1: int) -> np.ndarray:
    """Occupancy measure q_h(s, a) = Pr[s_h = s, a_h = a] of ``pi`` from ``s1``, ``H x S x A``."""
    H, S, A, _ = P.shape
    q = np.zeros((H, S, A))
    state = np.zeros(S)
    state[s1] = 1.0
    for h in range(H):
        q[h] = state[:, None] * pi[h]
        state = np.einsum("sa,sat->t", q[h], P[h])
    return q


def best_fixed_policy(P: np.ndarray, s1: int, loss: np.ndarray, cost: np.ndarray | None = None,
                      budget: float | None = None) -> tuple[float, np.ndarray]:
    """min_q ⟨q, loss⟩ over occupancy measures q, subject to ⟨q, cost⟩ ≤ budget when given.

    The LP (HiGHS) has variables q_h(s, a) ≥ 0, flow constraints Σ_a q_1(s, a) = 1[s = s1] and
    Σ_a q_{h+1}(s', a) = Σ_{s,a} P_h(s'|s, a) q_h(s, a).  ``loss`` may be a sum over episodes:
    the best fixed policy in hindsight.

    Returns:
        ``(value, policy)``: the optimal value and a policy ``H x S x A`` inducing the optimum
        (uniform at states the optimum does not reach).

    Raises:
        ValueError: the constraint is infeasible.
    """
    H, S, A, _ = P.shape
    n = H * S * A
    rows = []
    rhs = []
    for s in range(S):
        row = np.zeros(n)
        row[s * A:(s + 1) * A] = 1.0
        rows.append(row)
        rhs.append(1.0 if s == s1 else 0.0)
    for h in range(H - 1):
        for t in range(S):
            row = np.zeros(n)
            nxt = (h + 1) * S * A + t * A
            row[nxt:nxt + A] = 1.0
            row[h * S * A:(h + 1) * S * A] = -P[h, :, :, t].ravel()
            rows.append(row)
            rhs.append(0.0)
    A_ub = b_ub = None
    if cost is not None:
        if budget is None:
            raise ValueError("budget: required when cost is given")
        A_ub, b_ub = cost.reshape(1, n), [budget]
    res = linprog(loss.ravel(), A_ub=A_ub, b_ub=b_ub, A_eq=np.array(rows), b_eq=rhs,
                  bounds=(0, None), method="highs")
    if res.status != 0:
        raise ValueError(f"budget: the constrained LP has no solution ({res.message})")
    q = np.maximum(res.x.reshape(H, S, A), 0.0)
    mass = q.sum(-1, keepdims=True)
    pi = np.where(mass > 1e-12, q / np.maximum(mass, 1e-300), 1.0 / A)
    return float(res.fun), pi


def sample_episode(P: np.ndarray, pi: np.ndarray, cost: np.ndarray, s1: int,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One trajectory of ``pi``: states ``H + 1``, actions ``H`` and Bernoulli(g_h(s_h, a_h))
    cost observations ``H`` (the bandit feedback on the cost)."""
    H, S, A, _ = P.shape
    states = np.zeros(H + 1, dtype=int)
    actions = np.zeros(H, dtype=int)
    costs = np.zeros(H)
    states[0] = s1
    # inverse-CDF draws from one block of uniforms (rng.choice validates p on every call and
    # was the costliest line of a run); min() guards against a cumsum ending just below 1
    u = rng.random((H, 3))
    for h in range(H):
        s = states[h]
        a = min(int(np.searchsorted(np.cumsum(pi[h, s]), u[h, 0], side="right")), A - 1)
        actions[h] = a
        costs[h] = float(u[h, 1] < cost[h, s, a])
        states[h + 1] = min(int(np.searchsorted(np.cumsum(P[h, s, a]), u[h, 2],
                                                side="right")), S - 1)
    return states, actions, costs
