"""The bridge driven by the official TypeScript SDK (``@agentclientprotocol/sdk``) as its client (issue 21).

``sdk_client.mjs`` is a small client written with the SDK's own API; the SDK
parses every message with the ACP schema before its handlers see it, so what
arrives here is what a TypeScript client would be given. The SDK and its Node
come from ``.ci/clients``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path


from zcode_acp.cli import editors
from tests.cli.helpers import SYSTEM_PATH
from tests.clients.conftest import BIN, CLIENTS, NODE, require

SDK = CLIENTS / "@agentclientprotocol" / "sdk" / "package.json"
CLIENT = Path(__file__).with_name("sdk_client.mjs")


def drive(tmp_path: Path, marker: str, prompts: list[str]) -> dict:
    require(SDK)
    env = {key: value for key, value in os.environ.items() if not key.startswith("ZCODE_")}
    env.update(PATH=f"{BIN}:{SYSTEM_PATH}", ZCODE_BIN="zcode-sim", ZCODE_HOME=str(tmp_path / "zcode-home"),
               ZCODE_SIM_DATA=marker, NODE_PATH=str(CLIENTS))
    job = {"command": editors.this_install().argv(), "cwd": str(tmp_path), "prompts": prompts}
    # The script's imports resolve from its own folder upwards: run a copy beside the installed SDK.
    script = CLIENTS.parent / CLIENT.name
    script.write_text(CLIENT.read_text())
    done = subprocess.run([str(NODE), str(script), json.dumps(job)], env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_a_typescript_sdk_client_gets_every_card_with_an_object_raw_output(tmp_path, marker):
    report = drive(tmp_path, marker, ["#sim demo\nShow me around this project.",
                                      "#sim permission\nClean up the build folder."])
    assert report["initialize"]["agentInfo"]["name"] == "zcode-acp"
    assert [answer["stopReason"] for answer in report["answers"]] == ["end_turn", "end_turn"]
    assert report["exitCode"] == 0
    updates = report["updates"]
    cards = {u["toolCallId"]: u["title"] for u in updates if u["sessionUpdate"] == "tool_call"}
    assert sorted(cards.values()) == ["Bash: ls -la", "Bash: rm -rf build/", "Read: README.md"]
    closed = {u["toolCallId"] for u in updates if u["sessionUpdate"] == "tool_call_update"
              and u.get("status") == "completed"}
    assert closed == set(cards)  # the Read card and the approved Bash card completed too
    raw = [u["rawOutput"] for u in updates if "rawOutput" in u]
    assert raw and all(isinstance(value, dict) for value in raw), raw  # Toad drops a string
    [asked] = report["permissions"]
    assert asked["toolCall"]["title"] == "Bash: rm -rf build/"
    text = "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")
    assert "Permission granted" in text
