"""Cooperative reads and writes on raw file descriptors under gevent.

Pipes are switched to non-blocking mode so a full or empty pipe parks only the
greenlet that touched it, never the whole process (every actor lives on the
one OS thread).
"""

from __future__ import annotations

import array
import fcntl
import os
import termios

from gevent import os as gos

# Bytes per read. Small on purpose: everything a read returns is parsed and held until
# its batch has crossed the tree, so the read size sets the hot path's working set. At
# 64 KiB (~400 text deltas) a batch's objects stay in the CPU's cache; at 1 MiB they
# did not, and every delta cost twice the CPU (docs/performance.md, "Batch size").
CHUNK = 64 * 1024


def make_nonblocking(fd: int) -> bool:
    """Set O_NONBLOCK; returns the previous blocking state so it can be restored."""
    was_blocking = os.get_blocking(fd)
    gos.make_nonblocking(fd)
    return was_blocking


_F_SETPIPE_SZ = 1031  # Linux


def widen_pipe(fd: int, size: int = 1024 * 1024) -> None:
    """Let a pipe hold more (Linux; best effort).

    A fast writer then runs ahead while the reader works through its batch,
    instead of parking (and switching) every 64 KiB; each read still takes at
    most CHUNK bytes.
    """
    try:
        fcntl.fcntl(fd, _F_SETPIPE_SZ, size)
    except OSError:
        pass


def unread(fd: int) -> int:
    """Bytes waiting in a pipe that nobody has read yet (0 if unknown)."""
    count = array.array("i", [0])
    try:
        fcntl.ioctl(fd, termios.FIONREAD, count, True)
    except OSError:
        return 0
    return count[0]


def read_chunk(fd: int) -> bytes:
    """Up to CHUNK bytes; b"" at EOF (or when the fd is gone)."""
    try:
        data: bytes = gos.nb_read(fd, CHUNK)
        return data
    except OSError:
        return b""


FIRST_CHUNK = 16 * 1024


def read_burst(fd: int) -> tuple[bytes, bool]:
    """Up to CHUNK bytes, or only FIRST_CHUNK when the pipe was empty; and whether it was.

    After an idle pipe the first read is small, so the first events of a burst travel
    the tree on their own instead of after a full read of their followers
    (docs/performance.md, "First update"). b"" at EOF (or when the fd is gone).
    """
    try:
        return os.read(fd, CHUNK), False
    except BlockingIOError:
        pass
    except OSError:
        return b"", False
    try:
        data: bytes = gos.nb_read(fd, FIRST_CHUNK)  # parks this greenlet until readable
        return data, True
    except OSError:
        return b"", True


def write_all(fd: int, data: bytes) -> bool:
    """Write everything; False if the reader has gone (EPIPE / closed fd)."""
    view = memoryview(data)
    try:
        while view:
            written = gos.nb_write(fd, view)
            view = view[written:]
    except OSError:
        return False
    return True


def write_some(fd: int, data: bytes) -> int:
    """One non-blocking write: bytes written (0 if the pipe is full), -1 if the reader is gone."""
    try:
        return os.write(fd, data)
    except BlockingIOError:
        return 0
    except OSError:
        return -1


class FdSink:
    """The write side of a pipe, as a ``Writer`` uses it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def write(self, data: bytes) -> bool:
        return write_all(self.fd, data)

    def try_write(self, data: bytes) -> int:
        return write_some(self.fd, data)
