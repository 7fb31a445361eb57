"""Run a reproduction: expand its preset into trials, run the missing ones, store, summarise.

The output of a run is ``<out>/<slug>/<preset>/``: ``trials.jsonl`` (the result store),
``run.json`` (the configuration), ``report.md``, ``report.html``, ``summary.json`` and the
figures.  Running the same command again only runs trials that are not in the store yet.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from optzoo import registry
from optzoo.errors import ConfigError, StoreError
from optzoo.experiment import backends
from optzoo.experiment.core import MAX_SEEDS, Preset, Reproduction, Result, Summary
from optzoo.experiment.progress import Progress
from optzoo.experiment.store import ResultStore, RunLock, atomic_write_text

DEVICES = ("cpu", "cuda")


@dataclass(frozen=True)
class RunOutcome:
    """What one reproduction run produced."""

    slug: str
    preset: str
    outdir: Path
    summary: Summary
    results: list[Result]
    ran: int
    skipped: int
    seconds: float


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else (os.cpu_count() or 1))


def check_device(device: str) -> None:
    """Reject an unknown device, or ``cuda`` where torch sees no GPU."""
    if device not in DEVICES:
        raise ConfigError(f"unknown device {device!r}; allowed: {', '.join(DEVICES)}")
    if device == "cuda":
        try:
            import torch
        except ImportError:
            raise ConfigError("device 'cuda' needs torch with CUDA support installed") from None
        if not torch.cuda.is_available():
            raise ConfigError("device 'cuda': torch sees no CUDA device on this machine")


def resolve_config(repro: Reproduction, preset: str, seeds: int | None = None,
                   overrides: dict[str, str] | None = None,
                   seed_start: int | None = None) -> Preset:
    """The preset of ``repro`` with ``--seeds``, ``--seed-start`` and ``--set`` overrides
    applied and validated."""
    cfg = repro.preset(preset)
    if overrides:
        cfg = cfg.with_overrides(overrides)
    if seeds is not None:
        if not 1 <= seeds <= MAX_SEEDS:
            raise ConfigError(f"--seeds: expected an integer in 1..{MAX_SEEDS}, got {seeds}")
        cfg = dataclasses.replace(cfg, seeds=seeds)
    if seed_start is not None:
        if seed_start < 0:
            raise ConfigError(f"--seed-start: expected an integer >= 0, got {seed_start}")
        cfg = dataclasses.replace(cfg, seed_start=seed_start)
    return cfg


def config_from_dict(repro: Reproduction, preset: str, stored: dict[str, Any],
                     seed_start: int = 0) -> Preset:
    """Rebuild a configuration saved in ``run.json`` (lists back to tuples)."""
    base = repro.preset(preset)
    hints = typing.get_type_hints(type(base))
    values: dict[str, Any] = {"seed_start": int(stored.get("seed_start", seed_start))}
    for f in dataclasses.fields(base):
        if f.name in stored:
            v = stored[f.name]
            values[f.name] = tuple(v) if typing.get_origin(hints[f.name]) is tuple else v
    return dataclasses.replace(base, **values)


def expected_trials(slug: str, repro: Reproduction, cfg: Preset):
    """``[(key, trial)]`` of ``cfg``: the reproduction's trials, seeds shifted by
    ``cfg.seed_start`` (a reproduction numbers its seeds from 0)."""
    trials = repro.trials(cfg)
    if cfg.seed_start:
        trials = [dataclasses.replace(t, seed=t.seed + cfg.seed_start) for t in trials]
    keyed = [(t.key(slug), t) for t in trials]
    if len({k for k, _ in keyed}) != len(keyed):
        raise ConfigError(f"{slug}: trials() returned duplicate trials; each must be distinct")
    return keyed


def summarize_run(slug: str, repro: Reproduction, preset: str, cfg: Preset, outdir: Path,
                  extra: dict[str, Any] | None = None) -> tuple[Summary, list[Result]]:
    """Summarise the stored results of ``cfg``'s trials and write the reports."""
    from optzoo.report.render import write_reports

    keyed = expected_trials(slug, repro, cfg)
    store = ResultStore(outdir / "trials.jsonl")
    results = store.results(k for k, _ in keyed)
    missing = len(keyed) - len(results)
    if missing:
        raise ConfigError(f"{outdir}: {missing} of {len(keyed)} trials have no stored result; "
                          f"rerun `optzoo reproduce {slug} --preset {preset}` to finish them")
    os.environ.setdefault("MPLBACKEND", "Agg")
    summary = repro.summarize(results, cfg, outdir)
    write_reports(outdir, registry.get(slug), preset, cfg, summary, results, extra or {},
                  description=repro.description)
    return summary, results


def run(slug: str, preset: str = "quick", *, seeds: int | None = None,
        overrides: dict[str, str] | None = None, jobs: int | None = None,
        backend: str = "local", address: str | None = None, device: str = "cpu",
        out: Path | str = "runs", progress: bool = True,
        stream: TextIO | None = None, seed_start: int | None = None) -> RunOutcome:
    """Run (or resume) the reproduction ``slug`` at ``preset`` and write its reports.

    Args:
        slug: a registered, implemented paper.
        preset: ``smoke`` / ``quick`` / ``full``.
        seeds: overrides the preset's number of seeds.
        seed_start: the first seed (default 0): seeds ``seed_start … seed_start+seeds−1``.
        overrides: ``{field: "value"}`` overrides of the preset, parsed by field type.
        jobs: parallel workers (default: the number of cores); 1 runs in this process.
        backend: ``local`` (process pool) or ``ray``.
        address: Ray cluster address (else ``RAY_ADDRESS``, else a local Ray instance).
        device: ``cpu`` or ``cuda``, passed to every trial.
        out: root folder of runs.
        progress: show progress on ``stream`` (stderr by default).
    """
    if backend not in backends.BACKENDS:
        raise ConfigError(f"unknown backend {backend!r}; allowed: {', '.join(backends.BACKENDS)}")
    check_device(device)
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ConfigError(f"--jobs: expected an integer >= 1, got {jobs}")
    paper = registry.get(slug)
    repro: Reproduction = paper.load()
    cfg = resolve_config(repro, preset, seeds, overrides, seed_start)
    keyed = expected_trials(slug, repro, cfg)

    if not str(out).strip():
        raise ConfigError("--out: expected a folder path, got an empty string")
    outdir = Path(out) / slug / preset
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ConfigError(f"--out {out}: a path on the way to {outdir} is a file, not a "
                          f"folder") from None
    except OSError as err:
        raise StoreError(f"--out {out}: cannot create {outdir} ({err.strerror})") from None
    with RunLock(outdir):  # a second process on the same --out stops here, naming this one
        store = ResultStore(outdir / "trials.jsonl")
        atomic_write_text(outdir / "run.json", json.dumps(
            {"slug": slug, "preset": preset, "config": cfg.to_dict(),
             "seed_start": cfg.seed_start}, indent=2) + "\n")

        todo = [(k, t.to_dict()) for k, t in keyed if k not in store]
        skipped = len(keyed) - len(todo)
        bar = Progress(f"{slug} [{preset}]", len(keyed), skipped, stream=stream,
                       enabled=progress)
        start = time.monotonic()
        if backend == "ray":
            finished = backends.run_ray(slug, todo, device, jobs, address)
        else:
            finished = backends.run_local(slug, todo, device, jobs)
        by_key = dict(keyed)
        try:
            for key, metrics, meta in finished:
                store.append(key, slug, Result(by_key[key], metrics, meta))
                bar.update()
        finally:
            bar.close()
        seconds = time.monotonic() - start
        extra = {"device": device, "backend": backend, "jobs": jobs, "seconds": seconds,
                 "ran": len(todo), "resumed": skipped,
                 "python": sys.version.split()[0]}
        from optzoo.experiment.publish import source_commit

        extra["commit"], extra["dirty"] = source_commit()  # published with the results
        summary, results = summarize_run(slug, repro, preset, cfg, outdir, extra)
    return RunOutcome(slug, preset, outdir, summary, results, len(todo), skipped, seconds)
