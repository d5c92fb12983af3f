"""ClientConnection: one attached ACP client and its transport.

Owns the transport (a pair of file descriptors for stdio), the reader greenlet
that decodes inbound lines, the single writer, and the table of requests the
client sent that still owe an answer. Because every answer goes through that
table, a request is answered exactly once whoever tries to answer it twice
(a prompt that settles after ``$/cancel_request`` already answered it, say).

It also owns the table of requests the bridge sent *to* the client
(permission dialogs, forms) and holds back a session's live updates while a
history replay for that session is being written (``session/load``).
"""

from __future__ import annotations

import itertools
import logging
import os
from typing import Any

import gevent

from zcode_acp.protocol import errors, framing, jsonrpc
from zcode_acp.protocol.errors import RpcError

from zcode_acp.actors.transport import fdio
from zcode_acp.actors.transport import trace  # [trace] docs/traces.md
from zcode_acp.actors.base import BridgeActor, safe_tell
from zcode_acp.actors.transport.writer import Writer
from zcode_acp.actors.messages import (
    BackendReply,
    ClientBacklog,
    ClientClosed,
    ClientFrame,
    ClientRequestCancelled,
    InboundClosed,
    InboundError,
    InboundFrames,
)

log = logging.getLogger(__name__)

FLUSH_AT = 1024 * 1024  # bytes buffered before a write even if more messages wait


class FdTransport:
    """stdio-like transport over two file descriptors."""

    def __init__(self, read_fd: int, write_fd: int, name: str = "stdio") -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.name = name
        self._restore: list[tuple[int, bool]] = []

    def open(self) -> None:
        fdio.widen_pipe(self.write_fd)  # a reader that lags a little parks the writer less
        for fd in {self.read_fd, self.write_fd}:
            self._restore.append((fd, fdio.make_nonblocking(fd)))

    def read(self) -> bytes:
        return fdio.read_chunk(self.read_fd)

    def write(self, data: bytes) -> bool:
        return fdio.write_all(self.write_fd, data)

    def try_write(self, data: bytes) -> int:
        return fdio.write_some(self.write_fd, data)

    def close(self) -> None:
        for fd, was_blocking in self._restore:
            try:
                os.set_blocking(fd, was_blocking)
            except OSError:
                pass
        self._restore = []


class ClientConnection(BridgeActor):
    def __init__(self, supervisor: Any, transport: FdTransport, max_line: int = framing.DEFAULT_MAX_LINE) -> None:
        super().__init__()
        self.supervisor = supervisor
        self.transport = transport
        self.max_line = max_line
        self.open_requests: dict[Any, str | None] = {}  # inbound id → session id it concerns
        self.outbound: dict[int, tuple[Any, Any]] = {}  # our request id → (reply_to, tag)
        self.held: dict[str, list[bytes]] = {}  # session id → updates held during its replay
        self._ids = itertools.count(1)
        self.out: list[bytes] = []  # written at the end of the current burst of messages
        self.out_size = 0
        self.closed = False
        self.writer: Writer | None = None
        self._reader: gevent.Greenlet | None = None

    # -- lifecycle ------------------------------------------------------------------

    def on_start(self) -> None:
        self.transport.open()
        self.writer = Writer(self.transport, self.actor_ref)
        self._reader = gevent.spawn(self._read_loop)

    def on_stop(self) -> None:
        self._flush()
        self.writer.drain(1.0)
        self._close()

    def _close(self) -> None:
        if self._reader is not None and self._reader is not gevent.getcurrent():
            self._reader.kill(block=False)
        self._reader = None
        self.writer.stop()
        self.transport.close()

    def _read_loop(self) -> None:
        """Decode inbound lines and hand them to the actor, one batch per read."""
        splitter = framing.LineSplitter(self.max_line)
        me = self.actor_ref
        while True:
            chunk = self.transport.read()
            trace.TRACER.record(trace.CLIENT_IN, self.transport.name, chunk)  # [trace] b"" = closed
            if not chunk:
                break
            items: list[Any] = []
            frames: list[dict[str, Any]] = []
            for line in splitter.feed(chunk):
                try:
                    frames.append(framing.decode_object(line))
                except RpcError as exc:
                    if frames:
                        items.append(InboundFrames(frames))
                        frames = []
                    items.append(InboundError(None, exc))
            if splitter.oversized:
                splitter.oversized = 0
                items.append(InboundError(None, RpcError(errors.INVALID_REQUEST, "Invalid Request: line too long")))
            if frames:
                items.append(InboundFrames(frames))
            for item in items:
                if not safe_tell(me, item):
                    return
        safe_tell(me, InboundClosed())

    # -- inbound --------------------------------------------------------------------

    def handle_InboundFrames(self, message: Any) -> None:
        for frame in message.frames:
            self._inbound(frame)

    def _inbound(self, frame: dict[str, Any]) -> None:
        try:
            kind = jsonrpc.classify_acp(frame)
        except RpcError as exc:
            request_id = jsonrpc.request_id_or_none(frame)
            if "method" in frame or request_id is not None:
                self._write_frame(jsonrpc.acp_error(request_id, exc))
            return
        if kind is jsonrpc.Kind.RESPONSE:
            self._client_response(frame)
            return
        if frame["method"] == "$/cancel_request":
            self._cancel_request(frame.get("params"))
            return
        if kind is jsonrpc.Kind.REQUEST:
            request_id = frame["id"]
            if request_id in self.open_requests:
                self._write_frame(jsonrpc.acp_error(request_id, RpcError(
                    errors.INVALID_REQUEST, f"Invalid Request: id {request_id!r} is already in use")))
                return
            params = frame.get("params")
            session_id = params.get("sessionId") if isinstance(params, dict) else None
            self.open_requests[request_id] = session_id if isinstance(session_id, str) else None
        self.supervisor.tell(ClientFrame(self.actor_ref, frame))

    def handle_InboundError(self, message: Any) -> None:
        self._write_frame(jsonrpc.acp_error(message.request_id, message.error))

    def handle_InboundClosed(self, message: Any) -> None:
        log.info("client %s closed its input", self.transport.name)
        self.supervisor.tell(ClientClosed(self.actor_ref))

    def _cancel_request(self, params: Any) -> None:
        request_id = params.get("requestId") if isinstance(params, dict) else None
        if request_id is None or request_id not in self.open_requests:
            return  # already answered, or never ours: nothing to do
        session_id = self.open_requests.pop(request_id)
        self._write_frame(jsonrpc.acp_error(request_id, errors.cancelled()))
        self.supervisor.tell(ClientRequestCancelled(self.actor_ref, request_id, session_id))

    # -- answers and updates -----------------------------------------------------------

    def handle_Reply(self, message: Any) -> None:
        if message.request_id not in self.open_requests:
            log.debug("dropping a second answer to request %r", message.request_id)
            return
        del self.open_requests[message.request_id]
        if message.error is not None:
            self._write_frame(jsonrpc.acp_error(message.request_id, message.error))
        else:
            self._write_frame(jsonrpc.acp_result(message.request_id, message.result))

    def handle_Deliver(self, message: Any) -> None:
        held = self.held.get(message.session_id)
        if held is not None:
            held.append(message.payload)
        else:
            self._write(message.payload)

    def handle_HoldSession(self, message: Any) -> None:
        """A replay of this session is being prepared: hold its live updates."""
        self.held.setdefault(message.session_id, [])

    def handle_ReleaseSession(self, message: Any) -> None:
        """Write the replay, then the live updates held meanwhile, in order."""
        held = self.held.pop(message.session_id, [])
        self._write(message.replay + b"".join(held))

    def handle_CloseConnection(self, message: Any) -> None:
        self._flush()
        self.writer.drain(1.0)
        self.closed = True
        self._close()

    # -- requests the bridge sends the client ------------------------------------------------

    def handle_SendRequest(self, message: Any) -> None:
        request_id = next(self._ids)
        self.outbound[request_id] = (message.reply_to, message.tag)
        if not self._write_frame(jsonrpc.acp_request(request_id, message.method, message.params)):
            self._fail_outbound(request_id, "client connection closed")

    def handle_WithdrawRequest(self, message: Any) -> None:
        """Close a dialog we opened: ``$/cancel_request``; its late answer is then ignored."""
        for request_id, (_, tag) in list(self.outbound.items()):
            if tag == message.tag:
                del self.outbound[request_id]
                self._write_frame(jsonrpc.acp_notification("$/cancel_request", {"requestId": request_id}))

    def _client_response(self, frame: dict[str, Any]) -> None:
        entry = self.outbound.pop(frame.get("id"), None)
        if entry is None:
            return  # a late answer to something withdrawn: ignore
        reply_to, tag = entry
        if reply_to is not None:
            safe_tell(reply_to, BackendReply(tag, frame.get("result"), frame.get("error")))

    def _fail_outbound(self, request_id: int, reason: str) -> None:
        entry = self.outbound.pop(request_id, None)
        if entry and entry[0] is not None:
            safe_tell(entry[0], BackendReply(entry[1], None, {"code": errors.INTERNAL_ERROR, "message": reason}))

    # -- writing ------------------------------------------------------------------------------

    def _write_frame(self, frame: dict[str, Any]) -> bool:
        return self._write(framing.encode(frame))

    def on_receive(self, message: Any) -> Any:
        result = super().on_receive(message)
        # Coalesce: while more messages wait in the inbox, keep buffering; one
        # write() then carries many sessions' updates (200 streaming sessions
        # would otherwise cost 200 syscalls per backend read).
        if self.out_size > FLUSH_AT or self.actor_inbox.empty():
            self._flush()
        return result

    def _write(self, data: bytes) -> bool:
        if self.closed:
            return False
        if data:
            self.out.append(data)
            self.out_size += len(data)
        return True

    def _flush(self) -> None:
        if not self.out or self.closed:
            return
        data = b"".join(self.out)
        self.out, self.out_size = [], 0
        trace.TRACER.record(trace.CLIENT_OUT, self.transport.name, data)  # [trace]
        self.writer.put(data)

    def handle_Backlog(self, message: Any) -> None:
        self.supervisor.tell(ClientBacklog(self.actor_ref, message.backlogged))

    def handle_WriteFailed(self, message: Any) -> None:
        if self.closed:
            return
        self.closed = True
        for request_id in list(self.outbound):
            self._fail_outbound(request_id, "client connection closed")
        log.info("client %s stopped reading; closing", self.transport.name)
        self.supervisor.tell(ClientClosed(self.actor_ref))
