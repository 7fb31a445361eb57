"""KVDA-UCT: Schmöcker, Dockhorn & Rosenhahn, "Grouping Nodes with Known Value Differences: A
Lossless UCT-based Abstraction Algorithm" (ICLR 2026, arXiv 2510.25388, OpenReview Zk0zZMSAYc;
official C++ code ``codebro634/KVDA_UCT``, agent ``oga`` with ``smart_reward_handling = 1``).

Known value difference abstractions (the brief's equations in our offset notation, see
:mod:`optzoo.mcts.uct` for the statistics frame):

* Q-nodes: q1 ~ q2 iff their successors lie in the same abstract state A (no reward equality).
  With V*(s') = e(s') + U_A, Q*(q) = R(q) + e(s'_q) + U_A =: b(q) + W_X, so the known difference
  is Q*(q1) − Q*(q2) = b(q1) − b(q2) (the paper's d_Q(q) = Q*(rep) − Q*(q) = b(rep) − b(q), i.e.
  [R(r) − R(q)] + d_V(s'_q) − d_V(s'_r) with d_V(s) = e(rep) − e(s)).
* States: s1 ~ s2 iff both are fully expanded, their children cover the same set of abstract
  Q-nodes, children of one state in the same abstract Q-node X have equal offsets b (else the
  state stays alone), and b_{s2}(X) − b_{s1}(X) is the same constant for every X.  We make the
  key canonical by subtracting c(s) = b_s(X_min) (X_min the smallest abstract id among the
  children): key = {(X, b_s(X) − c(s))}, e(s) = c(s), so V*(s) = c(s) + max_X (b_s(X) − c(s) +
  W_X) = e(s) + U_A.  Terminal states of a depth share one node; partially expanded states
  stay alone (option ``group_partially_expanded_states = 0``).
* Returns G observed at q enter X as G − b(q) and q reads S_X/N_X + b(q): lossless, because
  every member's estimate is its own Q* estimate shifted by a known constant; no parameter.
"""

from __future__ import annotations

from collections.abc import Hashable

from optzoo.mcts.oga_uct import OGAUCT
from optzoo.mcts.uct import _ROUND


class KVDAUCT(OGAUCT):
    """KVDA-UCT.  Arguments as :class:`~optzoo.mcts.uct.UCT`; no extra parameter.

    Example:
        KVDA-UCT also groups Q-nodes whose values differ by a known offset, so its trees
        are more compressed than OGA-UCT's:

        >>> from optzoo.mcts import KVDAUCT, OGAUCT, SysAdmin, exact_values, play_episode
        >>> env = SysAdmin(n=6, horizon=8)
        >>> exact_values(env, env.initial_state(), 0)
        34.0
        >>> kvda = play_episode(KVDAUCT(env, iterations=100, seed=0), env)
        >>> oga = play_episode(OGAUCT(env, iterations=100, seed=0), env)
        >>> kvda["return"], oga["return"]
        (34.0, 34.0)
        >>> bool(kvda["q_ratio"] > oga["q_ratio"] > 1.0)   # ground Q-nodes per abstract node
        True
    """

    name = "kvda"

    def _q_key(self, qid: int) -> tuple[Hashable, float]:
        child = self.q_child[qid]
        depth = self.s_depth[self.q_parent[qid]]
        return (depth, "Q", self.s_abs[child]), self.q_reward[qid] + self.s_e[child]

    def _state_key(self, sid: int) -> tuple[Hashable, float]:
        depth = self.s_depth[sid]
        if self.s_term[sid]:
            return (depth, "terminal"), 0.0
        if self.s_untried[sid] or not self.s_children[sid]:
            return ("s", sid), 0.0
        offsets: dict[int, float] = {}
        for q in self.s_children[sid]:
            x, b = self.q_abs[q], round(self.q_b[q], _ROUND)
            if offsets.setdefault(x, b) != b:
                return ("s", sid), 0.0  # two children in one X with different offsets
        c = offsets[min(offsets)]
        key = frozenset((x, round(b - c, _ROUND)) for x, b in offsets.items())
        return (depth, "S", key), c
