"""Decision-theoretic metrics (decision-metrics): our routines vs SciPy on identical inputs.

* exact Rockafellar--Uryasev CVaR of a discrete distribution (sort + tail split) vs the same
  quantity as a linear program solved by HiGHS (``scipy.optimize.linprog``);
* the CVaR-optimal ski-rental threshold (grid + exact atom candidates + bounded Brent) vs
  ``scipy.optimize.brute`` on a 20,001-point grid of the robust interval;
* d_avg of a ski-rental threshold (trapezoid rule refined at the breakpoints) vs
  ``scipy.integrate.quad`` told the same breakpoints.

Each pair is asserted to agree, so the timings compare equal work.
"""

from __future__ import annotations

import time

import numpy as np

from optzoo.predictions.decision_metrics import cvar, window_weight
from optzoo.predictions.ski_rental import SkiRental


def _timed(fn, repeat: int = 1):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return out, best


def bench_cvar_vs_linprog() -> dict:
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix, eye, hstack

    rng = np.random.default_rng(0)
    n, alpha = 2000, 0.9
    v = np.round(rng.lognormal(size=n), 2)  # rounding creates atoms with ties
    w = rng.uniform(0.1, 1.0, n)

    def lp() -> float:
        p = w / w.sum()
        c = np.concatenate([[1.0], p / (1 - alpha)])
        a_ub = hstack([csr_matrix(-np.ones((n, 1))), -eye(n)]).tocsr()
        res = linprog(c, A_ub=a_ub, b_ub=-v, bounds=[(None, None)] + [(0, None)] * n,
                      method="highs")
        return float(res.fun)

    ours, t_ours = _timed(lambda: float(cvar(v, alpha, w)), repeat=5)
    peer, t_peer = _timed(lp)
    assert abs(ours - peer) <= 1e-7 * max(1.0, abs(peer)), (ours, peer)
    return {"name": "CVaR_0.9, 2000 weighted atoms", "method": "optzoo cvar (exact RU)",
            "peer": "scipy linprog (HiGHS)", "method_s": t_ours, "peer_s": t_peer}


def bench_cvar_threshold_vs_brute() -> dict:
    from scipy.optimize import brute

    sr = SkiRental(b=10.0, r=5.0)
    rng = np.random.default_rng(1)
    y, alpha = 8.0, 0.5
    atoms = y * np.exp(0.4 * rng.standard_normal(256))
    lo, hi = sr.robust_interval

    def peer() -> float:
        f = lambda t: float(sr.alpha_consistency(t[0], atoms, alpha)[0])  # noqa: E731
        _, fval, _, _ = brute(f, [(lo, hi)], Ns=20001, full_output=True, finish=None)
        return float(fval)

    ours, t_ours = _timed(lambda: sr.cvar_optimal(y, atoms, alpha).value, repeat=3)
    ref, t_peer = _timed(peer)
    # ours is exact (the optimum sits at an atom); a grid can only be equal or worse
    assert ours <= ref + 1e-12 and ref - ours <= 1e-3, (ours, ref)
    return {"name": "ski CVaR_0.5-optimal threshold, 256 atoms",
            "method": "optzoo cvar_optimal", "peer": "scipy.optimize.brute (20001 pts)",
            "method_s": t_ours, "peer_s": t_peer}


def bench_d_avg_vs_quad() -> dict:
    from scipy.integrate import quad

    sr = SkiRental(b=10.0, r=5.0)
    y = 8.0
    w = window_weight(y, 0.5, 2.0, "triangular", sr.domain)
    ts = np.linspace(2.5, 40.0, 50)

    def peer() -> np.ndarray:
        out = []
        for t in ts:
            pts = [p for p in (t, 10.0, 12.5, y) if w.lo < p < w.hi]
            val, _ = quad(lambda x, t=t: float(sr.gap(t, x) * w(x)), w.lo, w.hi, points=pts,
                          limit=200, epsabs=1e-10)
            out.append(val / w.width)
        return np.array(out)

    ours, t_ours = _timed(lambda: sr.d_avg(ts, y, w, n_grid=4097), repeat=3)
    ref, t_peer = _timed(peer)
    np.testing.assert_allclose(ours, ref, atol=1e-6)
    return {"name": "ski d_avg of 50 thresholds, window [y/2, 2y]",
            "method": "optzoo d_avg (trapezoid + breakpoints)",
            "peer": "scipy.integrate.quad (points=)", "method_s": t_ours, "peer_s": t_peer}


BENCHMARKS = [bench_cvar_vs_linprog, bench_cvar_threshold_vs_brute, bench_d_avg_vs_quad]


if __name__ == "__main__":
    for fn in BENCHMARKS:
        row = fn()
        print(f"{row['name']:<46} {row['method_s'] * 1e3:9.2f} ms vs {row['peer_s'] * 1e3:9.2f} ms"
              f"  ratio {row['method_s'] / row['peer_s']:.3g}")
