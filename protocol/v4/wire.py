"""``v4/conversation/frame`` notification params → a typed physical frame, or why not.

The engine sends every topic's frames (conversation, sessions-index, workspace-config) in
this one notification, either whole (``kind: complete``, the logical frame inline) or cut
into ``fragment``s of its UTF-8 JSON bytes (reassembly.py puts them back together).

Parsing has two outcomes besides success, as the engine's own client does it:

* ``Unroutable``: the fields that say which subscription the frame belongs to are
  missing or wrong, so nobody can own it; the caller drops it.
* ``MalformedWire``: it names its subscription but something else is wrong. It goes to
  that subscription's assembler anyway, which decides (by ordinal) whether it is a late
  leftover to ignore or a fault that needs a resync; dropping it here could leave the
  subscription waiting forever for a frame that will never parse.

Nothing raises: every problem is a value carrying the engine's own reason code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from . import limits

DeliveryKind = Literal["initial", "online", "recovery"]

METADATA_MISMATCH = "proto.frameAssemblyMetadataMismatch"
ENVELOPE_TOO_LARGE = "proto.frameEnvelopeTooLarge"
FRAGMENT_COUNT_EXCEEDED = "proto.frameFragmentCountExceeded"
TOO_LARGE = "proto.frameAssemblyTooLarge"
INVALID_BASE64 = "proto.frameAssemblyInvalidBase64"

_COMPLETE_KEYS = frozenset(
    ("wireVersion", "kind", "deliveryKind", "logicalFrameId", "logicalFrameOrdinal", "topic", "subscriptionId", "frame")
)
_FRAGMENT_KEYS = frozenset(
    (
        "wireVersion",
        "kind",
        "deliveryKind",
        "logicalFrameId",
        "logicalFrameOrdinal",
        "topic",
        "subscriptionId",
        "fragmentIndex",
        "fragmentCount",
        "logicalBytes",
        "checksum",
        "dataBase64",
    )
)
# The engine's canonical base64: padded, no whitespace, at least one quantum.
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_CRC32_HEX = re.compile(r"[0-9a-f]{8}")


@dataclass(frozen=True, slots=True)
class Route:
    """Which logical frame of which subscription a physical frame carries."""

    topic: str
    subscription_id: str
    logical_frame_id: str
    logical_frame_ordinal: int

    key: tuple[str, str] = field(init=False, repr=False, compare=False)
    """``(topic, subscription_id)``: made once, it is read several times per frame."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", (self.topic, self.subscription_id))


@dataclass(frozen=True, slots=True)
class CompleteWire:
    route: Route
    delivery_kind: DeliveryKind
    frame: Any
    """The logical frame as received; reassembly validates it."""


@dataclass(frozen=True, slots=True)
class FragmentWire:
    route: Route
    delivery_kind: DeliveryKind
    fragment_index: int
    fragment_count: int
    logical_bytes: int
    checksum: str
    """CRC-32 (IEEE, as zlib computes it) of the whole logical frame, 8 lowercase hex digits."""
    data_base64: str


@dataclass(frozen=True, slots=True)
class MalformedWire:
    """Names its subscription, fails the schema: the assembler turns it into a fault."""

    route: Route
    delivery_kind: DeliveryKind | None
    reason_code: str
    detail: str


@dataclass(frozen=True, slots=True)
class Unroutable:
    """Cannot be attributed to any subscription: drop it."""

    detail: str


Wire = CompleteWire | FragmentWire | MalformedWire
ParsedWire = Wire | Unroutable


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _nonempty_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _delivery_kind(value: Any) -> DeliveryKind | None:
    if value == "initial" or value == "online" or value == "recovery":
        return value  # type: ignore[no-any-return]
    return None


def parse_wire(params: Any) -> ParsedWire:
    """Read one ``v4/conversation/frame`` notification's params."""
    if not isinstance(params, dict):
        return Unroutable("params is not an object")
    if params.get("wireVersion") != limits.WIRE_VERSION or isinstance(params.get("wireVersion"), bool):
        return Unroutable(f"wireVersion {params.get('wireVersion')!r} is not {limits.WIRE_VERSION}")
    kind = params.get("kind")
    if kind not in ("complete", "fragment"):
        return Unroutable(f"kind {kind!r} is neither complete nor fragment")
    topic = _nonempty_str(params.get("topic"))
    subscription_id = _nonempty_str(params.get("subscriptionId"))
    logical_frame_id = _nonempty_str(params.get("logicalFrameId"))
    ordinal = params.get("logicalFrameOrdinal")
    if topic is None or subscription_id is None or logical_frame_id is None:
        return Unroutable("topic, subscriptionId and logicalFrameId must be non-empty strings")
    if not isinstance(ordinal, (int, float)) or isinstance(ordinal, bool):
        return Unroutable("logicalFrameOrdinal is not a number")
    ordinal_int = _int(ordinal)
    if ordinal_int is None or not 1 <= ordinal_int <= limits.MAX_SAFE_INTEGER:
        # Routable (it names its subscription) but unusable: the engine faults it.
        route = Route(topic, subscription_id, logical_frame_id, 0)
        return MalformedWire(route, None, METADATA_MISMATCH, f"logicalFrameOrdinal {ordinal!r} is not a positive safe integer")
    route = Route(topic, subscription_id, logical_frame_id, ordinal_int)
    delivery = params.get("deliveryKind")
    delivery_kind = _delivery_kind(delivery)
    if delivery_kind is None:
        return MalformedWire(route, None, METADATA_MISMATCH, f"deliveryKind {delivery!r}")
    if kind == "complete":
        return _complete(params, route, delivery_kind)
    return _fragment(params, route, delivery_kind)


def _complete(params: dict[str, Any], route: Route, delivery_kind: DeliveryKind) -> Wire:
    if "frame" in params and params.keys() <= _COMPLETE_KEYS:
        return CompleteWire(route, delivery_kind, params["frame"])
    extra = params.keys() - _COMPLETE_KEYS
    return MalformedWire(route, delivery_kind, METADATA_MISMATCH, f"unexpected keys {sorted(extra)} or no frame")


def _fragment(params: dict[str, Any], route: Route, delivery_kind: DeliveryKind) -> Wire:
    def bad(reason: str, detail: str) -> MalformedWire:
        return MalformedWire(route, delivery_kind, reason, detail)

    if not params.keys() <= _FRAGMENT_KEYS:
        extra = params.keys() - _FRAGMENT_KEYS
        return bad(METADATA_MISMATCH, f"unexpected keys {sorted(extra)}")
    index = _int(params.get("fragmentIndex"))
    count = _int(params.get("fragmentCount"))
    logical_bytes = _int(params.get("logicalBytes"))
    checksum = params.get("checksum")
    data = params.get("dataBase64")
    if index is None or count is None or logical_bytes is None or not isinstance(data, str):
        return bad(METADATA_MISMATCH, "fragmentIndex, fragmentCount, logicalBytes or dataBase64 missing or mistyped")
    if not isinstance(checksum, dict) or checksum.keys() != {"algorithm", "value"}:
        return bad(METADATA_MISMATCH, "checksum is not {algorithm, value}")
    # The engine checks the bounds in this order; keeping it keeps our reason codes its own.
    if len(data) > limits.MAX_PHYSICAL_FRAME_BYTES:
        return bad(ENVELOPE_TOO_LARGE, f"dataBase64 of {len(data)} characters")
    if count > limits.MAX_FRAGMENTS:
        return bad(FRAGMENT_COUNT_EXCEEDED, f"fragmentCount {count}")
    if logical_bytes > limits.MAX_LOGICAL_FRAME_BYTES:
        return bad(TOO_LARGE, f"logicalBytes {logical_bytes}")
    if not (1 <= count <= logical_bytes and 0 <= index < count):
        return bad(METADATA_MISMATCH, f"fragment {index} of {count} for {logical_bytes} bytes")
    value = checksum.get("value")
    if checksum.get("algorithm") != "crc32" or not isinstance(value, str) or not _CRC32_HEX.fullmatch(value):
        return bad(METADATA_MISMATCH, f"checksum {checksum!r} is not crc32 as 8 lowercase hex digits")
    if len(data) < 4 or not _BASE64.fullmatch(data):
        return bad(INVALID_BASE64, "dataBase64 is not canonical base64")
    return FragmentWire(route, delivery_kind, index, count, logical_bytes, value, data)
