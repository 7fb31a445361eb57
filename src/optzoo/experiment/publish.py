"""Published results: ``results/<slug>/<preset>/`` and the generated ``RESULTS.md``.

A user of a claim should see its verdicts without spending CPU-hours, so the repository keeps a
small text copy of every finished run of a registered preset:

* ``summary.json`` and ``report.md`` of the run, rebuilt from the stored trials by the current
  code when it is published (figures are not published; their links in ``report.md`` become a
  line saying how to draw them);
* ``trials.keys``: the sorted keys of the trials the preset expanded to at publication;
* ``provenance.json``: the commit the summary was written at (and whether the tree was dirty),
  when the run finished and was published, its wall time, and ``stale`` (see below).

A published result is *stale* when the current code's preset no longer expands to the trial keys
it was run with (a changed default, a new method, a new field): its verdicts then describe an
experiment that no longer exists.  :func:`stale_results` finds those; ``optzoo publish --check``
fails on any that is not marked, and ``optzoo publish --mark-stale`` marks them (``RESULTS.md``
then says "stale") until the paper is re-run and published again.  The repository's test
``tests/test_published_results.py`` runs the same check on ``results/``.

Only a registered preset's own configuration is published: a run with ``--set``, ``--seeds`` or
``--seed-start`` answers a different question, and smoke runs are no evidence.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from optzoo import registry
from optzoo.errors import ConfigError
from optzoo.experiment.store import ResultStore, RunLock, atomic_write_text

PUBLISHED_PRESETS = ("quick", "full")
RESULTS_MD = "RESULTS.md"
NOTES_FILE = "notes.json"  # {"<slug>/<preset>": "why it is not published yet"}
_IMAGE = re.compile(r"^!\[(?P<alt>[^\]]*)\]\((?P<file>[^)]+)\)\s*$")


@dataclass(frozen=True)
class Published:
    """One published result, as read back from ``results/<slug>/<preset>/``."""

    slug: str
    preset: str
    path: Path
    keys: tuple[str, ...]
    summary: dict[str, Any]
    provenance: dict[str, Any]


@dataclass(frozen=True)
class Staleness:
    """A published result whose trial keys differ from the current preset's expansion."""

    slug: str
    preset: str
    missing: int  # keys the current preset expands to that the published run lacks
    extra: int  # keys the published run has that the current preset no longer has
    marked: bool  # its provenance says stale


def source_commit() -> tuple[str | None, bool]:
    """``(commit, dirty)`` of the git checkout optzoo is imported from, ``(None, False)`` when
    it is not a checkout (an installed wheel) or git is missing."""
    root = Path(__file__).resolve().parents[3]
    if not (root / "src" / "optzoo").is_dir():  # an installed copy, maybe inside another repo
        return None, False
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], text=True,
                              capture_output=True, timeout=10)
        if head.returncode:
            return None, False
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                 "--untracked-files=no", "--", "src"], text=True,
                                capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None, False
    return head.stdout.strip(), bool(status.stdout.strip())


def expected_keys(slug: str, preset: str) -> list[str]:
    """The sorted trial keys the registered ``preset`` of ``slug`` expands to now."""
    from optzoo.experiment.runner import expected_trials

    repro = registry.get(slug).load()
    return sorted(k for k, _ in expected_trials(slug, repro, repro.preset(preset)))


def _strip_figures(report: str, slug: str, preset: str) -> str:
    out = []
    for line in report.splitlines():
        m = _IMAGE.match(line)
        if m:
            out.append(f"*(figure `{m['file']}` is not published: `optzoo reproduce {slug} "
                       f"--preset {preset}` draws it)*")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def publish(rundir: Path | str, results: Path | str = "results") -> Path:
    """Copy the run in ``rundir`` (``runs/<slug>/<preset>``) into ``results`` and regenerate
    ``RESULTS.md``; returns the published folder.

    The summary is rebuilt from the stored trials by the current code first, so what is
    published is what this commit concludes from those trials.

    Raises:
        ConfigError: ``rundir`` is not a finished run of a registered quick/full preset (a smoke
            run, a run with overrides or other seeds, or trials missing).
    """
    from optzoo.experiment.runner import config_from_dict, summarize_run

    rundir = Path(rundir)
    run_json = rundir / "run.json"
    if not run_json.is_file():
        raise ConfigError(f"{rundir}: not a run folder (no run.json); expected e.g. "
                          f"runs/<slug>/<preset>")
    info = json.loads(run_json.read_text())
    slug, preset = info["slug"], info["preset"]
    if preset not in PUBLISHED_PRESETS:
        raise ConfigError(f"{rundir}: preset {preset!r} is not published (smoke runs are no "
                          f"evidence); publish a run of {' or '.join(PUBLISHED_PRESETS)}")
    repro = registry.get(slug).load()
    base = repro.preset(preset)
    cfg = config_from_dict(repro, preset, info["config"],
                           seed_start=int(info.get("seed_start", 0)))
    changed = [f.name for f in dataclasses.fields(base)
               if getattr(cfg, f.name) != getattr(base, f.name)]
    if changed:
        raise ConfigError(f"{rundir}: the run differs from the registered {preset!r} preset in "
                          f"{', '.join(changed)}; only a preset's own configuration is "
                          f"published (rerun without --set/--seeds/--seed-start)")
    keys = expected_keys(slug, preset)
    store = ResultStore(rundir / "trials.jsonl")
    missing = [k for k in keys if k not in store]
    if missing:
        raise ConfigError(f"{rundir}: {len(missing)} of {len(keys)} trials have no stored "
                          f"result; rerun `optzoo reproduce {slug} --preset {preset}` to "
                          f"finish them before publishing")
    old = {}
    if (rundir / "summary.json").is_file():
        try:
            old = json.loads((rundir / "summary.json").read_text()).get("run", {})
        except ValueError:
            old = {}
    with RunLock(rundir):
        summarize_run(slug, repro, preset, cfg, rundir, old)
    summary = json.loads((rundir / "summary.json").read_text())
    commit, dirty = source_commit()
    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    provenance = {"slug": slug, "preset": preset, "commit": commit, "dirty": dirty,
                  "summarised": summary.get("written"), "published": now,
                  "seconds": old.get("seconds"), "n_trials": len(keys), "stale": False}

    dest = Path(results) / slug / preset
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    atomic_write_text(tmp / "summary.json", json.dumps(summary, indent=2) + "\n")
    atomic_write_text(tmp / "report.md",
                      _strip_figures((rundir / "report.md").read_text(), slug, preset))
    atomic_write_text(tmp / "trials.keys", "\n".join(keys) + "\n")
    atomic_write_text(tmp / "provenance.json", json.dumps(provenance, indent=2) + "\n")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    write_results_md(results)
    return dest


def published(results: Path | str = "results") -> list[Published]:
    """Every result under ``results``, in registry order then preset order.

    Raises:
        ConfigError: a published folder lacks one of its files or names an unknown paper.
    """
    results = Path(results)
    order = {p.slug: i for i, p in enumerate(registry.CARDS)}
    out = []
    for prov_path in sorted(results.glob("*/*/provenance.json")):
        folder = prov_path.parent
        slug, preset = folder.parent.name, folder.name
        if slug not in order:
            raise ConfigError(f"{folder}: {slug!r} is not a registered paper")
        for name in ("summary.json", "report.md", "trials.keys"):
            if not (folder / name).is_file():
                raise ConfigError(f"{folder}: {name} is missing; publish the run again")
        keys = tuple(k for k in (folder / "trials.keys").read_text().split() if k)
        out.append(Published(slug, preset, folder, keys,
                             json.loads((folder / "summary.json").read_text()),
                             json.loads(prov_path.read_text())))
    rank = {p: i for i, p in enumerate(PUBLISHED_PRESETS)}
    return sorted(out, key=lambda r: (order[r.slug], rank.get(r.preset, 99)))


def stale_results(results: Path | str = "results") -> list[Staleness]:
    """The published results whose keys differ from what the current presets expand to."""
    out = []
    for r in published(results):
        now = set(expected_keys(r.slug, r.preset))
        then = set(r.keys)
        if now != then:
            out.append(Staleness(r.slug, r.preset, len(now - then), len(then - now),
                                 bool(r.provenance.get("stale"))))
    return out


def mark_stale(results: Path | str = "results") -> list[Staleness]:
    """Mark every stale result as such (and unmark any that matches again), then regenerate
    ``RESULTS.md``; returns the stale ones."""
    stale = stale_results(results)
    keys = {(s.slug, s.preset) for s in stale}
    for r in published(results):
        flag = (r.slug, r.preset) in keys
        if bool(r.provenance.get("stale")) != flag:
            atomic_write_text(r.path / "provenance.json",
                              json.dumps({**r.provenance, "stale": flag}, indent=2) + "\n")
    write_results_md(results)
    return [dataclasses.replace(s, marked=True) for s in stale]


def _notes(results: Path) -> dict[str, str]:
    path = results / NOTES_FILE
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ConfigError(f"{path}: expected an object of \"<slug>/<preset>\": \"note\" strings")
    return data


def results_markdown(results: Path | str = "results") -> str:
    """The text of ``RESULTS.md``: one row per implemented paper, a cell per published preset
    with held / not held / inconclusive, the date and commit of the run and a link to its
    report; unpublished cells show the note of ``notes.json`` where one is given."""
    results = Path(results)
    by = {(r.slug, r.preset): r for r in published(results)}
    notes = _notes(results)
    lines = [
        "# Published results",
        "",
        "Generated by `optzoo publish` from the folders beside this file; do not edit by hand.",
        "Each cell gives the claims **held / not held / inconclusive** of that preset, the date",
        "and commit its summary was written at, and a link to its report. A *stale* result was",
        "run with trial keys the current preset no longer expands to: re-run it before you",
        "rely on it. Figures are not published: `optzoo reproduce <slug> --preset <preset>`",
        "draws them (it runs the preset's trials on your machine).",
        "",
        "| paper | area | " + " | ".join(PUBLISHED_PRESETS) + " |",
        "|---|---|" + "---|" * len(PUBLISHED_PRESETS),
    ]
    for p in registry.CARDS:
        hidden = p.slug.startswith("_") and not any((p.slug, x) in by
                                                     for x in PUBLISHED_PRESETS)
        if p.status != "implemented" or hidden:
            continue
        cells = []
        for preset in PUBLISHED_PRESETS:
            r = by.get((p.slug, preset))
            if r is None:
                cells.append(notes.get(f"{p.slug}/{preset}", "not published"))
                continue
            s = r.summary
            date = str(r.provenance.get("summarised") or r.provenance.get("published"))[:10]
            commit = (r.provenance.get("commit") or "unknown")[:8]
            if r.provenance.get("dirty"):
                commit += "+dirty"
            text = (f"[{s['claims_held']} / {s['claims_not_held']} / "
                    f"{s['claims_inconclusive']}]({p.slug}/{preset}/report.md) · {date} · "
                    f"`{commit}`")
            if r.provenance.get("stale"):
                text = "**stale** · " + text
            cells.append(text)
        lines.append(f"| `{p.slug}` | {p.area} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_results_md(results: Path | str = "results") -> Path:
    """Regenerate ``results/RESULTS.md``."""
    results = Path(results)
    results.mkdir(parents=True, exist_ok=True)
    path = results / RESULTS_MD
    atomic_write_text(path, results_markdown(results))
    return path
