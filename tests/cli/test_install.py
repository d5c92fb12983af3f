"""The install story of the README: a wheel built from a checkout, installed into a fresh
virtual environment (what ``pipx install`` and ``uv tool install`` do with it), works on its own."""

from __future__ import annotations


import pytest

import zcode_acp
from tests.cli.helpers import INITIALIZE, Bridge, clean_env, run, wheel_venv


@pytest.mark.timeout(900)  # a cold pip cache downloads the dependencies
def test_a_wheel_from_the_checkout_installs_into_a_fresh_venv_and_serves(tmp_path):
    venv = wheel_venv(tmp_path, "fresh")

    for command in ("zcode-acp", "zcode-acp-bridge"):
        done = run([str(venv / "bin" / command), "--version"], clean_env(tmp_path), timeout=30)
        assert done.stdout.strip() == f"zcode-acp {zcode_acp.version()}", done.stdout + done.stderr
    # An editor's launch: the command by absolute path, the simulator found beside it, one prompt.
    bridge = Bridge([str(venv / "bin" / "zcode-acp")], clean_env(tmp_path, ZCODE_BIN="zcode-sim"))
    assert "result" in bridge.request("initialize", INITIALIZE)
    session = bridge.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})["result"]
    answer = bridge.request("session/prompt", {"sessionId": session["sessionId"],
                                               "prompt": [{"type": "text", "text": "#sim stream count=3"}]})
    assert answer.get("result", {}).get("stopReason") == "end_turn", answer
    assert bridge.close() == 0
    # The hub's web page ships in the wheel too (package data).
    pages = list((venv / "lib").glob("python3*/site-packages/zcode_acp/hub/web/*"))
    assert pages, "the hub's web files are missing from the wheel"
