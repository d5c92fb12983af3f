"""The 0.16 engine writes only events its strict schemas accept (issue 19): tool results and
errors as objects, timings on ``started``/``result``, ``turnNumber`` on every ``turn.started``.

Each event is validated against ``schemas/engine/`` (written from the engine's official zod).
"""

from __future__ import annotations

import pytest

from tests.engine_schema import schema_set
from tests.sim.peer import SimPeer

EVENT = "engine/events/session-event.json"


def invalid(events: list[dict]) -> list[str]:
    schemas = schema_set("cli016")
    uri = schemas.uri("events/session-event.json")
    return [f"{event['type']} {event['payload']}: {error.message}"
            for event in events for error in schemas.errors(uri, event)[:1]]


@pytest.mark.parametrize("prompt", ["#sim demo", "#sim tool_error", "#sim subagent_tools", "#sim edit"])
def test_a_turns_tool_events_validate_against_the_official_schema(today: SimPeer, prompt: str) -> None:
    sid = today.create()
    events = today.turn(sid, prompt)
    tools = [event for event in events if event["type"] == "tool.updated"]
    assert tools, "the scenario plays at least one tool"
    assert invalid(events) == []


def test_a_tool_result_is_the_executors_object_with_its_text_in_content(today: SimPeer) -> None:
    sid = today.create()
    events = today.turn(sid, "#sim demo")
    results = [e["payload"] for e in events if e["type"] == "tool.updated" and e["payload"]["kind"] == "result"]
    assert results
    for payload in results:
        assert payload["result"]["success"] is True and isinstance(payload["result"]["content"], str)
        assert isinstance(payload["duration"], (int, float)) and payload["duration"] >= 0


def test_a_tool_error_is_an_error_detail(today: SimPeer) -> None:
    sid = today.create()
    events = today.turn(sid, "#sim tool_error")
    [error] = [e["payload"]["error"] for e in events
               if e["type"] == "tool.updated" and e["payload"]["kind"] == "error"]
    assert set(error) == {"type", "message"} and "missing.txt" in error["message"]


def test_every_turn_started_has_a_turn_number_and_an_input(today: SimPeer) -> None:
    sid = today.create()
    events = today.turn(sid, "#sim bg_bash after=0.01")
    notice = today.wait(lambda f: f.get("method") == "session/event" and f["params"]["type"] == "turn.started"
                        and f["params"]["payload"].get("inputSource") == "background_task")
    for started in [e for e in events if e["type"] == "turn.started"] + [notice["params"]]:
        assert isinstance(started["payload"]["turnNumber"], int) and isinstance(started["payload"]["input"], str)
    assert invalid([notice["params"]]) == []
