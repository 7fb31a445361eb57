"""Reports and the run index."""

from __future__ import annotations

import json

from optzoo import registry
from optzoo.experiment.runner import run
from optzoo.report import write_index


def test_index_lists_every_paper_with_claims_and_links(tmp_path):
    run("_selftest", "smoke", jobs=1, out=tmp_path, progress=False)
    papers = [*registry.PAPERS, registry.get("_selftest")]
    page = write_index(tmp_path, papers, "smoke").read_text()
    assert page.count("<tr><td>") == 36
    assert ("<td><a href='_selftest/smoke/report.html'>2 / 0 / 0 (smoke — not evidence)</a></td>"
            in page)
    planned = sum(p.status == "planned" for p in registry.PAPERS)
    assert page.count("<td>planned</td>") == planned
    assert "inconclusive (smoke)" in page and "inconclusive (quick)" not in page
    # A later run of another preset adds a column; the smoke results stay listed.
    run("_selftest", "quick", jobs=1, out=tmp_path, progress=False)
    page = write_index(tmp_path, papers, "quick").read_text()
    assert "inconclusive (smoke)" in page and "inconclusive (quick)" in page
    assert "<td><a href='_selftest/quick/report.html'>2 / 0 / 0</a></td>" in page
    assert "_selftest/smoke/report.html" in page and "_selftest/quick/report.html" in page


def test_markdown_report_states_each_claim_with_evidence(tmp_path):
    outcome = run("_selftest", "smoke", jobs=1, out=tmp_path, progress=False)
    md = (outcome.outdir / "report.md").read_text()
    data = json.loads((outcome.outdir / "summary.json").read_text())
    assert "## Claims: 2 held, 0 not held, 0 inconclusive (smoke — not evidence)" in md
    assert data["evidence"] is False and data["label"] == "smoke — not evidence"
    assert (data["claims_held"], data["claims_not_held"], data["claims_inconclusive"]) == (2, 0, 0)
    for claim in data["claims"]:
        assert claim["text"] in md and claim["evidence"] in md
        assert claim["verdict"]["test"] == "bound_holds" and claim["status"] == "held"
        assert f"test `{claim['verdict']['test']}`" in md
    assert "| method | estimate | abs_error | n |" in md
    assert data["config"]["samples"] == 200 and data["run"]["backend"] == "local"


def test_index_is_written_when_no_paper_made_its_folder(tmp_path):
    """Every paper of a run may fail before creating anything under --out; the closing index
    must still be written (it used to fail with 'No such file or directory')."""
    from optzoo import registry
    from optzoo.report.render import write_index

    root = tmp_path / "never" / "made"
    path = write_index(root, registry.PAPERS, "quick")
    assert path == root / "index.html" and path.read_text().count("<tr") >= len(registry.PAPERS)


def test_a_multi_line_note_stays_in_its_list_item(tmp_path):
    """RFTHGS lists the operators its code LM wrote: a note with a code block must render as
    one list item in Markdown (continuation lines indented) and as preformatted HTML."""
    from optzoo.experiment import Summary
    from optzoo.report.render import write_reports

    repro = registry.get("_selftest").load()
    cfg = repro.preset("smoke")
    note = "operator:\n\n```python\ndef crossover(a):\n    return a\n```"
    write_reports(tmp_path, registry.get("_selftest"), "smoke", cfg,
                  Summary(notes=["plain", note]), [], {})
    md = (tmp_path / "report.md").read_text()
    assert "- plain\n- operator:\n\n  ```python\n  def crossover(a):\n      return a\n  ```" in md
    page = (tmp_path / "report.html").read_text()
    assert "<li>plain</li>" in page
    assert "<li><pre>operator:\n\n```python\ndef crossover(a):\n    return a\n```</pre></li>" \
        in page
