"""Generates the documentation site's pages from the code: an mkdocs hook and a script.

Nothing here is written by hand per paper or per area: the home page is the README's opening,
the paper pages come from :data:`optzoo.registry.PAPERS` (title, method, area, OpenReview id),
the method module from :func:`optzoo.cli.method_module`, the example from that module's
docstring (else from its first class or function that has one), and the verdicts from
``results/<slug>/<preset>/summary.json`` where the repository publishes one.  The area pages
are ``::: optzoo.<area>`` blocks for mkdocstrings.

As an mkdocs hook (``hooks:`` in ``mkdocs.yml``) the pages are added to the build in memory and
the navigation is set from the registry, so ``mkdocs build`` alone builds the whole site.  As a
script, ``python docs/gen_pages.py OUTDIR`` writes the same pages under ``OUTDIR`` to read them.

Example:
    >>> pages = generate()
    >>> "papers/ham.md" in pages and "api/optim.md" in pages
    True
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
RESULTS = ROOT / "results"
if str(SRC) not in sys.path:  # a checkout that is not pip-installed still builds
    sys.path.insert(0, str(SRC))

from optzoo import registry  # noqa: E402  (light: plain data, imports nothing heavy)
from optzoo.cli import method_module  # noqa: E402

#: presets in the order their verdicts are shown: the strongest evidence first
PRESET_ORDER = ("full", "quick", "smoke")
NO_RESULTS = "No published results yet."
VERDICTS = ("held", "not held", "inconclusive")


# ---------------------------------------------------------------------------------- helpers
def areas() -> list[str]:
    """The registry's areas that have a package ``optzoo.<area>`` (in registry order)."""
    return [a for a in registry.AREAS if (SRC / "optzoo" / a / "__init__.py").exists()]


def module_file(module: str) -> Path | None:
    """The source file of ``module`` (a package's ``__init__.py``), or ``None``."""
    base = SRC.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


_EXAMPLE_HEAD = re.compile(r"^(\s*)Examples?\b[^\n]*?:{1,2}\s*$")


def module_example(module: str) -> tuple[str, str] | None:
    """``(where, code)``: the example of ``module``'s docstring or, failing that, of the first
    public class (then function) it defines, in source order, whose docstring has one."""
    path = module_file(module)
    if path is None:
        return None
    tree = ast.parse(path.read_text(encoding="utf-8"))
    code = docstring_example(ast.get_docstring(tree) or "")
    if code:
        return module, code
    for kind in (ast.ClassDef, ast.FunctionDef):  # a class is more often the entry point
        for node in tree.body:
            if isinstance(node, kind) and not node.name.startswith("_"):
                code = docstring_example(ast.get_docstring(node) or "")
                if code:
                    return f"{module}.{node.name}", code
    return None


def docstring_example(doc: str) -> str | None:
    """The code of the first ``Example:`` / ``Examples:`` section (or ``Example::`` literal
    block) of a docstring, dedented; ``None`` if it has none.

    Example:
        >>> docstring_example("Title.\\n\\nExample:\\n    >>> 1 + 1\\n    2\\n")
        '>>> 1 + 1\\n2'
    """
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        head = _EXAMPLE_HEAD.match(line)
        if not head:
            continue
        indent = len(head.group(1))
        body: list[str] = []
        for nxt in lines[i + 1:]:
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                break
            body.append(nxt)
        code = textwrap.dedent("\n".join(body)).strip("\n")
        code = re.sub(r"^```\w*\n|\n```$", "", code)  # a fenced example: keep its code
        if code.strip():
            return code
    return None


def read_summary(path: Path) -> dict | None:
    """A published ``summary.json``, or ``None`` if it cannot be read or lacks its claims."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list):
        return None
    return data


def published(slug: str, results: Path = RESULTS) -> list[tuple[str, dict]]:
    """``(preset, summary)`` for every ``results/<slug>/<preset>/summary.json``, strongest
    preset first (full, quick, smoke, then any other name)."""
    folder = results / slug
    if not folder.is_dir():
        return []
    found = {}
    for path in sorted(folder.glob("*/summary.json")):
        data = read_summary(path)
        if data is not None:
            found[path.parent.name] = data
    rank = {p: i for i, p in enumerate(PRESET_ORDER)}
    return sorted(found.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))


def _num(x) -> str:
    return "—" if x is None else (f"{x:.4g}" if isinstance(x, float) else str(x))


def _verdict_detail(v: dict) -> str:
    parts = [f"`{v.get('test', '?')}`"]
    if v.get("effect") is not None:
        parts.append(f"effect {_num(v['effect'])}")
    ci = v.get("ci") or [None, None]
    if ci[0] is not None or ci[1] is not None:
        parts.append(f"CI [{_num(ci[0])}, {_num(ci[1])}]")
    if v.get("n") is not None:
        parts.append(f"n = {v['n']}")
    if v.get("margin") is not None:
        m = v["margin"]
        parts.append("margin " + (f"[{_num(m[0])}, {_num(m[1])}]" if isinstance(m, list)
                                  else _num(m)))
    if v.get("p_value") is not None:
        parts.append(f"p = {v['p_value']:.3g}")
    return ", ".join(parts)


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def verdicts_markdown(slug: str, results: Path = RESULTS) -> list[str]:
    """The "Published verdicts" section of a paper page."""
    runs = published(slug, results)
    out = ["## Published verdicts", ""]
    if not runs:
        return out + [f"{NO_RESULTS} (`results/{slug}/<preset>/summary.json` is shown here "
                      "once the repository publishes it.)", ""]
    for preset, data in runs:
        claims = data["claims"]
        counts = dict.fromkeys(VERDICTS, 0)
        for c in claims:
            status = c.get("status") or (c.get("verdict") or {}).get("verdict")
            if status in counts:
                counts[status] += 1
        evidence = data.get("evidence", preset != "smoke")
        label = "" if evidence else " (smoke — not evidence)"
        when = f", written {data['written']}" if data.get("written") else ""
        out += [f"### Preset `{preset}`{label}", "",
                f"{counts['held']} held, {counts['not held']} not held, "
                f"{counts['inconclusive']} inconclusive of {len(claims)} claims; "
                f"{data.get('n_trials', '?')} trials{when}.", "",
                "| claim | verdict | test |", "|---|---|---|"]
        for c in claims:
            v = c.get("verdict") or {}
            status = c.get("status") or v.get("verdict", "?")
            out.append(f"| {_cell(c.get('text', ''))} | **{_cell(status)}** | "
                       f"{_cell(_verdict_detail(v))} |")
        out.append("")
    return out


# ------------------------------------------------------------------------------------ pages
def paper_page(paper: registry.Paper, results: Path = RESULTS) -> str:
    """The page of one paper: what the registry knows, the method's module and example, and
    its published verdicts."""
    module = method_module(paper)
    title = paper.title
    if paper.openreview:
        title = f"[{title}](https://openreview.net/forum?id={paper.openreview})"
    lines = [f"# {paper.method}", "", f"**{title}**", "",
             "| | |", "|---|---|",
             f"| slug | `{paper.slug}` |",
             f"| method | {paper.method} |",
             f"| area | [`optzoo.{paper.area}`](../api/{paper.area}.md) |"
             if paper.area in areas() else f"| area | `{paper.area}` |",
             f"| status | {paper.status} |"]
    if paper.reproduction is None:
        lines += ["", "The reproduction of this paper is planned: nothing is implemented yet.",
                  ""]
        return "\n".join(lines) + "\n"
    repro = paper.reproduction.partition(":")[0]
    api = f"../api/{paper.area}.md#{module}"  # mkdocstrings' heading id
    lines += [f"| module | [`{module}`]({api}) |",
              f"| reproduction | `{repro}` |", "",
              "## Reproduce", "", "```bash",
              f"optzoo reproduce {paper.slug}                 # quick preset",
              f"optzoo reproduce {paper.slug} --preset full", "```", ""]
    found = module_example(module)
    lines += ["## Example", ""]
    if found:
        where, example = found
        lang = "pycon" if example.lstrip().startswith(">>>") else "python"
        lines += [f"From the docstring of `{where}`:", "", f"```{lang}", example, "```", ""]
    else:
        lines += [f"No docstring of `{module}` has an example yet; see "
                  f"[its API]({api}).", ""]
    lines += verdicts_markdown(paper.slug, results)
    return "\n".join(lines) + "\n"


@functools.cache
def _griffe_root():
    """The ``optzoo`` package loaded once, statically, by griffe (as mkdocstrings loads it)."""
    import griffe

    return griffe.GriffeLoader(search_paths=[str(SRC)]).load("optzoo")


def _griffe_package(area: str):
    """``optzoo.<area>`` as griffe sees it."""
    return _griffe_root().modules[area]


def _walk(module):
    for name, sub in sorted(module.modules.items()):
        if name.startswith("_") or name == "reproduce" or sub.is_alias:
            continue
        yield sub
        yield from _walk(sub)


def area_modules(area: str) -> list[tuple[str, list[str]]]:
    """``(module, names)`` for the modules an area page shows below its package block.

    The package block (``::: optzoo.<area>``) shows the names of ``optzoo.<area>.__all__``
    that griffe resolves statically.  An exported name it cannot show -- loaded lazily
    (``optzoo.llm``), or a function named like its module (``optzoo.unlearning.ofmu``) -- is
    shown under the module that defines it; every paper's method module is shown too (its
    docstring, the paper pages link to it).  So each exported object appears once.
    """
    pkg = _griffe_package(area)
    exports = [n for n in (pkg.exports or ()) if isinstance(n, str)]
    if not exports:  # an ``__all__`` griffe cannot evaluate (``[..., *sorted(_LAZY)]``)
        try:
            exports = list(importlib.import_module(f"optzoo.{area}").__all__)
        except Exception:  # noqa: BLE001  (an extra not installed: show the package block)
            exports = []
    # griffe's package block shows none of the exports when it could not read ``__all__``
    missing = set(exports) if not pkg.exports else set()
    for name in exports:
        member = pkg.members.get(name)
        if member is None or member.is_module:
            missing.add(name)
    method_modules = {method_module(p) for p in registry.PAPERS
                      if p.area == area and p.reproduction}
    out = []
    for mod in _walk(pkg):
        names = [n for n, o in mod.members.items()
                 if n in missing and not o.is_alias and not o.is_module]
        missing -= set(names)
        if names or mod.path in method_modules:
            out.append((mod.path, names))
    return out


def area_page(area: str) -> str:
    """An area's API page: its papers, the package's exported API, then each module."""
    papers = [p for p in registry.PAPERS if p.area == area]
    lines = [f"# `optzoo.{area}`", ""]
    if papers:
        lines += ["Papers of this area:", ""]
        lines += [f"- [{p.method}](../papers/{p.slug}.md): {p.title} ({p.status})"
                  for p in papers]
        lines.append("")
    lines += [f"::: optzoo.{area}", ""]
    for module, names in area_modules(area):
        members = ("false" if not names else "[" + ", ".join(names) + "]")
        lines += [f"::: {module}", "    options:", f"      members: {members}", ""]
    return "\n".join(lines) + "\n"


def home_page(readme: Path = ROOT / "README.md") -> str:
    """The README's opening (everything before its paper table), then links into the site."""
    text = readme.read_text(encoding="utf-8")
    cut = text.find("\n## Papers")
    if cut < 0:  # no paper table: stop at the second section
        heads = [m.start() for m in re.finditer(r"^## ", text, flags=re.M)]
        cut = heads[1] if len(heads) > 1 else len(text)
    lines = [text[:cut].rstrip(), "", "## This site", "",
             "- [The reproduction contract and its verdicts](contract.md)",
             "- One page per area with its API reference, built from the docstrings.",
             "- One page per paper: its method, module, example and published verdicts.", "",
             "## Papers", "", "| paper | method | area | status |", "|---|---|---|---|"]
    for p in registry.PAPERS:
        area = (f"[`{p.area}`](api/{p.area}.md)" if p.area in areas() else f"`{p.area}`")
        lines.append(f"| [{_cell(p.title)}](papers/{p.slug}.md) | {_cell(p.method)} | {area} "
                     f"| {p.status} |")
    return "\n".join(lines) + "\n"


def generate(results: Path = RESULTS) -> dict[str, str]:
    """Every generated page: ``{path under docs/: markdown}``."""
    pages = {"index.md": home_page()}
    pages.update({f"api/{a}.md": area_page(a) for a in areas()})
    pages.update({f"papers/{p.slug}.md": paper_page(p, results) for p in registry.PAPERS})
    return pages


def nav() -> list:
    """The site's navigation: home, the contract, the engine, the areas, the papers."""
    by_area = []
    for a in registry.AREAS:
        papers = [{p.method: f"papers/{p.slug}.md"} for p in registry.PAPERS if p.area == a]
        if papers:
            by_area.append({a: papers})
    return [{"Home": "index.md"},
            {"Reproduction contract": "contract.md"},
            {"API": [{"Engine": "api/engine.md"}, *({a: f"api/{a}.md"} for a in areas())]},
            {"Papers": by_area}]


# ----------------------------------------------------------------------- mkdocs hook events
def on_config(config):
    """Set the navigation from the registry."""
    config["nav"] = nav()
    return config


def on_files(files, config):
    """Add the generated pages to the build (in memory: nothing is written under docs/)."""
    from mkdocs.structure.files import File

    for path, content in generate().items():
        existing = files.get_file_from_path(path)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, path, content=content))
    return files


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python docs/gen_pages.py OUTDIR")
    out = Path(sys.argv[1])
    for path, content in generate().items():
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_text(content, encoding="utf-8")
    print(f"wrote {len(generate())} pages under {out}")
