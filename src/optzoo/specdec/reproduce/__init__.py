"""Reproductions of the area ``specdec``: one module per paper.

* :mod:`.gto` -- ``gto`` (Group Tree Optimization of an EAGLE draft vs token-level training:
  acceptance length, misalignment statistics, ablations, wall clock).
"""
