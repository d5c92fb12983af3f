"""Answer the editor's ``initialize``, and the ``session/new`` that follows it, before the actor
runtime is imported.

An editor spawns the bridge, writes ``initialize`` at once, and writes ``session/new`` as soon as
that is answered; it can prompt only once both are. Importing the runtime (gevent, pykka, the
actor tree) takes most of the start-up (docs/performance.md, "Time to a first session"). So the
stdio path first looks whether ``initialize`` is already waiting on stdin, without waiting for it:
when it is, and ``protocol/handshake.early_initialize_answer`` can answer it, the answer is written
to stdout now. Then it waits a moment (``NEXT_REQUEST_WAIT``) for the next request: a
``session/new`` that ``protocol/first_session.early_session_new_answer`` can answer is answered
now too, with a session id chosen here.

Every byte read is then handed to the runtime's stdio transport ahead of the rest of stdin (nothing
lost or reordered). The Supervisor handles both requests as usual: it records the client's
capabilities, and it makes the session with the id given here (``Supervisor.early_sessions``).
The transport drops the runtime's answers to those two ids: each request is answered once.

Imported before gevent patches anything: only the standard library and the pure protocol modules.
"""

from __future__ import annotations

import os
import select
import stat
import uuid
from pathlib import Path
from typing import Any, NamedTuple

from zcode_acp.protocol import framing, model_catalog
from zcode_acp.protocol.first_session import early_session_new_answer
from zcode_acp.protocol.handshake import early_initialize_answer

READ_AHEAD = 1 << 16  # one read: what the editor wrote before the bridge looked; the rest stays in the pipe
# How long to wait for the request after ``initialize``: an editor writes its session/new within a
# millisecond of reading that answer. One that does something else costs at most this much.
NEXT_REQUEST_WAIT = 0.05
CATALOG_BOUND = 1 << 20  # the remembered catalog is a few KiB; a bigger file is left to the runtime


class EarlyStart(NamedTuple):
    preread: bytes  # what was read from stdin, for the runtime's transport to read first
    answered: tuple[bytes, ...]  # the answer frames already written to stdout
    sessions: tuple[tuple[Any, str], ...] = ()  # (session/new's request id, the session id it was given)
    catalog: tuple[dict[str, Any] | None] | None = None  # (the remembered catalog it read,), when it did


class SessionDefaults(NamedTuple):
    """What shapes a new session's answer, from the bridge's settings (config/settings.Config)."""

    mode: str
    lang: str
    engine_api: str
    zcode_home: Path


def answer_waiting_initialize(version: str, lang: str, read_fd: int = 0, write_fd: int = 1,
                              defaults: SessionDefaults | None = None) -> EarlyStart:
    """Read what stdin holds now (never waiting) and answer an ``initialize`` at its head, then
    (with ``defaults``) a ``session/new`` right after it."""
    preread = _read_ready(read_fd, 0)
    if not preread:
        return EarlyStart(b"", ())  # the editor has not written yet: the runtime answers, as before
    answer = early_initialize_answer(preread, version, lang)
    if answer is None or not _write(write_fd, answer):
        return EarlyStart(preread, ())
    if defaults is None:
        return EarlyStart(preread, (answer,))
    splitter = framing.LineSplitter(framing.DEFAULT_MAX_LINE)
    lines = splitter.feed(preread)
    if len(lines) < 2 and not splitter.oversized:
        preread += _read_ready(read_fd, NEXT_REQUEST_WAIT)
        lines = framing.LineSplitter(framing.DEFAULT_MAX_LINE).feed(preread)
    if len(lines) < 2:
        return EarlyStart(preread, (answer,))
    remembered = _remembered_catalog(defaults.zcode_home)
    if remembered is None:  # a catalog that cannot be read at once: the runtime's bounded read decides
        return EarlyStart(preread, (answer,))
    catalog = remembered[0]
    early = _session_new(lines[0], lines[1], defaults, catalog)
    if early is None or not _write(write_fd, early[1]):
        return EarlyStart(preread, (answer,))
    request_id, new_answer, session_id = early
    return EarlyStart(preread, (answer, new_answer), ((request_id, session_id),), (catalog,))


def _session_new(initialize: bytes, line: bytes, defaults: SessionDefaults,
                 catalog: dict[str, Any] | None) -> tuple[Any, bytes, str] | None:
    try:
        params = framing.decode_object(initialize).get("params")
    except Exception:  # it was answered, so it decodes; anything else leaves this to the runtime
        return None
    session_id = str(uuid.uuid4())
    found = early_session_new_answer(line, params, mode=defaults.mode, lang=defaults.lang,
                                     engine_api=defaults.engine_api, catalog=catalog,
                                     session_id=session_id, is_dir=os.path.isdir)
    return (found[0], found[1], session_id) if found is not None else None


def _remembered_catalog(zcode_home: Path) -> tuple[dict[str, Any] | None] | None:
    """(the models the last run remembered,) as actors/model_catalog.py reads its file: (None,) when
    there is none; None when the file cannot be read at once (not a regular file, too big, an error),
    which the runtime's read, bounded by its wait, then decides."""
    try:
        fd = os.open(zcode_home / "v2" / model_catalog.FILE_NAME, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return (None,)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO would block the start
            return None
        data = os.read(fd, CATALOG_BOUND + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > CATALOG_BOUND:
        return None
    return (model_catalog.decode(data) if data else None,)


def _read_ready(read_fd: int, timeout: float) -> bytes:
    """What stdin holds within ``timeout`` (one read), or b""."""
    try:
        ready, _, _ = select.select([read_fd], [], [], timeout)
        return os.read(read_fd, READ_AHEAD) if ready else b""
    except (OSError, ValueError):
        return b""


def _write(write_fd: int, frame: bytes) -> bool:
    view = memoryview(frame)
    try:
        while view:  # a pipe takes a frame this small whole; loop for the rule, not the case
            view = view[os.write(write_fd, view):]
    except OSError:  # the editor is gone: the runtime finds that out too
        return False
    return True
