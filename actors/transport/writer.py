"""The write side of a client connection: a greenlet that writes in order.

The ClientConnection actor never blocks on a full pipe: it hands bytes to
this writer and goes on. When more than ``high`` bytes are waiting (the client
stopped reading), the writer reports a backlog, and the Supervisor pauses
reading the backend; below ``low`` it reports the backlog cleared. Memory stays
bounded and nothing promised is dropped: the stream resumes where it stopped.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import gevent
import gevent.event

from zcode_acp.actors.base import safe_tell
from zcode_acp.actors.messages import Backlog, WriteFailed

HIGH_WATER = 4 * 1024 * 1024
LOW_WATER = 1 * 1024 * 1024


class Writer:
    def __init__(self, transport: Any, owner: Any, high: int = HIGH_WATER, low: int = LOW_WATER,
                 source: Any = None) -> None:
        self.transport = transport
        self.owner = owner
        self.source = source
        self.high = high
        self.low = low
        self.queue: deque[bytes] = deque()
        self.pending = 0
        self.backlogged = False
        self.wake = gevent.event.Event()
        self.idle = gevent.event.Event()
        self.idle.set()
        self.greenlet = gevent.spawn(self._run)

    def put(self, data: bytes) -> None:
        if not self.queue and self.idle.is_set():
            # Nothing waiting or half-written: try the pipe directly (no greenlet switch when it has room).
            written = self.transport.try_write(data)
            if written < 0:
                safe_tell(self.owner, WriteFailed(source=self.source))
                return
            data = data[written:]
            if not data:
                return
        self.queue.append(data)
        self.pending += len(data)
        self.idle.clear()
        self.wake.set()
        if not self.backlogged and self.pending > self.high:
            self.backlogged = True
            safe_tell(self.owner, Backlog(True, self.source))

    def _run(self) -> None:
        while True:
            self.wake.wait()
            self.wake.clear()
            while self.queue:
                data = self.queue.popleft()  # idle stays clear until this is fully written
                ok = self.transport.write(data)
                self.pending -= len(data)
                if not ok:
                    self.queue.clear()
                    self.pending = 0
                    self.idle.set()
                    safe_tell(self.owner, WriteFailed(source=self.source))
                    return
                if self.backlogged and self.pending <= self.low:
                    self.backlogged = False
                    safe_tell(self.owner, Backlog(False, self.source))
            self.idle.set()

    def drain(self, timeout: float) -> None:
        """Wait (bounded) until everything queued is written: the last words at teardown."""
        self.idle.wait(timeout)

    def stop(self) -> None:
        self.greenlet.kill(block=False)
