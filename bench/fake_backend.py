"""A fake ZCode app-server for the benchmarks: text deltas in bulk, nothing else.

    python bench/fake_backend.py app-server --stdio

It speaks the same wire shape as ``zcode-sim`` (frames without ``jsonrpc``,
``session/event`` notifications with a contiguous ``seq`` per session and a
``turnId``) but does only what the streaming figures need, and does it cheaply:
every event line is formatted from pre-built bytes and written in blocks, so
the backend is never what limits a relay or the bridge. One process, one
thread, ``select`` over stdin; streams of several sessions are interleaved in
slices of ``SLICE`` events.

A prompt's first line picks what the turn does (``docs/performance.md``):

* ``bulk N [text=T]``: N deltas (default ``x``) as fast as the pipe takes them;
* ``burst N``: the same, but the first delta's text is the wall-clock time
  (``time.time()``) at which it was written: first-update latency;
* ``paced N INTERVAL``: N deltas, each stamped with its write time, one every
  INTERVAL seconds: added latency at a paced rate;
* ``linger MS``: one delta and ``turn.completed``, then the session's lock is
  held MS milliseconds longer (``session/send`` answers busy, ``1308``): the
  backend "still reports busy for a moment" after a turn.

``session/messages`` answers every session with the same history of
``FAKE_BACKEND_HISTORY`` messages (default 0), the shape of ``zcode-sim``'s
``#sim history`` (alternating user and assistant text), encoded once: the
``load-fake`` row's engine, which costs the bridge's load nothing of its own.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import sys
import time
from collections import deque
from typing import Any

HISTORY = int(os.environ.get("FAKE_BACKEND_HISTORY", "0") or 0)
SLICE = 256  # events of one stream per turn of the loop (so streams interleave)
BUSY = {"code": 1308, "message": "prompt is running"}


def dumps(frame: Any) -> bytes:
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


class Session:
    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.seq = 0
        self.locked_until = 0.0  # monotonic; > now while a lingering lock holds
        self.stream: Stream | None = None


class Stream:
    """One turn's deltas."""

    def __init__(self, session: Session, turn_id: str, count: int, text: str, mode: str, interval: float,
                 linger: float) -> None:
        self.session = session
        self.turn_id = turn_id
        self.left = count
        self.mode = mode  # bulk | burst | paced
        self.interval = interval
        self.linger = linger
        self.due = time.monotonic()
        self.stopped = False
        sid = json.dumps(session.session_id)
        self.head = f'{{"method":"session/event","params":{{"sessionId":{sid},"seq":'.encode()
        self.middle = f',"type":"model.streaming","turnId":"{turn_id}","payload":{{"kind":"text_delta","delta":'.encode()
        self.tail = b'}}}\n'
        self.text = json.dumps(text, ensure_ascii=False).encode()

    def delta(self, text: bytes) -> bytes:
        self.session.seq += 1
        return b"".join((self.head, str(self.session.seq).encode(), self.middle, text, self.tail))

    def event(self, kind: str, payload: dict[str, Any]) -> bytes:
        self.session.seq += 1
        return dumps({"method": "session/event", "params": {
            "sessionId": self.session.session_id, "seq": self.session.seq, "type": kind,
            "turnId": self.turn_id, "payload": payload}})


class FakeBackend:
    def __init__(self) -> None:
        self.sessions: dict[str, Session] = {}
        self.active: deque[Stream] = deque()
        self.ids = itertools.count(1)
        self.out: list[bytes] = []
        self.history_bytes: bytes | None = None

    # -- requests ----------------------------------------------------------------------

    def handle(self, frame: dict[str, Any]) -> None:
        method = frame.get("method")
        if method is None or "id" not in frame:
            return  # answers to our requests, notifications: nothing to do
        handler = getattr(self, "m_" + method.replace("/", "_"), None)
        if handler is None:
            self.out.append(dumps({"id": frame["id"], "error": {"code": -32601, "message": f"Method not found: {method}"}}))
            return
        params = frame.get("params") or {}
        session = self.sessions.get(params.get("sessionId"))
        if method == "session/resume" and session is None:
            session = self.sessions[params["sessionId"]] = Session(str(params["sessionId"]))
        if method != "session/create" and session is None:
            self.out.append(dumps({"id": frame["id"], "error": {"code": -32002, "message": "session not found"}}))
            return
        if method == "session/messages":  # the pre-built answer: no per-call encoding
            self.out.append(b'{"id":%s,"result":{"messages":%s}}\n' % (dumps(frame["id"]).strip(), self.history()))
            return
        result, error = handler(session, params)
        self.out.append(dumps({"id": frame["id"], "error": error} if error else {"id": frame["id"], "result": result}))
        if method == "session/send" and error is None:
            self.start(session, str(params.get("content") or ""))

    def m_session_create(self, session: None, params: dict[str, Any]) -> tuple[Any, Any]:
        created = Session(f"sess_fake{next(self.ids)}")
        self.sessions[created.session_id] = created
        return {"session": {"sessionId": created.session_id, "title": "New session"},
                "settings": {"mode": {"current": params.get("mode") or "yolo"}}}, None

    def m_session_resume(self, session: Session, params: dict[str, Any]) -> tuple[Any, Any]:
        """Any id resumes (made on the spot if unknown): sessions opened in bulk without ``session/create``."""
        return {"session": {"sessionId": session.session_id, "workspace": {"workspacePath": "/tmp"}},
                "settings": {"mode": {"current": "yolo"}}}, None

    def m_session_messages(self, session: Session, params: dict[str, Any]) -> tuple[Any, Any]:
        raise AssertionError("answered from the pre-built history in handle()")

    def history(self) -> bytes:
        if self.history_bytes is None:
            roles = ("user", "assistant")
            self.history_bytes = dumps([{"info": {"id": f"msg_h{index}_{index:06x}", "role": roles[index % 2]},
                                         "parts": [{"type": "text", "text": f"{roles[index % 2]} message {index}"}]}
                                        for index in range(HISTORY)]).strip()
        return self.history_bytes

    def m_session_subscribe(self, session: Session, params: dict[str, Any]) -> tuple[Any, Any]:
        return {"eventSeq": session.seq}, None

    def m_session_read(self, session: Session, params: dict[str, Any]) -> tuple[Any, Any]:
        running = session.stream is not None or session.locked_until > time.monotonic()
        return {"projection": {"status": "running" if running else "idle"}, "todos": []}, None

    def m_session_send(self, session: Session, params: dict[str, Any]) -> tuple[Any, Any]:
        if session.stream is not None or session.locked_until > time.monotonic():
            return None, BUSY
        return {"accepted": True}, None

    def m_session_stop(self, session: Session, params: dict[str, Any]) -> tuple[Any, Any]:
        if session.stream is not None:
            session.stream.stopped = True
        return {"stopped": session.stream is not None}, None

    # -- turns -------------------------------------------------------------------------

    def start(self, session: Session, content: str) -> None:
        words = content.split("\n", 1)[0].split()
        args = [word for word in words[1:] if "=" not in word]
        options = dict(word.split("=", 1) for word in words[1:] if "=" in word)
        mode = words[0] if words else "bulk"
        count, interval, linger = 1, 0.0, 0.0
        if mode in ("bulk", "burst"):
            count = int(args[0]) if args else 1000
        elif mode == "paced":
            count = int(args[0]) if args else 100
            interval = float(args[1]) if len(args) > 1 else 0.001
        elif mode == "linger":
            linger = (float(args[0]) if args else 20.0) / 1000
        else:
            mode = "bulk"
        stream = Stream(session, f"turn_fake{next(self.ids)}", count, options.get("text", "x"), mode, interval, linger)
        session.stream = stream
        self.out.append(stream.event("turn.started", {"inputSource": "user", "inputVisibility": "user",
                                                      "input": content}))
        self.active.append(stream)

    def step(self, stream: Stream, now: float) -> bool:
        """Emit what is due; True when the stream has ended."""
        if stream.mode == "paced":
            if now < stream.due or stream.left == 0:
                return self.finish(stream) if stream.left == 0 else False
            stream.left -= 1
            stream.due += stream.interval
            self.out.append(stream.delta(json.dumps(f"{time.time():.6f};").encode()))
            return self.finish(stream) if stream.left == 0 else False
        take = min(stream.left, SLICE)
        if stream.mode == "burst" and take:
            stream.mode = "bulk"  # only the first delta is stamped, and it leaves at once
            stream.left -= 1
            take -= 1
            self.out.append(stream.delta(json.dumps(f"{time.time():.6f};").encode()))
            self.flush()
        stream.left -= take
        delta = stream.delta
        text = stream.text
        self.out.extend([delta(text) for _ in range(take)])
        if stream.left == 0 or stream.stopped:
            return self.finish(stream)
        return False

    def finish(self, stream: Stream) -> bool:
        session = stream.session
        result = "cancelled" if stream.stopped else "success"
        self.out.append(stream.event("turn.completed", {"resultType": result, "usage": {"outputTokens": 1}}))
        session.stream = None
        if stream.linger:
            session.locked_until = time.monotonic() + stream.linger
        return True

    # -- loop ----------------------------------------------------------------------------

    def flush(self) -> None:
        if self.out:
            data = b"".join(self.out)
            self.out = []
            view = memoryview(data)
            while view:
                view = view[os.write(1, view):]

    def serve(self) -> int:
        pending = b""
        while True:
            now = time.monotonic()
            timeout: float | None = None
            if self.active:
                bulk = any(stream.mode != "paced" for stream in self.active)
                timeout = 0 if bulk else max(0.0, min(stream.due for stream in self.active) - now)
            readable, _, _ = select.select([0], [], [], timeout)
            if readable:
                chunk = os.read(0, 1 << 20)
                if not chunk:
                    self.flush()
                    return 0
                lines = (pending + chunk).split(b"\n")
                pending = lines.pop()
                for line in lines:
                    if line.strip():
                        try:
                            frame = json.loads(line)
                        except ValueError:
                            continue
                        if isinstance(frame, dict):
                            self.handle(frame)
            now = time.monotonic()
            for _ in range(len(self.active)):
                stream = self.active.popleft()
                if not self.step(stream, now):
                    self.active.append(stream)
            self.flush()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:2] != ["app-server", "--stdio"]:
        print("usage: fake_backend.py app-server --stdio", file=sys.stderr)
        return 2
    return FakeBackend().serve()


if __name__ == "__main__":
    sys.exit(main())
