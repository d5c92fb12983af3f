"""The dispatch table, the correlation table, and what an actor owes when a handler raises."""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass, replace
from typing import Any

import gevent.event
import pytest

from zcode_acp.actors.base import BridgeActor, UnhandledMessage, handles
from zcode_acp.actors.background_tasks import BackgroundTasks
from zcode_acp.actors.backend import Backend
from zcode_acp.config.settings import Config
from zcode_acp.actors.correlation import Correlation
from zcode_acp.actors.interaction_router import InteractionRouter
from zcode_acp.actors.messages import (
    Attach,
    Batch,
    BackendCall,
    ClientsChanged,
    Extension,
    InteractionAsked,
    Prompt,
    SetSetting,
    TurnEvents,
)
from zcode_acp.actors.session import Session
from zcode_acp.protocol.content import BackendPrompt
from zcode_acp.protocol.session_config import SessionSettings
from tests.actors.fakes import Probe


@dataclass(frozen=True)
class Ping:
    n: int


@dataclass(frozen=True)
class Pong:
    n: int


class Echo(BridgeActor):
    @handles(Ping)
    def on_ping(self, message: Ping) -> int:
        return message.n + 1


def test_a_message_without_a_handler_is_refused_at_the_sender():
    echo = Echo.start()
    try:
        assert echo.ask(Ping(1)) == 2
        with pytest.raises(UnhandledMessage, match="Echo has no handler for Pong"):
            echo.tell(Pong(1))
        assert Echo.accepts(Ping) and not Echo.accepts(Pong)
    finally:
        echo.stop()


def test_every_actor_handles_what_its_handlers_declare():
    for actor in (Session, Backend, InteractionRouter, BackgroundTasks):
        assert actor._handlers, actor
        assert all(callable(handler) for handler in actor._handlers.values())


# -- the correlation table -------------------------------------------------------------------------

@dataclass(frozen=True)
class Answer:
    tag: str
    result: Any
    error: Any


def test_an_answer_reaches_whoever_asked_once_as_the_reply_they_chose():
    asker = Probe()
    table = Correlation()
    table.open(1, "m", asker.ref, functools.partial(Answer, "one"))
    reply_to, message = table.answer(1, {"ok": True}, None)
    assert reply_to is asker.ref and message == Answer("one", {"ok": True}, None)
    assert table.answer(1, {"again": True}, None) is None  # once
    assert 1 not in table and {} not in table  # an unhashable id is simply not ours


def test_a_deadline_tells_the_owner_and_close_fails_everything_left():
    owner, asker = Probe(), Probe()
    table = Correlation(owner.ref)
    table.open(1, "slow", asker.ref, functools.partial(Answer, "a"), timeout=0.05)
    table.open(2, "other", asker.ref, functools.partial(Answer, "b"))
    table.open(3, "dialog", asker.ref, functools.partial(Answer, "c"), key="k")
    [timed_out] = owner.wait_for(lambda: owner.of("RequestTimedOut"))
    assert timed_out.request_id == 1
    assert table.withdraw("k") == [3]
    assert table.fail_all({"message": "closed"}) == 2
    answers = asker.wait_for(lambda: len(asker.of("Answer")) == 2 and asker.of("Answer"))
    assert {a.tag for a in answers} == {"a", "b"} and all(a.error == {"message": "closed"} for a in answers)


# -- a handler that raises answers what it owes -----------------------------------------------------

def boom(*args: Any, **kwargs: Any) -> None:
    raise RuntimeError("injected failure")


@pytest.fixture
def session_world():
    backend, conn, supervisor, router = Probe(), Probe(), Probe(), Probe()
    session = Session.start(
        # a model catalog known (a never-used session without one is made in the engine before a load's answer)
        session_id="acp-1", cwd="/w", mcp_servers=[], settings=SessionSettings(models=(("glm-5", "GLM-5"),)),
        backend=backend.ref,
        router=router.ref, supervisor=supervisor.ref, clients=[conn.ref], capabilities={}, config=Config())
    yield session, conn
    session.stop()


@pytest.mark.parametrize("target,message", [
    ("_start_turn", lambda conn: Prompt(conn.ref, 1, BackendPrompt("hi"))),
    ("_attached", lambda conn: Attach(conn.ref, 1, "/w", True)),
    ("when_live", lambda conn: SetSetting(conn.ref, 1, "mode", "plan", "mode")),
    ("when_live", lambda conn: Extension(conn.ref, 1, "session/compact", {})),
])
def test_a_failing_session_handler_answers_its_request_with_32603(session_world, monkeypatch, target, message):
    session, conn = session_world
    monkeypatch.setattr(Session, target, boom)
    session.tell(message(conn))
    reply = conn.wait_reply(1)
    assert reply.error["code"] == -32603 and "injected failure" in reply.error["message"]


def test_a_failing_router_declines_the_backend_question(monkeypatch):
    backend, client = Probe(), Probe()
    router = InteractionRouter.start(backend.ref)
    try:
        router.tell(ClientsChanged([client.ref], {}))
        monkeypatch.setattr(InteractionRouter, "_ask", boom)
        frame = {"id": 5, "method": "interaction/requestPermission", "params": {"requestId": "r", "sessionId": "b"}}
        router.tell(InteractionAsked(frame, 1, "acp-1", "b", {"toolCallId": "c"}, None, backend.ref))
        [answer] = backend.wait_for(lambda: backend.of("AnswerBackend"))
        assert answer.request_ids == [5] and answer.result["decision"] == "deny"
    finally:
        router.stop()


def test_a_failing_backend_handler_answers_the_call(monkeypatch, tmp_path):
    backend = Backend.start(replace(Config(), zcode_bin=str(tmp_path / "missing")))
    asker = Probe()
    try:
        monkeypatch.setattr(Backend, "_ensure_process", boom)
        backend.tell(BackendCall("session/list", {}, asker.ref, functools.partial(Answer, "x")))
        [answer] = asker.wait_for(lambda: asker.of("Answer"))
        assert answer.error["code"] == -32603 and "injected failure" in answer.error["message"]
    finally:
        backend.stop()


def test_a_failing_turn_settles_its_prompt(monkeypatch):
    from zcode_acp.actors.messages import StartTurn
    from zcode_acp.actors.turn import Turn

    session, backend, router, conn = Probe(), Probe(), Probe(), Probe()
    monkeypatch.setattr(Turn, "_send", boom)
    turn = Turn.start(key=1, session=session.ref, backend=backend.ref, router=router.ref, session_id="acp-1",
                      conn=conn.ref, request_id=1, prompt=BackendPrompt("hi"), clients=[], terminal_output=False,
                      message_id="m", config=Config())
    try:
        turn.tell(StartTurn("b-1"))
        assert conn.wait_reply(1).error["code"] == -32603
        assert session.wait_for(lambda: session.of("TurnSettled"))
    finally:
        turn.stop()


def test_a_failing_supervisor_method_answers_32603_and_the_bridge_goes_on(monkeypatch, tmp_path):
    import pykka

    from zcode_acp.actors.messages import ClientFrame, RequestHandle
    from zcode_acp.actors.supervisor import Supervisor

    conn = Probe()
    monkeypatch.setattr(Supervisor, "_session_new", boom)
    supervisor = Supervisor.start(replace(Config(), zcode_home=tmp_path), lambda: None)
    try:
        first, second = RequestHandle(1, 1), RequestHandle(2, 2)
        supervisor.tell(ClientFrame(conn.ref, {"method": "session/new", "params": {"cwd": "/w"}}, first))
        supervisor.tell(ClientFrame(conn.ref, {"method": "initialize", "params": {"protocolVersion": 1}}, second))
        assert conn.wait_reply(first).error["code"] == -32603
        assert conn.wait_reply(second).result["protocolVersion"] == 1
    finally:
        for ref in pykka.ActorRegistry.get_all():
            if not isinstance(ref.actor_class, type) or ref.actor_class.__name__ != "Recorder":
                ref.stop()


class Item:
    """Stands in for a parsed event; unlike a dict it can be watched with a weak reference."""


class Sink(BridgeActor):
    def __init__(self, handled: gevent.event.Event) -> None:
        super().__init__()
        self.handled = handled

    @handles(TurnEvents)
    def on_events(self, message: TurnEvents) -> None:
        self.handled.set()


@pytest.mark.parametrize("carried", ["alone", "in a Batch"])
def test_an_idle_actor_does_not_keep_its_last_batch_alive(carried):
    """pykka's loop holds the last message until the next: a handled batch is emptied (messages.Consumed)."""
    handled, freed = gevent.event.Event(), gevent.event.Event()
    sink = Sink.start(handled)
    try:
        item = Item()
        weakref.finalize(item, freed.set)
        events = TurnEvents([item])
        sink.tell(events if carried == "alone" else Batch([events, TurnEvents([])]))
        del item, events
        assert handled.wait(2)
        assert freed.wait(2), "the batch stayed alive while its receiver waited for more"
    finally:
        sink.stop()


def test_a_turn_the_limit_stopped_ends_without_the_snapshot_when_none_comes(monkeypatch):
    # The QuotaWatch never answers (a read hangs): the prompt still ends, within QUOTA_WAIT, typed,
    # in the provider's words.
    from zcode_acp.actors import turn as turn_module
    from zcode_acp.actors.turn import Turn

    monkeypatch.setattr(turn_module, "QUOTA_WAIT", 0.2)
    session, backend, router, conn, supervisor = Probe(), Probe(), Probe(), Probe(), Probe()
    turn = Turn.start(key=1, session=session.ref, backend=backend.ref, router=router.ref, session_id="acp-1",
                      conn=conn.ref, request_id=1, prompt=BackendPrompt("hi"), clients=[], terminal_output=False,
                      message_id="m", config=Config(), supervisor=supervisor.ref)
    try:
        failed = {"type": "turn.failed", "payload": {"error": {
            "type": "model_rate_limited", "code": "1308",
            "message": "Usage limit reached for 5 hour. Your limit will reset at 2026-12-02 09:00:00"}}}
        turn.proxy().state = "running"  # as after the Session's Adopt: the events are this turn's
        turn.tell(TurnEvents([failed]))
        [asked] = supervisor.wait_for(lambda: supervisor.of("QuotaAtFailure"))
        assert asked.key == 1
        error = conn.wait_reply(1).error
        assert error["code"] == -32003 and error["data"]["quotaReason"] == "window"
        assert "Usage limit reached for 5 hour" in error["message"]
    finally:
        turn.stop()
