"""A run's reports: ``report.md``, a self-contained ``report.html`` and ``summary.json``."""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from optzoo.experiment.core import Preset, Result, Summary, Table
from optzoo.experiment.store import StoreError, atomic_write_text
from optzoo.registry import Paper


def _md_table(table: Table) -> str:
    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = [f"**{table.title}**", "",
             "| " + " | ".join(cell(c) for c in table.columns) + " |",
             "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.rows]
    return "\n".join(lines)


def _html_table(table: Table) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
        for row in table.rows
    )
    # A wide table scrolls inside its own box instead of widening the page.
    return (f"<h3>{html.escape(table.title)}</h3><div class='scroll'>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")


SMOKE_LABEL = "smoke — not evidence"


def is_evidence(preset: str) -> bool:
    """Smoke runs exercise every claim but decide nothing: one or two seeds are no evidence."""
    return preset != "smoke"


def verdict_counts(claims: Sequence[Any]) -> dict[str, int]:
    """``{"held": …, "not held": …, "inconclusive": …}`` of claims (``Claim`` objects or the
    dicts of ``summary.json``)."""
    out = {"held": 0, "not held": 0, "inconclusive": 0}
    for c in claims:
        status = c["verdict"]["verdict"] if isinstance(c, dict) else c.status
        out[status] += 1
    return out


def counts_text(counts: dict[str, int], preset: str) -> str:
    """``2 held, 1 not held, 0 inconclusive`` (``, smoke — not evidence`` for smoke)."""
    text = (f"{counts['held']} held, {counts['not held']} not held, "
            f"{counts['inconclusive']} inconclusive")
    return text if is_evidence(preset) else f"{text} ({SMOKE_LABEL})"


def summary_dict(paper: Paper, preset: str, cfg: Preset, summary: Summary,
                 results: Sequence[Result], extra: dict[str, Any]) -> dict[str, Any]:
    """The machine-readable summary written as ``summary.json``.

    Each claim carries its full verdict (test, effect, CI, n, margin, p, mde, reason, cells,
    guards); ``held`` stays for older readers and is true only for *held*.  A smoke run says
    ``"evidence": false`` and its counts are labelled "smoke — not evidence"."""
    claims = [{"text": c.text, "evidence": c.evidence, "held": bool(c.held),
               "status": c.status, "verdict": c.verdict.to_dict()}
              for c in summary.claims]
    counts = verdict_counts(summary.claims)
    return {
        "slug": paper.slug,
        "title": paper.title,
        "area": paper.area,
        "preset": preset,
        "evidence": is_evidence(preset),
        "label": "evidence" if is_evidence(preset) else SMOKE_LABEL,
        "config": cfg.to_dict(),
        "seed_start": cfg.seed_start,
        "n_trials": len(results),
        "claims": claims,
        "claims_held": counts["held"],
        "claims_not_held": counts["not held"],
        "claims_inconclusive": counts["inconclusive"],
        "claims_total": len(claims),
        "tables": [{"title": t.title, "columns": list(t.columns),
                    "rows": [list(map(_plain, r)) for r in t.rows]} for t in summary.tables],
        "figures": [{"file": Path(f.path).name, "caption": f.caption} for f in summary.figures],
        "notes": list(summary.notes),
        "run": extra,
        "written": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }


def _plain(v: Any) -> Any:
    return v if isinstance(v, (int, float, str, bool)) or v is None else str(v)


_MARK = {"held": "HELD", "not held": "NOT HELD", "inconclusive": "INCONCLUSIVE"}
_CLASS = {"held": "held", "not held": "not", "inconclusive": "inc"}


def _fnum(x: Any) -> str:
    return "—" if x is None else (f"{x:.4g}" if isinstance(x, float) else str(x))


def _verdict_line(v: dict[str, Any]) -> str:
    ci = v["ci"]
    parts = [f"test `{v['test']}`", f"effect {_fnum(v['effect'])}"]
    if ci[0] is not None or ci[1] is not None:
        label = "range" if v["test"] == "bound_holds" else (
            "90% CI" if v["test"] == "equivalent" else "95% CI")
        parts.append(f"{label} [{_fnum(ci[0])}, {_fnum(ci[1])}]")
    parts.append(f"n = {v['n']}")
    if v["margin"] is not None:
        m = v["margin"]
        parts.append("margin " + (f"[{_fnum(m[0])}, {_fnum(m[1])}]" if isinstance(m, list)
                                  else _fnum(m)))
    if v.get("p_value") is not None:
        parts.append(f"p = {v['p_value']:.3g}")
    if v.get("mde") is not None:
        parts.append(f"mde {_fnum(v['mde'])}")
    return ", ".join(parts) + (f" — {v['reason']}" if v.get("reason") else "")


def _claims_md(data: dict[str, Any]) -> list[str]:
    counts = {"held": data["claims_held"], "not held": data["claims_not_held"],
              "inconclusive": data["claims_inconclusive"]}
    out = [f"## Claims: {counts_text(counts, data['preset'])}", ""]
    if not data["evidence"]:
        out += [f"*{SMOKE_LABEL}: this preset exercises the code with one or two seeds; its "
                "verdicts decide nothing.*", ""]
    for i, c in enumerate(data["claims"], 1):
        v = c["verdict"]
        out += [f"{i}. **{_MARK[c['status']]}** — {c['text']}",
                f"   - evidence: {c['evidence']}",
                f"   - verdict: {_verdict_line(v)}"]
        for cell in v["cells"]:
            out.append(f"     - {cell['cell']}: {_MARK[cell['verdict']]} ({_verdict_line(cell)})")
        for g in v["guards"]:
            out.append(f"   - guard: {g}")
    return out


def write_reports(outdir: Path, paper: Paper, preset: str, cfg: Preset, summary: Summary,
                  results: Sequence[Result], extra: dict[str, Any],
                  description: str = "") -> dict[str, Any]:
    """Write ``summary.json``, ``report.md`` and ``report.html`` into ``outdir``."""
    data = summary_dict(paper, preset, cfg, summary, results, extra)
    data["description"] = description
    atomic_write_text(outdir / "summary.json", json.dumps(data, indent=2) + "\n")

    cfg_line = ", ".join(f"{k}={v}" for k, v in data["config"].items())
    md = [f"# {paper.title}", "",
          f"`{paper.slug}` · area `{paper.area}` · preset `{preset}` · {len(results)} trials",
          ""]
    if description:
        md += [description, ""]
    md += [f"Configuration: {cfg_line}", ""]
    md += _claims_md(data)
    md += ["", "## Results (mean ± 95% CI across seeds)", ""]
    for t in summary.tables:
        md += [_md_table(t), ""]
    if summary.figures:
        md += ["## Figures", ""]
        for f in summary.figures:
            md += [f"![{f.caption}]({Path(f.path).name})", "", f"*{f.caption}*", ""]
    if summary.notes:
        md += ["## Setting and differences from the paper", ""]
        # a multi-line note (an operator's source, say) stays inside its list item
        md += ["- " + "\n".join(ln if i == 0 or not ln else "  " + ln
                                for i, ln in enumerate(n.split("\n"))) for n in summary.notes]
    atomic_write_text(outdir / "report.md", "\n".join(md) + "\n")

    def cells_html(v: dict[str, Any]) -> str:
        rows = "".join(f"<li>{html.escape(c['cell'])}: <b>{_MARK[c['verdict']]}</b> "
                       f"({html.escape(_verdict_line(c))})</li>" for c in v["cells"])
        rows += "".join(f"<li>guard: {html.escape(g)}</li>" for g in v["guards"])
        return f"<ul>{rows}</ul>" if rows else ""

    claims_html = "".join(
        f"<li class='{_CLASS[c['status']]}'><b>{_MARK[c['status']]}</b> — "
        f"{html.escape(c['text'])}<br><small>evidence: {html.escape(c['evidence'])}<br>"
        f"verdict: {html.escape(_verdict_line(c['verdict']))}</small>"
        f"{cells_html(c['verdict'])}</li>" for c in data["claims"])
    counts = {"held": data["claims_held"], "not held": data["claims_not_held"],
              "inconclusive": data["claims_inconclusive"]}
    smoke_note = ("" if data["evidence"] else
                  f"<p class='smoke'><b>{SMOKE_LABEL}</b>: this preset exercises the code with "
                  "one or two seeds; its verdicts decide nothing.</p>")
    figs = []
    for f in summary.figures:
        png = base64.b64encode(Path(f.path).read_bytes()).decode()
        alt = html.escape(f.caption)
        figs.append(f"<figure><img src='data:image/png;base64,{png}' alt='{alt}'>"
                    f"<figcaption>{html.escape(f.caption)}</figcaption></figure>")
    notes = "".join(f"<li><pre>{html.escape(n)}</pre></li>" if "\n" in n
                    else f"<li>{html.escape(n)}</li>" for n in summary.notes)
    page = f"""<!doctype html><html><head><meta charset='utf-8'>
<title>{html.escape(paper.slug)} · {preset}</title><style>{_CSS}</style></head><body>
<h1>{html.escape(paper.title)}</h1>
<p><code>{html.escape(paper.slug)}</code> · area <code>{paper.area}</code> · preset
<code>{preset}</code> · {len(results)} trials</p>
{f"<p>{html.escape(description)}</p>" if description else ""}
<p><small>Configuration: {html.escape(cfg_line)}</small></p>
<h2>Claims: {html.escape(counts_text(counts, preset))}</h2>{smoke_note}<ol>{claims_html}</ol>
<h2>Results (mean ± 95% CI across seeds)</h2>{''.join(_html_table(t) for t in summary.tables)}
{'<h2>Figures</h2>' + ''.join(figs) if figs else ''}
{'<h2>Setting and differences from the paper</h2><ul>' + notes + '</ul>' if notes else ''}
</body></html>
"""
    atomic_write_text(outdir / "report.html", page)
    return data


# overflow-wrap: long unbreakable tokens (hashes, config keys) wrap instead of widening the page;
# tables sit in a .scroll box (checked in a real browser by tests/experiment/test_report_browser).
_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
overflow-wrap:anywhere}.scroll{overflow-x:auto;max-width:100%}td,th{overflow-wrap:normal}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;
text-align:left}th{background:#f3f3f3}li.held b{color:#17702a}li.not b{color:#b00020}
li.inc b{color:#8a6d00}p.smoke{background:#fff4d6;padding:.4em}
img{max-width:100%}figure{margin:1em 0}figcaption{font-style:italic}"""


def _read_summary(path: Path) -> dict[str, Any] | None:
    """A run's ``summary.json``, or ``None`` if it cannot be read (a file left truncated by an
    older version, or edited): the index must not fail for one bad report."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    needed = {"claims_held", "claims_total"}
    return data if isinstance(data, dict) and needed <= data.keys() else None


def write_index(root: Path, papers: Sequence[Paper], preset: str | None = None) -> Path:
    """``<root>/index.html``: one row per paper with its status and, for every preset that has
    been run under ``root``, the claims held / total linked to that report.

    ``preset`` (the one just run) is listed even if no paper has results for it yet.
    """
    from optzoo.experiment.core import PRESET_NAMES

    presets = [p for p in PRESET_NAMES
               if p == preset or any((root / x.slug / p / "summary.json").exists()
                                      for x in papers)]
    rows = []
    for p in papers:
        cells = []
        for name in presets:
            summary = root / p.slug / name / "summary.json"
            data = _read_summary(summary) if summary.exists() else None
            if summary.exists() and data is None:
                cells.append("<td>unreadable summary.json (rerun to rebuild)</td>")
            elif data is not None:
                if "claims_inconclusive" in data:
                    text = (f"{data['claims_held']} / {data['claims_not_held']} / "
                            f"{data['claims_inconclusive']}")
                else:  # a report written before verdicts had three values
                    text = f"{data['claims_held']} of {data['claims_total']} held (old)"
                if not data.get("evidence", name != "smoke"):
                    text += " (smoke — not evidence)"
                cells.append(f"<td><a href='{p.slug}/{name}/report.html'>"
                             f"{html.escape(text)}</a></td>")
            else:
                cells.append("<td>—</td>")
        rows.append(f"<tr><td><code>{p.slug}</code></td><td>{html.escape(p.title)}</td>"
                    f"<td>{p.area}</td><td>{p.status}</td>{''.join(cells)}</tr>")
    head = "".join(f"<th>held / not held / inconclusive ({name})</th>" for name in presets)
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>optzoo reproductions"
            f"</title><style>{_CSS}</style></head><body><h1>optzoo reproductions</h1>"
            f"<p>{sum(p.status == 'implemented' for p in papers)} of {len(papers)} papers "
            f"implemented. Each cell gives the claims held / not held / inconclusive and links "
            f"to the report of that preset; smoke runs are no evidence.</p>"
            f"<div class='scroll'><table><thead><tr>"
            f"<th>slug</th><th>paper</th><th>area</th><th>status</th>{head}</tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></div></body></html>\n")
    path = root / "index.html"
    try:  # every paper may have failed before making its folder: the index still gets written
        root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise StoreError(f"{root}: cannot create the runs folder ({err.strerror or err})") \
            from None
    atomic_write_text(path, page)
    return path
