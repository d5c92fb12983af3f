"""The 0.16 engine, session level: settings (mode, model, reasoning), history and usage reads,
goals, forks and compaction — a part of ``Cli016SimServer`` (sim/cli016.py), which brings the
sessions, the wire and the turns these act on."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

import gevent

from . import catalog
from .history import present_all
from .model import SimError, SimSession, SimTurn, hex_id, required

if TYPE_CHECKING:
    pass

from .strict import MODES

# Compaction runs an internal turn this long (the real one takes minutes), and ends this way
# (``completed``, ``failed`` or ``cancelled``; a v4 stop cancels it too).
COMPACT_SECONDS = float(os.environ.get("ZCODE_SIM_COMPACT_SECONDS", "3"))
COMPACT_OUTCOME = os.environ.get("ZCODE_SIM_COMPACT_OUTCOME", "completed")
# The usage counters the engine keeps per session (``session/usage``), cumulative.
USAGE_KEYS = ("inputTokens", "outputTokens", "totalTokens", "reasoningTokens", "cacheReadTokens",
              "cacheCreationTokens", "modelRequestCount")
GOAL_ACTIONS = ("show", "set", "replace", "clear", "pause", "resume")


class Cli016SessionMethods:
    """Mixed into ``Cli016SimServer`` first, so its methods come before the v4 and workspace parts'
    (as when they were the server's own): ``self`` is the server."""

    def changed(self, session: SimSession, reason: str) -> dict[str, Any]:
        """After a set*: save, announce ``state.updated``, answer the current-only snapshot."""
        self.save(session)
        self.state_updated(session, reason)
        return self.snapshot(session, "current")

    def m_session_setMode(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        mode = params.get("mode")
        if mode not in MODES:
            expected = " | ".join(f"'{m}'" for m in MODES)
            raise SimError(-32602, f"Invalid params: mode: Invalid enum value. Expected {expected}, received {mode!r}")
        if mode != "plan" or self.plan_works():
            session.mode = mode  # before 0.16.9 plan was accepted and had no effect
        return self.changed(session, "mode_changed")

    def m_session_setModel(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        model = params.get("model")
        if not isinstance(model, dict):
            raise SimError(-32602, "Invalid params: model: Required")
        ref = f"{model.get('providerId')}/{model.get('modelId')}"
        entry = catalog.find(model.get("providerId"), model.get("modelId"))
        if entry is None:
            raise SimError(-32602, f"Model not available: {ref}")
        levels = catalog.levels(entry)
        level = (model.get("options") or {}).get("reasoningLevel")
        if levels and level is None:
            raise SimError(-32602, f"Select a reasoning level for {ref}: one of {', '.join(levels)}")
        if level is not None and level not in levels:
            allowed = f"one of {', '.join(levels)}" if levels else "this model has no reasoning levels"
            raise SimError(-32602, f"Invalid reasoning level {level!r} for {ref}: {allowed}")
        session.model, session.thought, session.model_lost = model["modelId"], level or "", False
        return self.changed(session, "model_changed")

    def m_session_setThoughtLevel(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        if session.model_lost:
            raise SimError(-32602, "Select a model before choosing reasoning effort")
        levels = catalog.levels(catalog.find(catalog.PROVIDER, session.model))
        level = params.get("thoughtLevel")
        if level not in levels:
            allowed = f"one of {', '.join(levels)}" if levels else "this model has no reasoning levels"
            raise SimError(-32602, f"Invalid thought level {level!r} for {catalog.PROVIDER}/{session.model}: {allowed}")
        session.thought = level
        return self.changed(session, "thought_level_changed")

    def m_session_messages(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        messages = present_all(session.visible_messages(), session.session_id,
                               str(session.workspace.get("workspacePath") or "/"))
        after = params.get("afterMessageId")
        if after:
            ids = [m["info"]["messageId"] for m in messages]
            messages = messages[ids.index(after) + 1:] if after in ids else messages
        limit = params.get("limit")
        return {"messages": messages[-limit:] if isinstance(limit, int) and limit > 0 else messages}

    def m_session_read(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        limit = params.get("messageLimit")
        return self.snapshot(session, "current", limit if isinstance(limit, int) and limit >= 0 else None)

    def m_session_usage(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.session(params)
        return {"sessionId": session.session_id, **{key: session.usage_total.get(key, 0) for key in USAGE_KEYS}}

    def m_session_goal(self, params: dict[str, Any]) -> dict[str, Any]:
        self.session(params)
        action = params.get("action")
        if action not in GOAL_ACTIONS:
            expected = " | ".join(f"'{a}'" for a in GOAL_ACTIONS)
            raise SimError(-32602, f"Invalid params: action: Invalid enum value. Expected {expected}, received {action!r}")
        if action in ("set", "replace"):
            required(params.get("objective"), "objective")
        session = self.session(params)
        goal = super().m_session_goal(params)["goal"]
        # The engine answers {response, snapshot}: the goal is worded in the response, not returned as data.
        response = f"Goal: {goal['objective']} ({goal['status']})" if goal else "No goal is set."
        return {"response": response, "snapshot": self.snapshot(session, "current")}

    def m_session_fork(self, params: dict[str, Any]) -> dict[str, Any]:
        """``{forkedSessionId, parentSessionId, response, snapshot}``: the snapshot is the fork's."""
        source = self.session(params)
        forked = super().m_session_fork(params)["forkedSessionId"]
        fork = self.sessions[forked]
        fork.trace_id, fork.created_at = f"trace_{hex_id()}", int(time.time() * 1000)
        return {"forkedSessionId": forked, "parentSessionId": source.session_id,
                "response": f"Forked into {forked}", "snapshot": self.snapshot(fork, "current")}

    def m_session_compact(self, params: dict[str, Any]) -> dict[str, Any]:
        """Accepted at once; the compaction runs in the background and ends with a state.updated reason."""
        session = self.session(params)
        running = session.compaction
        if running is not None:
            return self.compact_answer(session, "already_running", running)
        if session.lock is not None:
            raise SimError(self.busy["code"], "Cannot compact while a prompt is running")
        instructions = params.get("instructions")
        turn = self.start_compaction(session, instructions if isinstance(instructions, str) else "")
        return self.compact_answer(session, "accepted", turn)

    def start_compaction(self, session: SimSession, instructions: str) -> SimTurn:
        """The compaction's internal turn (session/compact and v4 compact), holding the session a long time."""
        turn = SimTurn(turn_id=f"turn_{hex_id()}", execution_id=f"exec_{hex_id()}", input_id=f"compact_{hex_id()}")
        session.lock = session.compaction = turn
        turn.greenlet = gevent.spawn_later(0, self.run_compaction, session, turn, instructions)
        return turn

    def compact_answer(self, session: SimSession, state: str, turn: SimTurn) -> dict[str, Any]:
        return {"response": "", "snapshot": self.snapshot(session, "current"),
                "compact": {"state": state, "operationId": turn.input_id}}

    def run_compaction(self, session: SimSession, turn: SimTurn, instructions: str) -> None:
        summary = f"Compacted {len(session.messages)} messages into a summary"
        summary += f", keeping: {instructions}." if instructions else "."
        command = "/compact" + (f" {instructions}" if instructions else "")
        self.emit(session, "turn.started", {"turnNumber": session.turns, "input": command,
                                            "inputVisibility": "user-visible",
                                            "foregroundExecutionId": turn.execution_id}, turn.turn_id)
        words = summary.split(" ")
        for index, word in enumerate(words):
            gevent.sleep(COMPACT_SECONDS / len(words))
            if turn.stopped:
                break
            delta = word + (" " if index < len(words) - 1 else "")
            turn.response += delta
            self.emit(session, "model.streaming", {"kind": "text_delta", "delta": delta}, turn.turn_id)
        if turn.stopped or COMPACT_OUTCOME == "cancelled":  # a stop, or someone else's (the desktop's)
            reason = "session_compact_cancelled"
            self.emit(session, "turn.completed", {"resultType": "cancelled"}, turn.turn_id)
        elif COMPACT_OUTCOME == "failed":
            reason = "session_compact_failed"
            self.emit(session, "turn.failed", {"error": {"type": "compaction_failed",
                                                         "message": "The summary could not be written"}},
                      turn.turn_id)
        else:
            reason = "session_compacted"
            self.emit(session, "turn.completed", {"resultType": "success"}, turn.turn_id)
            session.messages = session.messages[-2:]
            session.context_used //= 4
        session.compaction = None
        self.release(session, turn)
        self.state_updated(session, reason, {"status": "idle"})
        self.save(session)
