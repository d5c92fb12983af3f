"""Every frame the simulator reads and writes, in order, for the engine-schema check.

``ZCODE_SIM_FRAMES=<path>`` turns it on (tests/process/conftest.py sets it per test):
each frame becomes one JSON line ``{"pid", "n", "dir", "frame" | "raw"}`` appended to
the file. ``dir`` is ``host->engine`` (read from stdin) or ``engine->host`` (written to
stdout); ``pid`` keeps apart the conversations of several simulator processes that
share one file (a bridge restarts a dead backend). The file is opened with
``O_APPEND`` and every record is one ``write``, so records of concurrent processes
never interleave. tests/engine_schema.py reads it (docs/simulator.md, "The schema check").
"""

from __future__ import annotations

import itertools
import os
from typing import Any

import ujson

PATH = os.environ.get("ZCODE_SIM_FRAMES")
HOST_TO_ENGINE = "host->engine"
ENGINE_TO_HOST = "engine->host"

_fd: int | None = None
_numbers = itertools.count()


def _open() -> int | None:
    global _fd
    if _fd is None and PATH:
        _fd = os.open(PATH, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    return _fd


def record(direction: str, frame: dict[str, Any] | None = None, raw: bytes | None = None) -> None:
    """One frame (already parsed) or one raw line (the bytes as they came)."""
    fd = _open()
    if fd is None:
        return
    entry: dict[str, Any] = {"pid": os.getpid(), "n": next(_numbers), "dir": direction}
    if frame is not None:
        entry["frame"] = frame
    else:
        entry["raw"] = (raw or b"").decode("utf-8", "replace")
    os.write(fd, ujson.dumps(entry, ensure_ascii=False, escape_forward_slashes=False).encode() + b"\n")
