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
    return (f"<h3>{html.escape(table.title)}</h3>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def summary_dict(paper: Paper, preset: str, cfg: Preset, summary: Summary,
                 results: Sequence[Result], extra: dict[str, Any]) -> dict[str, Any]:
    """The machine-readable summary written as ``summary.json``."""
    claims = [{"text": c.text, "evidence": c.evidence, "held": bool(c.held)}
              for c in summary.claims]
    return {
        "slug": paper.slug,
        "title": paper.title,
        "area": paper.area,
        "preset": preset,
        "config": cfg.to_dict(),
        "n_trials": len(results),
        "claims": claims,
        "claims_held": sum(c["held"] for c in claims),
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


def _claims_md(data: dict[str, Any]) -> list[str]:
    out = [f"## Claims: {data['claims_held']} of {data['claims_total']} held", ""]
    for i, c in enumerate(data["claims"], 1):
        verdict = "HELD" if c["held"] else "NOT HELD"
        out += [f"{i}. **{verdict}** — {c['text']}", f"   - evidence: {c['evidence']}"]
    return out


def write_reports(outdir: Path, paper: Paper, preset: str, cfg: Preset, summary: Summary,
                  results: Sequence[Result], extra: dict[str, Any],
                  description: str = "") -> dict[str, Any]:
    """Write ``summary.json``, ``report.md`` and ``report.html`` into ``outdir``."""
    data = summary_dict(paper, preset, cfg, summary, results, extra)
    data["description"] = description
    (outdir / "summary.json").write_text(json.dumps(data, indent=2) + "\n")

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
        md += [f"- {n}" for n in summary.notes]
    (outdir / "report.md").write_text("\n".join(md) + "\n")

    claims_html = "".join(
        f"<li class='{'held' if c['held'] else 'not'}'><b>{'HELD' if c['held'] else 'NOT HELD'}"
        f"</b> — {html.escape(c['text'])}<br><small>evidence: {html.escape(c['evidence'])}"
        f"</small></li>" for c in data["claims"])
    figs = []
    for f in summary.figures:
        png = base64.b64encode(Path(f.path).read_bytes()).decode()
        alt = html.escape(f.caption)
        figs.append(f"<figure><img src='data:image/png;base64,{png}' alt='{alt}'>"
                    f"<figcaption>{html.escape(f.caption)}</figcaption></figure>")
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in summary.notes)
    page = f"""<!doctype html><html><head><meta charset='utf-8'>
<title>{html.escape(paper.slug)} · {preset}</title><style>{_CSS}</style></head><body>
<h1>{html.escape(paper.title)}</h1>
<p><code>{html.escape(paper.slug)}</code> · area <code>{paper.area}</code> · preset
<code>{preset}</code> · {len(results)} trials</p>
{f"<p>{html.escape(description)}</p>" if description else ""}
<p><small>Configuration: {html.escape(cfg_line)}</small></p>
<h2>Claims: {data['claims_held']} of {data['claims_total']} held</h2><ol>{claims_html}</ol>
<h2>Results (mean ± 95% CI across seeds)</h2>{''.join(_html_table(t) for t in summary.tables)}
{'<h2>Figures</h2>' + ''.join(figs) if figs else ''}
{'<h2>Setting and differences from the paper</h2><ul>' + notes + '</ul>' if notes else ''}
</body></html>
"""
    (outdir / "report.html").write_text(page)
    return data


_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;
text-align:left}th{background:#f3f3f3}li.held b{color:#17702a}li.not b{color:#b00020}
img{max-width:100%}figure{margin:1em 0}figcaption{font-style:italic}"""


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
            if summary.exists():
                data = json.loads(summary.read_text())
                cells.append(f"<td><a href='{p.slug}/{name}/report.html'>"
                             f"{data['claims_held']}/{data['claims_total']}</a></td>")
            else:
                cells.append("<td>—</td>")
        rows.append(f"<tr><td><code>{p.slug}</code></td><td>{html.escape(p.title)}</td>"
                    f"<td>{p.area}</td><td>{p.status}</td>{''.join(cells)}</tr>")
    head = "".join(f"<th>claims held ({name})</th>" for name in presets)
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>optzoo reproductions"
            f"</title><style>{_CSS}</style></head><body><h1>optzoo reproductions</h1>"
            f"<p>{sum(p.status == 'implemented' for p in papers)} of {len(papers)} papers "
            f"implemented. Each cell links to the report of that preset.</p><table><thead><tr>"
            f"<th>slug</th><th>paper</th><th>area</th><th>status</th>{head}</tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></body></html>\n")
    path = root / "index.html"
    path.write_text(page)
    return path
