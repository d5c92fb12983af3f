"""Flow control from the backend's stdout to the client's.

The backend reader takes a ``Token`` for each batch it reads and may only
have ``limit`` of them alive; every actor that handles part of the batch
(the Backend, each Session it concerns, their Turns and BackgroundTasks)
shares the token on and marks its part done. Reading the backend therefore
never runs more than a few batches ahead of what the tree has processed, and
a slow client (whose writer pauses reading, ``actors/writer.py``) cannot make
batches pile up in mailboxes.

A token whose message was dropped with a stopped actor is collected by
reference counting and simply stops counting (the set is weak), so a lost
token can never wedge the reader.
"""

from __future__ import annotations

import time
import weakref

import gevent.event


class Token:
    __slots__ = ("__weakref__", "flow", "parts")

    def __init__(self, flow: Flow) -> None:
        self.flow = flow
        self.parts = 1

    def share(self) -> Token:
        """Another actor will handle part of this batch."""
        self.parts += 1
        return self

    def done(self) -> None:
        self.parts -= 1
        if self.parts == 0:
            self.flow.live.discard(self)
            self.flow.freed.set()


class Flow:
    def __init__(self, limit: int = 4) -> None:
        self.limit = limit
        self.live: weakref.WeakSet[Token] = weakref.WeakSet()
        self.freed = gevent.event.Event()

    def take(self) -> Token:
        """A token for the next batch; waits while ``limit`` batches are in flight."""
        while len(self.live) >= self.limit:
            self.freed.clear()
            self.freed.wait(0.05)  # also re-counts tokens that vanished with a stopped actor
        token = Token(self)
        self.live.add(token)
        return token

    def wait_done(self, token: Token, timeout: float) -> None:
        """Until every part of ``token``'s batch is handled (at most ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while token.parts > 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            self.freed.clear()
            self.freed.wait(remaining)


def done(token: Token | None) -> None:
    if token is not None:
        token.done()


def share(token: Token | None) -> Token | None:
    return token.share() if token is not None else None
