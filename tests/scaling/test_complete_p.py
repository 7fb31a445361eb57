"""Complete(d)P's parameterisation: the table of the module docstring entry by entry against
hand-computed factors, the four parameterisations agreeing at the base shape, the coordinate
check (update sizes independent of width and depth under CompleteP, growing with width under
SP), the inferred batch / duration rules, and errors."""

from __future__ import annotations

import math

import pytest
import torch
from torch.nn import functional as F

from optzoo.scaling import (
    AdamWHyperparameters,
    GaussianMixture,
    Parameterisation,
    ResidualMLP,
    coordinate_check,
    param_groups,
    scale_batch,
    scale_duration,
)

HP = AdamWHyperparameters(lr=0.01, weight_decay=0.1, eps=1e-8)


def _groups(param):
    model = ResidualMLP(8, 5, param)
    return model, {g["kind"]: g for g in param_groups(model.named_parameters(), model.kind_of,
                                                      param, HP)}


def test_completep_groups_follow_the_reference_table():
    """Width ×4 (m_N = 4), depth ×4 (m_L = 4), α = 1: hidden lr η/m_N·m_L^0, wd λ·m_N,
    ε·m_N⁻¹·m_L⁻¹ everywhere, branch 1/m_L, output input ×1/m_N."""
    p = Parameterisation("completep", width=128, depth=8, base_width=32, base_depth=2)
    model, g = _groups(p)
    assert g["hidden"]["lr"] == pytest.approx(0.01 / 4)
    assert g["hidden"]["weight_decay"] == pytest.approx(0.1 * 4)
    for kind in ("hidden_bias", "hidden_norm"):
        assert g[kind]["lr"] == pytest.approx(0.01) and g[kind]["weight_decay"] == 0.0
    assert g["input"]["lr"] == g["output"]["lr"] == g["final_norm"]["lr"] == pytest.approx(0.01)
    assert g["input"]["weight_decay"] == g["output"]["weight_decay"] == pytest.approx(0.1)
    assert g["final_norm"]["weight_decay"] == 0.0
    for grp in g.values():
        assert grp["eps"] == pytest.approx(1e-8 / 16)
    assert model.branch == pytest.approx(1 / 4) and model.out_scale == pytest.approx(1 / 4)
    # every parameter in exactly one group
    n_grouped = sum(sum(p.numel() for p in grp["params"]) for grp in g.values())
    assert n_grouped == sum(p.numel() for p in model.parameters())
    # init: hidden std 1/sqrt(fan-in at width 128), output std 1/sqrt(base width)
    w = model.blocks[0].fc_in.weight
    assert w.std().item() == pytest.approx(1 / math.sqrt(128), rel=0.05)
    assert model.head.weight.std().item() == pytest.approx(1 / math.sqrt(32), rel=0.15)


def test_depth_mup_and_mup_factors():
    p = Parameterisation("depth-mup", width=64, depth=8, base_width=32, base_depth=2)
    _, g = _groups(p)
    assert g["hidden"]["lr"] == pytest.approx(0.01 / 2 * 4 ** -0.5)
    assert g["hidden_norm"]["lr"] == pytest.approx(0.01 * 4 ** -0.5)
    assert g["input"]["eps"] == pytest.approx(1e-8 / 2 / 2)
    assert ResidualMLP(8, 5, p).branch == pytest.approx(0.5)
    m = Parameterisation("mup", width=64, depth=8, base_width=32, base_depth=2)
    _, g = _groups(m)
    assert g["hidden"]["lr"] == pytest.approx(0.005) and g["hidden_norm"]["lr"] == 0.01
    assert g["hidden"]["weight_decay"] == pytest.approx(0.1)  # the reference's μP branch
    assert g["hidden"]["eps"] == pytest.approx(1e-8)
    assert ResidualMLP(8, 5, m).branch == 1.0


def test_sp_is_one_global_setting():
    p = Parameterisation("sp", width=256, depth=8, base_width=32, base_depth=2)
    model, g = _groups(p)
    assert {grp["lr"] for grp in g.values()} == {0.01}
    assert {grp["eps"] for grp in g.values()} == {1e-8}
    assert model.branch == 1.0 and model.out_scale == 1.0
    assert model.head.weight.std().item() == pytest.approx(1 / math.sqrt(256), rel=0.15)


def test_all_parameterisations_coincide_at_the_base_shape():
    """Tuned at the base shape, every parameterisation is the same model and optimizer: they
    differ only in how they extrapolate."""
    states, groups = [], []
    for name in ("sp", "mup", "depth-mup", "completep"):
        p = Parameterisation(name, width=32, depth=2, base_width=32, base_depth=2)
        torch.manual_seed(0)
        model = ResidualMLP(8, 5, p)
        states.append(torch.cat([t.detach().flatten() for t in model.parameters()]))
        groups.append(sorted((grp["kind"], grp["lr"], grp["weight_decay"], grp["eps"])
                             for grp in param_groups(model.named_parameters(), model.kind_of,
                                                     p, HP)))
    for s, g in zip(states[1:], groups[1:], strict=True):
        assert torch.equal(s, states[0]) and g == groups[0]


def test_per_module_multipliers_scale_their_entries_only():
    base = Parameterisation("completep", width=64, depth=4)
    mult = Parameterisation("completep", width=64, depth=4,
                            multipliers={"hidden": {"lr": 2.0, "wd": 0.5}, "output": {"eps": 3}})
    _, g0 = _groups(base)
    _, g1 = _groups(mult)
    assert g1["hidden"]["lr"] == pytest.approx(2 * g0["hidden"]["lr"])
    assert g1["hidden"]["weight_decay"] == pytest.approx(0.5 * g0["hidden"]["weight_decay"])
    assert g1["output"]["eps"] == pytest.approx(3 * g0["output"]["eps"])
    assert g1["input"] == {**g0["input"], "params": g1["input"]["params"]}
    assert mult.at(width=256).multipliers == mult.multipliers


def test_coordinate_check_completep_is_shape_free_and_sp_is_not():
    """3 AdamW steps: the RMS change of the last block's residual stream stays within 35 % across
    4× width and 4× depth under CompleteP; under SP it grows by more than 2× with 4× width, and
    under μP (no depth rule) by more than 2× with 4× depth."""
    task = GaussianMixture(dim=16, classes=5)
    hp = AdamWHyperparameters(lr=2 ** -6)
    shapes = ((32, 2), (128, 2), (32, 8))

    def run(name):
        params = [Parameterisation(name, width=w, depth=d) for w, d in shapes]
        rows = coordinate_check(lambda p: ResidualMLP(16, 5, p), params, hp,
                                lambda g: task.batch(32, g), F.cross_entropy, steps=3)
        return [r["delta_rms_last"] for r in rows]

    base, wide, deep = run("completep")
    assert abs(wide / base - 1) < 0.35 and abs(deep / base - 1) < 0.35
    sp_base, sp_wide, _ = run("sp")
    assert sp_wide / sp_base > 2.0
    mup_base, mup_wide, mup_deep = run("mup")
    assert abs(mup_wide / mup_base - 1) < 0.35 and mup_deep / mup_base > 2.0


def test_batch_rule_is_the_square_root_sde_rule():
    hp = AdamWHyperparameters(lr=1e-3, weight_decay=0.1, beta1=0.9, beta2=0.99, eps=1e-8)
    s = scale_batch(hp, 4.0)
    assert s.lr == pytest.approx(2e-3) and s.weight_decay == pytest.approx(0.2)
    assert s.beta1 == pytest.approx(0.6) and s.beta2 == pytest.approx(0.96)
    assert s.eps == pytest.approx(5e-9)
    # per-sample decay: lr·wd per step × steps (∝ 1/κ) is κ·(η λ)/κ = unchanged per sample
    assert s.lr * s.weight_decay / 4 == pytest.approx(hp.lr * hp.weight_decay)
    assert scale_batch(hp, 4.0, rule="none") == hp
    with pytest.raises(ValueError, match="kappa"):
        scale_batch(hp, 20.0)  # (1 − 0.9)·20 = 2 > 1


def test_duration_rule_divides_weight_decay():
    hp = AdamWHyperparameters(lr=1e-3, weight_decay=0.4)
    assert scale_duration(hp, 4).weight_decay == pytest.approx(0.1)
    assert scale_duration(hp, 4, rule="none") == hp
    with pytest.raises(ValueError, match="tau"):
        scale_duration(hp, 0)


@pytest.mark.parametrize("make, match", [
    (lambda: Parameterisation("ntk"), "name"),
    (lambda: Parameterisation(width=0), "width"),
    (lambda: Parameterisation(multipliers={"embed": {"lr": 2}}), "kind"),
    (lambda: Parameterisation(multipliers={"hidden": {"momentum": 2}}), "key"),
    (lambda: Parameterisation(multipliers={"hidden": {"lr": -1}}), "lr"),
    (lambda: AdamWHyperparameters(lr=0), "lr"),
    (lambda: AdamWHyperparameters(beta1=1.0), "beta1"),
    (lambda: AdamWHyperparameters(weight_decay=float("nan")), "weight_decay"),
    (lambda: ResidualMLP(0, 5, Parameterisation()), "d_in"),
    (lambda: GaussianMixture(classes=1), "classes"),
    (lambda: scale_batch(HP, 2.0, rule="linear"), "rule"),
])
def test_errors_name_the_argument(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_kind_of_rejects_unknown_parameters():
    with pytest.raises(ValueError, match="unknown parameter"):
        ResidualMLP.kind_of("encoder.weight")
    with pytest.raises(TypeError, match="param"):
        ResidualMLP(8, 5, "completep")
