"""Trust-region random search: finds the minimum of a quadratic within its budget, keeps its
radius in bounds, counts evaluations exactly, and maps points to per-module multipliers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optzoo.scaling import Parameterisation
from optzoo.scaling.per_module_search import (
    SEARCH_SPACE,
    per_module_multipliers,
    trust_region_search,
)


def test_search_descends_a_quadratic_and_beats_its_start():
    target = np.array([1.5, -2.0, 0.5])
    calls = []

    def f(x):
        calls.append(x)
        return float(np.sum((x - target) ** 2))

    res = trust_region_search(f, 3, 200, seed=0)
    assert res.evaluations == len(calls) == 200
    assert res.value < 0.05 * f(np.zeros(3))
    assert np.linalg.norm(np.array(res.x) - target) < 0.5
    radii = [r for _, _, r in res.history]
    assert min(radii) >= 0.125 and max(radii) <= 4.0
    # the incumbent's value is the best evaluated value
    assert res.value == min(v for _, v, _ in res.history)


def test_failures_shrink_the_radius_and_nan_is_a_failure():
    res = trust_region_search(lambda x: 0.0 if not np.any(x) else math.nan, 2, 6, seed=1)
    assert res.x == (0.0, 0.0) and res.value == 0.0
    assert [r for _, _, r in res.history] == [1.0, 1.0, 0.5, 0.25, 0.125, 0.125]


def test_multipliers_feed_the_parameterisation():
    x = [0.0] * len(SEARCH_SPACE)
    x[SEARCH_SPACE.index(("hidden", "lr"))] = 1.0
    mults = per_module_multipliers(x)
    assert mults["hidden"]["lr"] == 2.0 and mults["output"]["wd"] == 1.0
    p = Parameterisation("completep", width=64, depth=2, multipliers=mults)
    assert p.lr_scale("hidden") == pytest.approx(2.0 / 2)
    with pytest.raises(ValueError, match="x"):
        per_module_multipliers([0.0])


@pytest.mark.parametrize("kwargs, match", [
    ({"dim": 0}, "dim"), ({"budget": 0}, "budget"), ({"radius": 8.0}, "radius"),
    ({"shrink": 1.5}, "shrink"), ({"x0": [0.0]}, "x0"),
])
def test_errors_name_the_argument(kwargs, match):
    args = {"dim": 2, "budget": 3, **kwargs}
    with pytest.raises(ValueError, match=match):
        trust_region_search(lambda x: 0.0, **args)
