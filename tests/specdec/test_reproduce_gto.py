"""The ``gto`` reproduction's own logic: preset validation, trial expansion, and the claims on
hand-built results (held where the data show the effect, not held for a tie, inconclusive when
GTO cannot act)."""

from __future__ import annotations

import dataclasses

import pytest

from optzoo.errors import ConfigError
from optzoo.experiment import Result, Trial
from optzoo.specdec.reproduce import gto as repro

QUICK = repro.PRESETS["quick"]


@pytest.mark.parametrize("change, field", [
    ({"arms": ("token", "eagle")}, "arms"),
    ({"arms": ("gto",)}, "arms"),
    ({"arms": ("token", "gto", "gto")}, "arms"),
    ({"total_tokens": 1000}, "total_tokens"),
    ({"length": 8}, "length"),
    ({"timing_pairs": 1}, "timing_pairs"),
    ({"min_effect_tau": 0.0}, "min_effect_tau"),
    ({"max_overlap": 1.5}, "max_overlap"),
    ({"draft_hidden": 30}, "draft_hidden"),
])
def test_bad_presets_name_the_field(change, field):
    with pytest.raises(ConfigError, match=field):
        dataclasses.replace(QUICK, **change)


def test_presets_cover_the_brief():
    full = repro.PRESETS["full"]
    assert QUICK.seeds >= 3 and full.seeds >= 5
    assert set(full.arms) == set(repro.ARMS)
    assert (full.depth, full.top_k, full.total_tokens) == (5, 4, 16)
    assert (full.group_size, full.clip_eps, full.omega, full.groups) == (4, 0.2, 1.0, 4)
    assert full.phase2_steps == 300 and full.eval_prompts == 200
    assert (full.target_layers, full.target_hidden, full.draft_hidden) == (4, 192, 128)
    ts = repro.trials(QUICK)
    assert [t.seed for t in ts] == list(range(QUICK.seeds))
    assert len({t.key(repro.SLUG) for t in ts}) == len(ts)


def _results(tau_gto, tau_token, *, moved=0.1, arms=("token", "gto", "gto-nodebias")):
    out = []
    for s, (a, b) in enumerate(zip(tau_gto, tau_token, strict=True)):
        m = {"target_heldout_loss": 0.6, "log_ratio_abs_gto": moved, "clip_frac_gto": 0.1,
             "token_over_gto_wall_s": 1.0 + 0.01 * s, "speedup_token_wall_s": 0.8,
             "speedup_gto_wall_s": 0.8, "tau_chain_token": 3.0, "mismatch_chain": 0,
             "grad_noise_gto": 0.5 + 0.01 * s, "grad_noise_gto-nodebias": 1.0 + 0.03 * s}
        for arm in ("phase1", *arms):
            tau = {"gto": a, "token": b}.get(arm, b - 0.3)
            m.update({f"tau_{arm}": tau, f"tau_t1_{arm}": tau - 1, f"pruned_{arm}": 0.2,
                      f"overlap_{arm}": 0.6, f"mismatch_{arm}": 0})
        out.append(Result(Trial("gto-vs-token", "grammar", s, {}), m))
    return out


def _claim(summary, start):
    return next(c for c in summary.claims if c.text.startswith(start))


def test_a_consistent_gain_holds_and_a_tie_does_not(tmp_path):
    gain = repro.summarize(_results([5.5, 5.6, 5.7], [5.2, 5.25, 5.35]), QUICK, tmp_path)
    assert _claim(gain, "(2)").status == "held"
    assert _claim(gain, "(2b)").status == "held"
    assert _claim(gain, "(1)").status == "held"
    assert _claim(gain, "(3)").status == "held"
    assert _claim(gain, "(4)").status == "held"
    assert _claim(gain, "(4b)").status == "held"
    tie = repro.summarize(_results([5.5, 5.6, 5.7], [5.5, 5.6, 5.7]), QUICK, tmp_path)
    assert _claim(tie, "(2)").status == "not held"
    assert gain.figures and gain.figures[0].path.is_file()


def test_a_gto_that_never_moves_is_inconclusive(tmp_path):
    s = repro.summarize(_results([5.5, 5.6, 5.7], [5.2, 5.25, 5.35], moved=0.0), QUICK, tmp_path)
    c = _claim(s, "(2)")
    assert c.status == "inconclusive" and "does not act" in c.verdict.reason


def test_ablations_not_run_are_not_evaluated(tmp_path):
    s = repro.summarize(_results([5.5, 5.6, 5.7], [5.2, 5.25, 5.35]), QUICK, tmp_path)
    assert not any(c.text.startswith(("(5)", "(6)")) for c in s.claims)
    assert any("gto-mean" in n for n in s.notes)
