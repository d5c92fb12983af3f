"""A small HTTP/1.1 server on gevent sockets, parsed with h11 (sans-I/O).

One request per connection (every response says ``Connection: close``): the
callers are the hub's JSON API, its static page and WebSocket upgrades, none
of which gain from keep-alive. A handler either answers with
``HttpExchange.respond`` or takes the socket over (``detach``) for a
WebSocket; a request that is malformed, too large or too slow gets a real
status line (400, 413, 431, 408), never a bare reset. See docs/hub.md.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import time
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import parse_qs, unquote, urlsplit

import gevent
import h11
import ujson
from gevent import socket as gsocket

log = logging.getLogger(__name__)

MAX_HEAD_BYTES = 16 * 1024
DEFAULT_MAX_BODY = 1024 * 1024
# A connection must send its whole head this soon after it is accepted (the token is in it),
# and its whole request (head and body) within REQUEST_TIMEOUT.
HEAD_TIMEOUT = 5.0
REQUEST_TIMEOUT = 10.0
READ_CHUNK = 64 * 1024
# Concurrent connections per listener that passed the gate (a token or a proof, or a route
# that needs none); beyond it, 503 (a flood cannot take every descriptor).
MAX_CONNECTIONS = 512
# Connections whose head has not passed the gate yet: a pool of their own, so idle sockets
# without a token never take the places of clients that have one. When it is full, its
# oldest is cut for the newcomer: an idle socket is always the one to go, while a client
# that sends its head at once is read before the next connection is accepted
# (docs/security.md, "Idle sockets").
MAX_UNAUTHENTICATED = 128
# accept() errors that mean "not now" (descriptors or buffers exhausted), never "closed".
ACCEPT_TRANSIENT = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM,
                              errno.ECONNABORTED, errno.EPROTO, errno.EPERM})
ACCEPT_BACKOFF_MIN = 0.01
ACCEPT_BACKOFF_MAX = 1.0

REASONS: dict[int, str] = {
    101: "Switching Protocols", 200: "OK", 201: "Created", 204: "No Content",
    304: "Not Modified", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
    404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
    409: "Conflict", 413: "Content Too Large", 426: "Upgrade Required",
    431: "Request Header Fields Too Large", 500: "Internal Server Error",
    502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
}


class HttpError(Exception):
    """A request that must be refused with ``status`` before any handler runs."""

    def __init__(self, status: int, message: str,
                 headers: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or ((("WWW-Authenticate", "Bearer"),) if status == 401 else ())


@dataclass(frozen=True)
class HttpRequest:
    method: str
    target: str
    path: str
    query: Mapping[str, str]
    # Lower-case names; repeated headers joined with ", ".
    headers: Mapping[str, str]
    body: bytes = b""
    # Every byte read from the socket, head included: a WebSocket handshake
    # re-parses them with wsproto (and keeps any bytes that followed).
    raw: bytes = field(default=b"", repr=False)
    # Added to every answer (the proof a proved request's answer carries: tokens.RemoteAuth).
    answer_headers: tuple[tuple[str, str], ...] = ()

    def header(self, name: str, default: str = "") -> str:
        return self.headers.get(name.lower(), default)

    def json(self) -> object:
        """The body as JSON; raises ``HttpError(400)`` when it is not."""
        try:
            return ujson.loads(self.body or b"null")
        except (ValueError, TypeError) as exc:
            raise HttpError(400, f"request body is not JSON: {exc}") from None


def _decode_headers(pairs: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for raw_name, raw_value in pairs:
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def _split_target(target: str) -> tuple[str, dict[str, str]]:
    parts = urlsplit(target)
    query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
    return unquote(parts.path) or "/", query


def _head_length(raw: bytes | bytearray) -> int | None:
    """Bytes up to and including the blank line that ends the head; None before it."""
    end = raw.find(b"\r\n\r\n")
    return None if end < 0 else end + 4


@dataclass(frozen=True)
class Admission:
    """What the gate says of a head it let through."""

    # Added to every answer (the answer's proof of a proved request).
    headers: tuple[tuple[str, str], ...] = ()
    # The head carried the token or a proof (not merely a route that needs neither).
    authenticated: bool = False


# Judges a request on its head alone: raises HttpError to refuse it, or admits it.
Admit = Callable[[HttpRequest], Admission]


def read_request(sock: gsocket.socket, conn: h11.Connection, *, max_body: int = DEFAULT_MAX_BODY,
                 timeout: float = REQUEST_TIMEOUT, head_timeout: float = HEAD_TIMEOUT,
                 admit: Admit | None = None,
                 on_authenticated: Callable[[], None] | None = None) -> HttpRequest | None:
    """Read one request (head, then body); None when the peer closed before one.

    The whole read runs under one deadline, so a client trickling bytes
    cannot hold a greenlet forever. The head is capped at ``MAX_HEAD_BYTES``
    however it arrives (one read or a trickle), and ``admit`` judges it — the
    token, the Host and Origin, whether a body may follow — before a single
    byte of the body is read: a stranger cannot make the server buffer a body.
    The head has a shorter deadline of its own (``head_timeout``). ``on_authenticated``
    runs once the gate found the token or a proof in the head (without ``admit``: once
    the head is read), before any body is read; it may raise HttpError (503: no room).
    """
    head_deadline = gevent.Timeout(min(head_timeout, timeout),
                                   HttpError(408, "request head not received in time"))
    with gevent.Timeout(timeout, HttpError(408, "request not received in time")):
        head_deadline.start()
        try:
            return _read_request(sock, conn, max_body, admit, on_authenticated, head_deadline)
        finally:
            head_deadline.close()


def _read_request(sock: gsocket.socket, conn: h11.Connection, max_body: int,
                  admit: Admit | None, on_authenticated: Callable[[], None] | None,
                  head_deadline: gevent.Timeout) -> HttpRequest | None:
    raw = bytearray()
    body = bytearray()
    head: HttpRequest | None = None
    answer_headers: tuple[tuple[str, str], ...] = ()
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError as exc:
            status = exc.error_status_hint
            if status == 400 and len(raw) > MAX_HEAD_BYTES and head is None:
                status = 431
            raise HttpError(status, f"malformed request: {exc}") from None
        if event is h11.NEED_DATA:
            # Before the head is complete, never read past the cap (h11 alone caps only
            # what is still incomplete: a whole oversized head in one read would pass).
            room = READ_CHUNK if head is not None else MAX_HEAD_BYTES + 1 - len(raw)
            if room <= 0:
                raise HttpError(431, f"request head over {MAX_HEAD_BYTES} bytes")
            try:
                data = sock.recv(min(room, READ_CHUNK))
            except OSError:
                data = b""
            if not data and not raw:
                return None
            raw += data
            conn.receive_data(data)
            continue
        if isinstance(event, h11.Request):
            length = _head_length(raw)
            if length is None or length > MAX_HEAD_BYTES:
                raise HttpError(431, f"request head over {MAX_HEAD_BYTES} bytes")
            head = _request(event, raw)
            declared = head.header("content-length")
            if declared.isdigit() and int(declared) > max_body:
                raise HttpError(413, f"request body over {max_body} bytes")
            head_deadline.cancel()
            admission = admit(head) if admit is not None else Admission(authenticated=True)
            answer_headers = admission.headers
            if admission.authenticated and on_authenticated is not None:
                on_authenticated()
            continue
        if isinstance(event, h11.Data):
            body += event.data
            if len(body) > max_body:
                raise HttpError(413, f"request body over {max_body} bytes")
            continue
        if isinstance(event, h11.EndOfMessage) or event is h11.PAUSED:
            break
        if isinstance(event, h11.ConnectionClosed):
            if head is None:
                return None
            raise HttpError(400, "connection closed mid-request")
    assert head is not None
    declared_digest = head.header("x-zcode-body-sha256")
    if declared_digest and hashlib.sha256(body).hexdigest() != declared_digest.strip().lower():
        raise HttpError(400, "the body does not match its declared digest")
    return HttpRequest(method=head.method, target=head.target, path=head.path, query=head.query,
                       headers=head.headers, body=bytes(body), raw=bytes(raw),
                       answer_headers=answer_headers)


def _request(event: h11.Request, raw: bytes | bytearray) -> HttpRequest:
    target = event.target.decode("latin-1")
    path, query = _split_target(target)
    return HttpRequest(method=event.method.decode("ascii").upper(), target=target, path=path,
                       query=query, headers=_decode_headers(event.headers), raw=bytes(raw))


def has_body(request: HttpRequest) -> bool:
    """The head announces a body (a length above zero, or chunks)."""
    length = request.header("content-length").strip()
    return bool(request.header("transfer-encoding")) or (length not in ("", "0"))


def no_body_allowed(request: HttpRequest) -> None:
    """``GET``/``HEAD`` and WebSocket upgrades carry no body: refused before one is read."""
    if request.method in ("GET", "HEAD") and has_body(request):
        raise HttpError(400, f"a {request.method} request carries no body")


def encode_body(body: bytes | str | object) -> tuple[bytes, str]:
    """Bytes and a content type for a response body (objects become JSON)."""
    if isinstance(body, bytes):
        return body, "application/octet-stream"
    if isinstance(body, str):
        return body.encode("utf-8"), "text/plain; charset=utf-8"
    return ujson.dumps(body, ensure_ascii=False).encode("utf-8"), "application/json"


def build_response(conn: h11.Connection, status: int, body: bytes | str | object = b"", *,
                   content_type: str | None = None,
                   headers: Iterable[tuple[str, str]] = (), head_only: bool = False) -> bytes:
    """Serialise a complete response through h11 (status line with its reason)."""
    payload, default_type = encode_body(body)
    all_headers = [("Content-Type", content_type or default_type),
                   ("Content-Length", str(len(payload))),
                   ("Connection", "close"),
                   ("Cache-Control", "no-store"),
                   ("X-Content-Type-Options", "nosniff"), *headers]
    out = conn.send(h11.Response(status_code=status, headers=all_headers,
                                 reason=REASONS.get(status, "").encode("ascii"))) or b""
    if payload and not head_only:
        out += conn.send(h11.Data(data=payload)) or b""
    out += conn.send(h11.EndOfMessage()) or b""
    return out


class HttpExchange:
    """One request and the means to answer it (once) or take the socket over."""

    def __init__(self, sock: gsocket.socket, conn: h11.Connection, request: HttpRequest,
                 peer: tuple[str, int]) -> None:
        self.sock = sock
        self.conn = conn
        self.request = request
        self.peer = peer
        self.status: int | None = None
        self.detached = False

    def respond(self, status: int, body: bytes | str | object = b"", *,
                content_type: str | None = None,
                headers: Iterable[tuple[str, str]] = ()) -> None:
        if self.status is not None or self.detached:
            raise RuntimeError("this request was already answered")
        self.status = status
        data = build_response(self.conn, status, body, content_type=content_type,
                              headers=[*headers, *self.request.answer_headers],
                              head_only=self.request.method == "HEAD")
        send_quietly(self.sock, data)

    def detach(self) -> gsocket.socket:
        """The socket is the caller's from now on (a WebSocket took it)."""
        self.detached = True
        return self.sock


def send_quietly(sock: gsocket.socket, data: bytes) -> bool:
    try:
        sock.sendall(data)
    except OSError:
        return False
    return True


def refuse_malformed(sock: gsocket.socket, conn: h11.Connection, error: HttpError) -> None:
    """Answer a request that could not be read; falls back to a fresh parser state."""
    try:
        data = build_response(conn, error.status, error.message + "\n", headers=error.headers)
    except h11.LocalProtocolError:
        data = build_response(h11.Connection(h11.SERVER), error.status, error.message + "\n",
                              headers=error.headers)
    send_quietly(sock, data)


Handler = Callable[[HttpExchange], None]


class HttpServer:
    """Accepts connections on a listening socket; one greenlet per connection."""

    def __init__(self, address: tuple[str, int], handler: Handler, *,
                 max_body: int = DEFAULT_MAX_BODY, head_timeout: float = HEAD_TIMEOUT,
                 request_timeout: float = REQUEST_TIMEOUT,
                 name: str = "http", admit: Admit | None = None,
                 max_connections: int = MAX_CONNECTIONS,
                 max_unauthenticated: int = MAX_UNAUTHENTICATED) -> None:
        self.handler = handler
        self.max_body = max_body
        self.head_timeout = head_timeout
        self.request_timeout = request_timeout
        self.name = name
        self.admit = admit
        self.max_connections = max_connections
        self.max_unauthenticated = max_unauthenticated
        self.evicted = 0            # connections without a token cut for a newcomer
        self.accept_errors = 0      # accept() failures survived (EMFILE, ENFILE, ENOBUFS, ...)
        self.listener = gsocket.socket(gsocket.AF_INET6 if ":" in address[0] else gsocket.AF_INET,
                                       gsocket.SOCK_STREAM)
        self.listener.setsockopt(gsocket.SOL_SOCKET, gsocket.SO_REUSEADDR, 1)
        try:
            self.listener.bind(address)
            self.listener.listen(128)
        except OSError:
            self.listener.close()
            raise
        self.address: tuple[str, int] = self.listener.getsockname()[:2]
        self._acceptor: gevent.Greenlet | None = None
        # Past the gate (what max_connections caps), and not yet (when each was accepted;
        # insertion order is age order: what max_unauthenticated caps).
        self._connections: set[gevent.Greenlet] = set()
        self._unauthenticated: dict[gevent.Greenlet, float] = {}

    @property
    def port(self) -> int:
        return self.address[1]

    @property
    def authenticated_connections(self) -> int:
        """Connections past the gate (what ``max_connections`` caps)."""
        return len(self._connections)

    @property
    def unauthenticated_connections(self) -> int:
        """Connections whose head has not passed the gate (what ``max_unauthenticated`` caps)."""
        return len(self._unauthenticated)

    @classmethod
    def first_free(cls, host: str, port: int, handler: Handler, *, tries: int = 100,
                   **options: Any) -> HttpServer:
        """Bind ``port``, or the next free one upwards (``tries`` ports in all)."""
        for candidate in range(port, min(port + tries, 65536)):
            try:
                return cls((host, candidate), handler, **options)
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE:
                    raise
        raise OSError(errno.EADDRINUSE, f"no free port in {port}..{port + tries - 1}")

    def start(self) -> HttpServer:
        self._acceptor = gevent.spawn(self._accept_loop)
        return self

    def close(self) -> None:
        """Stop accepting; connections being answered are cut."""
        if self._acceptor is not None:
            self._acceptor.kill(block=False)
            self._acceptor = None
        try:
            self.listener.close()
        except OSError:
            pass
        gevent.killall([*self._connections, *self._unauthenticated], block=False)

    def _accept_loop(self) -> None:
        backoff = ACCEPT_BACKOFF_MIN
        while True:
            try:
                sock, peer = self.listener.accept()
            except OSError as exc:
                if exc.errno not in ACCEPT_TRANSIENT:
                    return  # the listener was closed (or is unusable): the server is over
                # Out of descriptors or buffers: the pending connection stays in the backlog.
                # Log, wait for connections to finish, go on; never end the loop for it.
                self.accept_errors += 1
                if self.accept_errors == 1 or backoff >= ACCEPT_BACKOFF_MAX:
                    log.warning("%s: accept() failed (%s); backing off %.2f s", self.name,
                                errno.errorcode.get(exc.errno or 0, exc.errno), backoff)
                gevent.sleep(backoff)
                backoff = min(backoff * 2, ACCEPT_BACKOFF_MAX)
                continue
            backoff = ACCEPT_BACKOFF_MIN
            self._make_room()
            sock.setsockopt(gsocket.IPPROTO_TCP, gsocket.TCP_NODELAY, 1)
            greenlet = gevent.Greenlet(self._serve, sock, peer)
            self._unauthenticated[greenlet] = time.monotonic()
            greenlet.link(self._forget)
            greenlet.start()
            # Let it read at once: a client's head is usually there already, and is judged
            # (and leaves the pool) before the next connection of a flood is accepted.
            gevent.sleep(0)

    def _make_room(self) -> None:
        """Room in the pool of connections without a token: cut its oldest if need be."""
        if len(self._unauthenticated) < self.max_unauthenticated:
            return
        oldest = next(iter(self._unauthenticated))
        del self._unauthenticated[oldest]
        self.evicted += 1
        if self.evicted == 1 or self.evicted % 1000 == 0:
            log.warning("%s: %d connections without a token held open; cutting the oldest "
                        "(%d so far)", self.name, self.max_unauthenticated, self.evicted)
        # A status line, never a bare reset (the client may retry, and will get in).
        oldest.kill(HttpError(503, "too many connections without a token; retry later",
                              (("Retry-After", "1"),)), block=False)

    def _forget(self, greenlet: gevent.Greenlet) -> None:
        self._connections.discard(greenlet)
        self._unauthenticated.pop(greenlet, None)

    def _authenticated(self) -> None:
        """The head passed the gate: this connection leaves the pool without a token."""
        current = gevent.getcurrent()
        if self._unauthenticated.pop(current, None) is None:
            return
        if len(self._connections) >= self.max_connections:
            raise HttpError(503, "too many connections; retry later", (("Retry-After", "1"),))
        self._connections.add(current)

    def _serve(self, sock: gsocket.socket, peer: tuple[str, int]) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
        exchange: HttpExchange | None = None
        try:
            try:
                request = read_request(sock, conn, max_body=self.max_body,
                                       timeout=self.request_timeout,
                                       head_timeout=self.head_timeout, admit=self.admit,
                                       on_authenticated=self._authenticated)
            except HttpError as error:
                refuse_malformed(sock, conn, error)
                return
            if request is None:
                return
            exchange = HttpExchange(sock, conn, request, peer)
            try:
                self.handler(exchange)
            except HttpError as error:
                if exchange.status is None and not exchange.detached:
                    exchange.respond(error.status, error.message + "\n", headers=error.headers)
            except Exception:
                # The method only: a target can carry an instance id or a stray token.
                log.exception("%s: handler failed for a %s request", self.name, request.method)
                if exchange.status is None and not exchange.detached:
                    exchange.respond(500, "internal error\n")
            if exchange.status is None and not exchange.detached:
                exchange.respond(500, "no response\n")
        finally:
            if exchange is None or not exchange.detached:
                _close_gracefully(sock)



def _close_gracefully(sock: gsocket.socket) -> None:
    """Half-close, so the peer reads the whole response before the FIN."""
    try:
        sock.shutdown(gsocket.SHUT_WR)
    except OSError:
        pass
    try:
        with gevent.Timeout(1.0, False):
            while sock.recv(READ_CHUNK):
                pass
    except OSError:
        pass
    sock.close()
