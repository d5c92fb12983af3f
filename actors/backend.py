"""Backend: the ZCode app-server child process and everything on its pipes.

Owns the process (started on first need, restarted on the next need after it
died), the correlation table of requests sent to it (ids, deadlines, who gets
the typed reply), the routing table backend session id → Session actor, and
the automatic answers the backend must get (runtime preferences and the
header requests of the 0.16 engine, ``protocol/host_requests.py``; ``-32601``
for requests nobody handles). Request ids are echoed as they came (integers or
strings such as ``"server-17"``).

Never blocked: frames to the backend go through a writer greenlet, so a
backend that stops reading parks only that greenlet, and every deadline still
fires. The process is watched three ways — its exit, its stdout closing, and
its stdin refusing writes — and any of them is its death: everything pending
fails with the reason (and the last lines it printed on stderr), the whole
process group is killed, Sessions learn they are lost, and the next use starts
a new process (docs/reliability.md).

Ordering guarantee the rest of the tree relies on: everything that concerns
one Session — its events *and* the replies to requests it made — reaches that
Session in the order it came off the pipe, because one read's frames are
grouped per destination in pipe order and told as one ``Batch``.
"""

from __future__ import annotations

import logging
from collections import deque
from types import ModuleType
from typing import Any

import gevent
import gevent.event

from zcode_acp.protocol import framing, jsonrpc
from zcode_acp.protocol.errors import INTERNAL_ERROR, METHOD_NOT_FOUND, RpcError, worded
from zcode_acp.protocol.i18n import EN, t
from zcode_acp.protocol.host_requests import host_answer

from zcode_acp.actors.base import BridgeActor, handles, safe_tell
from zcode_acp.config.settings import Config
from zcode_acp.actors.correlation import Correlation
from zcode_acp.actors.messages import (
    BackendFailed,
    AnswerBackend,
    BackendCall,
    BackendFrames,
    BackendGone,
    BackendLost,
    BackendRequest,
    BackendStalled,
    NonProtocolOutput,
    Backlog,
    Batch,
    RegisterRoute,
    RequestTimedOut,
    SessionEvents,
    SessionNotice,
    TerminateBackend,
    Throttle,
    UnregisterRoute,
    V4Frames,
    WriteFailed,
)
from zcode_acp.actors.transport import fdio, flow, trace
from zcode_acp.actors.transport.flow import Flow
from zcode_acp.actors.transport.writer import Writer

log = logging.getLogger(__name__)

V4_FRAME = "v4/conversation/frame"
INTERACTION_METHODS = frozenset({"interaction/requestPermission", "interaction/requestUserInput"})
STDERR_TAIL = 20  # lines of the backend's stderr kept for error messages
WRITE_BACKLOG_LIMIT = 64 * 1024 * 1024  # bytes queued for a backend that does not read
FIRST_BATCH_WAIT = 0.05  # seconds the reader waits for a burst's first batch to be handled
# A deadline that passes while the backend's output waits unread is restarted (at most
# this many times unless a client backlog is what holds the reader): docs/reliability.md.
MAX_EXTENSIONS = 4
EXIT_GRACE = 0.5  # seconds between "stdout closed" and "exited" that still count as one death
WRITE_FAILURE_GRACE = 3.0  # a refused write waits this long for the exit (a loaded machine reaps slowly)
# A backend that keeps dying before it answers anything (a crash loop: not logged in, a bad
# install) is restarted after 0.5 s, then 1, 2, 4 … up to 30 s; one that worked and then
# died (killed, crashed mid-turn) is restarted at once.
RESTART_BACKOFF = {"multiplier": 0.5, "min": 0.5, "max": 30}  # tenacity.wait_exponential's, made at a death


class _Attempt:
    """The one field tenacity's wait strategies read."""

    def __init__(self, attempt_number: int) -> None:
        self.attempt_number = attempt_number


def restart_backoff(early_deaths: int) -> float:
    """Seconds before the next process, after ``early_deaths`` deaths in a row before an answer."""
    import tenacity  # only after a death (process_plumbing's reason)

    return float(tenacity.wait_exponential(**RESTART_BACKOFF)(_Attempt(early_deaths)))  # type: ignore[arg-type]


def process_plumbing() -> ModuleType:
    """``transport/backend_process``, imported when a process is first started or stopped.

    The Backend actor starts with the runtime, but the first ``session/new`` spawns nothing
    (its session is made on first use): importing the plumbing (the provider files, the process group guard) and
    tenacity with the runtime cost that answer ~8 ms (docs/performance.md, "Time to a first session").
    """
    from zcode_acp.actors.transport import backend_process

    return backend_process


def backend_failure(message: str, **extra: Any) -> dict[str, Any]:
    error: dict[str, Any] = {"code": INTERNAL_ERROR, "message": message}
    error.update(extra)
    return error


def own_plan_key() -> str | None:
    """The Coding Plan key ``zcode-acp setup`` kept (config/coding_plan.py), read only when the engine asks."""
    from zcode_acp.config.coding_plan import own_plan_key as kept

    return kept()


class Backend(BridgeActor):
    def __init__(self, config: Config, notifier: Any = None) -> None:
        super().__init__()
        self.config = config
        self.notifier = notifier  # told when the process dies (actors/notifier.py), if configured
        self.proc: Any = None
        self.child_env: dict[str, str] = {}  # the environment the backend was started with
        self.watchdog: Any = None  # kills the backend's process group if the bridge dies
        self.writer: Writer | None = None
        self.generation = 0
        self.pending = Correlation()
        self.routes: dict[str, Any] = {}
        self.terminated = False
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL)
        self.started_at = 0.0
        self.last_heard = 0.0  # when the current process last wrote anything
        self.answered = False  # the current process has answered a request: it works
        self.early_deaths = 0  # consecutive deaths before answering anything
        self.restart_at = 0.0  # no new process before this (the loop's clock)
        self.last_death = ""  # what the last one said, for the errors of the backoff
        # Reading the backend pauses while a client cannot keep up (see actors/transport/writer.py).
        self.throttled_by: set[str] = set()
        self.readable = gevent.event.Event()
        self.readable.set()
        self.flow = Flow()

    def on_start(self) -> None:
        self.pending.owner = self.actor_ref

    # -- process ------------------------------------------------------------------

    def _ensure_process(self) -> None:
        if self.proc is not None:
            return
        if self.terminated:
            raise worded(INTERNAL_ERROR, "error.shutting_down")
        now = gevent.get_hub().loop.now()
        if now < self.restart_at:
            raise worded(INTERNAL_ERROR, "error.backend_restarting", None, death=self.last_death,
                         seconds=f"{self.restart_at - now:.1f}", deaths=self.early_deaths)
        import tenacity  # at the first spawn, not with the runtime (process_plumbing's reason)

        backend_process = process_plumbing()
        argv = backend_process.resolve_command(self.config.zcode_bin, self.config.extra_args, self.config.lang)
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
            env = self.child_env = backend_process.child_environment(argv, self.config.zcode_home)
            proc: Any = retrying(backend_process.spawn, argv, env)
        except OSError as exc:
            raise worded(INTERNAL_ERROR, "error.could_not_start_cli", None, command=argv[0], problem=exc) from None
        self.generation += 1
        self.proc = proc
        self.watchdog = backend_process.guard_group(proc)
        self.started_at = self.last_heard = gevent.get_hub().loop.now()
        self.answered = False
        self.stderr_tail = deque(maxlen=STDERR_TAIL)
        log.info("started backend pid %d: %s", proc.pid, " ".join(argv))
        fdio.widen_pipe(proc.stdout.fileno())
        fdio.widen_pipe(proc.stdin.fileno())
        for pipe in (proc.stdout, proc.stderr, proc.stdin):
            fdio.make_nonblocking(pipe.fileno())
        self.writer = Writer(fdio.FdSink(proc.stdin.fileno()), self.actor_ref, source=self.generation)
        eof = gevent.event.Event()
        stderr_eof = gevent.event.Event()
        gevent.spawn(self._read_stdout, self.generation, proc, eof)
        gevent.spawn(self._drain_stderr, proc, self.stderr_tail, stderr_eof)
        gevent.spawn(self._watch_exit, self.generation, proc, eof, stderr_eof)

    def _read_stdout(self, generation: int, proc: Any, eof: gevent.event.Event) -> None:
        me = self.actor_ref
        fd = proc.stdout.fileno()
        splitter = framing.LineSplitter()
        conn = f"backend-{generation}"  # its name in a trace (docs/traces.md)
        told_garbage = False
        while True:
            self.readable.wait()
            token = self.flow.take()
            chunk, after_idle = fdio.read_burst(fd)
            trace.TRACER.record(trace.BACKEND_IN, conn, chunk)  # b"": closed
            if not chunk:
                token.done()
                break
            frames, _, garbage = framing.decode_backend_lines(splitter.feed(chunk))
            if garbage is not None and not told_garbage:  # once per process: prose is named at once
                told_garbage = True
                safe_tell(me, NonProtocolOutput(generation, garbage.decode("utf-8", "replace")))
            if not frames:
                token.done()
            elif not safe_tell(me, BackendFrames(generation, frames, token)):
                return
            if after_idle:
                # The first events of a burst reach the client before the reader decodes
                # the next read (docs/performance.md, "First update"); bounded, so a
                # batch held by a slow part never stalls reading.
                self.flow.wait_done(token, FIRST_BATCH_WAIT)
        eof.set()
        with gevent.Timeout(EXIT_GRACE, False):
            proc.wait()
        if proc.poll() is None:  # alive but mute: as good as dead
            safe_tell(me, BackendGone(generation, "backend.gone.mute"))

    def _watch_exit(self, generation: int, proc: Any, eof: gevent.event.Event,
                    stderr_eof: gevent.event.Event) -> None:
        """The process itself, not just its pipes: a child may hold stdout open after it died.

        Its last frames are read first (bounded), so answers written just
        before exiting still arrive; then its death is reported, always in the
        same words (its exit code).
        """
        returncode = proc.wait()
        eof.wait(EXIT_GRACE)
        stderr_eof.wait(EXIT_GRACE)  # its last words are in the tail before its death is told
        trace.TRACER.exited(f"backend-{generation}", returncode)
        safe_tell(self.actor_ref, BackendGone(generation, "backend.gone.exited", returncode))

    @staticmethod
    def _drain_stderr(proc: Any, tail: deque[str], done: gevent.event.Event) -> None:
        fd = proc.stderr.fileno()
        splitter = framing.LineSplitter(1024 * 1024)
        while True:
            chunk = fdio.read_chunk(fd)
            if not chunk:
                done.set()
                return
            for line in splitter.feed(chunk):
                text = line.decode("utf-8", "replace").rstrip()
                if text:
                    tail.append(text[:500])
                # Backend logs may quote prompts: debug level only (the tail is shown on death).
                log.debug("zcode: %s", text)

    def _write(self, frame: dict[str, Any]) -> bool:
        if self.writer is None:
            return False
        self._put(framing.encode(frame))
        return True

    def _put(self, data: bytes) -> None:
        assert self.writer is not None
        trace.TRACER.record(trace.BACKEND_OUT, f"backend-{self.generation}", data)
        self.writer.put(data)

    # -- requests from the tree ------------------------------------------------------

    @handles(BackendCall)
    def on_call(self, message: BackendCall) -> None:
        try:
            self._ensure_process()
        except RpcError as exc:
            if message.reply_to is not None and message.reply is not None:
                safe_tell(message.reply_to, message.reply(None, exc.to_dict()))
            return
        request_id = self.pending.next_id()
        if message.reply_to is not None and message.reply is not None:
            timeout = message.timeout or self.config.call_timeout
            self.pending.open(request_id, message.method, message.reply_to, message.reply, timeout=timeout,
                              generation=self.generation)
        # Fire-and-forget calls (no reply_to) still carry an id; their replies are dropped.
        assert self.writer is not None
        if self.writer.pending > WRITE_BACKLOG_LIMIT:
            self.pending.fail(request_id, backend_failure(
                t(self.config.lang, "backend.backlog", bytes=self.writer.pending)))
            return
        try:
            line = framing.encode(jsonrpc.backend_request(request_id, message.method, message.params))
        except (TypeError, ValueError, OverflowError) as exc:
            words = t(self.config.lang, "backend.cannot_encode", method=message.method, detail=exc)
            self.pending.fail(request_id, backend_failure(words, encoding=True))
            return
        self._put(line)

    @handles(RequestTimedOut)
    def on_timed_out(self, message: RequestTimedOut) -> None:
        pending = self.pending.get(message.request_id)
        if pending is None:
            return
        if pending.generation == self.generation and self._behind(pending.extended):
            # Its answer may be in the pipe we have not read (a slow client pauses the
            # reader; a busy bridge lags it): the backend is not late, we are.
            log.debug("deadline of %s (id %r) extended: the bridge is behind on the backend's output",
                      pending.method, message.request_id)
            self.pending.extend(message.request_id)
            return
        self.pending.fail(message.request_id, backend_failure(
            t(self.config.lang, "backend.no_answer", method=pending.method, seconds=f"{pending.timeout:g}"), timeout=True,
            generation=pending.generation))
        silent = self.last_heard <= pending.sent_at and not self.throttled_by  # (we were not pausing it)
        if silent and pending.generation == self.generation and self.proc is not None:
            self._died("backend.gone.silent")  # not one word for a whole request timeout: wedged

    def _behind(self, extended: int) -> bool:
        """Whether the reader is held back with the backend's output unread.

        While a client backlog pauses it, without limit (the answer could not
        reach that client anyway); while the pipe merely holds unread bytes (a
        busy bridge), up to MAX_EXTENSIONS times, so a backend that streams
        forever but never answers still times out.
        """
        if self.proc is None:
            return False
        if self.throttled_by:
            return True
        return extended < MAX_EXTENSIONS and fdio.unread(self.proc.stdout.fileno()) > 0

    @handles(BackendStalled)
    def on_stalled(self, message: BackendStalled) -> None:
        """A running turn's probe got no answer: the process is wedged, not just slow."""
        if self.proc is not None and message.generation in (None, self.generation):
            self._died("backend.gone.silent")

    @handles(Throttle)
    def on_throttle(self, message: Throttle) -> None:
        if message.paused:
            self.throttled_by.add(message.source)
        else:
            self.throttled_by.discard(message.source)
        if self.throttled_by:
            self.readable.clear()
        else:
            self.readable.set()

    @handles(RegisterRoute)
    def on_register(self, message: RegisterRoute) -> None:
        self.routes[message.backend_session_id] = message.session

    @handles(UnregisterRoute)
    def on_unregister(self, message: UnregisterRoute) -> None:
        if self.routes.get(message.backend_session_id) == message.session:
            del self.routes[message.backend_session_id]

    @handles(AnswerBackend)
    def on_answer(self, message: AnswerBackend) -> None:
        if message.generation != self.generation or self.proc is None:
            # Asked by a process that is gone: its ids mean something else to the new one.
            log.info("dropping an answer meant for a previous backend process")
            return
        for request_id in message.request_ids:
            self._write(jsonrpc.backend_result(request_id, message.result))

    # -- what the backend sends ----------------------------------------------------------

    @handles(BackendFrames)
    def on_frames(self, message: BackendFrames) -> None:
        if message.generation == self.generation:
            self.last_heard = gevent.get_hub().loop.now()
        try:
            self._route(message)
        finally:
            flow.done(message.token)

    def _route(self, message: BackendFrames) -> None:
        if message.generation != self.generation:
            return  # a previous process's last words
        outbox: dict[str, tuple[Any, list[Any]]] = {}

        def post(ref: Any, item: Any) -> None:
            outbox.setdefault(ref.actor_urn, (ref, []))[1].append(item)

        routes = self.routes
        for frame in message.frames:
            # The hot path first: a session event (a notification: no id) for a routed session.
            if frame.get("method") == "session/event" and "id" not in frame:
                params: Any = frame.get("params")
                session = routes.get(params.get("sessionId")) if type(params) is dict else None  # type: ignore[arg-type]
                if session is not None:
                    ref, items = outbox.setdefault(session.actor_urn, (session, []))
                    if items and type(items[-1]) is SessionEvents:
                        items[-1].events.append(params)
                    else:
                        items.append(SessionEvents([params], flow.share(message.token)))
                continue
            kind = jsonrpc.classify_backend(frame, self.pending.__contains__)
            if kind is jsonrpc.Kind.RESPONSE:
                self.answered = True
                answer = self.pending.answer(frame["id"], frame.get("result"), frame.get("error"))
                if answer is not None:
                    post(*answer)
            elif kind is jsonrpc.Kind.NOTIFICATION:
                params = frame.get("params")
                if not isinstance(params, dict):
                    continue
                if frame["method"] == V4_FRAME:
                    self._route_v4_frame(params, outbox, message.token)
                    continue
                session = self.routes.get(params.get("sessionId"))  # type: ignore[arg-type]
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
                if session is not None:  # in pipe order with the session's events
                    post(session, BackendRequest(frame, self.generation))
                else:
                    self._backend_request(frame)
        for ref, items in outbox.values():
            safe_tell(ref, items[0] if len(items) == 1 else Batch(items))

    def _route_v4_frame(self, params: dict[str, Any], outbox: dict[str, tuple[Any, list[Any]]], token: Any) -> None:
        """A v4 topic frame goes to the Session whose backend session its topic names.

        Frames carry no ``sessionId``: ``conversation/<sessionId>`` says whose they are. One
        read's frames for a Session travel as one ``V4Frames``, in pipe order with its replies.
        """
        topic = params.get("topic")
        kind, _, session_id = topic.partition("/") if isinstance(topic, str) else ("", "", "")
        if kind == "workspace-config":
            # Each Session of the workspace subscribes on its own; the frame names the subscription,
            # which only its owner holds (the others ignore it as stale): docs/v4.md.
            for session in {ref.actor_urn: ref for ref in self.routes.values()}.values():
                self._route_to(session, params, outbox, token)
            return
        # A workspace topic (sessions-index/<key>) is routed by its whole name to the actor that subscribed it.
        session = self.routes.get(session_id if kind == "conversation" else str(topic))
        if session is None:
            return  # a topic nobody here subscribed (or one that outlived its session)
        self._route_to(session, params, outbox, token)

    def _route_to(self, session: Any, params: dict[str, Any], outbox: dict[str, tuple[Any, list[Any]]],
                  token: Any) -> None:
        _ref, items = outbox.setdefault(session.actor_urn, (session, []))
        if items and type(items[-1]) is V4Frames:
            items[-1].frames.append(params)
        else:
            items.append(V4Frames([params], flow.share(token)))

    def _interaction_route(self, frame: dict[str, Any]) -> Any:
        if frame["method"] not in INTERACTION_METHODS:
            return None
        params = frame.get("params")
        return self.routes.get(params.get("sessionId")) if isinstance(params, dict) else None  # type: ignore[arg-type]

    def _backend_request(self, frame: dict[str, Any]) -> None:
        method = frame["method"]
        answer = host_answer(method, frame.get("params"),
                             lambda: process_plumbing().personal_provider_config(self.child_env), own_plan_key,
                             self.config.lang)
        if answer is not None:
            log.debug("answering the engine's %s (id %r)", method, frame["id"])
            self._write(jsonrpc.backend_result(frame["id"], answer))
        elif method in INTERACTION_METHODS:
            # No session of ours asked (unknown or closed): nobody can answer, so decline.
            self._write(jsonrpc.backend_result(frame["id"], decline_unroutable(method)))
        else:
            self._write(jsonrpc.backend_error(frame["id"], METHOD_NOT_FOUND, f"Method not found: {method}"))

    # -- death ---------------------------------------------------------------------------------

    @handles(NonProtocolOutput)
    def on_non_protocol_output(self, message: NonProtocolOutput) -> None:
        if message.generation != self.generation or self.proc is None:
            return
        if self.answered:  # it works: a stray line is logged, not fatal
            log.warning("the ZCode CLI wrote a line that is not a protocol frame: %s", message.line)
            return
        # Before its first answer: it is not speaking the protocol at all (wrong binary, a login
        # prompt…). Say so now instead of after the create's timeout.
        self._died("backend.gone.not_protocol", "backend.subject.cli", line=repr(message.line))

    @handles(BackendGone)
    def on_gone(self, message: BackendGone) -> None:
        if message.generation == self.generation and self.proc is not None:
            self._died(message.reason, code=message.code)

    @handles(WriteFailed)
    def on_write_failed(self, message: WriteFailed) -> None:
        """Its stdin refused a write: usually because it exited (then the exit watcher tells,
        with the exit code: the same words every time); otherwise it closed stdin and lives on."""
        if message.source == self.generation and self.proc is not None:
            gevent.spawn(self._confirm_write_failure, self.generation, self.proc)

    def _confirm_write_failure(self, generation: int, proc: Any) -> None:
        with gevent.Timeout(WRITE_FAILURE_GRACE, False):
            proc.wait()
        if proc.poll() is None:
            safe_tell(self.actor_ref, BackendGone(generation, "backend.gone.not_reading"))

    @handles(Backlog)
    def on_backlog(self, message: Backlog) -> None:
        if message.backlogged and message.source == self.generation:
            log.warning("the ZCode backend reads its input slowly; requests are queueing")

    def _died(self, how: str, subject: str = "backend.subject.backend", **params: Any) -> None:
        """The process is gone or useless (``how``: a ``backend.gone.*`` key). The log says why in
        English; the sessions, the pending calls and the notice in the bridge's language (one per
        bridge: ``Config.lang``), as every client shows these errors to the user (issue 29)."""
        proc, self.proc = self.proc, None
        writer, self.writer = self.writer, None
        if writer is not None:
            writer.stop()
        english = t(EN, how, subject=t(EN, subject), **params)
        reason = t(self.config.lang, how, subject=t(self.config.lang, subject), **params)
        tail = list(self.stderr_tail)
        if tail:
            log.warning("%s; its last words on stderr:\n  %s", english, "\n  ".join(tail))
            reason = t(self.config.lang, "backend.died_saying", reason=reason, said=tail[-1])  # (said: the engine's)
        else:
            log.warning("%s", english)
        now = gevent.get_hub().loop.now()
        self.early_deaths = 0 if self.answered else self.early_deaths + 1
        if self.early_deaths:
            self.restart_at = now + restart_backoff(self.early_deaths)
        self.last_death = reason
        safe_tell(self.notifier, BackendFailed(reason))
        # Everything it started goes too (a tool's child may hold its pipes open).
        gevent.spawn(self._bury, proc, self.watchdog)
        self.watchdog = None
        self._lost(reason)

    @staticmethod
    def _bury(proc: Any, watchdog: Any) -> None:
        backend_process = process_plumbing()
        backend_process.terminate_group(proc, 0.2, 0.0)
        backend_process.release_guard(watchdog)

    def _lost(self, reason: str) -> None:
        self.pending.fail_all(backend_failure(reason, backendExited=True))
        routes, self.routes = self.routes, {}
        for session in routes.values():
            safe_tell(session, BackendLost(reason))

    @handles(TerminateBackend)
    def on_terminate(self, message: TerminateBackend) -> None:
        self.terminated = True
        self.readable.set()  # a paused reader must see the end too
        proc, self.proc = self.proc, None
        writer, self.writer = self.writer, None
        self.generation += 1
        if proc is not None:
            if writer is not None:
                writer.drain(0.2)  # the last session/stop reaches it before stdin closes
                writer.stop()
            backend_process = process_plumbing()
            backend_process.terminate_group(proc, message.grace)
            backend_process.release_guard(self.watchdog)
            self.watchdog = None
        self._lost(t(self.config.lang, "error.shutting_down"))


def decline_unroutable(method: str) -> dict[str, Any]:
    if method == "interaction/requestPermission":
        return {"decision": "deny", "reason": "no client can answer"}
    return {"action": "decline", "reason": "no client can answer"}
