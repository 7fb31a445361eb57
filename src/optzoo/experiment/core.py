"""The reproduction contract (``shared/DESIGN.md``): presets, trials, results, claims, summaries.

A reproduction is a :class:`Reproduction` value that a paper's area module defines at import
time and the registry names by ``"module:attribute"``.  It bundles

* ``presets`` -- ``{"smoke": cfg, "quick": cfg, "full": cfg}``, each a frozen :class:`Preset`
  subclass instance fixed in code before any result is seen;
* ``trials(cfg) -> list[Trial]`` -- the independent, seeded units of work;
* ``run_trial(trial, device) -> dict`` -- a flat dict of JSON scalars, deterministic given the
  trial (its ``seed`` and ``params``);
* ``summarize(results, cfg, outdir) -> Summary`` -- tables, figures and claims.

Everything a trial carries must be JSON-serialisable: its hash is the key under which the result
store records it, which is what makes a killed run resumable.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from optzoo.errors import ConfigError
from optzoo.experiment.verdicts import Verdict

Scalar = int | float | str | bool | None

PRESET_NAMES = ("smoke", "quick", "full")

#: more seeds than this is a typo, not an experiment (and would expand into millions of trials)
MAX_SEEDS = 10_000


@dataclass(frozen=True)
class Preset:
    """Base class of a reproduction's typed configuration.

    Subclasses are frozen dataclasses whose fields are scalars (``int``, ``float``, ``str``,
    ``bool``) or tuples of scalars; ``--set key=value`` overrides are parsed by field type.
    Override :meth:`validate` (calling ``super().validate()``) to reject bad values with a
    :class:`~optzoo.errors.ConfigError` that names the field.

    Args:
        seeds: number of seeds each (method, problem, config) cell is repeated with.
        seed_start: the first seed (``--seed-start``): a reproduction's ``trials`` numbers its
            seeds ``0 … seeds−1`` and the runner shifts them by ``seed_start``, so the trial
            keys of the default seeds never change.
    """

    seeds: int = 3
    seed_start: int = 0

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            _check_type(f.name, getattr(self, f.name), _field_types(type(self))[f.name])
        self.validate()

    def validate(self) -> None:
        if not 1 <= self.seeds <= MAX_SEEDS:
            raise ConfigError(f"seeds: expected an integer in 1..{MAX_SEEDS}, got {self.seeds}")
        if self.seed_start < 0:
            raise ConfigError(f"seed_start: expected an integer >= 0, got {self.seed_start}")

    def to_dict(self) -> dict[str, Any]:
        """The experiment's configuration.  ``seed_start`` is a run option, not part of it:
        reproductions hash this dict into trial parameters, and the default seeds' keys must
        not change (the runner records ``seed_start`` in ``run.json`` beside it)."""
        return {f.name: _jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)
                if f.name != "seed_start"}

    def with_overrides(self, overrides: Mapping[str, str]) -> Preset:
        """A copy with ``key=value`` strings parsed by the type of each field.

        Raises:
            ConfigError: an unknown key (naming the allowed ones) or a value that does not parse.
        """
        types_ = _field_types(type(self))
        changes: dict[str, Any] = {}
        for key, raw in overrides.items():
            if key not in types_:
                allowed = ", ".join(sorted(types_))
                raise ConfigError(f"unknown override key {key!r}; allowed: {allowed}")
            changes[key] = parse_value(key, raw, types_[key])
        return dataclasses.replace(self, **changes)


def _field_types(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    return value


def _scalar_ok(value: Any, tp: Any) -> bool:
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, tp)


def _check_type(name: str, value: Any, tp: Any) -> None:
    origin = typing.get_origin(tp)
    if origin is tuple:
        args = typing.get_args(tp)
        item = args[0]
        if not isinstance(value, tuple) or not all(_scalar_ok(v, item) for v in value):
            raise ConfigError(f"{name}: expected a tuple of {item.__name__}, got {value!r}")
        return
    if origin in (typing.Union, types.UnionType):
        if any(_scalar_ok(value, a) if a is not type(None) else value is None
               for a in typing.get_args(tp)):
            return
        raise ConfigError(f"{name}: expected {tp}, got {value!r}")
    if not _scalar_ok(value, tp):
        raise ConfigError(f"{name}: expected {tp.__name__}, got {value!r}")


def parse_value(name: str, raw: str, tp: Any) -> Any:
    """Parse the string ``raw`` of an override into the field type ``tp``."""
    origin = typing.get_origin(tp)
    if origin is tuple:
        item = typing.get_args(tp)[0]
        parts = [p for p in raw.strip("()[] ").split(",") if p.strip()]
        return tuple(parse_value(name, p.strip(), item) for p in parts)
    try:
        if tp is bool:
            low = raw.strip().lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if tp is int:
            return int(raw)
        if tp is float:
            out = float(raw)
            if not math.isfinite(out):  # NaN / ±inf cannot be hashed into a trial key
                raise ValueError(raw)
            return out
        if tp is str:
            return raw
    except ValueError:
        raise ConfigError(
            f"override {name}={raw!r}: expected a finite value of type {tp.__name__}"
        ) from None
    raise ConfigError(f"override {name}: fields of type {tp} cannot be set from the command line")


@dataclass(frozen=True)
class Trial:
    """One (method, problem, seed, params) unit of a reproduction.

    Args:
        method: name of the algorithm evaluated.
        problem: name of the problem / instance family.
        seed: the seed; a trial is deterministic given it and ``params``.
        params: JSON-serialisable configuration of this trial (flat mapping).
    """

    method: str
    problem: str
    seed: int
    params: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "problem": self.problem, "seed": self.seed,
                "params": {k: _jsonable(v) for k, v in sorted(self.params.items())}}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Trial:
        return cls(method=d["method"], problem=d["problem"], seed=int(d["seed"]),
                   params=dict(d.get("params", {})))

    def key(self, slug: str) -> str:
        """A stable hash of the slug and the trial: the result store's key."""
        blob = json.dumps({"slug": slug, **self.to_dict()}, sort_keys=True,
                          separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(blob.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Result:
    """A finished trial: the trial, its metrics, and bookkeeping (``meta``: seconds, host)."""

    trial: Trial
    metrics: Mapping[str, Scalar]
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Claim:
    """A sentence of the paper restated at this scale, the measured evidence, and the verdict.

    Args:
        text: the claim, restated at this scale.
        evidence: the numbers behind it, in words.
        verdict: the :class:`~optzoo.experiment.verdicts.Verdict` of a named test of
            :mod:`optzoo.experiment.verdicts`; never a hand-written boolean.
    """

    text: str
    evidence: str
    verdict: Verdict

    def __post_init__(self) -> None:
        if not isinstance(self.verdict, Verdict):
            raise TypeError(f"Claim {self.text[:60]!r}: verdict must be a Verdict from "
                            f"optzoo.experiment.verdicts, got {type(self.verdict).__name__}")

    @property
    def held(self) -> bool:
        """True only for *held* (kept for ``summary.json`` readers that predate verdicts)."""
        return self.verdict.held

    @property
    def status(self) -> str:
        """``"held"``, ``"not held"`` or ``"inconclusive"``."""
        return self.verdict.verdict


@dataclass(frozen=True)
class NotEvaluated:
    """A claim this run cannot evaluate because its preset does not run the trials it needs
    (a K the smoke preset skips, say): not a verdict, so it is left out of the claims and
    named in the report's notes (:func:`split_claims`)."""

    text: str
    why: str


def split_claims(items: Sequence[Claim | NotEvaluated]) -> tuple[list[Claim], list[str]]:
    """The evaluated claims, and a note for each :class:`NotEvaluated` one."""
    return ([c for c in items if isinstance(c, Claim)],
            [f"Not evaluated in this run ({c.why}): {c.text}" for c in items
             if isinstance(c, NotEvaluated)])


@dataclass(frozen=True)
class Table:
    """A titled table: ``columns`` names and ``rows`` of already formatted cells."""

    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]


@dataclass(frozen=True)
class Figure:
    """A PNG written by ``summarize`` into the run directory, with a caption."""

    path: Path
    caption: str


@dataclass(frozen=True)
class Summary:
    """What a reproduction reports: tables, figures, claims, and notes on the setting
    (especially what differs from the paper's)."""

    tables: Sequence[Table] = ()
    figures: Sequence[Figure] = ()
    claims: Sequence[Claim] = ()
    notes: Sequence[str] = ()


@dataclass(frozen=True)
class Reproduction:
    """A paper's fixed experiment.  See the module docstring for the contract.

    Args:
        slug: the paper's slug (file name of its brief).
        presets: ``smoke`` / ``quick`` / ``full`` configurations.
        trials: expands a configuration into trials.
        run_trial: runs one trial on ``device`` (``"cpu"`` / ``"cuda"``), returns flat metrics.
        summarize: turns the results of one run into a :class:`Summary`.
        description: one paragraph on what the experiment does.
    """

    slug: str
    presets: Mapping[str, Preset]
    trials: Callable[[Any], list[Trial]]
    run_trial: Callable[[Trial, str], dict[str, Scalar]]
    summarize: Callable[[list[Result], Any, Path], Summary]
    description: str = ""

    required_presets: ClassVar[tuple[str, ...]] = PRESET_NAMES

    def __post_init__(self) -> None:
        missing = [p for p in self.required_presets if p not in self.presets]
        if missing:
            raise ConfigError(f"reproduction {self.slug!r} lacks presets {missing}")

    def preset(self, name: str) -> Preset:
        if name not in self.presets:
            allowed = ", ".join(self.presets)
            raise ConfigError(f"unknown preset {name!r} for {self.slug}; allowed: {allowed}")
        return self.presets[name]
