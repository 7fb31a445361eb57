"""`optzoo publish`: what is published, what is refused, and the staleness check."""

from __future__ import annotations

import dataclasses
import json

import pytest

from optzoo.cli import main
from optzoo.errors import ConfigError
from optzoo.experiment import publish as pub
from optzoo.experiment.runner import run


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    run("_selftest", "quick", jobs=1, out=out, progress=False)
    return out / "_selftest" / "quick"


def test_publish_copies_text_and_keys(quick_run, tmp_path):
    results = tmp_path / "results"
    dest = pub.publish(quick_run, results)
    assert sorted(p.name for p in dest.iterdir()) == [
        "provenance.json", "report.md", "summary.json", "trials.keys"]
    keys = (dest / "trials.keys").read_text().split()
    stored = [json.loads(line)["key"] for line in (quick_run / "trials.jsonl").read_text()
              .splitlines()]
    assert sorted(keys) == sorted(stored) and keys == sorted(keys)
    summary = json.loads((dest / "summary.json").read_text())
    prov = json.loads((dest / "provenance.json").read_text())
    assert summary["slug"] == "_selftest" and prov["n_trials"] == len(keys)
    assert prov["stale"] is False and prov["preset"] == "quick"
    assert "](" not in "".join(line for line in (dest / "report.md").read_text().splitlines()
                               if line.startswith("!["))  # no image links left
    md = (results / "RESULTS.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| `_selftest`"))
    assert (f"[{summary['claims_held']} / {summary['claims_not_held']} / "
            f"{summary['claims_inconclusive']}](_selftest/quick/report.md)") in row
    assert pub.stale_results(results) == []
    assert [r.slug for r in pub.published(results)] == ["_selftest"]


def test_figures_become_a_note():
    text = pub._strip_figures("# T\n![loss](loss.png)\nkept ![x](y) inline\n", "ham", "full")
    assert "loss.png` is not published: `optzoo reproduce ham --preset full`" in text
    assert "kept ![x](y) inline" in text and "![loss]" not in text


def test_refuses_smoke_overrides_and_unfinished_runs(quick_run, tmp_path):
    smoke = tmp_path / "runs"
    run("_selftest", "smoke", jobs=1, out=smoke, progress=False)
    with pytest.raises(ConfigError, match="smoke runs are no evidence"):
        pub.publish(smoke / "_selftest" / "smoke", tmp_path / "r")
    run("_selftest", "quick", jobs=1, out=tmp_path / "o", progress=False,
        overrides={"samples": "500"})
    with pytest.raises(ConfigError, match="differs from the registered 'quick' preset in "
                                          "samples"):
        pub.publish(tmp_path / "o" / "_selftest" / "quick", tmp_path / "r")
    run("_selftest", "quick", jobs=1, out=tmp_path / "s", progress=False, seeds=1)
    with pytest.raises(ConfigError, match="in seeds"):
        pub.publish(tmp_path / "s" / "_selftest" / "quick", tmp_path / "r")
    with pytest.raises(ConfigError, match="no run.json"):
        pub.publish(tmp_path, tmp_path / "r")
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "run.json").write_text((quick_run / "run.json").read_text())
    lines = (quick_run / "trials.jsonl").read_text().splitlines()
    (partial / "trials.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(ConfigError, match="1 of .* trials have no stored result"):
        pub.publish(partial, tmp_path / "r")
    assert not (tmp_path / "r" / "_selftest").exists()


def test_stale_result_is_found_marked_and_cleared(quick_run, tmp_path, monkeypatch, capsys):
    results = tmp_path / "results"
    pub.publish(quick_run, results)
    repro = pub.registry.get("_selftest").load()
    changed = dataclasses.replace(repro.presets["quick"], samples=999)
    monkeypatch.setitem(repro.presets, "quick", changed)
    stale = pub.stale_results(results)
    assert [(s.slug, s.preset, s.marked) for s in stale] == [("_selftest", "quick", False)]
    assert stale[0].missing == stale[0].extra > 0
    assert main(["publish", "--check", "--results", str(results)]) == 1
    assert "is stale" in capsys.readouterr().err
    assert main(["publish", "--mark-stale", "--results", str(results)]) == 0
    assert main(["publish", "--check", "--results", str(results)]) == 0
    assert "**stale**" in (results / "RESULTS.md").read_text()
    monkeypatch.undo()  # the preset is back: marking again clears the flag
    assert pub.mark_stale(results) == []
    assert "**stale**" not in (results / "RESULTS.md").read_text()


def test_notes_fill_unpublished_cells(tmp_path):
    (tmp_path / "notes.json").write_text(json.dumps({"ham/full": "waiting for a GPU"}))
    md = pub.results_markdown(tmp_path)
    row = next(line for line in md.splitlines() if line.startswith("| `ham`"))
    assert row.endswith("| not published | waiting for a GPU |")
    (tmp_path / "notes.json").write_text("[1]")
    with pytest.raises(ConfigError, match="notes.json: expected an object"):
        pub.results_markdown(tmp_path)


def test_cli_publish_needs_something_to_do(capsys):
    assert main(["publish"]) == 2
    assert "name run folders, or pass --check" in capsys.readouterr().err
