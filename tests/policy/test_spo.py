"""SPO: the tracker on a hand-worked sequence, its EMA identity, global normalisation and
prioritised sampling against closed forms."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from optzoo.policy import (
    SPOValueTracker,
    kl_adaptive_rho,
    kl_divergence_proxy,
    sample_prompts,
    spo_advantages,
    spo_sampling_weights,
)


def test_tracker_hand_worked_sequence():
    tr = SPOValueTracker(rho_min=0.875, rho_max=0.96, d_half=0.06)
    # n0 = 4 offline samples, 1 success: N_0 = 1/(1 − 0.875) = 8, a0 = 8·1.5/5, b0 = 8·3.5/5.
    tr.initialize("x", successes=1, trials=4)
    assert tr.alpha_beta("x") == pytest.approx((2.4, 5.6))
    assert float(tr.values(["x"])[0]) == pytest.approx(0.3)
    assert float(tr.n_eff(["x"])[0]) == pytest.approx(8.0)

    # Visit 1: no stored response, D = 0 → ρ = 2^0 = 1, clipped to 0.96; r = 1.
    rho = tr.rho(torch.tensor([0.0], dtype=torch.float64))
    assert float(rho[0]) == pytest.approx(0.96)
    tr.update(["x"], [1.0], rho)
    a1, b1 = 0.96 * 2.4 + 1.0, 0.96 * 5.6
    assert tr.alpha_beta("x") == pytest.approx((a1, b1))
    assert (a1, b1) == pytest.approx((3.304, 5.376))

    # Visit 2: D = 0.006 → ρ = 2^(−0.1) = 0.9330329915368074 (inside the clip range); r = 0.
    # The advantage uses the value from before this reward: 0 − 3.304/8.68.
    v1 = float(tr.values(["x"])[0])
    assert v1 == pytest.approx(3.304 / 8.68)
    rho = tr.rho(torch.tensor([0.006], dtype=torch.float64))
    assert float(rho[0]) == pytest.approx(0.9330329915368074, rel=1e-12)
    tr.update(["x"], [0.0], rho)
    a2, b2 = 0.9330329915368074 * 3.304, 0.9330329915368074 * 5.376 + 1.0
    assert tr.alpha_beta("x") == pytest.approx((a2, b2), rel=1e-12)

    # Visit 3: D = 0.12 → ρ = 2^−2 = 0.25, clipped up to 0.875; r = 1.
    tr.update(["x"], [1.0], tr.rho(torch.tensor([0.12], dtype=torch.float64)))
    assert tr.alpha_beta("x") == pytest.approx((0.875 * a2 + 1.0, 0.875 * b2), rel=1e-12)
    assert tr.visits("x") == 3


def test_uninitialised_prompt_and_no_offline_samples_start_at_half():
    tr = SPOValueTracker()
    tr.initialize("a", successes=0, trials=0)
    assert tr.alpha_beta("a") == (0.5, 0.5)
    assert float(tr.values(["never-seen"])[0]) == 0.5 and "never-seen" in tr


def test_divergence_proxy_and_rho():
    stored = torch.tensor([[-1.0, -2.0, -3.0, -9.0], [-1.0, 0.0, 0.0, 0.0]])
    current = torch.tensor([[-1.5, -2.0, -2.0, 5.0], [-1.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 1, 0], [0, 0, 0, 0]])
    d = kl_divergence_proxy(stored, current, mask)
    torch.testing.assert_close(d, torch.tensor([(0.5 + 0.0 + 1.0) / 3, 0.0]))
    rho = kl_adaptive_rho(torch.tensor([0.0, 0.006, 0.06, 1.0]), 0.06, 0.4, 0.96)
    torch.testing.assert_close(rho, torch.tensor([0.96, 2 ** -0.1, 0.5, 0.4]))


@given(st.floats(0.01, 50), st.floats(0.01, 50), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_update_is_the_ema_with_eta_one_over_rho_n_plus_one(a, b, rho, r):
    tr = SPOValueTracker()
    tr._a["p"], tr._b["p"] = a, b
    v, n = a / (a + b), a + b
    tr.update(["p"], [r], rho)
    eta = 1.0 / (rho * n + 1.0)
    assert float(tr.values(["p"])[0]) == pytest.approx(v + eta * (r - v), rel=1e-9, abs=1e-12)
    assert float(tr.n_eff(["p"])[0]) == pytest.approx(rho * n + 1.0, rel=1e-12)


def test_n_eff_saturates_at_one_over_one_minus_rho_max():
    tr = SPOValueTracker(rho_mode="constant", rho_constant=0.96)
    for i in range(400):
        tr.update(["p"], [float(i % 2)], tr.rho(torch.zeros(1)))
    assert float(tr.n_eff(["p"])[0]) == pytest.approx(25.0, rel=1e-6)


def test_duplicate_keys_are_absorbed_in_order():
    tr = SPOValueTracker()
    tr.update(["x", "x"], [1.0, 0.0], [0.9, 0.8])
    a, b = 0.8 * (0.9 * 0.5 + 1.0), 0.8 * (0.9 * 0.5) + 1.0
    assert tr.alpha_beta("x") == pytest.approx((a, b))


def test_global_normalisation_closed_form():
    r = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    v = np.array([0.3, 0.9, 0.95, 0.1, 0.0])
    adv = spo_advantages(torch.tensor(r), torch.tensor(v)).numpy()
    a = r - v
    np.testing.assert_allclose(adv, (a - a.mean()) / (a.std(ddof=1) + 1e-8), rtol=1e-12)
    same = spo_advantages(torch.full((6,), 0.7, dtype=torch.float32),
                          torch.full((6,), 0.1, dtype=torch.float32))
    assert same.dtype == torch.float32 and float(same.abs().max()) < 1e-6
    assert float(spo_advantages(torch.ones(1), torch.zeros(1))[0]) == 0.0


def test_sampling_weights_and_draws():
    v = torch.tensor([0.0, 0.5, 0.25], dtype=torch.float64)
    w = spo_sampling_weights(v)
    torch.testing.assert_close(w, torch.tensor([0.05, 0.55, math.sqrt(0.1875) + 0.05],
                                               dtype=torch.float64))
    n = torch.tensor([4.0, 4.0, 16.0], dtype=torch.float64)
    torch.testing.assert_close(spo_sampling_weights(v, n, gamma=1.0),
                               torch.tensor([0.05, 0.5 / 4 + 0.05, math.sqrt(0.1875) / 16 + 0.05],
                                            dtype=torch.float64))
    gen = torch.Generator().manual_seed(0)
    picks = sample_prompts(torch.tensor([1.0, 2.0, 5.0, 0.5, 1.5]), 4, generator=gen)
    assert len(set(picks.tolist())) == 4  # no replacement while candidates suffice
    draws = sample_prompts(torch.tensor([1.0, 2.0, 7.0]), 30000, generator=gen)
    freq = torch.bincount(draws, minlength=3).double() / 30000
    torch.testing.assert_close(freq, torch.tensor([0.1, 0.2, 0.7], dtype=torch.float64),
                               atol=0.015, rtol=0)
    uniform = sample_prompts(torch.zeros(4), 40000, generator=gen)
    assert torch.bincount(uniform, minlength=4).min() > 9000


def test_state_dict_round_trip():
    tr = SPOValueTracker(rho_min=0.9)
    tr.initialize("a", 2, 4)
    tr.update(["a", "b"], [1.0, 0.0], [0.95, 0.91])
    tr.store_response("a", (torch.tensor([3, 4]), torch.tensor([-0.5, -1.0])))
    buf = io.BytesIO()
    torch.save(tr.state_dict(), buf)
    buf.seek(0)
    other = SPOValueTracker(rho_min=0.9)
    other.load_state_dict(torch.load(buf, weights_only=False))
    for k in ("a", "b"):
        assert other.alpha_beta(k) == tr.alpha_beta(k) and other.visits(k) == tr.visits(k)
    torch.testing.assert_close(other.stored_response("a")[1], torch.tensor([-0.5, -1.0]))
    with pytest.raises(ValueError, match="config"):
        SPOValueTracker(rho_min=0.8).load_state_dict(tr.state_dict())


def test_bad_inputs_name_the_argument():
    tr = SPOValueTracker()
    with pytest.raises(ValueError, match="rewards"):
        tr.update(["a"], [2.0], 0.9)
    with pytest.raises(ValueError, match="rho"):
        tr.update(["a"], [1.0], [0.9, 0.9])
    with pytest.raises(ValueError, match="rho_min"):
        SPOValueTracker(rho_min=0.97)
    with pytest.raises(ValueError, match="trials"):
        tr.initialize("a", successes=3, trials=2)
    with pytest.raises(ValueError, match="batch_size"):
        sample_prompts(torch.ones(3), 0)
    with pytest.raises(ValueError, match="weights"):
        sample_prompts(torch.tensor([1.0, -1.0]), 1)
    with pytest.raises(ValueError, match="n_eff"):
        spo_sampling_weights(torch.ones(2) * 0.5, gamma=0.5)
