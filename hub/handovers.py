"""The versions this machine's hubs have handed over to: at most one hand-over per version.

A hub hands over to a strictly newer bridge so that bridge can start a hub
from its newer code. If that successor turns out to report an older version
(a bridge and its hub command from different installs, a supervisor that
restarts the old binary), the next newer bridge would ask again, and again:
the restart loop a phone sees as a close every minute. The record outlives
each hub (a small JSON file, mode 0600, next to the other state), so a
version that was handed over to once is never handed over to again.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

import ujson

log = logging.getLogger("zcode_acp.hub")

MAX_VERSIONS = 64  # the file stays small whatever happens
MAX_FILE_BYTES = 64 * 1024


def default_record_path(env: Mapping[str, str]) -> Path:
    state = env.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "zcode-acp" / "hub-handovers.json"


class HandoverRecord:
    """Versions already handed over to; in memory only when ``path`` is None."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._versions: list[str] = self._load()

    def _load(self) -> list[str]:
        if self.path is None:
            return []
        try:
            with self.path.open("rb") as stream:
                data = ujson.loads(stream.read(MAX_FILE_BYTES))
        except (OSError, ValueError):
            return []
        if not isinstance(data, list):
            return []
        return [v for v in data if isinstance(v, str) and len(v) <= 64][-MAX_VERSIONS:]

    def already(self, version: str) -> bool:
        return version in self._versions

    def remember(self, version: str) -> None:
        """Before the hand-over is answered: a crash right after still counts it."""
        self._versions = [*self._versions, version][-MAX_VERSIONS:]
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            partial = self.path.with_name(self.path.name + ".part")
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as stream:
                stream.write(ujson.dumps(self._versions).encode("utf-8"))
            os.replace(partial, self.path)
        except OSError as exc:
            # Still once per version for this hub's lifetime; logged so a loop can be traced.
            log.warning("hub: cannot record the hand-over in %s: %s", self.path, exc)
