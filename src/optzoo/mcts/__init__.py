"""Monte Carlo tree search with state abstractions: plain UCT, OGA-UCT (ASAP) and KVDA-UCT
(Schmöcker, Dockhorn & Rosenhahn, ICLR 2026, OpenReview Zk0zZMSAYc) on deterministic MDPs."""

from optzoo.mcts.domains import DOMAINS, GameOfLife, SailingWind, SysAdmin
from optzoo.mcts.environment import DeterministicEnv, check_env, exact_values
from optzoo.mcts.kvda_uct import KVDAUCT
from optzoo.mcts.oga_uct import OGAUCT
from optzoo.mcts.uct import UCT, RandomAgent, play_episode

__all__ = [
    "DOMAINS",
    "KVDAUCT",
    "OGAUCT",
    "UCT",
    "DeterministicEnv",
    "GameOfLife",
    "RandomAgent",
    "SailingWind",
    "SysAdmin",
    "check_env",
    "exact_values",
    "play_episode",
]
