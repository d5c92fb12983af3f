"""The trace format: one JSON line per frame on either side of the bridge.

Pure: no I/O, no clocks. The writer (``actors/transport/trace.py``) hands in
bytes and times; the replay tools (``sim/replay.py``, ``cli/replay.py``)
read records back. docs/traces.md describes the format for users.

A trace file is a header line, then records::

    {"trace": "zcode-acp", "version": 1, "bridge": "0.1.0", "started": "...Z", ...}
    {"t": 0.0123, "dir": "client>bridge", "conn": "stdio", "frame": {...}}
    {"t": 0.0131, "dir": "bridge>backend", "conn": "backend-1", "frame": {...}}
    {"t": 0.0200, "dir": "backend>bridge", "conn": "backend-1", "raw": "not json"}
    {"t": 0.9000, "dir": "client>bridge", "conn": "stdio", "closed": true}
    {"t": 0.9050, "dir": "backend>bridge", "conn": "backend-1", "exit": 0}
    {"t": 0.9100, "dir": "backend>bridge", "conn": "backend-1", "dropped": {"chunks": 2, "bytes": 81920}}
    {"t": 0.9500, "end": {"droppedChunks": 2, "droppedBytes": 81920}}

``t`` is monotonic seconds since the trace started. Beside it:
``trace_redaction.py`` (secrets always, content on request, and standing content back
in for a replay) and ``trace_compare.py`` (the normalisation that makes two runs
comparable, and a readable diff).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import ujson

FORMAT = "zcode-acp"
VERSION = 1

CLIENT_IN = "client>bridge"
CLIENT_OUT = "bridge>client"
BACKEND_OUT = "bridge>backend"
BACKEND_IN = "backend>bridge"
DIRECTIONS = (CLIENT_IN, CLIENT_OUT, BACKEND_OUT, BACKEND_IN)
INBOUND = frozenset({CLIENT_IN, BACKEND_IN})  # lines someone else wrote: may not be JSON

REDACTED = "[redacted]"


class TraceError(ValueError):
    """A file that is not a trace this build can read."""


# -- writing ---------------------------------------------------------------------------

def dumps(obj: Any) -> bytes:
    return ujson.dumps(obj, ensure_ascii=False, escape_forward_slashes=False).encode("utf-8")


def header(bridge_version: str, started: str, redact_content: bool, env: dict[str, str], part: int = 1) -> bytes:
    """The first line of every trace file (and of every rotated part)."""
    head = {"trace": FORMAT, "version": VERSION, "bridge": bridge_version, "started": started,
            "redacted": ["secrets", "content"] if redact_content else ["secrets"], "env": env}
    if part > 1:
        head["part"] = part
    return dumps(head) + b"\n"


def record_prefix(t: float, direction: str, conn: str) -> bytes:
    """Everything of a frame record before the frame itself: ``frame`` is spliced in as bytes."""
    return b'{"t":%.6f,"dir":"%s","conn":%s,"frame":' % (t, direction.encode(), dumps(conn))


def frame_records(prefix: bytes, lines: list[bytes]) -> bytes:
    """Records for lines that are known JSON objects, sharing one time (one read or write)."""
    if not lines:
        return b""
    return prefix + (b"}\n" + prefix).join(lines) + b"}\n"


def raw_record(t: float, direction: str, conn: str, line: bytes) -> bytes:
    return dumps({"t": round(t, 6), "dir": direction, "conn": conn,
                  "raw": line.decode("utf-8", "replace")}) + b"\n"


def closed_record(t: float, direction: str, conn: str) -> bytes:
    return dumps({"t": round(t, 6), "dir": direction, "conn": conn, "closed": True}) + b"\n"


def exit_record(t: float, direction: str, conn: str, code: int | None) -> bytes:
    return dumps({"t": round(t, 6), "dir": direction, "conn": conn, "exit": code}) + b"\n"


def dropped_record(t: float, direction: str, conn: str, chunks: int, size: int) -> bytes:
    return dumps({"t": round(t, 6), "dir": direction, "conn": conn,
                  "dropped": {"chunks": chunks, "bytes": size}}) + b"\n"


def end_record(t: float, dropped_chunks: int, dropped_bytes: int) -> bytes:
    return dumps({"t": round(t, 6), "end": {"droppedChunks": dropped_chunks, "droppedBytes": dropped_bytes}}) + b"\n"


def all_objects(blob: bytes, count: int) -> bool:
    """``count`` newline-joined lines each start with ``{`` (one C-level count) and the last ends with ``}``.

    A JSON line holds no raw newline, so ``\\n{`` occurs only where lines meet. A line that
    starts like an object but is cut short still gets through: the reader skips it (``corrupt``).
    """
    return blob[:1] == b"{" and blob[-1:] == b"}" and blob.count(b"\n{") == count - 1


def looks_like_object(line: bytes) -> bool:
    """Cheap shape check before a line is spliced into a record unparsed."""
    return line[:1] == b"{" and line.rstrip()[-1:] == b"}"


# -- reading ---------------------------------------------------------------------------

@dataclass
class Trace:
    """A trace file read back: its header, its records, the lines that were not JSON."""

    header: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)
    corrupt: list[int] = field(default_factory=list)  # line numbers that were not JSON

    def frames(self, direction: str, conn: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("dir") == direction and (conn is None or r.get("conn") == conn)
                and "frame" in r]

    def conns(self, direction: str) -> list[str]:
        seen: dict[str, None] = {}
        for record in self.records:
            if record.get("dir") == direction and isinstance(record.get("conn"), str):
                seen.setdefault(record["conn"], None)
        return list(seen)

    def dropped(self) -> int:
        return sum(1 for r in self.records if "dropped" in r)


def parse(text: str | bytes) -> Trace:
    """Read a trace (rotated parts may be concatenated: later headers are skipped)."""
    lines: list[Any] = list(text.splitlines())
    head: dict[str, Any] | None = None
    trace = Trace(header={})
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = ujson.loads(line)
        except ValueError:
            trace.corrupt.append(number)
            continue
        if not isinstance(item, dict):
            trace.corrupt.append(number)
            continue
        if "trace" in item:
            if item.get("trace") != FORMAT:
                raise TraceError(f"line {number}: not a zcode-acp trace ({item.get('trace')!r})")
            if not isinstance(item.get("version"), int) or item["version"] > VERSION:
                raise TraceError(f"line {number}: trace version {item.get('version')!r}; this build reads "
                                 f"version {VERSION} and older")
            if head is None:
                head = item
            continue
        if head is None:
            raise TraceError("the first line is not a zcode-acp trace header")
        trace.records.append(item)
    if head is None:
        raise TraceError("empty file: no trace header")
    trace.header = head
    return trace


def serialise(trace: Trace) -> bytes:
    return dumps(trace.header) + b"\n" + b"".join(dumps(r) + b"\n" for r in trace.records)


