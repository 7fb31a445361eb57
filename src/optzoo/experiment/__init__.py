"""The reproduction engine: contract types, runner, result store, backends, statistics.

Example:
    The pieces of a reproduction (:mod:`optzoo.experiment.selftest` is a complete one): a
    typed preset, trials, their results, a table with 95 % CIs and a claim with a verdict:

    >>> from dataclasses import dataclass
    >>> import numpy as np
    >>> from optzoo.experiment import Claim, Preset, Result, Trial, aggregate, verdicts
    >>> @dataclass(frozen=True)
    ... class PiConfig(Preset):                      # seeds, seed_start come from Preset
    ...     samples: int = 1000
    >>> cfg = PiConfig(seeds=3).with_overrides({"samples": "4000"})   # --set samples=4000
    >>> trials = [Trial("hit-or-miss", "pi", seed, {"samples": cfg.samples})
    ...           for seed in range(cfg.seeds)]
    >>> def run_trial(trial, device="cpu"):
    ...     u = np.random.default_rng(trial.seed).random((trial.params["samples"], 2))
    ...     return {"estimate": float(4.0 * ((u ** 2).sum(1) <= 1.0).mean())}
    >>> results = [Result(t, run_trial(t)) for t in trials]
    >>> aggregate(results, by=["method"], metrics=["estimate"], title="pi").rows
    [['hit-or-miss', '3.147 ± 0.072', 3]]
    >>> estimates = [r.metrics["estimate"] for r in results]
    >>> Claim("the estimate is within 0.15 of pi", f"mean {np.mean(estimates):.3f}",
    ...       verdicts.within(estimates, 3.0, 3.3)).status
    'held'
"""

from optzoo.experiment.core import (
    PRESET_NAMES,
    Claim,
    Figure,
    Preset,
    Reproduction,
    Result,
    Summary,
    Table,
    Trial,
)
from optzoo.experiment.stats import aggregate, fmt_ci, group, mean_ci
from optzoo.experiment.verdicts import Verdict

__all__ = [
    "PRESET_NAMES", "Claim", "Figure", "Preset", "Reproduction", "Result", "Summary", "Table",
    "Trial", "Verdict", "aggregate", "fmt_ci", "group", "mean_ci",
]
