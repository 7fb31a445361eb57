"""Monte Carlo tree search with state abstractions: plain UCT, OGA-UCT (ASAP), (ε_a, ε_t)-OGA-UCT
and KVDA-UCT (Schmöcker, Dockhorn & Rosenhahn, ICLR 2026, OpenReview Zk0zZMSAYc) on
deterministic MDPs (the package's domains, or a copyable gymnasium env through
:class:`GymDeterministicEnv`).

Example:
    Each agent searches afresh at every decision of an episode; KVDA-UCT groups more Q-nodes
    into abstract nodes than OGA-UCT, plain UCT none:

    >>> from optzoo.mcts import KVDAUCT, OGAUCT, UCT, SysAdmin, exact_values, play_episode
    >>> env = SysAdmin(n=4, horizon=5)               # 4 machines on a ring, reboot one per step
    >>> exact_values(env, env.initial_state(), 0)    # V* by dynamic programming
    11.25
    >>> for agent in (UCT(env, iterations=100, seed=0), OGAUCT(env, iterations=100, seed=0),
    ...               KVDAUCT(env, iterations=100, seed=0)):
    ...     out = play_episode(agent, env)
    ...     print(agent.name, out["return"], f"Q-nodes per abstract node {out['q_ratio']:.2f}")
    uct 11.25 Q-nodes per abstract node 1.00
    oga 11.25 Q-nodes per abstract node 1.38
    kvda 11.25 Q-nodes per abstract node 1.58
"""

from optzoo.mcts.domains import DOMAINS, Connect4, GameOfLife, SailingWind, Saving, SysAdmin
from optzoo.mcts.environment import DeterministicEnv, check_env, exact_values, terminal
from optzoo.mcts.eps_oga_uct import EpsOGAUCT
from optzoo.mcts.gym_env import GymDeterministicEnv, GymState, observation_key
from optzoo.mcts.kvda_uct import KVDAUCT
from optzoo.mcts.oga_uct import OGAUCT
from optzoo.mcts.uct import UCT, RandomAgent, play_episode

__all__ = [
    "DOMAINS",
    "KVDAUCT",
    "OGAUCT",
    "UCT",
    "Connect4",
    "DeterministicEnv",
    "EpsOGAUCT",
    "GameOfLife",
    "GymDeterministicEnv",
    "GymState",
    "RandomAgent",
    "SailingWind",
    "Saving",
    "SysAdmin",
    "check_env",
    "exact_values",
    "observation_key",
    "play_episode",
    "terminal",
]
