"""The simulated app-server: sessions, turns, events and the real backend's quirks.

Quirks reproduced (backend-protocol.md): frames without ``jsonrpc``;
``session/requestRuntimePreferences`` sent during ``session/create``, which is
not answered until the bridge answers it; contiguous ``seq`` per session and
``session/subscribe {afterSeq}`` replay; the busy lock (``1308``) while a turn
runs; cumulative ``stdoutTail``; leftover events of a stopped turn arriving
after the stop (and after the lock is free again); unparseable lines skipped.
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import itertools  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

import gevent  # noqa: E402
import gevent.event  # noqa: E402
import gevent.lock  # noqa: E402
import ujson  # noqa: E402
from gevent import os as gos  # noqa: E402

from .scenarios import ScenarioBook  # noqa: E402

BUSY = {"code": 1308, "message": "prompt is running"}
EVENT_LOG_LIMIT = 100_000
# After session/stop the lock is freed after this delay, and the stopped turn
# still emits leftovers (a delta, its turn.completed) after that.
STOP_RELEASE_DELAY = float(os.environ.get("ZCODE_SIM_STOP_DELAY", "0.05"))
LEFTOVER_DELAY = float(os.environ.get("ZCODE_SIM_LEFTOVER_DELAY", "0.1"))
TURN_ID_IN_PAYLOAD = os.environ.get("ZCODE_SIM_TURNID_IN_PAYLOAD") == "1"
# Tests read what the bridge asked for (one JSON line per request) from here.
TRACE_PATH = os.environ.get("ZCODE_SIM_TRACE")
# Sessions persist here (one JSON file each), so a new simulator process finds them.
DATA_DIR = os.environ.get("ZCODE_SIM_DATA")
# Idle sessions are evicted after this many seconds (0: never); calls then answer -32004.
EVICT_AFTER = float(os.environ.get("ZCODE_SIM_EVICT_AFTER", "0"))
# After session/resume the history becomes visible gradually over this long.
HISTORY_FILL = float(os.environ.get("ZCODE_SIM_HISTORY_FILL", "0.15"))
NOT_ACTIVE = (-32004, "Session is not active")
# An unanswered interaction request is re-announced (new id, same requestId) this often.
REANNOUNCE = float(os.environ.get("ZCODE_SIM_REANNOUNCE", "1.0"))
# 0.16+ app-servers removed session/steer and session/rewind (they answer -32601).
WITHOUT = set(os.environ.get("ZCODE_SIM_WITHOUT", "").split(","))
PERSISTED = ("session_id", "workspace", "mode", "model", "thought", "title", "seq", "messages", "todos",
             "turns", "context_used", "updated_at")


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


@dataclass
class SimTurn:
    turn_id: str
    greenlet: Any = None
    stopped: bool = False


@dataclass
class SimTask:
    task_id: str
    tool_call_id: str
    tool_name: str
    description: str
    cancelled: bool = False
    greenlet: Any = None


@dataclass
class SimSession:
    session_id: str
    workspace: dict[str, Any]
    mode: str = "yolo"
    model: str = "glm-5"
    thought: str = "high"
    title: str = "New session"
    seq: int = 0
    subscribed: bool = False
    events: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    todos: list[dict[str, Any]] = field(default_factory=list)
    lock: SimTurn | None = None
    turns: int = 0
    context_used: int = 0
    updated_at: int = field(default_factory=lambda: int(time.time() * 1000))
    failures: dict[str, int] = field(default_factory=dict)
    goal: dict[str, Any] | None = None
    tasks: dict[str, "SimTask"] = field(default_factory=dict)
    active: bool = True
    resumed_at: float = 0.0
    last_used: float = field(default_factory=time.monotonic)

    def visible_messages(self) -> list[dict[str, Any]]:
        """Right after a resume the history fills up gradually (a real backend's quirk)."""
        elapsed = time.monotonic() - self.resumed_at
        if not self.resumed_at or elapsed >= HISTORY_FILL or not self.messages:
            return self.messages
        return self.messages[: int(len(self.messages) * elapsed / HISTORY_FILL)]


class SimServer:
    def __init__(self, wire: Wire, book: ScenarioBook) -> None:
        self.wire = wire
        self.book = book
        self.sessions: dict[str, SimSession] = {}
        self.ids = itertools.count(1_000_000)
        self.waiting: dict[Any, gevent.event.AsyncResult] = {}
        self.frozen = False

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

    def error(self, request_id: Any, code: int, message: str) -> None:
        self.wire.send({"id": request_id, "error": {"code": code, "message": message}})

    def ask_bridge(self, method: str, params: Any, timeout: float = 30) -> Any:
        request_id = next(self.ids)
        waiter = gevent.event.AsyncResult()
        self.waiting[request_id] = waiter
        self.wire.send({"id": request_id, "method": method, "params": params})
        return waiter.get(timeout=timeout)

    def ask_user(self, method: str, params: dict[str, Any], turn: "SimTurn") -> dict[str, Any] | None:
        """Ask the bridge and wait, re-announcing under a new id until someone answers.

        None if the turn was stopped while waiting.
        """
        answer = gevent.event.AsyncResult()
        while True:
            request_id = next(self.ids)
            self.waiting[request_id] = answer
            self.wire.send({"id": request_id, "method": method, "params": params})
            try:
                frame = answer.get(timeout=REANNOUNCE)
            except gevent.Timeout:
                if turn.stopped:
                    return None
                continue
            return frame.get("result") if isinstance(frame.get("result"), dict) else {}

    def dispatch(self, frame: dict[str, Any]) -> None:
        if self.frozen:
            return
        method = frame["method"]
        handler = getattr(self, "m_" + method.replace("/", "_"), None)
        if method.split("/")[-1] in WITHOUT:
            handler = None
        if "id" not in frame:
            return
        if handler is None:
            self.error(frame["id"], -32601, f"Method not found: {method}")
            return
        params = frame.get("params") or {}
        try:
            result = handler(params)
        except SimError as exc:
            self.error(frame["id"], exc.code, exc.message)
            return
        if result is not None:
            self.reply(frame["id"], result)

    # -- events ----------------------------------------------------------------------

    def emit(self, session: SimSession, kind: str, payload: dict[str, Any], turn_id: str | None = None,
             push: bool = True, flush: bool = True) -> dict[str, Any]:
        session.seq += 1
        event: dict[str, Any] = {"sessionId": session.session_id, "seq": session.seq, "type": kind,
                                 "payload": payload}
        if turn_id is not None:
            if TURN_ID_IN_PAYLOAD:
                payload["turnId"] = turn_id
            else:
                event["turnId"] = turn_id
        session.events.append(event)
        if len(session.events) > EVENT_LOG_LIMIT:
            del session.events[: len(session.events) - EVENT_LOG_LIMIT]
        if push and session.subscribed:
            self.wire.send({"method": "session/event", "params": event}, flush=flush)
        return event

    # -- session methods ----------------------------------------------------------------

    def known(self, session_id: Any) -> SimSession | None:
        session = self.sessions.get(session_id)
        if session is None and DATA_DIR and isinstance(session_id, str) and "/" not in session_id:
            path = os.path.join(DATA_DIR, session_id + ".json")
            if os.path.exists(path):
                with open(path, "rb") as handle:
                    data = ujson.loads(handle.read())
                session = SimSession(**{k: v for k, v in data.items() if k in PERSISTED})
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
        data = {key: getattr(session, key) for key in PERSISTED}
        path = os.path.join(DATA_DIR, session.session_id + ".json")
        with open(path + ".tmp", "wb") as handle:
            handle.write(dumps(data))
        os.replace(path + ".tmp", path)

    def m_session_create(self, params: dict[str, Any]) -> dict[str, Any]:
        # Newer backends ask for runtime preferences and block until answered.
        self.ask_bridge("session/requestRuntimePreferences", {})
        session = SimSession(session_id=f"sess_{uuid.uuid4().hex[:12]}", workspace=params.get("workspace") or {},
                             mode=params.get("mode") or "yolo")
        self.sessions[session.session_id] = session
        self.save(session)
        return {"session": {"sessionId": session.session_id, "title": session.title}, "settings": self.settings(session)}

    def settings(self, session: SimSession) -> dict[str, Any]:
        return {
            "mode": {"current": session.mode},
            "model": {"current": {"providerId": "zhipu", "modelId": session.model},
                      "available": [{"providerId": "zhipu", "modelId": "glm-5", "name": "GLM-5"},
                                    {"providerId": "zhipu", "modelId": "glm-5-air", "name": "GLM-5 Air"}]},
            "thoughtLevel": {"current": session.thought,
                             "available": [{"value": "low", "label": "Low"}, {"value": "high", "label": "High"},
                                           {"value": "max", "label": "Max"}]},
        }

    def m_session_list(self, params: dict[str, Any]) -> dict[str, Any]:
        wanted = (params.get("workspace") or {}).get("workspacePath")
        if DATA_DIR and os.path.isdir(DATA_DIR):
            for name in os.listdir(DATA_DIR):
                if name.endswith(".json"):
                    self.known(name[:-5])
        return {"sessions": [
            {"sessionId": s.session_id, "title": s.title, "updatedAt": s.updated_at,
             "workspace": {"workspacePath": s.workspace.get("workspacePath")}}
            for s in self.sessions.values() if wanted in (None, s.workspace.get("workspacePath"))
        ]}

    def m_session_resume(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.known(params.get("sessionId"))
        if session is None:
            raise SimError(-32002, f"session not found: {params.get('sessionId')}")
        if not session.active:
            session.active = True
            session.resumed_at = time.monotonic()
        session.last_used = time.monotonic()
        return {"session": {"sessionId": session.session_id, "workspace": session.workspace},
                "settings": self.settings(session)}

    def m_session_subscribe(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        session.subscribed = True
        result: dict[str, Any] = {"eventSeq": session.seq}
        after = params.get("afterSeq")
        if isinstance(after, int):
            result["events"] = [e for e in session.events if e["seq"] > after]
        return result

    def m_session_read(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        return {
            "projection": {"status": "running" if session.lock else "idle", "contextUsed": session.context_used,
                           "contextWindow": 200_000, "totalTokenCount": session.context_used,
                           "turnCount": session.turns,
                           "currentTurnId": session.lock.turn_id if session.lock else None},
            "settings": self.settings(session),
            "todos": session.todos,
        }

    def m_session_messages(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        messages = session.visible_messages()
        after = params.get("afterMessageId")
        if after:
            ids = [m["info"]["id"] for m in messages]
            messages = messages[ids.index(after) + 1:] if after in ids else []
        limit = params.get("limit")
        if isinstance(limit, int):
            messages = messages[:limit]
        return {"messages": messages}

    def m_session_send(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        if session.lock is not None:
            raise SimError(BUSY["code"], BUSY["message"])
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
        if turn is not None and not turn.stopped:
            turn.stopped = True
            gevent.spawn_later(STOP_RELEASE_DELAY, self.release, session, turn)
        return {"stopped": turn is not None}

    def release(self, session: SimSession, turn: SimTurn) -> None:
        if session.lock is turn:
            session.lock = None

    def m_session_setMode(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        session.mode = params.get("mode") or session.mode
        self.save(session)
        return {"settings": self.settings(session)}

    def m_session_setModel(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        model = params.get("model") or {}
        session.model = model.get("modelId") or session.model
        self.save(session)
        return {"settings": self.settings(session)}

    def m_session_setThoughtLevel(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        session.thought = params.get("thoughtLevel") or session.thought
        self.save(session)
        return {"settings": self.settings(session)}

    # -- extension methods --------------------------------------------------------------------

    def m_session_fork(self, params: dict[str, Any]) -> dict[str, Any]:
        source = self.session(params)
        fork = SimSession(session_id=f"sess_{uuid.uuid4().hex[:12]}", workspace=dict(source.workspace),
                          mode=source.mode, model=source.model, thought=source.thought,
                          title=f"{source.title} (fork)", messages=[dict(m) for m in source.messages],
                          todos=list(source.todos))
        self.sessions[fork.session_id] = fork
        self.save(fork)
        return {"forkedSessionId": fork.session_id}

    def m_session_goal(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        action = params.get("action")
        if action in ("set", "replace"):
            session.goal = {"objective": params.get("objective"), "status": "active"}
        elif action == "clear":
            session.goal = None
        elif action in ("pause", "resume") and session.goal:
            session.goal["status"] = "paused" if action == "pause" else "active"
        self.save(session)
        return {"goal": session.goal}

    def m_session_compact(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        if session.lock is not None:
            raise SimError(BUSY["code"], BUSY["message"])
        turn = SimTurn(turn_id=f"turn_{uuid.uuid4().hex[:12]}")
        session.lock = turn  # the compaction's internal turn holds the session
        self.emit(session, "turn.started", {"inputSource": "compaction", "inputVisibility": "internal"}, turn.turn_id)
        for word in ("Summarizing ", "the ", "conversation."):
            gevent.sleep(0.02)
            self.emit(session, "model.streaming", {"kind": "text_delta", "delta": word}, turn.turn_id)
        self.emit(session, "turn.completed", {"resultType": "success"}, turn.turn_id)
        session.messages = session.messages[-2:]
        session.context_used //= 4
        session.lock = None
        self.state_updated(session, "session_compacted", {})
        return {"compacted": True}

    def m_session_steer(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        if session.lock is None:
            return {"queued": False}
        self.emit(session, "turn.steerQueued", {}, session.lock.turn_id)
        return {"queued": True}

    def m_session_rewind(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        session.messages = session.messages[:-2]
        self.save(session)
        return {"rewound": True}

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
        name, steps = self.book.pick(content)
        user_id = f"msg_{uuid.uuid4().hex[:10]}"
        session.messages.append({"info": {"id": user_id, "role": "user"}, "parts": [{"type": "text", "text": content}]})
        assistant: dict[str, Any] = {"info": {"id": f"msg_{uuid.uuid4().hex[:10]}", "role": "assistant"}, "parts": []}
        session.messages.append(assistant)
        runner = TurnRunner(self, session, turn, assistant["parts"], content)
        self.emit(session, "turn.started", {"inputSource": "user", "inputVisibility": "user", "input": content},
                  turn.turn_id)
        outcome = runner.run(steps)
        self.finish(session, turn, outcome, runner)

    def finish(self, session: SimSession, turn: SimTurn, outcome: str, runner: "TurnRunner") -> None:
        tid = turn.turn_id
        if outcome == "stopped":
            # Quirk: leftovers of a stopped turn arrive after the stop, even after the lock is free.
            gevent.sleep(LEFTOVER_DELAY)
            self.emit(session, "model.streaming", {"kind": "text_delta", "delta": "(leftover)"}, tid)
            self.emit(session, "turn.completed", {"resultType": "cancelled"}, tid)
            return
        if outcome.startswith("failed:"):
            code, _, message = outcome[7:].partition(":")
            self.emit(session, "turn.failed", {"error": {"code": code, "message": message}}, tid)
        elif outcome == "completed":
            usage = {"source": "sim", "modelRequestCount": 1, "inputTokens": 1200 + runner.output_tokens,
                     "outputTokens": runner.output_tokens, "totalTokens": 1200 + 2 * runner.output_tokens,
                     "cacheReadTokens": 1000, "cacheWriteTokens": 0, "reasoningTokens": runner.reasoning_tokens,
                     "webFetchRequests": 0, "webSearchRequests": 0}
            session.context_used += usage["totalTokens"]
            self.emit(session, "session.updated", {"usage": {"inputTokens": session.context_used},
                                                   "contextWindow": 200_000})
            self.emit(session, "turn.completed", {"resultType": "success", "usage": usage}, tid)
        if session.turns == 1 and session.title == "New session":
            session.title = " ".join(runner.prompt.split()[:6]) or "Untitled"
            self.wire.send({"method": "session.titleUpdated",
                            "params": {"sessionId": session.session_id, "title": session.title}})
        self.save(session)
        if runner.evict:
            session.active = False
        if session.lock is turn:
            session.lock = None

    def state_updated(self, session: SimSession, reason: str, patch: dict[str, Any]) -> None:
        self.wire.send({"method": "state.updated",
                        "params": {"sessionId": session.session_id, "reason": reason, "patch": patch}})


class SimError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class TurnRunner:
    """Plays one scenario's steps as events of one turn."""

    def __init__(self, server: SimServer, session: SimSession, turn: SimTurn, parts: list[dict[str, Any]],
                 prompt: str = "") -> None:
        self.server = server
        self.prompt = prompt
        self.evict = False
        self.session = session
        self.turn = turn
        self.parts = parts
        self.output_tokens = 0
        self.reasoning_tokens = 0
        self.tool_ids = itertools.count(1)
        self.last_event: dict[str, Any] | None = None

    def emit(self, kind: str, payload: dict[str, Any], push: bool = True, flush: bool = True) -> None:
        self.last_event = self.server.emit(self.session, kind, payload, self.turn.turn_id, push=push, flush=flush)

    def run(self, steps: list[dict[str, Any]]) -> str:
        for step in steps:
            if step.get("delay"):
                gevent.sleep(float(step["delay"]))
            if self.turn.stopped:
                return "stopped"
            outcome = getattr(self, "step_" + step.get("type", "text"), self.step_unknown)(step)
            if outcome:
                return outcome
            if self.turn.stopped:
                return "stopped"
        return "completed"

    def _text(self, kind: str, text: str, part_type: str) -> None:
        words = text.split(" ")
        for index, word in enumerate(words):
            delta = word + (" " if index < len(words) - 1 else "")
            if delta:
                self.emit("model.streaming", {"kind": kind, "delta": delta})
        self._append_part(part_type, text)

    def _append_part(self, part_type: str, text: str) -> None:
        if self.parts and self.parts[-1]["type"] == part_type:
            self.parts[-1]["text"] += text
        else:
            self.parts.append({"type": part_type, "text": text})

    def step_text(self, step: dict[str, Any]) -> None:
        self._text("text_delta", step.get("text", ""), "text")
        self.output_tokens += len(step.get("text", "")) // 4 + 1

    def step_reasoning(self, step: dict[str, Any]) -> None:
        self._text("reasoning_delta", step.get("text", ""), "reasoning")
        self.reasoning_tokens += len(step.get("text", "")) // 4 + 1

    def step_stream(self, step: dict[str, Any]) -> str | None:
        text = step.get("text", "x")
        interval = float(step.get("interval", 0))
        wire = self.server.wire
        stamp = bool(step.get("stamp"))
        for index in range(int(step.get("count", 1))):
            if self.turn.stopped:
                wire.flush()
                return "stopped"
            # With "stamp", each delta carries the wall-clock time it was written (latency benchmarks).
            delta = f"{time.time():.6f};" if stamp else text
            self.emit("model.streaming", {"kind": "text_delta", "delta": delta}, flush=interval > 0)
            if interval:
                gevent.sleep(interval)
            elif index % 256 == 255:
                wire.flush()
                gevent.sleep(0)  # let requests (a stop) in
        wire.flush()
        self._append_part("text", text * int(step.get("count", 1)))
        self.output_tokens += int(step.get("count", 1))
        return None

    def step_tool(self, step: dict[str, Any]) -> str | None:
        tool_id = step.get("id") or f"call_{self.turn.turn_id[-6:]}_{next(self.tool_ids)}"
        name = step.get("name", "Tool")
        tool_input = step.get("input") or {}
        self.emit("model.streaming", {"kind": "tool_call", "toolCallId": tool_id, "toolName": name,
                                      "input": tool_input})
        self.emit("tool.updated", {"kind": "scheduled", "toolCallId": tool_id, "toolName": name,
                                   "input": tool_input})
        self.emit("tool.updated", {"kind": "started", "toolCallId": tool_id, "inputOmitted": True})
        for tail in step.get("progress") or []:
            gevent.sleep(float(step.get("progressInterval", 0.01)))
            if self.turn.stopped:
                return "stopped"
            self.emit("tool.updated", {"kind": "progress", "toolCallId": tool_id, "stdoutTail": tail})
        if "error" in step:
            self.emit("tool.updated", {"kind": "error", "toolCallId": tool_id, "error": step["error"]})
            output = step["error"]
        else:
            result = step.get("result", "")
            self.emit("tool.updated", {"kind": "result", "toolCallId": tool_id, "result": result})
            output = result
        self.parts.append({"type": "tool", "id": tool_id, "tool": name,
                           "state": {"status": "error" if "error" in step else "completed",
                                     "title": step.get("title"), "input": tool_input, "output": output}})
        return None

    def step_todos(self, step: dict[str, Any]) -> None:
        self.session.todos = list(step.get("todos") or [])

    def step_sleep(self, step: dict[str, Any]) -> None:
        gevent.sleep(float(step.get("seconds", 0.1)))

    def step_fail(self, step: dict[str, Any]) -> str | None:
        key = f"{step.get('code')}:{step.get('message')}"
        seen = self.session.failures.get(key, 0)
        if seen >= int(step.get("times", 1_000_000)):
            return None
        self.session.failures[key] = seen + 1
        return f"failed:{step.get('code', 'internal_error')}:{step.get('message', 'failed')}"

    def step_die(self, step: dict[str, Any]) -> None:
        self.server.wire.flush()
        os._exit(int(step.get("code", 1)))

    def step_hang(self, step: dict[str, Any]) -> str:
        while not self.turn.stopped:
            gevent.sleep(0.05)
        return "stopped"

    def step_freeze(self, step: dict[str, Any]) -> str:
        self.server.frozen = True  # stop answering anything, like a wedged backend
        while True:
            gevent.sleep(3600)

    def step_gap(self, step: dict[str, Any]) -> None:
        # Logged (subscribe {afterSeq} returns it) but never pushed: a hole in the stream.
        self.emit("model.streaming", {"kind": "text_delta", "delta": step.get("text", "")}, push=False)
        self._append_part("text", step.get("text", ""))

    def step_duplicate(self, step: dict[str, Any]) -> None:
        if self.last_event is not None and self.session.subscribed:
            self.server.wire.send({"method": "session/event", "params": self.last_event})

    def _declare(self, name: str, tool_input: dict[str, Any]) -> str:
        tool_id = f"call_{self.turn.turn_id[-6:]}_{next(self.tool_ids)}"
        self.emit("model.streaming", {"kind": "tool_call", "toolCallId": tool_id, "toolName": name, "input": tool_input})
        return tool_id

    def step_permission(self, step: dict[str, Any]) -> str | None:
        name = step.get("tool", "Bash")
        tool_input = step.get("input") or {"command": "rm -rf build/"}
        tool_id = self._declare(name, tool_input)
        kinds = step.get("kinds") or ["allow_once", "allow_project", "deny", "reject"]
        options = [{"optionId": f"opt_{kind}", "kind": kind, "name": kind.replace("_", " ").title()} for kind in kinds]
        answer = self.server.ask_user("interaction/requestPermission", {
            "requestId": f"perm_{tool_id}", "sessionId": self.session.session_id, "toolCallId": tool_id,
            "toolName": name, "reason": "This command changes files.", "input": tool_input, "options": options,
        }, self.turn)
        if answer is None:
            return "stopped"
        if answer.get("decision") == "allow":
            self.emit("tool.updated", {"kind": "started", "toolCallId": tool_id})
            self.emit("tool.updated", {"kind": "result", "toolCallId": tool_id, "result": "done"})
            self.step_text({"text": "Permission granted; done."})
        else:
            self.emit("tool.updated", {"kind": "error", "toolCallId": tool_id,
                                       "error": f"Permission denied: {answer.get('reason')}"})
            self.step_text({"text": f"Permission denied ({answer.get('reason')})."})
        return None

    def step_plan(self, step: dict[str, Any]) -> str | None:
        plan = step.get("plan", "1. Write the tests\n2. Make them pass")
        tool_id = self._declare("ExitPlanMode", {"plan": plan})
        answer = self.server.ask_user("interaction/requestUserInput", {
            "requestId": f"plan_{tool_id}", "sessionId": self.session.session_id, "toolCallId": tool_id,
            "schema": {"interaction": "plan_approval"}, "input": {"plan": plan},
        }, self.turn)
        if answer is None:
            return "stopped"
        if answer.get("action") == "accept":
            self.emit("tool.updated", {"kind": "result", "toolCallId": tool_id, "result": "approved"})
            self.step_text({"text": "Plan approved; starting."})
        else:
            self.emit("tool.updated", {"kind": "error", "toolCallId": tool_id, "error": "rejected"})
            self.step_text({"text": f"Plan rejected: {answer.get('reason')}"})
        return None

    def step_questions(self, step: dict[str, Any]) -> str | None:
        questions = step.get("questions") or [
            {"question": "Which file should I test?", "header": "File",
             "options": [{"label": "auth.test.ts"}, {"label": "user.test.ts"}]}]
        tool_id = self._declare("AskUserQuestion", {"questions": questions})
        answer = self.server.ask_user("interaction/requestUserInput", {
            "requestId": f"ask_{tool_id}", "sessionId": self.session.session_id, "toolCallId": tool_id,
            "questions": questions,
        }, self.turn)
        if answer is None:
            return "stopped"
        if answer.get("action") == "accept":
            answers = (answer.get("content") or {}).get("answers") or {}
            self.emit("tool.updated", {"kind": "result", "toolCallId": tool_id, "result": ujson.dumps(answers)})
            self.step_text({"text": "Answers: " + ujson.dumps(answers, sort_keys=True)})
        else:
            self.emit("tool.updated", {"kind": "error", "toolCallId": tool_id, "error": "declined"})
            self.step_text({"text": f"Questions declined: {answer.get('reason')}"})
        return None

    def step_background(self, step: dict[str, Any]) -> None:
        """Launch a background Bash command or sub-agent; its task outlives this turn."""
        name = step.get("tool", "Bash")
        description = step.get("description", "build the project")
        if name == "Bash":
            tool_input = {"command": step.get("command", "make build"), "run_in_background": True,
                          "description": description}
        else:
            tool_input = {"description": description, "prompt": "do it", "run_in_background": True}
        tool_id = self._declare(name, tool_input)
        self.emit("tool.updated", {"kind": "scheduled", "toolCallId": tool_id, "toolName": name, "input": tool_input})
        self.emit("tool.updated", {"kind": "started", "toolCallId": tool_id})
        task_id = f"{'exec' if name == 'Bash' else 'agent'}_{uuid.uuid4().hex[:8]}"
        if name == "Bash":
            ack = f"Command running in background with ID: {task_id}"
        else:
            ack = f"agentId: {task_id}\noutput_file: /tmp/{task_id}.txt\nThe agent is working in the background."
        self.emit("tool.updated", {"kind": "result", "toolCallId": tool_id, "result": ack})
        task = SimTask(task_id, tool_id, name, description)
        self.session.tasks[task_id] = task
        task.greenlet = gevent.spawn_later(float(step.get("after", 0.05)), self.server.run_task, self.session, task,
                                           list(step.get("output") or ["compiling\n", "linking\n", "done\n"]),
                                           float(step.get("interval", 0.02)), step.get("status", "completed"),
                                           bool(step.get("notify", True)))
        self.parts.append({"type": "tool", "id": tool_id, "tool": name,
                           "state": {"status": "completed", "input": tool_input, "output": ack}})

    def step_history(self, step: dict[str, Any]) -> None:
        """Grow the session's history by ``count`` messages at once (replay benchmarks)."""
        for index in range(int(step.get("count", 1000))):
            role = "user" if index % 2 == 0 else "assistant"
            self.session.messages.append({"info": {"id": f"msg_h{index}_{uuid.uuid4().hex[:6]}", "role": role},
                                          "parts": [{"type": "text", "text": f"{role} message {index}"}]})

    def step_mode(self, step: dict[str, Any]) -> None:
        """The agent switches mode itself (EnterPlanMode / ExitPlanMode)."""
        self.session.mode = step.get("mode", "plan")
        self.server.state_updated(self.session, step.get("reason", "tool_call"), {"mode": {"current": self.session.mode}})

    def step_evict(self, step: dict[str, Any]) -> None:
        """After this turn the backend forgets the session until it is resumed."""
        self.evict = True

    def step_unknown(self, step: dict[str, Any]) -> None:
        self.step_text({"text": f"(zcode-sim: unknown step {step.get('type')!r})"})


def serve(disallowed_tools: list[str] | None = None) -> int:
    server = SimServer(Wire(1), ScenarioBook())
    try:
        return server.serve()
    finally:
        server.wire.flush()
        sys.stderr.flush()
