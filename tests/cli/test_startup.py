"""The stdio path an editor launches: cheap imports, the right gevent patches, zcode-sim by absolute path."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.cli.helpers import ZCODE_ACP, Bridge, INITIALIZE, clean_env, run

# Modules only some commands need: the bare stdio path must not import them.
NOT_ON_THE_STDIO_PATH = ("typer", "click", "rich", "zcode_acp.actors.cli.app", "zcode_acp.actors.cli.demo",
                         "zcode_acp.actors.cli.doctor", "zcode_acp.actors.cli.editors")


def imported(importtime_stderr: str) -> set[str]:
    return {m.group(1) for m in re.finditer(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)", importtime_stderr, re.M)}


def test_the_bare_stdio_path_imports_no_command_framework(tmp_path):
    bridge = Bridge([sys.executable, "-X", "importtime", "-m", "zcode_acp"], clean_env(tmp_path, ZCODE_BIN="zcode-sim"))
    answer = bridge.request("initialize", INITIALIZE)
    assert answer["result"]["agentInfo"]["name"] == "zcode-acp"
    assert bridge.close() == 0
    modules = imported("".join(bridge.stderr))
    assert "zcode_acp.actors.supervisor" in modules  # the measurement saw the bridge start
    assert not [name for name in NOT_ON_THE_STDIO_PATH if name in modules]


def test_version_imports_neither_gevent_nor_typer(tmp_path):
    done = run([sys.executable, "-X", "importtime", "-m", "zcode_acp", "--version"], clean_env(tmp_path))
    assert done.returncode == 0
    modules = imported(done.stderr)
    assert "zcode_acp.actors.cli.main" in modules
    assert not {"gevent", "pykka", "typer", "zcode_acp.actors.supervisor"} & modules


PATCHED = "from gevent import monkey; print(' '.join(sorted(monkey.saved)))"


def test_the_runtime_patches_what_patch_all_would_but_ssl(tmp_path):
    env = clean_env(tmp_path)
    ours = run([sys.executable, "-c", "from zcode_acp.actors.cli import runtime; " + PATCHED], env)
    everything = run([sys.executable, "-c", "from gevent import monkey; monkey.patch_all(); " + PATCHED], env)
    assert ours.returncode == everything.returncode == 0, ours.stderr + everything.stderr
    assert set(ours.stdout.split()) == set(everything.stdout.split()) - {"ssl", "_gevent_saved_patch_all_module_settings"}
    assert {"os", "_thread", "threading", "time", "socket", "select", "subprocess", "signal", "queue"} <= \
        set(ours.stdout.split())
    assert ours.stderr == ""  # no MonkeyPatchWarning


def test_an_editor_launching_by_absolute_path_runs_zcode_sim_without_the_venv_on_path(tmp_path):
    """ZCODE_BIN=zcode-sim with PATH lacking the venv: the simulator next to the interpreter is used."""
    bridge = Bridge([ZCODE_ACP], clean_env(tmp_path, ZCODE_BIN="zcode-sim"))
    assert "result" in bridge.request("initialize", INITIALIZE)
    session = bridge.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})["result"]
    answer = bridge.request("session/prompt", {"sessionId": session["sessionId"],
                                               "prompt": [{"type": "text", "text": "#sim stream count=3"}]})
    assert answer.get("result", {}).get("stopReason") == "end_turn", answer
    assert bridge.close() == 0


def test_a_missing_backend_names_zcode_bin_in_the_error(tmp_path):
    bridge = Bridge([ZCODE_ACP], clean_env(tmp_path, ZCODE_BIN="zcode-not-installed"))
    bridge.request("initialize", INITIALIZE)
    session = bridge.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})["result"]
    answer = bridge.request("session/prompt", {"sessionId": session["sessionId"],
                                               "prompt": [{"type": "text", "text": "hello"}]})
    assert "ZCODE_BIN" in answer["error"]["message"] and "zcode-not-installed" in answer["error"]["message"]
    assert bridge.close() == 0


def test_python_dash_m_and_the_alias_command_are_the_same_program(tmp_path):
    alias = str(subprocess.os.path.join(subprocess.os.path.dirname(ZCODE_ACP), "zcode-acp-bridge"))
    assert run([alias, "--version"], clean_env(tmp_path)).stdout == run([ZCODE_ACP, "--version"], clean_env(tmp_path)).stdout
