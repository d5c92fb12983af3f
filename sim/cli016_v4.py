"""The 0.16 engine serves its v4 data plane: the wiring between ``sim/v4/`` and the cli016 server.

``Cli016V4`` is mixed into ``Cli016SimServer``. It builds the ``DataPlane`` with a
``Cli016Port`` (sim/cli016_port.py) and the server's pipe, then:

* answers every method the plane serves (``v4/conversation/*``, ``v4/command``,
  ``v4/commands/query``, ``v4/attachment/*``) through ``plane.dispatch``: one answer
  per request, the frames it caused after it;
* feeds the plane every legacy event the server emits, every ``state.updated``, and
  ``userInput.requested|resolved`` for the questions the engine asks as requests
  (permissions are already events); a compaction's ``turn.started`` is fed with
  ``inputSource: compaction``, which the legacy event does not carry;
* keeps two of the legacy engine's captured quirks the plane does not play: a
  ``sendText`` to a session made by ``session/create`` that has had no send yet fails
  with SQLite's foreign-key error (its row is written by the first send), and so does
  a guided one a ``#sim steer_fk`` armed;
* lets a v4 ``resolveInteraction`` answer the very request the legacy host was asked,
  and ticks the plane's countdowns;
* runs a finished background task's result turn on a v4 conversation only once the
  running turn ended (one turn at a time, as ``control`` says), not interleaved with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import gevent
import gevent.event

from .model import SimError, SimSession, SimTurn
from .cli016_port import Cli016Port, seed_of
from .cli016_workspace import BUILTIN_COMMANDS, user_commands
from .v4.errors import V4Error
from .v4.plane import DataPlane, wall_clock_ms
from .v4.rebuild import rebuild
from .interactions_cli016 import official_options

if TYPE_CHECKING:
    from .wire import Wire

FOREIGN_KEY = {"status": "failed", "reasonCode": "fault.command.executionFailed",
               "message": "SqliteError: FOREIGN KEY constraint failed"}
TICK_SECONDS = 0.25
COALESCE_TICK_SECONDS = 0.01
"""How often the plane's interaction countdowns are looked at."""
# A v4 permission option → the official option of the legacy request (interactions_cli016.py).
LEGACY_OPTION = {"allow_once": "allow_once", "allow_always": "allow_project", "deny": "deny"}


@dataclass(slots=True)
class Asked:
    """A request the engine asked the host and still waits on (re-announced under new ids)."""

    method: str
    params: dict[str, Any]
    answer: gevent.event.AsyncResult


def legacy_answer(asked: Asked, answer: dict[str, Any]) -> dict[str, Any]:
    """A v4 ``resolveInteraction`` answer, spelled as the legacy request's strict answer."""
    if asked.method == "interaction/requestPermission":
        wanted = LEGACY_OPTION.get(str(answer.get("optionId")), "deny")
        options = official_options(str(asked.params.get("toolName") or ""), asked.params.get("input"))
        response = dict(next(o["response"] for o in options if o["optionId"] == wanted))
        free_text = answer.get("freeText")
        if response["decision"] == "deny" and isinstance(free_text, str) and free_text.strip():
            response["reason"] = free_text
        return response
    action = answer.get("action")
    content = answer.get("content")
    free_text = answer.get("freeText")
    if not isinstance(content, dict):
        content = {"answer": free_text} if isinstance(free_text, str) else None
    reply: dict[str, Any] = {"action": action if action in ("accept", "decline", "cancel") else
                             ("accept" if content is not None else "decline")}
    if content is not None:
        reply["content"] = content
    return reply


class Cli016V4:
    """Mixed into ``Cli016SimServer`` (before ``SimServer`` in its bases)."""

    if TYPE_CHECKING:  # provided by the server
        wire: Wire
        sessions: dict[str, SimSession]
        frozen: bool
        dialect: Any

        def known(self, session_id: Any) -> SimSession | None: ...
        def check_params(self, method: str, params: Any) -> None: ...
        def reply(self, request_id: Any, result: Any) -> None: ...
        def error(self, request_id: Any, code: int, message: str, data: Any = None) -> None: ...
        def workspace_path(self, key: str) -> str: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.plane = DataPlane(Cli016Port(self), self.send_v4, slash_commands=list(BUILTIN_COMMANDS),  # type: ignore[arg-type]
                               newer_source=self.dialect.newer_v4_source)
        self.asked: dict[str, Asked] = {}
        self.turn_marks: dict[str, dict[str, int]] = {}  # session → turn id → index of its user message
        self.v4_made: set[str] = set()  # sessions made by v4 createSession, a fork or resumed (their rows exist)
        self.todos_fed: dict[str, list[Any]] = {}  # session → the todos its conversation's ``plan`` shows
        self.ticker: Any = None

    def send_v4(self, frame: dict[str, Any]) -> None:
        self.wire.send(frame)

    # -- requests ---------------------------------------------------------------------------

    def dispatch(self, frame: dict[str, Any]) -> None:
        method = frame.get("method")
        if not isinstance(method, str) or not self.plane.handles(method):
            super().dispatch(frame)  # type: ignore[misc]
            return
        if self.frozen or "id" not in frame:
            return
        request_id = frame["id"]
        if self.dialect.too_old_for(method):
            self.error(request_id, -32601, f"Method not found: {method}")
            return
        params = frame.get("params")
        if params is None:
            params = {}
        try:
            self.check_params(method, params)
        except SimError as exc:
            self.error(request_id, exc.code, exc.message, exc.data)
            return
        self.start_ticking()
        if method == "v4/conversation/subscribe" and isinstance(params, dict):
            self.show_slash_commands(params.get("topic"))
            self.show_stored_sessions(params.get("topic"))
        quirk = self.legacy_quirk(method, params)
        if quirk is not None:
            self.reply(request_id, quirk)
            return

        def respond(result: dict[str, Any] | None, error: V4Error | None) -> None:
            if error is not None:
                self.error(request_id, error.code, error.message, error.data)
            else:
                self.reply(request_id, result)
                self.after_ack(method, params, result or {})

        self.plane.dispatch(method, params, respond)

    def legacy_quirk(self, method: str, params: Any) -> dict[str, Any] | None:
        """The captured foreign-key failures of ``sendText`` (an ack), or None: the plane decides."""
        if method != "v4/command" or not isinstance(params, dict) or params.get("type") != "sendText":
            return None
        session_id, command_id = params.get("sessionId"), params.get("commandId")
        session = self.known(session_id)
        payload: dict[str, Any] = params["payload"] if isinstance(params.get("payload"), dict) else {}
        if session is None or not isinstance(command_id, str) or not isinstance(payload.get("text"), str) or \
                self.plane.decided(session.session_id, command_id):
            return None
        rowless = session.turns == 0 and session.session_id not in self.v4_made
        armed = session.lock is not None and payload.get("requestedDelivery") == "guide" and session.fk_once
        if not (rowless or armed):
            return None
        if armed:
            session.fk_once = False
        projection = self.plane.sessions.get(session.session_id)
        ack = {"commandId": command_id, "revisionAtDecision": projection.revision if projection else 0, **FOREIGN_KEY}
        self.plane.record_decision(session.session_id, ack)
        return ack

    def after_ack(self, method: str, params: Any, result: dict[str, Any]) -> None:
        """A ``sendText`` the plane queued: the engine announces it as ``turn.steerQueued`` (no delivery)."""
        if method != "v4/command" or result.get("status") != "accepted" or params.get("type") != "sendText":
            return
        accepted = result.get("result") or {}
        session = self.known(params.get("sessionId"))
        if accepted.get("delivery") != "queue" or session is None:
            return
        text = str((params.get("payload") or {}).get("text") or "")
        input_id = str(accepted.get("inputId") or "")
        queued: dict[str, Any] = {"inputId": input_id, "pendingInputId": input_id, "input": text,
                                  "inputPreview": text[:80], "inputSize": len(text), "commandKind": "sendText",
                                  "intent": {"sourceCommandId": params.get("commandId"),
                                             "requestedDelivery": (params.get("payload") or {}).get("requestedDelivery"),
                                             "admittedDelivery": "queue"}}
        turn = session.lock
        if turn is not None:
            queued["targetTurnId"] = turn.turn_id
        projection = self.plane.sessions.get(session.session_id)
        queued["queueLength"] = len(projection.state["queue"]["items"]) if projection else 1
        self.emit(session, "turn.steerQueued", queued, turn.turn_id if turn else None)

    def show_slash_commands(self, topic: Any) -> None:
        """A workspace's config topic lists the engine's commands and the workspace's own."""
        if isinstance(topic, str) and topic.startswith("workspace-config/"):
            key = topic.partition("/")[2]
            _, config = self.plane.sessions.workspace(key)
            commands = BUILTIN_COMMANDS + user_commands(self.workspace_path(key))
            config.update({**config.config, "slashCommands": commands})

    def show_stored_sessions(self, topic: Any) -> None:
        """A workspace's index lists every session of the workspace the store keeps, not only the
        ones in memory (a new engine process holds none): those get a line of their own, idle."""
        if not (isinstance(topic, str) and topic.startswith("sessions-index/")):
            return
        key = topic.partition("/")[2]
        self.m_session_list({})  # the store's sessions, loaded as known (inactive until resumed)
        index, _ = self.plane.sessions.workspace(key)
        for session in list(self.sessions.values()):
            workspace_key = session.workspace.get("workspaceKey") or session.workspace.get("workspacePath")
            if workspace_key != key or self.plane.sessions.get(session.session_id) is not None or \
                    session.session_id in index.sessions:
                continue
            index.upsert({"sessionId": session.session_id, "workspaceId": key, "title": session.title,
                          "titleSource": "generated", "sessionEnded": False,
                          # a stored summary's phase is one of snapshot.ts's phases ("idle" is none of them)
                          "phase": "completedSuccess" if session.turns else "draft",
                          "hasBackgroundWork": False, "createdAt": int(session.created_at or session.updated_at),
                          "lastActivityAt": int(session.updated_at)})

    # -- sessions and events ------------------------------------------------------------------

    def register_v4(self, session: SimSession) -> None:
        """A session made or resumed by the legacy methods is served on v4 too; one the plane did not
        hold (a new engine process, a fork) shows the history the store keeps (sim/v4/rebuild.py)."""
        key = str(session.workspace.get("workspaceKey") or session.workspace.get("workspacePath") or "")
        held = self.plane.sessions.get(session.session_id) is not None
        projection = self.plane.register_session(seed_of(session), key)
        if not held and session.messages:
            rebuild(projection, session.messages, todos=session.todos, used_tokens=session.context_used or None)
        self.show_slash_commands(f"workspace-config/{key}")

    def after_turn(self, session: SimSession) -> None:
        """A session the engine let go of after its turn (``#sim evict``) leaves the plane's memory too:
        the installed engine answers a v4 command to such a cold session ``proto.sessionNotFound``
        (its gateway looks in memory only), so the client resumes it first."""
        if not session.active:
            self.plane.sessions.let_go(session.session_id)

    def m_session_resume(self, params: dict[str, Any]) -> dict[str, Any]:
        """A session the engine can resume has its row: only a session made by ``session/create``
        in this process, with no send yet, lives in memory alone (a new process never sees one)."""
        held = self.sessions.get(params.get("sessionId"))  # type: ignore[arg-type]
        from_disk = held is not None and not held.active  # read back from the store (known()), not yet resumed
        result: dict[str, Any] = super().m_session_resume(params)  # type: ignore[misc]
        if from_disk:
            self.v4_made.add(str(params.get("sessionId")))
        return result

    def closed_v4(self, session_id: str) -> None:
        """A closed session leaves the engine's memory with its runtime (a turn it ran is ended, not
        ended by an event): its conversation is no longer served, and a resume reads it back from
        the store, idle, as after any let-go (``after_turn``)."""
        self.plane.sessions.let_go(session_id)

    def m_session_fork(self, params: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = super().m_session_fork(params)  # type: ignore[misc]
        fork = self.sessions.get(str(result.get("forkedSessionId")))
        if fork is not None:
            self.v4_made.add(fork.session_id)  # the fork's copied history is written: its row exists
            self.register_v4(fork)
        return result

    def emit(self, session: SimSession, kind: str, payload: dict[str, Any], turn_id: str | None = None,
             push: bool = True, flush: bool = True) -> dict[str, Any]:
        event: dict[str, Any] = super().emit(session, kind, payload, turn_id, push=push, flush=flush)  # type: ignore[misc]
        self.feed_todos(session)
        fed = event
        compaction = session.compaction
        if kind == "turn.started" and compaction is not None and compaction.turn_id == turn_id:
            fed = {**event, "payload": {**event["payload"], "inputSource": "compaction"}}
        self.plane.feed(session.session_id, fed)
        return event

    def feed_todos(self, session: SimSession) -> None:
        """The turn wrote its todos (a scenario's ``todos`` step): the engine's ``plan`` follows them, live."""
        if session.todos != self.todos_fed.get(session.session_id, []):
            self.todos_fed[session.session_id] = list(session.todos)
            self.plane.feed(session.session_id, {"type": "state.updated", "payload": {"patch": {"todos": session.todos}}})

    def feed_state(self, session: SimSession, params: dict[str, Any]) -> None:
        self.plane.feed(session.session_id, {"type": "state.updated", "payload": params})

    def run_turn(self, session: SimSession, turn: SimTurn, content: str) -> None:
        # Where the turn's history begins: a retry or an edit cuts it from there, a fork copies up to it.
        self.turn_marks.setdefault(session.session_id, {})[turn.turn_id] = len(session.messages)
        super().run_turn(session, turn, content)  # type: ignore[misc]

    # -- background results ------------------------------------------------------------------------

    def notify(self, session: SimSession, task: Any, status: str) -> None:
        """A finished background task's result turn. On a v4 conversation the engine runs one turn at
        a time (``control`` has one phase): the result waits for the running turn, then gets a turn
        of its own (``turnHeader.origin: backgroundResult``), never one interleaved with the user's."""
        if session.session_id in self.v4_made:
            while session.lock is not None:
                gevent.sleep(TICK_SECONDS / 5)  # the engine's own scheduler: look again when a turn may have ended
        super().notify(session, task, status)  # type: ignore[misc]

    # -- interactions ------------------------------------------------------------------------------

    def ask_user(self, method: str, params: dict[str, Any], turn: SimTurn,
                 resolve_after: tuple[float, dict[str, Any]] | None = None) -> dict[str, Any] | None:
        request_id = str(params.get("requestId") or "")
        session_id = str(params.get("sessionId") or "")
        asked = Asked(method, params, gevent.event.AsyncResult())
        self.asked[request_id] = asked
        question = method == "interaction/requestUserInput"
        if question:
            shown: dict[str, Any] = {key: params[key] for key in ("requestId", "toolCallId", "toolName", "prompt", "questions")
                     if key in params}
            if resolve_after is not None:
                shown["autoResolveMs"] = int(resolve_after[0] * 1000)
            self.plane.feed(session_id, {"type": "userInput.requested", "payload": shown, "turnId": turn.turn_id})
        try:
            answered: dict[str, Any] | None = super().ask_user(  # type: ignore[misc]
                method, params, turn, resolve_after, answer=asked.answer)
            return answered
        finally:
            self.asked.pop(request_id, None)
            if question:
                self.plane.feed(session_id, {"type": "userInput.resolved", "payload": {"requestId": request_id},
                                             "turnId": turn.turn_id})

    def answer_asked(self, request_id: str, answer: dict[str, Any]) -> None:
        """A v4 answer to a request the host was asked: the first answer wins, as with the host's own."""
        asked = self.asked.get(request_id)
        if asked is not None and not asked.answer.ready():
            asked.answer.set({"result": legacy_answer(asked, answer)})

    # -- countdowns ---------------------------------------------------------------------------------

    def start_ticking(self) -> None:
        if self.ticker is None:
            self.ticker = gevent.spawn(self._tick_forever)

    def _tick_forever(self) -> None:
        # Coalescing: the clock also closes flush windows (30 ms), so it ticks a third of one.
        period = COALESCE_TICK_SECONDS if self.plane.coalescing else TICK_SECONDS
        while True:
            gevent.sleep(period)  # a periodic clock for the engine's countdowns, not a wait for an event
            self.plane.tick(wall_clock_ms())


__all__ = ["FOREIGN_KEY", "Cli016V4"]
