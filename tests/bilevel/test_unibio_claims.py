"""The ``unibio`` claims are decided by verdict tests with fairness guards (issues 18, 21):
synthetic results fed straight into the claim functions."""

from __future__ import annotations

import math

from optzoo.bilevel.reproduce.unibio import (
    PRESETS,
    _best_a,
    _best_b,
    _claim_scalar,
    _claims_a,
    _claims_b,
    _floor_cells,
)
from optzoo.experiment import Result, Trial

SEEDS = (4, 5, 6)  # not 0..n-1: the claims must not assume the default seeds
GRID = (0.01, 0.03, 0.1)


def _a(method, p, lr, grads, calls=None):
    out = []
    for i, (s, g) in enumerate(zip(SEEDS, grads, strict=True)):
        t = Trial(method, f"A-p{p}", s, {"part": "A", "p": p, "noise": 0.1, "budget": 1000,
                                         "every": 5, "lr": lr})
        out.append(Result(t, {"min_grad": g, "diverged": False,
                              "calls_to_target": None if calls is None else calls[i]}))
    return out


def _part_a(uni_best=0.03, uni_calls=None, uni_grid=GRID):
    """Every method on the same grid; UniBiO's two arms reach the target at ``uni_best``,
    StocBiO stalls well above it at its best α (interior)."""
    rs = []
    for p in (2, 4, 6):
        for arm in ("unibio", "unibio-dec"):
            for lr in uni_grid:
                good = lr == uni_best
                rs += _a(arm, p, lr, [0.004, 0.005, 0.006] if good else [0.3, 0.31, 0.32],
                         None if uni_calls is None or not good else [c * p for c in uni_calls])
        for lr, g in zip(GRID, (0.6, 0.2, 0.5), strict=True):
            rs += _a("stocbio", p, lr, [g, g + 0.01, g + 0.02])
    return rs


def test_a_claims_with_equal_grids_are_decided_and_an_edge_is_inconclusive():
    best, tuned = _best_a(_part_a())
    assert tuned[("unibio", 4)].budget == tuned[("stocbio", 4)].budget == 3
    a1, a1d, a2, a3 = _claims_a(best, tuned, [2, 4, 6], PRESETS["quick"])
    assert a1.status == "held" and a1d.status == "held"
    assert a2.status == "held"  # StocBiO stalls far above both arms, same tuning budget
    assert not any("unequal tuning budget" in g for g in a2.verdict.guards)
    assert a3.status == "inconclusive"  # no UniBiO seed reached: calls not observed
    # UniBiO's best step on the grid's edge: every comparison resting on it is inconclusive
    best, tuned = _best_a(_part_a(uni_best=0.1))
    a1, _, a2, _ = _claims_a(best, tuned, [2, 4, 6], PRESETS["quick"])
    assert a1.status == a2.status == "inconclusive"
    assert "grid edge" in a1.verdict.reason
    # a smaller grid for UniBiO than for StocBiO is an unequal budget
    best, tuned = _best_a(_part_a(uni_grid=(0.01, 0.03, 0.1, 0.3)))
    _, _, a2, _ = _claims_a(best, tuned, [2, 4, 6], PRESETS["quick"])
    assert a2.status == "inconclusive" and "unequal tuning budget" in a2.verdict.cells[0][1].reason


def test_a3_calls_growing_with_p_is_held_and_flat_calls_are_not():
    best, tuned = _best_a(_part_a(uni_calls=[200, 210, 190]))
    assert _claims_a(best, tuned, [2, 4, 6], PRESETS["quick"])[3].status == "held"
    rs = [r for r in _part_a(uni_calls=[200, 210, 190])]
    for r in rs:
        if r.metrics["calls_to_target"] is not None:
            r.metrics["calls_to_target"] = 300 + r.trial.seed  # the same at every p
    best, tuned = _best_a(rs)
    assert _claims_a(best, tuned, [2, 4, 6], PRESETS["quick"])[3].status in {
        "not held", "inconclusive"}


def _s(means: dict[int, list[float]]):
    scal = {}
    for p, vals in means.items():
        scal[("unibio", p, 0.0, 1.0)] = [
            Result(Trial("unibio", f"S-p{p}-n1", s, {"part": "S", "p": p, "noise": 1.0}),
                   {"mean_est": v, "mean_grad": v}) for s, v in zip(range(5), vals,
                                                                    strict=True)]
    return scal


def test_s_ordering_needs_every_consecutive_pair_beyond_the_declared_ratio():
    cfg = PRESETS["quick"]
    base = [0.10, 0.11, 0.09, 0.105, 0.095]
    grow = {p: [v * 2.0 ** k for v in base] for k, p in enumerate((2, 4, 6, 8))}
    assert _claim_scalar(_s(grow), cfg).status == "held"
    tie = {p: base for p in (2, 4, 6, 8)}
    assert _claim_scalar(_s(tie), cfg).status != "held"  # a tie never passes
    tight = [0.100, 0.101, 0.099, 0.1005, 0.0995]
    assert _claim_scalar(_s({p: tight for p in (2, 4, 6, 8)}), cfg).status == "not held"
    # growth overall (a Spearman trend would pass) but p = 6 and 8 swap: not every pair holds
    swap = dict(grow)
    swap[6], swap[8] = grow[8], grow[6]
    assert _claim_scalar(_s(swap), cfg).status == "not held"


def _b(accs: dict[str, dict[float, list[float]]], floors=None):
    rs = []
    for m, grid in accs.items():
        for lr, vals in grid.items():
            for i, (s, v) in enumerate(zip(SEEDS, vals, strict=True)):
                q = {"part": "B", "inner_lr": lr, "floor": 1e-6, "relative_floor": False}
                # validation loss mirrors accuracy: the pick by val loss is the best accuracy
                rs.append(Result(Trial(m, "digits", s, q), {
                    "test_acc": v, "val_loss": 2.0 - v, "auc": 0.95 + 0.01 * i,
                    "diverged": False}))
    for (fl, rel), vals in (floors or {}).items():
        for s, v in zip(SEEDS, vals, strict=True):
            q = {"part": "B", "inner_lr": 0.02, "floor": fl, "relative_floor": rel}
            rs.append(Result(Trial("unibio", "digits-floor", s, q),
                             {"auc": v, "val_loss": 1.0, "test_acc": 0.8, "diverged": False}))
    return rs


def _grid(peak, best=0.05):
    low = [v - 0.3 for v in peak]
    return {0.01: low, best: peak, 0.25: low} if best == 0.05 else {0.01: low, 0.05: low,
                                                                      0.25: peak}


def test_b1_a_tie_is_not_held_a_clear_win_is_and_an_edge_is_inconclusive():
    cfg = PRESETS["quick"]
    same = [0.80, 0.82, 0.81]
    rs = _b({m: _grid(same) for m in ("unibio", "stocbio", "ttsa", "masoba")})
    b1, b2 = _claims_b(*_best_b(rs), _floor_cells(rs), cfg)
    assert b1.status == "not held"  # the old "mean ≥ mean" rule passed this tie
    assert b2.status == "held"
    win = {"unibio": _grid([0.90, 0.92, 0.91]), "stocbio": _grid(same),
           "ttsa": _grid([0.85, 0.86, 0.84]), "masoba": _grid(same)}
    b1, _ = _claims_b(*_best_b(_b(win)), {}, cfg)
    assert b1.status == "held"
    # StocBiO's best lower step on the grid's edge: that comparison cannot be decided
    win["stocbio"] = _grid(same, best=0.25)
    best, tuned = _best_b(_b(win))
    assert tuned["stocbio"].on_edge and best["stocbio"][0] == 0.25
    b1, _ = _claims_b(best, tuned, {}, cfg)
    assert b1.status == "inconclusive"


def test_b2_reports_the_floor_sensitivity():
    rs = _b({"unibio": _grid([0.8, 0.8, 0.8])},
            floors={(1e-6, False): [0.5, 0.6, 0.55], (0.1, True): [0.76, 0.77, 0.75]})
    _, b2 = _claims_b(*_best_b(rs), _floor_cells(rs), PRESETS["quick"])
    assert "δ = 1e-06: AUC 0.55" in b2.evidence and "δ = 0.1·max D: AUC 0.76" in b2.evidence
    assert math.isfinite(b2.verdict.effect)
