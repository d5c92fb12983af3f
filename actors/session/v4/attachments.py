"""A prompt's images uploaded to the engine before its ``sendText`` (docs/v4.md, "Prompts").

The v4 engine never takes a file inline in a command: each attachment is staged with
``v4/attachment/begin``, its chunks, and ``commit`` (sha256 checked by the engine), and the
command carries the ``{ref, fileName, mime, bytes}`` the commit names. The prompt's
attachments come from ``protocol/content.py`` in the legacy shape (``dataBase64`` or a
``localPath`` the legacy engine read itself); on v4 the bridge reads the local file, since
only its bytes can be uploaded.

The bridge reading a file a client named is a route to anything the bridge may read (a remote
token holder named ``file:///dev/stdin``, ``/etc/shadow``, ``/proc/self/environ``: issue 31), so
a path is read only when (docs/security.md, "Attachments on the v4 path"):

* its real path (symlinks resolved first) lies inside the session's ``cwd`` or a configured
  project root (``remote.projectRoots``/``ZCODE_ACP_PROJECT_ROOTS``), whoever sent the prompt;
* it opens, without following a link and without waiting (``O_NONBLOCK``: a FIFO or a device
  never holds the open), as a regular file whose size, checked before the read, is within the
  engine's bound; no more than that size is read (a ``/proc`` file says 0: refused);
* all of it off the event loop, in gevent's thread pool (the Session waits, the loop does not).

A plain part of the Session's ``V4Path``: it calls through ``engine_call`` and answers
``done(refs, None)`` or ``done(None, error)`` exactly once. The uploads of one prompt go one
after the other, each chunk after the previous one's answer (the engine stages them in order).
"""

from __future__ import annotations

import base64
import binascii
import os
import stat
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from zcode_acp.actors.local_files import OPEN_FLAGS, Roots, configured_project_roots, inside, opened_path, roots_with
from zcode_acp.protocol.errors import INTERNAL_ERROR, RpcError, from_backend_error, invalid_params
from zcode_acp.protocol.v4 import attachments as v4a
from zcode_acp.protocol.v4 import limits

Refs = list[dict[str, Any]]
Done = Callable[[Refs | None, RpcError | None], None]


class UploadPort(Protocol):
    def engine_call(self, method: str, params: dict[str, Any], then: Callable[[Any, Any], None]) -> None: ...


def read_local(path: str, roots: Sequence[str]) -> bytes | RpcError:
    """The bytes of the regular file ``path`` under one of ``roots``, else the refusal (never raised:
    this runs in the thread pool, whose errors gevent would print)."""
    if not os.path.isabs(path):
        return invalid_params("prompt", "invalid.attachment.outside_roots", path=path)
    real = os.path.realpath(path)
    if not inside(real, roots):
        return invalid_params("prompt", "invalid.attachment.outside_roots", path=path)
    try:
        fd = os.open(real, OPEN_FLAGS)
    except OSError as exc:
        return invalid_params("prompt", "invalid.attachment.unreadable", path=path, reason=exc.strerror)
    try:
        if not inside(opened_path(fd, real), roots):  # a folder on the way swapped for a link meanwhile
            return invalid_params("prompt", "invalid.attachment.outside_roots", path=path)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return invalid_params("prompt", "invalid.attachment.not_a_file", path=path)
        if info.st_size > limits.ATTACHMENT_MAX_BYTES:
            return invalid_params("prompt", "invalid.attachment.too_large", path=path, size=info.st_size,
                                  limit=limits.ATTACHMENT_MAX_BYTES)
        if info.st_size == 0:
            return invalid_params("prompt", "invalid.attachment.empty", path=path)
        pieces: list[bytes] = []
        left = info.st_size  # never more than the size checked: a file that grows is cut there
        while left > 0:
            piece = os.read(fd, min(left, 1 << 20))
            if not piece:
                break
            pieces.append(piece)
            left -= len(piece)
        return b"".join(pieces)
    except OSError as exc:
        return invalid_params("prompt", "invalid.attachment.unreadable", path=path, reason=exc.strerror)
    finally:
        os.close(fd)


def _read_in_pool(path: str, folder: str, project_roots: Roots) -> bytes | RpcError:
    import gevent

    def job() -> bytes | RpcError:
        return read_local(path, roots_with(folder, project_roots))

    outcome: bytes | RpcError = gevent.get_hub().threadpool.apply(job)
    return outcome


def attachment_bytes(item: dict[str, Any], folder: str = "", project_roots: Roots = tuple) -> bytes:
    """The bytes of a legacy-shaped attachment; RpcError(-32602) when they cannot be had."""
    data = item.get("dataBase64")
    if isinstance(data, str):
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise invalid_params("prompt", "invalid.attachment.not_base64", name=repr(item.get("filename"))) from None
    path = item.get("localPath")
    if isinstance(path, str):
        outcome = _read_in_pool(path, folder, project_roots)
        if isinstance(outcome, RpcError):
            raise outcome
        return outcome
    raise invalid_params("prompt", "invalid.attachment.no_source")


class V4Uploads:
    def __init__(self, port: UploadPort, connection_id: str, folder: Callable[[], str] = str,
                 project_roots: Roots = configured_project_roots) -> None:
        self.port = port
        self.connection_id = connection_id
        # Where a named file may be read from: the session's cwd (asked at each prompt: a load
        # may set it) and the configured project roots. Neither: no file is read.
        self.folder = folder
        self.project_roots = project_roots

    def upload(self, session_id: str, items: list[dict[str, Any]], done: Done) -> None:
        """Upload ``items`` in order; ``done`` gets their refs, or the first failure."""
        plans: list[v4a.UploadPlan] = []
        for item in items:
            try:
                data = attachment_bytes(item, self.folder(), self.project_roots)
            except RpcError as exc:
                done(None, exc)
                return
            plan = v4a.upload_plan(data, connection_id=self.connection_id, upload_id=f"up_{uuid.uuid4().hex}",
                                   session_id=session_id, file_name=str(item.get("filename") or "attachment"),
                                   mime=str(item.get("mimeType") or "application/octet-stream"))
            if isinstance(plan, v4a.UploadRefused):
                done(None, invalid_params("prompt", "invalid.attachment.refused", reason=plan.reason))
                return
            plans.append(plan)
        self._next(plans, [], done)

    def _next(self, plans: list[v4a.UploadPlan], refs: Refs, done: Done) -> None:
        if len(refs) == len(plans):
            done(refs, None)
            return
        plan = plans[len(refs)]

        def committed(ref: str) -> None:
            refs.append(plan.attachment_ref(ref))
            self._next(plans, refs, done)

        def failed(error: Any, step: str) -> None:
            self.port.engine_call(v4a.ABORT, plan.abort, lambda result, error: None)  # free what was staged
            done(None, from_backend_error(error, step) if isinstance(error, dict) else error)

        def begun(result: Any, error: Any) -> None:
            if error is not None:
                failed(error, v4a.BEGIN)
                return
            state = v4a.parse_begin_result(result)
            if isinstance(state, v4a.UploadRefused):
                failed(RpcError(INTERNAL_ERROR, f"the engine's upload answer: {state.reason}"), v4a.BEGIN)
            elif isinstance(state, v4a.Committed):
                committed(state.ref)
            else:
                self._chunks(plan, list(plan.chunks_from(state.next_chunk_index)), committed, failed)

        self.port.engine_call(v4a.BEGIN, plan.begin, begun)

    def _chunks(self, plan: v4a.UploadPlan, left: list[dict[str, Any]], committed: Callable[[str], None],
                failed: Callable[[Any, str], None]) -> None:
        if not left:
            def commit_answered(result: Any, error: Any) -> None:
                ref = result.get("ref") if isinstance(result, dict) else None
                if error is not None or not isinstance(ref, str) or not ref:
                    failed(error or RpcError(INTERNAL_ERROR, "the engine's commit named no ref"), v4a.COMMIT)
                    return
                committed(ref)

            self.port.engine_call(v4a.COMMIT, plan.commit, commit_answered)
            return

        def chunk_answered(result: Any, error: Any) -> None:
            if error is not None:
                failed(error, v4a.CHUNK)
                return
            self._chunks(plan, left[1:], committed, failed)

        self.port.engine_call(v4a.CHUNK, left[0], chunk_answered)
