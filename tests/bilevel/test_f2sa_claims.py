"""The ``f2sa-p`` claims are decided by verdict tests with grid-edge guards (issue 18):
synthetic results fed straight into the claim functions."""

from __future__ import annotations

from optzoo.bilevel.reproduce.f2sa_p import F2SAConfig, _summary_b, _summary_c
from optzoo.experiment import Result, Trial

SEEDS = (3, 4, 5)  # not 0..n-1: the claims must not assume the default seeds
CFG = F2SAConfig(b_dims=(10,), b_budget=1000, b_nus=(0.1, 0.2, 0.4), b_lrs=(0.01, 0.03, 0.1),
                 b_stocbio_lrs=(0.1,))


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


def _grid(best_nu: float, gain: float) -> list[Result]:
    """Every F²SA-p grid whose best point is (best_nu, 0.03); F²SA-2/4 lower by ``gain``×."""
    rs = []
    for method, p in (("F2SA", 1), ("F2SA-2", 2), ("F2SA-4", 4)):
        scale = 1.0 if method == "F2SA" else gain
        for nu in CFG.b_nus:
            for lr in CFG.b_lrs:
                good = nu == best_nu and lr == 0.03
                rs += _b(method, p, nu, lr, (0.05 if good else 0.5) * scale,
                         calls=(400 * scale if good else None))
    rs += _b("stocBiO", None, None, 0.1, 0.3)
    return rs


def test_b_claims_are_decided_when_the_tuned_values_are_interior():
    _, (b1, b2), _ = _summary_b(_grid(best_nu=0.2, gain=0.2), CFG)
    assert b1.status == "held" and b2.status == "held"
    _, (b1, b2), _ = _summary_b(_grid(best_nu=0.2, gain=1.0), CFG)
    assert b1.status == "not held" and b2.status == "not held"  # equal: a tie never passes


def test_b_claims_on_the_grid_edge_are_inconclusive():
    tables, (b1, b2), _ = _summary_b(_grid(best_nu=0.4, gain=0.2), CFG)
    for c in (b1, b2):
        assert c.status == "inconclusive"
        for _, cell in c.verdict.cells:
            assert "inconclusive (grid edge" in cell.reason
        assert any("would be held" in g for g in c.verdict.guards)
    assert any("(grid edge)" in str(row[2]) for row in tables[0].rows)


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
