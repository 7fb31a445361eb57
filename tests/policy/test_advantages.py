"""Advantages against hand-worked values and NumPy closed forms."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from optzoo.policy import (
    degenerate_group_fraction,
    grpo_advantages,
    reinforce_advantages,
    rloo_advantages,
)


def test_grpo_group_advantages_hand_worked():
    # Group [1, 0, 0, 0]: mean 1/4, Bessel std sqrt((9/16 + 3/16)/3) = 1/2.
    r = torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0], dtype=torch.float64)
    adv = grpo_advantages(r, 4)
    expected = [0.75 / 0.5001, -0.25 / 0.5001, -0.25 / 0.5001, -0.25 / 0.5001, 0, 0, 0, 0]
    torch.testing.assert_close(adv, torch.tensor(expected, dtype=torch.float64))


@pytest.mark.parametrize("scale", ["group", "batch", "none"])
def test_grpo_advantages_match_numpy(scale):
    rng = np.random.default_rng(0)
    r = rng.normal(size=(5, 6))
    adv = grpo_advantages(torch.tensor(r.reshape(-1)), 6, scale=scale).numpy().reshape(5, 6)
    centred = r - r.mean(1, keepdims=True)
    if scale == "group":
        expected = centred / (r.std(1, ddof=1, keepdims=True) + 1e-4)
    elif scale == "batch":
        expected = centred / (r.std(ddof=1) + 1e-4)
    else:
        expected = centred
    np.testing.assert_allclose(adv, expected, rtol=1e-12)


def test_nan_rewards_are_unscorable():
    r = torch.tensor([1.0, float("nan"), 0.0, 0.0])
    adv = grpo_advantages(r, 4, nan_policy="omit")
    kept = torch.tensor([1.0, 0.0, 0.0])
    expected = (kept - kept.mean()) / (kept.std() + 1e-4)
    torch.testing.assert_close(adv[[0, 2, 3]], expected)
    assert adv[1] == 0.0


def test_rloo_and_reinforce_baselines():
    r = torch.tensor([1.0, 0.0, 0.0, 1.0, 2.0, 0.0], dtype=torch.float64)
    # Leave-one-out within groups of 3: 1 − (0 + 0)/2, 0 − (1 + 0)/2, ...
    torch.testing.assert_close(rloo_advantages(r, 3),
                               torch.tensor([1.0, -0.5, -0.5, 0.0, 1.5, -1.5], dtype=r.dtype))
    torch.testing.assert_close(reinforce_advantages(r, "rloo", 3), rloo_advantages(r, 3))
    torch.testing.assert_close(reinforce_advantages(r, "batch_mean"), r - 2.0 / 3.0)
    torch.testing.assert_close(reinforce_advantages(r, "group_mean", 3),
                               torch.tensor([2 / 3, -1 / 3, -1 / 3, 0.0, 1.0, -1.0],
                                            dtype=r.dtype))
    torch.testing.assert_close(reinforce_advantages(r, "none"), r)
    # RLOO = group-mean advantage × K/(K − 1).
    torch.testing.assert_close(rloo_advantages(r, 3),
                               reinforce_advantages(r, "group_mean", 3) * 1.5)


def test_degenerate_group_fraction():
    r = torch.tensor([1.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    assert float(degenerate_group_fraction(r, 2)) == pytest.approx(2 / 3, rel=1e-6)


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="group_size"):
        grpo_advantages(torch.ones(6), 4)
    with pytest.raises(ValueError, match="scale"):
        grpo_advantages(torch.ones(4), 2, scale="std")
    with pytest.raises(ValueError, match="rewards"):
        grpo_advantages(torch.ones(2, 2), 2)
    with pytest.raises(ValueError, match="group_size"):
        rloo_advantages(torch.ones(4), 1)
    with pytest.raises(ValueError, match="baseline"):
        reinforce_advantages(torch.ones(4), "mean")
