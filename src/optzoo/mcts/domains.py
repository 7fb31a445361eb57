"""Small deterministic domains for KVDA-UCT (ICLR 2026, OpenReview Zk0zZMSAYc): SysAdmin, Game
of Life and Sailing Wind rebuilt by hand after the paper's determinised IPPC domains (maps
synthetic and small); Saving and Connect-4 against a one-step-lookahead opponent following the
rules of the official code (``codebro634/KVDA_UCT``, read, not copied).

Each domain gives different immediate rewards to actions that lead to equivalent futures, which
is where KVDA (grouping without reward equality) differs from OGA/ASAP.

* :class:`SysAdmin` -- ring of ``n`` machines; action ``i < n`` reboots machine ``i`` (cost
  0.75, IPPC's reboot penalty), ``n`` is a no-op.  Determinised dynamics (our reading of the
  most-likely outcome with a failure cascade so that something happens): a running machine whose
  upstream neighbour is down fails.  Reward = #running machines after the step − reboot cost.
* :class:`GameOfLife` -- ``k × k`` board without wrap-around; action sets one cell alive (or
  no-op, last action), then one synchronous Conway B3/S23 update; reward = #alive after it.
* :class:`SailingWind` -- ``k × k`` grid, goal in the far corner; 8 heading actions; the wind
  direction turns one step clockwise every ``wind_period`` decisions (a deterministic stand-in for
  the stochastic wind); reward = −cost, the cost growing with the angle to the wind (sailing into
  the wind is the dearest); the goal is absorbing with reward 0.
* :class:`Saving` -- the official code's ``Saving`` MDP (``Games/MDPs/Saving.cpp``) with the
  paper's p = 4, t = 4, determinised as the official ``determinization`` wrapper does (below).
* :class:`Connect4` -- Connect-4 against the fixed one-step-lookahead opponent, with the
  official heuristic as reward (the paper's "h" games: ``mptomdp`` of ``heuristicsasreward`` of
  ``c4`` with ``agents: 1:osla``, ``deterministic_opponents: 1``), see the class docstring.

Determinisation (official ``Wrapper/Determinization.cpp``): every chance outcome of a step is
drawn from a generator seeded with ``seed_offset + hash(state before the step)``, the
``seed_offset`` being drawn once per episode.  The outcome is thus a fixed pseudo-random function
of (episode seed, state) and, since the action does not enter the seed, the *same* for every
action of a state.  We keep exactly that structure with our own integer hash (SplitMix64 over
the seed and the state's integers) in place of ``std::mt19937`` seeded with the C++ ``hash()``:
the instances differ from the official ones draw by draw, the family of determinisations is the
same.  The domains with a ``seed`` field are such determinisations; the reproduction draws one per
episode (the episode's seed), as the official runner draws a new ``seed_offset`` per episode.
"""

from __future__ import annotations

from dataclasses import dataclass

_MASK = (1 << 64) - 1


def _mix(*values: int) -> int:
    """SplitMix64 (Steele, Lea & Flood 2014) chained over ``values``: a fixed pseudo-random
    64-bit function of a tuple of integers (the determinisation's seeded generator)."""
    z = 0
    for v in values:
        z = (z + (v & _MASK) + 0x9E3779B97F4A7C15) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        z ^= z >> 31
    return z


def _check(name: str, value: int, low: int) -> None:
    if not isinstance(value, int) or value < low:
        raise ValueError(f"{name}: expected an integer >= {low}, got {value!r}")


@dataclass(frozen=True)
class SysAdmin:
    """Deterministic SysAdmin on a unidirectional ring (see module docstring).

    Args:
        n: machines (≥ 2).
        horizon: decisions per episode.
        down: machines down at the start.
    """

    n: int = 6
    horizon: int = 10
    down: tuple[int, ...] = (0,)

    def __post_init__(self) -> None:
        _check("n", self.n, 2)
        _check("horizon", self.horizon, 1)
        if any(not 0 <= d < self.n for d in self.down):
            raise ValueError(f"down: expected machine indices in [0, {self.n}), got {self.down}")

    def initial_state(self) -> tuple[int, ...]:
        return tuple(0 if i in self.down else 1 for i in range(self.n))

    def legal_actions(self, state) -> range:
        return range(self.n + 1)

    def step(self, state, action):
        nxt = [state[i] and state[i - 1] for i in range(self.n)]
        cost = 0.0
        if action < self.n:
            nxt[action] = 1
            cost = 0.75
        nxt_t = tuple(int(v) for v in nxt)
        return nxt_t, float(sum(nxt_t)) - cost


@dataclass(frozen=True)
class GameOfLife:
    """Deterministic Game of Life with a planting action (see module docstring).

    Args:
        size: board side k (≥ 2).
        horizon: decisions per episode.
        alive: cells (row-major indices) alive at the start.
    """

    size: int = 3
    horizon: int = 10
    alive: tuple[int, ...] = (0, 4, 8)

    def __post_init__(self) -> None:
        _check("size", self.size, 2)
        _check("horizon", self.horizon, 1)
        if any(not 0 <= c < self.size ** 2 for c in self.alive):
            raise ValueError(f"alive: expected cells in [0, {self.size ** 2}), got {self.alive}")

    def initial_state(self) -> tuple[int, ...]:
        return tuple(int(i in self.alive) for i in range(self.size ** 2))

    def legal_actions(self, state) -> range:
        return range(self.size ** 2 + 1)

    def step(self, state, action):
        k = self.size
        cells = list(state)
        if action < k * k:
            cells[action] = 1
        nxt = []
        for r in range(k):
            for c in range(k):
                n = sum(cells[rr * k + cc] for rr in range(max(r - 1, 0), min(r + 2, k))
                        for cc in range(max(c - 1, 0), min(c + 2, k))) - cells[r * k + c]
                nxt.append(int(n == 3 or (cells[r * k + c] and n == 2)))
        nxt_t = tuple(nxt)
        return nxt_t, float(sum(nxt_t))


_HEADINGS = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1))
# cost by angle (in 45° steps) between heading and the direction the wind blows *from*:
# 0 = into the wind (dearest), 4 = running before it
_ANGLE_COST = (4.0, 3.0, 2.0, 1.5, 1.0)


@dataclass(frozen=True)
class SailingWind:
    """Deterministic sailing on a ``size × size`` grid (see module docstring).

    Args:
        size: grid side (≥ 2); start (0, 0), goal (size−1, size−1).
        horizon: decisions per episode.
        wind: initial wind index into the 8 headings (the wind blows *from* that heading).
        wind_period: decisions between wind turns.
    """

    size: int = 6
    horizon: int = 15
    wind: int = 2
    wind_period: int = 3

    def __post_init__(self) -> None:
        _check("size", self.size, 2)
        _check("horizon", self.horizon, 1)
        _check("wind_period", self.wind_period, 1)
        if not 0 <= self.wind < 8:
            raise ValueError(f"wind: expected 0..7, got {self.wind}")

    def initial_state(self):
        return (0, 0, self.wind, 0)

    def legal_actions(self, state) -> range:
        return range(8)

    def step(self, state, action):
        x, y, wind, t = state
        goal = self.size - 1
        if x == goal and y == goal:
            return state, 0.0
        dx, dy = _HEADINGS[action]
        angle = min((action - wind) % 8, (wind - action) % 8)
        nx = min(max(x + dx, 0), goal)
        ny = min(max(y + dy, 0), goal)
        t = t + 1
        if t == self.wind_period:
            wind, t = (wind + 1) % 8, 0
        return (nx, ny, wind, t), -_ANGLE_COST[angle]


# Saving (official constants SAVE_REWARD, BORROW_INSTANT_REWARD, BORROW_REPAY_COST)
_SAVE, _BORROW, _REPAY = 1.0, 2.0, 3.0


@dataclass(frozen=True)
class Saving:
    """The Saving MDP of the official code, determinised (module docstring), prices in
    [−p, p] and both waiting times t (the official ``saving`` model with ``p: 4, t: 4`` builds
    ``Model(-p, p, t, t)``).

    State (steps since the last borrow, steps since the last investment, price).  Actions:
    0 save (+1); 1 borrow (+2 now, −3 when the loan falls due t steps later), legal when the
    last loan is at least t steps old; 2 invest (0), legal when the last investment is at least
    t steps old, else 3 sell (+ the current price; the investment can then be renewed at once).
    Every step first advances both counters by one; a new price follows.  Counters are not
    capped (as in the official state, so states with equal dynamics but different counters are
    distinct, and draw different prices).

    Args:
        p: prices range over the integers of [−p, p] (≥ 0).
        t: the waiting time of both a loan and an investment (≥ 1).
        horizon: decisions per episode.
        seed: the determinisation (the official ``seed_offset``); it also fixes the initial
            price, which the official model draws uniformly.
    """

    p: int = 4
    t: int = 4
    horizon: int = 10
    seed: int = 0

    def __post_init__(self) -> None:
        _check("p", self.p, 0)
        _check("t", self.t, 1)
        _check("horizon", self.horizon, 1)
        if not isinstance(self.seed, int):
            raise ValueError(f"seed: expected an integer, got {self.seed!r}")

    def _price(self, *key: int) -> int:
        return _mix(self.seed, *key) % (2 * self.p + 1) - self.p

    def initial_state(self) -> tuple[int, int, int]:
        # -1 never occurs as a counter, so the initial draw is apart from every step's
        return (self.t, self.t, self._price(-1, -1, 0))

    def legal_actions(self, state) -> tuple[int, ...]:
        borrowed, invested, _ = state
        if borrowed >= self.t:
            return (0, 1, 2) if invested >= self.t else (0, 1, 3)
        return (0, 2) if invested >= self.t else (0, 3)

    def step(self, state, action):
        if action not in self.legal_actions(state):
            raise ValueError(f"action: {action!r} is not legal in {state} "
                             f"(legal: {self.legal_actions(state)})")
        borrowed, invested, price = state
        b, i = borrowed + 1, invested + 1
        if action == 0:
            reward = _SAVE
        elif action == 1:
            b, reward = 0, _BORROW
        elif action == 2:
            i, reward = 0, 0.0
        else:
            i, reward = i + self.t + 1, float(price)
        if b == self.t:
            reward -= _REPAY
        return (b, i, self._price(borrowed, invested, price)), reward


def _run_tallies(longest: int) -> list[tuple[int, int, int]]:
    """For a maximal run of n equal stones: how many of its stones the official heuristic
    counts as a two, three and four (its per-stone count is 1 + min(3, stones on one side) +
    min(3, stones on the other))."""
    out = []
    for n in range(longest + 1):
        counts = [1 + min(3, i) + min(3, n - 1 - i) for i in range(n)]
        out.append((counts.count(2), counts.count(3), counts.count(4)))
    return out


# (row step, column step) of the official directions {dx, dy} = {1,0},{0,1},{1,1},{1,-1}
_LINES = ((0, 1), (1, 0), (1, 1), (-1, 1))


@dataclass(frozen=True)
class Connect4:
    """Connect-4 against a fixed one-step-lookahead opponent, as the paper's ``hc4`` MDP.

    The agent (stones 1) moves first; the opponent (stones 2) answers inside the same ``step``,
    so the agent sees a single-agent deterministic MDP.  Reward (official
    ``HeuristicsAsReward``: a player's reward is the change of *its own* heuristic, which
    replaces the win/loss reward): the change of the agent's heuristic over the step, where
    h_p = T2 // 2 + 5·(T3 // 3) + 25·(T4 // 4) and T_k counts, over every stone of p and the
    four line directions, the stones whose count 1 + min(3, p-stones on one side) + min(3,
    on the other) equals k (the official ``heuristicsValue``, integer divisions included; it
    counts a run of 2, 3, 4 once and a run of ≥ 5 as half a four).  A stone never changes the
    other player's runs, so the opponent's move gives the agent 0.

    Opponent (official ``OneStepLookaheadAgent`` with ``deterministic_opponents = 1``): plays the
    column that maximises the change of its own heuristic; ties are broken by a fixed
    pseudo-random order, a function of (``seed``, board, column) (official: 1e-6·U(0, 1) noise
    from a generator seeded with the state's hash; CPython's hash of a tuple of ints does not
    depend on ``PYTHONHASHSEED``).  The game ends when a player has 4 in a
    line (a run ≥ 4) or the board is full (``is_terminal``); the horizon counts the agent's
    decisions.

    Args:
        rows, cols: board size (≥ 4 each: a four must fit; official 6 × 7).
        horizon: agent decisions per episode (official 50 / 200; a 6 × 7 game has ≤ 21).
        seed: the opponent's tie-break order (the official ``opponent_seed``).
    """

    rows: int = 6
    cols: int = 7
    horizon: int = 10
    seed: int = 0

    def __post_init__(self) -> None:
        _check("rows", self.rows, 4)
        _check("cols", self.cols, 4)
        _check("horizon", self.horizon, 1)
        if not isinstance(self.seed, int):
            raise ValueError(f"seed: expected an integer, got {self.seed!r}")
        object.__setattr__(self, "_tallies", _run_tallies(max(self.rows, self.cols)))

    # state: (board, tallies of the agent, tallies of the opponent, game over); board is
    # row-major with row 0 at the top, 0 = empty; tallies = (T2, T3, T4) before the divisions

    def initial_state(self):
        return ((0,) * (self.rows * self.cols), (0, 0, 0), (0, 0, 0), False)

    def is_terminal(self, state) -> bool:
        return state[3]

    def state_from_board(self, board) -> tuple:
        """The state of any position, the agent to move: ``board`` is row-major, row 0 at the
        top, 0 empty, 1 the agent, 2 the opponent (gravity is not checked); the tallies are
        counted from scratch and the game is over if a player has 4 in a line or the board is
        full."""
        board = tuple(board)
        if len(board) != self.rows * self.cols or any(v not in (0, 1, 2) for v in board):
            raise ValueError(f"board: expected {self.rows * self.cols} cells in {{0, 1, 2}}, "
                             f"got {board!r}")
        rows, cols, tab = self.rows, self.cols, self._tallies
        tallies = {1: [0, 0, 0], 2: [0, 0, 0]}
        over = all(board[:cols])

        def inside(r, c):
            return 0 <= r < rows and 0 <= c < cols

        for dr, dc in _LINES:
            for r in range(rows):
                for c in range(cols):
                    who = board[r * cols + c]
                    if not who or (inside(r - dr, c - dc)
                                   and board[(r - dr) * cols + c - dc] == who):
                        continue  # empty, or not the first stone of its run
                    n, rr, cc = 0, r, c
                    while inside(rr, cc) and board[rr * cols + cc] == who:
                        n, rr, cc = n + 1, rr + dr, cc + dc
                    for k in range(3):
                        tallies[who][k] += tab[n][k]
                    over = over or n >= 4
        return board, tuple(tallies[1]), tuple(tallies[2]), over

    def legal_actions(self, state) -> tuple[int, ...]:
        if state[3]:
            return ()
        board = state[0]
        return tuple(c for c in range(self.cols) if not board[c])

    @staticmethod
    def heuristic(tallies: tuple[int, int, int]) -> int:
        """h = T2 // 2 + 5·(T3 // 3) + 25·(T4 // 4) (official ``heuristicsValue``)."""
        return tallies[0] // 2 + 5 * (tallies[1] // 3) + 25 * (tallies[2] // 4)

    def _effect(self, board, col: int, who: int) -> tuple[int, tuple[int, int, int], bool]:
        """The cell a stone of ``who`` dropped in ``col`` lands on, the change of ``who``'s
        tallies, and whether it completes a run of 4 or more."""
        rows, cols, tab = self.rows, self.cols, self._tallies
        r = rows - 1
        while board[r * cols + col]:
            r -= 1
        d2 = d3 = d4 = 0
        wins = False
        for dr, dc in _LINES:
            a = 0
            rr, cc = r + dr, col + dc
            while 0 <= rr < rows and 0 <= cc < cols and board[rr * cols + cc] == who:
                a += 1
                rr, cc = rr + dr, cc + dc
            b = 0
            rr, cc = r - dr, col - dc
            while 0 <= rr < rows and 0 <= cc < cols and board[rr * cols + cc] == who:
                b += 1
                rr, cc = rr - dr, cc - dc
            n = a + b + 1
            ta, tb, tn = tab[a], tab[b], tab[n]
            d2 += tn[0] - ta[0] - tb[0]
            d3 += tn[1] - ta[1] - tb[1]
            d4 += tn[2] - ta[2] - tb[2]
            wins = wins or n >= 4
        return r * cols + col, (d2, d3, d4), wins

    def opponent_move(self, board, tallies) -> int:
        """The one-step-lookahead column of the opponent (stones 2) on ``board`` given its
        ``tallies``: the largest gain of its heuristic, ties in the fixed pseudo-random order."""
        h0 = self.heuristic(tallies)
        key = hash(board)
        best, best_gain, best_tie = -1, None, 0
        for col in range(self.cols):
            if board[col]:
                continue
            _, d, _ = self._effect(board, col, 2)
            gain = self.heuristic((tallies[0] + d[0], tallies[1] + d[1], tallies[2] + d[2])) - h0
            tie = _mix(self.seed, key, col)
            if best_gain is None or gain > best_gain or (gain == best_gain and tie < best_tie):
                best, best_gain, best_tie = col, gain, tie
        return best

    def _play(self, board, tallies, col: int, who: int):
        cell, d, wins = self._effect(board, col, who)
        board = board[:cell] + (who,) + board[cell + 1:]
        tallies = (tallies[0] + d[0], tallies[1] + d[1], tallies[2] + d[2])
        return board, tallies, wins or all(board[:self.cols])

    def step(self, state, action):
        board, mine, theirs, over = state
        if over or not 0 <= action < self.cols or board[action]:
            raise ValueError(f"action: column {action!r} is not legal "
                             f"(legal: {self.legal_actions(state)})")
        board, new_mine, over = self._play(board, mine, action, 1)
        reward = float(self.heuristic(new_mine) - self.heuristic(mine))
        if not over:
            board, theirs, over = self._play(board, theirs, self.opponent_move(board, theirs), 2)
        return (board, new_mine, theirs, over), reward


DOMAINS = {"sysadmin": SysAdmin, "game_of_life": GameOfLife, "sailing_wind": SailingWind,
           "saving": Saving, "connect4": Connect4}
