"""Reproductions of the ``unlearning`` area's papers."""
