"""The stdio path an editor launches: cheap imports, the right gevent patches, zcode-sim by absolute path."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import textwrap

import pytest

import zcode_acp
from zcode_acp.cli.runtime import PLUGIN_GROUPS, plugins_declared
from tests.cli.helpers import ZCODE_ACP, Bridge, INITIALIZE, clean_env, run

# Modules only some commands need: the stdio path must not import them — the command framework, the
# WebSocket stack (remote access is off), importlib.metadata (docs/performance.md, "Start-up").
NOT_ON_THE_STDIO_PATH = ("typer", "click", "rich", "zcode_acp.cli.app", "zcode_acp.cli.demo",
                         "zcode_acp.cli.doctor", "zcode_acp.cli.editors", "wsproto", "h11",
                         "zcode_acp.net.hub_client", "zcode_acp.actors.transport.remote",
                         "importlib.metadata")


def imported(importtime_stderr: str) -> set[str]:
    return {m.group(1) for m in re.finditer(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)", importtime_stderr, re.M)}


def test_the_bare_stdio_path_imports_no_command_framework(tmp_path):
    bridge = Bridge([sys.executable, "-X", "importtime", "-m", "zcode_acp"], clean_env(tmp_path, ZCODE_BIN="zcode-sim"))
    answer = bridge.request("initialize", INITIALIZE)
    assert answer["result"]["agentInfo"] == {"name": "zcode-acp", "title": "ZCode", "version": zcode_acp.version()}
    assert bridge.close() == 0
    modules = imported("".join(bridge.stderr))
    assert "zcode_acp.actors.supervisor" in modules  # the measurement saw the bridge start
    assert not [name for name in NOT_ON_THE_STDIO_PATH if name in modules]


# What only a later request, an option or a setting needs: the first session/new (which spawns no
# backend: its session is made on first use) must not import it (docs/performance.md, "Time to a
# first session"). The backend's plumbing and retries (a spawn), a Turn's busy retry (a prompt),
# the webhook's actor and formats (ZCODE_ACP_NOTIFY_URL), the trace's redaction and comparison
# (--trace), the rotating log file (`zcode-acp serve`), the Session actor's code (session/new makes
# a record: the first Session starts at the first use, and its code is imported after this answer),
# the quota watch and the key lookup (started once the first session/new is answered), the catalog of
# a language the bridge does not speak (ZCODE_ACP_LANG=en here).
NOT_ON_THE_FIRST_SESSION_PATH = ("tenacity", "secrets", "hmac", "difflib", "logging.handlers",
                                 "zcode_acp.actors.transport.backend_process", "zcode_acp.actors.notifier",
                                 "zcode_acp.protocol.notifications", "zcode_acp.protocol.trace_redaction",
                                 "zcode_acp.protocol.trace_compare", "zcode_acp.actors.session.actor",
                                 "zcode_acp.actors.turn", "zcode_acp.protocol.translator",
                                 "zcode_acp.actors.quota", "zcode_acp.config.coding_plan", "zcode_acp.protocol.quota",
                                 "zcode_acp.protocol.i18n.zh_cn")


def imported_before_answers(argv: list[str], env: dict[str, str], requests: list[tuple[str, dict]]) -> list[set[str]]:
    """What the bridge had imported (``-X importtime``) when it wrote each answer, in order.

    stderr is the same pipe as stdout, so the two interleave as they were written; a module is
    on a request's path if its line comes before that request's answer.
    """
    proc = subprocess.Popen([sys.executable, "-X", "importtime", *argv], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen: set[str] = set()
    found = []
    try:
        for request_id, (method, params) in enumerate(requests, 1):
            frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            proc.stdin.write((json.dumps(frame) + "\n").encode())
            proc.stdin.flush()
            while True:  # every read is bounded by the timeout of communicate() below if the bridge hangs
                line = proc.stdout.readline().decode()
                assert line, "the bridge closed its output"
                if line.startswith("import time:"):
                    seen |= imported(line)
                elif line.startswith("{") and json.loads(line).get("id") == request_id:
                    assert "result" in json.loads(line), line
                    found.append(set(seen))
                    break
    finally:
        proc.stdin.close()
        proc.communicate(timeout=30)
    return found


def test_the_first_session_new_is_answered_before_the_runtime_is_imported(tmp_path):
    """An editor writes session/new as soon as initialize is answered: it is answered before the
    runtime's import too (cli/early_answer.py), and the next request by the runtime."""
    env = clean_env(tmp_path, ZCODE_BIN="zcode-sim", ZCODE_ACP_LANG="en")
    _, first_session, next_request = imported_before_answers(["-m", "zcode_acp"], env, [
        ("initialize", INITIALIZE), ("session/new", {"cwd": str(tmp_path), "mcpServers": []}),
        ("initialize", INITIALIZE)])
    assert "zcode_acp.actors.supervisor" not in first_session and "gevent" not in first_session
    assert "zcode_acp.actors.supervisor" in next_request


def test_the_first_session_imports_nothing_a_later_request_or_an_option_needs(tmp_path):
    """The runtime's own first session/new (here not right after initialize, so not answered early)."""
    env = clean_env(tmp_path, ZCODE_BIN="zcode-sim", ZCODE_ACP_LANG="en")
    _, _, first_session, next_request = imported_before_answers(["-m", "zcode_acp"], env, [
        ("initialize", INITIALIZE), ("initialize", INITIALIZE),
        ("session/new", {"cwd": str(tmp_path), "mcpServers": []}),
        ("initialize", INITIALIZE)])  # any request after it: a cheap one that needs no Session
    assert "zcode_acp.actors.supervisor" in first_session  # the measurement saw the runtime
    assert [name for name in NOT_ON_THE_FIRST_SESSION_PATH if name in first_session] == []
    # The Session's code was imported right after that answer, not left to the first prompt, and the
    # quota watch started then, to learn the quota before that prompt.
    assert {"zcode_acp.actors.session.actor", "zcode_acp.actors.quota"} <= next_request


def test_the_serve_options_take_the_same_path_and_do_their_job(tmp_path):
    """``--log-level/--log-file/--trace`` as an editor's configuration passes them: still no typer."""
    log, trace = tmp_path / "bridge.log", tmp_path / "trace.jsonl"
    argv = [sys.executable, "-X", "importtime", "-m", "zcode_acp", "--log-level", "debug", f"--log-file={log}",
            "--trace", str(trace), "--trace-redact-content"]
    bridge = Bridge(argv, clean_env(tmp_path, ZCODE_BIN="zcode-sim"))
    assert "result" in bridge.request("initialize", INITIALIZE)
    assert bridge.close() == 0
    assert not [name for name in NOT_ON_THE_STDIO_PATH if name in imported("".join(bridge.stderr))]
    assert stat.S_IMODE(os.stat(log).st_mode) == stat.S_IMODE(os.stat(trace).st_mode) == 0o600
    assert " DEBUG " in log.read_text()  # the level and the file were both applied
    recorded = [json.loads(line) for line in trace.read_text().splitlines()]
    assert any(record.get("frame", {}).get("method") == "initialize" for record in recorded), recorded[:3]


def test_version_imports_neither_gevent_nor_typer(tmp_path):
    done = run([sys.executable, "-X", "importtime", "-m", "zcode_acp", "--version"], clean_env(tmp_path))
    assert done.returncode == 0
    modules = imported(done.stderr)
    assert "zcode_acp.cli.main" in modules
    assert not {"gevent", "pykka", "typer", "zcode_acp.actors.supervisor"} & modules


PATCHED = "from gevent import monkey; print(' '.join(sorted(monkey.saved)))"


def test_the_runtime_patches_what_patch_all_would_but_ssl(tmp_path):
    env = clean_env(tmp_path)
    ours = run([sys.executable, "-c", "from zcode_acp.cli import runtime; " + PATCHED], env)
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


def test_the_patches_notify_only_the_plugin_groups_looked_for(tmp_path):
    """``plugins_declared`` looks for these groups only: they must be all the patches fire."""
    code = ("from gevent import events; fired = set(); events.subscribers.append("
            "lambda event: fired.add(event.ENTRY_POINT_NAME)); "
            "from zcode_acp.cli import runtime; print(' '.join(sorted(fired)))")
    done = run([sys.executable, "-c", code], clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert set(done.stdout.split()) == set(PLUGIN_GROUPS)


def declare_plugin(folder, group: str) -> None:
    """A distribution in ``folder`` whose entry point in ``group`` writes each event's module to $PLUGIN_SAW."""
    (folder / "probe_plugin.py").write_text(textwrap.dedent("""
        import os
        def saw(event):
            with open(os.environ["PLUGIN_SAW"], "a") as out:
                out.write(type(event).__name__ + " " + getattr(event, "module_name", "-") + "\\n")
    """))
    info = folder / "probe_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: probe-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{group}]\nprobe = probe_plugin:saw\n")


def test_plugins_declared_reads_entry_points_files(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert not plugins_declared()
    declare_plugin(tmp_path, "gevent.plugins.monkey.will_patch_all")  # a group the patches do not fire
    assert not plugins_declared()
    assert plugins_declared(("gevent.plugins.monkey.will_patch_all",))


@pytest.mark.parametrize("group", PLUGIN_GROUPS)
def test_a_declared_gevent_plugin_still_sees_the_patches(tmp_path, group):
    declare_plugin(tmp_path, group)
    saw = tmp_path / "saw.txt"
    env = clean_env(tmp_path, PYTHONPATH=str(tmp_path), PLUGIN_SAW=str(saw))
    done = run([sys.executable, "-c", "from zcode_acp.cli import runtime"], env)
    assert done.returncode == 0, done.stderr
    seen = [line.split() for line in saw.read_text().splitlines()]
    if group.endswith(("did_patch_builtins", "did_patch_all")):  # once, when patching is over
        expected = "GeventDidPatchAllEvent" if group.endswith("all") else "GeventDidPatchBuiltinModulesEvent"
        assert [name for name, _ in seen] == [expected]
    else:
        assert {"os", "time", "socket", "select", "subprocess", "signal"} <= {module for _, module in seen}


def test_the_version_read_from_the_path_is_importlib_metadata_s(tmp_path, monkeypatch):
    from importlib import metadata

    assert zcode_acp._version_from_path() == metadata.version(zcode_acp.DIST_NAME)
    for folder, file, version in (("zcode_acp_bridge-7.1.dist-info", "METADATA", "7.1"),
                                  ("zcode_acp_bridge.egg-info", "PKG-INFO", "7.2")):
        entry = tmp_path / version
        (entry / folder).mkdir(parents=True)
        (entry / folder / file).write_text(f"Metadata-Version: 2.1\nName: zcode-acp-bridge\nVersion: {version}\n\n"
                                           "Version: not a header\n")
        monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(entry), *sys.path])
        assert zcode_acp._version_from_path() == version == metadata.version(zcode_acp.DIST_NAME)


def test_the_collector_is_back_on_once_the_stdio_path_has_started(tmp_path):
    """``main.serve`` turns the cyclic GC off while modules load; ``tune_gc`` turns it back on."""
    code = ("import gc; gc.disable(); from zcode_acp.cli import runtime; runtime.tune_gc(); "
            "print(gc.isenabled(), gc.get_threshold()[0])")
    done = run([sys.executable, "-c", code], clean_env(tmp_path))
    assert done.stdout.split() == ["True", "100000"], done.stderr


def _not_a_program(tmp_path, kind: str) -> tuple[str, str]:
    """A ZCODE_BIN that cannot start, and the fix the bridge must name for it."""
    if kind == "missing":
        return str(tmp_path / "no-such-zcode"), "set ZCODE_BIN to the ZCode CLI's path"
    if kind == "not-on-path":
        return "zcode-not-installed", "set ZCODE_BIN to its absolute path"
    if kind == "folder":
        (tmp_path / "zcode-folder").mkdir()
        return str(tmp_path / "zcode-folder"), "set ZCODE_BIN to the zcode program inside it"
    path = tmp_path / "zcode"
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o644)
    return str(path), f"chmod +x {path}"


@pytest.mark.parametrize("kind", ["missing", "not-on-path", "folder", "not-executable"])
def test_a_zcode_bin_that_cannot_start_is_named_at_start_with_the_fix_and_initialize_answers(tmp_path, kind):
    zcode_bin, fix = _not_a_program(tmp_path, kind)
    bridge = Bridge([ZCODE_ACP], clean_env(tmp_path, ZCODE_BIN=zcode_bin))
    assert "result" in bridge.request("initialize", INITIALIZE)  # the editor's first contact still works
    session = bridge.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})["result"]
    answer = bridge.request("session/prompt", {"sessionId": session["sessionId"],
                                               "prompt": [{"type": "text", "text": "hello"}]})
    assert fix in answer["error"]["message"], answer  # the prompt's error names the same fix
    assert bridge.close() == 0
    [warning] = [line for line in bridge.stderr if line.startswith("zcode-acp: warning: ")]
    assert f"ZCODE_BIN={zcode_bin!r}" in warning and fix in warning, bridge.stderr
    assert "Traceback" not in "".join(bridge.stderr)


def test_a_zcode_home_that_cannot_be_made_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "a-file").write_text("")
    home = tmp_path / "a-file" / "zcode-home"
    done = run([ZCODE_ACP], clean_env(tmp_path, ZCODE_BIN="zcode-sim", ZCODE_HOME=str(home)), timeout=30)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [f"zcode-acp: ZCODE_HOME={str(home)!r} cannot be created "
                                        f"({tmp_path / 'a-file'} is not a folder): set ZCODE_HOME to a folder "
                                        "you can write"]


def test_the_suite_patches_what_the_entry_points_patch(tmp_path):
    """tests/conftest.py imports cli/runtime.py as every entry point does, so the suite runs the ssl users
    run: unpatched (issue 29). The simulator, imported into the suite by its tests, patches no more."""
    from gevent import monkey

    import zcode_acp.sim.cli016  # noqa: F401  (sim/server.py patches at import: it must not add ssl)

    bridge = run([sys.executable, "-c", "from zcode_acp.cli import runtime; " + PATCHED], clean_env(tmp_path))
    assert bridge.returncode == 0, bridge.stderr
    patched = set(monkey.saved) - {"_gevent_saved_patch_all_module_settings"}  # patch_all's note of its arguments
    assert patched == set(bridge.stdout.split())
    assert not monkey.is_module_patched("ssl") and "ssl" not in monkey.saved


def test_every_entry_point_patches_through_the_runtime_and_nothing_else_patches():
    """The commands that run the actor tree or the hub (the stdio path; hub, serve, replay) import
    cli/runtime.py before they start; no other module of the bridge calls ``patch_all``."""
    from pathlib import Path

    root = Path(zcode_acp.__file__).resolve().parent.parent
    main = (root / "cli" / "main.py").read_text()
    assert "from zcode_acp.cli import runtime" in main
    app = (root / "cli" / "app.py").read_text()
    for command in ("def hub(", "def serve_command(", "def replay("):
        body = app.split(command, 1)[1].split("\n@app.", 1)[0]
        assert "from zcode_acp.cli import runtime" in body, command
    assert "from zcode_acp.cli import runtime" in (root / "cli" / "serve.py").read_text()
    patching = [str(path.relative_to(root)) for folder in ("actors", "cli", "config", "hub", "net", "protocol")
                for path in (root / folder).rglob("*.py") if "monkey.patch_all(" in path.read_text()]
    assert patching == [], patching
