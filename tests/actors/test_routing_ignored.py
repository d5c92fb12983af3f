"""Event types the bridge drops on purpose never reach a Turn (docs/backend-protocol.md §6)."""

import pytest

from zcode_acp.actors.session.routing import EventRouter, Routed

DROPPED = [
    ("message.upserted", {"content": "Context was summarized.", "type": "system"}),
    ("checkpoint.created", {"checkpointId": "ckpt_1"}),
    ("session.created", {"mode": "yolo", "contextWindow": 200000}),
    ("session.resumed", {"directory": "/w", "interruptedToolCount": 0, "messageCount": 2, "partCount": 3}),
    ("message.removed", {"messageId": "m1"}),
    ("rewind.triggered", {}),
    ("part.delta", {"messageId": "m1", "partId": "p1", "delta": "x"}),
]


@pytest.mark.parametrize("kind, payload", DROPPED)
def test_dropped_types_go_nowhere(kind, payload):
    routed = Routed()
    EventRouter().route({"type": kind, "turnId": "t1", "seq": 1, "payload": payload}, routed, True, False)
    assert (routed.turn, routed.tasks, routed.session) == ([], [], [])


def test_the_events_a_turn_needs_still_reach_it():
    routed = Routed()
    router = EventRouter()
    for kind in ("streamRecovery.updated", "session.closed", "turn.completed"):
        router.route({"type": kind, "turnId": "t1", "seq": 1, "payload": {}}, routed, True, False)
    assert [e["type"] for e in routed.turn] == ["streamRecovery.updated", "session.closed", "turn.completed"]
