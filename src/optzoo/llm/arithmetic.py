"""Multi-digit addition and multiplication with exact rewards.

Prompt ``"a+b+c="`` (or ``"a*b="``); operands are non-negative integers with a digit count
drawn uniformly from ``digits`` and then uniformly among the numbers of exactly that many digits
(1 digit: 0-9; d > 1 digits: 10^(d-1) .. 10^d - 1); the number of operands is drawn uniformly
from ``operands``.

Two answer formats:

- direct (``steps=False``): the completion is the result in canonical decimal — digits only,
  no sign, no leading zero (``"0357"`` and ``"+357"`` are malformed), e.g. ``"12+345="`` ->
  ``"357"``;
- chain (``steps=True``, the multi-step format of the GN-IVO brief): one ``;``-separated step
  per operator, each ``x<op>y=z`` with canonical numbers, left to right, e.g. ``"12+35+8="`` ->
  ``"12+35=47;47+8=55"``.  The reward looks at the final number only (the brief's sparse
  reward): a completion is correct when it is well-formed and the ``z`` of its last step is the
  result; intermediate steps are checked for form, not value.  Well-formed means every step
  matches ``x<op>y=z`` (any number of steps; whitespace between tokens is allowed, inside a
  number it is not).

Levels (:meth:`~optzoo.llm.tasks.Task.from_level`): addition ``level`` = digits of both
operands (1-6); multiplication: operands of 1, 1-2, 2, 2-3, 3 digits at levels 1-5 (each
operand's digit count drawn from the range).  Both use two operands; pass ``operands`` for more.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from optzoo.llm.tasks import Grade, Problem, Task, check_format_reward, check_range

_NUMBER = r"(?:0|[1-9][0-9]*)"


def _draw_number(rng: np.random.Generator, digits: int) -> int:
    lo = 0 if digits == 1 else 10 ** (digits - 1)
    return int(rng.integers(lo, 10 ** digits))


@dataclass(frozen=True)
class _Arithmetic(Task):
    """Shared logic of :class:`Addition` and :class:`Multiplication`.

    Args:
        digits: digit count of each operand, an int or an inclusive (min, max) range (1-18).
        operands: number of operands, an int or an inclusive range (2-8).
        steps: answer as a chain of steps instead of the bare result.
        format_reward: reward of a well-formed wrong completion, in [0, 1).
    """

    digits: int | tuple[int, int] = 2
    operands: int | tuple[int, int] = 2
    steps: bool = False
    format_reward: float = 0.0

    OP: ClassVar[str] = "+"

    def __post_init__(self):
        object.__setattr__(self, "digits", check_range("digits", self.digits, 1, 18))
        object.__setattr__(self, "operands", check_range("operands", self.operands, 2, 8))
        if not isinstance(self.steps, bool):
            raise ValueError(f"steps: expected a bool, got {self.steps!r}")
        check_format_reward(self.format_reward)

    @staticmethod
    def _apply(values: list[int]) -> int:
        raise NotImplementedError

    def draw(self, rng: np.random.Generator) -> Problem:
        k = int(rng.integers(self.operands[0], self.operands[1] + 1))
        nums = [_draw_number(rng, int(rng.integers(self.digits[0], self.digits[1] + 1)))
                for _ in range(k)]
        prompt = self.OP.join(map(str, nums)) + "="
        if not self.steps:
            return Problem(prompt, str(self._apply(nums)))
        acc, parts = nums[0], []
        for x in nums[1:]:
            nxt = self._apply([acc, x])
            parts.append(f"{acc}{self.OP}{x}={nxt}")
            acc = nxt
        return Problem(prompt, ";".join(parts))

    def parses(self, prompt: str) -> bool:
        op = re.escape(self.OP)
        return re.fullmatch(rf"[0-9]+(?:{op}[0-9]+)+=", prompt) is not None

    def grade(self, prompt: str, completion: str) -> Grade:
        if not self.parses(prompt):
            raise ValueError(f"prompt: expected 'a{self.OP}b{self.OP}...=' with decimal "
                             f"operands, got {prompt!r}")
        target = self._apply([int(x) for x in prompt[:-1].split(self.OP)])
        op = re.escape(self.OP)
        if self.steps:
            step = rf"\s*{_NUMBER}\s*{op}\s*{_NUMBER}\s*=\s*{_NUMBER}\s*"
            if re.fullmatch(rf"{step}(?:;{step})*", completion) is None:
                return Grade.MALFORMED
            final = completion.rsplit("=", 1)[1].strip()
        else:
            if re.fullmatch(_NUMBER, completion) is None:
                return Grade.MALFORMED
            final = completion
        return Grade.CORRECT if int(final) == target else Grade.WELL_FORMED


@dataclass(frozen=True)
class Addition(_Arithmetic):
    """Multi-digit addition ``"a+b(+c...)="`` (module docstring: formats, levels, reward).

    Example:
        >>> from optzoo.llm import Addition
        >>> task = Addition(digits=3)
        >>> task.reward(["12+345="], ["357"]), task.reward(["12+345="], ["0357"])
        ([1.0], [0.0])
        >>> train, test = Addition(digits=2).split(100, 20, seed=0)   # disjoint prompt sets
        >>> len(train), len(test), train[0]
        (100, 20, Problem(prompt='46+12=', answer='58'))
        >>> Addition(digits=1, operands=3, steps=True).reward(["3+9+4="], ["3+9=12;12+4=16"])
        [1.0]
    """

    OP: ClassVar[str] = "+"
    LEVELS: ClassVar[dict[int, dict]] = {d: {"digits": d} for d in range(1, 7)}

    @staticmethod
    def _apply(values: list[int]) -> int:
        return sum(values)


@dataclass(frozen=True)
class Multiplication(_Arithmetic):
    """Multi-digit multiplication ``"a*b(*c...)="`` (module docstring: formats, levels, reward).

    Example:
        >>> Multiplication(digits=2).reward(["12*34="], ["408"])
        [1.0]
    """

    OP: ClassVar[str] = "*"
    LEVELS: ClassVar[dict[int, dict]] = {1: {"digits": 1}, 2: {"digits": (1, 2)},
                                         3: {"digits": 2}, 4: {"digits": (2, 3)},
                                         5: {"digits": 3}}

    @staticmethod
    def _apply(values: list[int]) -> int:
        return math.prod(values)
