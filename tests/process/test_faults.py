"""Fault tests (docs/reliability.md): a hung backend, a killed backend, storms of prompts and cancels."""

import asyncio
import os
import random
import signal
import time

import pytest
from acp import RequestError

from tests.process.harness import AT_ONCE, bridge, run
from tests.process.raw import RawBridge


# Long enough that a loaded CI machine never misses it on an innocent call (at 1 s the warm-up calls
# of a busy 2-core run timed out), and above AT_ONCE, so that a cancel that waited for the frozen
# engine's stop to time out fails the test.
CALL_TIMEOUT = 8
KILL_SETTLES = 10


@run
async def test_a_hung_backend_times_out_clearly_and_cancel_still_answers_at_once(tmp_path):
    async with bridge(tmp_path, env={"ZCODE_ACP_CALL_TIMEOUT": str(CALL_TIMEOUT)}) as b:
        sid = await b.new_session()
        frozen = asyncio.ensure_future(b.prompt(sid, "#sim freeze"))
        await b.client.wait_for(lambda: b.client.texts(sid))
        started = time.monotonic()
        await b.conn.cancel(session_id=sid)
        assert (await frozen).stop_reason == "cancelled"
        assert time.monotonic() - started < AT_ONCE
        other = await b.new_session()
        with pytest.raises(RequestError) as err:
            await b.prompt(other, "hello")
        if os.environ.get("ZCODE_ACP_ENGINE_API") == "v4":
            # On v4 the stop is a command the engine acks (docs/v4.md): its ack missing for the call
            # timeout marks the backend wedged first, so the create fails with that, not its own timeout.
            assert err.value.code == -32603 and "createSession" in str(err.value) \
                and "stopped answering" in str(err.value)
            return
        assert err.value.code == -32603 and f"did not answer session/create within {CALL_TIMEOUT}s" in str(err.value)


@run
async def test_killing_the_backend_under_20_streaming_turns_settles_all_at_once(tmp_path):
    # 20 turns streaming 100 frames a second each: on 2 cores shared with 7 other test workers they
    # settled in 6.6 s, so "at once" is here anything under a third of the call timeout, which a
    # turn failed by a deadline rather than by the engine's death would wait out.
    async with bridge(tmp_path, env={"ZCODE_ACP_CALL_TIMEOUT": str(3 * KILL_SETTLES)}) as b:
        sessions = [await b.new_session() for _ in range(20)]
        prompts = [asyncio.ensure_future(b.prompt(sid, "#sim slow count=1000 interval=0.01")) for sid in sessions]
        await b.client.wait_for(lambda: all(b.client.texts(sid) for sid in sessions))
        [backend] = b.backend_pids()
        os.kill(backend, signal.SIGKILL)
        started = time.monotonic()
        results = await asyncio.gather(*prompts, return_exceptions=True)
        assert time.monotonic() - started < KILL_SETTLES
        assert all(isinstance(r, RequestError) and r.code == -32603 for r in results)
        response = await b.prompt(sessions[0], "#sim stream count=2")  # restarted backend, session resumed
        assert response.stop_reason == "end_turn"


def test_a_storm_of_prompts_and_cancels_answers_every_request_exactly_once(tmp_path):
    bridge = RawBridge(tmp_path)
    bridge.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    bridge.until(lambda f: f.get("id") == 0)
    sessions = []
    for index in range(10):
        bridge.send({"jsonrpc": "2.0", "id": f"new-{index}", "method": "session/new",
                     "params": {"cwd": "/tmp", "mcpServers": []}})
        sessions.append(bridge.until(lambda f, i=index: f.get("id") == f"new-{i}")["result"]["sessionId"])
    rng = random.Random(7)
    prompt_ids = []
    for step in range(400):
        sid = rng.choice(sessions)
        if rng.random() < 0.6:
            prompt_ids.append(step)
            text = rng.choice(["#sim stream count=20", "#sim slow count=20 interval=0.005", "#sim hang"])
            bridge.send({"jsonrpc": "2.0", "id": step, "method": "session/prompt",
                         "params": {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}})
        else:
            bridge.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
    for sid in sessions:  # end every hang
        bridge.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
    answers: dict = {}
    while len(answers) < len(prompt_ids):
        frame = bridge.next_frame(timeout=30)
        if isinstance(frame.get("id"), int):
            answers[frame["id"]] = answers.get(frame["id"], 0) + 1
            assert "result" in frame, frame
            assert frame["result"]["stopReason"] in ("end_turn", "cancelled")
    bridge.send({"jsonrpc": "2.0", "id": "last", "method": "initialize", "params": {"protocolVersion": 1}})
    while True:  # a marker: nothing after it answers any prompt twice
        frame = bridge.next_frame(timeout=30)
        if frame.get("id") == "last":
            break
        if isinstance(frame.get("id"), int):
            answers[frame["id"]] += 1
    assert sorted(answers) == prompt_ids and set(answers.values()) == {1}
    assert bridge.close() == 0


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


def test_a_client_that_stops_reading_costs_bounded_memory_and_loses_nothing(tmp_path):
    bridge = RawBridge(tmp_path)
    bridge.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    bridge.until(lambda f: f.get("id") == 1)
    bridge.send({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}})
    sid = bridge.until(lambda f: f.get("id") == 2)["result"]["sessionId"]
    count, text = 150_000, "y" * 200  # ~60 MB of updates
    bridge.stop_reading()
    baseline = rss_mib(bridge.proc.pid)
    bridge.send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {
        "sessionId": sid, "prompt": [{"type": "text", "text": f"#sim stream count={count} text={text}"}]}})
    peak = baseline
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:  # the client is "slow" for three seconds
        peak = max(peak, rss_mib(bridge.proc.pid))
        time.sleep(0.1)
    assert peak - baseline < 60, f"RSS grew {peak - baseline:.0f} MiB while the client did not read"
    bridge.resume_reading()
    chunks = 0
    while True:
        frame = bridge.next_frame(timeout=60)
        if frame.get("id") == 3:
            break
        if frame.get("method") == "session/update" and frame["params"]["update"]["sessionUpdate"] == "agent_message_chunk":
            chunks += 1
    assert frame["result"]["stopReason"] == "end_turn"
    assert chunks == count  # nothing promised was dropped
    assert bridge.close() == 0
