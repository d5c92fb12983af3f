"""Idle sockets without a token (issue 29): about 530 held open took remote access down (503 for
every phone request, bridges dropped from the listing; 502 through a bridge's endpoint). Sockets
without a token now have a pool of their own and a short deadline for their head, so a client
with the token always gets in. Each test holds a bounded number of sockets for a bounded time."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gevent.event
import pytest
import websocket as wsclient
from gevent import socket as gsocket

from tests.hub.harness import TOKEN, HubProcess, http, wait_until
from zcode_acp.actors.messages import AttachClient
from zcode_acp.actors.transport.remote import MAX_MESSAGE, RemoteEndpoint
from zcode_acp.hub.ownership import port_proves_owner
from zcode_acp.net.http_server import Admission, HttpError, HttpRequest, \
    HttpServer

IDLE = 600  # over the pool and over the old shared cap (512): a few hundred on loopback


def hold_idle(port: int, count: int) -> list[socket.socket]:
    """``count`` connections that never send a byte (the attack)."""
    return [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(count)]


def close_all(sockets: list[socket.socket]) -> None:
    for sock in sockets:
        sock.close()


def answer_of(port: int, data: bytes, timeout: float = 5.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def token_gate(request: HttpRequest) -> Admission:
    if request.header("authorization") != f"Bearer {TOKEN}":
        raise HttpError(401, "unauthorized")
    return Admission(authenticated=True)


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[HubProcess]:
    process = HubProcess(tmp_path)
    yield process
    process.stop()


class NoSupervisor:
    """Where the endpoint hands an accepted client: started, and what it sends is kept."""

    def __init__(self) -> None:
        self.received: list[Any] = []

    def tell(self, message: Any) -> None:
        if isinstance(message, AttachClient):
            message.transport.start(self)
        else:
            self.received.append(message)


def test_idle_sockets_over_the_pool_never_keep_a_client_with_the_token_out() -> None:
    server = HttpServer(("127.0.0.1", 0), lambda e: e.respond(200, "ok"), admit=token_gate,
                        max_unauthenticated=8, max_connections=8).start()
    idle = hold_idle(server.port, 40)
    try:
        wait_until(lambda: server.unauthenticated_connections == 8, what="the pool to fill")
        answer = answer_of(server.port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                        b"Authorization: Bearer " + TOKEN.encode() + b"\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 200 "), answer
        assert server.unauthenticated_connections <= 8  # the pool stays bounded
    finally:
        close_all(idle)
        server.close()


def test_a_head_that_does_not_come_is_cut_at_its_own_short_deadline() -> None:
    server = HttpServer(("127.0.0.1", 0), lambda e: e.respond(200, "ok"), admit=token_gate,
                        head_timeout=0.2, request_timeout=30.0).start()
    try:
        with gsocket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\n")  # and nothing more: the head never ends
            answer = sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 408 "), answer
    finally:
        server.close()


def test_the_connection_cap_counts_only_clients_past_the_gate() -> None:
    # Three clients with the token held in their handler fill the cap: the fourth gets 503,
    # however many idle sockets there are (they never count against it).
    release = gevent.event.Event()
    server = HttpServer(("127.0.0.1", 0), lambda e: (release.wait(10), e.respond(200, "ok")),
                        admit=token_gate, max_connections=3).start()
    head = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN.encode() + b"\r\n\r\n"
    held = hold_idle(server.port, 3)
    try:
        for sock in held:
            sock.sendall(head)
        wait_until(lambda: server.authenticated_connections == 3, what="three held clients")
        assert answer_of(server.port, head).startswith(b"HTTP/1.1 503 ")
        release.set()
        wait_until(lambda: server.authenticated_connections == 0, what="the held ones to finish")
        assert answer_of(server.port, head).startswith(b"HTTP/1.1 200 ")
    finally:
        close_all(held)
        server.close()


def test_the_hub_answers_with_the_token_while_hundreds_of_idle_sockets_are_held(
        hub: HubProcess) -> None:
    idle = hold_idle(hub.port, IDLE)
    try:
        status, _, body = http("GET", f"{hub.url}/api/instances")
        assert status == 200, body
        # A bridge's heartbeat gets in too (without it, the bridge drops out of the listing).
        status, _, body = http("POST", f"{hub.url}/api/register",
                               {"id": "beat", "port": 9, "pid": 1, "key": "k" * 32})
        assert status == 200, body
    finally:
        close_all(idle)


def test_a_bridges_endpoint_answers_with_the_token_while_hundreds_of_idle_sockets_are_held() -> None:
    supervisor = NoSupervisor()
    endpoint = RemoteEndpoint(supervisor, TOKEN, 0).start()
    endpoint.instance_id = "bridge-under-flood"
    idle = hold_idle(endpoint.port, IDLE)
    try:
        # The hub's check before it dials the bridge (a 502 for phones when it fails) ...
        assert port_proves_owner(endpoint.port, TOKEN, endpoint.instance_id)
        # ... and a client's upgrade with the token.
        client = wsclient.create_connection(f"ws://127.0.0.1:{endpoint.port}/acp", timeout=5,
                                            header=[f"Authorization: Bearer {TOKEN}"])
        client.close()
    finally:
        close_all(idle)
        endpoint.close()


def test_a_remote_clients_message_is_bounded_well_below_the_editors_line() -> None:
    supervisor = NoSupervisor()
    endpoint = RemoteEndpoint(supervisor, TOKEN, 0).start()
    try:
        client = wsclient.create_connection(f"ws://127.0.0.1:{endpoint.port}/acp", timeout=10,
                                            header=[f"Authorization: Bearer {TOKEN}"])
        try:
            # 17 MiB in fragments (a third of the editor's 50 MiB line): closed with 1009
            # once the bound is passed, never assembled whole.
            opcode, data = _send_fragmented(client, 17 * 1024 * 1024)
            assert opcode == wsclient.ABNF.OPCODE_CLOSE and int.from_bytes(data[:2], "big") == 1009
        finally:
            client.close()
    finally:
        endpoint.close()
    assert MAX_MESSAGE < 17 * 1024 * 1024


def _send_fragmented(client: Any, size: int) -> tuple[int, bytes]:
    chunk = b"y" * (1024 * 1024)
    sent = 0
    first = True
    try:
        while sent < size:
            part = chunk[:min(len(chunk), size - sent)]
            sent += len(part)
            opcode = wsclient.ABNF.OPCODE_TEXT if first else wsclient.ABNF.OPCODE_CONT
            frame = wsclient.ABNF.create_frame(part, opcode, fin=0)
            client.send_frame(frame)
            first = False
    except (OSError, wsclient.WebSocketException):
        pass  # closed under us: the close frame says why
    frame = client.recv_frame()
    return frame.opcode, frame.data
