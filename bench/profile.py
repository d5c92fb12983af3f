"""Where a delta's time goes in the bridge, hop by hop (``docs/performance.md``).

    pip install py-spy            # once (the ``bench`` extra)
    python -m bench.profile [--count N] [--rate HZ]

1. CPU time per delta (user + system, from ``/proc``) of the bridge and of
   the minimal relay, each streaming N bulk deltas from the fake backend:
   CPU time, not wall time, so a busy machine distorts it less.
2. The bridge again, sampled by ``py-spy`` (attached, ``--nonblocking``) while
   it streams. Each sample is given to the hop of the innermost frame that
   belongs to one (leaf first: the ``encode`` a Turn calls counts as encode,
   the ``tell`` it makes as an actor hop); a hop's share of the samples times
   the CPU time per delta is its µs per delta.
3. The cost of the single calls on the path, in this process (``timeit``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import timeit
from collections import Counter
from collections.abc import Callable

from bench.peer import BRIDGE, RELAY, Peer, fake_backend



def _mailbox_line() -> int:
    """The line of the actor loop (actors/on_demand.py) that hands a message to its handler and drops it after."""
    import inspect

    from zcode_acp.actors.on_demand import OnDemandActor

    lines, first = inspect.getsourcelines(OnDemandActor._drain)
    for offset, text in enumerate(lines):
        if "_handle_envelope(" in text:
            return first + offset
    return -1


MAILBOX_LINE = _mailbox_line()
FREEING = "freeing each batch (a message dropped as the mailbox loop finishes with it)"

# (hop, predicate on (file, function)); the first hop whose predicate holds for
# the innermost matching frame wins. Files are as py-spy prints them.
Rule = tuple[str, Callable[[str, str], bool]]
RULES: list[Rule] = [
    ("backend pipe read (syscall)", lambda f, fn: (f.endswith("gevent/os.py") and fn == "nb_read")
        or (f.endswith("fdio.py") and fn == "read_chunk")),
    ("client writer + write (syscall)", lambda f, fn: f.endswith(("transport/writer.py", "actors/writer.py"))
        or (f.endswith("fdio.py") and fn in ("write_all", "write_some"))
        or (f.endswith("gevent/os.py") and fn == "nb_write")
        or fn in ("FdTransport.write", "FdTransport.try_write")),
    ("flow tokens", lambda f, fn: f.endswith("flow.py")),
    ("parse (split lines, decode JSON)", lambda f, fn: f.endswith("framing.py")
        and fn in ("decode", "decode_object", "decode_backend_lines", "LineSplitter.feed", "_has_non_finite")),
    ("encode (update dict → bytes)", lambda f, fn: (f.endswith("actors/base.py") and fn.startswith("encode_updates"))
        or (f.endswith("framing.py") and fn in ("encode", "dumps"))
        or (f.endswith("jsonrpc.py") and fn == "session_update")),
    ("translate (event → update dict)", lambda f, fn: f.endswith(("protocol/translator.py", "protocol/usage.py"))),
    ("Turn actor (attribution, batching)", lambda f, fn: f.endswith("actors/turn.py")),
    ("Session actor (seq, routing)", lambda f, fn: "actors/session/" in f or f.endswith("actors/session.py")),
    ("Backend actor (route per session)", lambda f, fn: f.endswith("actors/backend.py")
        and not fn.startswith("Backend._read_stdout")),
    ("reader loop (Backend._read_stdout)", lambda f, fn: f.endswith("actors/backend.py")),
    ("ClientConnection actor (coalesce)", lambda f, fn: f.endswith("client_connection.py")),
    ("actor hops (tell, mailbox, dispatch, greenlet switch)", lambda f, fn: f.startswith("pykka/")
        or f.endswith(("actors/base.py", "actors/on_demand.py")) or "actors/messages/" in f or f.startswith("gevent/")
        or f in ("threading.py", "queue.py")),
]
# How the table lists them: the order a delta travels.
PATH_ORDER = ["backend pipe read (syscall)", "reader loop (Backend._read_stdout)", "flow tokens",
              "parse (split lines, decode JSON)", "Backend actor (route per session)", "Session actor (seq, routing)",
              "Turn actor (attribution, batching)", "translate (event → update dict)", "encode (update dict → bytes)",
              "actor hops (tell, mailbox, dispatch, greenlet switch)", "ClientConnection actor (coalesce)",
              "client writer + write (syscall)", FREEING, "other"]
FRAME = re.compile(r"^(?P<fn>.*) \((?P<file>[^:()]+)(?::(?P<line>\d+))?\)$")


def hop_of(stack: list[str]) -> tuple[str, str]:
    """(hop, leaf frame) of one folded stack (root first)."""
    for depth, frame in enumerate(reversed(stack)):
        match = FRAME.match(frame)
        if not match:
            continue
        file, function = match["file"], match["fn"]
        if (depth == 0 and function == "OnDemandActor._drain" and match["line"]
                and int(match["line"]) == MAILBOX_LINE):
            # Leaf on this line: the C work of taking the next message, mostly freeing
            # the last one (thousands of parsed events and their updates).
            return FREEING, frame
        for hop, belongs in RULES:
            if belongs(file, function):
                return hop, frame
    return "other", stack[-1] if stack else "?"


def cpu_seconds(pid: int) -> tuple[float, float]:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def stream(command: list[str], count: int, spy_rate: int = 0, spy_out: str = "") -> tuple[float, float, float]:
    """(user µs, system µs per delta, updates/s) streaming ``count`` deltas; py-spy attached if ``spy_rate``."""
    with Peer(command=command, backend=fake_backend()) as peer:
        peer.initialize()
        session_id = peer.new_session()
        peer.prompt(session_id, "bulk 1000")
        spy = None
        if spy_rate:
            spy = subprocess.Popen([shutil.which("py-spy") or "py-spy", "record", "--pid", str(peer.proc.pid),
                                    "--nonblocking", "-r", str(spy_rate), "-f", "raw", "-o", spy_out],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1.0)  # attached and sampling
        user0, system0 = cpu_seconds(peer.proc.pid)
        started = time.perf_counter()
        request = peer.send_prompt(session_id, f"bulk {count}")
        seen = peer.read_until(f'"id":{request},'.encode(), b"agent_message_chunk")
        elapsed = time.perf_counter() - started
        user1, system1 = cpu_seconds(peer.proc.pid)
        if spy is not None:
            spy.send_signal(2)
            spy.wait(30)
    if seen != count:
        raise RuntimeError(f"got {seen} of {count}")
    return (user1 - user0) * 1e6 / count, (system1 - system0) * 1e6 / count, count / elapsed


def hops(folded: str) -> tuple[Counter[str], Counter[str], int]:
    shares: Counter[str] = Counter()
    unattributed: Counter[str] = Counter()
    total = 0
    with open(folded) as lines:
        for line in lines:
            stack, _, samples = line.rstrip("\n").rpartition(" ")
            hop, leaf = hop_of(stack.split(";"))
            shares[hop] += int(samples)
            total += int(samples)
            if hop == "other":
                unattributed[leaf] += int(samples)
    return shares, unattributed, total


def single_calls() -> list[tuple[str, float]]:
    """µs per call of the path's pure steps, and of cheaper equivalents (evidence for the changes)."""
    import json.encoder

    import ujson

    from zcode_acp.protocol import framing, jsonrpc
    from zcode_acp.protocol.translator import agent_text

    line = (b'{"method":"session/event","params":{"sessionId":"sess_fake1","seq":123456,"type":"model.streaming",'
            b'"turnId":"turn_fake2","payload":{"kind":"text_delta","delta":"x"}}}')
    block = (line + b"\n") * 1000
    session_id, message_id = "7d1c5a8e-1111-2222-3333-444455556666", "0123456789abcdef0123456789abcdef"
    head = framing.encode(jsonrpc.session_update(session_id, agent_text("\0", message_id))).split(b'"\\u0000"')
    splitter = framing.LineSplitter()
    encode_basestring = json.encoder.encode_basestring  # type: ignore[attr-defined]
    calls: list[tuple[str, Callable[[], object], int]] = [
        ("LineSplitter.feed + decode_object(strict=False), per line",
         lambda: [framing.decode_object(item, strict=False) for item in splitter.feed(block)], 1000),
        ("ujson.loads, per line (no checks)", lambda: [ujson.loads(item) for item in block.split(b"\n")[:-1]], 1000),
        ("ujson.loads of the whole read as one array, per line",
         lambda: ujson.loads(b"[" + block[:-1].replace(b"\n", b",") + b"]"), 1000),
        ("agent_text + session_update + framing.encode", lambda: framing.encode(
            jsonrpc.session_update(session_id, agent_text("x", message_id))), 1),
        ("framing.encode of a ready notification dict", lambda: framing.encode(
            jsonrpc.session_update(session_id, {"sessionUpdate": "agent_message_chunk"})), 1),
        ("pre-encoded template + json encode_basestring(delta)",
         lambda: head[0] + encode_basestring("x").encode() + head[1], 1),
    ]
    results = []
    for label, call, per in calls:
        number = max(1, 20_000 // per)
        best = min(timeit.repeat(call, number=number, repeat=5))
        results.append((label, best / number / per * 1e6))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1_000_000, help="deltas per stream")
    parser.add_argument("--rate", type=int, default=1000, help="py-spy samples per second")
    args = parser.parse_args(argv)

    print("## CPU per delta (user + system), one session, bulk deltas from the fake backend\n")
    print("| agent | user µs | system µs | total µs | updates/s (wall) |\n|---|---|---|---|---|")
    for name, command in (("bridge", BRIDGE), ("minimal relay", RELAY)):
        user, system, rate = stream(command, args.count)
        print(f"| {name} | {user:.2f} | {system:.2f} | {user + system:.2f} | {rate:,.0f} |")

    if shutil.which("py-spy") is None:
        print("\n(py-spy is not installed: `pip install py-spy` for the hop table)")
    else:
        folded = os.path.join(tempfile.mkdtemp(prefix="bench-profile-"), "bridge.folded")
        user, system, rate = stream(BRIDGE, args.count, args.rate, folded)
        per_delta = user + system
        shares, unattributed, total = hops(folded)
        print(f"\n## The bridge, hop by hop (py-spy, {total:,} samples; {per_delta:.2f} µs CPU per delta "
              f"while sampled, {rate:,.0f} updates/s)\n")
        print("| hop | share of samples | µs per delta |\n|---|---|---|")
        order = [hop for hop in PATH_ORDER if hop in shares] + [hop for hop in shares if hop not in PATH_ORDER]
        for hop in order:
            print(f"| {hop} | {shares[hop] / total:.1%} | {shares[hop] / total * per_delta:.2f} |")
        print(f"| **total** | 100 % | {per_delta:.2f} |")
        if unattributed:
            print("\nUnattributed leaves: " + "; ".join(f"{leaf} {n / total:.1%}"
                                                       for leaf, n in unattributed.most_common(5)))
        print(f"\n(folded stacks: {folded})")

    print("\n## Single calls on the path (this process, best of 5)\n")
    print("| call | µs |\n|---|---|")
    for label, micros in single_calls():
        print(f"| {label} | {micros:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
