"""A jailed fork server for the operator sandbox: one jail per evaluator, a child per operator.

:func:`optzoo.routing.sandbox.run_untrusted` starts a new interpreter in a new bubblewrap jail
for every operator.  In RFTHGS's quick preset that start-up is most of an evaluation: an
interpreter importing numpy and pyvrp takes about 0.35 s, while 100 HGS iterations on three
instances of 30-50 clients take a few hundredths; 200 evaluations per trial cost about 84 s.
:class:`Forkserver` pays the start-up once: it starts one interpreter in the same jail
(:mod:`optzoo.routing.jail`), which imports the job's module and the sandbox's proxy modules and
then, for each request, ``fork``s a child that confines itself exactly as a child of
``run_untrusted`` does (:func:`optzoo.routing.sandbox._child_main`: static check, rlimits,
``prctl`` hardening, privilege drop, stacked seccomp filter) before the operator runs.

What differs from one jail per operator, and why it is still one operator per sandbox:

* The server's outer seccomp filter must allow ``fork`` (the server forks); every forked child
  therefore stacks the process-creation rules itself (:func:`optzoo.routing.jail.inner_filter`
  with ``forked=True``: no ``fork``/``vfork``, ``clone`` only for threads, ``clone3`` ENOSYS),
  on top of ``RLIMIT_NPROC`` 0, no ``exec`` and signals only to its own pid.  Jobs that may fork
  (``Limits.allow_fork``) are refused: their grandchildren could outlive an evaluation.
* Operators run one at a time, each in a fresh copy of the server's memory: what one operator
  changes in its process (module state, patched classes, allocations) dies with it.  The jail's
  ``/tmp`` is shared, so the server empties it after every child (a child cannot grow a file:
  ``RLIMIT_FSIZE`` 0; it could leave empty files or fifos).
* The server is a process of the same user as its children inside the jail (an ordinary user:
  uid 65534 of the user namespace; root: the children drop to the host's uid 65534).  A child
  cannot signal it (seccomp: own pid only), ``ptrace`` it or use ``process_vm_*`` (seccomp), and
  the server is non-dumpable, so its ``/proc/<pid>/mem`` is closed to a child without
  ``CAP_SYS_PTRACE``.  Children close every descriptor but their own three pipes and a
  ``/dev/null`` stdin; the server's control pipes are not among them.
* The server is trusted code: it forwards the request bytes it received from the parent, never
  unpickles or executes what a child sends, caps each child's output and result as
  :func:`run_untrusted` does, kills the child at its wall-clock limit and replies with plain
  bytes the parent parses with the same code (:func:`optzoo.routing.sandbox._finish`).
* Python's ``random`` reseeds itself in a forked child (``os.register_at_fork``); numpy's
  legacy global generator is reseeded from the OS too, so a child sees fresh global state as a
  new interpreter would (jobs use their own seeded generators either way).

Outcomes equal those of :func:`run_untrusted` (the tests compare them on the same operators and
run the jail's attack corpus through a server); ``Outcome.jail`` names the jail with
"fork server" appended.  Where no jail can be built, :class:`Forkserver` raises; the RFTHGS
evaluator then falls back to :func:`run_untrusted` (which refuses, or runs ``insecure``).

Usage::

    with Forkserver("optzoo.routing.hgs:best_routes") as server:
        out = server.run(source, args=(specs, 100, 0, None), limits=Limits(wall_s=60))
"""

from __future__ import annotations

import dataclasses
import json
import os
import selectors
import signal
import struct
import subprocess
import sys
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from optzoo.errors import ConfigError
from optzoo.routing import jail, sandbox, seccomp
from optzoo.routing.sandbox import Limits, Outcome, SandboxError

START_TIMEOUT_S = 60.0
"""How long the parent waits for a new server to import its job and report ready."""

REPLY_GRACE_S = 10.0
"""Seconds past a child's wall-clock limit the parent waits for the server's reply before it
kills the server (the server itself kills the child at the limit)."""

_FRAME = struct.Struct(">Q")

_BOOT = (
    "import json,sys\n"
    "h=json.loads(sys.stdin.buffer.readline())\n"
    "sys.path[:]=h['sys_path']\n"
    "from optzoo.routing.forkserver import _serve\n"
    "_serve(h)\n"
)


class Forkserver:
    """One jailed interpreter that runs ``job`` on untrusted operators, one forked child each.

    Args:
        job: trusted ``"package.module:function"``, as for
            :func:`optzoo.routing.sandbox.run_untrusted` (its ``sandbox_prepare`` hook runs in
            the parent before each request).

    The server starts on the first :meth:`run` and again after it died or was killed; call
    :meth:`close` (or use ``with``) to end it; it also dies with the parent
    (``--die-with-parent``).

    Raises:
        SandboxError: no operating-system jail can be built here (see
            :func:`optzoo.routing.jail.probe`), or the server could not start.
    """

    def __init__(self, job: str) -> None:
        self.module_name, self.func_name = sandbox._parse_job(job)
        self.job = job
        box, why = jail.probe()
        if box is None:
            raise SandboxError(f"Forkserver needs an operating-system jail: {why}")
        self.box = box
        self._proc: subprocess.Popen | None = None
        self._stop: weakref.finalize | None = None
        self._err = bytearray()  # the tail of the server's stderr, for error messages
        self.started = 0  # servers started so far (a restart after a kill counts)

    @property
    def jail_name(self) -> str:
        return self.box.name + ", fork server"

    # -- lifetime ---------------------------------------------------------------------------

    def __enter__(self) -> Forkserver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        # A running server is a process of this one: a copy starts its own.
        return {**self.__dict__, "_proc": None, "_stop": None}

    def close(self) -> None:
        """End the server (its children die with it); the next :meth:`run` starts a new one."""
        stop, self._proc, self._stop = self._stop, None, None
        if stop is not None:
            stop()

    def _start(self) -> subprocess.Popen:
        sys_path = [os.path.abspath(p) for p in sys.path if isinstance(p, str)]
        command = [sandbox._interpreter(), "-s", "-B", "-P", "-c", _BOOT]
        try:
            proc = jail.jailed_popen(
                self.box, command, sandbox._child_env(jail.JAIL_HOME),
                jail.read_only_paths(sys_path, [self.module_name, "optzoo"]), allow_fork=True,
                server=True, cwd="/", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True)
        except (OSError, seccomp.SeccompError) as exc:
            raise SandboxError(f"could not start the fork server: {exc}") from exc
        self._proc = proc
        # Ends the server when this object is collected or the interpreter exits, whichever
        # comes first (a finalizer, unlike __del__, runs before modules are torn down).
        self._stop = weakref.finalize(self, _stop_server, proc)
        self.started += 1
        boot = {"sys_path": sys_path, "job": self.job}
        try:
            proc.stdin.write(json.dumps(boot).encode() + b"\n")
            proc.stdin.flush()
            ready = self._read_frame(time.monotonic() + START_TIMEOUT_S)
        except (OSError, _ServerLost, _Late) as exc:
            err = self._stderr_tail()
            self.close()
            raise SandboxError(f"the fork server for {self.job!r} did not start"
                               + (f": {err}" if err else f" ({exc})")) from None
        message = json.loads(ready)
        if "error" in message:
            self.close()
            raise SandboxError(f"the fork server could not set up job {self.job!r}: "
                               f"{message['error']}")
        return proc

    # -- one evaluation -------------------------------------------------------------------

    def run(self, source: str, *, args: Sequence[Any] = (),
            kwargs: Mapping[str, Any] | None = None, limits: Limits | None = None,
            entry: str = "crossover", arity: int = 4) -> Outcome:
        """What :func:`optzoo.routing.sandbox.run_untrusted` returns for the same arguments,
        without a new interpreter.  Never raises because of what the untrusted code does.

        Raises:
            ConfigError: bad ``entry``, ``arity``, ``limits`` (``allow_fork`` is refused) or
                unpicklable arguments.
            SandboxError: the server cannot start or set up the job, or it died (which no
                operator can cause: it is a fault of the jail, not of the operator).
        """
        limits = Limits() if limits is None else limits
        if not isinstance(limits, Limits):
            raise ConfigError(f"limits: expected a Limits, got {type(limits).__name__}")
        if limits.allow_fork:
            raise ConfigError("limits: a Forkserver runs jobs that do not fork "
                              "(allow_fork=False); use run_untrusted for one that does")
        sandbox._check_call(entry, arity, kwargs)
        rejected, payload, _ = sandbox._checked_payload(source, self.module_name, self.func_name,
                                                        entry, arity, args, kwargs, limits)
        if rejected is not None:
            return rejected
        header = {"job": self.job, "entry": entry, "arity": arity, "source": source,
                  "limits": dataclasses.asdict(limits), "jailed": True, "forked": True}
        request = json.dumps(header).encode() + b"\n" + payload
        proc = self._proc if self._proc is not None and self._proc.poll() is None \
            else self._start()
        start = time.monotonic()
        try:
            proc.stdin.write(_FRAME.pack(len(request)) + request)
            proc.stdin.flush()
            raw = self._read_frame(start + limits.wall_s + REPLY_GRACE_S)
        except _Late:
            # The server kills a child at wall_s; a reply this late means it is stuck after
            # that (emptying a tmpfs a child filled): the operator's run is a timeout.
            self.close()
            return Outcome("timeout", reason=f"wall-clock limit of {limits.wall_s:g} s "
                                             "exceeded; the fork server was killed",
                           wall_s=time.monotonic() - start, jail=self.jail_name)
        except (OSError, _ServerLost) as exc:
            err = self._stderr_tail()
            self.close()
            raise SandboxError(f"the fork server for {self.job!r} died during an evaluation"
                               + (f": {err}" if err else f" ({exc})")) from None
        wall = time.monotonic() - start
        reply, _, rest = raw.partition(b"\n")
        meta = json.loads(reply)
        if meta["restart"]:
            self.close()
        sizes = [meta["stdout"], meta["stderr"], meta["result"]]
        parts, offset = [], 0
        for n in sizes:
            parts.append(bytearray(rest[offset:offset + n]))
            offset += n
        return sandbox._finish(self.job, limits, parts[2], meta["overflow"], parts[0],
                               parts[1], meta["returncode"], meta["timed_out"], wall,
                               self.jail_name, bwrap=False)

    def _read_frame(self, deadline: float) -> bytes:
        """One length-prefixed reply from the server, draining its stderr meanwhile."""
        proc = self._proc
        assert proc is not None
        buf = bytearray()
        need: int | None = None
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout.fileno(), selectors.EVENT_READ, "out")
            sel.register(proc.stderr.fileno(), selectors.EVENT_READ, "err")
            while need is None or len(buf) < need + _FRAME.size:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise _Late
                for key, _ in sel.select(timeout=min(remaining, 1.0)):
                    chunk = os.read(key.fd, 1 << 16)
                    if key.data == "err":
                        self._err += chunk
                        del self._err[:max(0, len(self._err) - 4096)]
                        if not chunk:
                            sel.unregister(key.fd)
                        continue
                    if not chunk:
                        raise _ServerLost("the server exited")
                    buf += chunk
                if need is None and len(buf) >= _FRAME.size:
                    (need,) = _FRAME.unpack_from(buf)
        return bytes(buf[_FRAME.size:_FRAME.size + need])

    def _stderr_tail(self) -> str:
        text = bytes(self._err).decode("utf-8", "replace").strip()
        return (text.splitlines() or [""])[-1]


def _stop_server(proc: subprocess.Popen) -> None:
    sandbox._kill_group(proc.pid)
    proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


class _ServerLost(Exception):
    """The server exited."""


class _Late(Exception):
    """The server did not answer before the deadline."""


# ---------------------------------------------------------------------------------------------
# The server side (runs in the jail; never in the parent).
# ---------------------------------------------------------------------------------------------

def _serve(boot: dict[str, Any]) -> None:
    """Entry of the jailed server: import the job, report ready, then fork one child per
    request until the parent closes the pipe."""
    # The control channel moves off fds 0/1, so a stray print cannot corrupt it, and fds 0/1
    # point at /dev/null and stderr.
    ctl_in, ctl_out = os.dup(0), os.dup(1)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    try:
        import ctypes  # noqa: F401 -- what _child_main imports, before any fork
        import importlib
        import resource  # noqa: F401
        import traceback  # noqa: F401

        module_name, func_name = sandbox._parse_job(boot["job"])
        getattr(importlib.import_module(module_name), func_name)
        sandbox._load_proxies()
        sandbox._prctl_hardening()  # non-dumpable (closes /proc/<server>/mem), no new privileges
        if os.geteuid() == 0:
            # As root the children drop to uid 65534 and the tmpfs is root's: closed to them, so
            # nothing they could leave there (a root without CAP_DAC_OVERRIDE cannot empty a
            # folder of 65534's).  As an ordinary user, server and children share the uid, and
            # _empty_tmp removes what a child made.
            os.chmod(jail.JAIL_HOME, 0o755)
    except BaseException as exc:
        _write_frame(ctl_out, json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode())
        os._exit(0)
    _write_frame(ctl_out, b'{"ready": true}')
    while True:
        request = _read_exact_frame(ctl_in)
        if request is None:
            os._exit(0)
        header_line, _, payload = request.partition(b"\n")
        reply, restart = _evaluate(json.loads(header_line), payload)
        _write_frame(ctl_out, reply)
        if restart:
            os._exit(0)  # the tmpfs could not be emptied: the next operator gets a new jail


def _evaluate(header: dict[str, Any], payload: bytes) -> tuple[bytes, bool]:
    """Fork one confined child for ``header``'s operator and collect what it leaves: the reply
    for the parent, and whether this server must end after sending it."""
    limits = Limits(**header["limits"])
    pipes = [os.pipe() for _ in range(3)]  # stdout, stderr, result
    server = os.getpid()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.dup2(pipes[0][1], 1)
            os.dup2(pipes[1][1], 2)
            os.dup2(pipes[2][1], 3)
            null = os.open("/dev/null", os.O_RDONLY)
            os.dup2(null, 0)
            os.closerange(4, _fd_limit())
            _reseed_numpy()
            sandbox._child_main({**header, "result_fd": 3, "parent_pid": server}, payload)
        finally:
            os._exit(70)
    for _, w in pipes:
        os.close(w)
    bufs = [bytearray(), bytearray(), bytearray()]
    overflow = timed_out = False
    deadline = start + limits.wall_s
    with selectors.DefaultSelector() as sel:
        for i, (r, _) in enumerate(pipes):
            sel.register(r, selectors.EVENT_READ, i)
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            for key, _ in sel.select(timeout=min(remaining, 0.5)):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fd)
                    continue
                buf = bufs[key.data]
                if key.data == 2:
                    if len(buf) + len(chunk) > limits.max_result_bytes:
                        overflow = True
                    else:
                        buf += chunk
                else:
                    buf += chunk
                    del buf[:max(0, len(buf) - limits.max_output_bytes)]
    clean = True
    status = None
    while not timed_out:
        # The pipes can close before the child ends (it may close them and sleep): wait for
        # its exit up to the same deadline.
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() >= deadline:
            timed_out = True
        else:
            time.sleep(0.01)
    if timed_out:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        except PermissionError:
            # It cannot be ended from here: the server ends after this reply and the child
            # dies with it (its parent-death signal); the parent starts a new server.
            clean = False
    if clean:
        if status is None or timed_out:
            _, status = os.waitpid(pid, 0)
        returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        clean = _empty_tmp()
    else:
        returncode = -signal.SIGKILL
    for r, _ in pipes:
        os.close(r)
    meta = {"returncode": returncode, "timed_out": timed_out, "overflow": overflow,
            "stdout": len(bufs[0]), "stderr": len(bufs[1]), "result": len(bufs[2]),
            "wall_s": time.monotonic() - start, "restart": not clean}
    return json.dumps(meta).encode() + b"\n" + bytes(bufs[0] + bufs[1] + bufs[2]), not clean


def _fd_limit() -> int:
    import resource

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return 1 << 20 if hard == resource.RLIM_INFINITY else max(int(hard), 1 << 10)


def _reseed_numpy() -> None:
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()


def _empty_tmp() -> bool:
    """Remove what the last child left in the jail's tmpfs; False if something stayed (the
    server then exits after its reply and the parent starts a fresh one)."""
    import shutil

    def unlock(func, path, exc):  # a folder the child made unreadable: ours to chmod
        try:
            os.chmod(os.path.dirname(path), 0o700)
            os.chmod(path, 0o700)
            func(path)
        except OSError:
            pass

    try:
        for entry in os.scandir(jail.JAIL_HOME):
            if entry.is_dir(follow_symlinks=False):
                os.chmod(entry.path, 0o700)
                shutil.rmtree(entry.path, onerror=unlock)
            else:
                os.unlink(entry.path)
        return not os.listdir(jail.JAIL_HOME)
    except OSError:
        return False


def _write_frame(fd: int, data: bytes) -> None:
    view = memoryview(_FRAME.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _read_exact_frame(fd: int) -> bytes | None:
    head = _read_exact(fd, _FRAME.size)
    if head is None:
        return None
    (n,) = _FRAME.unpack(head)
    return _read_exact(fd, n)


def _read_exact(fd: int, n: int) -> bytes | None:
    out = bytearray()
    while len(out) < n:
        chunk = os.read(fd, min(n - len(out), 1 << 20))
        if not chunk:
            return None
        out += chunk
    return bytes(out)
