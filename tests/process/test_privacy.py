"""What leaves the machine on a default run: nothing (docs/privacy.md).

The bridge is started as an editor starts it, on the simulator, with the interpreter's audit hook
recording every socket connection and name lookup it makes (tests/fixtures/connect_audit/). A
default run — no remote access, no webhook, no quota key — talks only over local pipes, UNIX
sockets and loopback. The second test proves the recording sees the bridge's connections: with a
webhook on 127.0.0.1, its connection is in the log.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from pathlib import Path

import pytest

from tests.process.harness import bridge, run
from tests.webhook_receiver import Receiver

AUDIT = Path(__file__).parent.parent / "fixtures" / "connect_audit"


def audit_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"PYTHONPATH": str(AUDIT), "ZCODE_TEST_CONNECT_LOG": str(tmp_path / "connections.jsonl"), **extra}


def recorded(tmp_path: Path) -> list[dict]:
    path = tmp_path / "connections.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def leaves_the_machine(entry: dict) -> bool:
    """A connection or lookup whose target is not this machine (a UNIX socket, loopback, a local name)."""
    if entry["event"] == "socket.getaddrinfo":
        host = entry["target"][0]
        return host not in (None, "", "localhost") and not _loopback(host)
    family, address = entry["target"]
    if family == socket.AF_UNIX:
        return False
    return not _loopback(address[0] if isinstance(address, list) else address)


def _loopback(host: object) -> bool:
    try:
        return ipaddress.ip_address(str(host).split("%", 1)[0]).is_loopback
    except ValueError:
        return False


async def a_session_with_one_prompt(tmp_path: Path, env: dict[str, str]) -> None:
    async with bridge(tmp_path, env=env) as b:
        session = await b.new_session(str(tmp_path))
        result = await b.prompt(session, "hello")
        assert result.stop_reason == "end_turn"


@run
async def test_a_default_run_opens_no_connection_beyond_loopback(tmp_path):
    await a_session_with_one_prompt(tmp_path, audit_env(tmp_path))
    entries = recorded(tmp_path)
    assert [e for e in entries if leaves_the_machine(e)] == []


@pytest.mark.dialects("classic")
@run
async def test_the_recording_sees_the_bridges_own_connections(tmp_path):
    hook = Receiver()
    try:
        await a_session_with_one_prompt(tmp_path, audit_env(
            tmp_path, ZCODE_ACP_NOTIFY_URL=hook.url, ZCODE_ACP_NOTIFY_AFTER="0", ZCODE_ACP_NOTIFY_INTERVAL="0"))
        assert hook.wait_for(1), "the webhook got no notice"
    finally:
        hook.close()
    port = int(hook.url.split(":")[2].split("/")[0])
    connects = [e for e in recorded(tmp_path) if e["event"] == "socket.connect"]
    assert any(e["target"][1] == ["127.0.0.1", port] for e in connects), connects
    assert leaves_the_machine({"event": "socket.connect", "target": [socket.AF_INET, ["93.184.216.34", 443]]})
    assert leaves_the_machine({"event": "socket.getaddrinfo", "target": ["api.z.ai", 443]})
