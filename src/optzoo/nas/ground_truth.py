"""Ground-truth table of a small cell space on deformed scikit-learn digits, trained by project
code.

The ConNAS brief's offline substitute for NATS-Bench's accuracy table: every architecture of
:data:`~optzoo.nas.search_space.MINI_TOPOLOGY` (125) is trained from scratch on a fixed split for
``epochs`` epochs with each of ``seeds`` seeds (NATS-Bench: 1-3 seeds per entry), and its
validation and test accuracy per seed are recorded beside its exact params and FLOPs and its
measured latency.

Data (:func:`augmented_digits`).  The 1,797 digits are split by a fixed permutation (seed 0) into
1,000 training, 397 validation and 400 test *source* images (:data:`SPLIT`).  Every image the
table and the searches see is a random affine deformation of a source digit (rotation
±12°, scale ±10 %, shift ±0.75 px, bilinear, via ``torch.nn.functional.affine_grid`` /
``grid_sample``, plus N(0, 0.05²) pixel noise), drawn once from a fixed seed: 1 deformed copy per
training source (1,000 images), 4 per validation source (1,588) and 10 per test source (4,000).
Why: the clean 400-image test set saturates at ~98.75 % in 0.25 pp steps, too coarse and too
noisy to resolve gaps of a tenth of a point; deformed digits are harder (architectures spread)
and the 4,000-image test set has 0.025 pp steps.  Its resolution is still bounded by the 400
source digits and by training noise; :meth:`GroundTruth.resolution_pp` reports what the table
resolves, from its own seeds.

Recipe (a scaled-down NATS-Bench recipe): SGD with Nesterov momentum 0.9, lr 0.1 cosine-annealed
to 0, weight decay 5e-4, batch 64, cross-entropy; pixels / 16.  A NAS search sees only the
training images (halved into its w and α splits); the table's validation accuracy is what a
table-based searcher (random search) may query; the test accuracy is what results report.

Latency (the paper's topology-space metric, measured on a Jetson TX2 there): the CPU time of one
batch-1 inference forward pass of the architecture's network on one thread, in milliseconds,
the median over ``LATENCY_REPS`` repetitions taken round-robin over the architectures (so drift
of the machine spreads over all of them), each repetition timing ``LATENCY_INNER`` passes with
the thread's CPU clock (``time.thread_time_ns``: other processes' load does not count).  It is
measured once, when the table is built, and is then a lookup table, as ConNAS allows ("costs
only need to be evaluable").  It is a property of the machine that built the table.

The table is generated once per setting and cached outside the repository, in
``$OPTZOO_CACHE`` or else ``$XDG_CACHE_HOME/optzoo`` (default ``~/.cache/optzoo``), as JSON
under ``nas/``; the file name carries a hash of every setting, and a lock file serialises
concurrent generators (parallel trials wait for the first).  The generator is the artefact:
delete the file and it is rebuilt, identically given the seeds on the same platform (CPU, one
thread; bitwise equality across machines is not promised; latencies are re-measured).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import multiprocessing as mp
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from optzoo.cache import cache_dir, locked
from optzoo.nas.search_space import MINI_TOPOLOGY, Arch, CellSpace

VERSION = 2
SPLIT = (1000, 397, 400)  # source digits: train / val / test
COPIES = (1, 4, 10)  # deformed copies per source digit: train / val / test
LATENCY_REPS, LATENCY_INNER = 7, 3
BATCH, LR = 64, 0.1  # the table's training recipe (module docstring)


@functools.lru_cache(maxsize=1)
def digits_split() -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """The fixed train / val / test split of scikit-learn digits (``N x 1 x 8 x 8``)."""
    from sklearn.datasets import load_digits

    d = load_digits()
    perm = np.random.RandomState(0).permutation(len(d.target))
    x = torch.as_tensor(d.data[perm], dtype=torch.float32).reshape(-1, 1, 8, 8) / 16.0
    y = torch.as_tensor(d.target[perm], dtype=torch.long)
    a, b = SPLIT[0], SPLIT[0] + SPLIT[1]
    return {"train": (x[:a], y[:a]), "val": (x[a:b], y[a:b]), "test": (x[b:], y[b:])}


def deform(x: torch.Tensor, copies: int, seed: int) -> torch.Tensor:
    """``copies`` random affine deformations (+ pixel noise) of every image of ``x``
    (``N x 1 x H x W`` in [0, 1]); ``copies·N`` images, copy-major, clamped to [0, 1]."""
    if copies < 1:
        raise ValueError(f"copies: expected >= 1, got {copies}")
    g = torch.Generator().manual_seed(seed)
    xs = x.repeat(copies, 1, 1, 1)
    n, side = xs.shape[0], xs.shape[-1]

    def u(lo, hi):
        return lo + (hi - lo) * torch.rand(n, generator=g)

    th, sc = u(-12.0, 12.0) * math.pi / 180, u(0.9, 1.1)
    shift = 2 * 0.75 / side  # 0.75 px in affine_grid's [-1, 1] coordinates
    tx, ty = u(-shift, shift), u(-shift, shift)
    theta = torch.stack([torch.stack([sc * th.cos(), -sc * th.sin(), tx], 1),
                         torch.stack([sc * th.sin(), sc * th.cos(), ty], 1)], 1)
    grid = F.affine_grid(theta, list(xs.shape), align_corners=False)
    out = F.grid_sample(xs, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
    return (out + 0.05 * torch.randn(out.shape, generator=g)).clamp(0.0, 1.0)


@functools.lru_cache(maxsize=1)
def augmented_digits() -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """The table's data: :data:`COPIES` deformed copies of every source digit of
    :func:`digits_split` (module docstring), a fixed draw (seeds 1, 2, 3 per split)."""
    out = {}
    for k, (name, (x, y)) in enumerate(digits_split().items()):
        out[name] = (deform(x, COPIES[k], seed=k + 1), y.repeat(COPIES[k]))
    return out


@torch.no_grad()
def measure_latency(space: CellSpace, archs: list[Arch], reps: int = LATENCY_REPS,
                    inner: int = LATENCY_INNER) -> np.ndarray:
    """Median thread-CPU milliseconds of a batch-1 inference pass per architecture (module
    docstring); repetitions round-robin over ``archs``."""
    torch.set_num_threads(1)
    models = [space.build(a).eval() for a in archs]
    x = torch.zeros(1, space.in_channels, space.image_size, space.image_size)
    for m in models:  # warm-up: first calls create the kernels' primitives
        m(x)
    t = np.zeros((reps, len(models)))
    for r in range(reps):
        for i, m in enumerate(models):
            t0 = time.thread_time_ns()
            for _ in range(inner):
                m(x)
            t[r, i] = (time.thread_time_ns() - t0) / inner / 1e6
    return np.median(t, axis=0)


@torch.no_grad()
def accuracy(model: torch.nn.Module, data: tuple[torch.Tensor, torch.Tensor]) -> float:
    model.eval()
    return float((model(data[0]).argmax(1) == data[1]).float().mean())


def train_architecture(space: CellSpace, arch: Arch, epochs: int, seed: int,
                       data: dict | None = None, batch_size: int = 128, lr: float = 0.1,
                       n_train: int | None = None) -> dict[str, float]:
    """Train ``arch`` from scratch on ``data`` (default :func:`augmented_digits`; its first
    ``n_train`` training images, default all); its val / test accuracy and seconds."""
    if epochs < 1:
        raise ValueError(f"epochs: expected >= 1, got {epochs}")
    data = data or augmented_digits()
    x, y = data["train"]
    if n_train is not None:
        if not 1 <= n_train <= x.shape[0]:
            raise ValueError(f"n_train: expected 1..{x.shape[0]}, got {n_train}")
        x, y = x[:n_train], y[:n_train]
    t0 = time.perf_counter()
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = space.build(arch)
    steps = epochs * math.ceil(x.shape[0] / batch_size)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True,
                          weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    for _ in range(epochs):
        model.train()
        for idx in torch.randperm(x.shape[0], generator=g).split(batch_size):
            opt.zero_grad()
            F.cross_entropy(model(x[idx]), y[idx]).backward()
            opt.step()
            sched.step()
    return {"val_acc": accuracy(model, data["val"]), "test_acc": accuracy(model, data["test"]),
            "seconds": time.perf_counter() - t0}


@dataclass(frozen=True)
class GroundTruth:
    """A trained table of a whole space.

    Attributes:
        space: the cell space.
        epochs, seeds: the training setting.
        archs: every architecture, in :meth:`CellSpace.all_archs` order.
        val_acc, test_acc: ``n_archs x seeds`` accuracies in [0, 1].
        params, flops: exact costs per architecture.
        latency: measured inference milliseconds per architecture (module docstring).
        n_test: test images behind each accuracy.
        seconds: total generation time (as recorded when the table was built).
    """

    space: CellSpace
    epochs: int
    seeds: int
    archs: list[Arch]
    val_acc: np.ndarray
    test_acc: np.ndarray
    params: np.ndarray
    flops: np.ndarray
    latency: np.ndarray
    n_test: int
    seconds: float

    def cost(self, name: str) -> np.ndarray:
        if name not in TABLE_COSTS:
            raise ValueError(f"name: expected one of {TABLE_COSTS}, got {name!r}")
        return getattr(self, name)

    def costs(self, arch: Arch) -> dict[str, float]:
        """Every cost of ``arch`` from the table (a ConNAS ``cost_fn``: a lookup)."""
        i = self.row(arch)
        return {k: float(getattr(self, k)[i]) for k in TABLE_COSTS}

    def entry_se_pp(self) -> float:
        """Standard error (pp) of one entry's mean test accuracy over its seeds: the seeds'
        pooled standard deviation over the whole table / √seeds (NaN for one seed)."""
        if self.seeds < 2:
            return math.nan
        return 100 * float(np.sqrt(self.test_acc.var(axis=1, ddof=1).mean() / self.seeds))

    def resolution_pp(self) -> float:
        """The smallest difference of two entries the table resolves (pp): the half-width of
        the 95 % interval of a difference of two independent entry means, 1.96·√2·SE, or the
        test set's step 100/n_test if larger (NaN for one seed: unknown).  A gap claimed below
        it is not testable here."""
        if self.seeds < 2:
            return math.nan
        return max(1.96 * math.sqrt(2) * self.entry_se_pp(), 100 / self.n_test)

    def row(self, arch: Arch) -> int:
        return self.space.index(arch)

    def best_feasible(self, budgets: dict[str, float]) -> tuple[int, float]:
        """(row, mean test accuracy) of the best feasible entry (the paper's reference)."""
        ok = self.feasible_mask(budgets)
        if not ok.any():
            raise ValueError(f"budgets: no architecture of the table satisfies {budgets}")
        acc = np.where(ok, self.test_acc.mean(1), -np.inf)
        i = int(acc.argmax())
        return i, float(acc[i])

    def feasible_mask(self, budgets: dict[str, float]) -> np.ndarray:
        ok = np.ones(len(self.archs), dtype=bool)
        for k, b in budgets.items():
            ok &= self.cost(k) <= b
        return ok


TABLE_COSTS = ("params", "flops", "latency")


def _key(space: CellSpace, epochs: int, seeds: int, n_train: int) -> str:
    blob = json.dumps({"v": VERSION, "space": asdict(space), "epochs": epochs, "seeds": seeds,
                       "split": SPLIT, "copies": COPIES, "n_train": n_train, "batch": BATCH,
                       "lr": LR}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def table_path(space: CellSpace, epochs: int, seeds: int, root: Path | None = None,
               n_train: int = SPLIT[0]) -> Path:
    key = _key(space, epochs, seeds, n_train)
    return Path(root or cache_dir()) / "nas" / f"digits_{key}.json"


def _train_seeds(space: CellSpace, epochs: int, seeds: int, n_train: int,
                 arch: Arch) -> list[dict[str, float]]:
    """The table's training runs of one architecture, one per seed (module-level: the pool of
    :func:`generate` ships it to its workers)."""
    torch.set_num_threads(1)
    return [train_architecture(space, arch, epochs, seed=1000 * s + space.index(arch),
                               data=augmented_digits(), batch_size=BATCH, lr=LR,
                               n_train=n_train)
            for s in range(seeds)]


def _jobs(jobs: int | None, n: int) -> int:
    if jobs is None:
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1)
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"jobs: expected a positive integer or None, got {jobs!r}")
    # a daemonic process (multiprocessing.Pool's workers) may not start children
    if mp.current_process().daemon or sys.platform == "win32":
        return 1
    return max(1, min(jobs, n))


def generate(space: CellSpace, epochs: int, seeds: int, n_train: int = SPLIT[0],
             progress: Callable[[int, int], None] | None = None,
             jobs: int | None = None) -> dict:
    """Train every architecture of ``space`` (no caching): the JSON-ready table.

    The architectures are trained in a pool of ``jobs`` forked processes (default: one per
    available core), each run on one thread and seeded by its architecture and seed alone, so
    the table is the same whatever ``jobs`` is (tested).  Why a pool (issue 29): the table is
    built inside the first trial that needs it while every other trial of the run waits on
    its lock, so a single builder left all cores but one idle.  Latencies are measured before,
    in this process alone.
    """
    if seeds < 1:
        raise ValueError(f"seeds: expected >= 1, got {seeds}")
    if (space.in_channels, space.image_size) != (1, 8):
        raise ValueError("space: the digits table needs in_channels = 1 and image_size = 8")
    archs = list(space.all_archs())
    jobs = _jobs(jobs, len(archs))
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    rows = []
    data = augmented_digits()  # before forking: the workers inherit it
    latency = measure_latency(space, archs)
    train = functools.partial(_train_seeds, space, epochs, seeds, n_train)
    pool = (ProcessPoolExecutor(jobs, mp_context=mp.get_context("fork")) if jobs > 1
            else contextlib.nullcontext())
    with pool:
        results = pool.map(train, archs) if jobs > 1 else map(train, archs)
        for n, (arch, runs) in enumerate(zip(archs, results, strict=True)):
            rows.append(_row(space, arch, runs, float(latency[n])))
            if progress is not None:
                progress(n + 1, len(archs))
    return {"version": VERSION, "space": asdict(space), "epochs": epochs, "seeds": seeds,
            "split": list(SPLIT), "copies": list(COPIES), "n_train": n_train,
            "n_test": int(data["test"][1].shape[0]), "seconds": time.perf_counter() - t0,
            "rows": rows}


def _row(space: CellSpace, arch: Arch, runs: list[dict[str, float]], latency: float) -> dict:
    return {"arch": space.to_str(arch), **space.costs(arch),
            "latency": latency,
            "val_acc": [r["val_acc"] for r in runs],
            "test_acc": [r["test_acc"] for r in runs],
            "seconds": sum(r["seconds"] for r in runs)}




def ground_truth_table(space: CellSpace = MINI_TOPOLOGY, epochs: int = 30, seeds: int = 3,
                       root: Path | str | None = None, n_train: int = SPLIT[0],
                       progress: Callable[[int, int], None] | None = None) -> GroundTruth:
    """The cached table of ``space`` (generated on first use; see the module docstring).

    Args:
        space: a digits-sized space (1 channel, 8×8).
        epochs: training epochs per architecture (brief: 30).
        seeds: training seeds per architecture (brief: 2; >= 3 for a table whose entries
            carry an error bar, see :meth:`GroundTruth.entry_se_pp`).
        root: cache folder (default :func:`cache_dir`).
        n_train: training images used (the first ones of the split; smaller only for smoke
            runs and tests).
        progress: ``progress(done, total)`` called while generating.
    """
    path = table_path(space, epochs, seeds, Path(root) if root else None, n_train)
    with locked(path.with_suffix(".lock")):
        if not path.exists():
            blob = generate(space, epochs, seeds, n_train, progress)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps(blob))
            os.replace(tmp, path)  # atomic: a reader never sees half a table
        blob = json.loads(path.read_text())
    return _from_blob(space, blob, path)


def _from_blob(space: CellSpace, blob: dict, path: Path) -> GroundTruth:
    rows = blob.get("rows")
    if blob.get("version") != VERSION or not isinstance(rows, list) or len(rows) != space.size:
        raise ValueError(f"{path}: not a version-{VERSION} table of {space.size} architectures; "
                         "delete it to regenerate")
    archs = [space.from_str(r["arch"]) for r in rows]
    if archs != list(space.all_archs()):
        raise ValueError(f"{path}: architectures out of order; delete it to regenerate")
    return GroundTruth(space=space, epochs=int(blob["epochs"]), seeds=int(blob["seeds"]),
                       archs=archs,
                       val_acc=np.array([r["val_acc"] for r in rows], dtype=float),
                       test_acc=np.array([r["test_acc"] for r in rows], dtype=float),
                       params=np.array([r["params"] for r in rows], dtype=float),
                       flops=np.array([r["flops"] for r in rows], dtype=float),
                       latency=np.array([r["latency"] for r in rows], dtype=float),
                       n_test=int(blob["n_test"]), seconds=float(blob["seconds"]))
