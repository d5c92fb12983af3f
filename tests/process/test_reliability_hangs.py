"""Issue 9, hangs and dead ends (items 1, 2, 6; item 3 is in tests/actors/test_reliability_actors.py).

Each test plays one way a backend (or a neighbour process) goes wrong and asserts
what the editor must see: an answer to every request within a bound, and a
working backend again on the next use. docs/reliability.md lists them.
"""

import fcntl
import os

import signal


from tests.process.reliability import alive, running, spawn_child, until_text, wait_gone

# Short enough to keep the tests quick, long enough that a loaded CI machine never misses it on an
# innocent call (at 1 s a busy 2-core run timed out the warm-up prompt).
CALL_TIMEOUT = 3


def test_a_backend_that_stops_reading_never_freezes_other_requests(tmp_path):
    with running(tmp_path, env={"ZCODE_ACP_CALL_TIMEOUT": str(CALL_TIMEOUT)}) as b:
        sid = b.new_session()
        b.prompt("warm", sid, "#sim stream count=1")
        assert b.answer("warm")["result"]["stopReason"] == "end_turn"
        os.kill(b.backend(), signal.SIGSTOP)
        b.prompt("big", sid, "x" * (2 * 1024 * 1024))  # more than any pipe buffer holds
        b.request("list", "session/list", {})
        listed = b.answer("list", timeout=CALL_TIMEOUT + 3)
        assert listed["error"]["code"] == -32603
        big = b.answer("big", timeout=CALL_TIMEOUT + 3)
        assert big["error"]["code"] == -32603


def test_a_backend_that_closes_stdout_but_stays_alive_is_replaced(tmp_path):
    with running(tmp_path) as b:
        sid = b.new_session()
        b.prompt("p1", sid, "#sim close_stdout")
        until_text(b, sid, "Closing")
        first = b.backend()
        assert b.answer("p1", timeout=4)["error"]["code"] == -32603
        b.prompt("p2", sid, "#sim stream count=2")
        answer = b.answer("p2", timeout=8)
        assert answer.get("result", {}).get("stopReason") == "end_turn", answer
        assert wait_gone(first, 2), "the old backend was left running"


def test_a_killed_backend_whose_child_holds_its_stdout_is_seen_dead(tmp_path):
    with running(tmp_path) as b:
        sid = b.new_session()
        child = spawn_child(b, sid, "p1")
        backend = b.backend()
        os.kill(backend, signal.SIGKILL)
        answer = b.answer("p1", timeout=4)
        assert answer["error"]["code"] == -32603
        b.prompt("p2", sid, "#sim stream count=2")
        assert b.answer("p2", timeout=8)["result"]["stopReason"] == "end_turn"
        assert wait_gone(child, 2), "the dead backend's child was left running"


def test_a_backend_that_stopped_answering_is_replaced_on_next_use(tmp_path):
    with running(tmp_path, env={"ZCODE_ACP_CALL_TIMEOUT": str(CALL_TIMEOUT)}) as b:
        sid = b.new_session()
        b.prompt("p1", sid, "#sim freeze")
        until_text(b, sid, "…")
        frozen = b.backend()
        b.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
        cancelled = b.answer("p1")
        assert cancelled.get("result", {}).get("stopReason") == "cancelled", cancelled
        other = b.new_session(request_id="new-2")
        b.prompt("p2", other, "#sim stream count=2")
        b.answer("p2", timeout=CALL_TIMEOUT + 3)  # may fail (the frozen backend times out) or run on a new one
        b.prompt("p3", other, "#sim stream count=2")
        assert b.answer("p3", timeout=CALL_TIMEOUT + 5)["result"]["stopReason"] == "end_turn"
        assert not alive(frozen)


def test_another_process_holding_the_store_lock_never_freezes_the_bridge(tmp_path):
    # Stands in for a second bridge on the same ZCODE_HOME, stopped while it holds the lock.
    folder = tmp_path / "zcode-home" / "v2"
    folder.mkdir(parents=True)
    lock = os.open(folder / "acp-lazy-sessions.json.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        with running(tmp_path) as b:
            b.request("new", "session/new", {"cwd": "/tmp", "mcpServers": []})
            seen: list[dict] = []
            b.request("init-2", "initialize", {"protocolVersion": 1})
            assert "result" in b.answer("init-2", timeout=3, seen=seen)
            new = next((f for f in seen if f.get("id") == "new"), None) or b.answer("new", timeout=5)
            assert "result" in new
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.close(lock)


def test_requests_still_open_at_stdin_eof_are_answered_before_stdout_closes(tmp_path):
    # The editor closed its input while a request waited on a backend that does not
    # answer: the teardown fails it, and that answer must still be written.
    with running(tmp_path) as b:
        sid = b.new_session()
        b.prompt("warm", sid, "#sim stream count=1")  # sessions are lazy: this starts the backend
        assert b.answer("warm")["result"]["stopReason"] == "end_turn"
        os.kill(b.backend(), signal.SIGSTOP)
        b.request("list", "session/list", {})
        b.raw.proc.stdin.close()
        answer = b.answer("list", timeout=10)
        assert answer["error"]["code"] == -32603
        assert b.raw.proc.wait(timeout=10) == 0
