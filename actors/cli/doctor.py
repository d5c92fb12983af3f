"""``zcode-acp doctor``: check this installation, one line per check, and print editor configs.

Each check is one line: ``✓`` (fine), ``!`` (worth knowing, not a failure)
or ``✗`` (wrong, with the fix). The exit code is 1 when any check fails.
The backend check really starts the ZCode CLI and drives the seed dialect's
create handshake (``session/create``, answering the requests it makes
meanwhile) in a temporary workspace (docs/protocol-mapping.md).
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO
from collections.abc import Callable

from zcode_acp import DIST_NAME, version
from zcode_acp.actors.cli import editors
from zcode_acp.actors.cli.remote_config import load_remote_config
from zcode_acp.actors.cli.config import SIMULATOR, Config, SettingError, backend_problem, home_problem

OK, WARN, FAIL = "✓", "!", "✗"
TRACE_HINT = ("to record a trace for a bug report: zcode-acp --trace FILE (or ZCODE_ACP_TRACE=FILE in the "
              "editor's env), reproduce the problem, and attach FILE")


@dataclass(frozen=True)
class Check:
    mark: str
    what: str
    fix: str = ""

    def line(self) -> str:
        return f"{self.mark} {self.what}" + (f" — fix: {self.fix}" if self.fix else "")


# -- the ZCode CLI ------------------------------------------------------------


def backend_argv(zcode_bin: str) -> list[str] | None:
    """``[path, ...]`` to start the CLI (``node`` for a JS entry), or None when it is not found."""
    path = zcode_bin if os.sep in zcode_bin else shutil.which(zcode_bin)
    if not path or not os.path.exists(path):
        return None
    if path.endswith((".js", ".cjs", ".mjs")):
        node = shutil.which("node")
        return [node, path] if node else None
    return [path]


def is_simulator(argv: list[str]) -> bool:
    return os.path.basename(argv[-1]) == SIMULATOR


def check_cli(config: Config) -> tuple[Check, list[str] | None]:
    problem = backend_problem(config.zcode_bin)  # the words of the bridge's start-up warning
    if problem is not None:
        return Check(FAIL, f"ZCode CLI cannot start: {problem.what}", problem.fix), None
    argv = backend_argv(config.zcode_bin)
    assert argv is not None  # backend_problem found it
    if is_simulator(argv):
        return Check(OK, f"ZCode CLI: {argv[-1]} (the simulated backend of zcode-acp {version()})"), argv
    try:
        done = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=10)
        answer = (done.stdout or done.stderr).strip().splitlines()
        found = answer[0] if done.returncode == 0 and answer else f"version unknown (--version exited {done.returncode})"
    except (OSError, subprocess.TimeoutExpired) as exc:
        found = f"version unknown ({exc})"
    return Check(OK, f"ZCode CLI: {argv[-1]} ({found})"), argv


# Answers to what the backend asks during create (seed and today's dialects).
HANDSHAKE_ANSWERS: dict[str, dict[str, Any]] = {
    "session/requestRuntimePreferences": {
        "nativeSearchEnhancementsEnabled": False, "memoryEnabled": False, "askUserQuestionAutoResolutionEnabled": False},
    "interaction/requestProviderRuntimeHeaders": {
        "headersApplied": False, "errorMessage": "zcode-acp doctor supplies no provider headers"},
    "interaction/requestOfficialMcpAuthHeaders": {"ok": False, "reason": "official_auth_unavailable"},
}


class _Lines:
    """Lines of a pipe, read by a thread, taken with a deadline."""

    def __init__(self, pipe: Any, keep: int | None = None) -> None:
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.tail: deque[str] = deque(maxlen=keep or 1)
        self.reader = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self.reader.start()

    def _read(self, pipe: Any) -> None:
        for raw in pipe:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.tail.append(line)
            self.queue.put(line)
        self.queue.put(None)

    def next(self, deadline: float) -> str | None:
        """The next line; None at end of stream; TimeoutError past the deadline."""
        try:
            return self.queue.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise TimeoutError from None


def check_handshake(config: Config, argv: list[str]) -> Check:
    """Start ``app-server --stdio`` and create a session in a temporary workspace."""
    with tempfile.TemporaryDirectory(prefix="zcode-acp-doctor-") as scratch:
        workspace = os.path.join(scratch, "workspace")
        os.mkdir(workspace)
        env = dict(os.environ)
        if is_simulator(argv):
            env["ZCODE_SIM_DATA"] = os.path.join(scratch, "sim-data")  # nothing of the check persists
        try:
            proc = subprocess.Popen([*argv, "app-server", "--stdio", *config.extra_args], cwd=workspace, env=env,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True)
        except OSError as exc:
            return Check(FAIL, f"the ZCode CLI does not start: {exc}", "check ZCODE_BIN and the file's permissions")
        try:
            return _create(proc, workspace, config)
        finally:
            _stop(proc)


def _create(proc: Any, workspace: str, config: Config) -> Check:
    out, err = _Lines(proc.stdout), _Lines(proc.stderr, keep=5)

    def send(frame: dict[str, Any]) -> None:  # the backend's frames carry no "jsonrpc" (backend-protocol.md §1)
        try:
            proc.stdin.write((json.dumps(frame) + "\n").encode())
            proc.stdin.flush()
        except BrokenPipeError:
            pass  # the CLI has exited: its end of stdout comes next and says how

    started = time.monotonic()
    deadline = started + config.call_timeout
    send({"id": 1, "method": "session/create",
          "params": {"workspace": {"workspacePath": workspace, "workspaceKey": workspace}, "mode": config.default_mode}})
    fix_login = "run the ZCode CLI once by hand (e.g. log in), then run zcode-acp doctor again"
    while True:
        try:
            line = out.next(deadline)
        except TimeoutError:
            return Check(FAIL, f"the ZCode CLI did not answer session/create within {config.call_timeout:g} s",
                         "check the provider config files below; raise ZCODE_ACP_CALL_TIMEOUT if the CLI is slow")
        if line is None:
            proc.wait(timeout=5)
            err.reader.join(timeout=5)  # the CLI's last words: read to the end before quoting them
            said = " / ".join(err.tail) or "nothing on stderr"
            return Check(FAIL, f"the ZCode CLI exited (code {proc.returncode}) during session/create: {said}",
                         fix_login)
        try:
            frame = json.loads(line)
        except ValueError:
            return Check(FAIL, f"the ZCode CLI is printing non-protocol output (first line: {line[:120]!r})",
                         "ZCODE_BIN must be the ZCode CLI itself (it is started as `app-server --stdio`)")
        if not isinstance(frame, dict):
            continue
        if "method" in frame and "id" in frame and frame.get("id") != 1:
            answer = HANDSHAKE_ANSWERS.get(frame["method"])
            send({"id": frame["id"], "result": answer} if answer is not None else
                 {"id": frame["id"], "error": {"code": -32601, "message": "not supported by zcode-acp doctor"}})
        elif frame.get("id") == 1:
            if "error" in frame:
                message = (frame["error"] or {}).get("message", "error")
                return Check(FAIL, f"the ZCode CLI refused session/create: {message}", fix_login)
            session = (frame.get("result") or {}).get("session") or {}
            send({"id": 2, "method": "session/close", "params": {"sessionId": session.get("sessionId")}})
            took = (time.monotonic() - started) * 1000
            return Check(OK, f"the ZCode CLI starts and answers session/create in a temporary workspace "
                             f"({took:.0f} ms, session {session.get('sessionId')})")


def _stop(proc: Any) -> None:
    try:
        proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()


# -- files ----------------------------------------------------------------------


def check_home(config: Config) -> Check:
    home = config.zcode_home
    problem = home_problem(home)  # the words the bridge stops with at start
    if problem is not None:
        return Check(FAIL, problem.what, problem.fix)
    if not home.exists():
        return Check(OK, f"ZCODE_HOME {home} does not exist yet; it will be created private (0700)")
    try:
        with tempfile.NamedTemporaryFile(dir=home, prefix=".zcode-acp-doctor-"):
            pass
    except OSError as exc:
        return Check(FAIL, f"ZCODE_HOME {home} is not writable ({exc.strerror})",
                     f"chown $USER {home} (or set ZCODE_HOME elsewhere)")
    exposed = [p for p in (home, home / "v2", home / "v2" / "acp-lazy-sessions.json")
               if p.exists() and p.stat().st_mode & 0o077]
    if exposed:
        listed = ", ".join(f"{p} ({p.stat().st_mode & 0o777:o})" for p in exposed)
        return Check(FAIL, f"ZCODE_HOME is readable by others: {listed}",
                     " ; ".join(f"chmod {'700' if p.is_dir() else '600'} {p}" for p in exposed))
    return Check(OK, f"ZCODE_HOME {home} is writable and private")


def check_provider_files(config: Config, argv: list[str] | None) -> list[Check]:
    """The provider config files desktop engines (3.12+) need (docs/protocol-mapping.md)."""
    if argv is not None and is_simulator(argv):
        return [Check(OK, "provider config files: not needed by the simulated backend")]
    cli_folder = Path(argv[-1]).resolve().parent if argv else None
    runtime = config.zcode_home / "v2" / "runtime" / "provider"
    candidates: dict[str, Callable[[], list[Path]]] = {
        "ZCODE_BUILTIN_PROVIDER_CONFIG_FILE": lambda: (
            ([cli_folder / "zcode-builtin.json"] if cli_folder else [])
            + (sorted(runtime.rglob("zcode-builtin.json")) if runtime.is_dir() else [])),
        "ZCODE_PERSONAL_PROVIDER_CONFIG_FILE": lambda: [config.zcode_home / "v2" / "provider_config.json"],
    }
    checks = []
    for name, find in candidates.items():
        value = os.environ.get(name)
        if value:
            if os.access(value, os.R_OK):
                checks.append(Check(OK, f"{name}={value}"))
            else:
                checks.append(Check(FAIL, f"{name}={value} is not a readable file",
                                    f"point {name} at the file, or unset it"))
            continue
        found = next((path for path in find() if path.is_file()), None)
        if found:
            checks.append(Check(OK, f"{name} not set; found {found}"))
        else:
            checks.append(Check(WARN, f"{name} not set and no file found (ZCode desktop 3.12+ needs it; "
                                      "older CLIs do not)"))
    return checks


# -- remote access ----------------------------------------------------------------


def _port(name: str, default: int) -> tuple[int | None, Check | None]:
    raw = os.environ.get(name) or str(default)
    if raw.isdigit() and 0 < int(raw) < 65536:
        return int(raw), None
    return None, Check(FAIL, f"{name}={raw!r} is not a port number", f"set {name} to 1–65535 or unset it")


def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _hub_health(host: str, port: int) -> dict[str, Any] | None:
    connection = http.client.HTTPConnection(host, port, timeout=2)
    try:
        connection.request("GET", "/api/health")
        response = connection.getresponse()
        body = json.loads(response.read(1 << 16) or b"null")
        return body if response.status == 200 and isinstance(body, dict) else None
    except (OSError, ValueError, http.client.HTTPException):
        return None
    finally:
        connection.close()


def check_remote() -> list[Check]:
    """Remote access settings (opt-in), the hub and bridge ports, the hub's /api/health."""
    # As a bridge reads them: the environment over the config file (docs/hub.md).
    settings = load_remote_config(log_warnings=False)
    enabled, token = settings.enabled, settings.token or ""
    # What the config file's loader skips (a bridge only warns about it: README, "Configuration").
    checks = [Check(WARN, warning) for warning in settings.warnings]
    if not enabled:
        checks.append(Check(OK, "remote access off (opt-in: ZCODE_ACP_REMOTE=1 with ZCODE_ACP_REMOTE_TOKEN)"))
    elif not token:
        checks.append(Check(FAIL, "ZCODE_ACP_REMOTE is on but ZCODE_ACP_REMOTE_TOKEN is not set",
                            "export ZCODE_ACP_REMOTE_TOKEN=$(python3 -c 'import secrets; print(secrets.token_urlsafe(32))')"))
    elif len(token) < 16:
        checks.append(Check(WARN, f"remote access on; the token is short ({len(token)} characters; 16+ advised)"))
    else:
        checks.append(Check(OK, "remote access on, token set"))
    host = os.environ.get("ZCODE_ACP_HUB_HOST") or "127.0.0.1"
    hub_port, bad = _port("ZCODE_ACP_HUB_PORT", 8377)
    if bad or hub_port is None:
        checks.append(bad or Check(FAIL, "ZCODE_ACP_HUB_PORT is not a port number"))
    elif _port_free(host, hub_port):
        checks.append(Check(OK, f"hub port {host}:{hub_port} free (no hub running; a bridge with remote access "
                                "starts one)"))
    else:
        health = _hub_health(host, hub_port)
        if health and health.get("ok"):
            checks.append(Check(OK, f"hub reachable at http://{host}:{hub_port}/api/health "
                                    f"(version {health.get('version')}, {len(health.get('instances') or [])} "
                                    "instance(s))"))
        else:
            checks.append(Check(FAIL, f"port {host}:{hub_port} is taken by something that is not a zcode-acp hub",
                                "stop that program or set ZCODE_ACP_HUB_PORT to a free port"))
    bridge_port, bad = _port("ZCODE_ACP_REMOTE_PORT", 8378)
    if bad or bridge_port is None:
        checks.append(bad or Check(FAIL, "ZCODE_ACP_REMOTE_PORT is not a port number"))
    elif _port_free("127.0.0.1", bridge_port):
        checks.append(Check(OK, f"bridge port 127.0.0.1:{bridge_port} free"))
    else:
        checks.append(Check(WARN, f"bridge port 127.0.0.1:{bridge_port} is taken (another bridge?); "
                                  "a bridge then uses the next free port"))
    return checks


# -- Python and dependencies --------------------------------------------------------


_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(?:>=\s*([0-9][0-9.]*))?")


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def check_python() -> list[Check]:
    from importlib import metadata

    python = f"Python {sys.version.split()[0]} ({sys.implementation.name}) at {sys.executable}"
    try:
        requires_python = metadata.metadata(DIST_NAME)["Requires-Python"] or ""
        requirements = metadata.requires(DIST_NAME) or []
    except metadata.PackageNotFoundError:
        return [Check(WARN, python), Check(FAIL, f"{DIST_NAME} is not installed in this Python",
                                            "pip install -e . (from the source folder)")]
    floor = re.search(r">=\s*([0-9.]+)", requires_python)
    if floor and sys.version_info[:3] < _numbers(floor.group(1)):
        checks = [Check(FAIL, f"{python}; {DIST_NAME} needs Python {requires_python}",
                        f"install with a Python {requires_python}")]
    else:
        checks = [Check(OK, python)]
    found, problems = [], []
    for requirement in requirements:
        if ";" in requirement:  # extras (tests) and markers: not needed to run
            continue
        match = _REQUIREMENT.match(requirement)
        if not match:
            continue
        name, minimum = match.group(1), match.group(2)
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            problems.append(f"{name} missing")
            continue
        if minimum and _numbers(installed) < _numbers(minimum):
            problems.append(f"{name} {installed} < {minimum}")
        found.append(f"{name} {installed}")
    if problems:
        checks.append(Check(FAIL, "dependencies: " + ", ".join(problems), f"pip install -U {DIST_NAME}"))
    else:
        checks.append(Check(OK, "dependencies: " + ", ".join(found)))
    return checks


# -- the report ------------------------------------------------------------------------


def run_doctor(out: TextIO | None = None) -> int:
    out = out or sys.stdout

    def say(text: str = "") -> None:
        out.write(text + "\n")
        out.flush()

    say(f"zcode-acp {version()} doctor")
    checks: list[Check] = []

    def report(*found: Check) -> None:
        for check in found:
            checks.append(check)
            say(check.line())

    try:
        config = Config.from_env()
    except SettingError as exc:
        report(Check(FAIL, str(exc), "fix or unset that variable (zcode-acp --help lists them)"))
        config = None
    if config is not None:
        cli, argv = check_cli(config)
        report(cli)
        if argv is not None:
            report(check_handshake(config, argv))
        report(check_home(config))
        report(*check_provider_files(config, argv))
        if config.default_mode == "yolo":
            report(Check(WARN, "new sessions start in mode yolo: tools run without asking "
                               "(ZCODE_ACP_MODE=build asks before risky actions)"))
    report(*check_remote())
    report(*check_python())
    failed = sum(check.mark == FAIL for check in checks)
    say()
    say(f"{failed} problem(s) found." if failed else "Everything needed to run the bridge is in place.")
    say()
    say(TRACE_HINT + ".")
    say()
    launch = editors.this_install()
    if config is not None and config.zcode_bin != "zcode":
        resolved = backend_argv(config.zcode_bin)
        launch = editors.Launch(launch.command, launch.args, (("ZCODE_BIN", resolved[-1] if resolved else config.zcode_bin),))
    say(f"Editor configuration for this install ({' '.join(launch.argv())}); docs/editors.md has more:")
    for title, where, _, text in editors.render_all(launch):
        say()
        say(f"── {title} — {where}")
        say(text)
        if title == "acpx":
            say(editors.acpx_commands(launch))
    return 1 if failed else 0
