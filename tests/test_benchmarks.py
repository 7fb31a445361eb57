"""``make bench`` must not rot: every benchmark module loads, and one optimizer row runs."""

from __future__ import annotations

import importlib.util

import pytest

from tests.conftest import REPO

BENCH = REPO / "benchmarks"


def _load(path):
    spec = importlib.util.spec_from_file_location(f"_bench_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", sorted(BENCH.glob("bench_*.py")), ids=lambda p: p.stem)
def test_benchmark_module_lists_callables(path):
    module = _load(path)
    assert module.BENCHMARKS and all(callable(fn) for fn in module.BENCHMARKS)
    names = [fn.__name__ for fn in module.BENCHMARKS]
    assert len(names) == len(set(names))


def test_optimizer_benchmark_row_is_complete(monkeypatch):
    module = _load(BENCH / "bench_optim.py")
    monkeypatch.setattr(module, "BLOCKS", 1)
    monkeypatch.setattr(module, "STEPS", 2)
    monkeypatch.setattr(module, "WARMUP", 1)
    by_name = {fn.__name__: fn for fn in module.BENCHMARKS}
    for name in ("bench_train_diag_adagrad", "bench_train_per_grad_o2nc_odog"):
        row = by_name[name]()
        assert {"name", "method", "peer", "method_s", "peer_s", "target_ratio"} <= set(row)
        assert row["method_s"] > 0 and row["peer_s"] > 0


def test_kan_benchmark_row_runs_against_pykan(monkeypatch):
    module = _load(BENCH / "bench_kan.py")
    for name, value in (("BLOCKS", 1), ("STEPS", 1), ("WARMUP", 1), ("N", 8), ("D", 3),
                        ("M", 6)):
        monkeypatch.setattr(module, name, value)
    row = module.bench_forward_backward()
    assert row["peer"].startswith("pykan")
    assert row["method_s"] > 0 and row["peer_s"] > 0


def test_optimizer_rows_carry_the_issue_targets_and_the_table_says_met_or_missed(monkeypatch):
    module = _load(BENCH / "bench_optim.py")
    for name, value in (("BLOCKS", 1), ("STEPS", 1), ("WARMUP", 1)):
        monkeypatch.setattr(module, name, value)
    by_name = {fn.__name__: fn for fn in module.BENCHMARKS}
    assert {"bench_step_asgo", "bench_step_asgo_eigh", "bench_step_ham_adam"} <= set(by_name)
    asgo, ham = by_name["bench_step_asgo_eigh"](), by_name["bench_step_ham_adam"]()
    assert asgo["target_ratio"] == 3.0 and ham["target_ratio"] == 1.5
    run = _load(BENCH / "run.py")
    assert run._target({"ratio": 1.2, "target_ratio": 1.5}).endswith("met")
    assert run._target({"ratio": 2.0, "target_ratio": 1.5}).endswith("MISSED")
    assert run._target({"ratio": 2.0}) == ""
