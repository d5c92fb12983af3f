"""Giving memory back: the C allocator's threshold for big buffers, fixed.

The bridge handles big buffers in bursts: a client's coalesced writes (up to
1 MiB), a client's frames of megabytes, a history's answer. glibc serves such blocks with ``mmap`` and returns
them to the system on ``free`` — until the first one is freed: then it raises
its threshold to that block's size (its "dynamic mmap threshold"), and every
later megabyte comes from the heap, which it keeps. Setting the threshold once
turns that adjustment off, so the memory of a burst goes back when the burst
is over (docs/reliability.md, "The long random run": RSS +46 % → +22 % of its
start). Best effort: other C libraries have no ``mallopt`` and keep their ways.
"""

from __future__ import annotations

import ctypes
import functools
import logging
from typing import Any

log = logging.getLogger(__name__)

M_MMAP_THRESHOLD = -3  # glibc's malloc.h
MMAP_THRESHOLD = 128 * 1024  # glibc's own default, but fixed


@functools.cache
def _libc() -> Any:
    """The C library, loaded once. The process's own symbols include it: no ``find_library``,
    which runs ``ldconfig`` in a subprocess (~7 ms)."""
    return ctypes.CDLL(None)


def trim() -> None:
    """glibc's ``malloc_trim(0)``: the heap's free pages go back to the system (best effort)."""
    try:
        _libc().malloc_trim(0)
    except (OSError, AttributeError):
        pass


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """True if the C library took the setting."""
    try:
        mallopt = _libc().mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    taken = bool(mallopt(M_MMAP_THRESHOLD, threshold))
    log.debug("mmap threshold fixed at %d bytes: %s", threshold, taken)
    return taken
