"""Keep freed memory in the process instead of handing it back to the OS after each run.

Every forward and backward pass allocates its values, gradients and recorded steps
afresh, and the previous run's are freed all at once. glibc then returns the top of
its heap to the OS (above 128 KB free), so the next run takes a page fault, and the
kernel zeroes a page, for every 4 KB it touches again: on the engine benchmark's
100-node graph of 64x64 matrices that was a third of the run. Raising glibc's trim
threshold keeps up to :data:`RETAIN_BYTES` of freed heap for reuse. The app and the
command line call :func:`retain_freed_memory` once at start; it changes nothing else.
"""

from __future__ import annotations

import ctypes
import sys

#: glibc's ``mallopt`` parameter for the trim threshold (malloc.h).
_M_TRIM_THRESHOLD = -1
#: Freed heap kept for reuse before glibc returns it to the OS.
RETAIN_BYTES = 64 * 2**20


def retain_freed_memory(limit: int = RETAIN_BYTES) -> bool:
    """Ask glibc to keep up to ``limit`` bytes of freed heap; True if it agreed.

    Elsewhere (another C library, another OS) this does nothing and returns False.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt(_M_TRIM_THRESHOLD, limit) == 1
