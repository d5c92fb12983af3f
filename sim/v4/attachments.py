"""``v4/attachment/begin|chunk|commit|abort``: files uploaded in chunks, then sent by ``ref``.

The engine's bounds (``zcode-protocol-v4/attachment-ref.ts`` and the upload handlers):
at most 20 MiB a file, 64 chunks, 512 KiB a decoded chunk; ``checksum`` is
``sha256:<hex>`` of the whole file, checked at commit. ``begin`` of an upload already
staged answers where to resume (``nextChunkIndex``); of one already committed, its ref.
A committed upload is referenced as ``{ref, fileName, mime, bytes}``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass, field
from typing import Any

from .errors import INVALID_PARAMS, V4Error

MAX_BYTES = 20 * 1024 * 1024
MAX_CHUNKS = 64
MAX_CHUNK_BYTES = 512 * 1024


@dataclass(slots=True)
class Upload:
    upload_id: str
    session_id: str
    file_name: str
    mime: str
    total_bytes: int
    total_chunks: int
    checksum: str
    chunks: dict[int, bytes] = field(default_factory=dict)
    ref: str | None = None


class AttachmentStore:
    def __init__(self) -> None:
        self.uploads: dict[str, Upload] = {}
        self.committed: dict[str, Upload] = {}
        """ref → upload."""

    def begin(self, params: dict[str, Any]) -> dict[str, Any]:
        upload_id = _str(params, "uploadId")
        known = self.uploads.get(upload_id)
        if known is not None:
            if known.ref is not None:
                return {"uploadId": upload_id, "state": "committed", "ref": known.ref,
                        "nextChunkIndex": known.total_chunks}
            return {"uploadId": upload_id, "state": "staging", "nextChunkIndex": _next_index(known)}
        total, chunks = _int(params, "totalBytes"), _int(params, "totalChunks")
        checksum = _str(params, "checksum")
        if total > MAX_BYTES:
            raise V4Error(INVALID_PARAMS, f"attachment too large: {total} bytes (at most {MAX_BYTES})")
        if not 1 <= chunks <= MAX_CHUNKS:
            raise V4Error(INVALID_PARAMS, f"totalChunks must be 1..{MAX_CHUNKS}")
        if not checksum.startswith("sha256:") or len(checksum) != 71:
            raise V4Error(INVALID_PARAMS, "checksum must be sha256:<64 hex digits>")
        self.uploads[upload_id] = Upload(upload_id, _str(params, "sessionId"), _str(params, "fileName"),
                                         _str(params, "mime"), total, chunks, checksum.lower())
        return {"uploadId": upload_id, "state": "staging", "nextChunkIndex": 0}

    def chunk(self, params: dict[str, Any]) -> dict[str, Any]:
        upload = self._staging(params)
        index = _int(params, "chunkIndex")
        if not 0 <= index < upload.total_chunks:
            raise V4Error(INVALID_PARAMS, f"chunkIndex {index} out of 0..{upload.total_chunks - 1}")
        try:
            data = base64.b64decode(_str(params, "dataBase64", allow_empty=True), validate=True)
        except (binascii.Error, ValueError) as error:
            raise V4Error(INVALID_PARAMS, f"dataBase64 is not base64: {error}") from None
        if len(data) > MAX_CHUNK_BYTES:
            raise V4Error(INVALID_PARAMS, f"chunk of {len(data)} bytes (at most {MAX_CHUNK_BYTES})")
        upload.chunks[index] = data
        return {"uploadId": upload.upload_id, "nextChunkIndex": _next_index(upload)}

    def commit(self, params: dict[str, Any]) -> dict[str, Any]:
        upload = self.uploads.get(_str(params, "uploadId"))
        if upload is not None and upload.ref is not None:
            return {"ref": upload.ref}
        upload = self._staging(params)
        if len(upload.chunks) != upload.total_chunks:
            raise V4Error(INVALID_PARAMS, f"missing chunks: {upload.total_chunks - len(upload.chunks)}")
        data = b"".join(upload.chunks[i] for i in range(upload.total_chunks))
        if len(data) != upload.total_bytes:
            raise V4Error(INVALID_PARAMS, f"received {len(data)} bytes, totalBytes says {upload.total_bytes}")
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if digest != upload.checksum:
            raise V4Error(INVALID_PARAMS, f"checksum mismatch: received {digest}")
        upload.ref = f"attachment://{upload.session_id}/{upload.upload_id}"
        upload.chunks = {0: data}
        self.committed[upload.ref] = upload
        return {"ref": upload.ref}

    def abort(self, params: dict[str, Any]) -> dict[str, Any]:
        upload = self.uploads.get(_str(params, "uploadId"))
        if upload is not None and upload.ref is None:
            del self.uploads[upload.upload_id]
        return {}

    def resolve(self, reference: Any) -> Upload | None:
        """The committed upload an attachment ref names, or None."""
        ref = reference.get("ref") if isinstance(reference, dict) else None
        return self.committed.get(ref) if isinstance(ref, str) else None

    def _staging(self, params: dict[str, Any]) -> Upload:
        upload = self.uploads.get(_str(params, "uploadId"))
        if upload is None or upload.ref is not None:
            raise V4Error(INVALID_PARAMS, f"no upload staging under {params.get('uploadId')}")
        return upload


def _next_index(upload: Upload) -> int:
    return next((i for i in range(upload.total_chunks) if i not in upload.chunks), upload.total_chunks)


def _str(params: dict[str, Any], key: str, *, allow_empty: bool = False) -> str:
    value = params.get(key)
    if not isinstance(value, str) or (not value and not allow_empty):
        raise V4Error(INVALID_PARAMS, f"Invalid params: {key} must be a string")
    return value


def _int(params: dict[str, Any], key: str) -> int:
    value = params.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise V4Error(INVALID_PARAMS, f"Invalid params: {key} must be a non-negative integer")
    return value
