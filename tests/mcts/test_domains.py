"""The deterministic domains: Saving and Connect-4 against the one-step-lookahead opponent checked
against hand-worked cases and an independent transcription of the official heuristic; saved
states restore trajectories exactly; terminal states in the search."""

from __future__ import annotations

import copy
import pickle
import random

import pytest

from optzoo.mcts import (
    DOMAINS,
    OGAUCT,
    UCT,
    Connect4,
    GameOfLife,
    SailingWind,
    Saving,
    SysAdmin,
    exact_values,
    play_episode,
    terminal,
)

# -- Saving -------------------------------------------------------------------------------------


def test_saving_borrow_pays_two_now_and_three_when_due():
    env = Saving(p=4, t=4, seed=7)
    s = env.initial_state()
    assert s[:2] == (4, 4) and -4 <= s[2] <= 4
    assert env.legal_actions(s) == (0, 1, 2)  # save, borrow, invest
    rewards = []
    for a in (1, 0, 0, 0, 0, 0):  # borrow, then save five times
        s, r = env.step(s, a)
        rewards.append(r)
        if len(rewards) == 1:
            assert s[0] == 0 and env.legal_actions(s) == (0, 2)  # no second loan yet
    # +2, then +1 each save; the loan falls due 4 steps after it was taken: 1 − 3
    assert rewards == [2.0, 1.0, 1.0, 1.0, -2.0, 1.0]
    assert s[0] == 5 and 1 in env.legal_actions(s)


def test_saving_invest_then_sell_pays_the_price_and_allows_a_new_investment():
    env = Saving(p=4, t=4, seed=3)
    s0 = env.initial_state()
    s1, r1 = env.step(s0, 2)  # invest
    assert r1 == 0.0 and s1[:2] == (5, 0)
    assert env.legal_actions(s1) == (0, 1, 3)  # sell replaces invest
    s2, r2 = env.step(s1, 3)  # sell at the price of s1
    assert r2 == float(s1[2])
    assert s2[1] == 0 + 1 + 4 + 1 and 2 in env.legal_actions(s2)


def test_saving_investment_expires_after_t_steps():
    env = Saving(p=4, t=4, seed=0)
    s, _ = env.step(env.initial_state(), 2)
    seen = []
    for _ in range(4):
        seen.append(env.legal_actions(s)[-1])
        s, _ = env.step(s, 0)
    seen.append(env.legal_actions(s)[-1])
    assert seen == [3, 3, 3, 3, 2]  # sellable while fewer than t steps old


def test_saving_price_is_one_draw_per_state_for_every_action():
    # the official determinisation seeds the draw with (seed, state before the step)
    prices = set()
    for seed in range(40):
        env = Saving(seed=seed)
        s = env.initial_state()
        nxt = {env.step(s, a)[0][2] for a in env.legal_actions(s)}
        assert len(nxt) == 1
        prices |= nxt
        assert env.step(s, 0) == Saving(seed=seed).step(s, 0)
    assert prices == set(range(-4, 5))  # every price of [−p, p] occurs


def test_saving_rejects_illegal_actions_and_bad_parameters():
    env = Saving()
    s, _ = env.step(env.initial_state(), 1)
    with pytest.raises(ValueError, match="action"):
        env.step(s, 1)  # a second loan before the first is due
    with pytest.raises(ValueError, match="t"):
        Saving(t=0)
    with pytest.raises(ValueError, match="p"):
        Saving(p=-1)


# -- Connect-4 ----------------------------------------------------------------------------------

def _heuristic(board, rows, cols, who):
    """The official ``heuristicsValue`` transcribed stone by stone (capped counts, integer
    divisions), independent of the environment's run tables."""
    counts = {2: 0, 3: 0, 4: 0}
    for row in range(rows):
        for col in range(cols):
            if board[row * cols + col] != who:
                continue
            for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
                count = 1
                for sign in (1, -1):
                    for j in range(1, 4):
                        x, y = col + sign * j * dx, row + sign * j * dy
                        if not (0 <= x < cols and 0 <= y < rows) or board[y * cols + x] != who:
                            break
                        count += 1
                if count in counts:
                    counts[count] += 1
    return counts[2] // 2 + 5 * (counts[3] // 3) + 25 * (counts[4] // 4)


def _four(board, rows, cols):
    for r in range(rows):
        for c in range(cols):
            who = board[r * cols + c]
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + k * dr, c + k * dc) for k in range(4)]
                if who and all(0 <= y < rows and 0 <= x < cols and board[y * cols + x] == who
                               for y, x in cells):
                    return True
    return False


def _drop(board, rows, cols, col, who):
    b = list(board)
    r = max(r for r in range(rows) if not b[r * cols + col])
    b[r * cols + col] = who
    return tuple(b)


def _grid(text):
    return tuple(int(ch) for ch in text.split())


@pytest.mark.parametrize("size", [(6, 7), (4, 5)])
def test_connect4_random_games_match_the_official_rules(size):
    rows, cols = size
    rng = random.Random(11)
    for game in range(25):
        env = Connect4(rows=rows, cols=cols, horizon=rows * cols, seed=game)
        s = env.initial_state()
        while not env.is_terminal(s):
            board = s[0]
            assert env.heuristic(s[1]) == _heuristic(board, rows, cols, 1)
            assert env.heuristic(s[2]) == _heuristic(board, rows, cols, 2)
            a = rng.choice(env.legal_actions(s))
            nxt, r = env.step(s, a)
            mine = _drop(board, rows, cols, a, 1)
            # the reward is the change of the agent's own heuristic; the opponent's stone
            # cannot change it
            assert r == _heuristic(nxt[0], rows, cols, 1) - _heuristic(board, rows, cols, 1)
            if nxt[0] == mine:  # the agent's move ended the game
                assert _four(mine, rows, cols) or all(mine)
            else:
                diff = [i for i in range(rows * cols) if nxt[0][i] != mine[i]]
                assert len(diff) == 1 and nxt[0][diff[0]] == 2
                gains = {c: _heuristic(_drop(mine, rows, cols, c, 2), rows, cols, 2)
                         - _heuristic(mine, rows, cols, 2)
                         for c in range(cols) if not mine[c]}
                assert gains[diff[0] % cols] == max(gains.values())  # one-step lookahead
            assert nxt[3] == (_four(nxt[0], rows, cols) or all(nxt[0]))
            assert nxt == env.state_from_board(nxt[0])
            s = nxt


def test_connect4_opponent_takes_its_win_on_a_hand_built_position():
    env = Connect4()
    s = env.state_from_board(_grid("""
        0 0 0 0 0 0 0
        0 0 0 0 0 0 0
        0 0 0 0 0 0 0
        0 0 0 0 0 0 0
        0 0 0 0 0 0 0
        2 2 2 0 1 1 0"""))
    nxt, r = env.step(s, 6)
    # the agent's two becomes a three (5 − 1); the opponent completes its four in column 3:
    # +25 − 5 = 20, the best gain of its one-step lookahead (blocking elsewhere gains ≤ 1)
    assert r == 4.0
    assert nxt[0][5 * 7 + 3] == 2 and env.is_terminal(nxt)
    assert env.legal_actions(nxt) == ()


def test_connect4_agent_win_ends_the_game_before_the_opponent_moves():
    env = Connect4()
    s = env.state_from_board(_grid("""
        0 0 0 0 0 0 0
        0 0 0 0 0 0 0
        0 0 0 0 0 0 0
        0 0 0 0 0 0 0
        0 0 0 0 0 0 0
        1 1 1 0 2 2 0"""))
    nxt, r = env.step(s, 3)
    assert r == 20.0 and env.is_terminal(nxt)
    assert sum(v != 0 for v in nxt[0]) == 6  # no opponent stone after the win


def test_connect4_a_run_of_five_scores_as_the_official_heuristic_does():
    env = Connect4()
    s = env.state_from_board(_grid("""
        0 0 0 0 0 0 0
        0 0 0 0 0 0 0
        0 0 0 0 0 0 0
        0 0 0 0 0 0 0
        0 0 0 0 0 0 0
        1 1 0 1 1 2 2"""))
    nxt, r = env.step(s, 2)
    # two twos (h = 2) merge into a run of 5: its two end stones count 4 (capped at 3 per
    # side), the middle ones 5, so T4 = 2 and 25·(2 // 4) = 0: the winning move scores −2
    assert r == -2.0 == _heuristic(nxt[0], 6, 7, 1) - _heuristic(s[0], 6, 7, 1)
    assert env.is_terminal(nxt)


def test_connect4_full_board_is_a_draw():
    env = Connect4(rows=4, cols=4)
    s = env.state_from_board(_grid("""
        1 2 1 0
        1 2 1 2
        2 1 2 1
        2 1 2 1"""))
    assert not env.is_terminal(s) and env.legal_actions(s) == (3,)
    nxt, r = env.step(s, 3)
    assert env.is_terminal(nxt) and not _four(nxt[0], 4, 4)
    assert r == _heuristic(nxt[0], 4, 4, 1) - _heuristic(s[0], 4, 4, 1)


def test_connect4_opponent_tie_break_is_fixed_per_seed_and_varies_across_seeds():
    # after the agent's first stone every opponent column gains 0: a tie
    answers = []
    for seed in range(20):
        env = Connect4(seed=seed)
        first = env.step(env.initial_state(), 3)[0][0]
        assert first == env.step(env.initial_state(), 3)[0][0]
        answers.append(first.index(2) % 7)
    assert len(set(answers)) >= 3


def test_connect4_rejects_bad_input():
    env = Connect4(rows=4, cols=4)
    full = env.state_from_board(_grid("1 0 0 0  2 0 0 0  1 0 0 0  2 0 0 0"))
    with pytest.raises(ValueError, match="action"):
        env.step(full, 0)
    with pytest.raises(ValueError, match="board"):
        env.state_from_board((3,) * 16)
    with pytest.raises(ValueError, match="rows"):
        Connect4(rows=3)


# -- every domain -------------------------------------------------------------------------------

ALL = [SysAdmin(), GameOfLife(), SailingWind(), Saving(seed=5), Connect4(seed=5)]


@pytest.mark.parametrize("env", ALL, ids=lambda e: type(e).__name__)
def test_saved_states_restore_the_trajectory(env):
    """The protocol's clone/restore: a state is immutable, so a saved copy (deep copy or pickle)
    replays the rest of an episode identically, and stepping never alters its input."""
    rng = random.Random(2)
    for _ in range(5):
        states, actions, rewards = [env.initial_state()], [], []
        while not terminal(env, states[-1], len(actions)):
            before = copy.deepcopy(states[-1])
            a = rng.choice(list(env.legal_actions(states[-1])))
            nxt, r = env.step(states[-1], a)
            assert states[-1] == before  # input untouched
            states.append(nxt)
            actions.append(a)
            rewards.append(r)
        k = rng.randrange(len(actions))
        for saved in (copy.deepcopy(states[k]), pickle.loads(pickle.dumps(states[k]))):
            assert saved == states[k] and hash(saved) == hash(states[k])
            s = saved
            for i in range(k, len(actions)):
                s, r = env.step(s, actions[i])
                assert s == states[i + 1] and r == rewards[i]


def test_domains_table_builds_every_domain():
    for name, cls in DOMAINS.items():
        env = cls()
        assert env.horizon >= 1 and env.legal_actions(env.initial_state()), name


def test_terminal_states_before_the_horizon_end_search_and_episodes():
    env = Connect4(rows=4, cols=4, horizon=8)
    won = env.state_from_board(_grid("0 0 0 0  1 0 0 0  1 0 0 0  1 2 2 0"))
    after, _ = env.step(won, 0)
    assert env.is_terminal(after) and exact_values(env, after, 1) == 0.0
    with pytest.raises(ValueError, match="terminal"):
        UCT(env).search(after, depth=1)
    # in the tree every game-over state of a depth shares the terminal abstract node
    tree = OGAUCT(env, seed=0)
    tree.expand_all(env.initial_state(), depth=3)  # 5 decisions left: a four fits
    ends = {}
    for s, (term, d) in enumerate(zip(tree.s_term, tree.s_depth, strict=True)):
        if term:
            assert not tree.s_children[s]
            ends.setdefault(d, set()).add(tree.s_abs[s])
    assert any(d < env.horizon for d in ends) and all(len(v) == 1 for v in ends.values())

    class Counting(UCT):
        calls = 0

        def search(self, state, depth=0):
            Counting.calls += 1
            return super().search(state, depth)

    # a 4×4 game vs this opponent often ends early (which games do depends on the search's
    # seed): an episode never searches past its end, and some of them end before the horizon
    calls = []
    for seed in range(3):
        Counting.calls = 0
        out = play_episode(Counting(env, iterations=30, seed=seed), env)
        calls.append(Counting.calls)
        assert out["return"] >= 0
    assert max(calls) <= env.horizon and min(calls) < env.horizon
