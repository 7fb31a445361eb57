"""A griffe extension: shows the docstrings' reStructuredText bits as Markdown.

optzoo's docstrings are Google style but name objects with Sphinx roles and lay a few tables out
as RST simple tables.  Markdown has neither, so ``:func:`optzoo.x.f``` would be printed
literally and a table would run into one paragraph.  Before mkdocstrings renders a docstring,
this turns a role into code (`` `optzoo.x.f` ``; ``~a.B`` into `` `B` ``) and a simple table
into a Markdown table.  Roles do not become links: one naming an object that the site does not
document must not become a broken cross-reference.

Example:
    >>> strip_roles("see :class:`~optzoo.experiment.Verdict` and :func:`f`")
    'see `Verdict` and `f`'
    >>> print(rst_tables(chr(10).join(["=  ==", "x  y", "=  ==", "1  2", "=  =="])))
    | x | y |
    |---|---|
    | 1 | 2 |
"""

from __future__ import annotations

import re

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|obj|exc|const|term|ref):`([^`]+)`")


def _target(match: re.Match) -> str:
    name = match.group(1).strip()
    if "<" in name and name.endswith(">"):  # :ref:`text <target>`
        name = name.split("<", 1)[0].strip()
    if name.startswith("~"):
        name = name[1:].rsplit(".", 1)[-1]
    return f"`{name}`"


_LITERAL = re.compile(r"^(\s*)(.*?)(\s*)::\s*$")


def literal_blocks(text: str) -> str:
    """RST's ``text::`` (a literal block follows) as Markdown's ``text:``; a lone ``Word::``
    becomes ``**Word:**`` (not ``Word:``, which Google style would take for a section)."""
    out = []
    for line in text.splitlines():
        m = _LITERAL.match(line)
        if m and not line.lstrip().startswith((">>>", "...")):
            ind, body, space = m.groups()
            if not body:  # a bare "::" line
                continue
            line = f"{ind}**{body}:**" if re.fullmatch(r"\w+( \(.*\))?", body) else (
                f"{ind}{body}:")
        out.append(line)
    return "\n".join(out)


def strip_roles(text: str) -> str:
    """``text`` with every Sphinx role replaced by Markdown code."""
    return _ROLE.sub(_target, text)


_BORDER = re.compile(r"^(\s*)(=+)((?:\s+=+)+)\s*$")


def _columns(border: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"=+", border)]


def _split(line: str, cols: list[tuple[int, int]]) -> list[str]:
    cells = []
    for i, (start, _) in enumerate(cols):
        stop = cols[i + 1][0] if i + 1 < len(cols) else len(line)
        cells.append(line[start:stop].strip())
    return cells


def rst_tables(text: str) -> str:
    """``text`` with every RST simple table (``===`` borders, a header row, rows whose first
    cell is blank continuing the row above) rewritten as a Markdown table."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _BORDER.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        cols = _columns(lines[i])
        rows: list[list[str]] = []
        header: list[str] | None = None
        j = i + 1
        while j < len(lines):
            if _BORDER.match(lines[j]):
                if header is None and rows:
                    header, rows = rows[0], []
                    j += 1
                    continue
                break
            if lines[j].strip():
                cells = _split(lines[j], cols)
                if rows and not cells[0]:
                    rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells, strict=True)]
                else:
                    rows.append(cells)
            j += 1
        if j >= len(lines) or header is None:  # not a table after all
            out.append(lines[i])
            i += 1
            continue
        ind = m.group(1)
        esc = [[c.replace("|", "\\|") for c in r] for r in (header, *rows)]
        out.append(ind + "| " + " | ".join(esc[0]) + " |")
        out.append(ind + "|" + "---|" * len(cols))
        out += [ind + "| " + " | ".join(r) + " |" for r in esc[1:]]
        i = j + 1
    return "\n".join(out)


_EXAMPLE = re.compile(r"^(\s*)Example:\s*$", re.M)


def example_sections(text: str) -> str:
    """Google style's singular ``Example:`` as ``Examples:``: griffe parses only the plural as an
    examples section (``>>>`` lines rendered as code); the singular would become an admonition
    whose ``x[0]["grad"]`` Markdown reads as a reference link.

    >>> example_sections("Example:\n    >>> 1")
    'Examples:\n    >>> 1'
    """
    return _EXAMPLE.sub(r"\1Examples:", text)


class SphinxRoles(griffe.Extension):
    """Rewrites the roles of every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:  # griffe ≥ 1
        if obj.docstring is not None:
            obj.docstring.value = example_sections(
                literal_blocks(rst_tables(strip_roles(obj.docstring.value))))
