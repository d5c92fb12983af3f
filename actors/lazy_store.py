"""The lazy-session file on disk: atomic, merged, shared between processes.

Every write takes an exclusive ``flock`` on a sibling lock file, re-reads the
file, merges this process's entries into it, prunes, and replaces the file
atomically (temporary file in the same folder, fsync, rename), so two bridge
processes sharing ``ZCODE_HOME`` never lose each other's sessions and nobody
ever sees a half-written file. A corrupt file reads as empty with one warning;
before it is replaced it is kept aside as ``*.corrupt`` rather than silently lost.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from zcode_acp.protocol import lazy_sessions

log = logging.getLogger(__name__)

FILE_NAME = "acp-lazy-sessions.json"


class LazySessionStore:
    def __init__(self, zcode_home: Path) -> None:
        self.folder = Path(zcode_home) / "v2"
        self.path = self.folder / FILE_NAME
        self.lock_path = self.folder / (FILE_NAME + ".lock")
        self.ours: dict[str, dict[str, Any]] = {}
        self._warned = False

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _read(self) -> tuple[dict[str, dict[str, Any]], bool]:
        """(entries, corrupt)."""
        try:
            text = self.path.read_bytes()
        except FileNotFoundError:
            return {}, False
        except OSError as exc:
            self._warn(f"cannot read {self.path}: {exc}; treating it as empty")
            return {}, False
        try:
            return lazy_sessions.parse(text), False
        except lazy_sessions.CorruptStore as exc:
            self._warn(f"{self.path} is corrupt ({exc}); treating it as empty")
            return {}, True

    def _warn(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            log.warning("%s", message)

    def load(self) -> dict[str, dict[str, Any]]:
        """What is on disk now (merged with what this process recorded)."""
        entries, _ = self._read()
        return lazy_sessions.merge(entries, self.ours)

    def get(self, placeholder: str) -> dict[str, Any] | None:
        if placeholder in self.ours:
            return self.ours[placeholder]
        entries, _ = self._read()
        return entries.get(placeholder)

    def record(self, placeholder: str, cwd: str, backend_session_id: str | None = None) -> None:
        entry = dict(self.ours.get(placeholder) or {"cwd": cwd, "createdAt": int(time.time() * 1000)})
        if backend_session_id:
            entry["zcodeSid"] = backend_session_id
        self.ours[placeholder] = entry
        try:
            self._write()
        except OSError as exc:
            log.warning("could not save %s: %s (the session works, but will not survive a restart)",
                        self.path, exc)

    def _write(self) -> None:
        with self._locked():
            on_disk, corrupt = self._read()
            entries = lazy_sessions.prune(lazy_sessions.merge(on_disk, self.ours), time.time() * 1000)
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

    def _replace(self, temporary: Path) -> None:
        os.replace(temporary, self.path)
