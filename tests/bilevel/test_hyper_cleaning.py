"""Digits hyper-cleaning: closed-form soft-max derivatives against the autograd defaults, the
label flips, the metrics (AUC against a hand count) and the refit."""

from __future__ import annotations

import pytest
import torch

from optzoo.bilevel import BilevelProblem, Oracle
from optzoo.bilevel.problems.hyper_cleaning import DigitsHyperCleaning


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny matrices: extra threads only add overhead on shared cores."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def problem():
    return DigitsHyperCleaning(n_train=200, n_val=60, seed=3)


@pytest.mark.parametrize("p", [2.0, 3.0, 4.0])
def test_closed_forms_match_autograd(p):
    pr = DigitsHyperCleaning(n_train=120, n_val=40, p=p, seed=1)
    g = torch.Generator().manual_seed(0)
    x = pr.x0() + torch.randn(120, generator=g, dtype=torch.float64)
    y = pr.y0() + 0.1 * torch.randn(650, generator=g, dtype=torch.float64)
    v = torch.randn(650, generator=g, dtype=torch.float64)
    for batch in (None, torch.tensor([3, 7, 50, 99])):
        for mine, ref in ((pr.grad_f(x, y), BilevelProblem.grad_f(pr, x, y)),
                          (pr.grad_g(x, y, batch), BilevelProblem.grad_g(pr, x, y, batch))):
            for a, b in zip(mine, ref, strict=True):
                torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(pr.grad_g_y(x, y, batch),
                                   BilevelProblem.grad_g_y(pr, x, y, batch))
        torch.testing.assert_close(pr.hvp_yy(x, y, v, batch),
                                   BilevelProblem.hvp_yy(pr, x, y, v, batch))
        torch.testing.assert_close(pr.cross_xy(x, y, v, batch),
                                   BilevelProblem.cross_xy(pr, x, y, v, batch))
    upper = torch.tensor([0, 5, 9])
    for a, b in zip(pr.grad_f(x, y, upper), BilevelProblem.grad_f(pr, x, y, upper), strict=True):
        torch.testing.assert_close(a, b)


def test_flipped_labels_and_splits(problem):
    pr = problem
    assert int(pr.noisy.sum()) == 80  # 40 % of 200
    assert bool((pr.t[pr.noisy] != pr.t_clean[pr.noisy]).all())
    assert bool((pr.t[~pr.noisy] == pr.t_clean[~pr.noisy]).all())
    assert pr.Xt.shape[0] == 1797 - 260
    batch = pr.sample("lower", 32, torch.Generator().manual_seed(0))
    assert batch.shape == (32,) and len(set(batch.tolist())) == 32 and int(batch.max()) < 200
    assert pr.sample("upper", None, None) is None


def test_auc_matches_a_pair_count(problem):
    pr = problem
    g = torch.Generator().manual_seed(1)
    lam = torch.randn(200, generator=g, dtype=torch.float64) - 0.8 * pr.noisy.double()
    noisy, clean = -lam[pr.noisy], -lam[~pr.noisy]
    pairs = (noisy[:, None] > clean[None, :]).double().mean()
    assert abs(pr.cleaning_auc(lam) - float(pairs)) < 1e-12
    assert pr.cleaning_auc(-pr.noisy.double()) == 1.0
    assert pr.cleaning_auc(pr.x0()) == 0.5


def test_refit_reaches_a_stationary_point_and_accuracy_is_computable(problem):
    pr = problem
    clean_weights = torch.where(pr.noisy, -8.0, 8.0).double()
    y = pr.refit(clean_weights, iters=150)
    assert float(pr.grad_g_y(clean_weights, y).norm()) < 1e-4
    assert pr.test_accuracy(y) > 0.8


def test_oracle_minibatches_are_unbiased(problem):
    pr = problem
    o = Oracle(pr, batch_size=50, generator=torch.Generator().manual_seed(0))
    x, y = pr.x0(), pr.y0()
    mean = torch.stack([o.grad_g_y(x, y, o.sample("lower")) for _ in range(200)]).mean(0)
    full = pr.grad_g_y(x, y)
    assert float((mean - full).norm()) < 0.15 * float(full.norm())


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="flip"):
        DigitsHyperCleaning(flip=1.2)
    with pytest.raises(ValueError, match="n_train"):
        DigitsHyperCleaning(n_train=1700, n_val=300)
    with pytest.raises(ValueError, match="p"):
        DigitsHyperCleaning(p=1.0)
