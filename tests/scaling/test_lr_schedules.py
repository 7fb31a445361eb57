"""optzoo's schedules step by step against transformers' schedule functions, and the WSD branch
identity (a WSD run equals the constant trunk before its cooldown)."""

from __future__ import annotations

import pytest
import torch
from transformers import (
    get_constant_schedule_with_warmup,
    get_cosine_schedule_with_warmup,
    get_wsd_schedule,
)

from optzoo.scaling.lr_schedules import Schedule


def _factors(make, steps):
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = make(opt)
    out = []
    for _ in range(steps):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return out


@pytest.mark.parametrize("total, warm", [(100, 10), (37, 0), (50, 5)])
def test_constant_and_cosine_match_transformers(total, warm):
    ref = _factors(lambda o: get_constant_schedule_with_warmup(o, warm), total)
    assert [Schedule("constant", total, warm)(t) for t in range(total)] == pytest.approx(ref)
    ref = _factors(lambda o: get_cosine_schedule_with_warmup(o, warm, total), total)
    assert [Schedule("cosine", total, warm)(t) for t in range(total)] == pytest.approx(ref)


@pytest.mark.parametrize("shape", ["linear", "1-sqrt", "cosine"])
@pytest.mark.parametrize("min_ratio", [0.0, 0.1])
def test_wsd_matches_transformers(shape, min_ratio):
    total, warm, decay = 120, 6, 24
    ref = _factors(lambda o: get_wsd_schedule(o, warm, decay, num_training_steps=total,
                                              decay_type=shape, min_lr_ratio=min_ratio),
                   total + 3)
    ours = Schedule("wsd", total, warm, decay, shape, min_ratio)
    # transformers scales the warm-up into [min_lr_ratio, 1]; with 0 they coincide everywhere
    start = 0 if min_ratio == 0 else warm
    got = [ours(t) for t in range(total + 3)]
    assert got[start:] == pytest.approx(ref[start:])
    assert ours.decay_start == total - decay


def test_wsd_default_cooldown_and_branch_identity():
    s = Schedule("wsd", 200, 10)
    assert s.cooldown == 40 and s.decay_start == 160
    trunk = Schedule("constant", 1000, 10)
    b = Schedule.wsd_from(trunk, 300, 75)
    assert [b(t) for t in range(300)] == [trunk(t) for t in range(300)]
    assert b(300) == 1.0 and b(337) < 1.0 and b(375) == 0.0 and b.total_steps == 375


def test_scheduler_drives_an_optimizer():
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.5)
    sched = Schedule("wsd", 10, 2, 4).scheduler(opt)
    lrs = []
    for _ in range(10):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs == pytest.approx([0.0, 0.25, 0.5, 0.5, 0.5, 0.5, 0.5, 0.375, 0.25, 0.125])


def test_bad_schedules():
    with pytest.raises(ValueError, match="kind"):
        Schedule("step", 10)
    with pytest.raises(ValueError, match="warmup_steps"):
        Schedule("constant", 10, 10)
    with pytest.raises(ValueError, match="decay_steps"):
        Schedule("wsd", 10, 5, 6)
    with pytest.raises(ValueError, match="decay_shape"):
        Schedule("wsd", 10, 0, 5, "exp")
    with pytest.raises(ValueError, match="trunk"):
        Schedule.wsd_from(Schedule("cosine", 10), 5, 5)
    with pytest.raises(ValueError, match="step"):
        Schedule("constant", 10)(-1)
