"""Tests of the adversarial linear CMDP problem class and the weighted-LogSumExp primal-dual
algorithm (Yu, Bae & Lee, ICLR 2026): exact values against trajectory enumeration, the LP
comparator against Bellman DP and Lagrangian duality, the policy formula against a direct
computation and the recursive mirror-descent form."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from optzoo.errors import ConfigError
from optzoo.experiment import Result
from optzoo.rl import (
    LinearCMDP,
    PDPOConfig,
    WeightedLSEPolicy,
    best_fixed_policy,
    evaluate,
    occupancy,
    random_linear_cmdp,
    run_pdpo,
    switching_losses,
    weighted_lse_policy,
)
from optzoo.rl.adversarial_cmdp import ls_evaluate
from optzoo.rl.reproduce import adversarial_cmdp as repro


def _small(seed=0, S=3, A=2, d=3, H=3):
    return random_linear_cmdp(S, A, d, H, np.random.default_rng(seed))


def _random_policy(rng, H, S, A):
    return rng.dirichlet(np.ones(A), size=(H, S))


def test_exact_value_matches_enumeration_of_trajectories():
    m = _small()
    rng = np.random.default_rng(1)
    pi = _random_policy(rng, m.H, m.S, m.A)
    r = rng.uniform(size=(m.H, m.S, m.A))
    P = m.transitions
    V, _ = evaluate(P, pi, r)
    total = 0.0
    for acts in itertools.product(range(m.A), repeat=m.H):
        for nxt in itertools.product(range(m.S), repeat=m.H - 1):
            states = (m.s1, *nxt)
            prob, ret = 1.0, 0.0
            for h in range(m.H):
                s, a = states[h], acts[h]
                prob *= pi[h, s, a]
                ret += r[h, s, a]
                if h < m.H - 1:
                    prob *= P[h, s, a, states[h + 1]]
            total += prob * ret
    assert V[0, m.s1] == pytest.approx(total, rel=1e-12)
    # and the occupancy measure gives the same number
    assert (occupancy(P, pi, m.s1) * r).sum() == pytest.approx(total, rel=1e-12)


def test_random_instance_is_a_linear_cmdp_with_costs_in_unit_interval():
    m = random_linear_cmdp(6, 3, 4, 4, np.random.default_rng(3))
    P = m.transitions
    assert np.allclose(P.sum(-1), 1.0) and P.min() >= 0
    assert 0 <= m.cost.min() and m.cost.max() <= 1
    L = switching_losses(40, 4, 4, np.random.default_rng(0))
    # segments [0, 1), [1, 3), [3, 7), ... alternate between the two vectors
    assert L.shape == (40, 4, 4) and np.array_equal(L[0], L[3]) and np.array_equal(L[1], L[2])
    assert not np.array_equal(L[0], L[1])


def test_bad_inputs_name_the_argument():
    m = _small()
    with pytest.raises(ValueError, match="mu"):
        LinearCMDP(phi=m.phi, mu=m.mu[:, :2], cost_vec=m.cost_vec)
    with pytest.raises(ValueError, match="s1"):
        LinearCMDP(phi=m.phi, mu=m.mu, cost_vec=m.cost_vec, s1=7)
    with pytest.raises(ValueError, match="loss_vecs"):
        run_pdpo(m, np.zeros((5, 2, 2)), PDPOConfig(budget=1.0), np.random.default_rng(0))
    with pytest.raises(ValueError, match="budget"):
        best_fixed_policy(m.transitions, m.s1, m.cost, m.cost, budget=-1.0)
    with pytest.raises(ConfigError, match="ks"):
        repro.CMDPConfig(ks=(100,))
    with pytest.raises(ConfigError, match="methods"):
        repro.CMDPConfig(methods=("nope",))


def test_unconstrained_lp_equals_bellman_optimality():
    m = _small(seed=4, S=4)
    P = m.transitions
    f = np.random.default_rng(5).uniform(size=(m.H, m.S, m.A))
    V = np.zeros(m.S)
    for h in range(m.H - 1, -1, -1):
        V = (f[h] + P[h] @ V).min(-1)
    val, pi = best_fixed_policy(P, m.s1, f)
    assert val == pytest.approx(V[m.s1], abs=1e-8)
    assert evaluate(P, pi, f)[0][0, m.s1] == pytest.approx(val, abs=1e-8)


def test_constrained_lp_is_feasible_and_equals_the_lagrangian_dual():
    m = _small(seed=6, S=4)
    P = m.transitions
    f = np.random.default_rng(7).uniform(size=(m.H, m.S, m.A))
    g = m.cost
    vmin, _ = best_fixed_policy(P, m.s1, g)
    _, pif = best_fixed_policy(P, m.s1, f)
    b = 0.5 * (vmin + evaluate(P, pif, g)[0][0, m.s1])
    val, pi = best_fixed_policy(P, m.s1, f, g, b)
    assert evaluate(P, pi, g)[0][0, m.s1] <= b + 1e-8
    assert evaluate(P, pi, f)[0][0, m.s1] == pytest.approx(val, abs=1e-7)

    def dual(lam):  # min_pi V_{f + lam g} - lam b, by Bellman DP
        V = np.zeros(m.S)
        for h in range(m.H - 1, -1, -1):
            V = (f[h] + lam * g[h] + P[h] @ V).min(-1)
        return V[m.s1] - lam * b

    best = minimize_scalar(lambda lam: -dual(lam), bounds=(0.0, 200.0), method="bounded",
                           options={"xatol": 1e-10})
    assert val == pytest.approx(-best.fun, abs=1e-5)  # strong duality of the CMDP LP
    # and no deterministic feasible policy beats it
    for choice in itertools.product(range(m.A), repeat=m.H * m.S):
        det = np.eye(m.A)[np.array(choice)].reshape(m.H, m.S, m.A)
        if evaluate(P, det, g)[0][0, m.s1] <= b:
            assert evaluate(P, det, f)[0][0, m.s1] >= val - 1e-8


def test_weighted_lse_formula_matches_direct_computation():
    rng = np.random.default_rng(0)
    zeta = rng.uniform(0.1, 2.0, size=(4, 5))  # n terms x states
    cum = rng.normal(size=(4, 5, 3))
    direct = (zeta[..., None] * np.exp(cum)).sum(0)
    direct /= direct.sum(-1, keepdims=True)
    got = weighted_lse_policy(np.log(zeta), cum)
    np.testing.assert_allclose(got, direct, rtol=1e-12)
    # overflow-free where the direct sum is not representable
    big = weighted_lse_policy(np.log(zeta), cum * 1e4)
    assert np.all(np.isfinite(big)) and np.allclose(big.sum(-1), 1.0)


def test_unrolled_policy_equals_recursive_mixing_and_mirror_steps():
    rng = np.random.default_rng(2)
    H, S, A, theta, alpha = 2, 3, 4, 0.2, 0.7
    pol = WeightedLSEPolicy(H, S, A)
    ref = np.full((H, S, A), 1.0 / A)
    for k in range(9):
        if k % 3 == 0:
            pol.mix(theta)
            ref = (1 - theta) * ref + theta / A
        q = rng.uniform(-1, 2, size=(H, S, A))
        pol.step(q, alpha)
        ref = ref * np.exp(-alpha * q)
        ref /= ref.sum(-1, keepdims=True)
        np.testing.assert_allclose(pol.probs(), ref, rtol=1e-10)
    assert pol.terms == 4  # the start term and three mixing terms
    # mixing puts a floor on every probability
    pol.step(np.full((H, S, A), 0.0) + np.arange(A) * 1e3, alpha)
    pol.mix(theta)
    assert pol.probs().min() >= theta / A * (1 - 1e-9)


def test_run_is_valid_and_paper_components_differ_from_the_plain_baseline():
    m = _small(seed=8, S=4, A=3, d=3, H=3)
    K = 200
    L = switching_losses(K, m.H, m.d, np.random.default_rng(9))
    out = run_pdpo(m, L, PDPOConfig(budget=0.5, alpha=1e-3, eta=0.05),
                   np.random.default_rng(0))
    base = run_pdpo(m, L, PDPOConfig(budget=0.5, alpha=1e-3, eta=0.05, mixing=False,
                                     regularised_dual=False), np.random.default_rng(0))
    for o in (out, base):
        assert np.all(o["dual"] >= 0) and np.all(np.isfinite(o["loss_value"]))
        assert np.all((o["cost_value"] >= 0) & (o["cost_value"] <= m.H))
    assert out["dual"].max() > 0  # V_g ≈ 1.4 > b + c₂/η ≈ 0.8: the dual moves
    assert base["terms"].max() == 1 and out["terms"].max() >= 2
    # paper values of the coefficients
    p = PDPOConfig(budget=1.0).resolved(K, m.H, m.d)
    assert p["c1"] == pytest.approx(4 * p["alpha"] * p["eta"] * m.H ** 3)
    assert p["c2"] == pytest.approx(p["c1"] + 4 * p["eta"] * m.H ** 2 / K)


def test_smoke_preset_runs_and_reports_two_claims(tmp_path):
    cfg = repro.PRESETS["smoke"]
    # CPU time of this process, not wall time: the budget must not depend on the machine's load
    t0 = time.process_time()
    results = [Result(trial=t, metrics=repro.run_trial(t, "cpu")) for t in repro.trials(cfg)]
    summary = repro.summarize(results, cfg, tmp_path)
    assert time.process_time() - t0 < 10
    assert len(summary.claims) == 2 and all(f.path.exists() for f in summary.figures)
    for r in results:
        assert r.metrics["regret"] == r.metrics["regret"]  # not nan
    assert repro.REPRODUCTION.slug == "adversarial-cmdp"


def test_slope_fit_recovers_a_power_law():
    ks = [100, 1000, 10000]
    assert repro.slope(ks, [3 * k ** 0.75 for k in ks]) == pytest.approx(0.75)
    assert np.isnan(repro.slope(ks, [1.0, -1.0, 2.0]))


# -- verdicts (issue 18): the not-acting check and the slope test


def _shaped(cfg, regret, violation, dual_max):
    """Results on the preset's trials with regret / violation given as functions of (K, seed)."""
    from optzoo.experiment import Trial

    out = []
    for t in repro.trials(cfg):
        K = int(t.params["K"])
        out.append(Result(Trial(t.method, t.problem, t.seed, t.params),
                          {"regret": regret(K, t.seed), "violation": violation(K, t.seed),
                           "dual_max": dual_max, "K": K}))
    return out


def test_claims_are_inconclusive_when_the_policy_stays_uniform():
    cfg = repro.PRESETS["smoke"]

    def uniform(K, seed, i):
        t = next(t for t in repro.trials(cfg) if int(t.params["K"]) == K)
        return repro._uniform_values(tuple(sorted(t.params.items())), seed)[i]

    # the played policies' regret and violation are exactly the uniform policy's
    results = _shaped(cfg, lambda K, s: uniform(K, s, 0), lambda K, s: uniform(K, s, 1),
                      dual_max=0.0)
    pdpo = [r for r in results if r.trial.method == "pdpo"]
    assert max(repro.policy_move(r) for r in pdpo) < 1e-12
    acting = repro._acting(results, cfg)
    claims = [repro._growth_claim(results, cfg, key, key, i + 1, acting)
              for i, key in enumerate(("regret", "violation"))]
    assert [c.status for c in claims] == ["inconclusive", "inconclusive"]
    assert all("does not act" in c.verdict.reason for c in claims)


def test_least_squares_q_equals_exact_q_on_one_hot_features():
    """With one-hot (tabular) features the regression is a count-based model: Q̂_h(s, a) =
    f + Σ_s' N(s, a, s') V̂_{h+1}(s') / (1 + n(s, a)) − β / sqrt(1 + n(s, a)); with exhaustive
    data (counts n·P) it tends to the exact Q^π of DP as n grows."""
    rng = np.random.default_rng(11)
    H, S, A = 3, 3, 2
    phi = np.eye(S * A).reshape(S, A, S * A)
    P = rng.dirichlet(np.ones(S), size=(H, S, A))
    g = rng.uniform(size=(H, S, A))
    f = rng.uniform(size=(H, S, A))
    pi = _random_policy(rng, H, S, A)
    coef = np.ones((H, S, A))
    # 1) random integer counts: the closed form above, written as tabular DP by hand
    visits = rng.integers(0, 6, size=(H, S, A)).astype(float)
    trans = np.zeros((H, S, A, S))
    for h, s, a in itertools.product(range(H), range(S), range(A)):
        trans[h, s, a] = rng.multinomial(int(visits[h, s, a]), P[h, s, a])
    cost_sum = rng.uniform(size=(H, S, A)) * visits
    beta = 0.3
    qf, qg = ls_evaluate(phi, coef, visits, trans, cost_sum, pi, f, beta)
    vf = np.zeros(S)
    vg = np.zeros(S)
    for h in range(H - 1, -1, -1):
        bonus = beta / np.sqrt(1 + visits[h])
        ref_f = f[h] + (trans[h] @ vf) / (1 + visits[h]) - bonus
        ref_g = (cost_sum[h] + trans[h] @ vg) / (1 + visits[h]) - bonus
        np.testing.assert_allclose(qf[h], ref_f, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(qg[h], ref_g, rtol=1e-10, atol=1e-12)
        vf, vg = (pi[h] * ref_f).sum(-1), (pi[h] * ref_g).sum(-1)
    # 2) exhaustive data, no bonus: the LS estimates approach the exact Q^π of the true model
    n = 1e6
    qf, qg = ls_evaluate(phi, coef, np.full((H, S, A), n), n * P, n * g, pi, f, 0.0)
    exact_f = evaluate(P, pi, f)[1]
    exact_g = evaluate(P, pi, g)[1]
    np.testing.assert_allclose(qf, exact_f, atol=H * H / n * 2)
    np.testing.assert_allclose(qg, exact_g, atol=H * H / n * 2)
    # and they are not equal to the one-step (myopic) values: the recursion is used
    assert np.abs(qg - g).max() > 0.1


def test_epoch_factor_dual_cap_and_policy_distance():
    m = _small(seed=8, S=4, A=3, d=3, H=3)
    K = 150
    L = switching_losses(K, m.H, m.d, np.random.default_rng(9))
    runs = {ef: run_pdpo(m, L, PDPOConfig(budget=0.5, alpha=0.05, eta=0.05, epoch_factor=ef),
                         np.random.default_rng(0)) for ef in (2.0, 16.0)}
    assert runs[16.0]["epoch"].max() < runs[2.0]["epoch"].max()
    # a new epoch resets the policy to uniform: the first episode of each epoch is uniform
    out = runs[2.0]
    starts = np.flatnonzero(np.diff(out["epoch"]) > 0) + 1
    assert len(starts) >= 2 and np.all(out["policy_tv"][starts] < 1e-12)
    # α = 0: the policy never leaves uniform; a large α moves it
    still = run_pdpo(m, L, PDPOConfig(budget=0.5, alpha=0.0, epochs=False),
                     np.random.default_rng(0))
    moved = run_pdpo(m, L, PDPOConfig(budget=0.5, alpha=0.5, epochs=False),
                     np.random.default_rng(0))
    assert still["policy_tv"].max() == 0.0 and moved["policy_tv"][-1] > 0.1
    # OPDOP's projection of Y onto [0, cap] and truncated Q̂
    capped = run_pdpo(m, L, PDPOConfig(budget=0.0, eta=5.0, dual_cap=0.7, clip_q=True,
                                       mixing=False, regularised_dual=False, epochs=False),
                      np.random.default_rng(0))
    assert capped["dual"].max() == pytest.approx(0.7) and capped["cost_estimate"].min() >= 0
    with pytest.raises(ValueError, match="epoch_factor"):
        PDPOConfig(budget=0.5, epoch_factor=1.0)


def test_calibration_picks_the_best_grid_value_on_held_out_seeds():
    cfg = repro.PRESETS["smoke"]
    cal = repro._calibrated(cfg)
    assert set(cal["scores"]) == {(b, e) for b in cfg.bonus_scales for e in cfg.epoch_factors}
    means = {k: float(np.mean(v)) for k, v in cal["scores"].items()}
    assert means[(cal["bonus_scale"], cal["epoch_factor"])] == min(means.values())
    # the evaluation trials carry the calibrated values
    assert {(t.params["bonus_scale"], t.params["epoch_factor"]) for t in repro.trials(cfg)} == {
        (cal["bonus_scale"], cal["epoch_factor"])}
    # the baselines: the oracle has regret 0 and is feasible; the uniform policy is exact
    t = repro.trials(cfg)[0]
    oracle = repro._run(t.params, 0, "oracle")
    uni = repro._run(t.params, 0, "uniform")
    assert oracle["regret"] == pytest.approx(0.0, abs=1e-6)
    assert oracle["violation"] <= 1e-6 and uni["policy_tv_final"] == 0.0
    ref = repro._uniform_values(tuple(sorted(t.params.items())), 0)
    assert uni["regret"] == pytest.approx(ref[0]) and uni["violation"] == pytest.approx(ref[1])


def test_a_moving_policy_is_decided_by_the_slope_test():
    import dataclasses

    cfg = dataclasses.replace(repro.PRESETS["smoke"], ks=(20, 60, 180), methods=("pdpo",))
    # regret ≈ 5·K^0.5 and violation ≈ 3·K^0.6, far from the uniform policy's values
    results = _shaped(cfg, lambda K, s: 5 * K ** 0.5 * (1 + 0.02 * s),
                      lambda K, s: 3 * K ** 0.6 * (1 - 0.02 * s), dual_max=1.0)
    assert min(repro.policy_move(r) for r in results) > cfg.min_policy_move
    acting = repro._acting(results, cfg)
    assert acting[:2] == (None, None)
    claims = [repro._growth_claim(results, cfg, key, key, i + 1, acting)
              for i, key in enumerate(("regret", "violation"))]
    assert [c.verdict.test for c in claims] == ["slope", "slope"]
    assert [c.status for c in claims] == ["held", "held"]
    # linear growth is not sublinear
    results = _shaped(cfg, lambda K, s: 0.5 * K * (1 + 0.02 * s),
                      lambda K, s: 0.3 * K * (1 - 0.02 * s), dual_max=1.0)
    acting = repro._acting(results, cfg)
    claims = [repro._growth_claim(results, cfg, key, key, i + 1, acting)
              for i, key in enumerate(("regret", "violation"))]
    assert [c.status for c in claims] == ["not held", "not held"]
    # the same linear violation with a dual stuck at 0: claim 2 cannot be decided
    results = _shaped(cfg, lambda K, s: 0.5 * K * (1 + 0.02 * s),
                      lambda K, s: 0.3 * K * (1 - 0.02 * s), dual_max=0.0)
    acting = repro._acting(results, cfg)
    assert acting[0] is None and acting[1] is not None
    assert repro._growth_claim(results, cfg, "violation", "violation", 2,
                               acting).status == "inconclusive"
    assert repro._growth_claim(results, cfg, "regret", "regret", 1, acting).status == "not held"
