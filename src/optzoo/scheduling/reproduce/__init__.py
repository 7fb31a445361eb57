"""Reproductions of the scheduling area's papers."""
