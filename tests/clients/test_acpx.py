"""acpx (the headless ACP client) exactly as docs/editors.md tells people to run it (issue 21).

The config entry is the one ``zcode-acp doctor`` prints for this install (with
``ZCODE_BIN=zcode-sim``), and every command of the docs' acpx block runs here,
in order, in a project folder: the test reads them from the same function the
docs and doctor print. acpx and its Node come from ``.ci/clients``.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from zcode_acp.cli import editors
from tests.cli.helpers import SYSTEM_PATH
from tests.clients.conftest import BIN, CLIENTS, processes_with, require

ACPX = CLIENTS / "acpx" / "dist" / "cli.js"
HELLO = "hello from acpx"
PERMISSION = "#sim permission\nClean up the build folder."


def documented(launch: editors.Launch) -> list[list[str]]:
    """The commands of the docs' acpx block (comments and ``cd`` left out), as argv lists."""
    return [shlex.split(line) for line in editors.acpx_commands(launch).splitlines() if not line.startswith("#")]


class Acpx:
    def __init__(self, tmp_path: Path, marker: str) -> None:
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.project.mkdir()
        (self.home / ".acpx").mkdir(parents=True)
        self.launch = editors.Launch(editors.this_install().command, editors.this_install().args,
                                     (("ZCODE_BIN", "zcode-sim"),))
        # The entry doctor prints, written where the docs say.
        (self.home / ".acpx" / "config.json").write_text(editors.acpx(self.launch))
        self.env = {key: value for key, value in os.environ.items() if not key.startswith(("ZCODE_", "ACPX"))}
        self.env.update(HOME=str(self.home), PATH=f"{BIN}:{SYSTEM_PATH}", ZCODE_SIM_DATA=marker,
                        ZCODE_HOME=str(tmp_path / "zcode-home"), NO_COLOR="1")
        self.marker = marker

    def run(self, argv: list[str], prompt: str | None = None) -> subprocess.CompletedProcess:
        if prompt is not None:
            argv = [prompt if word == "your prompt" else word for word in argv]
        assert argv[0] == "acpx", argv
        return subprocess.run(argv, cwd=self.project, env=self.env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=120)

    def bridges_gone(self, timeout: float = 20.0) -> bool:
        """True once no process started with this test's environment is left (acpx's queue owner included)."""
        deadline = time.monotonic() + timeout
        while processes_with(self.marker):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)  # polling a condition with a deadline: the processes exit on their own
        return True


@pytest.fixture
def acpx(tmp_path, marker):
    require(ACPX)
    return Acpx(tmp_path, marker)


def said(done: subprocess.CompletedProcess) -> str:
    return f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"


# The process suite's three engines (tests/process/conftest.py): the simulator's dialect, and on
# cli016-v4 the bridge on the engine's v4 data plane. acpx passes its environment to the bridge.
DIALECTS = {"classic": {"ZCODE_SIM_DIALECT": "classic"}, "cli016": {"ZCODE_SIM_DIALECT": "cli016"},
            "cli016-v4": {"ZCODE_SIM_DIALECT": "cli016", "ZCODE_ACP_ENGINE_API": "v4"}}


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_every_documented_acpx_command_works_in_order(acpx, dialect):
    acpx.env.update(DIALECTS[dialect])
    exec_once, new, prompt, close, approve_all, no_config = documented(acpx.launch)

    done = acpx.run(exec_once, HELLO)
    assert done.returncode == 0 and HELLO in done.stdout and "[done] end_turn" in done.stdout, said(done)

    done = acpx.run(new)
    assert done.returncode == 0, said(done)
    done = acpx.run(prompt, HELLO)
    assert done.returncode == 0 and HELLO in done.stdout and "[done] end_turn" in done.stdout, said(done)
    done = acpx.run(prompt, "and again")  # the same session, resumed by acpx's kept bridge
    assert done.returncode == 0 and "and again" in done.stdout, said(done)
    done = acpx.run(close)
    assert done.returncode == 0, said(done)
    assert acpx.bridges_gone(), "sessions close left the bridge running"

    done = acpx.run(approve_all, PERMISSION)
    assert done.returncode == 0, said(done)
    assert "Bash: rm -rf build/ (completed)" in done.stdout and "Permission granted" in done.stdout, said(done)

    done = acpx.run(no_config, HELLO)
    assert done.returncode == 0 and HELLO in done.stdout and "[done] end_turn" in done.stdout, said(done)
    assert acpx.bridges_gone()


def test_what_the_docs_say_fails_does_fail(acpx):
    """The two traps the docs warn about: a plain prompt with no session; a permission with no terminal."""
    exec_once, _, prompt, *_ = documented(acpx.launch)
    done = acpx.run(prompt, HELLO)
    assert done.returncode == 4 and "No acpx session found" in done.stdout + done.stderr, said(done)
    done = acpx.run(exec_once, PERMISSION)
    assert done.returncode == 5 and "Permission denied" in done.stdout, said(done)


def test_the_config_entry_is_the_one_doctor_prints(acpx):
    entry = json.loads((acpx.home / ".acpx" / "config.json").read_text())
    assert entry == {"agents": {"zcode": {"command": f"env ZCODE_BIN=zcode-sim {' '.join(acpx.launch.argv())}"}}}


def engine_models(acpx) -> list[str]:
    """The model of each session the simulated engine keeps (its files under ZCODE_SIM_DATA)."""
    return [json.loads(path.read_text())["model"] for path in Path(acpx.marker).glob("sess_*.json")]


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_a_model_is_chosen_on_a_first_run(acpx, dialect):
    """Issue 32: on a fresh install (no catalog remembered), and always on the seed's engine, the
    list was "Default model" until a prompt, and `acpx set model` refused every model (exit 1)."""
    acpx.env.update(DIALECTS[dialect])
    _, new, prompt, close, *_ = documented(acpx.launch)
    done = acpx.run(new)
    assert done.returncode == 0, said(done)
    done = acpx.run(["acpx", "zcode", "set", "model", "glm-5-air"])
    assert done.returncode == 0 and "model set: glm-5-air" in done.stdout, said(done)
    done = acpx.run(prompt, HELLO)
    assert done.returncode == 0 and "[done] end_turn" in done.stdout, said(done)
    assert engine_models(acpx) == ["glm-5-air"]
    done = acpx.run(["acpx", "zcode", "set", "model", "no-such-model"])
    assert done.returncode != 0 and "glm-5-air" in done.stdout + done.stderr, said(done)  # refused with the list
    done = acpx.run(close)
    assert done.returncode == 0, said(done)
    assert acpx.bridges_gone()


def run_on_a_terminal(acpx, argv: list[str]) -> tuple[int, str]:
    """``argv`` with a pseudo-terminal as its stdin and stdout (what a person at a shell gives acpx),
    answering "y" to anything it asks; its exit code and what it wrote."""
    import pty
    import select

    controller, terminal = pty.openpty()
    process = subprocess.Popen(argv, cwd=acpx.project, env=acpx.env, stdin=terminal, stdout=terminal,
                               stderr=terminal, close_fds=True)
    os.close(terminal)
    output = b""
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(controller, 65536)
                except OSError:  # the terminal closed: acpx has exited
                    break
                if not chunk:
                    break
                output += chunk
                if b"(y/N)" in chunk:
                    os.write(controller, b"y\n")
            elif process.poll() is not None:
                break
        return process.wait(timeout=30), output.decode(errors="replace")
    finally:
        os.close(controller)
        if process.poll() is None:
            process.kill()


def test_a_kept_sessions_prompt_denies_permissions_without_asking_even_on_a_terminal(acpx):
    """What docs/editors.md says (issue 32: it said acpx asks on its terminal): `exec` asks there; a
    prompt in a kept session runs in acpx's background queue owner and denies without asking (exit 5)."""
    exec_once, new, prompt, close, *_ = documented(acpx.launch)
    code, said_exec = run_on_a_terminal(acpx, [w if w != "your prompt" else PERMISSION for w in exec_once])
    assert code == 0 and "(y/N)" in said_exec and "Permission granted" in said_exec, said_exec
    assert acpx.run(new).returncode == 0
    code, said_kept = run_on_a_terminal(acpx, [w if w != "your prompt" else PERMISSION for w in prompt])
    assert code == 5 and "(y/N)" not in said_kept and "Permission denied" in said_kept, said_kept
    assert acpx.run(close).returncode == 0
    assert acpx.bridges_gone()
