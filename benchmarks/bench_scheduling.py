"""Scheduling (predictions-smoothness): our exact makespan vs peer solvers on identical inputs.

* enumeration (``exact_makespan(method="enumerate")``) vs HiGHS via ``scipy.optimize.milp`` on
  ten instances with n = 10 jobs, m = 3 identical machines (integer sizes);
* the same enumeration vs OR-Tools CP-SAT on the same instances.

Both sides must report the same optimum on every instance (asserted), so the timings compare
equal work.
"""

from __future__ import annotations

import time

import numpy as np

from optzoo.predictions.scheduling.opt import exact_makespan


def _instances(count: int = 10, n: int = 10, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(1, 100, n).astype(float) for _ in range(count)]


def _cpsat_makespan(sizes: np.ndarray, m: int) -> float:
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    n = sizes.size
    x = [[model.NewBoolVar(f"x{j}_{i}") for i in range(m)] for j in range(n)]
    horizon = int(sizes.sum())
    cmax = model.NewIntVar(0, horizon, "cmax")
    for j in range(n):
        model.AddExactlyOne(x[j])
    for i in range(m):
        model.Add(sum(int(sizes[j]) * x[j][i] for j in range(n)) <= cmax)
    model.Minimize(cmax)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.Solve(model)
    if status != cp_model.OPTIMAL:
        raise RuntimeError(f"CP-SAT did not prove optimality (status {status})")
    return float(solver.ObjectiveValue())


def _time(fn, instances):
    t = time.perf_counter()
    out = [fn(p) for p in instances]
    return time.perf_counter() - t, out


def exact_makespan_vs_highs() -> dict:
    inst = _instances()
    ours_s, ours = _time(lambda p: exact_makespan(p, m=3, method="enumerate")[0], inst)
    peer_s, peer = _time(lambda p: exact_makespan(p, m=3, method="milp")[0], inst)
    assert np.allclose(ours, peer), (ours, peer)
    return {"name": "scheduling: exact makespan n=10 m=3 (x10)", "method": "optzoo enumerate",
            "peer": "scipy.milp (HiGHS)", "method_s": ours_s, "peer_s": peer_s}


def exact_makespan_vs_cpsat() -> dict:
    inst = _instances()
    ours_s, ours = _time(lambda p: exact_makespan(p, m=3, method="enumerate")[0], inst)
    peer_s, peer = _time(lambda p: _cpsat_makespan(p, 3), inst)
    assert np.allclose(ours, peer), (ours, peer)
    return {"name": "scheduling: exact makespan n=10 m=3 (x10)", "method": "optzoo enumerate",
            "peer": "ortools CP-SAT (1 worker)", "method_s": ours_s, "peer_s": peer_s}


BENCHMARKS = [exact_makespan_vs_highs, exact_makespan_vs_cpsat]
