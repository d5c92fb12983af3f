"""A fake GLM Coding Plan quota endpoint on 127.0.0.1 (tests of protocol/quota.py's readers).

It answers ``GET /api/monitor/usage/quota/limit`` with ``body`` (a dict is sent as JSON) and
``status``; ``hang`` holds every request unanswered until closed; ``answer_size`` streams that many
bytes instead; ``location`` goes with a 3xx. ``tls`` (a folder) serves https with a self-signed
certificate (tests/webhook_receiver.serve_local). ``requests`` records each request's path
and headers. The shapes tests feed it are the provider's real answers as public monitors of the
endpoint recorded them (tests/fixtures/quota/).
"""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path
from typing import Any

from tests.webhook_receiver import serve_local


class QuotaServer:
    def __init__(self, body: Any = None, status: int = 200, hang: bool = False, tls: Path | None = None,
                 answer_size: int = 0, location: str = "") -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.release = threading.Event()
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append((self.path, dict(self.headers.items())))
                if hang:
                    server.release.wait(60)
                try:
                    self.send_response(status)
                    if location:
                        self.send_header("Location", location)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(answer_size or len(payload)))
                    self.end_headers()
                    if answer_size:
                        for _ in range(answer_size // 65536 + 1):
                            self.wfile.write(b" " * 65536)
                    else:
                        self.wfile.write(payload)
                except OSError:
                    pass  # the client gave up (its limit or deadline)

            def log_message(self, *args: Any) -> None:
                pass

        self.server, self.cert, origin = serve_local(Handler, tls)
        self.url = f"{origin}/api/monitor/usage/quota/limit"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
