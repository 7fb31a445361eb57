"""The ``connas`` reproduction's smoke preset, run through its functions on a fresh cache."""

from __future__ import annotations

import dataclasses

import pytest

from optzoo.errors import ConfigError
from optzoo.experiment import Result, Trial
from optzoo.nas.reproduce.connas import (
    PRESETS,
    REPRODUCTION,
    ConNASConfig,
    budgets_for,
    space_for,
)
from optzoo.nas.search_space import MINI_TOPOLOGY


def test_smoke_end_to_end(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTZOO_CACHE", str(tmp_path / "cache"))
    cfg = REPRODUCTION.presets["smoke"]
    results = [Result(t, REPRODUCTION.run_trial(t, "cpu")) for t in REPRODUCTION.trials(cfg)]
    assert {r.trial.method for r in results} >= {"connas", "darts", "darts_penalty", "random"}
    s = REPRODUCTION.summarize(results, cfg, tmp_path / "out")
    assert len(s.claims) == 5 and all(f.path.exists() for f in s.figures)
    from optzoo.experiment.verdicts import TESTS

    assert all(c.verdict.test in TESTS for c in s.claims)
    assert s.claims[4].verdict.test == "all_of"  # R sweep: feasibility + TOST per R
    # one seed of the table per trial: a smoke table with 2 seeds has an error bar
    assert all(r.trial.params["cost"] == "latency" for r in results)
    assert all(r.metrics["checkpoints"] >= 1 for r in results if r.trial.method == "connas")
    assert any((tmp_path / "cache" / "nas").glob("digits_*.json"))
    for r in results:
        if r.trial.method == "random":
            assert r.metrics["feasible"] == 1.0


def test_budgets_and_presets():
    assert space_for(3) == MINI_TOPOLOGY and space_for(2).size == 5
    flops = [MINI_TOPOLOGY.costs(a)["flops"] for a in MINI_TOPOLOGY.all_archs()]
    levels = budgets_for(flops, (0.5, 0.4, 0.2))
    assert [round(f, 3) for _, f in levels] == [0.504, 0.432, 0.216]
    assert budgets_for(range(1, 11), (0.5, 0.25)) == [(5.0, 0.5), (3.0, 0.3)]
    assert PRESETS["quick"].seeds >= 3 and PRESETS["full"].seeds >= 5
    assert PRESETS["quick"].table_seeds >= 3 and PRESETS["full"].table_seeds >= 5
    assert "latency" in PRESETS["quick"].costs
    with pytest.raises(ConfigError, match="budget_fracs"):
        ConNASConfig(budget_fracs=(0.0,))
    with pytest.raises(ConfigError, match="costs"):
        ConNASConfig(costs=("energy",))
    with pytest.raises(ConfigError, match="costs"):
        ConNASConfig(costs=())


# -- verdicts on synthetic trials --------------------------------------------------------------

def _results(connas_gaps, lam_gaps, *, violated=0.3, feasible=1.0):
    """Stored-trial stand-ins: ConNAS's gap per (budget, seed) and each λ's gap per budget
    (the same in every seed unless a list is given); ``feasible`` for every run."""
    cfg = dataclasses.replace(PRESETS["quick"], gap_pp=1.0)  # the numbers below assume 1 pp
    out = []
    for i, per_seed in enumerate(connas_gaps):
        for s, g in enumerate(per_seed):
            out.append(Result(Trial("connas", f"latency_b{i}", s,
                                    {"budget": i, "cost": "latency"}),
                              {"feasible": feasible, "gap": g, "violated_step_frac": violated}))
    for lam, per_budget in zip(cfg.lambdas, lam_gaps, strict=True):
        for s in range(cfg.seeds):
            m = {}
            for i, g in enumerate(per_budget):
                m[f"feasible_b{i}"] = 1.0
                m[f"gap_b{i}"] = g[s] if isinstance(g, (list, tuple)) else g
            out.append(Result(Trial("darts_penalty", "latency", s,
                                    {"lam": lam, "cost": "latency"}), m))
    return cfg, out


def _claims_of(cfg, results, gt=None):
    from optzoo.nas.reproduce.connas import _claims

    return _claims(results, cfg, gt)


def test_a_mean_gap_below_the_threshold_with_a_wide_ci_is_not_held():
    fail_everywhere = [[5.0, 5.0, 5.0]] * 4
    # old rule: mean gap 0.9 <= 1.0 -> held; the CI of (0, 0, 2.7) reaches far above 1.0
    cfg, rs = _results([[0.0, 0.0, 2.7], [0.1, 0.2, 0.1], [0.0, 0.0, 0.0]], fail_everywhere)
    c = _claims_of(cfg, rs)
    assert c[0].status == "held" and c[0].verdict.test == "bound_holds"
    assert c[2].status == "inconclusive" and c[2].verdict.test == "all_of"
    cfg, rs = _results([[0.0, 0.1, 0.0], [0.1, 0.2, 0.1], [0.0, 0.0, 0.0]], fail_everywhere)
    c = _claims_of(cfg, rs)
    assert c[2].status == "held" and c[3].status == "held"
    # 0.14 pp: b1's gaps 0.1, 0.2, 0.1 have a CI reaching above 0.14 -> not held there
    assert c[1].status != "held"


def test_one_infeasible_run_fails_the_feasibility_claim_and_an_inactive_constraint_decides_none():
    cfg, rs = _results([[0.0] * 3] * 3, [[5.0] * 3] * 4)
    rs[0].metrics["feasible"] = 0.0
    assert _claims_of(cfg, rs)[0].status == "not held"
    cfg, rs = _results([[0.0] * 3] * 3, [[5.0] * 3] * 4, violated=0.0)
    assert _claims_of(cfg, rs)[0].status == "inconclusive"


def test_a_lambda_just_above_the_threshold_by_noise_does_not_count_as_failing():
    # λ = 1e-3 "works" at b0, b1 and has a noisy mean gap 1.1 pp at b2: old rule counted it as
    # failing (mean > 1.0); the CI (0.1 .. 2.1 spread) does not lie above 1.0 pp
    works = [0.0, 0.0, [0.1, 1.1, 2.1]]
    cfg, rs = _results([[0.0] * 3] * 3, [works, *[[5.0] * 3] * 3])
    claim = _claims_of(cfg, rs)[3]
    assert claim.status == "inconclusive"
    assert dict(claim.verdict.cells)["λ=0.001"].verdict == "inconclusive"


class _Table:
    """A table stand-in with a given resolution (the claims read only these three)."""

    seeds, n_test = 3, 4000

    def __init__(self, resolution):
        self.r = resolution

    def resolution_pp(self):
        return self.r

    def entry_se_pp(self):
        return self.r / 2.77


def test_a_gap_below_the_tables_resolution_is_not_decided():
    cfg, rs = _results([[0.0] * 3] * 3, [[5.0] * 3] * 4)  # ConNAS finds the best every time
    c = _claims_of(cfg, rs, _Table(0.0))
    assert c[1].status == "held" and c[2].status == "held"
    c = _claims_of(cfg, rs, _Table(0.5))  # resolves 1 pp but not 0.14 pp
    assert c[1].status == "inconclusive" and c[1].verdict.test == "undecided"
    assert c[2].status == "held"
    c = _claims_of(cfg, rs, _Table(1.5))
    assert c[2].verdict.test == "undecided"


def test_claims_are_all_of_the_costs():
    cfg, rs = _results([[0.0] * 3] * 3, [[5.0] * 3] * 4)
    for r in list(rs):
        p = {**r.trial.params, "cost": "flops"}
        m = dict(r.metrics)
        if r.trial.method == "connas":
            m["feasible"] = 0.0  # every FLOPs run infeasible
        rs.append(Result(Trial(r.trial.method, r.trial.problem, r.trial.seed, p), m))
    two = dataclasses.replace(cfg, costs=("latency", "flops"))
    c = _claims_of(two, rs)
    assert c[0].verdict.test == "all_of" and c[0].status == "not held"
    assert dict(c[0].verdict.cells)["latency"].verdict == "held"
    assert _claims_of(cfg, rs)[0].status == "held"  # latency alone
