"""sim/v4/projection.py: the legacy event stream the cli016 dialect emits → the v4 conversation.

Each test plays legacy events (shaped as sim/cli016.py emits them) into a projection and
checks the rows and keys against the engine's source (tests/sim/v4_shapes.py), and the
ops against the bridge's own applier (``protocol/v4``: every commit must apply, and the
applied state must be the projection's).
"""

from __future__ import annotations

from typing import Any

from tests.sim.v4_shapes import check_snapshot
from zcode_acp.protocol.v4.conversation_apply import ConversationState as BridgeState
from zcode_acp.sim.v4.projection import ConversationProjection, ExpectedInput
from zcode_acp.sim.v4.snapshot import session_config


class Ticks:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> float:
        self.now += 10
        return float(self.now)


class Played:
    """A projection fed event by event, with the bridge's applier following every commit."""

    def __init__(self) -> None:
        self.clock = Ticks()
        self.projection = ConversationProjection("sess_1", session_config("zhipu", "glm-5", "high", ["low", "high"]),
                                                 clock=self.clock, context_window=200_000)
        self.bridge = BridgeState()
        assert not isinstance(self.bridge.reset(self.projection.snapshot()), str)
        self.ops: list[dict[str, Any]] = []
        self.projection.log.listeners.append(self._apply)
        self.turn = ""

    def _apply(self, commit: Any) -> None:
        self.ops += commit.ops
        changes = self.bridge.apply(commit.ops)
        assert not isinstance(changes, str), changes

    def event(self, kind: str, payload: dict[str, Any] | None = None) -> None:
        self.projection.feed({"type": kind, "payload": payload or {}, "turnId": self.turn})
        check_snapshot(self.projection.snapshot())
        snapshot = self.projection.snapshot()
        assert self.bridge.rows == snapshot["rows"]["window"]
        assert {k: v for k, v in self.bridge.state.items() if k != "seq"} == {
            k: v for k, v in snapshot.items() if k not in ("rows", "seq")}

    def start(self, text: str = "fix the build", source: str = "user") -> None:
        self.turn = f"turn_{len(self.ops)}"
        self.event("turn.started", {"inputSource": source, "input": text, "foregroundExecutionId": "exec_1"})

    def rows(self, kind: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.projection.rows.rows if kind is None or r["kind"] == kind]

    @property
    def state(self) -> dict[str, Any]:
        return self.projection.state

    def last_ops(self, count: int) -> list[str]:
        return [op["op"] for op in self.ops[-count:]]


def test_a_user_turn_opens_a_header_and_the_prompt_and_makes_the_session_running() -> None:
    played = Played()
    played.projection.expected.append(ExpectedInput("fix the build", "cmd-1", "client-1"))
    played.start()
    header, user = played.rows()
    assert header["kind"] == "turnHeader" and header["state"] == "running" and header["origin"] == "userInput"
    assert user["kind"] == "userInput" and user["text"] == "fix the build" and user["origin"] == "realUser"
    assert user["sourceCommandId"] == header["sourceCommandId"] == "cmd-1" and user["clientId"] == "client-1"
    control = played.state["control"]
    assert control["phase"] == "running" and control["canStop"] and control["stopState"] == "stoppable"
    assert control["activeWorks"][0]["kind"] == "primaryTurn"
    assert control["activeWorks"][0]["foregroundExecutionId"] == "exec_1"
    assert played.state["inputRouting"] == {"mode": "enqueue"}  # followupMode "queue"


def test_text_and_reasoning_stream_as_row_deltas_and_close_when_something_else_starts() -> None:
    played = Played()
    played.start()
    played.event("model.streaming", {"kind": "reasoning_delta", "delta": "Let me "})
    played.event("model.streaming", {"kind": "reasoning_delta", "delta": "look."})
    assert played.last_ops(1) == ["row.delta"] and played.ops[-1]["path"] == "text"
    played.event("model.streaming", {"kind": "text_delta", "delta": "Found "})
    played.event("model.streaming", {"kind": "text_delta", "delta": "it."})
    reasoning, text = played.rows("reasoning")[0], played.rows("assistantText")[0]
    assert reasoning == {**reasoning, "text": "Let me look.", "state": "complete"}
    assert text["text"] == "Found it." and text["state"] == "streaming" and text["model"] == "glm-5"
    assert [op["append"] for op in played.ops if op["op"] == "row.delta"] == ["look.", "it."]
    played.event("turn.completed", {"resultType": "success"})
    assert played.rows("assistantText")[0]["state"] == "complete"
    assert played.rows("turnHeader")[0]["state"] == "completedSuccess"
    assert played.state["control"]["phase"] == "completedSuccess" and not played.state["control"]["canStop"]
    assert played.state["inputRouting"] == {"mode": "startNow"}


def test_a_tool_walks_its_statuses_and_its_cumulative_output_grows_by_appends() -> None:
    played = Played()
    played.start()
    played.event("model.streaming", {"kind": "tool_call", "toolCallId": "t1", "toolName": "Bash",
                                     "input": {"command": "make"}})
    assert played.rows("toolCall")[0]["status"] == "inputStreaming"
    played.event("tool.updated", {"kind": "scheduled", "toolCallId": "t1", "toolName": "Bash"})
    played.event("tool.updated", {"kind": "started", "toolCallId": "t1"})
    assert played.rows("toolCall")[0]["status"] == "running"
    played.event("tool.updated", {"kind": "progress", "toolCallId": "t1", "stdoutTail": "compiling\n"})
    played.event("tool.updated", {"kind": "progress", "toolCallId": "t1", "stdoutTail": "compiling\nlinking\n"})
    assert played.ops[-1] == {"op": "row.delta", "rowId": played.rows("toolCall")[0]["rowId"], "path": "output.text",
                              "append": "linking\n"}
    played.event("tool.updated", {"kind": "error", "toolCallId": "t1", "error": "exit 2"})
    tool = played.rows("toolCall")[0]
    assert tool["status"] == "error" and tool["error"] == {"code": "toolError", "message": "exit 2"}
    assert len(played.rows("toolCall")) == 1


def test_cli016s_result_object_and_error_detail_give_the_rows_their_text() -> None:
    # The cli016 dialect sends the executor's result object and an error detail (sim/cli016_events.py).
    played = Played()
    played.start()
    for call in ("t1", "t2"):
        played.event("tool.updated", {"kind": "scheduled", "toolCallId": call, "toolName": "Read"})
        played.event("tool.updated", {"kind": "started", "toolCallId": call, "startedAt": 1})
    played.event("tool.updated", {"kind": "result", "toolCallId": "t1", "duration": 2,
                                  "result": {"success": True, "content": "# Title\n", "truncated": False}})
    played.event("tool.updated", {"kind": "error", "toolCallId": "t2",
                                  "error": {"type": "tool_execution_error", "message": "no such file"}})
    done, failed = played.rows("toolCall")
    assert done["output"]["text"] == "# Title\n"
    assert failed["error"] == {"code": "toolError", "message": "no such file"}


def test_a_permission_is_a_pending_interaction_with_its_countdown_and_holds_the_tool_until_resolved() -> None:
    played = Played()
    played.start()
    played.event("model.streaming", {"kind": "tool_call", "toolCallId": "t1", "toolName": "Write", "input": {}})
    played.event("permission.requested", {"requestId": "perm_1", "toolCallId": "t1", "toolName": "Write",
                                          "summary": "Write a.txt", "autoResolveMs": 30_000})
    [item] = played.state["pendingInteractions"]
    assert item["kind"] == "permission" and item["anchorRowId"] == played.rows("toolCall")[0]["rowId"]
    countdown = item["autoResolution"]
    assert countdown["state"] == "visibleCountdown" and countdown["deadlineAt"] - countdown["startedAt"] == 30_000
    assert played.rows("toolCall")[0]["status"] == "pendingApproval"
    assert played.rows("toolCall")[0]["approvalInteractionId"] == item["interactionId"]
    before = len(played.ops)
    played.event("permission.requested", {"requestId": "perm_1", "toolCallId": "t1"})  # a re-announcement
    assert len(played.ops) == before
    played.event("permission.resolved", {"requestId": "perm_1"})
    assert played.state["pendingInteractions"] == []
    assert played.rows("toolCall")[0]["status"] == "running" and "approvalInteractionId" not in played.rows("toolCall")[0]


def test_a_question_is_a_user_input_interaction_with_its_questions() -> None:
    played = Played()
    played.start()
    played.event("model.streaming", {"kind": "tool_call", "toolCallId": "q1", "toolName": "AskUserQuestion"})
    played.event("userInput.requested", {"requestId": "ask_1", "toolCallId": "q1", "questions": [
        {"question": "Which file?", "header": "File", "options": [{"label": "a.ts"}, {"label": "b.ts"}]}]})
    [item] = played.state["pendingInteractions"]
    assert item["kind"] == "userInput" and item["payload"]["questions"][0]["options"][1] == {"value": "b.ts",
                                                                                            "label": "b.ts"}
    played.event("userInput.resolved", {"requestId": "ask_1"})
    assert played.state["pendingInteractions"] == []


def test_a_stopped_turn_ends_interrupted_and_a_failed_one_in_error_with_the_engines_error() -> None:
    played = Played()
    played.start()
    played.event("model.streaming", {"kind": "text_delta", "delta": "Half"})
    played.event("model.streaming", {"kind": "tool_call", "toolCallId": "t1", "toolName": "Bash"})
    played.event("turn.completed", {"resultType": "cancelled"})
    assert played.state["control"]["phase"] == "completedInterrupted"
    assert played.rows("turnHeader")[0]["state"] == "completedInterrupted"
    assert played.rows("toolCall")[0]["status"] == "cancelled"
    played.start("again")
    played.event("model.streaming", {"kind": "text_delta", "delta": "Oops"})
    played.event("turn.failed", {"error": {"code": "CONFIGURATION_ERROR", "message": "Select a model"}})
    control = played.state["control"]
    assert control["phase"] == "error" and control["lastError"]["code"] == "CONFIGURATION_ERROR"
    assert control["lastError"]["source"] == "runtime" and control["lastError"]["recoverable"] is False
    assert played.rows("assistantText")[-1]["state"] == "failed"
    assert played.rows("turnHeader")[-1]["state"] == "failed"


def test_title_usage_plan_and_settings_become_meta_usage_plan_and_config() -> None:
    played = Played()
    played.event("session.titleUpdated", {"previousTitle": "", "source": "first_input", "title": "Fix the build"})
    assert played.state["meta"] == {"title": "Fix the build", "titleSource": "generated"}
    played.event("session.updated", {"usage": {"inputTokens": 1234}, "contextWindow": 200_000})
    assert played.state["usage"]["contextWindow"] == {"usedTokens": 1234, "maxTokens": 200_000,
                                                      "autoCompactThresholdTokens": None}
    played.event("state.updated", {"patch": {"todos": [{"content": "Write tests", "status": "in_progress"},
                                                        {"content": "Ship", "status": "pending"}]}})
    assert [(i["content"], i["status"]) for i in played.state["plan"]["items"]] == [("Write tests", "inProgress"),
                                                                                    ("Ship", "pending")]
    revision = played.projection.revision
    played.event("state.updated", {"patch": {"model": {"current": {"providerId": "zhipu", "modelId": "glm-5-air",
                                                                   "options": {"reasoningLevel": "low"}}},
                                             "mode": {"current": "plan"}}})
    config = played.state["config"]
    assert (config["model"], config["thought"], config["mode"], config["planEnabled"]) == ("glm-5-air", "low", "plan",
                                                                                           True)
    assert config["modelSelection"] == {"providerId": "zhipu", "modelId": "glm-5-air",
                                        "options": {"reasoningLevel": "low"}}
    marker = played.rows("timelineMarker")[-1]["marker"]
    assert marker["type"] == "modelChange" and (marker["fromModel"], marker["toModel"]) == ("glm-5", "glm-5-air")
    assert played.projection.revision == revision + 1


def test_a_compaction_is_a_compact_marker_and_a_compact_active_work() -> None:
    played = Played()
    played.start("compaction", source="compaction")
    assert played.rows("turnHeader") == [] and played.rows("userInput") == []
    assert played.state["control"]["activeWorks"][0]["kind"] == "compact"
    played.event("turn.completed", {"resultType": "success"})
    assert played.rows("timelineMarker")[0]["marker"] == {"type": "compact", "origin": "manual", "status": "success"}


def test_background_tasks_are_background_works_until_their_result_is_delivered() -> None:
    played = Played()
    played.start()
    played.event("model.streaming", {"kind": "tool_call", "toolCallId": "t1", "toolName": "Bash"})
    base = {"taskId": "exec_42", "toolCallId": "t1", "toolName": "Bash", "description": "build the project"}
    played.event("session.updated", {**base, "status": "running"})
    [work] = played.state["backgroundWorks"]
    assert work["kind"] == "bash" and work["status"] == "running" and work["cancellable"]
    assert work["anchorRowId"] == played.rows("toolCall")[0]["rowId"]
    played.event("turn.completed", {"resultType": "success"})
    played.event("session.updated", {**base, "status": "completed", "outputTail": "done\n"})
    assert played.state["backgroundWorks"][0]["status"] == "resultPending"
    played.start("<task-notification><task-id>exec_42</task-id></task-notification>", source="background_task")
    assert played.state["backgroundWorks"] == []
    assert played.rows("turnHeader")[-1]["origin"] == "backgroundResult"
    assert played.rows("userInput")[-1]["origin"] == "backgroundResult"


def test_a_task_tool_opens_a_subagent_row_that_ends_with_its_summary() -> None:
    played = Played()
    played.start()
    played.event("tool.updated", {"kind": "scheduled", "toolCallId": "a1", "toolName": "Task",
                                  "input": {"subagent_type": "explore"}})
    [agent] = played.rows("subagent")
    assert agent["status"] == "running" and agent["subagentType"] == "explore" and agent["parentToolCallId"] == "a1"
    played.event("tool.updated", {"kind": "result", "toolCallId": "a1", "result": "Found 3 files"})
    [agent] = played.rows("subagent")
    assert agent["status"] == "success" and agent["summaryText"] == "Found 3 files"


def test_a_guided_input_becomes_a_guided_user_row_when_the_turn_takes_it_in() -> None:
    played = Played()
    played.start()
    played.projection.guides["input_9"] = ExpectedInput("also run lint", "cmd-9", "client-1")
    played.event("turn.steerQueued", {"inputId": "input_9", "delivery": "guide"})
    assert played.rows("userInput")[-1]["text"] == "fix the build"
    played.event("turn.steerDrained", {"drainedInputs": [{"pendingInputId": "input_9", "delivery": "guide"}]})
    row = played.rows("userInput")[-1]
    assert row["text"] == "also run lint" and row["guided"] is True and row["sourceCommandId"] == "cmd-9"


def test_cutting_the_branch_removes_the_rows_and_moves_the_revision() -> None:
    played = Played()
    played.start("one")
    played.event("turn.completed", {"resultType": "success"})
    played.start("two")
    played.event("turn.completed", {"resultType": "success"})
    header = played.rows("turnHeader")[1]
    revision = played.projection.revision
    played.projection.cut_from(header["rowId"])
    played.projection.commit()
    # The cut, then the actions the rows left now carry (the first turn's reply is the latest again).
    assert {"op": "row.removed", "fromRowId": header["rowId"]} in played.ops[-4:]
    assert [r["text"] for r in played.rows("userInput")] == ["one"]
    assert played.projection.revision == revision + 1
    assert played.bridge.rows == played.rows()


def test_an_op_or_a_snapshot_handed_out_keeps_its_row_while_the_row_streams_on() -> None:
    """The store grows a streaming row's text in place (docs/simulator.md): what went out must not move."""
    from zcode_acp.sim.v4.rows import RowStore

    store = RowStore()
    row = store.append("assistantText", {"turnId": "t", "createdAt": 0, "createdAtSeq": 1},
                       {"text": "a", "state": "streaming"})
    appended = store.take_ops()[0]["row"]
    snapshot = store.window()["window"][0]
    for piece in ("b", "c"):
        store.append_text(row["rowId"], "text", piece)
    assert appended["text"] == "a" and snapshot["text"] == "a"
    assert store.get(row["rowId"])["text"] == "abc"
    assert [op["append"] for op in store.take_ops()] == ["b", "c"]
