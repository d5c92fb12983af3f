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

from zcode_acp.config import remote as remote_config
from zcode_acp.protocol.i18n import EN, LANGUAGES, language_from_env, normalize, t
from zcode_acp.protocol.session_config import MODE_IDS

SIMULATOR = "zcode-sim"


class SettingError(ValueError):
    """An environment variable with a value the bridge cannot use."""


class Expected(ValueError):
    """What a parser expected, as a catalog key: the message is English, ``words(lang)`` any language."""

    def __init__(self, key: str, **params: Any) -> None:
        super().__init__(t(EN, key, **params))
        self.key, self.params = key, params

    def words(self, lang: str) -> str:
        return t(lang, self.key, **self.params)


@dataclass(frozen=True)
class Config:
    """What the bridge is told, from the environment (``from_env``, through ``SETTINGS``)."""

    zcode_bin: str = "zcode"
    extra_args: tuple[str, ...] = ()
    default_mode: str = "yolo"
    zcode_home: Path = field(default_factory=lambda: Path.home() / ".zcode")
    # Backend request timeouts (backend-protocol.md §2), seconds.
    call_timeout: float = 15.0
    subscribe_timeout: float = 5.0
    read_timeout: float = 8.0
    messages_timeout: float = 45.0
    compact_timeout: float = 600.0  # the 0.16 engine compacts for minutes
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
    # A dialog no client can see (a phone's socket dropped, a page reloads) waits this long for one.
    dialog_grace: float = 600.0
    # Teardown: SIGTERM the backend's group, then SIGKILL after this grace.
    kill_grace: float = 1.0
    # Notifications (docs/hub.md, "Notifications"): off without a webhook URL.
    notify_url: str = ""
    notify_format: str = "json"
    notify_after: float = 60.0
    notify_text: bool = False
    notify_interval: float = 60.0
    notify_page: str = ""
    # The Coding Plan's quota (docs/quota.md): read when a key exists, unless turned off.
    quota_enabled: bool = True
    quota_url: str = ""  # where it is read from: the provider's own endpoint when empty
    quota_retry: bool = False  # a v4 turn a window stopped is retried at its reset (docs/quota.md)
    # The language of every string the bridge writes for a person (protocol/i18n): resolved once, here.
    lang: str = "en"
    # Which engine surface a session runs on: the legacy session/* methods, or the v4 data plane
    # (topics and commands, docs/v4.md).
    engine_api: str = "legacy"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Config:
        """The configuration the environment asks for; ``SettingError`` on a bad value.

        An unset or empty variable keeps the default.
        """
        env = os.environ if environ is None else environ
        lang = language_from_env(env)  # the language a bad value is reported in, too
        values: dict[str, Any] = {}
        for setting in SETTINGS:
            raw = env.get(setting.name, "")
            if raw == "":
                continue
            try:
                value = setting.parse(raw)
            except ValueError as exc:
                detail = exc.words(lang) if isinstance(exc, Expected) else str(exc)
                raise SettingError(t(lang, "setting.invalid", name=setting.name, raw=repr(raw), detail=detail)) from None
            # Settings read elsewhere (remote access, tracing) are checked here all the same,
            # so every command refuses a bad value at start, the same way.
            if setting.attr is not None:
                values[setting.attr] = value
        if "lang" not in values:  # no ZCODE_ACP_LANG: the locale's language, else English
            values["lang"] = lang
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
        raise Expected("setting.expected_command")
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
    lang: str = EN

    def line(self) -> str:
        return t(self.lang, "problem.line", what=self.what, fix=self.fix)


def backend_problem(zcode_bin: str, lang: str = EN) -> Problem | None:
    """What stops ``ZCODE_BIN`` from starting; None when it can start.

    Checked at start (a warning: the editor's ``initialize`` is still answered,
    the CLI may be installed before the first prompt), by ``doctor`` (✗) and
    when the backend is started (the prompt's error), so all three say the same.
    """
    simulator = t(lang, "problem.simulator")
    shown = repr(zcode_bin)
    path = zcode_bin if os.sep in zcode_bin else shutil.which(zcode_bin)
    if path is None:
        return Problem(t(lang, "problem.bin_not_on_path", bin=shown),
                       t(lang, "problem.fix_bin_not_on_path", simulator=simulator), lang)
    if not os.path.exists(path):
        return Problem(t(lang, "problem.bin_missing", bin=shown), t(lang, "problem.fix_bin_missing", simulator=simulator),
                       lang)
    if os.path.isdir(path):
        return Problem(t(lang, "problem.bin_folder", bin=shown), t(lang, "problem.fix_bin_folder"), lang)
    if path.endswith(JS_ENTRY):
        if shutil.which("node") is None:
            return Problem(t(lang, "problem.bin_no_node", bin=shown), t(lang, "problem.fix_bin_no_node"), lang)
        return None
    if not os.access(path, os.X_OK):
        return Problem(t(lang, "problem.bin_not_executable", bin=shown), f"chmod +x {path}", lang)
    return None


def home_problem(home: Path, lang: str = EN) -> Problem | None:
    """Why ``ZCODE_HOME`` cannot be used, or None; leaves nothing behind.

    The folder may not exist yet (the bridge makes it, private, when a session
    first needs it): then its nearest existing parent must be a folder this
    user can write.
    """
    fix = t(lang, "problem.fix_home")
    shown = repr(str(home))
    if home.exists():
        if not home.is_dir():
            return Problem(t(lang, "problem.home_not_folder", home=shown), fix, lang)
        if not os.access(home, os.W_OK | os.X_OK):
            return Problem(t(lang, "problem.home_not_writable", home=shown),
                           t(lang, "problem.fix_home_owner", home=home, fix=fix), lang)
        return None
    parent = next((p for p in home.parents if p.exists()), None)
    if parent is None or not parent.is_dir():
        return Problem(t(lang, "problem.home_parent_not_folder", home=shown, parent=parent), fix, lang)
    if not os.access(parent, os.W_OK | os.X_OK) or not _can_make_folder_in(parent):
        return Problem(t(lang, "problem.home_parent_not_writable", home=shown, parent=parent), fix, lang)
    return None


def _can_make_folder_in(parent: Path) -> bool:
    """Whether a folder can really be made in ``parent``: ``os.access`` says yes to root everywhere
    (``/proc``, ``/sys``, a read-only mount), so make one and remove it (issue 29); nothing stays."""
    import tempfile  # only when ZCODE_HOME does not exist yet: not on a usual start

    try:
        os.rmdir(tempfile.mkdtemp(prefix=".zcode-acp-probe-", dir=parent))
    except OSError:
        return False
    return True


def start_warnings(config: Config) -> list[str]:
    """What the bridge says on stderr at start, one line each; ``SettingError`` for what stops it.

    A ``ZCODE_HOME`` it cannot use stops it, like any bad value (one line, exit
    2); nothing is created here (``initialize`` alone writes nothing: the
    registry's check). A ``ZCODE_BIN`` that cannot start is only a warning:
    ``initialize`` needs no CLI (an editor's first contact, the registry's
    check), the CLI may be installed before the first prompt, and that
    prompt's error says the same.
    """
    problem = home_problem(config.zcode_home, config.lang)
    if problem is not None:
        raise SettingError(problem.line())
    backend = backend_problem(config.zcode_bin, config.lang)
    if backend is None:
        return []
    return [t(config.lang, "start.warning_backend", problem=backend.line())]


def one_of(choices: tuple[str, ...]) -> Callable[[str], str]:
    """A parser of one of ``choices``, whatever its case (``Build`` is ``build``)."""
    def parse(raw: str) -> str:
        folded = raw.strip().lower()
        if folded not in choices:
            raise Expected("setting.expected_one_of", choices=", ".join(choices))
        return folded
    return parse


mode = one_of(MODE_IDS)  # a mode id


def language(raw: str) -> str:
    """``en`` or ``zh-CN`` (also ``zh``, ``zh_CN.UTF-8``, ``en_US``…)."""
    chosen = normalize(raw)
    if chosen is None:
        raise Expected("setting.expected_one_of", choices=", ".join(LANGUAGES))
    return chosen


def home_folder(raw: str) -> Path:
    return Path(raw).expanduser()


def disallowed_tools(raw: str) -> tuple[str, ...]:
    return ("--disallowed-tools", raw)


def _seconds(allow_zero: bool) -> Callable[[str], float]:
    def parse(raw: str) -> float:
        expected = "setting.expected_seconds_or_zero" if allow_zero else "setting.expected_positive_seconds"
        try:
            value = float(raw)
        except ValueError:
            raise Expected(expected) from None
        if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            raise Expected(expected)
        return value

    return parse


seconds = _seconds(allow_zero=True)
positive_seconds = _seconds(allow_zero=False)


ENGINE_APIS = ("legacy", "v4")


engine_api = one_of(ENGINE_APIS)  # which engine surface sessions run on


# Remote access and tracing are read where they are used (remote_config.py, main.py), with the
# same converters; these only check, so that a bad value stops the bridge at start.

def flag(raw: str) -> bool:
    value = remote_config.flag(raw)
    if value is None:
        raise Expected("setting.expected_flag", on="/".join(sorted(remote_config.TRUE_WORDS)),
                       off="/".join(sorted(remote_config.FALSE_WORDS)))
    return value


def port(raw: str) -> int:
    value = remote_config.port(raw)
    if value is None:
        raise Expected("setting.expected_port")
    return value


def text(raw: str) -> str:
    return raw


def host_names(raw: str) -> tuple[str, ...]:
    names = remote_config.host_names(raw)
    if names is None:
        raise Expected("setting.expected_host_names")
    return names


def project_roots(raw: str) -> tuple[Path, ...]:
    warnings: list[str] = []
    entries: list[object] = [entry for entry in raw.split(os.pathsep) if entry.strip()]
    roots = remote_config.project_roots(entries, Path.home(), warnings, "ZCODE_ACP_PROJECT_ROOTS")
    if warnings:
        raise Expected("setting.expected_folders", sep=repr(os.pathsep), why=warnings[0].split(": ", 1)[1])
    return roots


NOTIFY_FORMATS = ("json", "wecom", "feishu", "dingtalk", "ntfy")  # protocol/notifications.py's FORMATS


def web_address(raw: str) -> str:
    """An ``http(s)://host/…`` address, as given (a webhook's key may be in its query)."""
    from urllib.parse import urlsplit

    value = raw.strip()
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Expected("setting.expected_web_address")
    return value


def page_address(raw: str) -> str:
    """The hub page's public address; a query or fragment is cut off (a token must never ride along)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(web_address(raw))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


notify_format = one_of(NOTIFY_FORMATS)  # the webhook body's format


def zero_or_one(raw: str) -> bool:
    if raw.strip() not in ("0", "1"):
        raise Expected("setting.expected_zero_or_one")
    return raw.strip() == "1"


@dataclass(frozen=True)
class Setting:
    """One environment variable: its name, the Config field it sets, its default, meaning and parser."""

    name: str  # the environment variable
    attr: str | None  # the Config attribute it sets (None: read by remote_config.py, with the config file)
    default: str  # as documented (README, --help)
    meaning: str
    parse: Callable[[str], Any]

    def meaning_in(self, lang: str) -> str:
        """The meaning in ``lang`` (the catalog's ``setting.NAME``; the English one is this ``meaning``)."""
        return self.meaning if lang == EN else t(lang, f"setting.{self.name}", modes=", ".join(MODE_IDS), sep=os.pathsep)


SETTINGS: tuple[Setting, ...] = (
    Setting("ZCODE_BIN", "zcode_bin", "zcode",
            "the ZCode CLI to run (`app-server --stdio` is appended); a `.js`/`.cjs` path runs under `node`; "
            "`zcode-sim` runs the simulator (found next to this Python when not on PATH)",
            backend_command),
    Setting("ZCODE_ACP_MODE", "default_mode", "yolo",
            f"mode of new sessions ({', '.join(MODE_IDS)}); `yolo` runs everything without asking, "
            "`build` asks before risky actions",
            mode),
    Setting("ZCODE_ACP_LANG", "lang", "",
            "the language the bridge speaks to people (`en`, `zh-CN`); unset: the locale's "
            "(`LC_ALL`, `LC_MESSAGES`, `LANG`; any Chinese locale is `zh-CN`), else English", language),
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
    Setting("ZCODE_ACP_DIALOG_GRACE", "dialog_grace", "600",
            "seconds a dialog that no client can see (every client left) waits for one to load its session "
            "before it is declined (0: declined at once)", seconds),
    Setting("ZCODE_ACP_STOP_FALLBACK", "stop_fallback", "5",
            "seconds a stopped turn may run on before its session is closed and resumed", positive_seconds),
    # Notifications (docs/hub.md, "Notifications").
    Setting("ZCODE_ACP_NOTIFY_URL", "notify_url", "",
            "a webhook the bridge posts to when a long turn ends, a dialog waits for an answer or the backend "
            "fails (off when unset)", web_address),
    Setting("ZCODE_ACP_NOTIFY_FORMAT", "notify_format", "json",
            f"the webhook's body: {', '.join(NOTIFY_FORMATS)} (WeCom, Feishu/Lark, DingTalk robots; ntfy)",
            notify_format),
    Setting("ZCODE_ACP_NOTIFY_AFTER", "notify_after", "60",
            "seconds a turn must have run for its end to be notified (0: every turn)", seconds),
    Setting("ZCODE_ACP_NOTIFY_TEXT", "notify_text", "0",
            "`1`: notifications include the prompt's and the answer's text, the session's title and a "
            "dialog's question (never by default)", zero_or_one),
    Setting("ZCODE_ACP_NOTIFY_INTERVAL", "notify_interval", "60",
            "seconds between two notifications of one kind for one session (0: no limit)", seconds),
    Setting("ZCODE_ACP_NOTIFY_LINK", "notify_page", "",
            "the hub page's public address (e.g. `https://agent.example.org/`): notifications link to the "
            "session there (never with the token)", page_address),
    # The Coding Plan's quota (docs/quota.md).
    Setting("ZCODE_ACP_QUOTA", "quota_enabled", "1",
            "`0`: never read the GLM Coding Plan's quota (read by default when a Coding Plan key exists: "
            "`zcode-acp setup`)", zero_or_one),
    Setting("ZCODE_ACP_QUOTA_URL", "quota_url", "",
            "where the quota is read from, with the key (default: the provider's own endpoint, api.z.ai or "
            "open.bigmodel.cn)", web_address),
    Setting("ZCODE_ACP_QUOTA_RETRY", "quota_retry", "0",
            "`1`: a turn the GLM Coding Plan's window stopped is retried once the window resets, with a "
            "countdown you can cancel (v4 path only: `ZCODE_ACP_ENGINE_API=v4`)", zero_or_one),
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
    Setting("ZCODE_ACP_PUBLIC_HOST", None, "",
            "host names (separated by `,`) a tunnel or proxy serves the hub under, allowed beside loopback in "
            "`Host` and `Origin`; overrides `remote.publicHost`", host_names),
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


def markdown_table(lang: str = EN) -> str:
    """The README's configuration table (README.zh-CN.md's with ``zh-CN``), generated from ``SETTINGS``."""
    head = "| variable | default | meaning |" if lang == EN else "| 变量 | 默认值 | 说明 |"
    lines = [head, "| --- | --- | --- |"]
    for setting in SETTINGS:
        default = f"`{setting.default}`" if setting.default else "—"
        lines.append(f"| `{setting.name}` | {default} | {setting.meaning_in(lang)} |")
    return "\n".join(lines)


if __name__ == "__main__":  # ``python -m zcode_acp.config.settings [zh-CN]``: print the README table
    print(markdown_table(sys.argv[1] if len(sys.argv) > 1 else EN))
