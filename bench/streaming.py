"""The streaming figures: throughput, first update, paced latency, 200 sessions, busy retry.

Every figure here runs on the fake backend (``bench/fake_backend.py``), whose
cost per delta is a few string joins, so what is measured is the agent in
the middle: the bridge, or the minimal relay (``bench/relay.py``) as the limit.
The client reads raw blocks and counts in C (``bytes.count``); lines are
parsed only where a figure needs their content, and never while a rate is
being timed.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from typing import Any

import ujson

from bench.peer import BRIDGE, RELAY, Peer, fake_backend

CHUNK = b"agent_message_chunk"


def _agent(command: list[str]) -> Peer:
    peer = Peer(command=command, backend=fake_backend())
    peer.initialize()
    return peer


def _warm(peer: Peer) -> str:
    session_id = peer.new_session()
    peer.prompt(session_id, "bulk 10")  # the backend and the session are up
    return session_id


def stream_rate(command: list[str], count: int) -> float:
    """Updates/s of one session streaming ``count`` deltas, end to end."""
    with _agent(command) as peer:
        session_id = _warm(peer)
        request = peer.send_prompt(session_id, f"bulk {count}")
        started = time.perf_counter()
        chunks = peer.read_until(f'"id":{request},'.encode(), CHUNK)
        elapsed = time.perf_counter() - started
    if chunks != count:
        raise RuntimeError(f"got {chunks} of {count} chunks")
    return count / elapsed


def throughput(runs: int, count: int) -> tuple[list[float], list[float]]:
    """(bridge rates, relay rates): alternating runs in one invocation, so the ratio is fair."""
    bridge, relay = [], []
    for _ in range(runs):
        relay.append(stream_rate(RELAY, count))
        bridge.append(stream_rate(BRIDGE, count))
    return bridge, relay


def tracing_cost(runs: int, count: int, trace_file: str) -> tuple[list[float], list[float]]:
    """(untraced rates, traced rates), alternating: what ``--trace`` costs a stream (docs/traces.md)."""
    plain, traced = [], []
    for _ in range(runs):
        plain.append(stream_rate(BRIDGE, count))
        traced.append(stream_rate([*BRIDGE, "--trace", trace_file], count))
    return plain, traced


def _first_chunk_delay(peer: Peer, request: int) -> float:
    """Seconds from the backend writing the first (stamped) delta to this client reading it."""
    delay = None
    for line in peer.lines():
        if delay is None and CHUNK in line:
            received = time.time()
            text = ujson.loads(line)["params"]["update"]["content"]["text"]
            delay = received - float(text.rstrip(";"))
            break
    if delay is None:
        raise RuntimeError("no chunk")
    peer.read_until(f'"id":{request},'.encode())
    return delay


def first_update(command: list[str], runs: int, count: int) -> float:
    """Median ms until the first update of a ``count``-delta burst reaches the client."""
    with _agent(command) as peer:
        session_id = _warm(peer)
        delays = [_first_chunk_delay(peer, peer.send_prompt(session_id, f"burst {count}")) for _ in range(runs)]
    return statistics.median(delays) * 1000


def paced_latency(command: list[str], count: int, interval: float) -> tuple[float, float, float]:
    """(p50 ms, p99 ms, events/s): each delta carries its write time; the client subtracts."""
    delays: list[float] = []

    def on_line(line: bytes) -> None:
        if CHUNK in line:
            now = time.time()
            text = ujson.loads(line)["params"]["update"]["content"]["text"]
            delays.append(now - float(text.rstrip(";")))

    with _agent(command) as peer:
        session_id = _warm(peer)
        started = time.perf_counter()
        peer.prompt(session_id, f"paced {count} {interval}", on_line)
        rate = count / (time.perf_counter() - started)
    delays.sort()
    return delays[len(delays) // 2] * 1000, delays[int(len(delays) * 0.99)] * 1000, rate


def pipelined(peer: Peer, requests: list[tuple[str, dict[str, Any]]], window: int = 100) -> list[dict[str, Any]]:
    """Send many requests, at most ``window`` unanswered at a time; their answers, in order."""
    answers: dict[int, dict[str, Any]] = {}
    ids: list[int] = []
    sent = 0
    lines = peer.lines()
    while len(answers) < len(requests):
        while sent < len(requests) and sent - len(answers) < window:
            ids.append(peer.send(*requests[sent]))
            sent += 1
        line = next(lines)
        if b'"method"' in line:
            continue  # a notification (commands, updates): not an answer
        frame = ujson.loads(line)
        if "error" in frame:
            raise RuntimeError(f"request {frame.get('id')}: {frame['error']}")
        answers[frame["id"]] = frame
    return [answers[request_id]["result"] for request_id in ids]


def open_sessions(peer: Peer, count: int, prompt: str | None = "bulk 1") -> list[str]:
    """``count`` sessions, each used once by ``prompt`` (so its actor and backend session exist)."""
    created = pipelined(peer, [("session/new", {"cwd": "/tmp", "mcpServers": []})] * count)
    ids = [result["sessionId"] for result in created]
    if prompt is not None:
        pipelined(peer, [("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": prompt}]})
                         for sid in ids])
    return ids


def many_sessions(command: list[str], sessions: int, deltas: int) -> tuple[float, float, bool]:
    """(aggregate updates/s of ``sessions`` streaming at once, one session's rate alone, no cross-talk)."""
    with _agent(command) as peer:
        ids = open_sessions(peer, sessions)
        total = sessions * deltas
        request = peer.send_prompt(ids[0], f"bulk {total}")  # one session alone, the same total
        started = time.perf_counter()
        peer.read_until(f'"id":{request},'.encode())
        single = total / (time.perf_counter() - started)
        for index, session_id in enumerate(ids):
            peer.send_prompt(session_id, f"bulk {deltas} text=s{index}.")
        started = time.perf_counter()
        blocks: list[bytes] = []
        answered = 0
        while answered < sessions:  # raw blocks only while timing
            block = peer.block()
            blocks.append(block)
            answered += block.count(b'"stopReason"')
        aggregate = total / (time.perf_counter() - started)
    seen: Counter[tuple[str, str]] = Counter()
    for block in blocks:
        for line in block.splitlines():
            if CHUNK in line:
                params = ujson.loads(line)["params"]
                seen[(params["sessionId"], params["update"]["content"]["text"])] += 1
    expected = Counter({(sid, f"s{index}."): deltas for index, sid in enumerate(ids)})
    return aggregate, single, seen == expected


def busy_retry(command: list[str], runs: int, linger_ms: float) -> float:
    """Median ms from a prompt sent right after a turn ended (the backend busy ``linger_ms`` more) to its answer."""
    waits = []
    with _agent(command) as peer:
        session_id = _warm(peer)
        for _ in range(runs):
            peer.prompt(session_id, f"linger {linger_ms:g}")  # answered at turn.completed; the lock lingers
            started = time.perf_counter()
            peer.prompt(session_id, "bulk 1")
            waits.append(time.perf_counter() - started)
    return statistics.median(waits) * 1000
