"""Which engine the simulator plays: the dialect and the version (docs/simulator.md, Dialects).

``ZCODE_SIM_DIALECT`` picks the dialect: ``classic`` (the seed's app-server, the
default) or ``cli016`` (the 0.16 desktop engine, ``sim/cli016.py``).
``ZCODE_SIM_VERSION`` is a separate switch: the CLI version the simulator claims,
which removes the methods that version lacks (the version floor).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

DIALECTS = ("classic", "cli016")
# The names a dialect had before: `today` was the 0.16 engine until it was named for its
# version (a name that said "today" would be wrong by the next release).
ALIASES = {"today": "cli016"}
# What each dialect claims to be when ZCODE_SIM_VERSION is not set.
DEFAULT_VERSION = {"classic": "0.15.2", "cli016": "0.16.9"}
# Methods the seed calls "extension methods": present from CLI 0.15.0 on.
EXTENSION_METHODS = frozenset({
    "session/fork", "session/rewind", "session/goal", "session/compact", "session/steer",
    "session/setMode", "session/setThoughtLevel", "session/setModel", "session/cancelBackgroundTask",
})
SUBSCRIBE_FLOOR = (0, 14, 8)
EXTENSION_FLOOR = (0, 15, 0)
# Below this the simulator plays no v4 data plane (``v4/*`` answers -32601). A choice of the
# simulator, not a known floor: the evidence has installed 3.14.4 (CLI 0.16.9) answering v4, and
# which release first did is not known; the bridge detects v4 by the engine's answer.
V4_FLOOR = (0, 16, 0)
# Installed 3.14.4 answers as CLI 0.16.9 and lacks what the newer public source (jimpablo/ZCode @aac4755)
# adds to v4 (the ``guarded`` mode, ``setHighspeedMetrics``); a claimed version above it plays that source.
NEWER_V4_SOURCE = (0, 16, 10)
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
        name = ALIASES.get(name, name)
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
        return self.name == "cli016"

    @property
    def newer_v4_source(self) -> bool:
        """Whether v4 commands follow the source newer than installed 3.14.4 (CLI 0.16.9)."""
        return (parse_version(self.version) or ()) >= NEWER_V4_SOURCE

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
