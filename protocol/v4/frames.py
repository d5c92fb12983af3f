"""A logical topic frame (what a complete wire carries, or its fragments add up to).

``{topic, subscriptionId, fromSeq, toSeq, sentAt, payload}``: the payload is either a
``snapshot`` (the topic's whole state, which replaces whatever the client held) or a run
of ``deltas`` covering the sequence interval ``(fromSeq, toSeq]``. A snapshot frame's
``fromSeq`` is 0 and its ``toSeq`` the snapshot's own ``seq``.

Only the envelope is checked here. What a snapshot or a delta holds depends on the topic
and is checked by whoever applies it (conversation_apply.py for conversations), before
any of the frame is applied, so a frame is applied whole or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

INVALID_PAYLOAD = "proto.frameAssemblyInvalidPayload"
"""The engine's reason code for bytes that decoded fine but do not fit the schema."""


@dataclass(frozen=True, slots=True)
class SnapshotPayload:
    snapshot: dict[str, Any]


@dataclass(frozen=True, slots=True)
class DeltasPayload:
    deltas: tuple[dict[str, Any], ...]
    """Each an object with a string ``op``; their fields are the applier's business."""


@dataclass(frozen=True, slots=True)
class TopicFrame:
    topic: str
    subscription_id: str
    from_seq: int
    to_seq: int
    sent_at: float
    payload: SnapshotPayload | DeltasPayload


def _seq(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def parse_topic_frame(value: Any) -> TopicFrame | str:
    """The frame, or a sentence saying what is wrong with it."""
    if not isinstance(value, dict):
        return "the logical frame is not an object"
    topic, subscription_id = value.get("topic"), value.get("subscriptionId")
    if not isinstance(topic, str) or not topic or not isinstance(subscription_id, str) or not subscription_id:
        return "topic and subscriptionId must be non-empty strings"
    from_seq, to_seq = _seq(value.get("fromSeq")), _seq(value.get("toSeq"))
    if from_seq is None or to_seq is None:
        return "fromSeq and toSeq must be non-negative integers"
    sent_at = value.get("sentAt")
    if not isinstance(sent_at, (int, float)) or isinstance(sent_at, bool):
        return "sentAt is not a number"
    payload = value.get("payload")
    if not isinstance(payload, dict):
        return "payload is not an object"
    kind = payload.get("kind")
    if kind == "snapshot":
        snapshot = payload.get("snapshot")
        if not isinstance(snapshot, dict):
            return "snapshot payload without a snapshot object"
        return TopicFrame(topic, subscription_id, from_seq, to_seq, float(sent_at), SnapshotPayload(snapshot))
    if kind == "deltas":
        deltas = payload.get("deltas")
        if not isinstance(deltas, list):
            return "deltas payload without a deltas array"
        for delta in deltas:
            if not isinstance(delta, dict) or not isinstance(delta.get("op"), str):
                return "a delta is not an object with a string op"
        if to_seq < from_seq:
            return f"toSeq {to_seq} is before fromSeq {from_seq}"
        return TopicFrame(topic, subscription_id, from_seq, to_seq, float(sent_at), DeltasPayload(tuple(deltas)))
    return f"payload kind {kind!r} is neither snapshot nor deltas"
