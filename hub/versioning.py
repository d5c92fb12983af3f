"""Version comparison for the hand-over handshake (docs/hub.md, "Hand-over").

A bridge newer than the hub asks it to step down so the bridge can start a
hub from its own, newer code. Versions compare by their leading numeric
release parts (``0.10.0 > 0.9.3``); anything unparseable is never newer, so a
source checkout (``0.0.0+source``) never evicts an installed hub.
"""

from __future__ import annotations

import re

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
    """The installed distribution's version (what bridges and the hub compare)."""
    try:
        from importlib.metadata import version as dist_version

        return dist_version("zcode-acp")
    except Exception:
        return "0.0.0+source"
