"""The bridge's attachment upload requests are what the engine's v4 attachment schemas accept (issue 19)."""

from __future__ import annotations

import pytest

from zcode_acp.protocol.v4 import attachments
from tests.engine_schema import schema_set


def errors(method: str, part: str, value: object) -> list[str]:
    schemas = schema_set("cli016")
    uri = schemas.uri(f"v4/{method.removeprefix('v4/').replace('/', '.')}.json") + f"#/$defs/{part}"
    return [error.message for error in schemas.errors(uri, value)]


@pytest.mark.parametrize("data", [b"", b"hello", bytes(range(256)) * 5000])
def test_every_request_of_an_upload_plan_validates(data: bytes) -> None:
    plan = attachments.upload_plan(data, connection_id="conn-1", upload_id="up-1", session_id="sess-1",
                                   file_name="notes.txt", mime="text/plain", chunk_bytes=512 * 1024)
    assert isinstance(plan, attachments.UploadPlan)
    assert errors(attachments.BEGIN, "params", plan.begin) == []
    for chunk in plan.chunks:
        assert errors(attachments.CHUNK, "params", chunk) == []
    assert errors(attachments.COMMIT, "params", plan.commit) == []
    assert errors(attachments.ABORT, "params", plan.abort) == []


def test_the_schemas_refuse_what_the_zod_refuses() -> None:
    plan = attachments.upload_plan(b"abc", connection_id="c", upload_id="u", session_id="s",
                                   file_name="a.txt", mime="text/plain")
    assert isinstance(plan, attachments.UploadPlan)
    assert errors(attachments.BEGIN, "params", {**plan.begin, "totalChunks": 0})  # bytes but no chunks
    assert errors(attachments.CHUNK, "params", {**plan.chunks[0], "dataBase64": "not base64!"})
    assert errors(attachments.COMMIT, "params", {**plan.commit, "extra": 1})
    assert errors(attachments.BEGIN, "result", {"uploadId": "u", "state": "committed", "nextChunkIndex": 1})  # no ref
    assert errors(attachments.BEGIN, "result", {"uploadId": "u", "state": "staging", "nextChunkIndex": 0}) == []
    assert errors(attachments.CHUNK, "result", {"uploadId": "u", "nextChunkIndex": 1}) == []
    assert errors(attachments.COMMIT, "result", {"ref": "att_1"}) == []
    assert errors(attachments.ABORT, "result", {}) == []
