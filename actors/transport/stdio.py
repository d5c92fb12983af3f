"""The stdio transport: newline-delimited JSON over a pair of file descriptors.

The editor's connection. Reading splits lines (a line over the size limit is
reported, not buffered); writing goes through a ``Writer`` whose backlog
pauses reading the backend, so a slow editor bounds memory and loses nothing.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import gevent

from zcode_acp.protocol import errors, framing

from zcode_acp.actors.base import safe_tell
from zcode_acp.actors.messages import InboundClosed, InboundError, InboundFrames
from zcode_acp.actors.transport import fdio
from zcode_acp.actors.transport.flow import Flow
from zcode_acp.actors.transport.writer import Writer

log = logging.getLogger(__name__)


def answer_head(answer: bytes) -> bytes:
    """An answer frame's head: everything up to its result (``{"jsonrpc":"2.0","id":7,"result":``)."""
    at = answer.find(b'"result":')
    return answer[:at + len(b'"result":')] if at >= 0 else answer


class StdioTransport:
    def __init__(self, read_fd: int, write_fd: int, name: str = "stdio",
                 max_line: int = framing.DEFAULT_MAX_LINE, preread: bytes = b"",
                 answered: tuple[bytes, ...] = ()) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.name = name
        self.max_line = max_line
        self.writer: Writer | None = None
        self._reader: gevent.Greenlet | None = None
        self._restore: list[tuple[int, bool]] = []
        # Reading stays a few reads ahead of the tree: a client that writes faster than
        # the bridge handles leaves the rest in the pipe, not in mailboxes (docs/reliability.md).
        self.flow = Flow()
        # Start-up (cli/early_answer.py): bytes read from read_fd before the runtime was up, read
        # here first, and the answers already written for them (initialize, session/new), each not
        # to be written again: known by its head, up to its result (one id, one answer).
        self.preread = preread
        self.answered = [answer_head(answer) for answer in answered]

    def start(self, owner: Any) -> None:
        fdio.widen_pipe(self.write_fd)  # a reader that lags a little parks the writer less
        for fd in {self.read_fd, self.write_fd}:
            self._restore.append((fd, fdio.make_nonblocking(fd)))
        self.writer = Writer(fdio.FdSink(self.write_fd), owner)
        self._reader = gevent.spawn(self._read_loop, owner)

    def _read_loop(self, owner: Any) -> None:
        """Split lines and hand them over, one message per read."""
        splitter = framing.LineSplitter(self.max_line)
        while True:
            token = self.flow.take()
            chunk, self.preread = self.preread or fdio.read_chunk(self.read_fd), b""
            if not chunk:
                token.done()
                break
            lines = splitter.feed(chunk)
            if not lines:
                token.done()
            elif not safe_tell(owner, InboundFrames(lines, token)):
                return
            if splitter.oversized:
                splitter.oversized = 0
                if not safe_tell(owner, InboundError(errors.worded(errors.INVALID_REQUEST, "error.frame.too_long"))):
                    return
        safe_tell(owner, InboundClosed("end of input"))

    def send(self, data: bytes) -> None:
        if self.answered:
            data = self._without_answered(data)
            if not data:
                return
        if self.writer is not None:
            self.writer.put(data)

    def _without_answered(self, data: bytes) -> bytes:
        """``data`` less the answers written before the runtime was up, where the runtime writes them.

        ``data`` holds whole frames, one a line; an answer is known by its head (its id, up to
        ``"result":``), so each is dropped once, the first time the runtime writes it.
        """
        lines = data.split(b"\n")
        kept = []
        for line in lines:
            head = next((head for head in self.answered if line.startswith(head)), None)
            if head is None:
                kept.append(line)
            else:
                self.answered.remove(head)
        return data if len(kept) == len(lines) else b"\n".join(kept)

    def drain(self, timeout: float) -> None:
        if self.writer is not None:
            self.writer.drain(timeout)

    def close(self, reason: str = "") -> None:
        if self._reader is not None and self._reader is not gevent.getcurrent():
            self._reader.kill(block=False)
        self._reader = None
        if self.writer is not None:
            self.writer.stop()
        for fd, was_blocking in self._restore:
            try:
                os.set_blocking(fd, was_blocking)
            except OSError:
                pass
        self._restore = []
