"""The user's GLM Coding Plan key: where it is kept, and which one the bridge uses (docs/quota.md).

Two sources, the first that has a key wins:

1. ``zcode-acp setup`` — ``$XDG_CONFIG_HOME/zcode-acp/coding-plan.json`` (default ``~/.config/...``),
   ``{"provider": "zai" | "bigmodel", "apiKey": "..."}``, written 0600. A file anyone else can
   read is refused (a warning says why), as ``config.json``'s token is.
2. The engine's own personal provider configuration (``ZCODE_PERSONAL_PROVIDER_CONFIG_FILE``, else
   ``<ZCODE_HOME>/v2/provider_config.json``): a provider rule whose access type is
   ``zhipu-coding-plan-api-key``. Its provider is told by the rule's template (the engine's
   built-in templates ``zai-api`` and ``bigmodel-api``), Z.ai otherwise.

The key is a secret: it is never logged and never put in any environment (it is read from these
files when needed, so no child can inherit it); it is sent only to the provider's own quota endpoint
and, when the engine asks, in the answer to its provider-header request.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Mapping

from zcode_acp.config.remote import config_path
from zcode_acp.protocol.host_requests import CODING_PLAN_ACCESS
from zcode_acp.protocol.i18n import EN, t
from zcode_acp.protocol.quota import PROVIDERS

KEY_FILE = "coding-plan.json"
ENGINE_CONFIG_VARIABLE = "ZCODE_PERSONAL_PROVIDER_CONFIG_FILE"
TEMPLATE_PROVIDERS = {"zai-api": "zai", "bigmodel-api": "bigmodel"}
MAX_FILE_BYTES = 1024 * 1024  # a key file or provider configuration larger than this is not read


@dataclass(frozen=True)
class PlanKey:
    provider: str  # "zai" or "bigmodel": which endpoint the quota is read from
    api_key: str
    source: str  # "setup" (our file) or "engine" (the engine's provider configuration)

    def __repr__(self) -> str:  # a key never reaches a log line through repr()
        return f"PlanKey(provider={self.provider!r}, source={self.source!r})"


@dataclass(frozen=True)
class PlanKeyLookup:
    key: PlanKey | None
    warnings: tuple[str, ...] = ()  # in the language asked for: doctor and `zcode-acp quota` print them


def key_path(env: Mapping[str, str], home: Path) -> Path:
    return config_path(env, home).with_name(KEY_FILE)


def engine_config_path(env: Mapping[str, str], zcode_home: Path) -> Path:
    named = env.get(ENGINE_CONFIG_VARIABLE, "")
    return Path(named) if named else zcode_home / "v2" / "provider_config.json"


def _read_json(path: Path) -> tuple[Any, int | None]:
    """The file's JSON and mode; (None, None) when it is missing, not a regular file, huge or unreadable."""
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
                return None, None
            return json.loads(handle.read(MAX_FILE_BYTES)), info.st_mode
    except (OSError, ValueError):
        return None, None


def parse_key_file(value: Any, mode: int | None, where: Path, lang: str = EN) -> PlanKeyLookup:
    if value is None:
        return PlanKeyLookup(None)
    if mode is not None and stat.S_IMODE(mode) & 0o077:
        return PlanKeyLookup(None, (t(lang, "plan_key.shared", where=where, mode=f"{stat.S_IMODE(mode):04o}"),))
    if not isinstance(value, dict):
        return PlanKeyLookup(None, (t(lang, "plan_key.not_an_object", where=where),))
    provider, api_key = value.get("provider"), value.get("apiKey")
    if provider not in PROVIDERS or not isinstance(api_key, str) or not api_key.strip():
        return PlanKeyLookup(None, (t(lang, "plan_key.incomplete", where=where),))
    return PlanKeyLookup(PlanKey(provider, api_key.strip(), "setup"))


def engine_plan_key(config: Any) -> PlanKey | None:
    """The first enabled Coding Plan rule of the engine's personal provider configuration."""
    rules = (((config or {}).get("config") or {}).get("providerConfigRules") or {}).get("providerRules") \
        if isinstance(config, dict) else None
    for rule in rules if isinstance(rules, list) else []:
        if not isinstance(rule, dict) or rule.get("enabled") is False:
            continue
        access = ((rule.get("config") or {}).get("access") or {}) if isinstance(rule.get("config"), dict) else {}
        api_key = access.get("apiKey") if isinstance(access, dict) else None
        if access.get("type") == CODING_PLAN_ACCESS and isinstance(api_key, str) and api_key.strip():
            provider = TEMPLATE_PROVIDERS.get(str(rule.get("templateId")), "zai")
            return PlanKey(provider, api_key.strip(), "engine")
    return None


def find_plan_key(env: Mapping[str, str], home: Path, zcode_home: Path, lang: str = EN) -> PlanKeyLookup:
    """The key the bridge uses, and what was ignored on the way (for ``doctor`` and one log line:
    its ``warnings`` in ``lang``, English for the log)."""
    where = key_path(env, home)
    own = parse_key_file(*_read_json(where), where, lang)
    if own.key is not None:
        return own
    engine_config, _mode = _read_json(engine_config_path(env, zcode_home))
    return PlanKeyLookup(engine_plan_key(engine_config), own.warnings)


def own_plan_key() -> str | None:
    """The key ``zcode-acp setup`` kept, or None: what the bridge adds to the engine's own when it asks."""
    where = key_path(os.environ, Path.home())
    found = parse_key_file(*_read_json(where), where).key
    return found.api_key if found else None


def save_plan_key(path: Path, provider: str, api_key: str) -> None:
    """Write the key file atomically, 0600 from its first byte, in a 0700 folder if it makes one."""
    if provider not in PROVIDERS:
        raise ValueError(provider)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".coding-plan.", dir=path.parent)  # mkstemp: 0600, unique
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"provider": provider, "apiKey": api_key}, handle)
            handle.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
