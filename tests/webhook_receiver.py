"""A webhook on 127.0.0.1 for the notification tests: records every POST, answers as told.

``statuses`` are the answers to the first posts, in order (then 200); ``hang``
holds every request unanswered until the receiver is closed (a webhook that
never answers). Waits are on a condition with a timeout, never sleeps.

``tls`` (a folder) serves https with a self-signed certificate for 127.0.0.1 made there
(``make_certificate``: the ``openssl`` CLI); ``cert`` is its file, for a client to trust.
``location`` goes with a 3xx status; ``answer_size`` streams an answer of that many bytes and
counts in ``sent`` what left before the client hung up; ``trickle`` sends the answer one byte
per that many seconds.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import socketserver
import ssl
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (and localhost) and its key, in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def serve_tls(server: socketserver.TCPServer, folder: Path) -> Path:
    """Make ``server`` speak TLS with a fresh self-signed certificate (made in ``folder``); its file.

    The suite patches socket but not ssl, as the bridge does (tests/conftest.py): the stdlib's ssl
    cannot wrap a gevent socket, so the server's own TLS is gevent's. The client side stays the
    bridge's code under test (net/outbound.py).
    """
    from gevent import ssl as cooperative

    cert, key = make_certificate(folder)
    context = cooperative.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    # The handshake happens in each request's own thread, on its first read.
    server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    return cert


def serve_local(handler: type[http.server.BaseHTTPRequestHandler],
                tls: Path | None) -> tuple[socketserver.TCPServer, Path | None, str]:
    """A threaded server on a free 127.0.0.1 port (https with ``tls``, a folder for its certificate),
    serving from now on: the server, its certificate's file, and its origin (``https://127.0.0.1:N``)."""
    server = _Server(("127.0.0.1", 0), handler)
    cert = serve_tls(server, tls) if tls is not None else None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, cert, f"{'https' if tls is not None else 'http'}://127.0.0.1:{server.server_address[1]}"


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

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that refused the certificate or hung up: the test looks at what it got


class Receiver:
    def __init__(self, statuses: tuple[int, ...] = (), hang: bool = False, tls: Path | None = None,
                 location: str = "", answer_size: int = 2, trickle: float = 0.0) -> None:
        self.statuses = list(statuses)
        self.hang = hang
        self.sent = 0  # bytes of the answer that left (answer_size)
        self.answered = threading.Event()  # set when a handler is done writing its answer
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
                    if location:
                        self.send_header("Location", location)
                    self.send_header("Content-Length", str(answer_size))
                    self.end_headers()
                    self._answer()
                except OSError:
                    pass  # the bridge gave up on this post (its timeout) or exited: nobody to answer
                finally:
                    receiver.answered.set()

            def _answer(self) -> None:
                if answer_size == 2:
                    self.wfile.write(b"{}")
                    return
                piece = b"x" * (1 if trickle else 1 << 16)
                left = answer_size
                while left > 0:
                    if trickle:
                        time.sleep(trickle)
                    self.wfile.write(piece[:left])
                    self.wfile.flush()
                    receiver.sent += min(len(piece), left)
                    left -= len(piece)

            def log_message(self, *args: Any) -> None:
                pass

        self.server, self.cert, origin = serve_local(Handler, tls)
        self.url = f"{origin}/hook?key=webhook-key"

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
