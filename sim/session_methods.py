"""The classic app-server's session-level methods: create, list, resume, subscribe, read,
settings, fork, goal, compact, rewind — a part of ``SimServer`` (sim/server.py), which brings
the wire, the sessions and the turns these methods act on."""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

import gevent

from .model import DATA_DIR, SimError, SimSession, SimTurn


class SessionMethods:
    """Mixed into ``SimServer``: ``self`` is the server (its sessions, wire and turns)."""

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
            raise SimError(self.busy["code"], self.busy["message"])
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

    def m_session_rewind(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        session.messages = session.messages[:-2]
        self.save(session)
        return {"rewound": True}
