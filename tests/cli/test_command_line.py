"""The command line as a user meets it: errors are one line and exit 2, help says everything."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

import zcode_acp
from zcode_acp.cli.app import app
from zcode_acp.config.settings import SETTINGS
from zcode_acp.cli.demo import simulator_scenarios
from zcode_acp.sim.scenarios import BUILTIN
from tests.cli.helpers import ZCODE_ACP, Bridge, INITIALIZE, clean_env, run

BAD_INPUTS = [
    (["--log-level", "bogus"], {}, "--log-level 'bogus' is not one of debug, info, warning, error"),
    (["--log-level", "bogus", "demo"], {}, "--log-level 'bogus' is not one of"),
    (["--log-file", "/nonexistent/folder/bridge.log"], {}, "--log-file '/nonexistent/folder/bridge.log' cannot be opened"),
    (["demo", "--cwd", "/nonexistent"], {}, "--cwd '/nonexistent' is not a directory"),
    ([], {"ZCODE_ACP_MODE": "bogus"}, "ZCODE_ACP_MODE='bogus' is not valid: expected one of plan, build, edit, yolo, auto"),
    ([], {"ZCODE_ACP_CALL_TIMEOUT": "abc"}, "ZCODE_ACP_CALL_TIMEOUT='abc' is not valid"),
    (["--log-level", "debug"], {"ZCODE_ACP_BUSY_LIMIT": "-1"}, "ZCODE_ACP_BUSY_LIMIT='-1' is not valid"),
    ([], {"ZCODE_ACP_SILENCE_PROBE": "nan"}, "ZCODE_ACP_SILENCE_PROBE='nan' is not valid"),
    ([], {"ZCODE_ACP_INTERACTION_TIMEOUT": "soon"}, "ZCODE_ACP_INTERACTION_TIMEOUT='soon' is not valid"),
    # Issue 21: remote access and tracing settings too (they were warned about and ignored), on every
    # command that serves; and a ZCODE_HOME that cannot be made.
    ([], {"ZCODE_ACP_REMOTE_PORT": "abc"}, "ZCODE_ACP_REMOTE_PORT='abc' is not valid: expected a port number"),
    ([], {"ZCODE_ACP_REMOTE": "maybe"}, "ZCODE_ACP_REMOTE='maybe' is not valid: expected one of 1/on/true/yes"),
    ([], {"ZCODE_ACP_HUB_PORT": "99999"}, "ZCODE_ACP_HUB_PORT='99999' is not valid"),
    ([], {"ZCODE_ACP_HUB_AUTOSTART": "perhaps"}, "ZCODE_ACP_HUB_AUTOSTART='perhaps' is not valid"),
    ([], {"ZCODE_ACP_PROJECT_ROOTS": "src/projects"}, "ZCODE_ACP_PROJECT_ROOTS='src/projects' is not valid: "
                                                      "expected absolute folders"),
    # Issue 29: a bad public host name was only warned about.
    ([], {"ZCODE_ACP_PUBLIC_HOST": "agent.example.org/path"}, "ZCODE_ACP_PUBLIC_HOST='agent.example.org/path' is not valid: "
                                                             "expected host names"),
    (["hub"], {"ZCODE_ACP_PUBLIC_HOST": "a b"}, "ZCODE_ACP_PUBLIC_HOST='a b' is not valid"),
    ([], {"ZCODE_ACP_TRACE_REDACT_CONTENT": "maybe"}, "ZCODE_ACP_TRACE_REDACT_CONTENT='maybe' is not valid"),
    (["serve", "--cwd", "/tmp"], {"ZCODE_ACP_REMOTE_PORT": "0"}, "ZCODE_ACP_REMOTE_PORT='0' is not valid"),
    (["hub"], {"ZCODE_ACP_HUB_PORT": "http"}, "ZCODE_ACP_HUB_PORT='http' is not valid"),
    ([], {"ZCODE_HOME": "/dev/null/zcode-home"}, "ZCODE_HOME='/dev/null/zcode-home' cannot be created"),
    # Issue 29: a trace path that cannot be created was a traceback and exit 1.
    (["--trace", "/dev/null/t.jsonl"], {}, "--trace '/dev/null/t.jsonl': cannot create its folder"),
    ([], {"ZCODE_ACP_TRACE": "/dev/null/t.jsonl"}, "--trace '/dev/null/t.jsonl': cannot create its folder"),
    (["serve", "--cwd", "/tmp"], {"ZCODE_HOME": "/dev/null/zcode-home"}, "ZCODE_HOME='/dev/null/zcode-home' cannot be"),
]


@pytest.mark.parametrize("args, env, message", BAD_INPUTS)
def test_a_bad_value_is_one_line_on_stderr_and_exit_2(tmp_path, args, env, message):
    done = run([ZCODE_ACP, *args], clean_env(tmp_path, **env), timeout=30)
    assert done.returncode == 2
    assert done.stdout == ""  # stdout is the protocol's, even for errors
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("zcode-acp: ") and message in lines[0]


def test_trace_on_a_folder_is_one_line_exit_2_and_the_folder_stays(tmp_path):
    """Issue 29: ``zcode-acp --trace ~/proj`` moved the project to ``proj.1`` and wrote the trace there."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "main.py").write_text("print('mine')\n")
    for _ in range(2):  # a second start neither moves it on to .2 nor fails otherwise
        done = run([ZCODE_ACP, "--trace", str(project)], clean_env(tmp_path), timeout=30)
        assert done.returncode == 2 and done.stdout == ""
        assert len(done.stderr.splitlines()) == 1 and "is a folder" in done.stderr, done.stderr
    assert (project / "main.py").read_text() == "print('mine')\n"
    assert not (tmp_path / "proj.1").exists()


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), prog_name="zcode-acp")


def test_help_says_what_no_command_means_and_lists_every_command_option_and_variable():
    result = invoke("--help")
    assert result.exit_code == 0
    text = result.output
    assert invoke("-h").output == text
    assert "With no command, zcode-acp serves the Agent Client Protocol on stdin/stdout" in text
    for command in ("demo", "doctor"):
        assert re.search(rf"^  {command}\s+\S", text, re.M), command
    for option in ("--log-level LEVEL", "--log-file PATH", "-V, --version", "-h, --help"):
        assert option in text
    for setting in SETTINGS:
        assert f"  {setting.name} (default: {setting.default or 'unset'})" in text
    assert not re.search(r"<(str|bool|int|float)>", text)


def test_every_command_is_in_the_help():
    registered = [command.name or command.callback.__name__ for command in app.registered_commands]
    text = invoke("-h").output
    assert registered and all(re.search(rf"^  {name}\s", text, re.M) for name in registered)


def test_demo_help_lists_the_simulators_scenarios():
    result = invoke("demo", "-h")
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for name in BUILTIN:
        assert name in text
    assert set(BUILTIN) <= set(simulator_scenarios())
    assert "#sim NAME" in text and "<str>" not in result.output


def test_scenarios_from_a_scenario_file_are_listed_too(tmp_path, monkeypatch):
    scenario_file = tmp_path / "scenarios.json"
    scenario_file.write_text('{"scenarios": {"hello_there": {"steps": [{"type": "text", "text": "hi"}]}}}')
    monkeypatch.setenv("ZCODE_SIM_SCENARIOS", str(scenario_file))
    assert "hello_there" in simulator_scenarios()
    scenario_file.write_text("not json")
    assert simulator_scenarios() == sorted(BUILTIN)  # a broken file: the built-ins still listed


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_comes_from_the_distribution(tmp_path, flag):
    done = run([ZCODE_ACP, flag], clean_env(tmp_path))
    assert done.returncode == 0
    assert done.stdout == f"zcode-acp {zcode_acp.version()}\n"
    assert zcode_acp.version() != zcode_acp.SOURCE_VERSION  # the test venv has the distribution installed
    assert zcode_acp.__version__ == zcode_acp.version()
    assert invoke(flag).output == done.stdout


@pytest.mark.parametrize("mode, expected", [
    ("", "new sessions start in mode yolo: tools run without asking (ZCODE_ACP_MODE=build asks before risky actions)"),
    ("build", "new sessions start in mode build"),
])
def test_the_default_mode_is_logged_once_at_start(tmp_path, mode, expected):
    bridge = Bridge([ZCODE_ACP], clean_env(tmp_path, ZCODE_ACP_MODE=mode, ZCODE_BIN="zcode-sim"))
    assert "result" in bridge.request("initialize", INITIALIZE)
    assert bridge.close() == 0
    lines = [line for line in bridge.stderr if "new sessions start in mode" in line]
    assert len(lines) == 1 and expected in lines[0]


def test_serve_refuses_a_cwd_that_is_no_folder_in_the_users_language(tmp_path, monkeypatch, capsys):
    """`zcode-acp serve`'s refusals go through the catalog (docs/architecture.md, "Strings a person reads")."""
    from zcode_acp.cli.serve import project_root

    monkeypatch.setenv("ZCODE_ACP_LANG", "zh_CN")
    with pytest.raises(SystemExit) as exited:
        project_root(str(tmp_path / "missing"))
    assert exited.value.code == 2
    assert "不是目录" in capsys.readouterr().err


def test_an_unknown_log_level_is_refused_in_the_users_language(monkeypatch):
    from zcode_acp.cli.logs import UsageError, setup_logging

    monkeypatch.setenv("ZCODE_ACP_LANG", "zh_CN")
    with pytest.raises(UsageError, match="--log-level 'bogus' 不是以下之一"):
        setup_logging("bogus")
