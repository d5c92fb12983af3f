"""What one Turn has sent its clients so far, kept for a client that loads the session mid-turn.

The engine's history lags a running turn (it may hold none of it, the prompt
only, or part of the answer), so a client that reconnects, or a second client
that loads the session, would miss what streamed before it joined. The Turn
records every line it delivers, its prompt first (as the ``user_message_chunk``
the other clients saw), and answers a ``ReplayTurn`` with the history before
the turn followed by this record; the lines it delivered while that client
held the session are the same lines, so the client drops them
(docs/sessions.md, "Loading a session during a turn"). Plain bookkeeping,
owned by the Turn.
"""

from __future__ import annotations

MAX_RECORD_BYTES = 16 * 1024 * 1024  # beyond this a load falls back to the history alone


class TurnRecord:
    __slots__ = ("lines", "overflowed", "size")

    def __init__(self, first: bytes = b"") -> None:
        self.lines: list[bytes] = [first] if first else []
        self.size = len(first)
        self.overflowed = False

    def add(self, lines: bytes) -> None:
        if self.overflowed or not lines:
            return
        self.size += len(lines)
        if self.size > MAX_RECORD_BYTES:
            self.overflowed = True
            self.lines = []  # the memory back: a load now reads the whole history instead
            return
        self.lines.append(lines)

    def joined(self) -> bytes:
        return b"".join(self.lines)
