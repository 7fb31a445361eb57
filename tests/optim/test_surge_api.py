"""SURGE's user-facing API (issue 26): ``SurgeLR`` is a real torch ``LRScheduler`` that composes
with ``ChainedScheduler`` / ``SequentialLR`` (the rate is the product of the schedules, checked
against hand computations), resumes bit-identically from ``state_dict``; ``module_targets``
gives the targets of an ``nn.Module`` without vmap/functional_call boilerplate (equal to the
reproduction's hand-written flat network); ``targets_from_log_partition`` has defaults; and
``optzoo.optim`` exports SurgeLR and HAM, with runnable docstring examples."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
import torch
from torch.optim.lr_scheduler import (
    ChainedScheduler,
    CosineAnnealingLR,
    ExponentialLR,
    LinearLR,
    LRScheduler,
    SequentialLR,
)

import optzoo.optim as optim
from optzoo.optim import resurgence, surge
from optzoo.optim.resurgence import (
    module_flat_loss,
    module_targets,
    targets_from_log_partition,
    variational_log_partition,
)
from optzoo.optim.surge import SurgeLR, surge_factor

TARGETS = [0.1, 0.5, 2.0]
LOSSES = [3.0, 2.5, 1.2, 0.9, 0.45, 0.3, 0.12, 0.05, 0.6, 0.2]  # a fed loss sequence


def _cos(t: int, T: int) -> float:
    return (1 + math.cos(math.pi * t / T)) / 2


def _param() -> torch.nn.Parameter:
    return torch.nn.Parameter(torch.tensor([1.0, -2.0], dtype=torch.float64))


def test_surge_lr_is_an_lr_scheduler():
    opt = torch.optim.SGD([_param()], lr=0.1)
    sched = SurgeLR(opt, TARGETS, lam=1.0)
    assert isinstance(sched, LRScheduler)
    assert sched.last_epoch == 0 and sched.get_last_lr() == [0.1] and sched.base_lrs == [0.1]
    for t, loss in enumerate(LOSSES, start=1):
        a = sched.step(torch.tensor(loss, dtype=torch.float64))
        assert a == surge_factor(loss, TARGETS, 1.0) == sched.last_factor
        assert sched.last_epoch == t and sched.last_loss == loss
        assert sched.get_last_lr() == [a * 0.1] == [g["lr"] for g in opt.param_groups]


def test_the_rate_used_by_the_step_is_a_times_base():
    p = _param()
    opt = torch.optim.SGD([p], lr=0.1)
    sched = SurgeLR(opt, TARGETS, lam=2.0)
    p.grad = torch.ones(2, dtype=torch.float64)
    a = sched.step(1.0)  # ζ = 0.5: a = 1 + 2·0.5 = 2
    opt.step()
    assert a == 2.0 and p.detach().tolist() == pytest.approx([1.0 - 0.2, -2.0 - 0.2])


@pytest.mark.parametrize("order", ["cosine_first", "surge_first"])
def test_chained_with_cosine_the_rate_is_the_product(order):
    # The failure: the cosine silently disappeared (lr 0.149 after 5 steps instead of
    # ≈ 0.05·a).  Hand computation: lr_t = 0.1 · (1 + cos(π t/T))/2 · a(L_t).
    T = 10
    p = _param()
    opt = torch.optim.SGD([p], lr=0.1)
    cos = CosineAnnealingLR(opt, T_max=T)
    s = SurgeLR(opt, TARGETS, lam=1.0)
    chain = ChainedScheduler([cos, s] if order == "cosine_first" else [s, cos], optimizer=opt)
    for t, loss in enumerate(LOSSES):
        a = s.observe(loss)
        want = 0.1 * _cos(t, T) * surge_factor(loss, TARGETS, 1.0)
        assert opt.param_groups[0]["lr"] == pytest.approx(want, rel=1e-12, abs=1e-15)
        if t == 5:
            assert opt.param_groups[0]["lr"] == pytest.approx(0.05 * a, rel=1e-12)
        before = p.detach().clone()
        p.grad = torch.ones(2, dtype=torch.float64)
        opt.step()
        assert (before - p.detach()).tolist() == pytest.approx([want, want], rel=1e-10)
        chain.step()
    assert s.last_epoch == len(LOSSES) and cos.last_epoch == len(LOSSES)


def test_without_chaining_surge_before_and_cosine_after_the_step_also_multiply():
    T = 8
    opt = torch.optim.SGD([_param()], lr=0.2)
    cos = CosineAnnealingLR(opt, T_max=T)
    s = SurgeLR(opt, TARGETS, lam=0.5)
    for t, loss in enumerate(LOSSES[:T]):
        s.step(loss)
        want = 0.2 * _cos(t, T) * surge_factor(loss, TARGETS, 0.5)
        assert opt.param_groups[0]["lr"] == pytest.approx(want, rel=1e-12, abs=1e-15)
        opt.step()
        cos.step()


def test_sequential_warmup_then_surge_and_exponential_product():
    # LinearLR warm-up from 0.25 over 4 steps, then SURGE; SURGE observes every step, so
    # lr_t = 0.1 · warm_t · a_t with warm_t = 0.25 + 0.75·t/4 for t < 4, and at the milestone
    # SequentialLR restarts SURGE from the base rate (torch's convention): warm_t = 1 for t ≥ 4.
    opt = torch.optim.SGD([_param()], lr=0.1)
    warm = LinearLR(opt, start_factor=0.25, total_iters=4)
    s = SurgeLR(opt, TARGETS, lam=1.0)
    seq = SequentialLR(opt, [warm, s], milestones=[4])
    for t, loss in enumerate(LOSSES):
        s.observe(loss)
        want = 0.1 * (0.25 + 0.75 * min(t, 4) / 4) * surge_factor(loss, TARGETS, 1.0)
        assert opt.param_groups[0]["lr"] == pytest.approx(want, rel=1e-12)
        opt.step()
        seq.step()
    # and with an exponential decay chained (γᵗ · a_t)
    opt = torch.optim.SGD([_param()], lr=0.1)
    s = SurgeLR(opt, TARGETS, lam=1.0)
    chain = ChainedScheduler([ExponentialLR(opt, gamma=0.9), s])
    for t, loss in enumerate(LOSSES):
        s.observe(loss)
        assert opt.param_groups[0]["lr"] == pytest.approx(
            0.1 * 0.9**t * surge_factor(loss, TARGETS, 1.0), rel=1e-12)
        opt.step()
        chain.step()


def test_per_group_base_rates_and_a_group_added_later():
    a, b, c = _param(), _param(), _param()
    opt = torch.optim.SGD([{"params": [a], "lr": 0.1}, {"params": [b], "lr": 0.01}])
    s = SurgeLR(opt, TARGETS)
    f = s.step(1.0)
    assert s.get_last_lr() == [0.1 * f, 0.01 * f]
    opt.add_param_group({"params": [c], "lr": 0.5})
    f = s.step(3.0)
    assert s.get_last_lr() == pytest.approx([0.1 * f, 0.01 * f, 0.5 * f])


def _run(n_steps: int, chained: bool, resume_at: int | None = None):
    """A small regression trained with SURGE (optionally chained with a cosine); with
    ``resume_at`` the run is checkpointed there and continued by fresh objects."""
    x = torch.linspace(-2, 2, 32, dtype=torch.float64).unsqueeze(1)
    y = torch.sin(2 * x)

    def build():
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(1, 8), torch.nn.Tanh(),
                                    torch.nn.Linear(8, 1)).double()
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        s = SurgeLR(opt, [0.05, 0.2, 0.35], lam=2.0)
        sched = ChainedScheduler([CosineAnnealingLR(opt, T_max=n_steps), s]) if chained else s
        return model, opt, s, sched

    model, opt, s, sched = build()
    lrs = []
    for t in range(n_steps):
        if t == resume_at:
            state = {"model": model.state_dict(), "opt": opt.state_dict(),
                     "sched": sched.state_dict()}
            model, opt, s, sched = build()
            sched.load_state_dict(state["sched"])  # scheduler first, then the optimizer
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["opt"])
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        if chained:
            s.observe(loss)
        else:
            s.step(loss)
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        if chained:
            sched.step()
    return [p.detach().clone() for p in model.parameters()], lrs, s


@pytest.mark.parametrize("chained", [False, True])
def test_state_dict_resume_is_bit_identical(chained):
    ref, lrs_ref, s_ref = _run(12, chained)
    got, lrs, s = _run(12, chained, resume_at=5)
    assert lrs == lrs_ref
    assert all(torch.equal(a, b) for a, b in zip(ref, got, strict=True))
    assert s.last_epoch == s_ref.last_epoch and s.last_factor == s_ref.last_factor
    assert max(lrs_ref) > min(lrs_ref)  # SURGE acted (a_t varied)


def test_bad_input_names_the_argument():
    opt = torch.optim.SGD([_param()], lr=0.1)
    with pytest.raises(ValueError, match="lam"):
        SurgeLR(opt, TARGETS, lam=-1.0)
    with pytest.raises(ValueError, match="targets"):
        SurgeLR(opt, [0.1, float("nan")])
    with pytest.raises(TypeError, match="Optimizer"):
        SurgeLR([_param()], TARGETS)
    s = SurgeLR(opt, TARGETS)
    with pytest.raises(ValueError, match="loss"):
        s.step(torch.ones(3))
    with pytest.raises(TypeError, match="loss"):
        s.step("1.0")


# -- targets for an nn.Module ------------------------------------------------------------------
def _fc_module(theta: torch.Tensor) -> torch.nn.Module:
    """The reproduction's FC (12, 10, 8) net as an nn.Module holding the flat ``theta``."""
    from optzoo.optim.reproduce import resurgence as repro

    layers: list[torch.nn.Module] = []
    for j, (o, i) in enumerate(repro._SHAPES):
        layers.append(torch.nn.Linear(i, o).double())
        if j < len(repro._SHAPES) - 1:
            layers.append(torch.nn.Tanh())
    model = torch.nn.Sequential(*layers)
    torch.nn.utils.vector_to_parameters(theta, model.parameters())
    return model


def test_module_flat_loss_equals_the_hand_written_flat_network():
    from optzoo.optim.reproduce import resurgence as repro

    x, y = repro._fit_data(16)
    theta0 = repro._fit_init(0)
    model = _fc_module(theta0)
    mse = lambda out: torch.nn.functional.mse_loss(out.squeeze(-1), y)  # noqa: E731
    loss, th = module_flat_loss(model, mse, x)
    assert torch.equal(th, theta0)
    batch = theta0 + 0.1 * torch.randn(5, theta0.numel(), dtype=torch.float64,
                                       generator=torch.Generator().manual_seed(0))
    ref = repro._mse(batch, x, y)
    assert torch.allclose(loss(batch), ref, rtol=1e-12, atol=0)
    loop, _ = module_flat_loss(model, mse, x, vectorize=False)
    assert torch.allclose(loop(batch), ref, rtol=1e-12, atol=0)
    # differentiable in the flat vector, model untouched
    b = batch.clone().requires_grad_(True)
    loss(b).sum().backward()
    assert torch.isfinite(b.grad).all() and b.grad.abs().sum() > 0
    assert torch.equal(torch.nn.utils.parameters_to_vector(model.parameters()), theta0)


def test_module_targets_match_the_reproduction_analysis():
    from optzoo.optim.reproduce import resurgence as repro

    n, n_g, steps, samples, ev, wd, nc, tau = 16, 6, 10, 8, 32, 1e-3, 5, 10.0
    seed = 0
    x, y = repro._fit_data(n)
    theta0 = repro._fit_init(seed)
    gs = np.linspace(*repro.VI_GS, n_g)
    mse = lambda out: torch.nn.functional.mse_loss(out.squeeze(-1), y)  # noqa: E731
    got = module_targets(_fc_module(theta0), mse, x, gs=gs, weight_decay=wd, n_coeffs=nc,
                         tau_factor=tau, samples=samples, steps=steps, eval_samples=ev,
                         generator=torch.Generator().manual_seed(6000 + seed))
    ref = repro._fit_analysis(seed, n, n_g, steps, samples, ev, wd, nc, tau)["targets"]
    assert len(got) == len(ref) and got == pytest.approx(list(ref), rel=1e-9)
    # the same pipeline spelled out with the flat loss
    loss, th = module_flat_loss(_fc_module(theta0), mse, x)
    log_z = variational_log_partition(loss, th, gs, weight_decay=wd, samples=samples,
                                      steps=steps, eval_samples=ev,
                                      generator=torch.Generator().manual_seed(6000 + seed))
    l0 = float(loss(th[None])[0])
    assert got == targets_from_log_partition(gs, log_z, l0, n_coeffs=nc, tau_factor=tau)


def test_module_helpers_reject_bad_input():
    model = torch.nn.Linear(2, 1)
    x = torch.randn(4, 2)
    with pytest.raises(TypeError, match="model"):
        module_flat_loss(lambda v: v, lambda out: out.sum(), x)
    with pytest.raises(TypeError, match="loss_fn"):
        module_flat_loss(model, 3.0, x)
    loss, th = module_flat_loss(model, lambda out: out, x)  # not a scalar
    with pytest.raises(ValueError, match="loss_fn"):
        loss(th[None])
    loss, th = module_flat_loss(model, lambda out: out.pow(2).mean(), x)
    with pytest.raises(ValueError, match="theta"):
        loss(th)
    frozen = torch.nn.Linear(2, 1).requires_grad_(False)
    with pytest.raises(ValueError, match="trainable"):
        module_flat_loss(frozen, lambda out: out.sum(), x)


def test_targets_from_log_partition_defaults_and_checks():
    gs = np.linspace(0.005, 0.05, 8)
    z = sum(math.factorial(n) * 2.0**n * gs**n for n in range(6))
    t = targets_from_log_partition(gs, np.log(z), 1.0)
    assert t == targets_from_log_partition(gs, np.log(z), 1.0, n_coeffs=6, tau_factor=10.0)
    assert len(t) == 1 and 0.5 < t[0] < 1.0
    with pytest.raises(ValueError, match="gs"):
        targets_from_log_partition(gs[:4], np.log(z[:4]), 1.0)  # fewer couplings than n_coeffs
    with pytest.raises(ValueError, match="n_coeffs"):
        targets_from_log_partition(gs, np.log(z), 1.0, n_coeffs=1)
    with pytest.raises(ValueError, match="tau_factor"):
        targets_from_log_partition(gs, np.log(z), 1.0, tau_factor=0.0)


# -- exports and docstring examples -------------------------------------------------------------
def test_optim_exports_surge_and_ham_and_documents_them():
    assert optim.SurgeLR is SurgeLR and optim.module_targets is module_targets
    assert {"SurgeLR", "HAM", "module_targets"} <= set(optim.__all__)
    assert ":class:`SurgeLR`" in optim.__doc__ and ":class:`HAM`" in optim.__doc__


@pytest.mark.parametrize("module, names", [
    (surge, ("SurgeLR", "surge_factor")),
    (resurgence, ("module_flat_loss", "module_targets", "targets_from_log_partition")),
    (optim, ("optim",)),
])
def test_docstring_examples_run(module, names):
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    found = [t for t in finder.find(module) if t.name.split(".")[-1] in names and t.examples]
    assert {t.name.split(".")[-1] for t in found} == set(names)
    for t in found:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0


def test_loads_the_earlier_state_dict_format():
    opt = torch.optim.SGD([_param()], lr=0.2)
    s = SurgeLR(opt, [])
    s.load_state_dict({"lam": 1.0, "targets": [0.5], "base_lrs": [0.1], "last_factor": 1.5})
    opt.param_groups[0]["lr"] = 0.15  # what the earlier SurgeLR left in the optimizer
    assert s.step(1.0) == 1.5 and s.get_last_lr() == [pytest.approx(0.15)]
    assert s.step(0.4) == 1.0 and s.get_last_lr() == [pytest.approx(0.1)]
