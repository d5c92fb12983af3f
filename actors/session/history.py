"""The Session's history read for ``session/load`` (docs/sessions.md, "`session/load` and `session/resume`").

After a resume the backend's history fills in for a moment, so the first load
after one reads it until its size stops changing (bounded); any other load
reads it once (a second read cost a warm 10,000-message load ~100 ms:
docs/performance.md). One read serves every load that waits for it. Bookkeeping only; the Session makes the calls.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

from zcode_acp.protocol.history import message_count, replay_updates

POLL_INTERVAL = 0.1  # seconds between two reads while the history grows
POLL_LIMIT = 20  # reads


class HistoryRead:
    # Every live Session has one: slots, not a __dict__ (docs/performance.md, "Idle sessions").
    __slots__ = ("_count", "_reads", "filling", "in_flight", "messages", "prepared", "waiting")

    def __init__(self) -> None:
        self.waiting: list[Any] = []  # Attach messages that want the replay
        self.in_flight = False
        self._count = -1
        self._reads = 0
        self.messages: Any = None
        self.filling = False  # resumed, and the history not yet seen to stop growing
        # While the history is read again (after a resume), the replay of the read before, encoded:
        # (its messages, the bytes). The next read's replay when that read brings the same messages.
        self.prepared: tuple[Any, bytes] | None = None

    def resumed(self) -> None:
        self.filling = True

    def want(self, attach: Any) -> bool:
        """Queue a load; True when a read must start (none is in flight)."""
        self.waiting.append(attach)
        if self.in_flight:
            return False
        self.in_flight = True
        self._count, self._reads, self.messages, self.prepared = -1, 0, None, None
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

    def prepare(self, encode: Callable[[list[dict[str, Any]]], bytes]) -> None:
        """Build the replay of this read while the next one is awaited: after a resume a cold load
        reads at least twice, ``POLL_INTERVAL`` apart, and the second read of a history that stopped
        growing brings the same messages. Building and encoding 10,000 messages' replay then costs
        the load's answer nothing (docs/performance.md, "The cold load")."""
        self.prepared = (self.messages, encode(replay_updates(self.messages)))

    def encoded_replay(self, encode: Callable[[list[dict[str, Any]]], bytes]) -> bytes:
        """The replay of the last read, encoded: the prepared one when the read brought the same messages."""
        if self.prepared is not None and self.prepared[0] == self.messages:
            return self.prepared[1]
        return encode(replay_updates(self.messages))

    def finish(self) -> list[Any]:
        """The loads that waited; the read is over."""
        waiting, self.waiting = self.waiting, []
        self.in_flight = False
        self.messages = None  # the replay is built: a long history is not kept until the next load
        self.prepared = None
        return waiting


def turn_start(messages: Any, prompt_text: str | None) -> int:
    """Where a running (or just finished) turn begins in the engine's history.

    The history may hold none of the turn yet, its prompt only, or part of the
    answer. The turn begins at the last user message if that message is the
    turn's prompt; otherwise the engine has not recorded the prompt yet and the
    whole history comes before the turn. Two identical prompts in a row whose
    second is not recorded yet are mistaken for each other: the record then
    repeats what the history held of the first.
    """
    if not isinstance(messages, list):
        return 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        info = message.get("info") if isinstance(message, dict) else None
        if not isinstance(info, dict) or info.get("role") != "user":
            continue
        said = "".join(part.get("text", "") for part in message.get("parts") or []
                       if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str))
        return index if prompt_text is not None and said.strip() == prompt_text.strip() else len(messages)
    return len(messages)


def split_replay(messages: Any, prompt_text: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the replay updates of the history before the turn, those of the turn's part of it)."""
    if not isinstance(messages, list):
        return replay_updates(messages), []
    cut = turn_start(messages, prompt_text)
    return replay_updates(messages[:cut]), replay_updates(messages[cut:])

