"""The classic-BPF seccomp generator: programs interpreted in Python for both architectures,
and installed in a real process (x86_64 or aarch64 Linux) to show the kernel enforces them."""

from __future__ import annotations

import errno
import json
import subprocess
import sys
import textwrap

import pytest

from optzoo.routing import jail, seccomp
from optzoo.routing.seccomp import (
    AUDIT_ARCH,
    RET_ALLOW,
    RET_ERRNO,
    RET_KILL_PROCESS,
    SYSCALLS,
    Rule,
    SeccompError,
    compile_filter,
    evaluate,
)

EPERM = RET_ERRNO | errno.EPERM


@pytest.mark.parametrize("arch", sorted(SYSCALLS))
def test_outer_filter_decisions(arch):
    nr = SYSCALLS[arch]
    prog = jail.outer_filter(allow_fork=False, arch=arch)
    assert len(prog) % 8 == 0
    for name in ("socket", "connect", "ptrace", "mount", "unshare", "setns", "bpf",
                 "io_uring_setup", "keyctl", "process_vm_readv", "pidfd_open", "tkill"):
        assert evaluate(prog, nr[name], arch) == EPERM, name
    if arch == "x86_64":
        assert evaluate(prog, nr["fork"], arch) == EPERM
        assert evaluate(prog, nr["vfork"], arch) == EPERM
        assert evaluate(prog, nr["socket"] | seccomp.X32_SYSCALL_BIT, arch) == EPERM
    assert evaluate(prog, nr["clone3"], arch) == RET_ERRNO | errno.ENOSYS
    thread_flags = 0x3D0F00  # what glibc's pthread_create passes (CLONE_THREAD among them)
    assert evaluate(prog, nr["clone"], arch, [thread_flags]) == RET_ALLOW
    assert evaluate(prog, nr["clone"], arch, [0x11]) == EPERM  # fork(): SIGCHLD only
    # kill: process groups, every process and init denied; another positive pid allowed
    for pid in (0, 1, -1, -2, 2 ** 31):
        assert evaluate(prog, nr["kill"], arch, [pid, 9]) == EPERM, pid
    assert evaluate(prog, nr["kill"], arch, [2, 9]) == RET_ALLOW
    assert evaluate(prog, nr["getpid"], arch) == RET_ALLOW
    assert evaluate(prog, nr["execve"], arch) == RET_ALLOW  # bwrap must still start python
    forking = jail.outer_filter(allow_fork=True, arch=arch)
    assert evaluate(forking, nr["clone"], arch, [0x11]) == RET_ALLOW
    assert evaluate(forking, nr["socket"], arch) == EPERM


@pytest.mark.parametrize("arch", sorted(SYSCALLS))
def test_inner_filter_decisions(arch):
    nr = SYSCALLS[arch]
    prog = jail.inner_filter(own_pid=2, allow_fork=False, arch=arch)
    assert evaluate(prog, nr["execve"], arch) == EPERM
    assert evaluate(prog, nr["execveat"], arch) == EPERM
    assert evaluate(prog, nr["kill"], arch, [2, 11]) == RET_ALLOW
    assert evaluate(prog, nr["tgkill"], arch, [2, 2, 6]) == RET_ALLOW
    assert evaluate(prog, nr["kill"], arch, [3, 9]) == EPERM
    assert evaluate(prog, nr["tgkill"], arch, [1, 1, 9]) == EPERM
    # the high word of a 64-bit argument is ignored (int arguments)
    assert evaluate(prog, nr["kill"], arch, [(5 << 32) | 2, 9]) == RET_ALLOW
    assert evaluate(jail.inner_filter(2, True, arch), nr["execve"], arch) == RET_ALLOW


def test_foreign_architecture_is_killed_and_unknown_names_rejected():
    prog = compile_filter(seccomp.deny(["socket"]), "x86_64")
    insns = bytearray(prog)
    # seccomp_data.arch of an i386 call: the program must kill, whatever the number
    assert evaluate(prog, 1, "aarch64") == RET_KILL_PROCESS
    assert AUDIT_ARCH["x86_64"] != AUDIT_ARCH["aarch64"] and len(insns) == len(prog)
    with pytest.raises(SeccompError, match="unknown system call"):
        compile_filter([Rule("no_such_call")], "x86_64")
    with pytest.raises(SeccompError, match="architecture"):
        compile_filter([], "mips")
    with pytest.raises(SeccompError, match="kind"):
        Rule("kill", "sometimes")
    with pytest.raises(SeccompError, match="errno"):
        Rule("kill", errno_value=0)
    # the first rule naming a call decides; calls absent on an architecture are skipped
    prog = compile_filter([Rule("kill", "only_pid", pid=7), Rule("kill")], "aarch64")
    assert evaluate(prog, SYSCALLS["aarch64"]["kill"], "aarch64", [7, 9]) == RET_ALLOW
    assert compile_filter(seccomp.deny(["fork"]), "aarch64") == compile_filter([], "aarch64")


_KERNEL_CHECK = textwrap.dedent('''
    import errno, json, os, socket, sys
    sys.path[:0] = json.loads(sys.argv[1])
    from optzoo.routing import jail, seccomp
    seccomp.install(jail.outer_filter(allow_fork=False))
    seccomp.install(jail.inner_filter(os.getpid(), allow_fork=False))
    out = {}
    def attempt(name, call):
        try:
            call()
            out[name] = "allowed"
        except OSError as exc:
            out[name] = errno.errorcode.get(exc.errno, str(exc.errno))
    attempt("socket", lambda: socket.socket())
    attempt("fork", os.fork)
    attempt("execv", lambda: os.execv("/bin/true", ["true"]))
    attempt("kill_init", lambda: os.kill(1, 0))
    attempt("kill_group", lambda: os.kill(0, 0))
    attempt("kill_self", lambda: os.kill(os.getpid(), 0))
    attempt("unshare", lambda: os.unshare(os.CLONE_NEWUSER) if hasattr(os, "unshare")
            else (_ for _ in ()).throw(OSError(errno.EPERM, "")))
    import threading
    t = threading.Thread(target=lambda: None); t.start(); t.join()
    out["thread"] = "allowed"
    print(json.dumps(out))
''')


def test_installed_filters_are_enforced_by_the_kernel():
    """Both filters stacked in a plain subprocess (no bwrap): the kernel says EPERM."""
    seccomp.native_arch()
    paths = [p for p in sys.path if p]
    proc = subprocess.run([sys.executable, "-c", _KERNEL_CHECK, json.dumps(paths)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out == {"socket": "EPERM", "fork": "EPERM", "execv": "EPERM", "kill_init": "EPERM",
                   "kill_group": "EPERM", "kill_self": "allowed", "unshare": "EPERM",
                   "thread": "allowed"}, out
