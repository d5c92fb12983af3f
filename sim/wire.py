"""The simulator's stdout: one JSON frame per line, one writer at a time."""

from __future__ import annotations

from typing import Any

import gevent.lock
import ujson
from gevent import os as gos

from . import frames_log


def dumps(obj: Any) -> bytes:
    return ujson.dumps(obj, ensure_ascii=False, escape_forward_slashes=False).encode() + b"\n"


class Wire:
    """stdout of the simulator: buffered so a fast stream costs few syscalls."""

    def __init__(self, fd: int = 1) -> None:
        self.fd = fd
        self.buffer: list[bytes] = []
        self.size = 0
        self.lock = gevent.lock.Semaphore()

    def send(self, frame: dict[str, Any], flush: bool = True) -> None:
        data = dumps(frame)
        if frames_log.PATH:  # the engine-schema check (sim/frames_log.py)
            frames_log.record(frames_log.ENGINE_TO_HOST, frame)
        self.buffer.append(data)
        self.size += len(data)
        if flush or self.size > 65536:
            self.flush()

    def flush(self) -> None:
        # Many greenlets (turns, tasks, replies) share stdout: one writer at a time,
        # or a write parked on a full pipe would be cut into by another's bytes.
        with self.lock:
            if not self.buffer:
                return
            data = b"".join(self.buffer)
            self.buffer, self.size = [], 0
            view = memoryview(data)
            while view:
                view = view[gos.nb_write(self.fd, view):]
