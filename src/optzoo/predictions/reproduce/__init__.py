"""Reproductions of the area ``predictions``: one module per paper.

* :mod:`.smoothness` -- ``predictions-smoothness`` (bounds of non-clairvoyant scheduling with
  predictions, checked by adversarial search and the paper's lower-bound constructions);
* :mod:`.decision_metrics` -- ``decision-metrics`` (MAX / AVG / CVaR-optimal robust algorithms
  against Pareto and tolerance baselines).
"""
