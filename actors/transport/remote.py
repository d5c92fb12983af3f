"""Remote ACP clients on one bridge: the loopback WebSocket endpoint and its transport.

Opt-in (``ZCODE_ACP_REMOTE``) and token-checked even on loopback: other local
users must not attach (docs/remote.md). ``RemoteEndpoint`` listens on
127.0.0.1 at the configured port or the next free one upwards, answers
refusals with real status lines (404 other paths, 401 token, 400 malformed
upgrade), and hands each accepted socket to the Supervisor as a
``WebSocketTransport`` — a second implementation of the transport seam, so a
remote client is a ClientConnection like the editor's.

Its back-pressure policy differs from stdio's on purpose: a remote client
that reads slowly must never slow the editor, so its messages queue in a
bounded buffer (8 MiB) and a client that overflows it is disconnected with
1013 (it may reconnect and ``session/load`` to catch up).
"""

from __future__ import annotations

import itertools
import logging
from typing import Any

from zcode_acp.actors.base import safe_tell
from zcode_acp.actors.messages import AttachClient, InboundClosed, InboundFrames
from zcode_acp.net import websocket as ws
from zcode_acp.net import websocket_handshake as handshake
from zcode_acp.net import proofs
from zcode_acp.net.http_server import HttpExchange, HttpServer
from zcode_acp.net.origin_policy import HostPolicy
from zcode_acp.net.tokens import SUBPROTOCOL, RemoteAuth, offers_subprotocol

log = logging.getLogger(__name__)

PATH = "/acp"
BUFFER_BOUND = 8 * 1024 * 1024  # bytes queued for one remote client before it is dropped
# One remote client's message, assembled from its fragments, before it is closed with 1009:
# a phone's photo in base64 fits, and the engine takes no bigger frame (16 MiB, docs/v4.md);
# the editor's stdio line keeps its own 50 MiB bound (protocol/framing.py).
MAX_MESSAGE = 16 * 1024 * 1024


class WebSocketTransport:
    """One remote client: one ACP message per text frame."""

    def __init__(self, socket: ws.WebSocket, name: str) -> None:
        self.socket = socket
        self.name = name

    def start(self, owner: Any) -> None:
        def received(text: str) -> None:
            safe_tell(owner, InboundFrames([text.encode("utf-8", "surrogatepass")]))

        def closed(info: ws.CloseInfo) -> None:
            safe_tell(owner, InboundClosed(f"websocket closed ({info.code} {info.reason})".strip()))

        self.socket.start(on_message=received, on_close=closed)

    def send(self, data: bytes) -> None:
        """NDJSON lines from the connection → one text message each (never blocks)."""
        for line in data.split(b"\n"):
            if line and not self.socket.send_text(line.decode("utf-8")):
                return  # closed, or dropped for overflowing its buffer: the close tells the owner

    def drain(self, timeout: float) -> None:
        """Nothing to wait for: a close sends what is queued before its close frame."""

    def close(self, reason: str = "") -> None:
        if self.socket.is_open:
            self.socket.close(ws.CloseCode.GOING_AWAY, reason[:100] or "the bridge is closing")


def _overflowed(socket: ws.WebSocket) -> None:
    log.warning("remote client %s reads too slowly (%d bytes waiting); disconnecting it with 1013",
                socket.name, socket.buffered_bytes)
    socket.close(ws.CloseCode.TRY_AGAIN_LATER, "send buffer exceeded; reconnect and load the session",
                 discard_pending=True)


class RemoteEndpoint:
    def __init__(self, supervisor: Any, token: str, port: int, host: str = "127.0.0.1",
                 options: ws.WebSocketOptions | None = None,
                 public_hosts: tuple[str, ...] = ()) -> None:
        self.supervisor = supervisor
        self.token = token
        self.options = options or ws.WebSocketOptions(max_message_bytes=MAX_MESSAGE,
                                                      max_buffer_bytes=BUFFER_BOUND,
                                                      frames_per_second=ws.CLIENT_FRAMES_PER_SECOND,
                                                      bytes_per_second=ws.CLIENT_BYTES_PER_SECOND)
        # Every route needs the token or a proof, checked on the head (docs/security.md).
        self.auth = RemoteAuth(token, HostPolicy.allowing(public_hosts),
                               bodiless_paths=frozenset({PATH, proofs.OWNER_PATH}))
        self.server = HttpServer.first_free(host, port, self._handle, name="acp-remote",
                                            admit=self.auth.admit)
        self.auth.bound_to(self.server.port)
        # The id this bridge registers under (set by remote access): it proves the port is its.
        self.instance_id = ""
        self._serials = itertools.count(1)
        self.closing = False

    @property
    def port(self) -> int:
        return self.server.port

    def start(self) -> RemoteEndpoint:
        self.server.start()
        log.info("remote ACP clients: ws://%s:%d%s (token required)", *self.server.address, PATH)
        return self

    def close(self) -> None:
        self.closing = True
        self.server.close()

    def _handle(self, exchange: HttpExchange) -> None:
        request = exchange.request
        if request.path == proofs.OWNER_PATH and request.method == "GET":
            self._prove_ownership(exchange)
            return
        if request.path != PATH:
            exchange.respond(404, f"not found: only {PATH} is served here\n")
            return
        problem = handshake.handshake_problem(request.headers)
        if problem is not None or request.method != "GET":
            exchange.respond(400, (problem or "a WebSocket upgrade is a GET") + "\n")
            return
        if self.closing:
            exchange.respond(503, "the bridge is closing\n")
            return
        name = f"ws-{next(self._serials)}"
        try:
            socket = handshake.accept(exchange.detach(), request.raw, self.options, name=name, on_overflow=_overflowed,
                               extra_headers=request.answer_headers,
                               subprotocol=SUBPROTOCOL if offers_subprotocol(request.headers) else None)
        except (handshake.HandshakeError, OSError) as exc:
            log.info("remote handshake failed: %s", exc)
            return
        log.info("remote client %s attached from %s:%d", name, *exchange.peer[:2])
        safe_tell(self.supervisor, AttachClient(WebSocketTransport(socket, name), False))

    def _prove_ownership(self, exchange: HttpExchange) -> None:
        """The hub's check that this port is the registered bridge's: a proof over its nonce."""
        nonce = exchange.request.header(proofs.CHALLENGE_HEADER.lower()).strip()
        if not self.instance_id or not 16 <= len(nonce) <= 128:
            exchange.respond(400, "a challenge nonce is required\n")
            return
        exchange.respond(200, {"instance": self.instance_id,
                               "proof": proofs.owner_proof(self.token, nonce, self.instance_id)})
