"""Which backend turn belongs to which Turn, decided in pipe order (docs/state-machines.md, "The Turn").

The engine runs one turn at a time per session and takes the sends in the
order they come, so accepted sends and the turns they start pair up first in,
first out. Two engines differ in *when* ``turn.started`` is written:

* the seed's engine writes the send's answer first, then ``turn.started``: the
  start goes to the oldest accepted send still waiting for one;
* the 0.16 engine may write ``turn.started`` *before* the answer (early start).
  A start that no accepted send is waiting for is held as unclaimed, with the
  events of its turn, until the next send's answer: an accepted send claims the
  latest unclaimed start whose turn has not ended; a refused send (busy) clears
  them, since no send of ours is pending behind it.

Why a stale start is never adopted: an accepted send means the engine's lock
was free when it read the send, so a turn that started before that either
ended (its end event came first and removed it) or is already claimed by the
earlier send it belongs to. A send merged into a running turn
(``turn.steerQueued`` while a send waits) claims that turn.

A plain object (no actor): the Session feeds it every applied event and every
send answer, and tells the Turn it names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zcode_acp.protocol import events as ev

Event = dict[str, Any]
# The only event types that can settle a claim; any other event matters only while a turn is held.
SETTLING_TYPES = frozenset({ev.TURN_STARTED, ev.TURN_STEER_QUEUED, *ev.TURN_END_TYPES})
HELD_EVENTS_LIMIT = 10_000  # events of one unclaimed turn kept for the send that claims it


@dataclass(frozen=True, slots=True)
class Claim:
    key: int  # the Turn
    turn_id: str
    execution_id: str | None  # the 0.16 engine: what a v4 stop must quote
    merged: bool = False  # the send was merged into a turn already running
    held: list[Event] = field(default_factory=list)  # its events that came before the claim


def execution_id(event: Event) -> str | None:
    value = ev.payload(event).get("foregroundExecutionId")
    return value if isinstance(value, str) and value else None


class Attribution:
    # Every live Session has one: slots, not a __dict__ (docs/performance.md, "Idle sessions").
    __slots__ = ("awaiting", "unclaimed")

    def __init__(self) -> None:
        # Accepted sends without a turn yet, oldest first: one or two at most, so a list (an empty deque
        # holds a 0.7 KiB block for each of 10,000 idle sessions).
        self.awaiting: list[int] = []
        self.unclaimed: dict[str, list[Event]] = {}  # started turns no send has claimed (insertion order)

    def event(self, event: Event) -> Claim | None:
        """An applied event; the claim it settles, if any."""
        if not self.unclaimed and event.get("type") not in SETTLING_TYPES:
            return None  # the streaming case: nothing held, nothing to settle
        kind = event.get("type")
        turn_id = ev.steer_target(event) if kind == ev.TURN_STEER_QUEUED else ev.turn_id(event)
        if turn_id is None:
            return None
        if kind == ev.TURN_STARTED and not ev.is_background_start(event):
            if self.awaiting:
                return Claim(self.awaiting.pop(0), turn_id, execution_id(event))
            self.unclaimed[turn_id] = [event]
            return None
        if kind == ev.TURN_STEER_QUEUED and self.awaiting and turn_id not in self.unclaimed:
            return Claim(self.awaiting.pop(0), turn_id, None, merged=True)
        if kind in ev.TURN_END_TYPES:
            self.unclaimed.pop(turn_id, None)
        elif turn_id in self.unclaimed and len(self.unclaimed[turn_id]) < HELD_EVENTS_LIMIT:
            self.unclaimed[turn_id].append(event)
        return None

    def accepted(self, key: int) -> Claim | None:
        """Turn ``key``'s send was accepted: its turn, if it already started."""
        if not self.unclaimed:
            self.awaiting.append(key)
            return None
        turn_id, held = self.unclaimed.popitem()  # the latest start
        self.unclaimed.clear()  # any older one is not ours (see the module's note)
        return Claim(key, turn_id, execution_id(held[0]), held=held)

    def refused(self) -> None:
        """A send was refused: no start seen so far belongs to a send of ours."""
        self.unclaimed.clear()

    def forget(self, key: int) -> None:
        """Turn ``key`` is gone: it claims nothing any more."""
        if key in self.awaiting:
            self.awaiting.remove(key)
