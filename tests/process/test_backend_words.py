"""The backend's own words reach the editor: its stderr when it dies, prose on stdout at once."""

import stat

from tests.process.reliability import running


def fake_cli(tmp_path, body: str) -> str:
    path = tmp_path / "fake-zcode"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_a_cli_that_exits_at_start_is_reported_with_its_stderr_in_stable_words(tmp_path):
    cli = fake_cli(tmp_path, "echo \"not logged in. Run 'zcode login' first.\" >&2; exit 3")
    with running(tmp_path, env={"ZCODE_BIN": cli}) as b:
        sid = b.new_session()
        b.prompt("p", sid, "hello")
        error = b.answer("p", timeout=5)["error"]
        assert error["code"] == -32603
        assert "exited (code 3)" in error["message"]
        assert "not logged in. Run 'zcode login' first." in error["message"]
    assert "not logged in" in (tmp_path / "bridge.log").read_text()  # logged at warning, not only debug


def test_a_cli_printing_prose_on_stdout_is_named_at_once_not_after_a_timeout(tmp_path):
    cli = fake_cli(tmp_path, "echo 'Welcome to ZCode! Please choose a model:'; sleep 30")
    with running(tmp_path, env={"ZCODE_BIN": cli, "ZCODE_ACP_CALL_TIMEOUT": "15"}) as b:
        sid = b.new_session()
        b.prompt("p", sid, "hello")
        error = b.answer("p", timeout=3)["error"]  # well before the 15 s create timeout
        assert "the ZCode CLI is printing non-protocol output (first line: 'Welcome to ZCode!" in error["message"]


def test_a_chinese_bridge_reports_the_clis_death_in_chinese_with_the_clis_own_words(tmp_path):
    """Issue 29: the bridge's words follow the session's language; the CLI's stderr passes as it is, the log stays English."""
    cli = fake_cli(tmp_path, "echo \"not logged in. Run 'zcode login' first.\" >&2; exit 3")
    with running(tmp_path, env={"ZCODE_BIN": cli, "LANG": "zh_CN.UTF-8"}) as b:
        sid = b.new_session()
        b.prompt("p", sid, "hello")
        error = b.answer("p", timeout=5)["error"]
        assert error["code"] == -32603
        assert "ZCode 后端已退出（退出码 3）：not logged in. Run 'zcode login' first." in error["message"], error
        assert "exited" not in error["message"]
    assert "ZCode backend exited (code 3)" in (tmp_path / "bridge.log").read_text()
