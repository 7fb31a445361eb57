"""Reader of the official NATS-Bench topology benchmark files (no ``nats_bench`` package needed).

NATS-Bench (Dong et al., TPAMI 2021) ships the topology space (NAS-Bench-201's 15,625 cells) as

* ``NATS-tss-v1_0-3ffb9.pickle.pbz2`` -- one bz2-compressed pickle of
  ``{"meta_archs": [arch_str, ...], "arch2infos": {index: {hp: ArchResults}},
  "evaluated_indexes": [...]}``, or
* ``NATS-tss-v1_0-3ffb9-simple/`` -- ``meta.pickle.pbz2`` (``{"meta_archs": [...]}``) and one
  ``{index:06d}.pickle.pbz2`` per architecture holding ``{hp: ArchResults}``.

``ArchResults`` are plain state dicts (``arch_index``, ``arch_str``, ``dataset_seed``
``{dataset: [seeds]}``, ``all_results`` ``{(dataset, seed): ResultsCount}``); a
``ResultsCount`` holds ``params`` (MB), ``flop`` (M), ``latency`` (list, s), ``epochs``,
``train_acc1es`` ``{epoch: %}`` and ``eval_acc1es`` ``{"<set>@<epoch>": %}`` (layout read from
``nats_bench/api_utils.py`` of D-X-Y/NATS-Bench).  Accuracies here are the last epoch's,
averaged over seeds, as ``get_more_info(..., is_random=False)`` gives them.

The files are pickles: they are read with an unpickler that only admits plain containers and
NumPy scalars, so a tampered file raises instead of running code.  The files are large separate
downloads; point :func:`load_nats_topology` at your copy (nothing is downloaded).
"""

from __future__ import annotations

import bz2
import pickle
from dataclasses import dataclass
from pathlib import Path

from optzoo.nas.search_space import NATS_TOPOLOGY, Arch

# per dataset: (validation set, test set) names inside eval_acc1es
EVAL_SETS = {"cifar10-valid": ("x-valid", "ori-test"), "cifar10": (None, "ori-test"),
             "cifar100": ("x-valid", "x-test"), "ImageNet16-120": ("x-valid", "x-test")}
_ALLOWED = {("collections", "OrderedDict"), ("collections", "defaultdict"),
            ("numpy", "dtype"), ("numpy.core.multiarray", "scalar"),
            ("numpy._core.multiarray", "scalar"), ("builtins", "set"),
            ("builtins", "frozenset"), ("builtins", "list"), ("builtins", "dict")}


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"path: refusing to load {module}.{name} from a "
                                         "benchmark file (only containers and NumPy scalars)")
        return super().find_class(module, name)


def _load(path: Path):
    try:
        with bz2.BZ2File(path, "rb") as fh:
            return _SafeUnpickler(fh).load()
    except (OSError, EOFError) as err:
        raise ValueError(f"path: {path} is not a bz2-compressed pickle ({err})") from None


@dataclass(frozen=True)
class NatsRecord:
    """One architecture's entry for one dataset and training schedule."""

    index: int
    arch_str: str
    arch: Arch
    params: float  # MB (parameters / 1e6)
    flops: float  # M
    latency: float | None  # seconds
    train_acc: float  # %
    valid_acc: float | None
    test_acc: float | None
    seeds: tuple[int, ...]


def _record(index: int, arch_str: str, archres: dict, dataset: str) -> NatsRecord:
    if dataset not in archres.get("dataset_seed", {}):
        raise ValueError(f"dataset: {dataset!r} not in architecture {index}'s results "
                         f"{sorted(archres.get('dataset_seed', {}))}")
    seeds = tuple(archres["dataset_seed"][dataset])
    runs = [archres["all_results"][(dataset, s)] for s in seeds]
    vset, tset = EVAL_SETS[dataset]

    def mean(xs):
        xs = [float(x) for x in xs if x is not None]
        return sum(xs) / len(xs) if xs else None

    def last_eval(run, name):
        if name is None or name not in run.get("eval_names", []):
            return None
        return run["eval_acc1es"][f"{name}@{run['epochs'] - 1}"]

    lat = [sum(r["latency"]) / len(r["latency"]) for r in runs if r.get("latency")]
    return NatsRecord(
        index=index, arch_str=arch_str, arch=NATS_TOPOLOGY.from_str(arch_str),
        params=mean(r["params"] for r in runs), flops=mean(r["flop"] for r in runs),
        latency=mean(lat) if lat else None,
        train_acc=mean(r["train_acc1es"][r["epochs"] - 1] for r in runs),
        valid_acc=mean(last_eval(r, vset) for r in runs),
        test_acc=mean(last_eval(r, tset) for r in runs), seeds=seeds)


def load_nats_topology(path: str | Path, dataset: str = "cifar10-valid", hp: str = "200"
                       ) -> list[NatsRecord]:
    """Every evaluated architecture of a NATS-Bench topology file or ``-simple`` folder.

    Args:
        path: ``NATS-tss-*.pickle.pbz2`` or the ``NATS-tss-*-simple`` directory.
        dataset: "cifar10-valid", "cifar10", "cifar100" or "ImageNet16-120".
        hp: training schedule key, "12" or "200" (epochs).

    Raises:
        ValueError: a missing path, an unknown dataset or schedule, or a malformed file.
    """
    path = Path(path)
    if dataset not in EVAL_SETS:
        raise ValueError(f"dataset: expected one of {sorted(EVAL_SETS)}, got {dataset!r}")
    if path.is_dir():
        meta = _load(path / "meta.pickle.pbz2")
        files = {int(p.name.split(".")[0]): p for p in path.glob("*.pickle.pbz2")
                 if p.name.split(".")[0].isdigit()}
        infos = {i: _load(p) for i, p in sorted(files.items())}
    elif path.is_file():
        meta = _load(path)
        if not isinstance(meta, dict) or "arch2infos" not in meta:
            raise ValueError(f"path: {path} has no 'arch2infos' (not a NATS-Bench file)")
        infos = meta["arch2infos"]
    else:
        raise ValueError(f"path: {path} does not exist")
    if not isinstance(meta, dict) or "meta_archs" not in meta:
        raise ValueError(f"path: {path} has no 'meta_archs' (not a NATS-Bench file)")
    archs = meta["meta_archs"]
    out = []
    for index in sorted(infos):
        by_hp = infos[index]
        if str(hp) not in by_hp:
            raise ValueError(f"hp: architecture {index} has schedules {sorted(by_hp)}, "
                             f"not {hp!r}")
        out.append(_record(int(index), archs[int(index)], by_hp[str(hp)], dataset))
    return out
