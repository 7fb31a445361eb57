"""Reproductions of the ``imaging`` area's papers."""
