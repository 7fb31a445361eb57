"""A small generator of seccomp filters (classic BPF) for the operator jail.

No package on PyPI builds seccomp programs without the C library ``libseccomp`` (and its
``.so`` is not everywhere), so this module writes the few instructions the jail needs itself.
A program is a list of rules over system call *names*; :func:`compile_filter` turns it into
the bytes of a ``struct sock_filter`` array for one architecture -- what ``bwrap --seccomp FD``
reads, and what :func:`install` hands to ``prctl(PR_SET_SECCOMP)``.

Layout of every program:

1. load ``seccomp_data.arch``; a foreign architecture (an i386 ``int 0x80`` call on x86_64,
   for example) kills the process (``SECCOMP_RET_KILL_PROCESS``);
2. load ``seccomp_data.nr``; on x86_64 every x32 call (``nr & 0x40000000``) is denied;
3. one block per rule: ``if nr == N`` then the rule's body (which always ends in a return),
   else fall through to the next block;
4. allow.

Denied calls return an errno (``EPERM`` unless the rule says otherwise, e.g. ``ENOSYS`` for
``clone3`` so that glibc falls back to ``clone``, whose flags a filter can inspect).  Arguments
are compared on their low 32 bits (both supported architectures are little-endian), which is
what the kernel uses for the ``int`` arguments compared here (``pid``, ``flags``).

Supported architectures: x86_64 and aarch64 (:data:`SYSCALLS`).  :func:`evaluate` interprets a
compiled program in Python, so rules are testable without installing them.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
"""``AUDIT_ARCH_*`` constant of each supported architecture (``seccomp_data.arch``)."""

X32_SYSCALL_BIT = 0x40000000

# x86_64: arch/x86/entry/syscalls/syscall_64.tbl; aarch64: include/uapi/asm-generic/unistd.h
# (aarch64 has no fork/vfork: glibc uses clone).  Checked against the kernel headers.
SYSCALLS: dict[str, dict[str, int]] = {
    "x86_64": {
        "fork": 57, "vfork": 58, "clone": 56, "clone3": 435, "execve": 59, "execveat": 322,
        "socket": 41, "socketpair": 53, "connect": 42, "bind": 49, "listen": 50, "accept": 43,
        "accept4": 288, "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
        "kill": 62, "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129,
        "rt_tgsigqueueinfo": 297, "pidfd_open": 434, "pidfd_send_signal": 424,
        "pidfd_getfd": 438, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
        "unshare": 272, "setns": 308, "keyctl": 250, "add_key": 248, "request_key": 249,
        "bpf": 321, "perf_event_open": 298, "kexec_load": 246, "kexec_file_load": 320,
        "init_module": 175, "finit_module": 313, "delete_module": 176, "reboot": 169,
        "swapon": 167, "swapoff": 168, "acct": 163, "userfaultfd": 323,
        "open_by_handle_at": 304, "name_to_handle_at": 303, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
        "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
        "iopl": 172, "ioperm": 173, "quotactl": 179, "kcmp": 312, "syslog": 103,
        "vhangup": 153, "getpid": 39,
    },
    "aarch64": {
        "clone": 220, "clone3": 435, "execve": 221, "execveat": 281, "socket": 198,
        "socketpair": 199, "connect": 203, "bind": 200, "listen": 201, "accept": 202,
        "accept4": 242, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
        "kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138,
        "rt_tgsigqueueinfo": 240, "pidfd_open": 434, "pidfd_send_signal": 424,
        "pidfd_getfd": 438, "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51,
        "unshare": 97, "setns": 268, "keyctl": 219, "add_key": 217, "request_key": 218,
        "bpf": 280, "perf_event_open": 241, "kexec_load": 104, "kexec_file_load": 294,
        "init_module": 105, "finit_module": 273, "delete_module": 106, "reboot": 142,
        "swapon": 224, "swapoff": 225, "acct": 89, "userfaultfd": 282,
        "open_by_handle_at": 265, "name_to_handle_at": 264, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
        "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
        "quotactl": 60, "kcmp": 272, "syslog": 116, "vhangup": 58, "getpid": 172,
    },
}
"""System call numbers by architecture (only the calls the jail's rules name)."""

CLONE_THREAD = 0x00010000

# seccomp return actions and classic BPF opcodes (linux/seccomp.h, linux/filter.h).
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000
_LD_ABS_W = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ, _JGT, _JGE, _JSET = 0x15, 0x25, 0x35, 0x45  # BPF_JMP | op | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_OFF_NR, _OFF_ARCH, _OFF_ARGS = 0, 4, 16


class SeccompError(RuntimeError):
    """A filter could not be built (unknown architecture or call) or installed."""


@dataclass(frozen=True)
class Rule:
    """One rule of a filter.

    ``kind``:

    * ``"deny"``: the call fails with ``errno_value``;
    * ``"threads_only"``: ``clone`` is allowed only with ``CLONE_THREAD`` in its flags
      (argument 0), i.e. threads yes, processes no;
    * ``"only_pid"``: allowed only when argument 0 (a pid) equals ``pid``;
    * ``"not_init_or_group"``: denied when argument 0, as a signed pid, is <= 1 (process
      groups, every process, the pid namespace's init).
    """

    syscall: str
    kind: str = "deny"
    errno_value: int = errno.EPERM
    pid: int = 0

    def __post_init__(self) -> None:
        if self.kind not in ("deny", "threads_only", "only_pid", "not_init_or_group"):
            raise SeccompError(f"unknown rule kind {self.kind!r}")
        if not 0 < self.errno_value < 4096:
            raise SeccompError(f"errno_value: expected 1..4095, got {self.errno_value}")


def deny(names: Iterable[str], errno_value: int = errno.EPERM) -> list[Rule]:
    """``deny`` rules for each of ``names``."""
    return [Rule(name, "deny", errno_value) for name in names]


def native_arch() -> str:
    """The running machine's architecture as a key of :data:`SYSCALLS`."""
    machine = platform.machine().lower()
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    if arch not in SYSCALLS:
        raise SeccompError(f"no seccomp syscall table for architecture {machine!r}")
    return arch


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> tuple[int, int, int, int]:
    return (code, jt, jf, k & 0xFFFFFFFF)


def _body(rule: Rule) -> list[tuple[int, int, int, int]]:
    err = _insn(_RET, RET_ERRNO | rule.errno_value)
    allow = _insn(_RET, RET_ALLOW)
    arg0 = _insn(_LD_ABS_W, _OFF_ARGS)  # low 32 bits of argument 0
    if rule.kind == "deny":
        return [err]
    if rule.kind == "threads_only":
        return [arg0, _insn(_JSET, CLONE_THREAD, 0, 1), allow, err]
    if rule.kind == "only_pid":
        return [arg0, _insn(_JEQ, rule.pid, 0, 1), allow, err]
    # not_init_or_group: A > 1 (unsigned) and A < 0x80000000 (a positive pid other than 1).
    return [arg0, _insn(_JGT, 1, 1, 0), err, _insn(_JGE, 0x80000000, 0, 1), err, allow]


def compile_filter(rules: Sequence[Rule], arch: str | None = None) -> bytes:
    """The program of ``rules`` for ``arch`` (default: this machine) as ``sock_filter`` bytes.

    A call named by no rule is allowed; the first rule naming a call decides.  Calls that the
    architecture does not have (``fork`` on aarch64) are skipped.
    """
    arch = native_arch() if arch is None else arch
    if arch not in SYSCALLS:
        raise SeccompError(f"no seccomp syscall table for architecture {arch!r}")
    table = SYSCALLS[arch]
    prog = [_insn(_LD_ABS_W, _OFF_ARCH), _insn(_JEQ, AUDIT_ARCH[arch], 1, 0),
            _insn(_RET, RET_KILL_PROCESS), _insn(_LD_ABS_W, _OFF_NR)]
    if arch == "x86_64":
        prog += [_insn(_JGE, X32_SYSCALL_BIT, 0, 1), _insn(_RET, RET_ERRNO | errno.EPERM)]
    seen: set[str] = set()
    known = set().union(*SYSCALLS.values())
    for rule in rules:
        if rule.syscall not in known:
            raise SeccompError(f"unknown system call {rule.syscall!r}")
        if rule.syscall in seen or rule.syscall not in table:
            continue
        seen.add(rule.syscall)
        body = _body(rule)
        prog.append(_insn(_JEQ, table[rule.syscall], 0, len(body)))
        prog += body
    prog.append(_insn(_RET, RET_ALLOW))
    if len(prog) > 4096:  # BPF_MAXINSNS
        raise SeccompError(f"filter has {len(prog)} instructions, more than 4096")
    return b"".join(struct.pack("<HBBI", *i) for i in prog)


def evaluate(program: bytes, nr: int, arch: str, args: Sequence[int] = ()) -> int:
    """Run a compiled ``program`` on one call (a test helper; returns the seccomp action)."""
    insns = [struct.unpack("<HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    words = {_OFF_NR: nr & 0xFFFFFFFF, _OFF_ARCH: AUDIT_ARCH[arch]}
    for i, value in enumerate(list(args) + [0] * (6 - len(args))):
        words[_OFF_ARGS + 8 * i] = value & 0xFFFFFFFF
        words[_OFF_ARGS + 8 * i + 4] = (value >> 32) & 0xFFFFFFFF
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == _LD_ABS_W:
            acc = words.get(k, 0)
        elif code == _RET:
            return k
        elif code in (_JEQ, _JGT, _JGE, _JSET):
            hit = {_JEQ: acc == k, _JGT: acc > k, _JGE: acc >= k, _JSET: bool(acc & k)}[code]
            pc += jt if hit else jf
        else:
            raise SeccompError(f"unknown opcode {code:#x} at {pc}")
        pc += 1


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(program: bytes) -> None:
    """Install ``program`` on the calling thread (and its future threads and children).

    Sets ``no_new_privs`` first (required without ``CAP_SYS_ADMIN``).  Filters stack: a
    process can only ever add restrictions.
    """
    if not program or len(program) % 8:
        raise SeccompError("program: expected a non-empty sock_filter array")
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
    if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0:
        raise SeccompError(f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
    buf = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) != 0:
        raise SeccompError(f"prctl(PR_SET_SECCOMP): {os.strerror(ctypes.get_errno())}")
