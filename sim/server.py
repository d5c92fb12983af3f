"""The simulated app-server: sessions, turns, events and the real backend's quirks.

Quirks reproduced (docs/backend-protocol.md §9, docs/simulator.md): frames without ``jsonrpc``;
``session/requestRuntimePreferences`` sent during ``session/create``, which is
not answered until the bridge answers it; contiguous ``seq`` per session and
``session/subscribe {afterSeq}`` replay; the busy lock (``1308``) while a turn
runs; cumulative ``stdoutTail``; leftover events of a stopped turn arriving
after the stop (and after the lock is free again); unparseable lines skipped.
This is the ``classic`` dialect; ``sim/cli016.py`` plays the 0.16 engine
(``ZCODE_SIM_DIALECT=cli016``, docs/simulator.md).
"""

from __future__ import annotations

from gevent import monkey

# Everything but ssl, which the simulator never uses: its tests import it into the pytest process,
# which patches what the bridge patches (cli/runtime.py, tests/conftest.py), ssl left as it is.
monkey.patch_all(ssl=False)

import itertools  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from typing import Any  # noqa: E402

import gevent  # noqa: E402
import gevent.event  # noqa: E402
import gevent.lock  # noqa: E402
import ujson  # noqa: E402
from gevent import os as gos  # noqa: E402

from .model import DATA_DIR, SimError, SimSession, SimTask, SimTurn  # noqa: E402
from .runner import TurnRunner  # noqa: E402
from .scenarios import ScenarioBook  # noqa: E402
from .dialect import Dialect  # noqa: E402
from .wire import Wire, dumps  # noqa: E402
from . import frames_log  # noqa: E402
from .session_methods import SessionMethods  # noqa: E402

BUSY = {"code": 1308, "message": "prompt is running"}
EVENT_LOG_LIMIT = 100_000
# After session/stop the lock is freed after this delay, and the stopped turn
# still emits leftovers (a delta, its turn.completed) after that.
STOP_RELEASE_DELAY = float(os.environ.get("ZCODE_SIM_STOP_DELAY", "0.05"))
LEFTOVER_DELAY = float(os.environ.get("ZCODE_SIM_LEFTOVER_DELAY", "0.1"))
TURN_ID_IN_PAYLOAD = os.environ.get("ZCODE_SIM_TURNID_IN_PAYLOAD") == "1"
# Tests read what the bridge asked for (one JSON line per request) from here.
TRACE_PATH = os.environ.get("ZCODE_SIM_TRACE")
# Idle sessions are evicted after this many seconds (0: never); calls then answer -32004.
EVICT_AFTER = float(os.environ.get("ZCODE_SIM_EVICT_AFTER", "0"))
NOT_ACTIVE = (-32004, "Session is not active")
# An unanswered interaction request is re-announced (new id, same requestId) this often.
REANNOUNCE = float(os.environ.get("ZCODE_SIM_REANNOUNCE", "1.0"))
# 0.16+ app-servers removed session/steer and session/rewind (they answer -32601).
WITHOUT = set(os.environ.get("ZCODE_SIM_WITHOUT", "").split(","))
PERSISTED = ("session_id", "workspace", "mode", "model", "thought", "title", "seq", "messages", "todos",
             "turns", "context_used", "updated_at")


class SimServer(SessionMethods):
    """The seed's dialect (``classic``); ``sim/cli016.py`` subclasses it for the 0.16 engine."""

    busy = BUSY
    persisted = PERSISTED

    def __init__(self, wire: Wire, book: ScenarioBook, dialect: Dialect | None = None) -> None:
        self.wire = wire
        self.book = book
        self.dialect = dialect or Dialect.from_env()
        self.sessions: dict[str, SimSession] = {}
        self.ids = itertools.count(1_000_000)
        self.waiting: dict[Any, gevent.event.AsyncResult] = {}
        self.frozen = False
        self.removed = set(WITHOUT)
        self.removed_prefixes: tuple[str, ...] = ()

    def check_params(self, method: str, params: Any) -> None:
        """Hook: refuse params as the engine's schemas do (the 0.16 engine is strict; the seed's is not)."""

    def ready_to_start(self) -> bool:
        """Hook: whether the process may serve at all (the 0.16 engine checks its provider files)."""
        return True

    def next_request_id(self) -> Any:
        """The id of a request the simulator sends (integers here; strings in the 0.16 engine)."""
        return next(self.ids)

    # -- transport -------------------------------------------------------------------

    def serve(self) -> int:
        pending = b""
        gos.make_nonblocking(0)
        gos.make_nonblocking(self.wire.fd)
        while True:
            try:
                chunk = gos.nb_read(0, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                return 0
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for line in lines:
                if line.strip():
                    self.receive(line)

    def receive(self, line: bytes) -> None:
        if frames_log.PATH:  # the engine-schema check records the line as the bridge wrote it
            frames_log.record(frames_log.HOST_TO_ENGINE, raw=line)
        try:
            frame = ujson.loads(line)
        except ValueError:
            return
        if not isinstance(frame, dict):
            return
        if "jsonrpc" in frame and "id" in frame and "method" in frame:
            # A strict validator rejects JSON-RPC 2.0 envelopes.
            self.error(frame["id"], -32600, "unexpected field: jsonrpc")
            return
        if "method" not in frame:
            if TRACE_PATH:
                with open(TRACE_PATH, "ab") as trace:
                    trace.write(dumps({"response": frame.get("id"), "result": frame.get("result"),
                                       "error": frame.get("error")}))
            waiter = self.waiting.pop(frame.get("id"), None)
            if waiter is not None and not waiter.ready():
                waiter.set(frame)
            return
        if TRACE_PATH:
            with open(TRACE_PATH, "ab") as trace:
                trace.write(dumps({"method": frame["method"], "params": frame.get("params")}))
        gevent.spawn(self.dispatch, frame)

    def reply(self, request_id: Any, result: Any) -> None:
        self.wire.send({"id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.wire.send({"id": request_id, "error": error})

    def ask_bridge(self, method: str, params: Any, timeout: float = 30) -> Any:
        request_id = self.next_request_id()
        waiter = gevent.event.AsyncResult()
        self.waiting[request_id] = waiter
        self.wire.send({"id": request_id, "method": method, "params": params})
        return waiter.get(timeout=timeout)

    def ask_user(self, method: str, params: dict[str, Any], turn: SimTurn,
                 resolve_after: tuple[float, dict[str, Any]] | None = None,
                 answer: gevent.event.AsyncResult | None = None) -> dict[str, Any] | None:
        """Ask the bridge and wait, re-announcing under a new id until someone answers.

        None if the turn was stopped while waiting. ``resolve_after`` (seconds, result):
        unanswered that long, the request resolves itself with that result. ``answer``:
        the result to wait on, when someone else may answer too (today's v4 commands).
        """
        answer = answer if answer is not None else gevent.event.AsyncResult()
        if resolve_after is not None:
            gevent.spawn_later(resolve_after[0], lambda: answer.ready() or answer.set({"result": resolve_after[1]}))
        wait = REANNOUNCE
        while True:
            request_id = self.next_request_id()
            self.waiting[request_id] = answer
            self.wire.send({"id": request_id, "method": method, "params": params})
            try:
                frame = answer.get(timeout=wait)
            except gevent.Timeout:
                if turn.stopped:
                    return None
                wait = self.next_reannounce(wait)
                continue
            return frame.get("result") if isinstance(frame.get("result"), dict) else {}

    def next_reannounce(self, wait: float) -> float:
        """The seed's engine re-announces at a steady pace."""
        return wait

    # -- how this dialect asks the user (sim/interactions_cli016.py has the 0.16 engine's way) --------

    def ask_permission(self, runner: TurnRunner, tool_id: str, name: str, tool_input: Any,
                       step: dict[str, Any]) -> tuple[bool, str] | None:
        """(allowed, reason), or None if the turn was stopped while asking."""
        kinds = step.get("kinds") or ["allow_once", "allow_project", "deny", "reject"]
        options = [{"optionId": f"opt_{kind}", "kind": kind, "name": kind.replace("_", " ").title()} for kind in kinds]
        answer = self.ask_user("interaction/requestPermission", {
            "requestId": f"perm_{tool_id}", "sessionId": runner.session.session_id, "toolCallId": tool_id,
            "toolName": name, "reason": "This command changes files.", "input": tool_input, "options": options,
        }, runner.turn)
        if answer is None:
            return None
        return answer.get("decision") == "allow", str(answer.get("reason"))

    def ask_plan(self, runner: TurnRunner, tool_id: str, plan: str) -> tuple[bool, str] | None:
        answer = self.ask_user("interaction/requestUserInput", {
            "requestId": f"plan_{tool_id}", "sessionId": runner.session.session_id, "toolCallId": tool_id,
            "schema": {"interaction": "plan_approval"}, "input": {"plan": plan},
        }, runner.turn)
        if answer is None:
            return None
        return answer.get("action") == "accept", str(answer.get("reason"))

    def ask_questions(self, runner: TurnRunner, tool_id: str,
                      questions: list[dict[str, Any]]) -> tuple[bool, Any] | None:
        answer = self.ask_user("interaction/requestUserInput", {
            "requestId": f"ask_{tool_id}", "sessionId": runner.session.session_id, "toolCallId": tool_id,
            "questions": questions,
        }, runner.turn)
        if answer is None:
            return None
        if answer.get("action") == "accept":
            return True, (answer.get("content") or {}).get("answers") or {}
        return False, answer.get("reason")

    def official_mcp_auth(self, runner: TurnRunner, step: dict[str, Any]) -> str:
        return "the seed's engine has no official MCP servers"

    def dispatch(self, frame: dict[str, Any]) -> None:
        if self.frozen:
            return
        method = frame["method"]
        handler = getattr(self, "m_" + method.replace("/", "_"), None)
        if method.split("/")[-1] in self.removed or method.startswith(self.removed_prefixes) \
                or self.dialect.too_old_for(method):
            handler = None
        if "id" not in frame:
            return
        if handler is None:
            self.error(frame["id"], -32601, f"Method not found: {method}")
            return
        params = frame.get("params") or {}
        try:
            self.check_params(method, params)
            result = handler(params)
        except SimError as exc:
            self.error(frame["id"], exc.code, exc.message, exc.data)
            return
        if result is not None:
            self.reply(frame["id"], result)

    # -- events ----------------------------------------------------------------------

    def emit(self, session: SimSession, kind: str, payload: dict[str, Any], turn_id: str | None = None,
             push: bool = True, flush: bool = True) -> dict[str, Any]:
        session.seq += 1
        event = self.envelope(session, kind, payload, turn_id)
        session.events.append(event)
        if len(session.events) > EVENT_LOG_LIMIT:
            del session.events[: len(session.events) - EVENT_LOG_LIMIT]
        if push and session.subscribed:
            self.wire.send({"method": "session/event", "params": event}, flush=flush)
        return event

    def envelope(self, session: SimSession, kind: str, payload: dict[str, Any],
                 turn_id: str | None) -> dict[str, Any]:
        event: dict[str, Any] = {"sessionId": session.session_id, "seq": session.seq, "type": kind,
                                 "payload": payload}
        if turn_id is not None:
            if TURN_ID_IN_PAYLOAD:
                payload["turnId"] = turn_id
            else:
                event["turnId"] = turn_id
        return event

    # -- session methods ----------------------------------------------------------------

    def known(self, session_id: Any) -> SimSession | None:
        session = self.sessions.get(session_id)
        if session is None and DATA_DIR and isinstance(session_id, str) and "/" not in session_id:
            path = os.path.join(DATA_DIR, session_id + ".json")
            if os.path.exists(path):
                with open(path, "rb") as handle:
                    data = ujson.loads(handle.read())
                session = SimSession(**{k: v for k, v in data.items() if k in self.persisted})
                session.active = False  # a new process: resume before use
                self.sessions[session_id] = session
        return session

    def session(self, params: dict[str, Any]) -> SimSession:
        session = self.known(params.get("sessionId"))
        if session is None:
            raise SimError(-32002, f"session not found: {params.get('sessionId')}")
        if EVICT_AFTER and session.lock is None and time.monotonic() - session.last_used > EVICT_AFTER:
            session.active = False
        if not session.active:
            raise SimError(*NOT_ACTIVE)
        session.last_used = time.monotonic()
        return session

    def save(self, session: SimSession) -> None:
        if not DATA_DIR:
            return
        os.makedirs(DATA_DIR, exist_ok=True)
        data = {key: getattr(session, key) for key in self.persisted}
        path = os.path.join(DATA_DIR, session.session_id + ".json")
        with open(path + ".tmp", "wb") as handle:
            handle.write(dumps(data))
        os.replace(path + ".tmp", path)

    def m_session_send(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        if session.lock is not None:
            raise SimError(self.busy["code"], self.busy["message"])
        content = params.get("content") or ""
        turn = SimTurn(turn_id=f"turn_{uuid.uuid4().hex[:12]}")
        session.lock = turn
        session.turns += 1
        session.updated_at = int(time.time() * 1000)
        # Accept first, then run: the accept reply precedes the turn's events.
        turn.greenlet = gevent.spawn_later(0, self.run_turn, session, turn, content)
        return {"accepted": True}

    def m_session_stop(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        turn = session.lock
        self.stop_turn(session, turn)
        return {"stopped": turn is not None}

    def stop_turn(self, session: SimSession, turn: SimTurn | None) -> None:
        """Stop a turn: its lock is freed a moment later, its leftovers arrive after that."""
        if turn is not None and not turn.stopped and not turn.unstoppable:
            turn.stopped = True
            gevent.spawn_later(STOP_RELEASE_DELAY, self.release, session, turn)

    def release(self, session: SimSession, turn: SimTurn) -> None:
        if session.lock is turn:
            session.lock = None




    # -- extension methods --------------------------------------------------------------------

    def m_session_steer(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        if session.lock is None:
            return {"queued": False}
        self.emit(session, "turn.steerQueued", {}, session.lock.turn_id)
        return {"queued": True}

    def m_session_cancelBackgroundTask(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        task = session.tasks.get(params.get("taskId"))
        if task is None:
            raise SimError(-32602, f"no such task: {params.get('taskId')}")
        task.cancelled = True
        return {"cancelled": True}

    def run_task(self, session: SimSession, task: SimTask, outputs: list[str], interval: float, status: str,
                 notify: bool) -> None:
        """A background task: status updates with cumulative output, then a notification turn."""
        base = {"taskId": task.task_id, "toolCallId": task.tool_call_id, "toolName": task.tool_name,
                "description": task.description, "outputPath": f"/tmp/{task.task_id}.log"}
        self.emit(session, "session.updated", {**base, "status": "running", "startedAt": "2026-11-30T00:00:00Z"})
        tail = ""
        for chunk in outputs:
            gevent.sleep(interval)
            if task.cancelled:
                break
            tail += chunk
            self.emit(session, "session.updated", {**base, "status": "running", "outputTail": tail})
        final = "cancelled" if task.cancelled else status
        self.emit(session, "session.updated", {**base, "status": final, "outputTail": tail})
        if notify and not task.cancelled:
            self.notify(session, task, final)

    def notify(self, session: SimSession, task: SimTask, status: str) -> None:
        """The completion-notification turn (it may run while a user's prompt streams)."""
        turn_id = f"turn_{uuid.uuid4().hex[:12]}"
        holder = SimTurn(turn_id) if session.lock is None else None
        if holder is not None:
            session.lock = holder  # a user's send now gets "busy" until this turn ends
        self.emit(session, "turn.started", {
            "inputSource": "background_task", "inputVisibility": "model-only",
            "input": f"<task-notification><task-id>{task.task_id}</task-id><status>{status}</status></task-notification>",
        }, turn_id)
        for word in ("Background ", "task ", f"{task.description} ", f"{status}."):
            gevent.sleep(0.01)
            self.emit(session, "model.streaming", {"kind": "text_delta", "delta": word}, turn_id)
        self.emit(session, "turn.completed", {"resultType": "success"}, turn_id)
        if holder is not None and session.lock is holder:
            session.lock = None

    # -- turns --------------------------------------------------------------------------------

    def run_turn(self, session: SimSession, turn: SimTurn, content: str) -> None:
        _, steps = self.book.pick(content)
        user_id = f"msg_{uuid.uuid4().hex[:10]}"
        session.messages.append({"info": {"id": user_id, "role": "user"}, "parts": [{"type": "text", "text": content}]})
        assistant: dict[str, Any] = {"info": {"id": f"msg_{uuid.uuid4().hex[:10]}", "role": "assistant"}, "parts": []}
        session.messages.append(assistant)
        runner = TurnRunner(self, session, turn, assistant["parts"], content)
        self.turn_started(session, turn, content)
        outcome = runner.run(steps)
        self.finish(session, turn, outcome, runner)

    def turn_started(self, session: SimSession, turn: SimTurn, content: str) -> None:
        self.emit(session, "turn.started", {"inputSource": "user", "inputVisibility": "user", "input": content},
                  turn.turn_id)

    def finish(self, session: SimSession, turn: SimTurn, outcome: str, runner: TurnRunner) -> None:
        tid = turn.turn_id
        if turn.closed:
            # session/close ends a turn at once: no leftovers, no turn.completed.
            self.release(session, turn)
            return
        if outcome == "stopped":
            # Quirk: leftovers of a stopped turn arrive after the stop, even after the lock is free.
            gevent.sleep(LEFTOVER_DELAY)
            self.emit(session, "model.streaming", {"kind": "text_delta", "delta": "(leftover)"}, tid)
            self.emit(session, "turn.completed", {"resultType": "cancelled"}, tid)
            return
        # The first turn names the session before it ends (so the title is part of the turn, in pipe order).
        self.announce_title(session, runner)
        if outcome.startswith("failed:"):
            code, _, message = outcome[7:].partition(":")
            self.emit(session, "turn.failed", {"error": {"code": code, "message": message}}, tid)
        elif outcome == "completed":
            usage = self.account(session, runner)
            self.emit(session, "turn.completed", {"resultType": "success", "usage": usage}, tid)
        self.save(session)
        if runner.evict:
            session.active = False
        if session.lock is turn:
            session.lock = None
        self.after_turn(session)

    def account(self, session: SimSession, runner: TurnRunner) -> dict[str, Any]:
        """The turn's usage; updates the session's context figures and reports them."""
        usage = {"source": "sim", "modelRequestCount": 1, "inputTokens": 1200 + runner.output_tokens,
                 "outputTokens": runner.output_tokens, "totalTokens": 1200 + 2 * runner.output_tokens,
                 "cacheReadTokens": 1000, "cacheWriteTokens": 0, "reasoningTokens": runner.reasoning_tokens,
                 "webFetchRequests": 0, "webSearchRequests": 0}
        session.context_used += usage["totalTokens"]
        self.emit(session, "session.updated", {"usage": {"inputTokens": session.context_used},
                                               "contextWindow": 200_000})
        return usage

    def announce_title(self, session: SimSession, runner: TurnRunner) -> None:
        """The first turn names the session (a notification of its own in this dialect)."""
        if session.turns == 1 and session.title == "New session":
            session.title = self.book.title(runner.prompt)
            self.wire.send({"method": "session.titleUpdated",
                            "params": {"sessionId": session.session_id, "title": session.title}})

    def after_turn(self, session: SimSession) -> None:
        """Hook: what a dialect does once a turn has let go of the session."""

    def absorb_guides(self, session: SimSession, turn: SimTurn, runner: TurnRunner) -> None:
        """Hook: fold text steered into a running turn (the 0.16 engine only)."""

    def agent_changed_mode(self, session: SimSession, reason: str) -> None:
        """The agent entered or left plan mode itself (the seed's patch names the mode only)."""
        self.state_updated(session, reason, {"mode": {"current": session.mode}})

    def state_updated(self, session: SimSession, reason: str, patch: Any = None) -> int:
        """Announce a state change (the seed's shape: no envelope); returns the session's revision."""
        session.revision += 1
        self.wire.send({"method": "state.updated",
                        "params": {"sessionId": session.session_id, "reason": reason, "patch": patch or {}}})
        return session.revision

