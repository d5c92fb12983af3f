"""Remote-access settings: the user's config file, overridden by the environment.

``$XDG_CONFIG_HOME/zcode-acp/config.json`` (default ``~/.config/...``),
section ``remote``::

    {"remote": {"enabled": true, "token": "...", "hubHost": "127.0.0.1",
                "hubPort": 8377, "bridgePort": 8378, "projectRoots": ["~/src"],
                "publicHost": "agent.example.org"}}

Each environment variable, when set and valid, wins over the file's field.
The file holds a secret, so a token is taken from it only when the file is
private (no group/other permission bits); otherwise a warning says why and
the token counts as missing. ``parse_remote_config`` is pure (text, mode and
environment in; a frozen ``RemoteConfig`` out); ``load_remote_config`` does
the reading. Documented in docs/hub.md ("Configuration").
"""

from __future__ import annotations

import json
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Mapping

from zcode_acp.protocol.i18n import EN, language_from_env, t

log = logging.getLogger(__name__)

DEFAULT_HUB_HOST = "127.0.0.1"
DEFAULT_HUB_PORT = 8377
DEFAULT_BRIDGE_PORT = 8378
TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})
# Shorter tokens are refused: a peer that sees a challenge's answer must not be able to
# guess the token offline, nor a stranger online (docs/security.md).
MIN_TOKEN_LENGTH = 16


@dataclass(frozen=True)
class RemoteConfig:
    """Remote access and the hub, from the config file and the environment (docs/remote.md)."""

    enabled: bool = False
    token: str | None = None
    hub_host: str = DEFAULT_HUB_HOST
    hub_port: int = DEFAULT_HUB_PORT
    bridge_port: int = DEFAULT_BRIDGE_PORT
    project_roots: tuple[Path, ...] = ()
    hub_autostart: bool = True
    # Host names a tunnel or proxy serves the hub under (beside loopback): Host/Origin allow-list.
    public_hosts: tuple[str, ...] = ()
    config_path: Path | None = None
    # What was ignored and why (the loader logs each once).
    warnings: tuple[str, ...] = ()
    # Why a token that was given was refused (too short, a shared file), one of ``warnings``: a
    # command that needs a token says this one line instead of "no token" (issue 29).
    token_problem: str = ""
    # Where the token came from: "env" (ZCODE_ACP_REMOTE_TOKEN, readable in /proc/<pid>/environ by any
    # process of the same user for the bridge's whole life), "file" (remote.token, 0600), or "".
    token_source: str = ""


def config_path(env: Mapping[str, str], home: Path) -> Path:
    base = env.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if base and Path(base).is_absolute() else home / ".config"
    return root / "zcode-acp" / "config.json"


def flag(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    return None


def port(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int) and 1 <= value <= 65535:
        return value
    return None


def host_names(value: object) -> tuple[str, ...] | None:
    """``"a.example.org"``, ``"a.example.org,b.example.org"`` or a list of names."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list):
        return None
    names = tuple(n.strip().lower() for n in items if isinstance(n, str) and n.strip())
    if len(names) != len([n for n in items if not isinstance(n, str) or n.strip()]):
        return None
    if any(len(n) > 253 or not all(c.isalnum() or c in "-." for c in n) for n in names):
        return None
    return names


def project_roots(values: list[object], home: Path, warnings: list[str], origin: str,
                  lang: str = EN) -> tuple[Path, ...]:
    roots: list[Path] = []
    for value in values:
        if not isinstance(value, str) or not value.strip():
            warnings.append(t(lang, "remote.root_not_a_path", origin=origin, value=repr(value)))
            continue
        text = value.strip()
        if text == "~":
            path = home
        elif text.startswith("~/"):
            path = home / text[2:]
        else:
            path = Path(text)
        if not path.is_absolute():
            warnings.append(t(lang, "remote.root_not_absolute", origin=origin, value=repr(value)))
            continue
        roots.append(path)
    return tuple(roots)


def parse_remote_config(file_text: str | None, file_mode: int | None, env: Mapping[str, str],
                        *, home: Path, path: Path | None = None) -> RemoteConfig:
    """Combine the file (``None`` when absent) and the environment.

    ``file_mode`` is the file's ``st_mode``; a token from a file readable or
    writable by group or others is refused.
    """
    warnings: list[str] = []
    lang = language_from_env(env)  # the warnings are a person's to read (doctor, the start-up lines)
    where = str(path) if path else t(lang, "remote.config_file")
    section: dict[str, Any] = {}
    if file_text is not None:
        try:
            document = json.loads(file_text)
        except ValueError as exc:
            warnings.append(t(lang, "remote.not_json", where=where, error=exc))
            document = {}
        if not isinstance(document, dict):
            # Issue 29: ``[1,2]`` was ignored without a word; a bad file is warn-only (README, Configuration).
            warnings.append(t(lang, "remote.not_an_object", where=where, kind=type(document).__name__))
            document = {}
        remote = document.get("remote")
        if isinstance(remote, dict):
            section = remote
        elif remote is not None:
            warnings.append(t(lang, "remote.section_not_an_object", where=where))

    def pick(key: str, env_name: str, convert: Any, default: Any) -> Any:
        raw_env = env.get(env_name)
        if raw_env is not None and raw_env.strip() != "":
            converted = convert(raw_env)
            if converted is not None:
                return converted
            warnings.append(t(lang, "remote.env_invalid", name=env_name, raw=repr(raw_env)))
        if key in section:
            converted = convert(section[key])
            if converted is not None:
                return converted
            warnings.append(t(lang, "remote.file_invalid", where=where, field=key, raw=repr(section[key])))
        return default

    enabled = pick("enabled", "ZCODE_ACP_REMOTE", flag, False)
    hub_host = pick("hubHost", "ZCODE_ACP_HUB_HOST",
                    lambda v: v.strip() if isinstance(v, str) and v.strip() else None,
                    DEFAULT_HUB_HOST)
    hub_port = pick("hubPort", "ZCODE_ACP_HUB_PORT", port, DEFAULT_HUB_PORT)
    bridge_port = pick("bridgePort", "ZCODE_ACP_REMOTE_PORT", port, DEFAULT_BRIDGE_PORT)
    autostart = pick("hubAutostart", "ZCODE_ACP_HUB_AUTOSTART", flag, True)

    public_hosts = pick("publicHost", "ZCODE_ACP_PUBLIC_HOST", host_names, ())

    token: str | None = None
    token_problem = ""
    env_token = env.get("ZCODE_ACP_REMOTE_TOKEN", "").strip()
    token_source = ""
    if env_token:
        token, token_source = env_token, "env"
    elif "token" in section:
        file_token = section["token"]
        if not isinstance(file_token, str) or not file_token.strip():
            warnings.append(t(lang, "remote.token_not_a_string", where=where))
        elif file_mode is not None and stat.S_IMODE(file_mode) & 0o077:
            token_problem = t(lang, "remote.token_file_shared", where=where, mode=f"{stat.S_IMODE(file_mode):04o}")
            warnings.append(token_problem)
        else:
            token, token_source = file_token.strip(), "file"
    if token is not None and len(token) < MIN_TOKEN_LENGTH:
        token_problem = t(lang, "remote.token_too_short", length=MIN_TOKEN_LENGTH)
        warnings.append(token_problem)
        token, token_source = None, ""

    env_roots = env.get("ZCODE_ACP_PROJECT_ROOTS", "")
    if env_roots.strip():
        roots = project_roots([r for r in env_roots.split(os.pathsep) if r.strip()], home, warnings,
                              "ZCODE_ACP_PROJECT_ROOTS", lang)
    elif isinstance(section.get("projectRoots"), list):
        roots = project_roots(section["projectRoots"], home, warnings, f"{where}: remote.projectRoots", lang)
    else:
        if "projectRoots" in section:
            warnings.append(t(lang, "remote.roots_not_a_list", where=where))
        roots = ()

    return RemoteConfig(enabled=enabled, token=token, hub_host=hub_host, hub_port=hub_port,
                        bridge_port=bridge_port, project_roots=roots, hub_autostart=autostart,
                        public_hosts=public_hosts, config_path=path, warnings=tuple(warnings),
                        token_problem=token_problem, token_source=token_source)


def load_remote_config(env: Mapping[str, str] | None = None, *, home: Path | None = None,
                       log_warnings: bool = True) -> RemoteConfig:
    """Read the file (if any) and the environment; log what was ignored."""
    env = os.environ if env is None else env
    home = home or Path(env.get("HOME") or Path.home())
    path = config_path(env, home)
    text: str | None = None
    mode: int | None = None
    try:
        with open(path, encoding="utf-8") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            text = handle.read()
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("cannot read %s: %s", path, exc)
    config = parse_remote_config(text, mode, env, home=home, path=path)
    if log_warnings:
        for warning in config.warnings:
            log.warning("%s", warning)
    return config
