"""Baselines (GA, GradDiff, NPO, FT, retrain) and metrics of the unlearning area, against
closed forms, direct computations and scikit-learn / SciPy."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from scipy.spatial.distance import jensenshannon
from sklearn.metrics import roc_auc_score
from torch import nn

from optzoo.unlearning import (
    accuracy,
    capped,
    classification_ce,
    example_losses,
    finetune,
    graddiff,
    gradient_ascent,
    js_divergence,
    kl_divergence,
    loss_mia_auc,
    mia_auc,
    npo,
    npo_loss,
    retrain,
)


def _tiny(seed=0):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 4)).double()
    forget = (torch.randn(6, 3, dtype=torch.float64), torch.randint(0, 4, (6,)))
    retain = (torch.randn(9, 3, dtype=torch.float64), torch.randint(0, 4, (9,)))
    return model, forget, retain


def _manual_step(model, forget, retain, wf, wr, lr):
    m = copy.deepcopy(model)
    total = -wf * classification_ce(m, forget) + wr * classification_ce(m, retain)
    gs = torch.autograd.grad(total, list(m.parameters()))
    with torch.no_grad():
        for p, g in zip(m.parameters(), gs, strict=True):
            p.sub_(lr * g)
    return m


@pytest.mark.parametrize("lam", [0.0, 0.5, 3.0])
def test_graddiff_step_is_descent_on_minus_lf_plus_lambda_lr(lam):
    model, forget, retain = _tiny()
    ref = _manual_step(model, forget, retain, 1.0, lam, 0.1)
    if lam == 0.0:
        gradient_ascent(model, classification_ce, forget, steps=1, lr=0.1)
    else:
        graddiff(model, classification_ce, classification_ce, forget, retain,
                 retain_weight=lam, steps=1, lr=0.1)
    for p, q in zip(model.parameters(), ref.parameters(), strict=True):
        assert torch.allclose(p, q, atol=1e-14)


def test_finetune_step_is_descent_on_retain_loss_and_ga_raises_forget_loss():
    model, forget, retain = _tiny(1)
    ref = _manual_step(model, forget, retain, 0.0, 1.0, 0.2)
    finetune(model, classification_ce, retain, steps=1, lr=0.2)
    for p, q in zip(model.parameters(), ref.parameters(), strict=True):
        assert torch.allclose(p, q, atol=1e-14)
    before = classification_ce(model, forget).item()
    res = gradient_ascent(model, classification_ce, forget, steps=5, lr=0.05)
    assert classification_ce(model, forget).item() > before
    assert res.series("forget_loss")[0] == pytest.approx(before)


def test_max_grad_norm_rescales_the_step():
    model, forget, retain = _tiny(2)
    start = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    graddiff(model, classification_ce, classification_ce, forget, retain, steps=1, lr=0.5,
             max_grad_norm=1e-3)
    end = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    assert float((end - start).norm()) == pytest.approx(0.5e-3, rel=1e-9)


def test_npo_loss_matches_its_formula():
    """Zhang et al. 2024: −(2/β) mean log σ(−β log(π_θ/π_ref))."""
    rng = np.random.default_rng(0)
    lp, lr_ = rng.normal(-2, 1, 8), rng.normal(-2, 1, 8)
    for beta in (0.1, 1.0, 4.0):
        ref = -(2 / beta) * np.mean(np.log(1 / (1 + np.exp(beta * (lp - lr_)))))
        got = npo_loss(torch.tensor(lp), torch.tensor(lr_), beta).item()
        assert got == pytest.approx(ref, rel=1e-12)
    # at π_θ = π_ref the loss is (2/β) log 2 and its gradient is the GA gradient (weight 1)
    x = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    val = npo_loss(x, torch.zeros(3, dtype=torch.float64), 0.5)
    val.backward()
    assert val.item() == pytest.approx(4 * math.log(2))
    assert torch.allclose(x.grad, torch.full((3,), 1 / 3, dtype=torch.float64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_npo_loss_is_finite_for_extreme_log_ratios(dtype):
    x = torch.tensor([-1e4, -50.0, 0.0, 50.0, 1e4], dtype=dtype, requires_grad=True)
    val = npo_loss(x, torch.zeros(5, dtype=dtype), 0.1)
    val.backward()
    assert torch.isfinite(val) and torch.isfinite(x.grad).all()
    assert val.dtype == dtype


def test_npo_lowers_forget_likelihood_and_bad_shapes_are_named():
    model, forget, retain = _tiny(3)
    before = -example_losses(model, forget).mean().item()
    res = npo(model, forget, beta=0.5, steps=5, lr=0.1, retain_loss=classification_ce,
              retain_data=retain, retain_weight=1.0)
    assert -example_losses(model, forget).mean().item() < before
    assert "retain_loss" in res.history[0] and "npo_loss" in res.history[0]
    with pytest.raises(ValueError, match="logp"):
        npo_loss(torch.zeros(3), torch.zeros(4))
    with pytest.raises(ValueError, match="retain_loss"):
        npo(model, forget, retain_weight=1.0)


def test_capped_loss_is_mean_of_clamped_example_losses():
    model, forget, _ = _tiny(4)
    with torch.no_grad():
        ell = F.cross_entropy(model(forget[0]), forget[1], reduction="none")
    cap = float(ell.median())
    assert capped(cap)(model, forget).item() == pytest.approx(ell.clamp(max=cap).mean().item())


def test_mia_auc_matches_sklearn_including_ties():
    rng = np.random.default_rng(1)
    members = np.round(rng.exponential(0.5, 40), 1)  # rounding creates ties
    non = np.round(rng.exponential(1.0, 55), 1)
    labels = np.r_[np.ones(40), np.zeros(55)]
    ref = roc_auc_score(labels, -np.r_[members, non])
    assert mia_auc(members, non) == pytest.approx(ref, abs=1e-12)
    assert mia_auc([0.0, 0.1], [1.0, 2.0]) == 1.0
    assert mia_auc([1.0, 1.0], [1.0]) == 0.5
    with pytest.raises(ValueError, match="member_losses"):
        mia_auc([], [1.0])


def test_loss_mia_auc_uses_per_example_losses():
    model, forget, retain = _tiny(5)
    with torch.no_grad():
        m = F.cross_entropy(model(forget[0]), forget[1], reduction="none").numpy()
        n = F.cross_entropy(model(retain[0]), retain[1], reduction="none").numpy()
    ref = roc_auc_score(np.r_[np.ones(6), np.zeros(9)], -np.r_[m, n])
    assert loss_mia_auc(model, forget, retain) == pytest.approx(ref, abs=1e-12)


def test_kl_and_js_match_direct_computations():
    torch.manual_seed(2)
    a, b = torch.randn(7, 5) * 3, torch.randn(7, 5) * 3
    p, q = F.softmax(a.double(), -1).numpy(), F.softmax(b.double(), -1).numpy()
    kl_ref = np.mean(np.sum(p * np.log(p / q), axis=1))
    assert kl_divergence(a, b) == pytest.approx(kl_ref, rel=1e-10)
    assert kl_divergence(a, a) == pytest.approx(0.0, abs=1e-12)
    js_ref = np.mean(jensenshannon(p, q, axis=1) ** 2)  # natural log: squared distance = JS
    assert js_divergence(a, b) == pytest.approx(js_ref, rel=1e-8)
    with pytest.raises(ValueError, match="logits"):
        kl_divergence(a, b[:, :4])


def test_accuracy_and_retrain_learn_a_separable_problem():
    torch.manual_seed(3)
    x = torch.randn(200, 2)
    y = (x[:, 0] > 0).long()
    res = retrain(lambda: nn.Linear(2, 2), classification_ce, (x, y), steps=300, lr=0.05,
                  seed=0)
    assert accuracy(res.model, x, y) > 0.95
    assert res.series("retain_loss")[-1] < res.series("retain_loss")[0]
    with pytest.raises(ValueError, match="x, y"):
        accuracy(res.model, x, y[:3])
