"""The WebSocket opening handshake, both ends: ``accept`` answers an upgrade request read by
``http_server`` (refusals are plain HTTP responses, sent there), ``connect`` dials
``ws://host:port/path`` as a client (with the token proved, not sent, when asked: proofs.py).
Either gives an open ``WebSocket`` (websocket.py)."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from gevent import socket as gsocket
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, RejectConnection, RejectData, Request
from wsproto.utilities import RemoteProtocolError

from zcode_acp.net import proofs
from zcode_acp.net.websocket import READ_CHUNK, OnOverflow, WebSocket, WebSocketOptions


DEFAULTS = WebSocketOptions()  # frozen: one shared default is safe


class HandshakeError(Exception):
    """The opening handshake did not produce a WebSocket."""


class HandshakeRefused(HandshakeError):
    """The server answered the upgrade with an HTTP status other than 101."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(f"upgrade refused: HTTP {status}: {body[:200]!r}")
        self.status = status
        self.body = body


def handshake_problem(headers: Mapping[str, str]) -> str | None:
    """Why a request's headers are not a valid WebSocket upgrade (None when they are).

    Lets a server refuse with 400 before doing work (such as dialing a bridge)
    for a request wsproto would reject anyway. ``headers``: lower-case names.
    """
    get = headers.get
    connection = {t.strip().lower() for t in get("connection", "").split(",")}
    if "upgrade" not in connection or get("upgrade", "").lower() != "websocket":
        return "not a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket)"
    if get("sec-websocket-version", "") != "13":
        return "Sec-WebSocket-Version must be 13"
    key = get("sec-websocket-key", "")
    try:
        if len(base64.b64decode(key, validate=True)) != 16:
            return "Sec-WebSocket-Key must be 16 bytes, base64"
    except ValueError:
        return "Sec-WebSocket-Key must be 16 bytes, base64"
    return None


def accept(sock: gsocket.socket, raw_request: bytes, options: WebSocketOptions = DEFAULTS,
           *, name: str = "websocket", on_overflow: OnOverflow | None = None,
           extra_headers: Iterable[tuple[str, str]] = (),
           subprotocol: str | None = None) -> WebSocket:
    """Answer ``101`` to the upgrade request in ``raw_request`` (every byte read so far).

    Raises ``HandshakeError`` when wsproto rejects the request; the caller
    should have refused it with 400 after ``handshake_problem`` already.
    """
    protocol = WSConnection(ConnectionType.SERVER)
    try:
        protocol.receive_data(raw_request)
        request = next((e for e in protocol.events() if isinstance(e, Request)), None)
    except RemoteProtocolError as exc:
        raise HandshakeError(str(exc)) from None
    if request is None:
        raise HandshakeError("incomplete upgrade request")
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in extra_headers]
    chosen = subprotocol if subprotocol in request.subprotocols else None
    sock.sendall(protocol.send(AcceptConnection(extra_headers=headers, subprotocol=chosen)))
    return WebSocket(sock, protocol, options, name=name, on_overflow=on_overflow)


# --- client side ------------------------------------------------------------------------


def connect(url: str, headers: Iterable[tuple[str, str]] = (),
            options: WebSocketOptions = DEFAULTS, *, name: str = "websocket-client",
            on_overflow: OnOverflow | None = None, prove_with: str | None = None) -> WebSocket:
    """Dial ``ws://host:port/path?query``; the returned WebSocket still needs ``start``.

    ``prove_with``: the token, to prove instead of send (``proofs.py``); the 101
    must then prove it back, or the socket is closed before a frame is sent.
    Raises ``HandshakeRefused`` (with the status and body) for a non-101 answer,
    ``HandshakeError`` for anything else that is not a WebSocket (an unproved
    answer included), and ``OSError`` when nothing listens.
    """
    parts = urlsplit(url)
    if parts.scheme != "ws" or not parts.hostname:
        raise ValueError(f"only ws:// URLs are supported: {url!r}")
    port = parts.port or 80
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    sock = gsocket.create_connection((parts.hostname, port), timeout=options.connect_timeout)
    try:
        sock.setsockopt(gsocket.IPPROTO_TCP, gsocket.TCP_NODELAY, 1)
        protocol = WSConnection(ConnectionType.CLIENT)
        host = parts.hostname if port == 80 else f"{parts.hostname}:{port}"
        headers = list(headers)
        nonce = ""
        if prove_with is not None:
            proof_headers, nonce = proofs.request_headers(prove_with, "GET", target, host)
            headers += proof_headers
        extra = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
        sock.sendall(protocol.send(Request(host=host, target=target, extra_headers=extra)))
        status: int | None = None
        body = bytearray()
        while True:
            data = sock.recv(READ_CHUNK)
            try:
                protocol.receive_data(data or None)
                # Lazily: frames that came with the 101 stay queued for the reader.
                for event in protocol.events():
                    if isinstance(event, AcceptConnection):
                        if prove_with is not None:
                            given = dict(event.extra_headers).get(
                                proofs.ANSWER_HEADER.lower().encode("latin-1"), b"")
                            if not proofs.answer_holds(prove_with, nonce, given.decode("latin-1")):
                                raise HandshakeError("the server did not prove it knows the token")
                        sock.settimeout(None)
                        return WebSocket(sock, protocol, options, name=name,
                                         on_overflow=on_overflow)
                    if isinstance(event, RejectConnection):
                        status = event.status_code
                        if not event.has_body:
                            raise HandshakeRefused(status, b"")
                    elif isinstance(event, RejectData):
                        body += event.data
                        if event.body_finished:
                            raise HandshakeRefused(status or 0, bytes(body))
            except RemoteProtocolError as exc:
                raise HandshakeError(f"bad handshake answer: {exc}") from None
            if not data:
                if status is not None:
                    raise HandshakeRefused(status, bytes(body))
                raise HandshakeError("connection closed during the handshake")
    except BaseException:
        sock.close()
        raise
