"""Reproductions of the area ``scaling``: one module per paper.

* :mod:`.hp_transfer` -- ``hp-transfer`` (Complete(d)P: learning-rate transfer across width and
  depth under SP / μP / CompleteP, and the inferred batch-size and duration rules).
* :mod:`.quant_robustness` -- ``quant-robustness`` (post-training quantization error of tiny
  LMs along constant / WSD / cosine trajectories, higher peak lr, LAWA).
"""
