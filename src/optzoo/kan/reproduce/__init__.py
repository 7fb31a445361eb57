"""Reproductions of the ``kan`` area's papers."""
