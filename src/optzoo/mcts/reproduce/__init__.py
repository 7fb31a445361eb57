"""Reproductions of the ``mcts`` area's papers."""
