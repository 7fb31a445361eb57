"""A gymnasium environment as the deterministic MDP that UCT, OGA-UCT, (ε_a, ε_t)-OGA-UCT and
KVDA-UCT plan in (:class:`~optzoo.mcts.environment.DeterministicEnv`).

The search needs ``step(state, action)`` to be a pure function of an immutable, hashable state.
A gymnasium env is a mutable object, so a state here is a snapshot: a ``copy.deepcopy`` of the
unwrapped env (its physics and its random generator) taken after the step that produced it,
plus the observation.  ``step`` copies the snapshot and steps the copy, so the saved state is
never touched and replaying it gives the same successor every time.

Which states are "the same" (transpositions, and the abstractions of OGA/KVDA-UCT compare
successors by identity) is decided by a key, by default the observation (NumPy arrays by
dtype, shape and bytes) and whether the episode has ended.  That is exact for envs whose
observation is their whole state (CartPole, FrozenLake, Taxi, CliffWalking, MountainCar);
otherwise pass ``key=`` (e.g. ``key=lambda obs, env: tuple(env.state)``).

Caveats, all documented behaviour rather than errors:

* wrappers are dropped (the search steps ``env.unwrapped``); the episode length is ``horizon``
  (default: the env's registered ``max_episode_steps``), not the ``TimeLimit`` wrapper;
* a stochastic env becomes deterministic given each snapshot's copied random generator (the
  search plans against one realised future, and the key ignores the generator);
* envs holding unpicklable resources (``render_mode="human"`` windows) cannot be copied; make the
  planning env without rendering.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["GymDeterministicEnv", "GymState", "observation_key"]


def observation_key(obs: Any) -> Hashable:
    """A hashable stand-in for a gymnasium observation: arrays by (dtype, shape, bytes), dicts
    by sorted items, tuples element-wise, NumPy scalars as Python numbers."""
    if isinstance(obs, np.ndarray):
        return ("array", obs.dtype.str, obs.shape, obs.tobytes())
    if isinstance(obs, np.generic):
        return obs.item()
    if isinstance(obs, dict):
        return tuple((k, observation_key(v)) for k, v in sorted(obs.items()))
    if isinstance(obs, (tuple, list)):
        return tuple(observation_key(v) for v in obs)
    hash(obs)  # raises TypeError for anything else unhashable
    return obs


@dataclass(frozen=True)
class GymState:
    """One snapshot of a gymnasium env.  Equal (and hashed) by ``key`` and ``terminal`` only.

    Attributes:
        key: the hashable identity of the state (see the module docstring).
        terminal: the env reported ``terminated`` or ``truncated`` on reaching this state.
        observation: the observation the env returned.
        info: the ``info`` dict the env returned.
        env: the copied unwrapped env in this state (never stepped in place).
    """

    key: Hashable
    terminal: bool
    observation: Any = field(compare=False, repr=False)
    info: dict = field(compare=False, repr=False, default_factory=dict)
    env: Any = field(compare=False, repr=False, default=None)


class GymDeterministicEnv:
    """A gymnasium env with a discrete action space, whose state can be copied, as a
    :class:`~optzoo.mcts.environment.DeterministicEnv` for the MCTS agents of this package.

    Example:
        >>> import gymnasium as gym
        >>> from optzoo.mcts import KVDAUCT, GymDeterministicEnv, play_episode
        >>> lake = GymDeterministicEnv(gym.make("FrozenLake-v1", is_slippery=False),
        ...                            horizon=8, seed=0)
        >>> agent = KVDAUCT(lake, iterations=300, seed=0)
        >>> play_episode(agent, lake)["return"]          # reaches the goal
        1.0

    Args:
        env: a ``gymnasium.Env`` (wrapped or not) with a ``Discrete`` action space; it is reset
            once, with ``seed``, to give the initial state, and not used afterwards.
        horizon: decisions per episode; default: ``env.spec.max_episode_steps``.
        seed: seed of that reset (None: the env's own randomness).
        reset_options: ``options`` of that reset.
        key: ``key(observation, unwrapped_env) -> hashable`` identifying a state; default: the
            observation (:func:`observation_key`).
        copy_state: makes an independent copy of the unwrapped env (default ``copy.deepcopy``).
    """

    def __init__(self, env, horizon: int | None = None, seed: int | None = None,
                 reset_options: dict | None = None,
                 key: Callable[[Any, Any], Hashable] | None = None,
                 copy_state: Callable[[Any], Any] = copy.deepcopy) -> None:
        try:
            import gymnasium as gym
        except ImportError as exc:  # pragma: no cover - gymnasium is a dependency of the rl extra
            raise ImportError("GymDeterministicEnv needs gymnasium (pip install gymnasium)") \
                from exc
        if not isinstance(env, gym.Env):
            raise TypeError(f"env: expected a gymnasium.Env, got {type(env).__name__}")
        space = env.action_space
        if not isinstance(space, gym.spaces.Discrete):
            raise ValueError(f"env: expected a Discrete action space (the tree branches on a "
                             f"finite action set), got {space}")
        if horizon is None:
            horizon = getattr(getattr(env, "spec", None), "max_episode_steps", None)
            if horizon is None:
                raise ValueError("horizon: the env registers no max_episode_steps; pass "
                                 "horizon= (decisions per episode)")
        if not isinstance(horizon, int) or isinstance(horizon, bool) or horizon < 1:
            raise ValueError(f"horizon: expected an integer >= 1, got {horizon!r}")
        if key is not None and not callable(key):
            raise TypeError(f"key: expected a callable (observation, env) -> hashable, got "
                            f"{type(key).__name__}")
        self.horizon = horizon
        self.actions = tuple(range(int(space.start), int(space.start) + int(space.n)))
        self._key = key
        self._copy = copy_state
        obs, info = env.reset(seed=seed, options=reset_options)
        snapshot = self._copy(env.unwrapped)
        self._initial = self._state(obs, False, info, snapshot)

    def _state(self, obs, terminal: bool, info: dict, snapshot) -> GymState:
        k = observation_key(obs) if self._key is None else self._key(obs, snapshot)
        try:
            hash(k)
        except TypeError as exc:
            raise TypeError(f"key: expected a hashable state key, got {type(k).__name__}") \
                from exc
        return GymState(k, bool(terminal), obs, dict(info), snapshot)

    def initial_state(self) -> GymState:
        """The state after the seeded reset."""
        return self._initial

    def legal_actions(self, state: GymState) -> tuple[int, ...]:
        """Every action of the ``Discrete`` space (gymnasium has no per-state action masks)."""
        return self.actions

    def is_terminal(self, state: GymState) -> bool:
        """Whether the env ended the episode (``terminated`` or ``truncated``) at ``state``."""
        return state.terminal

    def step(self, state: GymState, action: int) -> tuple[GymState, float]:
        """Copy ``state``'s env, step the copy with ``action``; the successor and the reward."""
        if not isinstance(state, GymState):
            raise TypeError(f"state: expected a GymState of this env, got "
                            f"{type(state).__name__}")
        if state.terminal:
            raise ValueError("state: the episode has ended there (is_terminal); no step")
        if action not in self.actions:
            raise ValueError(f"action: expected one of {self.actions}, got {action!r}")
        env = self._copy(state.env)
        obs, reward, terminated, truncated, info = env.step(action)
        return self._state(obs, terminated or truncated, info, env), float(reward)
