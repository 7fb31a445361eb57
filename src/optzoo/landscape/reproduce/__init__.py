"""Reproductions of the ``landscape`` area's papers."""
