"""The conversation projection: the legacy engine event stream → v4 state and deltas.

The cli016 dialect emits the engine's legacy ``session/event`` stream (``turn.started``,
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

from collections import deque
from collections.abc import Callable
from typing import Any

from .log import Commit
from .rows import RowStore
from .snapshot import idle_control
from .turn_parts import ExpectedInput, TurnParts, OpenTurn

ROW_TEXT_LIMIT = 2 * 1024 * 1024
"""Characters of one streaming text row before the simulator goes on in a new row. A row's
closing ``row.upserted`` carries its whole text, and the engine sends no logical frame over
16 MiB (docs/v4.md); how it keeps a huge reply under that the sources do not say
(docs/decisions.md, "The simulator's v4 data plane")."""
_ENDED = {"success": "completedSuccess", "cancelled": "completedInterrupted"}
_PLAN_STATUS = {"pending": "pending", "in_progress": "inProgress", "inProgress": "inProgress", "completed": "completed"}

__all__ = ["ConversationProjection", "ExpectedInput"]


class ConversationProjection(TurnParts):
    """Consumes legacy events (``feed``); commands change it through the methods below."""

    def __init__(self, session_id: str, config: dict[str, Any], *, clock: Callable[[], float],
                 context_window: int | None = None, log_epoch: str | None = None) -> None:
        super().__init__(session_id, config, clock=clock, context_window=context_window, log_epoch=log_epoch)
        self.expected: deque[ExpectedInput] = deque()
        self.guides: dict[str, ExpectedInput] = {}
        self.deciding_command: str | None = None  # the v4 command being decided, if one is
        self.compact_command: str | None = None  # the v4 compact whose compaction is yet to start

    @property
    def busy(self) -> bool:
        """A turn runs, or one was asked for and has not started yet (the engine admits one at a time)."""
        return self.running or bool(self.expected)

    def feed(self, event: dict[str, Any]) -> Commit | None:
        """One legacy event ``{type, payload, turnId?}``: its changes as one commit (None: none)."""
        handler = getattr(self, "_on_" + str(event.get("type", "")).replace(".", "_"), None)
        if handler is not None:
            handler(event.get("payload") or {}, event.get("turnId") or "")
        return self.commit()

    def _on_turn_started(self, payload: dict[str, Any], turn_id: str) -> None:
        now = self.now()
        self._close_streams()
        turn = self._turn = OpenTurn(turn_id or f"turn-{self.rows.next_row_id}", started_at=now)
        self._last_turn_id = turn.turn_id
        source = payload.get("inputSource")
        if source == "compaction":
            # The v4 command that asked for it, if one did (rows.ts: a user's marker names its command).
            source = {"sourceCommandId": self.compact_command} if self.compact_command else {}
            self.compact_command = None
            turn.compact = self._row("timelineMarker", lane="assistantWork", **source,
                                     marker={"type": "compact", "origin": "manual", "status": "running"})["rowId"]
            self._control_running("compact", {"kind": "compact", "startedAt": now})
            self.refresh_actions()
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
        self.refresh_actions()

    def _on_model_streaming(self, payload: dict[str, Any], turn_id: str) -> None:
        kind = payload.get("kind")
        if kind in ("text_delta", "reasoning_delta", "tool_call") and self.state["control"].get("apiRetry"):
            self._set_api_retry(None)  # the model makes progress again: the retry is over
        if self._turn is not None and self._turn.compact is not None:
            return  # a compaction's summary is the marker's (``summaryRef``, rows.ts), never a reply row
        if kind == "text_delta":
            self._stream("text", "assistantText", str(payload.get("delta") or ""))
        elif kind == "reasoning_delta":
            self._stream("reasoning", "reasoning", str(payload.get("delta") or ""))
        elif kind == "tool_call":
            self._tool_row(payload)

    def _on_turn_steerDrained(self, payload: dict[str, Any], turn_id: str) -> None:
        for drained in payload.get("drainedInputs") or []:
            guide = self.guides.pop(str(drained.get("pendingInputId")), None)  # the official key (turn.steerDrained)
            if guide is None:
                continue
            self._drop_guided(guide.source_command_id)
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
            # An error ending (error_max_turns, error_during_execution, …): the engine's projector
            # puts the session in its ``error`` phase and leaves ``lastError`` as the turn's start
            # left it (null); the header says ``failed``. Which ending it was is not projected.
            self._end_turn("failed", "error", None)

    def _on_turn_failed(self, payload: dict[str, Any], turn_id: str) -> None:
        error = payload.get("error") if isinstance(payload.get("error"), dict) else {}
        turn = self._turn
        if turn is not None and turn.compact is not None:
            self.rows.upsert(turn.compact, {"marker": {"type": "compact", "origin": "manual", "status": "failed"}})
        self._end_turn("failed", "error", {"code": str(error.get("code") or error.get("type") or "error"),
                                           "message": str(error.get("message") or "The turn failed")})

    def _on_session_titleUpdated(self, payload: dict[str, Any], turn_id: str) -> None:
        source = "custom" if payload.get("source") == "custom" else "generated"
        self.set("meta", {"title": str(payload.get("title") or ""), "titleSource": source})

    def _on_session_updated(self, payload: dict[str, Any], turn_id: str) -> None:
        if payload.get("taskId"):
            self._background(payload)
        meta = payload.get("_meta")
        zcode = meta.get("zcode") if isinstance(meta, dict) else None
        if isinstance(zcode, dict) and "apiRetry" in zcode and self.running:
            self._api_retry(zcode["apiRetry"])
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

    def _api_retry(self, retry: Any) -> None:
        """Today's API retry status (``_meta.zcode.apiRetry``) as the engine's ``control.apiRetry``:
        a retry scheduled (attempt, at least one more allowed, when, why), or cleared (None)."""
        value = None
        if isinstance(retry, dict):
            attempt = max(1, int(retry.get("attempt") or 1))
            status = retry.get("errorStatus")
            code = "fault.provider.rateLimited" if status == 429 else \
                "fault.provider.serverError" if isinstance(status, int) and status >= 500 else "fault.network.unreachable"
            value = {"attempt": attempt, "maxAttempts": max(int(retry.get("maxRetries") or 0), attempt + 1),
                     "nextRetryAt": self.now() + max(0, int(retry.get("retryDelayMs") or 0)), "reasonCode": code}
        self._set_api_retry(value)

    def _set_api_retry(self, value: dict[str, Any] | None) -> None:
        control = self.state["control"]
        if control.get("apiRetry") != value:
            self.set("control", {**control, "apiRetry": value})

    def _on_streamRecovery_updated(self, payload: dict[str, Any], turn_id: str) -> None:
        # The engine's projector: a recovery started or retried shows as an API retry (attempt =
        # retry number, one more attempt than retries); a discarded tail changes nothing; the
        # model's next progress clears it (``_on_model_streaming``).
        if "retryNumber" not in payload or not self.running:
            return
        attempt = max(1, int(payload.get("retryNumber") or 1))
        current = self.state["control"].get("apiRetry") or {}
        self._set_api_retry({"attempt": attempt, "maxAttempts": max(int(payload.get("maxRetries") or 0), attempt) + 1,
                             "nextRetryAt": self.now(),
                             "reasonCode": "fault.network.sseDisconnected" if payload.get("failureKind") else
                             str(current.get("reasonCode") or "fault.network.sseDisconnected")})

    def _on_session_closed(self, payload: dict[str, Any], turn_id: str) -> None:
        self.set("control", {**self.state["control"], "sessionEnded": True})

    def switch_config(self, config: dict[str, Any]) -> None:
        """A new config; a different model leaves a ``modelChange`` marker on the timeline, naming the
        v4 command that made it, if one did (``deciding_command``)."""
        before = self.state["config"]
        selection: dict[str, Any] = {"providerId": config["provider"], "modelId": config["model"]}
        if config.get("thought"):
            selection["options"] = {"reasoningLevel": config["thought"]}
        config = {**config, "modelSelection": selection}
        if (before["provider"], before["model"]) != (config["provider"], config["model"]):
            source = {"sourceCommandId": self.deciding_command} if self.deciding_command else {}
            self._row("timelineMarker", lane="lightBoundary", **source, marker={
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
            self.refresh_actions()

    def fork_notice(self, parent_session_id: str, parent_row_id: int) -> None:
        self._row("timelineMarker", lane="turnTailBoundary",
                  marker={"type": "forkNotice", "parentSessionId": parent_session_id, "parentRowId": parent_row_id})

    def fork_created(self, child_session_id: str, at_row_id: int) -> None:
        self._row("timelineMarker", lane="turnTailBoundary",
                  marker={"type": "forkCreated", "childSessionId": child_session_id, "atRowId": at_row_id})

    def copy_rows(self, rows: list[dict[str, Any]]) -> None:
        """A fork's history: the parent's rows up to the fork point, renumbered here."""
        for row in rows:
            fields = {k: v for k, v in row.items() if k not in ("rowId", "entityId", "kind", "createdAtSeq", "actions")}
            self.rows.append(row["kind"], {"createdAtSeq": self.log.seq + 1}, fields)
        self.refresh_actions()

    def _busy_routing(self) -> dict[str, Any]:
        if self._turn is not None and self._turn.compact is not None:
            return {"mode": "enqueue", "reasonCode": "compactingAcceptsFutureInput"}  # product-projection.ts
        return {"mode": "guide" if self.state["config"].get("followupMode") == "guide" else "enqueue"}

    def idle_routing(self) -> dict[str, Any]:
        """Idle: a held queue (items waiting, not draining) makes the user choose (``choice``); else start now."""
        queue = self.state["queue"]
        return {"mode": "choice"} if queue["items"] and not queue["autoDrain"] else {"mode": "startNow"}

    def hold_queue(self, reason: str) -> None:
        """A turn failed, or a compaction failed or was stopped, with inputs queued: the engine stops draining
        (``queue {autoDrain: false, pauseReason}``) until the user decides (input-admission.ts)."""
        queue = self.state["queue"]
        if queue["items"] and queue["autoDrain"]:
            self.set("queue", {**queue, "autoDrain": False, "pauseReason": reason})

    def _drop_guided(self, source_command_id: str | None) -> None:
        """A guided input the running turn took in leaves ``queue.items`` (where it waited, admitted ``guide``)."""
        queue = self.state["queue"]
        items = [item for item in queue["items"]
                 if not (item["delivery"].get("admitted") == "guide" and item["sourceCommandId"] == source_command_id)]
        if len(items) != len(queue["items"]):
            items = [{**item, "order": {**item["order"], "queuePosition": n}} for n, item in enumerate(items)]
            self.set("queue", {**queue, "items": items})

    def refresh_actions(self) -> None:
        """``row.actions`` as the engine materialises them (fork-edit-retry.ts, resolveRowActionTarget): edit
        only the latest real-user ``userInput``; retry only the latest ``assistantText`` of a turn a real user
        asked; fork only the last, complete ``assistantText`` of a turn that ended ``completedSuccess``. Only
        true keys are sent (rows.ts). While a turn runs nothing is editable or retryable here: the engine
        would preempt the turn, which the simulator does not play (docs/simulator.md)."""
        rows = self.rows.rows
        headers = {row["turnId"]: row for row in rows if row["kind"] == "turnHeader"}
        real_turns = {row["turnId"] for row in rows if row["kind"] == "userInput" and row.get("origin") == "realUser"}
        wanted: dict[int, dict[str, Any]] = {}
        if not self.running and not self.expected:
            user = next((row for row in reversed(rows) if row["kind"] == "userInput"
                         and row.get("origin") == "realUser" and not row.get("guided")), None)
            if user is not None:
                wanted[user["rowId"]] = {"canEdit": True, "editDisposition": "rewind"}
            reply = next((row for row in reversed(rows) if row["kind"] == "assistantText"), None)
            if reply is not None and reply["turnId"] in real_turns and reply.get("state") != "streaming":
                wanted[reply["rowId"]] = {"canRetry": True}
        last_reply: dict[str, dict[str, Any]] = {}
        for row in rows:
            if row["kind"] == "assistantText":
                last_reply[row["turnId"]] = row
        for turn_id, row in last_reply.items():
            header = headers.get(turn_id)
            if row.get("state") == "complete" and header is not None and header.get("state") == "completedSuccess":
                wanted[row["rowId"]] = {**wanted.get(row["rowId"], {}), "canFork": True}
        for row in list(rows):
            actions = wanted.get(row["rowId"])
            if row.get("actions") != actions:
                self.rows.upsert(row["rowId"], {"actions": actions if actions else RowStore.DROP})

    def _control_running(self, target: str, work: dict[str, Any]) -> None:
        self.set("control", {"phase": "running", "sessionEnded": False, "canStop": True, "stopState": "stoppable",
                             "stopTargetKind": target, "activeWorks": [work], "lastError": None, "apiRetry": None})
        self.set("inputRouting", self._busy_routing())
        self.refresh_availability()

    def _stream(self, attr: str, kind: str, delta: str) -> None:
        if not delta:
            return
        if self._turn is None:
            self._turn = OpenTurn(self._last_turn_id or "turn-orphan")
        other = "reasoning" if attr == "text" else "text"
        self._close(other, "complete")
        open_row = getattr(self._turn, attr)
        row = self.rows.get(open_row) if open_row is not None else None
        if row is not None and len(row.get("text") or "") + len(delta) > ROW_TEXT_LIMIT:
            self._close(attr, "complete")  # its closing upsert carries the whole text: keep it under the frame limit
        elif row is not None:
            self.rows.append_text(open_row, "text", delta)  # type: ignore[arg-type]
            return
        fields: dict[str, Any] = {"text": delta, "state": "streaming"}
        if kind == "assistantText":
            fields["model"] = self.state["config"]["model"]
        setattr(self._turn, attr, self._row(kind, **fields)["rowId"])

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
        if phase == "error" or (turn is not None and turn.compact is not None and row_state != "complete"):
            self.hold_queue("error")
        # Guided inputs the turn never took in leave the queue: they run as the next turn (docs/simulator.md).
        queue = self.state["queue"]
        if any(item["delivery"].get("admitted") == "guide" for item in queue["items"]):
            items = [item for item in queue["items"] if item["delivery"].get("admitted") != "guide"]
            self.set("queue", {**queue, "items": [{**item, "order": {**item["order"], "queuePosition": n}}
                                                  for n, item in enumerate(items)]})
        self.set("inputRouting", self.idle_routing())
        self._interactions.clear()
        self.set("pendingInteractions", [])
        self.refresh_availability()
        self.refresh_actions()
