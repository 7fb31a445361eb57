"""Reproductions of the ``nas`` area's papers."""
