"""A topic's change log: the numbered commits its frames are cut from.

Every topic the simulator serves (a conversation, a sessions index, a workspace's config)
keeps its state plus the ops of its latest commits, so a subscriber that comes back with
``base {logEpoch, seq}`` can be resumed with deltas instead of a snapshot, as the engine
does. A commit covers ``(from_seq, to_seq]`` with ``to_seq = from_seq + 1``.
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

RETAINED_COMMITS = 4096
"""Commits kept for resumes; a base older than that gets a snapshot."""

def new_log_epoch() -> str:
    """An opaque epoch name, two dash-joined words like the engine's ("musegv3e-mrqoweve")."""
    word = uuid.uuid4().hex
    return f"{word[:8]}-{word[8:16]}"


@dataclass(frozen=True, slots=True)
class Commit:
    topic: str
    from_seq: int
    to_seq: int
    ops: tuple[dict[str, Any], ...]


class DeltaLog:
    """Seq, epoch and retained commits of one topic; tells a listener about each commit."""

    def __init__(self, topic: str, log_epoch: str | None = None) -> None:
        self.topic = topic
        self.log_epoch = log_epoch or new_log_epoch()
        self.seq = 0
        self._commits: deque[Commit] = deque(maxlen=RETAINED_COMMITS)
        self.listeners: list[Callable[[Commit], None]] = []

    def commit(self, ops: list[dict[str, Any]]) -> Commit | None:
        """Number ``ops`` as the next commit and tell the listeners (nothing for no ops)."""
        if not ops:
            return None
        commit = Commit(self.topic, self.seq, self.seq + 1, tuple(ops))
        self.seq += 1
        self._commits.append(commit)
        for listener in list(self.listeners):
            listener(commit)
        return commit

    def since(self, seq: int) -> list[Commit] | None:
        """The commits after ``seq``, or None when they are no longer all retained."""
        if seq == self.seq:
            return []
        if seq > self.seq or not self._commits or self._commits[0].from_seq > seq:
            return None
        return [c for c in self._commits if c.from_seq >= seq]
