"""The NATS-Bench topology reader on tiny synthetic files written in the official layout."""

from __future__ import annotations

import bz2
import os
import pickle
from collections import OrderedDict

import pytest

from optzoo.nas import NATS_TOPOLOGY, load_nats_topology

ARCHS = ["|nor_conv_3x3~0|+|none~0|skip_connect~1|+|avg_pool_3x3~0|nor_conv_1x1~1|none~2|",
         "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"]


def _results_count(seed, acc, epochs=3):
    # ResultsCount.__dict__ as NATS-Bench pickles it
    evals = {}
    for name, delta in (("x-valid", -1.0), ("x-test", -2.0), ("ori-test", -1.5)):
        for e in range(epochs):
            evals[f"{name}@{e}"] = acc + delta - (epochs - 1 - e)
    return {"name": "cifar100", "net_state_dict": None,
            "train_acc1es": OrderedDict((e, acc - (epochs - 1 - e)) for e in range(epochs)),
            "train_acc5es": None, "train_losses": {e: 1.0 for e in range(epochs)},
            "train_times": None, "arch_config": {"arch_str": "x"}, "params": 0.5 + seed,
            "flop": 60.0, "seed": seed, "epochs": epochs, "latency": [0.01, 0.03],
            "eval_names": ["x-valid", "x-test", "ori-test"], "eval_acc1es": evals,
            "eval_times": {}, "eval_losses": {}}


def _arch_results(index):
    seeds = [777, 888]
    return {"arch_index": index, "arch_str": ARCHS[index],
            "all_results": {("cifar100", s): _results_count(i, 60.0 + 10 * index + 2 * i)
                            for i, s in enumerate(seeds)},
            "dataset_seed": {"cifar100": seeds}, "clear_net_done": True}


def _dump(obj, path):
    with bz2.BZ2File(path, "wb") as fh:
        pickle.dump(obj, fh, protocol=4)


def _check(records):
    assert [r.index for r in records] == [0, 1]
    r0 = records[0]
    assert r0.arch == NATS_TOPOLOGY.from_str(ARCHS[0]) and r0.arch_str == ARCHS[0]
    # seeds' accuracies 60 and 62 at the last epoch: valid −1, test −2
    assert r0.train_acc == pytest.approx(61.0)
    assert r0.valid_acc == pytest.approx(60.0) and r0.test_acc == pytest.approx(59.0)
    assert r0.params == pytest.approx(1.0) and r0.latency == pytest.approx(0.02)
    assert records[1].test_acc == pytest.approx(69.0)


def test_single_file_and_simple_dir(tmp_path):
    blob = {"meta_archs": ARCHS, "evaluated_indexes": [0, 1],
            "arch2infos": {i: {"200": _arch_results(i)} for i in range(2)}}
    f = tmp_path / "NATS-tss-v1_0-3ffb9.pickle.pbz2"
    _dump(blob, f)
    _check(load_nats_topology(f, dataset="cifar100", hp="200"))
    d = tmp_path / "NATS-tss-v1_0-3ffb9-simple"
    os.mkdir(d)
    _dump({"meta_archs": ARCHS}, d / "meta.pickle.pbz2")
    for i in range(2):
        _dump({"200": _arch_results(i)}, d / f"{i:06d}.pickle.pbz2")
    _check(load_nats_topology(d, dataset="cifar100"))
    with pytest.raises(ValueError, match="hp"):
        load_nats_topology(f, dataset="cifar100", hp="12")
    with pytest.raises(ValueError, match="dataset"):
        load_nats_topology(f, dataset="cifar10")
    with pytest.raises(ValueError, match="dataset"):
        load_nats_topology(f, dataset="mnist")


def test_bad_files(tmp_path):
    with pytest.raises(ValueError, match="path"):
        load_nats_topology(tmp_path / "missing.pickle.pbz2")
    junk = tmp_path / "junk.pickle.pbz2"
    junk.write_bytes(b"not bz2")
    with pytest.raises(ValueError, match="path"):
        load_nats_topology(junk)
    evil = tmp_path / "evil.pickle.pbz2"
    _dump({"meta_archs": [], "arch2infos": {}, "x": os.system}, evil)
    with pytest.raises(pickle.UnpicklingError, match="refusing"):
        load_nats_topology(evil)
