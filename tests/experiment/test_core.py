"""The contract types: typed presets, overrides, trial keys, statistics."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optzoo.errors import ConfigError
from optzoo.experiment import Preset, Trial, mean_ci
from optzoo.experiment.selftest import REPRODUCTION, SelftestConfig


@dataclass(frozen=True)
class _Cfg(Preset):
    steps: int = 10
    lr: float = 0.1
    name: str = "a"
    flag: bool = False
    etas: tuple[float, ...] = (1.0, 2.0)


def test_overrides_parse_by_field_type():
    cfg = _Cfg().with_overrides({"steps": "7", "lr": "1e-3", "flag": "true",
                                 "etas": "1.5,2.5,4", "name": "b", "seeds": "5"})
    assert cfg == _Cfg(seeds=5, steps=7, lr=1e-3, name="b", flag=True, etas=(1.5, 2.5, 4.0))


@pytest.mark.parametrize("key,value,needle", [
    ("steps", "1.5", "steps"), ("lr", "fast", "lr"), ("flag", "maybe", "flag"),
    ("etas", "1,x", "etas"), ("lr", "nan", "lr"),
])
def test_ill_typed_override_names_the_field(key, value, needle):
    with pytest.raises(ConfigError, match=needle):
        _Cfg().with_overrides({key: value})


def test_unknown_override_lists_allowed_keys():
    with pytest.raises(ConfigError, match="unknown override key 'stpes'.*steps"):
        _Cfg().with_overrides({"stpes": "3"})


def test_field_types_are_checked_at_construction():
    with pytest.raises(ConfigError, match="steps"):
        _Cfg(steps=1.5)
    with pytest.raises(ConfigError, match="etas"):
        _Cfg(etas=[1.0])  # a list is not a tuple: presets must be hashable and frozen
    with pytest.raises(ConfigError, match="seeds"):
        _Cfg(seeds=0)


def test_validate_hook_rejects_bad_values():
    with pytest.raises(ConfigError, match="samples"):
        SelftestConfig(samples=0)
    with pytest.raises(ConfigError, match="methods"):
        SelftestConfig().with_overrides({"methods": "nope"})


def test_presets_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        REPRODUCTION.presets["smoke"].seeds = 9  # type: ignore[misc]


def test_trial_key_is_stable_and_sensitive():
    t = Trial("m", "p", 3, {"b": 2, "a": [1, 2]})
    same = Trial("m", "p", 3, {"a": [1, 2], "b": 2})
    assert t.key("s") == same.key("s")
    assert t.key("s") != t.key("other")
    assert t.key("s") != Trial("m", "p", 4, {"b": 2, "a": [1, 2]}).key("s")
    assert t.key("s") != Trial("m", "p", 3, {"b": 2.5, "a": [1, 2]}).key("s")
    assert Trial.from_dict(t.to_dict()) == Trial("m", "p", 3, {"a": [1, 2], "b": 2})


def test_mean_ci_matches_student_t_by_hand():
    x = [1.0, 2.0, 3.0, 4.0]
    mean, half = mean_ci(x)
    # t_{0.975, 3} = 3.182446305284263; sd = 1.2909944487358056
    assert mean == 2.5
    assert half == pytest.approx(3.182446305284263 * 1.2909944487358056 / 2.0, rel=1e-12)
    assert math.isnan(mean_ci([5.0])[1])
    with pytest.raises(ValueError, match="values"):
        mean_ci([])


@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=30))
def test_mean_ci_contains_mean_and_is_nonnegative(xs):
    mean, half = mean_ci(xs)
    assert half >= 0
    assert mean == pytest.approx(float(np.mean(xs)), abs=1e-6)
