"""Reproductions of the ``transport`` area's papers."""
