"""The process's allocator: keep freed array blocks for reuse (glibc only).

A whole-frame evaluation makes and drops arrays of the same few sizes again and again (a Game of
Life step: eight 8 MB rolls, their sums, the next grid).  glibc serves a block of 128 KB or more
with its own ``mmap`` and raises that threshold only after such a block is freed; and it gives
the top of its heap back to the system once more than twice the threshold lies free there.  A
plan that releases several large temporaries at once (its ``del`` of values after their last
read) crosses that line every step, so every new array is fresh memory and every page of it is
a fault: Life at 1000² ran at 0.64 s against NumPy's 0.20 s in the same process, all of the
difference in page faults (0.23 s with the thresholds below).  So, once, when the NumPy backend
is imported, blocks up to 32 MB (glibc's largest mmap threshold) come from the heap and up to
128 MB of free heap top is kept.  A user who set ``MALLOC_MMAP_THRESHOLD_`` or
``MALLOC_TRIM_THRESHOLD_`` keeps their own choice; elsewhere than glibc nothing changes.
Recorded in spec/decisions.md (D75).
"""

from __future__ import annotations

import ctypes
import os
import platform

#: mallopt's parameters (glibc's malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 128 << 20

_done = False


def keep_freed_blocks() -> bool:
    """Set the thresholds (once per process); whether they were set."""
    global _done
    if _done:
        return False
    _done = True
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # (a libc without mallopt)
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
