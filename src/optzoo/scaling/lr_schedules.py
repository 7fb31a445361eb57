"""Learning-rate schedules of the training-dynamics study of Catalan-Tatjer et al., "Training
Dynamics Impact Post-Training Quantization Robustness" (ICLR 2026): constant (after warm-up),
cosine to (about) zero, and warmup-stable-decay (WSD) with a linear or 1 − sqrt cooldown.

Every schedule is a multiplier ``f(t)`` of the peak learning rate at optimizer step ``t``
(``torch.optim.lr_scheduler.LambdaLR`` convention: step 0 is the first update), with the formulas
of transformers' ``get_constant_schedule_with_warmup``, ``get_cosine_schedule_with_warmup``
(``min_lr_ratio`` as in ``get_cosine_with_min_lr_schedule_with_warmup``) and
``get_wsd_schedule`` (warm-up ``t / W``; stable 1; decay over ``D`` steps with progress
``p = (t − W − S) / D``: linear ``1 − p``, ``1 − sqrt(p)``, or cosine; then ``min_lr_ratio``).
The tests check them step by step against those functions.

WSD's stable phase equals the constant schedule, so a WSD run of any budget can branch its
cooldown off one constant-lr trunk (:meth:`Schedule.wsd_from`) — how the paper decouples the token
budget from the decay (cooldowns started at different points of one run).

Example:
    >>> import torch
    >>> from optzoo.scaling.lr_schedules import Schedule
    >>> opt = torch.optim.AdamW(torch.nn.Linear(2, 2).parameters(), lr=3e-3)
    >>> sched = Schedule("wsd", total_steps=1000, warmup_steps=50, decay_steps=200)
    >>> lr_sched = sched.scheduler(opt)                  # a LambdaLR
    >>> sched(900), sched.decay_start
    (0.5, 800)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from optzoo.checks import check_int, check_real

__all__ = ["DECAY_SHAPES", "KINDS", "Schedule"]

KINDS = ("constant", "cosine", "wsd")
DECAY_SHAPES = ("linear", "1-sqrt", "cosine")


@dataclass(frozen=True)
class Schedule:
    """A peak-lr multiplier schedule.

    Args:
        kind: ``"constant"``, ``"cosine"`` or ``"wsd"``.
        total_steps: optimizer steps of the run.
        warmup_steps: linear warm-up from 0.
        decay_steps: WSD only: length of the cooldown at the end (default 20 % of the run).
        decay_shape: WSD only: ``"linear"`` (the paper's), ``"1-sqrt"`` or ``"cosine"``.
        min_lr_ratio: the multiplier the decay ends at (cosine and WSD).
    """

    kind: str
    total_steps: int
    warmup_steps: int = 0
    decay_steps: int | None = None
    decay_shape: str = "linear"
    min_lr_ratio: float = 0.0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind: expected one of {KINDS}, got {self.kind!r}")
        check_int("total_steps", self.total_steps, low=1)
        check_int("warmup_steps", self.warmup_steps, low=0)
        if self.warmup_steps >= self.total_steps:
            raise ValueError(f"warmup_steps: expected < total_steps={self.total_steps}, got "
                             f"{self.warmup_steps}")
        if self.decay_shape not in DECAY_SHAPES:
            raise ValueError(f"decay_shape: expected one of {DECAY_SHAPES}, got "
                             f"{self.decay_shape!r}")
        check_real("min_lr_ratio", self.min_lr_ratio, low=0.0, high=1.0)
        if self.decay_steps is not None:
            check_int("decay_steps", self.decay_steps, low=1)
            if self.warmup_steps + self.decay_steps > self.total_steps:
                raise ValueError(f"decay_steps: warmup_steps + decay_steps must be <= "
                                 f"total_steps={self.total_steps}, got {self.decay_steps}")

    @property
    def cooldown(self) -> int:
        """WSD's decay length (0 for the other kinds)."""
        if self.kind != "wsd":
            return 0
        if self.decay_steps is not None:
            return self.decay_steps
        return max(1, round(0.2 * self.total_steps))

    @property
    def decay_start(self) -> int:
        """First step of the decay (``total_steps`` for constant, after warm-up for cosine)."""
        if self.kind == "constant":
            return self.total_steps
        if self.kind == "cosine":
            return self.warmup_steps
        return self.total_steps - self.cooldown

    def __call__(self, step: int) -> float:
        """The multiplier of the peak lr at optimizer step ``step`` (0-based)."""
        check_int("step", step, low=0)
        w = self.warmup_steps
        if step < w:
            return step / max(1, w)
        if self.kind == "constant":
            return 1.0
        r = self.min_lr_ratio
        if self.kind == "cosine":
            p = (step - w) / max(1, self.total_steps - w)
            return max(0.0, r + (1 - r) * 0.5 * (1.0 + math.cos(math.pi * p)))
        start = self.decay_start
        if step < start:
            return 1.0
        if step >= self.total_steps:
            return r
        p = (step - start) / max(1, self.cooldown)
        f = {"linear": 1.0 - p, "1-sqrt": 1.0 - math.sqrt(p),
             "cosine": 0.5 * (1.0 + math.cos(math.pi * p))}[self.decay_shape]
        return max(0.0, f * (1 - r) + r)

    def scheduler(self, optimizer, last_epoch: int = -1):
        """A ``torch.optim.lr_scheduler.LambdaLR`` following this schedule."""
        import torch

        return torch.optim.lr_scheduler.LambdaLR(optimizer, self, last_epoch=last_epoch)

    @classmethod
    def wsd_from(cls, trunk: Schedule, branch_step: int, decay_steps: int, *,
                 decay_shape: str = "linear", min_lr_ratio: float = 0.0) -> Schedule:
        """The WSD schedule whose cooldown starts at ``branch_step`` of a constant ``trunk``
        (same warm-up), so that it equals ``trunk`` on every step before the branch."""
        if not isinstance(trunk, Schedule) or trunk.kind != "constant":
            raise ValueError(f"trunk: expected a constant Schedule, got {trunk!r}")
        check_int("branch_step", branch_step, low=trunk.warmup_steps)
        return cls("wsd", total_steps=branch_step + decay_steps,
                   warmup_steps=trunk.warmup_steps, decay_steps=decay_steps,
                   decay_shape=decay_shape, min_lr_ratio=min_lr_ratio)
