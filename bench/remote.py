"""Issue 11's figures: the editor's stream with remote WebSocket clients attached.

A remote client that keeps up receives every update too; one that stops
reading must never slow the editor (it is dropped once its 8 MiB buffer
overflows) and must not grow the bridge without bound.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import websocket  # websocket-client: a plain threaded client, independent of the bridge's own code

from bench.peer import BRIDGE, Peer, fake_backend
from bench.streaming import CHUNK, _warm

TOKEN = "bench-token-0123456789abcdef"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _env(port: int) -> dict[str, str]:
    return {"ZCODE_ACP_REMOTE": "1", "ZCODE_ACP_REMOTE_TOKEN": TOKEN, "ZCODE_ACP_REMOTE_PORT": str(port),
            "ZCODE_ACP_HUB_AUTOSTART": "0", "ZCODE_ACP_HUB_PORT": "9"}


def _connect(port: int) -> Any:
    deadline = time.monotonic() + 10
    while True:  # the endpoint opens right after the bridge starts
        try:
            # The token in a header: the endpoint refuses it in the query string (docs/remote.md).
            return websocket.create_connection(f"ws://127.0.0.1:{port}/acp", timeout=30,
                                               header=[f"Authorization: Bearer {TOKEN}"])
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _high_water_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


class Counter(threading.Thread):
    """A fast remote client: reads every message and counts the agent's chunks."""

    def __init__(self, ws: Any) -> None:
        super().__init__(daemon=True)
        self.ws, self.chunks, self.last = ws, 0, 0.0
        self.loaded = threading.Event()  # its session/load was answered: it gets the session's updates

    def run(self) -> None:
        try:
            while True:
                message = self.ws.recv()
                if "agent_message_chunk" in message:
                    self.chunks += 1
                    self.last = time.perf_counter()
                elif '"id":2,' in message or '"id": 2,' in message:
                    self.loaded.set()
        except Exception:  # closed at the end
            return


def with_remote(count: int, stalled: bool) -> tuple[float, float, int, float]:
    """(editor updates/s, remote updates/s or 0, remote chunks, peak RSS MiB of the bridge)."""
    port = _free_port()
    with Peer(env=_env(port), command=BRIDGE, backend=fake_backend()) as peer:
        session_id = _warm(peer)
        ws = _connect(port)
        if stalled:  # a tiny receive buffer and no reading: the bridge's buffer for it fills
            ws.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            counter = None
        else:
            counter = Counter(ws)
            counter.start()
        ws.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}')
        # A remote client gets the updates of the sessions it named (docs/remote.md, "The rules").
        ws.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/load",
                            "params": {"sessionId": session_id, "cwd": "/tmp", "mcpServers": []}}))
        if counter is not None:
            if not counter.loaded.wait(10):
                raise RuntimeError("the remote client's session/load was not answered")
        else:
            time.sleep(0.2)  # a stalled client reads nothing: let the bridge see its load (a bench, not a test)
        request = peer.send_prompt(session_id, f"bulk {count}")
        started = time.perf_counter()
        chunks = peer.read_until(f'"id":{request},'.encode(), CHUNK)
        elapsed = time.perf_counter() - started
        peak = _high_water_kib(peer.proc.pid)
        remote_rate = 0.0
        if counter is not None:
            deadline = time.monotonic() + 10
            while counter.chunks < count and time.monotonic() < deadline:
                time.sleep(0.01)
            remote_rate = counter.chunks / max(counter.last - started, 1e-9)
        ws.close()
        if chunks != count:
            raise RuntimeError(f"the editor got {chunks} of {count} chunks")
        return count / elapsed, remote_rate, counter.chunks if counter else 0, peak / 1024
