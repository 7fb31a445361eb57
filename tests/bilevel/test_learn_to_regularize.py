"""Learn-to-regularise on digits: closed-form derivatives and dense Hessian against autograd,
the lower solution against scikit-learn's LogisticRegression, the hyper-gradient against the
implicit formula with autograd second derivatives and against finite differences of Φ,
minibatches and test metrics (against sklearn.metrics)."""

from __future__ import annotations

import math

import pytest
import torch

from optzoo.bilevel import BilevelProblem, Oracle
from optzoo.bilevel.f2sa import F2SA
from optzoo.bilevel.problems.learn_to_regularize import LearnToRegularize


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny tensors: intra-op threads only add synchronisation (50× slower on a busy machine)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def prob():
    return LearnToRegularize(120, 100, w0=-3.0, split_seed=1)


def _point(prob, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = prob.x0() + 0.5 * torch.randn(64, generator=g, dtype=torch.float64)
    y = 0.3 * torch.randn(640, generator=g, dtype=torch.float64)
    v = torch.randn(640, generator=g, dtype=torch.float64)
    return x, y, v


@pytest.mark.parametrize("batched", [False, True])
def test_closed_form_derivatives_equal_autograd(prob, batched):
    x, y, v = _point(prob)
    batch = prob.sample("lower", 17, torch.Generator().manual_seed(3)) if batched else None
    ubatch = prob.sample("upper", 9, torch.Generator().manual_seed(4)) if batched else None
    for a, b in zip(prob.grad_f(x, y, ubatch), BilevelProblem.grad_f(prob, x, y, ubatch),
                    strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-14)
    for a, b in zip(prob.grad_g(x, y, batch), BilevelProblem.grad_g(prob, x, y, batch),
                    strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(prob.grad_g_y(x, y, batch),
                               BilevelProblem.grad_g_y(prob, x, y, batch), rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(prob.hvp_yy(x, y, v, batch),
                               BilevelProblem.hvp_yy(prob, x, y, v, batch), rtol=1e-12,
                               atol=1e-14)
    torch.testing.assert_close(prob.cross_xy(x, y, v, batch),
                               BilevelProblem.cross_xy(prob, x, y, v, batch), rtol=1e-12,
                               atol=1e-14)


def test_dense_hessian_and_hypergradient_equal_autograd(prob):
    x, y, v = _point(prob, 1)
    H = prob.hessian_yy(x, y)
    torch.testing.assert_close(H, torch.func.hessian(lambda yy: prob.g(x, yy))(y), rtol=1e-12,
                               atol=1e-14)
    torch.testing.assert_close(H @ v, prob.hvp_yy(x, y, v), rtol=1e-12, atol=1e-13)
    # the implicit formula with the autograd Hessian and autograd cross product at y*(x)
    ys = prob.lower_solution(x)
    H = torch.func.hessian(lambda yy: prob.g(x, yy))(ys)
    _, fy = BilevelProblem.grad_f(prob, x, ys)
    generic = -BilevelProblem.cross_xy(prob, x, ys, torch.linalg.solve(H, fy))
    torch.testing.assert_close(prob.hypergradient(x), generic, rtol=1e-9, atol=1e-12)


def test_lower_solution_equals_sklearn_logistic_regression(prob):
    from sklearn.linear_model import LogisticRegression

    w = -2.5
    x = torch.full((64,), w, dtype=torch.float64)
    theta = prob.lower_solution(x).reshape(64, 10)
    X, t, _ = prob.train
    # mean CE + ½e^w‖θ‖²  ⇔  C·Σ CE + ½‖θ‖² with C = 1/(n e^w)
    clf = LogisticRegression(C=1.0 / (X.shape[0] * math.exp(w)), fit_intercept=False,
                             solver="newton-cg", tol=1e-12, max_iter=1000)
    clf.fit(X.numpy(), t.numpy())
    torch.testing.assert_close(theta, torch.as_tensor(clf.coef_.T), rtol=1e-7, atol=1e-8)


def test_hypergradient_matches_finite_differences_of_phi(prob):
    x, _, _ = _point(prob, 2)
    grad = prob.hypergradient(x)
    d = torch.randn(64, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    h = 1e-5
    y = prob.lower_solution(x)
    fd = (prob.phi(x + h * d, y) - prob.phi(x - h * d, y)) / (2 * h)
    assert abs(float(grad @ d) - fd) < 1e-6 * max(1.0, abs(fd))


def test_minibatches_and_test_metrics(prob):
    g1, g2 = torch.Generator().manual_seed(0), torch.Generator().manual_seed(0)
    b = prob.sample("lower", 32, g1)
    assert b.shape == (32,) and int(b.max()) < 120 and int(b.min()) >= 0
    assert torch.equal(b, prob.sample("lower", 32, g2))
    assert int(prob.sample("upper", 500, g1).max()) < 100
    assert prob.sample("lower", None, g1) is None
    from sklearn.metrics import accuracy_score, log_loss

    y = prob.y0()
    loss, acc = prob.test_metrics(y)
    X, t, _ = prob.test
    probs = torch.softmax(X @ y.reshape(64, 10), dim=1).numpy()
    assert abs(loss - log_loss(t.numpy(), probs, labels=list(range(10)))) < 1e-10
    assert abs(acc - accuracy_score(t.numpy(), probs.argmax(1))) < 1e-12
    assert len(prob.train[1]) + len(prob.val[1]) + len(prob.test[1]) == 1797


def test_f2sa_lowers_the_validation_loss(prob):
    o = Oracle(prob, batch_size=30, generator=torch.Generator().manual_seed(0))
    solver = F2SA(o, p=2, nu=0.1, lr=0.1, inner_lr=0.5, inner_steps=5, upper_x_grad=False,
                  average_warm_start=True, shared_batches=False, y0=prob.y0())
    start = prob.phi(prob.x0(), prob.y0())
    solver.run(steps=40)
    assert prob.phi(solver.x, solver.y) < start - 0.05


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="n_train"):
        LearnToRegularize(5, 100)
    with pytest.raises(ValueError, match="n_train, n_val"):
        LearnToRegularize(1000, 1000)
