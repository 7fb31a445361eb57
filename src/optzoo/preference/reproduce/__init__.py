"""Reproductions of the area ``preference``: one module per paper.

* :mod:`.auxdpo` -- ``auxdpo`` (DPO's misspecification and AuxDPO's fix on exact population
  optima of the paper's didactic bandits);
* :mod:`.xtf` -- ``xtf`` (token noise filtering on a tiny word-level Llama with injected label
  noise);
* :mod:`.ti_dpo` -- ``ti-dpo`` (DPO, TDPO2, TI-DPO and its ablations on decisive-token
  preferences with label noise);
* :mod:`.steporlm` -- ``steporlm`` (policy / GenPRM co-evolution with W-DPO on templated OR
  modelling problems solved by HiGHS).
"""
