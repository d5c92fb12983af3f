"""ClientConnection over a real pipe pair, with a recording Supervisor."""

import os

import gevent
import gevent.os
import pytest

from zcode_acp.config.settings import Config
from zcode_acp.actors.client_connection import ClientConnection
from zcode_acp.actors.messages import Deliver, HoldSession, ReleaseSession, Reply, RequestHandle, Teardown
from zcode_acp.actors.session.actor import Session
from zcode_acp.actors.transport.stdio import StdioTransport
from zcode_acp.protocol import framing
from zcode_acp.protocol.session_config import SessionSettings
from tests.actors.fakes import Probe


class Pipes:
    def __init__(self):
        self.client_to_bridge = os.pipe()
        self.bridge_to_client = os.pipe()
        self.buffer = b""

    def transport(self):
        return StdioTransport(self.client_to_bridge[0], self.bridge_to_client[1])

    def send(self, data: bytes):
        os.write(self.client_to_bridge[1], data)

    def read_lines(self, count: int):
        os.set_blocking(self.bridge_to_client[0], False)
        lines = []
        with gevent.Timeout(3):
            while len(lines) < count:
                if b"\n" not in self.buffer:
                    self.buffer += gevent.os.nb_read(self.bridge_to_client[0], 65536)
                    continue
                line, self.buffer = self.buffer.split(b"\n", 1)
                lines.append(framing.decode(line))
        return lines


@pytest.fixture
def connection():
    pipes = Pipes()
    supervisor = Probe()
    conn = ClientConnection.start(supervisor.ref, pipes.transport())
    yield conn, pipes, supervisor
    conn.stop()


def update(session_id, text):
    return framing.encode({"jsonrpc": "2.0", "method": "session/update",
                           "params": {"sessionId": session_id, "update": {"text": text}}})


def test_live_updates_are_held_during_a_replay_and_follow_it(connection):
    conn, pipes, _ = connection
    conn.tell(HoldSession("s1"))
    conn.tell(Deliver("s1", update("s1", "live-1")))
    conn.tell(Deliver("s2", update("s2", "other session")))  # not held
    conn.tell(Deliver("s1", update("s1", "live-2")))
    conn.tell(ReleaseSession("s1", update("s1", "replay-1") + update("s1", "replay-2")))
    texts = [line["params"]["update"]["text"] for line in pipes.read_lines(5)]
    assert texts == ["other session", "replay-1", "replay-2", "live-1", "live-2"]


def test_each_request_is_answered_once(connection):
    conn, pipes, supervisor = connection
    pipes.send(b'{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}\n')
    [seven] = supervisor.wait_for(lambda: supervisor.of("ClientFrame"))
    conn.tell(Reply(seven.handle, {"first": True}))
    conn.tell(Reply(seven.handle, {"second": True}))  # dropped
    conn.tell(Reply(RequestHandle(8, 99), {"never asked": True}))  # dropped
    pipes.send(b'{"jsonrpc":"2.0","id":9,"method":"initialize","params":{}}\n')
    nine = supervisor.wait_for(lambda: len(supervisor.of("ClientFrame")) == 2 and supervisor.of("ClientFrame")[1])
    conn.tell(Reply(nine.handle, {"marker": True}))
    lines = pipes.read_lines(2)
    assert [line["id"] for line in lines] == [7, 9]
    assert lines[0]["result"] == {"first": True}


def test_bad_lines_are_answered_by_the_connection_itself(connection):
    conn, pipes, supervisor = connection
    pipes.send(b'not json\n[1,2]\n{"jsonrpc":"2.0","id":3}\n')
    lines = pipes.read_lines(3)
    assert [line["error"]["code"] for line in lines] == [-32700, -32600, -32600]
    assert [line["id"] for line in lines] == [None, None, 3]
    assert supervisor.of("ClientFrame") == []


def test_a_bad_line_whose_id_is_readable_is_answered_with_that_id(connection):
    """Issue 29: these were answered with a null id, although the id could be read."""
    conn, pipes, supervisor = connection
    pipes.send(b'{"jsonrpc":"2.0","id":11,"method":"session/prompt","params":{"x":NaN}}\n'  # valid JSON but NaN
               b'{"jsonrpc":"2.0","id":12,"method":"session/prompt","params":{"n":1e999}}\n'  # out of range
               b'{"jsonrpc":"2.0","id":"t-13","method":"session/prompt","params":{"cut\n'  # partly readable
               b'{"jsonrpc":"2.0","method":"x","params":{"id":14},"oops\n'  # only a nested id: not the frame's
               b'{"jsonrpc":"1.0","id":15,"method":"initialize"}\n')  # valid JSON and an id, a bad shape
    lines = pipes.read_lines(5)
    assert [line["id"] for line in lines] == [11, 12, "t-13", None, 15]
    assert [line["error"]["code"] for line in lines] == [-32700, -32700, -32700, -32700, -32600]
    assert supervisor.of("ClientFrame") == []


def test_a_frame_whose_handling_fails_is_answered_and_its_neighbours_still_go_through(connection, monkeypatch):
    conn, pipes, supervisor = connection
    original = ClientConnection._inbound
    calls = []

    def fail_first(self, frame):
        calls.append(frame["id"])
        if len(calls) == 1:
            raise RuntimeError("injected failure")
        return original(self, frame)

    monkeypatch.setattr(ClientConnection, "_inbound", fail_first)
    pipes.send(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'
               b'{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}\n')
    [line] = pipes.read_lines(1)
    assert line["id"] == 1 and line["error"]["code"] == -32603
    [frame] = supervisor.wait_for(lambda: supervisor.of("ClientFrame"))
    assert frame.frame["id"] == 2


def test_a_reused_id_after_cancel_gets_its_own_answer(connection):
    conn, pipes, supervisor = connection
    pipes.send(b'{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s"}}\n')
    [old] = supervisor.wait_for(lambda: supervisor.of("ClientFrame"))
    pipes.send(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":5}}\n')
    # A prompt's cancel goes to its session; its turn answers -32800 after its last update.
    [cancel] = supervisor.wait_for(lambda: supervisor.of("ClientRequestCancelled"))
    assert cancel.request_id is old.handle
    conn.tell(Reply(old.handle, None, {"code": -32800, "message": "Request cancelled"}))
    [cancelled] = pipes.read_lines(1)
    assert cancelled["error"]["code"] == -32800
    pipes.send(b'{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s"}}\n')
    new = supervisor.wait_for(lambda: len(supervisor.of("ClientFrame")) == 2 and supervisor.of("ClientFrame")[1])
    conn.tell(Reply(old.handle, {"stopReason": "cancelled"}))  # the old turn's late answer: dropped
    conn.tell(Reply(new.handle, {"stopReason": "end_turn"}))
    [answer] = pipes.read_lines(1)
    assert answer["id"] == 5 and answer["result"] == {"stopReason": "end_turn"}


def test_telling_a_client_that_has_left_is_not_an_error_for_the_sender():
    """A remote client leaves when it likes; a Turn that still lists it must not fail its prompt."""
    pipes = Pipes()
    supervisor = Probe()
    conn = ClientConnection.start(supervisor.ref, pipes.transport())
    conn.stop()
    conn.tell(Deliver("s1", update("s1", "for nobody")))  # raised ActorDeadError before
    conn.tell(Reply(RequestHandle(7, 1), {}))
    supervisor.stop()


def test_telling_any_other_stopped_actor_still_raises():
    import pykka

    probe = Probe()
    session = Session.start(
        session_id="acp-1", cwd="/w", mcp_servers=[], settings=SessionSettings(), backend=probe.ref,
        router=probe.ref, supervisor=probe.ref, clients=[], capabilities={}, config=Config())
    session.stop()
    with pytest.raises(pykka.ActorDeadError):
        session.tell(Teardown())
    probe.stop()


def test_a_chinese_connection_answers_what_is_open_at_its_close_in_chinese():
    """Issue 29: the bridge's own error words follow the session's language, to the last answer."""
    from zcode_acp.actors.messages import CloseConnection

    pipes = Pipes()
    supervisor = Probe()
    conn = ClientConnection.start(supervisor.ref, pipes.transport(), lang="zh-CN")
    try:
        pipes.send(b'{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{}}\n')
        supervisor.wait_for(lambda: supervisor.of("ClientFrame"))
        conn.ask(CloseConnection(), timeout=3)
        [answer] = pipes.read_lines(1)
        assert answer["id"] == 5 and answer["error"] == {"code": -32603, "message": "连接正在关闭"}
    finally:
        conn.stop()
