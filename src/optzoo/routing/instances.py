"""CVRP instances for the routing area: the CVRPLIB X set and an X-like generator.

Used by the RFTHGS reproduction -- Zhu, Zhang & Cao, "Refining Hybrid Genetic Search for CVRP
via Reinforcement Learning-Finetuned LLM" (ICLR 2026, OpenReview aITKXFeivk, arXiv 2510.11121),
whose reward is the optimality gap ``g = 100 (cost - BKS) / BKS`` of an HGS run on X instances.

X instances (Uchoa et al. 2017) are read from a user's copy of the public files -- never copied
into the repository, never downloaded: :func:`data_root` looks at an explicit path, then
``$OPTZOO_DATA``, then ``../shared/data`` beside the repository.  Distances are Euclidean rounded
to the nearest integer (``pyvrp.read(..., round_func="round")``), the convention of the BKS.

Generator (:func:`generate_x_like`) after Uchoa, Pecin, Pessoa, Poggi, Vidal & Subramanian,
"New benchmark instances for the Capacitated Vehicle Routing Problem", EJOR 257(3), 2017,
section 3.  Our reading, checked against the X files where the files can tell:

* grid: integer points of [0, 1000]^2, all locations distinct;
* depot: ``central`` (500, 500), ``eccentric`` (0, 0) -- both as in every X file of those
  classes -- or ``random`` (uniform grid point);
* customers: ``random`` (uniform grid points); ``clustered``: S ~ UD[3, 8] seed customers at
  uniform points, every other customer drawn by accept-reject: a uniform point p is accepted
  with probability sum_s 2^(-d(p, s)/40) / max_s' sum_s 2^(-d(s', s)/40) (the exponential decay
  of scale 40 of the paper, in the form of the generator the same group published for the
  XML100 set, Queiroga et al. 2022, which follows the X scheme); ``random-clustered``: floor(n/2)
  random customers, the rest clustered as above;
* demand classes (integer uniform UD[a, b]): ``unitary`` 1; ``small-large-var`` UD[1, 10];
  ``small-small-var`` UD[5, 10]; ``large-large-var`` UD[1, 100]; ``large-small-var``
  UD[50, 100]; ``quadrant``: UD[51, 100] in the odd quadrants (x < 500 and y < 500, or
  x >= 500 and y >= 500), UD[1, 50] in the even ones -- the orientation every X file of this
  class shows; ``many-small-few-large``: #{i in 2..n+1 : i < 1.5 n / r} customers (about 1.5
  per route, at random customers) get UD[50, 100], the others UD[1, 10] -- the count the X files
  of this class show exactly (the paper's text says "most (70 % to 95 %)" small);
* route size r (average customers per route): given, or, as in the X set, drawn from a
  triangular distribution (3, 6, 25) (min, mode, max); capacity
  Q = max(ceil(r * sum(d) / n), max(d)) -- the paper's ceil(r * sum(d) / n); the max with the
  largest demand (as the XML100 generator does) only binds when r * mean(d) < max(d) and keeps
  every instance feasible; the fleet is n vehicles, as ``pyvrp.read`` gives VRPLIB files.

A generated instance is identical to writing it in VRPLIB format and reading it back with
``pyvrp.read(path, round_func="round")`` (tested).  Reference costs of generated instances are
the best feasible cost of long HGS runs (:func:`reference_cost`), cached per user.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyvrp

from optzoo.cache import cache_dir, locked
from optzoo.checks import check_real

GRID = 1000
DECAY = 40.0
DEPOTS = ("random", "central", "eccentric")
CUSTOMERS = ("random", "clustered", "random-clustered")
# Uniform integer demand ranges of the five "range" classes; the other two have their own rule.
DEMAND_RANGES = {
    "unitary": (1, 1),
    "small-large-var": (1, 10),
    "small-small-var": (5, 10),
    "large-large-var": (1, 100),
    "large-small-var": (50, 100),
}
DEMANDS = (*DEMAND_RANGES, "quadrant", "many-small-few-large")
# The codes Uchoa et al. use in their table of X instances, accepted as aliases.
_DEMAND_CODES = {"U": "unitary", "1-10": "small-large-var", "5-10": "small-small-var",
                 "1-100": "large-large-var", "50-100": "large-small-var", "Q": "quadrant",
                 "SL": "many-small-few-large"}
_SHORT = {"random": "R", "central": "C", "eccentric": "E", "clustered": "C",
          "random-clustered": "RC"}
_X_NAME = re.compile(r"^X-n(\d+)-k(\d+)$")
_FALLBACK_DATA = Path("/work/shared/data")
_REPO = Path(__file__).resolve().parents[3]


# --------------------------------------------------------------------------- X files

def _cvrp_folder(path: Path) -> Path | None:
    """``path/cvrp`` or ``path`` itself, whichever holds ``X-*.vrp`` files."""
    for cand in (path / "cvrp", path):
        if cand.is_dir() and any(cand.glob("X-n*-k*.vrp")):
            return cand
    return None


def data_root(path: str | os.PathLike | None = None) -> Path:
    """The folder holding the X instances (``X-n*-k*.vrp`` with their ``.sol``).

    Looks at ``path``, else ``$OPTZOO_DATA``, else ``../shared/data`` beside the repository,
    else ``/work/shared/data``; each may be the data folder (with a ``cvrp/`` inside) or the
    ``cvrp`` folder itself.  An explicit ``path`` or ``$OPTZOO_DATA`` that holds no X files is
    an error, not a reason to look elsewhere.
    """
    if path is not None:
        found = _cvrp_folder(Path(path))
        if found is None:
            raise FileNotFoundError(f"path: no X-n*-k*.vrp files in {path} or {path}/cvrp")
        return found
    env = os.environ.get("OPTZOO_DATA")
    if env:
        found = _cvrp_folder(Path(env))
        if found is None:
            raise FileNotFoundError(f"OPTZOO_DATA={env}: no X-n*-k*.vrp files there or in "
                                    "its cvrp/ folder")
        return found
    for cand in (_REPO.parent / "shared" / "data", _FALLBACK_DATA):
        found = _cvrp_folder(cand)
        if found is not None:
            return found
    raise FileNotFoundError(
        "no CVRP X instances found: pass a path, or set OPTZOO_DATA to a folder holding "
        f"X-n*-k*.vrp files (or a cvrp/ folder of them); looked in {_REPO.parent / 'shared'}"
        f"/data and {_FALLBACK_DATA}.  Generated instances (generate_x_like) need no files.")


def _x_size(name: str) -> int:
    m = _X_NAME.match(name)
    return int(m.group(1)) if m else 0


def list_x_instances(root: str | os.PathLike | None = None) -> list[str]:
    """Names of the X instances under :func:`data_root` (e.g. ``"X-n101-k25"``), by size."""
    names = [p.stem for p in data_root(root).glob("X-n*-k*.vrp") if _X_NAME.match(p.stem)]
    return sorted(names, key=lambda s: (_x_size(s), s))


def _x_path(name: str, root, suffix: str) -> Path:
    if not isinstance(name, str):
        raise TypeError(f"name: expected an X instance name such as 'X-n101-k25', got "
                        f"{type(name).__name__}")
    stem = name[:-4] if name.endswith((".vrp", ".sol")) else name
    folder = data_root(root)
    path = folder / f"{stem}{suffix}"
    if not _X_NAME.match(stem) or not path.is_file():
        known = list_x_instances(root)
        raise ValueError(f"name: unknown X instance {name!r} in {folder}; expected one of "
                         f"{len(known)} names such as {', '.join(known[:3])}")
    return path


@functools.lru_cache(maxsize=64)
def _read_x(path: str) -> pyvrp.ProblemData:
    return pyvrp.read(path, round_func="round")


def load_x_instance(name: str, root: str | os.PathLike | None = None) -> pyvrp.ProblemData:
    """The X instance ``name`` as ``pyvrp.ProblemData`` with rounded Euclidean distances."""
    return _read_x(str(_x_path(name, root, ".vrp")))


def best_known_cost(name: str, root: str | os.PathLike | None = None) -> int:
    """The best-known cost of X instance ``name``: the ``Cost`` line of its ``.sol`` file."""
    path = _x_path(name, root, ".sol")
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].lower() == "cost":
            try:
                return int(parts[1])
            except ValueError:
                break
    raise ValueError(f"{path}: expected a line 'Cost <integer>' (VRPLIB solution format)")


def gap(cost: float, bks: float) -> float:
    """Optimality gap in percent, ``100 (cost - bks) / bks`` (the paper's per-instance g)."""
    check_real("cost", cost)
    check_real("bks", bks, low=0, low_open=True)
    return 100.0 * (cost - bks) / bks


# --------------------------------------------------------------------------- generator

def _choice(value: str, options: tuple[str, ...], arg: str, aliases: dict | None = None) -> str:
    if aliases and value in aliases:
        value = aliases[value]
    if value not in options:
        raise ValueError(f"{arg}: expected one of {options}, got {value!r}")
    return value


def _distinct_uniform(rng: np.random.Generator, count: int, taken: set) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    while len(out) < count:
        for p in map(tuple, rng.integers(0, GRID + 1, size=(2 * (count - len(out)) + 8, 2))):
            if p not in taken:
                taken.add(p)
                out.append(p)
                if len(out) == count:
                    break
    return out


def _clustered(rng: np.random.Generator, count: int, taken: set) -> list[tuple[int, int]]:
    """``count`` customers around S ~ UD[3, 8] seed customers (accept-reject, decay 40)."""
    if count == 0:
        return []
    seeds = _distinct_uniform(rng, min(int(rng.integers(3, 9)), count), taken)
    s = np.asarray(seeds, dtype=float)
    between = np.sqrt(((s[:, None, :] - s[None, :, :]) ** 2).sum(-1))
    norm = (2.0 ** (-between / DECAY)).sum(1).max()
    out = list(seeds)
    while len(out) < count:
        cand = rng.integers(0, GRID + 1, size=(4096, 2))
        d = np.sqrt(((cand[:, None, :] - s[None, :, :]) ** 2).sum(-1))
        accept = rng.random(len(cand)) <= (2.0 ** (-d / DECAY)).sum(1) / norm
        for p in map(tuple, cand[accept]):
            if p not in taken:
                taken.add(p)
                out.append(p)
                if len(out) == count:
                    break
    return out


def _demands(rng: np.random.Generator, kind: str, xy: np.ndarray, r: float) -> np.ndarray:
    n = len(xy)
    if kind in DEMAND_RANGES:
        lo, hi = DEMAND_RANGES[kind]
        return rng.integers(lo, hi + 1, size=n)
    if kind == "quadrant":
        odd = (xy[:, 0] < GRID / 2) == (xy[:, 1] < GRID / 2)
        return np.where(odd, rng.integers(51, 101, size=n), rng.integers(1, 51, size=n))
    # many-small-few-large: customers i = 2..n+1 (VRPLIB numbering) with i < 1.5 n / r are large
    large = sum(1 for i in range(2, n + 2) if i < 1.5 * n / r)
    d = rng.integers(1, 11, size=n)
    idx = rng.permutation(n)[:large]
    d[idx] = rng.integers(50, 101, size=large)
    return d


def _route_size(route_size: float | None, rng: np.random.Generator) -> float:
    if route_size is None:
        return float(rng.triangular(3.0, 6.0, 25.0))
    if isinstance(route_size, bool) or not isinstance(route_size, (int, float)) \
            or not math.isfinite(route_size) or route_size <= 0:
        raise ValueError(f"route_size: expected a finite number > 0 (average customers per "
                         f"route) or None, got {route_size!r}")
    return float(route_size)


def x_like_arrays(n: int, depot: str = "random", customers: str = "random",
                  demand: str = "small-large-var", route_size: float | None = None,
                  seed: int = 0) -> dict:
    """The raw instance of :func:`generate_x_like`: ``coords`` ((n+1) x 2, depot first),
    ``demands`` (n+1, depot 0), ``capacity``, ``route_size`` (the r used)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n: expected an integer number of customers >= 1, got {n!r}")
    if n > (GRID + 1) ** 2 - 1:
        raise ValueError(f"n: at most {(GRID + 1) ** 2 - 1} customers fit the grid, got {n}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: expected an integer >= 0, got {seed!r}")
    depot = _choice(depot, DEPOTS, "depot")
    customers = _choice(customers, CUSTOMERS, "customers")
    demand = _choice(demand, DEMANDS, "demand", _DEMAND_CODES)
    rng = np.random.default_rng([int(seed), int(n)])
    r = _route_size(route_size, rng)

    if depot == "central":
        dep = (GRID // 2, GRID // 2)
    elif depot == "eccentric":
        dep = (0, 0)
    else:
        dep = tuple(int(v) for v in rng.integers(0, GRID + 1, size=2))
    taken = {dep}
    n_random = {"random": n, "clustered": 0, "random-clustered": n // 2}[customers]
    pts = _distinct_uniform(rng, n_random, taken) + _clustered(rng, n - n_random, taken)
    # Generation order (random first, seeds, then clustered) would leak into the index order
    # the solver sees; X files list customers in no such order.
    xy = np.asarray(pts, dtype=np.int64)[rng.permutation(n)]
    d = _demands(rng, demand, xy, r).astype(np.int64)
    capacity = max(math.ceil(r * int(d.sum()) / n), int(d.max()))
    return {"coords": np.vstack([np.asarray(dep, dtype=np.int64)[None], xy]),
            "demands": np.concatenate([[0], d]).astype(np.int64),
            "capacity": int(capacity), "route_size": r}


def _problem_data(coords: np.ndarray, demands: np.ndarray, capacity: int) -> pyvrp.ProblemData:
    """``ProblemData`` built exactly as ``pyvrp.read(..., round_func="round")`` builds a CVRP
    VRPLIB file (one depot, EUC_2D, fleet = number of customers)."""
    n = len(coords) - 1
    diff = coords[:, None, :].astype(float) - coords[None, :, :].astype(float)
    dist = np.round(np.sqrt((diff ** 2).sum(-1))).astype(np.int64)
    clients = [pyvrp.Client(x=int(x), y=int(y), delivery=[int(q)], pickup=[0])
               for (x, y), q in zip(coords[1:], demands[1:], strict=True)]
    depots = [pyvrp.Depot(x=int(coords[0, 0]), y=int(coords[0, 1]))]
    vehicles = [pyvrp.VehicleType(num_available=n, capacity=[capacity],
                                  name=",".join(map(str, range(n))))]
    return pyvrp.ProblemData(clients=clients, depots=depots, vehicle_types=vehicles,
                             distance_matrices=[dist], duration_matrices=[dist])


def generate_x_like(n: int, depot: str = "random", customers: str = "random",
                    demand: str = "small-large-var", route_size: float | None = None,
                    seed: int = 0) -> pyvrp.ProblemData:
    """An X-like CVRP instance (Uchoa et al. 2017; reading in the module docstring).

    Args:
        n: number of customers (the X name's ``n`` is n + 1, the depot included).
        depot: ``"random"``, ``"central"`` or ``"eccentric"``.
        customers: ``"random"``, ``"clustered"`` or ``"random-clustered"``.
        demand: one of :data:`DEMANDS` (or the paper's codes U, 1-10, 5-10, 1-100, 50-100, Q,
            SL).
        route_size: average customers per route r; ``None`` draws r ~ Triangular(3, 6, 25).
        seed: the instance's seed; the same arguments give the same instance.

    Example:
        >>> from optzoo.routing import generate_x_like
        >>> data = generate_x_like(20, depot="central", customers="clustered", route_size=6,
        ...                        seed=0)  # a pyvrp.ProblemData
        >>> data.num_clients, data.num_depots
        (20, 1)
    """
    a = x_like_arrays(n, depot, customers, demand, route_size, seed)
    return _problem_data(a["coords"], a["demands"], a["capacity"])


# --------------------------------------------------------------------------- specs

@dataclass(frozen=True)
class InstanceSpec:
    """A picklable recipe for one instance: an X file name, or the generator's arguments.

    Build with :meth:`x` or :meth:`generated`.  ``reference_iterations`` and
    ``reference_seeds`` fix how a generated instance's reference cost is computed (best
    feasible cost of HGS with SREX over those seeds; see :func:`reference_cost`); they are
    unused for X files, whose reference is the BKS.
    """

    x_name: str | None = None
    n: int | None = None
    depot: str = "random"
    customers: str = "random"
    demand: str = "small-large-var"
    route_size: float | None = None
    seed: int = 0
    reference_iterations: int = 20_000
    reference_seeds: tuple[int, ...] = (0, 1, 2)

    def __post_init__(self):
        if (self.x_name is None) == (self.n is None):
            raise ValueError("InstanceSpec: give exactly one of x_name (an X file) or n (a "
                             "generated instance)")
        if self.x_name is not None and not _X_NAME.match(str(self.x_name)):
            raise ValueError(f"x_name: expected a name like 'X-n101-k25', got {self.x_name!r}")
        if self.n is not None:
            object.__setattr__(self, "demand", _DEMAND_CODES.get(self.demand, self.demand))
            if isinstance(self.route_size, int) and not isinstance(self.route_size, bool):
                # 6 and 6.0 are one instance: one spec, one name, one cache key
                object.__setattr__(self, "route_size", float(self.route_size))
            # Validate every generator argument now, not when a worker first loads the spec.
            x_like_arrays(1, self.depot, self.customers, self.demand,
                          self.route_size if self.route_size is not None else 1.0, self.seed)
            if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 1:
                raise ValueError(f"n: expected an integer number of customers >= 1, got "
                                 f"{self.n!r}")
        if not isinstance(self.reference_iterations, int) or self.reference_iterations < 1:
            raise ValueError(f"reference_iterations: expected an integer >= 1, got "
                             f"{self.reference_iterations!r}")
        seeds = tuple(self.reference_seeds)
        if not seeds or any(not isinstance(s, int) or s < 0 for s in seeds):
            raise ValueError(f"reference_seeds: expected a non-empty tuple of integers >= 0, "
                             f"got {self.reference_seeds!r}")
        object.__setattr__(self, "reference_seeds", seeds)

    @classmethod
    def x(cls, name: str) -> InstanceSpec:
        return cls(x_name=name)

    @classmethod
    def generated(cls, n: int, depot: str = "random", customers: str = "random",
                  demand: str = "small-large-var", route_size: float | None = None,
                  seed: int = 0, reference_iterations: int = 20_000,
                  reference_seeds: tuple[int, ...] = (0, 1, 2)) -> InstanceSpec:
        return cls(n=n, depot=depot, customers=customers, demand=demand,
                   route_size=route_size, seed=seed,
                   reference_iterations=reference_iterations,
                   reference_seeds=tuple(reference_seeds))

    @property
    def is_x(self) -> bool:
        return self.x_name is not None

    @property
    def name(self) -> str:
        """The X name, or ``G-n<n+1>-<depot><customers>-<demand>-r<r>-s<seed>``."""
        if self.is_x:
            return self.x_name
        r = "T" if self.route_size is None else f"{self.route_size:g}"
        code = {v: k for k, v in _DEMAND_CODES.items()}[self.demand]
        return (f"G-n{self.n + 1}-{_SHORT[self.depot]}{_SHORT[self.customers]}-{code}-r{r}"
                f"-s{self.seed}")

    def load(self, root: str | os.PathLike | None = None) -> pyvrp.ProblemData:
        if self.is_x:
            return load_x_instance(self.x_name, root)
        return _generated_cached(self.n, self.depot, self.customers, self.demand,
                                 self.route_size, self.seed)


@functools.lru_cache(maxsize=64)
def _generated_cached(n, depot, customers, demand, route_size, seed) -> pyvrp.ProblemData:
    return generate_x_like(n, depot, customers, demand, route_size, seed)


# --------------------------------------------------------------------------- references

def _pyvrp_version() -> str:
    from importlib.metadata import version

    return version("pyvrp")




def reference_cost(spec: InstanceSpec, iterations: int | None = None,
                   seeds: tuple[int, ...] | None = None,
                   root: str | os.PathLike | None = None) -> int:
    """The cost gaps are measured against.

    X file: its BKS (``iterations``/``seeds`` unused).  Generated instance: the best feasible
    cost of :func:`optzoo.routing.hgs.run_hgs` with the default crossover (SREX) for
    ``iterations`` (default ``spec.reference_iterations``) from each of ``seeds`` (default
    ``spec.reference_seeds``) -- an upper bound, so gaps against it can be negative.  Cached as
    JSON under ``cache_dir()/routing/`` keyed by the instance, the budget and the pyvrp
    version; a lock file makes concurrent callers wait for the first one's run.
    """
    if not isinstance(spec, InstanceSpec):
        raise TypeError(f"spec: expected an InstanceSpec, got {type(spec).__name__}")
    if spec.is_x:
        return best_known_cost(spec.x_name, root)
    iterations = spec.reference_iterations if iterations is None else iterations
    seeds = spec.reference_seeds if seeds is None else tuple(seeds)
    if not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations: expected an integer >= 1, got {iterations!r}")
    if not seeds or any(not isinstance(s, int) or s < 0 for s in seeds):
        raise ValueError(f"seeds: expected a non-empty tuple of integers >= 0, got {seeds!r}")
    instance = {k: v for k, v in dataclasses.asdict(spec).items()
                if not k.startswith("reference_")}
    key = {"instance": instance, "iterations": iterations, "seeds": list(seeds),
           "pyvrp": _pyvrp_version(), "version": 1}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    path = cache_dir() / "routing" / f"reference-{digest}.json"
    with locked(path.with_suffix(".lock")):
        if path.is_file():
            return int(json.loads(path.read_text())["cost"])
        from optzoo.routing.hgs import run_hgs

        data = spec.load(root)
        costs = []
        for s in seeds:
            res = run_hgs(data, iterations=iterations, seed=s, collect_stats=False)
            if res.best.is_feasible():
                costs.append(int(res.cost()))
        if not costs:
            raise RuntimeError(f"{spec.name}: no feasible solution in {len(seeds)} HGS runs of "
                               f"{iterations} iterations")
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps({**key, "name": spec.name, "cost": min(costs),
                                   "costs": costs}, indent=1))
        os.replace(tmp, path)
        return min(costs)
