"""An idle Session leaves memory and comes back, transparently, on its next use (docs/performance.md)."""

import time

from tests.process.raw import RawBridge, trace_acts


def prompt(bridge: RawBridge, request_id: int, session_id: str, text: str) -> dict:
    bridge.send({"jsonrpc": "2.0", "id": request_id, "method": "session/prompt",
                 "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}})
    return bridge.until(lambda f: f.get("id") == request_id)


def test_an_idle_session_leaves_memory_and_resumes_on_its_next_prompt(tmp_path):
    bridge = RawBridge(tmp_path, env={"ZCODE_ACP_IDLE_AFTER": "0.5"})
    try:
        bridge.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        bridge.until(lambda f: f.get("id") == 1)
        bridge.send({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}})
        session_id = bridge.until(lambda f: f.get("id") == 2)["result"]["sessionId"]
        assert prompt(bridge, 3, session_id, "hello")["result"]["stopReason"] == "end_turn"
        log = tmp_path / "bridge.log"
        deadline = time.monotonic() + 10
        while b"left memory (idle)" not in log.read_bytes():  # polls the bridge's own log line, bounded
            assert time.monotonic() < deadline, "the idle session never left memory"
            time.sleep(0.05)
        assert prompt(bridge, 4, session_id, "again")["result"]["stopReason"] == "end_turn"
        methods = trace_acts(tmp_path / "trace.jsonl")  # v4: createSession counts as the create
        assert methods.count("session/resume") == 1
        assert methods.index("session/resume") > methods.index("session/create")
    finally:
        bridge.close()
