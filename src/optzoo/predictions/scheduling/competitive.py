"""ALG/OPT of one algorithm on one instance, for each of the paper's three problems.

The evaluator may read true sizes (it is the referee); the scheduler never does -- it runs in a
simulator that hides them (:mod:`optzoo.predictions.scheduling.simulator`).  OPT is exact
(:mod:`optzoo.predictions.scheduling.opt`), so an empirical ratio is a true lower bound on the
algorithm's competitive ratio.
"""

from __future__ import annotations

import numpy as np

from optzoo.predictions.scheduling.error import check_sizes
from optzoo.predictions.scheduling.opt import (
    exact_makespan,
    preemptive_makespan,
    spt_total_completion,
)
from optzoo.predictions.scheduling.simulator import (
    MachineScheduler,
    SharingScheduler,
    simulate_machines,
    simulate_sharing,
)


def single_machine_ratio(algorithm: SharingScheduler, true: object, pred: object) -> float:
    """``Σ C_j(ALG) / Σ C_j(SPT)`` on one machine with preemption."""
    res = simulate_sharing(algorithm, pred, true, capacity=1.0)
    return res.total_completion / spt_total_completion(res.sizes)


def makespan_ratio(algorithm: MachineScheduler, true: object, pred: object,
                   speeds: object) -> float:
    """``C_max(ALG) / OPT`` on machines with ``speeds``, restart model, exact OPT."""
    s = check_sizes(speeds, "speeds")
    res = simulate_machines(algorithm, pred, true, s)
    opt, _ = exact_makespan(res.sizes, speeds=s)
    return res.makespan / opt


def preemptive_ratio(algorithm: SharingScheduler, true: object, pred: object, m: int) -> float:
    """``C_max(ALG) / OPT`` on ``m`` identical machines with preemption and resumption."""
    if m < 1:
        raise ValueError(f"m: expected >= 1 machines, got {m}")
    res = simulate_sharing(algorithm, pred, true, capacity=float(m), max_rate=1.0)
    return res.makespan / preemptive_makespan(res.sizes, m)


def random_instance(rng: np.random.Generator, n: int, eta: float, low: float = 1.0,
                    high: float = 100.0) -> tuple[np.ndarray, np.ndarray]:
    """``p*`` log-uniform in ``[low, high]``, ``p = p* · exp(u)``, ``u ~ U[-ln η, ln η]``."""
    if n < 1:
        raise ValueError(f"n: expected >= 1 jobs, got {n}")
    if not eta >= 1.0:
        raise ValueError(f"eta: expected an error >= 1, got {eta}")
    true = np.exp(rng.uniform(np.log(low), np.log(high), n))
    u = rng.uniform(-np.log(eta), np.log(eta), n)
    return true, true * np.exp(u)
