"""A v4 Session ends its subscriptions (issue 31): on ``session/close``, when it leaves memory and
at teardown, each topic is unsubscribed and its connection closed, so the engine stops publishing
and may let the session go (``v4-gateway.ts``; the simulator's plane records both)."""

# ruff: noqa: F811  (the fixtures world and router are imported from test_session_v4)
from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from zcode_acp.actors.messages import GoDormant, Teardown
from zcode_acp.actors.session.actor import Session
from tests.actors.fakes import Probe
from tests.actors.test_session_v4 import CONFIG, ENGINE_MODE, prompt, router, world  # noqa: F401
from tests.actors.v4_world import GuardPlane
from tests.sim.v4_fakes import WORKSPACE


def live_after_one_turn(session: Any, backend: Any, conn: Any) -> tuple[GuardPlane, Any]:
    plane = GuardPlane(session, backend)
    prompt(session, conn, 1, "first")
    engine = plane.live()
    plane.serve("v4/command")
    plane.play(lambda: engine.start("first"), lambda: engine.text("answer"), engine.complete)
    assert conn.wait_reply(1).result["stopReason"] == "end_turn"
    assert plane.plane.resident(engine.session_id)
    return plane, engine


def assert_closed(plane: GuardPlane, backend: Any, engine: Any) -> None:
    first, second = plane.serve("v4/conversation/unsubscribe"), plane.serve("v4/conversation/unsubscribe")
    flow = plane.serve("v4/connection/flow")
    acks = [call.params for call in backend.calls("v4/conversation/subscribe")]
    topics = {first.params["topic"], second.params["topic"]}
    assert topics == {f"conversation/{engine.session_id}", f"workspace-config/{WORKSPACE}"}
    connection = first.params["connectionId"]
    assert second.params["connectionId"] == connection == acks[0]["connectionId"]
    assert flow.params == {"connectionId": connection, "state": "closed"}
    assert not plane.plane.resident(engine.session_id), "the engine may let the session go"
    calls = [m.method for m in backend.of("BackendCall")]
    assert calls.index("v4/connection/flow") > calls.index("v4/conversation/unsubscribe")


@pytest.mark.parametrize("close_backend", [True, False], ids=["session-close", "teardown"])
def test_close_and_teardown_unsubscribe_each_topic_and_close_the_connection(world, close_backend):
    session, backend, conn = world
    plane, engine = live_after_one_turn(session, backend, conn)
    session.ask(Teardown(close_backend=close_backend), timeout=3)
    assert_closed(plane, backend, engine)
    calls = [m.method for m in backend.of("BackendCall")]
    if close_backend:  # the legacy close comes after: the engine is told first that nobody listens
        assert calls.index("session/close") > calls.index("v4/connection/flow")


def test_a_session_leaving_memory_unsubscribes_and_closes_its_connection(router):
    backend, conn, supervisor = Probe(), Probe(), Probe()
    session = Session.start(
        session_id="acp-1", cwd=WORKSPACE, mcp_servers=[], settings=ENGINE_MODE, backend=backend.ref,
        router=router.ref, supervisor=supervisor.ref, clients=[conn.ref], capabilities={},
        config=replace(CONFIG, idle_session_after=0.0))
    try:
        plane, engine = live_after_one_turn(session, backend, conn)
        assert session.ask(GoDormant(), timeout=3) is not None
        assert_closed(plane, backend, engine)
    finally:
        session.stop()
        for probe in (backend, conn, supervisor):
            probe.stop()
