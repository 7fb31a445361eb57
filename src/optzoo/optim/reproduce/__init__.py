"""Reproductions of the ``optim`` area's papers."""
