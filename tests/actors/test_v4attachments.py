"""V4Uploads: a prompt's images staged with the simulator's v4 attachment store, then named by ref."""

import base64
import hashlib
from typing import Any

from zcode_acp.actors.session.v4attachments import V4Uploads
from zcode_acp.protocol.errors import RpcError
from zcode_acp.protocol.v4 import limits
from zcode_acp.sim.v4.attachments import AttachmentStore
from zcode_acp.sim.v4.errors import V4Error

METHODS = {"v4/attachment/begin": "begin", "v4/attachment/chunk": "chunk", "v4/attachment/commit": "commit",
           "v4/attachment/abort": "abort"}


class StorePort:
    """Answers each call at once from the engine-side store, as the pipe would (result, error)."""

    def __init__(self, store: AttachmentStore) -> None:
        self.store = store
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def v4_call(self, method: str, params: dict[str, Any], then: Any) -> None:
        self.calls.append((method, params))
        try:
            result = getattr(self.store, METHODS[method])(params)
        except V4Error as error:
            then(None, {"code": error.code, "message": error.message})
            return
        then(result, None)


def upload(items: list[dict[str, Any]], store: AttachmentStore | None = None) -> tuple[Any, Any, StorePort]:
    port = StorePort(store or AttachmentStore())
    answers: list[tuple[Any, Any]] = []
    V4Uploads(port, "conn-1").upload("sess-1", items, lambda refs, error: answers.append((refs, error)))
    assert len(answers) == 1  # answered exactly once
    return answers[0][0], answers[0][1], port


def test_an_inline_image_and_a_linked_file_are_committed_and_named_by_ref(tmp_path):
    shot = tmp_path / "shot.png"
    shot.write_bytes(b"\x89PNG\r\n")
    store = AttachmentStore()
    refs, error, port = upload([{"kind": "image", "dataBase64": "AAAA", "mimeType": "image/png", "filename": "a.png"},
                                {"kind": "image", "localPath": str(shot), "mimeType": "image/png",
                                 "filename": "shot.png"}], store)
    assert error is None
    assert [(r["fileName"], r["mime"], r["bytes"]) for r in refs] == [("a.png", "image/png", 3),
                                                                     ("shot.png", "image/png", 6)]
    assert [store.resolve(r).chunks[0] for r in refs] == [b"\0\0\0", b"\x89PNG\r\n"]  # the engine checked the sha256
    begin = port.calls[0][1]
    assert begin["checksum"] == "sha256:" + hashlib.sha256(b"\0\0\0").hexdigest() and begin["connectionId"] == "conn-1"


def test_a_file_over_one_chunk_goes_in_order_in_several():
    data = bytes(range(256)) * (limits.ATTACHMENT_CHUNK_MAX_BYTES // 256 + 10)
    refs, error, port = upload([{"kind": "image", "dataBase64": base64.b64encode(data).decode(),
                                 "mimeType": "image/png", "filename": "big.png"}])
    assert error is None and refs[0]["bytes"] == len(data)
    assert [p["chunkIndex"] for m, p in port.calls if m == "v4/attachment/chunk"] == [0, 1]


def test_an_unreadable_file_is_refused_before_anything_is_sent(tmp_path):
    refs, error, port = upload([{"kind": "image", "localPath": str(tmp_path / "gone.png"), "mimeType": "image/png",
                                 "filename": "gone.png"}])
    assert refs is None and isinstance(error, RpcError) and error.code == -32602 and port.calls == []


def test_an_upload_the_engine_refuses_fails_the_prompt_and_is_aborted():
    class Refusing(AttachmentStore):
        def commit(self, params: dict[str, Any]) -> dict[str, Any]:
            raise V4Error(-32602, "checksum mismatch")

    refs, error, port = upload([{"kind": "image", "dataBase64": "AAAA", "mimeType": "image/png", "filename": "a.png"}],
                               Refusing())
    assert refs is None and "checksum mismatch" in error.message
    assert port.calls[-1][0] == "v4/attachment/abort"
