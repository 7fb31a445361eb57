"""Exact population optima of the AuxDPO bandits against closed forms and scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest

from optzoo.preference.bandits import LinearSoftmaxBandit, paper_bandit, random_bandit


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_paper_bandit_local_rlhf_and_auxdpo_are_minus_half_over_beta(beta):
    """Prop. 3's example: F = 2/3, A r* = −1/3, so θ* = −0.5/β; AuxDPO with δ ∈ N(A) lands there
    exactly, and its reward at θ* is (e^θ + 2e^−θ)/(e^θ + e^−θ + 1)."""
    b = paper_bandit(20.0)
    assert b.local_rlhf(beta)[0] == pytest.approx(-0.5 / beta, abs=1e-12)
    theta, delta = b.fit_auxdpo(beta)
    assert theta[0] == pytest.approx(-0.5 / beta, abs=1e-5)
    t = theta[0]
    assert b.expected_reward(theta) == pytest.approx(
        (np.exp(t) + 2 * np.exp(-t)) / (np.exp(t) + np.exp(-t) + 1), rel=1e-12)
    # the learned reward β·log(π/π₀) + δ reproduces r* up to a constant (BTL is shift-free)
    learned = beta * (b.log_policy(theta)[0] - b.log_policy(np.zeros(1))[0]) + delta[0]
    assert np.allclose(learned - learned[2], [1.0, 2.0, 0.0], atol=1e-4)


def test_null_space_basis_is_orthonormal_and_annihilated_by_a():
    b = random_bandit(3, states=4, actions=5, dim=3)
    gamma = b.null_space()
    assert gamma.shape == (20, 20 - 3)
    assert np.allclose(gamma.T @ gamma, np.eye(17), atol=1e-10)
    pi0 = b.policy(np.zeros(3))
    g = b.features - np.einsum("sa,sad->sd", pi0, b.features)[:, None, :]
    a_mat = (b.rho[:, None, None] * pi0[:, :, None] * g).reshape(-1, 3).T
    assert np.abs(a_mat @ gamma).max() < 1e-12


def test_population_dpo_is_the_soft_label_logistic_regression_sklearn_fits():
    """DPO's population loss with θ₀ = 0 is a weighted logistic regression on Δφ with soft BTL
    labels: scikit-learn on duplicated rows (label 1 with weight n·p*, label 0 with weight
    n·(1 − p*)), no intercept, no penalty, gives the same θ."""
    from sklearn.linear_model import LogisticRegression

    b = random_bandit(1, states=5, actions=4, dim=3)
    beta = 0.7
    s, a, c, w, p, diff = b._pairs()
    x = np.vstack([beta * diff, beta * diff])
    y = np.r_[np.ones(len(w)), np.zeros(len(w))]
    sw = np.r_[w * p, w * (1 - p)]
    ref = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-12, max_iter=10_000)
    ref.fit(x, y, sample_weight=sw)
    assert np.allclose(b.fit_dpo(beta), ref.coef_[0], atol=1e-5)


def test_tabular_rlhf_is_the_gibbs_policy():
    """With one-hot features (the tabular class) the KL-regularised optimum is
    π(a|s) ∝ π₀(a|s)·exp(r*(s, a)/β)."""
    s, a = 3, 4
    phi = np.eye(s * a).reshape(s, a, s * a)
    rng = np.random.default_rng(0)
    r = rng.normal(size=(s, a))
    counts = np.triu(np.ones((s, a, a)), 1)
    b = LinearSoftmaxBandit(features=phi, reward=r, counts=counts)
    beta = 0.8
    gibbs = np.exp(r / beta)
    gibbs /= gibbs.sum(1, keepdims=True)
    assert np.allclose(b.policy(b.fit_rlhf(beta)), gibbs, atol=1e-6)
    # tabular DPO is well specified: its implicit reward recovers r* up to a constant per state
    th = b.fit_dpo(beta)
    implicit = beta * (b.log_policy(th) - b.log_policy(np.zeros(s * a)))
    assert np.allclose(implicit - implicit[:, :1], r - r[:, :1], atol=1e-4)


def test_ipo_is_its_least_squares_and_dpop_without_penalty_is_dpo():
    from scipy.optimize import minimize

    b = random_bandit(2, states=3, actions=4, dim=2)
    beta = 1.5
    _, _, _, w, p, diff = b._pairs()
    t = 1 / (2 * beta)

    def ipo(th):
        h = diff @ th
        return (w * (p * (h - t) ** 2 + (1 - p) * (-h - t) ** 2)).sum()

    ref = minimize(ipo, np.zeros(2), method="BFGS", options={"gtol": 1e-12}).x
    assert np.allclose(b.fit_ipo(beta), ref, atol=1e-6)
    assert np.allclose(b.fit_dpop(beta, lam=0.0), b.fit_dpo(beta), atol=1e-5)


def test_bad_bandits_name_the_argument():
    with pytest.raises(ValueError, match="reward"):
        LinearSoftmaxBandit(features=np.zeros((1, 3, 1)), reward=np.zeros((1, 2)),
                            counts=np.ones((1, 3, 3)))
    with pytest.raises(ValueError, match="counts"):
        LinearSoftmaxBandit(features=np.zeros((1, 3, 1)), reward=np.zeros((1, 3)),
                            counts=np.zeros((1, 3, 3)))
    with pytest.raises(ValueError, match="theta"):
        paper_bandit().expected_reward([1.0, 2.0])
    with pytest.raises(ValueError, match="ratio"):
        paper_bandit(-1.0)
