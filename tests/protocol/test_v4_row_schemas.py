"""schemas/engine/v4/rows.json: the nine row kinds of ``rows.ts`` with their ``actions``, and the wire
refinements the check adds (tests/engine_schema.py): topic and subscription equal inside and outside a
frame, ``fragmentIndex < fragmentCount``, an attachment chunk of at most 512 KiB decoded."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.engine_schema import ENGINE_TO_HOST, HOST_TO_ENGINE, check_conversation, schema_set

BASE = {"rowId": 1, "turnId": "t1", "entityId": "e1", "createdAt": 1, "createdAtSeq": 1}
ROWS = {
    "turnHeader": {"origin": "userInput", "state": "running", "startedAt": 1},
    "userInput": {"text": "hi", "origin": "realUser", "actions": {"canEdit": True, "editDisposition": "rewind"}},
    "assistantText": {"text": "yo", "state": "complete", "actions": {"canRetry": True, "canFork": True}},
    "reasoning": {"text": "hm", "state": "streaming"},
    "toolCall": {"toolCallId": "c", "toolName": "Bash", "status": "success", "inputText": "{}",
                 "output": {"text": "ok"}},
    "artifact": {"artifactVersionId": "v", "logicalArtifactKey": "k", "displayName": "d", "artifactType": "md",
                 "mimeType": "text/markdown", "sizeBytes": 3, "sha256": "0" * 64, "ref": "r", "state": "current"},
    "subagent": {"subagentType": "general", "status": "running", "summaryText": ""},
    "hookInvocation": {"hookInvocationId": "h", "hookEventName": "Stop", "hookCount": 1, "state": "completed",
                       "startedAt": 1, "lane": "assistantWork", "executions": []},
    "timelineMarker": {"marker": {"type": "compact", "origin": "manual", "status": "running"}},
}


def row_errors(row: dict[str, Any]) -> list[str]:
    schemas = schema_set("cli016")
    return [error.message for error in schemas.errors(schemas.uri("v4/rows.json") + "#/$defs/row", row)]


@pytest.mark.parametrize("kind", sorted(ROWS))
def test_each_of_the_nine_kinds_is_checked(kind: str) -> None:
    row = {**BASE, "kind": kind, **ROWS[kind]}
    assert row_errors(row) == []
    required = next(key for key in ROWS[kind] if key != "actions")
    assert row_errors({k: v for k, v in row.items() if k != required}), f"{kind} without {required}"


def test_nine_kinds_and_no_other() -> None:
    assert len(ROWS) == 9
    assert row_errors({**BASE, "kind": "notice", "text": "x"})


@pytest.mark.parametrize("actions", [{"canEdit": False}, {"canRetry": "yes"}, {"editDisposition": "copy"}])
def test_actions_carry_only_true_keys(actions: dict[str, Any]) -> None:
    assert row_errors({**BASE, "kind": "userInput", "text": "hi", "origin": "realUser", "actions": actions})


def test_a_model_change_marker_names_both_sources_or_neither() -> None:
    marker = {"type": "modelChange", "toProvider": "p", "toModel": "m", "toThought": "high"}
    assert row_errors({**BASE, "kind": "timelineMarker", "marker": marker}) == []
    assert row_errors({**BASE, "kind": "timelineMarker", "marker": {**marker, "fromProvider": "p"}})


def frame(outer_topic: str, inner_topic: str, outer_sub: str = "sub-1", inner_sub: str = "sub-1") -> dict[str, Any]:
    return {"method": "v4/conversation/frame", "params": {
        "wireVersion": 3, "kind": "complete", "deliveryKind": "online", "logicalFrameId": "f",
        "logicalFrameOrdinal": 1, "topic": outer_topic, "subscriptionId": outer_sub,
        "frame": {"topic": inner_topic, "subscriptionId": inner_sub, "fromSeq": 0, "toSeq": 1, "sentAt": 1,
                  "payload": {"kind": "deltas", "deltas": []}}}}


def findings(*frames: tuple[str, dict[str, Any]]) -> list[str]:
    return [f"{f.path}: {f.message}" for f in check_conversation(list(frames), "cli016")]


def test_topic_and_subscription_must_match_inside_and_outside() -> None:
    assert findings((ENGINE_TO_HOST, frame("conversation/a", "conversation/a"))) == []
    assert any("frame.topic" in f for f in findings((ENGINE_TO_HOST, frame("conversation/a", "conversation/b"))))
    assert any("frame.subscriptionId" in f
               for f in findings((ENGINE_TO_HOST, frame("conversation/a", "conversation/a", "sub-1", "sub-2"))))


def fragment(position: int, count: int) -> dict[str, Any]:
    data = base64.b64encode(b"x").decode()
    return {"method": "v4/conversation/frame", "params": {
        "wireVersion": 3, "kind": "fragment", "deliveryKind": "online", "logicalFrameId": "f",
        "logicalFrameOrdinal": 1, "topic": "conversation/a", "subscriptionId": "sub-1", "fragmentIndex": position,
        "fragmentCount": count, "logicalBytes": 2, "checksum": {"algorithm": "crc32", "value": "00000000"},
        "dataBase64": data}}


def test_a_fragment_index_is_below_its_count() -> None:
    assert not any("fragmentIndex" in f for f in findings((ENGINE_TO_HOST, fragment(1, 2))))
    assert any("fragmentIndex 2 is not below" in f for f in findings((ENGINE_TO_HOST, fragment(2, 2))))


def chunk(size: int) -> dict[str, Any]:
    return {"id": 1, "method": "v4/attachment/chunk", "params": {
        "connectionId": "c", "uploadId": "u1", "sessionId": "s", "chunkIndex": 0,
        "dataBase64": base64.b64encode(b"\0" * size).decode()}}


def test_a_chunk_is_at_most_512_kib_exactly() -> None:
    limit = 512 * 1024
    assert not any("dataBase64" in f for f in findings((HOST_TO_ENGINE, chunk(limit))))
    # One byte over encodes to the same 699 052 characters the schema's length bound allows; the check decodes.
    unpadded = base64.b64encode(b"\0" * (limit + 1)).decode()
    assert len(unpadded) == 699_052
    assert any("over the 524288-byte limit" in f for f in findings((HOST_TO_ENGINE, chunk(limit + 1))))
