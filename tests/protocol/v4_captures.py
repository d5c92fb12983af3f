"""The real engine captures (tests/fixtures/engine-captures/) and a fragmenter for tests.

The captures hold only complete wire frames, so fragmented ones are made here: the
logical frame's bytes as the engine counts them, cut at arbitrary byte offsets (a cut may
fall inside a UTF-8 sequence, as the engine's may), each piece in base64, every fragment
carrying the CRC-32 of the whole.
"""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path
from typing import Any

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "engine-captures"


def capture(name: str) -> list[dict[str, Any]]:
    """The records of one capture, its leading ``meta`` line left out."""
    lines = (CAPTURES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [record for record in map(json.loads, lines) if not record.get("meta")]


def captured_frames(name: str) -> list[dict[str, Any]]:
    """The params of every ``v4/conversation/frame`` notification of a capture, in order."""
    return [r["params"] for r in capture(name) if r.get("method") == "v4/conversation/frame"]


def logical_bytes(frame: Any) -> bytes:
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":")).encode()


def fragments(
    wire: dict[str, Any], cuts: list[int] | None = None, *, data: bytes | None = None, checksum: str | None = None
) -> list[dict[str, Any]]:
    """A complete wire's frame as fragments (in order), cut after the given byte offsets."""
    raw = logical_bytes(wire["frame"]) if data is None else data
    points = sorted({c for c in (cuts or [len(raw) // 2]) if 0 < c < len(raw)})
    pieces = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    crc = checksum or f"{zlib.crc32(raw) & 0xFFFFFFFF:08x}"
    envelope = {k: v for k, v in wire.items() if k != "frame"}
    return [
        {
            **envelope,
            "kind": "fragment",
            "fragmentIndex": i,
            "fragmentCount": len(pieces),
            "logicalBytes": len(raw),
            "checksum": {"algorithm": "crc32", "value": crc},
            "dataBase64": base64.b64encode(piece).decode(),
        }
        for i, piece in enumerate(pieces)
    ]
