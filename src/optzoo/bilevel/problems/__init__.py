"""Benchmark problems of the bilevel area (closed forms where they exist)."""
