"""The verdict tests: each decision rule on hand-worked cases, the boundaries, and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from optzoo.experiment import verdicts as V
from optzoo.experiment.core import Claim, Result, Trial

T975_2 = stats.t.ppf(0.975, 2)  # 4.302653: the t quantile of a 3-seed paired CI


# ------------------------------------------------------------------ superior

def test_superior_paired_ci_by_hand():
    # differences 1, 2, 3: mean 2, sd 1, se 1/sqrt(3), CI 2 ± 2.484 -> straddles 0.1 and 0
    v = V.superior({0: 2.0, 1: 3.0, 2: 4.0}, {0: 1.0, 1: 1.0, 2: 1.0}, min_effect=0.1)
    half = T975_2 / math.sqrt(3)
    assert v.effect == pytest.approx(2.0)
    assert v.ci == pytest.approx((2.0 - half, 2.0 + half))
    assert v.n == 3 and v.margin == 0.1 and v.test == "superior"
    assert v.verdict == V.INCONCLUSIVE


def test_superior_hand_worked_verdicts():
    half = T975_2 / math.sqrt(3)
    # d = 2, 2.1, 1.9 -> sd 0.1, CI 2 ± 0.248 -> held above 0.5
    held = V.superior({0: 2.0, 1: 2.1, 2: 1.9}, {0: 0.0, 1: 0.0, 2: 0.0}, min_effect=0.5)
    assert held.verdict == V.HELD and held.ci[0] == pytest.approx(2 - 0.1 * half)
    # d = -2 ± 0.1: CI entirely below 0 -> not held
    assert V.superior({0: -2.0, 1: -2.1, 2: -1.9}, {0: 0, 1: 0, 2: 0},
                      min_effect=0.5).verdict == V.NOT_HELD
    # d tiny inside ±min_effect -> not held (no effect that counts)
    assert V.superior({0: 0.01, 1: 0.02, 2: 0.0}, {0: 0, 1: 0, 2: 0},
                      min_effect=0.5).verdict == V.NOT_HELD
    # wide CI straddling both -> inconclusive
    assert V.superior({0: 3.0, 1: -1.0, 2: 1.0}, {0: 0, 1: 0, 2: 0},
                      min_effect=0.5).verdict == V.INCONCLUSIVE


@pytest.mark.parametrize("min_effect", [0.0, 0.01, 1.0])
def test_a_tie_never_passes(min_effect):
    tie = {0: 0.9679, 1: 0.9679, 2: 0.9679}
    v = V.superior(tie, dict(tie), min_effect=min_effect)
    assert v.verdict == V.NOT_HELD and v.effect == 0.0 and v.ci == (0.0, 0.0)
    # an unpaired tie too
    assert V.superior([1.0, 1.0], [1.0, 1.0], min_effect=min_effect).verdict == V.NOT_HELD


def test_superior_direction_less_and_log_ratio():
    # lower is better: a's costs are half of b's
    a, b = {0: 1.0, 1: 1.1, 2: 0.9}, {0: 2.0, 1: 2.2, 2: 1.8}
    v = V.superior(a, b, min_effect=0.2, direction="less", log_ratio=True)
    assert v.verdict == V.HELD and v.effect == pytest.approx(math.log(2))
    assert V.superior(a, b, min_effect=0.2, direction="greater").verdict == V.NOT_HELD


def test_superior_ci_touching_the_minimal_effect_is_not_held():
    # zero spread puts the CI at the point d = min_effect: "beyond" is strict
    v = V.superior({0: 1.5, 1: 1.5}, {0: 1.0, 1: 1.0}, min_effect=0.5)
    assert v.ci == (0.5, 0.5) and v.verdict == V.NOT_HELD


def test_one_seed_is_inconclusive_unless_exact():
    assert V.superior([5.0], [1.0], min_effect=0.1).verdict == V.INCONCLUSIVE
    assert V.superior({0: 5.0}, {0: 1.0}, min_effect=0.1).verdict == V.INCONCLUSIVE
    assert V.superior([5.0], [1.0], min_effect=0.1, exact=True).verdict == V.HELD


def test_unpaired_welch_matches_scipy():
    a, b = [1.0, 2.0, 4.0, 3.5], [0.5, 0.7, 1.9]
    v = V.superior(a, b, min_effect=0.0, paired=False)
    res = stats.ttest_ind(a, b, equal_var=False)
    lo, hi = res.confidence_interval(0.95)
    assert v.ci == pytest.approx((lo, hi))
    assert v.p_value == pytest.approx(res.pvalue / 2)


def test_paired_p_value_matches_scipy():
    a = {0: 2.0, 1: 2.5, 2: 1.7, 3: 2.2}
    b = {0: 1.0, 1: 2.0, 2: 1.5, 3: 1.0}
    v = V.superior(a, b, min_effect=0.0)
    res = stats.ttest_rel(list(a.values()), list(b.values()), alternative="greater")
    assert v.p_value == pytest.approx(res.pvalue)
    assert v.mde is not None and v.mde > 0


@pytest.mark.parametrize("bad", [[1.0, math.nan], [math.inf, 1.0]])
def test_nan_or_inf_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="a: expected finite numbers"):
        V.superior(bad, [1.0, 2.0], min_effect=0.1)
    with pytest.raises(ValueError, match="values: expected finite"):
        V.bound_holds(bad, 1.0)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="min_effect"):
        V.superior([1, 2], [1, 2], min_effect=-1)
    with pytest.raises(ValueError, match="margin"):
        V.noninferior([1, 2], [1, 2], margin=0)
    with pytest.raises(ValueError, match="direction"):
        V.superior([1, 2], [1, 2], min_effect=0.1, direction="up")
    with pytest.raises(ValueError, match="keys differ"):
        V.superior({0: 1, 1: 2}, {0: 1, 2: 2}, min_effect=0.1)
    with pytest.raises(ValueError, match="at least one value"):
        V.superior([], [1.0], min_effect=0.1)
    with pytest.raises(ValueError, match="equal lengths"):
        V.superior([1, 2, 3], [1, 2], min_effect=0.1, paired=True)
    with pytest.raises(ValueError, match="positive"):
        V.superior([1, -2], [1, 2], min_effect=0.1, log_ratio=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-100, 100), min_size=2, max_size=8),
       st.lists(st.floats(-100, 100), min_size=2, max_size=8),
       st.floats(0, 5))
def test_swapping_a_and_b_flips_superior(a, b, m):
    n = min(len(a), len(b))
    da, db = dict(enumerate(a[:n])), dict(enumerate(b[:n]))
    ab = V.superior(da, db, min_effect=m)
    ba = V.superior(db, da, min_effect=m, direction="less")
    assert ab.verdict == ba.verdict
    assert ab.effect == pytest.approx(ba.effect, abs=1e-9)
    # the other direction can never also be held
    flipped = V.superior(db, da, min_effect=m)
    assert not (ab.held and flipped.held)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-100, 100), min_size=1, max_size=8), st.floats(0, 5))
def test_identical_samples_are_never_superior(a, m):
    d = dict(enumerate(a))
    assert not V.superior(d, dict(d), min_effect=m).held
    assert not V.superior(list(a), list(a), min_effect=m, paired=False).held


# ------------------------------------------------------------------ noninferior / equivalent

def test_noninferior_fixed_margin_rules():
    # d = -0.05 ± tiny: above -0.1 -> held
    assert V.noninferior({0: 0.95, 1: 0.951, 2: 0.949}, {0: 1, 1: 1, 2: 1},
                         margin=0.1).verdict == V.HELD
    # d = -0.5 ± tiny: below -0.1 -> not held
    assert V.noninferior({0: 0.5, 1: 0.51, 2: 0.49}, {0: 1, 1: 1, 2: 1},
                         margin=0.1).verdict == V.NOT_HELD
    # a method that learns nothing with a huge spread does not pass (the old "mean - CI" rule
    # would): the CI straddles -margin
    v = V.noninferior({0: 0.0, 1: 1.0, 2: 0.2}, {0: 1.0, 1: 0.9, 2: 0.8}, margin=0.05)
    assert v.verdict == V.INCONCLUSIVE
    # lower-is-better
    assert V.noninferior({0: 1.02, 1: 1.01, 2: 1.03}, {0: 1, 1: 1, 2: 1}, margin=0.1,
                         direction="less").verdict == V.HELD


def test_equivalent_tost_by_hand():
    a, b = {0: 1.0, 1: 1.02, 2: 0.98}, {0: 1.0, 1: 1.0, 2: 1.0}
    v = V.equivalent(a, b, margin=0.1)
    half90 = stats.t.ppf(0.95, 2) * 0.02 / math.sqrt(3)
    assert v.ci == pytest.approx((-half90, half90)) and v.verdict == V.HELD
    assert V.equivalent({0: 2.0, 1: 2.01, 2: 1.99}, b, margin=0.1).verdict == V.NOT_HELD
    assert V.equivalent({0: 1.0, 1: 1.3, 2: 0.8}, b, margin=0.1).verdict == V.INCONCLUSIVE


# ------------------------------------------------------------------ within / bound / slope / trend

def test_within_scalar_is_exact_and_sequence_uses_the_ci():
    assert V.within(0.5, 0.0, 1.0).verdict == V.HELD
    assert V.within(1.5, 0.0, 1.0).verdict == V.NOT_HELD
    assert V.within(1.0, 0.0, 1.0).verdict == V.HELD  # a closed interval
    assert V.within([0.5, 0.51, 0.49], -math.inf, 0.8).verdict == V.HELD
    assert V.within([0.5, 0.9, 0.2], -math.inf, 0.8).verdict == V.INCONCLUSIVE
    assert V.within([0.95, 0.96, 0.94], -math.inf, 0.8).verdict == V.NOT_HELD
    assert V.within([0.5], 0.0, 1.0).verdict == V.INCONCLUSIVE
    with pytest.raises(ValueError, match="lo <= hi"):
        V.within(0.5, 1.0, 0.0)


def test_bound_holds_counts_violations():
    v = V.bound_holds([0.1, 0.2, 0.6, 0.7], 0.5)
    assert v.verdict == V.NOT_HELD and v.effect == 2 and v.n == 4
    assert V.bound_holds([0.1, 0.5], 0.5).held
    assert V.bound_holds([0.5 + 1e-9], 0.5, tol=1e-6).held
    assert V.bound_holds([1.0, 2.0], 0.5, side="ge").held


def test_slope_recovers_a_power_law():
    x = np.repeat([1.0, 2.0, 4.0, 8.0, 16.0], 3)
    noise = np.exp(np.random.default_rng(0).normal(0, 0.02, x.size))
    y = 3 * x ** 0.5 * noise
    v = V.slope(x, y, band=(-math.inf, 0.8), log=True)
    assert v.effect == pytest.approx(0.5, abs=0.02) and v.verdict == V.HELD
    assert V.slope(x, y, band=(-math.inf, 0.3), log=True).verdict == V.NOT_HELD
    assert V.slope(x, y, band=(v.effect, 2.0), log=True).verdict == V.INCONCLUSIVE
    # deterministic given the seed
    assert V.slope(x, y, band=(0, 1), log=True).ci == V.slope(x, y, band=(0, 1), log=True).ci
    with pytest.raises(ValueError, match="3 distinct"):
        V.slope([1, 1, 2], [1, 2, 3], band=(0, 1))


def test_trend_direction_and_minimum():
    x = np.arange(10.0)
    assert V.trend(x, 2 * x, min_rho=0.5).verdict == V.HELD
    assert V.trend(x, -x).verdict == V.NOT_HELD
    assert V.trend(x, -x, direction="decreasing", min_rho=0.5).verdict == V.HELD
    flat = np.zeros(10)
    assert V.trend(x, flat, min_rho=0.1).verdict == V.NOT_HELD  # no trend is no pass


# ------------------------------------------------------------------ combinations

def _h():
    return V.bound_holds([0.0], 1.0)


def _nh():
    return V.bound_holds([2.0], 1.0)


def _inc():
    return V.superior([5.0], [1.0], min_effect=0.1)


def test_all_of_any_of_at_least():
    assert V.all_of({"a": _h(), "b": _h()}).verdict == V.HELD
    assert V.all_of({"a": _h(), "b": _inc()}).verdict == V.INCONCLUSIVE
    assert V.all_of({"a": _h(), "b": _nh(), "c": _inc()}).verdict == V.NOT_HELD
    assert len(V.all_of({"a": _h(), "b": _nh()}).cells) == 2
    assert V.any_of({"a": _nh(), "b": _nh()}).verdict == V.NOT_HELD
    assert V.any_of({"a": _nh(), "b": _h()}).verdict == V.HELD  # an exact cell
    assert V.at_least({"a": _h(), "b": _h(), "c": _nh()}, 2).verdict == V.HELD
    assert V.at_least({"a": _h(), "b": _nh(), "c": _nh()}, 2).verdict == V.NOT_HELD
    assert V.at_least({"a": _h(), "b": _inc(), "c": _nh()}, 2).verdict == V.INCONCLUSIVE
    with pytest.raises(ValueError, match="k: expected"):
        V.at_least({"a": _h()}, 2)
    with pytest.raises(ValueError, match="at least one cell"):
        V.all_of({})


def test_any_of_applies_holm():
    # one cell at one-sided p ~ 0.02: enough alone (0.025), not among 4 cells (0.00625)
    a = {0: 1.5, 1: 1.15, 2: 1.4, 3: 1.2}
    b = {0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0}
    cell = V.superior(a, b, min_effect=0.0)
    assert 0.00625 < cell.p_value < 0.025 and cell.held
    assert V.any_of({"x": cell}).held
    weak = V.superior({0: 0, 1: 1, 2: 0, 3: 0}, dict.fromkeys(range(4), 0.0), min_effect=0.0)
    assert not V.any_of({"x": cell, "y": weak, "z": weak, "w": weak}).held


# ------------------------------------------------------------------ guards

def test_tune_marks_the_grid_edge_and_budget():
    t = V.tune("lr", {0.1: [1.0, 1.2], 0.01: [0.5, 0.4], 0.001: [0.9, 0.8]})
    assert t.best == 0.01 and not t.on_edge and t.budget == 3
    edge = V.tune("lr", {0.1: [0.1], 0.01: [0.5], 0.001: [0.9]})
    assert edge.best == 0.1 and edge.on_edge
    assert not V.tune("p", {0.5: 0.9, 1.0: 0.1}, hard_limits=[1.0]).on_edge
    # a divergent run (NaN) ranks last, not first
    assert V.tune("lr", {1.0: [math.nan], 0.1: [0.3], 0.01: [0.5]}).best == 0.1
    assert V.tune("acc", {1: 0.1, 2: 0.9, 3: 0.5}, minimize=False).best == 2
    assert V.tune("fixed", {0.05: [0.3]}).budget == 1
    # every grid value failed: the report says so instead of naming a "tuned" value
    none = V.tune("relu m*", {16: [math.inf], 32: [math.inf], 64: [math.inf]})
    assert "no value of the 3-value grid" in none.describe() and "arbitrary" in none.describe()
    assert "= 0.01 tuned on 3 values" in t.describe()


def test_guard_downgrades_edge_and_unequal_budget():
    held = V.superior({0: 2.0, 1: 2.1, 2: 1.9}, {0: 0, 1: 0, 2: 0}, min_effect=0.5)
    ok = V.tune("m lr", {1: 3.0, 2: 1.0, 3: 2.0})
    base = V.tune("b lr", {1: 3.0, 2: 1.0, 3: 2.0})
    assert V.guard(held, ok, base).verdict == V.HELD
    edge = V.tune("b lr", {1: 1.0, 2: 2.0, 3: 3.0})
    g = V.guard(held, ok, edge)
    assert g.verdict == V.INCONCLUSIVE and "grid edge" in g.reason
    assert any("would be held" in x for x in g.guards)
    fixed = V.tune("m lr", {2: 1.0})
    g2 = V.guard(held, fixed, base)
    assert g2.verdict == V.INCONCLUSIVE and "unequal tuning budget" in g2.reason
    u = V.undecided("no seed reached the target", n=3)
    assert u.verdict == V.INCONCLUSIVE and u.test == "undecided" and u.n == 3
    with pytest.raises(ValueError, match="why"):
        V.undecided("")
    na = V.not_acting(held, "the dual stays 0")
    assert na.verdict == V.INCONCLUSIVE and "dual stays 0" in na.reason


# ------------------------------------------------------------------ timing

def test_interleaved_alternates_and_ratio_bound_decides():
    calls = []
    ticks = iter(range(1000))

    def clock():
        return float(next(ticks))

    V.interleaved(lambda: calls.append("a"), lambda: calls.append("b"), pairs=4, warmup=1,
                  clock=clock)
    assert calls == ["a", "b", "a", "b", "b", "a", "a", "b", "b", "a"]
    assert V.ratio_bound([2.0, 2.1, 1.9, 2.05], at_most=3.0).verdict == V.HELD
    assert V.ratio_bound([7.0, 7.2, 6.9], at_most=3.0).verdict == V.NOT_HELD
    assert V.ratio_bound([1.0, 5.0, 2.0], at_most=3.0).verdict == V.INCONCLUSIVE
    assert V.ratio_bound([0.5, 0.52, 0.49], at_least=0.3).verdict == V.HELD
    with pytest.raises(ValueError, match="exactly one"):
        V.ratio_bound([1.0, 2.0])


def test_ratio_bound_from_one_trials_metrics_equals_its_pairs():
    t = V.Interleaved(a=(2.0, 2.2, 1.9, 2.1), b=(1.0, 1.0, 1.0, 1.0))
    direct = V.ratio_bound(t.ratios, at_most=3.0)
    stored = V.ratio_bound_from_metrics([t.metrics("upd")], "upd", at_most=3.0)
    assert stored.effect == pytest.approx(direct.effect)
    assert stored.ci == pytest.approx(direct.ci)
    assert stored.verdict == direct.verdict == V.HELD


# ------------------------------------------------------------------ claims and per-seed values

def test_a_claim_needs_a_verdict_not_a_boolean():
    with pytest.raises(TypeError, match="Verdict"):
        Claim("x", "y", True)
    c = Claim("x", "y", _inc())
    assert c.status == V.INCONCLUSIVE and c.held is False


def test_by_seed_pairs_and_rejects_ambiguity():
    rs = [Result(Trial("a", "p", s), {"m": float(s)}) for s in (3, 4)]
    assert V.by_seed(rs, "m") == {3: 3.0, 4: 4.0}
    with pytest.raises(ValueError, match="two results with seed 3"):
        V.by_seed([*rs, Result(Trial("b", "p", 3), {"m": 1.0})], "m")


def test_verdict_rejects_unknown_values():
    with pytest.raises(ValueError, match="verdict"):
        V.Verdict("maybe", "superior", 0.0, (0.0, 0.0), 1)
    with pytest.raises(ValueError, match="test"):
        V.Verdict(V.HELD, "eyeballed", 0.0, (0.0, 0.0), 1)


def test_common_seeds_keeps_the_shared_seeds_in_order():
    a, b, c = {3: 1.0, 1: 2.0, 2: 3.0}, {1: 5.0, 3: 6.0}, {3: 0.0, 1: 0.0, 9: 0.0}
    assert V.common_seeds(a, b, c) == ({3: 1.0, 1: 2.0}, {3: 6.0, 1: 5.0}, {3: 0.0, 1: 0.0})
    with pytest.raises(ValueError, match="mappings"):
        V.common_seeds()
