"""(ε_a, ε_t)-OGA-UCT: OGA-UCT with approximate ASAP abstractions, the parameter-tuned baseline
of KVDA-UCT (Schmöcker, Dockhorn & Rosenhahn, "Grouping Nodes with Known Value Differences: A
Lossless UCT-based Abstraction Algorithm", ICLR 2026, OpenReview Zk0zZMSAYc; official C++ code
``codebro634/KVDA_UCT``, agent ``oga`` with ``eps_a`` / ``eps_t``, ``smart_reward_handling = 0``).

Official rule (``OgaUtils.cpp``, ``NextDistribution::approxEqual``): a Q-node q matches an
abstract Q-node whose representative is r iff
    |R(q) − R(r)| ≤ ε_a  and  Σ_A |P_q(A) − P_r(A)| ≤ ε_t
(A over abstract successor states; both with a 1e-6 slack).  In a deterministic MDP the L1
distance of two successor distributions is 0 (same abstract successor) or 2, so ε_t < 2 asks
for the same abstract successor and ε_t ≥ 2 ignores the successor.  The paper's deterministic
runs vary ε_a only (999999 = "ignore the reward"); with ε_a = ε_t = 0 the rule is ASAP's.
States are grouped as in OGA (the same set of abstract Q-nodes; ε does not enter).  Grouped
Q-nodes share *plain* statistics (no offsets): every member reads the mean return of the group.

Our reading of the matching (the relation is not transitive, so the order matters):

* each abstract Q-node has a reference reward, that of the Q-node that founded it (the
  official representative at creation); abstract Q-nodes are bucketed by (depth, abstract
  successor) (by depth alone when ε_t ≥ 2);
* a re-abstracted Q-node joins the *oldest* abstract node of its bucket whose reference reward
  is within ε_a of its own, else founds a new one.  Since references never change and nodes
  are only added, the oldest match of a reward never changes: two Q-nodes with equal rewards
  and equal (ε-)abstract successors always end in one node, so the ε-abstraction is a
  coarsening of OGA's on a fully abstracted tree, and with ε_a = ε_t = 0 it *is* OGA's
  partition (same nodes, same statistics bit for bit);
* the official code instead re-checks a staged node against the current representative of its
  abstract node (the next-lowest id once the founder has left) and, when it no longer matches,
  moves it to the nearest match (ties: lowest id) or, for a representative, to the largest
  match; we do not reproduce those path-dependent choices.

Rewards are compared after rounding to 9 decimals, as OGA's keys (official slack: 1e-6).
"""

from __future__ import annotations

from collections.abc import Hashable

from optzoo.mcts.environment import DeterministicEnv
from optzoo.mcts.oga_uct import OGAUCT
from optzoo.mcts.uct import _ROUND

# L1 distance of two different point masses: the largest transition distance
_MAX_TRANS = 2.0


class EpsOGAUCT(OGAUCT):
    """(ε_a, ε_t)-OGA-UCT.

    Args:
        env, iterations, c, recency, seed: as :class:`~optzoo.mcts.uct.UCT`.
        abstract_on_creation, stop_at_transposition, sigma: the search options of
            :class:`~optzoo.mcts.uct.UCT` (keyword only).
        eps_a: ε_a ≥ 0, the largest reward difference within an abstract Q-node.
        eps_t: ε_t ≥ 0, the largest L1 distance of the abstract successor distributions
            (deterministic MDPs: < 2 needs the same abstract successor, ≥ 2 ignores it).
    """

    name = "eps_oga"

    def __init__(self, env: DeterministicEnv, iterations: int = 100, c: float = 1.0,
                 recency: int = 3, seed: int = 0, eps_a: float = 0.0,
                 eps_t: float = 0.0, **options) -> None:
        for label, v in (("eps_a", eps_a), ("eps_t", eps_t)):
            if not (isinstance(v, (int, float)) and v >= 0):
                raise ValueError(f"{label}: expected a number >= 0, got {v!r}")
        self.eps_a, self.eps_t = float(eps_a), float(eps_t)
        super().__init__(env, iterations=iterations, c=c, recency=recency, seed=seed,
                         **options)

    def reset(self) -> None:
        super().reset()
        # bucket -> reference rewards (rounded, raw) of its abstract Q-nodes, oldest first
        self.anchors: dict[Hashable, list[tuple[float, float]]] = {}

    def _q_key(self, qid: int) -> tuple[Hashable, float]:
        child = self.q_child[qid]
        depth = self.s_depth[self.q_parent[qid]]
        bucket = (depth,) if self.eps_t >= _MAX_TRANS else (depth, self.s_abs[child])
        reward = round(self.q_reward[qid], _ROUND)
        refs = self.anchors.setdefault(bucket, [])
        k = next((i for i, (ref, _) in enumerate(refs)
                  if round(abs(reward - ref) - self.eps_a, _ROUND) <= 0), len(refs))
        if k == len(refs):
            refs.append((reward, self.q_reward[qid]))
        # one offset for all members (the founder's reward; OGA's b = R(q) when ε = 0):
        # S_X / N_X + b is then the plain mean return of the group
        return (depth, "Qeps", bucket, k), refs[k][1] + self.s_e[child]
