"""Hypothesis strategies shared by the scheduling tests: small random FJSP instances with
costs and due dates."""

from __future__ import annotations

from hypothesis import strategies as st

from optzoo.scheduling.instance import FJSPInstance


@st.composite
def instances(draw, max_jobs: int = 4, max_machines: int = 4, max_ops: int = 4,
              max_p: int = 9) -> FJSPInstance:
    n_jobs = draw(st.integers(1, max_jobs))
    n_machines = draw(st.integers(1, max_machines))
    jobs = []
    for _ in range(n_jobs):
        ops = []
        for _ in range(draw(st.integers(1, max_ops))):
            machines = draw(st.sets(st.integers(0, n_machines - 1), min_size=1))
            ops.append({k: draw(st.integers(1, max_p)) for k in sorted(machines)})
        jobs.append(ops)
    costs = [[{k: draw(st.integers(0, 9)) for k in op} for op in job] for job in jobs]
    due = [draw(st.integers(0, 6 * max_p)) for _ in range(n_jobs)]
    return FJSPInstance(jobs, n_machines=n_machines, costs=costs, due_dates=due)
