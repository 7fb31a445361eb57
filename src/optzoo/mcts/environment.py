"""Deterministic finite-horizon MDPs, the setting of KVDA-UCT (Schmöcker, Dockhorn & Rosenhahn,
"Grouping Nodes with Known Value Differences: A Lossless UCT-based Abstraction Algorithm",
ICLR 2026, OpenReview Zk0zZMSAYc).

States are immutable and hashable, so the search tree can detect transpositions (the same state
reached at the same depth along different paths) with one dictionary per depth.  ``step`` is a pure
function: a state *is* its own clone (a saved state restores the trajectory exactly), which takes
the place of the official code's ``copyState``.

An environment may also define ``is_terminal(state) -> bool`` (optional, not part of the
protocol class so that older environments still satisfy it): a state where the episode ends
before the horizon, e.g. a finished game.  Such a state has no actions and value 0, and the
search treats it like a state at the horizon (one terminal abstract node per depth, as the
official code's ``terminal`` flag does).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class DeterministicEnv(Protocol):
    """A deterministic MDP with a finite horizon.

    Attributes:
        horizon: number of decisions of an episode; depth ``horizon`` is terminal.
    """

    horizon: int

    def initial_state(self) -> Hashable:
        """The start state (immutable, hashable)."""

    def legal_actions(self, state: Hashable) -> Sequence[int]:
        """The actions available in ``state`` (non-empty)."""

    def step(self, state: Hashable, action: int) -> tuple[Hashable, float]:
        """The successor of ``state`` under ``action`` and the immediate reward."""


def check_env(env: DeterministicEnv) -> None:
    """Raise ``ValueError`` naming ``env`` if it does not follow :class:`DeterministicEnv`."""
    if not isinstance(env, DeterministicEnv):
        raise ValueError(f"env: expected an object with horizon, initial_state, legal_actions "
                         f"and step, got {type(env).__name__}")
    if not isinstance(env.horizon, int) or env.horizon < 1:
        raise ValueError(f"env.horizon: expected an integer >= 1, got {env.horizon!r}")
    if hasattr(env, "is_terminal") and not callable(env.is_terminal):
        raise ValueError("env.is_terminal: expected a method state -> bool")


def terminal(env: DeterministicEnv, state: Hashable, depth: int) -> bool:
    """Whether the episode is over at ``state`` reached after ``depth`` decisions: the horizon,
    or the environment's optional ``is_terminal``."""
    if depth >= env.horizon:
        return True
    fn = getattr(env, "is_terminal", None)
    return fn is not None and bool(fn(state))


def exact_values(env: DeterministicEnv, state: Hashable, depth: int,
                 memo: dict | None = None) -> float:
    """V*(state) at ``depth`` by brute-force dynamic programming (undiscounted, to the horizon).

    Exponential in the worst case: for tests and tiny instances only.  ``memo`` maps
    ``(depth, state)`` to V* and is filled in place.
    """
    memo = {} if memo is None else memo
    if terminal(env, state, depth):
        return 0.0
    key = (depth, state)
    if key not in memo:
        best = -float("inf")
        for a in env.legal_actions(state):
            nxt, r = env.step(state, a)
            best = max(best, r + exact_values(env, nxt, depth + 1, memo))
        memo[key] = best
    return memo[key]
