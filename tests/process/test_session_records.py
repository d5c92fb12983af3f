"""Sessions kept as records, not actors (docs/performance.md, "Idle sessions"): the never used ones
straight from ``session/new`` and the idle ones that left memory. A record behaves as the session did."""

import time

from tests.process.raw import RawBridge


def call(bridge: RawBridge, request_id: int, method: str, params: dict) -> dict:
    bridge.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    return bridge.until(lambda f: f.get("id") == request_id)


def prompt(bridge: RawBridge, request_id: int, session_id: str, text: str) -> dict:
    return call(bridge, request_id, "session/prompt",
                {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]})


def new_session(bridge: RawBridge, request_id: int) -> str:
    return call(bridge, request_id, "session/new", {"cwd": "/tmp", "mcpServers": []})["result"]["sessionId"]


def test_a_never_used_session_answers_its_first_prompt_and_a_deleted_one_stays_deleted(tmp_path):
    bridge = RawBridge(tmp_path)
    try:
        call(bridge, 1, "initialize", {"protocolVersion": 1})
        used, doomed = new_session(bridge, 2), new_session(bridge, 3)
        assert prompt(bridge, 4, used, "hello")["result"]["stopReason"] == "end_turn"
        assert call(bridge, 5, "session/delete", {"sessionId": doomed})["result"] == {}
        assert prompt(bridge, 6, doomed, "hello")["error"]["code"] == -32002
    finally:
        bridge.close()


def test_a_session_deleted_while_it_is_out_of_memory_does_not_come_back(tmp_path):
    bridge = RawBridge(tmp_path, env={"ZCODE_ACP_IDLE_AFTER": "0.5"})
    try:
        call(bridge, 1, "initialize", {"protocolVersion": 1})
        session_id = new_session(bridge, 2)
        assert prompt(bridge, 3, session_id, "hello")["result"]["stopReason"] == "end_turn"
        log = tmp_path / "bridge.log"
        deadline = time.monotonic() + 10
        while b"left memory (idle)" not in log.read_bytes():  # polls the bridge's own log line, bounded
            assert time.monotonic() < deadline, "the idle session never left memory"
            time.sleep(0.05)
        assert call(bridge, 4, "session/delete", {"sessionId": session_id})["result"] == {}
        assert prompt(bridge, 5, session_id, "again")["error"]["code"] == -32002
    finally:
        bridge.close()
