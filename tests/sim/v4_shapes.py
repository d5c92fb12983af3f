"""The engine's v4 shapes, as its source states them, for checking what the simulator makes.

Facts from ``jimpablo/ZCode`` ``packages/shared/src/zcode-protocol-v4/rows.ts`` (row
kinds, their required keys and enums), ``snapshot.ts`` (the snapshot's required keys,
``control``, pending interactions and their countdowns, background works, plan, usage)
and ``input-intent.ts`` (a queue item: a strict object). ``check_snapshot`` raises
AssertionError naming the first problem.
"""

from __future__ import annotations

from typing import Any

SNAPSHOT_REQUIRED = {"protocolVersion", "sessionId", "logEpoch", "seq", "revision", "control", "availability",
                     "inputRouting", "config", "usage", "queue", "pendingInteractions", "pendingCommands",
                     "backgroundWorks", "goal", "plan", "rows"}
CONTROL = {"phase", "sessionEnded", "canStop", "stopState", "stopTargetKind", "activeWorks", "lastError", "apiRetry"}
PHASES = {"draft", "prewarming", "running", "completedSuccess", "completedInterrupted", "error"}
ROW_BASE = {"rowId", "turnId", "createdAt", "createdAtSeq"}
ROWS: dict[str, tuple[set[str], dict[str, set[str]]]] = {
    "turnHeader": ({"origin", "state", "startedAt"}, {
        "origin": {"userInput", "backgroundResult", "goalContinuation", "editRerun", "workflowLaunch"},
        "state": {"running", "completedSuccess", "completedInterrupted", "failed"}}),
    "userInput": ({"text", "origin"}, {
        "origin": {"realUser", "backgroundResult", "goalContinuation", "mailbox", "synthetic", "workflowLaunch"}}),
    "assistantText": ({"text", "state"}, {"state": {"streaming", "complete", "interrupted", "failed"}}),
    "reasoning": ({"text", "state"}, {"state": {"streaming", "complete", "interrupted"}}),
    "toolCall": ({"toolCallId", "toolName", "status", "inputText"}, {
        "status": {"inputStreaming", "pendingApproval", "running", "success", "error", "cancelled"}}),
    "subagent": ({"subagentType", "status", "summaryText"}, {"status": {"running", "success", "failed", "cancelled"}}),
    "timelineMarker": ({"marker"}, {"lane": {"assistantWork", "turnTailBoundary", "lightBoundary"}}),
}
MARKERS = {"compact": {"origin", "status"}, "forkNotice": {"parentSessionId", "parentRowId"},
           "forkCreated": {"childSessionId", "atRowId"}, "modelChange": {"toProvider", "toModel", "toThought"},
           "retryNotice": {"attempt", "reasonCode"}}
QUEUE_ITEM = {"sourceCommandId", "queueItemId", "clientId", "kind", "text", "attachments", "delivery", "order",
              "steer", "dispatch", "admittedAt"}
QUEUE_ITEM_OPTIONAL = {"inputOrigin", "botGroupSource", "conversationQuotes", "modelSelection", "mode", "planEnabled",
                       "sharedContextRefs", "highspeed", "provenance", "source"}


def _has(value: dict[str, Any], keys: set[str], what: str) -> None:
    missing = keys - set(value)
    assert not missing, f"{what} lacks {sorted(missing)}: {value}"


def check_row(row: dict[str, Any]) -> None:
    _has(row, ROW_BASE | {"kind"}, "a row")
    assert isinstance(row["rowId"], int) and isinstance(row["turnId"], str)
    required, enums = ROWS[row["kind"]]
    _has(row, required, f"a {row['kind']} row")
    for key, allowed in enums.items():
        if key in row:
            assert row[key] in allowed, f"{row['kind']}.{key} = {row[key]!r}"
    if row["kind"] == "toolCall":
        if "output" in row:
            assert isinstance(row["output"].get("text"), str)
        if row["status"] == "error":
            _has(row.get("error") or {}, {"code", "message"}, "a failed tool's error")
    if row["kind"] == "timelineMarker":
        _has(row["marker"], MARKERS[row["marker"]["type"]], f"a {row['marker']['type']} marker")


def check_interaction(item: dict[str, Any]) -> None:
    _has(item, {"interactionId", "kind", "anchorRowId", "createdAt", "payload"}, "a pending interaction")
    assert item["kind"] in ("permission", "userInput", "workspaceHookReview")
    payload = item["payload"]
    if payload["kind"] == "permission":
        _has(payload, {"kind", "toolCallId", "toolName", "summary", "detail", "options"}, "a permission")
        for option in payload["options"]:
            _has(option, {"optionId", "label", "kind"}, "an option")
            assert option["kind"] in ("allowOnce", "allowAlways", "deny", "custom")
    else:
        _has(payload, {"kind", "prompt", "freeText"}, "a question")
    countdown = item.get("autoResolution")
    if countdown is not None:
        needs = {"snoozed": {"state", "startedAt", "snoozedAt"}}.get(countdown["state"],
                                                                     {"state", "startedAt", "visibleAt", "deadlineAt"})
        _has(countdown, needs, "a countdown")


def check_snapshot(snapshot: dict[str, Any]) -> None:
    _has(snapshot, SNAPSHOT_REQUIRED, "the snapshot")
    assert snapshot["protocolVersion"] == 1
    _has(snapshot["control"], CONTROL, "control")
    assert snapshot["control"]["phase"] in PHASES
    for work in snapshot["control"]["activeWorks"]:
        _has(work, {"kind", "startedAt"}, "an active work")
    assert snapshot["inputRouting"]["mode"] in ("startNow", "enqueue", "guide", "reject", "choice")
    assert snapshot["meta"]["titleSource"] in ("default", "generated", "custom")
    window = snapshot["usage"]["contextWindow"]
    if window is not None:
        _has(window, {"usedTokens", "maxTokens", "autoCompactThresholdTokens"}, "the context window")
    _has(snapshot["queue"], {"items", "autoDrain"}, "the queue")
    for item in snapshot["queue"]["items"]:
        _has(item, QUEUE_ITEM, "a queue item")
        assert set(item) <= QUEUE_ITEM | QUEUE_ITEM_OPTIONAL, f"a queue item is strict: {sorted(set(item) - QUEUE_ITEM)}"
    for item in snapshot["pendingInteractions"]:
        check_interaction(item)
    for work in snapshot["backgroundWorks"]:
        _has(work, {"workId", "kind", "title", "status", "startedAt", "anchorRowId"}, "a background work")
        assert work["kind"] in ("bash", "subagent", "workflow")
        assert work["status"] in ("running", "resultPending", "failed", "cancelled")
    if snapshot["plan"] is not None:
        _has(snapshot["plan"], {"items", "updatedAt"}, "the plan")
        for item in snapshot["plan"]["items"]:
            _has(item, {"id", "content", "status"}, "a plan item")
            assert item["status"] in ("pending", "inProgress", "completed")
    _has(snapshot["rows"], {"window", "totalCount", "firstRowId"}, "rows")
    ids = [row["rowId"] for row in snapshot["rows"]["window"]]
    assert ids == sorted(set(ids)), "row ids grow"
    for row in snapshot["rows"]["window"]:
        check_row(row)
