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

Example:
    >>> from optzoo.predictions import SkiRental, window_weight
    >>> ski = SkiRental(b=10.0, r=5.0)  # buy cost 10; keep every choice 5-robust
    >>> ski.robust_interval  # the 5-robust buying thresholds T
    (2.5, 40.0)
    >>> w = window_weight(y=12.0, lo_factor=0.5, hi_factor=2.0)  # triangular on [6, 24]
    >>> best = ski.avg_optimal(12.0, w)  # the T minimising d_avg for the prediction 12
    >>> best.x, round(best.value, 3)
    (2.5, 0.048)
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
