"""Today's engine, session level: the create/resume snapshot, ``state.updated`` after every
set*, current-model-only settings, revisions, the event envelope (docs/simulator.md, Dialects).

The shapes are the engine's own (``zcode-protocol/index.ts``, ``session-mapper.ts`` and
``server-operations.ts`` of its public source), checked key by key here.
"""

from __future__ import annotations

from typing import Any

from tests.sim.peer import SimPeer

SNAPSHOT_KEYS = {"protocol", "session", "settings", "projection", "runtime", "messages", "todos", "slashCommands"}
ENVELOPE_KEYS = {"eventId", "sessionId", "turnId", "seq", "traceId", "timestamp", "deliveryKind", "type", "payload"}


def state_updates(peer: SimPeer, start: int) -> list[dict[str, Any]]:
    with peer.changed:
        frames = list(peer.frames[start:])
    return [f["params"] for f in frames if f.get("method") == "state.updated"]


def test_create_answers_the_whole_snapshot_with_every_model(today: SimPeer) -> None:
    result = today.result("session/create", {"workspace": today.workspace()})
    assert set(result) == SNAPSHOT_KEYS
    assert result["protocol"] == {"name": "ZCode Protocol", "version": 1}
    assert len(result["settings"]["model"]["available"]) == 3
    assert result["session"]["workspace"] == today.workspace()
    assert {"sessionId", "sessionKind", "title", "mode", "status", "createdAt", "updatedAt"} <= set(result["session"])
    assert result["runtime"]["stateRevision"] == 0 and result["runtime"]["pendingRequestIds"] == []
    assert [c["name"] for c in result["slashCommands"]][:2] == ["compact", "goal"]


def test_resume_answers_the_whole_snapshot_too(today: SimPeer) -> None:
    sid = today.create()
    result = today.result("session/resume", {"sessionId": sid, "workspace": today.workspace()})
    assert set(result) == SNAPSHOT_KEYS
    assert len(result["settings"]["model"]["available"]) == 3


def test_read_and_every_set_list_only_the_current_model(today: SimPeer) -> None:
    sid = today.create()
    read = today.result("session/read", {"sessionId": sid})
    assert set(read) == SNAPSHOT_KEYS
    assert [m["ref"]["modelId"] for m in read["settings"]["model"]["available"]] == ["glm-5"]
    answers = [
        today.result("session/setModel", {"sessionId": sid, "model": {
            "providerId": "zhipu", "modelId": "glm-5-air", "options": {"reasoningLevel": "low"}}}),
        today.result("session/setMode", {"sessionId": sid, "mode": "plan"}),
        today.result("session/setThoughtLevel", {"sessionId": sid, "thoughtLevel": "high"}),
    ]
    for answer in answers:
        assert [m["ref"]["modelId"] for m in answer["settings"]["model"]["available"]] == ["glm-5-air"]


def test_every_set_sends_state_updated_with_its_envelope_and_a_new_revision(today: SimPeer) -> None:
    sid = today.create()
    start = today.mark()
    today.result("session/setModel", {"sessionId": sid, "model": {
        "providerId": "zhipu", "modelId": "glm-5-air", "options": {"reasoningLevel": "low"}}})
    today.result("session/setMode", {"sessionId": sid, "mode": "plan"})
    today.result("session/setThoughtLevel", {"sessionId": sid, "thoughtLevel": "high"})
    updates = state_updates(today, start)
    assert [u["reason"] for u in updates] == ["model_changed", "mode_changed", "thought_level_changed"]
    assert [u["revision"] for u in updates] == [1, 2, 3]
    for update in updates:
        assert set(update) == {"type", "scope", "sessionId", "workspace", "revision", "reason", "patch"}
        assert (update["type"], update["scope"], update["sessionId"]) == ("state.updated", "session", sid)
        assert update["workspace"] == today.workspace()
        assert [m["ref"]["modelId"] for m in update["patch"]["model"]["available"]] == ["glm-5-air"]
    assert updates[-1]["patch"]["mode"] == {"current": "plan"}
    assert updates[-1]["patch"]["thoughtLevel"]["current"] == "high"
    assert today.result("session/read", {"sessionId": sid})["runtime"]["stateRevision"] == 3


def test_a_refused_set_changes_nothing_and_announces_nothing(today: SimPeer) -> None:
    sid = today.create()
    start = today.mark()
    assert today.error("session/setMode", {"sessionId": sid, "mode": "turbo"})["code"] == -32602
    assert today.error("session/setThoughtLevel", {"sessionId": sid, "thoughtLevel": "nope"})["code"] == -32602
    assert state_updates(today, start) == []


def test_events_carry_the_official_envelope(today: SimPeer) -> None:
    sid = today.create()
    events = today.turn(sid, "#sim stream count=2")
    for event in events:
        assert set(event) <= ENVELOPE_KEYS
        assert {"eventId", "sessionId", "seq", "timestamp", "type", "payload"} <= set(event)
        assert event["deliveryKind"] == "desktop-continuous"  # what the subscribe asked for
        assert event["traceId"].startswith("trace_")
        assert isinstance(event["timestamp"], int)
