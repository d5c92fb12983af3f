"""The performance figures of docs/performance.md, each measured and printed.

    python bench/quality.py

startup, first token, added latency at 1,000 events/s, 200 sessions streaming
at once (with a cross-talk check), memory with 200 idle sessions, and the
replay of a 10,000-message history. Medians; run on an otherwise idle machine
for figures worth comparing.
"""

from __future__ import annotations

import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import ujson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.peer import Peer

CHUNK = re.compile(rb'"sessionId":"([^"]+)","update":\{"sessionUpdate":"agent_message_chunk",'
                   rb'"content":\{"type":"text","text":"([^"]*)"')


def startup(runs: int = 10) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        peer = Peer()
        peer.initialize()
        times.append(time.perf_counter() - started)
        peer.close()
    return statistics.median(times) * 1000


def first_token(runs: int = 20) -> float:
    peer = Peer()
    peer.initialize()
    sid = peer.new_session()
    peer.prompt(sid, "#sim stream count=1")  # warm: backend and session up
    times = []
    for _ in range(runs):
        request = peer.send("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "#sim stream count=1"}]})
        started = time.perf_counter()
        first = None
        for line in peer.lines():
            if first is None and b"agent_message_chunk" in line:
                first = time.perf_counter() - started
            if f'"id":{request},'.encode() in line:
                break
        times.append(first)
    peer.close()
    return statistics.median(times) * 1000


def latency(count: int = 3000) -> tuple[float, float, float]:
    peer = Peer()
    peer.initialize()
    sid = peer.new_session()
    peer.prompt(sid, "#sim stream count=1")
    delays: list[float] = []

    def on_line(line: bytes) -> None:
        if b"agent_message_chunk" in line:
            now = time.time()
            text = ujson.loads(line)["params"]["update"]["content"]["text"]
            delays.append(now - float(text.rstrip(";")))

    started = time.perf_counter()
    peer.prompt(sid, f"#sim slow count={count} interval=0.001 stamp=1", on_line)
    rate = count / (time.perf_counter() - started)
    peer.close()
    delays.sort()
    return (delays[len(delays) // 2] * 1000, delays[int(len(delays) * 0.99)] * 1000, rate)


def many_sessions(sessions: int = 200, deltas: int = 500) -> tuple[float, float, bool]:
    peer = Peer()
    peer.initialize()
    ids = [peer.new_session() for _ in range(sessions)]
    for sid in ids:  # materialize all first, so the figure is streaming only
        peer.prompt(sid, "#sim stream count=1")
    # one session alone, for the baseline (read the same way)
    request = peer.send("session/prompt", {"sessionId": ids[0], "prompt": [
        {"type": "text", "text": f"#sim stream count={deltas * 20} text=z"}]})
    marker = f'"id":{request},'.encode()
    started = time.perf_counter()
    data = b""
    while marker not in data:
        data = data[-64:] + os.read(peer.proc.stdout.fileno(), 1 << 20)
    single = deltas * 20 / (time.perf_counter() - started)
    requests = {}
    started = time.perf_counter()
    for index, sid in enumerate(ids):
        requests[peer.send("session/prompt", {"sessionId": sid, "prompt": [
            {"type": "text", "text": f"#sim stream count={deltas} text=s{index}."}]})] = sid
    # Raw chunks and a C-level regex, so the client is not what is measured.
    seen: Counter = Counter()
    answered = 0
    tail = b""
    fd = peer.proc.stdout.fileno()
    while answered < sessions:
        data = tail + os.read(fd, 1 << 20)
        cut = data.rfind(b"\n") + 1
        block, tail = data[:cut], data[cut:]
        seen.update(CHUNK.findall(block))
        answered += block.count(b'"stopReason"')
    elapsed = time.perf_counter() - started
    expected = Counter({(sid.encode(), f"s{index}.".encode()): deltas for index, sid in enumerate(ids)})
    clean = seen == expected
    peer.close()
    return sessions * deltas / elapsed, single, clean


def memory(sessions: int = 200) -> float:
    peer = Peer()
    peer.initialize()
    for _ in range(sessions):
        peer.prompt(peer.new_session(), "#sim stream count=1")
    rss = peer.rss_kib() / 1024
    peer.close()
    return rss


def replay(messages: int = 10000) -> tuple[float, int]:
    home = tempfile.mkdtemp()
    env = {"ZCODE_HOME": home, "ZCODE_SIM_DATA": home + "/sim", "ZCODE_SIM_HISTORY_FILL": "0"}
    peer = Peer(env)
    peer.initialize()
    sid = peer.new_session()
    peer.prompt(sid, f"#sim history count={messages}")
    peer.close()
    peer = Peer(env)  # a new bridge and backend: the editor reopened
    peer.initialize()
    replayed = 0

    def count(line: bytes) -> None:
        nonlocal replayed
        replayed += b"message_chunk" in line

    started = time.perf_counter()
    peer.call("session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []}, count)
    elapsed = time.perf_counter() - started
    peer.close()
    return elapsed, replayed


def main() -> None:
    print(f"startup (spawn → initialize answered):   {startup():7.1f} ms median   (bar ≤ 250 ms)")
    print(f"first token (warm bridge):                {first_token():7.1f} ms median   (bar ≤ 30 ms)")
    p50, p99, rate = latency()
    print(f"added latency at {rate:,.0f} events/s:       p50 {p50:.2f} ms, p99 {p99:.2f} ms   (bar p50 ≤ 0.5, p99 ≤ 2)")
    aggregate, single, clean = many_sessions()
    print(f"200 sessions streaming at once:           {aggregate:,.0f} updates/s aggregate, one session alone "
          f"{single:,.0f}/s ({aggregate / single:.0%}); cross-talk: {'none' if clean else 'FOUND'}   (bar ≥ 80 %)")
    print(f"RSS with 200 idle sessions:               {memory():7.1f} MiB   (bar ≤ 80 MiB)")
    elapsed, replayed = replay()
    print(f"session/load of 10,000 messages:          {elapsed * 1000:7.0f} ms to the answer, {replayed} chunks replayed"
          f"   (bar ≤ 1.5 s)")


if __name__ == "__main__":
    main()
