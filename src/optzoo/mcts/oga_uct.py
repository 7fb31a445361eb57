"""OGA-UCT: UCT with ASAP abstractions built on the fly (Anand et al., IJCAI 2015 / ICAPS 2016),
the baseline of KVDA-UCT (ICLR 2026, OpenReview Zk0zZMSAYc) in the official code's ``oga``
agent with ``smart_reward_handling = 0``.

ASAP (exact, ε = 0) on a deterministic DAG, per depth:
* Q-nodes q1 ~ q2 iff R(q1) = R(q2) and their successors lie in the same abstract state;
* states s1 ~ s2 iff both are fully expanded and their children cover the same *set* of abstract
  Q-nodes; terminal states of a depth form one abstract node; partially expanded (or unexpanded)
  states stay alone.
All offsets are 0: grouped nodes have equal optimal values, statistics are plain sums.
"""

from __future__ import annotations

from collections.abc import Hashable

from optzoo.mcts.uct import _ROUND, UCT


class OGAUCT(UCT):
    """OGA-UCT (ASAP abstractions, K-recency re-abstraction, dynamic σ).  Arguments as
    :class:`~optzoo.mcts.uct.UCT`.

    Example:
        Any deterministic MDP with hashable states plugs in: ``initial_state``,
        ``legal_actions``, ``step(state, action) -> (state, reward)`` and a ``horizon``:

        >>> from dataclasses import dataclass
        >>> from optzoo.mcts import OGAUCT, exact_values, play_episode
        >>> @dataclass(frozen=True)
        ... class Shop:                             # sell once, or wait while the price rises
        ...     horizon: int = 6
        ...     def initial_state(self):
        ...         return (1, False)               # (price, sold)
        ...     def legal_actions(self, state):
        ...         return (0, 1)                   # wait, sell
        ...     def step(self, state, action):
        ...         price, sold = state
        ...         if sold or action == 0:
        ...             return (min(price + 1, 4), sold), 0.0
        ...         return (price, True), float(price)
        >>> env = Shop()
        >>> exact_values(env, env.initial_state(), 0)
        4.0
        >>> out = play_episode(OGAUCT(env, iterations=200, seed=0), env)
        >>> out["return"], bool(out["q_ratio"] > 1.0)   # equivalent Q-nodes share statistics
        (4.0, True)
    """

    name = "oga"

    def _q_key(self, qid: int) -> tuple[Hashable, float]:
        child = self.q_child[qid]
        depth = self.s_depth[self.q_parent[qid]]
        b = self.q_reward[qid] + self.s_e[child]
        return (depth, "Q", round(self.q_reward[qid], _ROUND), self.s_abs[child]), b

    def _state_key(self, sid: int) -> tuple[Hashable, float]:
        depth = self.s_depth[sid]
        if self.s_term[sid]:
            return (depth, "terminal"), 0.0
        if self.s_untried[sid] or not self.s_children[sid]:
            return ("s", sid), 0.0
        return (depth, "S", frozenset(self.q_abs[q] for q in self.s_children[sid])), 0.0
