"""The ground-truth generator: cached outside the repository, reused, deterministic."""

from __future__ import annotations

import json

import pytest

from optzoo.nas import ground_truth as gtm
from optzoo.nas.search_space import CellSpace

TINY = CellSpace(n_nodes=2, channels=4, cells_per_stage=1, stages=2, in_channels=1,
                 image_size=8)  # one edge: 5 architectures


def test_generates_caches_and_reuses(tmp_path, monkeypatch):
    gt = gtm.ground_truth_table(TINY, epochs=1, seeds=2, root=tmp_path, n_train=64)
    path = gtm.table_path(TINY, 1, 2, tmp_path, 64)
    assert path.exists() and path.is_relative_to(tmp_path)
    assert gt.val_acc.shape == (5, 2) and gt.test_acc.shape == (5, 2)
    assert list(gt.params) == [TINY.costs(a)["params"] for a in gt.archs]
    assert ((0 <= gt.test_acc) & (gt.test_acc <= 1)).all()

    def boom(*a, **k):
        raise AssertionError("regenerated a cached table")

    monkeypatch.setattr(gtm, "generate", boom)
    again = gtm.ground_truth_table(TINY, epochs=1, seeds=2, root=tmp_path, n_train=64)
    assert (again.test_acc == gt.test_acc).all()


def test_deterministic_given_seeds(tmp_path):
    a = gtm.generate(TINY, epochs=1, seeds=1, n_train=64)
    b = gtm.generate(TINY, epochs=1, seeds=1, n_train=64)
    assert [r["test_acc"] for r in a["rows"]] == [r["test_acc"] for r in b["rows"]]


def test_best_feasible_and_cache_dir(tmp_path, monkeypatch):
    gt = gtm.ground_truth_table(TINY, epochs=1, seeds=1, root=tmp_path, n_train=64)
    b = TINY.costs((0,))["flops"]
    row, acc = gt.best_feasible({"flops": b})
    assert gt.flops[row] <= b
    assert acc == max(gt.test_acc[i].mean() for i in range(5) if gt.flops[i] <= b)
    with pytest.raises(ValueError, match="budgets"):
        gt.best_feasible({"flops": 0.0})
    monkeypatch.setenv("OPTZOO_CACHE", str(tmp_path / "c"))
    assert gtm.cache_dir() == tmp_path / "c"


def test_malformed_cache_is_reported(tmp_path):
    path = gtm.table_path(TINY, 1, 1, tmp_path, 64)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": gtm.VERSION, "rows": []}))
    with pytest.raises(ValueError, match="delete it"):
        gtm.ground_truth_table(TINY, epochs=1, seeds=1, root=tmp_path, n_train=64)
