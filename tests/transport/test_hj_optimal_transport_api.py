"""HJOptimalTransport (NCF) and its baseline ICNNOptimalTransport (MM-v1) as scikit-learn
estimators with POT's ``ot.da`` keyword names and sample weights: the tests shared by both are
parametrised over the two."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from optzoo.transport import HJOptimalTransport, ICNNOptimalTransport

KW = {"hidden": 8, "layers": 1, "steps": 15, "batch_size": 32, "seed": 0}
ICNN_KW = {"hidden": 8, "layers": 1, "steps": 10, "inner_steps": 2, "batch_size": 32, "seed": 0}
BOTH = pytest.mark.parametrize("cls,kw", [(HJOptimalTransport, KW),
                                          (ICNNOptimalTransport, ICNN_KW)],
                               ids=["ncf", "icnn"])


def _data(n: int = 64, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 2)), rng.standard_normal((n, 2)) + 3.0


@BOTH
def test_is_a_scikit_learn_estimator_whose_clone_and_params_round_trip(cls, kw):
    est = cls(**kw)
    assert isinstance(est, BaseEstimator) and isinstance(est, TransformerMixin)
    params = est.get_params()
    assert params["hidden"] == 8 and params["steps"] == kw["steps"]
    twin = clone(est)
    assert twin is not est and twin.get_params() == params
    assert twin.set_params(steps=3) is twin and twin.steps == 3 and est.steps == kw["steps"]
    assert "hidden=8" in repr(est)
    with pytest.raises(ValueError, match="Invalid parameter"):
        est.set_params(no_such_knob=1)


def test_ncf_defaults_and_potential_before_fit():
    assert HJOptimalTransport(**KW).get_params()["activation"] == "softplus"
    with pytest.raises(NotFittedError):
        HJOptimalTransport(**KW).potential(np.zeros((2, 2)))


@BOTH
def test_unfitted_use_raises_sklearns_not_fitted_error(cls, kw):
    est = cls(**kw)
    for call in (lambda: est.transform(np.zeros((2, 2))),
                 lambda: est.inverse_transform(np.zeros((2, 2)))):
        with pytest.raises(NotFittedError):
            call()
    xs, xt = _data()
    fitted = est.fit(xs, xt)
    with pytest.raises(NotFittedError):  # a clone is a fresh, unfitted estimator
        clone(fitted).transform(xs)


@BOTH
def test_pot_keyword_names_equal_the_positional_call_and_fit_transform(cls, kw):
    xs, xt = _data()
    pos = cls(**kw).fit(xs, xt)
    named = cls(**kw).fit(Xs=xs, Xt=xt)
    np.testing.assert_array_equal(pos.transform(xs), named.transform(Xs=xs))
    np.testing.assert_array_equal(pos.inverse_transform(xt), named.inverse_transform(Xt=xt))
    np.testing.assert_array_equal(cls(**kw).fit_transform(xs, xt), pos.transform(xs))
    with pytest.raises(ValueError, match="Xs, Xt"):
        cls(**kw).fit(Xs=xs)
    with pytest.raises(ValueError, match="Xs"):
        named.transform()
    with pytest.raises(ValueError, match="Xt"):
        named.inverse_transform()


@BOTH
def test_set_params_is_checked_at_fit(cls, kw):
    xs, xt = _data()
    with pytest.raises(ValueError, match="steps"):
        cls(**kw).set_params(steps=0).fit(xs, xt)
    with pytest.raises(ValueError, match="lr"):
        cls(**kw).set_params(lr=float("nan")).fit(xs, xt)


def test_icnn_refuses_labels():
    xs, xt = _data()
    with pytest.raises(ValueError, match="ys, yt"):
        ICNNOptimalTransport(**ICNN_KW).fit(xs, xt, np.zeros(len(xs)), np.zeros(len(xt)))


@BOTH
def test_works_inside_a_pipeline(cls, kw):
    xs, xt = _data()
    pipe = make_pipeline(FunctionTransformer(), cls(**kw))
    out = pipe.fit(xs, xt).transform(xs)
    assert out.shape == xs.shape and np.isfinite(out).all()


@BOTH
def test_sample_weights_change_the_fit_and_uniform_weights_draw_the_same_measure(cls, kw):
    xs, xt = _data()
    plain = cls(**kw).fit(xs, xt)
    a = np.ones(len(xs))
    uniform = cls(**kw).fit(xs, xt, a=a, b=np.full(len(xt), 5.0))
    assert np.isfinite(uniform.transform(xs)).all()
    # weight only the right half of the source: the fit differs from the unweighted one
    w = (xs[:, 0] > 0).astype(float)
    weighted = cls(**kw).fit(xs, xt, a=w)
    assert not np.allclose(weighted.transform(xs), plain.transform(xs))
    # same seed, same weights: deterministic
    again = cls(**kw).fit(xs, xt, a=w)
    np.testing.assert_array_equal(weighted.transform(xs), again.transform(xs))


def test_zero_weight_points_get_zero_probability_in_the_mmd_minibatches():
    xs, xt = _data()
    a = np.r_[np.zeros(8), np.ones(len(xs) - 8)]
    est = HJOptimalTransport(**KW).fit(xs, xt, a=a)
    ws = est._groups(est._to_z(xs), est._to_z(xt), None, None, a / a.sum(), None)[0][2]
    assert float(ws[:8].sum()) == 0.0 and abs(float(ws.sum()) - 1.0) < 1e-12


@BOTH
def test_bad_weights_name_the_argument(cls, kw):
    xs, xt = _data()
    est = cls(**kw)
    with pytest.raises(ValueError, match="a:"):
        est.fit(xs, xt, a=np.ones(3))
    with pytest.raises(ValueError, match="b:"):
        est.fit(xs, xt, b=-np.ones(len(xt)))
    with pytest.raises(ValueError, match="a:"):
        est.fit(xs, xt, a=np.zeros(len(xs)))


def test_ncf_weights_must_cover_every_class():
    xs, xt = _data()
    est = HJOptimalTransport(**KW)
    ys = (xs[:, 0] > 0).astype(int)
    yt = (xt[:, 0] > 3).astype(int)
    with pytest.raises(ValueError, match="a: every class"):
        est.fit(xs, xt, ys, yt, a=(ys == 0).astype(float))
