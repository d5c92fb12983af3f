"""Configuration from the environment: one table, read by ``Config.from_env``.

``SETTINGS`` is the single source of truth for every environment variable the
bridge reads: ``Config.from_env`` parses through it, ``zcode-acp --help``
prints it, and a test checks the README's table against ``markdown_table()``.
A bad value is a ``SettingError`` whose message is one line for the user (the
command line prints it and exits 2). Importing this module stays cheap
(stdlib, ``protocol.session_config`` and ``remote_config``'s converters only): ``--help`` and the stdio path
both read it.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable, Mapping

from zcode_acp.actors.cli import remote_config
from zcode_acp.protocol.session_config import MODE_IDS

SIMULATOR = "zcode-sim"


class SettingError(ValueError):
    """An environment variable with a value the bridge cannot use."""


@dataclass(frozen=True)
class Config:
    zcode_bin: str = "zcode"
    extra_args: tuple[str, ...] = ()
    default_mode: str = "yolo"
    zcode_home: Path = field(default_factory=lambda: Path.home() / ".zcode")
    # Backend request timeouts (backend-protocol.md §2), seconds.
    call_timeout: float = 15.0
    subscribe_timeout: float = 5.0
    read_timeout: float = 8.0
    messages_timeout: float = 45.0
    compact_timeout: float = 600.0  # today's engine compacts for minutes
    # A stopped turn still running after this long: its session is closed and resumed.
    stop_fallback: float = 5.0
    # A preempting prompt retries the backend's busy lock at most this often (from 20 ms, doubling), this long.
    busy_retry_interval: float = 0.5
    busy_retry_limit: float = 60.0
    # A session with no turn, dialog or background task for this long leaves memory (0: never);
    # its next use resumes it (docs/performance.md, "Idle sessions").
    idle_session_after: float = 600.0
    # A turn that is silent this long is probed with session/read.
    silence_probe: float = 60.0
    # How long a seq gap may wait for session/subscribe {afterSeq} to fill it.
    gap_wait: float = 2.0
    # An unanswered question is declined after this long (0: wait for the user, however long).
    interaction_timeout: float = 0.0
    # Teardown: SIGTERM the backend's group, then SIGKILL after this grace.
    kill_grace: float = 1.0
    # Which engine surface a session runs on: the legacy session/* methods, or the v4 data plane
    # (topics and commands, docs/v4.md).
    engine_api: str = "legacy"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Config:
        """The configuration the environment asks for; ``SettingError`` on a bad value.

        An unset or empty variable keeps the default.
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for setting in SETTINGS:
            raw = env.get(setting.name, "")
            if raw == "":
                continue
            try:
                value = setting.parse(raw)
            except ValueError as exc:
                raise SettingError(f"{setting.name}={raw!r} is not valid: {exc}") from None
            # Settings read elsewhere (remote access, tracing) are checked here all the same,
            # so every command refuses a bad value at start, the same way.
            if setting.attr is not None:
                values[setting.attr] = value
        return cls(**values)


# -- parsers: raw string → value; ValueError says what is expected ------------


def backend_command(raw: str) -> str:
    """``ZCODE_BIN``: a command name or path; ``zcode-sim`` is also found next to the interpreter.

    An editor that launches the bridge by absolute path has no venv on PATH;
    the simulator installed alongside the bridge is still found (the demo
    resolves it the same way).
    """
    command = raw.strip()
    if not command:
        raise ValueError("expected the ZCode CLI's command name or path")
    if command == SIMULATOR and shutil.which(command) is None:
        beside = Path(sys.executable).parent / SIMULATOR
        if beside.exists():
            return str(beside)
    return command


JS_ENTRY = (".js", ".cjs", ".mjs")


@dataclass(frozen=True)
class Problem:
    """What is wrong, and how to fix it: one line for stderr, a ✗ line for doctor."""

    what: str
    fix: str

    def line(self) -> str:
        return f"{self.what}: {self.fix}"


def backend_problem(zcode_bin: str) -> Problem | None:
    """What stops ``ZCODE_BIN`` from starting; None when it can start.

    Checked at start (a warning: the editor's ``initialize`` is still answered,
    the CLI may be installed before the first prompt), by ``doctor`` (✗) and
    when the backend is started (the prompt's error), so all three say the same.
    """
    simulator = "ZCODE_BIN=zcode-sim runs the simulated backend"
    path = zcode_bin if os.sep in zcode_bin else shutil.which(zcode_bin)
    if path is None:
        return Problem(f"ZCODE_BIN={zcode_bin!r} is not on the PATH this process was given",
                       "install the ZCode CLI, or set ZCODE_BIN to its absolute path "
                       f"(`which zcode` in your shell); {simulator}")
    if not os.path.exists(path):
        return Problem(f"ZCODE_BIN={zcode_bin!r} does not exist",
                       f"set ZCODE_BIN to the ZCode CLI's path; {simulator}")
    if os.path.isdir(path):
        return Problem(f"ZCODE_BIN={zcode_bin!r} is a folder, not a program",
                       "set ZCODE_BIN to the zcode program inside it")
    if path.endswith(JS_ENTRY):
        if shutil.which("node") is None:
            return Problem(f"ZCODE_BIN={zcode_bin!r} is a JavaScript entry point but node is not on PATH",
                           "install Node.js, or give the bridge a PATH that has it")
        return None
    if not os.access(path, os.X_OK):
        return Problem(f"ZCODE_BIN={zcode_bin!r} is not executable", f"chmod +x {path}")
    return None


def home_problem(home: Path) -> Problem | None:
    """Why ``ZCODE_HOME`` cannot be used, or None; creates nothing.

    The folder may not exist yet (the bridge makes it, private, when a session
    first needs it): then its nearest existing parent must be a folder this
    user can write.
    """
    fix = "set ZCODE_HOME to a folder you can write"
    if home.exists():
        if not home.is_dir():
            return Problem(f"ZCODE_HOME={str(home)!r} is not a folder", fix)
        if not os.access(home, os.W_OK | os.X_OK):
            return Problem(f"ZCODE_HOME={str(home)!r} is not writable", f"chown $USER {home}, or {fix}")
        return None
    parent = next((p for p in home.parents if p.exists()), None)
    if parent is None or not parent.is_dir():
        return Problem(f"ZCODE_HOME={str(home)!r} cannot be created ({parent} is not a folder)", fix)
    if not os.access(parent, os.W_OK | os.X_OK):
        return Problem(f"ZCODE_HOME={str(home)!r} cannot be created ({parent} is not writable)", fix)
    return None


def start_warnings(config: Config) -> list[str]:
    """What the bridge says on stderr at start, one line each; ``SettingError`` for what stops it.

    A ``ZCODE_HOME`` it cannot use stops it, like any bad value (one line, exit
    2); nothing is created here (``initialize`` alone writes nothing: the
    registry's check). A ``ZCODE_BIN`` that cannot start is only a warning:
    ``initialize`` needs no CLI (an editor's first contact, the registry's
    check), the CLI may be installed before the first prompt, and that
    prompt's error says the same.
    """
    problem = home_problem(config.zcode_home)
    if problem is not None:
        raise SettingError(problem.line())
    backend = backend_problem(config.zcode_bin)
    if backend is None:
        return []
    return [f"warning: {backend.line()} (initialize is answered; no session can start until then)"]


def mode(raw: str) -> str:
    """A mode id, whatever its case (``Build`` is ``build``)."""
    folded = raw.strip().lower()
    if folded not in MODE_IDS:
        raise ValueError(f"expected one of {', '.join(MODE_IDS)}")
    return folded


def home_folder(raw: str) -> Path:
    return Path(raw).expanduser()


def disallowed_tools(raw: str) -> tuple[str, ...]:
    return ("--disallowed-tools", raw)


def _seconds(allow_zero: bool) -> Callable[[str], float]:
    def parse(raw: str) -> float:
        expected = "a number of seconds" + (" (0 or more)" if allow_zero else " greater than 0")
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"expected {expected}") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            raise ValueError(f"expected {expected}")
        return value

    return parse


seconds = _seconds(allow_zero=True)
positive_seconds = _seconds(allow_zero=False)


ENGINE_APIS = ("legacy", "v4")


def engine_api(raw: str) -> str:
    value = raw.strip().lower()
    if value not in ENGINE_APIS:
        raise ValueError(f"expected one of {', '.join(ENGINE_APIS)}")
    return value


# Remote access and tracing are read where they are used (remote_config.py, main.py), with the
# same converters; these only check, so that a bad value stops the bridge at start.

def flag(raw: str) -> bool:
    value = remote_config.flag(raw)
    if value is None:
        raise ValueError(f"expected one of {'/'.join(sorted(remote_config.TRUE_WORDS))} (on) "
                         f"or {'/'.join(sorted(remote_config.FALSE_WORDS))} (off)")
    return value


def port(raw: str) -> int:
    value = remote_config.port(raw)
    if value is None:
        raise ValueError("expected a port number from 1 to 65535")
    return value


def text(raw: str) -> str:
    return raw


def project_roots(raw: str) -> tuple[Path, ...]:
    warnings: list[str] = []
    entries: list[object] = [entry for entry in raw.split(os.pathsep) if entry.strip()]
    roots = remote_config.project_roots(entries, Path.home(), warnings, "ZCODE_ACP_PROJECT_ROOTS")
    if warnings:
        raise ValueError(f"expected absolute folders separated by {os.pathsep!r} ({warnings[0].split(': ', 1)[1]})")
    return roots


@dataclass(frozen=True)
class Setting:
    name: str  # the environment variable
    attr: str | None  # the Config attribute it sets (None: read by remote_config.py, with the config file)
    default: str  # as documented (README, --help)
    meaning: str
    parse: Callable[[str], Any]


SETTINGS: tuple[Setting, ...] = (
    Setting("ZCODE_BIN", "zcode_bin", "zcode",
            "the ZCode CLI to run (`app-server --stdio` is appended); a `.js`/`.cjs` path runs under `node`; "
            "`zcode-sim` runs the simulator (found next to this Python when not on PATH)",
            backend_command),
    Setting("ZCODE_ACP_MODE", "default_mode", "yolo",
            f"mode of new sessions ({', '.join(MODE_IDS)}); `yolo` runs everything without asking, "
            "`build` asks before risky actions",
            mode),
    Setting("ZCODE_HOME", "zcode_home", "~/.zcode", "where the bridge keeps its state", home_folder),
    Setting("ZCODE_DISALLOWED_TOOLS", "extra_args", "", "passed to the CLI as `--disallowed-tools`",
            disallowed_tools),
    Setting("ZCODE_ACP_SILENCE_PROBE", "silence_probe", "60",
            "seconds of silence before a running turn is probed with `session/read` (0: never)", seconds),
    Setting("ZCODE_ACP_CALL_TIMEOUT", "call_timeout", "15",
            "seconds to wait for the backend's answer to create/resume/list/send and the like", positive_seconds),
    Setting("ZCODE_ACP_BUSY_LIMIT", "busy_retry_limit", "60",
            "seconds a prompt keeps retrying a busy backend before failing", seconds),
    Setting("ZCODE_ACP_IDLE_AFTER", "idle_session_after", "600",
            "seconds after which an idle session leaves memory, to be resumed on its next use (0: never)", seconds),
    Setting("ZCODE_ACP_INTERACTION_TIMEOUT", "interaction_timeout", "0",
            "seconds after which an unanswered permission/question dialog is declined (0: never)", seconds),
    Setting("ZCODE_ACP_STOP_FALLBACK", "stop_fallback", "5",
            "seconds a stopped turn may run on before its session is closed and resumed", positive_seconds),
    Setting("ZCODE_ACP_ENGINE_API", "engine_api", "legacy",
            "`v4` runs sessions on the engine's v4 data plane (topics and commands, docs/v4.md) instead of "
            "the legacy `session/*` methods", engine_api),
    # Remote access (docs/remote.md): read with the config file by remote_config.py, which they override.
    Setting("ZCODE_ACP_REMOTE", None, "off",
            "`1`/`true`/`yes`/`on` opens a loopback WebSocket endpoint for remote ACP clients (needs a token)", flag),
    Setting("ZCODE_ACP_REMOTE_TOKEN", None, "",
            "the token remote clients and the hub must present (required for remote access)", text),
    Setting("ZCODE_ACP_REMOTE_PORT", None, "8378",
            "the bridge's remote endpoint port (the next free one upwards when taken)", port),
    Setting("ZCODE_ACP_HUB_HOST", None, "127.0.0.1", "the hub's listen address", text),
    Setting("ZCODE_ACP_HUB_PORT", None, "8377", "the hub's port", port),
    Setting("ZCODE_ACP_HUB_AUTOSTART", None, "on", "`0` never starts a hub when none answers", flag),
    Setting("ZCODE_ACP_PROJECT_ROOTS", None, "",
            f"folders (absolute or `~/…`, separated by `{os.pathsep}`) under which the hub may start a serve "
            "bridge for a project (the web page's *Open a project*); overrides `remote.projectRoots`", project_roots),
    # Tracing (docs/traces.md): read by the command line, like --trace and --trace-redact-content.
    Setting("ZCODE_ACP_TRACE", None, "", "record every frame to this file (as `--trace FILE`)", text),
    Setting("ZCODE_ACP_TRACE_REDACT_CONTENT", None, "",
            "`1`: in the trace, replace every text by its length and a hash", flag),
)


def markdown_table() -> str:
    """The README's configuration table, generated from ``SETTINGS``."""
    lines = ["| variable | default | meaning |", "| --- | --- | --- |"]
    for setting in SETTINGS:
        default = f"`{setting.default}`" if setting.default else "—"
        lines.append(f"| `{setting.name}` | {default} | {setting.meaning} |")
    return "\n".join(lines)


if __name__ == "__main__":  # ``python -m zcode_acp.actors.cli.config``: print the README table
    print(markdown_table())
