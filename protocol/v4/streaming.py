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

from typing import Any

from . import limits
from .conversation_apply import STREAMABLE_PATHS

# Bounds of what the fast path takes, so that the size bound below holds: every number an
# integer of at most 20 characters (a float, even a finite one, goes the general way).
_INT_BOUND = 1 << 63
_ENVELOPE_BYTES = 256  # the logical frame's keys, quotes and braces, its three numbers (~170)
_DELTA_BYTES = 96  # one row.delta's keys, quotes, braces and comma, its op and rowId (~70)

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


def text_deltas(params: Any, topic: str, subscription_id: str | None, max_logical_bytes: int) -> TextDeltas | None:
    """The frame's values when it is a whole wire of ``row.delta`` ops for this subscription, else None.

    None says nothing about the frame: it may be fine (a snapshot, a fragment, another op,
    another subscription) or broken; the general path tells which.
    """
    # The wire (wire.parse_wire, a complete one): its eight keys exactly, each well typed.
    if type(params) is not dict or len(params) != 8 or subscription_id is None:
        return None
    get = params.get
    ordinal = get("logicalFrameOrdinal")
    frame_id = get("logicalFrameId")
    delivery = get("deliveryKind")
    if (get("kind") != "complete" or type(get("wireVersion")) is not int or get("wireVersion") != limits.WIRE_VERSION
            or get("topic") != topic or get("subscriptionId") != subscription_id
            or type(frame_id) is not str or not frame_id
            or type(ordinal) is not int or not 1 <= ordinal <= limits.MAX_SAFE_INTEGER
            or delivery not in ("initial", "online", "recovery")):  # a tuple: == only, nothing hashed
        return None
    frame = get("frame")
    # The logical frame (frames.parse_topic_frame): the six keys of a deltas frame, no more.
    if type(frame) is not dict or len(frame) != 6:
        return None
    fget = frame.get
    from_seq, to_seq, sent_at, payload = fget("fromSeq"), fget("toSeq"), fget("sentAt"), fget("payload")
    if (fget("topic") != topic or fget("subscriptionId") != subscription_id
            or type(from_seq) is not int or type(to_seq) is not int or not 0 <= from_seq <= to_seq < _INT_BOUND
            or type(sent_at) is not int or not -_INT_BOUND < sent_at < _INT_BOUND
            or type(payload) is not dict or len(payload) != 2 or payload.get("kind") != "deltas"
            or not (topic.isascii() and subscription_id.isascii())):  # a lone surrogate cannot be encoded
        return None
    deltas = payload.get("deltas")
    if type(deltas) is not list:
        return None
    size = _ENVELOPE_BYTES + 6 * (len(topic) + len(subscription_id))
    for delta in deltas:
        # conversation_apply's check of a row.delta, and the keys the size bound counts.
        if type(delta) is not dict or len(delta) != 4 or delta.get("op") != "row.delta":
            return None
        row_id, path, append = delta.get("rowId"), delta.get("path"), delta.get("append")
        if (type(row_id) is not int or not -_INT_BOUND < row_id < _INT_BOUND
                or type(path) is not str or path not in STREAMABLE_PATHS or type(append) is not str
                or not (append.isascii() or _encodable(append))):
            return None
        size += _DELTA_BYTES + 6 * (len(path) + len(append))
    if size > max_logical_bytes:
        return None  # perhaps within the limit: the general path measures it
    return delivery, frame_id, ordinal, from_seq, to_seq, deltas
