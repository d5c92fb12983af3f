"""One conversation's v4 state and the commits that change it.

``ConversationState`` holds what a ``conversation/<sessionId>`` snapshot holds: the
session-wide keys (``snapshot.initial_state``) and the rows (``rows.RowStore``). Every
change goes through it so that it is recorded as the op a subscriber gets
(``state.updated {patch}`` replaces each key whole, as the engine's ``statePatchSchema``
says), and ``commit`` turns a batch of changes into one numbered log entry.

``revision`` is the number commands carrying ``baseRevision`` are judged against. It
moves when something such a command decides on changes: the config (model, modes), the
queue, the title, or the rows being cut by an edit or retry (docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .log import Commit, DeltaLog
from .rows import RowStore
from .snapshot import availability, initial_state

REVISED_KEYS = frozenset(("config", "queue", "meta"))


class ConversationState:
    def __init__(self, session_id: str, config: dict[str, Any], *, clock: Callable[[], float],
                 context_window: int | None = None, log_epoch: str | None = None) -> None:
        self.session_id = session_id
        self.clock = clock
        """Milliseconds since the epoch (injected: tests pass a counter)."""
        self.log = DeltaLog(f"conversation/{session_id}", log_epoch)
        self.state = initial_state(session_id, self.log.log_epoch, config)
        self.rows = RowStore()
        self.context_window = context_window
        self._patch: dict[str, Any] = {}

    @property
    def topic(self) -> str:
        return self.log.topic

    @property
    def revision(self) -> int:
        return int(self.state["revision"])

    @property
    def running(self) -> bool:
        return bool(self.state["control"]["phase"] == "running")

    def snapshot(self) -> dict[str, Any]:
        """The whole state as a snapshot payload carries it."""
        return {**self.state, "seq": self.log.seq, "rows": self.rows.window()}

    def now(self) -> int:
        return int(self.clock())

    # -- recording changes ---------------------------------------------------------------

    def set(self, key: str, value: Any) -> None:
        """Replace a session-wide key whole (never merged into: a subscriber replaces it too)."""
        if self.state.get(key) == value:
            return
        self.state[key] = value
        self._patch[key] = value
        if key in REVISED_KEYS:
            self.bump_revision()

    def bump_revision(self) -> None:
        self.state["revision"] = self.revision + 1
        self._patch["revision"] = self.state["revision"]

    def refresh_availability(self) -> None:
        compacting = any(work.get("kind") == "compact" for work in self.state["control"]["activeWorks"])
        self.set("availability", availability(running=self.running, has_rows=self.rows.total_count > 0,
                                              goal=self.state.get("goal") is not None, compacting=compacting))

    def commit(self) -> Commit | None:
        """The changes made since the last commit, as one log entry (None when nothing changed)."""
        ops = self.rows.take_ops()
        if self._patch:
            ops.append({"op": "state.updated", "patch": self._patch})
            self._patch = {}
        return self.log.commit(ops)
