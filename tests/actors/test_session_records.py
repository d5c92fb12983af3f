"""A session straight from ``session/new`` is a record in the Supervisor, not an actor, until its first
use (docs/performance.md, "Idle sessions"): 10,000 unused sessions must not cost 10,000 actors."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pykka

from tests.actors.fakes import Probe
from zcode_acp.config.settings import Config
from zcode_acp.actors.base import BridgeActor, handles
from zcode_acp.actors.model_catalog import CatalogFile
from zcode_acp.actors.messages import (ClientFrame, Dormant, GoDormant, ListSessions, RequestHandle, SessionActivity,
                                      SessionIdle)
from zcode_acp.protocol import air, framing
from zcode_acp.protocol.session_config import SessionSettings
from zcode_acp.actors.session import Session
from zcode_acp.actors.supervisor import Supervisor


def test_a_new_session_is_no_actor_until_its_first_use(tmp_path):
    # A catalog remembered from an earlier run: with none, the first session/new is made in the
    # engine at once to learn the models (tests/process/test_model_catalog_first_run.py).
    (tmp_path / "v2").mkdir()
    (tmp_path / "v2" / "acp-model-catalog.json").write_text(
        '{"version": 1, "available": [{"providerId": "zhipu", "modelId": "glm-5", "name": "GLM-5"}]}')
    conn = Probe()
    supervisor = Supervisor.start(replace(Config(), zcode_home=tmp_path), lambda: None)
    try:
        hello = RequestHandle(1, 1)
        supervisor.tell(ClientFrame(conn.ref, {"method": "initialize", "params": {"protocolVersion": 1}}, hello))
        conn.wait_reply(hello)
        handles = [RequestHandle(index, index) for index in range(2, 12)]
        for handle in handles:
            supervisor.tell(ClientFrame(conn.ref, {"method": "session/new",
                                                   "params": {"cwd": str(tmp_path), "mcpServers": []}}, handle))
        ids = [conn.wait_reply(handle, timeout=5).result["sessionId"] for handle in handles]
        listed = supervisor.ask(ListSessions(), timeout=5)
        assert {entry["sessionId"] for entry in listed} == set(ids)  # known, listed…
        assert pykka.ActorRegistry.get_by_class(Session) == []  # …and no actor among them
        first_use = {"sessionId": ids[0], "prompt": [{"type": "text", "text": "hello"}]}
        supervisor.tell(ClientFrame(conn.ref, {"method": "session/prompt", "params": first_use}, RequestHandle(20, 20)))
        supervisor.ask(ListSessions(), timeout=5)  # in mailbox order after the prompt was handed on
        (started,) = pykka.ActorRegistry.get_by_class(Session)
        assert started.proxy().session_id.get(timeout=5) == ids[0]
    finally:
        for ref in pykka.ActorRegistry.get_all():
            if ref.actor_class is not Probe:
                ref.stop()


class Leaving(BridgeActor):
    """Stands for an idle Session: it agrees to go and leaves its record."""

    @handles(GoDormant)
    def on_go_dormant(self, message):
        return Dormant("/work", [], "sess_engine", SessionSettings(), True)


def test_a_session_out_of_memory_keeps_its_title_and_time_in_the_listing(tmp_path):
    supervisor = Supervisor.start(replace(Config(), zcode_home=tmp_path), lambda: None)
    try:
        state = supervisor._actor_weakref()
        state.sessions["s1"] = Leaving.start()  # between two messages: the Supervisor is not running
        supervisor.tell(SessionActivity("s1", False, title="Fix the parser"))
        (live,) = supervisor.ask(ListSessions(), timeout=5)
        supervisor.tell(SessionIdle("s1"))
        (dormant,) = supervisor.ask(ListSessions(), timeout=5)
        assert "s1" in state.dormant and "s1" not in state.sessions
        assert "s1" not in state.activity  # the entry became two fields of the record
        assert dormant == live == {"sessionId": "s1", "updatedAt": live["updatedAt"], "status": "idle",
                                   "title": "Fix the parser"}
        assert live["updatedAt"] > 0
    finally:
        for ref in pykka.ActorRegistry.get_all():
            ref.stop()


def test_an_archived_session_leaves_the_hub_listing(tmp_path):
    # The phone page archives a session and goes back to the list: the hub's listing (the bridge's
    # heartbeat) no longer shows it, as the default session/list does not.
    (tmp_path / "v2").mkdir()
    (tmp_path / "v2" / "acp-model-catalog.json").write_text(
        '{"version": 1, "available": [{"providerId": "zhipu", "modelId": "glm-5", "name": "GLM-5"}]}')
    conn = Probe()
    supervisor = Supervisor.start(replace(Config(), zcode_home=tmp_path), lambda: None)
    try:
        hello = RequestHandle(1, 1)
        supervisor.tell(ClientFrame(conn.ref, {"method": "initialize", "params": {"protocolVersion": 1}}, hello))
        conn.wait_reply(hello)
        handles = [RequestHandle(index, index) for index in (2, 3)]
        for handle in handles:
            supervisor.tell(ClientFrame(conn.ref, {"method": "session/new",
                                                   "params": {"cwd": str(tmp_path), "mcpServers": []}}, handle))
        kept, archived = (conn.wait_reply(handle, timeout=5).result["sessionId"] for handle in handles)
        archive = RequestHandle(4, 4)
        supervisor.tell(ClientFrame(conn.ref, {"method": "_session/archive", "params": {"sessionId": archived}},
                                    archive))
        assert conn.wait_reply(archive, timeout=5).error is None
        listed = supervisor.ask(ListSessions(), timeout=5)
        assert [entry["sessionId"] for entry in listed] == [kept]
    finally:
        for ref in pykka.ActorRegistry.get_all():
            if ref.actor_class is not Probe:
                ref.stop()


def test_a_session_new_that_waited_for_the_catalog_still_reaches_the_list_subscriptions(tmp_path, monkeypatch):
    # Under a loaded machine the remembered catalog is read after an AIR client has subscribed to
    # its folder's list and asked for a session: that session/new is answered once the read ends,
    # and its row must reach the subscription as one answered at once does.
    held: list[Any] = []
    monkeypatch.setattr(CatalogFile, "load", lambda self, deliver: held.append(deliver))
    conn = Probe()
    supervisor = Supervisor.start(replace(Config(), zcode_home=tmp_path), lambda: None)
    try:
        supervisor.tell(ClientFrame(conn.ref, {"method": "initialize", "params": {"protocolVersion": 1}},
                                    RequestHandle(1, 1)))
        subscribe = RequestHandle(2, 2)
        supervisor.tell(ClientFrame(conn.ref, {"method": "_session/list/subscribe", "params": {"cwd": str(tmp_path)}},
                                    subscribe))
        subscription = conn.wait_reply(subscribe).result["subscriptionId"]
        new = RequestHandle(3, 3)
        supervisor.tell(ClientFrame(conn.ref, {"method": "session/new",
                                               "params": {"cwd": str(tmp_path), "mcpServers": []}}, new))
        [deliver] = held
        assert not [r for r in conn.replies() if r.request_id == new]  # waiting for the read
        deliver(None)  # the read ends with no catalog (a fresh install)
        session_id = conn.wait_reply(new, timeout=5).result["sessionId"]

        def changes() -> list[dict[str, Any]]:
            frames = [framing.decode(line) for d in conn.of("Deliver") for line in d.payload.splitlines()]
            return [f["params"] for f in frames if f.get("method") == air.LIST_CHANGES_METHOD]

        [change] = conn.wait_for(changes, timeout=5)
        assert change["subscriptionId"] == subscription and change["removed"] == []
        assert [row["sessionId"] for row in change["sessions"]] == [session_id]
    finally:
        for ref in pykka.ActorRegistry.get_all():
            if ref.actor_class is not Probe:
                ref.stop()
