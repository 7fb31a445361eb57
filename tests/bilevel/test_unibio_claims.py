"""The ``unibio`` claims are decided by verdict tests with fairness guards (issue 18): synthetic
results fed straight into the claim functions."""

from __future__ import annotations

from optzoo.bilevel.reproduce.unibio import PRESETS, _best_a, _claims_a, _claims_b
from optzoo.experiment import Result, Trial

SEEDS = (4, 5, 6)  # not 0..n-1: the claims must not assume the default seeds


def _a(method, p, lr, grads, calls=None):
    out = []
    for i, (s, g) in enumerate(zip(SEEDS, grads, strict=True)):
        t = Trial(method, f"A-p{p}", s, {"part": "A", "p": p, "noise": 0.1, "budget": 1000,
                                         "every": 5, "lr": lr})
        out.append(Result(t, {"min_grad": g, "diverged": False,
                              "calls_to_target": None if calls is None else calls[i]}))
    return out


def _part_a(uni_calls=None):
    rs = []
    for p in (2, 4, 6):
        # UniBiO reaches the target, StocBiO stalls well above it at its best α (interior)
        rs += _a("unibio", p, {2: 0.05, 4: 0.03, 6: 0.02}[p], [0.004, 0.005, 0.006],
                 None if uni_calls is None else [c * p for c in uni_calls])
        for lr, g in ((0.1, 0.5), (0.03, 0.2), (0.01, 0.6)):
            rs += _a("stocbio", p, lr, [g, g + 0.01, g + 0.02])
    return rs


def test_a2_unequal_tuning_budget_makes_the_comparison_inconclusive():
    best, tuned = _best_a(_part_a())
    assert tuned[("stocbio", 4)].best == 0.03 and tuned[("stocbio", 4)].budget == 3
    assert tuned[("unibio", 4)].budget == 1
    a1, a2, a3 = _claims_a(best, tuned, [2, 4, 6], PRESETS["quick"])
    assert a1.status == "held"
    # StocBiO stalls far above UniBiO, but UniBiO ran at a fixed step while StocBiO was tuned
    assert a2.status == "inconclusive"
    assert "unequal tuning budget" in a2.verdict.reason
    assert any("would be held" in g for g in a2.verdict.guards)
    # no UniBiO seed reached the target: the calls are not observed
    assert a3.status == "inconclusive"


def test_a3_calls_growing_with_p_is_held_and_flat_or_falling_calls_are_not():
    best, tuned = _best_a(_part_a(uni_calls=[200, 210, 190]))
    assert _claims_a(best, tuned, [2, 4, 6], PRESETS["quick"])[2].status == "held"
    for calls, status in ((lambda p: [300, 310, 290], {"inconclusive", "not held"}),
                          (lambda p: [900 - 100 * p, 910 - 100 * p, 890 - 100 * p],
                           {"not held"})):
        rs = [r for r in _part_a() if r.trial.method != "unibio"]
        for p in (2, 4, 6):
            rs += _a("unibio", p, 0.05, [0.004, 0.005, 0.006], calls(p))
        best, tuned = _best_a(rs)
        assert _claims_a(best, tuned, [2, 4, 6], PRESETS["quick"])[2].status in status


def _b(accs: dict[str, list[float]]):
    hc = {}
    for m, vals in accs.items():
        hc[(m, 0, 0.0, 0.0)] = [Result(Trial(m, "digits", s, {"part": "B"}),
                                       {"test_acc": v, "auc": 0.95 + 0.01 * i})
                                for i, (s, v) in enumerate(zip(SEEDS, vals, strict=True))]
    return hc


def test_b1_a_tie_is_not_held_and_a_clear_win_is():
    cfg = PRESETS["quick"]
    same = [0.80, 0.82, 0.81]
    b1, b2 = _claims_b(_b({"unibio": same, "stocbio": same, "ttsa": same, "masoba": same}),
                       cfg)
    assert b1.status == "not held"  # the old "mean ≥ mean" rule passed this tie
    assert b2.status == "held"
    b1, _ = _claims_b(_b({"unibio": [0.90, 0.92, 0.91], "stocbio": same,
                          "ttsa": [0.85, 0.86, 0.84], "masoba": same}), cfg)
    assert b1.status == "held"
