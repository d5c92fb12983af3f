"""Helpers for the reliability tests (issue 9, docs/reliability.md).

``running`` starts the real bridge on the simulator as a line-level peer and,
whatever the test did (stopped, killed or wedged processes), leaves nothing
behind: every backend process group it saw is resumed and killed. Our own
request ids are strings, so they never collide with the integer ids of the
dialogs the bridge sends us.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterator

from tests.process.raw import RawBridge

ANSWER_TIMEOUT = 5.0


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is not alive
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pid: int, timeout: float) -> bool:
    """True once ``pid`` is gone; bounded (process death has no event to wait on)."""
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


class Peer:
    """A RawBridge with request helpers and a record of every backend it saw."""

    def __init__(self, raw: RawBridge, tmp_path: Path) -> None:
        self.raw = raw
        self.tmp_path = tmp_path
        self.backends: set[int] = set()
        self.others: set[int] = set()  # other pids a test started (children of the backend…)
        self.frames: list[dict[str, Any]] = []

    def send(self, frame: dict[str, Any]) -> None:
        self.raw.send(frame)

    def request(self, request_id: str, method: str, params: Any) -> None:
        self.raw.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})

    def next(self, timeout: float = ANSWER_TIMEOUT) -> dict[str, Any]:
        frame = self.raw.next_frame(timeout)
        assert frame is not None, "the bridge closed stdout"
        self.frames.append(frame)
        return frame

    def until(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = ANSWER_TIMEOUT,
              seen: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The first frame matching ``predicate`` within ``timeout`` (overall); others go to ``seen``."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no matching frame within {timeout}s"
            try:
                frame = self.next(left)
            except Exception as exc:  # queue.Empty
                raise AssertionError(f"no matching frame within {timeout}s") from exc
            if predicate(frame):
                return frame
            if seen is not None:
                seen.append(frame)

    def answer(self, request_id: Any, timeout: float = ANSWER_TIMEOUT,
               seen: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return self.until(lambda f: f.get("id") == request_id and "method" not in f, timeout, seen)

    def call(self, request_id: str, method: str, params: Any, timeout: float = ANSWER_TIMEOUT) -> dict[str, Any]:
        self.request(request_id, method, params)
        return self.answer(request_id, timeout)

    def initialize(self, capabilities: dict[str, Any] | None = None) -> None:
        params: dict[str, Any] = {"protocolVersion": 1}
        if capabilities is not None:
            params["clientCapabilities"] = capabilities
        assert "result" in self.call("init", "initialize", params)

    def new_session(self, cwd: str = "/tmp", request_id: str = "new") -> str:
        answer = self.call(request_id, "session/new", {"cwd": cwd, "mcpServers": []})
        assert "result" in answer, answer
        return answer["result"]["sessionId"]

    def prompt(self, request_id: str, session_id: str, text: str) -> None:
        self.request(request_id, "session/prompt",
                     {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]})

    def backend(self) -> int:
        """The one live backend pid (remembered for cleanup)."""
        children = [pid for pid in self.raw.children() if alive(pid)]
        assert len(children) == 1, f"expected one backend, found {children}"
        self.backends.add(children[0])
        return children[0]

    def trace(self) -> list[dict[str, Any]]:
        path = self.tmp_path / "trace.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def creates(self) -> list[tuple[str, list[dict[str, Any]] | None]]:
        """Each engine session the bridge made, as (workspace path, MCP servers): the legacy
        ``session/create`` or, on the v4 path (docs/v4.md), the ``createSession`` command."""
        made = []
        for frame in self.trace():
            params = frame.get("params") or {}
            if frame.get("method") == "session/create":
                made.append((params["workspace"]["workspacePath"], params.get("mcpServers")))
            elif frame.get("method") == "v4/command" and params.get("type") == "createSession":
                made.append((params["payload"]["workspaceId"], params["payload"].get("mcpServers")))
        return made

    def log(self) -> str:
        return (self.tmp_path / "bridge.log").read_text(errors="replace")


def updates(frames: list[dict[str, Any]], session_id: str | None = None, kind: str | None = None) -> list[dict]:
    out = []
    for frame in frames:
        if frame.get("method") != "session/update":
            continue
        if session_id is not None and frame["params"]["sessionId"] != session_id:
            continue
        update = frame["params"]["update"]
        if kind is None or update["sessionUpdate"] == kind:
            out.append(update)
    return out


def text_of(frames: list[dict[str, Any]], session_id: str) -> str:
    return "".join(u["content"]["text"] for u in updates(frames, session_id, "agent_message_chunk"))


def until_text(b: Peer, session_id: str, pattern: str, timeout: float = 5.0) -> re.Match[str]:
    """Frames until the session's streamed text matches ``pattern``; the match."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while True:
        match = re.search(pattern, text_of(seen, session_id))
        if match:
            return match
        seen.append(b.next(max(0.01, deadline - time.monotonic())))


def spawn_child(b: Peer, session_id: str, request_id: str) -> int:
    """Prompt the ``spawn_child`` scenario: the pid of the child it starts (streamed as ``child <pid>``),
    which the harness kills at the end whatever the test did."""
    b.prompt(request_id, session_id, "#sim spawn_child")
    child = int(until_text(b, session_id, r"child (\d+) ").group(1))
    b.others.add(child)
    return child


def _kill_group(pid: int) -> None:
    for sig in (signal.SIGCONT, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


@contextmanager
def running(tmp_path: Path, env: dict[str, str] | None = None, initialize: bool = True) -> Iterator[Peer]:
    raw = RawBridge(tmp_path, env=env)
    peer = Peer(raw, tmp_path)
    try:
        if initialize:
            peer.initialize()
        yield peer
    finally:
        for pid in raw.children() if raw.proc.poll() is None else []:
            peer.backends.add(pid)
        if raw.proc.poll() is None:
            raw.proc.kill()
        raw.proc.wait(timeout=10)
        for pid in peer.backends:
            _kill_group(pid)  # the backend is its group's leader (start_new_session)
        for pid in peer.others:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        raw.log.close()
