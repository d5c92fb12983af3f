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
from zcode_acp.cli import editors
from zcode_acp.config.remote import load_remote_config
from zcode_acp.config.settings import SIMULATOR, Config, SettingError, backend_problem, home_problem
from zcode_acp.protocol.i18n import EN, language_from_env, t

OK, WARN, FAIL = "✓", "!", "✗"


@dataclass(frozen=True)
class Check:
    mark: str
    what: str
    fix: str = ""
    lang: str = EN

    def line(self) -> str:
        line = f"{self.mark} {self.what}"
        return t(self.lang, "doctor.fix", line=line, fix=self.fix) if self.fix else line


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
    lang = config.lang
    problem = backend_problem(config.zcode_bin, lang)  # the words of the bridge's start-up warning
    if problem is not None:
        return Check(FAIL, t(lang, "doctor.cli_cannot_start", what=problem.what), problem.fix, lang), None
    argv = backend_argv(config.zcode_bin)
    assert argv is not None  # backend_problem found it
    if is_simulator(argv):
        return Check(OK, t(lang, "doctor.cli_simulator", path=argv[-1], version=version()), lang=lang), argv
    try:
        done = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=10)
        answer = (done.stdout or done.stderr).strip().splitlines()
        found = answer[0] if done.returncode == 0 and answer else t(lang, "doctor.version_exit", code=done.returncode)
    except (OSError, subprocess.TimeoutExpired) as exc:
        found = t(lang, "doctor.version_error", error=exc)
    return Check(OK, t(lang, "doctor.cli_found", path=argv[-1], found=found), lang=lang), argv


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
        from zcode_acp.config.child_env import scrubbed_environment

        env = scrubbed_environment(os.environ)  # the engine's as the bridge gives it: no secret (issue 29)
        if is_simulator(argv):
            env["ZCODE_SIM_DATA"] = os.path.join(scratch, "sim-data")  # nothing of the check persists
        try:
            proc = subprocess.Popen([*argv, "app-server", "--stdio", *config.extra_args], cwd=workspace, env=env,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True)
        except OSError as exc:
            return Check(FAIL, t(config.lang, "doctor.cli_no_start", error=exc), t(config.lang, "doctor.fix_permissions"),
                         config.lang)
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
    lang = config.lang
    fix_login = t(lang, "doctor.fix_login")
    while True:
        try:
            line = out.next(deadline)
        except TimeoutError:
            return Check(FAIL, t(lang, "doctor.create_timeout", seconds=f"{config.call_timeout:g}"),
                         t(lang, "doctor.fix_timeout"), lang)
        if line is None:
            proc.wait(timeout=5)
            err.reader.join(timeout=5)  # the CLI's last words: read to the end before quoting them
            said = " / ".join(err.tail) or t(lang, "doctor.stderr_empty")
            return Check(FAIL, t(lang, "doctor.cli_exited", code=proc.returncode, said=said), fix_login, lang)
        try:
            frame = json.loads(line)
        except ValueError:
            return Check(FAIL, t(lang, "doctor.cli_noise", line=repr(line[:120])), t(lang, "doctor.fix_noise"), lang)
        if not isinstance(frame, dict):
            continue
        if "method" in frame and "id" in frame and frame.get("id") != 1:
            answer = HANDSHAKE_ANSWERS.get(frame["method"])
            send({"id": frame["id"], "result": answer} if answer is not None else
                 {"id": frame["id"], "error": {"code": -32601, "message": "not supported by zcode-acp doctor"}})
        elif frame.get("id") == 1:
            if "error" in frame:
                message = (frame["error"] or {}).get("message", "error")
                return Check(FAIL, t(lang, "doctor.cli_refused", message=message), fix_login, lang)
            session = (frame.get("result") or {}).get("session") or {}
            send({"id": 2, "method": "session/close", "params": {"sessionId": session.get("sessionId")}})
            took = (time.monotonic() - started) * 1000
            return Check(OK, t(lang, "doctor.cli_ok", ms=f"{took:.0f}", session=session.get("sessionId")), lang=lang)


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
    home, lang = config.zcode_home, config.lang
    problem = home_problem(home, lang)  # the words the bridge stops with at start
    if problem is not None:
        return Check(FAIL, problem.what, problem.fix, lang)
    if not home.exists():
        return Check(OK, t(lang, "doctor.home_new", home=home), lang=lang)
    try:
        with tempfile.NamedTemporaryFile(dir=home, prefix=".zcode-acp-doctor-"):
            pass
    except OSError as exc:
        return Check(FAIL, t(lang, "doctor.home_not_writable", home=home, error=exc.strerror),
                     t(lang, "doctor.fix_home_owner", home=home), lang)
    exposed = [p for p in (home, home / "v2", home / "v2" / "acp-lazy-sessions.json")
               if p.exists() and p.stat().st_mode & 0o077]
    if exposed:
        listed = ", ".join(f"{p} ({p.stat().st_mode & 0o777:o})" for p in exposed)
        return Check(FAIL, t(lang, "doctor.home_exposed", listed=listed),
                     " ; ".join(f"chmod {'700' if p.is_dir() else '600'} {p}" for p in exposed), lang)
    return Check(OK, t(lang, "doctor.home_ok", home=home), lang=lang)


def check_provider_files(config: Config, argv: list[str] | None) -> list[Check]:
    """The provider config files desktop engines (3.12+) need (docs/protocol-mapping.md)."""
    lang = config.lang
    if argv is not None and is_simulator(argv):
        return [Check(OK, t(lang, "doctor.providers_sim"), lang=lang)]
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
                checks.append(Check(FAIL, t(lang, "doctor.provider_unreadable", name=name, value=value),
                                    t(lang, "doctor.fix_provider", name=name), lang))
            continue
        found = next((path for path in find() if path.is_file()), None)
        if found:
            checks.append(Check(OK, t(lang, "doctor.provider_found", name=name, path=found), lang=lang))
        else:
            checks.append(Check(WARN, t(lang, "doctor.provider_missing", name=name), lang=lang))
    return checks


# -- remote access ----------------------------------------------------------------


def _port(name: str, default: int, lang: str = EN) -> tuple[int | None, Check | None]:
    raw = os.environ.get(name) or str(default)
    if raw.isdigit() and 0 < int(raw) < 65536:
        return int(raw), None
    return None, Check(FAIL, t(lang, "doctor.bad_port", name=name, raw=repr(raw)), t(lang, "doctor.fix_port", name=name),
                       lang)


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


def check_remote(lang: str = EN) -> list[Check]:
    """Remote access settings (opt-in), the hub and bridge ports, the hub's /api/health."""
    # As a bridge reads them: the environment over the config file (docs/hub.md).
    settings = load_remote_config(log_warnings=False)
    enabled, token = settings.enabled, settings.token or ""
    # What the config file's loader skips (a bridge only warns about it: README, "Configuration").
    checks = [Check(WARN, warning) for warning in settings.warnings]
    if not enabled:
        checks.append(Check(OK, t(lang, "doctor.remote_off"), lang=lang))
    elif not token:
        checks.append(Check(FAIL, t(lang, "doctor.remote_no_token"),
                            "export ZCODE_ACP_REMOTE_TOKEN=$(python3 -c 'import secrets; print(secrets.token_urlsafe(32))')",
                            lang))
    elif len(token) < 16:
        checks.append(Check(WARN, t(lang, "doctor.remote_short_token", length=len(token)), lang=lang))
    elif settings.token_source == "env":  # issue 29: /proc/<pid>/environ keeps it for the bridge's whole life
        where = settings.config_path or "~/.config/zcode-acp/config.json"
        checks.append(Check(WARN, t(lang, "doctor.remote_token_in_env"),
                            t(lang, "doctor.fix_token_in_file", path=where), lang))
    else:
        checks.append(Check(OK, t(lang, "doctor.remote_on"), lang=lang))
    host = os.environ.get("ZCODE_ACP_HUB_HOST") or "127.0.0.1"
    hub_port, bad = _port("ZCODE_ACP_HUB_PORT", 8377, lang)
    if bad or hub_port is None:
        checks.append(bad or Check(FAIL, t(lang, "doctor.port_not_number", name="ZCODE_ACP_HUB_PORT"), lang=lang))
    elif _port_free(host, hub_port):
        checks.append(Check(OK, t(lang, "doctor.hub_free", host=host, port=hub_port), lang=lang))
    else:
        health = _hub_health(host, hub_port)
        if health and health.get("ok"):
            checks.append(Check(OK, t(lang, "doctor.hub_ok", host=host, port=hub_port, version=health.get("version"),
                                      instances=len(health.get("instances") or [])), lang=lang))
        else:
            checks.append(Check(FAIL, t(lang, "doctor.hub_taken", host=host, port=hub_port),
                                t(lang, "doctor.fix_hub_taken"), lang))
    bridge_port, bad = _port("ZCODE_ACP_REMOTE_PORT", 8378, lang)
    if bad or bridge_port is None:
        checks.append(bad or Check(FAIL, t(lang, "doctor.port_not_number", name="ZCODE_ACP_REMOTE_PORT"), lang=lang))
    elif _port_free("127.0.0.1", bridge_port):
        checks.append(Check(OK, t(lang, "doctor.bridge_port_free", port=bridge_port), lang=lang))
    else:
        checks.append(Check(WARN, t(lang, "doctor.bridge_port_taken", port=bridge_port), lang=lang))
    return checks


# -- Python and dependencies --------------------------------------------------------


_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(?:>=\s*([0-9][0-9.]*))?")


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def check_python(lang: str = EN) -> list[Check]:
    from importlib import metadata

    python = f"Python {sys.version.split()[0]} ({sys.implementation.name}) at {sys.executable}"
    try:
        requires_python = metadata.metadata(DIST_NAME)["Requires-Python"] or ""
        requirements = metadata.requires(DIST_NAME) or []
    except metadata.PackageNotFoundError:
        return [Check(WARN, python, lang=lang), Check(FAIL, t(lang, "doctor.not_installed", dist=DIST_NAME),
                                                      t(lang, "doctor.fix_install"), lang)]
    floor = re.search(r">=\s*([0-9.]+)", requires_python)
    if floor and sys.version_info[:3] < _numbers(floor.group(1)):
        checks = [Check(FAIL, t(lang, "doctor.python_too_old", python=python, dist=DIST_NAME, requires=requires_python),
                        t(lang, "doctor.fix_python", requires=requires_python), lang)]
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
            problems.append(t(lang, "doctor.dependency_missing", name=name))
            continue
        if minimum and _numbers(installed) < _numbers(minimum):
            problems.append(f"{name} {installed} < {minimum}")
        found.append(f"{name} {installed}")
    if problems:
        checks.append(Check(FAIL, t(lang, "doctor.dependencies", listed=", ".join(problems)), f"pip install -U {DIST_NAME}",
                            lang))
    else:
        checks.append(Check(OK, t(lang, "doctor.dependencies", listed=", ".join(found)), lang=lang))
    return checks


# -- the report ------------------------------------------------------------------------


def check_plan_key(config: Config, lang: str = EN) -> list[Check]:
    """Which Coding Plan key the bridge uses (provider headers, quota), never the key itself."""
    from zcode_acp.config.coding_plan import find_plan_key

    found = find_plan_key(os.environ, Path.home(), config.zcode_home, lang)
    checks = [Check(WARN, warning) for warning in found.warnings]
    if found.key is None:
        checks.append(Check(OK, t(lang, "doctor.plan_key_none"), lang=lang))
    else:
        source = t(lang, "quota.source.setup" if found.key.source == "setup" else "quota.source.engine")
        checks.append(Check(OK, t(lang, "doctor.plan_key", provider=found.key.provider, source=source), lang=lang))
    return checks


def run_doctor(out: TextIO | None = None) -> int:
    out = out or sys.stdout

    def say(text: str = "") -> None:
        out.write(text + "\n")
        out.flush()

    lang = language_from_env(os.environ)  # as Config resolves it; also when a bad setting stops Config
    say(t(lang, "doctor.title", version=version()))
    checks: list[Check] = []

    def report(*found: Check) -> None:
        for check in found:
            checks.append(check)
            say(check.line())

    try:
        config = Config.from_env()
    except SettingError as exc:
        report(Check(FAIL, str(exc), t(lang, "doctor.fix_setting"), lang))
        config = None
    if config is not None:
        cli, argv = check_cli(config)
        report(cli)
        if argv is not None:
            report(check_handshake(config, argv))
        report(check_home(config))
        report(*check_provider_files(config, argv))
        if config.default_mode == "yolo":
            report(Check(WARN, t(lang, "doctor.yolo"), lang=lang))
        report(*check_plan_key(config, lang))
    report(*check_remote(lang))
    report(*check_python(lang))
    failed = sum(check.mark == FAIL for check in checks)
    say()
    say(t(lang, "doctor.problems", count=failed) if failed else t(lang, "doctor.all_good"))
    say()
    say(t(lang, "doctor.trace_hint"))
    say()
    launch = editors.this_install()
    if config is not None and config.zcode_bin != "zcode":
        resolved = backend_argv(config.zcode_bin)
        launch = editors.Launch(launch.command, launch.args, (("ZCODE_BIN", resolved[-1] if resolved else config.zcode_bin),))
    say(t(lang, "doctor.editors", argv=" ".join(launch.argv())))
    for title, where, _, text in editors.render_all(launch, lang):
        say()
        say(f"── {title} — {where}")
        say(text)
        if title == "acpx":
            say(editors.acpx_commands(launch, lang))
    return 1 if failed else 0
