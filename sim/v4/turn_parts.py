"""The parts of a turn that are not its text: rows for tools and subagents, interactions, background works.

``TurnParts`` is the half of the conversation projection (projection.py) that handles
``tool.updated``, ``permission.*`` and ``userInput.*`` events and the background tasks
``session.updated`` reports; it owns the bookkeeping both halves share (the open turn,
which row each tool and subagent has, which legacy request each interaction answers).
Shapes from ``zcode-protocol-v4/rows.ts`` (``toolCall``, ``subagent``) and
``snapshot.ts`` (``pendingInteractions`` with ``autoResolution``, ``backgroundWorks``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..cli016_events import tool_text
from .conversation_state import ConversationState
from .rows import RowStore

SUBAGENT_TOOLS = frozenset(("Task", "Agent"))
_WORK_STATUS = {"running": "running", "completed": "resultPending", "failed": "failed", "cancelled": "cancelled"}
# The legacy task's other final statuses have no v4 word (snapshot.ts: running|resultPending|failed|cancelled).
_WORK_FAILED = frozenset(("timed_out", "spawn_error", "lost", "killed"))
PERMISSION_OPTIONS = (
    {"optionId": "allow_once", "label": "Allow once", "kind": "allowOnce"},
    {"optionId": "allow_always", "label": "Always allow", "kind": "allowAlways"},
    {"optionId": "deny", "label": "Deny", "kind": "deny"},
)


@dataclass(slots=True)
class ExpectedInput:
    """What a ``sendText`` said about the prompt a turn will start with (the event does not carry it)."""

    text: str
    source_command_id: str | None = None
    client_id: str | None = None
    attachments: list[dict[str, Any]] = field(default_factory=list)
    origin: str = "userInput"
    """turnHeader origin: "userInput", or "editRerun" for a retry or an edit."""


@dataclass(slots=True)
class OpenTurn:
    """The turn events are arriving for: its header row, the rows still streaming, its tools' rows."""

    turn_id: str
    header: int | None = None
    text: int | None = None
    reasoning: int | None = None
    compact: int | None = None
    tools: dict[str, int] = field(default_factory=dict)
    subagents: dict[str, int] = field(default_factory=dict)
    started_at: int = 0


class TurnParts(ConversationState):
    def __init__(self, session_id: str, config: dict[str, Any], *, clock: Callable[[], float],
                 context_window: int | None = None, log_epoch: str | None = None) -> None:
        super().__init__(session_id, config, clock=clock, context_window=context_window, log_epoch=log_epoch)
        self._turn: OpenTurn | None = None
        self._last_turn_id = ""
        self._interactions: dict[str, str] = {}
        """legacy requestId → interactionId."""
        self.answered: set[str] = set()
        self._launch_rows: dict[str, int] = {}
        """toolCallId → its row, past its turn's end: a background work outlives the call that launched it."""
        """Interactions answered, by a v4 command or by the host's answer to the legacy request."""

    def _row(self, kind: str, **fields: Any) -> dict[str, Any]:
        turn_id = self._turn.turn_id if self._turn else self._last_turn_id
        base: dict[str, Any] = {"turnId": turn_id, "createdAt": self.now(), "createdAtSeq": self.log.seq + 1}
        if turn_id:
            base["productTurnId"] = turn_id  # rows.ts: non-empty when present (a row before any turn has none)
        if kind == "toolCall":
            base["entityId"] = f"tool-{fields['toolCallId']}"
        row = self.rows.append(kind, base, fields)
        return row

    def _tool_id(self, payload: dict[str, Any]) -> int | None:
        if self._turn is None:
            return None
        return self._turn.tools.get(str(payload.get("toolCallId") or ""))

    def _tool_row(self, payload: dict[str, Any]) -> int | None:
        """The tool's row, appended the first time the tool is named."""
        tool_call_id = str(payload.get("toolCallId") or "")
        if not tool_call_id:
            return None
        known = self._tool_id(payload)
        if known is not None:
            return known
        if self._turn is None:
            self._turn = OpenTurn(self._last_turn_id or "turn-orphan")
        self._close_streams()
        tool_input = payload.get("input") if isinstance(payload.get("input"), dict) else {}
        name = str(payload.get("toolName") or "tool")
        row = self._row("toolCall", toolCallId=tool_call_id, toolName=name, status="inputStreaming",
                        inputText=json.dumps(tool_input, sort_keys=True), input=tool_input, startedAt=self.now())
        self._turn.tools[tool_call_id] = row["rowId"]
        self._launch_rows[tool_call_id] = row["rowId"]
        if name in SUBAGENT_TOOLS:
            agent = self._row("subagent", parentToolCallId=tool_call_id, status="running", summaryText="",
                              subagentType=str(tool_input.get("subagent_type") or "general-purpose"),
                              startedAt=self.now())
            self._turn.subagents[tool_call_id] = agent["rowId"]
        return int(row["rowId"])

    def _tool_output(self, row_id: int, row: dict[str, Any], tail: str) -> None:
        """``stdoutTail`` is cumulative: what it adds is appended, anything else replaces the output."""
        output = row.get("output")
        if isinstance(output, dict) and tail.startswith(output.get("text", "")):
            self.rows.append_text(row_id, "output.text", tail[len(output["text"]):])
        else:
            self.rows.upsert(row_id, {"output": {"text": tail}, "status": "running"})

    def _settle_subagent(self, tool_call_id: str, status: str, summary: str) -> None:
        row_id = self._turn.subagents.pop(tool_call_id, None) if self._turn else None
        if row_id is not None:
            self.rows.upsert(row_id, {"status": status, "summaryText": summary, "endedAt": self.now()})

    def _on_tool_updated(self, payload: dict[str, Any], turn_id: str) -> None:
        if isinstance(payload.get("parentToolCallId"), str):
            # A sub-agent's own call: rows.ts keeps those in the sub-agent's conversation
            # (conversation/<childSessionId>), never embedded in its parent's rows.
            return
        kind = payload.get("kind")
        row_id = self._tool_row(payload) if kind == "scheduled" else self._tool_id(payload)
        if row_id is None:
            return
        row = self.rows.get(row_id) or {}
        if kind == "started" and row.get("status") == "inputStreaming":
            self.rows.upsert(row_id, {"status": "running"})
        elif kind == "progress":
            self._tool_output(row_id, row, str(payload.get("stdoutTail") or ""))
        elif kind in ("result", "error"):
            failed = kind == "error"
            text = tool_text(payload.get("error") if failed else payload.get("result"))
            changes: dict[str, Any] = {"status": "error" if failed else "success", "output": {"text": text},
                                       "endedAt": self.now(), "approvalInteractionId": RowStore.DROP}
            if failed:
                changes["error"] = {"code": "toolError", "message": text}
            elif isinstance(row.get("input"), dict) and row["input"].get("run_in_background") is True:
                changes["backgrounded"] = True  # rows.ts: the call handed its work to the background
            self.rows.upsert(row_id, changes)
            self._settle_subagent(str(payload.get("toolCallId")), "failed" if failed else "success", text)

    def _on_permission_requested(self, payload: dict[str, Any], turn_id: str) -> None:
        tool_row = self._tool_id(payload)
        body: dict[str, Any] = {
            "kind": "permission", "toolCallId": str(payload.get("toolCallId") or ""),
            "toolName": str(payload.get("toolName") or (self.rows.get(tool_row) or {}).get("toolName") or "tool"),
            "summary": str(payload.get("summary") or payload.get("title") or "Permission requested"),
            "detail": payload.get("detail") if "detail" in payload else payload.get("input"),
            "options": [dict(option) for option in PERMISSION_OPTIONS],
        }
        interaction_id = self._open_interaction(payload, "permission", tool_row, body)
        if interaction_id and tool_row is not None:
            self.rows.upsert(tool_row, {"status": "pendingApproval", "approvalInteractionId": interaction_id})

    def _on_permission_resolved(self, payload: dict[str, Any], turn_id: str) -> None:
        interaction_id = self._close_interaction(payload)
        if interaction_id is None:
            return
        for row in self.rows.rows:
            if row.get("approvalInteractionId") == interaction_id and row.get("status") == "pendingApproval":
                self.rows.upsert(row["rowId"], {"status": "running", "approvalInteractionId": RowStore.DROP})

    def _on_userInput_requested(self, payload: dict[str, Any], turn_id: str) -> None:
        tool_row = self._tool_id(payload)
        body: dict[str, Any] = {"kind": "userInput", "prompt": str(payload.get("prompt") or "The agent has a question"),
                                "freeText": True, "toolCallId": str(payload.get("toolCallId") or "")}
        questions = payload.get("questions")
        if isinstance(questions, list):
            body["questions"] = [
                {"question": str(q.get("question", "")), "header": str(q.get("header", "")),
                 "options": [{"value": str(o.get("value", o.get("label", ""))), "label": str(o.get("label", ""))}
                             for o in q.get("options") or [] if isinstance(o, dict)],
                 "multiSelect": bool(q.get("multiSelect", False))}
                for q in questions if isinstance(q, dict)]
        self._open_interaction(payload, "userInput", tool_row, body)

    def _on_userInput_resolved(self, payload: dict[str, Any], turn_id: str) -> None:
        self._close_interaction(payload)

    def interaction(self, interaction_id: str) -> dict[str, Any] | None:
        for item in self.state["pendingInteractions"]:
            if item["interactionId"] == interaction_id:
                return dict(item)
        return None

    def request_id_of(self, interaction_id: str) -> str | None:
        for request_id, known in self._interactions.items():
            if known == interaction_id:
                return request_id
        return None

    def snooze(self, interaction_id: str) -> bool:
        items = []
        found = False
        for item in self.state["pendingInteractions"]:
            if item["interactionId"] == interaction_id and "autoResolution" in item:
                started = item["autoResolution"]["startedAt"]
                item = {**item, "autoResolution": {"state": "snoozed", "startedAt": started, "snoozedAt": self.now()}}
                found = True
            items.append(item)
        if found:
            self.set("pendingInteractions", items)
        return found

    def _open_interaction(self, payload: dict[str, Any], kind: str, anchor: int | None,
                          body: dict[str, Any]) -> str | None:
        request_id = str(payload.get("requestId") or "")
        if not request_id or request_id in self._interactions:
            return None  # a re-announcement: same question, nothing new
        # The engine registers an interaction under the request's own id (interaction-response-race.ts:
        # "interactionId = the business requestId"), so both channels name the same thing.
        interaction_id = request_id
        self._interactions[request_id] = interaction_id
        now = self.now()
        item: dict[str, Any] = {"interactionId": interaction_id, "kind": kind, "anchorRowId": anchor,
                                "createdAt": now, "payload": body}
        countdown = payload.get("autoResolveMs")
        if isinstance(countdown, int | float) and not isinstance(countdown, bool) and countdown > 0:
            item["autoResolution"] = {"state": "visibleCountdown", "startedAt": now, "visibleAt": now,
                                      "deadlineAt": now + int(countdown)}
        self.set("pendingInteractions", [*self.state["pendingInteractions"], item])
        return interaction_id

    def _close_interaction(self, payload: dict[str, Any]) -> str | None:
        interaction_id = self._interactions.pop(str(payload.get("requestId") or ""), None)
        if interaction_id is not None:
            self.answered.add(interaction_id)
            self.set("pendingInteractions",
                     [i for i in self.state["pendingInteractions"] if i["interactionId"] != interaction_id])
        return interaction_id

    def _background(self, payload: dict[str, Any]) -> None:
        work_id = str(payload["taskId"])
        legacy = str(payload.get("status"))
        status = "failed" if legacy in _WORK_FAILED else _WORK_STATUS.get(legacy, "running")
        works = [w for w in self.state["backgroundWorks"] if w["workId"] != work_id]
        previous = next((w for w in self.state["backgroundWorks"] if w["workId"] == work_id), None)
        anchor = self._launch_rows.get(str(payload.get("toolCallId") or ""))
        work: dict[str, Any] = {
            "workId": work_id, "kind": "bash" if payload.get("toolName", "Bash") == "Bash" else "subagent",
            "title": str(payload.get("description") or work_id), "status": status,
            "startedAt": previous["startedAt"] if previous else self.now(),
            "anchorRowId": previous["anchorRowId"] if previous else anchor, "cancellable": status == "running"}
        if status != "running":
            work["endedAt"] = self.now()
        if previous is None and anchor is not None:  # rows.ts: the launching call names its work
            self.rows.upsert(anchor, {"backgrounded": True, "workId": work_id})
        self.set("backgroundWorks", [*works, work])

    def _settle_background_results(self, notification: str) -> None:
        """The result turn delivers a finished work's result: it leaves the list."""
        kept = [w for w in self.state["backgroundWorks"]
                if not (w["status"] == "resultPending" and w["workId"] in notification)]
        self.set("backgroundWorks", kept)

    def _close(self, attr: str, state: str) -> None:
        if self._turn is None:
            return
        row_id = getattr(self._turn, attr)
        setattr(self._turn, attr, None)
        row = self.rows.get(row_id)
        if row is not None and row.get("state") == "streaming":
            if row["kind"] == "reasoning" and state == "failed":
                state = "interrupted"  # a reasoning row has no failed state
            self.rows.upsert(row["rowId"], {"state": state})

    def _close_streams(self, state: str = "complete") -> None:
        self._close("text", state)
        self._close("reasoning", state)
