"""Backend: the ZCode app-server child process and everything on its pipes.

Owns the process (started on first need, restarted on the next need after it
died), the request-id counter and the table of pending requests with their
timeouts, the routing table backend session id → Session actor, and the
automatic answers the backend must get (``session/requestRuntimePreferences``;
``-32601`` for requests nobody handles).

Ordering guarantee the rest of the tree relies on: everything that concerns
one Session — its events *and* the replies to requests it made — reaches that
Session in the order it came off the pipe, because one read's frames are
grouped per destination in pipe order and told as one ``Batch``.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass
from typing import Any

import gevent
import gevent.event
import tenacity

from zcode_acp.protocol import framing, jsonrpc
from zcode_acp.protocol.errors import INTERNAL_ERROR, METHOD_NOT_FOUND, RpcError

from zcode_acp.actors.transport import backend_process
from zcode_acp.actors.transport import fdio
from zcode_acp.actors.transport import flow
from zcode_acp.actors.transport import trace  # [trace] docs/traces.md
from zcode_acp.actors.transport.flow import Flow
from zcode_acp.actors.base import BridgeActor, safe_tell
from zcode_acp.actors.cli.config import Config
from zcode_acp.actors.messages import (
    Batch,
    BackendExited,
    BackendFrames,
    BackendLost,
    BackendReply,
    BackendRequest,
    RequestTimedOut,
    SessionEvents,
    SessionNotice,
)

log = logging.getLogger(__name__)

RUNTIME_PREFERENCES = {
    "nativeSearchEnhancementsEnabled": False,
    "memoryEnabled": False,
    "askUserQuestionAutoResolutionEnabled": False,
}
INTERACTION_METHODS = frozenset({"interaction/requestPermission", "interaction/requestUserInput"})


@dataclass(slots=True)
class Pending:
    method: str
    reply_to: Any
    tag: Any
    timeout: float
    timer: Any


def backend_failure(message: str, **extra: Any) -> dict[str, Any]:
    error = {"code": INTERNAL_ERROR, "message": message}
    error.update(extra)
    return error


class Backend(BridgeActor):
    def __init__(self, config: Config) -> None:
        super().__init__()
        self.config = config
        self.proc: Any = None
        self.generation = 0
        self.ids = itertools.count(1)
        self.pending: dict[int, Pending] = {}
        self.routes: dict[str, Any] = {}
        self.terminated = False
        # Reading the backend pauses while a client cannot keep up (see actors/writer.py).
        self.throttled_by: set[str] = set()
        self.readable = gevent.event.Event()
        self.readable.set()
        self.flow = Flow()

    # -- process ------------------------------------------------------------------

    def _ensure_process(self) -> None:
        if self.proc is not None:
            return
        if self.terminated:
            raise RpcError(INTERNAL_ERROR, "the bridge is shutting down")
        argv = backend_process.resolve_command(self.config.zcode_bin, self.config.extra_args)
        retrying = tenacity.Retrying(
            # A missing or forbidden binary is final; EAGAIN and friends are worth a retry.
            retry=tenacity.retry_if_exception(
                lambda exc: isinstance(exc, OSError) and not isinstance(exc, (FileNotFoundError, PermissionError))
            ),
            wait=tenacity.wait_exponential(multiplier=0.1, max=2.0),
            stop=tenacity.stop_after_attempt(4),
            sleep=gevent.sleep,
            reraise=True,
        )
        try:
            proc = retrying(backend_process.spawn, argv)
        except OSError as exc:
            raise RpcError(INTERNAL_ERROR, f"could not start the ZCode CLI ({argv[0]}): {exc}") from None
        self.generation += 1
        self.proc = proc
        log.info("started backend pid %d: %s", proc.pid, " ".join(argv))
        fdio.widen_pipe(proc.stdout.fileno())
        fdio.make_nonblocking(proc.stdout.fileno())
        fdio.make_nonblocking(proc.stderr.fileno())
        fdio.make_nonblocking(proc.stdin.fileno())
        gevent.spawn(self._read_stdout, self.generation, proc)
        gevent.spawn(self._drain_stderr, proc)

    def _read_stdout(self, generation: int, proc: Any) -> None:
        me = self.actor_ref
        fd = proc.stdout.fileno()
        splitter = framing.LineSplitter()
        conn = f"backend-{generation}"  # [trace]
        while True:
            self.readable.wait()
            token = self.flow.take()
            chunk = fdio.read_chunk(fd)
            trace.TRACER.record(trace.BACKEND_IN, conn, chunk)  # [trace] b"" = closed
            if not chunk:
                break
            frames = []
            for line in splitter.feed(chunk):
                try:
                    frames.append(framing.decode_object(line, strict=False))
                except RpcError:
                    log.debug("skipping an unparseable backend line (%d bytes)", len(line))
            if not frames:
                token.done()
            elif not safe_tell(me, BackendFrames(generation, frames, token)):
                return
        returncode = proc.wait()
        trace.TRACER.exited(conn, returncode)  # [trace]
        safe_tell(me, BackendExited(generation, returncode))

    @staticmethod
    def _drain_stderr(proc: Any) -> None:
        fd = proc.stderr.fileno()
        splitter = framing.LineSplitter(1024 * 1024)
        while True:
            chunk = fdio.read_chunk(fd)
            if not chunk:
                return
            for line in splitter.feed(chunk):
                # Backend logs may quote prompts: debug level only.
                log.debug("zcode: %s", line.decode("utf-8", "replace"))

    def _write(self, frame: dict[str, Any]) -> bool:
        if self.proc is None:
            return False
        data = framing.encode(frame)
        trace.TRACER.record(trace.BACKEND_OUT, f"backend-{self.generation}", data)  # [trace]
        return fdio.write_all(self.proc.stdin.fileno(), data)

    # -- requests from the tree ------------------------------------------------------

    def handle_BackendCall(self, message: Any) -> None:
        try:
            self._ensure_process()
        except RpcError as exc:
            if message.reply_to is not None:
                safe_tell(message.reply_to, BackendReply(message.tag, None, exc.to_dict()))
            return
        request_id = next(self.ids)
        if message.reply_to is not None:
            timeout = message.timeout or self.config.call_timeout
            timer = gevent.get_hub().loop.timer(timeout)
            timer.start(self._timed_out, request_id)
            self.pending[request_id] = Pending(message.method, message.reply_to, message.tag, timeout, timer)
        # Fire-and-forget calls (no reply_to) still carry an id; their replies are dropped.
        if not self._write(jsonrpc.backend_request(request_id, message.method, message.params)):
            self._fail(request_id, backend_failure("ZCode backend stdin is closed"))

    def _timed_out(self, request_id: int) -> None:
        safe_tell(self.actor_ref, RequestTimedOut(request_id))

    def handle_RequestTimedOut(self, message: Any) -> None:
        pending = self.pending.get(message.request_id)
        if pending is not None:
            self._fail(message.request_id, backend_failure(
                f"ZCode backend did not answer {pending.method} within {pending.timeout:g}s", timeout=True))

    def _fail(self, request_id: int, error: dict[str, Any]) -> None:
        pending = self.pending.pop(request_id, None)
        if pending is None:
            return
        pending.timer.close()
        safe_tell(pending.reply_to, BackendReply(pending.tag, None, error))

    def handle_Throttle(self, message: Any) -> None:
        if message.paused:
            self.throttled_by.add(message.source)
        else:
            self.throttled_by.discard(message.source)
        if self.throttled_by:
            self.readable.clear()
        else:
            self.readable.set()

    def handle_RegisterRoute(self, message: Any) -> None:
        self.routes[message.backend_session_id] = message.session

    def handle_UnregisterRoute(self, message: Any) -> None:
        if self.routes.get(message.backend_session_id) == message.session:
            del self.routes[message.backend_session_id]

    def handle_AnswerBackend(self, message: Any) -> None:
        for request_id in message.request_ids:
            self._write(jsonrpc.backend_result(request_id, message.result))

    # -- what the backend sends ----------------------------------------------------------

    def handle_BackendFrames(self, message: Any) -> None:
        try:
            self._route(message)
        finally:
            flow.done(message.token)

    def _route(self, message: Any) -> None:
        if message.generation != self.generation:
            return  # a previous process's last words
        outbox: dict[str, tuple[Any, list[Any]]] = {}

        def post(ref: Any, item: Any) -> None:
            outbox.setdefault(ref.actor_urn, (ref, []))[1].append(item)

        for frame in message.frames:
            kind = jsonrpc.classify_backend(frame, self.pending.__contains__)
            if kind is jsonrpc.Kind.RESPONSE:
                pending = self.pending.pop(frame["id"], None)
                if pending is not None:
                    pending.timer.close()
                    post(pending.reply_to, BackendReply(pending.tag, frame.get("result"), frame.get("error")))
            elif kind is jsonrpc.Kind.NOTIFICATION:
                params = frame.get("params")
                if not isinstance(params, dict):
                    continue
                session = self.routes.get(params.get("sessionId"))
                if session is None:
                    continue
                if frame["method"] == "session/event":
                    ref, items = outbox.setdefault(session.actor_urn, (session, []))
                    if items and type(items[-1]) is SessionEvents:
                        items[-1].events.append(params)
                    else:
                        items.append(SessionEvents([params], flow.share(message.token)))
                else:
                    post(session, SessionNotice(frame["method"], params))
            elif kind is jsonrpc.Kind.REQUEST:
                session = self._interaction_route(frame)
                if session is not None:
                    post(session, BackendRequest(frame))  # in pipe order with the session's events
                else:
                    self._backend_request(frame)
        for ref, items in outbox.values():
            safe_tell(ref, items[0] if len(items) == 1 else Batch(items))

    def _interaction_route(self, frame: dict[str, Any]) -> Any:
        if frame["method"] not in INTERACTION_METHODS:
            return None
        params = frame.get("params")
        return self.routes.get(params.get("sessionId")) if isinstance(params, dict) else None

    def _backend_request(self, frame: dict[str, Any]) -> None:
        method = frame["method"]
        if method == "session/requestRuntimePreferences":
            self._write(jsonrpc.backend_result(frame["id"], RUNTIME_PREFERENCES))
        elif method in INTERACTION_METHODS:
            # No session of ours asked (unknown or closed): nobody can answer, so decline.
            self._write(jsonrpc.backend_result(frame["id"], decline_unroutable(method)))
        else:
            self._write(jsonrpc.backend_error(frame["id"], METHOD_NOT_FOUND, f"Method not found: {method}"))

    def handle_BackendExited(self, message: Any) -> None:
        if message.generation != self.generation:
            return
        self.proc = None
        reason = f"ZCode backend exited (code {message.returncode})"
        log.warning("%s", reason)
        self._lost(reason)

    def _lost(self, reason: str) -> None:
        for request_id in list(self.pending):
            self._fail(request_id, backend_failure(reason, backendExited=True))
        routes, self.routes = self.routes, {}
        for session in routes.values():
            safe_tell(session, BackendLost(reason))

    def handle_TerminateBackend(self, message: Any) -> None:
        self.terminated = True
        self.readable.set()  # a paused reader must see the end too
        proc, self.proc = self.proc, None
        self.generation += 1
        if proc is not None:
            backend_process.terminate_group(proc, message.grace)
        self._lost("the bridge is shutting down")


def decline_unroutable(method: str) -> dict[str, Any]:
    if method == "interaction/requestPermission":
        return {"decision": "deny", "reason": "no client can answer"}
    return {"action": "decline", "reason": "no client can answer"}

