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
    schemas = schema_set("cli016")
    return [error.message for error in schemas.errors(schemas.uri("v4/conversation.frame.json"), params)]


SUMMARY = {"sessionId": "s1", "workspaceId": "/w", "title": "t", "phase": "running", "sessionEnded": False,
           "hasBackgroundWork": False, "lastActivityAt": 2, "createdAt": 1}
CONFIG = {"configOptions": [{"id": "mode", "name": "Mode", "type": "select", "currentValue": "build",
                             "options": [{"value": "build", "name": "Build"}]}],
          "slashCommands": [{"name": "compact", "description": "Compact", "source": "builtin"}]}


def test_a_sessions_index_frame_is_checked_by_sessions_index_ts() -> None:
    snapshot = {"protocolVersion": 1, "workspaceId": "/w", "logEpoch": "e", "sessions": [SUMMARY]}
    assert errors(complete("sessions-index//w", {"kind": "snapshot", "snapshot": snapshot})) == []
    assert errors(complete("sessions-index//w", {"kind": "deltas", "deltas": [
        {"op": "session.upserted", "session": SUMMARY}, {"op": "session.removed", "sessionId": "s1"}]})) == []
    assert errors(complete("sessions-index//w", {"kind": "snapshot", "snapshot": {"sessions": []}}))
    assert errors(complete("sessions-index//w", {"kind": "deltas", "deltas": [{"op": "upsert"}]}))
    assert errors(complete("sessions-index//w", {"kind": "deltas", "deltas": [
        {"op": "session.upserted", "session": {**SUMMARY, "phase": "busy"}}]}))


def test_a_workspace_config_frame_is_checked_by_workspace_config_ts() -> None:
    snapshot = {"protocolVersion": 1, "workspaceId": "/w", "logEpoch": "e", "config": CONFIG}
    assert errors(complete("workspace-config//w", {"kind": "snapshot", "snapshot": snapshot})) == []
    assert errors(complete("workspace-config//w", {"kind": "deltas", "deltas": [
        {"op": "config.updated", "config": CONFIG}]})) == []
    assert errors(complete("workspace-config//w", {"kind": "deltas", "deltas": [
        {"op": "config.updated", "config": {"configOptions": []}}]}))
    assert errors(complete("workspace-config//w", {"kind": "deltas", "deltas": [{"op": "config.replaced",
                                                                                  "config": CONFIG}]}))


@pytest.mark.parametrize("topic", ["conversation/", "sessions-index/", "workspace-config/", "other/x"])
def test_a_topic_with_no_key_or_of_no_known_kind_is_refused(topic: str) -> None:
    assert errors(complete(topic, {"kind": "deltas", "deltas": []}))


def test_a_conversation_frame_still_checks_its_snapshot() -> None:
    assert errors(complete("conversation/s", {"kind": "snapshot", "snapshot": {"sessions": []}}))
