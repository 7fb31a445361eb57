"""Reproductions of the bo area."""
