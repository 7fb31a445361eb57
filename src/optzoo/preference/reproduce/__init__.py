"""Reproductions of the area ``preference``: one module per paper.

* :mod:`.auxdpo` -- ``auxdpo`` (DPO's misspecification and AuxDPO's fix on exact population
  optima of the paper's didactic bandits).
"""
