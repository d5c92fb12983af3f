"""One topic subscription's state machine: ownership, sequence, snapshot and deltas, resync.

The engine numbers each topic's changes; a frame covers ``(fromSeq, toSeq]``. The rules,
as the engine's own client keeps them:

* a frame for another topic or another (older) ``subscriptionId`` is ignored: after a
  resubscribe the old stream may still be draining;
* a snapshot replaces the state whole, whenever it comes (initial, online, recovery), and
  sets the cursor to its ``toSeq``;
* deltas need a base: with no snapshot applied yet they ask for a resync;
* deltas ending at or before the cursor are late or duplicated, dropped silently;
* deltas starting anywhere but the cursor leave a gap: nothing is applied, a resync is
  asked (the state is still a consistent picture of the cursor, so it is a valid base);
* deltas starting at the cursor are applied (all or none) and move it to ``toSeq``.

Frames of this topic that arrive before the subscribe answer (its ack names the
subscription they belong to) are held, up to ``MAX_EARLY_WIRES``, and replayed once the
ack is in; ``resubscribing`` starts such a wait again for a new subscription.

A lost logical frame (an ``AssemblyFault``) asks for a resync too. One resync is asked at
a time: until a snapshot or a new subscription ack arrives, further problems are only
reported as ignored. What a topic's snapshot and deltas mean is its ``Applier``'s
business (conversation_apply.py for ``conversation/<sessionId>``); this module only says
when to apply them.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from .frames import DeltasPayload, TopicFrame
from .reassembly import Assembled, Assembler, AssemblyFault
from .streaming import StreamShape, run_row, stream_shape, text_run
from .wire import DeliveryKind, ParsedWire, Unroutable, Wire, parse_wire

C = TypeVar("C")

MAX_EARLY_WIRES = 256
"""Frames held for a subscription whose ack has not arrived yet."""

class Applier(Protocol[C]):
    """A topic's state: resets to a snapshot, applies deltas, says what changed."""

    def reset(self, snapshot: dict[str, Any]) -> list[C] | str:
        """The changes, or why the snapshot cannot be used (state left as it was)."""
        ...

    def apply(self, deltas: Sequence[dict[str, Any]]) -> list[C] | str:
        """The changes, or why the deltas cannot be applied (nothing applied)."""
        ...


class Applied(NamedTuple, Generic[C]):
    """One per frame applied, or per run of a streaming turn's text deltas (``accept_many``):
    a named tuple, as immutable as the other outcomes."""

    changes: list[C]
    delivery_kind: DeliveryKind
    seq: int
    snapshot: bool
    """True when the frame was a snapshot (the state was replaced, not edited)."""


@dataclass(frozen=True, slots=True)
class ResyncNeeded:
    """Ask the engine for ``v4/conversation/resync`` with ``resync_params``."""

    reason: str
    base: dict[str, Any] | None
    """``{logEpoch, seq}`` the client still holds consistently, or None."""
    force_snapshot: bool


@dataclass(frozen=True, slots=True)
class Ignored:
    reason: str


Outcome = Applied[C] | ResyncNeeded | Ignored


class TopicSubscription(Generic[C]):
    """The client side of one topic: owns its assembler, cursor and applier."""

    def __init__(self, topic: str, applier: Applier[C], assembler: Assembler | None = None) -> None:
        self.topic = topic
        self.applier = applier
        self._assembler = assembler if assembler is not None else Assembler()
        self.subscription_id: str | None = None
        self.log_epoch: str | None = None
        self.seq: int | None = None
        self._resync_pending = False
        self._early: list[Wire] = []

    @property
    def ready(self) -> bool:
        """A snapshot has been applied: the state means something."""
        return self.seq is not None

    @property
    def next_expiry_ms(self) -> float | None:
        return self._assembler.next_expiry_ms

    def resubscribing(self) -> None:
        """A new subscribe was sent: hold this topic's frames until its ack says whose they are."""
        if self.subscription_id is not None:
            self._assembler.discard(self.topic, self.subscription_id)
        self.subscription_id = None

    def subscribed(self, ack: Any, now_ms: float = 0.0) -> list[Outcome[C]]:
        """A subscribe or resync answer's ``ack`` (``{subscriptionId, mode, logEpoch}``).

        Returns what the frames held while waiting for it did, in arrival order.
        """
        if not isinstance(ack, dict) or not isinstance(ack.get("subscriptionId"), str) or not ack["subscriptionId"]:
            return [Ignored("the ack names no subscriptionId")]
        if self.subscription_id is not None and self.subscription_id != ack["subscriptionId"]:
            self._assembler.discard(self.topic, self.subscription_id)
        self.subscription_id = ack["subscriptionId"]
        epoch = ack.get("logEpoch")
        if isinstance(epoch, str) and epoch:
            if self.log_epoch is not None and epoch != self.log_epoch:
                # Another epoch renumbers the log: our seq says nothing about it any more.
                self.seq = None
            self.log_epoch = epoch
        self._resync_pending = False
        early, self._early = self._early, []
        outcomes: list[Outcome[C]] = []
        for wire in early:
            outcomes += self.accept(wire, now_ms)
        return outcomes

    def accept(self, wire: ParsedWire, now_ms: float, *, line_bytes: int | None = None) -> list[Outcome[C]]:
        """One parsed ``v4/conversation/frame``: what it did to this subscription.

        ``line_bytes``: the notification line's length, if known (see ``Assembler.accept``).
        """
        if isinstance(wire, Unroutable):
            return [Ignored(wire.detail)]
        if wire.route.topic != self.topic:
            return [Ignored(f"frame for topic {wire.route.topic}")]
        if self.subscription_id is None:
            if len(self._early) >= MAX_EARLY_WIRES:
                return [Ignored("dropped: too many frames before the subscription's ack")]
            self._early.append(wire)
            return [Ignored("held until the subscription's ack")]
        if wire.route.subscription_id != self.subscription_id:
            return [Ignored(f"frame of subscription {wire.route.subscription_id}, not the current one")]
        outcomes: list[Outcome[C]] = []
        for event in self._assembler.accept(wire, now_ms, line_bytes=line_bytes):
            if isinstance(event, Assembled):
                outcomes.append(self._frame(event.frame, event.delivery_kind))
            else:
                outcomes.append(self._fault(event))
        return outcomes

    def accept_params(self, params: Any, now_ms: float, *, line_bytes: int | None = None) -> list[Outcome[C]]:
        """``accept(parse_wire(params), …)``, with a shortcut for a stream's common frame (``accept_many``)."""
        if line_bytes is not None:  # the general path measures with it
            return self.accept(parse_wire(params), now_ms, line_bytes=line_bytes)
        return self.accept_many((params,), now_ms)

    def accept_many(self, batch: Sequence[Any], now_ms: float) -> list[Outcome[C]]:
        """``accept(parse_wire(params), …)`` for each of ``batch`` in order, their outcomes in one list.

        Frames that are a run of text deltas to one row following the cursor
        (``streaming.text_run``) go straight to the applier as one (``append_run``), with one
        ``Applied`` for the run; what that does to the assembler, the cursor and the state is
        what ``accept`` does frame by frame. A batch that is not one run is cut where a frame
        goes to another row or looks like no run's (``streaming.run_row``), and each part is
        tried as a run; what is not one goes frame by frame, the general way.
        """
        outcomes: list[Outcome[C]] = []
        append_run = getattr(self.applier, "append_run", None)
        # Once a batch: accepting frames never changes the subscription (only an ack does).
        shape = stream_shape(self.topic, self.subscription_id) if append_run is not None else None
        if shape is None or not batch:
            parts: Iterable[tuple[int | None, Iterable[Any]]] = ((None, batch),)
        elif run_row(batch[0]) is not None and self._take_run(batch, shape, append_run, outcomes):
            return outcomes  # the commonest batch of a streaming turn: one run
        else:
            parts = groupby(batch, run_row)
        for row_id, part in parts:
            frames = list(part)
            if row_id is None or not self._take_run(frames, shape, append_run, outcomes):
                for params in frames:
                    outcomes += self.accept(parse_wire(params), now_ms)
        return outcomes

    def _take_run(self, frames: Sequence[Any], shape: StreamShape | None, append_run: Callable[..., list[C]] | None,
                  outcomes: list[Outcome[C]]) -> bool:
        """Apply ``frames`` as one run and say so, or change nothing and say they are not one."""
        run = text_run(frames, shape, self.seq, self._assembler.max_logical_bytes)
        if (run is None or append_run is None or shape is None
                or not self._assembler.take_whole((shape.topic, shape.subscription_id), run.first_ordinal,
                                                  run.last_ordinal, run.last_frame_id)):
            return False
        changes = append_run(run.row_id, run.path, run.appends)
        self.seq = run.to_seq
        outcomes.append(Applied(changes, run.delivery_kind, run.to_seq, False))
        return True

    def expire(self, now_ms: float) -> list[Outcome[C]]:
        """Call when ``next_expiry_ms`` has passed: an assembly that timed out asks a resync."""
        return [self._fault(e) for e in self._assembler.expire(now_ms) if isinstance(e, AssemblyFault)]

    def resync_params(self, connection_id: str, *, force_snapshot: bool) -> dict[str, Any]:
        """The params of ``v4/conversation/resync`` for this subscription.

        Without ``force_snapshot`` the base (``{logEpoch, seq}``) lets the engine resume
        with deltas; with it the base is left out (null), as the engine's client does.
        """
        return {
            "topic": self.topic,
            "connectionId": connection_id,
            "subscriptionId": self.subscription_id,
            "base": None if force_snapshot else self._base(),
            "forceSnapshot": force_snapshot,
        }

    # -- inside --------------------------------------------------------------------------

    def _base(self) -> dict[str, Any] | None:
        if self.seq is None or self.log_epoch is None:
            return None
        return {"logEpoch": self.log_epoch, "seq": self.seq}

    def _resync(self, reason: str, *, force_snapshot: bool) -> ResyncNeeded | Ignored:
        if self._resync_pending:
            return Ignored(f"{reason} (a resync is already asked)")
        self._resync_pending = True
        base = None if force_snapshot else self._base()
        return ResyncNeeded(reason, base, force_snapshot or base is None)

    def _fault(self, fault: AssemblyFault) -> ResyncNeeded | Ignored:
        self._assembler.abort(fault.route.topic, fault.route.subscription_id)
        return self._resync(f"{fault.reason_code} {fault.detail}".strip(), force_snapshot=fault.deterministic)

    def _frame(self, frame: TopicFrame, delivery_kind: DeliveryKind) -> Outcome[C]:
        if isinstance(frame.payload, DeltasPayload):
            return self._deltas(frame, frame.payload, delivery_kind)
        changes = self.applier.reset(frame.payload.snapshot)
        if isinstance(changes, str):
            return self._resync(f"snapshot refused: {changes}", force_snapshot=True)
        self.seq = frame.to_seq
        epoch = frame.payload.snapshot.get("logEpoch")
        if isinstance(epoch, str) and epoch:
            self.log_epoch = epoch
        self._resync_pending = False
        return Applied(changes, delivery_kind, frame.to_seq, snapshot=True)

    def _deltas(self, frame: TopicFrame, payload: DeltasPayload, delivery_kind: DeliveryKind) -> Outcome[C]:
        if self.seq is None:
            return self._resync("deltas before any snapshot", force_snapshot=True)
        if frame.to_seq <= self.seq:
            return Ignored(f"deltas up to {frame.to_seq} are already applied (at {self.seq})")
        if frame.from_seq != self.seq:
            return self._resync(f"gap: deltas from {frame.from_seq}, state at {self.seq}", force_snapshot=False)
        changes = self.applier.apply(payload.deltas)
        if isinstance(changes, str):
            return self._resync(f"deltas refused: {changes}", force_snapshot=True)
        self.seq = frame.to_seq
        return Applied(changes, delivery_kind, frame.to_seq, snapshot=False)


def subscribe_params(
    topic: str,
    connection_id: str,
    *,
    client_mode: str = "desktop-continuous",
    workspace: dict[str, Any] | None = None,
    base: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The params of ``v4/conversation/subscribe`` (every topic uses that one method).

    ``base`` (``{logEpoch, seq}``) only when the client truly holds that state: the
    engine then resumes with deltas from it instead of sending a snapshot.
    """
    params: dict[str, Any] = {"topic": topic, "connectionId": connection_id, "clientMode": client_mode}
    if workspace is not None:
        params["workspace"] = workspace
    if base is not None:
        params["base"] = base
    return params


def unsubscribe_params(topic: str, connection_id: str, subscription_id: str) -> dict[str, Any]:
    return {"topic": topic, "connectionId": connection_id, "subscriptionId": subscription_id}
