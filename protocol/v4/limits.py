"""The engine's v4 hard limits (its ``PROTOCOL_V4_LIMITS``), the ones this package enforces.

A caller may pass smaller bounds to the pieces that take them, never larger ones: the
engine itself refuses to widen these, so a bridge that did would accept what the engine
could never have meant to send.
"""

from __future__ import annotations

from typing import Final

WIRE_VERSION: Final = 3
"""``wireVersion`` of every ``v4/conversation/frame`` notification."""

MAX_PHYSICAL_FRAME_BYTES: Final = 1024 * 1024
"""One notification line (a fragment's ``dataBase64`` is bounded by this)."""

MAX_LOGICAL_FRAME_BYTES: Final = 16 * 1024 * 1024
"""One logical frame, however it travels (complete or in fragments)."""

MAX_FRAGMENTS: Final = 1024
"""``fragmentCount`` of one logical frame."""

MAX_CONCURRENT_ASSEMBLIES: Final = 32
"""Logical frames being reassembled at once (one per topic and subscription)."""

MAX_STAGED_BYTES: Final = 32 * 1024 * 1024
"""Decoded fragment bytes held across every open assembly."""

ASSEMBLY_TIMEOUT_MS: Final = 30_000
"""An assembly still missing fragments this long after its first one is dropped."""

MAX_SAFE_INTEGER: Final = 2**53 - 1
"""The largest ordinal the engine's schema accepts (JavaScript's safe integers)."""

ATTACHMENT_MAX_BYTES: Final = 20 * 1024 * 1024
"""One attachment upload."""

ATTACHMENT_CHUNK_MAX_BYTES: Final = 512 * 1024
"""Decoded bytes of one ``v4/attachment/chunk``."""

ATTACHMENT_MAX_CHUNKS: Final = 64
"""``totalChunks`` of one upload."""
