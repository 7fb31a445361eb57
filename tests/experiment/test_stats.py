"""Helpers every reproduction's summary uses: metric extraction, mean ± CI text, CI tests."""

from __future__ import annotations

import math

from scipy import stats

from optzoo.experiment import Result, Trial
from optzoo.experiment.stats import ci_above, fmt_values, mean_ci, metric_values


def _r(**metrics):
    return Result(trial=Trial(method="m", problem="p", seed=0, params={}), metrics=metrics)


def test_mean_ci_is_the_student_t_interval():
    x = [1.0, 2.0, 4.0, 7.0]
    lo, hi = stats.t.interval(0.95, df=3, loc=sum(x) / 4, scale=stats.sem(x))
    m, h = mean_ci(x)
    assert math.isclose(m, 3.5) and math.isclose(h, (hi - lo) / 2, rel_tol=1e-12)


def test_metric_values_skips_missing_and_none():
    rs = [_r(a=1, b=2), _r(a=None), _r(b=3), _r(a=2.5)]
    assert metric_values(rs, "a") == [1.0, 2.5]
    assert metric_values(rs, "c") == []


def test_fmt_values_and_ci_above():
    assert fmt_values([]) == "—"
    assert fmt_values([2.0]) == "2"
    assert fmt_values([1.0, 2.0, 3.0]).startswith("2 ± 2.5")
    assert ci_above([5.0, 5.1, 4.9], 4.0) and not ci_above([5.0, 5.1, 4.9], 4.95)
    assert not ci_above([10.0], 0.0)  # one value has no interval
