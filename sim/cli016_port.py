"""The cli016 server as the v4 data plane's ``Port``: what a v4 command asks, done on the legacy session model.

The plane (``sim/v4/``) decides every command; this adapter acts on the same
``SimSession`` objects, turns and scenarios as the legacy methods, so a v4 ``sendText``
runs the same ``#sim`` lines as ``session/send``, a v4 stop ends the same turn a
``session/stop`` recovers, and so on. What the engine then does comes back to the plane
as the legacy events the server emits (``sim/cli016_v4.py`` feeds them).
"""

from __future__ import annotations

import os
import uuid
from typing import Any, Protocol

from . import catalog
from .model import SimSession, SimTurn
from .model import DATA_DIR
from .v4.plane import DataPlane
from .v4.port import SessionSeed
from .v4.snapshot import session_config


class Cli016Engine(Protocol):
    """The cli016 server (``Cli016SimServer``) as this adapter drives it.

    Named here so the adapter, a layer below the server it is handed (docs/simulator.md, Layers),
    never imports it.
    """

    sessions: dict[str, SimSession]
    attachments: dict[str, list[dict[str, Any]]]
    turn_marks: dict[str, dict[str, int]]
    v4_made: set[str]
    plane: DataPlane

    def ask_bridge(self, method: str, params: Any, timeout: float = 30) -> Any: ...

    def remember_preferences(self, session: SimSession, frame: Any) -> None: ...

    def save(self, session: SimSession) -> None: ...

    def emit(self, session: SimSession, kind: str, payload: dict[str, Any], turn_id: str | None = None,
             push: bool = True, flush: bool = True) -> dict[str, Any]: ...

    def start_turn(self, session: SimSession, content: str, early: bool = False,
                   input_id: str | None = None) -> SimTurn: ...

    def stop_turn(self, session: SimSession, turn: SimTurn | None) -> None: ...

    def start_compaction(self, session: SimSession, instructions: str) -> SimTurn: ...

    def answer_asked(self, request_id: str, answer: dict[str, Any]) -> None: ...

    def changed(self, session: SimSession, reason: str) -> dict[str, Any]: ...

    def close_session(self, params: dict[str, Any]) -> dict[str, Any]: ...

MODES = ("plan", "build", "edit", "yolo", "auto")


def _hex(size: int = 12) -> str:
    return uuid.uuid4().hex[:size]


def seed_of(session: SimSession) -> SessionSeed:
    """The session as the plane's snapshot shows it (its model, reasoning levels and mode)."""
    levels = catalog.levels(catalog.find(catalog.PROVIDER, session.model))
    config = session_config(catalog.PROVIDER, session.model, session.thought, levels, mode=session.mode)
    return SessionSeed(session.session_id, config, context_window=catalog.context_window(session.model))


class Cli016Port:
    """``sim.v4.port.Port`` over a ``Cli016SimServer``."""

    def __init__(self, server: Cli016Engine) -> None:
        self.server = server

    def _session(self, session_id: str) -> SimSession:
        return self.server.sessions[session_id]

    def create_session(self, workspace_id: str) -> SessionSeed:
        entry = catalog.find(catalog.PROVIDER, catalog.DEFAULT_MODEL)
        session = SimSession(session_id=f"sess_{_hex()}",
                             workspace={"workspacePath": workspace_id, "workspaceKey": workspace_id},
                             mode="build", model=catalog.DEFAULT_MODEL, thought=catalog.default_level(entry),
                             title="", trace_id=f"trace_{_hex()}")
        session.created_at = session.updated_at
        # As on session/create: the engine asks the host's runtime preferences as it materializes the session.
        self.server.remember_preferences(session, self.server.ask_bridge(
            "session/requestRuntimePreferences", {"scope": "runtime-materialization", "sessionId": session.session_id}))
        self.server.sessions[session.session_id] = session
        self.server.v4_made.add(session.session_id)  # its row exists: no foreign-key failure on a first send
        self.server.save(session)
        return seed_of(session)

    def start_turn(self, session_id: str, text: str, attachments: list[dict[str, Any]]) -> None:
        session = self._session(session_id)
        if attachments:  # already read by the plane: the engine sees them as a send's readable ones
            self.server.attachments[session_id] = [dict(item) for item in attachments]
        self.server.start_turn(session, text)

    def guide(self, session_id: str, text: str, input_id: str) -> None:
        session = self._session(session_id)
        turn = session.lock
        projection = self.server.plane.sessions.get(session_id)
        expected = projection.guides.get(input_id) if projection is not None else None
        intent: dict[str, Any] = {"sourceCommandId": expected.source_command_id if expected else input_id,
                                  "requestedDelivery": "guide"}
        queued: dict[str, Any] = {"inputId": input_id, "pendingInputId": input_id, "input": text,
                                  "inputPreview": text[:80], "inputSize": len(text), "commandKind": "sendText",
                                  "intent": intent}
        if turn is None:  # the turn let go between the decision and now: the text starts the next one
            session.queue.append(text)
            return
        queued["targetTurnId"] = turn.turn_id
        queued["queueLength"] = len(session.queue) + len(turn.guides) + 1
        if turn.execution_id and not turn.stopped:
            intent["admittedDelivery"] = queued["delivery"] = "guide"
            turn.guides.append({"text": text, "inputId": input_id, "intent": intent})
        else:
            intent["admittedDelivery"] = "queue"
            session.queue.append(text)
        self.server.emit(session, "turn.steerQueued", queued, turn.turn_id)

    def stop(self, session_id: str) -> None:
        session = self._session(session_id)
        self.server.stop_turn(session, session.lock)  # a stubborn turn accepts the stop and runs on

    def compact(self, session_id: str) -> None:
        self.server.start_compaction(self._session(session_id), "")

    def resolve_interaction(self, session_id: str, request_id: str, kind: str, answer: dict[str, Any]) -> None:
        self.server.answer_asked(request_id, answer)

    def switch_model(self, session_id: str, provider: str, model: str, thought: str) -> bool:
        entry = catalog.find(provider, model) if provider == catalog.PROVIDER else None
        if entry is None:
            return False
        levels = catalog.levels(entry)
        if levels and thought not in levels:
            return False
        session = self._session(session_id)
        session.model, session.thought, session.model_lost = model, thought if levels else "", False
        self.server.changed(session, "model_changed")
        return True

    def switch_mode(self, session_id: str, mode: str) -> bool:
        if mode not in MODES:
            return False
        session = self._session(session_id)
        session.mode = mode
        self.server.changed(session, "mode_changed")
        return True

    def cancel_background(self, session_id: str, work_id: str) -> bool:
        task = self._session(session_id).tasks.get(work_id)
        if task is None or task.cancelled:
            return False
        task.cancelled = True
        return True

    def rename(self, session_id: str, title: str) -> None:
        session = self._session(session_id)
        previous, session.title = session.title, title
        self.server.save(session)
        self.server.emit(session, "session.titleUpdated", {"previousTitle": previous, "source": "custom",
                                                           "title": title})

    def delete(self, session_id: str) -> None:
        self.server.close_session({"sessionId": session_id})
        self.server.sessions.pop(session_id, None)
        stored = os.path.join(DATA_DIR, session_id + ".json") if DATA_DIR else ""
        if stored and os.path.exists(stored):
            os.remove(stored)  # a new process must not find it either

    def truncate(self, session_id: str, turn_id: str) -> None:
        session = self._session(session_id)
        mark = self.server.turn_marks.get(session_id, {}).get(turn_id)
        if mark is not None:
            session.messages = session.messages[:mark]
            self.server.save(session)

    def fork(self, session_id: str, turn_id: str) -> SessionSeed:
        source = self._session(session_id)
        marks = self.server.turn_marks.get(session_id, {})
        start = marks.get(turn_id)
        later = [mark for mark in marks.values() if start is not None and mark > start]
        end = min(later) if later else len(source.messages)
        fork = SimSession(session_id=f"sess_{_hex()}", workspace=dict(source.workspace), mode=source.mode,
                          model=source.model, thought=source.thought, title=f"{source.title} (fork)",
                          messages=[dict(m) for m in source.messages[:end]], todos=list(source.todos),
                          turns=max(1, source.turns), trace_id=f"trace_{_hex()}")
        fork.created_at = fork.updated_at
        self.server.sessions[fork.session_id] = fork
        self.server.v4_made.add(fork.session_id)
        self.server.save(fork)
        return seed_of(fork)
