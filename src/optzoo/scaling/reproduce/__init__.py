"""Reproductions of the area ``scaling``: one module per paper.

* :mod:`.hp_transfer` -- ``hp-transfer`` (Complete(d)P: learning-rate transfer across width and
  depth under SP / μP / CompleteP, and the inferred batch-size and duration rules).
"""
