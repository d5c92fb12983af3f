"""The lazy-session file on disk: atomic, merged, shared between processes — and
never on the event loop.

Every write takes an exclusive ``flock`` on a sibling lock file (with a
timeout: another bridge stopped while holding it must not freeze this one),
re-reads the file, merges this process's entries into it, prunes, and
replaces the file atomically (temporary file in the same folder, fsync,
rename), so two bridge processes sharing ``ZCODE_HOME`` never lose each
other's sessions and nobody ever sees a half-written file. A corrupt file
reads as empty with one warning; before it is replaced it is kept aside as
``*.corrupt`` rather than silently lost.

A big store is not rewritten per change: rewriting 100,000 entries (an 11 MB
file) costs ~370 ms of CPU, most of it holding the GIL (so it stalls every
stream even from the pool's thread). Once the file is past ``SMALL`` bytes a
change is appended, as one NDJSON line ``{placeholder: entry}``, to the
journal beside it (``*.journal``, same lock, fsync'd before the change counts
as saved); readers apply the journal's lines over the file, and when the
journal reaches half the file's size it is folded in (the whole-file rewrite
above, then the journal emptied: a crash between the two only re-applies
lines, which merging makes harmless). docs/decisions.md, "The lazy-session
store's journal".

All disk I/O runs in gevent's thread pool: the bridge has one OS thread for
every actor and stream, and a blocking ``flock`` or ``fsync`` there would stop
them all. ``record`` updates memory at once (``session/new`` answers from
memory) and a single writer greenlet persists, coalescing bursts of changes.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar
from collections.abc import Callable, Iterator

import gevent
import gevent.event
from gevent import monkey

from zcode_acp.protocol import lazy_sessions

log = logging.getLogger(__name__)

FILE_NAME = "acp-lazy-sessions.json"
LOCK_TIMEOUT = 5.0  # seconds a write waits for another process's lock before trying later
RETRY_AFTER = 2.0  # seconds before a failed write is tried again
SMALL = 256 * 1024  # bytes: below this the file is rewritten on every change (cheap, always whole)
_real_sleep = monkey.get_original("time", "sleep")  # the pool's threads must not touch the gevent hub

T = TypeVar("T")


class StoreLocked(OSError):
    pass


def ensure_private_dir(folder: Path) -> None:
    """Create ``folder`` and every missing parent with mode 0700, whatever the umask."""
    missing = []
    current = folder
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        os.chmod(path, 0o700)  # mkdir's mode is filtered by the umask


class _Raised:
    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


def _captured(fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    try:
        return fn(*args)
    except Exception as error:  # re-raised by the caller, outside the pool
        return _Raised(error)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class LazySessionStore:
    def __init__(self, zcode_home: Path, lock_timeout: float = LOCK_TIMEOUT) -> None:
        self.folder = Path(zcode_home) / "v2"
        self.path = self.folder / FILE_NAME
        self.lock_path = self.folder / (FILE_NAME + ".lock")
        self.journal_path = self.folder / (FILE_NAME + ".journal")
        self.lock_timeout = lock_timeout
        self.ours: dict[str, dict[str, Any]] = {}
        self.unsaved: dict[str, dict[str, Any]] = {}  # recorded, not yet on disk (file or journal)
        self._warned = False
        self._dirty = False
        self._made = False
        self._writer: gevent.Greenlet | None = None
        self.idle = gevent.event.Event()  # set when nothing waits to be written
        self.idle.set()

    # -- off the loop -------------------------------------------------------------------

    @staticmethod
    def _in_pool(fn: Callable[..., T], *args: Any) -> T:
        # gevent prints the traceback of whatever a pool function raises, even when the caller
        # handles it (an unusable ZCODE_HOME was a screenful): the error comes back as a value.
        outcome = gevent.get_hub().threadpool.apply(_captured, (fn, args))
        if isinstance(outcome, _Raised):
            raise outcome.error
        return outcome  # type: ignore[no-any-return]

    def prepare(self) -> None:
        """At start, off the loop: temporary files that killed processes left behind are gone."""
        try:
            self._in_pool(self._prepare)
        except OSError as exc:
            log.warning("cannot prepare %s: %s", self.folder, exc)

    def _prepare(self) -> None:
        if not self.folder.is_dir():
            return  # made private on first use (an editor's auth check leaves no folder behind)
        prefix = f".{FILE_NAME}."
        for leftover in self.folder.glob(f"{prefix}*.tmp"):
            pid = leftover.name[len(prefix):-len(".tmp")]
            if pid.isdigit() and not _alive(int(pid)):
                leftover.unlink(missing_ok=True)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        ensure_private_dir(self.folder)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            deadline = time.monotonic() + self.lock_timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN) or time.monotonic() > deadline:
                        raise StoreLocked(exc.errno, f"{self.lock_path} is held by another process") from None
                    _real_sleep(0.02)
            yield
        finally:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    def _read(self) -> tuple[dict[str, dict[str, Any]], bool]:
        """(entries, corrupt)."""
        try:
            text = self.path.read_bytes()
        except FileNotFoundError:
            return {}, False
        except OSError as exc:
            if self._first_warning():
                log.warning("cannot read %s: %s; treating it as empty", self.path, exc)
            return {}, False
        try:
            entries = lazy_sessions.parse(text)
        except lazy_sessions.CorruptStore as exc:
            if self._first_warning():
                log.warning("%s is corrupt (%s); treating it as empty", self.path, exc)
            entries, corrupt = {}, True
        else:
            corrupt = False
        return lazy_sessions.merge(entries, self._read_journal()), corrupt

    def _read_journal(self) -> dict[str, dict[str, Any]]:
        """The journal's lines, in order (a torn last line, never acknowledged, is skipped)."""
        try:
            text = self.journal_path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            if self._first_warning():
                log.warning("cannot read %s: %s; ignoring it", self.journal_path, exc)
            return {}
        entries: dict[str, dict[str, Any]] = {}
        for line in text.splitlines():
            try:
                entries = lazy_sessions.merge(entries, lazy_sessions.parse(line))
            except lazy_sessions.CorruptStore:
                continue
        return entries

    def _first_warning(self) -> bool:
        """Whether a damaged store is worth a log line: one per store (it is read at every load)."""
        first, self._warned = not self._warned, True
        return first

    # -- reading -------------------------------------------------------------------------

    def load(self) -> dict[str, dict[str, Any]]:
        """What is on disk now (merged with what this process recorded)."""
        entries, _ = self._in_pool(self._read)
        return lazy_sessions.merge(entries, self.ours)

    def get(self, placeholder: str) -> dict[str, Any] | None:
        """The live entry for ``placeholder`` (None when unknown or deleted)."""
        entry = self.ours.get(placeholder)
        if entry is None:
            entries, _ = self._in_pool(self._read)
            entry = entries.get(placeholder)
        return None if entry is None or lazy_sessions.is_deleted(entry) else entry

    def deleted_backend_ids(self) -> set[str]:
        return lazy_sessions.deleted_backend_ids(self.load())

    def is_deleted(self, session_id: str) -> bool:
        """``session_id`` (an editor id or a backend id) was deleted here or by another bridge."""
        entries = self.load()
        entry = entries.get(session_id)
        return bool(entry and lazy_sessions.is_deleted(entry)) or session_id in lazy_sessions.deleted_backend_ids(
            entries)

    # -- writing -------------------------------------------------------------------------

    def record(self, placeholder: str, cwd: str, backend_session_id: str | None = None) -> None:
        """Remember a session now; it reaches the disk shortly after (coalesced, off the loop)."""
        entry = dict(self.ours.get(placeholder) or {"cwd": cwd, "createdAt": int(time.time() * 1000)})
        if backend_session_id:
            entry["zcodeSid"] = backend_session_id
        lazy_sessions.dumps({placeholder: entry})  # refuse, here and now, what could never be written
        if not self._made:  # the folder exists (private) once the first session is answered
            try:
                self._in_pool(ensure_private_dir, self.folder)
                self._made = True
            except OSError as exc:
                log.warning("cannot create %s: %s", self.folder, exc)
        self.ours[placeholder] = entry
        self.unsaved[placeholder] = entry
        self._dirty = True
        self.idle.clear()
        if self._writer is None:
            self._writer = gevent.spawn(self._write_loop)

    def keep_title(self, session_id: str, title: str) -> bool:
        """A title the engine cannot keep (no rename there): stored on the session's entry, persisted
        like ``record``. False when the session has no entry here (not made through a bridge)."""
        return self.amend(session_id, {"title": title})

    def amend(self, session_id: str, fields: dict[str, Any]) -> bool:
        """Fields set on a session's entry (a None value removes the field), persisted like
        ``record``. False when the session has no entry here (not made through a bridge)."""
        entry = self.ours.get(session_id)
        if entry is None:
            entries, _ = self._in_pool(self._read)
            entry = entries.get(session_id)
        if entry is None or lazy_sessions.is_deleted(entry):
            return False
        entry = {key: value for key, value in {**entry, **fields}.items() if value is not None}
        lazy_sessions.dumps({session_id: entry})
        self.ours[session_id] = entry
        self.unsaved[session_id] = entry
        self._dirty = True
        self.idle.clear()
        if self._writer is None:
            self._writer = gevent.spawn(self._write_loop)
        return True

    def delete(self, session_id: str, backend_session_id: str | None = None) -> dict[str, Any]:
        """Forget a session (``session/delete``): a tombstone, persisted like ``record``.

        The entry stays on disk marked deleted (with its backend id) so that other
        bridges sharing the file, and ``session/list`` of the backend, drop it too.
        Returns the tombstone.
        """
        known = self.ours.get(session_id)
        if known is None:
            entries, _ = self._in_pool(self._read)
            known = entries.get(session_id)
        entry = lazy_sessions.tombstone(known, session_id, time.time() * 1000)
        if backend_session_id:
            entry["zcodeSid"] = backend_session_id
        self.ours[session_id] = entry
        self._dirty = True
        self.idle.clear()
        if self._writer is None:
            self._writer = gevent.spawn(self._write_loop)
        return entry

    def _write_loop(self) -> None:
        try:
            while self._dirty:
                self._dirty = False
                unsaved, self.unsaved = self.unsaved, {}  # taken here, on the loop: record() adds meanwhile
                try:
                    try:
                        # A copy of ours, taken on the loop: the pool's thread must not iterate the dict
                        # that record() changes meanwhile ("dictionary changed size during iteration").
                        self._in_pool(self._write, unsaved, dict(self.ours))
                    except BaseException:
                        self.unsaved = {**unsaved, **self.unsaved}  # written with the next try
                        raise
                except StoreLocked as exc:  # another bridge holds the lock: try again shortly
                    log.warning("could not save %s: %s; retrying in %gs", self.path, exc, RETRY_AFTER)
                    self._dirty = True
                    gevent.sleep(RETRY_AFTER)
                except OSError as exc:  # the next change tries again
                    log.warning("could not save %s: %s (the session works, but will not survive a restart)",
                                self.path, exc)
        finally:
            self._writer = None
            self.idle.set()

    def flush(self, timeout: float) -> bool:
        """Wait (bounded) until everything recorded is on disk."""
        return bool(self.idle.wait(timeout))

    def _write(self, unsaved: dict[str, dict[str, Any]], ours: dict[str, dict[str, Any]]) -> None:
        with self._locked():
            if self._journal_will_do():
                self._append(unsaved)
            else:
                self._rewrite(ours)

    def _journal_will_do(self) -> bool:
        """A big, sound file whose journal is still under half its size takes an appended line."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return False
        try:
            journal = self.journal_path.stat().st_size
        except FileNotFoundError:
            journal = 0
        return size >= SMALL and journal < size // 2

    def _append(self, entries: dict[str, dict[str, Any]]) -> None:
        lines = b"".join(lazy_sessions.dumps_line({key: entry}) for key, entry in entries.items())
        fd = os.open(self.journal_path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                lines = b"\n" + lines  # a torn line from a killed writer stays a line of its own
            os.write(fd, lines)
            os.fsync(fd)
        finally:
            os.close(fd)

    def _rewrite(self, ours: dict[str, dict[str, Any]]) -> None:
        """The whole file from disk (file + journal) and this process's entries; the journal emptied."""
        on_disk, corrupt = self._read()
        entries = lazy_sessions.prune(lazy_sessions.merge(on_disk, ours), time.time() * 1000)
        if corrupt:
            os.replace(self.path, self.path.with_suffix(".json.corrupt"))
        temporary = self.folder / f".{FILE_NAME}.{os.getpid()}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, lazy_sessions.dumps(entries))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            self._replace(temporary)
        except OSError:
            temporary.unlink(missing_ok=True)
            raise
        if self.journal_path.exists():
            os.truncate(self.journal_path, 0)  # folded in; a crash before this only re-applies lines

    def _replace(self, temporary: Path) -> None:
        os.replace(temporary, self.path)
