"""The 0.16 engine answers fork, goal and cancelBackgroundTask in the official result shapes (issue 19)."""

from __future__ import annotations

from tests.engine_schema import schema_set
from tests.sim.peer import SimPeer


def result_errors(method: str, result: dict) -> list[str]:
    schemas = schema_set("cli016")
    uri = schemas.uri(f"methods/{method.replace('/', '.')}.json") + "#/$defs/result"
    return [error.message for error in schemas.errors(uri, result)]


def test_a_fork_answers_the_forks_snapshot(today: SimPeer) -> None:
    sid = today.create()
    today.turn(sid, "hello")
    result = today.result("session/fork", {"sessionId": sid})
    assert result_errors("session/fork", result) == []
    assert result["snapshot"]["session"]["sessionId"] == result["forkedSessionId"] != sid
    assert result["parentSessionId"] == sid


def test_a_goal_answers_its_words_and_the_snapshot(today: SimPeer) -> None:
    sid = today.create()
    result = today.result("session/goal", {"sessionId": sid, "action": "replace", "objective": "ship it"})
    assert result_errors("session/goal", result) == []
    assert "ship it" in result["response"]


def test_cancelling_a_background_task_answers_its_status(today: SimPeer) -> None:
    sid = today.create()
    events = today.turn(sid, "#sim bg_bash after=5")
    [ack] = [e["payload"]["result"]["content"] for e in events
             if e["type"] == "tool.updated" and e["payload"]["kind"] == "result"]
    task_id = ack.rsplit(" ", 1)[-1]
    result = today.result("session/cancelBackgroundTask", {"sessionId": sid, "taskId": task_id})
    assert result_errors("session/cancelBackgroundTask", result) == []
    assert result == {"cancelled": True, "status": "cancelled", "taskId": task_id}
