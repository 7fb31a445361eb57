"""Every optimizer of ``optzoo.optim`` builds a working optimizer from its defaults (issue 26:
``SteepestDescent(params, lr=0.01)`` used to raise because its default ``norm="lp"`` needed
``q``): constructed with only the parameters (plus ``lr`` where it has no default) it takes
steps on a small model that move every parameter and stay finite."""

from __future__ import annotations

import inspect

import pytest
import torch

import optzoo.optim as optim
from optzoo.optim.registry import CASES
from optzoo.optim.steepest_descent import SignSGD, SteepestDescent


def _optimizer_classes() -> dict[str, type[torch.optim.Optimizer]]:
    out = {name: getattr(optim, name) for name in optim.__all__
           if isinstance(getattr(optim, name), type)
           and issubclass(getattr(optim, name), torch.optim.Optimizer)}
    for case in CASES:  # and any registered class that is not exported
        out.setdefault(case.cls.__name__, case.cls)
    return out


CLASSES = _optimizer_classes()


def test_the_table_covers_every_exported_optimizer():
    assert {"SteepestDescent", "SignSGD", "HAM", "O2NC", "ASGO", "DASGO", "Scion"} <= set(CLASSES)
    assert len(CLASSES) >= 11


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_defaults_construct_a_working_optimizer(name):
    cls = CLASSES[name]
    model = _model()
    kwargs = {}
    lr = inspect.signature(cls).parameters.get("lr")
    if lr is not None and lr.default is inspect.Parameter.empty:
        kwargs["lr"] = 0.01
    opt = cls(model.parameters(), **kwargs)
    x = torch.randn(16, 4, generator=torch.Generator().manual_seed(1))
    y = torch.randn(16, 2, generator=torch.Generator().manual_seed(2))
    before = [p.detach().clone() for p in model.parameters()]

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    for _ in range(3):
        loss = opt.step(closure)  # a closure suits the optimizers that need one and the rest
        if loss is not None:
            assert torch.isfinite(loss)
    for b, p in zip(before, model.parameters(), strict=True):
        assert torch.isfinite(p).all()
        assert not torch.equal(b, p.detach()), f"{name}: a parameter did not move"


def test_steepest_descent_defaults_and_the_norm_that_follows_q():
    p = [torch.nn.Parameter(torch.tensor([1.0, -2.0]))]
    opt = SteepestDescent(p, lr=0.01)  # the call
    assert opt.defaults["norm"] == "linf" and opt.defaults["q"] == 1.0
    p[0].grad = torch.tensor([0.5, -3.0])
    opt.step()
    assert p[0].detach().tolist() == pytest.approx([0.99, -1.99])  # sign descent
    assert SteepestDescent(p, q=1.5).defaults["norm"] == "lp"
    assert SteepestDescent(p, q=1.5).defaults["q"] == 1.5
    assert SignSGD(p).defaults == {**SteepestDescent(p).defaults}
    with pytest.raises(ValueError, match="q"):
        SteepestDescent(p, norm="lp")  # an explicit lp still needs q
    # a group that sets only q is an lp group
    a, b = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(2))
    opt = SteepestDescent([{"params": [a]}, {"params": [b], "q": 1.5}], lr=0.1)
    assert [(g["norm"], g["q"]) for g in opt.param_groups] == [("linf", 1.0), ("lp", 1.5)]
    a.grad, b.grad = torch.tensor([4.0, 0.25]), torch.tensor([4.0, 0.25])
    opt.step()
    assert a.detach().tolist() == pytest.approx([0.9, 0.9])
    assert b.detach().tolist() == pytest.approx([1 - 0.1 * 2.0, 1 - 0.1 * 0.5])
