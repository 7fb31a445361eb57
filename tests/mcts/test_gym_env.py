"""GymDeterministicEnv: a copyable gymnasium env as the deterministic MDP the MCTS agents take."""

from __future__ import annotations

import numpy as np
import pytest

from optzoo.mcts import (
    KVDAUCT,
    OGAUCT,
    UCT,
    DeterministicEnv,
    EpsOGAUCT,
    GymDeterministicEnv,
    check_env,
    exact_values,
    observation_key,
    play_episode,
)

gym = pytest.importorskip("gymnasium")


def _lake(horizon: int = 8) -> GymDeterministicEnv:
    return GymDeterministicEnv(gym.make("FrozenLake-v1", is_slippery=False), horizon=horizon,
                               seed=0)


def test_wrapper_follows_the_deterministic_env_protocol():
    env = _lake()
    assert isinstance(env, DeterministicEnv)
    check_env(env)
    assert env.horizon == 8 and env.legal_actions(env.initial_state()) == (0, 1, 2, 3)
    assert GymDeterministicEnv(gym.make("CartPole-v1")).horizon == 500  # the registered limit


def test_step_is_pure_and_states_compare_by_observation():
    env = _lake()
    s0 = env.initial_state()
    a, ra = env.step(s0, 2)  # right
    b, rb = env.step(s0, 2)
    assert a == b and hash(a) == hash(b) and ra == rb == 0.0
    assert a.env is not b.env and a.observation == 1
    assert env.step(s0, 1)[0].observation == 4  # s0 itself was not moved by the steps above
    # a transposition: right-down and down-right reach the same cell, the same state
    rd = env.step(env.step(s0, 2)[0], 1)[0]
    dr = env.step(env.step(s0, 1)[0], 2)[0]
    assert rd == dr and len({rd, dr}) == 1


def test_exact_values_and_every_agent_reach_the_frozen_lake_goal():
    env = _lake()
    assert exact_values(env, env.initial_state(), 0) == 1.0  # the goal is 6 moves away
    for agent in (UCT(env, iterations=300, seed=0), OGAUCT(env, iterations=300, seed=0),
                  EpsOGAUCT(env, iterations=300, seed=0), KVDAUCT(env, iterations=300, seed=0)):
        assert play_episode(agent, env)["return"] == 1.0, agent.name


def test_terminal_states_end_the_episode_and_refuse_a_step():
    env = _lake()
    hole = env.step(env.step(env.initial_state(), 2)[0], 1)[0]  # right, down: the hole (1, 1)
    assert env.is_terminal(hole) and not env.is_terminal(env.initial_state())
    with pytest.raises(ValueError, match="ended"):
        env.step(hole, 0)
    with pytest.raises(ValueError, match="action"):
        env.step(env.initial_state(), 7)


def test_cartpole_plan_replays_identically_in_the_real_env():
    planning = GymDeterministicEnv(gym.make("CartPole-v1"), horizon=30, seed=5)
    agent = KVDAUCT(planning, iterations=40, seed=0)
    state, actions, total = planning.initial_state(), [], 0.0
    for depth in range(planning.horizon):
        if planning.is_terminal(state):
            break
        action = agent.search(state, depth)
        state, r = planning.step(state, action)
        actions.append(action)
        total += r
    assert total == 30.0  # balanced for the whole horizon
    real = gym.make("CartPole-v1")
    obs, _ = real.reset(seed=5)
    np.testing.assert_array_equal(obs, planning.initial_state().observation)
    for a in actions:
        obs, _, terminated, _, _ = real.step(a)
        assert not terminated
    np.testing.assert_array_equal(obs, state.observation)


def test_custom_key_and_bad_inputs():
    env = GymDeterministicEnv(gym.make("FrozenLake-v1", is_slippery=False), horizon=4, seed=0,
                              key=lambda obs, e: int(obs) % 4)  # merges cells of one column
    s0 = env.initial_state()
    assert env.step(s0, 1)[0] == s0  # down: the same column, hence "the same" state
    with pytest.raises(ValueError, match="Discrete"):
        GymDeterministicEnv(gym.make("Pendulum-v1"), horizon=5)
    with pytest.raises(ValueError, match="horizon"):
        GymDeterministicEnv(gym.make("FrozenLake-v1"), horizon=0)
    with pytest.raises(TypeError, match="gymnasium.Env"):
        GymDeterministicEnv(object(), horizon=3)
    with pytest.raises(TypeError, match="key"):
        GymDeterministicEnv(gym.make("FrozenLake-v1"), horizon=3, key=lambda o, e: [o])


def test_observation_key_handles_arrays_dicts_and_scalars():
    x = np.array([1.0, 2.0], dtype=np.float32)
    assert observation_key(x) == observation_key(x.copy())
    assert observation_key(x) != observation_key(x.astype(np.float64))
    assert observation_key(np.int64(3)) == 3
    assert observation_key({"b": x, "a": 1}) == observation_key({"a": 1, "b": x.copy()})
    with pytest.raises(TypeError):
        observation_key({1, 2})
