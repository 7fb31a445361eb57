"""(ε_a, ε_t)-OGA-UCT: equal to OGA-UCT at ε = 0 (same tree, same statistics, bit for bit), a
coarsening of OGA's abstraction for ε > 0 (hand-worked groups on a hand-built DAG, and on every
small domain), plain shared statistics."""

from __future__ import annotations

from collections import defaultdict

import pytest

from optzoo.mcts import (
    OGAUCT,
    Connect4,
    EpsOGAUCT,
    GameOfLife,
    SailingWind,
    Saving,
    SysAdmin,
    play_episode,
)


def _groups(ids):
    out = defaultdict(set)
    for i, x in enumerate(ids):
        out[x].add(i)
    return {frozenset(v) for v in out.values()}


def _coarsens(fine, coarse):
    """Every group of ``fine`` lies inside one group of ``coarse``."""
    return all(any(g <= h for h in coarse) for g in fine)


@pytest.mark.parametrize("env", [SysAdmin(), Saving(seed=4), Connect4(seed=4), SailingWind()],
                         ids=lambda e: type(e).__name__)
def test_zero_epsilon_is_oga_bit_for_bit(env):
    oga = OGAUCT(env, iterations=200, c=2.0, seed=9)
    eps = EpsOGAUCT(env, iterations=200, c=2.0, seed=9, eps_a=0.0, eps_t=0.0)
    assert oga.search(env.initial_state()) == eps.search(env.initial_state())
    assert oga.q_child == eps.q_child and oga.s_env == eps.s_env
    assert oga.q_n == eps.q_n and oga.q_s == eps.q_s
    assert oga.abs_n == eps.abs_n and oga.abs_s == eps.abs_s
    assert [oga.value(q) for q in range(len(oga.q_abs))] == [
        eps.value(q) for q in range(len(eps.q_abs))]
    assert _groups(oga.q_abs) == _groups(eps.q_abs)
    assert _groups(oga.s_abs) == _groups(eps.s_abs)
    assert play_episode(OGAUCT(env, iterations=40, seed=2), env) == play_episode(
        EpsOGAUCT(env, iterations=40, seed=2), env)


class Fan:
    """Hand-built DAG, horizon 2.  From 'r': action 0 → 'x' (reward 1), 1 → 'x' (reward 1),
    2 → 'y' (reward 1.5), 3 → 'w' (reward 5), 4 → 'v' (reward 1).  One action each below, to
    'z': from x and y reward 2, from w reward 7, from v reward 9."""

    horizon = 2
    table = {("r", 0): ("x", 1.0), ("r", 1): ("x", 1.0), ("r", 2): ("y", 1.5),
             ("r", 3): ("w", 5.0), ("r", 4): ("v", 1.0), ("x", 0): ("z", 2.0),
             ("y", 0): ("z", 2.0), ("w", 0): ("z", 7.0), ("v", 0): ("z", 9.0)}

    def initial_state(self):
        return "r"

    def legal_actions(self, state):
        return tuple(range(5)) if state == "r" else (0,)

    def step(self, state, action):
        return self.table[(state, action)]


def _root_groups(tree):
    by_action = {tree.q_action[q]: q for q in tree.s_children[0]}
    groups = defaultdict(set)
    for a, q in by_action.items():
        groups[tree.q_abs[q]].add(a)
    return {frozenset(g) for g in groups.values()}


@pytest.mark.parametrize("eps_a, eps_t, expected", [
    # ASAP: equal reward and equal abstract successor (x and y are one abstract state)
    (0.0, 0.0, [{0, 1}, {2}, {3}, {4}]),
    # |1.5 − 1| ≤ 1 with the same abstract successor; w and v lead elsewhere
    (1.0, 0.0, [{0, 1, 2}, {3}, {4}]),
    # ε_t = 2 ignores the successor: equal rewards 1 (actions 0, 1, 4) suffice
    (0.0, 2.0, [{0, 1, 4}, {2}, {3}]),
    # "ignore the reward": below the root every Q-node joins, so x, y, w, v are one state
    (999999.0, 0.0, [{0, 1, 2, 3, 4}]),
])
def test_hand_built_groups(eps_a, eps_t, expected):
    tree = EpsOGAUCT(Fan(), seed=0, eps_a=eps_a, eps_t=eps_t)
    tree.expand_all("r")
    assert _root_groups(tree) == {frozenset(g) for g in expected}
    oga = OGAUCT(Fan(), seed=0)
    oga.expand_all("r")
    assert _coarsens(_groups(oga.q_abs), _groups(tree.q_abs))


SMALL = [SysAdmin(n=3, horizon=3), GameOfLife(size=2, horizon=3, alive=(0,)),
         SailingWind(size=3, horizon=4), Saving(horizon=4, seed=1),
         Connect4(rows=4, cols=4, horizon=3, seed=1)]


@pytest.mark.parametrize("eps_a", [0.5, 1.0, 999999.0])
@pytest.mark.parametrize("env", SMALL, ids=lambda e: type(e).__name__)
def test_positive_epsilon_groups_a_superset_of_oga(env, eps_a):
    oga, eps = OGAUCT(env, seed=0), EpsOGAUCT(env, seed=0, eps_a=eps_a)
    oga.expand_all(env.initial_state())
    eps.expand_all(env.initial_state())
    assert oga.q_child == eps.q_child  # same seed, same expansion order: same node ids
    assert _coarsens(_groups(oga.q_abs), _groups(eps.q_abs))
    assert _coarsens(_groups(oga.s_abs), _groups(eps.s_abs))
    # every group respects the tolerance against its reference (founding) reward
    for members in _groups(eps.q_abs):
        rewards = [eps.q_reward[q] for q in members]
        assert max(rewards) - min(rewards) <= 2 * eps_a + 1e-9


def test_epsilon_groups_share_plain_statistics():
    env = SailingWind(size=4, horizon=6)
    tree = EpsOGAUCT(env, iterations=200, c=1.0, seed=5, eps_a=999999.0)
    tree.search(env.initial_state())
    shared = 0
    for members in _groups(tree.q_abs):
        n = sum(tree.q_n[q] for q in members)
        if n == 0:
            continue
        mean = sum(tree.q_s[q] for q in members) / n
        for q in members:
            assert tree.value(q) == pytest.approx(mean, abs=1e-9)
        shared += len({tree.q_reward[q] for q in members}) > 1
    assert shared  # some groups do mix different rewards


@pytest.mark.parametrize("kwargs", [{"eps_a": -1.0}, {"eps_t": -0.5}])
def test_bad_epsilon_raises(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        EpsOGAUCT(SysAdmin(), **kwargs)
