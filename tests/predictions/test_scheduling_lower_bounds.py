"""The lower-bound families reach the paper's bounds; their adversaries stay consistent."""

import math

import numpy as np
import pytest

from optzoo.predictions.scheduling import (
    LPPT,
    SPJF,
    ListScheduling,
    RelatedDoubling,
    RoundRobin,
    Simple,
    eta,
    eta_star,
    informative,
    simulate_machines,
    simulate_sharing,
    spt_total_completion,
    thm41_instance,
    thm51_bound,
    thm51_instance,
    thm51_opt,
    thm61_instance,
    thm61_opt,
)


def test_eta_star_root():
    x = eta_star()
    assert x**4 - 4 * x - 4 == pytest.approx(0.0, abs=1e-9)
    assert x == pytest.approx(1.835, abs=1e-3)


@pytest.mark.parametrize("e", [1.1, 1.5, 1.83])
@pytest.mark.parametrize("alg", [SPJF, RoundRobin])
def test_thm41_forces_eta(e, alg):
    inst = thm41_instance(e, n=200)
    res = simulate_sharing(alg(), inst.predictions, inst.oracle)
    ratio = res.total_completion / spt_total_completion(res.sizes)
    assert ratio >= 0.99 * e  # finite-n tolerance (the bound is asymptotic in n)
    sizes = res.sizes[:-1]
    assert np.all(sizes >= 1 / e - 1e-12) and np.all(sizes <= e + 1e-12)
    assert eta(res.sizes, inst.predictions) <= e + 1e-9
    assert informative(res.sizes, inst.predictions)


def test_thm41_spjf_static_value():
    # beta* n integer: SPJF's ratio is exactly eta up to the tiny job and boundary effects
    e = 1.5
    inst = thm41_instance(e, n=250)  # beta* n = 100
    res = simulate_sharing(SPJF(), inst.predictions, inst.oracle)
    ratio = res.total_completion / spt_total_completion(res.sizes)
    assert ratio == pytest.approx(e, rel=0.01)
    assert ratio < e  # finite n stays below the asymptotic value


@pytest.mark.parametrize("e", [1.05, 1.41, 2.0, 2.83])
@pytest.mark.parametrize("alg", [lambda: Simple(True), lambda: Simple(False), LPPT,
                                 ListScheduling])
def test_thm51_forces_bound(e, alg):
    inst = thm51_instance(e)
    res = simulate_machines(alg(), inst.predictions, inst.oracle, inst.speeds)
    m = inst.speeds.size
    big = res.sizes[:-1].max()
    ratio = res.makespan / thm51_opt(m, big)
    assert ratio >= inst.bound * (1 - 1e-5)
    assert informative(res.sizes, inst.predictions)


def test_thm51_bound_values():
    assert thm51_bound(math.sqrt(2)) == pytest.approx(1.5)
    assert thm51_bound(2.0) == pytest.approx(1.75)
    assert thm51_bound(1.2) == pytest.approx(1 + 0.44 / 2)


@pytest.mark.parametrize("k", [4, 5])
def test_thm61_family(k):
    inst = thm61_instance(k)
    assert inst.speeds.size == {4: 171, 5: 683}[k]
    for alg in (RelatedDoubling(inst.eta), RelatedDoubling(None), ListScheduling(),
                ListScheduling("1/m"), LPPT("1/m")):
        oracle = thm61_instance(k).oracle
        res = simulate_machines(alg, inst.predictions, oracle, inst.speeds)
        assert thm61_opt(res.sizes, inst.speeds) == pytest.approx(1.0)
        assert res.makespan >= inst.bound - 1e-9
        assert eta(res.sizes, inst.predictions) <= inst.eta + 1e-9


def test_family_arguments():
    with pytest.raises(ValueError, match="eta"):
        thm41_instance(1.0, 10)
    with pytest.raises(ValueError, match="n"):
        thm41_instance(1.5, 1)
    with pytest.raises(ValueError, match="k"):
        thm61_instance(1)
    with pytest.raises(ValueError, match="big"):
        thm51_opt(3, 1.0)


def test_thm41_bound_pieces():
    from optzoo.predictions.scheduling import eta_star, thm41_bound

    star = eta_star()
    assert star ** 4 - 4 * star - 4 == pytest.approx(0.0, abs=1e-9)
    assert thm41_bound(1.5) == 1.5 and thm41_bound(star) == pytest.approx(star)
    assert thm41_bound(2.0) == pytest.approx(star)  # λ(η) unknown: the monotone lower bound
    assert thm41_bound(1 + 3 ** 0.5) == 2.0 and thm41_bound(10.0) == 2.0
    with pytest.raises(ValueError, match="eta"):
        thm41_bound(0.5)
