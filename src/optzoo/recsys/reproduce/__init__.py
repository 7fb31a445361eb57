"""Reproductions of the ``recsys`` area's papers."""
