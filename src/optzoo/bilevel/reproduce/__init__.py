"""Reproductions of the ``bilevel`` area's papers."""
