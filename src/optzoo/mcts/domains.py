"""Small deterministic domains for KVDA-UCT (ICLR 2026, OpenReview Zk0zZMSAYc), rebuilt by hand
after the paper's determinised IPPC domains; maps are synthetic and small.

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
The Saving domain (p = 4, t = 4) of the paper is not rebuilt (its rules are not in the brief).
"""

from __future__ import annotations

from dataclasses import dataclass


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


DOMAINS = {"sysadmin": SysAdmin, "game_of_life": GameOfLife, "sailing_wind": SailingWind}
