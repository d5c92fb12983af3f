"""Logical frames → ``v4/conversation/frame`` notification params, as the engine wraps them.

From ``zcode-protocol-v4/transport.ts`` and ``wire-reassembly.ts``: every notification is
``{wireVersion: 3, kind, deliveryKind, logicalFrameId, logicalFrameOrdinal, topic,
subscriptionId}``; a ``complete`` one carries the logical frame as ``frame``; a logical
frame whose UTF-8 JSON is larger than the fragment threshold is cut into ``fragment``s of
those bytes, each with ``fragmentIndex``, ``fragmentCount``, ``logicalBytes``,
``checksum {algorithm: "crc32", value}`` (CRC-32/IEEE of the whole logical frame, eight
lowercase hex digits) and ``dataBase64`` (padded base64 of its slice).
"""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

WIRE_VERSION = 3
# Well under the engine's bound for one notification (1 MiB).
DEFAULT_FRAGMENT_BYTES = 256 * 1024
MAX_FRAGMENTS = 1024


def crc32_hex(data: bytes) -> str:
    return f"{zlib.crc32(data) & 0xFFFFFFFF:08x}"


def encode_logical(frame: dict[str, Any]) -> bytes:
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def logical_frame(topic: str, subscription_id: str, from_seq: int, to_seq: int, sent_at: int,
                  payload: dict[str, Any]) -> dict[str, Any]:
    return {"topic": topic, "subscriptionId": subscription_id, "sentAt": sent_at, "fromSeq": from_seq,
            "toSeq": to_seq, "payload": payload}


def wrap(frame: dict[str, Any], *, delivery_kind: str, logical_frame_id: str, ordinal: int,
         fragment_bytes: int = DEFAULT_FRAGMENT_BYTES, force_fragments: bool = False,
         corrupt_checksum: bool = False) -> list[dict[str, Any]]:
    """The notifications carrying ``frame``: one ``complete``, or its fragments in order.

    ``force_fragments`` cuts even a small frame (in two at least), so a fault can be
    played on any frame; ``corrupt_checksum`` gives the fragments a wrong CRC-32.
    """
    head = {"wireVersion": WIRE_VERSION, "deliveryKind": delivery_kind, "logicalFrameId": logical_frame_id,
            "logicalFrameOrdinal": ordinal, "topic": frame["topic"], "subscriptionId": frame["subscriptionId"]}
    data = encode_logical(frame)
    if len(data) <= fragment_bytes and not (force_fragments or corrupt_checksum):
        return [{**head, "kind": "complete", "frame": frame}]
    # A forced cut of a small frame halves it; a large frame is cut at the threshold.
    size = fragment_bytes if len(data) > fragment_bytes else max(1, (len(data) + 1) // 2)
    slices = [data[start:start + size] for start in range(0, len(data), size)]
    if len(slices) > MAX_FRAGMENTS:
        raise ValueError(f"a logical frame of {len(data)} bytes needs more than {MAX_FRAGMENTS} fragments")
    checksum = crc32_hex(data)
    if corrupt_checksum:
        checksum = f"{(int(checksum, 16) ^ 0xFFFFFFFF):08x}"
    return [{**head, "kind": "fragment", "fragmentIndex": index, "fragmentCount": len(slices),
             "logicalBytes": len(data), "checksum": {"algorithm": "crc32", "value": checksum},
             "dataBase64": base64.b64encode(piece).decode("ascii")}
            for index, piece in enumerate(slices)]
