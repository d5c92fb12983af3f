"""Drive ``zcode-sim`` directly: raw JSON lines over its stdio pipes, waits with timeouts."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from collections.abc import Callable

SIM = str(Path(sys.executable).parent / "zcode-sim")
TIMEOUT = 5.0
NO_PREFERENCES = {"nativeSearchEnhancementsEnabled": False, "memoryEnabled": False,
                  "askUserQuestionAutoResolutionEnabled": False}
# What a well-behaved host answers to the requests a create sends (answered at arrival).
HANDSHAKE: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "session/requestRuntimePreferences": lambda frame: {"result": NO_PREFERENCES},
    "interaction/requestProviderRuntimeHeaders": lambda frame: {
        "result": {"headersApplied": False, "errorMessage": "the test peer has no runtime headers"}},
    "interaction/requestOfficialMcpAuthHeaders": lambda frame: {"result": {"ok": False, "reason": "official_auth_unavailable"}},
}


class SimPeer:
    def __init__(self, tmp_path: Path, dialect: str = "classic", env: dict[str, str] | None = None,
                 argv: tuple[str, ...] = ("app-server", "--stdio")) -> None:
        environment = {k: v for k, v in os.environ.items() if not k.startswith(("ZCODE_SIM_", "ZCODE_BUILTIN_",
                                                                                  "ZCODE_PERSONAL_"))}
        environment.update(ZCODE_SIM_DIALECT=dialect, ZCODE_SIM_DATA=str(tmp_path / "sim-data"),
                           ZCODE_SIM_TRACE=str(tmp_path / "sim-trace.jsonl"))
        environment.update(env or {})
        self.tmp_path = tmp_path
        self.dialect = dialect
        self.stderr_path = tmp_path / f"sim-stderr-{id(self)}.log"
        self.stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen([SIM, *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=environment, cwd=str(tmp_path))
        self.frames: list[dict[str, Any]] = []
        self.changed = threading.Condition()
        self.ended = False
        self.auto: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = dict(HANDSHAKE)
        self.ids = itertools.count(1)
        self.writing = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    # -- wire -----------------------------------------------------------------------------

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            frame = json.loads(line)  # every stdout line is one JSON frame
            assert isinstance(frame, dict) and "jsonrpc" not in frame, line
            with self.changed:
                self.frames.append(frame)
                self.changed.notify_all()
            answer = self.auto.get(frame.get("method", "")) if "id" in frame else None
            if answer is not None:
                self.send({"id": frame["id"], **answer(frame)})
        with self.changed:
            self.ended = True
            self.changed.notify_all()

    def send(self, frame: dict[str, Any]) -> None:
        data = json.dumps(frame).encode() + b"\n"
        with self.writing:
            assert self.proc.stdin is not None
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> int:
        request_id = next(self.ids)
        self.send({"id": request_id, "method": method, "params": params or {}})
        return request_id

    def wait(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = TIMEOUT, start: int = 0) -> dict[str, Any]:
        """The first frame from index ``start`` on that matches (waiting for it, bounded)."""
        deadline = time.monotonic() + timeout
        with self.changed:
            index = start
            while True:
                while index < len(self.frames):
                    if predicate(self.frames[index]):
                        return self.frames[index]
                    index += 1
                assert not self.ended, f"zcode-sim closed stdout ({self.stderr_path.read_text()[-2000:]})"
                remaining = deadline - time.monotonic()
                assert remaining > 0 and self.changed.wait(remaining), f"no matching frame within {timeout}s"

    def index_of(self, frame: dict[str, Any]) -> int:
        with self.changed:
            return next(i for i, f in enumerate(self.frames) if f is frame)

    def answer_to(self, request_id: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        return self.wait(lambda f: f.get("id") == request_id and "method" not in f, timeout)

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float = TIMEOUT) -> dict[str, Any]:
        return self.answer_to(self.request(method, params), timeout)

    def result(self, method: str, params: dict[str, Any] | None = None, timeout: float = TIMEOUT) -> Any:
        frame = self.call(method, params, timeout)
        assert "error" not in frame, frame
        return frame["result"]

    def error(self, method: str, params: dict[str, Any] | None = None, timeout: float = TIMEOUT) -> dict[str, Any]:
        frame = self.call(method, params, timeout)
        assert "error" in frame, frame
        return frame["error"]

    # -- what arrived -----------------------------------------------------------------------

    def requests(self, method: str) -> list[dict[str, Any]]:
        with self.changed:
            return [f for f in self.frames if f.get("method") == method and "id" in f]

    def events(self, session_id: str | None = None, kind: str | None = None, start: int = 0) -> list[dict[str, Any]]:
        with self.changed:
            frames = list(self.frames[start:])
        return [f["params"] for f in frames if f.get("method") == "session/event"
                and session_id in (None, f["params"]["sessionId"]) and kind in (None, f["params"]["type"])]

    def event(self, session_id: str, kind: str, start: int = 0, timeout: float = TIMEOUT,
              where: Callable[[dict[str, Any]], bool] = lambda e: True) -> dict[str, Any]:
        frame = self.wait(lambda f: f.get("method") == "session/event" and f["params"]["sessionId"] == session_id
                          and f["params"]["type"] == kind and where(f["params"]), timeout, start)
        return frame["params"]

    def mark(self) -> int:
        with self.changed:
            return len(self.frames)

    # -- conveniences ------------------------------------------------------------------------

    def workspace(self, path: str = "/tmp", key: str | None = None) -> dict[str, str]:
        return {"workspacePath": path, "workspaceKey": key or path}

    def create(self, path: str = "/tmp", key: str | None = None, subscribe: bool = True, **extra: Any) -> str:
        result = self.result("session/create", {"workspace": self.workspace(path, key), **extra})
        session_id = result["session"]["sessionId"]
        if subscribe:
            self.result("session/subscribe", {"sessionId": session_id, "deliveryKind": "desktop-continuous",
                                              "includeSnapshot": False})
        return session_id

    def send_prompt(self, session_id: str, text: str) -> tuple[int, int]:
        """Send a prompt: (the index frames of this turn start at, the send's request id)."""
        start = self.mark()
        return start, self.request("session/send", {"sessionId": session_id, "content": text})

    def turn(self, session_id: str, text: str, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        """Run one prompt to its end: the session's events of that turn, turn.started to its end."""
        start, send_id = self.send_prompt(session_id, text)
        assert "error" not in self.answer_to(send_id, timeout)
        started = self.event(session_id, "turn.started", start, timeout)
        self.event(session_id, "turn.completed", start, timeout, lambda e: self.turn_of(e) == self.turn_of(started))
        return self.turn_events(session_id, self.turn_of(started), start)

    def turn_events(self, session_id: str, turn_id: str, start: int = 0) -> list[dict[str, Any]]:
        return [e for e in self.events(session_id, start=start) if self.turn_of(e) == turn_id]

    @staticmethod
    def turn_of(event: dict[str, Any]) -> Any:
        return event.get("turnId") or event["payload"].get("turnId")

    @staticmethod
    def text_of(events: list[dict[str, Any]], kind: str = "text_delta") -> str:
        return "".join(e["payload"]["delta"] for e in events
                       if e["type"] == "model.streaming" and e["payload"].get("kind") == kind)

    def trace(self) -> list[dict[str, Any]]:
        path = self.tmp_path / "sim-trace.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []

    def close(self) -> int:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.reader.join(timeout=5)
        self.stderr.close()
        return self.proc.returncode
