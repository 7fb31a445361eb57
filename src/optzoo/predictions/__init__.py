"""Learning-augmented online algorithms: algorithms that get a prediction of their input.

Modules (each documents its paper, equations and the readings it chose):

* :mod:`optzoo.predictions.scheduling` -- non-clairvoyant scheduling with predicted job sizes
  (Zhao & Zomaya, ICLR 2026): simulators that reveal true sizes only at completion, SPJF, Round
  Robin, SIMPLE + list adjusting, the related-machines algorithm, exact OPT, the refined
  smoothness predicate, lower-bound constructions and adversarial search.
* :mod:`optzoo.predictions.decision_metrics` -- decision-theoretic measures (Angelopoulos, Dürr
  & Melidi, ICLR 2026): CVaR (Rockafellar–Uryasev), the ideal solution I_r, d_max, d_avg,
  α-consistency and the MAX / AVG / CVaR-optimal choice of a robust algorithm;
* :mod:`optzoo.predictions.ski_rental`, :mod:`optzoo.predictions.one_max`,
  :mod:`optzoo.predictions.contract_scheduling` -- the three problems of that paper with their
  Pareto, tolerance and prediction-free baselines.
"""

from optzoo.predictions import (
    contract_scheduling,
    decision_metrics,
    one_max,
    scheduling,
    ski_rental,
)
from optzoo.predictions.contract_scheduling import ContractScheduling
from optzoo.predictions.decision_metrics import cvar, d_avg, d_max, window_weight
from optzoo.predictions.one_max import OneMaxSearch
from optzoo.predictions.ski_rental import SkiRental

__all__ = [
    "ContractScheduling", "OneMaxSearch", "SkiRental", "contract_scheduling", "cvar", "d_avg",
    "d_max", "decision_metrics", "one_max", "scheduling", "ski_rental", "window_weight",
]
