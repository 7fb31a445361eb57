"""The ``mofjsp-dcan`` reproduction's additions: the single-objective baseline
(``first-objective-only``: DCAN's network trained by the same PPO with λ fixed to e_1), the
15×10 generalisation size of the ``full`` preset, and the verdicts of its claims on synthetic
results (ties, the λ-blind front, the interleaved timing trial).  (The smoke preset's
determinism and the summary's invariants are tested in ``test_decomposition_ppo.py``.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from optzoo.experiment import Result
from optzoo.scheduling.dcan import DCANPolicy
from optzoo.scheduling.decomposition_ppo import DecompositionPPO, PPOConfig, solve_front
from optzoo.scheduling.instance import sd2_instance
from optzoo.scheduling.preferences import uniform_preferences
from optzoo.scheduling.reproduce import mofjsp_dcan as repro
from optzoo.scheduling.schedule import check_schedule, evaluate

OBJS = ("makespan", "cost")


@pytest.fixture(autouse=True)
def _one_thread():
    # tiny tensors: one thread, as the reproduction's trials use (threads only contend)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _sampler(rng, n):
    return [sd2_instance(3, 2, int(rng.integers(10**6))) for _ in range(n)]


def _fed_preferences(trainer) -> np.ndarray:
    """Every λ the policy is called with during one update (rollout and PPO epochs)."""
    seen: list[torch.Tensor] = []
    hook = trainer.policy.register_forward_pre_hook(
        lambda module, args: seen.append(args[1].detach().cpu().clone()))
    try:
        stats = trainer.update()
    finally:
        hook.remove()
    return torch.cat(seen).numpy(), stats


def test_fixed_preference_ppo_trains_on_the_first_objective_only():
    torch.manual_seed(0)
    cfg = PPOConfig(n_instances=2, n_preferences=3, minibatch_size=16)
    trainer = repro.FixedPreferencePPO(DCANPolicy(2, "dcan"), _sampler, OBJS, config=cfg,
                                       seed=0, preference=repro.first_objective(2))
    lam, stats = _fed_preferences(trainer)
    # the rollout and several minibatches of the PPO epochs all see λ = (1, 0)
    assert lam.shape[0] > cfg.n_instances * cfg.n_preferences
    np.testing.assert_array_equal(lam, np.tile([1.0, 0.0], (lam.shape[0], 1)))
    # the scalarised training objective Σ λ_i f_i / s_i is then the normalised makespan alone
    assert stats["weighted_objective"] == pytest.approx(stats["makespan_normalised"], rel=1e-12)
    assert stats["weighted_objective"] != pytest.approx(stats["cost_normalised"])
    # a second update (same instances) keeps the preference fixed
    lam2, _ = _fed_preferences(trainer)
    assert np.all(lam2 == np.array([1.0, 0.0]))


def test_decomposition_ppo_draws_varying_preferences_for_contrast():
    # the hook above does see λ: plain decomposition PPO feeds Dirichlet draws, not e_1
    torch.manual_seed(0)
    cfg = PPOConfig(n_instances=2, n_preferences=3, minibatch_size=16)
    trainer = DecompositionPPO(DCANPolicy(2, "dcan"), _sampler, OBJS, config=cfg, seed=0)
    lam, stats = _fed_preferences(trainer)
    assert len(np.unique(lam, axis=0)) == cfg.n_instances * cfg.n_preferences
    assert stats["weighted_objective"] != pytest.approx(stats["makespan_normalised"])


@pytest.mark.parametrize("bad", [(1.0,), (0.5, 0.6), (-0.5, 1.5), (math.nan, 1.0),
                                 (1.0, 0.0, 0.0)])
def test_fixed_preference_rejects_a_bad_preference(bad):
    with pytest.raises(ValueError, match="preference"):
        repro.FixedPreferencePPO(DCANPolicy(2, "dcan"), _sampler, OBJS, preference=bad)


def test_first_objective_is_the_unit_vector():
    for n in (2, 3):
        lam = repro.first_objective(n)
        assert lam.shape == (n,) and lam[0] == 1.0 and lam[1:].sum() == 0.0


@pytest.mark.parametrize("preset", ["smoke", "quick", "full"])
def test_the_baseline_gets_the_same_budget_as_dcan(preset):
    cfg = repro.PRESETS[preset]
    ts = repro.trials(cfg)
    for obj in cfg.objective_sets:
        one = [t for t in ts if t.method == repro.FIRST_ONLY and t.problem == obj]
        dcan = [t for t in ts if t.method == "dcan" and t.problem == obj]
        assert len(one) == len(dcan) == cfg.seeds
        assert [dict(t.params) for t in one] == [dict(t.params) for t in dcan]
        assert [t.seed for t in one] == [t.seed for t in dcan]
    keys = [t.key(repro.SLUG) for t in ts]
    assert len(set(keys)) == len(keys)


def test_full_preset_adds_15x10_and_keeps_its_other_sizes():
    cfg = repro.PRESETS["full"]
    assert {"10x5", "20x5", "15x10"} <= set(cfg.test_sizes)
    assert cfg.train_size == "10x5"
    # claim 3 compares the training size with the last one: the brief's 20×5
    assert cfg.test_sizes[-1] == "20x5"
    neural = next(t for t in repro.trials(cfg) if t.method == repro.FIRST_ONLY)
    names = repro.held_out_names(neural.params)
    assert [n for n in names if n.startswith("15x10-")] == [f"15x10-{i:02d}" for i in range(10)]


def test_15x10_test_instances_decode_to_valid_schedules():
    inst = repro.held_out_instance("15x10-03")
    assert (inst.n_jobs, inst.n_machines) == (15, 10)
    assert list(inst.job_lengths) == [10] * 15  # SD2: operations per job = machines
    assert inst.cost is not None and inst.due_dates is not None
    torch.manual_seed(0)
    front = solve_front(DCANPolicy(2, "dcan"), inst, uniform_preferences(2, 1), OBJS)
    assert front.points.shape[0] >= 1
    for pts, sched in zip(front.points, front.schedules, strict=True):
        check_schedule(inst, sched)
        np.testing.assert_allclose(evaluate(inst, sched, OBJS), pts)


@pytest.fixture(scope="module")
def smoke_results():
    cfg = repro.PRESETS["smoke"]
    return cfg, [Result(t, repro.run_trial(t, "cpu")) for t in repro.trials(cfg)]


def _metrics(results, method, seed=0):
    return next(r.metrics for r in results if r.trial.method == method and r.trial.seed == seed)


def test_the_baseline_trial_reports_what_the_other_policies_report(smoke_results):
    cfg, results = smoke_results
    one = _metrics(results, repro.FIRST_ONLY)
    for m in ("dcan", "wi-dan", "hyper"):
        assert set(one) == set(_metrics(results, m))
    assert {k for k in one if k.endswith("__greedy__front")} == {
        f"{s}-00__greedy__front" for s in cfg.test_sizes}
    assert all(math.isfinite(float(v)) for k, v in one.items() if not k.endswith("__front"))
    trial = next(r.trial for r in results if r.trial.method == repro.FIRST_ONLY)
    again = repro.run_trial(trial, "cpu")
    assert ({k: v for k, v in again.items() if not k.endswith("_wall_s")}
            == {k: v for k, v in one.items() if not k.endswith("_wall_s")})


def test_summary_shows_the_baseline_and_tolerates_its_absence(smoke_results, tmp_path):
    cfg, results = smoke_results
    greedy, sample = (repro.LABELS[(repro.FIRST_ONLY, v)] for v in ("greedy", "sample"))
    summary = repro.summarize(results, cfg, tmp_path / "with")
    rows = summary.tables[0].rows
    for size in cfg.test_sizes:
        assert any(r[0] == size and r[1] == greedy for r in rows)
        assert any(r[0] == size and r[1] == sample for r in rows)
    assert any(repro.NAMES[repro.FIRST_ONLY] in r[1] for r in summary.tables[-1].rows)
    assert sum("descriptive, no claim" in n for n in summary.notes) == 2
    assert len(summary.claims) == 5

    # a run recorded before the baseline existed (the quick preset's first run) still
    # summarises, without the baseline's rows and notes
    old = [r for r in results if r.trial.method != repro.FIRST_ONLY]
    summary = repro.summarize(old, cfg, tmp_path / "without")
    assert not any(r[1] in (greedy, sample) for r in summary.tables[0].rows)
    assert not any("descriptive, no claim" in n for n in summary.notes)
    assert len(summary.claims) == 5


# -- verdicts (issue 18): synthetic results where the old rules passed and the new ones must not


def _synthetic(cfg, fronts, timing=None):
    """Results with the given greedy / EA fronts: ``fronts[(method, seed, name)] = points``."""
    import json

    from optzoo.experiment import Trial

    by_trial: dict = {}
    for (method, seed, name), pts in fronts.items():
        variant = "front" if method in repro.EAS else "greedy"
        m = by_trial.setdefault((method, seed), {})
        m[f"{name}__{variant}__front"] = json.dumps(np.asarray(pts, float).tolist())
        m[f"{name}__{variant}_wall_s"] = 1.0
    obj = cfg.objective_sets[0]
    out = [Result(Trial(method, obj, seed, {}), metrics) for (method, seed), metrics in
           by_trial.items()]
    if timing is not None:
        out.append(Result(Trial(repro.TIMING, obj, 0, {}), timing))
    return out


def _cfg():
    import dataclasses

    return dataclasses.replace(repro.PRESETS["smoke"], seeds=3, test_instances=2)


def _names(cfg):
    return [f"{s}-{i:02d}" for s in cfg.test_sizes for i in range(cfg.test_instances)]


def _front(rng, n_points):
    x = np.sort(rng.uniform(10, 100, n_points))
    return np.stack([x, 200 - x + rng.uniform(0, 1, n_points)], 1)


def _timing(ratio, sd=0.1, pairs=5):
    return {"dcan_vs_nsga2_ratio": ratio, "dcan_vs_nsga2_log_ratio_mean": math.log(ratio),
            "dcan_vs_nsga2_log_ratio_sd": sd, "dcan_vs_nsga2_pairs": pairs,
            "dcan_vs_nsga2_a_s": ratio, "dcan_vs_nsga2_b_s": 1.0}


def test_claims_a_tie_with_wi_dan_and_nsga2_is_not_held():
    cfg = _cfg()
    rng = np.random.default_rng(0)
    fronts = {}
    for s in range(cfg.seeds):
        for n in _names(cfg):
            f = _front(rng, 4)
            # WI-DAN and NSGA-II find exactly DCAN's front: ties everywhere
            for m in ("dcan", "wi-dan", "nsga2"):
                fronts[(m, s, n)] = f
            fronts[("blind", s, n)] = f[:1]
    res = _synthetic(cfg, fronts, _timing(0.005))
    claims = repro._claims(repro._collect(res, cfg.objective_sets[0]), cfg, res)
    assert all(c.verdict.test in ("at_least", "all_of", "superior", "within", "undecided")
               for c in claims)
    # (1) "≤ WI-DAN's on 2/3 of the instances" held on ties before; a tie is no win now
    assert claims[0].status == "not held"
    assert {v.test for _, v in claims[0].verdict.cells} == {"superior"}
    # (2) a gap equal to NSGA-II's at a ratio CI below 1 %: held
    assert claims[1].status == "held"
    # (3) equal advantages on both sizes: no growth
    assert claims[2].status == "not held"
    # (4) four distinct points on every instance and seed, but as many as WI-DAN's: a tie is
    # no "more distinct points"
    assert claims[3].status == "not held"
    cells = dict(claims[3].verdict.cells)
    assert cells["|PF| at least the bound"].verdict == "held"
    assert cells["|PF| above WI-DAN's"].verdict == "not held"
    # (5) no Hyper fronts in these results: undecided
    assert claims[4].status == "inconclusive"


def test_claim_4_does_not_rest_on_the_lambda_blind_front():
    cfg = _cfg()
    rng = np.random.default_rng(1)
    fronts = {}
    for s in range(cfg.seeds):
        for n in _names(cfg):
            f = _front(rng, 6)
            fronts[("dcan", s, n)] = f[:2]   # two points: "more than λ-blind's one" held before
            fronts[("wi-dan", s, n)] = f[2:4]
            fronts[("nsga2", s, n)] = f[4:]
            fronts[("blind", s, n)] = f[:1]
    res = _synthetic(cfg, fronts, _timing(0.005))
    claims = repro._claims(repro._collect(res, cfg.objective_sets[0]), cfg, res)
    assert claims[3].verdict.test == "all_of" and claims[3].status == "not held"
    assert dict(claims[3].verdict.cells)["|PF| at least the bound"].verdict == "not held"


def test_claims_4_and_5_compare_with_wi_dan_and_hyper():
    cfg = _cfg()
    rng = np.random.default_rng(3)
    fronts = {}
    for s in range(cfg.seeds):
        for n in _names(cfg):
            f = _front(rng, 5)
            fronts[("dcan", s, n)] = f                  # five distinct points
            fronts[("wi-dan", s, n)] = f[:2] + 0.5      # two, slightly worse
            fronts[("nsga2", s, n)] = f[:3] + 1.0
            fronts[("hyper", s, n)] = f[:1] + 20.0 + s  # one point, far worse
    res = _synthetic(cfg, fronts, _timing(0.005))
    claims = repro._claims(repro._collect(res, cfg.objective_sets[0]), cfg, res)
    assert claims[3].status == "held" and claims[4].status == "held"
    # Hyper equal to DCAN: claim 5 is a tie, not held
    for s in range(cfg.seeds):
        for n in _names(cfg):
            fronts[("hyper", s, n)] = fronts[("dcan", s, n)]
    res = _synthetic(cfg, fronts, _timing(0.005))
    claims = repro._claims(repro._collect(res, cfg.objective_sets[0]), cfg, res)
    assert claims[4].status == "not held"


def test_claim_2_time_comes_from_the_interleaved_timing_trial_only():
    cfg = _cfg()
    rng = np.random.default_rng(2)
    fronts = {(m, s, n): _front(rng, 3) for m in ("dcan", "wi-dan", "nsga2", "blind")
              for s in range(cfg.seeds) for n in _names(cfg)}
    obj = cfg.objective_sets[0]
    # per-trial wall times say DCAN is 1,000× faster; without the timing trial: inconclusive
    res = _synthetic(cfg, fronts)
    claim = repro._claims(repro._collect(res, obj), cfg, res)[1]
    time_cell = dict(claim.verdict.cells)["time ratio below the bound"]
    assert time_cell.verdict == "inconclusive" and claim.status != "held"
    # measured interleaved at 50 % of NSGA-II's time: not held, whatever the gaps say
    res = _synthetic(cfg, fronts, _timing(0.5))
    claim = repro._claims(repro._collect(res, obj), cfg, res)[1]
    assert dict(claim.verdict.cells)["time ratio below the bound"].verdict == "not held"
    assert claim.status == "not held"


def test_verdict_margins_leave_the_trial_keys_alone():
    import dataclasses

    cfg = repro.PRESETS["quick"]
    moved = dataclasses.replace(cfg, min_effect_gap_wi=0.02, gap_margin_nsga=0.1,
                                time_ratio=0.05, min_effect_advantage=0.0, min_points=5.0)
    assert ({t.key(repro.SLUG) for t in repro.trials(cfg)}
            == {t.key(repro.SLUG) for t in repro.trials(moved)})
    timing = [t for t in repro.trials(cfg) if t.method == repro.TIMING]
    assert len(timing) == 1 and timing[0].params["timing_pairs"] == cfg.timing_pairs
