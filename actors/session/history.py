"""The Session's history read for ``session/load`` (docs/sessions.md, "`session/load` and `session/resume`").

After a resume the backend's history fills in for a moment, so the first load
after one reads it until its size stops changing (bounded); any other load
reads it once (a second read cost a warm 10,000-message load ~100 ms:
docs/performance.md). One read serves every load that waits for it. Bookkeeping only; the Session makes the calls.
"""

from __future__ import annotations

from typing import Any

from zcode_acp.protocol.history import message_count

POLL_INTERVAL = 0.1  # seconds between two reads while the history grows
POLL_LIMIT = 20  # reads


class HistoryRead:
    def __init__(self) -> None:
        self.waiting: list[Any] = []  # Attach messages that want the replay
        self.in_flight = False
        self._count = -1
        self._reads = 0
        self.messages: Any = None
        self.filling = False  # resumed, and the history not yet seen to stop growing

    def resumed(self) -> None:
        self.filling = True

    def want(self, attach: Any) -> bool:
        """Queue a load; True when a read must start (none is in flight)."""
        self.waiting.append(attach)
        if self.in_flight:
            return False
        self.in_flight = True
        self._count, self._reads, self.messages = -1, 0, None
        return True

    def read_sent(self) -> None:
        self._reads += 1

    def read(self, messages: Any) -> bool:
        """One read's messages; True when it is still growing and must be read again."""
        count = message_count(messages)
        self.messages = messages
        if self.filling and count != self._count and self._reads < POLL_LIMIT:
            self._count = count
            return True
        self.filling = False
        return False

    def finish(self) -> list[Any]:
        """The loads that waited; the read is over."""
        waiting, self.waiting = self.waiting, []
        self.in_flight = False
        self.messages = None  # the replay is built: a long history is not kept until the next load
        return waiting
