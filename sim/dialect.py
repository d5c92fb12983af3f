"""Which engine the simulator plays: the dialect and the version (docs/simulator.md, Dialects).

``ZCODE_SIM_DIALECT`` picks the dialect: ``classic`` (the seed's app-server, the
default) or ``today`` (today's desktop engine, ``sim/today.py``).
``ZCODE_SIM_VERSION`` is a separate switch: the CLI version the simulator claims,
which removes the methods that version lacks (the version floor).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

DIALECTS = ("classic", "today")
# What each dialect claims to be when ZCODE_SIM_VERSION is not set.
DEFAULT_VERSION = {"classic": "0.15.2", "today": "0.16.9"}
# Methods the seed calls "extension methods": present from CLI 0.15.0 on.
EXTENSION_METHODS = frozenset({
    "session/fork", "session/rewind", "session/goal", "session/compact", "session/steer",
    "session/setMode", "session/setThoughtLevel", "session/setModel", "session/cancelBackgroundTask",
})
SUBSCRIBE_FLOOR = (0, 14, 8)
EXTENSION_FLOOR = (0, 15, 0)
# The v4 data plane (``v4/*``) belongs to the 0.16 engines, which speak the ZCode Protocol; the
# oldest CLI the evidence saw take v4 commands is 0.16.x, and 0.15 has no ``v4/`` dispatch.
V4_FLOOR = (0, 16, 0)
# 0.16 app-servers dropped these from their dispatch.
REMOVED_IN_0_16 = frozenset({"session/steer", "session/rewind"})


def parse_version(text: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(part) for part in text.strip().lstrip("v").split("."))
    except ValueError:
        return None


@dataclass(frozen=True)
class Dialect:
    name: str = "classic"
    version: str = DEFAULT_VERSION["classic"]

    @classmethod
    def from_env(cls) -> Dialect:
        name = os.environ.get("ZCODE_SIM_DIALECT", "classic").strip().lower() or "classic"
        if name not in DIALECTS:
            sys.stderr.write(f"zcode-sim: unknown ZCODE_SIM_DIALECT {name!r}; using classic\n")
            name = "classic"
        version = os.environ.get("ZCODE_SIM_VERSION", "").strip() or DEFAULT_VERSION[name]
        if parse_version(version) is None:
            sys.stderr.write(f"zcode-sim: unreadable ZCODE_SIM_VERSION {version!r}; using {DEFAULT_VERSION[name]}\n")
            version = DEFAULT_VERSION[name]
        return cls(name, version)

    @property
    def today(self) -> bool:
        return self.name == "today"

    def too_old_for(self, method: str) -> bool:
        """True when the claimed version lacks ``method`` (it then answers -32601)."""
        version = parse_version(self.version) or ()
        if method == "session/subscribe":
            return version < SUBSCRIBE_FLOOR
        if method.startswith("v4/"):
            return version < V4_FLOOR
        if method in EXTENSION_METHODS and version < EXTENSION_FLOOR:
            return True
        return method in REMOVED_IN_0_16 and version >= (0, 16)
