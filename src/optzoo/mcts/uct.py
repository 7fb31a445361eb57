"""UCT on a per-depth transposition DAG: the search skeleton shared by plain UCT, OGA-UCT,
(ε_a, ε_t)-OGA-UCT and KVDA-UCT (Schmöcker, Dockhorn & Rosenhahn, "Grouping Nodes with Known
Value Differences: A Lossless UCT-based Abstraction Algorithm", ICLR 2026, OpenReview
Zk0zZMSAYc; official C++ code ``codebro634/KVDA_UCT``, agent ``oga``).

Loop of one iteration (the brief's "search loop", the same for the four agents, which differ
only in the two abstraction hooks ``_q_key`` / ``_state_key``), as the official ``OgaAgent.cpp``
/ ``OgaTree.cpp`` run it:

1. selection from the root by UCB on *abstract* statistics,
   score(a) = V̄(q_a) + C·σ·sqrt(ln N(s) / N_abs(q_a)), N(s) = Σ_a N_abs(q_a), plus a tiny
   random tie-break; σ is the dynamic exploration scale, the population standard deviation of
   the *ground* Q-nodes' own mean returns (each visited Q-node's ΣG_q / N_q, not the shared
   estimate), and 0 while no Q-node has been visited (official: sqrt(max(0, E[q²] − E[q]²))
   over the running sums of ``backup``); it is computed once per iteration (no backup happens
   during a descent, so the official per-call value is the same);
   one untried action (random order) is expanded per visit; states are identified by
   (depth, state) (transpositions); when the expanded action leads to a state already in the
   tree, the descent *continues* from it (official ``treePolicy``), and it ends at a new state
   or a terminal one;
2. one uniformly random rollout to the horizon (or an earlier terminal state), undiscounted; the
   return from each Q-node on the path is recorded;
3. each Q-node on the path increments a recency counter; at ``recency`` (K = 3) it is staged and
   the abstraction is updated bottom-up by depth (Q-nodes, then their parent states, then the
   parents' parents ... to the root); a Q-node's recency counter restarts whenever it is
   re-abstracted (official ``resetRecencyCount``), whether K or a changed successor staged it;
   a new Q-node starts in an abstract node of its own and joins its group only when it is
   first re-abstracted (official ``findOrCreateQState``: ``new OgaAbstractQStateNode``);
4. after ``iterations`` iterations the agent acts greedily on the value estimates; a new tree is
   built every decision.

The rules of this module before issue 22 are kept as options (:data:`EAGER`): a new Q-node
abstracted at creation (``abstract_on_creation``), a descent that ends at the first expansion
even into an existing state (``stop_at_transposition``), and σ over the shared estimates V̄(q)
with 1 as fallback (``sigma="shared"``).  (The restart of the recency counter on every
re-abstraction, also official, is not an option: before issue 22 only K restarted it.)

Statistics frame (our formulation, equal to the paper's in every value read).  Every abstract
Q-node X has one abstract successor A; the Q* of each member q is Q*(q) = b(q) + W_X with the
*known* offset b(q) = R(q) + e(s'_q) (s'_q the successor, e the state offset below) and W_X shared.
X stores (N_X, S_X) with S_X = Σ (G − b(q)) over returns G observed at members q; q reads
V̄(q) = S_X / N_X + b(q).  The paper stores returns in the representative's frame, G + d_Q(q) with
d_Q(q) = Q*(rep) − Q*(q) = b(rep) − b(q), and reads ΣG/N − d_Q(q): the two sums differ by the
constant b(rep)·N_X, so every read is identical, and no correction is needed when a
representative leaves (the brief's pitfall).  States likewise satisfy V*(s) = e(s) + U_A for all
members s of the abstract state A.  Plain UCT puts every node in its own group with b = e = 0;
(ε_a, ε_t)-OGA gives all members of a group one b (plain shared statistics, lossy for ε > 0).
A terminal state (the horizon, or an environment's ``is_terminal``) has no actions.

Choices where the brief is silent (INFERRED): a state's change restages *all* its parent Q-nodes
(the DAG may give it several; official ``getParents``); offsets are compared after rounding to 9
decimals (the C++ code compares doubles with a 1e-5 slack); a state is also staged when one of
its actions is expanded (the official code stages it only through a changed child; a state whose
new child is still alone cannot match another state, so this changes nothing but the cost).
"""

from __future__ import annotations

import math
from collections.abc import Hashable

import numpy as np

from optzoo.checks import check_real
from optzoo.mcts.environment import DeterministicEnv, check_env, terminal

_ROUND = 9
_TIE = 1e-9
_SIGMAS = ("ground", "shared")

#: the search rules of this module before issue 22 (not the official code's): pass as
#: ``UCT(env, **EAGER)`` (any of the four agents) to rerun them
EAGER = {"abstract_on_creation": True, "stop_at_transposition": True, "sigma": "shared"}


class UCT:
    """Plain UCT with the dynamic exploration scale on a transposition DAG.

    Args:
        env: a :class:`~optzoo.mcts.environment.DeterministicEnv`.
        iterations: search iterations per decision (≥ 1).
        c: exploration constant C (> 0; multiplied by the dynamic scale σ).
        recency: K, visits of a Q-node between two re-abstractions (≥ 1).
        seed: seed of the search's random numbers (expansion order, rollouts, ties).
        abstract_on_creation: False (official): a new Q-node starts in an abstract node of
            its own until it is first re-abstracted (K visits, or a changed successor); True
            (the rule before issue 22): it joins its group when it is created.
        stop_at_transposition: False (official): an expansion into a state already in the
            tree continues the descent from it; True (before issue 22): it ends the descent.
        sigma: the dynamic scale σ: ``"ground"`` (official) the standard deviation of the
            visited ground Q-nodes' own mean returns, 0 before any visit; ``"shared"`` (before
            issue 22) that of the shared estimates V̄(q), 1 when it is 0 or undefined.

    Example:
        One search from a state returns an action; ``play_episode`` searches at every step:

        >>> from optzoo.mcts import UCT, SysAdmin, exact_values, play_episode
        >>> env = SysAdmin(n=4, horizon=5)
        >>> agent = UCT(env, iterations=100, seed=0)
        >>> agent.search(env.initial_state(), 0) in env.legal_actions(env.initial_state())
        True
        >>> agent.compression()["q_ratio"]          # plain UCT: no abstraction
        1.0
        >>> play_episode(agent, env)["return"] == exact_values(env, env.initial_state(), 0)
        True
    """

    name = "uct"

    def __init__(self, env: DeterministicEnv, iterations: int = 100, c: float = 1.0,
                 recency: int = 3, seed: int = 0, *, abstract_on_creation: bool = False,
                 stop_at_transposition: bool = False, sigma: str = "ground") -> None:
        check_env(env)
        if not isinstance(iterations, int) or iterations < 1:
            raise ValueError(f"iterations: expected an integer >= 1, got {iterations!r}")
        check_real("c", c, low=0.0, low_open=True)
        if not isinstance(recency, int) or recency < 1:
            raise ValueError(f"recency: expected an integer >= 1, got {recency!r}")
        for label, flag in (("abstract_on_creation", abstract_on_creation),
                            ("stop_at_transposition", stop_at_transposition)):
            if not isinstance(flag, bool):
                raise TypeError(f"{label}: expected a bool, got {flag!r}")
        if sigma not in _SIGMAS:
            raise ValueError(f"sigma: expected one of {_SIGMAS}, got {sigma!r}")
        self.env, self.iterations, self.c, self.recency = env, iterations, float(c), recency
        self.abstract_on_creation = abstract_on_creation
        self.stop_at_transposition = stop_at_transposition
        self.sigma = sigma
        # looked up once: the rollout calls it every step
        self._env_terminal = getattr(env, "is_terminal", None)
        self.rng = np.random.default_rng(seed)
        self.reset()

    # -- tree storage ----------------------------------------------------------------------

    def reset(self) -> None:
        """Drop the tree (a new one is built every decision)."""
        # states
        self.s_env: list[Hashable] = []
        self.s_depth: list[int] = []
        self.s_term: list[bool] = []
        self.s_children: list[list[int]] = []
        self.s_untried: list[list[int]] = []
        self.s_parents: list[list[int]] = []
        self.s_abs: list[int] = []
        self.s_e: list[float] = []
        self.table: dict[tuple[int, Hashable], int] = {}
        # ground Q-nodes
        self.q_parent: list[int] = []
        self.q_action: list[int] = []
        self.q_reward: list[float] = []
        self.q_child: list[int] = []
        self.q_n: list[int] = []
        self.q_s: list[float] = []
        self.q_abs: list[int] = []
        self.q_b: list[float] = []
        self.q_recent: list[int] = []
        # abstract nodes (Q and state ids share one interning table; stats used for Q only)
        self.abs_ids: dict[Hashable, int] = {}
        self.abs_n: list[int] = []
        self.abs_s: list[float] = []

    def _intern(self, key: Hashable) -> int:
        idx = self.abs_ids.get(key)
        if idx is None:
            idx = self.abs_ids[key] = len(self.abs_n)
            self.abs_n.append(0)
            self.abs_s.append(0.0)
        return idx

    def _state(self, env_state: Hashable, depth: int) -> int:
        key = (depth, env_state)
        sid = self.table.get(key)
        if sid is not None:
            return sid
        sid = self.table[key] = len(self.s_env)
        self.s_env.append(env_state)
        self.s_depth.append(depth)
        term = terminal(self.env, env_state, depth)
        self.s_term.append(term)
        self.s_children.append([])
        untried = [] if term else list(self.env.legal_actions(env_state))
        if not term and not untried:
            raise ValueError(f"env.legal_actions: expected a non-empty action set at depth "
                             f"{depth}, got none")
        self.rng.shuffle(untried)
        self.s_untried.append(untried)
        self.s_parents.append([])
        key_abs, e = self._state_key(sid)
        self.s_abs.append(self._intern(key_abs))
        self.s_e.append(e)
        return sid

    def _expand(self, sid: int, action: int) -> int:
        nxt, reward = self.env.step(self.s_env[sid], action)
        child = self._state(nxt, self.s_depth[sid] + 1)
        qid = len(self.q_parent)
        self.q_parent.append(sid)
        self.q_action.append(action)
        self.q_reward.append(float(reward))
        self.q_child.append(child)
        self.q_n.append(0)
        self.q_s.append(0.0)
        self.q_recent.append(0)
        # official: an abstract node of its own until the first re-abstraction (any offset is
        # exact for a node alone; 0 as the official representative's distance to itself)
        key, b = self._q_key(qid) if self.abstract_on_creation else (("q", qid), 0.0)
        self.q_abs.append(self._intern(key))
        self.q_b.append(b)
        self.s_children[sid].append(qid)
        self.s_parents[child].append(qid)
        return qid

    # -- abstraction hooks (plain UCT: every node alone) -----------------------------------

    def _q_key(self, qid: int) -> tuple[Hashable, float]:
        """Key of q's abstract node and its offset b(q) (Q*(q) = b(q) + W_X)."""
        return ("q", qid), 0.0

    def _state_key(self, sid: int) -> tuple[Hashable, float]:
        """Key of s's abstract node and its offset e(s) (V*(s) = e(s) + U_A)."""
        return ("s", sid), 0.0

    # -- statistics ------------------------------------------------------------------------

    def value(self, qid: int) -> float:
        """The value estimate V̄(q) = S_X / N_X + b(q) (nan before any visit)."""
        x = self.q_abs[qid]
        n = self.abs_n[x]
        return self.abs_s[x] / n + self.q_b[qid] if n else math.nan

    def _record(self, qid: int, ret: float) -> None:
        self.q_n[qid] += 1
        self.q_s[qid] += ret
        x = self.q_abs[qid]
        self.abs_n[x] += 1
        self.abs_s[x] += ret - self.q_b[qid]

    def _move(self, qid: int, new_abs: int, new_b: float) -> None:
        """q leaves its abstract node and joins ``new_abs`` with offset ``new_b``, taking its
        own returns along (the paper's add/subtract of ΣG_q and offset·N_q)."""
        n, s = self.q_n[qid], self.q_s[qid]
        old = self.q_abs[qid]
        self.abs_n[old] -= n
        self.abs_s[old] -= s - self.q_b[qid] * n
        self.abs_n[new_abs] += n
        self.abs_s[new_abs] += s - new_b * n
        self.q_abs[qid], self.q_b[qid] = new_abs, new_b

    def update_abstractions(self, staged_q: set[int], staged_s: set[int] = frozenset()) -> None:
        """Recompute the abstraction of the staged nodes, bottom-up by depth, propagating every
        change to the parents (a changed Q-node stages its state; a changed state stages all
        its parent Q-nodes)."""
        by_depth_q: dict[int, set[int]] = {}
        by_depth_s: dict[int, set[int]] = {}
        for q in staged_q:
            by_depth_q.setdefault(self.s_depth[self.q_parent[q]], set()).add(q)
        for s in staged_s:
            by_depth_s.setdefault(self.s_depth[s], set()).add(s)
        depth = max([*by_depth_q, *by_depth_s], default=-1)
        while depth >= 0:
            for q in sorted(by_depth_q.pop(depth, ())):
                self.q_recent[q] = 0  # official: every re-abstraction restarts the count
                key, b = self._q_key(q)
                x = self._intern(key)
                if x != self.q_abs[q] or b != self.q_b[q]:
                    self._move(q, x, b)
                    by_depth_s.setdefault(depth, set()).add(self.q_parent[q])
            for s in sorted(by_depth_s.pop(depth, ())):
                key, e = self._state_key(s)
                a = self._intern(key)
                if a != self.s_abs[s] or e != self.s_e[s]:
                    self.s_abs[s], self.s_e[s] = a, e
                    if depth > 0:
                        by_depth_q.setdefault(depth - 1, set()).update(self.s_parents[s])
            depth -= 1

    # -- search ----------------------------------------------------------------------------

    def _sigma(self) -> float:
        """The dynamic exploration scale σ (see the ``sigma`` argument)."""
        if self.sigma == "ground":
            n = np.asarray(self.q_n, dtype=float)
            visited = n > 0
            if not visited.any():
                return 0.0
            return float((np.asarray(self.q_s)[visited] / n[visited]).std())
        if len(self.q_abs) < 2:
            return 1.0
        x = np.asarray(self.q_abs)
        n = np.asarray(self.abs_n, dtype=float)[x]
        vals = np.asarray(self.abs_s)[x] / np.maximum(n, 1.0) + np.asarray(self.q_b)
        sd = float(vals[n > 0].std()) if np.count_nonzero(n) > 1 else 0.0
        return sd if sd > 0 else 1.0

    def _select(self, sid: int, scale: float) -> int:
        children = self.s_children[sid]
        ns = [self.abs_n[self.q_abs[q]] for q in children]
        log_n = math.log(sum(ns))
        noise = self.rng.random(len(children))
        best, best_score = children[0], -math.inf
        for q, n, z in zip(children, ns, noise, strict=True):
            score = self.value(q) + scale * math.sqrt(log_n / n) + _TIE * z
            if score > best_score:
                best, best_score = q, score
        return best

    def _rollout(self, env_state: Hashable, depth: int) -> float:
        total = 0.0
        done = self._env_terminal
        while depth < self.env.horizon and not (done is not None and done(env_state)):
            actions = self.env.legal_actions(env_state)
            env_state, r = self.env.step(env_state, actions[self.rng.integers(len(actions))])
            total += r
            depth += 1
        return total

    def _descend(self, root: int, scale: float) -> tuple[list[int], int, set[int]]:
        """Selection and expansion from ``root``: the Q-nodes of the path, the leaf state (a
        new one or a terminal one; with ``stop_at_transposition`` also the first expanded
        one) and the states whose actions were expanded."""
        path: list[int] = []
        sid = root
        staged_s: set[int] = set()
        while not self.s_term[sid]:
            if self.s_untried[sid]:
                known = len(self.s_env)
                q = self._expand(sid, self.s_untried[sid].pop())
                staged_s.add(sid)
                path.append(q)
                sid = self.q_child[q]
                if self.stop_at_transposition or len(self.s_env) > known:
                    break  # a new state is the leaf (official: a known one is descended)
                continue
            q = self._select(sid, scale)
            path.append(q)
            sid = self.q_child[q]
        return path, sid, staged_s

    def iterate(self, root: int) -> None:
        """One selection–expansion–rollout–backup–re-abstraction iteration from ``root``."""
        path, sid, staged_s = self._descend(root, self.c * self._sigma())
        ret = self._rollout(self.s_env[sid], self.s_depth[sid])
        staged_q: set[int] = set()
        for q in reversed(path):
            ret += self.q_reward[q]
            self._record(q, ret)
            self.q_recent[q] += 1
            if self.q_recent[q] >= self.recency:
                staged_q.add(q)  # the count restarts in update_abstractions
        self.update_abstractions(staged_q, staged_s)

    def search(self, env_state: Hashable, depth: int = 0) -> int:
        """Build a new tree at ``env_state`` (decision ``depth`` of the episode), run the
        iterations and return the greedy action on the value estimates."""
        if not 0 <= depth < self.env.horizon:
            raise ValueError(f"depth: expected 0 <= depth < horizon={self.env.horizon}, "
                             f"got {depth}")
        self.reset()
        root = self._state(env_state, depth)
        if self.s_term[root]:
            raise ValueError("env_state: expected a non-terminal state to search from")
        for _ in range(self.iterations):
            self.iterate(root)
        children = self.s_children[root]
        vals = np.array([self.value(q) for q in children])
        vals = np.where(np.isnan(vals), -np.inf, vals)
        best = np.flatnonzero(vals == vals.max())
        return self.q_action[children[int(self.rng.choice(best))]]

    def compression(self) -> dict[str, float]:
        """Ground / abstract node counts of the current tree (Q-nodes and non-terminal states)
        and the fraction of Q-nodes that share their abstract node with another one."""
        nq = len(self.q_abs)
        sizes: dict[int, int] = {}
        for x in self.q_abs:
            sizes[x] = sizes.get(x, 0) + 1
        states = [s for s in range(len(self.s_env)) if not self.s_term[s]]
        n_sabs = len({self.s_abs[s] for s in states})
        return {"q_ground": float(nq), "q_abstract": float(len(sizes)),
                "q_ratio": nq / max(len(sizes), 1),
                "s_ratio": len(states) / max(n_sabs, 1),
                "q_grouped": sum(v for v in sizes.values() if v > 1) / max(nq, 1)}

    def expand_all(self, env_state: Hashable, depth: int = 0) -> int:
        """Expand the whole DAG below ``env_state`` (no statistics) and abstract every node;
        returns the root id.  For tests and small instances."""
        self.reset()
        root = self._state(env_state, depth)
        stack = [root]
        while stack:
            sid = stack.pop()
            while self.s_untried[sid]:
                q = self._expand(sid, self.s_untried[sid].pop())
                child = self.q_child[q]
                if len(self.s_parents[child]) == 1:
                    stack.append(child)
        self.update_abstractions(set(range(len(self.q_abs))), set(range(len(self.s_env))))
        return root


class RandomAgent:
    """Uniformly random actions (the brief's random baseline)."""

    name = "random"

    def __init__(self, env: DeterministicEnv, seed: int = 0, **_: object) -> None:
        check_env(env)
        self.env, self.rng = env, np.random.default_rng(seed)

    def search(self, env_state: Hashable, depth: int = 0) -> int:
        actions = self.env.legal_actions(env_state)
        return actions[self.rng.integers(len(actions))]


def play_episode(agent, env: DeterministicEnv) -> dict[str, float]:
    """Run one episode of ``agent`` (anything with ``search(state, depth) -> action``) from the
    initial state to the horizon (or an earlier terminal state); returns the undiscounted
    return and, for tree agents, the mean compression of the trees built at each decision.

    Example:
        >>> from optzoo.mcts import UCT, SysAdmin, play_episode
        >>> env = SysAdmin(n=3, horizon=4)
        >>> out = play_episode(UCT(env, iterations=20), env)
        >>> sorted(out)                              # the return, and the trees' compression
        ['q_abstract', 'q_ground', 'q_grouped', 'q_ratio', 'return', 's_ratio']
    """
    if not callable(getattr(agent, "search", None)):
        raise TypeError(f"agent: expected an object with a search(state, depth) -> action "
                        f"method (e.g. UCT(env)), got {type(agent).__name__}")
    check_env(env)
    state, total = env.initial_state(), 0.0
    comp: dict[str, list[float]] = {}
    for depth in range(env.horizon):
        if terminal(env, state, depth):
            break
        action = agent.search(state, depth)
        if hasattr(agent, "compression"):
            for k, v in agent.compression().items():
                comp.setdefault(k, []).append(v)
        state, r = env.step(state, action)
        total += r
    return {"return": total, **{k: float(np.mean(v)) for k, v in comp.items()}}
