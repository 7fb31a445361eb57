"""Claims (1)-(4) of the entropic-barriers reproduction, fed synthetic pipeline results: each
verdict comes from a named test, a rule that was lenient before can now fail, and a drift test
whose noisy runs barely move is inconclusive (not acting)."""

from __future__ import annotations

import pytest

from optzoo.experiment import Result, Trial
from optzoo.landscape.reproduce import entropic_barriers as eb

CFG = eb.PRESETS["quick"]


def _pipeline(seed: int, *, drift: dict[str, tuple[float, float]], trace=1.9, lmax=1.8,
              path=0.008, line=0.7, fisher=1.9) -> Result:
    m = {"path_barrier": path, "linear_barrier": line, "trace_ratio": trace, "lmax_ratio": lmax,
         "fisher_ratio": fisher, "t_high": 3e-3}
    for cond in eb.CONDITIONS:
        for si in range(len(eb.STARTS)):
            m[f"pred_drift_{cond}_y{si}"] = 0.1
            m[f"t_equiv_{cond}_y{si}"] = 1e-7
            final = drift.get(cond, (0.0, 0.0))[si]
            for j in range(eb.CHECKPOINTS + 1):
                m[f"drift_{cond}_y{si}_c{j:02d}"] = final * j / eb.CHECKPOINTS
            m[f"drift_{cond}_y{si}"] = final
    return Result(trial=Trial(method="pipeline", problem="digits-mlp", seed=seed, params={}),
                  metrics=m)


def _claims(rows):
    return {c.text[:3]: c for c in eb._claims(rows, CFG)}


def test_every_claim_names_a_verdict_test():
    rows = [_pipeline(s, drift={"langevin_high": (0.2 + 0.01 * s, 0.21)}) for s in range(3)]
    claims = _claims(rows)
    assert set(claims) == {"(1)", "(2)", "(2b", "(3)", "(4)", "(3b", "(4b"}
    for c in claims.values():
        assert c.verdict.test in ("all_of", "within", "superior")


def test_a_real_drift_with_enough_motion_is_held_and_a_tie_in_temperature_is_not():
    rows = [_pipeline(s, drift={"gd": (0.001, 0.001),
                                "langevin_low": (0.2 + 0.01 * s, 0.2 - 0.01 * s),
                                "langevin_high": (0.2 + 0.01 * s, 0.21 - 0.005 * s)})
            for s in range(3)]
    c = _claims(rows)
    assert c["(3)"].status == "held"
    # T_high drifts exactly as much as T_low (up to ±0.01): no growth that counts
    assert c["(4)"].status == "not held"


def test_too_little_noise_to_drift_is_inconclusive_whatever_the_ci_says():
    # A small but consistent drift (0.010-0.012 ≥ 0): the noisy runs move by ~0.006 of the
    # path coordinate on average, below release_min_motion: the noise cannot carry a run.
    rows = [_pipeline(s, drift={"langevin_low": (0.0, 0.0),
                                "langevin_high": (0.010 + 0.001 * s, 0.011)})
            for s in range(3)]
    c = _claims(rows)
    for tag in ("(3)", "(4)"):
        assert c[tag].status == "inconclusive"
        assert "does not act" in c[tag].verdict.reason
        assert any("would be" in g for g in c[tag].verdict.guards)


def test_curvature_excess_needs_a_ci_above_the_minimal_excess():
    # The old rule held this: tr H ratio CI above 1 (1.04-1.06) and λ_max mean > 1.
    rows = [_pipeline(s, drift={}, trace=1.04 + 0.01 * s, lmax=1.02 + 0.01 * s)
            for s in range(3)]
    assert _claims(rows)["(2)"].status == "not held"
    rows = [_pipeline(s, drift={}, trace=1.9 + 0.05 * s, lmax=1.8 + 0.05 * s) for s in range(3)]
    assert _claims(rows)["(2)"].status == "held"


@pytest.mark.parametrize("path, held", [(0.008, True), (0.2, False)])
def test_flat_path_needs_the_barrier_ci_below_the_level(path, held):
    rows = [_pipeline(s, drift={}, path=path + 0.001 * s) for s in range(3)]
    assert (_claims(rows)["(1)"].status == "held") is held


def test_verdict_margins_are_not_trial_parameters():
    keys = {t.key(eb.SLUG) for t in eb.trials(CFG)}
    changed = type(CFG)(**{**CFG.__dict__, "drift_min_effect": 0.5, "release_min_motion": 0.5})
    assert {t.key(eb.SLUG) for t in eb.trials(changed)} == keys


def test_sgd_claims_a_real_batch_size_effect_is_held():
    rows = [_pipeline(s, drift={"gd": (0.01, 0.012), "sgd_b16": (0.2 + 0.01 * s, 0.18),
                                "sgd_b256": (0.02, 0.015 + 0.002 * s)}) for s in range(3)]
    c = _claims(rows)
    assert c["(3b"].status == "held"
    assert c["(4b"].status == "held"


def test_sgd_that_drifts_like_gd_or_a_batch_tie_is_not_held():
    # B = 16 moves (0.2) but exactly as GD does and as B = 256 does: no noise effect
    same = {c: (0.2 + 0.01 * s, 0.19) for c in ("gd", "sgd_b16", "sgd_b256") for s in (0,)}
    rows = [_pipeline(s, drift={c: (v[0] + 0.01 * s, v[1]) for c, v in same.items()})
            for s in range(3)]
    c = _claims(rows)
    assert c["(3b"].status == "not held"
    assert c["(4b"].status == "not held"


def test_sgd_whose_noise_cannot_move_the_runs_is_inconclusive():
    # the quick run before issue 20: SGD B = 16 drifted 0.00085, GD 0.00083
    rows = [_pipeline(s, drift={"gd": (0.00083, 0.00083), "sgd_b16": (0.00085, 0.00086),
                                "sgd_b256": (0.00083, 0.00084)}) for s in range(3)]
    c = _claims(rows)
    for tag in ("(3b", "(4b"):
        assert c[tag].status == "inconclusive"
        assert "does not act" in c[tag].verdict.reason


def test_fisher_ratio_at_one_is_not_held():
    rows = [_pipeline(s, drift={}, fisher=1.0 + 0.01 * s) for s in range(3)]
    assert _claims(rows)["(2b"].status == "not held"
