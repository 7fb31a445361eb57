"""Checks of the ``adagrad-nesterov`` reproduction's problems and step-size rule: hand-written
gradients against autograd, f* from L-BFGS against a stationary point, R-norms by hand."""

from __future__ import annotations

import math

import torch

from optzoo.optim.reproduce import adagrad_nesterov as rep


def test_logreg_gradient_matches_autograd_and_solution_is_stationary():
    prob = rep._logreg(120, 1e-2, 0)
    g = torch.Generator().manual_seed(0)
    w = torch.randn(prob.x_star.shape, generator=g, dtype=torch.float64).requires_grad_(True)
    auto = torch.autograd.grad(prob.value(w), w)[0]
    torch.testing.assert_close(prob.grad(w.detach()), auto, rtol=1e-10, atol=1e-12)
    assert float(prob.grad(prob.x_star).abs().max()) < 1e-7
    assert float(prob.value(prob.x_star)) >= prob.f_star
    assert float(prob.value(prob.x_star)) - prob.f_star < 1e-12


def test_quadratic_gradient_and_minimiser():
    prob = rep._quadratic(3, 4, 1)
    x = torch.zeros(3, 4, dtype=torch.float64, requires_grad=True)
    auto = torch.autograd.grad(prob.value(x), x)[0]
    torch.testing.assert_close(prob.grad(x.detach()), auto, rtol=1e-12, atol=1e-12)
    assert float(prob.value(prob.x_star)) == 0.0


def test_radius_is_the_distance_in_each_methods_r_norm():
    e = torch.tensor([[3.0, 0.0, 0.0, 0.0], [0.0, 4.0, 0.0, 0.0]], dtype=torch.float64)
    assert rep._radius("adagrad_norm", e) == 5.0 / math.sqrt(8)
    assert rep._radius("diag_adagrad", e) == 4.0
    assert rep._radius("asgo", e) == 4.0 / 2.0  # σ_max / √n, n = 4
    assert rep._radius("asgo_right", e) == 4.0 / math.sqrt(2)  # σ_max / √m
    assert rep._radius("dasgo", e) == 4.0 / 2.0  # max row norm / √n


def test_eta_rule_doubles_for_algorithm_2():
    prob = rep._quadratic(2, 3, 0)
    x0 = torch.zeros(2, 3, dtype=torch.float64)
    for base in ("adagrad_norm", "diag_adagrad", "dasgo"):
        plain = rep._make(base, torch.nn.Parameter(x0.clone()), prob, x0)
        acc = rep._make(f"{base}_nesterov", torch.nn.Parameter(x0.clone()), prob, x0)
        r = rep._radius(base, x0 - prob.x_star)
        assert plain.defaults["lr"] == r and acc.defaults["lr"] == 2 * r
        assert acc.defaults["nesterov"] and not plain.defaults["nesterov"]


# -- the reproduction's verdicts (synthetic results: the rules, not the runs) -------------------

def _results(cells):
    """``{(problem, method): [metrics per seed]}`` -> Results."""
    from optzoo.experiment import Result, Trial

    return [Result(Trial(method, problem, seed, {}), m) for (problem, method), ms in cells.items()
            for seed, m in enumerate(ms)]


def _claim(cells, number):
    cfg = rep.PRESETS["quick"]
    results = _results(cells)
    problems = list(dict.fromkeys(r.trial.problem for r in results))
    return next(c for c in rep._claims(results, cfg, problems)
                if c.text.startswith(f"({number})"))


def test_claim1_a_tie_or_a_tiny_gain_does_not_pass():
    """Old rule: mean log gap lower by any amount.  Now a paired CI beyond a factor 2."""
    base = [1e-3, 2e-3, 1.5e-3]
    tiny = {("quad-sigma0", "diag_adagrad"): [{"final_gap": g * 0.95} for g in base],
            ("quad-sigma0", "adagrad_norm"): [{"final_gap": g} for g in base]}
    c = _claim(tiny, 1)
    assert c.verdict.test == "all_of" and c.status == "not held"  # 5 % lower: no effect
    big = {("quad-sigma0", "diag_adagrad"): [{"final_gap": g * 1e-3} for g in base],
           ("quad-sigma0", "adagrad_norm"): [{"final_gap": g} for g in base]}
    assert _claim(big, 1).status == "held"


def test_claim2a_a_censored_plain_run_cannot_make_it_not_held():
    """Unreached counts as K + 1 (a lower bound): both unreached must not read as "no gain"."""
    K = rep.PRESETS["quick"].iters
    cells = {("quad-sigma0", "diag_adagrad"): [{"iters_to_tol": None}] * 3,
             ("quad-sigma0", "diag_adagrad_nesterov"): [{"iters_to_tol": None}] * 3}
    assert _claim(cells, "2a").status == "inconclusive"
    cells = {("quad-sigma0", "diag_adagrad"): [{"iters_to_tol": None}] * 3,
             ("quad-sigma0", "diag_adagrad_nesterov"): [{"iters_to_tol": K // 20}] * 3}
    assert _claim(cells, "2a").status == "held"
    cells = {("quad-sigma0", "diag_adagrad"): [{"iters_to_tol": 100}, {"iters_to_tol": 110},
                                               {"iters_to_tol": 90}],
             ("quad-sigma0", "diag_adagrad_nesterov"): [{"iters_to_tol": 95}, {"iters_to_tol": 100},
                                                        {"iters_to_tol": 92}]}
    assert _claim(cells, "2a").status == "not held"  # a few % fewer: below min_speedup


def test_claims_2b_3_slope_rules_need_the_ci():
    """Old rule: the mean slope in the band.  Now the CI of the mean; no slope → inconclusive."""
    wide = [{"tail_slope": s} for s in (-0.25, -0.9, -0.05)]  # mean −0.4, CI far outside
    noisy = {("quad-sigma1", m): wide
             for m in (*rep.ADAPTIVE, *(f"{m}_nesterov" for m in rep.ADAPTIVE))}
    c = _claim(noisy, 3)
    assert c.verdict.test == "all_of" and c.status == "inconclusive"
    tight = {k: [{"tail_slope": s} for s in (-0.5, -0.49, -0.51)] for k in noisy}
    assert _claim(tight, 3).status == "held"
    floor = {("quad-sigma0", "dasgo"): [{"tail_slope": -1.0}] * 3,
             ("quad-sigma0", "dasgo_nesterov"): [{"tail_slope": None}] * 3}
    c = _claim(floor, "2b")
    assert c.status == "inconclusive"
    assert any("no slope" in v.reason for _, v in c.verdict.cells)
