"""Primal-dual policy optimisation with weighted LogSumExp softmax policies for adversarial
linear CMDPs.

Yu, Bae & Lee, "Primal-Dual Policy Optimization for Adversarial Linear CMDPs" (ICLR 2026,
OpenReview baP3Dw7bWO; arXiv 2605.11535 "... for Linear CMDPs with Adversarial Losses").
No official code.  The paper's Algorithm 1, per episode k:

0. epochs: a new epoch starts when det Λ_h has doubled for some h since the epoch began; the
   feature contraction is recomputed, the policy and the dual variable are reset;
1. feature contraction φ̄(s, a) = φ(s, a) · sigmoid(−β_w ‖φ(s, a)‖_{Λ⁻¹} + log K);
2. play π̂^k; least-squares estimates Q̂_f^k (revealed loss + regressed next-state value) and
   Q̂_g^k (regressed observed cost + next-state value) with an optimism bonus β_b‖φ̄‖_{Λ̄⁻¹};
3. periodic policy mixing: if (k − k_e) ≡ 0 mod ⌈K^{3/4}⌉, π̃^k = (1 − θ) π̂^k + θ π_unif;
4. primal mirror step π̂^{k+1}(·|s) ∝ π̃^k(·|s) exp(−α [Q̂_f^k + Y_k Q̂_g^k](s, ·));
5. regularised dual step Y_{k+1} = [Y_k + η (V̂^k_{g,1}(s_1) − b) − c₁ Y_k − c₂]₊ with
   c₁ = 4αηH³, c₂ = 4αηH³ + 4θηH².
Step sizes (paper): α = H⁻¹K^{−3/4}, η = H⁻²K^{−3/4}, θ = 1/K, period ⌈K^{3/4}⌉,
β_b = Õ(K^{1/4} d H).

Unrolled, steps 3–4 give the *weighted LogSumExp softmax policy*
    π̂^k(a|s) ∝ Σ_i ζ_i(s) exp(−α Σ_{j ≥ t_i} Q̂^j(s, a)),
one term per mixing step t_i of the epoch (plus the epoch start); :class:`WeightedLSEPolicy`
stores exactly these terms in log space (log ζ_i and the cumulative sums) and evaluates the
policy with a logsumexp over terms and a softmax over actions — no overflow for any α Σ Q.

Readings (the brief's INFERRED points; the arXiv text was not readable here):
- epoch reset to π_unif and Y = 0 — Cassel & Rosenberg 2024 (CFPO, the source of the
  contraction) start every epoch with the uniform policy (checked via their public summaries);
  the doubling test uses the raw-feature design matrix Λ_h = I + Σ φφᵀ, as in CFPO;
- the contraction coefficients are frozen within an epoch (computed from Λ_h at its start);
  the regression uses Λ̄_h = I + Σ_τ φ̄φ̄ᵀ over all episodes so far with the current φ̄;
- Q̂_f = f^k + φ̄ᵀ w_f − β_b‖φ̄‖_{Λ̄⁻¹}, w_f = Λ̄⁻¹ Σ_τ φ̄_τ V̂_{f,h+1}(s'_τ) (the loss is known,
  only the next-state value is regressed); Q̂_g = φ̄ᵀ w_g − β_b‖φ̄‖_{Λ̄⁻¹},
  w_g = Λ̄⁻¹ Σ_τ φ̄_τ (c_τ + V̂_{g,h+1}(s'_τ)); the bonus is subtracted for both (optimism for a
  minimiser); no clipping (the contraction replaces it); V̂(s) = Σ_a π̂^k(a|s) Q̂(s, a);
- β_w = β_b and β_b = ``bonus_scale`` · K^{1/4} d H (the Õ hides constants and logs; the
  constant is a parameter, fixed per preset before any run);
- the least squares use sufficient statistics (visit counts, transition counts, cost sums per
  (h, s, a)); on a finite S this equals the regression over the stored trajectories exactly.
Values are computed for all states of the finite S at once (the paper evaluates them lazily at
visited states; the numbers are identical).

The baseline without the paper's components (``mixing=False, regularised_dual=False``) is the
plain primal-dual policy optimiser: a single softmax term, θ = 0, c₁ = c₂ = 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from optzoo.checks import check_finite_array, check_generator, check_int, check_real
from optzoo.rl.linear_cmdp import LinearCMDP, occupancy, sample_episode


def logsumexp(x: np.ndarray, axis, keepdims: bool = False) -> np.ndarray:
    """log Σ exp(x) over ``axis`` with a max shift (no overflow); the same numbers as
    :func:`scipy.special.logsumexp` for finite inputs, without its per-call array-API overhead
    (it was 40 % of a run)."""
    m = np.max(x, axis=axis, keepdims=True)
    out = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=axis)


def weighted_lse_policy(log_zeta: np.ndarray, cum: np.ndarray) -> np.ndarray:
    """π(a|s) ∝ Σ_i ζ_i(s) exp(cum_i(s, a)), evaluated in log space.

    Args:
        log_zeta: log weights, ``n x ...`` (state dimensions).
        cum: exponents (−α Σ_j Q̂^j of each term), ``n x ... x A``.

    Returns:
        the policy, ``... x A``, rows summing to one.
    """
    if cum.shape[:-1] != log_zeta.shape:
        raise ValueError(f"log_zeta, cum: expected shapes (n, ...) and (n, ..., A), got "
                         f"{log_zeta.shape}, {cum.shape}")
    logits = logsumexp(log_zeta[..., None] + cum, axis=0)
    return np.exp(logits - logsumexp(logits, axis=-1, keepdims=True))


@dataclass
class WeightedLSEPolicy:
    """The weighted LogSumExp softmax policy over ``H x S x A`` (one per step h), kept as terms.

    Args:
        H, S, A: horizon, states, actions.
    """

    H: int
    S: int
    A: int
    log_zeta: np.ndarray = field(init=False)
    cum: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """The uniform policy: one term with ζ = 1 and zero exponent."""
        self.log_zeta = np.zeros((1, self.H, self.S))
        self.cum = np.zeros((1, self.H, self.S, self.A))

    @property
    def terms(self) -> int:
        return self.log_zeta.shape[0]

    def probs(self) -> np.ndarray:
        return weighted_lse_policy(self.log_zeta, self.cum)

    def _log_norm(self) -> np.ndarray:
        return logsumexp(self.log_zeta[..., None] + self.cum, axis=(0, 3))

    def mix(self, theta: float) -> None:
        """π ← (1 − θ) π + θ π_unif: a new term with zero exponent.  After normalising the
        existing terms to Σ_a = 1 the new term's weight is θ / A, the old ones scale by 1 − θ."""
        if not 0.0 < theta < 1.0:
            raise ValueError(f"theta: expected 0 < theta < 1, got {theta}")
        self.log_zeta = self.log_zeta - self._log_norm()[None] + math.log1p(-theta)
        new = np.full((1, self.H, self.S), math.log(theta) - math.log(self.A))
        self.log_zeta = np.concatenate([self.log_zeta, new])
        self.cum = np.concatenate([self.cum, np.zeros((1, self.H, self.S, self.A))])

    def step(self, q: np.ndarray, alpha: float) -> None:
        """π ← π exp(−α q) / Z (mirror descent with KL); ``q`` is ``H x S x A``."""
        self.cum = self.cum - alpha * q[None]
        # renormalise so the terms stay O(1) whatever Σ α Q reaches; the policy is unchanged
        shift = self.cum.max(axis=(0, 3))
        self.cum = self.cum - shift[None, ..., None]
        self.log_zeta = self.log_zeta - self._log_norm()[None]


@dataclass(frozen=True)
class PDPOConfig:
    """Parameters of :func:`run_pdpo`; ``None`` means the paper's value for the given K, H.

    Args:
        budget: the constraint level b.
        alpha: primal step, paper H⁻¹K^{−3/4}.
        eta: dual step, paper H⁻²K^{−3/4}.
        theta: mixing weight, paper 1/K.
        period: mixing period, paper ⌈K^{3/4}⌉.
        bonus_scale: β_b = bonus_scale · K^{1/4} d H (and β_w = β_b).
        mixing: periodic policy mixing on (paper) / off (baseline).
        regularised_dual: the −c₁Y − c₂ terms on (paper) / off (baseline).
        epochs: determinant-doubling epochs on (paper) / off.
        epoch_factor: a new epoch starts when det Λ_h has grown by this factor for some h
            since the epoch began (paper: 2, "doubled").
        clip_q: truncate Q̂ to [0, H − h] (LSVI / OPDOP baseline; the paper does not clip).
        dual_cap: project Y onto [0, dual_cap] (OPDOP's [0, χ]); ``None``: no cap (paper).

    Every given value is checked on construction (finite; ``alpha``, ``eta``, ``bonus_scale``
    ``>= 0``; ``0 <= theta < 1``; ``period`` an integer ``>= 1``).

    Example::

        >>> from optzoo.rl import PDPOConfig
        >>> cfg = PDPOConfig(budget=0.5)  # the paper's schedule
        >>> cfg.resolved(K=16, H=3, d=2)["period"], cfg.resolved(K=16, H=3, d=2)["theta"]
        (8, 0.0625)
        >>> baseline = PDPOConfig(budget=0.5, mixing=False, regularised_dual=False)
        >>> baseline.resolved(K=16, H=3, d=2)["theta"]  # no mixing
        0.0
    """

    budget: float
    alpha: float | None = None
    eta: float | None = None
    theta: float | None = None
    period: int | None = None
    bonus_scale: float = 0.01
    mixing: bool = True
    regularised_dual: bool = True
    epochs: bool = True
    epoch_factor: float = 2.0
    clip_q: bool = False
    dual_cap: float | None = None

    def __post_init__(self) -> None:
        check_real("budget", self.budget)
        for name in ("alpha", "eta"):
            if getattr(self, name) is not None:
                check_real(name, getattr(self, name), low=0.0)
        if self.theta is not None:
            check_real("theta", self.theta, low=0.0, high=1.0, high_open=True)
        if self.period is not None:
            check_int("period", self.period, low=1)
        check_real("bonus_scale", self.bonus_scale, low=0.0)
        check_real("epoch_factor", self.epoch_factor, low=1.0, low_open=True)
        if self.dual_cap is not None:
            check_real("dual_cap", self.dual_cap, low=0.0)
        for name in ("mixing", "regularised_dual", "epochs", "clip_q"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name}: expected a bool, got {getattr(self, name)!r}")

    def resolved(self, K: int, H: int, d: int) -> dict[str, float]:
        out = {
            "alpha": self.alpha if self.alpha is not None else K ** -0.75 / H,
            "eta": self.eta if self.eta is not None else K ** -0.75 / H ** 2,
            "theta": (self.theta if self.theta is not None else 1.0 / K) if self.mixing else 0.0,
            "period": self.period if self.period is not None else math.ceil(K ** 0.75),
            "beta": self.bonus_scale * K ** 0.25 * d * H,
        }
        for name in ("alpha", "eta", "beta"):
            if not out[name] >= 0:
                raise ValueError(f"{name}: expected >= 0, got {out[name]}")
        if not 0 <= out["theta"] < 1:
            raise ValueError(f"theta: expected 0 <= theta < 1, got {out['theta']}")
        if out["period"] < 1:
            raise ValueError(f"period: expected >= 1, got {out['period']}")
        a, e, t = out["alpha"], out["eta"], out["theta"]
        reg = self.regularised_dual
        out["c1"] = 4 * a * e * H ** 3 if reg else 0.0
        out["c2"] = 4 * a * e * H ** 3 + 4 * t * e * H ** 2 if reg else 0.0
        return out


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def ls_evaluate(phi: np.ndarray, contraction: np.ndarray, visits: np.ndarray,
                trans: np.ndarray, cost_sum: np.ndarray, pi: np.ndarray, f: np.ndarray,
                beta: float, clip: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares evaluation of ``pi`` on contracted features, backward in h (step 2).

    The regression over the stored transitions is written with sufficient statistics: for
    each h, Λ̄_h = I + Σ_{(s,a)} n_h(s, a) φ̄φ̄ᵀ and the target sums Σ_τ φ̄_τ y_τ become
    Σ_{(s,a)} φ̄(s, a) (Σ_{s'} N_h(s, a, s') V̂_{h+1}(s') [+ cost sums]).

    Args:
        phi: features, ``S x A x d``.
        contraction: the epoch's contraction coefficients, ``H x S x A`` (φ̄ = coef · φ).
        visits: n_h(s, a), ``H x S x A``.
        trans: transition counts N_h(s, a, s'), ``H x S x A x S``.
        cost_sum: sums of the observed costs at (h, s, a), ``H x S x A``.
        pi: the evaluated policy, ``H x S x A``.
        f: the revealed loss f^k, ``H x S x A`` (known: only the next-state value is regressed).
        beta: the bonus β_b, subtracted from both estimates (optimism for a minimiser).
        clip: truncate Q̂ to [0, H − h] (LSVI / OPDOP); the paper does not clip (the
            contraction replaces it).

    Returns:
        ``(Q̂_f, Q̂_g)``, each ``H x S x A``.
    """
    H, S, A = visits.shape
    d = phi.shape[-1]
    eye = np.eye(d)
    vf = np.zeros(S)
    vg = np.zeros(S)
    qf = np.zeros((H, S, A))
    qg = np.zeros((H, S, A))
    for h in range(H - 1, -1, -1):
        fb = contraction[h][..., None] * phi  # S x A x d
        gram = eye + np.einsum("sa,sad,sae->de", visits[h], fb, fb)
        inv = np.linalg.inv(gram)
        bonus = beta * np.sqrt(np.einsum("sad,de,sae->sa", fb, inv, fb))
        next_f = trans[h] @ vf
        next_g = trans[h] @ vg + cost_sum[h]
        w_f = inv @ np.einsum("sad,sa->d", fb, next_f)
        w_g = inv @ np.einsum("sad,sa->d", fb, next_g)
        qf[h] = f[h] + fb @ w_f - bonus
        qg[h] = fb @ w_g - bonus
        if clip:
            qf[h] = np.clip(qf[h], 0.0, H - h)
            qg[h] = np.clip(qg[h], 0.0, H - h)
        vf = (pi[h] * qf[h]).sum(-1)
        vg = (pi[h] * qg[h]).sum(-1)
    return qf, qg


def run_pdpo(cmdp: LinearCMDP, loss_vecs: np.ndarray, cfg: PDPOConfig,
             rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Run the algorithm for K = ``len(loss_vecs)`` episodes on ``cmdp``.

    Args:
        cmdp: the environment (its P and g are used only to simulate and to measure).
        loss_vecs: adversarial loss parameters θ^k, ``K x H x d`` (f^k revealed after episode k).
        cfg: the parameters.
        rng: randomness of the trajectories and cost observations (a ``numpy.random.Generator``).

    Returns:
        per-episode arrays (length K): ``loss_value`` V^{π_k}_{f^k,1}(s_1) and ``cost_value``
        V^{π_k}_{g,1}(s_1) of the played policy (exact, for measurement), ``dual`` Y_k,
        ``cost_estimate`` V̂^k_{g,1}(s_1), ``terms`` (weighted-LSE terms), ``epoch`` index,
        ``policy_tv`` — the played policy's distance from uniform, the occupancy-weighted mean
        over h of TV(π_h(·|s), π_unif) (0 for the uniform policy, ≤ 1 − 1/A).

    Example:
        >>> import numpy as np
        >>> from optzoo.rl import (PDPOConfig, best_fixed_policy, random_linear_cmdp, run_pdpo,
        ...                        switching_losses)
        >>> rng = np.random.default_rng(0)
        >>> cmdp = random_linear_cmdp(S=4, A=2, d=3, H=3, rng=rng)
        >>> losses = switching_losses(K=50, H=3, d=3, rng=rng)
        >>> out = run_pdpo(cmdp, losses, PDPOConfig(budget=1.0), rng)
        >>> sorted(out)
        ['cost_estimate', 'cost_value', 'dual', 'epoch', 'loss_value', 'policy_tv', 'terms']
        >>> total = sum(cmdp.reward(v) for v in losses)  # Σ_k f^k, H x S x A
        >>> best, _ = best_fixed_policy(cmdp.transitions, cmdp.s1, total, 50 * cmdp.cost,
        ...                             budget=50 * 1.0)  # the comparator in hindsight
        >>> regret = out["loss_value"].sum() - best
        >>> violation = (out["cost_value"] - 1.0).sum()
        >>> bool(np.isfinite(regret)), bool(abs(violation) < 50)
        (True, True)
    """
    if not isinstance(cmdp, LinearCMDP):
        raise TypeError(f"cmdp: expected a LinearCMDP, got {type(cmdp).__name__}")
    if not isinstance(cfg, PDPOConfig):
        raise TypeError(f"cfg: expected a PDPOConfig, got {type(cfg).__name__}")
    check_generator("rng", rng)
    check_finite_array("loss_vecs", loss_vecs, ndim=3)
    K, H, d = loss_vecs.shape
    if K < 1:
        raise ValueError("loss_vecs: expected at least one episode (K >= 1), got K = 0")
    if (H, d) != (cmdp.H, cmdp.d):
        raise ValueError(f"loss_vecs: expected K x {cmdp.H} x {cmdp.d}, got {loss_vecs.shape}")
    S, A, s1 = cmdp.S, cmdp.A, cmdp.s1
    p = cfg.resolved(K, H, d)
    P, g, phi = cmdp.transitions, cmdp.cost, cmdp.phi
    feats = phi.reshape(S * A, d)
    eye = np.eye(d)

    visits = np.zeros((H, S, A))
    trans = np.zeros((H, S, A, S))
    cost_sum = np.zeros((H, S, A))
    raw_gram = np.tile(eye, (H, 1, 1))
    policy = WeightedLSEPolicy(H, S, A)
    Y = 0.0
    k_epoch = 0
    epoch = 0
    logdet_epoch = np.zeros(H)
    log_factor = math.log(cfg.epoch_factor)
    contraction = np.ones((H, S, A))
    out = {name: np.zeros(K) for name in ("loss_value", "cost_value", "dual", "cost_estimate",
                                          "terms", "epoch", "policy_tv")}

    def start_epoch() -> None:
        nonlocal contraction
        inv = np.linalg.inv(raw_gram)
        norms = np.sqrt(np.einsum("nd,hde,ne->hn", feats, inv, feats)).reshape(H, S, A)
        contraction = _sigmoid(-p["beta"] * norms + math.log(K))
        logdet_epoch[:] = np.linalg.slogdet(raw_gram)[1]

    start_epoch()
    for k in range(K):
        if cfg.epochs and k > 0 and np.any(np.linalg.slogdet(raw_gram)[1]
                                           >= logdet_epoch + log_factor):
            start_epoch()
            policy.reset()
            Y, k_epoch, epoch = 0.0, k, epoch + 1
        pi = policy.probs()
        q = occupancy(P, pi, s1)
        out["loss_value"][k] = float((q * cmdp.reward(loss_vecs[k])).sum())
        out["cost_value"][k] = float((q * g).sum())
        out["dual"][k], out["terms"][k], out["epoch"][k] = Y, policy.terms, epoch
        tv = 0.5 * np.abs(pi - 1.0 / A).sum(-1)  # H x S
        out["policy_tv"][k] = float((q.sum(-1) * tv).sum() / H)

        states, actions, costs = sample_episode(P, pi, g, s1, rng)
        for h in range(H):
            s, a = states[h], actions[h]
            visits[h, s, a] += 1
            trans[h, s, a, states[h + 1]] += 1
            cost_sum[h, s, a] += costs[h]
            raw_gram[h] += np.outer(phi[s, a], phi[s, a])

        qf, qg = ls_evaluate(phi, contraction, visits, trans, cost_sum, pi,
                             cmdp.reward(loss_vecs[k]), p["beta"], clip=cfg.clip_q)
        v_g1 = float((pi[0, s1] * qg[0, s1]).sum())
        out["cost_estimate"][k] = v_g1

        if p["theta"] > 0 and (k - k_epoch) % p["period"] == 0:
            policy.mix(p["theta"])
        policy.step(qf + Y * qg, p["alpha"])
        Y = max(0.0, Y + p["eta"] * (v_g1 - cfg.budget) - p["c1"] * Y - p["c2"])
        if cfg.dual_cap is not None:
            Y = min(Y, cfg.dual_cap)
    return out
