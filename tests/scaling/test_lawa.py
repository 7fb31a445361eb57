"""LAWA against torch's AveragedModel (a uniform running average) fed the same window, and the
sliding-window semantics."""

from __future__ import annotations

import pytest
import torch
from torch.optim.swa_utils import AveragedModel

from optzoo.scaling.lawa import LAWA, average_state_dicts


def _snapshots(n=6, seed=0):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    snaps = []
    for _ in range(n):
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn_like(p))
        model.train()
        model(torch.randn(5, 3))  # moves BatchNorm's running stats, counts batches
        snaps.append({k: v.clone() for k, v in model.state_dict().items()})
    return model, snaps


@pytest.mark.parametrize("window", [1, 2, 3, 5])
def test_lawa_equals_averaged_model_over_the_window(window):
    model, snaps = _snapshots()
    lawa = LAWA(window)
    for s in snaps:
        lawa.update(s)
    assert len(lawa) == window and lawa.full
    ref = AveragedModel(model, use_buffers=True)  # uniform running average of what it is fed
    for s in snaps[-window:]:
        model.load_state_dict(s)
        ref.update_parameters(model)
    avg = lawa.averaged(model)
    for (k, v), (_, r) in zip(avg.state_dict().items(), ref.module.state_dict().items(),
                              strict=True):
        if v.is_floating_point():
            assert torch.allclose(v, r, atol=1e-6), k
    # integer buffers (num_batches_tracked) come from the newest checkpoint
    assert int(avg.state_dict()["1.num_batches_tracked"]) == len(snaps)


def test_lawa_copies_and_leaves_the_model_alone():
    model, snaps = _snapshots(2)
    lawa = LAWA(2)
    lawa.update(model)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    with torch.no_grad():
        model[0].weight.add_(1.0)  # a later in-place change must not leak into the window
    lawa.update(model)
    avg = lawa.average()
    assert torch.allclose(avg["0.weight"], before["0.weight"] + 0.5)
    out = lawa.averaged(model)
    assert out is not model and torch.equal(model[0].weight, before["0.weight"] + 1.0)


def test_average_state_dicts_errors():
    with pytest.raises(ValueError, match="states"):
        average_state_dicts([])
    with pytest.raises(ValueError, match="states"):
        average_state_dicts([{"a": torch.zeros(2)}, {"b": torch.zeros(2)}])
    with pytest.raises(ValueError, match="states"):
        average_state_dicts([{"a": torch.zeros(2)}, {"a": torch.zeros(3)}])
    with pytest.raises(ValueError, match="window"):
        LAWA(0)
    with pytest.raises(ValueError, match="LAWA"):
        LAWA(2).average()
    with pytest.raises(ValueError, match="model_or_state"):
        LAWA(2).update(3)
