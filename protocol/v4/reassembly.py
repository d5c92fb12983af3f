"""Physical wire frames → logical topic frames, bounded, the way the engine's client does it.

One ``Assembler`` serves any number of subscriptions; each ``(topic, subscriptionId)``
route has at most one logical frame in assembly at a time, and remembers the last
logical frame it settled (completed or gave up on) by ``logicalFrameOrdinal``:

* a fragment of an older ordinal than the one settled or in progress is a late leftover
  and is ignored silently (it must not disturb the newer frame);
* the same ordinal under another ``logicalFrameId`` is a conflict (a fault);
* a newer ordinal supersedes an unfinished older assembly (a fault for the old one,
  except when the newer frame is a ``recovery``: that is the engine replacing it on
  purpose, and reporting the old one would make the client start yet another resync).

Fragments may arrive in any order; an identical duplicate is ignored, a different one
under the same index is a conflict. A frame completes only when every fragment is in,
the byte count matches ``logicalBytes``, the CRC-32 of the joined bytes matches
``checksum``, and the bytes are UTF-8 JSON whose topic and subscription match the route.

Every failure is an ``AssemblyFault`` naming the route: its owner should ask the engine
for a resync (``v4/conversation/resync``). ``deterministic`` faults (the content decoded
but does not fit the schema) will fail again on a resend; the owner should ask for a
snapshot rather than a resume. Memory is bounded: 16 MiB per logical frame, 32 frames in
assembly at once, 32 MiB of staged bytes in total, 30 s for an assembly to finish.

A complete frame is measured against the 16 MiB bound by the notification line's length
when the caller knows it, else by a cheap ujson estimate, and exactly (re-encoded as the
engine counts) only when the estimate is near the limit.

Time is an argument (``now_ms``, any monotonic milliseconds): this module reads no clock.
"""

from __future__ import annotations

import binascii
import json
import zlib
from dataclasses import dataclass, field
from typing import Any

import ujson

from . import limits
from .frames import INVALID_PAYLOAD, TopicFrame, parse_topic_frame
from .wire import (
    FRAGMENT_COUNT_EXCEEDED,
    METADATA_MISMATCH,
    TOO_LARGE,
    CompleteWire,
    DeliveryKind,
    FragmentWire,
    MalformedWire,
    Route,
    Wire,
)

ORDINAL_CONFLICT = "proto.frameAssemblyOrdinalConflict"
SUPERSEDED = "proto.frameAssemblySuperseded"
CONCURRENT_LIMIT = "proto.frameAssemblyConcurrentLimit"
BUDGET_EXCEEDED = "proto.frameAssemblyBudgetExceeded"
FRAGMENT_CONFLICT = "proto.frameAssemblyFragmentConflict"
LENGTH_MISMATCH = "proto.frameAssemblyLengthMismatch"
CHECKSUM_MISMATCH = "proto.frameAssemblyChecksumMismatch"
INVALID_UTF8 = "proto.frameAssemblyInvalidUtf8"
INVALID_JSON = "proto.frameAssemblyInvalidJson"
TIMED_OUT = "proto.frameAssemblyTimedOut"


def crc32_hex(data: bytes) -> str:
    """The engine's checksum format: CRC-32 (IEEE 802.3), 8 lowercase hex digits."""
    return f"{zlib.crc32(data) & 0xFFFFFFFF:08x}"


def encode_logical(frame: Any) -> bytes:
    """A logical frame's bytes as the engine counts them (``JSON.stringify``, UTF-8)."""
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _size_estimate(frame: Any) -> int | None:
    """About ``len(encode_logical(frame))``, several times cheaper; None when ujson will not say.

    ujson and the standard encoder differ only in details (how a float is spelt, a key
    the standard one refuses), never by a factor of two, so an estimate of at most half
    the limit proves a frame is within it; anything nearer is measured exactly.
    """
    try:
        return len(ujson.dumps(frame, ensure_ascii=False, escape_forward_slashes=False, allow_nan=False).encode())
    except (TypeError, ValueError, OverflowError):
        return None


@dataclass(frozen=True, slots=True)
class Assembled:
    frame: TopicFrame
    delivery_kind: DeliveryKind


@dataclass(frozen=True, slots=True)
class AssemblyFault:
    """A logical frame was lost: the route's owner must resync."""

    route: Route
    delivery_kind: DeliveryKind | None
    reason_code: str
    detail: str = ""

    @property
    def deterministic(self) -> bool:
        """Resending the same content would fail the same way (ask for a snapshot)."""
        return self.reason_code == INVALID_PAYLOAD


AssemblyEvent = Assembled | AssemblyFault


@dataclass(slots=True)
class _Assembly:
    route: Route
    delivery_kind: DeliveryKind
    fragment_count: int
    logical_bytes: int
    checksum: str
    first_seen_ms: float
    fragments: dict[int, bytes] = field(default_factory=dict)
    decoded_bytes: int = 0


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class Assembler:
    """Reassembles fragments per route; every ``accept`` returns what became of them."""

    def __init__(
        self,
        *,
        max_logical_bytes: int = limits.MAX_LOGICAL_FRAME_BYTES,
        max_fragments: int = limits.MAX_FRAGMENTS,
        max_concurrent: int = limits.MAX_CONCURRENT_ASSEMBLIES,
        max_staged_bytes: int = limits.MAX_STAGED_BYTES,
        timeout_ms: float = limits.ASSEMBLY_TIMEOUT_MS,
    ) -> None:
        for name, value in (
            ("max_logical_bytes", max_logical_bytes),
            ("max_fragments", max_fragments),
            ("max_concurrent", max_concurrent),
            ("max_staged_bytes", max_staged_bytes),
            ("timeout_ms", timeout_ms),
        ):
            if not value > 0:
                raise ValueError(f"{name} must be positive")
        # Narrower than the engine's limits is allowed, wider is not.
        self._max_logical = min(max_logical_bytes, limits.MAX_LOGICAL_FRAME_BYTES)
        self.max_logical_bytes = self._max_logical
        """The bound of a logical frame here (read by ``streaming.text_run``'s caller; a plain
        attribute)."""
        self._max_fragments = min(max_fragments, limits.MAX_FRAGMENTS)
        self._max_concurrent = min(max_concurrent, limits.MAX_CONCURRENT_ASSEMBLIES)
        self._max_staged = min(max_staged_bytes, limits.MAX_STAGED_BYTES)
        self._timeout_ms = min(timeout_ms, limits.ASSEMBLY_TIMEOUT_MS)
        self._open: dict[tuple[str, str], _Assembly] = {}
        self._settled: dict[tuple[str, str], tuple[int, str]] = {}
        self._staged = 0

    # -- what the owner reads ------------------------------------------------------------

    @property
    def open_assemblies(self) -> int:
        return len(self._open)

    @property
    def staged_bytes(self) -> int:
        return self._staged

    @property
    def next_expiry_ms(self) -> float | None:
        """When ``expire`` will next have something to report (schedule a timer for it)."""
        if not self._open:
            return None
        return min(a.first_seen_ms for a in self._open.values()) + self._timeout_ms

    # -- feeding -------------------------------------------------------------------------

    def take_whole(self, key: tuple[str, str], first_ordinal: int, last_ordinal: int, last_frame_id: str) -> bool:
        """Complete wires of one route its caller has checked whole, ordinals increasing from
        ``first_ordinal`` to ``last_ordinal`` (``streaming.text_run``): True when ``accept``
        would settle each and hand its frame on (no assembly open, on any route, and a first
        ordinal newer than the route's last), which is done; False, changing nothing, when
        ``accept`` must decide."""
        if self._open:
            return False
        settled = self._settled.get(key)
        if settled is not None and first_ordinal <= settled[0]:
            return False
        self._settled[key] = (last_ordinal, last_frame_id)
        return True

    def accept(self, wire: Wire, now_ms: float, *, line_bytes: int | None = None) -> list[AssemblyEvent]:
        """What became of one physical frame (and of any assembly that timed out by ``now_ms``).

        ``line_bytes``, the length of the notification line when the caller knows it,
        spares re-encoding a complete frame to measure it: the logical frame inside a
        line is never longer than the line.
        """
        events: list[AssemblyEvent] = self.expire(now_ms) if self._open else []
        route = wire.route
        key = route.key
        if route.logical_frame_ordinal < 1:
            events.append(self._fault(wire, METADATA_MISMATCH, "logicalFrameOrdinal is not positive"))
            return events
        # The tombstone check comes before any other check: a late, broken fragment of an
        # older frame must not tear down the newer frame being assembled.
        settled = self._settled.get(key)
        if settled is not None:
            ordinal, frame_id = settled
            if route.logical_frame_ordinal < ordinal:
                return events
            if route.logical_frame_ordinal == ordinal:
                if route.logical_frame_id != frame_id:
                    events.append(self._fault(wire, ORDINAL_CONFLICT))
                return events
        if wire.delivery_kind == "recovery":
            # An older frame of this route timing out in the same call is replaced by this
            # authoritative recovery; reporting it would start a second, useless resync.
            events = [
                e
                for e in events
                if not (
                    isinstance(e, AssemblyFault)
                    and e.route.key == key
                    and e.route.logical_frame_ordinal < route.logical_frame_ordinal
                )
            ]
        current = self._open.get(key)
        if current is not None:
            if route.logical_frame_ordinal < current.route.logical_frame_ordinal:
                return events
            if route.logical_frame_ordinal == current.route.logical_frame_ordinal:
                if route.logical_frame_id != current.route.logical_frame_id:
                    self._drop(current)
                    events.append(self._fault(wire, ORDINAL_CONFLICT))
                    return events
            else:
                self._drop(current)
                if wire.delivery_kind != "recovery":
                    events.append(AssemblyFault(current.route, current.delivery_kind, SUPERSEDED))
        if isinstance(wire, MalformedWire):
            self._drop_matching(route)
            self._settle(route)
            events.append(self._fault(wire, wire.reason_code, wire.detail))
            return events
        if isinstance(wire, CompleteWire):
            events.append(self._complete(wire, line_bytes))
            return events
        event = self._fragment(wire, now_ms)
        if event is not None:
            events.append(event)
        return events

    def expire(self, now_ms: float) -> list[AssemblyEvent]:
        """Give up on assemblies that have waited too long (call it when ``next_expiry_ms`` passes)."""
        events: list[AssemblyEvent] = []
        for assembly in list(self._open.values()):
            if now_ms - assembly.first_seen_ms >= self._timeout_ms:
                self._drop(assembly)
                events.append(AssemblyFault(assembly.route, assembly.delivery_kind, TIMED_OUT))
        return events

    def abort(self, topic: str, subscription_id: str) -> None:
        """Free a route's staged bytes after a fault, keeping its tombstone (late fragments stay ignored)."""
        assembly = self._open.get((topic, subscription_id))
        if assembly is not None:
            self._drop(assembly)

    def discard(self, topic: str, subscription_id: str) -> None:
        """Forget a route entirely (its subscription ended)."""
        assembly = self._open.get((topic, subscription_id))
        if assembly is not None:
            self._release(assembly)
        self._settled.pop((topic, subscription_id), None)

    def clear(self) -> None:
        self._open.clear()
        self._settled.clear()
        self._staged = 0

    # -- the two kinds of wire ------------------------------------------------------------

    def _complete(self, wire: CompleteWire, line_bytes: int | None) -> AssemblyEvent:
        route = wire.route
        active = self._open.get(route.key)
        if active is not None:
            # Same ordinal and id arriving whole while fragments of it are open: the
            # engine never does this; treat both as lost.
            self._drop(active)
            return AssemblyFault(active.route, active.delivery_kind, METADATA_MISMATCH, "complete wire over open fragments")
        self._settle(route)
        if line_bytes is None or line_bytes > self._max_logical:
            estimate = _size_estimate(wire.frame)
            if estimate is not None and estimate <= self._max_logical // 2:
                return self._finish(wire.frame, route, wire.delivery_kind)
            try:
                size = len(encode_logical(wire.frame))
            except (TypeError, ValueError) as exc:
                return self._fault(wire, INVALID_PAYLOAD, f"frame is not JSON: {exc}")
            if size > self._max_logical:
                return self._fault(wire, TOO_LARGE, f"{size} bytes")
        return self._finish(wire.frame, route, wire.delivery_kind)

    def _fragment(self, wire: FragmentWire, now_ms: float) -> AssemblyEvent | None:
        route = wire.route
        key = route.key
        if wire.fragment_count > self._max_fragments:
            return self._settle_fault(wire, FRAGMENT_COUNT_EXCEEDED, f"fragmentCount {wire.fragment_count}")
        if wire.logical_bytes > self._max_logical:
            return self._settle_fault(wire, TOO_LARGE, f"logicalBytes {wire.logical_bytes}")
        try:
            decoded = binascii.a2b_base64(wire.data_base64, strict_mode=True)
        except binascii.Error as exc:
            return self._settle_fault(wire, "proto.frameAssemblyInvalidBase64", str(exc))
        assembly = self._open.get(key)
        if assembly is not None:
            if (
                assembly.fragment_count != wire.fragment_count
                or assembly.delivery_kind != wire.delivery_kind
                or assembly.logical_bytes != wire.logical_bytes
                or assembly.checksum != wire.checksum
            ):
                self._drop(assembly)
                return self._fault(wire, METADATA_MISMATCH, "fragment disagrees with its siblings")
        else:
            if len(self._open) >= self._max_concurrent:
                self._settle(route)
                return self._fault(wire, CONCURRENT_LIMIT)
            if self._staged + len(decoded) > self._max_staged:
                self._settle(route)
                return self._fault(wire, BUDGET_EXCEEDED)
            assembly = _Assembly(route, wire.delivery_kind, wire.fragment_count, wire.logical_bytes, wire.checksum, now_ms)
            self._open[key] = assembly
        previous = assembly.fragments.get(wire.fragment_index)
        if previous is not None:
            if previous != decoded:
                self._drop(assembly)
                return self._fault(wire, FRAGMENT_CONFLICT, f"fragment {wire.fragment_index} arrived twice, different")
            return None  # an identical duplicate
        if self._staged + len(decoded) > self._max_staged:
            self._drop(assembly)
            return self._fault(wire, BUDGET_EXCEEDED)
        if assembly.decoded_bytes + len(decoded) > assembly.logical_bytes:
            self._drop(assembly)
            return self._fault(wire, LENGTH_MISMATCH, "more bytes than logicalBytes")
        assembly.fragments[wire.fragment_index] = decoded
        assembly.decoded_bytes += len(decoded)
        self._staged += len(decoded)
        if len(assembly.fragments) < assembly.fragment_count:
            return None
        self._drop(assembly)
        if assembly.decoded_bytes != assembly.logical_bytes:
            return AssemblyFault(route, assembly.delivery_kind, LENGTH_MISMATCH, "fewer bytes than logicalBytes")
        logical = b"".join(assembly.fragments[i] for i in range(assembly.fragment_count))
        if crc32_hex(logical) != assembly.checksum:
            return AssemblyFault(route, assembly.delivery_kind, CHECKSUM_MISMATCH, f"crc32 {crc32_hex(logical)}")
        try:
            text = logical.decode("utf-8")
        except UnicodeDecodeError as exc:
            return AssemblyFault(route, assembly.delivery_kind, INVALID_UTF8, str(exc))
        try:
            value = json.loads(text, parse_constant=_reject_constant)
        except ValueError as exc:
            return AssemblyFault(route, assembly.delivery_kind, INVALID_JSON, str(exc))
        return self._finish(value, route, assembly.delivery_kind)

    def _finish(self, value: Any, route: Route, delivery_kind: DeliveryKind) -> AssemblyEvent:
        owned = isinstance(value, dict) and (value.get("topic"), value.get("subscriptionId")) == route.key
        if not owned:
            return AssemblyFault(route, delivery_kind, METADATA_MISMATCH, "logical frame names another topic or subscription")
        frame = parse_topic_frame(value)
        if isinstance(frame, str):
            return AssemblyFault(route, delivery_kind, INVALID_PAYLOAD, frame)
        return Assembled(frame, delivery_kind)

    # -- bookkeeping -----------------------------------------------------------------------

    def _fault(self, wire: Wire, reason: str, detail: str = "") -> AssemblyFault:
        return AssemblyFault(wire.route, wire.delivery_kind, reason, detail)

    def _settle_fault(self, wire: Wire, reason: str, detail: str) -> AssemblyFault:
        self._drop_matching(wire.route)
        self._settle(wire.route)
        return self._fault(wire, reason, detail)

    def _release(self, assembly: _Assembly) -> None:
        if self._open.get(assembly.route.key) is assembly:
            del self._open[assembly.route.key]
            self._staged -= assembly.decoded_bytes

    def _drop(self, assembly: _Assembly) -> None:
        self._release(assembly)
        self._settle(assembly.route)

    def _drop_matching(self, route: Route) -> None:
        active = self._open.get(route.key)
        if active is not None and active.route == route:
            self._release(active)

    def _settle(self, route: Route) -> None:
        previous = self._settled.get(route.key)
        if previous is not None and previous[0] > route.logical_frame_ordinal:
            return
        self._settled[route.key] = (route.logical_frame_ordinal, route.logical_frame_id)
