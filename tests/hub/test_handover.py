"""The hub stays up: its version is this distribution's, and it hands over only to a strictly
newer bridge, at most once per version, to its unit when it runs under one (docs/hub.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.hub.harness import REPO, TOKEN, HubProcess, http, wait_until
from tests.hub.test_hub_client import identity, make_hub, recorder_command, starts
from zcode_acp.net.hub_client import HubClient, Outcome
from zcode_acp.hub.handovers import HandoverRecord
from zcode_acp.hub.main import HANDED_OVER_TO_SUPERVISOR
from zcode_acp.hub.versioning import source_tree_version


def setup_cfg_version() -> str:
    version = source_tree_version(Path(REPO))
    assert version, "the checkout's setup.cfg names zcode-acp-bridge and a version"
    return version


def test_the_hub_version_is_this_distributions_not_the_unrelated_zcode_acp(tmp_path: Path) -> None:
    # An unrelated project called zcode-acp installed in the same environment (ahead on the path).
    other = tmp_path / "site" / "zcode_acp-9.9.9.dist-info"
    other.mkdir(parents=True)
    (other / "METADATA").write_text("Metadata-Version: 2.1\nName: zcode-acp\nVersion: 9.9.9\n\n")
    (other / "RECORD").write_text("")
    script = "from zcode_acp.hub.versioning import package_version; print(package_version())"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO,
                         env={"PYTHONPATH": f"{tmp_path / 'site'}:{REPO}", "PATH": "/usr/bin:/bin"},
                         timeout=30, check=True).stdout.strip()
    assert out == setup_cfg_version()


def test_a_source_tree_reports_its_setup_cfg_version(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = zcode-acp-bridge\nversion = 3.4.5\n")
    assert source_tree_version(tmp_path) == "3.4.5"
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = zcode-acp\nversion = 9.9.9\n")
    assert source_tree_version(tmp_path) is None


def test_the_running_hub_reports_the_bridges_version(tmp_path: Path) -> None:
    hub = HubProcess(tmp_path)
    try:
        status, _, body = http("GET", f"{hub.url}/api/health", token=None)
        assert status == 200 and json.loads(body)["version"] == setup_cfg_version()
    finally:
        hub.stop()


def register(port: int, version: str, **extra: Any) -> dict[str, Any]:
    body = {"id": f"bridge-{version}", "pid": 1, "port": 45678, "origin": "editor",
            "workspace": "/w", "startedAt": 1, "version": version, "canStartHub": True, **extra}
    status, _, answer = http("POST", f"http://127.0.0.1:{port}/api/register", body)
    assert status == 200, answer
    parsed: dict[str, Any] = json.loads(answer)
    return parsed


def test_a_hand_over_happens_once_per_version_across_hubs(tmp_path: Path) -> None:
    record = tmp_path / "state" / "hub-handovers.json"
    first = make_hub(tmp_path, handover_cooldown=0.0, version="0.1.0", handover_record=record)
    try:
        assert register(first.port, "0.2.0").get("handover") is True
        assert first.wait(5) and first.exit_reason == "handover"
    finally:
        first.stop()
    assert oct(record.stat().st_mode & 0o777) == "0o600"
    # Its successor reports the old version after all: the same bridge must not evict it again.
    successor = make_hub(tmp_path, handover_cooldown=0.0, version="0.1.0", handover_record=record)
    try:
        assert "handover" not in register(successor.port, "0.2.0")
        assert "handover" not in register(successor.port, "0.1.0")     # equal: never
        assert "handover" not in register(successor.port, "0.0.9")     # older: never
        assert not successor.wait(0.3)
        assert register(successor.port, "0.3.0").get("handover") is True  # a new version: once
    finally:
        successor.stop()
    assert HandoverRecord(record).already("0.3.0")


def test_a_supervised_hub_leaves_the_restart_to_its_unit(tmp_path: Path) -> None:
    command, record = recorder_command(tmp_path)
    hub = make_hub(tmp_path, handover_cooldown=0.0, version="0.1.0", supervised=True)
    client = HubClient(identity(version="0.2.0"), lambda: [], token=TOKEN, hub_port=hub.port,
                       heartbeat=0.05, hub_command=command)
    attempts: list[Outcome] = []
    original = client.register_once
    client.register_once = lambda: attempts.append(original()) or attempts[-1]  # type: ignore
    client.start()
    try:
        assert hub.wait(5) and hub.exit_reason == "handover"
        # The unit restarts that hub: the bridge keeps knocking, quickly, and starts none.
        wait_until(lambda: attempts.count(Outcome.UNREACHABLE) >= 5, what="5 attempts after")
        assert attempts[0] is Outcome.SUPERVISED_HANDOVER
        assert client.hub_processes == [] and starts(record) == 0
    finally:
        client.stop()


def test_a_stay_hub_that_hands_over_exits_non_zero_for_its_unit(tmp_path: Path) -> None:
    hub = HubProcess(tmp_path, "--stay", ZCODE_ACP_HUB_HANDOVER_COOLDOWN="0",
                     XDG_STATE_HOME=str(tmp_path / "state"))
    try:
        answer = register(hub.port, "999.0.0")
        assert answer["handover"] is True and answer["successor"] == "supervisor"
        assert hub.proc.wait(10) == HANDED_OVER_TO_SUPERVISOR != 0
    finally:
        hub.stop()
    assert json.loads((tmp_path / "state" / "zcode-acp" / "hub-handovers.json").read_text()) == \
        ["999.0.0"]
