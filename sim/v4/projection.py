"""The conversation projection: the legacy engine event stream → v4 state and deltas.

The today dialect emits the engine's legacy ``session/event`` stream (``turn.started``,
``model.streaming``, ``tool.updated``, ``turn.completed``/``turn.failed``, …). The
engine's CLI projects the same events into the conversation its desktop subscribes to;
this module does that projection for the simulator, one commit per event. What the rows
and keys look like comes from ``zcode-protocol-v4/rows.ts`` and ``snapshot.ts``:

* a user turn opens a ``turnHeader`` row (``state: running``) and the ``userInput`` row;
  text and reasoning stream into ``assistantText`` / ``reasoning`` rows (``state:
  streaming``, grown by ``row.delta`` at ``text``), closed when something else starts;
* a tool is a ``toolCall`` row walking ``inputStreaming → running → success|error``
  (``pendingApproval`` while a permission is asked), its output growing at
  ``output.text``; ``Task``/``Agent`` tools also open a ``subagent`` row;
* a compaction is a ``timelineMarker {type: compact}``, a model switch a ``modelChange``
  marker; ``control``, ``inputRouting``, ``meta``, ``usage``, ``pendingInteractions``
  (with ``autoResolution`` countdowns), ``backgroundWorks``, ``plan`` and ``config``
  follow the events that change them.

Permissions and questions reach the projection as ``permission.requested|resolved`` and
``userInput.requested|resolved`` events (names of the engine's official union); the
today server, which asks them as requests, feeds those events (docs/simulator.md).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .conversation_state import ConversationState
from .log import Commit
from .rows import RowStore
from .snapshot import idle_control

SUBAGENT_TOOLS = frozenset(("Task", "Agent"))
_ENDED = {"success": "completedSuccess", "cancelled": "completedInterrupted"}
_WORK_STATUS = {"running": "running", "completed": "resultPending", "failed": "failed", "cancelled": "cancelled"}
_PLAN_STATUS = {"pending": "pending", "in_progress": "inProgress", "inProgress": "inProgress", "completed": "completed"}
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
class _Turn:
    turn_id: str
    header: int | None = None
    text: int | None = None
    reasoning: int | None = None
    compact: int | None = None
    tools: dict[str, int] = field(default_factory=dict)
    subagents: dict[str, int] = field(default_factory=dict)
    started_at: int = 0


class ConversationProjection(ConversationState):
    """Consumes legacy events (``feed``); commands change it through the methods below."""

    def __init__(self, session_id: str, config: dict[str, Any], *, clock: Callable[[], float],
                 context_window: int | None = None, log_epoch: str | None = None) -> None:
        super().__init__(session_id, config, clock=clock, context_window=context_window, log_epoch=log_epoch)
        self._turn: _Turn | None = None
        self._last_turn_id = ""
        self.expected: deque[ExpectedInput] = deque()
        self.guides: dict[str, ExpectedInput] = {}
        self._interactions: dict[str, str] = {}
        """legacy requestId → interactionId."""

    @property
    def busy(self) -> bool:
        """A turn runs, or one was asked for and has not started yet (the engine admits one at a time)."""
        return self.running or bool(self.expected)

    # -- the event stream ----------------------------------------------------------------

    def feed(self, event: dict[str, Any]) -> Commit | None:
        """One legacy event ``{type, payload, turnId?}``: its changes as one commit (None: none)."""
        handler = getattr(self, "_on_" + str(event.get("type", "")).replace(".", "_"), None)
        if handler is not None:
            handler(event.get("payload") or {}, event.get("turnId") or "")
        return self.commit()

    def _on_turn_started(self, payload: dict[str, Any], turn_id: str) -> None:
        now = self.now()
        self._close_streams()
        turn = self._turn = _Turn(turn_id or f"turn-{self.rows.next_row_id}", started_at=now)
        self._last_turn_id = turn.turn_id
        source = payload.get("inputSource")
        if source == "compaction":
            turn.compact = self._row("timelineMarker", lane="assistantWork",
                                     marker={"type": "compact", "origin": "manual", "status": "running"})["rowId"]
            self._control_running("compact", {"kind": "compact", "startedAt": now})
            return
        background = source == "background_task"
        expected = self.expected.popleft() if self.expected and not background else None
        origin = "backgroundResult" if background else (expected.origin if expected else "userInput")
        header: dict[str, Any] = {"origin": origin, "executionKind": "agent", "state": "running", "startedAt": now}
        user: dict[str, Any] = {"text": str(payload.get("input") or (expected.text if expected else "")),
                                "origin": "backgroundResult" if background else "realUser"}
        if background:
            user["originMeta"] = {"backgroundSource": "bash"}
            self._settle_background_results(user["text"])
        if expected is not None:
            if expected.source_command_id:
                header["sourceCommandId"] = user["sourceCommandId"] = expected.source_command_id
            if expected.client_id:
                user["clientId"] = expected.client_id
            if expected.attachments:
                user["attachments"] = expected.attachments
        turn.header = self._row("turnHeader", **header)["rowId"]
        self._row("userInput", **user)
        work: dict[str, Any] = {"kind": "primaryTurn", "startedAt": now}
        if payload.get("foregroundExecutionId"):
            work["foregroundExecutionId"] = payload["foregroundExecutionId"]
        self._control_running("assistant", work)

    def _on_model_streaming(self, payload: dict[str, Any], turn_id: str) -> None:
        kind = payload.get("kind")
        if kind == "text_delta":
            self._stream("text", "assistantText", str(payload.get("delta") or ""))
        elif kind == "reasoning_delta":
            self._stream("reasoning", "reasoning", str(payload.get("delta") or ""))
        elif kind == "tool_call":
            self._tool_row(payload)

    def _on_tool_updated(self, payload: dict[str, Any], turn_id: str) -> None:
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
            text = str(payload.get("error") if failed else payload.get("result") or "")
            changes: dict[str, Any] = {"status": "error" if failed else "success", "output": {"text": text},
                                       "endedAt": self.now(), "approvalInteractionId": RowStore.DROP}
            if failed:
                changes["error"] = {"code": "toolError", "message": text}
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

    def _on_turn_steerDrained(self, payload: dict[str, Any], turn_id: str) -> None:
        for drained in payload.get("drainedInputs") or []:
            guide = self.guides.pop(str(drained.get("inputId")), None)
            if guide is None:
                continue
            self._close_streams()
            user: dict[str, Any] = {"text": guide.text, "origin": "realUser", "guided": True}
            if guide.source_command_id:
                user["sourceCommandId"] = guide.source_command_id
            if guide.client_id:
                user["clientId"] = guide.client_id
            self._row("userInput", **user)

    def _on_turn_completed(self, payload: dict[str, Any], turn_id: str) -> None:
        result = str(payload.get("resultType") or "success")
        interrupted = result == "cancelled"
        turn = self._turn
        if turn is not None and turn.compact is not None:
            self.rows.upsert(turn.compact, {"marker": {"type": "compact", "origin": "manual",
                                                       "status": "cancelled" if interrupted else "success"}})
        usage = payload.get("usage")
        if isinstance(usage, dict):
            total = dict(self.state["usage"]["cumulative"])
            for key in total:
                value = usage.get(key)
                total[key] += int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0
            self.set("usage", {**self.state["usage"], "cumulative": total})
        if result in _ENDED:
            self._end_turn("interrupted" if interrupted else "complete", _ENDED[result], None)
        else:
            self._end_turn("failed", "error", {"code": result, "message": f"The turn ended: {result}"})

    def _on_turn_failed(self, payload: dict[str, Any], turn_id: str) -> None:
        error = payload.get("error") if isinstance(payload.get("error"), dict) else {}
        self._end_turn("failed", "error", {"code": str(error.get("code") or error.get("type") or "error"),
                                           "message": str(error.get("message") or "The turn failed")})

    def _on_session_titleUpdated(self, payload: dict[str, Any], turn_id: str) -> None:
        source = "custom" if payload.get("source") == "custom" else "generated"
        self.set("meta", {"title": str(payload.get("title") or ""), "titleSource": source})

    def _on_session_updated(self, payload: dict[str, Any], turn_id: str) -> None:
        if payload.get("taskId"):
            self._background(payload)
        usage = payload.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("inputTokens"), int | float):
            maximum = payload.get("contextWindow") or self.context_window
            if isinstance(maximum, int | float) and not isinstance(maximum, bool):
                self.context_window = int(maximum)
                window = {"usedTokens": usage["inputTokens"], "maxTokens": maximum, "autoCompactThresholdTokens": None}
                self.set("usage", {**self.state["usage"], "contextWindow": window})

    def _on_state_updated(self, payload: dict[str, Any], turn_id: str) -> None:
        patch = payload.get("patch") if isinstance(payload.get("patch"), dict) else payload
        config = dict(self.state["config"])
        mode = (patch.get("mode") or {}).get("current") if isinstance(patch.get("mode"), dict) else None
        if isinstance(mode, str):
            config.update(mode=mode, planEnabled=mode == "plan")
        thought = (patch.get("thoughtLevel") or {}).get("current") if isinstance(patch.get("thoughtLevel"), dict) else None
        if isinstance(thought, str):
            config["thought"] = thought
        model = (patch.get("model") or {}).get("current") if isinstance(patch.get("model"), dict) else None
        if isinstance(model, dict) and model.get("providerId") and model.get("modelId"):
            config.update(provider=model["providerId"], model=model["modelId"])
            level = (model.get("options") or {}).get("reasoningLevel")
            if isinstance(level, str):
                config["thought"] = level
        self.switch_config(config)
        todos = patch.get("todos")
        if isinstance(todos, list):
            self.set_plan(todos)

    def _on_streamRecovery_updated(self, payload: dict[str, Any], turn_id: str) -> None:
        control = self.state["control"]
        retry = None
        if payload.get("state") == "recovering":
            retry = {"attempt": 1, "maxAttempts": 3, "nextRetryAt": self.now(),
                     "reasonCode": str(payload.get("reason") or "streamRecovery")}
        self.set("control", {**control, "apiRetry": retry})

    def _on_session_closed(self, payload: dict[str, Any], turn_id: str) -> None:
        self.set("control", {**self.state["control"], "sessionEnded": True})

    # -- changes commands make (each caller commits) -------------------------------------

    def switch_config(self, config: dict[str, Any]) -> None:
        """A new config; a different model leaves a ``modelChange`` marker on the timeline."""
        before = self.state["config"]
        selection: dict[str, Any] = {"providerId": config["provider"], "modelId": config["model"]}
        if config.get("thought"):
            selection["options"] = {"reasoningLevel": config["thought"]}
        config = {**config, "modelSelection": selection}
        if (before["provider"], before["model"]) != (config["provider"], config["model"]):
            self._row("timelineMarker", lane="lightBoundary", marker={
                "type": "modelChange", "fromProvider": before["provider"], "fromModel": before["model"],
                "toProvider": config["provider"], "toModel": config["model"], "toThought": config.get("thought", "")})
        self.set("config", config)
        if self.running:
            self.set("inputRouting", self._busy_routing())

    def set_plan(self, todos: list[Any]) -> None:
        items = [{"id": str(t.get("id") or index + 1), "content": str(t.get("content") or ""),
                  "status": _PLAN_STATUS.get(str(t.get("status")), "pending")}
                 for index, t in enumerate(todos) if isinstance(t, dict)]
        self.set("plan", {"items": items, "updatedAt": self.now()} if items else None)

    def stopping(self) -> None:
        if self.running:
            self.set("control", {**self.state["control"], "stopState": "stopping", "canStop": False})

    def cut_from(self, row_id: int) -> None:
        """An edit or retry: the rows from ``row_id`` on go, and the revision moves."""
        if self.rows.remove_from(row_id):
            self.bump_revision()
            self.refresh_availability()

    def fork_notice(self, parent_session_id: str, parent_row_id: int) -> None:
        self._row("timelineMarker", lane="turnTailBoundary",
                  marker={"type": "forkNotice", "parentSessionId": parent_session_id, "parentRowId": parent_row_id})

    def fork_created(self, child_session_id: str, at_row_id: int) -> None:
        self._row("timelineMarker", lane="turnTailBoundary",
                  marker={"type": "forkCreated", "childSessionId": child_session_id, "atRowId": at_row_id})

    def copy_rows(self, rows: list[dict[str, Any]]) -> None:
        """A fork's history: the parent's rows up to the fork point, renumbered here."""
        for row in rows:
            fields = {k: v for k, v in row.items() if k not in ("rowId", "entityId", "kind", "createdAtSeq")}
            self.rows.append(row["kind"], {"createdAtSeq": self.log.seq + 1}, fields)

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

    # -- inside --------------------------------------------------------------------------

    def _row(self, kind: str, **fields: Any) -> dict[str, Any]:
        turn_id = self._turn.turn_id if self._turn else self._last_turn_id
        base = {"turnId": turn_id, "productTurnId": turn_id, "createdAt": self.now(), "createdAtSeq": self.log.seq + 1}
        if kind == "toolCall":
            base["entityId"] = f"tool-{fields['toolCallId']}"
        row = self.rows.append(kind, base, fields)
        return row

    def _busy_routing(self) -> dict[str, Any]:
        return {"mode": "guide" if self.state["config"].get("followupMode") == "guide" else "enqueue"}

    def _control_running(self, target: str, work: dict[str, Any]) -> None:
        self.set("control", {"phase": "running", "sessionEnded": False, "canStop": True, "stopState": "stoppable",
                             "stopTargetKind": target, "activeWorks": [work], "lastError": None, "apiRetry": None})
        self.set("inputRouting", self._busy_routing())
        self.refresh_availability()

    def _stream(self, attr: str, kind: str, delta: str) -> None:
        if not delta:
            return
        if self._turn is None:
            self._turn = _Turn(self._last_turn_id or "turn-orphan")
        other = "reasoning" if attr == "text" else "text"
        self._close(other, "complete")
        open_row = getattr(self._turn, attr)
        if open_row is not None and self.rows.get(open_row) is not None:
            self.rows.append_text(open_row, "text", delta)
            return
        fields: dict[str, Any] = {"text": delta, "state": "streaming"}
        if kind == "assistantText":
            fields["model"] = self.state["config"]["model"]
        setattr(self._turn, attr, self._row(kind, **fields)["rowId"])

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
            self._turn = _Turn(self._last_turn_id or "turn-orphan")
        self._close_streams()
        tool_input = payload.get("input") if isinstance(payload.get("input"), dict) else {}
        name = str(payload.get("toolName") or "tool")
        row = self._row("toolCall", toolCallId=tool_call_id, toolName=name, status="inputStreaming",
                        inputText=json.dumps(tool_input, sort_keys=True), input=tool_input, startedAt=self.now())
        self._turn.tools[tool_call_id] = row["rowId"]
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

    def _open_interaction(self, payload: dict[str, Any], kind: str, anchor: int | None,
                          body: dict[str, Any]) -> str | None:
        request_id = str(payload.get("requestId") or "")
        if not request_id or request_id in self._interactions:
            return None  # a re-announcement: same question, nothing new
        interaction_id = f"int_{request_id}"
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
            self.set("pendingInteractions",
                     [i for i in self.state["pendingInteractions"] if i["interactionId"] != interaction_id])
        return interaction_id

    def _end_turn(self, row_state: str, phase: str, error: dict[str, Any] | None) -> None:
        turn = self._turn
        now = self.now()
        if turn is not None:
            self._close_streams(row_state)
            for row_id in list(turn.tools.values()) + list(turn.subagents.values()):
                row = self.rows.get(row_id) or {}
                if row.get("status") in ("inputStreaming", "pendingApproval", "running"):
                    self.rows.upsert(row_id, {"status": "cancelled", "endedAt": now,
                                              "approvalInteractionId": RowStore.DROP})
            header = self.rows.get(turn.header)
            if header is not None:
                state = {"complete": "completedSuccess", "interrupted": "completedInterrupted"}.get(row_state, "failed")
                self.rows.upsert(header["rowId"], {"state": state, "endedAt": now,
                                                   "activeMs": max(0, now - turn.started_at)})
        self._turn = None
        control = idle_control(phase)
        if error is not None:
            control["lastError"] = {**error, "recoverable": False, "at": now, "source": "runtime"}
        self.set("control", control)
        self.set("inputRouting", {"mode": "startNow"})
        self._interactions.clear()
        self.set("pendingInteractions", [])
        self.refresh_availability()

    def _background(self, payload: dict[str, Any]) -> None:
        work_id = str(payload["taskId"])
        status = _WORK_STATUS.get(str(payload.get("status")), "running")
        works = [w for w in self.state["backgroundWorks"] if w["workId"] != work_id]
        previous = next((w for w in self.state["backgroundWorks"] if w["workId"] == work_id), None)
        anchor = None
        if self._turn is not None:
            anchor = self._turn.tools.get(str(payload.get("toolCallId") or ""))
        work: dict[str, Any] = {
            "workId": work_id, "kind": "bash" if payload.get("toolName", "Bash") == "Bash" else "subagent",
            "title": str(payload.get("description") or work_id), "status": status,
            "startedAt": previous["startedAt"] if previous else self.now(),
            "anchorRowId": previous["anchorRowId"] if previous else anchor, "cancellable": status == "running"}
        if status != "running":
            work["endedAt"] = self.now()
        self.set("backgroundWorks", [*works, work])

    def _settle_background_results(self, notification: str) -> None:
        """The result turn delivers a finished work's result: it leaves the list."""
        kept = [w for w in self.state["backgroundWorks"]
                if not (w["status"] == "resultPending" and w["workId"] in notification)]
        self.set("backgroundWorks", kept)
