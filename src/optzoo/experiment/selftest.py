"""The engine's self-test reproduction: the smallest complete example of the contract.

It is registered under the hidden slug ``_selftest`` (absent from ``optzoo list``) so that the
engine's own tests -- resume after SIGKILL, Ray equals local, report rebuilding -- run a real
reproduction end to end without depending on any paper.  Read it as the template for a new one.

Trials estimate π by Monte Carlo (hit-or-miss in the unit square) and by the Leibniz-type
average ``4 E[sqrt(1 - U²)]``; each can sleep ``sleep`` seconds to make runs long enough to kill.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optzoo.errors import ConfigError
from optzoo.experiment import verdicts
from optzoo.experiment.core import Claim, Preset, Reproduction, Result, Summary, Trial
from optzoo.experiment.stats import aggregate, group, mean_ci


@dataclass(frozen=True)
class SelftestConfig(Preset):
    """Args:
    samples: Monte Carlo samples per trial.
    sleep: seconds each trial sleeps after computing (to make runs killable mid-way).
    methods: estimators to run.
    """

    samples: int = 1000
    sleep: float = 0.0
    methods: tuple[str, ...] = ("hit-or-miss", "quarter-circle")

    def validate(self) -> None:
        super().validate()
        if self.samples < 1:
            raise ConfigError(f"samples: expected an integer >= 1, got {self.samples}")
        if self.sleep < 0:
            raise ConfigError(f"sleep: expected seconds >= 0, got {self.sleep}")
        unknown = set(self.methods) - {"hit-or-miss", "quarter-circle"}
        if unknown:
            raise ConfigError(f"methods: unknown {sorted(unknown)}; "
                              f"allowed: hit-or-miss, quarter-circle")


def trials(cfg: SelftestConfig) -> list[Trial]:
    return [Trial(m, "pi", seed, {"samples": cfg.samples, "sleep": cfg.sleep})
            for m in cfg.methods for seed in range(cfg.seeds)]


def run_trial(trial: Trial, device: str) -> dict[str, float]:
    # The engine's tests make one seed crash (outside the trial's key) to check that a failing
    # trial loses none of the finished ones.
    if os.environ.get("OPTZOO_SELFTEST_FAIL_SEED") == str(trial.seed):
        raise RuntimeError(f"self-test: trial with seed {trial.seed} fails on purpose")
    rng = np.random.default_rng(trial.seed)
    n = int(trial.params["samples"])
    u = rng.random((n, 2))
    if trial.method == "hit-or-miss":
        draws = 4.0 * (u[:, 0] ** 2 + u[:, 1] ** 2 <= 1.0)
    else:
        draws = 4.0 * np.sqrt(1.0 - u[:, 0] ** 2)
    time.sleep(float(trial.params["sleep"]))
    est = float(draws.mean())
    return {"estimate": est, "abs_error": abs(est - math.pi),
            "stderr": float(draws.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf}


def summarize(results: list[Result], cfg: SelftestConfig, outdir: Path) -> Summary:
    from optzoo.report import figures

    table = aggregate(results, by=["method"], metrics=["estimate", "abs_error"],
                      title="Monte Carlo estimates of pi")
    claims, estimates = [], {}
    for method, rs in group(results, lambda r: r.trial.method).items():
        est = [r.metrics["estimate"] for r in rs]
        estimates[method] = est
        zs = [abs(r.metrics["estimate"] - math.pi) / r.metrics["stderr"] for r in rs]
        mean, half = mean_ci(est)
        claims.append(Claim(f"{method} is unbiased: every estimate lies within 5 standard "
                            f"errors of pi", f"largest |z| = {max(zs):.2f}; mean {mean:.4f}",
                            verdicts.bound_holds(zs, 5.0)))
    fig, (ax,) = figures.grid(1, panel=(4.5, 3.2))
    figures.category_panel(ax, estimates, kind="point", hline=math.pi, ylog=False,
                           ylabel="estimate of pi")
    fig_ = figures.save(fig, outdir / "estimates.png",
                        "Mean estimate ± 95 % CI over seeds per method; dashed: pi.")
    return Summary(tables=[table], figures=[fig_], claims=claims,
                   notes=["engine self-test; not a paper"])


REPRODUCTION = Reproduction(
    slug="_selftest",
    presets={"smoke": SelftestConfig(seeds=2, samples=200),
             "quick": SelftestConfig(seeds=3, samples=10_000),
             "full": SelftestConfig(seeds=5, samples=1_000_000)},
    trials=trials, run_trial=run_trial, summarize=summarize,
    description="Monte Carlo estimates of pi: the engine's self-test.",
)
