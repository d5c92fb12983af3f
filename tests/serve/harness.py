"""``zcode-acp serve`` as a process, the real hub in front of it, and an ACP client over WebSocket.

Every wait is on a line the process prints, a frame the client receives, or a
datagram, each with a deadline.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import gevent
import websocket as wsclient

from tests.hub.harness import TOKEN, Process, base_env
from zcode_acp.net.tokens import SUBPROTOCOL, token_subprotocol

BIN = str(Path(sys.executable).parent)  # zcode-sim is installed next to this Python


def serve_env(tmp: Path, hub_port: int | None, **extra: str) -> dict[str, str]:
    env = base_env(tmp, ZCODE_BIN="zcode-sim", ZCODE_HOME=str(tmp / "zcode-home"), ZCODE_ACP_HUB_AUTOSTART="0",
                   ZCODE_ACP_HUB_PORT=str(hub_port or 9),
                   # the simulator keeps its sessions on disk, as a real backend does, so a restarted one resumes them
                   ZCODE_SIM_DATA=str(tmp / "sim-data"), PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    env.update(extra)
    return env


class ServeProcess(Process):
    """``zcode-acp serve --cwd PROJECT``; ``instance_id`` once it has registered with the hub."""

    def __init__(self, tmp: Path, project: Path, hub_port: int | None, *args: str, registered: bool = True,
                 log_file: Path | None = None, **env: str) -> None:
        extra = ["--log-file", str(log_file)] if log_file else []
        super().__init__([sys.executable, "-m", "zcode_acp", "serve", "--cwd", str(project), *extra, *args],
                         serve_env(tmp, hub_port, **env))
        if log_file is not None:
            self._readers.append(gevent.spawn(self._tail, log_file))
        self.port = int(self.wait_line(r"serving \S+ on ws://127\.0\.0\.1:(\d+)/acp").group(1))
        self.instance_id = ""
        if registered:
            self.instance_id = self.wait_line(r"registered with the hub at \S+ as ([\w.-]+)").group(1)


    def _tail(self, path: Path) -> None:
        """The log file's lines join stderr's, as they are written (until the process has exited)."""
        offset = 0
        while True:
            exited = self.proc.poll() is not None
            if path.exists():
                with path.open("rb") as stream:
                    stream.seek(offset)
                    chunk = stream.read()
                complete = chunk[: chunk.rfind(b"\n") + 1]
                offset += len(complete)
                self.lines.extend(line.decode("utf-8", "replace") for line in complete.splitlines())
                if complete:
                    self._changed.set()
            if exited:
                return
            gevent.sleep(0.05)  # a file has no readiness to wait on: polled


class AcpClient:
    """JSON-RPC over one WebSocket: requests by id, every notification kept in order."""

    def __init__(self, url: str, timeout: float = 10.0, token: str = TOKEN) -> None:
        # As the web page does: the token in the subprotocol, never in the URL.
        self.socket = wsclient.create_connection(url, timeout=timeout,
                                                 subprotocols=[SUBPROTOCOL, token_subprotocol(token)])
        self.timeout = timeout
        self.next_id = 0
        self.notifications: list[dict[str, Any]] = []
        self.answers: dict[Any, dict[str, Any]] = {}

    @classmethod
    def through_hub(cls, hub_port: int, instance_id: str) -> AcpClient:
        return cls(f"ws://127.0.0.1:{hub_port}/acp?instance={instance_id}")

    def send(self, method: str, params: dict[str, Any]) -> int:
        self.next_id += 1
        self.socket.send(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}))
        return self.next_id

    def _read(self) -> None:
        frame = json.loads(self.socket.recv())
        if "method" in frame:
            self.notifications.append(frame)
        else:
            self.answers[frame["id"]] = frame

    def answer(self, request_id: int) -> dict[str, Any]:
        """The answer to ``request_id`` (frames before it are kept); the socket's timeout bounds each read."""
        while request_id not in self.answers:
            self._read()
        return self.answers.pop(request_id)

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.answer(self.send(method, params))

    def wait_update(self, kind: str) -> dict[str, Any]:
        """The first ``session/update`` of this kind not seen yet (consumed)."""
        while True:
            for index, frame in enumerate(self.notifications):
                update = frame.get("params", {}).get("update", {})
                if frame["method"] == "session/update" and update.get("sessionUpdate") == kind:
                    del self.notifications[: index + 1]
                    return update
            self._read()

    def text(self) -> str:
        return "".join(f["params"]["update"]["content"].get("text", "") for f in self.notifications
                       if f["method"] == "session/update"
                       and f["params"]["update"].get("sessionUpdate") == "agent_message_chunk")

    def close(self) -> None:
        self.socket.close()


def open_session(client: AcpClient, project: Path) -> str:
    assert "result" in client.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    new = client.call("session/new", {"cwd": str(project), "mcpServers": []})
    assert "result" in new, new
    session_id: str = new["result"]["sessionId"]
    return session_id


def prompt(client: AcpClient, session_id: str, text: str) -> int:
    return client.send("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]})
