"""``zcode-acp setup`` (keep the Coding Plan key) and ``zcode-acp quota`` (one line per window).

Both in the user's language (``ZCODE_ACP_LANG`` or the locale). ``setup`` asks for the key without
echoing it (``getpass``: not in the shell's history, not on the screen) and writes it 0600
(config/coding_plan.py); the key is never printed back, not even in part.
"""

from __future__ import annotations

import getpass
import os
import sys
from datetime import datetime, UTC
from pathlib import Path
from typing import TextIO

from zcode_acp.config.coding_plan import PlanKey, find_plan_key, key_path, save_plan_key
from zcode_acp.protocol.i18n import language_from_env, t
from zcode_acp.protocol.quota import PROVIDERS, QuotaUnavailable, meter_line


def _zcode_home() -> Path:
    named = os.environ.get("ZCODE_HOME", "")
    return Path(named).expanduser() if named else Path.home() / ".zcode"


def run_setup(provider: str | None, out: TextIO | None = None, read_key: object = None) -> int:
    out = out or sys.stdout
    lang = language_from_env(os.environ)
    if provider is None:
        provider = (input(t(lang, "setup.provider") + " [zai]: ").strip() or "zai").lower()
    if provider not in PROVIDERS:
        out.write(t(lang, "setup.bad_provider", value=provider) + "\n")
        return 2
    ask = read_key if callable(read_key) else getpass.getpass
    api_key = str(ask(t(lang, "setup.key") + ": ")).strip()
    if not api_key:
        out.write(t(lang, "setup.empty") + "\n")
        return 1
    path = key_path(os.environ, Path.home())
    save_plan_key(path, provider, api_key)
    out.write(t(lang, "setup.saved", path=path) + "\n")
    return 0


def describe_source(key: PlanKey, lang: str) -> str:
    return t(lang, "quota.source.setup" if key.source == "setup" else "quota.source.engine")


def run_quota(out: TextIO | None = None, url: str | None = None) -> int:
    """Print the plan's windows: 0 when read, 1 when there is no key or no quota (the line says why)."""
    from zcode_acp.net.quota_client import fetch_quota  # gevent: the command's own import

    out = out or sys.stdout
    lang = language_from_env(os.environ)
    found = find_plan_key(os.environ, Path.home(), _zcode_home(), lang)
    for warning in found.warnings:
        out.write(warning + "\n")
    if found.key is None:
        out.write(t(lang, "quota.error.no_key") + "\n")
        return 1
    try:
        snapshot = fetch_quota(found.key.provider, found.key.api_key, url=url)
    except QuotaUnavailable as exc:
        out.write(t(lang, exc.reason, detail=exc.detail) + "\n")
        return 1
    out.write(t(lang, "quota.header", provider=found.key.provider, source=describe_source(found.key, lang)) + "\n")
    now = datetime.now(UTC)
    for meter in snapshot.meters:
        out.write("  " + meter_line(meter, now, lang) + "\n")
    if not snapshot.meters:
        out.write("  " + t(lang, "quota.none") + "\n")
    return 0
