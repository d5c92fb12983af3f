"""Session, part 4: the event stream.

A mixin of the Session actor: sequencing (``last_seq``, reorder buffer, gap
fill with ``session/subscribe {afterSeq}``, skipping a hole the backend cannot
fill), and routing each applied event to the current Turn, to BackgroundTasks,
or to the Session's own updates (usage, mode, title, plan). It also keeps the
card-reuse registry of background Bash launch cards, in pipe order.
"""

from __future__ import annotations

import logging
from typing import Any

import gevent

from zcode_acp.protocol import events as ev
from zcode_acp.protocol import tools
from zcode_acp.protocol.handshake import supports_terminal_output
from zcode_acp.protocol.usage import context_usage_update

from zcode_acp.actors.transport import flow
from zcode_acp.actors.base import safe_tell
from zcode_acp.actors.messages import GapTimeout, TaskEvents, TurnEvents

log = logging.getLogger(__name__)

PLAN_STATUSES = {"pending", "in_progress", "completed"}
PLAN_PRIORITIES = {"high", "medium", "low"}
FINAL_TASK_STATUSES = {"completed", "failed", "cancelled", "killed"}


def plan_entries(todos: Any) -> list[dict[str, str]] | None:
    if not isinstance(todos, list):
        return None
    entries = []
    for todo in todos:
        if isinstance(todo, dict) and isinstance(todo.get("content"), str):
            status = todo.get("status") if todo.get("status") in PLAN_STATUSES else "pending"
            priority = todo.get("priority") if todo.get("priority") in PLAN_PRIORITIES else "medium"
            entries.append({"content": todo["content"], "status": status, "priority": priority})
    return entries


class Routed:
    """Where one batch of applied events goes: the current Turn, or BackgroundTasks."""

    __slots__ = ("turn", "tasks")

    def __init__(self) -> None:
        self.turn: list[dict[str, Any]] = []
        self.tasks: list[tuple[dict[str, Any], bool | None]] = []


class EventStream:
    """Uses the Session's ``phase``, ``last_seq``, ``reorder``, ``gap_pending``,
    ``current``/``turns``, ``tasks``, ``background_turns``, ``background_calls``,
    ``launch_cards``, ``settings`` and ``plan``."""

    def handle_SessionEvents(self, message: Any) -> None:
        try:
            if self.phase != "live":
                for event in message.events:
                    seq = ev.seq(event)
                    if seq is not None:
                        self.reorder[seq] = event
                return
            self._accept_all(message.events, message.token)
        finally:
            flow.done(message.token)

    def _accept_all(self, events: list[dict[str, Any]], token: Any = None) -> None:
        routed = Routed()
        for event in events:
            seq = ev.seq(event)
            if seq is None:
                self._apply(event, routed)
            elif seq <= self.last_seq:
                continue  # duplicate or already applied
            elif seq == self.last_seq + 1:
                self.last_seq = seq
                self._apply(event, routed)
                self._drain(routed)
            else:
                self.reorder[seq] = event
                self._request_gap()
        self._flush(routed, token)

    def _flush(self, routed: Routed, token: Any = None) -> None:
        """Pass the applied events on; the batch's flow token goes with them."""
        if routed.turn and self.current is not None:
            self.turns[self.current].tell(TurnEvents(routed.turn, flow.share(token)))
        if routed.tasks:
            self.tasks.tell(TaskEvents(routed.tasks, flow.share(token)))

    def _drain(self, routed: Routed) -> None:
        while self.last_seq + 1 in self.reorder:
            self.last_seq += 1
            self._apply(self.reorder.pop(self.last_seq), routed)

    def _request_gap(self) -> None:
        if self.gap_pending:
            return
        self.gap_pending = True
        params = {
            "sessionId": self.backend_session_id,
            "deliveryKind": "desktop-continuous",
            "includeSnapshot": False,
            "afterSeq": self.last_seq,
        }
        self._call("session/subscribe", params, tag=("gap",), timeout=self.config.subscribe_timeout)
        gevent.spawn_later(self.config.gap_wait, safe_tell, self.actor_ref, GapTimeout(self.last_seq))

    def _gap_answered(self, result: Any) -> None:
        self.gap_pending = False
        before = self.last_seq
        missed = result.get("events") if isinstance(result, dict) else None
        if isinstance(missed, list):
            self._accept_all([e for e in missed if isinstance(e, dict)])
        if self.reorder:
            if self.last_seq > before:
                self._request_gap()  # filled that hole; a later one is still open
            else:
                self._skip_gap()  # the backend does not have what is missing

    def handle_GapTimeout(self, message: Any) -> None:
        if self.gap_pending and self.last_seq == message.after_seq and self.reorder:
            self.gap_pending = False
            self._skip_gap()

    def _skip_gap(self) -> None:
        """The backend could not fill a hole: apply what is buffered, in order."""
        first = min(self.reorder)
        log.warning("session %s: events %d..%d never arrived; skipping the hole",
                    self.session_id, self.last_seq + 1, first - 1)
        self.last_seq = first - 1
        routed = Routed()
        self._drain(routed)
        self._flush(routed)
        if self.reorder:
            self._request_gap()

    def _apply(self, event: dict[str, Any], routed: Routed) -> None:
        kind = event.get("type")
        body = ev.payload(event)
        if kind == "session.updated":
            if "taskId" in body:
                tool_call_id = body.get("toolCallId")
                routed.tasks.append((event, self.launch_cards.get(tool_call_id)))
                if str(body.get("status")) in FINAL_TASK_STATUSES:
                    self.launch_cards.pop(tool_call_id, None)
            elif self.current is not None:
                routed.turn.append(event)  # keeps its place among the turn's updates
            else:
                update = context_usage_update(body)
                if update:
                    self._deliver([update])
            return
        turn_id = ev.turn_id(event)
        if ev.is_background_start(event):
            if turn_id:
                self.background_turns.add(turn_id)
            routed.tasks.append((event, None))
            return
        if turn_id is not None and turn_id in self.background_turns:
            if kind in ev.TURN_END_TYPES:
                self.background_turns.discard(turn_id)
            routed.tasks.append((event, None))
            return
        if kind in ("turn.terminal", "turn.steerDrained"):
            return
        if kind in ("model.streaming", "tool.updated"):
            self._track_launch(body)
        routed.turn.append(event)

    def _track_launch(self, body: dict[str, Any]) -> None:
        """Card reuse: remember background Bash launches whose card must stay open."""
        tool_call_id = body.get("toolCallId")
        if not isinstance(tool_call_id, str):
            return
        tool_input = body.get("input")
        if body.get("toolName") == "Bash" and isinstance(tool_input, dict) and tool_input.get("run_in_background"):
            self.background_calls.add(tool_call_id)
        elif body.get("kind") == "result" and tool_call_id in self.background_calls:
            self.background_calls.discard(tool_call_id)
            if not tools.result_failed(body.get("result")):
                self.launch_cards[tool_call_id] = supports_terminal_output(self.capabilities)

    def handle_SessionNotice(self, message: Any) -> None:
        params = message.params
        if message.method == "state.updated":
            before = self.settings
            self.settings = self.settings.with_patch(params.get("patch"))
            self._announce_settings(before)
        elif message.method == "session.titleUpdated" and isinstance(params.get("title"), str):
            self._deliver([{"sessionUpdate": "session_info_update", "title": params["title"]}])

    def _plan_answered(self, result: Any) -> None:
        entries = plan_entries(result.get("todos")) if isinstance(result, dict) else None
        if entries is not None and entries != self.plan and (entries or self.plan):
            self.plan = entries
            self._deliver([{"sessionUpdate": "plan", "entries": entries}])

