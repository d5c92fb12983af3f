"""The Session's event sequencer: ``seq`` order, duplicates, gaps (docs/state-machines.md, "The event sequencer").

Events carry a per-session ``seq``. A duplicate (``seq`` at or below the last
applied) is dropped; an early one waits in the reorder buffer while the gap
before it is fetched once (``session/subscribe {afterSeq}``); a hole the
backend cannot fill (its answer does not close it, or a bound passes) is
skipped, with a warning, rather than stalling the stream.

Pure bookkeeping: every method returns the events now ready to apply, in
order, and whether a gap fetch should start (``gap_after``, the ``afterSeq``
to ask for); the owner makes the call and arms the timeout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zcode_acp.protocol import events as ev

Event = dict[str, Any]


@dataclass(slots=True)
class Ready:
    events: list[Event] = field(default_factory=list)
    gap_after: int | None = None  # start a gap fetch after this seq
    skipped: tuple[int, int] | None = None  # a hole given up on: (first, last) missing seq


class Sequencer:
    # Every live Session has one: slots, not a __dict__ (docs/performance.md, "Idle sessions").
    __slots__ = ("gap_pending", "last_seq", "reorder")

    def __init__(self) -> None:
        self.last_seq = 0
        self.reorder: dict[int, Event] = {}
        self.gap_pending = False

    def hold(self, events: list[Event]) -> None:
        """Not live yet: keep what has a ``seq`` until the subscription says where we are."""
        for event in events:
            seq = ev.seq(event)
            if seq is not None:
                self.reorder[seq] = event

    def start(self, event_seq: int) -> Ready:
        """Subscribed at ``event_seq``: what was held and is newer is applied now."""
        self.last_seq = event_seq
        held, self.reorder = self.reorder, {}
        return self.accept([held[seq] for seq in sorted(held) if seq > event_seq])

    def reset(self) -> None:
        self.reorder.clear()
        self.gap_pending = False

    def accept(self, events: list[Event], ready: Ready | None = None) -> Ready:
        ready = ready if ready is not None else Ready()
        applied = ready.events
        for event in events:
            seq = event.get("seq")
            if type(seq) is not int:  # none, or not a number (a bool is not one either): applied as it comes
                applied.append(event)
            elif seq <= self.last_seq:
                continue  # duplicate or already applied
            elif seq == self.last_seq + 1:  # the streaming case: in order, nothing waiting
                self.last_seq = seq
                applied.append(event)
                if self.reorder:
                    self._drain(ready)
            else:
                self.reorder[seq] = event
                self._want_gap(ready)
        return ready

    def gap_filled(self, missed: Any) -> Ready:
        """The answer to a gap fetch (its ``events``, if any)."""
        self.gap_pending = False
        before = self.last_seq
        ready = self.accept([e for e in missed if isinstance(e, dict)] if isinstance(missed, list) else [])
        if self.reorder:
            if self.last_seq > before:
                self._want_gap(ready)  # that hole is filled; a later one is still open
            else:
                self._skip(ready)  # the backend does not have what is missing
        return ready

    def gap_timed_out(self, after_seq: int) -> Ready:
        ready = Ready()
        if self.gap_pending and self.last_seq == after_seq and self.reorder:
            self.gap_pending = False
            self._skip(ready)
        return ready

    def _want_gap(self, ready: Ready) -> None:
        if not self.gap_pending:
            self.gap_pending = True
            ready.gap_after = self.last_seq

    def _drain(self, ready: Ready) -> None:
        while self.last_seq + 1 in self.reorder:
            self.last_seq += 1
            ready.events.append(self.reorder.pop(self.last_seq))

    def _skip(self, ready: Ready) -> None:
        """Apply what is buffered past the hole, in order."""
        first = min(self.reorder)
        ready.skipped = (self.last_seq + 1, first - 1)
        self.last_seq = first - 1
        self._drain(ready)
        if self.reorder:
            self._want_gap(ready)
