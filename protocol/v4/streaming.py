"""A stream's common frame, recognised in one pass: a whole wire of text deltas.

While a turn streams, nearly every ``v4/conversation/frame`` is the same shape: a
``complete`` wire for the current subscription whose logical frame carries only
``row.delta`` ops. The general path (``wire.parse_wire`` → ``Assembler.accept`` →
``frames.parse_topic_frame`` → ``TopicSubscription``) checks such a frame in three layers
and makes seven records for it, most of the v4 path's cost per update
(docs/performance.md, "The v4 stream at the legacy path's pace").

``text_deltas`` makes every check of those layers that such a frame can fail, in one
function, and gives back the few values the subscription acts on. It is only a shortcut:
anything it is not sure of (another shape, an extra key, a number outside 64 bits, a
frame that might be near the size limit) is None, and the caller takes the general path,
which decides as before. It never accepts what the general path would refuse.

The 16 MiB bound of a logical frame is settled without encoding it: with the keys known,
an upper bound of its ``JSON.stringify`` size is a sum of string lengths (a character is
at most six bytes encoded, ``\\u001f``), and a frame under that bound is under the limit.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from . import limits
from .conversation_apply import STREAMABLE_PATHS

# Bounds of what the fast path takes, so that the size bound below holds: every number an
# integer of at most 20 characters (a float, even a finite one, goes the general way).
_INT_BOUND = 1 << 63
_MAX_SAFE_INTEGER = limits.MAX_SAFE_INTEGER
_ENVELOPE_BYTES = 256  # the logical frame's keys, quotes and braces, its three numbers (~170)
_DELTA_BYTES = 96 + 6 * max(map(len, STREAMABLE_PATHS))
"""One row.delta but its append: keys, quotes, braces and comma, its op and rowId (~70), its path."""

def _encodable(text: str) -> bool:
    """Whether ``text`` has a UTF-8 encoding (no lone surrogate): the general path's measure
    encodes the frame, and faults one that cannot be."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


TextDeltas = tuple[str, str, int, int, int, list[dict[str, Any]]]
"""``(deliveryKind, logicalFrameId, logicalFrameOrdinal, fromSeq, toSeq, deltas)``."""

_DELIVERY_KINDS = ("initial", "online", "recovery")  # a tuple: ==, nothing hashed


class StreamShape(NamedTuple):
    """What a whole wire of text deltas for one subscription looks like, made once a batch
    (``stream_shape``) rather than once a frame: the values its wire and logical frame must
    hold, compared a tuple at a time, and the part of the size bound they fix."""

    wire: tuple[Any, ...]
    frame: tuple[Any, ...]
    envelope_bytes: int


def stream_shape(topic: str, subscription_id: str | None) -> StreamShape | None:
    """The shape for ``text_deltas``; None (nothing takes the shortcut) when no subscription is
    current, or when the topic or subscription id is not ASCII (it might have no UTF-8 encoding, a
    lone surrogate, which the general path's measure faults)."""
    if subscription_id is None or not (topic.isascii() and subscription_id.isascii()):
        return None
    return StreamShape(("complete", limits.WIRE_VERSION, topic, subscription_id, str, int, dict),
                       (topic, subscription_id, int, int, int, dict),
                       _ENVELOPE_BYTES + 6 * (len(topic) + len(subscription_id)))


def text_deltas(params: Any, shape: StreamShape | None, max_logical_bytes: int) -> TextDeltas | None:
    """The frame's values when it is a whole wire of ``row.delta`` ops of ``shape``'s subscription, else None.

    None says nothing about the frame: it may be fine (a snapshot, a fragment, another op,
    another subscription) or broken; the general path tells which.
    """
    # The wire (wire.parse_wire, a complete one): eight keys, each present and well typed,
    # so exactly its keys; then the logical frame (frames.parse_topic_frame): the six keys of
    # a deltas frame, and its payload's two. Values are compared a tuple at a time, in C
    # (``type(x) == int`` is False for a bool, as the general path wants), and read by
    # subscript in a ``try``: this runs once per frame of a streaming turn.
    if shape is None or type(params) is not dict or len(params) != 8:
        return None
    try:
        frame = params["frame"]
        ordinal = params["logicalFrameOrdinal"]
        frame_id = params["logicalFrameId"]
        if ((params["kind"], params["wireVersion"], params["topic"], params["subscriptionId"],
             type(frame_id), type(ordinal), type(frame)) != shape.wire
                or params["deliveryKind"] not in _DELIVERY_KINDS
                or not frame_id or not 1 <= ordinal <= _MAX_SAFE_INTEGER or len(frame) != 6):
            return None
        from_seq, to_seq, sent_at, payload = frame["fromSeq"], frame["toSeq"], frame["sentAt"], frame["payload"]
        if ((frame["topic"], frame["subscriptionId"], type(from_seq), type(to_seq), type(sent_at), type(payload))
                != shape.frame
                or not 0 <= from_seq <= to_seq < _INT_BOUND or not -_INT_BOUND < sent_at < _INT_BOUND
                or len(payload) != 2 or payload["kind"] != "deltas"):
            return None
        deltas = payload["deltas"]
        if type(deltas) is not list:
            return None
        chars = 0  # of the appends: the rest of a delta's size is bounded by _DELTA_BYTES
        for delta in deltas:
            # conversation_apply's check of a row.delta, and the four keys the size bound counts.
            if type(delta) is not dict or len(delta) != 4:
                return None
            row_id, path, append = delta["rowId"], delta["path"], delta["append"]
            if (delta["op"] != "row.delta" or type(row_id) is not int or type(path) is not str
                    or type(append) is not str or not -_INT_BOUND < row_id < _INT_BOUND
                    or path not in STREAMABLE_PATHS or not (append.isascii() or _encodable(append))):
                return None
            chars += len(append)
    except KeyError:  # a key missing (another of the same count in its place)
        return None
    if shape.envelope_bytes + _DELTA_BYTES * len(deltas) + 6 * chars > max_logical_bytes:
        return None  # perhaps within the limit: the general path measures it
    return params["deliveryKind"], frame_id, ordinal, from_seq, to_seq, deltas
