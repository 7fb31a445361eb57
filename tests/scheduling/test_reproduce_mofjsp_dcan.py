"""The ``mofjsp-dcan`` reproduction's additions: the single-objective baseline
(``first-objective-only``: DCAN's network trained by the same PPO with λ fixed to e_1) and the
15×10 generalisation size of the ``full`` preset.  (The smoke preset's determinism and the
summary's invariants are tested in ``test_decomposition_ppo.py``.)"""

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
    for m in ("dcan", "wi-dan", "blind"):
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
    assert len(summary.claims) == 4

    # a run recorded before the baseline existed (the quick preset's first run) still
    # summarises, without the baseline's rows and notes
    old = [r for r in results if r.trial.method != repro.FIRST_ONLY]
    summary = repro.summarize(old, cfg, tmp_path / "without")
    assert not any(r[1] in (greedy, sample) for r in summary.tables[0].rows)
    assert not any("descriptive, no claim" in n for n in summary.notes)
    assert len(summary.claims) == 4
