"""Recording a trace: every frame on both sides, off the hot path.

The hooks (client reads and flushes, backend reads and writes) call
``TRACER.record(direction, conn, data)`` with the bytes they already hold: one
``deque.append`` and a clock read. A greenlet that waits for the event loop to
be idle does the rest — cuts lines, redacts (protocol/trace.py), formats and
writes — so a saturated stream is not slowed by its own recording. Memory is
bounded: past ``max_queued`` bytes waiting, chunks are dropped and counted,
and the trace gets a ``dropped`` marker where they were. With tracing off,
``TRACER`` is a ``NullTracer`` whose ``record`` does nothing.

Files: created 0600 (a folder it has to make: 0700); an existing trace is
rotated away first (``FILE`` → ``FILE.1`` …), and so is the live file once it
reaches ``max_bytes``; ``keep`` old parts survive. Only files the bridge wrote
are moved or replaced: a file is one when its first line is a trace header
(``{"trace":"zcode-acp",…}``). A folder, or any other file, at ``FILE`` or at a
part's name is a ``TracePathError`` (one line, exit 2 at start; docs/decisions.md,
"A trace moves only traces"). docs/traces.md.
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from typing import TYPE_CHECKING, Any
from collections.abc import Iterable

import gevent
import gevent.event

from zcode_acp.protocol import trace as fmt
from zcode_acp.protocol.i18n import EN, t
from zcode_acp.protocol.trace import BACKEND_IN as BACKEND_IN  # re-exported for the hooks
from zcode_acp.protocol.trace import BACKEND_OUT as BACKEND_OUT
from zcode_acp.protocol.trace import CLIENT_IN as CLIENT_IN
from zcode_acp.protocol.trace import CLIENT_OUT as CLIENT_OUT

if TYPE_CHECKING:
    from zcode_acp.protocol import trace_redaction as redaction

# With tracing off (every start but --trace's) the hooks only meet NullTracer: the redaction
# (hashlib, hmac, its patterns), secrets and datetime are imported when a trace starts.

log = logging.getLogger(__name__)

MAX_BYTES = 256 * 1024 * 1024  # one file
KEEP = 3  # rotated parts kept beside the live file
MAX_QUEUED = 128 * 1024 * 1024  # bytes waiting to be written before chunks are dropped
SLICE = 512  # lines processed between two waits for an idle loop
QUIET = 0.1  # seconds without a new chunk: the burst is over, write it
MAX_AGE = 2.0  # seconds a chunk may wait while a burst goes on (what a crash can lose)
BATCH_BYTES = 32 * 1024 * 1024  # or this much waiting: write now


class TracePathError(OSError):
    """``FILE`` cannot be a trace: a folder, a file the bridge did not write, or not creatable.

    Its ``str`` is English (the log's, when a rotation is refused); at start it is the one line
    the user reads, in their language: ``words(lang)`` (a ``trace.*`` catalog key)."""

    def __init__(self, key: str, **params: Any) -> None:
        super().__init__(t(EN, key, **params))
        self.key = key
        self.params = params

    def words(self, lang: str) -> str:
        return t(lang, self.key, **self.params)


HEADER_PREFIX = b'{"trace":"%s"' % fmt.FORMAT.encode()


def is_trace_file(path: str) -> bool:
    """True when ``path`` is a regular file whose first line is a trace header (the bridge wrote it)."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(4096)
    except OSError:
        return False
    return os.path.isfile(path) and first.startswith(HEADER_PREFIX)


def trace_path_problem(path: str) -> TracePathError | None:
    """Why ``path`` (one of a trace's file names) may not be written or rotated, or None when it may."""
    if os.path.isdir(path):
        return TracePathError("trace.is_a_folder", path=repr(path), example=repr(os.path.join(path, "trace.jsonl")))
    if os.path.lexists(path) and not is_trace_file(path):
        return TracePathError("trace.not_ours", path=repr(path))
    return None


def prepare(path: str) -> None:
    """Make ``path``'s folder (0700) and check the name may be a trace; ``TracePathError`` when not."""
    path = os.path.abspath(os.path.expanduser(path))
    folder = os.path.dirname(path)
    try:
        if not os.path.isdir(folder):
            os.makedirs(folder, mode=0o700, exist_ok=True)
            os.chmod(folder, 0o700)  # makedirs' mode is filtered by the umask
    except OSError as exc:
        raise TracePathError("trace.no_folder", path=repr(path), reason=exc.strerror) from None
    problem = trace_path_problem(path)
    if problem is not None:
        raise problem


class NullTracer:
    """Tracing off: every hook is one call that does nothing."""

    enabled = False

    def record(self, direction: str, conn: str, data: bytes) -> None:
        pass

    def exited(self, conn: str, code: int | None) -> None:
        pass

    def close(self, timeout: float = 2.0) -> None:
        pass


class _Stream:
    """Per direction and connection: the partial last line, and drops not yet marked."""

    __slots__ = ("dropped_bytes", "dropped_chunks", "partial", "prefix", "prefix_t", "resync")

    def __init__(self) -> None:
        self.partial = b""
        self.resync = False  # after a drop: skip to the next newline
        self.dropped_chunks = 0
        self.dropped_bytes = 0
        self.prefix_t = -1.0
        self.prefix = b""


class TraceWriter:
    enabled = True

    def __init__(self, path: str, redactor: redaction.Redactor, bridge_version: str, env: dict[str, str],
                 max_bytes: int = MAX_BYTES, keep: int = KEEP, max_queued: int = MAX_QUEUED) -> None:
        self.path = os.path.abspath(os.path.expanduser(path))
        self.redactor = redactor
        self.bridge_version = bridge_version
        self.env = env
        self.max_bytes = max_bytes
        self.keep = keep
        self.max_queued = max_queued
        self.started = time.monotonic()
        # bytes as read or written, or a marker: ("exit", code) or ("dropped", chunks, bytes)
        self.queue: deque[tuple[float, str, str, bytes | tuple[Any, ...]]] = deque()
        self.gaps = False  # some stream has drops not yet marked
        self.last = 0.0  # when the last chunk came
        self.queued = 0
        self.dropped_chunks = 0
        self.dropped_bytes = 0
        self.streams: dict[tuple[str, str], _Stream] = {}
        self.screen_all = redactor.content  # bridge>client lines screened for secret keys too
        from zcode_acp.protocol.trace_redaction import MAX_LEARNED

        self.max_learned = MAX_LEARNED  # past this many values learned, every line is screened in full
        self.part = 0
        self.size = 0
        self.fd = -1
        self.closed = False
        self.wake = gevent.event.Event()
        self._open(rotate_existing=True)
        self.greenlet = gevent.spawn(self._run)

    # -- the hot path ---------------------------------------------------------------------

    def record(self, direction: str, conn: str, data: bytes) -> None:
        """Hand over bytes as read or written (b"" means: this side closed). Never blocks."""
        if self.queued > self.max_queued:
            stream = self._stream(direction, conn)
            stream.dropped_chunks += 1
            stream.dropped_bytes += len(data)
            self.dropped_chunks += 1
            self.dropped_bytes += len(data)
            self.gaps = True
            return
        if self.gaps:
            self._mark_gap(direction, conn)
        self.last = now = time.monotonic()
        self.queue.append((now, direction, conn, data))
        self.queued += len(data)
        self.wake.set()

    def _mark_gap(self, direction: str, conn: str) -> None:
        """Chunks of this stream were dropped before this one: the marker goes where the gap is."""
        stream = self._stream(direction, conn)
        if stream.dropped_chunks:
            self.queue.append((time.monotonic(), direction, conn, ("dropped", stream.dropped_chunks,
                                                                   stream.dropped_bytes)))
            stream.dropped_chunks = stream.dropped_bytes = 0
            self.gaps = any(s.dropped_chunks for s in self.streams.values())

    def exited(self, conn: str, code: int | None) -> None:
        """The backend process ``conn`` ended with ``code`` (a replay exits alike)."""
        self.queue.append((time.monotonic(), fmt.BACKEND_IN, conn, ("exit", code)))
        self.wake.set()

    # -- the drain -------------------------------------------------------------------------

    def _stream(self, direction: str, conn: str) -> _Stream:
        key = (direction, conn)
        stream = self.streams.get(key)
        if stream is None:
            stream = self.streams[key] = _Stream()
        return stream

    def _run(self) -> None:
        while not self.closed:
            self.wake.wait()
            self.wake.clear()
            while self.queue:
                self._let_burst_pass()
                gevent.idle()  # only when nothing else wants the loop: the bridge goes first
                self._drain(SLICE)

    def _let_burst_pass(self) -> None:
        """While frames stream, wait: until a quiet spell, or the oldest waited MAX_AGE, or BATCH_BYTES queued.

        Trace work done in one go after a burst costs less than the same work
        slipped into every pause of it, and the bridge's CPU goes to the stream.
        """
        while self.queue and self.queued < BATCH_BYTES:
            now = time.monotonic()
            wait = min(self.last + QUIET - now, self.queue[0][0] + MAX_AGE - now)
            if wait <= 0:
                return
            gevent.sleep(wait)

    def _drain(self, budget: int) -> None:
        """Format and write queued chunks until about ``budget`` lines were done."""
        out: list[bytes] = []
        done = 0
        while self.queue and done < budget:
            t, direction, conn, data = self.queue.popleft()
            if isinstance(data, tuple):
                self._marker(t - self.started, direction, conn, data, out)
                continue
            self.queued -= len(data)
            done += self._format(t - self.started, direction, conn, data, out)
        self._write(b"".join(out))

    def _marker(self, t: float, direction: str, conn: str, marker: tuple[Any, ...], out: list[bytes]) -> None:
        if marker[0] == "exit":
            out.append(fmt.exit_record(t, direction, conn, marker[1]))
        else:
            out.append(fmt.dropped_record(t, direction, conn, marker[1], marker[2]))
            stream = self._stream(direction, conn)
            stream.partial, stream.resync = b"", True  # where the next line starts is unknown

    def _format(self, t: float, direction: str, conn: str, data: bytes, out: list[bytes]) -> int:
        stream = self._stream(direction, conn)
        if not data:
            if stream.partial.strip():
                self._lines(t, direction, conn, stream, [stream.partial], out)
            stream.partial = b""
            out.append(fmt.closed_record(t, direction, conn))
            return 1
        lines = data.split(b"\n")
        if stream.resync:
            # After a gap: a piece that starts like a frame is taken as one (a chunk
            # usually ends at a line's end); anything else is the rest of a cut line.
            if not lines[0].startswith(b"{"):
                if len(lines) == 1:
                    return 0  # still inside the line cut by the drop
                lines = lines[1:]
            stream.resync = False
        elif stream.partial:
            lines[0] = stream.partial + lines[0]
        stream.partial = lines.pop()
        if b"" in lines:
            lines = [line for line in lines if line]
        self._lines(t, direction, conn, stream, lines, out)
        return len(lines)

    def _lines(self, t: float, direction: str, conn: str, stream: _Stream, lines: list[bytes],
               out: list[bytes]) -> None:
        if not lines:
            return
        if stream.prefix_t != t:
            stream.prefix_t, stream.prefix = t, fmt.record_prefix(t, direction, conn)
        prefix = stream.prefix
        redactor = self.redactor
        # What the bridge sends the client is what it read, re-shaped: once a
        # secret was found in what the backend sent, it is screened in full;
        # until then, for the values already redacted elsewhere (learned) only.
        look = redactor.needs_look if direction != CLIENT_OUT or self.screen_all else redactor.has_literal
        # Fast path: nothing in the whole batch can be a secret and every line is
        # an object: splice the lines in as they are, no parsing.
        blob = b"\n".join(lines) if len(lines) > 1 else lines[0]
        if (direction not in fmt.INBOUND or fmt.all_objects(blob, len(lines))) and not look(blob):
            out.append(fmt.frame_records(prefix, lines))
            return
        for line in lines:
            if not look(line) and (direction not in fmt.INBOUND or fmt.looks_like_object(line)):
                out.append(prefix + line + b"}\n")
                continue
            before = redactor.redactions
            redacted = redactor.line(line)
            if redacted is None:
                out.append(fmt.raw_record(t, direction, conn, redactor.raw(line)))
            else:
                out.append(prefix + redacted + b"}\n")
            if (redactor.redactions != before and direction == BACKEND_IN) or redactor.learned >= self.max_learned:
                self.screen_all = True

    # -- the file ----------------------------------------------------------------------------

    def _open(self, rotate_existing: bool) -> None:
        prepare(self.path)
        if rotate_existing and os.path.exists(self.path):
            self._rotate_files()
        try:
            self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_NOFOLLOW,
                              0o600)
        except OSError as exc:
            raise TracePathError("trace.unwritable", path=repr(self.path), reason=exc.strerror) from None
        os.fchmod(self.fd, 0o600)  # even if the file existed with a wider mode
        self.part += 1
        self.size = 0
        from datetime import UTC, datetime

        started = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self._write_raw(fmt.header(self.bridge_version, started, self.redactor.content, self.env, self.part))

    def _rotate_files(self) -> None:
        """Move the parts along; ``TracePathError`` (nothing moved) when any name holds what the bridge did not write."""
        names = [self.path] + [f"{self.path}.{index}" for index in range(1, self.keep + 1)]
        for name in names:
            problem = trace_path_problem(name)
            if problem is not None:
                raise problem
        for index in range(self.keep, 0, -1):
            older = f"{self.path}.{index}"
            newer = self.path if index == 1 else f"{self.path}.{index - 1}"
            if os.path.exists(newer):
                if index == self.keep and os.path.exists(older):
                    os.unlink(older)
                os.replace(newer, older)
        if self.keep == 0 and os.path.exists(self.path):
            os.unlink(self.path)

    def _write(self, data: bytes) -> None:
        """Append whole lines; a part that would pass ``max_bytes`` goes on in a new file."""
        while data and self.fd >= 0:
            room = self.max_bytes - self.size
            if len(data) <= room:
                self._write_raw(data)
                return
            cut = data.rfind(b"\n", 0, max(room, 0)) + 1
            if cut == 0 and self.size <= len(fmt.header("", "", False, self.env)) + 64:
                cut = data.find(b"\n") + 1 or len(data)  # one line longer than a whole file: it goes alone
            if cut:
                self._write_raw(data[:cut])
                data = data[cut:]
            os.close(self.fd)
            self.fd = -1
            try:
                self._rotate_files()
                self._open(rotate_existing=False)
            except TracePathError as exc:
                log.warning("trace: %s; tracing stops", exc)
                return

    def _write_raw(self, data: bytes) -> None:
        if self.fd < 0:
            return  # tracing stopped (a write failed, or a rotation was refused)
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.fd, view):]
        except OSError as exc:
            log.warning("trace: cannot write %s (%s); tracing stops", self.path, exc)
            os.close(self.fd)
            self.fd = -1
            return
        self.size += len(data)

    def close(self, timeout: float = 2.0) -> None:
        """Write what is queued (bounded by ``timeout``), an end line, and close the file."""
        if self.closed:
            return
        self.closed = True
        self.greenlet.kill(block=False)
        deadline = time.monotonic() + timeout
        while self.queue and time.monotonic() < deadline:
            self._drain(SLICE * 8)
        for _, direction, conn, data in self.queue:
            if isinstance(data, bytes):
                stream = self._stream(direction, conn)
                stream.dropped_chunks += 1
                stream.dropped_bytes += len(data)
                self.dropped_chunks += 1
                self.dropped_bytes += len(data)
        self.queue.clear()
        t = time.monotonic() - self.started
        for (direction, conn), stream in self.streams.items():
            if stream.dropped_chunks:
                self._write_raw(fmt.dropped_record(t, direction, conn, stream.dropped_chunks, stream.dropped_bytes))
        self._write_raw(fmt.end_record(t, self.dropped_chunks, self.dropped_bytes))
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


TRACER: Any = NullTracer()


def start(path: str, redact_content: bool = False, literals: Iterable[str] = (), bridge_version: str = "",
          env: dict[str, str] | None = None, **limits: int) -> TraceWriter:
    """Start tracing to ``path``: the hooks see it through ``TRACER`` from now on."""
    global TRACER
    import secrets

    from zcode_acp.protocol import trace_redaction as redaction

    redactor = redaction.Redactor(literals, content=redact_content, salt=secrets.token_bytes(16))
    writer = TraceWriter(path, redactor, bridge_version, env or {}, **limits)
    TRACER = writer
    return writer


def stop(timeout: float = 2.0) -> None:
    global TRACER
    tracer, TRACER = TRACER, NullTracer()
    tracer.close(timeout)
