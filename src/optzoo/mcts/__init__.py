"""Monte Carlo tree search with state abstractions: plain UCT, OGA-UCT (ASAP), (ε_a, ε_t)-OGA-UCT
and KVDA-UCT (Schmöcker, Dockhorn & Rosenhahn, ICLR 2026, OpenReview Zk0zZMSAYc) on
deterministic MDPs (the package's domains, or a copyable gymnasium env through
:class:`GymDeterministicEnv`)."""

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
