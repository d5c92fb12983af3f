"""``v4/conversation/frame`` carries the frames of all three topics (transport.ts, routedTopicFrameSchema):
``conversation/<id>``, ``sessions-index/<key>`` and ``workspace-config/<key>`` (issue 19)."""

from __future__ import annotations

import pytest

from tests.engine_schema import schema_set


def complete(topic: str, payload: dict) -> dict:
    return {"wireVersion": 3, "kind": "complete", "deliveryKind": "initial", "logicalFrameId": "f",
            "logicalFrameOrdinal": 1, "topic": topic, "subscriptionId": "sub-1",
            "frame": {"topic": topic, "subscriptionId": "sub-1", "fromSeq": 0, "toSeq": 3, "sentAt": 1,
                      "payload": payload}}


def errors(params: dict) -> list[str]:
    schemas = schema_set("today")
    return [error.message for error in schemas.errors(schemas.uri("v4/conversation.frame.json"), params)]


@pytest.mark.parametrize("topic", ["sessions-index//w", "workspace-config//w"])
def test_a_sessions_index_or_workspace_config_frame_is_a_frame(topic: str) -> None:
    assert errors(complete(topic, {"kind": "snapshot", "snapshot": {"sessions": []}})) == []
    assert errors(complete(topic, {"kind": "deltas", "deltas": [{"op": "upsert"}]})) == []


@pytest.mark.parametrize("topic", ["conversation/", "sessions-index/", "workspace-config/", "other/x"])
def test_a_topic_with_no_key_or_of_no_known_kind_is_refused(topic: str) -> None:
    assert errors(complete(topic, {"kind": "deltas", "deltas": []}))


def test_a_conversation_frame_still_checks_its_snapshot() -> None:
    assert errors(complete("conversation/s", {"kind": "snapshot", "snapshot": {"sessions": []}}))
