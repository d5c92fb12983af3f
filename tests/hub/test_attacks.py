"""The attacks issue 20's security review ran against the hub, each reproduced (bounded in count
and time) against the real hub process or its HTTP server. docs/security.md maps each to its threat."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gevent
import pytest
import websocket as wsclient
from gevent import socket as gsocket

from tests.hub.harness import TOKEN, FakeBridge, HubProcess, Process, base_env, get_json, http
from zcode_acp.net.http_server import MAX_UNAUTHENTICATED
from zcode_acp.net.hub_client import BridgeIdentity, HubClient, Outcome
from zcode_acp.net.tokens import SUBPROTOCOL, token_subprotocol

MARK = "SeCrEtMaRk"  # what must never show in a log line (a target, a query, a token)


def request(port: int, data: bytes, *, timeout: float = 5.0) -> tuple[int, bytes]:
    """Send raw bytes; (status, whole answer) once the hub closes (the socket timeout bounds it)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1]), answer


def head(port: int, method: str, target: str, *headers: str, host: str | None = None) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}", *headers, "", ""]
    return "\r\n".join(lines).encode()


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[HubProcess]:
    process = HubProcess(tmp_path, ZCODE_ACP_PUBLIC_HOST="agent.example.org")
    yield process
    process.stop()


@pytest.fixture
def bridges() -> Iterator[list[Process]]:
    started: list[Process] = []
    yield started
    for process in started:
        process.stop()


# --- running out of descriptors, and the connection cap ------------------------------------


def test_accept_survives_running_out_of_descriptors(tmp_path: Path) -> None:
    # A hub limited to 64 descriptors, and 100 idle connections: accept() fails with EMFILE.
    script = ("import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)); "
              "sys.argv = ['zcode_acp', 'hub', '--port', '0']; runpy.run_module('zcode_acp', run_name='__main__')")
    hub = Process([sys.executable, "-c", script], base_env(tmp_path))
    try:
        port = int(hub.wait_line(r"listening on http://[^:]+:(\d+)").group(1))
        idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(100)]
        hub.wait_line(r"accept\(\) failed \(EMFILE\)")
        for sock in idle:
            sock.close()
        # Descriptors come back as those connections end: the hub answers again.
        status, answer = request(port, head(port, "GET", "/api/health"), timeout=10)
        assert status == 200 and b'"ok":true' in answer
        assert hub.proc.poll() is None
    finally:
        hub.stop()


# The connection caps (idle sockets without a token have a pool of their own, and never
# take the places of clients with one): tests/hub/test_idle_sockets.py.


# --- the head: token first, no body where none belongs, 16 KiB however it arrives --------


def test_the_token_is_checked_on_the_head_before_any_body_is_read(hub: HubProcess) -> None:
    # A megabyte announced, none sent: the answer comes at once, not after the 10 s read deadline.
    for token in ("", "Authorization: Bearer wrong-token-0123456789"):
        data = head(hub.port, "POST", "/api/register", "Content-Type: application/json",
                    "Content-Length: 1000000", *([token] if token else []))
        status, answer = request(hub.port, data, timeout=3)
        assert status == 401 and b"WWW-Authenticate: Bearer" in answer


def test_no_body_on_get_or_the_websocket_route(hub: HubProcess) -> None:
    bearer = f"Authorization: Bearer {TOKEN}"
    assert request(hub.port, head(hub.port, "GET", "/api/instances", bearer, "Content-Length: 5") + b"hello")[0] == 400
    assert request(hub.port, head(hub.port, "GET", "/api/instances", bearer, "Transfer-Encoding: chunked")
                   + b"5\r\nhello\r\n0\r\n\r\n")[0] == 400
    upgrade = ("Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13",
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", bearer)
    assert request(hub.port, head(hub.port, "GET", "/acp?instance=x", *upgrade, "Content-Length: 3") + b"abc")[0] == 400


def test_the_head_cap_holds_in_one_read_or_a_trickle(hub: HubProcess) -> None:
    big = head(hub.port, "GET", "/api/health", "X-Pad: " + "p" * 40_000)
    assert request(hub.port, big)[0] == 431  # one sendall: one read could hold it all
    with socket.create_connection(("127.0.0.1", hub.port), timeout=5) as sock:
        for offset in range(0, len(big), 1000):  # a trickle of 1000-byte pieces
            try:
                sock.sendall(big[offset:offset + 1000])
            except OSError:
                break  # refused already
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 431 ")
    assert request(hub.port, head(hub.port, "GET", "/api/health", "X-Pad: " + "p" * 15_000))[0] == 200


# --- Host and Origin ------------------------------------------------------------------------


def test_host_and_origin_are_allow_listed(hub: HubProcess) -> None:
    bearer = f"Authorization: Bearer {TOKEN}"
    port = hub.port

    def status(*headers: str, host: str | None = None, target: str = "/api/instances") -> int:
        return request(port, head(port, "GET", target, bearer, *headers, host=host))[0]

    assert status() == 200
    assert status(host="localhost") == 200 and status(host=f"[::1]:{port}") == 200
    # A DNS-rebinding page: the browser sends the attacker's name as the Host.
    assert status(host=f"rebind.attacker.example:{port}") == 403
    assert status(host=f"rebind.attacker.example:{port}", target="/") == 403  # the page too
    # A page elsewhere (or on another local port) opening our API or WebSocket.
    assert status("Origin: https://attacker.example") == 403
    assert status(f"Origin: http://127.0.0.1:{port + 1}") == 403
    assert status("Origin: null") == 403
    assert status(f"Origin: http://127.0.0.1:{port}") == 200
    # The name the user configured for the tunnel, and the page's own origin through it.
    assert status("Origin: https://agent.example.org", host="agent.example.org") == 200
    assert status("Origin: https://agent.example.org", host="other.example.org") == 403
    # The scheme is part of the origin: the hub serves plain HTTP on loopback, a tunnel TLS.
    assert status(f"Origin: https://127.0.0.1:{port}") == 403
    assert status("Origin: http://agent.example.org", host="agent.example.org") == 403
    phone = f"ws://127.0.0.1:{port}/acp?instance=nobody"
    with pytest.raises(wsclient.WebSocketBadStatusException) as refused:
        wsclient.create_connection(phone, timeout=5, origin="https://attacker.example",
                                   subprotocols=[SUBPROTOCOL, token_subprotocol(TOKEN)])
    assert refused.value.status_code == 403


# --- logs -----------------------------------------------------------------------------------


def test_no_target_query_or_token_in_any_log_line(tmp_path: Path) -> None:
    hub = HubProcess(tmp_path, ZCODE_ACP_PROJECT_ROOTS=str(tmp_path))
    try:
        _attack_the_logs(hub)
    finally:
        hub.stop()
    leaked = [line for line in hub.lines if MARK.lower() in line.lower()]
    assert leaked == []


def _attack_the_logs(hub: HubProcess) -> None:
    port = hub.port
    secret_token = f"{MARK}-token-0123456789"
    attempts = [
        head(port, "GET", f"/api/instances?token={MARK}"),
        head(port, "GET", f"/api/{MARK}", f"Authorization: Bearer {secret_token}"),
        head(port, "GET", f"/{MARK}/page.html"),
        head(port, "GET", f"/acp?instance={MARK}&token={MARK}", "Connection: Upgrade", "Upgrade: websocket",
             "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
             f"Authorization: Bearer {TOKEN}"),
        head(port, "POST", f"/api/register?{MARK}=1", f"Authorization: Bearer {TOKEN}", "Content-Length: 2") + b"{}",
        head(port, "POST", "/api/register", f"Authorization: Bearer {TOKEN}", "Content-Length: 40")
        + json.dumps({"id": f"x/{MARK}", "port": 1, "pid": 1}).encode().ljust(40),
        f"GET /{MARK} HTTP/9.9\r\n\r\n".encode(),
        head(port, "GET", f"/api/instances?{MARK}", f"Authorization: ZCode-Proof ts=1,nonce={MARK},mac={MARK}"),
        head(port, "GET", "/", f"Origin: https://{MARK}.example"),
        # A body the handler chokes on (a NUL in a path): the failure is logged, its target not.
        head(port, "POST", f"/api/instances?{MARK}", f"Authorization: Bearer {TOKEN}", "Content-Length: 20")
        + b'{"cwd": "/a\\u0000b"}',
    ]
    for data in attempts:
        request(port, data)
    # Something is logged after them all, so every line about them is in.
    assert http("POST", f"{hub.url}/api/register", {"id": "after", "port": 1, "pid": 1})[0] == 200
    hub.wait_line(r"instance after registered")


# --- the token never goes to a listener that has not proven it knows it ------------------


class Squatter:
    """Something another user bound on a port we use: it records every byte and plays along."""

    def __init__(self, answer: bytes) -> None:
        self.listener = gsocket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.received = b""
        self.answer = answer
        self.greenlet = gevent.spawn(self._serve)

    def _serve(self) -> None:
        while True:
            sock, _ = self.listener.accept()
            gevent.spawn(self._one, sock)

    def _one(self, sock: gsocket.socket) -> None:
        sock.settimeout(2)
        try:
            data = b""
            while b"\r\n\r\n" not in data and (chunk := sock.recv(65536)):
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            while len(body) < length and (chunk := sock.recv(65536)):
                body += chunk
            self.received += data + body[len(data) - len(head) - 4:]
            sock.sendall(self.answer)
        except OSError:
            pass
        finally:
            sock.close()

    def learned_the_token(self) -> bool:
        return TOKEN.encode() in self.received or token_subprotocol(TOKEN).encode() in self.received

    def close(self) -> None:
        self.greenlet.kill()
        self.listener.close()


def test_a_squatter_on_the_hubs_port_learns_nothing(tmp_path: Path) -> None:
    body = b'{"ok": true, "version": "99.0.0", "handover": true}'
    squatter = Squatter(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                        b"Connection: close\r\n\r\n%s" % (len(body), body))
    try:
        identity = BridgeIdentity.new(port=45678, origin="editor", workspace="/w", version="0.1.0")
        client = HubClient(identity, lambda: [], token=TOKEN, hub_port=squatter.port, autostart=False)
        assert client.register_once() is Outcome.UNTRUSTED  # not fooled into a hand-over either
        client.stop()
        assert b"POST /api/register" in squatter.received  # it did get the registration
        assert not squatter.learned_the_token()
    finally:
        squatter.close()


def test_a_squatter_on_a_dead_bridges_port_learns_nothing(hub: HubProcess) -> None:
    # Whatever it answers (here a 101 that looks right): the hub sends it no token and no client.
    squatter = Squatter(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
    try:
        register = {"id": "gone", "port": squatter.port, "pid": 4242, "origin": "serve"}
        assert http("POST", f"{hub.url}/api/register", register)[0] == 200
        with pytest.raises(wsclient.WebSocketBadStatusException) as refused:
            wsclient.create_connection(f"ws://127.0.0.1:{hub.port}/acp?instance=gone", timeout=5,
                                       subprotocols=[SUBPROTOCOL, token_subprotocol(TOKEN)])
        assert refused.value.status_code == 502
        assert squatter.received  # the hub did knock
        assert not squatter.learned_the_token()
    finally:
        squatter.close()


def test_the_proxy_dials_only_a_port_that_proves_it_is_the_registered_bridge(
        tmp_path: Path, hub: HubProcess, bridges: list[Process]) -> None:
    real = FakeBridge(tmp_path, hub.port, "--id", "real-one")
    bridges.append(real)
    hub.wait_line(r"instance real-one registered")
    # A token holder registers the real bridge's port under another id: the port proves "real-one".
    assert http("POST", f"{hub.url}/api/register", {"id": "impostor", "port": real.port, "pid": 7})[0] == 200
    with pytest.raises(wsclient.WebSocketBadStatusException) as refused:
        wsclient.create_connection(f"ws://127.0.0.1:{hub.port}/acp?instance=impostor", timeout=5,
                                   header=[f"Authorization: Bearer {TOKEN}"])
    assert refused.value.status_code == 502
    phone = wsclient.create_connection(f"ws://127.0.0.1:{hub.port}/acp?instance=real-one", timeout=5,
                                       header=[f"Authorization: Bearer {TOKEN}"])
    phone.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
    assert json.loads(phone.recv())["result"]["instance"] == "real-one"
    phone.close()


# --- registrations --------------------------------------------------------------------------


def strict_json(raw: bytes) -> Any:
    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")
    return json.loads(raw, parse_constant=refuse)


def register_raw(hub: HubProcess, text: str) -> int:
    status, _, _ = http("POST", f"{hub.url}/api/register", text.encode())
    return status


@pytest.mark.parametrize("bad", [
    '{"id": "a", "port": 9, "pid": 1, "startedAt": 1e400}',
    '{"id": "a", "port": 9, "pid": 1, "startedAt": -1e400}',
    '{"id": "a", "port": 9, "pid": 1, "startedAt": NaN}',
    '{"id": "a", "port": 9, "pid": 1, "startedAt": 100000000000000000000000000000}',
    '{"id": "a", "port": 9, "pid": 1, "sessions": [{"sessionId": "s", "updatedAt": 1e400}]}',
    '{"id": "a", "port": 9, "pid": 100000000000000000000}',
    '{"id": "a", "port": 9, "pid": 1, "version": "' + "9" * 65 + '"}',
    '{"id": "a", "port": 9, "pid": 1, "workspace": "' + "w" * 5000 + '"}',
    '{"id": "a\\nforged log line", "port": 9, "pid": 1}',
    '{"id": "a", "port": 9, "pid": 1, "sessions": [{"sessionId": "' + "s" * 300 + '"}]}',
    '{"id": "a", "port": 9, "pid": 1, "sessions": [{"sessionId": "s", "title": 5}]}',
    '{"id": "a", "port": 9, "pid": 1, "sessions": [' + ",".join(['{"sessionId": "s"}'] * 1001) + ']}',
    '{"id": "a", "port": 9, "pid": 1, "startedAt": "+999999-01-01T00:00:00"}',
])
def test_a_bad_registration_is_refused_and_never_breaks_the_listing(hub: HubProcess, bad: str) -> None:
    assert register_raw(hub, '{"id": "good", "port": 9, "pid": 1, "startedAt": 5}') == 200
    assert 400 <= register_raw(hub, bad) < 500
    status, _, listing = http("GET", f"{hub.url}/api/instances")
    assert status == 200 and [i["id"] for i in strict_json(listing)] == ["good"]


def test_no_take_over_of_another_bridges_id(hub: HubProcess) -> None:
    assert register_raw(hub, '{"id": "mine", "port": 9001, "pid": 100}') == 200
    assert register_raw(hub, '{"id": "mine", "port": 9002, "pid": 200}') == 409   # another process
    assert register_raw(hub, '{"id": "mine", "port": 9001, "pid": 200}') == 409
    assert http("POST", f"{hub.url}/api/unregister", {"id": "mine", "pid": 200})[0] == 409
    assert http("POST", f"{hub.url}/api/unregister", {"id": "mine"})[0] == 400
    (listed,) = get_json(f"{hub.url}/api/instances")
    assert (listed["port"], listed["pid"]) == (9001, 100)
    assert register_raw(hub, '{"id": "mine", "port": 9001, "pid": 100}') == 200      # its own heartbeat
    assert http("POST", f"{hub.url}/api/unregister", {"id": "mine", "pid": 100})[0] == 200


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_a_body_flood_without_the_token_costs_the_hub_nothing(hub: HubProcess) -> None:
    # 200 clients at once, each announcing a 1 MiB body and sending 64 KiB of it: refused on the head.
    before = rss_kib(hub.proc.pid)
    data = head(hub.port, "POST", "/api/register", "Content-Length: 1048576") + b"x" * 65536
    socks = [socket.create_connection(("127.0.0.1", hub.port), timeout=5) for _ in range(200)]
    for sock in socks:
        sock.sendall(data)
    peak = rss_kib(hub.proc.pid)
    statuses = []
    for sock in socks:
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass  # the hub closed with our unread body in its buffer: the status came first
        statuses.append(answer.split(b" ", 2)[1] if answer else b"reset")
        sock.close()
    after = rss_kib(hub.proc.pid)
    print(f"hub RSS under a 200-client body flood: {before} KiB before, {peak} KiB during, {after} KiB after")
    # Connected all at once, they overflow the pool of connections without a token: the
    # oldest are cut with 503 (a status line, never a reset), the rest refused with 401.
    assert set(statuses) <= {b"401", b"503"} and statuses.count(b"401") >= MAX_UNAUTHENTICATED


def test_one_clients_flood_through_the_hub_never_stalls_another(
        tmp_path: Path, hub: HubProcess, bridges: list[Process]) -> None:
    bridge = FakeBridge(tmp_path, hub.port, "--id", "shared")
    bridges.append(bridge)
    hub.wait_line(r"instance shared registered")
    flooder = socket.create_connection(("127.0.0.1", hub.port), timeout=5)
    flooder.sendall(head(hub.port, "GET", "/acp?instance=shared", "Connection: Upgrade", "Upgrade: websocket",
                         "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                         f"Authorization: Bearer {TOKEN}"))
    assert flooder.recv(4096).startswith(b"HTTP/1.1 101 ")
    note = b'{"jsonrpc":"2.0","method":"flood/x"}'
    batch = (bytes([0x81, 0x80 | len(note)]) + b"\0\0\0\0" + note) * 1500  # ~64 KiB of notifications

    sent = [0]

    def flood() -> None:
        try:
            while sent[0] < 2_000_000:  # bounded in count; the other client's answers bound it in time
                flooder.sendall(batch)
                sent[0] += 1500
        except OSError:
            pass

    flooding = gevent.spawn(flood)
    try:
        other = wsclient.create_connection(f"ws://127.0.0.1:{hub.port}/acp?instance=shared", timeout=10,
                                           header=[f"Authorization: Bearer {TOKEN}"])
        for n in range(5):
            other.send(json.dumps({"jsonrpc": "2.0", "id": n, "method": "ping"}))
            while (answer := json.loads(other.recv())).get("id") != n:
                pass  # the bridge's own notifications, if any
            assert answer["result"]["instance"] == "shared"
        assert not flooding.dead  # answered while the flood went on
        other.close()
    finally:
        flooding.kill()
        flooder.close()


def test_a_restarted_hub_cannot_be_pre_claimed_with_a_bridges_public_id_pid_and_port(
        hub: HubProcess) -> None:
    """Issue 29: a hub that restarts knows no registration key. A token holder who read a bridge's
    id, pid and port from the listing before could register them first (with a key of its own, or
    none); the bridge's next heartbeat was then 409 for good. The id now commits to the key."""
    victim = BridgeIdentity.new(port=9001, origin="editor", workspace="/victim", version="1.0")
    public = {"id": victim.instance_id, "pid": victim.pid, "port": victim.port, "workspace": "/forged"}
    # This hub is fresh, as after a restart: the first to register wins, were the id not bound.
    for key in (None, "f" * 32, victim.instance_id[2:]):
        body = public if key is None else {**public, "key": key}
        assert http("POST", f"{hub.url}/api/register", body)[0] == 409
    assert get_json(f"{hub.url}/api/instances") == []
    heartbeat = {"id": victim.instance_id, "pid": victim.pid, "port": victim.port, "workspace": "/victim",
                 "key": victim.key}
    assert http("POST", f"{hub.url}/api/register", heartbeat)[0] == 200
    (listed,) = get_json(f"{hub.url}/api/instances")
    assert listed["id"] == victim.instance_id and listed["workspace"] == "/victim"


def test_a_token_holder_cannot_rewrite_or_remove_another_bridges_registration(
        hub: HubProcess) -> None:
    # The victim registered with its key; the pid and port are public (the listing shows them).
    victim = {"id": "victim", "port": 9001, "pid": 100, "key": "v" * 32, "workspace": "/victim"}
    assert http("POST", f"{hub.url}/api/register", victim)[0] == 200
    (listed,) = get_json(f"{hub.url}/api/instances")
    assert "v" * 32 not in json.dumps(listed)  # the key is never listed
    forged = {"id": "victim", "port": listed["port"], "pid": listed["pid"], "workspace": "/forged"}
    for key in (None, "f" * 32):
        body = forged if key is None else {**forged, "key": key}
        assert http("POST", f"{hub.url}/api/register", body)[0] == 409
        assert http("POST", f"{hub.url}/api/unregister",
                    {"id": "victim", "pid": 100, **({"key": key} if key else {})})[0] == 409
    (listed,) = get_json(f"{hub.url}/api/instances")
    assert listed["workspace"] == "/victim"
    # The victim itself, with its key, still may.
    assert http("POST", f"{hub.url}/api/unregister", {"id": "victim", "pid": 100, "key": "v" * 32})[0] == 200
