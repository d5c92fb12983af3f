"""V4Uploads: a prompt's images staged with the simulator's v4 attachment store, then named by ref."""

import base64
import hashlib
import os
from typing import Any

import pytest
from gevent import monkey

from zcode_acp.actors.session.v4 import attachments as v4attachments
from zcode_acp.actors.session.v4.attachments import V4Uploads
from zcode_acp.protocol.content import convert_prompt
from zcode_acp.protocol.errors import RpcError
from zcode_acp.protocol.i18n import EN, ZH_CN, t
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

    def engine_call(self, method: str, params: dict[str, Any], then: Any) -> None:
        self.calls.append((method, params))
        try:
            result = getattr(self.store, METHODS[method])(params)
        except V4Error as error:
            then(None, {"code": error.code, "message": error.message})
            return
        then(result, None)


def upload(items: list[dict[str, Any]], store: AttachmentStore | None = None, folder: Any = "",
           project_roots: tuple[str, ...] = ()) -> tuple[Any, Any, StorePort]:
    port = StorePort(store or AttachmentStore())
    answers: list[tuple[Any, Any]] = []
    V4Uploads(port, "conn-1", lambda: str(folder), lambda: project_roots).upload(
        "sess-1", items, lambda refs, error: answers.append((refs, error)))
    assert len(answers) == 1  # answered exactly once
    return answers[0][0], answers[0][1], port


def test_an_inline_image_and_a_linked_file_are_committed_and_named_by_ref(tmp_path):
    shot = tmp_path / "shot.png"
    shot.write_bytes(b"\x89PNG\r\n")
    store = AttachmentStore()
    refs, error, port = upload([{"kind": "image", "dataBase64": "AAAA", "mimeType": "image/png", "filename": "a.png"},
                                {"kind": "image", "localPath": str(shot), "mimeType": "image/png",
                                 "filename": "shot.png"}], store, folder=tmp_path)
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
                                 "filename": "gone.png"}], folder=tmp_path)
    assert refs is None and isinstance(error, RpcError) and error.code == -32602 and port.calls == []


def test_an_upload_the_engine_refuses_fails_the_prompt_and_is_aborted():
    class Refusing(AttachmentStore):
        def commit(self, params: dict[str, Any]) -> dict[str, Any]:
            raise V4Error(-32602, "checksum mismatch")

    refs, error, port = upload([{"kind": "image", "dataBase64": "AAAA", "mimeType": "image/png", "filename": "a.png"}],
                               Refusing())
    assert refs is None and "checksum mismatch" in error.message
    assert port.calls[-1][0] == "v4/attachment/abort"


# -- safe attachments (issue 31): each route a remote token holder used, and the rules that close it --


def linked(uri: str) -> dict[str, Any]:
    """The attachment a client's ``resource_link`` to an image becomes (protocol/content.py), as it arrives."""
    prompt = convert_prompt([{"type": "text", "text": "look"},
                             {"type": "resource_link", "uri": uri, "name": "x.png", "mimeType": "image/png"}])
    return prompt.attachments[0]


def refused(error: Any, port: StorePort, key: str, **params: Any) -> bool:
    """Refused with -32602 for ``key``'s reason, before anything reached the engine."""
    expected = t(EN, "error.invalid_params", field="prompt", problem=t(EN, key, **params))
    return isinstance(error, RpcError) and error.code == -32602 and error.message == expected and port.calls == []


@pytest.mark.timeout(30)  # the route's harm was a read that never returned: the bridge's stdin
def test_file_dev_stdin_is_never_read(tmp_path):
    refs, error, port = upload([linked("file:///dev/stdin")], folder=tmp_path)
    assert refs is None and refused(error, port, "invalid.attachment.outside_roots", path="/dev/stdin")
    # Even where the roots would hold it, it is no regular file: refused without waiting for input.
    refs, error, port = upload([linked("file:///dev/stdin")], folder="/")
    assert refs is None and isinstance(error, RpcError) and error.code == -32602 and port.calls == []


def test_a_file_outside_the_roots_is_not_read(tmp_path):
    project, elsewhere = tmp_path / "project", tmp_path / "etc"
    project.mkdir()
    elsewhere.mkdir()
    (elsewhere / "shadow").write_bytes(b"root:$6$secret")  # /etc/shadow's place: readable, outside the roots
    refs, error, port = upload([linked((elsewhere / "shadow").as_uri())], folder=project)
    assert refs is None and refused(error, port, "invalid.attachment.outside_roots", path=str(elsewhere / "shadow"))
    assert "secret" not in repr(error.to_dict())
    # A sibling whose name starts like the root is not inside it.
    (tmp_path / "project2").mkdir()
    (tmp_path / "project2" / "a.png").write_bytes(b"png")
    refs, error, port = upload([linked((tmp_path / "project2" / "a.png").as_uri())], folder=project)
    assert refs is None and refused(error, port, "invalid.attachment.outside_roots",
                                    path=str(tmp_path / "project2" / "a.png"))


def test_a_file_under_a_configured_project_root_is_read(tmp_path):
    project, other = tmp_path / "project", tmp_path / "src"
    project.mkdir()
    other.mkdir()
    (other / "a.png").write_bytes(b"\x89PNG")
    refs, error, _ = upload([linked((other / "a.png").as_uri())], folder=project, project_roots=(str(other),))
    assert error is None and refs[0]["bytes"] == 4


def test_proc_self_environ_is_not_read(tmp_path):
    refs, error, port = upload([linked("file:///proc/self/environ")], folder=tmp_path)
    assert refs is None and refused(error, port, "invalid.attachment.outside_roots", path="/proc/self/environ")
    # With every folder a root, its size (0: the kernel's files do not tell one) still bounds the read.
    refs, error, port = upload([linked("file:///proc/self/environ")], folder="/")
    assert refs is None and refused(error, port, "invalid.attachment.empty", path="/proc/self/environ")


@pytest.mark.timeout(30)  # opening a FIFO without a writer waits for one: the old read never returned
def test_a_fifo_inside_the_root_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    refs, error, port = upload([linked(fifo.as_uri())], folder=tmp_path)
    assert refs is None and refused(error, port, "invalid.attachment.not_a_file", path=str(fifo))


def test_a_symlink_out_of_the_root_is_refused_and_one_inside_is_followed(tmp_path):
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "secret.png").write_bytes(b"secret")
    (project / "innocent.png").symlink_to(outside / "secret.png")
    (project / "folder").symlink_to(outside, target_is_directory=True)
    for path in (project / "innocent.png", project / "folder" / "secret.png"):
        refs, error, port = upload([linked(path.as_uri())], folder=project)
        assert refs is None and refused(error, port, "invalid.attachment.outside_roots", path=str(path))
    (project / "real.png").write_bytes(b"png!")
    (project / "alias.png").symlink_to(project / "real.png")
    refs, error, _ = upload([linked((project / "alias.png").as_uri())], folder=project)
    assert error is None and refs[0]["bytes"] == 4


def test_an_oversize_file_is_refused_by_its_size_before_any_read(tmp_path, monkeypatch):
    big = tmp_path / "big.png"
    with open(big, "wb") as file:
        file.truncate(limits.ATTACHMENT_MAX_BYTES + 1)  # sparse: no disk spent
    reads: list[int] = []
    real_read = os.read
    monkeypatch.setattr(v4attachments.os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    refs, error, port = upload([linked(big.as_uri())], folder=tmp_path)
    assert refs is None and reads == []
    assert refused(error, port, "invalid.attachment.too_large", path=str(big), size=limits.ATTACHMENT_MAX_BYTES + 1,
                   limit=limits.ATTACHMENT_MAX_BYTES)


def test_the_read_runs_off_the_event_loop(tmp_path, monkeypatch):
    (tmp_path / "a.png").write_bytes(b"png")
    os_thread = monkey.get_original("threading", "get_ident")
    readers: list[int] = []
    real = v4attachments.read_local
    monkeypatch.setattr(v4attachments, "read_local", lambda *args: readers.append(os_thread()) or real(*args))
    refs, error, _ = upload([linked((tmp_path / "a.png").as_uri())], folder=tmp_path)
    assert error is None and readers and readers[0] != os_thread()  # a pool thread, not the loop's


def test_the_refusal_speaks_the_sessions_language(tmp_path):
    refs, error, _ = upload([linked("file:///proc/self/environ")], folder=tmp_path)
    assert error.words(ZH_CN).startswith("参数无效：prompt /proc/self/environ 不在会话的文件夹")


def test_a_folder_swapped_for_a_link_between_the_check_and_the_open_is_caught(tmp_path, monkeypatch):
    """The real path is checked, then opened: a folder on the way that becomes a link meanwhile
    would open a file outside the roots, so where the descriptor really is counts."""
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "shots").mkdir(parents=True)
    outside.mkdir()
    (project / "shots" / "a.png").write_bytes(b"mine")
    (outside / "a.png").write_bytes(b"secret")
    real_open = os.open

    def swapping_open(path, flags, *args):
        if str(path).startswith(str(project / "shots")):  # the race, played at the worst moment
            (project / "shots" / "a.png").unlink()
            (project / "shots").rmdir()
            (project / "shots").symlink_to(outside, target_is_directory=True)
        return real_open(path, flags, *args)

    monkeypatch.setattr(v4attachments.os, "open", swapping_open)
    refs, error, port = upload([linked((project / "shots" / "a.png").as_uri())], folder=project)
    assert refs is None and refused(error, port, "invalid.attachment.outside_roots", path=str(project / "shots" / "a.png"))
