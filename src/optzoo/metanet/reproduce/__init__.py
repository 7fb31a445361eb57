"""Reproductions of the ``metanet`` area's papers."""
