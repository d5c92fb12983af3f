"""``zcode-acp serve`` as a process on the simulator, driven through the real hub."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import gevent
import pytest

from tests.hub.harness import HubProcess, Process, get_json, http
from tests.serve.harness import AcpClient, ServeProcess, open_session, prompt, serve_env

EXIT_DEADLINE = 3.0  # SIGTERM → exit 0, running turns answered (docs/service.md)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.md").write_text("a project\n")
    return folder.resolve()


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[HubProcess]:
    # Default heartbeat timeout (30 s): an instance leaves the listing only by unregistering.
    process = HubProcess(tmp_path, "--stay")
    yield process
    assert process.stop() == 0


@pytest.fixture
def started() -> Iterator[list[Process]]:
    processes: list[Process] = []
    yield processes
    for process in processes:
        if process.proc.poll() is None:
            process.kill()


def instances(hub: HubProcess) -> list[dict]:
    listed: list[dict] = get_json(f"{hub.url}/api/instances")
    return listed


def test_a_prompt_through_the_hub_with_sessions_pinned_and_logs_by_session(
        tmp_path: Path, project: Path, hub: HubProcess, started: list[Process]) -> None:
    log_file = tmp_path / "serve.log"
    serve = ServeProcess(tmp_path, project, hub.port, log_file=log_file)
    started.append(serve)
    (listed,) = [i for i in instances(hub) if i["id"] == serve.instance_id]
    assert listed["origin"] == "serve" and listed["workspace"] == str(project) and listed["pid"] == serve.proc.pid

    client = AcpClient.through_hub(hub.port, serve.instance_id)
    session_id = open_session(client, project)
    answer = client.answer(prompt(client, session_id, "hello from a phone"))
    assert answer["result"]["stopReason"] == "end_turn"
    assert "hello from a phone" in client.text()

    other = tmp_path / "elsewhere"
    other.mkdir()
    refused = client.call("session/new", {"cwd": str(other), "mcpServers": []})
    assert refused["error"]["code"] == -32602 and str(project) in refused["error"]["message"]
    refused = client.call("session/load", {"sessionId": session_id, "cwd": str(other), "mcpServers": []})
    assert refused["error"]["code"] == -32602 and str(project) in refused["error"]["message"]

    # The hub lists the session under this instance soon (serve registers when its sessions change).
    deadline = time.monotonic() + 5
    while not any(s["sessionId"] == session_id for i in instances(hub) for s in i["sessions"]):
        assert time.monotonic() < deadline, instances(hub)
        gevent.sleep(0.2)  # polls the hub's answer, bounded by the deadline (a heartbeat alone is 10 s)
    client.close()

    assert serve.stop() == 0
    assert stat.S_IMODE(log_file.stat().st_mode) == 0o600
    lines = [line for line in log_file.read_text().splitlines() if f"session={session_id}" in line]
    assert any("new in" in line for line in lines) and any("turn started" in line for line in lines), lines
    assert any("turn ended" in line for line in lines), lines


def test_a_killed_backend_is_restarted_and_the_session_resumed(
        tmp_path: Path, project: Path, hub: HubProcess, started: list[Process]) -> None:
    # An unknown dialect name makes the simulator say so on stderr (then speak the classic one):
    # a line the bridge must log when the process dies.
    serve = ServeProcess(tmp_path, project, hub.port, ZCODE_SIM_DIALECT="chatty")
    started.append(serve)
    client = AcpClient.through_hub(hub.port, serve.instance_id)
    session_id = open_session(client, project)
    assert client.answer(prompt(client, session_id, "first"))["result"]["stopReason"] == "end_turn"
    first_pid = int(serve.wait_line(r"started backend pid (\d+)").group(1))

    os.kill(first_pid, signal.SIGKILL)
    serve.wait_line(r"ZCode backend .*; its last words on stderr:")
    serve.wait_line(r"^  zcode-sim: unknown ZCODE_SIM_DIALECT 'chatty'")
    answer = client.answer(prompt(client, session_id, "second, after the crash"))
    assert "result" in answer and answer["result"]["stopReason"] == "end_turn", (answer, serve.lines)
    assert "second, after the crash" in client.text()
    pids = [int(m.group(1)) for m in map(re.compile(r"started backend pid (\d+)").search, serve.lines) if m]
    assert len(pids) == 2 and pids[1] != first_pid, serve.lines
    client.close()
    assert serve.stop() == 0


def test_sigterm_answers_the_running_turn_unregisters_and_exits_0_in_time(
        tmp_path: Path, project: Path, hub: HubProcess, started: list[Process]) -> None:
    serve = ServeProcess(tmp_path, project, hub.port)
    started.append(serve)
    client = AcpClient.through_hub(hub.port, serve.instance_id)
    session_id = open_session(client, project)
    running = prompt(client, session_id, "#sim slow count=200 interval=0.05")
    client.wait_update("agent_message_chunk")  # the turn is under way

    begun = time.monotonic()
    serve.proc.send_signal(signal.SIGTERM)
    answer = client.answer(running)
    assert answer["result"]["stopReason"] == "cancelled", answer
    assert serve.proc.wait(EXIT_DEADLINE) == 0
    assert time.monotonic() - begun < EXIT_DEADLINE
    hub.wait_line(rf"instance {serve.instance_id} unregistered")
    assert all(i["id"] != serve.instance_id for i in instances(hub))


def test_idle_exit_waits_for_clients_to_leave(
        tmp_path: Path, project: Path, hub: HubProcess, started: list[Process]) -> None:
    idle_minutes = 0.02  # 1.2 s
    serve = ServeProcess(tmp_path, project, hub.port, "--idle-exit", str(idle_minutes))
    started.append(serve)
    client = AcpClient.through_hub(hub.port, serve.instance_id)
    session_id = open_session(client, project)
    assert client.answer(prompt(client, session_id, "still here"))["result"]["stopReason"] == "end_turn"
    gevent.sleep(idle_minutes * 60 * 2)  # time passing is the point: an attached client keeps it alive
    assert serve.proc.poll() is None, serve.lines
    left = time.monotonic()
    client.close()
    assert serve.proc.wait(15) == 0
    assert time.monotonic() - left >= idle_minutes * 60
    serve.wait_line(r"tearing down: idle for 0\.02 minute")
    hub.wait_line(rf"instance {serve.instance_id} unregistered")


def test_systemd_notify_ready_watchdog_stopping(tmp_path: Path, project: Path, started: list[Process]) -> None:
    address = str(tmp_path / "notify.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind(address)
        listener.settimeout(10)
        serve = ServeProcess(tmp_path, project, None, registered=False, NOTIFY_SOCKET=address,
                             WATCHDOG_USEC="200000")
        started.append(serve)
        ready = listener.recv(4096).decode()
        assert "READY=1" in ready.splitlines() and f"MAINPID={serve.proc.pid}" in ready
        assert listener.recv(4096) == b"WATCHDOG=1"  # every 0.1 s (WatchdogSec / 2)
        serve.proc.send_signal(signal.SIGTERM)
        while (message := listener.recv(4096)) == b"WATCHDOG=1":
            pass
        assert message == b"STOPPING=1"
        assert serve.proc.wait(EXIT_DEADLINE) == 0


def test_without_a_token_serve_refuses_with_exit_2(tmp_path: Path, project: Path) -> None:
    env = serve_env(tmp_path, None)
    del env["ZCODE_ACP_REMOTE_TOKEN"]
    process = Process([sys.executable, "-m", "zcode_acp", "serve", "--cwd", str(project)], env)
    assert process.proc.wait(20) == 2
    process.wait_line(r"needs a token: set ZCODE_ACP_REMOTE_TOKEN")


def test_the_hub_starts_a_serve_bridge_for_a_project(tmp_path: Path, project: Path) -> None:
    """``POST /api/instances {cwd}`` runs this very command (with ``--idle-exit 10``), detached."""
    hub = HubProcess(tmp_path, "--stay", **{k: v for k, v in serve_env(tmp_path, None).items()
                                            if k.startswith(("ZCODE_BIN", "ZCODE_HOME", "ZCODE_SIM", "PATH"))},
                     ZCODE_ACP_PROJECT_ROOTS=str(project.parent))
    pid = 0
    try:
        status, _, body = http("POST", f"{hub.url}/api/instances", {"cwd": str(project)}, timeout=30)
        assert status == 201, body
        instance_id = json.loads(body)["id"]
        (listed,) = [i for i in instances(hub) if i["id"] == instance_id]
        assert listed["origin"] == "serve" and listed["workspace"] == str(project)
        pid = listed["pid"]
        client = AcpClient.through_hub(hub.port, instance_id)
        session_id = open_session(client, project)
        assert client.answer(prompt(client, session_id, "hello"))["result"]["stopReason"] == "end_turn"
        client.close()
        os.kill(pid, signal.SIGTERM)
        hub.wait_line(rf"instance {instance_id} unregistered")
    finally:
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        assert hub.stop() == 0
