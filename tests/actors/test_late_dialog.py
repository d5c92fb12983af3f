"""Issue 32, "a dialog that can open 5 ms after a cancel": the engine may ask a permission while it
stops a cancelled turn. The Turn has answered ``cancelled``; the question is declined, shown to nobody
(no dialog, no card after the answer)."""

from dataclasses import replace

import pytest

from zcode_acp.actors.interaction_router import InteractionRouter
from zcode_acp.actors.messages import BackendRequest, CancelTurn, ClientsChanged, InteractionAsked, Prompt
from zcode_acp.protocol.content import BackendPrompt
from zcode_acp.actors.session.actor import Session
from zcode_acp.config.settings import Config
from zcode_acp.protocol.session_config import SessionSettings
from tests.actors.fakes import Probe
from tests.actors.test_session_turn import Script, start_running

CONFIG = replace(Config(), busy_retry_interval=0.01, gap_wait=0.2, silence_probe=0)
ASK = {"id": 7, "method": "interaction/requestPermission",
       "params": {"requestId": "r1", "sessionId": "b-1", "toolCallId": "late-1", "toolName": "Bash",
                  "input": {"command": "rm -rf build"}}}


@pytest.fixture
def world():
    backend, conn, supervisor, router = Probe(), Probe(), Probe(), Probe()
    session = Session.start(
        session_id="acp-1", cwd="/w", mcp_servers=[], settings=SessionSettings(models=(("glm-5", "GLM-5"),)),
        backend=backend.ref, router=router.ref, supervisor=supervisor.ref, clients=[conn.ref], capabilities={},
        config=CONFIG)
    yield session, backend, conn, router
    session.stop()


def test_a_question_asked_after_the_cancel_is_declined_not_shown(world):
    session, backend, conn, router = world
    script = Script(session, backend)
    start_running(session, backend, conn, script)
    session.tell(CancelTurn())
    assert conn.wait_reply(1).result == {"stopReason": "cancelled"}
    session.tell(BackendRequest(ASK, 1))  # the engine, still stopping the turn, asks
    [asked] = router.wait_for(lambda: router.of("InteractionAsked"))
    assert getattr(asked, "declined", None)  # the router is told to decline it at once
    assert not [u for u in conn.updates() if u.get("toolCallId") == "late-1"]  # no card after the answer


def test_the_router_answers_a_declined_question_without_a_dialog():
    backend, client = Probe(), Probe()
    router = InteractionRouter.start(backend.ref)
    try:
        router.tell(ClientsChanged([client.ref], {}))
        router.tell(InteractionAsked(ASK, 1, "acp-1", "b-1", {"toolCallId": "late-1"}, None, backend.ref,
                                     declined="the turn was cancelled"))
        [answer] = backend.wait_for(lambda: backend.of("AnswerBackend"))
        assert answer.request_ids == [7] and answer.result["decision"] == "deny"
        router.ask(ClientsChanged([client.ref], {}), timeout=3)  # barrier: in mailbox order after the ask
        assert client.of("SendRequest") == []  # no dialog was ever sent
    finally:
        router.stop()


def test_on_v4_too_a_question_asked_after_the_cancel_is_declined_not_shown():
    """The v4 path answers a cancel at once and mutes the stopped turn (docs/v4.md, "Cancel"): a
    permission the engine asks while it stops that turn is declined the same way."""
    from tests.actors.test_session_v4 import CONFIG as V4_CONFIG, ENGINE_MODE, PERMISSION_FRAME, PlaneBackend
    from tests.sim.v4_fakes import WORKSPACE

    backend, conn, supervisor, router = Probe(), Probe(), Probe(), Probe()
    session = Session.start(
        session_id="acp-1", cwd=WORKSPACE, mcp_servers=[], settings=ENGINE_MODE, backend=backend.ref,
        router=router.ref, supervisor=supervisor.ref, clients=[conn.ref], capabilities={}, config=V4_CONFIG)
    try:
        plane = PlaneBackend(session, backend)
        session.tell(Prompt(conn.ref, 1, BackendPrompt("hi")))
        engine = plane.live()
        plane.serve("v4/command")
        plane.play(engine.start)
        session.tell(CancelTurn())
        assert conn.wait_reply(1).result == {"stopReason": "cancelled"}
        session.tell(BackendRequest(PERMISSION_FRAME, 1))  # the engine, still stopping the turn, asks
        [asked] = router.wait_for(lambda: router.of("InteractionAsked"))
        assert getattr(asked, "declined", None)
        assert not [u for u in conn.updates() if u.get("toolCallId") == "t1"]  # no card after the answer
    finally:
        session.stop()
