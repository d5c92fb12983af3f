"""Today's ZCode engine (desktop 3.12+): the ``cli016`` dialect (``ZCODE_SIM_DIALECT=cli016``).

What differs from the seed's app-server, each difference a method here
(docs/simulator.md, Dialects, has the wire shapes):

* server→bridge requests carry string ids (``"server-17"``);
* ``session/create`` checks ``mcpServers`` strictly, then asks
  ``session/requestRuntimePreferences`` with ``{scope:
  "runtime-materialization", sessionId}``; permissions, questions, plan
  approval and the header requests (before each model request, host auth mode
  only) are asked as the engine's source asks them (``sim/interactions_cli016.py``);
* ``session/stop`` only recovers the stream; ``v4/command {type: "stop"}`` stops
  the turn, quoting the ``foregroundExecutionId`` of ``turn.started``;
  ``v4/command {type: "sendText", requestedDelivery: "guide"}`` steers a running
  turn (``session/steer`` and ``session/rewind`` are gone); every v4 request is the
  data plane's (``sim/v4/``, wired in by ``sim/cli016_v4.py``);
* the title is a ``session.titleUpdated`` event; history uses ``messageId``,
  ``semantics.kind``, ``partId``/``callId``; the model catalog is keyed by
  ``ref`` with per-model reasoning levels that ``session/setModel`` enforces;
* goal actions are ``show|set|replace|pause|resume|clear``; compaction is slow (busy ``-32010``
  meanwhile) and answers ``{response}``; ``session/usage`` is cumulative while
  ``session/read → runtime.contextUsage.used`` is the occupancy;
  ``session/close`` ends a turn at once and sends no ``session.closed``; a resume under another
  workspace key loses the session's model; slash commands come from
  ``workspace/readPresentation`` (``sim/cli016_workspace.py``), the snapshot and a
  ``workspace-config`` topic of the v4 conversation API;
* session level (``sim/snapshot.py``, ``sim/strict.py``): params checked as the zod ``.strict()``
  schemas do; create/resume answer the whole snapshot, read and set* the current model only,
  each change a ``state.updated`` with its revision; an unknown session is ``-32004``.
"""

from __future__ import annotations

import itertools
import os
import sys
import time
import uuid
from typing import TYPE_CHECKING, Any

import gevent

from . import catalog, provider_limits, snapshot, strict, cli016_events
from .dialect import Dialect
from .history import present_all
from .interactions_cli016 import Cli016Interactions
from .mcp_schema import check_mcp_servers
from .model import SimError, SimSession, SimTurn, hex_id
from .scenarios import ScenarioBook
from .server import PERSISTED, TRACE_PATH, SimServer
from .cli016_session_methods import USAGE_KEYS, Cli016SessionMethods
from .cli016_v4 import Cli016V4
from .cli016_workspace import BUILTIN_COMMANDS, WorkspaceMethods, user_commands
from .wire import Wire, dumps

if TYPE_CHECKING:
    from .runner import TurnRunner

BUSY_TODAY = {"code": -32010, "message": "A prompt is already running for this session"}
# Every turn.started before the session/send answer (a #sim line's early=1 does it for one turn).
EARLY_START = os.environ.get("ZCODE_SIM_EARLY_START") == "1"
# Without its provider configuration files a desktop engine exits at start or hangs on create.
PROVIDER_CONFIG = os.environ.get("ZCODE_SIM_PROVIDER_CONFIG", "ignore")
PROVIDER_FILES = ("ZCODE_BUILTIN_PROVIDER_CONFIG_FILE", "ZCODE_PERSONAL_PROVIDER_CONFIG_FILE")
SYSTEM_TOKENS = 1000


class Cli016SimServer(Cli016SessionMethods, Cli016V4, Cli016Interactions, WorkspaceMethods, SimServer):
    busy = BUSY_TODAY
    persisted = PERSISTED + ("usage_total", "revision", "trace_id", "created_at")

    def __init__(self, wire: Wire, book: ScenarioBook, dialect: Dialect) -> None:
        super().__init__(wire, book, dialect)
        self.removed |= {"steer", "rewind", "rewindCascade"}  # removed in 0.16
        self.removed_prefixes = ("automation/",)  # removed in 0.16.5
        self.mcp_connected: dict[str, dict[str, Any]] = {}  # workspace key → MCP servers mcp/list connected
        self.server_ids = itertools.count(1)
        self.create_hangs = False
        self.rules = {}
        self.attachments = {}
        self.preferences = {}
        self.live_turns: dict[str, SimTurn] = {}  # turn id → turn, until its end event went out
        self.events = cli016_events.Cli016Events()  # tool/turn payloads in the strict schemas' shapes

    def check_params(self, method: str, params: Any) -> None:
        strict.check(method, params)

    def session(self, params: dict[str, Any]) -> SimSession:
        """An unknown session is "not active" (-32004), as the engine's requireSession says."""
        if self.known(params.get("sessionId")) is None:
            raise SimError(-32004, f"Session is not active: {params.get('sessionId')}")
        session = super().session(params)
        expected = params.get("expectedRevision")
        if isinstance(expected, int) and expected != session.revision:
            raise SimError(-32009, "Session state revision mismatch",
                           {"actualRevision": session.revision, "expectedRevision": expected})
        return session

    def next_request_id(self) -> Any:
        return f"server-{next(self.server_ids)}"

    def ready_to_start(self) -> bool:
        """Check the provider configuration the way a desktop engine does (false: exit now)."""
        env = {name: os.environ.get(name) for name in PROVIDER_FILES}
        if TRACE_PATH:
            with open(TRACE_PATH, "ab") as trace:
                trace.write(dumps({"start": {"dialect": self.dialect.name, "version": self.dialect.version,
                                             "env": env}}))
        missing = [name for name, value in env.items() if not value or not os.path.isfile(value)]
        if missing and PROVIDER_CONFIG == "exit":
            sys.stderr.write("zcode: provider configuration not found; set " + " and ".join(missing) + "\n")
            return False
        self.create_hangs = bool(missing) and PROVIDER_CONFIG == "hang"
        return True

    def emit(self, session: SimSession, kind: str, payload: dict[str, Any], turn_id: str | None = None,
             push: bool = True, flush: bool = True) -> dict[str, Any]:
        if kind in ("turn.completed", "turn.failed"):
            payload = self.turn_end(kind, payload, self.live_turns.pop(turn_id or "", None))
        elif kind == "tool.updated":
            payload = self.events.tool_updated(payload, int(time.time() * 1000))
        elif kind == "turn.started":
            payload = cli016_events.turn_started(payload, session.turns)
        return super().emit(session, kind, payload, turn_id, push=push, flush=flush)

    @staticmethod
    def turn_end(kind: str, payload: dict[str, Any], turn: SimTurn | None) -> dict[str, Any]:
        """The end events with every field today's strict schemas require (docs/simulator.md, item 21)."""
        body = dict(payload)
        if turn is not None and turn.input_id:
            body["inputId"] = turn.input_id
        if kind == "turn.failed":
            error = dict(body.get("error") or {})
            error.setdefault("type", provider_limits.error_type(error.get("code"))
                             or str(error.get("code") or "execution_error"))
            error["message"] = error.get("message") or "The turn failed"
            body["error"] = error
            body.setdefault("turnPhase", "model_request")
            return body
        body.setdefault("response", turn.response if turn is not None else "")
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        body.setdefault("tokenCount", int(usage.get("totalTokens", 0)))
        body.setdefault("toolCallCount", turn.tool_calls if turn is not None else 0)
        body.setdefault("duration", round(time.monotonic() - turn.began, 3) if turn is not None else 0)
        return body

    def envelope(self, session: SimSession, kind: str, payload: dict[str, Any],
                 turn_id: str | None) -> dict[str, Any]:
        """``{eventId, sessionId, turnId?, seq, traceId?, timestamp, deliveryKind?, type, payload}``."""
        event = super().envelope(session, kind, payload, turn_id)
        event["eventId"] = str(uuid.uuid4())
        event["timestamp"] = int(time.time() * 1000)
        if session.trace_id:
            event["traceId"] = session.trace_id
        if session.delivery_kind:
            event["deliveryKind"] = session.delivery_kind
        return event

    # -- session state: revisions and state.updated -------------------------------------------

    def state_updated(self, session: SimSession, reason: str, patch: Any = None) -> int:
        """Count one state change and announce it; returns the new revision.

        ``patch=None`` sends what a set* sends: the settings listing only the current model.
        Every dialect module calls this after a change (prompts: ``{"status": "running"}``).
        """
        session.revision += 1
        if patch is None:
            patch = snapshot.settings(session, "current")
        params = snapshot.state_updated(session, reason, patch)
        self.wire.send({"method": "state.updated", "params": params})
        self.feed_state(session, params)
        return session.revision

    def agent_changed_mode(self, session: SimSession, reason: str) -> None:
        """As every other change: the patch is the current-only settings."""
        self.state_updated(session, reason)

    def snapshot(self, session: SimSession, availability: snapshot.Availability,
                 limit: int | None = None) -> dict[str, Any]:
        """The session's state snapshot (create/resume: the whole catalog; read and set*: current only).

        ``limit`` keeps the last messages only, presented as in the whole history (their parents)."""
        shown = session.visible_messages()
        key = str(session.workspace.get("workspaceKey") or "")
        commands = BUILTIN_COMMANDS + user_commands(self.workspace_path(key)) if key else list(BUILTIN_COMMANDS)
        presented = present_all(shown, session.session_id, str(session.workspace.get("workspacePath") or "/"))
        if limit is not None:
            presented = presented[len(presented) - limit:] if limit else []
        return snapshot.snapshot(session, availability, presented, commands)

    def m_session_subscribe(self, params: dict[str, Any]) -> dict[str, Any]:
        result = super().m_session_subscribe(params)
        session = self.session(params)
        kind = params.get("deliveryKind")
        if isinstance(kind, str) and kind:
            session.delivery_kind = kind  # echoed on every event from now on
        result["sessionId"] = session.session_id
        result.setdefault("events", [])
        if params.get("includeSnapshot") is True:
            result["snapshot"] = self.snapshot(session, "current")
        return result

    # -- create, resume, list, close ------------------------------------------------------

    def m_session_create(self, params: dict[str, Any]) -> dict[str, Any] | None:
        check_mcp_servers(params.get("mcpServers"))
        if self.create_hangs:
            return None  # never answered, as a desktop engine without its provider files does
        entry = catalog.find(catalog.PROVIDER, catalog.DEFAULT_MODEL)
        now = int(time.time() * 1000)
        session = SimSession(session_id=f"sess_{hex_id()}", workspace=params.get("workspace") or {},
                             mode=params.get("mode") or "yolo", model=catalog.DEFAULT_MODEL,
                             thought=catalog.default_level(entry), title="", trace_id=f"trace_{hex_id()}",
                             created_at=now, updated_at=now)
        session.mcp_servers = list(params.get("mcpServers") or [])  # registered only: mcp/list connects them
        # Provider headers are asked before each model request, not here (interactions_cli016.py).
        self.remember_preferences(session, self.ask_bridge(
            "session/requestRuntimePreferences", {"scope": "runtime-materialization", "sessionId": session.session_id}))
        self.sessions[session.session_id] = session
        self.save(session)
        self.register_v4(session)
        return self.snapshot(session, "all")

    def m_session_list(self, params: dict[str, Any]) -> dict[str, Any]:
        """``{sessions: [session info]}``: each entry as the snapshot's ``session`` (its whole workspace)."""
        result = super().m_session_list(params)
        return {"sessions": [snapshot.session_info(self.sessions[entry["sessionId"]]) for entry in result["sessions"]]}

    def m_session_resume(self, params: dict[str, Any]) -> dict[str, Any]:
        check_mcp_servers(params.get("mcpServers"))
        if self.known(params.get("sessionId")) is None:
            raise SimError(-32004, f"Session not found: {params.get('sessionId')}")
        super().m_session_resume(params)
        session = self.sessions[params["sessionId"]]
        given = params.get("workspace")
        # Resumed under another workspace key, the session's model selection is not found.
        session.model_lost = isinstance(given, dict) and given.get("workspaceKey") != session.workspace.get("workspaceKey")
        if isinstance(given, dict) and not session.model_lost:
            session.workspace = dict(given)  # the record takes the workspace as given (workspaceIdentity too)
        if params.get("mcpServers"):
            session.mcp_servers = list(params["mcpServers"])
        if isinstance(params.get("thoughtLevel"), str) and params["thoughtLevel"] in catalog.levels(
                catalog.find(catalog.PROVIDER, session.model)):
            session.thought = params["thoughtLevel"]
        self.register_v4(session)
        return self.snapshot(session, "all")

    def m_session_close(self, params: dict[str, Any]) -> dict[str, Any]:
        result = self.close_session(params)
        self.closed_v4(params["sessionId"])
        return result

    def close_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """The close itself (a v4 ``deleteSession`` closes too, and removes the session from the plane)."""
        session = self.known(params.get("sessionId"))
        if session is None:
            raise SimError(-32004, f"Session is not active: {params.get('sessionId')}")
        turn = session.lock
        if turn is not None:
            turn.closed = turn.stopped = True
            session.lock = None
            self.live_turns.pop(turn.turn_id, None)  # a closed turn sends no end event
        session.queue.clear()
        # The engine unsubscribes before it closes: no session.closed reaches the host.
        session.active = session.subscribed = False
        self.save(session)
        return {"closed": True}

    # -- settings and models ----------------------------------------------------------------

    def settings(self, session: SimSession) -> dict[str, Any]:
        return snapshot.settings(session, "current")

    # -- turns ----------------------------------------------------------------------------------

    def m_session_send(self, params: dict[str, Any]) -> dict[str, Any]:
        """Accepted after ``state.updated {reason: "prompt_started"}``; refused, never merged, while busy."""
        session = self.session(params)
        if session.lock is not None:
            raise SimError(self.busy["code"], self.busy["message"])
        content = params.get("content") or ""
        self.take_attachments(session, params.get("attachments"))  # what the engine can read of them
        early = EARLY_START or self.book.options(content)[1].get("early") == "1"
        input_id = params.get("inputId") if isinstance(params.get("inputId"), str) and params.get("inputId") else None
        self.start_turn(session, content, early, input_id)
        revision = self.state_updated(session, "prompt_started", {"status": "running"})
        return {"accepted": True, "sessionId": session.session_id, "stateRevision": revision}

    def start_turn(self, session: SimSession, content: str, early: bool = False,
                   input_id: str | None = None) -> SimTurn:
        turn = SimTurn(turn_id=f"turn_{hex_id()}", execution_id=f"exec_{hex_id()}", input_id=input_id)
        self.live_turns[turn.turn_id] = turn
        session.lock = turn
        session.turns += 1
        session.updated_at = int(time.time() * 1000)
        if early:
            self.turn_started(session, turn, content)  # quirk: before the send's answer
        turn.greenlet = gevent.spawn_later(0, self.run_turn, session, turn, content)
        return turn

    def run_turn(self, session: SimSession, turn: SimTurn, content: str) -> None:
        if session.model_lost:
            self.turn_started(session, turn, content)
            self.emit(session, "turn.failed", {"error": {"code": "CONFIGURATION_ERROR",
                                                         "message": "Select a model before continuing",
                                                         "detail": "Model creation failed"}}, turn.turn_id)
            self.release(session, turn)
            return
        refused = self.model_request_refused(session, turn)  # host auth mode: the host's headers first
        if refused:
            self.turn_started(session, turn, content)
            self.emit(session, "turn.failed", {"error": {"type": "ProviderRuntimeHeadersUnavailable",
                                                         "code": "-32031", "message": refused},
                                               "turnPhase": "model_request"}, turn.turn_id)
            self.release(session, turn)
            return
        super().run_turn(session, turn, content)

    def turn_started(self, session: SimSession, turn: SimTurn, content: str) -> None:
        if turn.announced:
            return
        turn.announced = True
        if session.turns == 1 and not session.title:
            session.title = self.book.title(content)
            self.emit(session, "session.titleUpdated", {"previousTitle": "", "source": "first_input",
                                                        "title": session.title})
        # A user's turn names no inputSource: the engine's enum lists only synthetic sources
        # (background_task, subagent, goal-continuation, …); visibility is user-visible | model-only.
        started = {"turnNumber": session.turns - 1, "inputVisibility": "user-visible",
                   "input": content, "foregroundExecutionId": turn.execution_id, **self.attachments_shown(session)}
        if turn.input_id:
            started["inputId"] = turn.input_id
        self.emit(session, "turn.started", started, turn.turn_id)
        self.say_attachments(session, turn)
        # The engine stores the user's message once and announces it; a host never sends it again.
        self.emit(session, "message.upserted", {"content": content, "type": "user"}, turn.turn_id)

    def announce_title(self, session: SimSession, runner: TurnRunner) -> None:
        """The title went out as an event when the first turn started."""

    def finish(self, session: SimSession, turn: SimTurn, outcome: str, runner: TurnRunner) -> None:
        if outcome == "stopped" or turn.closed:
            session.queue.clear()  # a stopped turn takes what was queued behind it along
        else:
            session.queue.extend(guide["text"] for guide in turn.guides)  # too late to steer: queued instead
        turn.guides.clear()
        super().finish(session, turn, outcome, runner)

    def after_turn(self, session: SimSession) -> None:
        super().after_turn(session)  # the v4 plane's part first (sim/cli016_v4.py)
        if session.queue and session.lock is None and session.active:
            self.start_turn(session, session.queue.pop(0))

    def account(self, session: SimSession, runner: TurnRunner) -> dict[str, Any]:
        """Occupancy (context_used) grows by what the turn added; session/usage adds every request's input."""
        before = session.context_used or SYSTEM_TOKENS
        prompt_tokens = len(runner.prompt) // 4 + 1
        usage = {"source": "sim", "modelRequestCount": 1, "inputTokens": before + prompt_tokens,
                 "outputTokens": runner.output_tokens, "totalTokens": before + prompt_tokens + runner.output_tokens,
                 "cacheReadTokens": before, "cacheWriteTokens": 0, "reasoningTokens": runner.reasoning_tokens,
                 "webFetchRequests": 0, "webSearchRequests": 0}
        session.context_used = before + prompt_tokens + runner.output_tokens
        total = session.usage_total
        for key in USAGE_KEYS:
            total[key] = total.get(key, 0) + int(usage.get(key, 0))
        self.emit(session, "session.updated", {"usage": {"inputTokens": session.context_used},
                                               "contextWindow": catalog.context_window(session.model)})
        return usage

    def m_session_stop(self, params: dict[str, Any]) -> dict[str, Any]:
        """Deprecated: hands the input to the v4 foreground execution and does nothing to a running send turn."""
        self.session(params)
        return {}

    # -- v4: the data plane answers (sim/cli016_v4.py); the steers it admits are absorbed here ------------

    def absorb_guides(self, session: SimSession, turn: SimTurn, runner: TurnRunner) -> None:
        while turn.guides:
            guide = turn.guides.pop(0)
            message_id = f"msg_{hex_id(10)}"
            session.messages.append({"info": {"id": message_id, "role": "user"},
                                     "parts": [{"type": "text", "text": guide["text"]}]})
            self.emit(session, "turn.steerDrained", {
                "pendingInputIds": [guide["inputId"]], "targetTurnId": turn.turn_id, "injectedMessageIds": [message_id],
                "drainedInputs": [{"pendingInputId": guide["inputId"], "messageId": message_id, "text": guide["text"],
                                   "delivery": "guide", "intent": guide["intent"]}]}, turn.turn_id)
            runner.step_text({"text": f"[steered: {guide['text']}] "})

    def workspace_path(self, key: str) -> str:
        for session in self.sessions.values():
            if session.workspace.get("workspaceKey") == key:
                return str(session.workspace.get("workspacePath") or key)
        return key

    # -- history, usage ------------------------------------------------------------------------

    # -- goal, compaction -------------------------------------------------------------------------

    def m_session_cancelBackgroundTask(self, params: dict[str, Any]) -> dict[str, Any]:
        """``{cancelled, status, taskId}``: the task's status after the cancel."""
        super().m_session_cancelBackgroundTask(params)
        return {"cancelled": True, "status": "cancelled", "taskId": params["taskId"]}




