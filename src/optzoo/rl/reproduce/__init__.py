"""Reproductions of the rl area."""
