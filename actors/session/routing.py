"""Where each applied event of a session goes, and the card-reuse registry.

An event in ``seq`` order goes to exactly one place:

* the current Turn (its prompt's text, reasoning, tools, usage while it runs);
* BackgroundTasks (task status, and the events of background-notification
  turns, which run beside or between prompts);
* the Session itself (usage between turns; the title, which the 0.16 engine
  sends as a ``session.titleUpdated`` event), as ready-made updates;
* nowhere (``turn.terminal``, ``turn.steerDrained``: bookkeeping only).

Card reuse (docs/background-tasks.md): a background Bash call's card stays
open after its launch result, and the task's status updates close it later.
This registry remembers which launches those are — in pipe order, which is
why it lives here and not in the Turn or BackgroundTasks.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from zcode_acp.protocol import events as ev
from zcode_acp.protocol import tools, updates
from zcode_acp.protocol.sessions import iso_time
from zcode_acp.protocol.usage import context_usage_update

Event = dict[str, Any]
FINAL_TASK_STATUSES = frozenset({"completed", "failed", "cancelled", "killed"})


@dataclass(slots=True)
class Routed:
    turn: list[Event] = field(default_factory=list)
    tasks: list[tuple[Event, bool | None]] = field(default_factory=list)
    session: list[dict[str, Any]] = field(default_factory=list)  # updates the Session delivers


class EventRouter:
    # Every live Session has one: slots, not a __dict__ (docs/performance.md, "Idle sessions").
    __slots__ = ("background_calls", "background_turns", "launch_cards")

    def __init__(self) -> None:
        # Sets kept as dicts (keys only): an empty set is ~0.2 KiB, an empty dict 64 B, and every
        # live Session has these (docs/performance.md, "Idle sessions").
        self.background_turns: dict[str, None] = {}
        self.background_calls: dict[str, None] = {}  # background Bash calls not yet launched
        self.launch_cards: dict[str, bool] = {}  # launched: toolCallId → rendered as a terminal

    def route(self, event: Event, routed: Routed, has_turn: bool, terminal_output: bool) -> None:
        kind = event.get("type")
        body = ev.payload(event)
        if kind == ev.MODEL_STREAMING and not self.background_turns and type(body.get("toolCallId")) is not str:
            routed.turn.append(event)  # the streaming case (text, reasoning): the turn's, nothing to track
            return
        if kind == ev.SESSION_UPDATED:
            if "taskId" in body:
                tool_call_id = body.get("toolCallId")
                routed.tasks.append((event, self.launch_cards.get(tool_call_id)))  # type: ignore[arg-type]
                if str(body.get("status")) in FINAL_TASK_STATUSES:
                    self.launch_cards.pop(tool_call_id, None)  # type: ignore[arg-type]
            elif has_turn:
                routed.turn.append(event)  # keeps its place among the turn's updates
            else:
                update = context_usage_update(body)
                if update:
                    routed.session.append(update)
            return
        if kind == ev.TITLE_UPDATED:
            title = body.get("title")
            if isinstance(title, str) and title:
                routed.session.append(updates.session_title(title, iso_time(time.time() * 1000)))
            return
        turn_id = ev.turn_id(event)
        if ev.is_background_start(event):
            if turn_id:
                self.background_turns[turn_id] = None
            routed.tasks.append((event, None))
            return
        if turn_id is not None and turn_id in self.background_turns:
            if kind in ev.TURN_END_TYPES:
                self.background_turns.pop(turn_id, None)
            routed.tasks.append((event, None))
            return
        if kind in ev.IGNORED_TYPES:
            return
        if kind in (ev.MODEL_STREAMING, ev.TOOL_UPDATED):
            self._track_launch(body, terminal_output)
        routed.turn.append(event)

    def _track_launch(self, body: dict[str, Any], terminal_output: bool) -> None:
        tool_call_id = body.get("toolCallId")
        if not isinstance(tool_call_id, str):
            return
        tool_input = body.get("input")
        if body.get("toolName") == "Bash" and isinstance(tool_input, dict) and tool_input.get("run_in_background"):
            self.background_calls[tool_call_id] = None
        elif body.get("kind") == "result" and tool_call_id in self.background_calls:
            self.background_calls.pop(tool_call_id, None)
            if not tools.result_failed(body.get("result")):
                self.launch_cards[tool_call_id] = terminal_output
