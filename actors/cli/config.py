"""Configuration from the environment: one table, read by ``Config.from_env``.

``SETTINGS`` is the single source of truth for every environment variable the
bridge reads: ``Config.from_env`` parses through it, ``zcode-acp --help``
prints it, and a test checks the README's table against ``markdown_table()``.
A bad value is a ``SettingError`` whose message is one line for the user (the
command line prints it and exits 2). Importing this module stays cheap
(stdlib and ``protocol.session_config`` only): ``--help`` and the stdio path
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

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Config:
        """The configuration the environment asks for; ``SettingError`` on a bad value.

        An unset or empty variable keeps the default.
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for setting in SETTINGS:
            raw = env.get(setting.name, "")
            if raw == "" or setting.attr is None:
                continue
            try:
                values[setting.attr] = setting.parse(raw)
            except ValueError as exc:
                raise SettingError(f"{setting.name}={raw!r} is not valid: {exc}") from None
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


def mode(raw: str) -> str:
    if raw not in MODE_IDS:
        raise ValueError(f"expected one of {', '.join(MODE_IDS)}")
    return raw


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
    # Remote access (docs/remote.md): read with the config file by remote_config.py, which they override.
    Setting("ZCODE_ACP_REMOTE", None, "off",
            "`1`/`true`/`yes`/`on` opens a loopback WebSocket endpoint for remote ACP clients (needs a token)", str),
    Setting("ZCODE_ACP_REMOTE_TOKEN", None, "",
            "the token remote clients and the hub must present (required for remote access)", str),
    Setting("ZCODE_ACP_REMOTE_PORT", None, "8378",
            "the bridge's remote endpoint port (the next free one upwards when taken)", str),
    Setting("ZCODE_ACP_HUB_HOST", None, "127.0.0.1", "the hub's listen address", str),
    Setting("ZCODE_ACP_HUB_PORT", None, "8377", "the hub's port", str),
    Setting("ZCODE_ACP_HUB_AUTOSTART", None, "on", "`0` never starts a hub when none answers", str),
    # Tracing (docs/traces.md): read by the command line, like --trace and --trace-redact-content.
    Setting("ZCODE_ACP_TRACE", None, "", "record every frame to this file (as `--trace FILE`)", str),
    Setting("ZCODE_ACP_TRACE_REDACT_CONTENT", None, "",
            "`1`: in the trace, replace every text by its length and a hash", str),
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
