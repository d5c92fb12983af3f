"""Giving memory back: the C allocator's threshold for big buffers, fixed.

The bridge reads pipes up to 1 MiB at a time (``fdio.CHUNK``) and a client may
send frames of a megabyte. glibc serves such blocks with ``mmap`` and returns
them to the system on ``free`` — until the first one is freed: then it raises
its threshold to that block's size (its "dynamic mmap threshold"), and every
later megabyte comes from the heap, which it keeps. Setting the threshold once
turns that adjustment off, so the memory of a burst goes back when the burst
is over (docs/reliability.md, "The long random run": RSS +46 % → +22 % of its
start). Best effort: other C libraries have no ``mallopt`` and keep their ways.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

log = logging.getLogger(__name__)

M_MMAP_THRESHOLD = -3  # glibc's malloc.h
MMAP_THRESHOLD = 128 * 1024  # glibc's own default, but fixed


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """True if the C library took the setting."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    taken = bool(mallopt(M_MMAP_THRESHOLD, threshold))
    log.debug("mmap threshold fixed at %d bytes: %s", threshold, taken)
    return taken
