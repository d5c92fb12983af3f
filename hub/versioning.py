"""Version comparison for the hand-over handshake (docs/hub.md, "Hand-over").

A bridge newer than the hub asks it to step down so the bridge can start a
hub from its own, newer code. Versions compare by their leading numeric
release parts (``0.10.0 > 0.9.3``); anything unparseable is never newer, so a
source checkout (``0.0.0+source``) never evicts an installed hub.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path

_RELEASE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


def release(version: str) -> tuple[int, ...] | None:
    match = _RELEASE.match(version or "")
    if match is None:
        return None
    parts = [int(p) for p in match.group(1).split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def is_newer(candidate: str, current: str) -> bool:
    a, b = release(candidate), release(current)
    return a is not None and b is not None and a > b


def package_version() -> str:
    """This distribution's version (``zcode-acp-bridge``): what bridges and the hub compare.

    Never another project's metadata (``zcode-acp`` on PyPI is unrelated). Not installed,
    it is the source tree's ``setup.cfg`` version, so a hub and a bridge run from one
    checkout agree and neither hands over to the other.
    """
    from zcode_acp import SOURCE_VERSION, version

    found = version()
    if found != SOURCE_VERSION:
        return found
    return source_tree_version() or SOURCE_VERSION


def source_tree_version(tree: Path | None = None) -> str | None:
    """``[metadata] version`` of the checkout this package was imported from, if it is one."""
    import zcode_acp

    root = tree or Path(zcode_acp.__file__).resolve().parents[1]
    parser = configparser.ConfigParser()
    try:
        parser.read(root / "setup.cfg", encoding="utf-8")
        if parser.get("metadata", "name", fallback="") != "zcode-acp-bridge":
            return None
        return parser.get("metadata", "version", fallback=None)
    except (OSError, configparser.Error):
        return None
