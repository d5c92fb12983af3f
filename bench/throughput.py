"""Streaming throughput: end to end through the bridge vs. a plain relay.

    python bench/throughput.py [--count N] [--runs R] [--trace]

End to end: the real ``zcode-acp`` process on ``zcode-sim``; the simulated
backend streams N text deltas as fast as it can and this client counts the
``agent_message_chunk`` lines until the prompt's answer. Relay: in this process,
no actors — read the simulator's lines, run the same translator, encode and
write each update (to /dev/null). Both run in the same invocation, medians of
R runs, so the ratio is meaningful on a noisy machine (quality.md).

``--trace`` adds a third run per round: end to end with ``--trace`` on (docs/traces.md),
and prints its cost against the untraced bridge and what the trace dropped.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.peer import SIM, Peer
from zcode_acp.protocol import framing, jsonrpc
from zcode_acp.protocol.translator import TurnTranslator

def rpc(proc, frame):
    proc.stdin.write(json.dumps(frame).encode() + b"\n")
    proc.stdin.flush()


def wait_id(proc, request_id):
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("peer closed")
        if b'"id"' in line:
            frame = json.loads(line)
            if frame.get("id") == request_id and "method" not in frame:
                return frame


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def end_to_end(count: int, env: dict[str, str] | None = None, cpu: list[float] | None = None) -> float:
    """Updates per second; with ``cpu``, also the bridge's CPU µs per update (streaming to exit)."""
    peer = Peer(env)
    closed = False
    try:
        peer.initialize()
        sid = peer.new_session()
        peer.prompt(sid, "#sim stream count=10")  # warm-up: starts the backend and its session
        request = peer.send("session/prompt", {"sessionId": sid, "prompt": [
            {"type": "text", "text": f"#sim stream count={count}"}]})
        marker = f'"id":{request},'.encode()
        cpu_before = _cpu_seconds(peer.proc.pid)
        started = time.perf_counter()
        chunks = 0
        tail = b""
        fd = peer.proc.stdout.fileno()
        while True:  # raw chunks, counted in C: the client must not be the bottleneck
            data = tail + os.read(fd, 1 << 20)
            cut = data.rfind(b"\n") + 1
            block, tail = data[:cut], data[cut:]
            chunks += block.count(b"agent_message_chunk")
            if marker in block:
                break
        elapsed = time.perf_counter() - started
        assert chunks == count, f"got {chunks} of {count} chunks"
        if cpu is not None:
            # Up to the exit: work deferred past the stream (a trace's drain) counts too.
            peer.proc.stdin.close()
            _, _, usage = os.wait4(peer.proc.pid, 0)
            peer.proc.returncode = 0
            closed = True
            cpu.append((usage.ru_utime + usage.ru_stime - cpu_before) / count * 1e6)
        return count / elapsed
    finally:
        if not closed:
            peer.close()


def relay(count: int) -> float:
    """The no-actor baseline: read line, translate, write (GC tuned as the bridge tunes it)."""
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    sim = subprocess.Popen([SIM, "app-server", "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    sink = os.open(os.devnull, os.O_WRONLY)
    try:
        rpc(sim, {"id": 1, "method": "session/create", "params": {"workspace": {"workspacePath": "/tmp"}}})
        while True:  # answer the runtime-preferences request, then read the create answer
            frame = json.loads(sim.stdout.readline())
            if frame.get("method") == "session/requestRuntimePreferences":
                rpc(sim, {"id": frame["id"], "result": {}})
            elif frame.get("id") == 1:
                bsid = frame["result"]["session"]["sessionId"]
                break
        rpc(sim, {"id": 2, "method": "session/subscribe", "params": {"sessionId": bsid}})
        wait_id(sim, 2)
        rpc(sim, {"id": 3, "method": "session/send", "params": {"sessionId": bsid,
                                                                 "content": f"#sim stream count={count}"}})
        translator = TurnTranslator(message_id="m")
        started = time.perf_counter()
        sent = 0
        splitter = framing.LineSplitter()
        fd = sim.stdout.fileno()
        done = False
        while not done:
            chunk = os.read(fd, 262144)
            if not chunk:
                break
            out = []
            for line in splitter.feed(chunk):
                frame = framing.decode_object(line, strict=False)
                params = frame.get("params")
                if frame.get("method") != "session/event":
                    continue
                if params["type"] == "turn.completed":
                    done = True
                    break
                for update in translator.feed(params):
                    out.append(framing.encode(jsonrpc.session_update("s", update)))
                    sent += update["sessionUpdate"] == "agent_message_chunk"
            if out:
                os.write(sink, b"".join(out))
        elapsed = time.perf_counter() - started
        assert sent == count, f"relayed {sent} of {count}"
        return count / elapsed
    finally:
        os.close(sink)
        sim.stdin.close()
        sim.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--trace", action="store_true", help="also measure with tracing on")
    args = parser.parse_args()
    bridge_rates, relay_rates, traced_rates, dropped = [], [], [], []
    bridge_cpu: list[float] = []
    traced_cpu: list[float] = []
    for _ in range(args.runs):
        relay_rates.append(relay(args.count))
        bridge_rates.append(end_to_end(args.count, cpu=bridge_cpu if args.trace else None))
        if args.trace:
            traced_rates.append(traced(args.count, dropped, traced_cpu))
    bridge, plain = statistics.median(bridge_rates), statistics.median(relay_rates)
    print(f"deltas per run:           {args.count}")
    print(f"end to end (bridge):      {bridge:,.0f} updates/s   (runs: {', '.join(f'{r:,.0f}' for r in bridge_rates)})")
    print(f"plain relay (no actors):  {plain:,.0f} updates/s   (runs: {', '.join(f'{r:,.0f}' for r in relay_rates)})")
    print(f"bridge / relay:           {bridge / plain:.0%}   (bar: >= 80,000/s and >= 60%)")
    if traced_rates:
        traced_rate = statistics.median(traced_rates)
        print(f"end to end, --trace:      {traced_rate:,.0f} updates/s   "
              f"(runs: {', '.join(f'{r:,.0f}' for r in traced_rates)})")
        print(f"tracing cost:             {1 - traced_rate / bridge:.1%} of throughput   (bar: <= 10%); "
              f"chunks dropped per run: {dropped}")
        plain_cpu, with_cpu = statistics.median(bridge_cpu), statistics.median(traced_cpu)
        print(f"bridge CPU per update:    {plain_cpu:.2f} µs untraced, {with_cpu:.2f} µs traced "
              f"(+{with_cpu / plain_cpu - 1:.0%}; streaming to exit, drain included)")


def traced(count: int, dropped: list[int], cpu: list[float]) -> float:
    """End to end with tracing on; notes how many chunks the trace dropped."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "trace.jsonl")
        rate = end_to_end(count, {"ZCODE_ACP_TRACE": path}, cpu)
        with open(path, "rb") as handle:
            last = handle.read().rstrip().rsplit(b"\n", 1)[-1]
        dropped.append(json.loads(last).get("end", {}).get("droppedChunks", -1))
    return rate


if __name__ == "__main__":
    main()
