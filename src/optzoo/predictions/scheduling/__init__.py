"""Non-clairvoyant scheduling with predictions: refined smoothness (Zhao & Zomaya, ICLR 2026).

"On Smoothness Bounds for Non-Clairvoyant Scheduling with Predictions", OpenReview Zcn4n57lHg.
Simulators that hide true sizes until completion, the paper's algorithms and baselines, exact
optima, the lower-bound families with their adaptive adversaries, and an adversarial search for
bad instances under the refined-smoothness predicate.

Example:
    >>> import numpy as np
    >>> from optzoo.predictions.scheduling import SPJF, single_machine_ratio
    >>> round(single_machine_ratio(SPJF(), true=[3.0, 1.0, 2.0], pred=[3.0, 1.0, 2.0]), 6)
    1.0
"""

from optzoo.predictions.scheduling.competitive import (
    makespan_ratio,
    preemptive_ratio,
    random_instance,
    single_machine_ratio,
)
from optzoo.predictions.scheduling.error import (
    eta,
    informative,
    job_errors,
    size_ratio,
    unrestricted,
)
from optzoo.predictions.scheduling.list_scheduling import ListScheduling
from optzoo.predictions.scheduling.lower_bounds import (
    LowerBoundInstance,
    Thm41Adversary,
    Thm51Adversary,
    Thm61Adversary,
    eta_star,
    realized,
    thm41_bound,
    thm41_instance,
    thm41_vertices,
    thm51_bound,
    thm51_instance,
    thm51_opt,
    thm51_seed,
    thm61_bound,
    thm61_instance,
    thm61_opt,
    thm61_speeds,
)
from optzoo.predictions.scheduling.lppt import LPPT, chen_tan_bound
from optzoo.predictions.scheduling.opt import (
    exact_makespan,
    lpt_assignment,
    preemptive_makespan,
    spt_total_completion,
)
from optzoo.predictions.scheduling.pprr import PPRR, water_fill
from optzoo.predictions.scheduling.preferential_rr import PreferentialRoundRobin
from optzoo.predictions.scheduling.related_doubling import RelatedDoubling
from optzoo.predictions.scheduling.round_robin import RoundRobin
from optzoo.predictions.scheduling.search import SearchResult, adversarial_search
from optzoo.predictions.scheduling.simple import Simple
from optzoo.predictions.scheduling.simulator import (
    AdversaryError,
    FixedSizes,
    JobView,
    Progress,
    RestartSimulator,
    ScheduleResult,
    SharingSimulator,
    SizeOracle,
    simulate_machines,
    simulate_sharing,
)
from optzoo.predictions.scheduling.spjf import SPJF

__all__ = [
    "LPPT", "PPRR", "SPJF", "AdversaryError", "FixedSizes", "JobView", "ListScheduling",
    "LowerBoundInstance", "PreferentialRoundRobin", "Progress", "RelatedDoubling",
    "RestartSimulator", "RoundRobin", "ScheduleResult", "SearchResult", "SharingSimulator",
    "Simple", "SizeOracle", "Thm41Adversary", "Thm51Adversary", "Thm61Adversary",
    "adversarial_search", "chen_tan_bound", "eta", "eta_star", "exact_makespan", "informative",
    "job_errors", "lpt_assignment", "makespan_ratio", "preemptive_makespan", "preemptive_ratio",
    "random_instance", "realized", "simulate_machines", "simulate_sharing", "single_machine_ratio",
    "size_ratio", "spt_total_completion", "thm41_bound", "thm41_instance", "thm41_vertices",
    "thm51_bound", "thm51_instance", "thm51_opt", "thm51_seed", "thm61_bound", "thm61_instance",
    "thm61_opt", "thm61_speeds", "unrestricted",
    "water_fill",
]
