"""A webhook on 127.0.0.1 for the notification tests: records every POST, answers as told.

``statuses`` are the answers to the first posts, in order (then 200); ``hang``
holds every request unanswered until the receiver is closed (a webhook that
never answers). Waits are on a condition with a timeout, never sleeps.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import socketserver
import threading
from dataclasses import dataclass
from typing import Any


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def everything(self) -> str:
        """All of it as text, to look for what must never be there."""
        return self.path + json.dumps(self.headers) + self.body.decode("utf-8", "replace")


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def server_bind(self) -> None:
        # No getfqdn(): a DNS call would start gevent's resolver pool in the test process.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "localhost", self.server_address[1]


class Receiver:
    def __init__(self, statuses: tuple[int, ...] = (), hang: bool = False) -> None:
        self.statuses = list(statuses)
        self.hang = hang
        self.posts: list[Received] = []
        self.arrived = 0  # requests that reached the handler (a hung one is not in ``posts`` yet)
        self.changed = threading.Condition()
        self.release = threading.Event()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.changed:
                    receiver.arrived += 1
                    receiver.changed.notify_all()
                if receiver.hang:
                    receiver.release.wait(60)
                with receiver.changed:
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                    receiver.posts.append(Received(self.path, dict(self.headers.items()), body))
                    receiver.changed.notify_all()
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"{}")
                except OSError:
                    pass  # the bridge gave up on this post (its timeout) or exited: nobody to answer

            def log_message(self, *args: Any) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook?key=webhook-key"

    def wait_for(self, count: int, timeout: float = 15.0, arrived: bool = False) -> list[Received]:
        with self.changed:
            self.changed.wait_for(lambda: (self.arrived if arrived else len(self.posts)) >= count, timeout)
            return list(self.posts)

    async def until(self, count: int, timeout: float = 15.0, arrived: bool = False) -> list[Received]:
        """``wait_for`` from an asyncio test: polls, since the server's threads cannot wake the loop."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while (self.arrived if arrived else len(self.posts)) < count and loop.time() < deadline:
            await asyncio.sleep(0.02)
        return list(self.posts)

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
