"""The ``f2sa-p`` claims are decided by verdict tests with grid-edge guards (issue 18):
synthetic results fed straight into the claim functions."""

from __future__ import annotations

from optzoo.bilevel.reproduce.f2sa_p import F2SAConfig, _summary_b, _summary_c, _summary_fv
from optzoo.experiment import Result, Trial

SEEDS = (3, 4, 5)  # not 0..n-1: the claims must not assume the default seeds
CFG = F2SAConfig(b_dims=(10,), b_budget=1000, b_orders=(1, 2, 4), b_nus=(0.1, 0.2, 0.4),
                 b_nu_fracs=(0.2, 0.4, 0.8), b_lrs=(0.01, 0.03, 0.1), b_stocbio_lrs=(0.1,))


def _b(method, p, nu, lr, tail, calls=None):
    out = []
    for i, s in enumerate(SEEDS):
        params = {"part": "B", "dim": 10, "budget": 1000, "sigma": 0.1, "tol": 1e-2, "lr": lr}
        if p is not None:
            params.update(p=p, nu=nu)
        reached = calls is not None
        out.append(Result(Trial(method, "A-d10", s, params), {
            "grad_tail": tail * (1 + 0.05 * i), "grad_min": tail / 2, "reached": reached,
            "calls_to_tol": None if calls is None else calls * (1 + 0.02 * i),
            "steps": 100, "diverged": False}))
    return out


def _grid(best: int, gain: float, bounded_best: int | None = None, cfg=CFG) -> list[Result]:
    """Every F²SA-p grid whose best point is (its ``best``-th ν, 0.03) (``bounded_best`` for
    p = 2, 4 when given); F²SA-2/4 lower by ``gain``×."""
    rs = []
    for method, p in (("F2SA", 1), ("F2SA-2", 2), ("F2SA-4", 4)):
        scale = 1.0 if method == "F2SA" else gain
        grid = cfg.nu_grid(p)
        k = best if p == 1 or bounded_best is None else bounded_best
        for nu in grid:
            for lr in cfg.b_lrs:
                good = nu == grid[k] and lr == 0.03
                rs += _b(method, p, nu, lr, (0.05 if good else 0.5) * scale,
                         calls=(400 * scale if good else None))
    rs += _b("stocBiO", None, None, 0.1, 0.3)
    return rs


def test_b_claims_are_decided_when_the_tuned_values_are_interior():
    _, (b1, b2), _ = _summary_b(_grid(best=1, gain=0.2), CFG)
    assert b1.status == "held" and b2.status == "held"
    _, (b1, b2), _ = _summary_b(_grid(best=1, gain=1.0), CFG)
    assert b1.status == "not held" and b2.status == "not held"  # equal: a tie never passes


def test_b_claims_on_the_grid_edge_are_inconclusive():
    tables, (b1, b2), _ = _summary_b(_grid(best=2, gain=0.2), CFG)
    for c in (b1, b2):
        assert c.status == "inconclusive"
        for _, cell in c.verdict.cells:
            assert "inconclusive (grid edge" in cell.reason
        assert any("would be held" in g for g in c.verdict.guards)
    assert any("(grid edge)" in str(row[2]) for row in tables[0].rows)


def test_the_top_nu_of_a_bounded_order_is_a_hard_limit_not_an_edge():
    # F²SA-2/4's best ν at their grid's top (just under 1/m): no edge; F²SA (p = 1, no bound)
    # interior — the comparison is decided
    _, (b1, _), _ = _summary_b(_grid(best=1, gain=0.2, bounded_best=2), CFG)
    assert b1.status == "held"
    assert not any("grid edge" in g for g in b1.verdict.guards)
    # and the bottom ν of a bounded order is an edge
    _, (b1, _), _ = _summary_b(_grid(best=1, gain=0.2, bounded_best=0), CFG)
    assert b1.status == "inconclusive"


def test_a_nu_axis_and_an_eta_axis_of_different_sizes_are_no_unequal_budget():
    # 3 ν × 5 η for every order: the budgets are compared axis by axis (the first quick run
    # of issue 21 compared the 3-value ν axis with the 4-value η axis and called it unequal)
    cfg = F2SAConfig(b_dims=(10,), b_budget=1000, b_orders=(1, 2, 4), b_nus=(0.1, 0.2, 0.4),
                     b_nu_fracs=(0.2, 0.4, 0.8), b_lrs=(0.003, 0.01, 0.03, 0.1, 0.3),
                     b_stocbio_lrs=(0.1,))
    _, (b1, b2), _ = _summary_b(_grid(best=1, gain=0.2, cfg=cfg), cfg)
    assert b1.status == "held" and b2.status == "held"
    assert not any("unequal" in g for g in b1.verdict.guards)


def _fv(ratio: float, tail_shared: float, tail_indep: float):
    v, f = [], []
    for i, s in enumerate(SEEDS):
        for kind, r in (("finite-sum", ratio), ("gauss", 1.0)):
            q = {"part": "V", "kind": kind, "orders": [1, 2]}
            v.append(Result(Trial("variance", kind, s, q), {
                "ratio_p1": r * (1 + 0.05 * i), "ratio_p2": r * (1 - 0.04 * i)}))
        for p in (1, 2):
            for shared, tail in ((True, tail_shared), (False, tail_indep)):
                q = {"part": "F", "p": p, "nu": 0.5, "shared": shared}
                f.append(Result(Trial(f"F2SA-{p}", "FS-d10", s, q),
                                {"grad_tail": tail * (1 + 0.03 * i)}))
    return f, v


def test_shared_batches_claims_need_a_variance_cut_and_a_gain():
    _, (cv, cf) = _summary_fv(*_fv(ratio=5.0, tail_shared=0.1, tail_indep=0.3), CFG)
    assert cv.status == "held" and cf.status == "held"
    # no variance cut (additive noise): V not held and F cannot act, whatever the tails say
    _, (cv, cf) = _summary_fv(*_fv(ratio=1.0, tail_shared=0.1, tail_indep=0.3), CFG)
    assert cv.status == "not held"
    assert cf.status == "inconclusive" and "does not act" in cf.verdict.cells[0][1].reason
    # a tie in the tails never passes
    _, (_, cf) = _summary_fv(*_fv(ratio=5.0, tail_shared=0.2, tail_indep=0.2), CFG)
    assert cf.status == "not held"


def _c(losses: dict[str, list[float]]) -> list[Result]:
    out = []
    for m, vals in losses.items():
        for s, v in zip(SEEDS, vals, strict=True):
            metrics = {"diverged": False, "calls": 1000, "steps": 20, "test_loss": v,
                       "test_acc": 0.9}
            for i in range(21):
                metrics.update({f"c_step_{i:02d}": i, f"c_calls_{i:02d}": 50 * i,
                                f"c_loss_{i:02d}": v + 0.01 * (20 - i), f"c_acc_{i:02d}": 0.9})
            out.append(Result(Trial(m, "digits-l2reg", s, {"part": "C", "steps": 20}), metrics))
    return out


def test_c_claims_need_the_declared_minimal_effect():
    same = [0.20, 0.21, 0.22]
    _, (c1, c2), _ = _summary_c(_c({"F2SA": same, "F2SA-2": same, "F2SA-4": same,
                                    "stocBiO": same}), CFG)
    assert c1.status == "not held" and c2.status == "not held"
    lower = [v - 0.05 for v in same]
    _, (c1, _), _ = _summary_c(_c({"F2SA": same, "F2SA-2": lower, "F2SA-4": lower,
                                   "stocBiO": same}), CFG)
    assert c1.status == "held"
