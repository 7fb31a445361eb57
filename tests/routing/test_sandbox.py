"""The operator sandbox: every attack of the issue, each outcome tier, the parent unharmed.

Trusted jobs are module-level functions of this file (the child imports it by name through the
parent's ``sys.path``); untrusted sources are strings.  Limits are small so the file runs fast.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import random
import re
import resource
import signal
import sys
import time

import numpy
import numpy.ctypeslib  # noqa: F401 -- in sys.modules for the IMPORT_FROM fallback test
import pytest
from pyvrp import CostEvaluator, RandomNumberGenerator, Solution
from pyvrp.crossover import selective_route_exchange

from optzoo.errors import ConfigError
from optzoo.routing import sandbox
from optzoo.routing.crossover_dsl import EXPERT, SLOTS, random_program, render
from optzoo.routing.hgs import evaluate_operator
from optzoo.routing.instances import InstanceSpec, generate_x_like
from optzoo.routing.sandbox import Limits, Outcome, SandboxError, check_source, run_untrusted

FAST = Limits(wall_s=5.0, cpu_s=5.0, memory_mb=512)
CALL = "optzoo.routing.sandbox:call_operator"
HERE = __name__


def job(name: str) -> str:
    return f"{HERE}:{name}"


def src(body: str, params: str = "parents, data, cost_evaluator, rng") -> str:
    return f"def crossover({params}):\n" + "".join(f"    {line}\n" for line in body.split("\n"))


# --------------------------------------------------------------------------- trusted test jobs

def _job_environment(operator):
    with open("/proc/self/status") as fh:
        status = dict(line.split(":", 1) for line in fh if ":" in line)
    libc = ctypes.CDLL(None)
    return {"env": dict(os.environ), "cwd": os.getcwd(), "uid": os.getuid(),
            "gid": os.getgid(), "groups": os.getgroups(),
            "no_new_privs": status["NoNewPrivs"].strip(), "dumpable": libc.prctl(3, 0, 0, 0, 0),
            "rlimits": {name: list(resource.getrlimit(getattr(resource, name)))
                        for name in ("RLIMIT_CORE", "RLIMIT_AS", "RLIMIT_NPROC",
                                     "RLIMIT_FSIZE", "RLIMIT_CPU")}}


def _job_segfault(operator):
    os.kill(os.getpid(), signal.SIGSEGV)


def _job_exit(operator):
    os._exit(7)


def _job_fork(operator):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return "forked"


def _job_orphan(operator, hang, name):
    pid = os.fork()
    if pid == 0:
        # A name the parent can find in the host's /proc (pids differ in the jail's namespace).
        ctypes.CDLL(None).prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME
        time.sleep(60)
        os._exit(0)
    print(f"grandchild={pid}", flush=True)
    if hang:
        time.sleep(60)
    return pid


def _named(name: str) -> list[int]:
    """Host pids of live (not zombie) processes whose name is ``name``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as fh:
                    if fh.read().strip() == name and not _dead(int(entry)):
                        found.append(int(entry))
            except OSError:
                pass
    return found


def _job_write_file(operator):
    with open("escape.txt", "w") as fh:
        fh.write("x")
    return "wrote"


def _job_big(operator):
    return list(range(200_000))


def _job_not_json(operator):
    return object()


def _job_pyvrp(operator, seed):
    # Two random parents on a small X-like instance; the child of the operator as routes.
    data = generate_x_like(25, seed=seed)
    rng = RandomNumberGenerator(seed=seed)
    parents = (Solution.make_random(data, rng), Solution.make_random(data, rng))
    child = operator(parents, data, CostEvaluator([20], 6, 0), rng)
    return {"routes": [r.visits() for r in child.routes()], "distance": child.distance()}


def _expected_pyvrp(seed):
    data = generate_x_like(25, seed=seed)
    rng = RandomNumberGenerator(seed=seed)
    parents = (Solution.make_random(data, rng), Solution.make_random(data, rng))
    child = selective_route_exchange(parents, data, CostEvaluator([20], 6, 0), rng)
    return {"routes": [r.visits() for r in child.routes()], "distance": child.distance()}


def _dead(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


# --------------------------------------------------------------------------- layer 1: AST check

FORBIDDEN = [
    ("import os\ndef crossover(a, b, c, d):\n    os.system('ls')\n", 1, "'os'"),
    (src("return open('/etc/passwd').read()"), 2, "'open'"),
    (src("return __import__('os')"), 2, "dunder"),
    (src("return ().__class__.__mro__[1].__subclasses__()"), 2, "'__class__'"),
    (src("return getattr(parents, '__globals__')"), 2, "'getattr'"),
    (src("return eval('1 + 1')"), 2, "'eval'"),
    (src("exec('x = 1')"), 2, "'exec'"),
    (src("return compile('1', 'f', 'eval')"), 2, "'compile'"),
    ("import subprocess\n" + src("return 1"), 1, "'subprocess'"),
    ("from os import system\n" + src("return 1"), 1, "'os'"),
    ("import ctypes\n" + src("return 1"), 1, "'ctypes'"),
    ("import importlib\n" + src("return 1"), 1, "'importlib'"),
    ("import pickle\n" + src("return 1"), 1, "'pickle'"),
    ("import socket\n" + src("return 1"), 1, "'socket'"),
    ("from . import hgs\n" + src("return 1"), 1, "relative"),
    ("from pyvrp import read\n" + src("return 1"), 1, "'read'"),
    ("from numpy import *\n" + src("return 1"), 1, "import *"),
    ("import numpy as np\n" + src("return np.ctypeslib"), 3, "'ctypeslib'"),
    ("import numpy as np\n" + src("return np.load('x.npy')"), 3, "'load'"),
    ("import numpy as np\n" + src("return np.zeros(3).ctypes"), 3, "'ctypes'"),
    ("import random\n" + src("return random._os"), 3, "'_os'"),
    (src("g = (i for i in [1])\nreturn g.gi_frame.f_back.f_globals"), 3, "'gi_frame'"),
    # An object array over a caller-supplied buffer forges object pointers.
    ("import numpy as np\n" + src("return np.ndarray((1,), object, bytearray(8))[0]"), 3,
     "'ndarray'"),
    ("import numpy as np\n" + src("make = np.ndarray\nreturn make"), 3, "'ndarray'"),
    ("import numpy as np\n" + src("return isinstance(np.ndarray, np.ndarray((1,)))"), 3,
     "'ndarray'"),
    ("import numpy as np\ndef crossover(parents, data, cost_evaluator,\n"
     "              rng: np.ndarray((1,), object, bytearray(8))):\n    return 1\n", 3,
     "'ndarray'"),
    ("import numpy as np\n" + src("return np.recarray((1,), object, buf=bytearray(8))"), 3,
     "'recarray'"),
    ("from numpy import ndarray\n" + src("return 1"), 1, "'ndarray'"),
    ("import numpy as np\ndef isinstance(x, t):\n    return t\n" + src("return 1"), 2,
     "'isinstance'"),
    (src("issubclass = print\nreturn 1"), 2, "'issubclass'"),
    (src("return [isinstance for isinstance in [1]]"), 2, "'isinstance'"),
    ("import numpy as np\n" + src("return np.random.default_rng().bit_generator.cffi"), 3,
     "'cffi'"),
    (src("return '{0.__class__}'.format(parents)"), 2, "dunder"),
    (src("return '{0.real}'.format(parents)"), 2, "format fields"),
    (src("fmt = '{}'\nreturn fmt.format(1)"), 3, "literal"),
    (src("return sum.__self__"), 2, "'__self__'"),
    ("from pyvrp import Solution\n" + src("Solution.distance = lambda s: 0"), 3, "'self'"),
    ("from pyvrp import Solution\n" + src("del Solution.distance"), 3, "'self'"),
    ("import functools\n" + src("return functools.update_wrapper"), 3, "'update_wrapper'"),
    ("x = 0\n" + src("global x\nx += 1"), 3, "'global'"),
    ("async def crossover(parents, data, cost_evaluator, rng):\n    return 1\n", 1, "async"),
    ("class M(type):\n    pass\nclass X(metaclass=M):\n    pass\n" + src("return 1"), 1,
     "'type'"),
    ("class X(object, metaclass=abs):\n    pass\n" + src("return 1"), 1, "metaclass"),
    ("class X:\n    def __del__(self):\n        pass\n" + src("return 1"), 2, "'__del__'"),
    ("def __init__():\n    pass\n" + src("return 1"), 1, "'__init__'"),
    (src("return __builtins__"), 2, "dunder"),
    (src("x = 'abc__class__'\nreturn x"), 2, "dunder"),
    (src("breakpoint()"), 2, "'breakpoint'"),
    (src("return globals()"), 2, "'globals'"),
    (src("return type(parents)"), 2, "'type'"),
    (src("import sys\nreturn sys.modules"), 2, "'sys'"),
    (src("match parents:\n    case tuple(__class__=k):\n        return k"), 3, "'__class__'"),
    (src("return 1", params="parents, data, cost_evaluator"), 1, "4 positional"),
    (src("return 1", params="parents, data, cost_evaluator, rng, extra"), 1, "4 positional"),
    (src("return 1", params="parents, data, cost_evaluator, rng, *, key"), 1, "keyword-only"),
    ("crossover = lambda parents, data, cost_evaluator, rng: 1\n", None, "def crossover"),
    ("def helper(a, b, c, d):\n    return 1\n", None, "def crossover"),
]


@pytest.mark.parametrize(("source", "lineno", "reason"), FORBIDDEN)
def test_forbidden_sources_are_rejected_with_line(source, lineno, reason):
    verdict = check_source(source)
    assert verdict.status == "forbidden", (verdict, source)
    assert reason in verdict.reason and verdict.lineno == lineno, (verdict, source)


@pytest.mark.parametrize(("source", "lineno"), [
    ("def crossover(parents, data, cost_evaluator, rng)\n    return 1\n", 1),
    ("def crossover(parents, data, cost_evaluator, rng):\n    return (1\n", 2),
    ("return 1\n", 1),  # a compile-stage error (the parser accepts it)
    ("def crossover(parents, data, cost_evaluator, rng):\n    nonlocal x\n", 2),
])
def test_syntax_errors(source, lineno):
    verdict = check_source(source)
    assert verdict.status == "syntax_error" and verdict.lineno == lineno, verdict
    assert check_source("x = 1\0\n" + src("return 1")).status == "syntax_error"


def test_empty_deeply_nested_and_oversized_sources():
    assert check_source("  \n# only a comment\n").status == "forbidden"  # no entry
    assert check_source("").status == "syntax_error"
    assert check_source("\n\n").reason.startswith("empty source")
    nested = "x = " + "(" * 1000 + ")" * 1000 + "\n" + src("return 1")
    assert check_source(nested).status == "syntax_error"
    deep = "x = " + "-" * 20000 + "1\n" + src("return 1")
    assert check_source(deep).status in ("syntax_error", "forbidden")
    verdict = check_source(src("return 1") + "#" * 200, max_chars=50)
    assert verdict.status == "forbidden" and "max_chars=50" in verdict.reason


def test_earliest_problem_is_reported():
    source = "import os\nimport sys\n" + src("return open('f')")
    assert check_source(source).lineno == 1
    assert check_source("import os\n").lineno == 1  # the import before the missing entry


def test_benign_operator_features_pass():
    source = '''
from __future__ import annotations
import heapq
import math
import random
from collections import defaultdict, deque
from functools import lru_cache, reduce
from typing import List, Tuple
import numpy as np
import numpy.random
from pyvrp import Route, Solution
from pyvrp.crossover import selective_route_exchange


class Item:
    """A heap entry."""

    def __init__(self, cost: float, route: List[int]):
        self.cost = cost
        self.route = route

    def __lt__(self, other: "Item") -> bool:
        return self.cost < other.cost


def _helper(values: Tuple[int, ...], out: List[np.ndarray] | None = None) -> float:
    counter = 0

    def bump():
        nonlocal counter
        counter += 1
        return counter

    bump()
    heap = [Item(float(v), [v]) for v in values]
    heapq.heapify(heap)
    arr = np.asarray(values, dtype=float)
    table = defaultdict(list)
    table[0].append(deque([1]))
    match values:
        case (first, *_):
            pass
    label = "{} of {:>{width}}".format(len(values), "x", width=3) + f"{arr.sum():.2f}"
    assert isinstance(arr, np.ndarray) and isinstance(arr, (list, np.ndarray))
    return reduce(lambda a, b: a + b, [math.hypot(1, 2), float(arr.mean()), len(label)])


def crossover(parents, data, cost_evaluator, rng, extra=None):
    try:
        child = selective_route_exchange(parents, data, cost_evaluator, rng)
    except (ValueError, IndexError) as exc:
        raise RuntimeError(str(exc)) from exc
    _helper((1, 2, 3))
    return child
'''
    assert check_source(source) == sandbox.Verdict("ok")
    assert check_source("def f(a, *rest):\n    return a\n", entry="f", arity=4).ok
    assert check_source("def f(a, b=1):\n    return a\n", entry="f", arity=1).ok


def test_every_generated_program_of_the_dsl_passes_or_fails_to_compile():
    """The sandbox must accept the whole program space the RFTHGS generator writes."""
    rng = random.Random(0)
    programs = [EXPERT] + [random_program(rng) for _ in range(150)]
    for p in programs:
        verdict = check_source(render(p))
        expected = "syntax_error" if p["syntax"] == "broken" else "ok"
        assert verdict.status == expected, (p, verdict)
    assert {p["syntax"] for p in programs} == set(SLOTS["syntax"])


# --------------------------------------------------------------------------- layer 2: namespace

def test_restricted_namespace_blocks_what_the_ast_check_would_miss():
    sandbox._load_proxies()
    safe = sandbox._safe_builtins()
    assert not {"open", "eval", "exec", "getattr", "type", "__loader__", "compile"} & set(safe)
    for name in ("os", "sys", "ctypes", "numpy.ctypeslib", "collections.abc", "pyvrp.read"):
        with pytest.raises(ImportError, match="not allowed"):
            sandbox._sandbox_import(name)
    with pytest.raises(ImportError, match="relative"):
        sandbox._sandbox_import("hgs", level=1)
    numpy_proxy = sandbox._PROXIES["numpy"]
    for attr in ("ctypeslib", "load", "save", "fromfile", "lib", "testing", "seterr", "os"):
        assert not hasattr(numpy_proxy, attr), attr
    assert numpy_proxy.sctypeDict == numpy.sctypeDict
    assert numpy_proxy.sctypeDict is not numpy.sctypeDict  # a copy: mutations stay local
    assert numpy_proxy.random is sandbox._PROXIES["numpy.random"]
    assert hasattr(numpy_proxy, "argsort") and hasattr(numpy_proxy.linalg, "norm")
    pyvrp_proxy = sandbox._PROXIES["pyvrp"]
    assert not hasattr(pyvrp_proxy, "read") and not hasattr(pyvrp_proxy, "sys")
    assert pyvrp_proxy.Solution is Solution
    # IMPORT_FROM falls back to sys.modules[f"{module.__name__}.{name}"]: the proxy's name
    # must not let 'from numpy import ctypeslib' (already in sys.modules) through.
    assert "numpy.ctypeslib" in sys.modules
    for code, error in (("from numpy import ctypeslib", ImportError),
                        ("import os", ImportError), ("open('/etc/passwd')", NameError),
                        ("getattr(1, 'real')", NameError)):
        with pytest.raises(error):
            exec(code, {"__builtins__": sandbox._safe_builtins()})
    ns = {"__builtins__": sandbox._safe_builtins()}
    # numpy's C code importing a helper while the operator's frame is current must still work.
    exec("import numpy as np\nfrom pyvrp import Solution\nx = int(np.arange(4).sum())", ns)
    assert ns["x"] == 6 and ns["np"] is numpy_proxy
    assert sandbox._sandbox_import("numpy._core._methods", ns, ns, [], 0) is None


# --------------------------------------------------------------------------- runs in the child

def test_correct_operator_returns_ok_with_value():
    out = run_untrusted(src("return [parents, data * 2, cost_evaluator, rng]"), job=CALL,
                        args=((1, 2), 21, "c", None), limits=FAST)
    assert out == Outcome("ok", value=[[1, 2], 42, "c", None], wall_s=out.wall_s,
                          jail=out.jail)
    assert 0 < out.wall_s < FAST.wall_s and out.ok and out.jail.startswith("bwrap")


@pytest.mark.parametrize("seed", [0, 1])
def test_pyvrp_crossover_in_sandbox_equals_in_process(seed):
    source = ("from pyvrp.crossover import selective_route_exchange\n"
              + src("return selective_route_exchange(parents, data, cost_evaluator, rng)"))
    out = run_untrusted(source, job=job("_job_pyvrp"), args=(seed,), limits=FAST)
    assert out.status == "ok", out
    assert out.value == _expected_pyvrp(seed)


def test_syntax_and_forbidden_never_spawn_a_child():
    out = run_untrusted("def crossover(:\n", job=CALL, limits=FAST)
    assert out.status == "syntax_error" and out.lineno == 1 and out.wall_s < 0.5
    out = run_untrusted("import os\n" + src("return 1"), job=CALL, limits=FAST)
    assert out.status == "forbidden" and out.lineno == 1


def test_raise_in_operator_is_runtime_error_with_message_and_line():
    out = run_untrusted(src("x = 1\nraise ValueError('bad child ' + str(x))"), job=CALL,
                        args=(1, 2, 3, 4), limits=FAST)
    assert out.status == "runtime_error" and out.lineno == 3
    assert out.reason == "ValueError: bad child 1"


def test_exception_with_a_hostile_str_is_still_reported():
    source = ("class Bad(Exception):\n    def __str__(self):\n        raise RuntimeError()\n"
              + src("raise Bad()"))
    out = run_untrusted(source, job=CALL, args=(1, 2, 3, 4), limits=FAST)
    assert out.status == "runtime_error" and out.reason == "Bad: <unprintable>"
    assert out.lineno == 5


def test_infinite_loop_times_out_and_the_group_is_killed():
    limits = Limits(wall_s=1.0, cpu_s=30, memory_mb=512)
    t0 = time.monotonic()
    out = run_untrusted(src("while True:\n    pass"), job=CALL, args=(1, 2, 3, 4),
                        limits=limits)
    assert out.status == "timeout" and "1 s" in out.reason
    assert 1.0 <= out.wall_s < 3.0 and time.monotonic() - t0 < 3.0


def test_cpu_limit_is_runtime_error():
    # The wall clock is generous so that a busy machine cannot turn this into a timeout.
    limits = Limits(wall_s=30, cpu_s=1, memory_mb=512)
    out = run_untrusted(src("x = 0\nwhile True:\n    x += 1"), job=CALL, args=(1, 2, 3, 4),
                        limits=limits)
    assert out.status == "runtime_error" and "SIGXCPU" in out.reason, out


@pytest.mark.parametrize("body", ["x = [0] * (10 ** 10)\nreturn len(x)",
                                  "keep = []\nwhile True:\n    keep.append(bytearray(10 ** 7))",
                                  "import numpy as np\nreturn np.ones((10 ** 5, 10 ** 5)).sum()"])
def test_memory_bomb_is_runtime_error_and_parent_is_unharmed(body):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = run_untrusted(src(body), job=CALL, args=(1, 2, 3, 4), limits=FAST)
    assert out.status == "runtime_error", out
    assert "MemoryError" in out.reason and "512 MB" in out.reason and out.lineno is not None
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 50_000


def test_hard_crash_and_exit_without_result_are_runtime_errors():
    out = run_untrusted(src("return 1"), job=job("_job_segfault"), limits=FAST)
    assert out.status == "runtime_error" and "SIGSEGV" in out.reason, out
    out = run_untrusted(src("return 1"), job=job("_job_exit"), limits=FAST)
    assert out.status == "runtime_error" and "status 7" in out.reason, out


def test_operator_crashing_pyvrp_is_contained():
    """pyvrp 0.12.2 divides by zero in C++ on ``rng.randint(0)`` (an operator drawing a route
    of an empty parent): in process that kills the interpreter, here it is a runtime error."""
    out = run_untrusted(src("rng.randint(0)\nreturn parents[0]"), job=job("_job_pyvrp"),
                        args=(0,), limits=FAST)
    if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686"):
        assert out.status == "runtime_error" and "SIGFPE" in out.reason, out
    else:  # ARM's integer division does not trap: the call returns garbage instead
        assert out.status in ("ok", "runtime_error"), out


def test_huge_output_does_not_hang_the_parent():
    limits = Limits(wall_s=5, cpu_s=5, memory_mb=512, max_output_bytes=1000)
    out = run_untrusted(src("for i in range(5000):\n    print('x' * 10000)\nreturn 'done'"),
                        job=CALL, args=(1, 2, 3, 4), limits=limits)
    assert out.status == "ok" and out.value == "done"
    assert len(out.stdout) == 1000 and set(out.stdout) == {"x", "\n"}
    endless = Limits(wall_s=1.0, cpu_s=30, memory_mb=512)
    out = run_untrusted(src("while True:\n    print('y' * 100000)"), job=CALL,
                        args=(1, 2, 3, 4), limits=endless)
    assert out.status == "timeout" and len(out.stdout) == endless.max_output_bytes


def test_environment_is_scrubbed_and_the_child_confined(monkeypatch):
    secret = "s3cret-token-value"
    for name in ("OPTZOO_SANDBOX_SECRET", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN"):
        monkeypatch.setenv(name, secret)
    for name in ("HTTP_PROXY", "https_proxy", "PYTHONPATH"):
        monkeypatch.setenv(name, "http://proxy.invalid:3128")
    out = run_untrusted(src("return 1", params="x"), arity=1, entry="crossover",
                        job=job("_job_environment"), limits=FAST)
    assert out.status == "ok", out
    info = out.value
    assert secret not in json.dumps(info) and "proxy.invalid" not in json.dumps(info)
    assert set(info["env"]) <= {"PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "PYTHONHASHSEED",
                                "PYTHONDONTWRITEBYTECODE", "PYTHONNOUSERSITE",
                                "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                "PWD"}  # bwrap's --chdir sets PWD
    # In the jail the cwd is its private tmpfs, /tmp *inside* the jail.
    assert out.jail.startswith("bwrap") and info["cwd"] == "/tmp" == info["env"]["HOME"]
    # uid/gid 65534: the real host ids under root, the ids mapped in the user namespace
    # otherwise (unmapped supplementary groups show as the overflow gid 65534).
    assert info["uid"] == info["gid"] == 65534 and set(info["groups"]) <= {65534}
    if os.geteuid() == 0:
        assert info["groups"] == []
    assert info["no_new_privs"] == "1" and info["dumpable"] == 0
    limits = info["rlimits"]
    assert limits["RLIMIT_CORE"] == [0, 0] and limits["RLIMIT_FSIZE"] == [0, 0]
    assert limits["RLIMIT_NPROC"] == [0, 0]
    assert limits["RLIMIT_AS"] == [512 << 20, 512 << 20]
    assert limits["RLIMIT_CPU"][1] == limits["RLIMIT_CPU"][0] + 1


def test_fork_and_file_writes_fail_in_the_child():
    out = run_untrusted(src("return 1"), job=job("_job_fork"), limits=FAST)
    # seccomp (EPERM) in the jail, RLIMIT_NPROC (EAGAIN) without one
    assert out.status == "runtime_error", out
    assert "PermissionError" in out.reason or "BlockingIOError" in out.reason, out
    out = run_untrusted(src("return 1"), job=job("_job_write_file"), limits=FAST)
    assert out.status == "runtime_error", out
    assert "PermissionError" in out.reason or "File too large" in out.reason, out


@pytest.mark.parametrize("hang", [False, True])
def test_grandchildren_die_with_the_process_group(hang):
    import threading

    name = f"oz{os.getpid() % 10000}{int(hang)}{random.randrange(10 ** 6)}"[:15]
    limits = Limits(wall_s=1.5, cpu_s=5, memory_mb=512, allow_fork=True)
    seen: list[int] = []

    def watch():
        t0 = time.monotonic()
        while not seen and time.monotonic() - t0 < 1.5:
            seen.extend(_named(name))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    out = run_untrusted(src("return 1"), job=job("_job_orphan"), args=(hang, name),
                        limits=limits)
    watcher.join()
    assert out.status == ("timeout" if hang else "ok"), out
    assert "grandchild=" in out.stdout
    if hang:  # it lived while the job hung: the check below is not vacuous
        assert seen
    deadline = time.monotonic() + 3
    while _named(name) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _named(name)


def test_operator_patching_a_trusted_class_is_caught():
    # Passes the static check (a method assigning to its own 'self'), but is called with a
    # pyvrp class as 'self': the integrity check after the job must notice.
    source = ("from pyvrp import Solution\n"
              "class Patcher:\n"
              "    def patch(self, value):\n"
              "        self.distance = value\n"
              + src("Patcher.patch(Solution, lambda s: 0)\nreturn 1"))
    assert check_source(source).ok
    out = run_untrusted(source, job=CALL, args=(1, 2, 3, 4), limits=FAST)
    assert out.status == "runtime_error", out
    assert "Solution.distance" in out.reason


def test_oversized_or_non_json_results_are_runtime_errors():
    limits = Limits(wall_s=5, cpu_s=5, memory_mb=512, max_result_bytes=10_000)
    out = run_untrusted(src("return 1"), job=job("_job_big"), limits=limits)
    assert out.status == "runtime_error" and "max_result_bytes=10000" in out.reason
    out = run_untrusted(src("return 1"), job=job("_job_not_json"), limits=FAST)
    assert out.status == "runtime_error" and "not JSON data" in out.reason


def test_setup_failures_raise_instead_of_blaming_the_operator():
    with pytest.raises(SandboxError, match="no_such_job"):
        run_untrusted(src("return 1"), job=job("no_such_job"), limits=FAST)
    with pytest.raises(SandboxError, match="footprint"):
        run_untrusted(src("return 1"), job=CALL, limits=Limits(wall_s=5, memory_mb=40))


def test_arguments_are_validated():
    with pytest.raises(ConfigError, match="job"):
        run_untrusted(src("return 1"), job="optzoo.routing.sandbox.call_operator")
    with pytest.raises(ConfigError, match="args"):
        run_untrusted(src("return 1"), job=CALL, args=(lambda: 1,))
    with pytest.raises(ConfigError, match="entry"):
        run_untrusted(src("return 1"), job=CALL, entry="__init__")
    with pytest.raises(ConfigError, match="arity"):
        check_source(src("return 1"), arity=-1)
    with pytest.raises(ConfigError, match="source"):
        check_source(b"def crossover(): pass")
    with pytest.raises(ConfigError, match="limits"):
        run_untrusted(src("return 1"), job=CALL, limits={"wall_s": 1})
    for kwargs, name in (({"wall_s": 0}, "wall_s"), ({"cpu_s": float("nan")}, "cpu_s"),
                         ({"memory_mb": True}, "memory_mb"), ({"allow_fork": 1}, "allow_fork"),
                         ({"max_result_bytes": 10}, "max_result_bytes")):
        with pytest.raises(ConfigError, match=name):
            Limits(**kwargs)


def test_evaluate_operator_runs_in_the_sandbox_like_in_process():
    """The RFTHGS evaluator as the job: same rows as an unsandboxed run of the same source."""
    source = render(EXPERT)
    specs = [InstanceSpec.x("X-n101-k25")]
    out = run_untrusted(source, job="optzoo.routing.hgs:evaluate_operator",
                        args=(specs, 30, 4), limits=Limits(wall_s=60, cpu_s=60, memory_mb=1024))
    assert out.status == "ok", out
    namespace: dict = {}
    exec(compile(source, "<trusted copy>", "exec"), namespace)
    expected = evaluate_operator(namespace["crossover"], specs, 30, 4)
    strip = [{k: v for k, v in row.items() if k != "wall_s"} for row in expected]
    assert [{k: v for k, v in row.items() if k != "wall_s"} for row in out.value] == strip
    # A defective program of the DSL: the sandbox reports what the in-process run raises.
    broken = render({**EXPERT, "returns": "routes"})
    out = run_untrusted(broken, job="optzoo.routing.hgs:evaluate_operator",
                        args=(specs, 30, 4), limits=Limits(wall_s=60, cpu_s=60, memory_mb=1024))
    namespace = {}
    exec(compile(broken, "<trusted copy>", "exec"), namespace)
    with pytest.raises(Exception) as info:
        evaluate_operator(namespace["crossover"], specs, 30, 4)
    assert out.status == "runtime_error", out
    def no_addresses(text):
        return re.sub(r"0x[0-9a-f]+", "0x", text)

    assert no_addresses(out.reason) == no_addresses(f"{type(info.value).__name__}: {info.value}")
