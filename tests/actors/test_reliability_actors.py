"""Issue 9 at the actor level: the failures no process-level test shows as fast (items 3, 4, 5)."""

import contextlib
import json
import logging

import gevent
from dataclasses import replace


from zcode_acp.actors.backend import Backend
from zcode_acp.config.settings import Config
from zcode_acp.actors.client_connection import ClientConnection
from zcode_acp.actors.messages import TerminateBackend, Throttle
from zcode_acp.actors.lazy_store import LazySessionStore
from zcode_acp.actors.session.actor import Session
from zcode_acp.actors.session.history import HistoryRead
from zcode_acp.actors.transport import fdio
from zcode_acp.actors.transport.flow import Flow
from zcode_acp.protocol.session_config import SessionSettings
from tests.actors.fakes import Probe
from tests.actors.test_backend import call, script
from tests.actors.test_client_connection import Pipes
from tests.actors.test_session_turn import CONFIG, Script, start_running


def test_a_silence_probe_that_gets_no_answer_settles_the_turn_with_an_error():
    backend, conn, supervisor, router = Probe(), Probe(), Probe(), Probe()
    config = replace(CONFIG, silence_probe=0.05, read_timeout=0.1)
    session = Session.start(
        session_id="acp-1", cwd="/w", mcp_servers=[], settings=SessionSettings(), backend=backend.ref,
        router=router.ref, supervisor=supervisor.ref, clients=[conn.ref], capabilities={}, config=config)
    try:
        script = Script(session, backend)
        start_running(session, backend, conn, script)
        probe = backend.wait_call("session/read")  # the turn went silent
        script.reply(probe, None, {"code": -32603, "message": "ZCode backend did not answer session/read within 0.1s",
                                   "timeout": True})
        reply = conn.wait_reply(1, timeout=2)
        assert reply.error is not None and reply.error["code"] == -32603
    finally:
        session.stop()


def test_the_store_never_keeps_an_entry_it_could_not_write(tmp_path):
    store = LazySessionStore(tmp_path)
    with contextlib.suppress(Exception):
        store.record("bad", "/tmp/\ud800")
    store.record("good", "/tmp")  # must not fail because of the earlier entry
    assert store.flush(5)  # writes are asynchronous (off the event loop)
    on_disk = json.loads(store.path.read_text())
    assert set(on_disk) == {"good"}
    assert "bad" not in store.load()


def test_a_bad_cancel_frame_drops_none_of_the_frames_read_with_it():
    pipes = Pipes()
    supervisor = Probe()
    conn = ClientConnection.start(supervisor.ref, pipes.transport())
    try:
        valid = b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{}}\n' % i for i in range(5))
        pipes.send(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":[1]}}\n' + valid)
        frames = supervisor.wait_for(lambda: len(supervisor.of("ClientFrame")) == 5 and supervisor.of("ClientFrame"))
        assert [m.frame["id"] for m in frames] == list(range(5))
    finally:
        conn.stop()


def test_a_deadline_never_expires_while_a_slow_client_holds_the_backend_reader(tmp_path, caplog):
    # The backend answers at once, but a client backlog pauses reading it: the answer
    # waits in the pipe, and the request's deadline passes meanwhile.
    backend = Backend.start(replace(Config(), zcode_bin=script(
        tmp_path, """read line; printf '{"id":1,"result":{"ok":true}}\\n'; sleep 30""")))
    asker = Probe()
    try:
        backend.tell(Throttle("slow-client", True))
        caplog.set_level(logging.DEBUG, logger="zcode_acp.actors.backend")
        backend.tell(call("session/list", {}, asker, "list", timeout=0.1))
        with gevent.Timeout(3, AssertionError("neither an answer nor an extended deadline within 3s")):
            while not (asker.of("Answer") or any("extended" in r.getMessage() for r in caplog.records)):
                gevent.sleep(0.01)  # polling a condition (log records wake nobody)
        assert not asker.of("Answer"), "the request timed out while the bridge itself held the answer unread"
        backend.tell(Throttle("slow-client", False))
        answer = asker.wait_for(lambda: asker.of("Answer"))[0]
        assert answer.error is None and answer.result == {"ok": True}
    finally:
        backend.tell(TerminateBackend(0.1))
        backend.stop()


def test_the_client_reader_stays_a_few_reads_ahead_of_the_tree():
    # A client that writes faster than the bridge handles must leave the excess in the
    # pipe, not in mailboxes (the long random run's memory peak came from there).
    pipes = Pipes()
    owner = Probe()  # keeps every InboundFrames (and its flow token) unhandled
    transport = pipes.transport()
    window = Flow().limit  # reads handed over but not yet handled
    transport.start(owner.ref)
    try:
        for index in range(window):
            pipes.send(b'{"n":%d}\n' % index)
            owner.wait_for(lambda count=index + 1: len(owner.of("InboundFrames")) == count)
        pipes.send(b'{"n":"more"}\n')
        with gevent.Timeout(0.3, False):  # a reader without a window reads it at once
            while fdio.unread(pipes.client_to_bridge[0]) and not len(owner.of("InboundFrames")) > window:
                gevent.sleep(0.01)
        assert len(owner.of("InboundFrames")) == window
        assert fdio.unread(pipes.client_to_bridge[0]) > 0
        owner.of("InboundFrames")[0].token.done()  # the tree handled one read
        owner.wait_for(lambda: len(owner.of("InboundFrames")) == window + 1)
    finally:
        transport.close()


def test_a_history_read_is_not_kept_after_the_loads_it_served():
    # Each Session kept its last session/messages read (its whole history) until the next load.
    read = HistoryRead()
    assert read.want("load-1")
    history = [{"info": {"id": f"m{i}", "role": "user"}, "parts": []} for i in range(3)]
    for _ in range(5):  # read until it stops growing (once or twice, whatever the policy)
        read.read_sent()
        if not read.read(history):
            break
    assert read.messages is history  # the replay is built from it…
    assert read.finish() == ["load-1"]
    assert read.messages is None  # …and then it is dropped
