"""The long random run (issue 9; docs/reliability.md): random frames mixed with valid traffic.

    python bench/adversarial.py [--frames 50000] [--seed N]

Starts the real ``zcode-acp`` on the simulated backend and writes ``--frames``
random frames from a seeded generator (random JSON, wrong types, huge ids,
bad UTF-8, bad envelopes, deep nesting, lone surrogates, NaN, batches, bad
cancels, stray responses…), several per write, mixed with valid traffic
(prompts, cancels, ``$/cancel_request``, loads, lists, permission dialogs
answered). Every request whose answer is predictable is tracked by its id;
at the end it prints:

* requests sent / answered exactly once / answered twice / unanswered / wrong
  code (a code outside what that frame allows, ``-32603`` for bad input
  included), and stray answers (ids nobody sent);
* null-id answers by code (bad lines: only ``-32700`` and ``-32600`` allowed);
* impure stdout lines (anything but a JSON-RPC 2.0 object);
* the bridge's RSS at start (after warm-up), peak (VmHWM), end (at the last
  answer) and after ``--idle`` quiet seconds (default 6: longer than the 5 s
  stop fallback that keeps each preempted turn a little while, and than the
  1-2 s after which the bridge, once quiet, gives freed memory back on its own:
  ``actors/memory/quiet_release.py``; the benchmark asks for nothing), and the seed.
  Start is read after warm-up: initialized, every session live on the backend
  and through each kind of valid traffic once (``warm_up``).

It prints figures, it asserts nothing (tests/process/test_reliability_bench.py
runs a few hundred frames as a smoke test). The default run takes a few
minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, deque
from pathlib import Path
from typing import Any

import ujson

from zcode_acp.protocol.framing import readable_id

SIM = str(Path(sys.executable).parent / "zcode-sim")
RESULT = 0  # in an allowed-codes set: a result (no error) is fine
PROMPTS = ["#sim stream count=20", "#sim slow count=5 interval=0.01", "#sim hang", "#sim permission",
           "#sim edit", "#sim demo delay=0", "#sim stream count=300"]
KNOWN_FIELDS = ["sessionId", "cwd", "mcpServers", "prompt", "modeId", "configId", "value", "protocolVersion",
                "clientCapabilities", "methodId", "requestId", "additionalDirectories", "text", "type"]


def key(request_id: Any) -> tuple[str, Any]:
    """Table key of an id: 7 and 7.0 are different ids on the wire."""
    return (type(request_id).__name__, request_id)


def line(frame: Any) -> bytes:
    return json.dumps(frame, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n"


class Bridge:
    """The bridge process, a reader thread that checks and records every stdout line."""

    def __init__(self, workdir: Path) -> None:
        env = dict(os.environ, ZCODE_BIN=SIM, HOME=str(workdir), ZCODE_HOME=str(workdir / "home"),
                   ZCODE_SIM_DATA=str(workdir / "sim"))
        env.pop("ZCODE_SIM_TRACE", None)
        self.log = open(workdir / "bridge.log", "wb")  # noqa: SIM115 - lives as long as the bridge
        self.proc = subprocess.Popen([sys.executable, "-m", "zcode_acp", "--log-level",
                                      os.environ.get("ADVERSARIAL_LOG_LEVEL", "warning")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env)
        self.answers: dict[tuple[str, Any], list[dict[str, Any]]] = {}
        self.null_codes: Counter[int] = Counter()
        self.impure: list[str] = []
        self.updates = 0
        self.dialogs: queue.Queue[dict[str, Any]] = queue.Queue()
        self.changed = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            try:
                frame = ujson.loads(raw)  # the reader must keep up, or the bridge throttles the backend
            except ValueError:
                frame = None
            if not isinstance(frame, dict) or frame.get("jsonrpc") != "2.0":
                ending = "" if raw.endswith(b"\n") else ", no newline: the last line, cut"
                self.impure.append(f"{len(raw)} bytes{ending}: {raw[:100]!r} … {raw[-60:]!r}")
                continue
            if "method" in frame:
                if "id" in frame:
                    self.dialogs.put(frame)  # a request of the bridge's: a permission dialog
                else:
                    self.updates += 1
                continue
            with self.changed:
                if frame.get("id") is None:
                    self.null_codes[(frame.get("error") or {}).get("code", RESULT)] += 1
                else:
                    self.answers.setdefault(key(frame["id"]), []).append(frame)
                self.changed.notify_all()

    def write(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def wait_for(self, request_key: tuple[str, Any], timeout: float) -> dict[str, Any] | None:
        with self.changed:
            self.changed.wait_for(lambda: request_key in self.answers, timeout)
            found = self.answers.get(request_key)
            return found[0] if found else None

    def status(self, field: str) -> float:
        with open(f"/proc/{self.proc.pid}/status") as status:
            return next(int(row.split()[1]) for row in status if row.startswith(field + ":")) / 1024

    def close(self, workdir: Path) -> int | None:
        """The exit code after stdin EOF, or None (then killed) if it did not exit within 30 s."""
        self.proc.stdin.close()
        try:
            code: int | None = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            code = None
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.log.close()
        if code != 0:
            tail = (workdir / "bridge.log").read_text(errors="replace").splitlines()[-15:]
            print("bridge log tail:\n  " + "\n  ".join(tail), file=sys.stderr)
        if os.environ.get("ADVERSARIAL_KEEP_LOG"):
            shutil.copy(workdir / "bridge.log", os.environ["ADVERSARIAL_KEEP_LOG"])
        return code


class Generator:
    """Seeded frames. ``expect`` maps each tracked id to the codes its answer may carry."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.serial = 0
        self.expect: dict[tuple[str, Any], frozenset[int]] = {}
        self.sent_ids: dict[tuple[str, Any], Any] = {}
        self.methods: dict[tuple[str, Any], str] = {}  # for the report
        self.unanswered_methods: Counter[str] = Counter()

    def _id(self, prefix: str = "r") -> str:
        self.serial += 1
        return f"{prefix}-{self.serial}"

    def track(self, request_id: Any, allowed: set[int]) -> None:
        self.expect[key(request_id)] = frozenset(allowed)
        self.sent_ids[key(request_id)] = request_id

    def value(self, depth: int = 0) -> Any:
        rng = self.rng
        pick = rng.random()
        if depth > 3 or pick < 0.5:
            return rng.choice([None, True, False, rng.randint(-10**6, 10**6), rng.random() * 1e6, "",
                               "x" * rng.randint(1, 40), "é☃𝄞", -0.0, 10**rng.randint(20, 60), "/tmp", "2.0"])
        if pick < 0.75:
            return [self.value(depth + 1) for _ in range(rng.randint(0, 4))]
        return {rng.choice(KNOWN_FIELDS + ["jsonrpc", "id", "method", "params", "_meta", "zz"]): self.value(depth + 1)
                for _ in range(rng.randint(0, 4))}

    def envelope(self, request_id: Any, method: str, params: Any) -> bytes:
        self.methods[key(request_id)] = method
        return line({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})

    # -- untracked: may be answered only with a null id ----------------------------------------

    def garbage(self) -> bytes:
        rng = self.rng
        kind = rng.randrange(11)
        if kind == 0:  # a JSON value that is not an object
            return line(rng.choice([[self.value()], 7, -0.5, "frame", None, True]))
        if kind == 10:  # any object without an id (an id would be echoed: that frame would be tracked)
            value = self.value()
            if isinstance(value, dict):
                value.pop("id", None)
            return line(value if rng.random() < 0.5 else {"method": 5, "id": [1]})
        if kind == 1:  # bad UTF-8
            return bytes(rng.randrange(128, 256) for _ in range(rng.randint(1, 30))) + b"\n"
        if kind == 2:  # a valid frame cut short: answered with its id where the id is whole before the cut
            request_id = self._id("cut")
            whole = self.envelope(request_id, "initialize", {"protocolVersion": 1})
            cut = whole[: rng.randrange(1, len(whole) - 1)]
            if readable_id(cut) == request_id:
                self.track(request_id, {-32700})
            return cut + b"\n"
        if kind == 3:  # NaN, Infinity and numbers beyond double range: the frame's id is readable
            number = rng.choice([b"NaN", b"Infinity", b"-Infinity", b"1e999", b"9" * 400 + b".5"])
            request_id = self._id("n")
            self.track(request_id, {-32700})
            return b'{"jsonrpc":"2.0","id":"%s","method":"initialize","params":{"x":%s}}\n' % (request_id.encode(), number)
        if kind == 4:  # a batch
            return line([{"jsonrpc": "2.0", "id": 1, "method": "initialize"}] * rng.randint(0, 3))
        if kind == 5:  # no frame at all
            return rng.choice([b"{}\n", b'{"jsonrpc":"2.0"}\n', b'{"jsonrpc":"2.0","id":null}\n', b'{"result":1}\n'])
        if kind == 6:  # an id that can never be echoed
            return b'{"jsonrpc":"2.0","id":"\\ud800","method":"initialize"}\n'
        if kind == 7:  # a notification: never answered
            return line({"jsonrpc": "2.0", "method": rng.choice(["session/cancel", "x/y", "session/update"]),
                         "params": self.value()})
        if kind == 8:  # $/cancel_request naming anything (unhashable ids included)
            target = rng.choice([{}, [1], None, "nobody", 10**30, "\ud800", self.value()])
            return line({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": target}})
        if kind == 9:  # a response to a request the bridge never sent
            return line({"jsonrpc": "2.0", "id": rng.randint(10**12, 10**13), "result": self.value()})
        return line({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": self.value()}})

    # -- tracked: the answer's code is predictable ------------------------------------------------

    def tracked(self, sessions: list[str]) -> bytes:
        rng = self.rng
        kind = rng.randrange(8)
        request_id = self._id()
        if kind == 0:  # a bad envelope with a usable id
            frame: dict[str, Any] = rng.choice([
                {"id": request_id, "method": "initialize"},
                {"jsonrpc": "1.0", "id": request_id, "method": "initialize"},
                {"jsonrpc": "2.0", "id": request_id, "method": rng.choice([7, None, [], {}])},
                {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": rng.choice([3, "x", True])},
                {"jsonrpc": "2.0", "id": request_id, "method": "$/cancel_request", "params": {"requestId": 1}},
            ])
            self.track(request_id, {-32600})
            return line(frame)
        if kind == 1:  # an unknown method, sometimes with a big payload
            payload = "y" * rng.choice([10, 1000, 1_000_000]) if rng.random() < 0.05 else self.value()
            self.track(request_id, {-32601})
            return self.envelope(request_id, rng.choice(["session/nope", "x", "_zcode/unknown", "/"]),
                                 {"payload": payload})
        if kind == 2:  # a known method with wrong types
            return self._wrong_types(request_id)
        if kind == 3:  # ids at the edges: huge integers, long strings, fractions
            request_id = rng.choice([int("9" * 400) + self.serial, "i" * 10_000 + str(self.serial),
                                     self.serial + 0.5, -self.serial - 10**15])
            self.track(request_id, {RESULT})
            return self.envelope(request_id, "initialize", {"protocolVersion": 1})
        if kind == 4:  # deep nesting (below ujson's own 1024-level limit)
            depth = rng.choice([1, 10, 60, 62, 63, 64, 100, 500, 1000])
            raw = b'{"a":' * depth + b"true" + b"}" * depth
            self.track(request_id, {RESULT, -32602})
            return b'{"jsonrpc":"2.0","id":"%s","method":"initialize","params":{"protocolVersion":1,' \
                   b'"clientCapabilities":%s}}\n' % (request_id.encode(), raw)
        if kind == 5:  # a lone surrogate in a field
            self.track(request_id, {-32602})
            if rng.random() < 0.5 and sessions:
                return b'{"jsonrpc":"2.0","id":"%s","method":"session/prompt","params":{"sessionId":"%s",' \
                       b'"prompt":[{"type":"text","text":"a\\udc00b"}]}}\n' % (request_id.encode(),
                                                                            rng.choice(sessions).encode())
            return b'{"jsonrpc":"2.0","id":"%s","method":"session/new","params":{"cwd":"/tmp/\\ud800",' \
                   b'"mcpServers":[]}}\n' % request_id.encode()
        if kind == 6:
            self.track(request_id, {RESULT})
            return self.envelope(request_id, "session/list", {})
        self.track(request_id, {RESULT, -32602})
        return self.envelope(request_id, "authenticate", {"methodId": rng.choice(["zcode-credentials", "x", 3])})

    def _wrong_types(self, request_id: str) -> bytes:
        rng = self.rng
        bad_session = rng.choice([123, None, "", "no-such-session", [], {}])
        bad_cwd = rng.choice([123, None, "relative/path", [], {}, ""])
        method, params, allowed = rng.choice([
            ("initialize", rng.choice([[], [1, 2]]), {-32602}),
            ("initialize", {"protocolVersion": self.value(), "clientCapabilities": self.value()}, {RESULT, -32602}),
            ("session/new", {"cwd": bad_cwd, "mcpServers": self.value()}, {-32602}),
            ("session/prompt", {"sessionId": bad_session, "prompt": self.value()}, {-32602, -32002}),
            ("session/load", {"sessionId": bad_session, "cwd": bad_cwd, "mcpServers": []}, {-32602}),
            ("session/resume", {"sessionId": bad_session, "cwd": bad_cwd}, {-32602}),
            ("session/set_mode", {"sessionId": bad_session, "modeId": self.value()}, {-32602, -32002}),
            ("session/set_config_option", {"sessionId": bad_session, "configId": self.value(),
                                           "value": self.value()}, {-32602, -32002}),
            ("session/close", {"sessionId": bad_session}, {-32602, -32002}),
            ("session/list", {"cwd": rng.choice([3, "relative", [], {}])}, {-32602}),
        ])
        self.track(request_id, allowed)
        return self.envelope(request_id, method, params)


class Traffic:
    """Valid traffic: prompts, cancels, $/cancel_request, loads, dialogs answered."""

    def __init__(self, rng: random.Random, generator: Generator, sessions: list[str]) -> None:
        self.rng = rng
        self.gen = generator
        self.sessions = sessions
        # The latest prompt ids, answered or not: the frames never depend on the
        # bridge's timing, so one seed always writes the same frames.
        self.recent_prompts: deque[str] = deque(maxlen=24)

    def frame(self) -> bytes:
        rng = self.rng
        sid = rng.choice(self.sessions)
        pick = rng.random()
        if pick < 0.45:  # a session runs one turn at a time: a new prompt preempts the last
            request_id = self.gen._id("prompt")
            self.gen.track(request_id, {RESULT, -32800})
            self.recent_prompts.append(request_id)
            return self.gen.envelope(request_id, "session/prompt",
                                     {"sessionId": sid, "prompt": [{"type": "text", "text": rng.choice(PROMPTS)}]})
        if pick < 0.65:
            return line({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
        if pick < 0.75 and self.recent_prompts:
            target = rng.choice(list(self.recent_prompts))
            return line({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": target}})
        request_id = self.gen._id("valid")
        self.gen.track(request_id, {RESULT})
        if pick < 0.78:  # a load replays the whole history, which grows all run long: rarely
            return self.gen.envelope(request_id, "session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []})
        if pick < 0.9:
            return self.gen.envelope(request_id, "session/set_mode",
                                     {"sessionId": sid, "modeId": rng.choice(["plan", "yolo", "edit"])})
        return self.gen.envelope(request_id, "initialize", {"protocolVersion": 1})


def answer_dialogs(bridge: Bridge) -> None:
    data = b""
    while True:
        try:
            dialog = bridge.dialogs.get_nowait()
        except queue.Empty:
            break
        options = (dialog.get("params") or {}).get("options") or [{"optionId": "x"}]
        data += line({"jsonrpc": "2.0", "id": dialog["id"],
                      "result": {"outcome": {"outcome": "selected", "optionId": options[0]["optionId"]}}})
    if data:
        bridge.write(data)


def warm_up(bridge: Bridge, gen: Generator, ids: list[str]) -> None:
    """Every kind of valid traffic once per session before the start is read.

    Each scenario prompt but the hang (a dialog answered, a file edit, the demo,
    a long stream), then a load: the baseline is a bridge that has done each
    kind of work once (its caches filled, each path's first allocations made),
    as any bridge has a minute into an editor's day. With only one short prompt
    per session (``--short-warm-up``) the start is ~2 MiB lower and the growth
    figures a few points higher (docs/reliability.md).
    """
    for round_, text in enumerate(PROMPTS):
        if "hang" in text:
            continue
        for index, sid in enumerate(ids):
            request_id = f"warm-{round_}-{index}"
            gen.track(request_id, {RESULT})
            bridge.write(gen.envelope(request_id, "session/prompt",
                                      {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}))
        for index in range(len(ids)):
            waiting = key(f"warm-{round_}-{index}")
            deadline = time.monotonic() + 30
            while waiting not in bridge.answers and time.monotonic() < deadline:
                answer_dialogs(bridge)  # the permission prompt's dialog
                with bridge.changed:
                    bridge.changed.wait(0.05)
    for index, sid in enumerate(ids):
        request_id = f"warm-load-{index}"
        gen.track(request_id, {RESULT})
        bridge.write(gen.envelope(request_id, "session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []}))
        bridge.wait_for(key(request_id), 30)


def run(frames: int = 50_000, seed: int | None = None, sessions: int = 8, valid_share: float = 0.1,
        out: Any = sys.stdout, settle: float = 30.0, idle: float = 6.0, full_warm_up: bool = True) -> dict[str, Any]:
    """One run; ``settle`` bounds the wait for the last answers once every frame is written;
    RSS is read again after ``idle`` quiet seconds."""
    seed = seed if seed is not None else int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="zcode-adversarial-") as workdir:
        bridge = Bridge(Path(workdir))
        gen = Generator(rng)
        for request_id, method, params in [("init", "initialize", {"protocolVersion": 1})] + [
                (f"new-{i}", "session/new", {"cwd": "/tmp", "mcpServers": []}) for i in range(sessions)]:
            gen.track(request_id, {RESULT})
            bridge.write(gen.envelope(request_id, method, params))
        ids = [bridge.wait_for(key(f"new-{i}"), 30)["result"]["sessionId"] for i in range(sessions)]
        for index, sid in enumerate(ids):  # warm-up: every session live on the backend
            request_id = f"warm-{index}"
            gen.track(request_id, {RESULT})
            bridge.write(gen.envelope(request_id, "session/prompt",
                                      {"sessionId": sid, "prompt": [{"type": "text", "text": "#sim stream count=3"}]}))
        for index in range(sessions):
            bridge.wait_for(key(f"warm-{index}"), 30)
        if full_warm_up:
            warm_up(bridge, gen, ids)
        rss_start = bridge.status("VmRSS")
        traffic = Traffic(rng, gen, ids)
        sent, next_progress = 0, 10_000
        while sent < frames:
            burst = []
            for _ in range(rng.randint(1, 20)):
                if rng.random() < valid_share:
                    burst.append(traffic.frame())
                elif rng.random() < 0.5:
                    burst.append(gen.tracked(ids))
                    sent += 1
                else:
                    burst.append(gen.garbage())
                    sent += 1
            bridge.write(b"".join(burst))
            answer_dialogs(bridge)
            if sent >= next_progress:
                next_progress += 10_000
                print(f"  … {sent:,} random frames, {time.monotonic() - started:.0f}s", file=sys.stderr)
        for sid in ids:  # end every hang, then wait for every tracked answer
            bridge.write(line({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}))
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline:
            answer_dialogs(bridge)
            with bridge.changed:
                if bridge.changed.wait_for(lambda: all(k in bridge.answers for k in gen.expect), 0.2):
                    break
        marker = gen._id("marker")
        bridge.write(gen.envelope(marker, "initialize", {"protocolVersion": 1}))
        bridge.wait_for(key(marker), 30)
        rss_end, rss_peak = bridge.status("VmRSS"), bridge.status("VmHWM")
        # Then idle for a while: the stop fallbacks of the last preempted turns (5 s
        # timers, each holding its Turn) expire, and what stays is what the bridge keeps.
        time.sleep(idle)
        rss_idle = bridge.status("VmRSS")
        exit_code = bridge.close(Path(workdir))
        stats = figures(bridge, gen, marker)
        stats.update(seed=seed, random_frames=sent, seconds=time.monotonic() - started, exit_code=exit_code,
                     rss_start=rss_start, rss_peak=rss_peak, rss_end=rss_end, rss_idle=rss_idle, idle=idle,
                     updates=bridge.updates)
        report(stats, out)
        return stats


def figures(bridge: Bridge, gen: Generator, marker: str) -> dict[str, Any]:
    once = twice = unanswered = wrong = 0
    wrong_examples: list[str] = []
    unanswered_examples: list[str] = []
    for request_key, allowed in gen.expect.items():
        answers = bridge.answers.get(request_key, [])
        if not answers:
            unanswered += 1
            unanswered_examples.append(f"{repr(request_key[1])[:40]} ({gen.methods.get(request_key, '?')})")
            gen.unanswered_methods[gen.methods.get(request_key, "?")] += 1
            continue
        once += len(answers) == 1
        twice += len(answers) > 1
        code = (answers[0].get("error") or {}).get("code", RESULT)
        if code not in allowed:
            wrong += 1
            wrong_examples.append(f"{repr(request_key[1])[:30]}: {code} {answers[0].get('error', {}).get('message', '')[:80]}")
    strays = [k for k in bridge.answers if k not in gen.expect and k != key(marker)]
    stray = sum(len(bridge.answers[k]) for k in strays)
    null_wrong = sum(n for code, n in bridge.null_codes.items() if code not in (-32700, -32600))
    return {"requests": len(gen.expect), "once": once, "twice": twice, "unanswered": unanswered, "wrong_code": wrong,
            "unanswered_by_method": dict(gen.unanswered_methods), "stray": stray, "null_id": dict(bridge.null_codes),
            "null_wrong": null_wrong,
            "impure": len(bridge.impure), "impure_examples": bridge.impure[:3],
            "wrong_examples": wrong_examples[:5], "unanswered_examples": unanswered_examples[:5],
            "stray_examples": [f"{k[0]} {repr(k[1])[:40]}: {bridge.answers[k][0]}"[:160] for k in strays[:3]]}


def report(stats: dict[str, Any], out: Any) -> None:
    growth = (stats["rss_end"] - stats["rss_start"]) / stats["rss_start"] * 100
    idle_growth = (stats["rss_idle"] - stats["rss_start"]) / stats["rss_start"] * 100
    rows = [
        ("seed", stats["seed"]),
        ("random frames", f"{stats['random_frames']:,} in {stats['seconds']:.0f}s ({stats['updates']:,} updates)"),
        ("requests sent (tracked)", f"{stats['requests']:,}"),
        ("answered exactly once", f"{stats['once']:,}"),
        ("answered twice or more", stats["twice"]),
        ("unanswered", f"{stats['unanswered']} {stats['unanswered_by_method'] or ''}"),
        ("wrong code", stats["wrong_code"]),
        ("stray answers (ids never sent)", stats["stray"]),
        ("null-id answers by code", stats["null_id"]),
        ("null-id answers with a wrong code", stats["null_wrong"]),
        ("impure stdout lines", stats["impure"]),
        ("RSS start / peak / end (MiB)",
         f"{stats['rss_start']:.0f} / {stats['rss_peak']:.0f} / {stats['rss_end']:.0f} (end {growth:+.0f}% of start)"),
        (f"RSS after {stats['idle']:g} s idle (MiB)", f"{stats['rss_idle']:.0f} ({idle_growth:+.0f}% of start)"),
        ("bridge exit code", stats["exit_code"]),
    ]
    for label, value in rows:
        print(f"{label:<36} {value}", file=out)
    for name in ("wrong_examples", "unanswered_examples", "stray_examples", "impure_examples"):
        for example in stats[name]:
            print(f"  {name[:-9]}: {example}", file=out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=50_000, help="random frames to send (default 50,000)")
    parser.add_argument("--seed", type=int, default=None, help="generator seed (default: random, printed)")
    parser.add_argument("--sessions", type=int, default=8, help="live sessions carrying the valid traffic")
    parser.add_argument("--idle", type=float, default=6.0,
                        help="quiet seconds after the last answer before RSS is read again (default 6)")
    parser.add_argument("--short-warm-up", action="store_true",
                        help="read the start after one short prompt per session, not after every kind of traffic")
    parser.add_argument("--valid-share", type=float, default=0.1,
                        help="share of valid traffic among the frames written (default 0.1)")
    args = parser.parse_args()
    run(args.frames, args.seed, args.sessions, args.valid_share, idle=args.idle, full_warm_up=not args.short_warm_up)


if __name__ == "__main__":
    main()
