"""The MovieLens-100K reader on tiny files in RecBole's atomic format, the synthetic fallback,
the temporal split and the genre Jaccard matrix."""

from __future__ import annotations

import numpy as np
import pytest

from optzoo.recsys import data as data_mod
from optzoo.recsys.data import (
    genre_jaccard,
    load_movielens_100k,
    load_ratings,
    movielens_100k_dir,
    synthetic_ratings,
    temporal_split,
)

INTER = ("user_id:token\titem_id:token\trating:float\ttimestamp:float\n"
         "196\t242\t3\t881250949\n186\t302\t3\t891717742\n196\t302\t5\t881250900\n"
         "22\t377\t1\t878887116\n196\t377\t4\t881251000\n")
ITEM = ("item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq\n"
        "242\tKolya\t1996\tComedy\n302\tL.A. Confidential\t1997\tCrime Film-Noir Mystery Thriller\n"
        "377\tHeavyweights\t1994\tChildren's Comedy\n999\tUnrated Film\t1990\tDrama\n")


def _write(folder, inter=INTER, item=ITEM):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ml-100k.inter").write_text(inter)
    (folder / "ml-100k.item").write_text(item)
    return folder


def test_reader_on_a_tiny_copy(tmp_path):
    folder = _write(tmp_path / "ml-100k")
    assert movielens_100k_dir(tmp_path) == folder  # the parent with ml-100k/ works too
    d = load_movielens_100k(folder)
    assert d.source == "ml-100k" and d.users.size == 5
    assert d.n_users == 3 and d.n_items == 4  # item 999 has no rating but is in the catalogue
    # users and items are indexed in numeric id order: users 22, 186, 196; items 242..999
    np.testing.assert_array_equal(d.users, [2, 1, 2, 0, 2])
    np.testing.assert_array_equal(d.items, [0, 1, 1, 2, 2])
    np.testing.assert_array_equal(d.ratings, [3, 3, 5, 1, 4])
    assert d.genre_names == ("Children's", "Comedy", "Crime", "Drama", "Film-Noir", "Mystery",
                             "Thriller")
    assert d.item_genres[1].sum() == 4 and d.item_genres[2, 0] and d.item_genres[2, 1]
    assert d.item_genres[3].tolist() == [False, False, False, True, False, False, False]


def test_reader_errors_name_the_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match="path"):
        load_movielens_100k(tmp_path / "nowhere")
    bad = _write(tmp_path / "bad", inter=INTER.replace("881250949", "x"))
    with pytest.raises(ValueError, match="non-numeric"):
        load_movielens_100k(bad)
    short = _write(tmp_path / "short", inter=INTER + "1\t2\n")
    with pytest.raises(ValueError, match="line 7"):
        load_movielens_100k(short)
    nocol = _write(tmp_path / "nocol", item=ITEM.replace("class:token_seq", "genre:token_seq"))
    with pytest.raises(ValueError, match="class"):
        load_movielens_100k(nocol)


def test_auto_falls_back_to_synthetic_without_recbole(monkeypatch):
    monkeypatch.delenv("OPTZOO_DATA", raising=False)
    monkeypatch.setattr(data_mod.importlib.util, "find_spec", lambda name: None)
    assert movielens_100k_dir() is None
    d = load_ratings("auto", n_users=50, n_items=60)
    assert d.source == "synthetic"
    with pytest.raises(FileNotFoundError):
        load_ratings("ml-100k")
    with pytest.raises(ValueError, match="source"):
        load_ratings("netflix")


def test_environment_variable_points_at_a_copy(tmp_path, monkeypatch):
    _write(tmp_path / "ml-100k")
    monkeypatch.setenv("OPTZOO_DATA", str(tmp_path))
    assert load_ratings("ml-100k").users.size == 5


def test_synthetic_set_is_genre_structured_and_deterministic():
    a = synthetic_ratings(n_users=40, n_items=60, n_genres=5, seed=1)
    b = synthetic_ratings(n_users=40, n_items=60, n_genres=5, seed=1)
    np.testing.assert_array_equal(a.items, b.items)
    assert a.n_users == 40 and a.n_items == 60
    assert set(np.unique(a.ratings)) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    assert a.item_genres.sum(1).min() >= 1 and a.item_genres.sum(1).max() <= 3
    assert np.bincount(a.users).min() >= 10
    with pytest.raises(ValueError, match="density"):
        synthetic_ratings(density=1.5)


def test_temporal_split_holds_out_each_users_latest_fifth():
    users = np.array([0] * 10 + [1] * 5 + [2])
    times = np.concatenate([np.arange(10)[::-1], np.arange(5), [0]]).astype(float)
    d = data_mod.RatingsData(users=users, items=np.arange(16), ratings=np.ones(16),
                             timestamps=times, item_genres=np.ones((16, 1), dtype=bool),
                             genre_names=("g",), source="synthetic")
    test = temporal_split(d, 0.2)
    np.testing.assert_array_equal(np.flatnonzero(test), [0, 1, 14])  # latest 2, latest 1, none


def test_genre_jaccard_by_hand():
    g = np.array([[1, 1, 0], [0, 1, 1], [0, 0, 0]], dtype=bool)
    s = genre_jaccard(g)
    np.testing.assert_allclose(s, [[1, 1 / 3, 0], [1 / 3, 1, 0], [0, 0, 1]])
    assert np.all(np.linalg.eigvalsh(genre_jaccard(np.random.default_rng(0).random((30, 5)) < .4))
                  > -1e-10)  # Tanimoto kernel: PSD, as the DPP needs
