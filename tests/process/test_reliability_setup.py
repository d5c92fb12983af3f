"""Issue 9, configuration, files and processes (items 15, 16, 17)."""

import os
import signal
import stat
import subprocess

import pytest

from tests.process.raw import RawBridge
from tests.process.reliability import child_pid, running, text_of, wait_gone
from tests.process.test_reliability_hangs import until_text


# -- item 15 ------------------------------------------------------------------------------------------


@pytest.mark.xfail(strict=True, reason="issue 9 item 15: Config.from_env must validate ZCODE_ACP_MODE "
                                       "(protocol.session_config.validate_mode) and the CLI exit with a clear message")
def test_an_unknown_mode_in_the_environment_is_refused_at_start(tmp_path):
    bridge = RawBridge(tmp_path, env={"ZCODE_ACP_MODE": "bogus"})
    try:
        code = bridge.proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        if bridge.proc.poll() is None:
            bridge.proc.kill()
            bridge.proc.wait(timeout=5)
        bridge.log.close()
    assert code not in (None, 0)
    assert "ZCODE_ACP_MODE" in (tmp_path / "bridge.log").read_text()
    assert bridge.lines.get(timeout=2) == b""  # nothing on stdout


@pytest.mark.xfail(strict=True, reason="issue 9 item 15: Supervisor.handle_Forked must give the fork its source's "
                                       "settings (the Forked message should carry them), not SessionSettings(default)")
def test_a_forked_session_reports_its_sources_mode(tmp_path):
    with running(tmp_path) as b:
        sid = b.new_session()
        assert "result" in b.call("mode", "session/set_mode", {"sessionId": sid, "modeId": "plan"})
        forked = b.call("fork", "_session/fork", {"sessionId": sid})
        assert forked["result"]["modes"]["currentModeId"] == "plan", forked


# -- item 16 ------------------------------------------------------------------------------------------


@pytest.mark.xfail(strict=True, reason="issue 9 item 16: LazySessionStore must create ZCODE_HOME and every parent "
                                       "it makes with mode 0700 whatever the umask")
def test_zcode_home_and_its_new_parents_are_private_under_umask_000(tmp_path):
    home = tmp_path / "made" / "for" / "zcode-home"
    old = os.umask(0)
    try:
        bridge_env = {"ZCODE_HOME": str(home)}
        with running(tmp_path, env=bridge_env) as b:
            os.umask(old)
            b.new_session()
    finally:
        os.umask(old)
    for folder in (tmp_path / "made", tmp_path / "made" / "for", home, home / "v2"):
        mode = stat.S_IMODE(folder.stat().st_mode)
        assert mode & 0o077 == 0, f"{folder} is {oct(mode)}"


@pytest.mark.xfail(strict=True, reason="issue 9 item 16: LazySessionStore must remove stale "
                                       ".acp-lazy-sessions.json.<pid>.tmp files of dead processes at start")
def test_temporary_files_left_by_a_killed_bridge_are_cleaned_at_start(tmp_path):
    folder = tmp_path / "zcode-home" / "v2"
    folder.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = folder / f".acp-lazy-sessions.json.{dead.pid}.tmp"
    stale.write_text('{"half": ')
    with running(tmp_path) as b:
        b.new_session()
        assert not stale.exists()


@pytest.mark.xfail(strict=True, reason="issue 9 item 16: session/new must normalise cwd (os.path.normpath) and "
                                       "require an existing directory (Supervisor._absolute_cwd)")
def test_cwd_is_normalised_and_must_be_an_existing_directory(tmp_path):
    with running(tmp_path) as b:
        missing = b.call("missing", "session/new", {"cwd": str(tmp_path / "no" / "such"), "mcpServers": []})
        assert missing.get("error", {}).get("code") == -32602, missing
        sid = b.new_session(cwd="/tmp/../tmp/./")
        b.prompt("p", sid, "#sim stream count=1")
        assert b.answer("p")["result"]["stopReason"] == "end_turn"
        [create] = [t for t in b.trace() if t.get("method") == "session/create"]
        assert create["params"]["workspace"]["workspacePath"] == "/tmp"


# -- item 17 ------------------------------------------------------------------------------------------


@pytest.mark.xfail(strict=True, reason="issue 9 item 17: a SIGKILLed bridge must take the backend's whole process "
                                       "group down (watchdog process or subreaper), not only its direct child")
def test_sigkill_of_the_bridge_takes_the_backends_children_down(tmp_path):
    with running(tmp_path) as b:
        sid = b.new_session()
        b.prompt("p", sid, "#sim spawn_child")
        child = child_pid(until_text(b, sid, r"child \d+ ").group(0))
        b.others.add(child)
        backend = b.backend()
        b.raw.proc.send_signal(signal.SIGKILL)
        b.raw.proc.wait(timeout=5)
        assert wait_gone(backend, 3), "the backend survived"
        assert wait_gone(child, 3), "the backend's child survived the bridge"
