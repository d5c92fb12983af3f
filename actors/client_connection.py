"""ClientConnection: one attached ACP client, whatever its transport.

Owns, for that client:

* the transport (``actors/transport/``: stdio today, a WebSocket next) —
  the connection only sees whole frames and a back-pressure signal;
* the table of requests the client sent that still owe an answer, keyed by
  request *instance* (a ``RequestHandle``), so each is answered exactly once
  even when the client reuses an id after ``$/cancel_request``;
* the correlation table of requests the bridge sent the client (dialogs);
* the live updates of a session held back while a history replay for it is
  being written (``session/load``).

Each inbound frame is decoded and validated on its own: one bad frame gets
its error answer and never costs its neighbours.
"""

from __future__ import annotations

import itertools
import logging
from typing import Any

from zcode_acp.protocol import errors, framing, jsonrpc
from zcode_acp.protocol.errors import RpcError
from zcode_acp.protocol.i18n import EN

from zcode_acp.actors.base import BridgeActor, handles, safe_tell
from zcode_acp.actors.correlation import Correlation
from zcode_acp.actors.messages import (
    Backlog,
    ClientBacklog,
    ClientClosed,
    ClientFrame,
    ClientRequestCancelled,
    CloseConnection,
    Deliver,
    HoldSession,
    InboundClosed,
    InboundError,
    InboundFrames,
    ReleaseSession,
    Reply,
    RequestHandle,
    SendRequest,
    WithdrawRequest,
    WriteFailed,
)
from zcode_acp.actors.transport import flow, trace
from zcode_acp.actors.transport.base import Transport

log = logging.getLogger(__name__)

FLUSH_AT = 1024 * 1024  # bytes buffered before a write even if more messages wait


def id_key(request_id: Any) -> Any:
    """A table key for a JSON-RPC id (1 and "1" differ; an unhashable id has none)."""
    try:
        hash(request_id)
    except TypeError:
        return None
    return (type(request_id), request_id)


class ClientConnection(BridgeActor):
    gone_is_normal = True  # a client leaves when it likes; what is told to it afterwards is dropped

    def __init__(self, supervisor: Any, transport: Transport, every_session: bool = True, lang: str = EN) -> None:
        super().__init__()
        self.supervisor = supervisor
        self.transport = transport
        # The language the bridge's own error words are written in: the session's, which is the
        # bridge's (Config.lang); the engine's words inside an error pass as they are.
        self.lang = lang
        # The sessions whose updates this client gets: every one (the editor), or, for a remote
        # client, those it has named in a request or been given by an answer (session/new, fork).
        # A client ignores a session it never saw anyway, and one that loads it gets it from the
        # replay: a live line sent before its load would reach it twice (docs/remote.md).
        self.named: set[str] | None = None if every_session else set()
        self.open_requests: dict[RequestHandle, tuple[str | None, str]] = {}  # instance → (its session, method)
        self.by_id: dict[Any, RequestHandle] = {}  # id key → the open instance with that id
        self.outbound = Correlation()  # dialogs we sent the client
        # session id → updates held during its replay, each with the Turn that sent it (if one did)
        self.held: dict[str, list[tuple[bytes, int | None]]] = {}
        self._serials = itertools.count(1)
        self.out: list[bytes] = []  # written at the end of the current burst of messages
        self.out_size = 0
        self.closed = False
        self.reading: Any = None  # the flow token of the read being handled (actors/transport/flow.py)

    # -- lifecycle ------------------------------------------------------------------

    def on_start(self) -> None:
        self.transport.start(self.actor_ref)

    def on_stop(self) -> None:
        self._answer_open()
        self._flush()
        self.transport.drain(1.0)
        self._close()

    def _answer_open(self) -> None:
        """Every request read from this client is answered, even when the bridge stops first.

        (At teardown the backend's failures of pending calls reach the Supervisor
        after it has stopped this connection: their answers would be lost.)
        """
        for handle in list(self.open_requests):
            self._answer(handle, None, errors.worded(errors.INTERNAL_ERROR, "error.connection_closing").to_dict())

    def _close(self) -> None:
        self.closed = True
        self.outbound.fail_all({"code": errors.INTERNAL_ERROR, "message": "client connection closed"})
        self.transport.close()

    # -- inbound --------------------------------------------------------------------

    @handles(InboundFrames)
    def on_frames(self, message: InboundFrames) -> None:
        self.reading = message.token
        try:
            self._frames(message)
        finally:
            self.reading = None
            flow.done(message.token)

    def _frames(self, message: InboundFrames) -> None:
        if trace.TRACER.enabled:
            trace.TRACER.record(trace.CLIENT_IN, self.transport.name, b"".join(f + b"\n" for f in message.frames))
        for line in message.frames:
            try:
                frame = framing.decode_object(line)
            except RpcError as exc:  # the id, wherever the line let it be read (issue 29)
                self._write_frame(jsonrpc.acp_error(getattr(exc, "request_id", None), exc, self.lang))
                continue
            try:
                self._inbound(frame)
            except Exception:
                log.exception("handling an inbound frame failed")
                request_id = jsonrpc.request_id_or_none(frame)
                if request_id is not None and not jsonrpc.is_response(frame):
                    failure = errors.worded(errors.INTERNAL_ERROR, "error.internal")
                    self._write_frame(jsonrpc.acp_error(request_id, failure, self.lang))

    def _inbound(self, frame: dict[str, Any]) -> None:
        try:
            kind = jsonrpc.classify_acp(frame)
        except RpcError as exc:
            if jsonrpc.is_response(frame):
                log.debug("dropping a malformed response from %s (%s): %.300s",
                          self.transport.name, exc.message, framing.dumps(frame))
                return
            request_id = jsonrpc.request_id_or_none(frame)
            if "method" in frame or request_id is not None:
                self._write_frame(jsonrpc.acp_error(request_id, exc, self.lang))
            return
        if kind is jsonrpc.Kind.RESPONSE:
            self._client_response(frame)
            return
        if frame["method"] == "$/cancel_request":
            self._cancel_request(frame.get("params"))
            return
        handle = None
        if kind is jsonrpc.Kind.REQUEST:
            key = id_key(frame["id"])
            if key is None or key in self.by_id:
                problem = "error.request.id_in_use" if key is not None else "error.request.id_unusable"
                self._write_frame(jsonrpc.acp_error(frame["id"] if key is not None else None, errors.worded(
                    errors.INVALID_REQUEST, problem, id=repr(frame["id"])), self.lang))
                return
            handle = RequestHandle(frame["id"], next(self._serials))
            params = frame.get("params")
            session_id = params.get("sessionId") if isinstance(params, dict) else None
            self.open_requests[handle] = (session_id if isinstance(session_id, str) else None, frame["method"])
            self.by_id[key] = handle
            if self.named is not None and isinstance(session_id, str) and frame["method"] != "session/load":
                self.named.add(session_id)  # a load names it once its replay is out (on_release)
            if frame["method"] == "session/load" and isinstance(session_id, str):
                # Hold from the moment the client asks, not from when the Session hears of it:
                # what streams in between is part of the replay, not written before it.
                self.held.setdefault(session_id, [])
        self.supervisor.tell(ClientFrame(self.actor_ref, frame, handle, flow.share(self.reading)))

    @handles(InboundError)
    def on_inbound_error(self, message: InboundError) -> None:
        self._write_frame(jsonrpc.acp_error(None, message.error, self.lang))

    @handles(InboundClosed)
    def on_inbound_closed(self, message: InboundClosed) -> None:
        log.info("client %s closed its input (%s)", self.transport.name, message.reason)
        trace.TRACER.record(trace.CLIENT_IN, self.transport.name, b"")  # b"": this side closed
        self.supervisor.tell(ClientClosed(self.actor_ref))

    def _cancel_request(self, params: Any) -> None:
        key = id_key(params.get("requestId")) if isinstance(params, dict) else None
        handle = self.by_id.get(key) if key is not None else None
        if handle is None:
            return  # already answered, or never ours: nothing to do
        session_id, method = self.open_requests[handle]
        if method != "session/prompt" or session_id is None:
            self._answer(handle, None, errors.cancelled().to_dict())
        else:
            self.by_id.pop(key, None)  # the id is free for a new request; this one still gets its -32800
        # A prompt is answered -32800 by its turn, after the turn's last update (never before it).
        self.supervisor.tell(ClientRequestCancelled(self.actor_ref, handle, session_id))

    # -- answers and updates -----------------------------------------------------------

    @handles(Reply)
    def on_reply(self, message: Reply) -> None:
        if message.request_id not in self.open_requests:
            log.debug("dropping a second answer to request %r", message.request_id)
            return
        self._answer(message.request_id, message.result, message.error)

    def _answer(self, handle: RequestHandle, result: Any, error: dict[str, Any] | None) -> None:
        session_id, method = self.open_requests.pop(handle)
        if method == "session/load" and session_id is not None and session_id in self.held:
            # Answered without a replay (refused before it reached the Session): what was held goes out.
            self._write(b"".join(payload for payload, _ in self.held.pop(session_id)))
        key = id_key(handle.id)
        if self.by_id.get(key) is handle:
            del self.by_id[key]
        if error is not None:
            self._write_frame(jsonrpc.acp_error(handle.id, error, self.lang))
        else:
            if self.named is not None and isinstance(result, dict) and isinstance(result.get("sessionId"), str):
                self.named.add(result["sessionId"])  # a session it made (new, fork)
            self._write_frame(jsonrpc.acp_result(handle.id, result))

    @handles(Deliver)
    def on_deliver(self, message: Deliver) -> None:
        if self.named is not None and message.session_id not in self.named and message.session_id not in self.held:
            return
        held = self.held.get(message.session_id)
        if held is not None:
            held.append((message.payload, message.turn))
        else:
            self._write(message.payload)

    @handles(HoldSession)
    def on_hold(self, message: HoldSession) -> None:
        """A replay of this session is being prepared: hold its live updates."""
        self.held.setdefault(message.session_id, [])

    @handles(ReleaseSession)
    def on_release(self, message: ReleaseSession) -> None:
        """Write the replay, then the live updates held meanwhile, in order.

        A replay that covers a Turn already holds every line that Turn sent: those held
        are dropped, so each reaches the client once."""
        held = self.held.pop(message.session_id, [])
        if self.named is not None:
            self.named.add(message.session_id)  # from its replay on, live
        kept = [payload for payload, turn in held if turn is None or turn != message.covers_turn]
        self._write(message.replay + b"".join(kept))

    @handles(CloseConnection)
    def on_close_connection(self, message: CloseConnection) -> None:
        self._answer_open()
        self._flush()
        self.transport.drain(1.0)
        self._close()

    # -- requests the bridge sends the client ------------------------------------------------

    @handles(SendRequest)
    def on_send_request(self, message: SendRequest) -> None:
        request_id = self.outbound.next_id()
        self.outbound.open(request_id, message.method, message.reply_to, message.reply, key=message.key)
        if not self._write_frame(jsonrpc.acp_request(request_id, message.method, message.params)):
            self.outbound.fail(request_id, {"code": errors.INTERNAL_ERROR, "message": "client connection closed"})

    @handles(WithdrawRequest)
    def on_withdraw(self, message: WithdrawRequest) -> None:
        """Close a dialog we opened: ``$/cancel_request``; its late answer is then ignored."""
        for request_id in self.outbound.withdraw(message.key):
            self._write_frame(jsonrpc.acp_notification("$/cancel_request", {"requestId": request_id}))

    def _client_response(self, frame: dict[str, Any]) -> None:
        answer = self.outbound.answer(frame.get("id"), frame.get("result"), frame.get("error"))
        if answer is None:  # a late answer to something withdrawn, or to nothing we sent
            log.debug("dropping a response to no open request (id %r) from %s", frame.get("id"), self.transport.name)
            return
        safe_tell(*answer)

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
        trace.TRACER.record(trace.CLIENT_OUT, self.transport.name, data)
        self.transport.send(data)

    @handles(Backlog)
    def on_backlog(self, message: Backlog) -> None:
        self.supervisor.tell(ClientBacklog(self.actor_ref, message.backlogged))

    @handles(WriteFailed)
    def on_write_failed(self, message: WriteFailed) -> None:
        if self.closed:
            return
        self._close()
        log.info("client %s stopped reading; closing", self.transport.name)
        self.supervisor.tell(ClientClosed(self.actor_ref))
