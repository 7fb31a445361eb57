"""Rating data of the ``recsys`` area: MovieLens-100K read from the files the ``recbole`` wheel
ships (``recbole/dataset_example/ml-100k/``), a synthetic genre-structured generator used when
that package is absent, the per-user temporal split and the genre-Jaccard item affinity S of
Zhou et al. (ICLR 2026, OpenReview cuzWopwoZG, §3).

``recbole`` is never imported (its declared dependencies are heavy and pinned): its directory is
located with :func:`importlib.util.find_spec`, which reads the package's location without running
it, and the tab-separated atomic files are parsed here.  ``OPTZOO_DATA`` (or an explicit
``path``) may point at a copy instead: a folder holding ``ml-100k.inter`` and ``ml-100k.item``,
or holding ``ml-100k/`` with them.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ML100K_FILES = ("ml-100k.inter", "ml-100k.item")


@dataclass(frozen=True)
class RatingsData:
    """Explicit ratings with item genres.

    Args:
        users: ``N`` user indices in ``0..n_users-1``.
        items: ``N`` item indices in ``0..n_items-1``.
        ratings: ``N`` ratings (MovieLens: 1..5).
        timestamps: ``N`` times (any monotone unit).
        item_genres: ``n_items x n_genres`` boolean genre membership.
        genre_names: the genres' names.
        source: ``"ml-100k"`` or ``"synthetic"``.
    """

    users: np.ndarray
    items: np.ndarray
    ratings: np.ndarray
    timestamps: np.ndarray
    item_genres: np.ndarray
    genre_names: tuple[str, ...]
    source: str

    @property
    def n_users(self) -> int:
        return int(self.users.max()) + 1

    @property
    def n_items(self) -> int:
        return int(self.item_genres.shape[0])


def movielens_100k_dir(path: str | os.PathLike | None = None) -> Path | None:
    """The folder holding MovieLens-100K's atomic files, or ``None`` when none is found.

    Looks at ``path`` (or ``$OPTZOO_DATA``), then inside the installed ``recbole`` package
    without importing it.
    """
    candidates: list[Path] = []
    root = path if path is not None else os.environ.get("OPTZOO_DATA")
    if root:
        candidates += [Path(root), Path(root) / "ml-100k"]
    spec = importlib.util.find_spec("recbole") if path is None else None
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            candidates.append(Path(loc) / "dataset_example" / "ml-100k")
    for c in candidates:
        if all((c / f).is_file() for f in ML100K_FILES):
            return c
    return None


def _read_atomic(path: Path) -> tuple[list[str], list[list[str]]]:
    """A RecBole atomic file: a header ``name:type`` per column, then tab-separated rows."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        header = fh.readline().rstrip("\n").split("\t")
        names = [h.split(":")[0] for h in header]
        rows = [line.rstrip("\n").split("\t") for line in fh if line.strip()]
    for i, r in enumerate(rows):
        if len(r) != len(names):
            raise ValueError(f"{path.name}: line {i + 2} has {len(r)} fields, expected "
                             f"{len(names)} ({', '.join(names)})")
    return names, rows


def _column(path: Path, names: list[str], want: str) -> int:
    if want not in names:
        raise ValueError(f"{path.name}: expected a column {want!r}, got {names}")
    return names.index(want)


def load_movielens_100k(path: str | os.PathLike | None = None) -> RatingsData:
    """MovieLens-100K (943 users, 1,682 movies, 100,000 ratings, 19 genres + "unknown").

    Args:
        path: a folder with ``ml-100k.inter`` and ``ml-100k.item`` (default: ``$OPTZOO_DATA`` or
            the installed ``recbole`` package's copy).

    Raises:
        FileNotFoundError: no copy found (install ``recbole==1.2.1 --no-deps`` or pass ``path``).
        ValueError: a malformed file.
    """
    folder = movielens_100k_dir(path)
    if folder is None:
        where = f"in {path}" if path is not None else "($OPTZOO_DATA unset or without it; " \
            "recbole not installed: pip install --no-deps recbole==1.2.1)"
        raise FileNotFoundError(f"path: MovieLens-100K files {ML100K_FILES} not found {where}")
    inter = folder / "ml-100k.inter"
    names, rows = _read_atomic(inter)
    cu, ci, cr, ct = (_column(inter, names, c)
                      for c in ("user_id", "item_id", "rating", "timestamp"))
    item_file = folder / "ml-100k.item"
    inames, irows = _read_atomic(item_file)
    ii, ig = _column(item_file, inames, "item_id"), _column(item_file, inames, "class")
    raw_items = sorted({r[ii] for r in irows} | {r[ci] for r in rows}, key=_id_key)
    item_index = {raw: j for j, raw in enumerate(raw_items)}
    raw_users = sorted({r[cu] for r in rows}, key=_id_key)
    user_index = {raw: j for j, raw in enumerate(raw_users)}
    genre_sets = {r[ii]: r[ig].split() for r in irows}
    genres = sorted({g for gs in genre_sets.values() for g in gs})
    gindex = {g: j for j, g in enumerate(genres)}
    item_genres = np.zeros((len(raw_items), len(genres)), dtype=bool)
    for raw, gs in genre_sets.items():
        for g in gs:
            item_genres[item_index[raw], gindex[g]] = True
    try:
        ratings = np.array([float(r[cr]) for r in rows])
        times = np.array([float(r[ct]) for r in rows])
    except ValueError as e:
        raise ValueError(f"{inter.name}: non-numeric rating or timestamp ({e})") from None
    return RatingsData(
        users=np.array([user_index[r[cu]] for r in rows], dtype=np.int64),
        items=np.array([item_index[r[ci]] for r in rows], dtype=np.int64),
        ratings=ratings, timestamps=times, item_genres=item_genres,
        genre_names=tuple(genres), source="ml-100k")


def _id_key(raw: str):
    return (0, int(raw), raw) if raw.isdigit() else (1, 0, raw)


def synthetic_ratings(n_users: int = 300, n_items: int = 500, n_genres: int = 12,
                      dim: int = 8, density: float = 0.05, seed: int = 0) -> RatingsData:
    """A genre-structured latent-factor rating set (the fallback when MovieLens is absent).

    Items get 1–3 genres; an item's latent vector is the mean of its genres' centres plus noise,
    and each user has a preferred genre mix, so that a relevance-only model recommends items of
    few genres (the filter bubble the paper targets).  Which pairs are observed follows a Zipf
    item popularity times the user's affinity; ratings are 1..5, rounded from the latent score.

    Args:
        n_users, n_items, n_genres, dim: sizes.
        density: expected share of observed pairs (each user still gets at least 10).
        seed: the generator's seed.
    """
    for name, v, lo in (("n_users", n_users, 2), ("n_items", n_items, 20),
                        ("n_genres", n_genres, 2), ("dim", dim, 1)):
        if v < lo:
            raise ValueError(f"{name}: expected an integer >= {lo}, got {v}")
    if not 0 < density < 1:
        raise ValueError(f"density: expected a number in (0, 1), got {density}")
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_genres, dim))
    item_genres = np.zeros((n_items, n_genres), dtype=bool)
    for j in range(n_items):
        item_genres[j, rng.choice(n_genres, size=rng.integers(1, 4), replace=False)] = True
    v = item_genres @ centres / item_genres.sum(1, keepdims=True) + 0.5 * rng.normal(
        size=(n_items, dim))
    pref = rng.dirichlet(np.full(n_genres, 0.3), size=n_users)
    u = pref @ centres + 0.5 * rng.normal(size=(n_users, dim))
    latent = u @ v.T / np.sqrt(dim)
    popularity = 1.0 / np.arange(1, n_items + 1) ** 0.8
    popularity = popularity[rng.permutation(n_items)]
    logits = np.log(popularity)[None, :] + 1.5 * latent
    per_user = max(10, int(round(density * n_items)))
    users, items = [], []
    for a in range(n_users):
        p = np.exp(logits[a] - logits[a].max())
        chosen = rng.choice(n_items, size=min(per_user, n_items), replace=False, p=p / p.sum())
        users.append(np.full(chosen.size, a))
        items.append(chosen)
    users_a, items_a = np.concatenate(users), np.concatenate(items)
    z = latent[users_a, items_a]
    z = (z - z.mean()) / (z.std() + 1e-12)
    ratings = np.clip(np.round(3.5 + 1.1 * z + 0.5 * rng.normal(size=z.size)), 1, 5)
    return RatingsData(users=users_a.astype(np.int64), items=items_a.astype(np.int64),
                       ratings=ratings, timestamps=rng.permutation(z.size).astype(float),
                       item_genres=item_genres,
                       genre_names=tuple(f"g{i}" for i in range(n_genres)), source="synthetic")


def load_ratings(source: str = "auto", seed: int = 0, **synthetic) -> RatingsData:
    """``"ml-100k"`` (raises when absent), ``"synthetic"``, or ``"auto"`` (MovieLens-100K when a
    copy is found, else the synthetic set)."""
    if source not in ("auto", "ml-100k", "synthetic"):
        raise ValueError(f"source: expected 'auto', 'ml-100k' or 'synthetic', got {source!r}")
    if source == "ml-100k" or (source == "auto" and movielens_100k_dir() is not None):
        return load_movielens_100k()
    return synthetic_ratings(seed=seed, **synthetic)


def temporal_split(data: RatingsData, test_fraction: float = 0.2) -> np.ndarray:
    """Boolean mask of test ratings: each user's latest ``test_fraction`` of ratings (at least
    one; a user with a single rating keeps it in training).  Ties in time keep file order."""
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction: expected a number in (0, 1), got {test_fraction}")
    test = np.zeros(data.users.size, dtype=bool)
    order = np.lexsort((np.arange(data.users.size), data.timestamps, data.users))
    users_sorted = data.users[order]
    bounds = np.flatnonzero(np.diff(users_sorted)) + 1
    for grp in np.split(order, bounds):
        n = grp.size
        if n < 2:
            continue
        n_test = max(1, int(round(test_fraction * n)))
        test[grp[n - n_test:]] = True
    return test


def genre_jaccard(item_genres: np.ndarray) -> np.ndarray:
    """S_ij = |G_i ∩ G_j| / |G_i ∪ G_j| (0 when both are empty), with S_ii = 1 for every item,
    so that 1 − S_ii = 0 and the top-k diversity's diagonal vanishes."""
    g = np.asarray(item_genres, dtype=np.float64)
    if g.ndim != 2:
        raise ValueError(f"item_genres: expected an items x genres matrix, got shape {g.shape}")
    inter = g @ g.T
    sizes = g.sum(1)
    union = sizes[:, None] + sizes[None, :] - inter
    s = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    np.fill_diagonal(s, 1.0)
    return s
