"""A minimal ACP peer for benchmarks: raw lines, no SDK, so the client is never the bottleneck.

``Peer`` starts an ACP agent process — the bridge (``python -m zcode_acp``) or
the minimal relay (``bench/relay.py``) — on a backend (``zcode-sim`` or the
fake backend of ``bench/fake_backend.py``), with a private, temporary
``ZCODE_HOME`` unless one is given.
"""

from __future__ import annotations

import os
from collections import deque
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterator

import ujson

HERE = Path(__file__).resolve().parent
SIM = str(Path(sys.executable).parent / "zcode-sim")
BRIDGE = [sys.executable, "-m", "zcode_acp", "--log-level", "warning"]
RELAY = [sys.executable, str(HERE / "relay.py")]

_fake_bin: str | None = None


def fake_backend() -> str:
    """An executable path for the fake backend (``ZCODE_BIN`` must name one file)."""
    global _fake_bin
    if _fake_bin is None:
        folder = tempfile.mkdtemp(prefix="bench-fake-")
        path = os.path.join(folder, "fake-zcode")
        with open(path, "w") as script:
            script.write(f"#!{sys.executable}\nimport runpy, sys\n"
                         f"sys.argv[0] = {str(HERE / 'fake_backend.py')!r}\n"
                         f"runpy.run_path(sys.argv[0], run_name='__main__')\n")
        os.chmod(path, 0o755)
        _fake_bin = path
    return _fake_bin


class Peer:
    def __init__(self, env: dict[str, str] | None = None, command: list[str] | None = None,
                 backend: str | None = None) -> None:
        self.home = None
        environment = dict(os.environ, ZCODE_BIN=backend or SIM)
        if "ZCODE_HOME" not in (env or {}):
            self.home = tempfile.mkdtemp(prefix="bench-home-")
            environment["ZCODE_HOME"] = self.home
        environment.update(env or {})
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(command or BRIDGE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment)
        self.next_id = 0
        self.tail = b""  # bytes after the last newline read so far
        self.pending: deque[bytes] = deque()  # complete lines read but not yet consumed

    @property
    def fd(self) -> int:
        return self.proc.stdout.fileno()

    def send(self, method: str, params: dict[str, Any]) -> int:
        self.next_id += 1
        frame = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(ujson.dumps(frame).encode() + b"\n")
        self.proc.stdin.flush()
        return self.next_id

    def send_prompt(self, session_id: str, text: str) -> int:
        return self.send("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]})

    def block(self) -> bytes:
        """The next complete lines from the agent: what is pending, else one raw read (no per-line work)."""
        if self.pending:
            data = b"".join(self.pending)
            self.pending.clear()
            return data
        while True:
            data = os.read(self.fd, 1 << 20)
            if not data:
                raise RuntimeError("the agent closed its output")
            self.tail += data
            cut = self.tail.rfind(b"\n") + 1
            if cut:
                block, self.tail = self.tail[:cut], self.tail[cut:]
                return block

    def lines(self) -> Iterator[bytes]:
        while True:
            while self.pending:
                yield self.pending.popleft()
            self.pending.extend(self.block().splitlines(keepends=True))

    def wait(self, request_id: int, on_line: Callable[[bytes], None] | None = None) -> dict[str, Any]:
        marker = f'"id":{request_id},'.encode()
        for line in self.lines():
            if marker in line and b'"method"' not in line:
                return ujson.loads(line)
            if on_line is not None:
                on_line(line)
        raise AssertionError("unreachable")

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

    def read_until(self, marker: bytes, count: bytes | None = None) -> int:
        """Read raw blocks (no per-line Python work) until ``marker``; how many ``count`` were seen."""
        seen = 0
        while True:
            block = self.block()
            if count is not None:
                seen += block.count(count)
            if marker in block:
                # What follows the marker's line stays pending for the next reader.
                end = block.index(b"\n", block.index(marker)) + 1
                if end < len(block):
                    self.pending.extend(block[end:].splitlines(keepends=True))
                    if count is not None:
                        seen -= block[end:].count(count)
                return seen

    def rss_kib(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            self.proc.stdout.close()
            if self.home:
                shutil.rmtree(self.home, ignore_errors=True)

    def __enter__(self) -> Peer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
