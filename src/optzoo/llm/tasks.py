"""Verifiable tasks: the common interface of the synthetic problems and their exact rewards.

A task is a frozen dataclass (so it hashes into cache keys, :meth:`Task.spec`) that

- draws problems deterministically from a seed (:meth:`Task.sample`, :meth:`Task.split`); a
  :class:`Problem` is a prompt and one correct demonstration completion (EOS not included);
- grades a completion exactly from the prompt string alone (:meth:`Task.grade`): prompts are
  self-describing (``"12+345="``, ``"3,7,25:120="``), so rewards need no stored answers;
- exposes the reward in TRL's convention, ``reward(prompts, completions, **kwargs) ->
  list[float]``: 1.0 for a correct completion, ``format_reward`` (default 0.0) for a
  syntactically well-formed but wrong one, 0.0 otherwise.  Completions are plain strings, or
  TRL conversational lists of messages (the last message's ``"content"`` is graded).  Leading
  and trailing whitespace is ignored; nothing else is forgiven.

Concrete tasks: :class:`optzoo.llm.arithmetic.Addition`, :class:`~optzoo.llm.arithmetic.
Multiplication`, :class:`optzoo.llm.countdown.Countdown`; :class:`Mixture` mixes them.
"""

from __future__ import annotations

import dataclasses
import enum
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np


@dataclass(frozen=True)
class Problem:
    """A prompt and one correct completion of it (the supervised demonstration)."""

    prompt: str
    answer: str


class Grade(enum.IntEnum):
    """How a completion fares: wrong syntax, right syntax but wrong answer, or correct."""

    MALFORMED = 0
    WELL_FORMED = 1
    CORRECT = 2


def as_rng(seed) -> np.random.Generator:
    """A NumPy generator from an int seed (or the generator itself)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed: expected an integer >= 0 or a numpy Generator, got {seed!r}")
    return np.random.default_rng(int(seed))


def completion_text(completion, index: int = 0, name: str = "completions") -> str:
    """The text of a completion (or prompt): a string, or the last message of a TRL
    conversation (a list of ``{"role", "content"}`` dicts)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], dict) \
            and isinstance(completion[-1].get("content"), str):
        return completion[-1]["content"]
    raise TypeError(f"{name}[{index}]: expected a string or a list of messages with "
                    f"'content', got {type(completion).__name__}")


def check_range(name: str, value, lo: int, hi: int) -> tuple[int, int]:
    """``value`` (an int or an inclusive (min, max) pair) as a validated pair in [lo, hi]."""
    if isinstance(value, int | np.integer):
        pair = (value, value)
    elif isinstance(value, Sequence) and not isinstance(value, str):
        pair = tuple(value)
    else:
        pair = ()  # rejected below with the expected form
    if (len(pair) != 2 or any(isinstance(v, bool) or not isinstance(v, int | np.integer)
                              for v in pair) or not lo <= pair[0] <= pair[1] <= hi):
        raise ValueError(f"{name}: expected an integer or an (min, max) pair with "
                         f"{lo} <= min <= max <= {hi}, got {value!r}")
    return int(pair[0]), int(pair[1])


def check_format_reward(value) -> None:
    if not isinstance(value, float | int) or not 0.0 <= value < 1.0:
        raise ValueError(f"format_reward: expected a number in [0, 1), got {value!r}")


class Task(ABC):
    """Base of the verifiable tasks (subclasses are frozen dataclasses).

    Subclasses implement :meth:`draw` (one problem from a generator), :meth:`grade` (exact
    grading of one completion) and :meth:`parses` (whether a prompt is of this task), and set
    ``format_reward``.  Everything else (sampling, splits, the TRL reward, hashing) is here.
    """

    format_reward: float
    LEVELS: ClassVar[dict[int, dict]] = {}

    @classmethod
    def from_level(cls, level: int, **overrides) -> Task:
        """The task at a difficulty ``level`` (see the subclass's ``LEVELS`` table)."""
        if level not in cls.LEVELS:
            raise ValueError(f"level: expected one of {sorted(cls.LEVELS)}, got {level!r}")
        return cls(**{**cls.LEVELS[level], **overrides})

    @abstractmethod
    def draw(self, rng: np.random.Generator) -> Problem:
        """One problem, using only ``rng`` for randomness."""

    @abstractmethod
    def parses(self, prompt: str) -> bool:
        """Whether ``prompt`` has this task's prompt format."""

    @abstractmethod
    def grade(self, prompt: str, completion: str) -> Grade:
        """Exact grade of ``completion`` for ``prompt`` (raises ValueError on a foreign prompt)."""

    def sample(self, n: int, seed=0, *, exclude: Iterable[str] = (),
               unique: bool = False) -> list[Problem]:
        """``n`` problems, deterministic given ``seed`` (an int or a numpy Generator).

        Args:
            n: number of problems.
            seed: int seed or ``np.random.Generator`` (advanced in place).
            exclude: prompts never to return (e.g. a held-out set).
            unique: no prompt twice.
        """
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"n: expected an integer >= 0, got {n!r}")
        rng = as_rng(seed)
        banned = set(exclude)
        out: list[Problem] = []
        tries = 0
        while len(out) < n:
            tries += 1
            if tries > 50 * n + 1000:
                raise ValueError(f"n: could not draw {n} problems of {self!r} with "
                                 f"exclude/unique: the task has too few distinct prompts")
            p = self.draw(rng)
            if p.prompt in banned:
                continue
            if unique:
                banned.add(p.prompt)
            out.append(p)
        return out

    def split(self, n_train: int, n_test: int, seed=0) -> tuple[list[Problem], list[Problem]]:
        """Disjoint train and held-out sets of distinct prompts (held-out drawn first)."""
        rng = as_rng(seed)
        test = self.sample(n_test, rng, unique=True)
        train = self.sample(n_train, rng, unique=True, exclude=[p.prompt for p in test])
        return train, test

    def score(self, prompt: str, completion: str) -> float:
        """The reward of one completion (see the module docstring)."""
        g = self.grade(prompt, completion.strip())
        return 1.0 if g is Grade.CORRECT else (
            float(self.format_reward) if g is Grade.WELL_FORMED else 0.0)

    def reward(self, prompts: Sequence[str], completions: Sequence, **kwargs) -> list[float]:
        """TRL reward function: one float per (prompt, completion); extra kwargs are ignored."""
        if isinstance(prompts, str) or isinstance(completions, str):
            raise TypeError("prompts, completions: expected sequences of strings, got a string")
        if len(prompts) != len(completions):
            raise ValueError(f"completions: expected {len(prompts)} (one per prompt), "
                             f"got {len(completions)}")
        return [self.score(completion_text(p, i, "prompts"), completion_text(c, i))
                for i, (p, c) in enumerate(zip(prompts, completions, strict=True))]

    def correct(self, prompts: Sequence[str], completions: Sequence) -> list[bool]:
        """Exact correctness per completion (the reward without its format component)."""
        if len(prompts) != len(completions):
            raise ValueError(f"completions: expected {len(prompts)} (one per prompt), "
                             f"got {len(completions)}")
        return [self.grade(completion_text(p, i, "prompts"),
                           completion_text(c, i).strip()) is Grade.CORRECT
                for i, (p, c) in enumerate(zip(prompts, completions, strict=True))]

    def spec(self) -> dict:
        """A JSON-able description (class and fields): the task's identity in cache keys."""
        if not dataclasses.is_dataclass(self):
            raise TypeError(f"{type(self).__name__}: a Task must be a frozen dataclass to have a "
                            f"spec (its fields identify it in cache keys)")
        fields = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, tuple) and v and isinstance(v[0], Task):
                v = [t.spec() for t in v]
            fields[f.name] = list(v) if isinstance(v, tuple) else v
        return {"task": type(self).__name__, **fields}


@dataclass(frozen=True)
class Mixture(Task):
    """Problems drawn from several tasks with fixed weights (mixed difficulty or kinds).

    Grading goes to the first member whose prompt format matches, so members with the same
    prompt format (e.g. additions of different lengths) grade identically.

    Args:
        tasks: the member tasks (at least one).
        weights: sampling weights (default uniform), non-negative with a positive sum.
    """

    tasks: tuple[Task, ...]
    weights: tuple[float, ...] | None = None

    def __post_init__(self):
        tasks = tuple(self.tasks)
        if not tasks or not all(isinstance(t, Task) for t in tasks):
            raise ValueError(f"tasks: expected a non-empty sequence of Task, got {self.tasks!r}")
        w = (1.0,) * len(tasks) if self.weights is None else tuple(map(float, self.weights))
        if len(w) != len(tasks) or any(not x >= 0 for x in w) or not sum(w) > 0:
            raise ValueError(f"weights: expected {len(tasks)} non-negative numbers with a "
                             f"positive sum, got {self.weights!r}")
        object.__setattr__(self, "tasks", tasks)
        object.__setattr__(self, "weights", w)

    @property
    def format_reward(self) -> float:  # type: ignore[override]
        return 0.0

    def draw(self, rng: np.random.Generator) -> Problem:
        p = np.asarray(self.weights) / sum(self.weights)
        return self.tasks[int(rng.choice(len(self.tasks), p=p))].draw(rng)

    def _member(self, prompt: str) -> Task:
        for t in self.tasks:
            if t.parses(prompt):
                return t
        raise ValueError(f"prompt: {prompt!r} matches no task of the mixture")

    def parses(self, prompt: str) -> bool:
        return any(t.parses(prompt) for t in self.tasks)

    def grade(self, prompt: str, completion: str) -> Grade:
        return self._member(prompt).grade(prompt, completion)

    def score(self, prompt: str, completion: str) -> float:
        return self._member(prompt).score(prompt, completion)
