"""Preference vectors λ of the weighted-sum decomposition of Smit et al. (ICLR 2026, OpenReview
YAgOaYedLQ): uniform sets for inference (101 vectors for 2 objectives, 105 for 3 — Das-Dennis
simplex lattices with 100 and 13 partitions) and Dirichlet(1) samples for training (the brief's
*inferred* default, uniform on the simplex).
"""

from __future__ import annotations

import numpy as np
from pymoo.util.ref_dirs import get_reference_directions

# The paper's inference sets: number of objectives -> lattice partitions.
PAPER_PARTITIONS = {2: 100, 3: 13}


def uniform_preferences(n_obj: int, n_partitions: int | None = None) -> np.ndarray:
    """The Das-Dennis lattice {λ ≥ 0, Σλ = 1, λ_i ∈ {0, 1/H, ..., 1}} with H = ``n_partitions``
    (default: the paper's 100 for 2 objectives — 101 vectors — and 13 for 3 — 105 vectors).

    Raises:
        ValueError: ``n_obj`` < 2, or no default partition count for it.
    """
    if not isinstance(n_obj, (int, np.integer)) or n_obj < 2:
        raise ValueError(f"n_obj: expected an int >= 2, got {n_obj!r}")
    if n_partitions is None:
        if n_obj not in PAPER_PARTITIONS:
            raise ValueError(f"n_partitions: no default for {n_obj} objectives, pass one")
        n_partitions = PAPER_PARTITIONS[n_obj]
    if not isinstance(n_partitions, (int, np.integer)) or n_partitions < 1:
        raise ValueError(f"n_partitions: expected a positive int, got {n_partitions!r}")
    dirs = get_reference_directions("das-dennis", n_obj, n_partitions=int(n_partitions))
    # exact lattice values (pymoo divides floats) sorted by the first weight, descending
    dirs = np.round(dirs * n_partitions) / n_partitions
    return dirs[np.lexsort(dirs.T[::-1])[::-1]]


def dirichlet_preferences(n_obj: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size x n_obj`` samples of λ ~ Dirichlet(1, ..., 1)."""
    if not isinstance(n_obj, (int, np.integer)) or n_obj < 2:
        raise ValueError(f"n_obj: expected an int >= 2, got {n_obj!r}")
    if not isinstance(size, (int, np.integer)) or size < 0:
        raise ValueError(f"size: expected a non-negative int, got {size!r}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng: expected a numpy.random.Generator, got {type(rng).__name__}")
    return rng.dirichlet(np.ones(n_obj), size=size)
