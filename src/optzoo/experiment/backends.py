"""Where trials run: in this process, in a local process pool, or as Ray tasks.

Each backend takes ``(key, trial)`` pairs and yields ``(key, metrics, meta)`` as trials finish,
in completion order; the runner stores each one the moment it arrives.  All of them call the same
:func:`execute`, so a trial's result does not depend on where it ran.
"""

from __future__ import annotations

import importlib.util
import multiprocessing as mp
import os
import random
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from optzoo.errors import BackendError, ConfigError
from optzoo.experiment.core import Trial

BACKENDS = ("local", "ray")

Item = tuple[str, dict[str, Any]]  # (key, trial as dict)
Done = tuple[str, dict[str, Any], dict[str, Any]]  # (key, metrics, meta)


def _clean_metrics(slug: str, trial: Trial, metrics: Any) -> dict[str, Any]:
    if not isinstance(metrics, dict):
        raise TypeError(f"{slug}: run_trial must return a dict of metrics, got {type(metrics)}")
    out: dict[str, Any] = {}
    for name, value in metrics.items():
        if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:  # numpy / torch scalar
            value = value.item()
        if value is not None and not isinstance(value, (bool, int, float, str)):
            raise TypeError(
                f"{slug}: metric {name!r} of trial {trial.method}/{trial.problem}/seed "
                f"{trial.seed} is a {type(value).__name__}; expected a JSON scalar"
            )
        out[str(name)] = value
    return out


_PREPARED = False


def prepare_worker() -> None:
    """Set up the process that runs trials, once: one BLAS / OpenMP thread
    (``threadpoolctl``) and one torch intra-op thread, and freed heap memory kept for reuse
    (:func:`optzoo.malloc.retain_freed_memory`).

    Why (issue 29): the runner already runs one trial per core, so a second BLAS thread per
    trial only spins on a shared core (bogrape: 1.5-2x the CPU time for the same numbers), and
    small models' training steps pay their activations again in page faults when glibc hands
    freed blocks back to the OS (DR-SAC: 35 % of its CPU time).  The allocator only changes
    where the bytes live, and every torch reproduction already ran its trials on one torch
    thread; one BLAS thread gave the same metrics bit for bit where it was compared (les's
    TuRBO: 9.2 → 7.1 CPU-s without ``OMP_NUM_THREADS``; bogrape).  The cost: a ``--jobs 1`` run
    on a many-core machine no longer spreads a trial's BLAS calls over its cores.  Called by
    :func:`execute` once the reproduction is imported, so it holds for the inline,
    process-pool and Ray backends alike; torch's threads are set only when torch is imported
    (a reproduction without torch does not import it here); later calls are no-ops.
    """
    global _PREPARED
    if _PREPARED:
        return
    _PREPARED = True
    from optzoo.malloc import retain_freed_memory

    retain_freed_memory()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        pass
    else:
        threadpool_limits(1)  # not a context manager: the limit stays for the process
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def execute(slug: str, trial_dict: dict[str, Any], device: str) -> tuple[dict, dict]:
    """Run one trial of the reproduction ``slug``; returns ``(metrics, meta)``.

    Module-level so that process pools and Ray can ship it.  The process is set up for trials
    once (:func:`prepare_worker`).  Global RNGs -- ``random``, NumPy's legacy one and torch's
    (when torch is installed) -- are seeded from the trial's seed, so that a trial gives the
    same metrics whichever trials its worker ran before: library code draws from them where a
    reproduction cannot pass a generator (BoTorch's restarts in ``optimize_acqf``, HF
    ``generate``, ``torch.randn`` in model code).  Before stop 38 torch's was not seeded, and
    the trials of les (GIBO), gn-ivo and bogrape, among others, depended on which trials had
    run before them in the same worker: a ``make run`` could not reproduce their published
    numbers.
    """
    from optzoo import registry

    repro = registry.get(slug).load()
    prepare_worker()
    trial = Trial.from_dict(trial_dict)
    random.seed(trial.seed)
    try:
        import numpy as np

        # The legacy global RNG, on purpose: code that uses it gets a seeded stream.
        np.random.seed(trial.seed % 2**32)  # noqa: NPY002
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    torch = _torch_if_installed()
    if torch is not None:
        torch.manual_seed(trial.seed)
    start = time.perf_counter()
    metrics = repro.run_trial(trial, device)
    seconds = time.perf_counter() - start
    return _clean_metrics(slug, trial, metrics), {"seconds": seconds, "pid": os.getpid()}


def _torch_if_installed():
    """torch, imported if it is installed, else ``None``.

    Imported even when the reproduction has not (yet) imported it: a reproduction that imports
    torch inside ``run_trial`` would otherwise draw its first trial from torch's fixed default
    seed and every later trial of the worker from the seeded generator, so a trial's metrics
    would depend on whether it ran first.  The import is paid once per process (forked workers
    inherit it from :func:`_preimport`).
    """
    torch = sys.modules.get("torch")
    if torch is None and importlib.util.find_spec("torch") is not None:
        import torch
    return torch


def _preimport() -> None:
    """Import here, once, what every forked worker would otherwise import on its own.

    torch imports ``torch._dynamo`` lazily when the first optimizer is built (≈ 2 CPU-s on the
    2-core development machine): paid in the parent, it is paid once per run of ``reproduce
    all`` instead of once per worker per reproduction (issue 29).  Only when the reproduction
    already imported torch, so that a run without torch pays only torch's own import, which
    :func:`execute` needs to seed it (done here, before the fork, so workers inherit it).
    """
    had_torch = "torch" in sys.modules
    _torch_if_installed()
    if had_torch:
        try:
            import torch._dynamo  # noqa: F401
        except ImportError:  # pragma: no cover - a torch build without dynamo: nothing to do
            pass


def run_inline(slug: str, items: Sequence[Item], device: str) -> Iterator[Done]:
    for key, trial in items:
        metrics, meta = execute(slug, trial, device)
        yield key, metrics, meta


def run_local(slug: str, items: Sequence[Item], device: str, jobs: int) -> Iterator[Done]:
    """A process pool of ``jobs`` workers (``jobs == 1`` runs in this process)."""
    if jobs == 1 or len(items) <= 1:
        yield from run_inline(slug, items, device)
        return
    # CUDA cannot be initialised in forked children; plain CPU work forks fast.
    ctx = mp.get_context("spawn" if device == "cuda" else "fork")
    if device != "cuda":
        _preimport()
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(items)), mp_context=ctx)
    pending = {pool.submit(execute, slug, trial, device): key for key, trial in items}
    clean = False
    try:
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                key = pending.pop(fut)
                metrics, meta = fut.result()
                yield key, metrics, meta
        clean = True
    finally:
        # On an error or Ctrl-C, do not wait for the queue: finished trials are already stored.
        pool.shutdown(wait=clean, cancel_futures=not clean)


def run_local_groups(groups: Iterator[tuple[Any, str, Sequence[Item]]], device: str,
                     jobs: int) -> Iterator[tuple]:
    """Several runs' trials on one budget of ``jobs`` busy workers (``reproduce all``, issue 29).

    ``groups`` yields ``(tag, slug, items)`` per run; it is advanced only when a worker would
    otherwise be idle, so a run is opened (its store read, its lock taken) just in time.  Each
    group gets its own process pool, forked when its first trial is submitted, so trials of one
    run never share a process with another run's (as when runs go one after another); what
    changes is that the next run's trials start as soon as the current run has no trial left
    to hand out, instead of after its last trial finished.  With runs one after another, a
    core idled through every run's last round (29 % of the cores' time in stop 36's ``make
    run``).  The earliest open group is served first, in its own order.

    Yields ``("result", tag, key, metrics, meta)`` for every finished trial, then ``("done",
    tag)`` once all of a group's trials are in, or ``("error", tag, exception)`` when one of
    its trials raised: that group's trials not started yet are dropped, those running are
    waited for and their results still yielded; the other groups go on.
    """
    from collections import deque

    ctx = mp.get_context("spawn" if device == "cuda" else "fork")
    live: dict[Any, dict[str, Any]] = {}  # tag -> pool, queue, running count, error
    running: dict[Any, tuple[Any, str]] = {}  # future -> (tag, key)
    more = True
    try:
        while True:
            while len(running) < jobs:
                tag = next((t for t, g in live.items() if g["queue"]), None)
                if tag is None:
                    if not more:
                        break
                    try:
                        tag, slug, items = next(groups)
                    except StopIteration:
                        more = False
                        break
                    if not items:
                        yield ("done", tag)
                        continue
                    if device != "cuda":
                        _preimport()
                    live[tag] = {"slug": slug, "pool": None, "queue": deque(items),
                                 "running": 0, "error": None}
                    continue
                g = live[tag]
                if g["pool"] is None:
                    g["pool"] = ProcessPoolExecutor(max_workers=min(jobs, len(g["queue"])),
                                                    mp_context=ctx)
                key, trial = g["queue"].popleft()
                running[g["pool"].submit(execute, g["slug"], trial, device)] = (tag, key)
                g["running"] += 1
            if not running:
                return
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                tag, key = running.pop(fut)
                g = live[tag]
                g["running"] -= 1
                err = fut.exception()
                if err is None:
                    metrics, meta = fut.result()
                    yield ("result", tag, key, metrics, meta)
                elif g["error"] is None:
                    g["error"] = err
                    g["queue"].clear()
                if not g["running"] and not g["queue"]:
                    del live[tag]
                    g["pool"].shutdown(wait=True)
                    yield ("error", tag, g["error"]) if g["error"] is not None else ("done", tag)
    finally:
        # On Ctrl-C or a caller that stops early: finished trials are already yielded.
        for g in live.values():
            if g["pool"] is not None:
                g["pool"].shutdown(wait=False, cancel_futures=True)


#: seconds to wait for a TCP answer from a Ray cluster's address before giving up
CONNECT_TIMEOUT_S = 5.0


def _check_reachable(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Fail fast when ``host:port`` (or ``ray://host:port``) does not answer: ``ray.init``
    itself retries an unreachable address for minutes.  ``auto`` and other forms are left to
    Ray."""
    import re
    import socket

    m = re.fullmatch(r"(?:ray://)?\[?([^\]/]+?)\]?:(\d+)", address.strip())
    if not m:
        return
    host, port = m.group(1), int(m.group(2))
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as err:
        reason = "timed out" if isinstance(err, TimeoutError) else (err.strerror or str(err))
        raise BackendError(
            f"--address {address}: cannot connect to a Ray cluster ({reason} after at most "
            f"{timeout:g} s); check the address and that the cluster is running"
        ) from None


def run_ray(slug: str, items: Sequence[Item], device: str, jobs: int,
            address: str | None) -> Iterator[Done]:
    """Ray tasks, one per trial, on the cluster at ``address`` (or ``RAY_ADDRESS``), or on a
    local Ray instance of ``jobs`` CPUs started (and shut down) here.

    Every node of an existing cluster must have optzoo installed (``pip install optzoo``).
    """
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "backend 'ray' needs the ray package: pip install 'optzoo[ray]'"
        ) from None
    address = address or os.environ.get("RAY_ADDRESS")
    started_here = False
    refs: dict[Any, str] = {}
    if not ray.is_initialized():
        if address:
            _check_reachable(address)
            try:
                ray.init(address=address, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as err:
                first = str(err).strip().splitlines()[0] if str(err).strip() else ""
                raise BackendError(
                    f"--address {address}: cannot connect to a Ray cluster ({first}); a cluster "
                    f"started with token authentication needs RAY_AUTH_MODE=token and its token"
                ) from None
        else:
            ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
            started_here = True
    try:
        task = ray.remote(num_cpus=1, num_gpus=1 if device == "cuda" else 0)(execute)
        for key, trial in items:
            refs[task.remote(slug, trial, device)] = key
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=1)
            for ref in ready:
                key = refs.pop(ref)
                metrics, meta = ray.get(ref)
                yield key, metrics, meta
    finally:
        for ref in list(refs):
            ray.cancel(ref)
        if started_here:
            ray.shutdown()
