"""The bridge's side of the hub (HubClient) against a hub running in this process,
and the hub's own decisions (starting serve bridges, hand-over, idle exit)."""

from __future__ import annotations

import json
import socket
import sys
import time
from pathlib import Path
from typing import Any
from collections.abc import Iterator

import gevent
import pytest
import tenacity

from tests.hub.harness import FAKE_BRIDGE, TOKEN, base_env, get_json, http, wait_until
from zcode_acp.net.hub_client import BridgeIdentity, HubClient, Outcome
from zcode_acp.hub.main import hub_answers
from zcode_acp.hub.server import Hub, HubSettings


def free_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def make_hub(tmp_path: Path, **overrides: Any) -> Hub:
    settings: dict[str, Any] = dict(token=TOKEN, port=0, web_root=tmp_path,
                                    handover_cooldown=60.0, sweep_interval=3600.0,
                                    serve_env=base_env(tmp_path))
    settings.update(overrides)
    return Hub(HubSettings(**settings)).start()


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    running = make_hub(tmp_path)
    yield running
    running.stop("test over")


def identity(version: str = "0.1.0", port: int = 45678) -> BridgeIdentity:
    return BridgeIdentity.new(port=port, origin="editor", workspace="/work/p", version=version)


def recorder_command(tmp_path: Path) -> tuple[list[str], Path]:
    """A stand-in 'hub' command that only records that it was started."""
    record = tmp_path / "starts.log"
    script = f"open({str(record)!r}, 'a').write('started\\n')"
    return [sys.executable, "-c", script], record


def starts(record: Path) -> int:
    return len(record.read_text().splitlines()) if record.exists() else 0


def test_registers_heartbeats_and_unregisters(hub: Hub) -> None:
    sessions = [{"sessionId": "s1", "title": "One", "updatedAt": 5, "status": "running"}]
    client = HubClient(identity(), lambda: sessions, token=TOKEN, hub_port=hub.port,
                       heartbeat=0.05, autostart=False).start()
    try:
        assert client.wait_for(Outcome.REGISTERED, 5)
        listing = get_json(f"http://127.0.0.1:{hub.port}/api/instances")
        assert listing[0]["id"] == client.identity.instance_id
        assert listing[0]["sessions"] == sessions
        first_seen = hub.registry.get(client.identity.instance_id).last_seen
        sessions.append({"sessionId": "s2", "updatedAt": 6})
        wait_until(lambda: len(hub.registry.get(client.identity.instance_id)
                               .registration.sessions) == 2, what="heartbeat with s2")
        assert hub.registry.get(client.identity.instance_id).last_seen > first_seen
    finally:
        client.stop()
    assert len(hub.registry) == 0


def test_401_is_retried_on_a_backoff_with_the_token_reread(hub: Hub) -> None:
    tokens = ["old-token"]
    client = HubClient(identity(), lambda: [], token=lambda: tokens[0], hub_port=hub.port,
                       heartbeat=10, autostart=False,
                       auth_backoff=tenacity.wait_exponential(multiplier=0.02, max=0.1)).start()
    try:
        assert client.wait_for(Outcome.UNAUTHORIZED, 5)
        assert client.registrations == 0
        tokens[0] = TOKEN  # the token is rotated in the config: the next retry gets in
        assert client.wait_for(Outcome.REGISTERED, 5)
        assert hub.registry.get(client.identity.instance_id) is not None
    finally:
        client.stop()


def test_autostart_is_throttled_to_once_per_interval(tmp_path: Path) -> None:
    command, record = recorder_command(tmp_path)
    client = HubClient(identity(), lambda: [], token=TOKEN, hub_port=free_port(),
                       heartbeat=0.02, autostart_interval=60.0, hub_command=command)
    attempts: list[Outcome] = []
    original = client.register_once

    def counting() -> Outcome:
        attempts.append(original())
        return attempts[-1]

    client.register_once = counting  # type: ignore[method-assign]
    client.start()
    try:
        wait_until(lambda: len(attempts) >= 20, what="20 registration attempts")
        wait_until(lambda: starts(record) >= 1, what="the recorder to run")
        assert set(attempts) == {Outcome.UNREACHABLE}
        assert len(client.hub_processes) == 1 and starts(record) == 1
        # Once the interval has passed, one more start.
        client.autostart_interval = 0.3
        wait_until(lambda: len(client.hub_processes) == 2, what="a second start")
    finally:
        client.stop()
    for process in client.hub_processes:
        process.wait(5)


def test_no_autostart_when_disabled(tmp_path: Path) -> None:
    command, record = recorder_command(tmp_path)
    client = HubClient(identity(), lambda: [], token=TOKEN, hub_port=free_port(),
                       heartbeat=0.02, autostart=False, hub_command=command)
    calls: list[Outcome] = []
    original = client.register_once
    client.register_once = lambda: calls.append(original()) or calls[-1]  # type: ignore
    client.start()
    try:
        wait_until(lambda: len(calls) >= 10, what="10 attempts")
    finally:
        client.stop()
    assert client.hub_processes == [] and starts(record) == 0


def test_autostart_starts_a_real_detached_hub_and_registers(tmp_path: Path) -> None:
    port = free_port()
    env = base_env(tmp_path, ZCODE_ACP_HUB_IDLE_EXIT="30")
    client = HubClient(identity(), lambda: [], token=TOKEN, hub_port=port, heartbeat=10,
                       hub_env=env, hub_log=tmp_path / "hub.log")
    client.start()
    try:
        assert client.wait_for(Outcome.REGISTERED, 20), (tmp_path / "hub.log").read_text()
        assert len(client.hub_processes) == 1
        assert hub_answers("127.0.0.1", port)
        assert oct((tmp_path / "hub.log").stat().st_mode & 0o777) == "0o600"
    finally:
        client.stop()
        hub_process = client.hub_processes[0]
        hub_process.terminate()
        assert hub_process.wait(10) == 0


def test_newer_bridge_gets_a_handover_after_the_cool_down(tmp_path: Path) -> None:
    command, record = recorder_command(tmp_path)
    hub = make_hub(tmp_path, handover_cooldown=0.0, version="0.1.0")
    client = HubClient(identity(version="0.2.0"), lambda: [], token=TOKEN, hub_port=hub.port,
                       heartbeat=0.05, hub_command=command)
    attempts: list[Outcome] = []
    original = client.register_once
    client.register_once = lambda: attempts.append(original()) or attempts[-1]  # type: ignore
    client.start()
    try:
        assert hub.wait(5) and hub.exit_reason == "handover"
        # The old hub is gone; the client started one of its own, exactly once
        # (the unreachable attempts that follow are within the autostart interval).
        wait_until(lambda: starts(record) == 1, what="the new hub to be started")
        wait_until(lambda: attempts.count(Outcome.UNREACHABLE) >= 3, what="later attempts")
        assert attempts[0] is Outcome.HANDOVER and attempts.count(Outcome.HANDOVER) == 1
        assert len(client.hub_processes) == 1
    finally:
        client.stop()
    client.hub_processes[0].wait(5)


def test_no_handover_during_the_cool_down_or_without_autostart(tmp_path: Path) -> None:
    young = make_hub(tmp_path, handover_cooldown=60.0, version="0.1.0")
    old = make_hub(tmp_path, handover_cooldown=0.0, version="0.1.0")
    try:
        eager = HubClient(identity(version="9.0.0"), lambda: [], token=TOKEN,
                          hub_port=young.port)
        assert eager.register_once() is Outcome.REGISTERED
        cannot_start = HubClient(identity(version="9.0.0"), lambda: [], token=TOKEN,
                                 hub_port=old.port, autostart=False)
        assert cannot_start.register_once() is Outcome.REGISTERED
        same = HubClient(identity(version="0.1.0"), lambda: [], token=TOKEN, hub_port=old.port)
        assert same.register_once() is Outcome.REGISTERED
        assert not young.wait(0) and not old.wait(0)
    finally:
        young.stop()
        old.stop()


def test_sweep_drops_only_dead_silent_instances_and_idle_exit(tmp_path: Path) -> None:
    hub = make_hub(tmp_path, heartbeat_timeout=0.05, idle_exit=None)
    try:
        alive = socket.socket()
        alive.bind(("127.0.0.1", 0))
        alive.listen(4)
        for name, port in (("alive", alive.getsockname()[1]), ("dead", free_port())):
            status, _, _ = http("POST", f"http://127.0.0.1:{hub.port}/api/register",
                                {"id": name, "port": port})
            assert status == 200
        wait_until(lambda: hub.registry.silent(time.monotonic(), 0.05), what="silence")
        hub.sweep()
        assert sorted(hub.registry.instances) == ["alive"]
        alive.close()
        hub.sweep()
        assert list(hub.registry.instances) == []
        hub._idle_since -= 3600  # an hour idle: with --stay (idle_exit None) it stays
        hub.sweep()
        assert not hub.wait(0)
    finally:
        hub.stop()
    idle = make_hub(tmp_path, idle_exit=0.0)
    idle.sweep()
    assert idle.wait(0) and idle.exit_reason == "idle"


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    root = tmp_path / "projects"
    (root / "app").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (root / "escape").symlink_to(tmp_path / "elsewhere")
    return root


def test_start_a_serve_bridge_under_a_project_root(tmp_path: Path, projects: Path) -> None:
    def command(d: Path) -> list[str]:
        return [sys.executable, FAKE_BRIDGE, "serve", "--cwd", str(d), "--idle-exit", "10"]
    hub = make_hub(tmp_path, project_roots=(projects,), serve_command=command,
                   spawn_timeout=20.0)
    url = f"http://127.0.0.1:{hub.port}/api/instances"
    try:
        for cwd, status in ((str(tmp_path / "elsewhere"), 403),
                            (str(projects / "escape"), 403),
                            ("relative/dir", 400),
                            (str(projects / "missing"), 404)):
            assert http("POST", url, {"cwd": cwd})[0] == status, cwd
        assert http("POST", url, {})[0] == 400
        status, _, body = http("POST", url, {"cwd": str(projects / "app")}, timeout=30)
        assert status == 201, body
        created = json.loads(body)
        assert created["reused"] is False
        listing = {i["id"]: i for i in get_json(url)}
        assert listing[created["id"]]["origin"] == "serve"
        assert listing[created["id"]]["workspace"] == str((projects / "app").resolve())
        status, _, body = http("POST", url, {"cwd": str(projects / "app") + "/"})
        assert status == 200 and json.loads(body) == {"id": created["id"], "reused": True}
    finally:
        hub.stop()
        for child in hub.spawner.children:
            child.terminate()
            child.wait(5)


def test_serve_bridge_that_dies_early_is_a_502(tmp_path: Path, projects: Path) -> None:
    hub = make_hub(tmp_path, project_roots=(projects,),
                   serve_command=lambda d: [sys.executable, "-c", "raise SystemExit(3)"])
    try:
        status, _, body = http("POST", f"http://127.0.0.1:{hub.port}/api/instances",
                               {"cwd": str(projects / "app")})
        assert status == 502 and b"code 3" in body
    finally:
        hub.stop()


def test_no_project_roots_means_no_starts(tmp_path: Path, projects: Path) -> None:
    hub = make_hub(tmp_path)
    try:
        status, _, body = http("POST", f"http://127.0.0.1:{hub.port}/api/instances",
                               {"cwd": str(projects / "app")})
        assert status == 403 and b"projectRoots" in body
    finally:
        hub.stop()


def test_stop_is_prompt(hub: Hub) -> None:
    client = HubClient(identity(), lambda: [], token=TOKEN, hub_port=hub.port, heartbeat=3600,
                       autostart=False).start()
    assert client.wait_for(Outcome.REGISTERED, 5)
    with gevent.Timeout(3):
        client.stop()
    assert len(hub.registry) == 0
