"""The ground-truth generator: cached outside the repository, reused, deterministic."""

from __future__ import annotations

import json
import math

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


def test_parallel_generation_gives_the_same_table():
    # issue 29: the table is trained in a pool of forked workers; each run is seeded by its
    # architecture and seed alone, so the pool must not change a single accuracy
    one = gtm.generate(TINY, epochs=1, seeds=2, n_train=64, jobs=1)
    two = gtm.generate(TINY, epochs=1, seeds=2, n_train=64, jobs=2)
    for key in ("arch", "val_acc", "test_acc", "params", "flops"):
        assert [r[key] for r in one["rows"]] == [r[key] for r in two["rows"]]
    with pytest.raises(ValueError, match="jobs"):
        gtm.generate(TINY, epochs=1, seeds=1, n_train=64, jobs=0)


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


def test_table_records_latency_and_seeds(tmp_path):
    gt = gtm.ground_truth_table(TINY, epochs=1, seeds=2, root=tmp_path, n_train=64)
    assert gt.latency.shape == (5,) and (gt.latency > 0).all()
    assert gt.n_test == gtm.SPLIT[2] * gtm.COPIES[2] == 4000
    assert gt.costs(gt.archs[3]) == {"params": gt.params[3], "flops": gt.flops[3],
                                     "latency": gt.latency[3]}
    with pytest.raises(ValueError, match="name"):
        gt.cost("energy")


def test_resolution_from_the_seeds_by_hand():
    import dataclasses

    import numpy as np

    acc = np.array([[0.90, 0.92, 0.94], [0.80, 0.80, 0.80]])  # variances 4e-4 and 0
    t = gtm.GroundTruth(space=TINY, epochs=1, seeds=3, archs=[(0,), (1,)], val_acc=acc,
                        test_acc=acc, params=np.zeros(2), flops=np.zeros(2),
                        latency=np.ones(2), n_test=4000, seconds=0.0)
    se = 100 * math.sqrt(2e-4 / 3)  # pooled variance (4e-4 + 0) / 2, over √3 seeds
    assert t.entry_se_pp() == pytest.approx(se)
    assert t.resolution_pp() == pytest.approx(1.96 * math.sqrt(2) * se)
    one = dataclasses.replace(t, seeds=1, test_acc=acc[:, :1], n_test=400)
    assert math.isnan(one.entry_se_pp()) and math.isnan(one.resolution_pp())


def test_deformed_digits_are_a_fixed_draw_of_new_images():
    import torch

    x = gtm.digits_split()["test"][0][:20]
    a, b = gtm.deform(x, 3, seed=5), gtm.deform(x, 3, seed=5)
    assert a.shape == (60, 1, 8, 8) and torch.equal(a, b)
    assert 0 <= a.min() and a.max() <= 1
    assert not torch.allclose(a[:20], x, atol=0.05)  # deformed, not copies
    assert not torch.equal(a[:20], a[20:40])  # each copy its own deformation
    with pytest.raises(ValueError, match="copies"):
        gtm.deform(x, 0, seed=0)
    d = gtm.augmented_digits()
    assert [d[k][0].shape[0] for k in ("train", "val", "test")] == [1000, 1588, 4000]


def test_latency_sees_the_convolutions():
    from optzoo.nas.search_space import MINI_TOPOLOGY as S

    lat = gtm.measure_latency(S, [(0, 0, 0), (3, 3, 3)], reps=3, inner=2)
    assert lat[1] > lat[0] > 0  # three 3×3 convs per cell cost more than an all-none cell
