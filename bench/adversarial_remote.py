"""The adversarial run with remote clients (docs/reliability.md, "The remote adversarial run").

    python bench/adversarial_remote.py [--seconds 60] [--remotes 4] [--seed N] [--dialect both]

Starts the real ``zcode-acp`` on the simulated backend with remote access on
(docs/remote.md) and, for ``--seconds`` per simulator dialect, drives:

* the editor on stdio, valid traffic only: prompts of several ``#sim``
  scenarios (long streams included), ``session/cancel``, ``$/cancel_request``,
  loads, ``set_mode``, ``initialize``; every permission dialog answered;
* ``--remotes`` WebSocket clients (the ``websockets`` library) that at random
  connect, initialize (or not), load or prompt the editor's sessions, answer,
  refuse or ignore dialogs, cancel, stall (stop reading for seconds), leave
  abruptly (TCP closed without a close frame), send close frames with odd
  codes (reserved, out of range, none) and frames after them, reconnect, and
  send bad frames (not JSON, bad envelopes, wrong types, unknown methods, a
  binary frame, a 1 MiB prompt, now and then one message over the 50 MiB cap).

Every request each party sends is tracked on its connection (a remote client
that reconnects is a new connection, with ids of its own). At the end it
prints, per party: requests sent / answered exactly once / twice / unanswered
while the party stayed (a failure) / unanswered because it left (fine) /
wrong code (``-32603`` included) / stray answers (ids it never sent), the
editor's ``-32603`` answers and impure stdout lines, ``session/update``s and
dialogs that reached a client for a session it never created, loaded or
prompted (cross-talk), the bridge's RSS (start after warm-up, peak, after
``--idle`` quiet seconds) and its exit code after stdin EOF.

It prints figures and asserts nothing; ``tests/process/test_remote_races.py``
holds the races it found, reduced to tests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets

SIM = str(Path(sys.executable).parent / "zcode-sim")
TOKEN = "adversarial-remote-token"
RESULT = 0  # in an allowed-codes set: a result (no error)
PROMPTS = ["#sim stream count=20", "#sim slow count=10 interval=0.02", "#sim hang", "#sim permission",
           "#sim edit", "#sim demo delay=0", "#sim stream count=300", "#sim ask_streaming", "#sim questions"]
BIG_STREAM = "#sim stream count=80000 text=abcdefghij"  # ~20 MB of updates: a stalled client overflows
MODES = ["plan", "build", "edit", "yolo", "auto"]
ODD_CLOSE_CODES: list[int | None] = [1000, 1001, 1002, 1003, 1011, 3000, 4999, 1004, 1005, 1006, 999, 5000, 2999,
                                     None]
PROMPT_CODES = frozenset({RESULT, -32800})


def raw_frame(rng: random.Random, opcode: int, payload: bytes) -> bytes:
    """A masked client frame written past the library (odd close frames, frames after a close)."""
    length = len(payload)
    head = bytes([0x80 | opcode])
    if length < 126:
        head += bytes([0x80 | length])
    elif length < 65536:
        head += bytes([0x80 | 126]) + length.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + length.to_bytes(8, "big")
    mask = bytes(rng.randrange(256) for _ in range(4))
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


@dataclass
class Request:
    method: str
    allowed: frozenset[int]
    session: str | None = None
    text: str = ""  # a prompt's text: a "#sim hang" may stay open until the end's cancel


@dataclass
class Conn:
    """One connection of one party: what it sent, what came back."""

    party: str
    epoch: int
    sent: dict[Any, Request] = field(default_factory=dict)
    answers: dict[Any, list[dict[str, Any]]] = field(default_factory=dict)
    opened: set[str] = field(default_factory=set)  # sessions it created, loaded or prompted
    initialized: bool = False
    left: bool = False  # it closed, was closed, or dropped
    close_code: int | None = None
    stray: list[str] = field(default_factory=list)
    null_codes: Counter[int] = field(default_factory=Counter)
    crosstalk_updates: Counter[str] = field(default_factory=Counter)
    crosstalk_dialogs: int = 0
    updates_before_initialize: int = 0
    updates: int = 0
    dialogs: int = 0
    pending_dialogs: dict[Any, dict[str, Any]] = field(default_factory=dict)  # neither answered nor withdrawn
    serial: int = 0

    def next_id(self) -> str:
        self.serial += 1
        return f"{self.party}.{self.epoch}-{self.serial}"

    def record(self, frame: dict[str, Any]) -> None:
        """One frame from the bridge (a response, an update, a dialog or a withdrawal)."""
        method = frame.get("method")
        if method == "session/update":
            self.updates += 1
            session = (frame.get("params") or {}).get("sessionId")
            if not self.initialized:
                self.updates_before_initialize += 1
            if session not in self.opened:
                kind = ((frame.get("params") or {}).get("update") or {}).get("sessionUpdate", "?")
                self.crosstalk_updates[kind] += 1
            return
        if method == "$/cancel_request":
            self.pending_dialogs.pop((frame.get("params") or {}).get("requestId"), None)
            return
        if method is not None:
            if "id" in frame:
                self.dialogs += 1
                self.pending_dialogs[frame["id"]] = frame
                if (frame.get("params") or {}).get("sessionId") not in self.opened:
                    self.crosstalk_dialogs += 1
            return
        request_id = frame.get("id")
        if request_id is None:
            self.null_codes[(frame.get("error") or {}).get("code", RESULT)] += 1
        elif request_id not in self.sent:
            self.stray.append(f"{request_id!r}: {json.dumps(frame)[:120]}")
        else:
            self.answers.setdefault(request_id, []).append(frame)
            if self.sent[request_id].method == "initialize":
                self.initialized = True


def dialog_answer(rng: random.Random, frame: dict[str, Any], refuse_share: float = 0.0) -> dict[str, Any]:
    if rng.random() < refuse_share:
        return {"jsonrpc": "2.0", "id": frame["id"], "error": {"code": -32603, "message": "cannot show it"}}
    params = frame.get("params") or {}
    if frame.get("method") == "elicitation/create":
        return {"jsonrpc": "2.0", "id": frame["id"], "result": {"action": "accept", "content": {}}}
    options = params.get("options") or [{"optionId": "x"}]
    return {"jsonrpc": "2.0", "id": frame["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": rng.choice(options)["optionId"]}}}


class Editor:
    """The editor on stdio: valid traffic only; answers every dialog after a short pause."""

    def __init__(self, proc: asyncio.subprocess.Process, rng: random.Random) -> None:
        self.proc = proc
        self.rng = rng
        self.conn = Conn("editor", 1)
        self.impure: list[str] = []
        self.sessions: list[str] = []
        self.recent_prompts: list[str] = []
        self.waiters: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.changed = asyncio.Event()
        self.refuse_share = 0.1
        self.answering: set[asyncio.Future[None]] = set()
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while raw := await self.proc.stdout.readline():
            try:
                frame = json.loads(raw)
            except ValueError:
                frame = None
            if not isinstance(frame, dict) or frame.get("jsonrpc") != "2.0" or not raw.endswith(b"\n"):
                self.impure.append(f"{len(raw)} bytes: {raw[:100]!r}")
                continue
            self.conn.record(frame)
            if "method" in frame and "id" in frame:
                task = asyncio.ensure_future(self._answer_dialog(frame))
                self.answering.add(task)  # a reference, until it is done
                task.add_done_callback(self.answering.discard)
            elif "method" not in frame:
                waiter = self.waiters.pop(frame.get("id"), None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(frame)
                self.changed.set()

    async def _answer_dialog(self, frame: dict[str, Any]) -> None:
        await asyncio.sleep(self.rng.random() * 0.3)
        self.conn.pending_dialogs.pop(frame["id"], None)
        # Now and then the editor cannot show one (an error answer): a remote client may still win it.
        await self.write(dialog_answer(self.rng, frame, refuse_share=self.refuse_share))

    async def write(self, frame: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(frame).encode() + b"\n")
        await self.proc.stdin.drain()

    async def request(self, method: str, params: dict[str, Any], allowed: frozenset[int] = frozenset({RESULT}),
                      wait: bool = False, session: str | None = None) -> Any:
        request_id = self.conn.next_id()
        self.conn.sent[request_id] = Request(method, allowed, session)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        if wait:
            self.waiters[request_id] = future
        await self.write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        if wait:
            return await asyncio.wait_for(future, 60)
        return request_id

    async def start(self, sessions: int) -> None:
        self.conn.initialized = True  # it sends initialize first; nothing reaches it before
        await self.request("initialize", {"protocolVersion": 1, "clientCapabilities": {
            "fs": {"readTextFile": False, "writeTextFile": False}, "_meta": {"terminal_output": True}}}, wait=True)
        for _ in range(sessions):
            answer = await self.request("session/new", {"cwd": "/tmp", "mcpServers": []}, wait=True)
            self.sessions.append(answer["result"]["sessionId"])
        self.conn.opened.update(self.sessions)
        await asyncio.gather(*[self.request("session/prompt", {"sessionId": sid, "prompt": [
            {"type": "text", "text": text}]}, wait=True, session=sid)
            for sid in self.sessions for text in ["#sim stream count=3"]])

    async def act(self) -> None:
        rng = self.rng
        sid = rng.choice(self.sessions)
        pick = rng.random()
        if pick < 0.40:
            text = BIG_STREAM if rng.random() < 0.04 else rng.choice(PROMPTS)
            request_id = await self.request("session/prompt", {"sessionId": sid, "prompt": [
                {"type": "text", "text": text}]}, PROMPT_CODES, session=sid)
            self.conn.sent[request_id].text = text
            self.recent_prompts = (self.recent_prompts + [request_id])[-16:]
        elif pick < 0.55:
            await self.write({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
        elif pick < 0.62 and self.recent_prompts:
            await self.write({"jsonrpc": "2.0", "method": "$/cancel_request",
                              "params": {"requestId": rng.choice(self.recent_prompts)}})
        elif pick < 0.72:
            await self.request("session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []}, session=sid)
        elif pick < 0.92:
            await self.request("session/set_mode", {"sessionId": sid, "modeId": rng.choice(MODES)}, session=sid)
        else:
            await self.request("initialize", {"protocolVersion": 1, "clientCapabilities": {
                "_meta": {"terminal_output": True}}})

    def outstanding(self, but_hangs: bool = False) -> int:
        return outstanding(self.conn, but_hangs)


class Remote:
    """One remote party: many connections over the run, one at a time."""

    def __init__(self, index: int, url: str, sessions: list[str], rng: random.Random) -> None:
        self.name = f"r{index}"
        self.url = url
        self.sessions = sessions
        self.rng = rng
        self.conns: list[Conn] = []
        self.conn: Conn | None = None
        self.socket: Any = None
        self.reading = asyncio.Event()
        self.reader: asyncio.Task[None] | None = None
        self.policy = "answer"
        self.recent_prompts: list[str] = []
        self.oversized_sent = 0
        self.events: Counter[str] = Counter()

    # -- connections ----------------------------------------------------------------------

    async def connect(self) -> None:
        self.conn = Conn(self.name, len(self.conns) + 1)
        self.conns.append(self.conn)
        self.socket = await websockets.connect(self.url, max_size=None, max_queue=4, ping_interval=None,
                                               close_timeout=2,
                                               additional_headers={"Authorization": f"Bearer {TOKEN}"})
        self.reading.set()
        self.policy = self.rng.choice(["answer", "answer", "ignore", "refuse"])
        self.reader = asyncio.ensure_future(self._read(self.conn, self.socket))
        self.events["connect"] += 1

    async def _read(self, conn: Conn, socket: Any) -> None:
        try:
            while True:
                await self.reading.wait()
                text = await socket.recv()
                frame = json.loads(text)
                conn.record(frame)
                if "method" in frame and "id" in frame and self.policy != "ignore" and self.rng.random() < 0.8:
                    conn.pending_dialogs.pop(frame["id"], None)
                    answer = dialog_answer(self.rng, frame, refuse_share=1.0 if self.policy == "refuse" else 0.0)
                    await socket.send(json.dumps(answer))
        except websockets.ConnectionClosed:
            pass
        except Exception as exc:
            conn.stray.append(f"reader failed: {exc!r}")
        finally:
            conn.left = True
            conn.close_code = socket.close_code

    def alive(self) -> bool:
        return self.conn is not None and not self.conn.left

    async def send(self, frame: Any, request: Request | None = None) -> None:
        assert self.conn is not None
        if request is not None:
            self.conn.sent[frame["id"]] = request
            if request.session is not None and request.method in ("session/load", "session/prompt",
                                                                  "session/resume"):
                self.conn.opened.add(request.session)
        try:
            await self.socket.send(frame if isinstance(frame, (str, bytes)) else json.dumps(frame))
        except websockets.ConnectionClosed:
            pass

    async def request(self, method: str, params: Any, allowed: frozenset[int] = frozenset({RESULT}),
                      session: str | None = None) -> str:
        assert self.conn is not None
        request_id = self.conn.next_id()
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
                        Request(method, allowed, session))
        return request_id

    async def leave(self, how: str) -> None:
        """End this connection: ``close``, ``abort`` (no close frame), or an odd close frame."""
        assert self.conn is not None and self.socket is not None
        self.events[how] += 1
        self.reading.set()
        if how == "close":
            await self.socket.close(self.rng.choice([1000, 1001, 4000]))
        elif how == "abort":
            self.socket.transport.abort()
        elif self.socket.transport.is_closing():
            pass  # it is closing already (the bridge closed it meanwhile)
        else:
            code = self.rng.choice(ODD_CLOSE_CODES)
            payload = b"" if code is None else code.to_bytes(2, "big") + self.rng.choice(
                [b"", b"bye", b"\xff\xfe not utf-8"])
            self.socket.transport.write(raw_frame(self.rng, 0x8, payload))
            for _ in range(self.rng.randint(0, 3)):  # frames after the close: never answered
                request_id = self.conn.next_id()
                self.conn.sent[request_id] = Request("initialize", frozenset({RESULT}))
                self.socket.transport.write(raw_frame(self.rng, 0x1, json.dumps(
                    {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
                     "params": {"protocolVersion": 1}}).encode()))
        if self.reader is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self.reader), 5)
            except TimeoutError:
                self.socket.transport.abort()
                await self.reader

    # -- one random step --------------------------------------------------------------------

    async def act(self) -> None:
        rng = self.rng
        if not self.alive():
            if rng.random() < 0.5:
                await self.connect()
                if rng.random() < 0.9:
                    await self.request("initialize", {"protocolVersion": 1, "clientCapabilities": rng.choice(
                        [{}, {"elicitation": {"form": {}}}, {"_meta": {"terminal_output": True}}])})
            return
        assert self.conn is not None
        sid = rng.choice(self.sessions)
        pick = rng.random()
        if pick < 0.12:
            await self.request("session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []}, session=sid)
        elif pick < 0.30:
            text = rng.choice(PROMPTS)
            request_id = await self.request("session/prompt", {"sessionId": sid, "prompt": [
                {"type": "text", "text": text}]}, PROMPT_CODES, session=sid)
            self.conn.sent[request_id].text = text
            self.recent_prompts = (self.recent_prompts + [request_id])[-8:]
        elif pick < 0.37:
            await self.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
        elif pick < 0.41 and self.recent_prompts:
            await self.send({"jsonrpc": "2.0", "method": "$/cancel_request",
                             "params": {"requestId": rng.choice(self.recent_prompts)}})
        elif pick < 0.46:
            await self.request("session/set_mode", {"sessionId": sid, "modeId": rng.choice(MODES)}, session=sid)
        elif pick < 0.58:
            await self.bad_frame(sid)
        elif pick < 0.62:
            self.events["stall"] += 1
            if rng.random() < 0.3:  # a load's replay, then a stream, into a client that stopped reading
                await self.request("session/load", {"sessionId": sid, "cwd": "/tmp", "mcpServers": []},
                                   session=sid)
            self.reading.clear()  # the library stops reading once its small queue is full
            asyncio.get_running_loop().call_later(rng.uniform(0.5, 12.0), self.reading.set)
        elif pick < 0.65:
            await self.leave("abort")
        elif pick < 0.68:
            await self.leave("odd close")
        elif pick < 0.70:
            await self.leave("close")
        elif pick < 0.705:
            self.events["binary"] += 1
            await self.send(b"\x00binary")  # closed with 1003
        elif pick < 0.707 and self.oversized_sent < 1:
            self.oversized_sent += 1
            self.events["oversized"] += 1
            await self.send('{"jsonrpc":"2.0","method":"x","params":"' + "o" * (50 * 1024 * 1024) + '"}')
        # else: a quiet step

    async def bad_frame(self, sid: str) -> None:
        rng = self.rng
        assert self.conn is not None
        self.events["bad frame"] += 1
        kind = rng.randrange(7)
        if kind == 0:
            await self.send(rng.choice(["{not json", "[]", "7", '{"jsonrpc":"2.0"}', "", "{"]))
        elif kind == 1:
            await self.request(rng.choice(["session/nope", "x", "_zcode/unknown"]), {}, frozenset({-32601}))
        elif kind == 2:
            await self.request("session/prompt", {"sessionId": sid, "prompt": "not a list"}, frozenset({-32602}))
        elif kind == 3:
            await self.request("session/load", {"sessionId": sid, "cwd": "relative", "mcpServers": []},
                               frozenset({-32602}))
        elif kind == 4:
            await self.request("session/prompt", {"sessionId": "no-such-session", "prompt": [
                {"type": "text", "text": "x"}]}, frozenset({-32602, -32002}))
        elif kind == 5:  # a big valid prompt (1 MiB of text)
            request_id = await self.request("session/prompt", {"sessionId": sid, "prompt": [
                {"type": "text", "text": "#sim stream count=5 " + "b" * (1024 * 1024)}]}, PROMPT_CODES, session=sid)
            self.recent_prompts = (self.recent_prompts + [request_id])[-8:]
        else:  # a response to a dialog nobody sent
            await self.send({"jsonrpc": "2.0", "id": 10**12 + rng.randrange(1000), "result": {}})

    def outstanding(self, but_hangs: bool = False) -> int:
        if not self.alive():
            return 0
        assert self.conn is not None
        return outstanding(self.conn, but_hangs)

    async def answer_pending(self) -> None:
        """The end: every dialog this client left open gets its answer (it may still be the last one asked)."""
        self.policy = "answer"
        self.reading.set()
        if self.alive():
            assert self.conn is not None
            for frame in list(self.conn.pending_dialogs.values()):
                self.conn.pending_dialogs.pop(frame["id"], None)
                await self.send(dialog_answer(self.rng, frame))


def outstanding(conn: Conn, but_hangs: bool = False) -> int:
    return sum(1 for request_id, request in conn.sent.items() if request_id not in conn.answers
               and not (but_hangs and "hang" in request.text))


def status(pid: int, field_name: str) -> float:
    with open(f"/proc/{pid}/status") as text:
        return next(int(row.split()[1]) for row in text if row.startswith(field_name + ":")) / 1024


async def run_dialect(dialect: str, seconds: float, remotes: int, sessions: int, seed: int,
                      idle: float) -> dict[str, Any]:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="zcode-adversarial-remote-") as workdir:
        work = Path(workdir)
        env = dict(os.environ, ZCODE_BIN=SIM, HOME=workdir, ZCODE_HOME=str(work / "home"),
                   ZCODE_SIM_DATA=str(work / "sim"), ZCODE_SIM_DIALECT=dialect, ZCODE_ACP_REMOTE="1",
                   ZCODE_ACP_REMOTE_TOKEN=TOKEN, ZCODE_ACP_HUB_AUTOSTART="0", ZCODE_ACP_HUB_PORT="9",
                   ZCODE_ACP_REMOTE_PORT=str(20000 + seed % 20000))
        env.pop("ZCODE_SIM_TRACE", None)
        log_path = work / "bridge.log"
        with open(log_path, "wb") as log:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "zcode_acp", "--log-level", os.environ.get("ADVERSARIAL_LOG_LEVEL", "info"),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=log, env=env,
                limit=256 * 1024 * 1024)
            editor = Editor(proc, random.Random(seed))
            await editor.start(sessions)
            url = await remote_url(log_path)
            rss_start = status(proc.pid, "VmRSS")
            parties = [Remote(i + 1, url, editor.sessions, random.Random(seed * 1000 + i + 1))
                       for i in range(remotes)]

            async def drive(act: Any, rng: random.Random) -> None:
                deadline = time.monotonic() + seconds
                while time.monotonic() < deadline:
                    await act()
                    await asyncio.sleep(rng.uniform(0.01, 0.15))

            await asyncio.gather(drive(editor.act, editor.rng), *[drive(p.act, p.rng) for p in parties])
            # The end. First every dialog still open is answered and the editor answers all:
            # every request but a "#sim hang" prompt must then be answered without a cancel
            # (one that is not waits on a dialog nobody holds any more: stuck).
            editor.refuse_share = 0.0
            for party in parties:
                await party.answer_pending()
            for frame in list(editor.conn.pending_dialogs.values()):
                await editor._answer_dialog(frame)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and (editor.outstanding(True) or any(p.outstanding(True)
                                                                                    for p in parties)):
                await asyncio.sleep(0.2)
            stuck = [f"{conn.party}: {request_id} {request.method} {request.text!r}"
                     for conn in [editor.conn] + [p.conn for p in parties if p.alive() and p.conn]
                     for request_id, request in conn.sent.items()
                     if request_id not in conn.answers and "hang" not in request.text]
            # Then every hang cancelled, and every tracked answer awaited (a remote that is
            # still attached is owed its answers too).
            for sid in editor.sessions:
                await editor.write({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and (editor.outstanding() or any(p.outstanding() for p in parties)):
                await asyncio.sleep(0.2)
            marker = await editor.request("initialize", {"protocolVersion": 1}, wait=True)
            alive = "result" in marker
            rss_end, rss_peak = status(proc.pid, "VmRSS"), status(proc.pid, "VmHWM")
            for party in parties:  # the ones still attached stay, to see the 1001 at EOF
                if party.alive() and party.rng.random() < 0.5:
                    await party.leave("close")
            await asyncio.sleep(idle)
            rss_idle = status(proc.pid, "VmRSS")
            assert proc.stdin is not None
            proc.stdin.close()
            try:
                exit_code: int | None = await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                exit_code = None
                proc.kill()
                await proc.wait()
            await editor.reader
            end_codes = []
            for party in parties:
                if party.alive() and party.reader is not None:
                    try:
                        await asyncio.wait_for(party.reader, 10)
                    except TimeoutError:
                        pass
                    end_codes.append(party.conn.close_code if party.conn else None)
        log_text = log_path.read_text(errors="replace")
        if os.environ.get("ADVERSARIAL_KEEP_LOG"):  # a copy per dialect, for a post-mortem
            Path(f"{os.environ['ADVERSARIAL_KEEP_LOG']}.{dialect}").write_text(log_text)
    conns = [editor.conn] + [conn for party in parties for conn in party.conns]
    return {"dialect": dialect, "seconds": time.monotonic() - started, "conns": conns, "impure": editor.impure,
            "alive": alive, "exit_code": exit_code, "stuck": stuck, "rss": (rss_start, rss_peak, rss_end, rss_idle),
            "end_codes": end_codes, "events": sum((p.events for p in parties), Counter()),
            "tracebacks": log_text.count("Traceback"), "log_errors": error_lines(log_text),
            "overflows": log_text.count("reads too slowly")}


def error_lines(log_text: str) -> list[str]:
    return [line[:200] for line in log_text.splitlines() if " ERROR " in line or "Traceback" in line][:8]


async def remote_url(log_path: Path) -> str:
    for _ in range(300):
        match = re.search(r"remote ACP clients: (ws://\S+)", log_path.read_text(errors="replace"))
        if match:
            return match.group(1)
        await asyncio.sleep(0.05)
    raise RuntimeError("the bridge never logged its remote address")


def check(conn: Conn) -> dict[str, Any]:
    """One connection's figures; failures listed with examples."""
    once = twice = stayed_unanswered = left_unanswered = wrong = internal = 0
    examples: list[str] = []
    for request_id, request in conn.sent.items():
        answers = conn.answers.get(request_id, [])
        if not answers:
            if conn.left:
                left_unanswered += 1
            else:
                stayed_unanswered += 1
                examples.append(f"unanswered {request_id} ({request.method})")
            continue
        once += len(answers) == 1
        if len(answers) > 1:
            twice += 1
            examples.append(f"answered {len(answers)}x {request_id} ({request.method})")
        error = answers[0].get("error") or {}
        code = error.get("code", RESULT)
        if code == -32603:
            internal += 1
        if code not in request.allowed:
            wrong += 1
            examples.append(f"{request_id} ({request.method}) got {code} {str(error.get('message'))[:100]}")
    null_wrong = sum(n for code, n in conn.null_codes.items() if code not in (-32700, -32600))
    return {"sent": len(conn.sent), "once": once, "twice": twice, "stayed_unanswered": stayed_unanswered,
            "left_unanswered": left_unanswered, "wrong": wrong, "internal": internal, "stray": len(conn.stray),
            "null_wrong": null_wrong, "examples": examples[:6] + conn.stray[:3]}


def report(result: dict[str, Any], out: Any) -> int:
    """Print one dialect's table; the number of failures found."""
    conns: list[Conn] = result["conns"]
    parties: dict[str, list[Conn]] = {}
    for conn in conns:
        parties.setdefault(conn.party, []).append(conn)
    print(f"\n== dialect {result['dialect']}: {result['seconds']:.0f} s, remote events "
          f"{dict(result['events'])}", file=out)
    header = ("party", "conns", "sent", "once", "twice", "unans. (stayed)", "unans. (left)", "wrong code",
              "-32603", "stray", "updates", "cross-talk upd.", "cross-talk dialogs", "upd. before init")
    print(" | ".join(header), file=out)
    failures = 0
    examples: list[str] = []
    for party, group in parties.items():
        figures = [check(conn) for conn in group]
        total = {k: sum(f[k] for f in figures) for k in figures[0] if k != "examples"}
        row = [party, len(group), total["sent"], total["once"], total["twice"], total["stayed_unanswered"],
               total["left_unanswered"], total["wrong"], total["internal"], total["stray"] + total["null_wrong"],
               sum(c.updates for c in group), sum(sum(c.crosstalk_updates.values()) for c in group),
               sum(c.crosstalk_dialogs for c in group), sum(c.updates_before_initialize for c in group)]
        print(" | ".join(str(v) for v in row), file=out)
        failures += total["twice"] + total["stayed_unanswered"] + total["wrong"] + total["stray"] + total[
            "null_wrong"]
        examples += [f"{party}: {e}" for f in figures for e in f["examples"]]
    rss_start, rss_peak, rss_end, rss_idle = result["rss"]
    print(f"editor impure stdout lines: {len(result['impure'])}; bridge alive after the run: {result['alive']}; "
          f"exit code after stdin EOF: {result['exit_code']}; remote close codes at EOF: {result['end_codes']}",
          file=out)
    print(f"RSS start / peak / end / after idle (MiB): {rss_start:.0f} / {rss_peak:.0f} / {rss_end:.0f} / "
          f"{rss_idle:.0f} ({(rss_idle - rss_start) / rss_start * 100:+.0f}% of start); "
          f"1013 drops: {result['overflows']}; tracebacks in the log: {result['tracebacks']}", file=out)
    print(f"requests stuck without a cancel (a dialog nobody holds): {len(result['stuck'])}", file=out)
    failures += len(result["impure"]) + (not result["alive"]) + (result["exit_code"] != 0) + len(result["stuck"])
    for example in result["stuck"][:6] + examples[:12] + result["impure"][:3] + result["log_errors"]:
        print(f"  {example}", file=out)
    return failures


async def main_async(args: argparse.Namespace) -> int:
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    print(f"seed {seed}, {args.remotes} remote clients, {args.sessions} sessions, {args.seconds:g} s per dialect")
    dialects = ["classic", "cli016"] if args.dialect == "both" else [args.dialect]
    failures = 0
    for dialect in dialects:
        result = await run_dialect(dialect, args.seconds, args.remotes, args.sessions, seed, args.idle)
        failures += report(result, sys.stdout)
    print(f"\nfailures: {failures}")
    return failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="traffic per dialect (default 60)")
    parser.add_argument("--remotes", type=int, default=4, help="remote WebSocket clients (default 4)")
    parser.add_argument("--sessions", type=int, default=4, help="the editor's sessions, shared by all")
    parser.add_argument("--seed", type=int, default=None, help="seed (default: random, printed)")
    parser.add_argument("--dialect", choices=["classic", "cli016", "both"], default="both")
    parser.add_argument("--idle", type=float, default=6.0, help="quiet seconds before RSS is read again")
    args = parser.parse_args()
    sys.exit(1 if asyncio.run(main_async(args)) else 0)


if __name__ == "__main__":
    main()
