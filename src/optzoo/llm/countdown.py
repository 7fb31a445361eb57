"""A countdown-style arithmetic puzzle: reach a target from given numbers with + - * /.

Prompt ``"3,7,25:46="``: the given numbers, a colon, the target.  The rules are those of the
Countdown numbers game:

- each given number is used at most once (``use_all=True``, the default and the TinyZero
  convention: exactly once);
- every intermediate result must be a positive integer: subtraction only when the result is
  > 0, division only when it is exact (no remainder; division by zero never applies since 0 is
  never available);
- the final result must equal the target.

(TinyZero's Countdown evaluates the expression over the rationals, so ``(7/2)*4`` would pass
there and fails here.)

Answer formats (``answer_format``):

- ``"steps"`` (default): ``;``-separated steps ``a<op>b=c``, each using two available numbers
  (given ones or earlier results, each once) and writing the true result,
  e.g. ``"7*3=21;25+21=46"``;
- ``"expression"``: one infix expression with ``+ - * /`` and parentheses, usual precedence,
  left-associative, e.g. ``"25+7*3"``; no unary minus.

Numbers must be canonical decimals (no leading zero).  Whitespace between tokens is allowed
(general-purpose models write ``"25 + 7 * 3"``), inside a number it is not.  Well-formed (for
``format_reward``) means syntactically valid; any rule broken or a wrong value makes it
incorrect.

Problems are generated backwards: ``count`` numbers uniform in 1..``max_number``, combined in a
random order with random legal operations (larger operand first; division by 1 is not drawn)
until one number remains, which becomes the target; targets above ``max_target`` or equal to a
given number are redrawn.  That construction is the demonstration.  Levels
(:meth:`~optzoo.llm.tasks.Task.from_level`): 1: two numbers <= 10; 2: three <= 10;
3: three <= 25; 4: four <= 25; 5: four <= 100.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from optzoo.llm.tasks import Grade, Problem, Task, check_format_reward, check_range

_N = r"(?:0|[1-9][0-9]*)"
_STEP = re.compile(rf"\s*({_N})\s*([-+*/])\s*({_N})\s*=\s*({_N})\s*")
_PROMPT = re.compile(r"([0-9]+(?:,[0-9]+)*):([0-9]+)=")
_TOKEN = re.compile(r"\s*(?:([0-9]+)|([-+*/()]))")
_PREC = {"+": 1, "-": 1, "*": 2, "/": 2}


def apply(a: int, op: str, b: int) -> int | None:
    """``a op b`` under the Countdown rules, or None when the operation is not allowed."""
    if op == "+":
        return a + b
    if op == "*":
        return a * b
    if op == "-":
        return a - b if a > b else None
    if op == "/":
        return a // b if b > 0 and a % b == 0 else None
    raise ValueError(f"op: expected one of + - * /, got {op!r}")


class _SyntaxError(Exception):
    pass


class _Parser:
    """Recursive descent over ``expr := term (('+'|'-') term)*``, ``term := factor
    (('*'|'/') factor)*``, ``factor := number | '(' expr ')'``; values are None once a rule is
    broken (parsing continues so syntax errors are still told apart)."""

    def __init__(self, text: str):
        self.tokens: list[str] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                if text[pos:].strip() == "":
                    break
                raise _SyntaxError(text[pos:])
            self.tokens.append(m.group(1) or m.group(2))
            pos = m.end()
        self.i = 0
        self.leaves: list[int] = []

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise _SyntaxError("unexpected end")
        self.i += 1
        return tok

    def parse(self) -> int | None:
        value = self.expr()
        if self.peek() is not None:
            raise _SyntaxError(self.peek())
        return value

    def expr(self) -> int | None:
        value = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            right = self.term()
            value = None if value is None or right is None else apply(value, op, right)
        return value

    def term(self) -> int | None:
        value = self.factor()
        while self.peek() in ("*", "/"):
            op = self.take()
            right = self.factor()
            value = None if value is None or right is None else apply(value, op, right)
        return value

    def factor(self) -> int | None:
        tok = self.take()
        if tok == "(":
            value = self.expr()
            if self.take() != ")":
                raise _SyntaxError("missing )")
            return value
        if not tok.isdigit() or re.fullmatch(_N, tok) is None:
            raise _SyntaxError(tok)
        self.leaves.append(int(tok))
        return int(tok)


def _uses(numbers: Counter, used: list[int], use_all: bool) -> bool:
    need = Counter(used)
    if any(need[k] > numbers[k] for k in need):
        return False
    return not use_all or need == numbers


@dataclass(frozen=True)
class Countdown(Task):
    """Countdown numbers puzzle (module docstring: rules, formats, levels).

    Args:
        count: how many numbers are given, an int or an inclusive range (2-6).
        max_number: the given numbers are drawn from 1..max_number (>= 2).
        max_target: targets above it are redrawn.
        use_all: every given number must be used exactly once (else at most once).
        answer_format: ``"steps"`` or ``"expression"``.
        format_reward: reward of a well-formed wrong completion, in [0, 1).

    Example:
        >>> task = Countdown()
        >>> task.reward(["3,7,25:46="] * 3, ["7*3=21;25+21=46", "25+7*3", "7/2=3;25+3=28"])
        [1.0, 0.0, 0.0]
        >>> Countdown(answer_format="expression").reward(["3,7,25:46="], ["25+7*3"])
        [1.0]
    """

    count: int | tuple[int, int] = 3
    max_number: int = 10
    max_target: int = 999
    use_all: bool = True
    answer_format: str = "steps"
    format_reward: float = 0.0

    LEVELS: ClassVar[dict[int, dict]] = {
        1: {"count": 2, "max_number": 10}, 2: {"count": 3, "max_number": 10},
        3: {"count": 3, "max_number": 25}, 4: {"count": 4, "max_number": 25},
        5: {"count": 4, "max_number": 100}}

    def __post_init__(self):
        object.__setattr__(self, "count", check_range("count", self.count, 2, 6))
        for name in ("max_number", "max_target"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 2:
                raise ValueError(f"{name}: expected an integer >= 2, got {v!r}")
        if not isinstance(self.use_all, bool):
            raise ValueError(f"use_all: expected a bool, got {self.use_all!r}")
        if self.answer_format not in ("steps", "expression"):
            raise ValueError(f"answer_format: expected 'steps' or 'expression', got "
                             f"{self.answer_format!r}")
        check_format_reward(self.format_reward)

    def draw(self, rng: np.random.Generator) -> Problem:
        for _ in range(10_000):
            k = int(rng.integers(self.count[0], self.count[1] + 1))
            nums = [int(x) for x in rng.integers(1, self.max_number + 1, size=k)]
            # pool entries: (value, expression text, precedence of its top operator)
            pool = [(x, str(x), 3) for x in nums]
            steps = []
            while len(pool) > 1:
                i, j = (int(x) for x in rng.choice(len(pool), size=2, replace=False))
                (a, ta, pa), (b, tb, pb) = pool[i], pool[j]
                if a < b:
                    (a, ta, pa), (b, tb, pb) = (b, tb, pb), (a, ta, pa)
                ops = ["+", "*"] + (["-"] if a > b else []) + (
                    ["/"] if b > 1 and a % b == 0 else [])
                op = ops[int(rng.integers(len(ops)))]
                c = apply(a, op, b)
                p = _PREC[op]
                ta = f"({ta})" if pa < p else ta
                tb = f"({tb})" if pb < p or (pb == p and op in "-/") else tb
                steps.append(f"{a}{op}{b}={c}")
                pool = [e for n, e in enumerate(pool) if n not in (i, j)] + [
                    (c, f"{ta}{op}{tb}", p)]
            target = pool[0][0]
            if target <= self.max_target and target not in nums:
                prompt = f"{','.join(map(str, nums))}:{target}="
                answer = ";".join(steps) if self.answer_format == "steps" else pool[0][1]
                return Problem(prompt, answer)
        raise ValueError(f"max_target: no target <= {self.max_target} found for {self!r}")

    def parses(self, prompt: str) -> bool:
        return _PROMPT.fullmatch(prompt) is not None

    def grade(self, prompt: str, completion: str) -> Grade:
        m = _PROMPT.fullmatch(prompt)
        if m is None:
            raise ValueError(f"prompt: expected 'n1,n2,...:target=', got {prompt!r}")
        numbers = Counter(int(x) for x in m.group(1).split(","))
        target = int(m.group(2))
        if self.answer_format == "expression":
            try:
                parser = _Parser(completion)
                value = parser.parse()
            except _SyntaxError:
                return Grade.MALFORMED
            ok = value == target and _uses(numbers, parser.leaves, self.use_all)
            return Grade.CORRECT if ok else Grade.WELL_FORMED
        steps = [_STEP.fullmatch(s) for s in completion.split(";")]
        if any(s is None for s in steps):
            return Grade.MALFORMED
        pool = Counter(numbers)
        for s in steps:
            a, op, b, c = int(s.group(1)), s.group(2), int(s.group(3)), int(s.group(4))
            pool[a] -= 1
            pool[b] -= 1
            if pool[a] < 0 or pool[b] < 0 or apply(a, op, b) != c:
                return Grade.WELL_FORMED
            pool[c] += 1
        final = int(steps[-1].group(4))
        left = +pool  # drops zero counts
        if final != target or (self.use_all and left != Counter([target])):
            return Grade.WELL_FORMED
        return Grade.CORRECT
