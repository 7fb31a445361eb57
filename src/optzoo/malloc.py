"""Keep freed heap memory in the process instead of handing it back to the OS after every op.

glibc's ``malloc`` serves blocks above ``M_MMAP_THRESHOLD`` (128 KiB at start, raised
dynamically up to 32 MiB) with a fresh ``mmap`` and trims the top of the heap above
``M_TRIM_THRESHOLD``; PyTorch's CPU allocator goes through ``malloc``.  A training step of a small
model on a big batch allocates and frees the same few MiB-sized activations hundreds of times,
and each fresh mapping is paid again in page faults when the first op writes it: DR-SAC's
update (VAE samples of 256 × 50 × 64 floats = 3.2 MiB per layer) took ≈ 3 000 minor faults and
≈ 35 % of its CPU time there.  :func:`retain_freed_memory` raises both thresholds (and pads
heap growth), so freed blocks are reused in place; the numbers computed are unchanged, only
where the bytes live.  The cost is a process that keeps its peak heap (here tens of MiB).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

# mallopt parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3

_DONE = False


def retain_freed_memory(mmap_threshold: int = 32 << 20, trim_threshold: int = 1 << 30,
                        top_pad: int = 64 << 20) -> bool:
    """Raise glibc's mmap and trim thresholds for this process (module docstring).

    Call it once at the start of a worker process that trains small models (a trial); it is a
    no-op returning False where the C library is not glibc (macOS, musl, Windows), and after
    the first successful call.

    Args:
        mmap_threshold: blocks below this come from the heap (glibc caps it at 32 MiB on
            64-bit systems).
        trim_threshold: free memory at the top of the heap kept before trimming.
        top_pad: extra bytes requested whenever the heap grows.

    Returns:
        True when the thresholds were set now.
    """
    global _DONE
    if _DONE or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    ok = all(mallopt(p, int(v)) == 1 for p, v in ((_M_MMAP_THRESHOLD, mmap_threshold),
                                                    (_M_TRIM_THRESHOLD, trim_threshold),
                                                    (_M_TOP_PAD, top_pad)))
    _DONE = ok
    return ok
