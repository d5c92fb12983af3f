"""A minimal ACP peer for benchmarks: raw lines, no SDK, so the client is never the bottleneck."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from collections.abc import Callable

import ujson

SIM = str(Path(sys.executable).parent / "zcode-sim")


class Peer:
    def __init__(self, env: dict[str, str] | None = None) -> None:
        environment = dict(os.environ, ZCODE_BIN=SIM)
        environment.update(env or {})
        self.proc = subprocess.Popen([sys.executable, "-m", "zcode_acp", "--log-level", "warning"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment)
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any]) -> int:
        self.next_id += 1
        frame = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(ujson.dumps(frame).encode() + b"\n")
        self.proc.stdin.flush()
        return self.next_id

    def lines(self):
        yield from self.proc.stdout

    def wait(self, request_id: int, on_line: Callable[[bytes], None] | None = None) -> dict[str, Any]:
        marker = f'"id":{request_id},'.encode()
        for line in self.proc.stdout:
            if marker in line and b'"method"' not in line:
                return ujson.loads(line)
            if on_line is not None:
                on_line(line)
        raise RuntimeError("the bridge closed its output")

    def call(self, method: str, params: dict[str, Any], on_line: Callable[[bytes], None] | None = None) -> Any:
        answer = self.wait(self.send(method, params), on_line)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def initialize(self) -> None:
        self.call("initialize", {"protocolVersion": 1})

    def new_session(self, cwd: str = "/tmp") -> str:
        return self.call("session/new", {"cwd": cwd, "mcpServers": []})["sessionId"]

    def prompt(self, session_id: str, text: str, on_line: Callable[[bytes], None] | None = None) -> Any:
        return self.call("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
                         on_line)

    def rss_kib(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
