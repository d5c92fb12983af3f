"""An attachment upload (``v4/attachment/begin|chunk|commit``) planned as pure data.

The engine never takes a file inline in a command: the client stages it in chunks, the
engine checks the total size and the sha256 on commit and answers a ``ref``, and the
command (``sendText``, ``createSession``'s first input, ``editUserQuery``) carries
``{ref, fileName, mime, bytes}``. Bounds, the engine's: 20 MiB an upload, 512 KiB of
decoded bytes a chunk, 64 chunks; a zero-byte upload declares zero chunks.

``upload_plan`` turns bytes into the requests to send, in order; an upload the engine
would refuse comes back as ``UploadRefused`` (the user's file is too big: not a bug).
A ``begin`` may answer that the upload is already staged up to some chunk, or already
committed (the same ``uploadId`` sent again): ``parse_begin_result`` says which, and
``UploadPlan.chunks_from`` resumes.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from typing import Any

from . import limits

BEGIN = "v4/attachment/begin"
CHUNK = "v4/attachment/chunk"
COMMIT = "v4/attachment/commit"
ABORT = "v4/attachment/abort"

_UPLOAD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]*")
_MIME = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*")


@dataclass(frozen=True, slots=True)
class UploadPlan:
    begin: dict[str, Any]
    chunks: tuple[dict[str, Any], ...]
    commit: dict[str, Any]
    abort: dict[str, Any]
    file_name: str
    mime: str
    size: int

    def chunks_from(self, next_chunk_index: int) -> tuple[dict[str, Any], ...]:
        """The chunks still to send when the engine already holds those before ``next_chunk_index``."""
        return self.chunks[next_chunk_index:]

    def attachment_ref(self, ref: str) -> dict[str, Any]:
        """What a command carries once ``commit`` answered ``{ref}``."""
        return {"ref": ref, "fileName": self.file_name, "mime": self.mime, "bytes": self.size}


@dataclass(frozen=True, slots=True)
class UploadRefused:
    reason: str


def upload_plan(
    data: bytes,
    *,
    connection_id: str,
    upload_id: str,
    session_id: str,
    file_name: str,
    mime: str,
    chunk_bytes: int = limits.ATTACHMENT_CHUNK_MAX_BYTES,
) -> UploadPlan | UploadRefused:
    if len(data) > limits.ATTACHMENT_MAX_BYTES:
        return UploadRefused(f"{len(data)} bytes is over the engine's {limits.ATTACHMENT_MAX_BYTES} byte limit")
    if not 1 <= len(upload_id) <= 128 or not _UPLOAD_ID.fullmatch(upload_id):
        return UploadRefused(f"upload id {upload_id!r} is not one the engine accepts")
    if not 1 <= len(file_name) <= 255 or any(c in file_name for c in "\0\r\n"):
        return UploadRefused(f"file name {file_name!r} is not one the engine accepts")
    if not 3 <= len(mime) <= 255 or not _MIME.fullmatch(mime):
        return UploadRefused(f"media type {mime!r} is not type/subtype")
    if not connection_id or not session_id:
        return UploadRefused("an upload needs a connection and a session")
    size = max(1, min(chunk_bytes, limits.ATTACHMENT_CHUNK_MAX_BYTES))
    pieces = [data[offset : offset + size] for offset in range(0, len(data), size)]
    if len(pieces) > limits.ATTACHMENT_MAX_CHUNKS:
        return UploadRefused(f"{len(pieces)} chunks is over the engine's {limits.ATTACHMENT_MAX_CHUNKS}")
    ids = {"connectionId": connection_id, "uploadId": upload_id, "sessionId": session_id}
    begin = {
        **ids,
        "fileName": file_name,
        "mime": mime,
        "totalBytes": len(data),
        "totalChunks": len(pieces),
        "checksum": "sha256:" + hashlib.sha256(data).hexdigest(),
    }
    chunks = tuple({**ids, "chunkIndex": i, "dataBase64": base64.b64encode(p).decode()} for i, p in enumerate(pieces))
    return UploadPlan(begin, chunks, dict(ids), dict(ids), file_name, mime, len(data))


@dataclass(frozen=True, slots=True)
class Staging:
    next_chunk_index: int


@dataclass(frozen=True, slots=True)
class Committed:
    ref: str


def parse_begin_result(value: Any) -> Staging | Committed | UploadRefused:
    if not isinstance(value, dict):
        return UploadRefused("the begin answer is not an object")
    index = value.get("nextChunkIndex")
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        return UploadRefused("the begin answer has no nextChunkIndex")
    if value.get("state") == "committed" and isinstance(value.get("ref"), str) and value["ref"]:
        return Committed(value["ref"])
    if value.get("state") == "staging":
        return Staging(index)
    return UploadRefused(f"begin state {value.get('state')!r}")
