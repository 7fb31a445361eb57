"""Instances: the .fjs reader on Brandimarte's mk01 (checked against the file's text, parsed
by hand below), the published bounds, the SD2 generator's statistics and the errors."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings

from optzoo.scheduling.instance import (
    BRANDIMARTE,
    FJSPInstance,
    brandimarte_bounds,
    fjsp_data_dir,
    load_brandimarte,
    read_fjs,
    sd2_instance,
    write_fjs,
)
from tests.conftest import shared_dir
from tests.scheduling.strategies import instances

FJSP = shared_dir() / "data" / "fjsp"
MK01 = FJSP / "mk01.fjs"

# mk01.fjs line 2 "6  2 1 5 3 4 3 5 3 3 5 2 1 2 3 4 6 2 3 6 5 2 6 1 1 1 3 1 3 6 6 3 6 4 3",
# read by hand: 6 operations; "2 1 5 3 4" = 2 machines, M1 takes 5, M3 takes 4; ... (0-based)
MK01_JOB0 = [{0: 5, 2: 4}, {4: 3, 2: 5, 1: 1}, {2: 4, 5: 2}, {5: 5, 1: 6, 0: 1}, {2: 1},
             {5: 6, 2: 6, 3: 3}]
# line 3 "5  1 2 6 1 3 1 1 1 2 2 2 6 4 6 3 6 5 2 6 1 1"
MK01_JOB1 = [{1: 6}, {2: 1}, {0: 2}, {1: 6, 3: 6}, {5: 5, 1: 6, 0: 1}]
# line 11 "6  2 3 4 6 2 3 3 4 2 6 6 6 3 5 3 3 5 2 1 1 6 1 2 2 6 4 6 2 1 3 4 2"
MK01_JOB9 = [{2: 4, 5: 2}, {2: 4, 1: 6, 5: 6}, {4: 3, 2: 5, 1: 1}, {5: 1}, {1: 6, 3: 6},
             {0: 3, 3: 2}]


def test_reader_parses_mk01_as_the_file_says():
    inst = read_fjs(MK01)
    assert (inst.n_jobs, inst.n_machines, inst.name) == (10, 6, "mk01")
    assert inst.job_lengths.tolist() == [6, 5, 5, 5, 6, 6, 5, 5, 6, 6]
    assert inst.n_ops == 55
    assert inst.operations(0) == MK01_JOB0
    assert inst.operations(1) == MK01_JOB1
    assert inst.operations(9) == MK01_JOB9
    assert inst.cost is None and inst.due_dates is None
    # every machine/time pair of the file is in the instance: count them from the raw text
    lines = [ln.split() for ln in MK01.read_text().splitlines()[1:] if ln.strip()]
    pairs = 0
    for tokens in lines:
        vals, pos = [int(t) for t in tokens], 1
        for _ in range(vals[0]):
            pairs += vals[pos]
            pos += 1 + 2 * vals[pos]
    assert inst.eligible.sum() == pairs
    assert inst.op_id(1, 0) == 6 and inst.job_of_op[6] == 1 and inst.op_pos[6] == 0


def test_load_brandimarte_and_data_dir(tmp_path, monkeypatch):
    assert fjsp_data_dir() is not None  # the shared folder beside the checkout
    assert load_brandimarte("mk01").operations(0) == MK01_JOB0
    for name in BRANDIMARTE:  # every shipped file parses
        inst = load_brandimarte(name, FJSP)
        assert inst.n_ops == inst.job_lengths.sum() and inst.eligible.any(axis=1).all()
    (tmp_path / "fjsp").mkdir()
    (tmp_path / "fjsp" / "mk01.fjs").write_text(MK01.read_text())
    monkeypatch.setenv("OPTZOO_DATA", str(tmp_path))
    assert fjsp_data_dir() == tmp_path / "fjsp"
    with pytest.raises(FileNotFoundError, match="path"):
        load_brandimarte("mk01", tmp_path / "nowhere")
    with pytest.raises(ValueError, match="name"):
        load_brandimarte("mk11")


def test_bounds_match_source_md():
    table = dict()
    for m in re.finditer(r"\|\s*(mk\d\d)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|",
                         (FJSP / "SOURCE.md").read_text()):
        table[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    assert len(table) == 10
    assert brandimarte_bounds() == table


def test_reader_errors_name_the_line(tmp_path):
    def write(text):
        p = tmp_path / "x.fjs"
        p.write_text(text)
        return p

    with pytest.raises(FileNotFoundError, match="path"):
        read_fjs(tmp_path / "missing.fjs")
    with pytest.raises(ValueError, match="empty"):
        read_fjs(write("\n\n"))
    with pytest.raises(ValueError, match="line 1"):
        read_fjs(write("two 3\n1 1 1 5\n"))
    with pytest.raises(ValueError, match="announces 2 jobs, found 1"):
        read_fjs(write("2 2\n1 1 1 5\n"))
    with pytest.raises(ValueError, match="line 2: machine 3 outside 1..2"):
        read_fjs(write("1 2\n1 1 3 5\n"))
    with pytest.raises(ValueError, match="line 2: operation 0 announces 2 machines"):
        read_fjs(write("1 2\n1 2 1 5\n"))
    with pytest.raises(ValueError, match="line 2: 1 trailing"):
        read_fjs(write("1 2\n1 1 1 5 7\n"))
    with pytest.raises(ValueError, match="listed twice"):
        read_fjs(write("1 2\n1 2 1 5 1 6\n"))
    with pytest.raises(ValueError, match="non-integer"):
        read_fjs(write("1 2\n1 1 1 5.5\n"))
    with pytest.raises(ValueError, match="positive"):
        read_fjs(write("1 2\n1 1 1 0\n"))


@settings(max_examples=25)
@given(instances())
def test_write_read_round_trip(tmp_path_factory, inst):
    path = write_fjs(inst, tmp_path_factory.mktemp("fjs") / "a.fjs")
    back = read_fjs(path)
    assert back.job_lengths.tolist() == inst.job_lengths.tolist()
    np.testing.assert_array_equal(back.eligible[:, :inst.n_machines], inst.eligible)
    np.testing.assert_array_equal(back.processing, inst.processing)


def test_instance_errors_name_the_argument():
    with pytest.raises(ValueError, match="jobs"):
        FJSPInstance([])
    with pytest.raises(ValueError, match=r"jobs\[1\]"):
        FJSPInstance([[{0: 1}], []])
    with pytest.raises(ValueError, match=r"O\[0\]\[1\] has no eligible"):
        FJSPInstance([[{0: 1}, {}]])
    with pytest.raises(ValueError, match="machine 3"):
        FJSPInstance([[{3: 1}]], n_machines=2)
    with pytest.raises(ValueError, match="positive and finite"):
        FJSPInstance([[{0: -1}]])
    with pytest.raises(ValueError, match="costs: expected 2 operations"):
        FJSPInstance([[{0: 1}, {0: 2}]], costs=[[{0: 1}]])
    with pytest.raises(ValueError, match="costs: cost of operation"):
        FJSPInstance([[{0: 1, 1: 2}]], costs=np.array([[1.0, -1.0]]))
    with pytest.raises(ValueError, match="due_dates"):
        FJSPInstance([[{0: 1}]], due_dates=[1, 2])
    with pytest.raises(ValueError, match="job_lengths"):
        FJSPInstance.from_arrays([0], np.ones((0, 1)))
    with pytest.raises(ValueError, match="processing: expected shape"):
        FJSPInstance.from_arrays([2], np.ones((3, 1)))
    with pytest.raises(ValueError, match="index"):
        FJSPInstance([[{0: 1}]]).op_id(0, 1)


def test_dense_rows_and_mappings_agree():
    a = FJSPInstance([[{0: 3, 2: 1}, {1: 2}]], n_machines=3, costs=[[{0: 5, 2: 0}, {1: 1}]])
    b = FJSPInstance([[[3, 0, 1], [None, 2, 0]]], costs=np.array([[5, 9, 0], [0, 1, 0]]))
    np.testing.assert_array_equal(a.processing, b.processing)
    np.testing.assert_array_equal(a.eligible, b.eligible)
    np.testing.assert_array_equal(a.cost, b.cost)  # ineligible entries zeroed
    assert a.cost[0, 2] == 0 and a.eligible[0, 2]  # a zero cost on an eligible machine is kept


def test_sd2_generator_statistics():
    insts = [sd2_instance(10, 5, seed) for seed in range(30)]
    p = np.concatenate([i.processing[i.eligible] for i in insts])
    assert p.min() >= 1 and p.max() <= 99 and np.all(p == np.round(p))
    assert abs(p.mean() - 50.0) < 2.0  # U{1..99}: mean 50, s.e. here ~0.4
    counts = np.concatenate([i.eligible.sum(axis=1) for i in insts])
    freq = np.bincount(counts, minlength=6)[1:] / counts.size
    np.testing.assert_allclose(freq, 0.2, atol=0.04)  # |M_ij| ~ U{1..5}
    ratios = []
    for inst in insts:
        assert inst.job_lengths.tolist() == [5] * 10  # ops per job = m
        big = inst.processing.max()
        expect = np.rint(big - inst.processing + 1)
        np.testing.assert_array_equal(inst.cost[inst.eligible], expect[inst.eligible])
        mean_p = inst.processing.sum(axis=1) / inst.eligible.sum(axis=1)
        work = mean_p.reshape(10, 5).sum(axis=1)
        assert np.all(inst.due_dates >= np.rint(work) - 0.5)
        assert np.all(inst.due_dates <= np.rint(1.5 * work) + 0.5)
        ratios.append(inst.due_dates / work)
    assert abs(np.mean(ratios) - 1.25) < 0.03  # τ ~ U[1, 1.5]
    # cheaper means slower, within every operation
    inst = insts[0]
    for o in range(inst.n_ops):
        k = np.flatnonzero(inst.eligible[o])
        order = np.argsort(inst.processing[o, k])
        assert np.all(np.diff(inst.cost[o, k][order]) <= 0)


def test_sd2_is_deterministic_per_seed():
    a, b, c = sd2_instance(6, 4, 7), sd2_instance(6, 4, 7), sd2_instance(6, 4, 8)
    for x, y in ((a.processing, b.processing), (a.cost, b.cost), (a.due_dates, b.due_dates)):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a.processing, c.processing)
    d = sd2_instance(3, 4, 0, ops_per_job=2, kappa=2.0, cost=True, due_dates=False)
    assert d.job_lengths.tolist() == [2, 2, 2] and d.due_dates is None
    np.testing.assert_array_equal(d.cost[d.eligible],
                                  np.rint(2.0 * (d.processing.max() - d.processing + 1))[
                                      d.eligible])
    for kwargs, arg in (({"n_jobs": 0}, "n_jobs"), ({"ops_per_job": 0}, "ops_per_job"),
                        ({"kappa": -1.0}, "kappa"), ({"tau": (1.5, 1.0)}, "tau"),
                        ({"p_low": 0}, "p_low")):
        base = {"n_jobs": 2, "n_machines": 2, "seed": 0} | kwargs
        with pytest.raises(ValueError, match=arg):
            sd2_instance(**base)
