"""LES behind BoTorch's conventions: the descent is scale-free (it works in the unit cube mapped
onto ``bounds``), the unit-cube case is unchanged bit for bit, and q > 1 is refused clearly."""

from __future__ import annotations

from functools import partial

import pytest
import torch
from botorch.optim import optimize_acqf_discrete
from botorch.sampling.pathwise import draw_kernel_feature_paths, draw_matheron_paths

from optzoo.bo.les import (
    LocalEntropySearch,
    adam_descent,
    arc_length_indices,
    draw_descent_sequences,
    make_gp,
)

D = 4
LS = 0.25


def _problem(scale: float, shift: float):
    """The same GP on the unit cube (scale 1, shift 0) or on the box [shift, shift + scale]^D:
    inputs and length-scales mapped by the same affine map, so the posteriors correspond."""
    g = torch.Generator().manual_seed(3)
    U = torch.rand(8, D, generator=g, dtype=torch.float64)
    Y = torch.sin(6 * U).sum(-1, keepdim=True)
    X = shift + scale * U
    model = make_gp(X, Y, noise_std=1e-2, lengthscales=torch.full((D,), LS * scale,
                                                                  dtype=torch.float64))
    bounds = torch.tensor([[shift] * D, [shift + scale] * D], dtype=torch.float64)
    return model, X[Y.argmin()], bounds


def _fraction_moved(scale: float, shift: float) -> float:
    model, x0, bounds = _problem(scale, shift)
    torch.manual_seed(0)
    seq = draw_descent_sequences(model, x0, bounds, num_samples=8, num_points=4,
                                 descent=adam_descent(lr=0.01, steps=100), num_features=256)
    width = bounds[1] - bounds[0]
    moved = ((seq.points[:, -1] - x0) / width).norm(dim=-1)  # distance in box fractions
    return float(moved.mean())


def test_traces_on_a_raw_box_move_the_same_fraction_of_the_box_as_on_the_unit_cube():
    unit = _fraction_moved(1.0, 0.0)
    raw = _fraction_moved(20.0, -10.0)  # the box [-10, 10]^4
    assert unit > 0.05  # the unit-cube traces do travel
    assert 0.7 < raw / unit < 1.4, (unit, raw)


def test_unit_cube_descent_is_bit_identical_to_descending_in_the_model_coordinates():
    model, x0, bounds = _problem(1.0, 0.0)
    torch.manual_seed(1)
    seq = draw_descent_sequences(model, x0, bounds, num_samples=5, num_points=3,
                                 descent=adam_descent(steps=40), num_features=64)
    # the pre-unit-cube computation: Adam directly on the model's inputs
    torch.manual_seed(1)
    paths = draw_matheron_paths(model, torch.Size([5]),
                                prior_sampler=partial(draw_kernel_feature_paths,
                                                      num_features=64))
    start = x0.expand(5, D).clone()
    traj = adam_descent(steps=40)(lambda x: paths(x.unsqueeze(-2)).squeeze(-1), start, bounds)
    idx = arc_length_indices(traj, 3)
    points = traj[idx, torch.arange(5).unsqueeze(-1)]
    assert torch.equal(seq.points, points)
    assert torch.equal(seq.values, paths(points).detach())


def _acqf():
    model, x0, bounds = _problem(1.0, 0.0)
    torch.manual_seed(0)
    return LocalEntropySearch(model, x_start=x0, bounds=bounds, num_samples=4, num_points=3,
                              descent=adam_descent(steps=20), num_features=64)


def test_q_greater_than_one_raises_a_clear_value_error():
    acqf = _acqf()
    assert acqf(torch.rand(3, 1, D, dtype=torch.float64)).shape == (3,)
    with pytest.raises(ValueError, match="q = 1"):
        acqf(torch.rand(3, 2, D, dtype=torch.float64))
    with pytest.raises(ValueError, match="q = 1"):
        optimize_acqf_discrete(acqf, q=2, choices=acqf.candidates)
    with pytest.raises(ValueError, match="X_pending"):
        acqf.set_X_pending(torch.rand(1, D, dtype=torch.float64))
    acqf.set_X_pending(None)  # clearing is fine
    x, _ = optimize_acqf_discrete(acqf, q=1, choices=acqf.candidates)
    assert x.shape == (1, D)


def test_maximize_starts_the_ascent_at_the_best_point_botorch_style():
    model, _, bounds = _problem(1.0, 0.0)
    X, Y = model.train_inputs[0], model.train_targets
    torch.manual_seed(0)
    acqf = LocalEntropySearch(model, x_start=X[Y.argmax()], bounds=bounds, maximize=True,
                              num_samples=4, num_points=3, descent=adam_descent(steps=50),
                              num_features=64)
    seq = acqf.sequences
    assert bool((seq.values[:, -1] >= seq.start_values - 1e-9).all())  # ascended
