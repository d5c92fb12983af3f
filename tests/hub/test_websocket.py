"""The WebSocket plumbing over real loopback sockets: handshake, refusals,
framing rules, keepalive, the bounded buffer and close codes.

Peers are this module's own client and the independent ``websocket-client``
library, so neither side only ever talks to itself.
"""

from __future__ import annotations

import http.client
import json
import socket
import struct
from collections.abc import Iterator

import gevent
import gevent.event
import pytest
import websocket as wsclient

from zcode_acp.net import websocket as ws

from zcode_acp.net import websocket_handshake as handshake
from zcode_acp.net.http_server import HttpExchange, HttpServer
from zcode_acp.net.tokens import SUBPROTOCOL, request_token, token_matches, \
    token_subprotocol

TOKEN = "s3cret-token-0123456789"


DEFAULT_OPTIONS = ws.WebSocketOptions()

class EchoServer:
    """Token-checked ``/acp`` endpoint answering every text message with ``echo:``."""

    def __init__(self, options: ws.WebSocketOptions = DEFAULT_OPTIONS,
                 on_overflow: ws.OnOverflow | None = None, echo: bool = True) -> None:
        self.options = options
        self.on_overflow = on_overflow
        self.echo = echo
        self.connections: list[ws.WebSocket] = []
        self.closed: list[ws.CloseInfo] = []
        self.accepted = gevent.event.Event()
        self.closed_event = gevent.event.Event()
        self.server = HttpServer(("127.0.0.1", 0), self.handle).start()
        self.url = f"ws://127.0.0.1:{self.server.port}/acp"

    def handle(self, exchange: HttpExchange) -> None:
        request = exchange.request
        if request.path != "/acp":
            exchange.respond(404, "no such endpoint\n")
            return
        if not token_matches(request_token(request.headers), TOKEN):
            exchange.respond(401, "unauthorized: missing or wrong token\n")
            return
        problem = handshake.handshake_problem(request.headers)
        if problem:
            exchange.respond(400, problem + "\n")
            return
        conn = handshake.accept(exchange.detach(), request.raw, self.options, name="test-server",
                         on_overflow=self.on_overflow, subprotocol=SUBPROTOCOL)
        self.connections.append(conn)

        def on_close(info: ws.CloseInfo) -> None:
            self.closed.append(info)
            self.closed_event.set()

        conn.start(on_message=(lambda m: conn.send_text("echo:" + m)) if self.echo else None,
                   on_close=on_close)
        self.accepted.set()

    def close(self) -> None:
        self.server.close()
        for conn in self.connections:
            conn.abort()


@pytest.fixture
def server() -> Iterator[EchoServer]:
    s = EchoServer()
    yield s
    s.close()


def auth() -> list[tuple[str, str]]:
    return [("Authorization", f"Bearer {TOKEN}")]


def test_text_round_trip_in_order(server: EchoServer) -> None:
    client = handshake.connect(server.url, auth()).start()
    messages = [json.dumps({"jsonrpc": "2.0", "id": i, "text": "ünïcödé ✓" * i})
                for i in range(200)]
    for message in messages:
        assert client.send_text(message)
    assert [client.receive(5) for _ in messages] == ["echo:" + m for m in messages]
    client.close()
    assert client.wait_closed(5) == ws.CloseInfo(1000, "", by_peer=False)
    assert server.closed_event.wait(5)
    assert server.closed[0].code == 1000 and server.closed[0].by_peer


def test_independent_client_library_and_subprotocol_token(server: EchoServer) -> None:
    peer = wsclient.create_connection(server.url, timeout=5,
                                      subprotocols=[SUBPROTOCOL, token_subprotocol(TOKEN)])
    assert peer.subprotocol == SUBPROTOCOL
    peer.send("hello")
    assert peer.recv() == "echo:hello"
    peer.close(status=1001)
    assert server.closed_event.wait(5)
    assert server.closed[0].code == 1001


def test_fragmented_message_is_one_message(server: EchoServer) -> None:
    peer = wsclient.create_connection(server.url, header=[f"Authorization: Bearer {TOKEN}"],
                                      timeout=5)
    peer.send_frame(wsclient.ABNF.create_frame("part one, ", wsclient.ABNF.OPCODE_TEXT, fin=0))
    peer.send_frame(wsclient.ABNF.create_frame("part two", wsclient.ABNF.OPCODE_CONT, fin=1))
    assert peer.recv() == "echo:part one, part two"
    peer.close()


@pytest.mark.parametrize("path,headers,status,reason", [
    ("/acp", [], 401, "Unauthorized"),
    ("/acp", [("Authorization", "Bearer wrong")], 401, "Unauthorized"),
    ("/other", auth(), 404, "Not Found"),
])
def test_refusals_are_http_responses(server: EchoServer, path: str,
                                     headers: list[tuple[str, str]], status: int,
                                     reason: str) -> None:
    with pytest.raises(handshake.HandshakeRefused) as refused:
        handshake.connect(f"ws://127.0.0.1:{server.server.port}{path}", headers)
    assert refused.value.status == status
    assert refused.value.body  # a body that says why
    # The same refusal as seen by a plain HTTP client: a real status line.
    conn = http.client.HTTPConnection("127.0.0.1", server.server.port, timeout=5)
    conn.request("GET", path, headers=dict(headers) | {
        "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="})
    response = conn.getresponse()
    assert (response.status, response.reason) == (status, reason)
    assert response.getheader("Connection") == "close"


def test_malformed_upgrade_gets_400(server: EchoServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.server.port, timeout=5)
    conn.request("GET", "/acp", headers={"Authorization": f"Bearer {TOKEN}",
                                         "Connection": "Upgrade", "Upgrade": "websocket"})
    response = conn.getresponse()
    assert response.status == 400
    assert b"Sec-WebSocket-Version" in response.read()


def test_garbage_request_gets_400_status_line(server: EchoServer) -> None:
    with socket.create_connection(("127.0.0.1", server.server.port), timeout=5) as sock:
        sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n")


def test_binary_frame_is_refused_with_1003(server: EchoServer) -> None:
    peer = wsclient.create_connection(server.url, header=[f"Authorization: Bearer {TOKEN}"],
                                      timeout=5)
    peer.send_binary(b"\x00\x01")
    opcode, frame = peer.recv_data_frame(control_frame=True)
    assert opcode == wsclient.ABNF.OPCODE_CLOSE
    assert struct.unpack("!H", frame.data[:2])[0] == 1003
    peer.close()
    assert server.closed_event.wait(5)
    assert server.closed[0].code == 1003 and not server.closed[0].by_peer


def test_oversized_message_is_refused_with_1009() -> None:
    server = EchoServer(ws.WebSocketOptions(max_message_bytes=1000))
    try:
        client = handshake.connect(server.url, auth()).start()
        assert client.send_text("x" * 1000)
        assert client.receive(5) == "echo:" + "x" * 1000  # exactly the cap passes
        client.send_text("y" * 1001)
        info = client.wait_closed(5)
        assert info is not None and info.code == 1009 and info.by_peer
    finally:
        server.close()


def test_server_close_code_reaches_client(server: EchoServer) -> None:
    client = handshake.connect(server.url, auth()).start()
    assert server.accepted.wait(5)
    server.connections[0].close(ws.CloseCode.POLICY_VIOLATION, "go away")
    assert client.wait_closed(5) == ws.CloseInfo(1008, "go away", by_peer=True)
    assert client.receive(1) is None
    assert not client.send_text("too late")


def test_peer_that_stops_answering_pings_is_dropped() -> None:
    server = EchoServer(ws.WebSocketOptions(ping_interval=0.1))
    try:
        silent = handshake.connect(server.url, auth())  # never started: reads nothing, never pongs
        assert server.closed_event.wait(5)
        assert server.closed[0].code == 1006 and server.closed[0].reason == "missed pong"
        silent.abort()
    finally:
        server.close()


def test_responsive_peer_survives_keepalive() -> None:
    server = EchoServer(ws.WebSocketOptions(ping_interval=0.05))
    try:
        client = handshake.connect(server.url, auth()).start()
        assert server.accepted.wait(5)
        conn = server.connections[0]
        with gevent.Timeout(5):
            while conn.pongs_received < 4:
                gevent.sleep(0.05)
        assert conn.is_open
        assert client.send_text("still here") and client.receive(5) == "echo:still here"
        client.close()
    finally:
        server.close()


def test_stalled_reader_overflows_the_bounded_buffer() -> None:
    overflowed = gevent.event.Event()
    high_water: list[int] = []

    def on_overflow(conn: ws.WebSocket) -> None:
        high_water.append(conn.buffered_bytes)
        overflowed.set()
        conn.close(ws.CloseCode.POLICY_VIOLATION, "too slow", discard_pending=True)

    limit = 256 * 1024
    server = EchoServer(ws.WebSocketOptions(max_buffer_bytes=limit, close_timeout=0.3),
                        on_overflow=on_overflow, echo=False)
    try:
        stalled = handshake.connect(server.url, auth())  # never reads
        stalled.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        assert server.accepted.wait(5)
        conn = server.connections[0]
        chunk = "z" * 32 * 1024
        sent = 0
        with gevent.Timeout(20):
            while conn.send_text(chunk):
                sent += 1
                gevent.sleep(0)  # let the writer push into the socket
        assert overflowed.wait(5)
        assert high_water[0] <= limit
        # The stalled peer never completes the close handshake: cut after close_timeout.
        assert server.closed_event.wait(5)
        assert server.closed[0].code == 1008 and not server.closed[0].by_peer
        assert sent * len(chunk) < 200 * 1024 * 1024  # the kernel buffers, not our memory
        stalled.abort()
    finally:
        server.close()


def test_default_overflow_closes_with_1013() -> None:
    server = EchoServer(ws.WebSocketOptions(max_buffer_bytes=64 * 1024, close_timeout=0.3),
                        echo=False)
    try:
        stalled = handshake.connect(server.url, auth())
        stalled.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        assert server.accepted.wait(5)
        conn = server.connections[0]
        with gevent.Timeout(20):
            while conn.send_text("q" * 16 * 1024):
                gevent.sleep(0)
        assert conn.overflowed
        assert server.closed_event.wait(5)
        assert server.closed[0].code == 1013
        stalled.abort()
    finally:
        server.close()


def test_connect_to_nothing_raises_oserror() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    with pytest.raises(OSError):
        handshake.connect(f"ws://127.0.0.1:{port}/acp")


def test_token_helpers() -> None:
    assert token_matches("abc", "abc")
    assert not token_matches("abc", "abd")
    assert not token_matches("", "")
    assert not token_matches(None, "abc")
    assert not token_matches("abc", None)
    assert not token_matches("a" * 1000, "abc")
    assert request_token({"authorization": "Bearer  xyz "}) == "xyz"
    assert request_token({"authorization": "bearer xyz"}) == "xyz"
    assert request_token({"authorization": "Basic xyz"}) is None
    odd = "tok/en+with=odd ü chars"
    offered = f"{SUBPROTOCOL}, {token_subprotocol(odd)}"
    assert request_token({"sec-websocket-protocol": offered}) == odd
    assert all(c.isalnum() or c in "-._" for c in token_subprotocol(odd))  # a valid HTTP token
    assert request_token({"sec-websocket-protocol": "zcode-acp.token.!!"}) is None
    assert request_token({}) is None


def test_first_free_port_moves_upwards() -> None:
    taken = HttpServer(("127.0.0.1", 0), lambda exchange: exchange.respond(200, "a"))
    try:
        second = HttpServer.first_free("127.0.0.1", taken.port, lambda e: e.respond(200, "b"),
                                       tries=5)
        assert taken.port < second.port <= taken.port + 4
        second.close()
        with pytest.raises(OSError):
            HttpServer.first_free("127.0.0.1", taken.port, lambda e: None, tries=1)
    finally:
        taken.close()
