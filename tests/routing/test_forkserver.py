"""The jailed fork server: the same outcomes as one jail per operator, one server per evaluator.

Its containment is attacked in ``test_jail.py`` (the RAW corpus, the bombs and the clean-state
check run through a server, as the test's user and as an ordinary user); here: equality with
:func:`optzoo.routing.sandbox.run_untrusted` on the same operators, the server's lifetime
(survives timeouts and crashes of its children, restarts after it was killed) and its errors.
"""

from __future__ import annotations

import os
import signal

import pytest

from optzoo.routing import forkserver, jail, sandbox
from optzoo.routing.code_corpus import srex_source
from optzoo.routing.forkserver import Forkserver
from optzoo.routing.instances import InstanceSpec
from optzoo.routing.sandbox import Limits, SandboxError, run_untrusted

CALL = f"{sandbox.__name__}:call_operator"
FAST = Limits(wall_s=15, cpu_s=10, memory_mb=512)


def src(body: str, head: str = "") -> str:
    return head + "def crossover(parents, data, cost_evaluator, rng):\n" + "".join(
        f"    {line}\n" for line in body.split("\n"))


OPERATORS = {
    "value": src("return [parents, data, cost_evaluator, rng]"),
    "raises": src("x = 1\nraise ValueError('bad ' + str(x))"),
    "syntax": "def crossover(a, b, c, d):\n    return (\n",
    "forbidden": src("return open('/etc/passwd').read()"),
    "memory bomb": src("keep = []\nwhile True:\n    keep.append(bytearray(10 ** 7))"),
    "recursion": src("def f(n):\n    return f(n + 1)\nreturn f(0)"),
    "no result": src("return crossover"),  # a function is not JSON data
    "patches a class": src("np.random.Generator.oz = 1\nreturn 1", "import numpy as np\n"),
}


def _key(out):
    return out.status, out.value, out.lineno, out.reason


def test_outcomes_equal_those_of_one_jail_per_operator():
    with Forkserver(CALL) as server:
        for label, source in OPERATORS.items():
            alone = run_untrusted(source, job=CALL, args=(1, 2.5, "c", [4]), limits=FAST)
            forked = server.run(source, args=(1, 2.5, "c", [4]), limits=FAST)
            assert _key(forked) == _key(alone), label
            if alone.jail != sandbox.NO_CHILD:
                assert forked.jail == alone.jail + ", fork server", label
        assert server.started == 1  # one interpreter for all of them


def test_hgs_with_the_srex_port_returns_the_same_routes():
    specs = [InstanceSpec.generated(25, seed=3), InstanceSpec.generated(40, seed=4)]
    args = (specs, 15, 2, None)
    limits = Limits(wall_s=60, cpu_s=60, memory_mb=1024)
    alone = run_untrusted(srex_source(), job="optzoo.routing.hgs:best_routes", args=args,
                          limits=limits)
    with Forkserver("optzoo.routing.hgs:best_routes") as server:
        first = server.run(srex_source(), args=args, limits=limits)
        again = server.run(srex_source(), args=args, limits=limits)
    assert alone.ok and first.ok and again.ok, (alone, first, again)
    routes = [[row["routes"] for row in out.value] for out in (alone, first, again)]
    assert routes[0] == routes[1] == routes[2]
    assert all(r for r in routes[0])


def test_the_server_outlives_timeouts_and_crashes_of_its_children():
    loop = src("while True:\n    pass")
    with Forkserver(CALL) as server:
        out = server.run(loop, args=(1, 2, 3, 4), limits=Limits(wall_s=1.0, cpu_s=30))
        assert out.status == "timeout" and out.wall_s < 1.0 + forkserver.REPLY_GRACE_S, out
        ok = server.run(OPERATORS["value"], args=(1, 2, 3, 4), limits=FAST)
        assert ok.ok and ok.value == [1, 2, 3, 4] and server.started == 1, ok


def test_a_child_that_closes_its_pipes_and_sleeps_still_times_out():
    """The server waits for the child's exit, not only for its pipes, up to the deadline."""
    job = "tests.routing.test_jail:_job_raw"
    quiet = "os.close(1)\nos.close(2)\nos.close(3)\ntime.sleep(60)"
    with Forkserver(job) as server:
        out = server.run(src("return 1"), args=([("quiet", quiet)], {}),
                         limits=Limits(wall_s=1.5, cpu_s=30, memory_mb=512))
        assert out.status == "timeout" and out.wall_s < 1.5 + forkserver.REPLY_GRACE_S, out
        again = server.run(src("return 1"), args=([("x", "proof = 1")], {}), limits=FAST)
        assert again.ok and server.started == 1, again


def test_a_killed_server_is_restarted_for_the_next_operator():
    with Forkserver(CALL) as server:
        assert server.run(OPERATORS["value"], args=(1, 2, 3, 4), limits=FAST).ok
        os.killpg(server._proc.pid, signal.SIGKILL)
        server._proc.wait()
        out = server.run(OPERATORS["value"], args=(5, 6, 7, 8), limits=FAST)
        assert out.ok and out.value == [5, 6, 7, 8] and server.started == 2, out


def test_errors_name_what_was_wrong(monkeypatch):
    with Forkserver(CALL) as server:
        with pytest.raises(sandbox.ConfigError, match="allow_fork"):
            server.run(OPERATORS["value"], limits=Limits(allow_fork=True))
        with pytest.raises(sandbox.ConfigError, match="limits: expected a Limits"):
            server.run(OPERATORS["value"], limits={"wall_s": 1})
        with pytest.raises(sandbox.ConfigError, match="picklable"):
            server.run(OPERATORS["value"], args=(lambda: 0, 1, 2, 3))
    with pytest.raises(SandboxError, match="cannot be imported"):
        with Forkserver("optzoo.routing.no_such_module:f") as server:
            server.run(OPERATORS["value"], args=(1, 2, 3, 4), limits=FAST)
    with pytest.raises(sandbox.ConfigError, match="job: expected"):
        Forkserver("not a job")
    monkeypatch.setattr(forkserver.jail, "probe", lambda: (None, "no bwrap (test)"))
    with pytest.raises(SandboxError, match=r"needs an operating-system jail: no bwrap \(test\)"):
        Forkserver(CALL)


def test_only_a_root_server_keeps_cap_kill():
    box = jail.Jail("/bin/bwrap", as_root=True)
    argv = jail.bwrap_argv(box, ["python"], {}, 3, [], server=True)
    assert argv[argv.index("CAP_KILL") - 1] == "--cap-add"
    assert "CAP_KILL" not in jail.bwrap_argv(box, ["python"], {}, 3, [])
    user = jail.Jail("/bin/bwrap", as_root=False)
    assert not any("CAP_" in a for a in jail.bwrap_argv(user, ["python"], {}, 3, [],
                                                         server=True))


def test_the_rfthgs_evaluator_runs_every_operator_through_one_server():
    from optzoo.routing.rfthgs import SandboxEvaluator

    spec = InstanceSpec.generated(20, seed=5)
    ev = SandboxEvaluator([spec], [1e9], iterations=3, limits=FAST)
    try:
        first = ev(srex_source(), [0], 0)
        second = ev(OPERATORS["raises"], [0], 0)
        assert first["status"] == "ok" and first["gaps"][0] < 0, first
        assert second["status"] == "runtime_error" and "bad 1" in second["reason"], second
        assert ev._server is not None and ev._server.started == 1
    finally:
        ev.close()
