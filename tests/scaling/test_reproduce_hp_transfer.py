"""The ``hp-transfer`` reproduction's own logic: preset validation, trial expansion, one trial's
metrics, and the claims on hand-built results (held where the data show the effect, not held or
inconclusive where they do not, grid edges guarded)."""

from __future__ import annotations

import dataclasses
import math

import pytest

from optzoo.errors import ConfigError
from optzoo.experiment import Result, Trial
from optzoo.scaling.reproduce import hp_transfer as repro

QUICK = repro.PRESETS["quick"]


@pytest.mark.parametrize("change, field", [
    ({"parameterisations": ("ntk",)}, "parameterisations"),
    ({"widths": (64, 32)}, "widths"),
    ({"base_width": 48}, "base_width"),
    ({"lr_log2": (-8, -6, -4)}, "lr_log2"),
    ({"lr_log2": (-8, -7)}, "lr_log2"),
    ({"batches": (64, 128)}, "batches"),
    ({"batches": (32, 100)}, "batches"),  # steps·batch not divisible
    ({"batches": (32, 640)}, "batches"),  # (1 − β₁)·20 > 1
    ({"noise": 0.0}, "noise"),
    ({"min_effect_loss": 0.0}, "min_effect_loss"),
])
def test_bad_presets_name_the_field(change, field):
    with pytest.raises(ConfigError, match=field):
        dataclasses.replace(QUICK, **change)


def test_presets_cover_the_brief():
    full = repro.PRESETS["full"]
    assert QUICK.seeds >= 3 and full.seeds >= 5
    assert full.widths[-1] / full.widths[0] >= 8 and full.depths[-1] / full.depths[0] >= 4
    assert not full.axes_only and set(full.parameterisations) == {
        "sp", "mup", "depth-mup", "completep"}
    assert (min(full.lr_log2), max(full.lr_log2)) == (-14, -2)
    assert full.batches == (32, 64, 128, 256)


def test_trials_expand_studies_seeds_and_shapes():
    ts = repro.trials(QUICK)
    shapes = repro._shapes(QUICK)
    assert shapes == [(32, 2), (128, 2), (32, 8)]  # the two axes through the base shape
    per_seed = (len(QUICK.parameterisations) * len(shapes) + 2 * len(QUICK.batches) + 3
                + len(QUICK.pm_parameterisations))
    assert len(ts) == QUICK.seeds * per_seed
    assert len({t.key(repro.SLUG) for t in ts}) == len(ts)
    batch = [t for t in ts if t.problem == "batch" and t.seed == 0]
    # an equal sample budget: steps · batch is constant
    assert {t.params["steps"] * t.params["batch"] for t in batch} == {QUICK.steps * QUICK.batch}
    dur = sorted((t.method, t.params["steps"]) for t in ts if t.problem == "duration"
                 and t.seed == 0)
    assert dur == [("completep-ema", 96), ("completep-ema", 384), ("completep-none", 384)]
    assert len(repro._shapes(dataclasses.replace(QUICK, axes_only=False))) == 4


def test_one_trial_sweeps_its_grid_on_common_batches():
    t = Trial("completep", "width-depth", 0, {
        "base_width": 32, "base_depth": 2, "dim": 8, "classes": 4, "noise": 1.0,
        "eval_size": 128, "width": 32, "depth": 2, "steps": 10, "batch": 16,
        "grid": [-9, -6, 3]})
    m = repro.run_trial(t)
    assert m["loss@-6"] < m["loss@-9"]  # a usable lr trains, a tiny one barely moves
    assert m["best_log2"] == -6.0 and m["best_loss"] == m["loss@-6"]
    assert m["diverged"] == sum(not math.isfinite(m[f"loss@{g}"]) for g in (-9, -6, 3))
    assert repro.run_trial(t) == m  # deterministic


# -- claims on hand-built results --------------------------------------------------------------

def _curve(best: int, grid, depth_of_min: float = 0.5, floor: float = 1.0) -> dict:
    return {f"loss@{g}": floor + 0.05 * (g - best) ** 2 for g in grid} | {
        "best_log2": float(best), "best_loss": floor, "diverged": 0}


def _results(cfg, optimum, floor=lambda p, w, d: 1.0, rule_optima=None, seeds=4, pm=None):
    """``optimum(p, w, d, seed)`` → the per-seed best log2 lr of each width-depth trial;
    ``rule_optima(problem, method, value, seed)`` → the best grid value of the rule studies."""
    out = []
    for t in repro.trials(dataclasses.replace(cfg, seeds=seeds)):
        if t.problem == "per-module":
            m = pm(t.method, t.seed) if pm else {
                "global_proxy": 1.0, "pm_proxy": 1.0, "global_target": 1.0, "pm_target": 1.0,
                "global_log2_lr": 0.0}
        elif t.problem == "width-depth":
            w, d = t.params["width"], t.params["depth"]
            m = _curve(optimum(t.method, w, d, t.seed), cfg.lr_log2,
                       floor=floor(t.method, w, d) + 0.001 * t.seed)
        else:
            key = "batch" if t.problem == "batch" else "steps"
            grid = cfg.lr_log2 if t.problem == "batch" else cfg.wd_log2
            m = _curve(rule_optima(t.problem, t.method, t.params[key], t.seed), grid)
        out.append(Result(t, m))
    return out


def _good_rule(problem, method, value, seed):
    if problem == "batch":
        shift = 0 if method.endswith("sde") else int(math.log2(value // 32))
        return -7 + shift
    return -2 - (0 if method.endswith("ema") or value == QUICK.steps else 2)


def _verdicts(results, tmp_path, cfg=QUICK):
    s = repro.summarize(results, dataclasses.replace(cfg, seeds=4), tmp_path)
    assert s.tables and s.figures and s.figures[0].path.read_bytes()[:4] == b"\x89PNG"
    return {c.text[:3]: c.status for c in s.claims}


def test_claims_hold_on_results_that_show_transfer(tmp_path):
    def optimum(p, w, d, seed):
        if p == "sp":
            return -6 - int(math.log2(w // 32))  # SP: the optimum falls 2 steps over 4× width
        return -6

    floor = lambda p, w, d: 1.0 - 0.05 * (w // 32 - 1) - 0.02 * (d // 2 - 1)  # noqa: E731
    v = _verdicts(_results(QUICK, optimum, floor, _good_rule, pm=_good_pm), tmp_path)
    assert v == {"(1)": "held", "(2)": "held", "(3)": "held", "(4)": "held", "(5)": "held"}


def test_claims_fail_when_completep_drifts_and_sp_does_not(tmp_path):
    def optimum(p, w, d, seed):
        if p == "completep":
            return -6 + (2 if d == 8 else 0)  # CompleteP's optimum jumps 4× with depth
        return -6

    def bad_rule(problem, method, value, seed):  # the rule moves the optimum, no rule does not
        if problem == "batch":
            return -7 + (int(math.log2(value // 32)) if method.endswith("sde") else 0)
        return -2 - (2 if method.endswith("ema") and value != QUICK.steps else 0)

    def bad_pm(p, seed):  # the per-module gain at the proxy is lost at the target
        return {"global_proxy": 1.0, "pm_proxy": 0.9 + 0.001 * seed, "global_target": 0.8,
                "pm_target": 0.85 + 0.002 * seed, "global_log2_lr": 0.0}

    v = _verdicts(_results(QUICK, optimum, rule_optima=bad_rule, pm=bad_pm), tmp_path)
    assert v == {"(1)": "not held", "(2)": "not held", "(3)": "not held", "(4)": "not held",
                 "(5)": "not held"}


def test_an_optimum_on_the_grid_edge_makes_the_claim_inconclusive(tmp_path):
    edge = QUICK.lr_log2[-1]
    v = _verdicts(_results(QUICK, lambda p, w, d, s: edge, rule_optima=_good_rule), tmp_path)
    assert v["(1)"] == "inconclusive" and v["(2)"] == "inconclusive"


def _good_pm(p, seed):
    gain = 0.1 if p == "completep" else 0.0  # SP: the proxy's gain does not carry over
    return {"global_proxy": 1.0, "pm_proxy": 0.9 - 0.001 * seed, "global_target": 0.8,
            "pm_target": 0.8 - gain - 0.002 * seed, "global_log2_lr": 0.0}


def test_per_module_claim_is_inconclusive_when_the_search_finds_nothing_at_the_proxy(tmp_path):
    def flat(p, seed):
        return {"global_proxy": 1.0, "pm_proxy": 1.0 - 0.001 * seed, "global_target": 0.8,
                "pm_target": 0.7 - 0.002 * seed, "global_log2_lr": 0.0}

    v = _verdicts(_results(QUICK, lambda p, w, d, s: -6, rule_optima=_good_rule, pm=flat),
                  tmp_path)
    assert v["(5)"] == "inconclusive"


def test_a_tie_in_loss_does_not_pass_the_size_gain(tmp_path):
    v = _verdicts(_results(QUICK, lambda p, w, d, s: -6, rule_optima=_good_rule), tmp_path)
    assert v["(1)"] != "held"  # no loss gain with size: the all_of cannot hold
