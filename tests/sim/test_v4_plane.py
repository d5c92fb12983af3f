"""sim/v4/plane.py: the seam — every request answered exactly once, faults and thresholds from the environment."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sim.v4_fakes import FakePort, Wire, call, create_session
from zcode_acp.sim.v4.errors import V4Error
from zcode_acp.sim.v4.faults import Faults
from zcode_acp.sim.v4.plane import DataPlane


def test_unknown_methods_and_non_object_params_are_answered_once_with_an_error() -> None:
    plane = DataPlane(FakePort(), Wire().send, faults=Faults())
    with pytest.raises(V4Error) as unknown:
        call(plane, "v4/conversation/nothing", {})
    assert unknown.value.code == -32601 and not plane.handles("v4/conversation/nothing")
    with pytest.raises(V4Error) as bad:
        call(plane, "v4/command", ["not", "an", "object"])
    assert bad.value.code == -32602


def test_faults_and_the_fragment_threshold_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZCODE_SIM_V4_FAULTS", "gap*2,duplicate")
    monkeypatch.setenv("ZCODE_SIM_V4_FRAGMENT_BYTES", "512")
    plane = DataPlane(FakePort(), Wire().send)
    assert plane.topics.fragment_bytes == 512
    assert [plane.faults.take("gap") for _ in range(3)] == [True, True, False]
    assert plane.faults.take("duplicate") and not plane.faults.take("checksum")
    with pytest.raises(ValueError, match="unknown v4 fault"):
        Faults("flood")
    stepped = Faults()
    stepped.arm_step({"type": "v4fault", "fault": "stale_subscription", "times": 2})
    assert [stepped.take("stale_subscription") for _ in range(3)] == [True, True, False] and not stepped.pending


def test_a_legacy_session_can_be_served_on_v4_and_its_events_reach_the_projection() -> None:
    port, wire = FakePort(), Wire()
    plane = DataPlane(port, wire.send, faults=Faults())
    seed = port.seed()
    projection = plane.register_session(seed, "/ws")
    assert plane.register_session(seed, "/ws") is projection
    plane.feed(seed.session_id, {"type": "turn.started", "turnId": "t1", "payload": {"inputSource": "user",
                                                                                     "input": "hi"}})
    assert projection.running
    plane.feed("unknown-session", {"type": "turn.started", "payload": {}})  # ignored, not raised
    create_session(plane)
    answers: list[Any] = []
    plane.dispatch("v4/commands/query", {"commands": [{"sessionId": None, "commandId": "create-1"}]},
                   lambda result, error: answers.append((result, error)))
    assert len(answers) == 1 and answers[0][1] is None


def test_a_handler_that_breaks_still_answers_its_request_once_with_an_internal_error() -> None:
    plane = DataPlane(FakePort(), Wire().send, faults=Faults())

    def broken(params: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("oops")

    plane._methods["v4/command"] = broken
    answers: list[Any] = []
    plane.dispatch("v4/command", {}, lambda result, error: answers.append((result, error)))
    assert len(answers) == 1 and answers[0][1].code == -32603
