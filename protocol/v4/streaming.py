"""A streaming turn's frames, recognised a batch at a time: a run of text deltas to one row.

While a turn streams, nearly every ``v4/conversation/frame`` is the same shape: a
``complete`` wire for the current subscription whose logical frame carries only
``row.delta`` ops, each following the one before. The general path (``wire.parse_wire`` →
``Assembler.accept`` → ``frames.parse_topic_frame`` → ``TopicSubscription``) checks such a
frame in three layers and makes seven records for it, most of the v4 path's cost per update
(docs/performance.md, "The v4 stream at the legacy path's pace").

``text_run`` makes every check of those layers that such frames can fail, for a whole
batch at once: it reads the batch into columns (one ``operator.itemgetter`` a level) and
checks each column with one call that loops in C (``tuple.count``, ``set``, ``min``,
``max``, ``map``), so a frame costs no Python bytecode of its own. It gives back what the
subscription, the assembler and the applier act on: one row's appends, in order, and where
the run leaves the cursor. It is only a shortcut: a batch it is not sure of (another shape,
an extra key, a number outside 64 bits, deltas to two rows, a frame that might be near the
size limit) is None, and the caller splits it or takes the general path, which decides as
before. It never accepts what the general path would refuse.

The 16 MiB bound of a logical frame is settled without encoding it: with the keys known,
an upper bound of its ``JSON.stringify`` size is a sum of string lengths (a character is
at most six bytes encoded, ``\\u001f``), and a frame under that bound is under the limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from operator import itemgetter, lt
from typing import Any, NamedTuple

from . import limits
from .conversation_apply import STREAMABLE_PATHS
from .wire import DeliveryKind

# Bounds of what the shortcut takes, so that the size bound below holds: every number an
# integer of at most 20 characters (a float, even a finite one, goes the general way).
_INT_BOUND = 1 << 63
_MAX_SAFE_INTEGER = limits.MAX_SAFE_INTEGER
_ENVELOPE_BYTES = 256  # the logical frame's keys, quotes and braces, its three numbers (~170)
_DELTA_BYTES = 96 + 6 * max(map(len, STREAMABLE_PATHS))  # of any path: a bound
"""One row.delta but its append: keys, quotes, braces and comma, its op and rowId (~70), its path."""

_DELIVERY_KINDS = frozenset(("initial", "online", "recovery"))

# A tool's output is shown from the row as each change of a frame left it (the applier copies a row
# a frame changes twice), which one change for a run cannot say: its deltas go the general way.
_RUN_PATHS = STREAMABLE_PATHS - {"output.text"}

# Each level's keys, read in C; a KeyError says a key is missing (another in its place, as
# the key counts are checked first).
_WIRE = itemgetter("kind", "wireVersion", "topic", "subscriptionId", "deliveryKind", "logicalFrameId",
                   "logicalFrameOrdinal", "frame")
_FRAME = itemgetter("topic", "subscriptionId", "fromSeq", "toSeq", "sentAt", "payload")
_PAYLOAD = itemgetter("kind", "deltas")
_DELTA = itemgetter("op", "rowId", "path", "append")


class StreamShape(NamedTuple):
    """What a whole wire of text deltas for one subscription must hold, made once a batch."""

    topic: str
    subscription_id: str
    envelope_bytes: int
    """The part of a frame's size bound its topic and subscription id fix."""


def stream_shape(topic: str, subscription_id: str | None) -> StreamShape | None:
    """The shape for ``text_run``; None (nothing takes the shortcut) when no subscription is
    current, or when the topic or subscription id is not ASCII (it might have no UTF-8 encoding, a
    lone surrogate, which the general path's measure faults)."""
    if subscription_id is None or not (topic.isascii() and subscription_id.isascii()):
        return None
    return StreamShape(topic, subscription_id, _ENVELOPE_BYTES + 6 * (len(topic) + len(subscription_id)))


class TextRun(NamedTuple):
    """Frames that are each a whole wire of ``row.delta`` ops to one row's text, each following the last."""

    row_id: int
    path: str
    appends: tuple[str, ...]
    """Every delta's text, in order (a frame may carry several, or none)."""
    first_ordinal: int
    last_ordinal: int
    last_frame_id: str
    to_seq: int
    """The last frame's ``toSeq``: where the run leaves the cursor."""
    delivery_kind: DeliveryKind
    """The last frame's."""


def text_run(batch: Sequence[Any], shape: StreamShape | None, seq: int | None,
             max_logical_bytes: int) -> TextRun | None:
    """``batch`` as one run when every frame of it is a whole wire of ``row.delta`` ops to one
    row, of ``shape``'s subscription, the first starting at ``seq`` and each at the last one's
    end, with ordinals increasing; else None.

    None says nothing about the frames: they may be fine (a snapshot, a fragment, another op,
    another row, a gap) or broken; the general path tells which.
    """
    count = len(batch)
    if shape is None or seq is None or seq < 0 or not count:
        return None
    topic, subscription_id = shape.topic, shape.subscription_id
    # Each level read by its itemgetter: a KeyError is a key missing, a TypeError a value that is
    # not an object (or a list whose items are not strings, below). Every object then has at
    # least its level's keys, so a sum of key counts says that none has another.
    try:
        # The wire (wire.parse_wire, a complete one). ``== 3`` as parse_wire has it: 3.0 passes, True does not.
        kinds, versions, topics, subscriptions, deliveries, frame_ids, ordinals, frames = zip(*map(_WIRE, batch), strict=True)
        if (kinds.count("complete") != count or versions.count(3) != count
                or topics.count(topic) != count or subscriptions.count(subscription_id) != count
                or not _delivery_kinds(deliveries) or "" in frame_ids):
            return None
        "".join(frame_ids)  # every one a string
        # The logical frame (frames.parse_topic_frame): the six keys of a deltas frame.
        frame_topics, frame_subscriptions, from_seqs, to_seqs, sent_ats, payloads = zip(*map(_FRAME, frames), strict=True)
        if (frame_topics.count(topic) != count
                or frame_subscriptions.count(subscription_id) != count
                or set(map(type, ordinals + from_seqs + to_seqs + sent_ats)) != {int}):  # no bool, no float
            return None
        # Ordinals newer one by one; the cursor's interval (fromSeq, toSeq] followed frame by frame.
        if (ordinals[0] < 1 or ordinals[-1] > _MAX_SAFE_INTEGER or from_seqs[0] != seq
                or from_seqs[1:] != to_seqs[:-1] or to_seqs[-1] >= _INT_BOUND
                or min(sent_ats) <= -_INT_BOUND or max(sent_ats) >= _INT_BOUND):
            return None
        if not all(map(lt, ordinals, ordinals[1:])) or not all(map(lt, from_seqs, to_seqs)):
            return None
        payload_kinds, delta_lists = zip(*map(_PAYLOAD, payloads), strict=True)
        if (sum(map(len, chain(batch, frames, payloads))) != (8 + 6 + 2) * count or payload_kinds.count("deltas") != count
                or set(map(type, delta_lists)) != {list}):
            return None
        deltas = list(chain.from_iterable(delta_lists))
        if not deltas:
            return None
        # conversation_apply's check of a row.delta, and the four keys the size bound counts.
        ops, row_ids, paths, appends = zip(*map(_DELTA, deltas), strict=True)
        text = "".join(appends)  # every one a string
    except (KeyError, TypeError):
        return None
    total = len(deltas)
    row_id, path = row_ids[0], paths[0]
    # ``paths.count`` of a string counts only strings; a row id equal to another may be a float or a bool
    if (sum(map(len, deltas)) != 4 * total or ops.count("row.delta") != total
            or set(map(type, row_ids)) != {int} or row_ids.count(row_id) != total or not -_INT_BOUND < row_id < _INT_BOUND
            or type(path) is not str or path not in _RUN_PATHS or paths.count(path) != total):
        return None
    if not (text.isascii() or _encodable(text)):
        return None
    # No frame holds more deltas or characters than the whole run: a bound for the largest frame.
    if shape.envelope_bytes + _DELTA_BYTES * total + 6 * len(text) > max_logical_bytes:
        return None  # perhaps within the limit: the general path measures it
    return TextRun(row_id, path, appends, ordinals[0], ordinals[-1], frame_ids[-1], to_seqs[-1],
                   deliveries[-1])


def run_row(params: Any) -> int | None:
    """The row a frame's deltas all go to when it looks like a frame of a text run, else None:
    a cheap look (``text_run`` checks the frame whole) that cuts a batch into parts worth trying."""
    try:
        deltas = params["frame"]["payload"]["deltas"]
        row_id = deltas[0]["rowId"]
        for delta in deltas:
            if delta["op"] != "row.delta" or delta["rowId"] != row_id:
                return None
    except (KeyError, TypeError, IndexError):
        return None
    return row_id if type(row_id) is int else None


def _delivery_kinds(kinds: tuple[Any, ...]) -> bool:
    """Whether every one is a delivery kind the engine sends (nearly always all ``online``)."""
    return kinds.count("online") == len(kinds) or (set(map(type, kinds)) == {str} and _DELIVERY_KINDS.issuperset(kinds))


def _encodable(text: str) -> bool:
    """Whether ``text`` has a UTF-8 encoding (no lone surrogate): the general path's measure
    encodes the frame, and faults one that cannot be."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True
