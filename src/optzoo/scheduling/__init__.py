"""Scheduling: the multi-objective flexible job shop of Smit et al., "Neural Multi-Objective
Combinatorial Optimization for Flexible Job Shop Scheduling Problems" (ICLR 2026, OpenReview
YAgOaYedLQ) — instances (Brandimarte files, SD2 generator with costs and due dates),
schedules, objectives and the active decoder, DAN's construction MDP with bound-based vector
rewards and policy features, dispatching rules, NSGA-II / MOEA/D baselines on pymoo, and
front metrics (HV gap, IGD+, Pareto-set size).

Example:
    >>> from optzoo.scheduling import (hv_gap, normalisation_bounds, nsga2, sd2_instance,
    ...                                uniform_preferences, weighted_rule_front)
    >>> instance = sd2_instance(n_jobs=4, n_machines=3, seed=0)  # with costs and due dates
    >>> rules = weighted_rule_front(instance, uniform_preferences(2, n_partitions=4))
    >>> front = nsga2(instance, ("makespan", "cost"), n_evals=400, pop_size=20, seed=0)
    >>> ideal, nadir = normalisation_bounds(front.points, rules.points)
    >>> front.points.shape[1], bool(hv_gap(front.points, rules.points, ideal, nadir) < 0)
    (2, True)
"""

from optzoo.scheduling.dispatching import RULES, dispatch, weighted_rule_front
from optzoo.scheduling.env import (
    MACHINE_FEATURES,
    OP_FEATURES,
    PAIR_FEATURES,
    FJSPEnv,
    FJSPFeatures,
    batch_features,
)
from optzoo.scheduling.evolutionary import RandomKeyFJSP, moead, nsga2
from optzoo.scheduling.instance import (
    BRANDIMARTE,
    FJSPInstance,
    brandimarte_bounds,
    fjsp_data_dir,
    load_brandimarte,
    read_fjs,
    sd2_instance,
    write_fjs,
)
from optzoo.scheduling.metrics import (
    FrontResult,
    hv_gap,
    hypervolume,
    igd,
    igd_plus,
    non_dominated,
    non_dominated_mask,
    normalisation_bounds,
    normalise,
    unique_count,
)
from optzoo.scheduling.preferences import dirichlet_preferences, uniform_preferences
from optzoo.scheduling.schedule import (
    OBJECTIVES,
    Schedule,
    check_objectives,
    check_schedule,
    decode_active,
    evaluate,
    flowtime,
    makespan,
    schedule_violations,
    total_cost,
    total_earliness,
    total_tardiness,
)

__all__ = [
    "BRANDIMARTE", "MACHINE_FEATURES", "OBJECTIVES", "OP_FEATURES", "PAIR_FEATURES", "RULES",
    "FJSPEnv", "FJSPFeatures", "FJSPInstance", "FrontResult", "RandomKeyFJSP", "Schedule",
    "batch_features", "brandimarte_bounds", "check_objectives", "check_schedule",
    "decode_active", "dirichlet_preferences", "dispatch", "evaluate", "fjsp_data_dir",
    "flowtime", "hv_gap", "hypervolume", "igd", "igd_plus", "load_brandimarte", "makespan",
    "moead", "non_dominated", "non_dominated_mask", "normalisation_bounds", "normalise",
    "nsga2", "read_fjs", "schedule_violations", "sd2_instance", "total_cost",
    "total_earliness", "total_tardiness", "unique_count", "uniform_preferences",
    "weighted_rule_front", "write_fjs",
]
