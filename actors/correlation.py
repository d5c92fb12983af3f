"""The correlation table: requests we sent that still await an answer.

One type for both directions the bridge asks in — the Backend (requests to
the ZCode CLI, each with a deadline) and a ClientConnection (dialogs sent to
an editor, no deadline: the InteractionRouter times those). Each entry knows
whom to tell and which typed reply message to build; the answer, a timeout,
a withdrawal or the connection closing ends it exactly once, and ``fail_all``
on close leaves nobody waiting.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable, Iterator

import gevent

from zcode_acp.actors.base import safe_tell
from zcode_acp.actors.messages import ErrorDict, Json, RequestTimedOut

ReplyFactory = Callable[[Json, "ErrorDict | None"], Any]


@dataclass(slots=True)
class Pending:
    """One request awaiting its answer: whom to tell, how, and until when."""

    request_id: Json
    method: str
    reply_to: Any
    reply: ReplyFactory
    key: Any = None  # the caller's name for it, to withdraw it
    timeout: float | None = None
    timer: Any = None
    generation: int = 0  # which process (or connection) it was sent to
    sent_at: float = 0.0  # the event loop's clock when it was sent
    extended: int = 0  # how many times its deadline was pushed back

    def message(self, result: Json, error: ErrorDict | None) -> Any:
        return self.reply(result, error)


class Correlation:
    def __init__(self, owner: Any = None) -> None:
        self.owner = owner  # told RequestTimedOut(request_id) when a deadline passes
        self._ids = itertools.count(1)
        self._pending: dict[Json, Pending] = {}

    def __contains__(self, request_id: Json) -> bool:
        try:
            return request_id in self._pending
        except TypeError:  # an unhashable id is never one of ours
            return False

    def __len__(self) -> int:
        return len(self._pending)

    def __iter__(self) -> Iterator[Pending]:
        return iter(list(self._pending.values()))

    def next_id(self) -> int:
        return next(self._ids)

    def open(self, request_id: Json, method: str, reply_to: Any, reply: ReplyFactory, *,
             timeout: float | None = None, key: Any = None, generation: int = 0) -> Pending:
        pending = Pending(request_id, method, reply_to, reply, key, timeout, None, generation,
                          gevent.get_hub().loop.now())
        if timeout is not None and self.owner is not None:
            pending.timer = gevent.get_hub().loop.timer(timeout)
            pending.timer.start(safe_tell, self.owner, RequestTimedOut(request_id))
        self._pending[request_id] = pending
        return pending

    def extend(self, request_id: Json) -> None:
        """Restart an entry's deadline (a whole ``timeout`` from now)."""
        pending = self.get(request_id)
        if pending is None or pending.timeout is None or self.owner is None:
            return
        if pending.timer is not None:
            pending.timer.close()
        pending.extended += 1
        pending.timer = gevent.get_hub().loop.timer(pending.timeout)
        pending.timer.start(safe_tell, self.owner, RequestTimedOut(request_id))

    def get(self, request_id: Json) -> Pending | None:
        return self._pending.get(request_id) if request_id in self else None

    def pop(self, request_id: Json) -> Pending | None:
        """End an entry without telling anyone (its answer is being delivered by the caller)."""
        pending = self._pending.pop(request_id, None) if request_id in self else None
        if pending is not None and pending.timer is not None:
            pending.timer.close()
        return pending

    def answer(self, request_id: Json, result: Json, error: ErrorDict | None) -> tuple[Any, Any] | None:
        """(whom to tell, the reply message) for an answer; None if nobody waits for it."""
        pending = self.pop(request_id)
        if pending is None:
            return None
        return pending.reply_to, pending.message(result, error)

    def fail(self, request_id: Json, error: ErrorDict) -> bool:
        pending = self.pop(request_id)
        if pending is None:
            return False
        safe_tell(pending.reply_to, pending.message(None, error))
        return True

    def fail_all(self, error: ErrorDict) -> int:
        entries = list(self._pending)
        for request_id in entries:
            self.fail(request_id, error)
        return len(entries)

    def withdraw(self, key: Any) -> list[Json]:
        """Forget the entries opened under ``key`` (nobody is told); their ids."""
        ids = [request_id for request_id, pending in self._pending.items() if pending.key == key]
        for request_id in ids:
            self.pop(request_id)
        return ids
