"""The real ``zcode-acp hub`` process, driven with real HTTP and WebSocket clients,
with fake bridges (separate processes using the real HubClient) behind it."""

from __future__ import annotations

import http.client as httplib
import json
import signal
import socket
import struct
import sys
from pathlib import Path
from collections.abc import Iterator

import pytest
import websocket as wsclient

from tests.hub.harness import TOKEN, FakeBridge, HubProcess, Process, base_env, get_json, http
from zcode_acp.net import websocket_handshake as handshake
from zcode_acp.net.tokens import SUBPROTOCOL, token_subprotocol

FAST = dict(ZCODE_ACP_HUB_HEARTBEAT_TIMEOUT="1", ZCODE_ACP_HUB_SWEEP_INTERVAL="0.2")


def make_web_root(tmp_path: Path) -> Path:
    root = tmp_path / "web"
    (root / "js").mkdir(parents=True)
    (root / "index.html").write_text("<!doctype html><title>hub</title>")
    (root / "js" / "app.js").write_text("export const x = 1;\n")
    (root / "style.css").write_text("body{}\n")
    (tmp_path / "secret.txt").write_text("do not serve")
    return root


@pytest.fixture
def web_root(tmp_path: Path) -> Path:
    return make_web_root(tmp_path)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """One hub for the tests that leave no state behind (refusals, page, health)."""
    tmp = tmp_path_factory.mktemp("shared-hub")
    process = HubProcess(tmp, "--web-root", str(make_web_root(tmp)), **FAST)
    yield process
    assert process.stop() == 0


@pytest.fixture
def hub(tmp_path: Path, web_root: Path) -> Iterator[HubProcess]:
    process = HubProcess(tmp_path, "--web-root", str(web_root), **FAST)
    yield process
    assert process.stop() == 0


@pytest.fixture
def bridges(tmp_path: Path, hub: HubProcess) -> Iterator[list[FakeBridge]]:
    started: list[FakeBridge] = []
    yield started
    for bridge in started:
        bridge.stop()


def start_bridge(tmp_path: Path, hub: HubProcess, bridges: list[FakeBridge], *args: str
                 ) -> FakeBridge:
    bridge = FakeBridge(tmp_path, hub.port, *args)
    bridges.append(bridge)
    hub.wait_line(rf"instance {bridge.instance_id} registered")
    return bridge


def raw_upgrade(port: int, target: str, token: str | None = TOKEN) -> tuple[int, str, bytes]:
    """A hand-made upgrade request: (status, reason, body) of the answer."""
    conn = httplib.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
               "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    conn.request("GET", target, headers=headers)
    response = conn.getresponse()
    return response.status, response.reason, response.read()


def test_health_needs_no_token(shared: HubProcess) -> None:
    hub = shared
    status, headers, body = http("GET", hub.url + "/api/health", token=None)
    assert status == 200 and headers["content-type"] == "application/json"
    answer = json.loads(body)
    assert answer["ok"] is True and isinstance(answer["instances"], int) and answer["version"]


@pytest.mark.parametrize("method,path,body", [
    ("GET", "/api/instances", None),
    ("POST", "/api/instances", {"cwd": "/tmp"}),
    ("POST", "/api/register", {"id": "x", "port": 1}),
    ("POST", "/api/unregister", {"id": "x"}),
])
@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_every_token_route_refuses_without_the_token(shared: HubProcess, method: str, path: str,
                                                     body: object, token: str | None) -> None:
    hub = shared
    status, headers, answer = http(method, hub.url + path, body, token=token)
    assert status == 401
    assert b"unauthorized" in answer and headers["www-authenticate"] == "Bearer"


def test_a_token_in_the_url_is_refused(shared: HubProcess) -> None:
    # A URL is kept by proxies, tunnels and browser histories: the token travels in a header.
    hub = shared
    assert http("GET", hub.url + f"/api/instances?token={TOKEN}", token=None)[0] == 401
    assert raw_upgrade(hub.port, f"/acp?instance=x&token={TOKEN}", token=None)[0] == 401


def test_unknown_routes_methods_and_bad_bodies(shared: HubProcess) -> None:
    hub = shared
    assert http("GET", hub.url + "/api/nothing")[0] == 404
    status, headers, _ = http("DELETE", hub.url + "/api/instances")
    assert status == 405 and "GET" in headers["allow"]
    assert http("POST", hub.url + "/api/register", b"{not json")[0] == 400
    status, _, answer = http("POST", hub.url + "/api/register", {"id": "x", "port": 0})
    assert status == 400 and b"port" in answer
    big = json.dumps({"id": "x", "port": 1, "pad": "p" * (1024 * 1024)}).encode()
    status, _, answer = http("POST", hub.url + "/api/register", big)
    assert status == 413


def test_two_bridges_registered_and_discovered(tmp_path: Path, hub: HubProcess,
                                               bridges: list[FakeBridge]) -> None:
    a = start_bridge(tmp_path, hub, bridges, "--id", "bridge-a", "--session", "s1@1000",
                     "--session", "shared@3000")
    b = start_bridge(tmp_path, hub, bridges, "--id", "bridge-b", "--origin", "serve",
                     "--session", "shared@2000", "--session", "s3@5")
    listing = get_json(hub.url + "/api/instances")
    by_id = {i["id"]: i for i in listing}
    assert set(by_id) == {"bridge-a", "bridge-b"}
    assert by_id["bridge-a"]["port"] == a.port and by_id["bridge-b"]["port"] == b.port
    assert by_id["bridge-a"]["pid"] == a.proc.pid and by_id["bridge-b"]["origin"] == "serve"
    assert {s["sessionId"] for s in by_id["bridge-a"]["sessions"]} == {"s1", "shared"}
    assert [s["sessionId"] for s in by_id["bridge-b"]["sessions"]] == ["s3"]
    assert by_id["bridge-a"]["sessions"][0] == {"sessionId": "s1", "title": "title of s1",
                                                "updatedAt": 1000, "status": "idle"}
    assert get_json(hub.url + "/api/health", token=None)["instances"] == 2
    # A bridge that stops unregisters at once.
    assert a.stop() == 0
    hub.wait_line(r"instance bridge-a unregistered")
    assert [i["id"] for i in get_json(hub.url + "/api/instances")] == ["bridge-b"]


def test_proxied_session_end_to_end(tmp_path: Path, hub: HubProcess,
                                    bridges: list[FakeBridge]) -> None:
    a = start_bridge(tmp_path, hub, bridges, "--id", "bridge-a")
    start_bridge(tmp_path, hub, bridges, "--id", "bridge-b")
    url = f"ws://127.0.0.1:{hub.port}/acp?instance=bridge-a"
    phone = wsclient.create_connection(url, timeout=10, subprotocols=[SUBPROTOCOL, token_subprotocol(TOKEN)])
    assert phone.subprotocol == SUBPROTOCOL  # the hub names the plain one, never the token's
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": 1}}
    phone.send(json.dumps(request))
    answer = json.loads(phone.recv())
    assert answer == {"jsonrpc": "2.0", "id": 1, "result": {
        "instance": "bridge-a", "method": "initialize", "params": {"protocolVersion": 1}}}
    phone.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "test/notify"}))
    assert json.loads(phone.recv())["method"] == "session/update"  # order kept
    assert json.loads(phone.recv())["id"] == 2
    # Frames are not re-encoded on the way: odd spacing and non-JSON text survive.
    odd = '{ "jsonrpc" :"2.0",  "id":3, "method": "test/raw", "note": "ünïcödé" }'
    phone.send(odd)
    assert json.loads(phone.recv())["result"]["raw"] == odd
    phone.send("not JSON at all {")
    assert phone.recv() == "not JSON at all {"
    # A second client through this module's own client, on the other bridge.
    laptop = handshake.connect(f"ws://127.0.0.1:{hub.port}/acp?instance=bridge-b",
                        [("Authorization", f"Bearer {TOKEN}")]).start()
    laptop.send_text(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "session/list"}))
    assert json.loads(laptop.receive(10))["result"]["instance"] == "bridge-b"
    # The bridge closes with a code: the client sees the same code.
    laptop.send_text(json.dumps({"jsonrpc": "2.0", "method": "test/close",
                                 "params": {"code": 1008}}))
    info = laptop.wait_closed(10)
    assert info is not None and info.code == 1008
    # The client leaves: the hub closes the bridge leg too (the pair never stays half open).
    phone.close()
    hub.wait_line(r"client leg of instance bridge-a closed \(1000")
    assert a.proc.poll() is None


def test_websocket_refusals_have_real_status_lines(shared: HubProcess) -> None:
    hub = shared
    assert raw_upgrade(hub.port, "/acp?instance=x", token=None)[:2] == (401, "Unauthorized")
    assert raw_upgrade(hub.port, "/acp?instance=x", token="nope")[:2] == (401, "Unauthorized")
    status, reason, body = raw_upgrade(hub.port, "/acp?instance=ghost")
    assert (status, reason) == (404, "Not Found") and b"ghost" in body
    # Registered, but nothing listens on its port: 502.
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()
    assert http("POST", hub.url + "/api/register", {"id": "dead", "port": dead_port})[0] == 200
    status, reason, body = raw_upgrade(hub.port, "/acp?instance=dead")
    assert (status, reason) == (502, "Bad Gateway") and b"unreachable" in body
    # Not an upgrade at all.
    status, _, body = http("GET", hub.url + "/acp?instance=dead")
    assert status == 400 and b"upgrade" in body.lower()
    with pytest.raises(handshake.HandshakeRefused) as refused:
        handshake.connect(f"ws://127.0.0.1:{hub.port}/acp?instance=ghost", [("Authorization", f"Bearer {TOKEN}")])
    assert refused.value.status == 404


def test_binary_from_the_client_is_refused(tmp_path: Path, hub: HubProcess,
                                           bridges: list[FakeBridge]) -> None:
    start_bridge(tmp_path, hub, bridges, "--id", "bridge-a")
    phone = wsclient.create_connection(f"ws://127.0.0.1:{hub.port}/acp?instance=bridge-a", timeout=10,
                                       header=[f"Authorization: Bearer {TOKEN}"])
    phone.send_binary(b"\x01\x02")
    opcode, frame = phone.recv_data_frame(control_frame=True)
    assert opcode == wsclient.ABNF.OPCODE_CLOSE
    assert struct.unpack("!H", frame.data[:2])[0] == 1003
    phone.close()


def test_instance_dropped_after_its_bridge_is_killed(tmp_path: Path, hub: HubProcess,
                                                     bridges: list[FakeBridge]) -> None:
    bridge = start_bridge(tmp_path, hub, bridges, "--id", "doomed", "--heartbeat", "0.3")
    survivor = start_bridge(tmp_path, hub, bridges, "--id", "survivor", "--heartbeat", "0.3")
    bridge.kill()  # no unregister: only the silence tells
    hub.wait_line(r"dropped instance doomed \(silent .* port closed\)")
    assert [i["id"] for i in get_json(hub.url + "/api/instances")] == [survivor.instance_id]


def test_missed_pong_takes_the_pair_down(tmp_path: Path, web_root: Path) -> None:
    hub = HubProcess(tmp_path, "--web-root", str(web_root), ZCODE_ACP_HUB_PING_INTERVAL="0.2")
    bridge = FakeBridge(tmp_path, hub.port, "--id", "b")
    try:
        hub.wait_line(r"instance b registered")
        frozen = handshake.connect(f"ws://127.0.0.1:{hub.port}/acp?instance=b", [("Authorization", f"Bearer {TOKEN}")])
        # Never started: it never answers a ping.
        hub.wait_line(r"client leg of instance b closed \(1006 missed pong\)")
        bridge.wait_line(r"INFO")  # the bridge is alive and logging
        frozen.abort()
    finally:
        bridge.stop()
        assert hub.stop() == 0


def test_static_page_with_csp_and_no_traversal(shared: HubProcess) -> None:
    hub = shared
    status, headers, body = http("GET", hub.url + "/", token=None)
    assert status == 200 and body.startswith(b"<!doctype html>")
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert headers["content-security-policy"] == "default-src 'self'; connect-src 'self'; " \
        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    status, headers, _ = http("GET", hub.url + "/js/app.js", token=None)
    assert status == 200 and headers["content-type"] == "text/javascript; charset=utf-8"
    assert http("GET", hub.url + "/style.css", token=None)[1]["content-type"] == \
        "text/css; charset=utf-8"
    for target in ("/../secret.txt", "/%2e%2e/secret.txt", "/js/../../secret.txt",
                   "/..%2fsecret.txt", "//etc/passwd", "/missing.html"):
        conn = httplib.HTTPConnection("127.0.0.1", hub.port, timeout=10)
        conn.request("GET", target)
        response = conn.getresponse()
        assert response.status == 404, target
        assert b"do not serve" not in response.read()
    assert http("POST", hub.url + "/", b"", token=None)[0] == 405


def test_no_token_exits_2_with_a_clear_message(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    del env["ZCODE_ACP_REMOTE_TOKEN"]
    process = Process([sys.executable, "-m", "zcode_acp", "hub", "--port", "0"], env)
    process.wait_line(r"no token.*ZCODE_ACP_REMOTE_TOKEN")
    assert process.proc.wait(10) == 2


def test_no_token_is_said_in_the_language_of_the_person_starting_the_hub(tmp_path: Path) -> None:
    env = base_env(tmp_path, ZCODE_ACP_LANG="zh_CN")
    del env["ZCODE_ACP_REMOTE_TOKEN"]
    process = Process([sys.executable, "-m", "zcode_acp", "hub", "--port", "0"], env)
    process.wait_line(r"没有令牌。请设置 ZCODE_ACP_REMOTE_TOKEN")
    assert process.proc.wait(10) == 2


def test_token_from_a_shared_config_file_is_refused(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    del env["ZCODE_ACP_REMOTE_TOKEN"]
    path = tmp_path / "config" / "zcode-acp" / "config.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"remote": {"token": "file-token-0123456789"}}))
    path.chmod(0o644)
    process = Process([sys.executable, "-m", "zcode_acp", "hub", "--port", "0"], env)
    process.wait_line(r"chmod 600")
    assert process.proc.wait(10) == 2
    path.chmod(0o600)
    process = Process([sys.executable, "-m", "zcode_acp", "hub", "--port", "0"], env)
    port = int(process.wait_line(r"listening on http://[^:]+:(\d+)").group(1))
    status, _, _ = http("GET", f"http://127.0.0.1:{port}/api/instances", token="file-token-0123456789")
    assert status == 200
    assert process.stop() == 0


def test_non_loopback_bind_warns_and_idle_hub_exits(tmp_path: Path) -> None:
    process = Process([sys.executable, "-m", "zcode_acp", "hub", "--port", "0",
                       "--host", "0.0.0.0"],
                      base_env(tmp_path, ZCODE_ACP_HUB_IDLE_EXIT="0.5",
                               ZCODE_ACP_HUB_SWEEP_INTERVAL="0.1"))
    process.wait_line(r"WARNING .*beyond loopback: the token is the only protection")
    process.wait_line(r"stopping \(idle\)")
    assert process.proc.wait(10) == 0


def test_sigterm_stops_the_hub_cleanly(tmp_path: Path) -> None:
    process = HubProcess(tmp_path)
    assert process.stop(signal.SIGTERM) == 0
    process.wait_line(r"stopping \(signal\)")


def test_a_short_token_is_one_line_that_says_so_and_how_to_make_one(tmp_path: Path) -> None:
    """Issue 29: a warning ("refused") then "no token. Set ZCODE_ACP_REMOTE_TOKEN…"; now one line."""
    import subprocess

    env = base_env(tmp_path)
    env["ZCODE_ACP_REMOTE_TOKEN"] = "short-token"
    done = subprocess.run([sys.executable, "-m", "zcode_acp", "hub", "--port", "0"], env=env, capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "shorter than 16 characters" in lines[0] and "openssl rand -hex 32" in lines[0]
    assert "no token" not in lines[0]
