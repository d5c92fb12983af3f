"""Teardown, signals, stdout purity and bad input, seen at the line level."""

import json
import random
import signal
import time

from tests.process.raw import RawBridge, trace_acts
from tests.process.reliability import alive


def start_session_and_stream(bridge: RawBridge, text: str = "#sim hang") -> str:
    bridge.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    bridge.until(lambda f: f.get("id") == 1)
    bridge.send({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}})
    sid = bridge.until(lambda f: f.get("id") == 2)["result"]["sessionId"]
    bridge.send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
                 "params": {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}})
    bridge.until(lambda f: f.get("method") == "session/update"
                 and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
    return sid


def test_stdin_eof_mid_turn_stops_the_turn_and_leaves_no_process(tmp_path):
    bridge = RawBridge(tmp_path)
    start_session_and_stream(bridge)
    [backend] = bridge.children()
    started = time.monotonic()
    assert bridge.close() == 0
    assert time.monotonic() - started < 3
    assert not alive(backend)
    assert "session/stop" in trace_acts(tmp_path / "trace.jsonl")  # v4: the stop command


def test_sigterm_tears_down_once_and_exits_zero(tmp_path):
    bridge = RawBridge(tmp_path)
    start_session_and_stream(bridge)
    [backend] = bridge.children()
    bridge.proc.send_signal(signal.SIGTERM)
    bridge.proc.send_signal(signal.SIGINT)  # a second trigger waits on the first
    assert bridge.proc.wait(timeout=3) == 0
    assert not alive(backend)


def test_bridge_sigkill_takes_the_backend_down(tmp_path):
    bridge = RawBridge(tmp_path)
    start_session_and_stream(bridge)
    [backend] = bridge.children()
    bridge.proc.kill()
    bridge.proc.wait(timeout=3)
    deadline = time.monotonic() + 2
    while alive(backend) and time.monotonic() < deadline:
        time.sleep(0.02)  # waiting for the kernel's parent-death signal, bounded
    assert not alive(backend)


def test_cancel_request_answers_the_prompt_with_request_cancelled_once(tmp_path):
    bridge = RawBridge(tmp_path)
    start_session_and_stream(bridge)
    bridge.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 3}})
    answer = bridge.until(lambda f: f.get("id") == 3)
    assert answer["error"]["code"] == -32800
    bridge.send({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"protocolVersion": 1}})
    frames = []
    while True:  # nothing else answers id 3 before the marker answer
        frame = bridge.next_frame()
        frames.append(frame)
        if frame.get("id") == 4:
            break
    assert not [f for f in frames if f.get("id") == 3]
    assert bridge.close() == 0


def test_malformed_input_gets_errors_and_never_corrupts_stdout(tmp_path):
    bridge = RawBridge(tmp_path)
    rng = random.Random(1234)
    valid = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    garbage = [b"{", b"]", b"null", b"[]", b'[{"jsonrpc":"2.0","id":1,"method":"x"}]', b'{"jsonrpc":"2.0"}',
               b'{"jsonrpc":"2.0","id":{},"method":"x"}', b'{"jsonrpc":"2.0","method":7}', b"\xff\xfe\xfd",
               b'{"a": NaN}', b'{"jsonrpc":"1.0","method":"initialize"}']
    expected_ids = set()
    readable_cuts = 0
    lines = []
    for index in range(2000):
        choice = rng.random()
        if choice < 0.4:
            lines.append(rng.choice(garbage))
        elif choice < 0.6:
            cut = rng.randrange(1, len(valid))
            lines.append(valid[:cut].encode())
            if cut >= valid.index('"id": 0,') + len('"id": 0,'):
                readable_cuts += 1  # its id is readable: the parse error is answered with it (issue 29)
        elif choice < 0.8:
            request_id = 10_000 + index
            expected_ids.add(request_id)
            method = rng.choice(["initialize", "session/nope", "session/prompt", "session/new"])
            params = rng.choice([{"protocolVersion": 1}, {"sessionId": 3}, {"cwd": "rel"}, [], "x"])
            lines.append(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                                     "params": params}).encode())
        else:
            lines.append(json.dumps({"jsonrpc": "2.0", "method": "some/notification"}).encode())
    bridge.write(b"\n".join(lines) + b"\n")
    bridge.send({"jsonrpc": "2.0", "id": "end", "method": "initialize", "params": {"protocolVersion": 1}})
    answered: dict = {}
    while True:
        frame = bridge.next_frame()  # asserts every line is a JSON-RPC frame
        if frame.get("id") == "end":
            break
        if frame.get("id") is not None:
            answered[frame["id"]] = answered.get(frame["id"], 0) + 1
            if "error" in frame:
                assert frame["error"]["code"] in (-32700, -32600, -32601, -32602, -32002)
    assert answered.pop(0, 0) == readable_cuts > 0  # each cut line that shows id 0 (the same id each time)
    assert set(answered) == expected_ids
    assert set(answered.values()) == {1}  # exactly once each
    assert bridge.close() == 0


def test_available_commands_follow_the_session_new_answer(tmp_path):
    bridge = RawBridge(tmp_path)
    bridge.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    bridge.until(lambda f: f.get("id") == 1)
    bridge.send({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}})
    answer = bridge.next_frame()
    assert answer.get("id") == 2  # the answer first: clients drop updates for ids they do not know yet
    update = bridge.next_frame()
    assert update["params"]["sessionId"] == answer["result"]["sessionId"]
    assert update["params"]["update"]["sessionUpdate"] == "available_commands_update"
    assert bridge.close() == 0
