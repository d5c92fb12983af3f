"""A raw line-level ACP peer for tests that must see exactly what is on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import queue
from pathlib import Path
from typing import Any

from tests.process.harness import SIM, V4_COMMAND_OF, catalog_reads, dialect, is_backend


class RawBridge:
    def __init__(self, tmp_path: Path, env: dict[str, str] | None = None) -> None:
        environment = dict(os.environ, ZCODE_BIN=SIM, ZCODE_HOME=str(tmp_path / "zcode-home"),
                           ZCODE_SIM_TRACE=str(tmp_path / "trace.jsonl"), ZCODE_SIM_DATA=str(tmp_path / "sim"),
                           ZCODE_SIM_DIALECT=dialect())
        environment.update(env or {})
        self.log = open(tmp_path / "bridge.log", "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "zcode_acp", "--log-level", "debug"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     env=environment)
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.reading = threading.Event()
        self.reading.set()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            self.reading.wait()
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.put(line)
        self.lines.put(b"")

    def stop_reading(self) -> None:
        """Play a client that stops reading stdout (after the line in progress)."""
        self.reading.clear()

    def resume_reading(self) -> None:
        self.reading.set()

    def write(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, frame: dict[str, Any]) -> None:
        self.write(json.dumps(frame).encode() + b"\n")

    def next_frame(self, timeout: float = 10) -> dict[str, Any] | None:
        line = self.lines.get(timeout=timeout)
        if not line:
            return None
        frame = json.loads(line)  # every stdout line must be JSON ...
        assert isinstance(frame, dict) and frame.get("jsonrpc") == "2.0", line  # ... and a JSON-RPC frame
        return frame

    def until(self, predicate, timeout: float = 10) -> dict[str, Any]:
        while True:
            frame = self.next_frame(timeout)
            assert frame is not None, "bridge closed stdout"
            if predicate(frame):
                return frame

    def close(self) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(timeout=10)
        self.log.close()
        return code

    def children(self) -> list[int]:
        pids = []
        for task in Path(f"/proc/{self.proc.pid}/task").glob("*"):
            pids += [int(p) for p in (task / "children").read_text().split()]
        return [pid for pid in pids if is_backend(pid)]


def trace_acts(trace: Path) -> list[str]:
    """The acts the bridge asked of the engine, in order, from the simulator's trace: a legacy
    method as named, a v4 command as the legacy method doing the same act (``Bridge.engine_acts``),
    so a line-level test holds on either engine API (docs/v4.md)."""
    legacy_of = {command: method for method, command in reversed(V4_COMMAND_OF.items())}
    calls = [json.loads(line) for line in trace.read_text().splitlines()]
    reads = catalog_reads(calls)  # a v4 create's catalog read belongs to the create (harness.py)
    acts = []
    for index, call in enumerate(calls):
        if index in reads:
            continue
        method = call.get("method")
        if method == "v4/command":
            command = (call.get("params") or {}).get("type")
            method = legacy_of.get(command, f"v4/command {command}")
        acts.append(method)
    return acts
