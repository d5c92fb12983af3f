"""Answer the editor's ``initialize`` before the actor runtime is imported.

An editor spawns the bridge and writes ``initialize`` at once; importing the
runtime (gevent, pykka, the actor tree) takes most of the start-up
(docs/performance.md, "Start-up, third look"). So the stdio path first looks
whether that request is already waiting on stdin, without waiting for it:
when it is, and ``protocol/handshake.early_initialize_answer`` can answer it,
the answer is written to stdout now. Every byte read is then handed to the
runtime's stdio transport ahead of the rest of stdin (nothing lost or
reordered), the Supervisor handles that ``initialize`` as usual (it records
the client's capabilities), and the transport drops its answer, which is
byte for byte the one already written: the request is answered once.

Imported before gevent patches anything: only the standard library's
``os``/``select`` and the pure protocol modules.
"""

from __future__ import annotations

import os
import select
from typing import NamedTuple

from zcode_acp.protocol.handshake import early_initialize_answer

READ_AHEAD = 1 << 16  # one read: what the editor wrote before the bridge looked; the rest stays in the pipe


class EarlyStart(NamedTuple):
    preread: bytes  # what was read from stdin, for the runtime's transport to read first
    answered: bytes  # the answer frame already written to stdout (b"" when none was)


def answer_waiting_initialize(version: str, lang: str, read_fd: int = 0, write_fd: int = 1) -> EarlyStart:
    """Read what stdin holds now (never waiting) and answer an ``initialize`` at its head."""
    try:
        ready, _, _ = select.select([read_fd], [], [], 0)
    except (OSError, ValueError):
        return EarlyStart(b"", b"")
    if not ready:
        return EarlyStart(b"", b"")  # the editor has not written yet: the runtime answers, as before
    try:
        preread = os.read(read_fd, READ_AHEAD)
    except (BlockingIOError, InterruptedError):
        return EarlyStart(b"", b"")
    answer = early_initialize_answer(preread, version, lang)
    if answer is None:
        return EarlyStart(preread, b"")
    view = memoryview(answer)
    try:
        while view:  # a pipe takes a frame this small whole; loop for the rule, not the case
            view = view[os.write(write_fd, view):]
    except OSError:  # the editor is gone: the runtime finds that out too
        return EarlyStart(preread, answer if len(view) < len(answer) else b"")
    return EarlyStart(preread, answer)
