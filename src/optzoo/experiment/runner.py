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
from collections.abc import Iterator, Sequence
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


@dataclass
class _OpenRun:
    """A run between :func:`_open` and :func:`_close`: its lock is held, its store open."""

    slug: str
    preset: str
    repro: Reproduction
    cfg: Preset
    outdir: Path
    lock: RunLock
    store: ResultStore
    keyed: list
    todo: list
    bar: Progress
    start: float

    def __post_init__(self) -> None:
        self.by_key = dict(self.keyed)

    @property
    def skipped(self) -> int:
        return len(self.keyed) - len(self.todo)

    def add(self, key: str, metrics: dict[str, Any], meta: dict[str, Any]) -> None:
        self.store.append(key, self.slug, Result(self.by_key[key], metrics, meta))
        self.bar.update()


def _check_run_args(backend: str, device: str, jobs: int | None) -> int:
    if backend not in backends.BACKENDS:
        raise ConfigError(f"unknown backend {backend!r}; allowed: {', '.join(backends.BACKENDS)}")
    check_device(device)
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ConfigError(f"--jobs: expected an integer >= 1, got {jobs}")
    return jobs


def _open(slug: str, preset: str, *, seeds: int | None, overrides: dict[str, str] | None,
          out: Path | str, progress: bool, stream: TextIO | None,
          seed_start: int | None) -> _OpenRun:
    """Resolve ``slug``'s preset, take its run folder's lock and list the trials to run."""
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
    lock = RunLock(outdir)  # a second process on the same --out stops here, naming this one
    lock.__enter__()
    try:
        store = ResultStore(outdir / "trials.jsonl")
        atomic_write_text(outdir / "run.json", json.dumps(
            {"slug": slug, "preset": preset, "config": cfg.to_dict(),
             "seed_start": cfg.seed_start}, indent=2) + "\n")
        todo = [(k, t.to_dict()) for k, t in keyed if k not in store]
        bar = Progress(f"{slug} [{preset}]", len(keyed), len(keyed) - len(todo),
                       stream=stream, enabled=progress)
    except BaseException:
        lock.__exit__(None, None, None)
        raise
    return _OpenRun(slug, preset, repro, cfg, outdir, lock, store, keyed, todo, bar,
                    time.monotonic())


def _close(r: _OpenRun, *, device: str, backend: str, jobs: int) -> RunOutcome:
    """Summarise a run whose trials are all stored, write its reports, release its lock."""
    try:
        seconds = time.monotonic() - r.start
        extra = {"device": device, "backend": backend, "jobs": jobs, "seconds": seconds,
                 "ran": len(r.todo), "resumed": r.skipped,
                 "python": sys.version.split()[0]}
        from optzoo.experiment.publish import source_commit

        extra["commit"], extra["dirty"] = source_commit()  # published with the results
        summary, results = summarize_run(r.slug, r.repro, r.preset, r.cfg, r.outdir, extra)
    finally:
        r.lock.__exit__(None, None, None)
    return RunOutcome(r.slug, r.preset, r.outdir, summary, results, len(r.todo), r.skipped,
                      seconds)


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
    jobs = _check_run_args(backend, device, jobs)
    r = _open(slug, preset, seeds=seeds, overrides=overrides, out=out, progress=progress,
              stream=stream, seed_start=seed_start)
    try:
        if backend == "ray":
            finished = backends.run_ray(slug, r.todo, device, jobs, address)
        else:
            finished = backends.run_local(slug, r.todo, device, jobs)
        try:
            for key, metrics, meta in finished:
                r.add(key, metrics, meta)
        finally:
            r.bar.close()
    except BaseException:
        r.lock.__exit__(None, None, None)
        raise
    return _close(r, device=device, backend=backend, jobs=jobs)


def run_all(slugs: Sequence[str], preset: str = "quick", *, seeds: int | None = None,
            jobs: int | None = None, device: str = "cpu", out: Path | str = "runs",
            progress: bool = True, stream: TextIO | None = None,
            seed_start: int | None = None) -> Iterator[tuple[str, RunOutcome | Exception]]:
    """Run several reproductions on one local budget of ``jobs`` workers (``reproduce all``).

    The same trials, stores and reports as :func:`run` for each slug in turn, but the next
    paper's trials start as soon as the current one has none left to hand out
    (:func:`optzoo.experiment.backends.run_local_groups`), so no core waits through a paper's
    last round.  Each paper's ``seconds`` is the wall time from its first trial handed out to
    its summary, shared with its neighbours.  ``jobs == 1`` runs the papers one after another
    in this process.

    Yields ``(slug, outcome)`` as each paper finishes (not in the order of ``slugs``), where
    ``outcome`` is a :class:`RunOutcome`, or the exception that stopped that paper (its stored
    trials are kept; the other papers go on).  A caller that stops iterating (or Ctrl-C) stops
    the remaining trials; what finished is stored.
    """
    jobs = _check_run_args("local", device, jobs)
    kw = {"seeds": seeds, "overrides": None, "out": out, "progress": progress,
          "stream": stream, "seed_start": seed_start}
    if jobs == 1:
        for slug in slugs:
            try:
                yield slug, run(slug, preset, jobs=1, device=device, **kw)
            except Exception as err:  # noqa: BLE001 -- reported per paper by the caller
                yield slug, err
        return
    opened: dict[str, _OpenRun] = {}
    failed: list[tuple[str, Exception]] = []

    def groups():
        for slug in slugs:
            try:
                r = _open(slug, preset, **kw)
            except Exception as err:  # noqa: BLE001 -- this paper only
                failed.append((slug, err))
                continue
            opened[slug] = r  # its clock starts now: when its first trial is handed out
            yield slug, slug, r.todo

    events = backends.run_local_groups(groups(), device, jobs)
    try:
        for event in events:
            while failed:
                yield failed.pop(0)
            kind, slug = event[0], event[1]
            if kind == "result":
                opened[slug].add(*event[2:])
                continue
            r = opened.pop(slug)
            r.bar.close()
            if kind == "error":
                r.lock.__exit__(None, None, None)
                yield slug, event[2]
                continue
            try:
                outcome: RunOutcome | Exception = _close(r, device=device, backend="local",
                                                         jobs=jobs)
            except Exception as err:  # noqa: BLE001 -- a summary that fails: this paper only
                outcome = err
            yield slug, outcome
        while failed:
            yield failed.pop(0)
    finally:
        events.close()  # stops the pools now, not when the generator is collected
        for r in opened.values():
            r.bar.close()
            r.lock.__exit__(None, None, None)
