"""``zcode-acp doctor``: one line per check with the fix, editor configs, exit 1 when something is wrong."""

from __future__ import annotations

import http.server
import json
import os
import socket
import socketserver
import threading

import pytest

from zcode_acp.cli import editors
from tests.cli.helpers import ZCODE_ACP, ZCODE_SIM, clean_env, free_port, run


def doctor_env(tmp_path, **extra):
    # Ports the test picks: the machine's 8377/8378 may be in use by anything.
    ports = {"ZCODE_ACP_HUB_PORT": str(free_port()), "ZCODE_ACP_REMOTE_PORT": str(free_port())}
    return clean_env(tmp_path, **{**ports, **extra})


def doctor(env):
    done = run([ZCODE_ACP, "doctor"], env, timeout=90)
    return done.returncode, done.stdout.splitlines(), done


def marked(lines, mark):
    return [line for line in lines if line.startswith(mark + " ")]


def fake_cli(tmp_path, body: str) -> str:
    path = tmp_path / "zcode"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def test_a_working_install_on_the_simulator_passes(tmp_path):
    code, lines, done = doctor(doctor_env(tmp_path, ZCODE_BIN="zcode-sim"))
    assert code == 0, done.stdout + done.stderr
    assert marked(lines, "✗") == []
    assert f"✓ ZCode CLI: {ZCODE_SIM} (the simulated backend of zcode-acp" in done.stdout
    assert any(line.startswith("✓ the ZCode CLI starts and answers session/create in a temporary workspace")
               for line in lines)
    assert any(line.startswith("✓ ZCODE_HOME") and "writable and private" in line for line in lines)
    assert any(line.startswith("✓ Python 3.") for line in lines)
    assert any(line.startswith("✓ dependencies: ") and "gevent" in line and "pykka" in line for line in lines)
    assert "! new sessions start in mode yolo" in done.stdout
    assert "zcode-acp --trace FILE" in done.stdout and "ZCODE_ACP_TRACE=FILE" in done.stdout
    # The configs carry this install's absolute path and the resolved simulator.
    launch = editors.Launch(ZCODE_ACP, (), (("ZCODE_BIN", ZCODE_SIM),))
    for title, _, _, text in editors.render_all(launch):
        assert text in done.stdout, title
    assert json.loads(editors.zed(launch))["agent_servers"]["ZCode"]["type"] == "custom"


def test_a_missing_cli_fails_with_the_fix(tmp_path):
    code, lines, done = doctor(doctor_env(tmp_path, ZCODE_BIN=str(tmp_path / "no-such-zcode")))
    assert code == 1
    failures = marked(lines, "✗")
    assert len(failures) == 1, failures
    assert failures[0] == (f"✗ ZCode CLI cannot start: ZCODE_BIN='{tmp_path / 'no-such-zcode'}' does not exist — "
                           "fix: set ZCODE_BIN to the ZCode CLI's path; ZCODE_BIN=zcode-sim runs the simulated backend")
    assert "1 problem(s) found." in done.stdout


def test_a_cli_that_is_a_folder_or_not_executable_fails_with_the_fix(tmp_path):
    (tmp_path / "folder").mkdir()
    code, lines, _ = doctor(doctor_env(tmp_path, ZCODE_BIN=str(tmp_path / "folder")))
    assert code == 1
    assert f"✗ ZCode CLI cannot start: ZCODE_BIN='{tmp_path / 'folder'}' is a folder, not a program — fix: set " \
           "ZCODE_BIN to the zcode program inside it" in lines
    cli = fake_cli(tmp_path, "exit 0")
    os.chmod(cli, 0o644)
    code, lines, _ = doctor(doctor_env(tmp_path, ZCODE_BIN=cli))
    assert f"✗ ZCode CLI cannot start: ZCODE_BIN='{cli}' is not executable — fix: chmod +x {cli}" in lines


def test_a_zcode_home_that_cannot_be_made_fails(tmp_path):
    (tmp_path / "a-file").write_text("")
    home = tmp_path / "a-file" / "zcode-home"
    code, lines, done = doctor(doctor_env(tmp_path, ZCODE_BIN="zcode-sim", ZCODE_HOME=str(home)))
    assert code == 1 and "Traceback" not in done.stderr
    assert f"✗ ZCODE_HOME='{home}' cannot be created ({tmp_path / 'a-file'} is not a folder) — fix: set ZCODE_HOME " \
           "to a folder you can write" in lines


def test_a_cli_that_exits_shows_its_own_words(tmp_path):
    cli = fake_cli(tmp_path, "read line; echo \"not logged in. Run 'zcode login' first.\" >&2; exit 3")
    code, lines, _ = doctor(doctor_env(tmp_path, ZCODE_BIN=cli))
    assert code == 1
    [failure] = [line for line in marked(lines, "✗") if "session/create" in line]
    assert "exited (code 3) during session/create: not logged in. Run 'zcode login' first." in failure
    assert "— fix: " in failure


def test_a_cli_printing_garbage_is_named_at_once(tmp_path):
    cli = fake_cli(tmp_path, "echo 'Welcome to ZCode!'; sleep 30")
    code, lines, _ = doctor(doctor_env(tmp_path, ZCODE_BIN=cli, ZCODE_ACP_CALL_TIMEOUT="20"))
    assert code == 1
    assert any("is printing non-protocol output (first line: 'Welcome to ZCode!')" in line for line in marked(lines, "✗"))


def test_a_cli_that_never_answers_times_out_with_the_fix(tmp_path):
    cli = fake_cli(tmp_path, "sleep 30")
    code, lines, _ = doctor(doctor_env(tmp_path, ZCODE_BIN=cli, ZCODE_ACP_CALL_TIMEOUT="0.5"))
    assert code == 1
    assert any("did not answer session/create within 0.5 s" in line and "ZCODE_ACP_CALL_TIMEOUT" in line
               for line in marked(lines, "✗"))


def test_provider_files_set_to_missing_paths_fail(tmp_path):
    cli = fake_cli(tmp_path, "exit 1")
    code, lines, _ = doctor(doctor_env(tmp_path, ZCODE_BIN=cli,
                                       ZCODE_BUILTIN_PROVIDER_CONFIG_FILE=str(tmp_path / "missing.json")))
    assert any(line.startswith(f"✗ ZCODE_BUILTIN_PROVIDER_CONFIG_FILE={tmp_path / 'missing.json'} is not a readable")
               for line in lines)
    assert any(line.startswith("! ZCODE_PERSONAL_PROVIDER_CONFIG_FILE not set") for line in lines)


def test_a_zcode_home_others_can_read_fails_with_chmod(tmp_path):
    env = doctor_env(tmp_path, ZCODE_BIN="zcode-sim")
    (tmp_path / "zcode-home").chmod(0o755)
    code, lines, _ = doctor(env)
    assert code == 1
    assert f"✗ ZCODE_HOME is readable by others: {tmp_path / 'zcode-home'} (755) — fix: chmod 700 " \
           f"{tmp_path / 'zcode-home'}" in lines


def test_a_bad_setting_is_reported_not_raised(tmp_path):
    code, lines, done = doctor(doctor_env(tmp_path, ZCODE_ACP_MODE="bogus"))
    assert code == 1 and "Traceback" not in done.stderr
    assert any(line.startswith("✗ ZCODE_ACP_MODE='bogus' is not valid") for line in lines)


def test_remote_access_without_a_token_fails(tmp_path):
    code, lines, _ = doctor(doctor_env(tmp_path, ZCODE_BIN="zcode-sim", ZCODE_ACP_REMOTE="1"))
    assert code == 1
    assert any(line.startswith("✗ ZCODE_ACP_REMOTE is on but ZCODE_ACP_REMOTE_TOKEN is not set — fix: ")
               for line in lines)


def test_a_bad_field_of_the_config_file_is_reported(tmp_path):
    config = tmp_path / "xdg" / "zcode-acp" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text('{"remote": {"enabled": "perhaps"}}')
    code, lines, _ = doctor(doctor_env(tmp_path, ZCODE_BIN="zcode-sim", XDG_CONFIG_HOME=str(tmp_path / "xdg")))
    assert f"! {config}: remote.enabled='perhaps' is not valid; ignored" in lines


def test_a_token_from_the_private_config_file_counts(tmp_path):
    config = tmp_path / "xdg" / "zcode-acp" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text('{"remote": {"token": "a-long-enough-token-for-doctor"}}')
    config.chmod(0o600)
    env = doctor_env(tmp_path, ZCODE_BIN="zcode-sim", ZCODE_ACP_REMOTE="1", XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    _, lines, _ = doctor(env)
    assert "✓ remote access on, token set" in lines


def test_a_token_in_the_environment_is_named_with_the_file_as_the_fix(tmp_path):
    """Issue 29: the bridge's initial environ (/proc/<pid>/environ) holds the token for good."""
    config = tmp_path / "xdg" / "zcode-acp" / "config.json"
    env = doctor_env(tmp_path, ZCODE_BIN="zcode-sim", ZCODE_ACP_REMOTE="1", XDG_CONFIG_HOME=str(tmp_path / "xdg"),
                     ZCODE_ACP_REMOTE_TOKEN="a-long-enough-token-for-doctor")
    _, lines, _ = doctor(env)
    [line] = [line for line in lines if "remote access on" in line]
    assert line.startswith("! ") and "/proc/<pid>/environ" in line
    assert f"{config} (chmod 600) and unset ZCODE_ACP_REMOTE_TOKEN" in line


class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"ok": True, "version": "9.9.9", "instances": [{"id": "a"}]}).encode()
        self.send_response(200 if self.path == "/api/health" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class LoopbackServer(http.server.ThreadingHTTPServer):
    def server_bind(self):
        # HTTPServer.server_bind looks the host's name up (socket.getfqdn): a DNS call that would start
        # gevent's resolver thread pool in the test process, after which every fork warns.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "localhost", self.server_address[1]


@pytest.fixture
def hub():
    server = LoopbackServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_a_running_hub_is_reached_at_api_health(tmp_path, hub):
    code, lines, _ = doctor(doctor_env(tmp_path, ZCODE_BIN="zcode-sim", ZCODE_ACP_HUB_PORT=str(hub)))
    assert code == 0
    assert f"✓ hub reachable at http://127.0.0.1:{hub}/api/health (version 9.9.9, 1 instance(s))" in lines


def test_a_hub_port_taken_by_something_else_fails(tmp_path):
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        code, lines, _ = doctor(doctor_env(tmp_path, ZCODE_BIN="zcode-sim", ZCODE_ACP_HUB_PORT=str(port)))
    assert code == 1
    assert any(line.startswith(f"✗ port 127.0.0.1:{port} is taken by something that is not a zcode-acp hub")
               for line in lines)


def test_a_zcode_home_root_cannot_make_is_not_promised(tmp_path):
    """Issue 29: as root, ``os.access`` says yes to ``/proc``, and doctor said "will be created"."""
    home = "/proc/zcode-home-that-cannot-be"
    code, lines, done = doctor(doctor_env(tmp_path, ZCODE_BIN="zcode-sim", ZCODE_HOME=home))
    assert code == 1 and "Traceback" not in done.stderr
    assert f"✗ ZCODE_HOME='{home}' cannot be created (/proc is not writable) — fix: set ZCODE_HOME " \
           "to a folder you can write" in lines
    assert not any("will be created" in line for line in lines)
