"""The remembered model catalog's file, read and written off the event loop (docs/sessions.md,
"The model list from the start").

The Supervisor owns the catalog; this object only moves it to and from
``$ZCODE_HOME/v2/acp-model-catalog.json`` (mode 0600, replaced atomically) in
gevent's thread pool. A read at start never delays ``initialize``: its result
arrives as a message (``CatalogLoaded``); a save is fire-and-forget, and a
failure is one warning (the next run simply starts from the engine's catalog).

One writer: saves that come while one is written are folded into the next write (the last
catalog wins, never an older one replacing it), and each write has its own temporary name, so
two bridges or Supervisors in one process never share one either. A failure inside the pool is
returned, not raised there: gevent prints what a pool thread raises, a traceback on stderr.
"""

from __future__ import annotations

import logging
import os
import uuid
from pathlib import Path
from typing import Any

import gevent

from zcode_acp.protocol import model_catalog
from zcode_acp.actors.lazy_store import _alive, ensure_private_dir

log = logging.getLogger(__name__)


class CatalogFile:
    def __init__(self, zcode_home: Path) -> None:
        self.folder = Path(zcode_home) / "v2"
        self.path = self.folder / model_catalog.FILE_NAME
        self.pending: bytes | None = None  # the catalog to write next (the newest asked for)
        self.writing = False  # a writer greenlet is running: a save only sets ``pending``
        self.writer: gevent.Greenlet | None = None

    def load(self, deliver: Any) -> None:
        """Read in the thread pool; ``deliver(catalog_or_None)`` runs on the loop afterwards."""
        def read() -> None:
            try:
                data = gevent.get_hub().threadpool.apply(self._read)
            except OSError as exc:
                log.warning("cannot read the remembered model catalog %s: %s", self.path, exc)
                data = None
            deliver(model_catalog.decode(data) if data else None)

        gevent.spawn(read)

    def save(self, catalog: dict[str, Any]) -> None:
        self.pending = model_catalog.encode(catalog)
        if not self.writing:
            self.writing = True
            self.writer = gevent.spawn(self._write_pending)

    def flush(self, timeout: float) -> None:
        """Wait (bounded) for a save in progress: the process is about to exit."""
        if self.writer is not None:
            self.writer.join(timeout)

    def _write_pending(self) -> None:
        try:
            while self.pending is not None:
                data, self.pending = self.pending, None
                failure = gevent.get_hub().threadpool.apply(self._write_reporting, (data,))
                if failure is not None:
                    log.warning("cannot remember the model catalog in %s: %s", self.path, failure)
        finally:
            self.writing = False

    def _write_reporting(self, data: bytes) -> OSError | None:
        try:
            self._write(data)
        except OSError as exc:
            return exc
        return None

    def tidy(self) -> None:
        """Only the leftovers' removal of ``load`` (in the thread pool): the stdio path's early answer
        read the catalog itself (cli/early_answer.py)."""
        gevent.spawn(gevent.get_hub().threadpool.apply, self._remove_leftovers)

    def _remove_leftovers(self) -> None:
        # A bridge killed mid-write leaves its temporary file behind: gone once its process is.
        prefix = f".{model_catalog.FILE_NAME}."
        for leftover in self.folder.glob(f"{prefix}*.tmp") if self.folder.is_dir() else ():
            pid = leftover.name[len(prefix):-len(".tmp")].split(".")[0]  # <pid>[.<unique>].tmp
            if pid.isdigit() and not _alive(int(pid)):
                leftover.unlink(missing_ok=True)

    def _read(self) -> bytes | None:
        self._remove_leftovers()
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return None

    def _write(self, data: bytes) -> None:
        ensure_private_dir(self.folder)
        temporary = self.folder / f".{model_catalog.FILE_NAME}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temporary, self.path)
        except OSError:
            temporary.unlink(missing_ok=True)
            raise
