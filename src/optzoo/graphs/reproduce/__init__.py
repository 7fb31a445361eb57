"""Reproductions of the ``graphs`` area."""
